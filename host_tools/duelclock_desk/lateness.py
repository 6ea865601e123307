"""Late entry, judged by the link: when an event reaching the desk is "late".

A linked table sends an event within seconds of confirming it (core/session.py: it lingers
up to _LINGER_MS = 2 s for others to share its record message, and a record the desk did
not ack goes again after _RESEND_MS = 10 s). So an event whose own time falls while the desk
heard the table, and that arrives more than LINKED_LATE_MS after that time, was not entered
then: it was made up since (a line appended to an opened table's journal) or held back.
An event from a time the table was not heard is an entry made offline: it may arrive any
time, but once the link is back it comes at once, so it is late only beyond OFFLINE_LATE_MS
after the desk heard the table again.

"Heard": any verified message from the table (states every 5 s, syncs, records, hello).
Receptions no more than LINK_GAP_MS apart make one span of desk time the table was linked;
a table that falls silent longer was offline in between.
"""
LINK_GAP_MS = 12000        # two state periods (5 s) and a margin: one lost state is no gap
LINKED_LATE_MS = 15000     # linger (2 s) + one resend (10 s) + 3 s for the link's delays
OFFLINE_LATE_MS = 120000   # an offline entry, once the link is back
KEEP_SPANS = 64            # per table: a round's reconnections, with room to spare


class LinkHistory:
    """Desk ms spans each table was heard in (in memory: a restarted desk starts afresh,
    and an event from before its first span is judged from when it heard the table)."""

    def __init__(self):
        self.spans = {}        # tbl -> [[first_ms, last_ms], ...], oldest first

    def heard(self, tbl, at_ms):
        spans = self.spans.setdefault(tbl, [])
        if spans and at_ms - spans[-1][1] <= LINK_GAP_MS:
            spans[-1][1] = max(spans[-1][1], at_ms)
        else:
            spans.append([at_ms, at_ms])
            if len(spans) > KEEP_SPANS:
                spans.pop(0)

    def late_after(self, tbl, at_ms):
        """The desk ms after which an event of desk time at_ms from table tbl is late:
        LINKED_LATE_MS after it if the table was heard around then, else OFFLINE_LATE_MS
        after the desk heard it again."""
        for first, last in self.spans.get(tbl, ()):
            if first <= at_ms <= last:
                return at_ms + LINKED_LATE_MS
            if first > at_ms:
                return first + OFFLINE_LATE_MS
        return at_ms + LINKED_LATE_MS      # after the last reception: stamped ahead of it
