// zot inspect: the page. Plain JS, no build step, no dependencies.
'use strict';

const API = '/inspect/api';
const MAX_ROWS = 3000; // rows drawn at most; older ones are summarised
const CHUNKS = new Set([
  'agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk',
  'text_delta', 'thinking_delta', 'tool_use_args', 'tool_progress',
]);

const state = {
  records: [],          // every record, by seq order
  bySeq: new Map(),
  sessions: [],         // SessionInfo
  conns: [],            // ConnInfo
  offline: null,        // the imported file's name, when viewing one
  paused: false,
  pending: [],          // records that came while paused
  selected: null,       // seq of the record shown in the detail pane
  unfolded: new Set(),  // first seq of chunk runs shown unfolded
  follow: true,
  es: null,
};

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// ---- data in -------------------------------------------------------------

async function fetchJSON(path) {
  const res = await fetch(API + path, { credentials: 'same-origin' });
  if (res.status === 401) { showLogin(); throw new Error('unauthorized'); }
  if (!res.ok) throw new Error(res.status + ' ' + (await res.text()));
  return res.json();
}

// load shows a snapshot (or an imported file). With merge, the records
// the live stream brought that the snapshot does not hold yet (it was
// taken before they came) stay.
function load(snap, merge) {
  const old = merge ? state.records : [];
  state.records = (snap.records || []).slice().sort((a, b) => a.seq - b.seq);
  state.bySeq = new Map(state.records.map((r) => [r.seq, r]));
  const floor = state.records.length ? state.records[0].seq : 0;
  for (const r of old) if (r.seq > floor && !state.bySeq.has(r.seq)) { state.bySeq.set(r.seq, r); state.records.push(r); }
  if (old.length) state.records.sort((a, b) => a.seq - b.seq);
  state.sessions = snap.sessions || [];
  state.conns = snap.connections || [];
  state.limits = snap.limits || null;
  scheduleRender(true);
}

async function refresh() {
  const snap = await fetchJSON('/snapshot');
  if (!state.offline) load(snap, true);
}

function addRecord(r) {
  if (state.bySeq.has(r.seq)) return;
  state.bySeq.set(r.seq, r);
  const rs = state.records;
  if (rs.length === 0 || rs[rs.length - 1].seq < r.seq) rs.push(r);
  else { // a call numbered as it started, recorded as it ended
    let i = rs.length;
    while (i > 0 && rs[i - 1].seq > r.seq) i--;
    rs.splice(i, 0, r);
  }
  if (r.session !== undefined && !state.sessions.some((s) => s.id === (r.session || ''))) {
    state.sessions.push({ id: r.session || '', first: r.at, last: r.at, kept: 0, let_go: 0 });
  }
  const s = state.sessions.find((s) => s.id === (r.session || ''));
  if (s) { s.last = r.at; s.kept++; }
  if (r.kind === 'frame') {
    let c = state.conns.find((c) => c.id === r.conn);
    if (!c) { c = { id: r.conn, door: r.door, transport: '?', label: '', frames_in: 0, frames_out: 0 }; state.conns.push(c); }
    if (r.dir === 'in') c.frames_in++; else c.frames_out++;
  }
}

function connect() {
  if (state.es) state.es.close();
  const es = new EventSource(API + '/live');
  state.es = es;
  es.addEventListener('open', () => {
    refresh().then(() => { if (!state.offline) setStatus(state.paused ? 'paused' : 'live', state.paused ? 'paused' : 'live'); }).catch(() => {});
  });
  es.addEventListener('record', (ev) => {
    if (state.offline) return;
    const r = JSON.parse(ev.data);
    if (state.paused) { state.pending.push(r); updateCounts(); return; }
    addRecord(r);
    scheduleRender(false);
  });
  es.addEventListener('lost', () => { refresh().catch(() => {}); });
  es.addEventListener('error', () => {
    setStatus('off', 'reconnecting…');
    fetch(API + '/snapshot', { credentials: 'same-origin' }).then((res) => {
      if (res.status === 401) { es.close(); showLogin(); }
    }).catch(() => {});
  });
}

function setStatus(cls, text) {
  const s = $('status');
  s.className = 'status ' + cls;
  s.textContent = text;
}

// ---- filtering, folding ----------------------------------------------------

function filters() {
  return {
    session: $('f-session').value,
    method: $('f-method').value.trim().toLowerCase(),
    dir: $('f-dir').value,
    kinds: { frame: $('k-frame').checked, model: $('k-model').checked, http: $('k-http').checked, tool: $('k-tool').checked },
    bad: $('f-bad').checked,
    text: $('f-text').value.trim().toLowerCase(),
    fold: $('f-fold').checked,
  };
}

function frameText(r) {
  if (r._text === undefined) r._text = r.frame === undefined ? '' : JSON.stringify(r.frame).toLowerCase();
  return r._text;
}

function matches(r, f) {
  if (f.session !== '*' && (r.session || '') !== f.session) return false;
  if (!f.kinds[r.kind]) return false;
  if (f.dir && r.dir !== f.dir) return false;
  if (f.method && !(r.method || '').toLowerCase().includes(f.method)) return false;
  if (f.bad && r.valid !== 'bad') return false;
  if (f.text) {
    const hay = frameText(r) + ' ' + (r.method || '').toLowerCase() + ' ' + (r.url || '').toLowerCase() + ' ' + (r.error || '').toLowerCase();
    if (!hay.includes(f.text)) return false;
  }
  return true;
}

function isChunk(r) { return r.kind === 'frame' && CHUNKS.has(r.update); }

// groups folds runs of chunks (same connection, direction, session and
// kind of update) into one group each.
function groups(list, fold) {
  const out = [];
  for (const r of list) {
    const last = out[out.length - 1];
    if (fold && isChunk(r) && last && last.run && last.key === runKey(r)) {
      last.items.push(r);
      continue;
    }
    if (fold && isChunk(r)) out.push({ run: true, key: runKey(r), items: [r] });
    else out.push({ run: false, items: [r] });
  }
  return out;
}

function runKey(r) { return r.conn + '|' + r.dir + '|' + (r.session || '') + '|' + r.update; }

// ---- rendering -------------------------------------------------------------

let renderQueued = false;
let fullRender = false;
function scheduleRender(full) {
  fullRender = fullRender || full;
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; const f = fullRender; fullRender = false; render(f); });
}

function render() {
  const f = filters();
  const list = state.records.filter((r) => matches(r, f));
  let gs = groups(list, f.fold);
  const hidden = Math.max(0, gs.length - MAX_ROWS);
  if (hidden) gs = gs.slice(hidden);
  const wrap = $('timeline-wrap');
  const atBottom = wrap.scrollHeight - wrap.scrollTop - wrap.clientHeight < 40;
  const body = $('rows');
  const frag = document.createDocumentFragment();
  if (hidden) {
    const tr = el('tr', 'note');
    const td = el('td', null, hidden + ' older rows not drawn: narrow the filters, or export to see them all');
    td.colSpan = 11;
    tr.append(td);
    frag.append(tr);
  }
  for (const g of gs) {
    if (g.run && g.items.length > 1) {
      const open = state.unfolded.has(g.items[0].seq);
      frag.append(runRow(g, open));
      if (open) for (const r of g.items) frag.append(row(r, true));
    } else {
      for (const r of g.items) frag.append(row(r, false));
    }
  }
  body.replaceChildren(frag);
  $('empty').hidden = state.records.length > 0;
  if (state.records.length > 0 && list.length === 0) {
    $('empty').hidden = false;
    $('empty').textContent = 'No record matches the filters.';
  } else {
    $('empty').textContent = 'Waiting for traffic. Send a prompt through this zot and its frames appear here as they cross.';
  }
  if (state.follow && (atBottom || fullRender)) wrap.scrollTop = wrap.scrollHeight;
  $('follow').hidden = atBottom || state.follow;
  renderSide(f);
  updateCounts(list.length);
}

function fmtTime(at) {
  const d = new Date(at);
  if (isNaN(d)) return '';
  const p = (n, w) => String(n).padStart(w || 2, '0');
  return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) + '.' + p(d.getMilliseconds(), 3);
}

function fmtMs(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms >= 10000) return (ms / 1000).toFixed(1) + 's';
  if (ms >= 100) return Math.round(ms) + '';
  return ms.toFixed(ms < 10 ? 2 : 1);
}

function fmtSize(n) {
  if (!n) return '';
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + 'M';
  if (n >= 1024) return (n / 1024).toFixed(1) + 'k';
  return n + '';
}

function dirArrow(r) {
  if (r.kind !== 'frame') return r.kind === 'tool' ? '⚙' : '⇄';
  return r.dir === 'in' ? '→' : '←';
}

function summary(r) {
  switch (r.kind) {
    case 'model':
      return [r.outcome, r.stop && 'stop ' + r.stop, r.events + ' events', (r.tokens_in || 0) + '→' + (r.tokens_out || 0) + ' tok', r.error].filter(Boolean).join(' · ');
    case 'http':
      return [r.status || r.outcome, r.url, r.events ? r.events + ' events' : '', r.ttfb_ms ? 'headers ' + fmtMs(r.ttfb_ms) + ' ms' : '', r.error].filter(Boolean).join(' · ');
    case 'tool':
      return [r.outcome, r.tool_id, r.error].filter(Boolean).join(' · ');
  }
  const f = r.frame;
  if (f === undefined) return '';
  if (typeof f === 'string') return '(cut) ' + f.slice(0, 160);
  const pick = preview(f);
  return pick.length > 200 ? pick.slice(0, 200) + '…' : pick;
}

// preview picks what a person looks for in a frame: the text of a chunk,
// a prompt, a tool call's title, an error's message.
function preview(f) {
  try {
    const p = f.params || {};
    const u = p.update;
    if (u) {
      if (u.content && u.content.text !== undefined) return JSON.stringify(u.content.text);
      if (u.title) return u.title + (u.status ? ' [' + u.status + ']' : '');
      if (u.status) return u.toolCallId + ' [' + u.status + ']';
    }
    if (f.error) return (f.error.code !== undefined ? f.error.code + ' ' : '') + (f.error.message || JSON.stringify(f.error));
    if (p.prompt) return JSON.stringify(p.prompt.map((b) => b.text || b.type).join(' '));
    if (f.type === 'prompt' && f.message !== undefined) return JSON.stringify(f.message);
    if (f.delta !== undefined) return JSON.stringify(f.delta);
    if (f.type === 'response') return (f.success ? 'ok' : 'failed: ' + (f.code || '') + ' ' + (f.error || '')) + (f.data ? ' ' + JSON.stringify(f.data) : '');
    if (f.type === 'tool_call') return (f.name || '') + ' ' + JSON.stringify(f.args || f.arguments || '');
    if (f.result !== undefined) return JSON.stringify(f.result);
    const rest = Object.assign({}, f);
    delete rest.jsonrpc; delete rest.id; delete rest.method; delete rest.type; delete rest.seq;
    return JSON.stringify(rest.params !== undefined ? rest.params : rest);
  } catch (e) {
    return '';
  }
}

function validCell(r) {
  const td = el('td', 'c-valid');
  if (r.kind !== 'frame') return td;
  if (r.valid === 'ok') { td.append(el('span', 'badge ok', '✓')); td.title = 'follows the schema'; }
  else if (r.valid === 'bad') { td.append(el('span', 'badge bad', '✗')); td.title = r.problem || 'breaks the schema'; }
  else { td.append(el('span', 'badge none', '–')); td.title = r.cut ? 'cut: too long to keep whole' : 'no schema for this message'; }
  return td;
}

function row(r, inRun) {
  const tr = el('tr', 'rec k-' + r.kind + ' d-' + (r.dir || '') + (inRun ? ' in-run' : '') + (r.valid === 'bad' ? ' invalid' : '') + (r.role === 'error' || r.outcome === 'error' ? ' failed' : ''));
  tr.dataset.seq = r.seq;
  if (state.selected === r.seq) tr.classList.add('selected');
  tr.append(el('td', 'c-seq', r.seq));
  tr.append(el('td', 'c-time', fmtTime(r.at)));
  tr.append(el('td', 'c-conn', r.conn || ''));
  const dir = el('td', 'c-dir', dirArrow(r));
  dir.title = r.kind === 'frame' ? (r.dir === 'in' ? 'client → zot' : 'zot → client') : r.kind;
  tr.append(dir);
  tr.append(el('td', 'c-kind', r.kind === 'frame' ? r.role || '' : r.kind));
  const m = el('td', 'c-method', r.method || '');
  if (r.update && r.update !== r.method) m.append(el('span', 'sub', ' ' + r.update));
  tr.append(m);
  const id = el('td', 'c-id', r.id || (r.tool_id ? '' : ''));
  if (r.pair) { id.append(el('span', 'pair', ' ↩' + r.pair)); id.title = 'answers #' + r.pair; }
  tr.append(id);
  tr.append(el('td', 'c-ms', fmtMs(r.ms)));
  tr.append(el('td', 'c-size', fmtSize(r.size)));
  tr.append(validCell(r));
  tr.append(el('td', 'c-sum', summary(r)));
  return tr;
}

function runRow(g, open) {
  const first = g.items[0], last = g.items[g.items.length - 1];
  const span = (new Date(last.at) - new Date(first.at)) / 1000;
  const rate = span > 0 ? (g.items.length / span) : 0;
  const bytes = g.items.reduce((n, r) => n + (r.size || 0), 0);
  const bad = g.items.filter((r) => r.valid === 'bad').length;
  const tr = el('tr', 'run k-frame d-' + first.dir + (open ? ' open' : '') + (bad ? ' invalid' : ''));
  tr.dataset.run = first.seq;
  tr.append(el('td', 'c-seq', first.seq));
  tr.append(el('td', 'c-time', fmtTime(first.at)));
  tr.append(el('td', 'c-conn', first.conn || ''));
  tr.append(el('td', 'c-dir', dirArrow(first)));
  tr.append(el('td', 'c-kind', (open ? '▾ ' : '▸ ') + g.items.length + '×'));
  const m = el('td', 'c-method', first.method || '');
  if (first.update !== first.method) m.append(el('span', 'sub', ' ' + first.update));
  tr.append(m);
  tr.append(el('td', 'c-id', ''));
  tr.append(el('td', 'c-ms', fmtMs(span * 1000)));
  tr.append(el('td', 'c-size', fmtSize(bytes)));
  const v = el('td', 'c-valid');
  v.append(el('span', 'badge ' + (bad ? 'bad' : (g.items.every((r) => r.valid === 'ok') ? 'ok' : 'none')), bad ? bad + '✗' : (g.items.every((r) => r.valid === 'ok') ? '✓' : '–')));
  tr.append(v);
  let text = '';
  for (const r of g.items) {
    const f = r.frame || {};
    const t = (f.params && f.params.update && f.params.update.content && f.params.update.content.text) || f.delta || f.text || '';
    text += typeof t === 'string' ? t : '';
    if (text.length > 240) break;
  }
  const sum = el('td', 'c-sum');
  sum.append(el('span', 'rate', g.items.length + ' chunks · ' + (span > 0 ? rate.toFixed(rate < 10 ? 1 : 0) + '/s' : 'one burst') + ' · '));
  sum.append(document.createTextNode(JSON.stringify(text.length > 240 ? text.slice(0, 240) + '…' : text)));
  tr.append(sum);
  tr.title = 'a run of ' + g.items.length + ' ' + first.update + ' frames: click to ' + (open ? 'fold' : 'unfold');
  return tr;
}

function renderSide(f) {
  // Sessions.
  const ul = $('sessions');
  const frag = document.createDocumentFragment();
  const all = el('li', f.session === '*' ? 'active' : '');
  all.append(el('span', 'name', 'all sessions'), el('span', 'meta', state.records.length + ''));
  all.dataset.session = '*';
  frag.append(all);
  const counts = new Map();
  for (const r of state.records) counts.set(r.session || '', (counts.get(r.session || '') || 0) + 1);
  for (const s of state.sessions) {
    const li = el('li', f.session === (s.id || '') ? 'active' : '');
    li.dataset.session = s.id || '';
    li.append(el('span', 'name', s.id || '(no session)'));
    li.append(el('span', 'meta', (counts.get(s.id || '') || 0) + (s.let_go ? ' (+' + s.let_go + ' let go)' : '')));
    li.title = s.id ? 'session ' + s.id + ', last seen ' + fmtTime(s.last) : 'frames that name no session: initialize, session/list…';
    frag.append(li);
  }
  ul.replaceChildren(frag);
  // Session select.
  const sel = $('f-session');
  const want = ['*'].concat(state.sessions.map((s) => s.id || ''));
  const have = Array.from(sel.options).map((o) => o.value);
  if (want.join('\0') !== have.join('\0')) {
    const cur = sel.value;
    sel.replaceChildren(...want.map((v) => { const o = el('option', null, v === '*' ? 'all sessions' : (v || '(no session)')); o.value = v; return o; }));
    sel.value = want.includes(cur) ? cur : '*';
  }
  // Connections.
  const cl = $('conns');
  cl.replaceChildren(...state.conns.map((c) => {
    const li = el('li', c.ended ? 'ended' : 'open');
    li.append(el('span', 'name', c.id + ' ' + c.door + '/' + c.transport));
    li.append(el('span', 'meta', '→' + c.frames_in + ' ←' + c.frames_out));
    li.title = (c.label || '') + (c.opened ? ', opened ' + fmtTime(c.opened) : '') + (c.ended ? ', ended ' + fmtTime(c.ended) : ', open');
    return li;
  }));
  if (state.conns.length === 0) cl.append(el('li', 'none', 'none yet'));
  // Latency: answers paired with their requests, by method.
  const by = new Map();
  for (const r of state.records) {
    if (!r.pair || r.ms === undefined) continue;
    if (f.session !== '*' && (r.session || '') !== f.session) continue;
    const k = (r.door === 'rpc' && r.method === 'done' ? 'prompt→done' : r.method) || '?';
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(r.ms);
  }
  for (const r of state.records) {
    if (r.kind === 'frame' || r.ms === undefined) continue;
    if (f.session !== '*' && (r.session || '') !== f.session) continue;
    const k = r.kind + ' ' + (r.kind === 'http' ? r.method.split(' ')[0] : r.method);
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(r.ms);
  }
  const tb = document.querySelector('#latency tbody');
  const rows = Array.from(by.entries()).sort((a, b) => a[0].localeCompare(b[0])).map(([k, v]) => {
    v.sort((a, b) => a - b);
    const tr = el('tr');
    const name = el('td', 'name', k);
    name.title = k;
    tr.append(name, el('td', null, v.length), el('td', null, fmtMs(pct(v, 50))), el('td', null, fmtMs(pct(v, 99))));
    return tr;
  });
  tb.replaceChildren(...rows);
  // Methods for the filter's suggestions.
  const dl = $('methods');
  const methods = Array.from(new Set(state.records.map((r) => r.method).filter(Boolean))).sort();
  if (dl.childElementCount !== methods.length) dl.replaceChildren(...methods.map((m) => { const o = el('option'); o.value = m; return o; }));
}

// pct is the p-th percentile of sorted v (nearest rank).
function pct(v, p) {
  if (v.length === 0) return undefined;
  const i = Math.min(v.length - 1, Math.max(0, Math.ceil(p / 100 * v.length) - 1));
  return v[i];
}

function updateCounts(shown) {
  const n = state.records.length;
  let t = (shown !== undefined && shown !== n ? shown + ' of ' : '') + n + ' records';
  if (state.paused && state.pending.length) t += ' · ' + state.pending.length + ' waiting';
  $('counts').textContent = t;
}

// ---- detail pane -----------------------------------------------------------

function select(seq) {
  state.selected = seq;
  const r = state.bySeq.get(seq);
  for (const tr of document.querySelectorAll('tr.selected')) tr.classList.remove('selected');
  const tr = document.querySelector('tr.rec[data-seq="' + seq + '"]');
  if (tr) tr.classList.add('selected');
  const pane = $('detail');
  if (!r) { closeDetail(); return; }
  pane.hidden = false;
  document.body.classList.add('detail-open');
  $('d-title').textContent = '#' + r.seq + ' ' + (r.method || r.kind);
  const dl = $('d-meta');
  dl.replaceChildren();
  const add = (k, v, seqLink) => {
    if (v === undefined || v === null || v === '') return;
    dl.append(el('dt', null, k));
    const dd = el('dd', null, seqLink ? '' : v);
    if (seqLink) { const a = el('a', 'jump', '#' + v); a.href = '#'; a.dataset.seq = v; dd.append(a); }
    dl.append(dd);
  };
  add('time', new Date(r.at).toISOString());
  add('kind', r.kind + (r.role ? ' · ' + r.role : ''));
  add('door', r.door && r.door + (r.conn ? ' · ' + r.conn : ''));
  add('direction', r.kind === 'frame' ? (r.dir === 'in' ? 'client → zot' : 'zot → client') : '');
  add('session', r.session);
  add('id', r.id);
  add('answers', r.pair, true);
  const answer = state.records.find((x) => x.pair === r.seq);
  add('answered by', answer && answer.seq, true);
  add(r.pair ? 'latency' : 'duration', r.ms !== undefined ? fmtMs(r.ms) + ' ms' : '');
  add('size', r.size ? r.size + ' bytes' : '');
  add('url', r.url);
  add('status', r.status);
  add('headers after', r.ttfb_ms !== undefined ? fmtMs(r.ttfb_ms) + ' ms' : '');
  add('events', r.events);
  add('outcome', r.outcome);
  add('stop', r.stop);
  add('tokens', r.tokens_in || r.tokens_out ? (r.tokens_in || 0) + ' in, ' + (r.tokens_out || 0) + ' out' : '');
  add('step', r.step);
  add('tool call', r.tool_id);
  add('error', r.error);
  add('schema', r.kind === 'frame' ? (r.valid === 'ok' ? 'follows the schema' : r.valid === 'bad' ? 'breaks the schema' : (r.cut ? 'not checked: cut' : 'no schema for it')) : '');
  const prob = $('d-problem');
  prob.hidden = !r.problem;
  prob.textContent = r.problem || '';
  const pre = $('d-json');
  pre.replaceChildren();
  if (r.frame !== undefined) pre.append(pretty(r.frame, 0));
  else pre.textContent = '(no frame: a ' + r.kind + ' call the agent made)';
}

function closeDetail() {
  state.selected = null;
  $('detail').hidden = true;
  document.body.classList.remove('detail-open');
  scheduleRender(false);
}

// pretty renders a JSON value as indented, coloured text.
function pretty(v, depth) {
  const frag = document.createDocumentFragment();
  const pad = '  '.repeat(depth + 1), end = '  '.repeat(depth);
  if (v === null) frag.append(el('span', 'j-null', 'null'));
  else if (Array.isArray(v)) {
    if (v.length === 0) { frag.append('[]'); return frag; }
    frag.append('[\n');
    v.forEach((x, i) => { frag.append(pad, pretty(x, depth + 1), i < v.length - 1 ? ',\n' : '\n'); });
    frag.append(end + ']');
  } else if (typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 0) { frag.append('{}'); return frag; }
    frag.append('{\n');
    keys.forEach((k, i) => {
      frag.append(pad, el('span', 'j-key', JSON.stringify(k)), ': ', pretty(v[k], depth + 1), i < keys.length - 1 ? ',\n' : '\n');
    });
    frag.append(end + '}');
  } else if (typeof v === 'string') frag.append(el('span', 'j-str', JSON.stringify(v)));
  else if (typeof v === 'number') frag.append(el('span', 'j-num', String(v)));
  else if (typeof v === 'boolean') frag.append(el('span', 'j-bool', String(v)));
  return frag;
}

// ---- import, export, login ---------------------------------------------------

function currentSession() {
  const v = $('f-session').value;
  return v === '*' ? null : v;
}

function download(name, data) {
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
  const a = el('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function exportTraffic(all) {
  const s = currentSession();
  if (state.offline) { // the file in view, as it was (already redacted)
    const recs = state.records.filter((r) => all || s === null || (r.session || '') === s);
    download('zot-inspect-' + (all || s === null ? 'all' : (s || 'no-session')) + '.json',
      { format: 'zot-inspect', version: 1, exported_at: new Date().toISOString(), redacted: true, records: recs.map(strip), sessions: state.sessions, connections: state.conns });
    return;
  }
  const q = all || s === null ? '' : '?session=' + encodeURIComponent(s);
  const a = el('a');
  a.href = API + '/export' + q;
  a.download = '';
  document.body.append(a);
  a.click();
  a.remove();
}

function strip(r) { const c = Object.assign({}, r); delete c._text; return c; }

function importFile(file) {
  const reader = new FileReader();
  reader.onload = () => {
    let data;
    try { data = JSON.parse(reader.result); } catch (e) { alert('Not JSON: ' + e.message); return; }
    if (!data || data.format !== 'zot-inspect' || !Array.isArray(data.records)) { alert('Not a zot inspect export (format "zot-inspect").'); return; }
    state.offline = file.name;
    state.unfolded.clear();
    closeDetail();
    load(data, false);
    setStatus('file', 'offline');
    $('source').textContent = file.name + (data.exported_at ? ' · exported ' + new Date(data.exported_at).toLocaleString() : '') + (data.redacted ? ' · redacted' : '');
    $('live').hidden = false;
    $('pause').disabled = true;
  };
  reader.readAsText(file);
}

function backToLive() {
  state.offline = null;
  $('source').textContent = '';
  $('live').hidden = true;
  $('pause').disabled = false;
  state.records = []; state.bySeq = new Map();
  refresh().then(() => setStatus('live', 'live')).catch(() => {});
}

// showLogin asks for the token; the form opens /inspect?token=, which
// sets the cookie and comes back without it (or with #invalid-token).
function showLogin() {
  $('login').hidden = false;
  setStatus('off', 'locked');
  if (location.hash === '#invalid-token') {
    const e = $('login-error');
    e.hidden = false;
    e.textContent = 'That token is not this zot\'s.';
    history.replaceState(null, '', location.pathname);
  }
  $('login-token').focus();
}

// ---- wiring ----------------------------------------------------------------

function start() {
  refresh().then(connect).catch(() => {});
}

document.addEventListener('DOMContentLoaded', () => {
  for (const id of ['f-session', 'f-dir', 'k-frame', 'k-model', 'k-http', 'k-tool', 'f-bad', 'f-fold']) $(id).addEventListener('change', () => scheduleRender(true));
  for (const id of ['f-method', 'f-text']) $(id).addEventListener('input', () => scheduleRender(true));
  $('rows').addEventListener('click', (ev) => {
    const run = ev.target.closest('tr.run');
    if (run) {
      const seq = Number(run.dataset.run);
      if (state.unfolded.has(seq)) state.unfolded.delete(seq); else state.unfolded.add(seq);
      state.follow = false;
      render();
      return;
    }
    const tr = ev.target.closest('tr.rec');
    if (tr) select(Number(tr.dataset.seq));
  });
  $('sessions').addEventListener('click', (ev) => {
    const li = ev.target.closest('li');
    if (!li || li.dataset.session === undefined) return;
    $('f-session').value = li.dataset.session;
    scheduleRender(true);
  });
  $('d-meta').addEventListener('click', (ev) => {
    const a = ev.target.closest('a.jump');
    if (!a) return;
    ev.preventDefault();
    const seq = Number(a.dataset.seq);
    select(seq);
    const tr = document.querySelector('tr.rec[data-seq="' + seq + '"]');
    if (tr) tr.scrollIntoView({ block: 'center' });
  });
  $('d-close').addEventListener('click', closeDetail);
  $('d-copy').addEventListener('click', () => {
    const r = state.bySeq.get(state.selected);
    if (r && navigator.clipboard) navigator.clipboard.writeText(JSON.stringify(r.frame, null, 2)).catch(() => {});
  });
  $('pause').addEventListener('click', () => {
    state.paused = !state.paused;
    $('pause').textContent = state.paused ? 'Resume' : 'Pause';
    $('pause').classList.toggle('on', state.paused);
    if (!state.paused) { for (const r of state.pending) addRecord(r); state.pending = []; scheduleRender(false); }
    setStatus(state.paused ? 'paused' : 'live', state.paused ? 'paused' : 'live');
    updateCounts();
  });
  $('export').addEventListener('click', () => exportTraffic(false));
  $('export-all').addEventListener('click', () => exportTraffic(true));
  $('import').addEventListener('change', (ev) => { const f = ev.target.files[0]; if (f) importFile(f); ev.target.value = ''; });
  $('live').addEventListener('click', backToLive);
  $('follow').addEventListener('click', () => { state.follow = true; const w = $('timeline-wrap'); w.scrollTop = w.scrollHeight; $('follow').hidden = true; });
  $('timeline-wrap').addEventListener('scroll', () => {
    const w = $('timeline-wrap');
    const atBottom = w.scrollHeight - w.scrollTop - w.clientHeight < 40;
    state.follow = atBottom;
    $('follow').hidden = atBottom;
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT') {
      if (ev.key === 'Escape') ev.target.blur();
      return;
    }
    if (ev.key === '/') { ev.preventDefault(); $('f-text').focus(); }
    else if (ev.key === 'Escape') closeDetail();
    else if (ev.key === 'p') $('pause').click();
    else if (ev.key === 'j' || ev.key === 'k') {
      const rows = Array.from(document.querySelectorAll('tr.rec'));
      let i = rows.findIndex((tr) => Number(tr.dataset.seq) === state.selected);
      i = ev.key === 'j' ? Math.min(rows.length - 1, i + 1) : Math.max(0, i - 1);
      if (rows[i]) { select(Number(rows[i].dataset.seq)); rows[i].scrollIntoView({ block: 'nearest' }); }
    }
  });
  start();
});
