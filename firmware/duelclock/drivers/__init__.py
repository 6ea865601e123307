# duelclock.drivers: small hardware drivers the board files wire up (boards/<BOARD>/board.py).
# Each takes its pins and buses ready-made and imports no board module.
