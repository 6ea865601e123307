// The room: one tile per table, kept live by the desk's event stream (/api/events), the
// controls (each confirmed in a dialog, each carried out by the desk's own API and audited),
// the round's results and the audit log. Plain JS, no build step; i18n.js comes first.
//
// A table's round clock is the desk's remaining_ms when the view arrived, run down in the
// browser since then (times the desk's speed, 1 outside simulation), frozen when paused or
// over. The desk sends a view at every state a table reports (on change, every few seconds).
'use strict';

const $ = (sel) => document.querySelector(sel);
const TICK_MS = 1000;
const LONG_TURN_MS = 180000;
const PLAYING = ['duel', 'extra_duel', 'time_turn', 'extra_turn', 'sudden_death'];
const WHO_KEY = 'duelclock.who';
const RETRY_MAX_MS = 15000;
const TOAST_MS = 6000;
const AUDIT_CLASSES = ['when', 'who', 'command', 'args', 'outcome'];
const FINAL = ['ok', 'entered', 'overridden'];   // a result that is the round's (store.FINAL)
// The Boards table's columns: a view's field, and the desk's alert (views.py) that flags it.
const HEALTH = [['board', null], ['fw', 'firmware'], ['battery', 'battery'],
                ['rssi_dbm', 'weak signal'], ['flash_kb', null], ['reboots', null]];
const HEALTH_ALERTS = HEALTH.map(([, alert]) => alert).filter((a) => a);

const S = {
  room: null,            // /api/room without its tables
  speed: 1,
  tables: new Map(),     // tbl -> {v: view, at: performance.now() when received, el: tile}
  results: null,
  audit: [],
  retryMs: 1000,
};

// --- the desk's API --------------------------------------------------------------------------

async function getJSON(path) {
  const r = await fetch(path, {cache: 'no-store'});
  if (!r.ok) throw new Error(path + ': ' + r.status);
  return r.json();
}

// POST a command as the person named in the header; {ok, data}.
async function command(path, body) {
  const who = $('#who').value.trim() || 'desk';
  try {
    const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                 body: JSON.stringify(Object.assign({who}, body))});
    const data = await r.json();
    return {ok: r.ok, data};
  } catch (e) {
    return {ok: false, data: {error: String(e)}};
  }
}

// --- the room --------------------------------------------------------------------------------

function currentRound() {
  const r = S.room && S.room.round;
  return r && r.state === 'running' ? r : null;
}

function inRound(v) {
  const r = S.room && S.room.round;
  return !!r && v.round === r.round && (r.tables === null || r.tables.includes(v.table));
}

function deskElapsed(rec) {
  return (performance.now() - rec.at) * S.speed;
}

function remainingNow(rec) {
  const v = rec.v;
  if (!v.round || v.remaining_ms === null || v.remaining_ms === undefined) return null;
  if (v.paused || v.phase === 'over') return v.remaining_ms;
  return Math.round(v.remaining_ms - deskElapsed(rec));
}

// The alerts of a table now: the desk's, and a turn that went past 3:00 since the view.
function alertsNow(rec) {
  const a = rec.v.alerts.slice();
  if (!a.includes('long_turn') && PLAYING.includes(rec.v.phase) && rec.v.turn_ms !== null &&
      rec.v.turn_ms + deskElapsed(rec) > LONG_TURN_MS) a.push('long_turn');
  return a;
}

function unfinished(v) {
  const r = S.room && S.room.round;
  return !!r && (r.tables === null || r.tables.includes(v.table)) && !FINAL.includes(v.verified);
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function makeTile(tbl) {
  const a = document.createElement('a');
  a.className = 'tile';
  a.href = '/table/' + tbl;
  a.dataset.table = tbl;
  const part = (cls, parent) => {
    const s = document.createElement('span');
    s.className = cls;
    (parent || a).append(s);
    return s;
  };
  const head = part('t-head');
  const el = {a, no: part('t-no', head), link: part('t-link', head)};
  el.phase = part('t-phase');
  el.clock = part('t-clock');
  const nums = part('t-nums');
  el.score = part('t-score', nums);
  el.lp = part('t-lp', nums);
  el.alerts = part('t-alerts');
  return el;
}

// Draw one table's tile from its record (called on every view and every tick).
function drawTile(rec) {
  const v = rec.v;
  const el = rec.el;
  const rem = remainingNow(rec);
  const ph = phaseInfo(v, rem, inRound(v));
  const alerts = alertsNow(rec);
  const online = v.online && !alerts.includes('silent');
  const cls = 'tile ph-' + ph.cls + (online ? '' : ' offline') + (alerts.length ? ' alerting' : '') +
              (v.paused ? ' paused' : '');
  if (el.a.className !== cls) el.a.className = cls;
  setText(el.no, t('table') + ' ' + v.table);
  const sync = v.sync_age_ms === null ? t('sync_never')
    : t('sync_age', Math.floor((v.sync_age_ms + deskElapsed(rec) / S.speed) / 1000));  // real ms
  setText(el.link, (online ? t('online') : t(v.online ? 'silent' : 'offline')) + ' · ' + sync);
  setText(el.phase, ph.label);
  setText(el.clock, v.phase === 'over' ? '–' : (v.paused ? t('paused') + ' ' : '') + clockText(rem));
  setText(el.score, v.wins ? 'A ' + v.wins.A + ' – ' + v.wins.B + ' B' : '');
  setText(el.lp, v.lp ? t('lp') + ' ' + v.lp.A + ' · ' + v.lp.B : '');
  const want = alerts.map((k) => t('alert_' + k.replace(/ /g, '_'))).join('|');
  if (el.alerts.dataset.shown !== want) {
    el.alerts.dataset.shown = want;
    el.alerts.replaceChildren(...alerts.map((k) => {
      const s = document.createElement('span');
      s.className = 'chip';
      s.textContent = t('alert_' + k.replace(/ /g, '_'));
      return s;
    }));
  }
  el.a.hidden = ($('#f-unfinished').checked && !unfinished(v)) ||
                ($('#f-alerts').checked && !alerts.length);
}

// Each table's board health from its hello, in table order: a value the desk flags is
// marked (class "flag") and its alert named in the row's last cell, in words.
function drawBoards() {
  const recs = [...S.tables.values()].sort((a, b) => a.v.table - b.v.table);
  const rows = recs.map(({v}) => [v.table, HEALTH.map(([k]) => v[k]),
                                  v.alerts.filter((a) => HEALTH_ALERTS.includes(a))]);
  const body = $('#boards-table tbody');
  const want = JSON.stringify([lang, rows]);
  if (body.dataset.shown === want) return;
  body.dataset.shown = want;
  body.replaceChildren(...rows.map(([tbl, values, alerts]) => {
    const tr = document.createElement('tr');
    tr.dataset.table = tbl;
    const cell = (text, cls) => {
      const td = document.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
      tr.append(td);
      return td;
    };
    cell(tbl);
    HEALTH.forEach(([key, alert], i) => {
      const td = cell(values[i] === null ? '–' : values[i], alerts.includes(alert) ? 'flag' : '');
      td.dataset.field = key;
    });
    cell('', 'alerts').append(...alerts.map((k) => {
      const s = document.createElement('span');
      s.className = 'chip';
      s.textContent = t('alert_' + k.replace(/ /g, '_'));
      return s;
    }));
    return tr;
  }));
  $('#no-boards').hidden = rows.length > 0;
}

function place(rec) {
  // Tiles in table order: a new table goes before the first higher one.
  const tiles = $('#tiles');
  let next = null;
  for (const [tbl, other] of S.tables) {
    if (tbl > rec.v.table && other.el.a.isConnected &&
        (next === null || tbl < Number(next.dataset.table))) next = other.el.a;
  }
  tiles.insertBefore(rec.el.a, next);
}

function takeView(v, at) {
  let rec = S.tables.get(v.table);
  const before = rec ? rec.v : null;
  if (!rec) {
    rec = {el: makeTile(v.table), v, at};
    S.tables.set(v.table, rec);
    place(rec);
  }
  rec.v = v;
  rec.at = at;
  drawTile(rec);
  drawBoards();
  // Its results row changes with a result, a verification, or a record (its penalties).
  if (before && (before.verified !== v.verified || before.result !== v.result
                 || before.recorded !== v.recorded)) resultsSoon();
  const r = S.room && S.room.round;
  if (S.room && v.round > (r ? r.round : 0)) roomSoon();   // a round this page has not seen
}

let roomTimer = null;
function roomSoon() {
  if (roomTimer === null) {
    roomTimer = setTimeout(() => {
      roomTimer = null;
      loadRoom().then(loadResults).catch(() => {});
    }, 300);
  }
}

function drawCounts() {
  let n = 0;
  let shown = 0;
  for (const rec of S.tables.values()) {
    if (unfinished(rec.v)) n++;
    if (!rec.el.a.hidden) shown++;
  }
  setText($('#unfinished'), S.room && S.room.round ? t('unfinished_n', n) : '');
  setText($('#shown'), t('shown_n', shown, S.tables.size));
  $('#no-tables').hidden = S.tables.size > 0;
}

function drawHeader() {
  const st = S.room;
  if (!st) return;
  const r = st.round;
  setText($('#round-info'), t('event') + ' ' + st.event + ' · ' + (r
    ? t('round_info', r.round, t(r.kind), clockText(r.limit_s * 1000),
        new Date(st.epoch_unix_ms + r.start_ms).toLocaleTimeString(lang)) +
      (r.state === 'closed' ? ' · ' + t('closed') : '')
    : t('no_round')));
  $('#links').replaceChildren(document.createTextNode(t('links') + ':'), ...st.links.map((l) => {
    const s = document.createElement('span');
    s.className = 'chip ' + (l.up ? 'up' : 'down');
    s.textContent = l.url + ' ' + t(l.up ? 'link_up' : 'link_down');
    return s;
  }));
  const next = r ? r.round + 1 : 1;
  const field = $('#s-round');
  if (!field.value || field.dataset.auto === '1') {
    field.value = next;
    field.dataset.auto = '1';
  }
}

async function loadRoom() {
  const asked = performance.now();
  const st = await getJSON('/api/room');
  const at = performance.now();
  S.speed = st.speed || 1;
  const tables = st.tables;
  delete st.tables;
  S.room = st;
  for (const v of tables) {
    const rec = S.tables.get(v.table);
    if (!rec || rec.at < asked) takeView(v, at);   // an event newer than this answer stays
  }
  drawHeader();
  drawCounts();
  drawCarries();
}

// Penalties given after a match and carried to the player's next one (status' carries); the
// head judge confirms or declines those awaiting it (KR), audited as every command.
function drawCarries() {
  const list = (S.room && S.room.carries) || [];
  $('#carries-list').replaceChildren(...list.map((c) => {
    const li = document.createElement('li');
    li.dataset.carry = c.id;
    li.dataset.state = c.state;
    const what = t('pen_' + c.kind) + ' (' + c.code + ')';
    const state = c.state === 'sent' ? t('cs_sent', c.round, c.tbl, c.p) : t('cs_' + c.state);
    li.textContent = '#' + c.id + ' ' + (c.player || '–') + ': ' + what + ' · ' +
      t('carry_from', c.from_round, c.from_tbl, c.rules) + ' · ' + state + ' ';
    if (c.state === 'confirm') {
      for (const [key, ok] of [['carry_confirm', true], ['carry_decline', false]]) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = t(key);
        b.addEventListener('click', () => confirmed(
          t(ok ? 'c_carry_confirm' : 'c_carry_decline', what, c.player),
          '/api/carry', {id: c.id, confirm: ok}, t(key) + ' #' + c.id));
        li.append(b);
      }
    }
    return li;
  }));
  $('#no-carries').hidden = list.length > 0;
}

function tick() {
  for (const rec of S.tables.values()) drawTile(rec);
  drawCounts();
}

// --- the event stream, reconnecting ---------------------------------------------------------

function setConn(live) {
  const c = $('#conn');
  c.className = 'conn ' + (live ? 'live' : 'down');
  c.dataset.live = live ? '1' : '0';
  setText(c, t(live ? 'live' : 'reconnecting'));
}

function connect() {
  const es = new EventSource('/api/events');
  es.addEventListener('open', () => {
    S.retryMs = 1000;
    setConn(true);
    refreshAll();
  });
  es.addEventListener('table', (e) => {
    takeView(JSON.parse(e.data), performance.now());
    drawCounts();
  });
  es.addEventListener('link', (e) => {
    const info = JSON.parse(e.data);
    if (!S.room) return;
    S.room.links = S.room.links.map((l) => (l.url === info.url ? Object.assign(l, info) : l));
    drawHeader();
  });
  es.addEventListener('audit', () => refreshAll());
  es.addEventListener('error', () => {
    setConn(false);
    if (es.readyState === EventSource.CLOSED) {  // refused (a restart, the token): try again
      setTimeout(connect, S.retryMs);
      S.retryMs = Math.min(RETRY_MAX_MS, S.retryMs * 2);
    }
  });
}

function refreshAll() {
  loadRoom().then(loadResults).catch(() => {});
  loadAudit().catch(() => {});
}

// --- results and audit -----------------------------------------------------------------------

let resultsTimer = null;
function resultsSoon() {
  clearTimeout(resultsTimer);
  resultsTimer = setTimeout(() => loadResults().catch(() => {}), 300);
}

async function loadResults() {
  const r = S.room && S.room.round;
  if (!r) return;
  S.results = await getJSON('/api/results?round=' + r.round);
  drawResults();
}

function drawResults() {
  const res = S.results;
  if (!res) return;
  setText($('#results-round'), t('round') + ' ' + res.round);
  const csv = $('#csv');
  csv.href = '/api/results.csv?round=' + res.round;
  csv.download = 'duelclock-' + (S.room ? S.room.event : 'event') + '-round-' + res.round + '.csv';
  const head = document.createElement('tr');
  head.append(...res.columns.map((c) => {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = t('col_' + c);
    return th;
  }));
  $('#results-table thead').replaceChildren(head);
  $('#results-table tbody').replaceChildren(...res.rows.map((row, n) => {
    const tr = document.createElement('tr');
    const decided = res.decided[n];
    tr.append(...row.map((cell, i) => {
      const td = document.createElement('td');
      const col = res.columns[i];
      td.textContent = cell;
      if (col === 'result' && cell === 'double_loss') td.textContent = t('ph_double_loss');
      if (col === 'verified' && decided) {
        td.textContent = t('v_' + decided.how) + ': ' + decided.reason;
        td.className = 'v-' + decided.how;
      } else if (col === 'verified') {
        const v = res.verified[n];
        td.textContent = (v ? t('v_' + v) : '') +
          (res.after_close[n] ? ' · ' + t('alert_after_close') : '');
        td.className = 'v-' + (v || 'none');
      }
      return td;
    }));
    return tr;
  }));
  $('#no-results').hidden = res.rows.length > 0;
}

async function loadAudit() {
  S.audit = await getJSON('/api/audit?limit=30');
  drawAudit();
}

function drawAudit() {
  $('#audit-table tbody').replaceChildren(...S.audit.map((a) => {
    const tr = document.createElement('tr');
    if (a.outcome !== 'ok') tr.className = 'refused';
    const cells = [new Date(a.unix_ms).toLocaleTimeString(lang), a.who, a.command,
                   JSON.stringify(a.args), a.outcome];
    tr.append(...cells.map((c, i) => {
      const td = document.createElement('td');
      td.textContent = c;
      td.className = AUDIT_CLASSES[i];
      return td;
    }));
    return tr;
  }));
  $('#no-audit').hidden = S.audit.length > 0;
}

// --- controls --------------------------------------------------------------------------------

// "all" or "" -> null (every table); "1-10,17" -> [1..10, 17]; anything else throws.
function parseTables(text) {
  text = text.trim();
  if (text === '' || text === 'all') return null;
  const out = new Set();
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new Error(t('bad_tables'));
    const lo = Number(m[1]);
    const hi = Number(m[2] || m[1]);
    if (lo < 1 || hi < lo || hi - lo > 10000) throw new Error(t('bad_tables'));
    for (let n = lo; n <= hi; n++) out.add(n);
  }
  return [...out].sort((a, b) => a - b);
}

function tablesText(list) {
  return list === null ? t('all_tables') : t('tables_list', list.join(','));
}

// "45m", "90s", "1h" or plain minutes "45" -> seconds, as the CLI takes them.
function parseDuration(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$/.exec(text);
  if (!m) throw new Error(t('bad_duration'));
  return Math.round(Number(m[1]) * ({s: 1, m: 60, h: 3600}[m[2]] || 60));
}

// Ask in the modal dialog; resolves true on Confirm (Escape and Cancel say no).
function confirmAsk(text) {
  const dlg = $('#confirm');
  $('#confirm-text').textContent = text;
  dlg.returnValue = '';
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), {once: true});
    dlg.showModal();
  });
}

let toastTimer = null;
function toast(text, ok) {
  const el = $('#toast');
  el.className = 'toast ' + (ok ? 'ok' : 'bad');
  el.textContent = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.textContent = ''; }, TOAST_MS);
}

// Confirm, post, tell; the audit event from the desk refreshes the room and the log.
async function confirmed(question, path, body, what) {
  if (!(await confirmAsk(question))) return false;
  const r = await command(path, body);
  toast(r.ok ? t('done', what) : t('refused', r.data.error), r.ok);
  return r.ok;
}

function onForm(id, run) {
  $(id).addEventListener('submit', (e) => {
    e.preventDefault();
    let go;
    try {
      go = run(e);
    } catch (err) {
      toast(err.message, false);
      return;
    }
    go.catch((err) => toast(String(err), false));
  });
}

function eventKey() {
  return 'duelclock.event.' + (S.room ? S.room.event : '');
}

function eventSettings() {
  try {
    return JSON.parse(localStorage.getItem(eventKey())) || {};
  } catch (e) {
    return {};
  }
}

function wireControls() {
  onForm('#f-start', async () => {
    const body = {
      round: Number($('#s-round').value), kind: $('#s-kind').value,
      tables: parseTables($('#s-tables').value), at: $('#s-at').value.trim() || 'now',
      limit_s: parseDuration($('#s-limit').value), cap_s: parseDuration($('#s-cap').value),
      extra_turns: Number($('#s-extra').value), seating: $('#s-seating').checked,
      judge_extend: $('#s-judge-extend').checked,
    };
    const ev = eventSettings();
    const rules = $('#s-rules').value || ev.rules;
    const tl = $('#s-lang').value || ev.lang;
    if (rules) body.rules = rules;
    if (tl) body.lang = tl;
    const extra = (rules ? ', ' + rules : '') + (tl ? ', ' + LANGS[tl] : '') +
                  (body.seating ? t('c_seating') : '') +
                  (body.judge_extend ? t('c_judge_extend') : '');
    const q = t('c_start', body.round, t(body.kind), tablesText(body.tables), body.at,
                clockText(body.limit_s * 1000), clockText(body.cap_s * 1000), body.extra_turns,
                extra);
    if (await confirmed(q, '/api/round/start', body, t('start_round') + ' ' + body.round)) {
      $('#s-round').dataset.auto = '1';
    }
  });
  $('#s-round').addEventListener('input', (e) => { e.target.dataset.auto = '0'; });

  onForm('#f-pause', async (e) => {
    const what = e.submitter && e.submitter.value === 'resume' ? 'resume' : 'pause';
    const tables = parseTables($('#p-tables').value);
    await confirmed(t('c_' + what, tablesText(tables)), '/api/' + what,
                    tables === null ? {} : {tables}, t(what));
  });

  // One table, a list, or (empty) every table of the round: each its own command.
  onForm('#f-extend', async () => {
    const tables = parseTables($('#e-table').value);
    const minutes = Number($('#e-minutes').value);
    const ms = Math.round(minutes * 60000);
    if (tables === null) {
      await confirmed(t('c_extend_all', minutes), '/api/extend', {ms},
                      t('extend') + ' ' + t('all_tables'));
    } else if (tables.length === 1) {
      await confirmed(t('c_extend', tables[0], minutes), '/api/extend', {table: tables[0], ms},
                      t('extend') + ' ' + tables[0]);
    } else {
      await confirmed(t('c_extend_some', tablesText(tables), minutes), '/api/extend',
                      {tables, ms}, t('extend') + ' ' + tables.join(','));
    }
  });

  // The head judge's result: typed from the paper sheet, or a mismatch settled by the
  // table's verdict or the desk's replay; always with a reason (kept with who and when).
  const take = $('#r-take');
  const typedOnly = () => {
    for (const id of ['#r-result', '#r-wins-a', '#r-wins-b']) $(id).disabled = take.value !== 'typed';
  };
  take.addEventListener('change', typedOnly);
  typedOnly();
  onForm('#f-result', async () => {
    const table = Number($('#r-table').value);
    const reason = $('#r-reason').value.trim();
    if (!reason) throw new Error(t('need_reason'));
    const body = {table, reason};
    let q;
    if (take.value === 'typed') {
      body.result = $('#r-result').value;
      body.wins = {A: Number($('#r-wins-a').value), B: Number($('#r-wins-b').value)};
      q = t('c_result_typed', table, body.result === 'double_loss' ? t('ph_double_loss')
            : body.result, body.wins.A, body.wins.B, reason);
    } else {
      body.take = take.value;
      q = t('c_result_take', table, t('r_' + take.value), reason);
    }
    if (await confirmed(q, '/api/result', body, t('r_submit') + ' ' + table)) {
      $('#r-reason').value = '';
    }
  });

  onForm('#f-close', async () => {
    const r = currentRound();
    if (!r) throw new Error(t('no_running'));
    const force = $('#c-force').checked;
    if (await confirmed(t('c_close', r.round, force ? t('c_close_force') : ''),
                        '/api/round/close', {round: r.round, force}, t('close_round'))) {
      $('#c-force').checked = false;
    }
  });

  // The export waits for every result (the next round's pairings need them): asked first
  // when some table has none yet, then forced.
  $('#csv').addEventListener('click', async (e) => {
    const a = e.currentTarget;
    if (a.dataset.asked === '1') {
      delete a.dataset.asked;
      return;                                  // the download itself
    }
    e.preventDefault();
    const round = S.results ? S.results.round : 0;
    let missing = [];
    try {
      missing = (await getJSON('/api/results?round=' + round)).missing;
    } catch (err) {
      toast(String(err), false);
      return;
    }
    let href = '/api/results.csv?round=' + round;
    if (missing.length) {
      const what = missing.map(([n, st]) => n + ' (' + t('v_' + st.replace(' ', '_')) + ')');
      if (!(await confirmAsk(t('c_export_missing', what.join(', '))))) return;
      href += '&force=1';
    }
    a.href = href;
    a.dataset.asked = '1';
    a.click();
  });

  // A table's maintenance code for the challenge on its screen (audited at the desk): shown
  // here, not in a toast, so the judge can read it out while it is typed at the table.
  onForm('#f-unlock', async () => {
    const table = Number($('#u-table').value);
    const challenge = $('#u-challenge').value.trim();
    const out = $('#u-code');
    out.textContent = '';
    if (!(await confirmAsk(t('c_unlock', table, challenge)))) return;
    const r = await command('/api/unlock', {table, challenge});
    if (r.ok) out.textContent = t('unlock_code', r.data.table, r.data.code);
    else toast(t('refused', r.data.error), false);
  });

  const evRules = $('#ev-rules');
  const evLang = $('#ev-lang');
  const saveEvent = () => localStorage.setItem(eventKey(), JSON.stringify(
    {rules: evRules.value, lang: evLang.value}));
  evRules.addEventListener('change', saveEvent);
  evLang.addEventListener('change', saveEvent);
}

function loadEventSettings() {
  const ev = eventSettings();
  $('#ev-rules').value = ev.rules || '';
  $('#ev-lang').value = ev.lang || '';
}

// --- start -----------------------------------------------------------------------------------

function drawLegend() {
  const legend = $('#legend');
  legend.setAttribute('aria-label', t('legend'));
  legend.replaceChildren(...LEGEND.map(([cls, key]) => {
    const s = document.createElement('span');
    s.className = 'swatch ph-' + cls;
    s.setAttribute('role', 'listitem');
    s.dataset.phase = cls;
    s.textContent = t(key);
    return s;
  }));
}

function redrawAll() {
  drawLegend();
  drawHeader();
  tick();
  drawResults();
  drawBoards();
  drawCarries();
  drawAudit();
  setConn($('#conn').dataset.live === '1');
}

function start() {
  applyI18n();
  langPicker($('#lang'), redrawAll);
  const who = $('#who');
  who.value = localStorage.getItem(WHO_KEY) || 'desk';
  who.addEventListener('change', () => localStorage.setItem(WHO_KEY, who.value.trim()));
  for (const id of ['#f-unfinished', '#f-alerts']) $(id).addEventListener('change', tick);
  wireControls();
  drawLegend();
  setConn(false);
  loadRoom().then(() => {
    loadEventSettings();
    return loadResults();
  }).catch(() => {});
  loadAudit().catch(() => {});
  connect();
  setInterval(tick, TICK_MS);
}

start();
