# Screen text in English, Korean and Indonesian. Pure data plus one lookup.
# Every string a board shows comes from here or from catalogue.py, so the build can
# collect the Hangul glyphs it needs for the bitmap font (host_tools mkfont).
#
# TEXT holds one line per key: key|English|Korean|Indonesian ("|" and newlines never occur
# in a text; an empty field reads as the English one, so a text is not stored twice). One
# string constant, not a dict of tuples: frozen or in ROMFS it stays in flash (about 0.2 KB
# of RAM where a dict of 300 strings took 12 KB on the 64-bit unix port), and a lookup
# costs a substring search, not a RAM copy of every language.
LANGS = ("en", "ko", "id")

TEXT = """
waiting|Waiting for round|라운드 대기 중|Menunggu ronde
check_in|Check in: press your key|착석: 자신의 키를 누르세요|Check-in: tekan tombol
seated|seated|착석|hadir
absent|absent|미착석|belum hadir
pick_first|Who goes first?|선공은?|Siapa jalan dulu?
extra_duel|EXTRA DUEL turn %d/4|엑스트라 듀얼 %d/4턴|EXTRA DUEL giliran %d/4
time_turn|TIME: finish this turn|시간 종료: 이 턴까지|WAKTU: selesaikan giliran
extra_turn|EXTRA TURN %d/%d|엑스트라 턴 %d/%d|
sudden_death|SUDDEN DEATH|서든 데스|
double_loss|DOUBLE LOSS|양자 패배|KALAH GANDA
wins_match|%s WINS THE MATCH|%s 매치 승리|%s MENANG MATCH
interval|Between duels|듀얼 사이|Jeda antar duel
paused|PAUSED|일시 정지|DIJEDA
turn|Turn %d %s|%d턴 %s|Giliran %d %s
entry|%s: %d %s %d = %d||
confirm_key|OK: press again|확인: 다시 누르기|OK: tekan lagi
pressing|[%s]||
hold_menu|hold: menu|길게: 메뉴|tahan: menu
hold_turn|hold: end turn|길게: 턴 종료|tahan: akhiri giliran
hold_undo|hold: undo|길게: 되돌리기|tahan: urungkan
hold_sign|hold: +/-|길게: +/-|tahan: +/-
hold_cancel|hold: cancel|길게: 취소|tahan: batal
pick_player|Pick A or B|A 또는 B 선택|Pilih A atau B
menu|Menu|메뉴|
record|LP record|라이프 기록|Catatan LP
duel_over|Duel over...|듀얼 종료...|Duel selesai...
who_won|Who won the duel?|듀얼 승자는?|Siapa menang duel?
draw|Draw|무승부|Seri
surrender|Surrender|항복|Menyerah
who_surrenders|Who surrenders?|누가 항복합니까?|Siapa menyerah?
both_confirm|A and B: press your key|A와 B: 자신의 키|A dan B: tekan tombol
confirmed|confirmed|확인됨|dikonfirmasi
start_duel|Start next duel|다음 듀얼 시작|Mulai duel berikut
judge|Judge|저지|
language|Language|언어|Bahasa
call_judge|Call a judge|저지 호출|Panggil judge
judge_called|JUDGE CALLED|저지 호출됨|JUDGE DIPANGGIL
back|Back|뒤로|Kembali
pin|Judge PIN|저지 PIN|PIN Judge
pin_wrong|Wrong PIN (%d left)|PIN 오류 (%d회 남음)|PIN salah (sisa %d)
locked|Locked %d s|잠김 %d초|Terkunci %d dtk
maintenance|Maintenance: desk code for|점검: 데스크 코드|Perawatan: kode meja untuk
code_wrong|Wrong code (%d left)|코드 오류 (%d회 남음)|Kode salah (sisa %d)
repl_open|USB REPL open|USB REPL 열림|USB REPL terbuka
power_on|Table %d  v%s  %s|%d번 테이블  v%s  %s|Meja %d  v%s  %s
head_judge|Head judge|헤드 저지|Head Judge
self_test|Self-test|자가 진단|Tes mandiri
press_key|Press %s|%s 키를 누르세요|Tekan %s
test_ok|Self-test: OK|자가 진단: 정상|Tes mandiri: OK
test_failed|Self-test: FAILED|자가 진단: 실패|Tes mandiri: GAGAL
keys_missed|keys not pressed: %s|누르지 않은 키: %s|tombol tidak ditekan: %s
keys_ok|keys: all %d pressed|키: %d개 모두 눌림|tombol: %d semua ditekan
floor_judge|Floor judge|플로어 저지|Floor Judge
penalty|Penalty|벌칙|Penalti
lp_fix|LP fix|라이프 수정|Koreksi LP
void|Void tardiness|지각 취소|Batalkan keterlambatan
extend|Extend time|시간 연장|Tambah waktu
given|+%s from the desk|데스크 연장 +%s|+%s dari meja juri
minutes|Minutes|분|Menit
new_lp|New LP for %s|%s 새 라이프|LP baru %s
which_player|Which player?|어느 플레이어?|Pemain mana?
both|Both|둘 다|Keduanya
kind|Penalty kind|벌칙 종류|Jenis penalti
judge_ok|Record? OK / Back|기록할까요? OK/뒤로|Catat? OK/Kembali
not_saved|NOT SAVED: %s|저장 실패: %s|TIDAK TERSIMPAN: %s
sync|sync %s|동기 %s|sinkron %s
synced|synced|동기됨|tersinkron
no_sync|no sync|동기 없음|tanpa sinkron
battery|bat %d%%|배터리 %d%%|
five_left|5 MINUTES LEFT|5분 남음|SISA 5 MENIT
refused|Refused: %s|거부: %s|Ditolak: %s
carried|Last match: %s %s|지난 매치: %s %s|Match lalu: %s %s
flash_full|FLASH FULL: keep a paper record, call a judge|저장 공간 가득: 종이 기록을 쓰고 저지를 부르세요|MEMORI PENUH: catat di kertas, panggil juri
"""


def fields(text, key):
    """The fields of the line of `text` (a table as TEXT is: a newline first, one line per
    key, "|" between fields) that starts with `key`, or None."""
    if "|" in key or "\n" in key:
        return None
    i = text.find("\n" + key + "|")
    if i < 0:
        return None
    return text[i + 1:text.find("\n", i + 1)].split("|")


def column(lang):
    """Which language field of such a line `lang` reads: 1 English (also for an unknown
    language), 2 Korean, 3 Indonesian."""
    return 1 + LANGS.index(lang) if lang in LANGS else 1


def tr(key, lang, *args):
    """Text for `key` in `lang` (English when the language is unknown), formatted with args.
    An unknown key raises KeyError, as a missing translation must fail in tests."""
    cols = fields(TEXT, key)
    if cols is None:
        raise KeyError(key)
    s = cols[column(lang)] or cols[1]
    return s % args if args else s
