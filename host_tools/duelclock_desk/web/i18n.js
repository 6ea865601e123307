// The dashboard's words in English, Korean and Indonesian, and the phase of a table as the
// room and a table's page show it (a colour class AND a label: never colour alone).
// Elements with data-i18n="key" get STR[lang][key] as text (data-i18n-args="a,b": its %s
// filled); t(key, ...args) fills %s in order.
'use strict';

const LANGS = {en: 'English', ko: '한국어', id: 'Bahasa Indonesia'};

const STR = {
  en: {
    title: 'duelclock desk', skip_room: 'Skip to the room', language: 'Language',
    who: 'Your name (audit log)', live: 'Live', reconnecting: 'Reconnecting…',
    event: 'Event', round: 'Round', no_round: 'No round yet',
    round_info: 'Round %s (%s) · limit %s · started %s',
    links: 'Links', link_up: 'up', link_down: 'down',
    room: 'Room', unfinished_n: 'Unfinished: %s', filter_unfinished: 'Unfinished only',
    filter_alerts: 'With alerts only', shown_n: '%s of %s tables shown',
    no_tables: 'No table has been heard from yet.', legend: 'Phase colours',
    table: 'Table', online: 'online', offline: 'offline', silent: 'silent',
    sync_age: 'sync %s s', sync_never: 'no sync', paused: 'Paused', score: 'Score', lp: 'LP',
    ph_none: 'No state', ph_waiting: 'Waiting', ph_normal: 'In play', ph_duel: 'Duel %s',
    ph_interval: 'Between duels',
    ph_last5: 'last 5 min', ph_time_turn: 'Time called', ph_extra_turn: 'Extra turn',
    ph_sudden_death: 'Sudden death', ph_extra_duel: 'Extra duel', ph_finished: 'Finished',
    ph_double_loss: 'Double loss', wins_x: '%s wins',
    alert_offline: 'Offline', alert_silent: 'Silent', alert_sync: 'Sync',
    alert_no_round: 'No round', alert_mismatch: 'Result mismatch', alert_battery: 'Low battery', alert_judge: 'Judge called',
    alert_long_turn: 'Turn over 3:00', alert_tardiness: 'Tardiness',
    alert_pin_locked: 'PIN locked', alert_journal_full: 'Flash full',
    alert_junk_on_port: 'Junk on the table\'s port', alert_record_changed: 'Record changed on the table',
    alert_late_entry: 'Late entry (made up, or entered offline)',
    alert_after_close: 'Arrived after the close', alert_firmware: 'Other firmware than the desk\'s',
    alert_weak_signal: 'Weak Wi-Fi signal', extend_hint: 'empty: every table of the round',
    c_extend_all: 'Give every table of the round %s more minutes (each its own command)?',
    c_extend_some: 'Give %s %s more minutes each?',
    head_judge_result: 'Result by the head judge', r_take: 'Result from',
    r_typed: 'the paper sheet (typed)', r_table: 'the table\'s verdict',
    r_replay: 'the desk\'s replay', r_a: 'A wins', r_b: 'B wins', reason: 'Reason',
    r_submit: 'Enter result', need_reason: 'The head judge\'s reason is needed',
    c_result_typed: 'Table %s: result %s %s-%s from the paper sheet, because: %s?',
    c_result_take: 'Table %s: take %s, because: %s?',
    close_round: 'Close the round',
    close_note: 'Refused while a table is unfinished, unverified or flagged.',
    close_force: 'Close it all the same', c_close: 'Close round %s%s?',
    c_close_force: ', whatever is still open', closed: 'closed',
    v_entered: 'entered by the head judge', v_overridden: 'overridden',
    v_no_result: 'no result', v_playing: 'still playing',
    versions: 'Versions of the result', the_table: 'the table',
    c_export_missing: 'No final result yet: %s. Export the CSV anyway?',
    controls: 'Controls', start_round: 'Start round', round_no: 'Round number', kind: 'Kind',
    swiss: 'Swiss', elimination: 'Elimination', tables: 'Tables', tables_hint: 'all, or 1-40,45',
    at: 'Start at', at_hint: 'now, +2m or HH:MM', limit: 'Time limit', limit_hint: '45m, 90s',
    cap: 'Cap after time', extra_turns: 'Extra turns', seating: 'Check-in (tardiness)',
    rules: 'Rule set', lang_tables: 'Table language', event_default: '(event setting)',
    none: '(none)', pause_resume: 'Pause and resume', pause: 'Pause', resume: 'Resume',
    extension: 'Time extension', minutes: 'Minutes', extend: 'Extend',
    unlock_title: 'Maintenance code', challenge: 'Challenge on its screen',
    unlock: 'Make the code', c_unlock: 'Make the maintenance code of table %s for challenge %s?',
    unlock_code: 'Table %s: enter %s',
    event_settings: 'Event settings', judge_extend: 'Head judge may extend at the table',
    event_settings_note: 'Used for the next round start; kept in this browser.',
    confirm_title: 'Please confirm', confirm: 'Confirm', cancel: 'Cancel',
    c_start: 'Start round %s (%s) on %s at %s: limit %s, cap %s, %s extra turn(s)%s?',
    c_seating: ', with check-in', c_pause: 'Pause the round clock on %s?',
    c_resume: 'Resume the round clock on %s?', c_extend: 'Give table %s %s more minutes?',
    c_judge_extend: ', head judge may extend', all_tables: 'all tables', tables_list: 'tables %s',
    done: 'Done: %s', refused: 'Refused: %s', bad_tables: 'Tables are like 1-40 or 1-10,17',
    bad_duration: 'A duration is like 45m or 90s', no_running: 'No round is running',
    results: 'Results', export_csv: 'Export CSV', no_results: 'No results for this round yet.',
    col_table: 'Table', col_round: 'Round', col_player_a: 'Player A', col_player_b: 'Player B',
    col_result: 'Result', col_wins_a: 'Wins A', col_wins_b: 'Wins B',
    col_penalties: 'Penalties', col_verified: 'Verified',
    audit: 'Audit log', when: 'When', by: 'Who', command: 'Command', args: 'Details',
    outcome: 'Outcome', no_audit: 'No command yet.',
    back_room: '← Room', print: 'Print', now: 'Now', link: 'Link', board: 'Board',
    boards: 'Boards', firmware: 'Firmware',
    battery: 'Battery %', flash_kb: 'Free flash KB', rssi_dbm: 'Wi-Fi dBm',
    reboots: 'Reboots this round', remaining: 'Time left', alerts: 'Alerts', result: 'Result',
    reported: 'Reported', none_yet: 'none yet', events_stored: 'Record events',
    verification: 'Verification', v_ok: 'verified', v_mismatch: 'MISMATCH',
    v_incomplete: 'incomplete', v_none: 'not checked', acked: 'Acked events',
    penalties: 'Penalties', player: 'Player', code: 'Code', pen_caution: 'caution',
    pen_warning: 'warning', pen_duel_loss: 'duel loss', pen_match_loss: 'match loss',
    pen_dq: 'disqualified', pen_dq_prizes: 'disqualified, prizes lost',
    no_penalties: 'No penalties in the verified record.', sync_history: 'Sync history',
    sync_chart: 'sync error', desk_time: 'Desk time', sync_age_s: 'Sync age (s)',
    sync_err: 'Error (ms)', no_sync: 'No sync reported since the desk started.',
    lp_sheet: 'LP sheet',
    carries: 'Penalties carried to the next match', no_carries: 'None.',
    pen_note: 'Note', pen_after_match: 'after the match', pen_carried: 'carried from round %s',
    carry_from: 'round %s, table %s, after the match, %s rules',
    cs_confirm: 'awaits the head judge', cs_ready: 'goes with the next round that names the player',
    cs_sent: 'sent into round %s, table %s, as %s', cs_declined: 'declined by the head judge',
    cs_unnamed: 'no pairing names the player: give it at the next table by hand',
    carry_confirm: 'Confirm', carry_decline: 'Decline',
    c_carry_confirm: 'Carry %s to %s\'s next match?', c_carry_decline: 'Not carry %s of %s?',
    no_record: 'No record stored yet: a table sends its record as the match is played.',
  },
  ko: {
    title: 'duelclock 데스크', skip_room: '테이블 현황으로 건너뛰기', language: '언어',
    who: '이름 (감사 기록)', live: '실시간', reconnecting: '다시 연결 중…',
    event: '이벤트', round: '라운드', no_round: '라운드 없음',
    round_info: '라운드 %s (%s) · 제한 %s · %s 시작',
    links: '연결', link_up: '연결됨', link_down: '끊김',
    room: '테이블 현황', unfinished_n: '미종료: %s', filter_unfinished: '미종료만',
    filter_alerts: '경고 있는 테이블만', shown_n: '테이블 %s / %s 표시',
    no_tables: '아직 연결된 테이블이 없습니다.', legend: '단계별 색상',
    table: '테이블', online: '온라인', offline: '오프라인', silent: '응답 없음',
    sync_age: '동기 %s초 전', sync_never: '동기 없음', paused: '일시 정지', score: '스코어',
    lp: '라이프',
    ph_none: '상태 없음', ph_waiting: '대기', ph_normal: '진행 중', ph_duel: '듀얼 %s',
    ph_interval: '듀얼 사이',
    ph_last5: '5분 남음', ph_time_turn: '시간 종료', ph_extra_turn: '엑스트라 턴',
    ph_sudden_death: '서든 데스', ph_extra_duel: '엑스트라 듀얼', ph_finished: '종료',
    ph_double_loss: '양자 패배', wins_x: '%s 승',
    alert_offline: '오프라인', alert_silent: '응답 없음', alert_sync: '시간 동기',
    alert_no_round: '라운드 없음', alert_mismatch: '결과 불일치', alert_battery: '배터리 부족', alert_judge: '저지 호출',
    alert_long_turn: '턴 3분 초과', alert_tardiness: '지각',
    alert_pin_locked: 'PIN 잠김', alert_journal_full: '저장 공간 가득',
    alert_junk_on_port: '테이블 포트에 잡음', alert_record_changed: '테이블에서 기록 변경됨',
    alert_late_entry: '늦은 입력 (조작 또는 오프라인 입력)',
    alert_after_close: '라운드 종료 후 도착', alert_firmware: '데스크와 다른 펌웨어',
    alert_weak_signal: 'Wi-Fi 신호 약함', extend_hint: '비우면 라운드의 모든 테이블',
    c_extend_all: '라운드의 모든 테이블에 %s분을 연장할까요? (테이블마다 각각의 명령)',
    c_extend_some: '%s에 각각 %s분을 연장할까요?',
    head_judge_result: '헤드 저지 결과', r_take: '결과 출처',
    r_typed: '종이 기록지 (직접 입력)', r_table: '테이블의 판정', r_replay: '데스크의 재생',
    r_a: 'A 승', r_b: 'B 승', reason: '사유', r_submit: '결과 입력',
    need_reason: '헤드 저지의 사유가 필요합니다',
    c_result_typed: '테이블 %s: 종이 기록지의 결과 %s %s-%s, 사유: %s. 입력할까요?',
    c_result_take: '테이블 %s: %s을(를) 채택, 사유: %s. 진행할까요?',
    close_round: '라운드 종료',
    close_note: '미종료, 미검증 또는 표시된 테이블이 있으면 거부됩니다.',
    close_force: '그래도 종료', c_close: '라운드 %s을(를) 종료할까요%s?',
    c_close_force: ' (남은 항목이 있어도)', closed: '종료됨',
    v_entered: '헤드 저지 입력', v_overridden: '헤드 저지 변경',
    v_no_result: '결과 없음', v_playing: '진행 중',
    versions: '결과의 버전', the_table: '테이블',
    c_export_missing: '아직 최종 결과 없음: %s. 그래도 CSV를 내보낼까요?',
    controls: '조작', start_round: '라운드 시작', round_no: '라운드 번호', kind: '방식',
    swiss: '스위스', elimination: '토너먼트', tables: '테이블', tables_hint: 'all 또는 1-40,45',
    at: '시작 시각', at_hint: 'now, +2m 또는 HH:MM', limit: '제한 시간', limit_hint: '45m, 90s',
    cap: '시간 종료 후 상한', extra_turns: '엑스트라 턴 수', seating: '착석 확인 (지각)',
    rules: '규정', lang_tables: '테이블 언어', event_default: '(이벤트 설정)',
    none: '(없음)', pause_resume: '일시 정지와 재개', pause: '일시 정지', resume: '재개',
    extension: '시간 연장', minutes: '분', extend: '연장',
    unlock_title: '점검 코드', challenge: '화면의 챌린지',
    unlock: '코드 만들기', c_unlock: '테이블 %s의 챌린지 %s에 대한 점검 코드를 만들까요?',
    unlock_code: '테이블 %s: %s 입력',
    event_settings: '이벤트 설정', judge_extend: '헤드 저지가 테이블에서 시간 연장 가능',
    event_settings_note: '다음 라운드 시작에 사용되며 이 브라우저에 저장됩니다.',
    confirm_title: '확인해 주세요', confirm: '확인', cancel: '취소',
    c_start: '라운드 %s (%s)를 %s에서 %s에 시작할까요? 제한 %s, 상한 %s, 엑스트라 턴 %s%s',
    c_seating: ', 착석 확인', c_pause: '%s의 라운드 시계를 일시 정지할까요?',
    c_resume: '%s의 라운드 시계를 재개할까요?', c_extend: '테이블 %s에 %s분을 연장할까요?',
    c_judge_extend: ', 헤드 저지 시간 연장 가능', all_tables: '모든 테이블', tables_list: '테이블 %s',
    done: '완료: %s', refused: '거부됨: %s', bad_tables: '테이블은 1-40 또는 1-10,17 형식입니다',
    bad_duration: '시간은 45m 또는 90s 형식입니다', no_running: '진행 중인 라운드가 없습니다',
    results: '결과', export_csv: 'CSV 내보내기', no_results: '이 라운드의 결과가 아직 없습니다.',
    col_table: '테이블', col_round: '라운드', col_player_a: '플레이어 A', col_player_b: '플레이어 B',
    col_result: '결과', col_wins_a: 'A 승', col_wins_b: 'B 승',
    col_penalties: '벌칙', col_verified: '검증',
    audit: '감사 기록', when: '시각', by: '누가', command: '명령', args: '내용',
    outcome: '결과', no_audit: '아직 명령이 없습니다.',
    back_room: '← 테이블 현황', print: '인쇄', now: '현재', link: '연결', board: '보드',
    boards: '보드 상태', firmware: '펌웨어',
    battery: '배터리 %', flash_kb: '남은 플래시 KB', rssi_dbm: 'Wi-Fi dBm',
    reboots: '이번 라운드 재부팅', remaining: '남은 시간', alerts: '경고', result: '결과',
    reported: '보고된 결과', none_yet: '아직 없음', events_stored: '기록 이벤트',
    verification: '검증', v_ok: '검증됨', v_mismatch: '불일치',
    v_incomplete: '미완료', v_none: '미검증', acked: '확인된 이벤트',
    penalties: '벌칙', player: '플레이어', code: '코드', pen_caution: '주의',
    pen_warning: '경고', pen_duel_loss: '듀얼 패배', pen_match_loss: '매치 패배',
    pen_dq: '실격', pen_dq_prizes: '실격 (상품 몰수)',
    no_penalties: '검증된 기록에 벌칙이 없습니다.', sync_history: '시간 동기 기록',
    sync_chart: '동기 오차', desk_time: '데스크 시각', sync_age_s: '동기 경과 (초)',
    sync_err: '오차 (ms)', no_sync: '데스크 시작 이후 보고된 동기가 없습니다.',
    lp_sheet: '라이프 기록지',
    carries: '다음 매치에 적용할 벌칙', no_carries: '없음.',
    pen_note: '비고', pen_after_match: '매치 종료 후', pen_carried: '%s라운드에서 이월',
    carry_from: '%s라운드 %s번 테이블, 매치 종료 후, %s 규정',
    cs_confirm: '헤드 저지 확인 대기', cs_ready: '플레이어가 배정된 다음 라운드에 적용',
    cs_sent: '%s라운드 %s번 테이블에 %s(으)로 전송', cs_declined: '헤드 저지가 적용하지 않음',
    cs_unnamed: '대진표에 플레이어 이름이 없음: 다음 테이블에서 직접 적용',
    carry_confirm: '확인', carry_decline: '적용 안 함',
    c_carry_confirm: '%s을(를) %s의 다음 매치에 적용할까요?', c_carry_decline: '%s을(를) %s에게 적용하지 않을까요?',
    no_record: '아직 저장된 기록이 없습니다. 테이블은 매치 중에 기록을 보냅니다.',
  },
  id: {
    title: 'Meja juri duelclock', skip_room: 'Langsung ke ruangan', language: 'Bahasa',
    who: 'Nama Anda (log audit)', live: 'Langsung', reconnecting: 'Menyambung ulang…',
    event: 'Event', round: 'Ronde', no_round: 'Belum ada ronde',
    round_info: 'Ronde %s (%s) · batas %s · mulai %s',
    links: 'Koneksi', link_up: 'tersambung', link_down: 'terputus',
    room: 'Ruangan', unfinished_n: 'Belum selesai: %s', filter_unfinished: 'Hanya yang belum selesai',
    filter_alerts: 'Hanya yang ada peringatan', shown_n: '%s dari %s meja ditampilkan',
    no_tables: 'Belum ada meja yang terhubung.', legend: 'Warna fase',
    table: 'Meja', online: 'online', offline: 'offline', silent: 'diam',
    sync_age: 'sinkron %s dtk', sync_never: 'belum sinkron', paused: 'Dijeda', score: 'Skor',
    lp: 'LP',
    ph_none: 'Tanpa status', ph_waiting: 'Menunggu', ph_normal: 'Berjalan', ph_duel: 'Duel %s',
    ph_interval: 'Jeda antar duel', ph_last5: 'sisa 5 menit', ph_time_turn: 'Waktu habis',
    ph_extra_turn: 'Extra turn', ph_sudden_death: 'Sudden death', ph_extra_duel: 'Extra duel',
    ph_finished: 'Selesai', ph_double_loss: 'Kalah ganda', wins_x: '%s menang',
    alert_offline: 'Offline', alert_silent: 'Diam', alert_sync: 'Sinkron',
    alert_no_round: 'Tanpa ronde', alert_mismatch: 'Hasil tidak cocok',
    alert_battery: 'Baterai lemah', alert_judge: 'Judge dipanggil', alert_long_turn: 'Giliran lebih 3:00',
    alert_tardiness: 'Keterlambatan', alert_pin_locked: 'PIN terkunci',
    alert_journal_full: 'Memori penuh', alert_junk_on_port: 'Sampah di port meja',
    alert_record_changed: 'Catatan diubah di meja', alert_late_entry: 'Entri terlambat (dibuat-buat, atau saat offline)',
    alert_after_close: 'Tiba setelah ronde ditutup', alert_firmware: 'Firmware beda dengan meja juri',
    alert_weak_signal: 'Sinyal Wi-Fi lemah', extend_hint: 'kosong: semua meja ronde ini',
    c_extend_all: 'Beri semua meja ronde ini tambahan %s menit (masing-masing perintahnya sendiri)?',
    c_extend_some: 'Beri %s tambahan %s menit masing-masing?',
    head_judge_result: 'Hasil oleh Head Judge', r_take: 'Hasil dari',
    r_typed: 'lembar kertas (diketik)', r_table: 'putusan meja', r_replay: 'replay meja juri',
    r_a: 'A menang', r_b: 'B menang', reason: 'Alasan', r_submit: 'Masukkan hasil',
    need_reason: 'Alasan Head Judge diperlukan',
    c_result_typed: 'Meja %s: hasil %s %s-%s dari lembar kertas, karena: %s?',
    c_result_take: 'Meja %s: ambil %s, karena: %s?',
    close_round: 'Tutup ronde',
    close_note: 'Ditolak selama ada meja yang belum selesai, belum terverifikasi atau ditandai.',
    close_force: 'Tetap tutup', c_close: 'Tutup ronde %s%s?',
    c_close_force: ', apa pun yang masih terbuka', closed: 'ditutup',
    v_entered: 'dimasukkan Head Judge', v_overridden: 'diganti Head Judge',
    v_no_result: 'belum ada hasil', v_playing: 'masih bermain',
    versions: 'Versi hasil', the_table: 'meja',
    c_export_missing: 'Belum ada hasil akhir: %s. Tetap ekspor CSV?',
    controls: 'Kontrol', start_round: 'Mulai ronde', round_no: 'Nomor ronde', kind: 'Jenis',
    swiss: 'Swiss', elimination: 'Eliminasi', tables: 'Meja', tables_hint: 'all, atau 1-40,45',
    at: 'Mulai pada', at_hint: 'now, +2m atau HH:MM', limit: 'Batas waktu',
    limit_hint: '45m, 90s', cap: 'Batas setelah waktu habis', extra_turns: 'Extra turn',
    seating: 'Check-in (keterlambatan)', rules: 'Aturan', lang_tables: 'Bahasa meja',
    event_default: '(pengaturan event)', none: '(tidak ada)', pause_resume: 'Jeda dan lanjut',
    pause: 'Jeda', resume: 'Lanjutkan', extension: 'Tambahan waktu', minutes: 'Menit',
    unlock_title: 'Kode perawatan', challenge: 'Tantangan di layarnya',
    unlock: 'Buat kode', c_unlock: 'Buat kode perawatan meja %s untuk tantangan %s?',
    unlock_code: 'Meja %s: masukkan %s',
    extend: 'Tambah', event_settings: 'Pengaturan event',
    judge_extend: 'Head judge boleh menambah waktu di meja',
    event_settings_note: 'Dipakai saat ronde berikut dimulai; disimpan di browser ini.',
    confirm_title: 'Mohon konfirmasi', confirm: 'Konfirmasi', cancel: 'Batal',
    c_start: 'Mulai ronde %s (%s) di %s pada %s: batas %s, batas akhir %s, %s extra turn%s?',
    c_seating: ', dengan check-in', c_pause: 'Jeda jam ronde di %s?',
    c_resume: 'Lanjutkan jam ronde di %s?', c_extend: 'Beri meja %s tambahan %s menit?',
    c_judge_extend: ', head judge boleh menambah waktu', all_tables: 'semua meja', tables_list: 'meja %s',
    done: 'Selesai: %s', refused: 'Ditolak: %s', bad_tables: 'Meja ditulis seperti 1-40 atau 1-10,17',
    bad_duration: 'Durasi ditulis seperti 45m atau 90s', no_running: 'Tidak ada ronde berjalan',
    results: 'Hasil', export_csv: 'Ekspor CSV', no_results: 'Belum ada hasil ronde ini.',
    col_table: 'Meja', col_round: 'Ronde', col_player_a: 'Pemain A', col_player_b: 'Pemain B',
    col_result: 'Hasil', col_wins_a: 'Menang A', col_wins_b: 'Menang B',
    col_penalties: 'Penalti', col_verified: 'Verifikasi',
    audit: 'Log audit', when: 'Waktu', by: 'Oleh', command: 'Perintah', args: 'Rincian',
    outcome: 'Hasil', no_audit: 'Belum ada perintah.',
    back_room: '← Ruangan', print: 'Cetak', now: 'Sekarang', link: 'Koneksi', board: 'Papan',
    boards: 'Papan meja', firmware: 'Firmware',
    battery: 'Baterai %', flash_kb: 'Flash kosong KB', rssi_dbm: 'Wi-Fi dBm',
    reboots: 'Reboot ronde ini', remaining: 'Sisa waktu', alerts: 'Peringatan', result: 'Hasil',
    reported: 'Dilaporkan', none_yet: 'belum ada', events_stored: 'Event catatan',
    verification: 'Verifikasi', v_ok: 'terverifikasi', v_mismatch: 'TIDAK COCOK',
    v_incomplete: 'belum lengkap', v_none: 'belum diperiksa', acked: 'Event dikonfirmasi',
    penalties: 'Penalti', player: 'Pemain', code: 'Kode', pen_caution: 'teguran',
    pen_warning: 'peringatan', pen_duel_loss: 'kalah duel', pen_match_loss: 'kalah match',
    pen_dq: 'diskualifikasi', pen_dq_prizes: 'diskualifikasi, hadiah hangus',
    no_penalties: 'Tidak ada penalti di catatan terverifikasi.', sync_history: 'Riwayat sinkron',
    sync_chart: 'galat sinkron', desk_time: 'Waktu meja juri', sync_age_s: 'Umur sinkron (dtk)',
    sync_err: 'Galat (ms)', no_sync: 'Belum ada sinkron sejak meja juri mulai.',
    lp_sheet: 'Catatan LP',
    carries: 'Penalti untuk match berikutnya', no_carries: 'Tidak ada.',
    pen_note: 'Catatan', pen_after_match: 'setelah match', pen_carried: 'dibawa dari ronde %s',
    carry_from: 'ronde %s, meja %s, setelah match, aturan %s',
    cs_confirm: 'menunggu Head Judge', cs_ready: 'berlaku di ronde berikut yang memuat pemain',
    cs_sent: 'dikirim ke ronde %s, meja %s, sebagai %s', cs_declined: 'tidak diberlakukan Head Judge',
    cs_unnamed: 'nama pemain tidak ada di pairing: berikan manual di meja berikutnya',
    carry_confirm: 'Konfirmasi', carry_decline: 'Tolak',
    c_carry_confirm: 'Berlakukan %s di match berikutnya %s?', c_carry_decline: 'Tidak memberlakukan %s untuk %s?',
    no_record: 'Belum ada catatan: meja mengirim catatannya selama match berlangsung.',
  },
};

const LANG_KEY = 'duelclock.lang';
let lang = LANGS[localStorage.getItem(LANG_KEY)] ? localStorage.getItem(LANG_KEY) : 'en';

function t(key, ...args) {
  let s = STR[lang][key];
  if (s === undefined) s = STR.en[key] === undefined ? key : STR.en[key];
  let i = 0;
  return s.replace(/%s/g, () => String(args[i++]));
}

// Static text: every [data-i18n] element; the <html lang>; the language pickers.
function applyI18n(root) {
  document.documentElement.lang = lang;
  for (const el of (root || document).querySelectorAll('[data-i18n]')) {
    const args = el.dataset.i18nArgs;
    el.textContent = t(el.dataset.i18n, ...(args ? args.split(',') : []));
  }
  for (const el of (root || document).querySelectorAll('[data-i18n-ph]')) {
    el.placeholder = t(el.dataset.i18nPh);
  }
}

function setLang(code) {
  if (!LANGS[code]) return;
  lang = code;
  localStorage.setItem(LANG_KEY, code);
  applyI18n();
}

// A <select> offering the languages, wired to onChange(code) after setLang.
function langPicker(select, onChange) {
  select.autocomplete = 'off';      // a page come back to must not restore an old choice
  select.replaceChildren(...Object.entries(LANGS).map(([code, name]) => {
    const o = new Option(name, code, false, code === lang);
    o.lang = code;
    return o;
  }));
  select.value = lang;
  select.addEventListener('change', () => {
    setLang(select.value);
    if (onChange) onChange(select.value);
  });
}

const LAST5_MS = 300000;
const NORMAL_PHASES = ['waiting', 'duel', 'interval'];
const OWN_PHASES = ['time_turn', 'extra_turn', 'sudden_death', 'extra_duel'];

// {cls, label} of a table view: cls picks the colour (style.css .ph-*), label says it.
// remainingMs: the round clock now; inRound: the table plays the desk's current round.
function phaseInfo(v, remainingMs, inRound) {
  const ph = v.phase;
  if (!ph) return {cls: 'none', label: t('ph_none')};
  if (ph === 'over') {
    if (v.result === 'double_loss') return {cls: 'double_loss', label: t('ph_double_loss')};
    const who = v.result === 'A' || v.result === 'B' ? ': ' + t('wins_x', v.result) : '';
    return {cls: 'finished', label: t('ph_finished') + who};
  }
  if (OWN_PHASES.includes(ph)) return {cls: ph, label: t('ph_' + ph)};
  const label = ph === 'duel' ? t('ph_duel', v.duel) : t('ph_' + ph);
  if (inRound && remainingMs !== null && remainingMs <= LAST5_MS && NORMAL_PHASES.includes(ph)) {
    return {cls: 'last5', label: label + ' · ' + t('ph_last5')};
  }
  return {cls: ph === 'waiting' ? 'waiting' : 'normal', label};
}

// The legend of phase colours, in the order a round goes through them.
const LEGEND = [
  ['waiting', 'ph_waiting'], ['normal', 'ph_normal'], ['last5', 'ph_last5'],
  ['time_turn', 'ph_time_turn'], ['extra_turn', 'ph_extra_turn'],
  ['sudden_death', 'ph_sudden_death'], ['extra_duel', 'ph_extra_duel'],
  ['finished', 'ph_finished'], ['double_loss', 'ph_double_loss'],
];

function clockText(ms) {
  if (ms === null || ms === undefined) return '–';
  const s = Math.floor(Math.abs(ms) / 1000);
  return (ms < 0 ? '−' : '') + Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
}
