# Constants and small helpers shared by the rules engine's modules (match.py and its two
# mixins, judgements.py and handlers.py). Pure.
from .record import MAX_AMOUNT

START_LP = 8000
TARDY_DUEL_LOSS_MS = 300000     # not seated at 5:00 (KR penalty 5; ID Tardiness)
TARDY_MATCH_LOSS_MS = 600000    # not seated at 10:00
EXTRA_DUEL_TURNS = 4            # KR J4
NEVER = 1 << 62
HEAD_ONLY = ("match_loss", "dq", "dq_prizes")   # ID C-F: head judge only (tardiness excepted)
MATCH_ENDING = HEAD_ONLY

# What a turn in a duel is, after time is called (dstate):
NORMAL = "normal"            # play as usual (an extra duel counts its turns here)
TIME_TURN = "time_turn"      # finishing the turn in which time was called
EXTRA_TURN = "extra_turn"    # the extra turn(s) of J3
SUDDEN = "sudden_death"


def other(p):
    return "B" if p == "A" else "A"


def ab(a, b):
    return {"A": a, "B": b}


def clamp(v):
    if v < 0:
        return 0
    if v > MAX_AMOUNT:
        return MAX_AMOUNT
    return v
