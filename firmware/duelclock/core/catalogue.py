# The infraction catalogue: codes, guideline penalties per rule set, names per language.
#
# Data, not code (docs/rules.md, "Infractions", checked line by line against the rule texts).
# A guideline is a tuple of penalty kinds: one kind, or a range the judge picks from
# with the usual one first; None where that rule set has no row for the code. Judges may
# lower or raise any guideline (KR penalty 2): the device suggests, the judge decides.
#
# ROWS holds one line per code: code|KR guideline|ID guideline|English|Korean|Indonesian,
# a guideline written as kind abbreviations (ABBR) separated by spaces, "-" for none; an
# empty name reads as the English one (lang.py's TEXT does the same).
# The last four codes are offences the KR rules name (docs/rules.md) with no guideline:
# no fixed guideline in KR ("a penalty applies", judge's discretion), so the range is the
# judge's to pick. One string constant rather than tuples of strings: it stays in flash on
# a board (lang.py says why).
from .lang import column, fields
from .record import PENALTY_KINDS as KINDS       # the events' penalty kinds, mildest first

ABBR = ("C", "W", "DL", "ML", "DQ", "DQP")         # KINDS as ROWS writes them

ROWS = """
deck_size|DL|DL|Deck size|덱 매수 위반|Jumlah kartu deck
deck_copies|DL|DL|4+ copies of a card|같은 카드 4장 이상|Kartu lebih dari 3
deck_forbidden|DL|DL|Card not allowed|사용 불가 카드|Kartu terlarang
deck_limited|DL|DL|Over limited count|제한 매수 초과|Melebihi batas kartu
decklist_mismatch|DL|DL|Deck list mismatch|덱 기입 시트 불일치|Deck tidak sesuai daftar
lp_not_written|-|C|LP not written|라이프 미기록|LP tidak ditulis
rules_error|C|C W|Rules error|룰 오류|Kesalahan aturan
extra_draw|W|W DL|Extra draw|추가 드로우|Kelebihan draw
looked_at_cards|C|C DL|Looked at cards|카드 확인|Melihat kartu
revealed_hidden|W|-|Revealed hidden info|비공개 정보 공개|Membuka info tertutup
intentional_rules_violation|DQP|DQP|Intentional violation|고의적 룰 위반|Pelanggaran disengaja
tardiness|W DL ML|W DL ML|Tardiness|지각|Keterlambatan
marked_cards|C|C|Marked cards|표시된 카드|Kartu bertanda
marked_cards_pattern|DL|DL|Marked cards (pattern)|규칙성 있는 표시|Tanda berpola
slow_play|C|C DL|Slow play|지연 행위|Permainan lambat
stalling|ML|ML|Stalling|고의 지연|Mengulur waktu
penalty_request|DL|-|Penalty request|벌칙 요구|Meminta penalti
random_result|DQ|DQ|Random result|무작위 승패 결정|Hasil acak
bribery|DQP|DQP|Bribery|매수 행위|Suap
intentional_concession|ML|-|Intentional concession|고의 기권|Mengalah disengaja
false_result|DQP|DQP|False result|허위 결과 보고|Hasil palsu
impersonation|DQP|-|Impersonation|대리 참가|Menyamar
outside_assistance|W|W DL|Outside assistance|외부 조언|Bantuan luar
talking_to_spectators|W|-|Talking to spectators|제3자와 대화|Bicara dengan penonton
phone_use|-|W DL|Phone use|전화 사용|Penggunaan ponsel
unsporting|W|W DL|Unsporting conduct|비신사적 행위|Tidak sportif
extra_side_size|C W DL|-|Extra/side deck over 15|엑스트라/사이드 15장 초과|Extra/side lebih 15
sleeve_violation|C W DL|-|Sleeve violation|슬리브 위반|Pelanggaran sleeve
procedure_error|C W|-|Procedure error|진행 위반|Kesalahan prosedur
manners|C W|-|Manners|매너 위반|Etika
"""

# Penalty kind names as each rule set's text says them (KR 274-296, ID 13-153):
# abbreviation|English|Korean|Indonesian.
KIND_NAMES = """
C|Caution|주의|
W|Warning|경고|
DL|Duel loss|듀얼의 패배|Duel Forfeiture
ML|Match loss|매치의 패배|Match Forfeiture
DQ|Disqualified|실격|Disqualification
DQP|DQ, prizes lost|수상 자격을 잃는 실격|Total Disqualification
"""


def _kinds(field):
    if field == "-":
        return None
    return tuple(KINDS[ABBR.index(a)] for a in field.split(" "))


def guideline(code, rules="ID"):
    """Tuple of penalty kinds (usual first) for `code` under `rules`, or None."""
    f = fields(ROWS, code)
    if f is None:
        return None
    return _kinds(f[1] if rules == "KR" else f[2])


def codes(rules="ID"):
    """The codes a judge picks from under `rules`, in catalogue order."""
    i = 1 if rules == "KR" else 2
    out = []
    for line in ROWS.split("\n"):
        f = line.split("|")             # one row's fields at a time: a board's heap is small
        if len(f) > i and f[i] != "-":
            out.append(f[0])
    return out


def name(code, lang="en"):
    """Display name of an infraction code; an unknown code shows as itself."""
    f = fields(ROWS, code)
    if f is None:
        return code
    return f[2 + column(lang)] or f[3]   # names start at field 3, English first


def kind_name(kind, lang="en"):
    f = fields(KIND_NAMES, ABBR[KINDS.index(kind)])
    return f[column(lang)] or f[1]
