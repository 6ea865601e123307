# The table session's storage in RAM (core/session.py's journal and files interfaces), for
# the core test of the session (test_session.py, under MicroPython too) and the tests' tables
# (tests/host/tables.py). Plain: no I/O, no threads.
from duelclock.core.jsonio import dumps_event
from duelclock.core.record import JournalFull


class Recovered:
    def __init__(self, match_id):
        self.match_id = match_id
        self.dropped = []


class ListJournal:
    """matches[id - 1]: the events of match id, in order. `room`: events it takes before
    every further one raises JournalFull (None: no end)."""

    def __init__(self, room=None):
        self.matches = []
        self.collected = []
        self.room = room
        self.reads = 0
        self.read_bytes = 0

    def _take_room(self):
        if self.room is not None:
            if self.room <= 0:
                raise JournalFull([i + 1 for i in range(len(self.matches))
                                   if i + 1 not in self.collected])
            self.room -= 1

    def start_match(self, round_start):
        self._take_room()
        self.matches.append([dict(round_start)])
        return len(self.matches)

    def append(self, ev):
        self._take_room()
        self.matches[-1].append(dict(ev))

    def export(self, match_id):
        return [dumps_event(ev) for ev in self.matches[match_id - 1]]

    def read(self, match_id, pos, max_bytes):
        """Journal.read's contract, a position being an index into the match's list: lines
        from `pos` while they fit in max_bytes (the first always). `reads` counts the lines
        handed out, `read_bytes` their bytes."""
        evs = self.matches[match_id - 1]
        out = []
        size = 0
        while pos < len(evs):
            line = dumps_event(evs[pos]).encode()
            if out and size + len(line) + 10 > max_bytes:
                break
            size += len(line) + 10
            pos += 1
            out.append((line, pos))
        self.reads += len(out)
        self.read_bytes += size
        return out, pos, pos == len(evs)

    def mark_collected(self, match_id):
        if match_id not in self.collected:
            self.collected.append(match_id)

    def recover(self, on_line):
        if not self.matches:
            return Recovered(None)
        for line in self.export(len(self.matches)):
            on_line(line)
        return Recovered(len(self.matches))

    def current(self):
        """The current match's events (round_start first), or []."""
        return list(self.matches[-1]) if self.matches else []


class MemFiles:
    """Small state files in a dict: name -> text."""

    def __init__(self):
        self.texts = {}

    def read(self, name, number):
        try:
            return [number(x) for x in self.texts[name].split()]
        except (KeyError, ValueError):
            return None

    def text(self, name):
        return self.texts.get(name)

    def write(self, name, text):
        self.texts[name] = text
