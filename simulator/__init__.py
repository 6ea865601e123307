# The simulator: runs the real firmware on a PC (see README).
