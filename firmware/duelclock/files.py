# The table's small state files beside the journal (boot counter, seen seq, PIN lock, drift,
# and the settings: language, judge call, as JSON): a few numbers as text each, read at boot and written when they change. I/O at the edge;
# losing one costs only that state, never the table. core/session.py reaches "seen" and
# "drift" through read/write; the app the others. Apart from journal.py, which stays the
# match record alone (what a replay or the match bench loads).


class Files:
    """Small state files under `root` (boot counter, seen seq, PIN lock, drift): numbers as
    text. A full, failing or torn file costs only that state, never the table."""

    def __init__(self, root):
        self.dir = root + "/"

    def read(self, name, number):
        """The numbers in the file, or None where it is absent, unreadable or torn."""
        try:
            with open(self.dir + name) as f:
                return [number(x) for x in f.read().split()]
        except (OSError, ValueError):
            return None

    def text(self, name):
        """The file's text, or None where it is absent or unreadable."""
        try:
            with open(self.dir + name) as f:
                return f.read()
        except (OSError, ValueError):
            return None

    def write(self, name, text):
        try:
            with open(self.dir + name, "w") as f:
                f.write(text)
        except OSError:
            pass

    def next_boot(self):
        """The boot counter (wire seqs stay above all sent before): read, raise, write
        back. On a full flash the raised count still serves this boot (retried next)."""
        n = self.read("boot", int)
        boot = n[0] + 1 if n else 1
        self.write("boot", str(boot))
        return boot
