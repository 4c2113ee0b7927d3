// SPDX-License-Identifier: AGPL-3.0-only
// splitkd's page: a client of the public API (/v1/matrix, /v1/targets,
// /v1/models, /v1/splits?explain=1, /version, /v1/catalogs, /v1/diff,
// /v1/compare, /v1/engines) and nothing else. Two views: the fleet's grid
// and, with view=engines, what every engine would launch for one target
// and model (GET /v1/compare): over co-batches 1..max_batch_size, or, with
// seq_lens, for one mixed batch, each sequence beside itself alone. Catalog
// names and notes are data: they reach the DOM through textContent and
// attributes only, never as markup. State lives in the URL fragment.
// Changes are pushed by the change stream (v1/events); where it cannot be
// had, the page polls.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const SHAPE = ['max_batch_size', 'num_seqs', 'max_rows'];
  // The engines view's own inputs (it shares max_batch_size, override,
  // target, model and catalog with the grid) are GET /v1/engines' `inputs`:
  // their names, types, bounds and defaults are the daemon's table, so the
  // page spells none of them and shows a new one as soon as a port reads it.
  let INPUTS = [];
  const inputNames = () => INPUTS.map((x) => x.name);
  const numberInputs = () => INPUTS.filter((x) => x.type !== 'boolean').map((x) => x.name);
  const flagInputs = () => INPUTS.filter((x) => x.type === 'boolean').map((x) => x.name);
  const POLL_DEFAULT = 5;        // seconds; #poll=N in the URL changes it
  const CACHE_MAX = 16;          // remembered ETags (one per URL)
  const BINS = [1, 3, 5, 8, 12]; // upper bounds of colour classes s1..s5; s6 above
  const STREAM_POLL = 60;        // seconds between safety polls while the stream is open
  const REOPEN_MS = [3000, 60000]; // a refused stream is tried again, backing off between these

  const state = {max_batch_size: '', num_seqs: '', max_rows: '', override: '',
    changes: false, target: '', model: '', poll: POLL_DEFAULT,
    catalog: '', compare: '', // a named catalog ('' the default), and one to diff it with
    seq_lens: '', // the engines view's batch, as typed ('' none: the sweep over num_seqs)
    engines: false}; // and one string per engine input, by its name ('' unset; a flag 'true')
  const meta = {digest: null, targets: [], models: [], version: null,
    tByName: new Map(), mByName: new Map(), engines: null}; // engines: GET /v1/engines by name
  const live = {matrix: null, base: null, view: null, explainKey: '', digestSeenAt: null,
    prevDigest: null, digestChangedAt: null, checkedAt: null, changedAt: null,
    downSince: null, failures: 0, retryAt: 0, generation: 0, inflight: false,
    rerun: false, timer: 0, stream: 'none', reopenMs: REOPEN_MS[0],
    compare: null, shownView: null, // the /v1/compare answer drawn; the view last applied
    es: null, esURL: ''}; // the change stream's EventSource (and its URL), while the page has one
  const cache = new Map();

  // ---------------------------------------------------------------- text
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function put(parent, ...kids) {
    for (const k of kids) { parent.append(typeof k === 'string' ? document.createTextNode(k) : k); }
    return parent;
  }
  const int = (n) => (n === null || n === undefined) ? '—' : Number(n).toLocaleString('en-US');
  function bytes(n) {
    if (n === null || n === undefined) { return 'bytes unknown (no head_dim)'; }
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'];
    let v = Number(n), i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + ' ' + units[i];
  }
  const splits = (n) => int(n) + (n === 1 ? ' split' : ' splits');
  const pad = (n) => String(n).padStart(2, '0');
  function clock(t) {
    const d = new Date(t);
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  }
  function setTime(node, t) {
    node.textContent = t ? clock(t) : 'never';
    if (t) { node.dateTime = new Date(t).toISOString(); node.title = new Date(t).toString(); }
  }
  function bin(n) {
    let i = 0;
    while (i < BINS.length && n > BINS[i]) { i++; }
    return 's' + (i + 1);
  }

  // ---------------------------------------------------------------- URL state
  // `/?max_batch_size=16`: a query string, where the page keeps its state in
  // the fragment. Its values join the fragment (the fragment's win) and the
  // query leaves the address bar.
  function adoptSearch() {
    if (!location.search) { return; }
    const p = new URLSearchParams(location.hash.slice(1));
    for (const [k, v] of new URLSearchParams(location.search)) { if (!p.has(k)) { p.set(k, v); } }
    const s = p.toString();
    history.replaceState(null, '', location.pathname + (s ? '#' + s : ''));
  }
  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    for (const k of SHAPE.concat(['override', 'target', 'model', 'catalog', 'compare', 'seq_lens'], inputNames())) {
      state[k] = p.get(k) || '';
    }
    state.changes = p.get('view') === 'changes';
    state.engines = p.get('view') === 'engines';
    const poll = Number(p.get('poll'));
    state.poll = Number.isFinite(poll) && poll >= 0.2 && poll <= 3600 ? poll : POLL_DEFAULT;
  }
  function writeHash() {
    const p = new URLSearchParams();
    for (const k of SHAPE.concat(['override'])) { if (state[k] !== '') { p.set(k, state[k]); } }
    // the engines view keeps the grid's "changes only" for the way back, not in the URL
    if (state.engines) { p.set('view', 'engines'); } else if (state.changes) { p.set('view', 'changes'); }
    if (state.target) { p.set('target', state.target); p.set('model', state.model); }
    if (state.poll !== POLL_DEFAULT) { p.set('poll', String(state.poll)); }
    for (const k of ['catalog', 'compare', 'seq_lens']) { if (state[k] !== '') { p.set(k, state[k]); } }
    for (const k of inputNames()) { if (state[k]) { p.set(k, state[k]); } }
    const s = commas(p);
    history.replaceState(null, '', s ? '#' + s : location.pathname + location.search);
  }
  // A query's text with its commas as typed (seq_lens=8192,512,100): a comma
  // means the same escaped or not, in a fragment and to splitkd alike.
  const commas = (p) => p.toString().replace(/%2C/gi, ',');
  function syncControls() {
    for (const k of SHAPE.concat(['override', 'seq_lens'], numberInputs())) { $(k).value = state[k] || ''; }
    checkBatch();
    $('changes').checked = state.changes;
    for (const k of flagInputs()) { $(k).checked = state[k] === 'true'; }
    applyView();
  }
  // `extra` and catalog=NAME for the catalog shown: none for the default,
  // none when from= names a side itself. The one place the page adds it.
  function catalogQuery(extra) {
    const p = new URLSearchParams(extra || []);
    if (state.catalog !== '' && !p.has('from')) { p.set('catalog', state.catalog); }
    return p;
  }
  function queryString(p) {
    const s = p.toString();
    return s ? '?' + s : '';
  }
  function query(withOverride, extra) {
    const p = catalogQuery(extra);
    for (const k of SHAPE) { if (state[k] !== '') { p.set(k, state[k]); } }
    if (withOverride && state.override !== '') { p.set('override', state.override); }
    return queryString(p);
  }

  // ---------------------------------------------------------------- fetch
  // cache:'no-store' keeps the browser's cache out of the way, so the
  // If-None-Match sent here is the only one and a 304 reaches this code.
  class Unreachable extends Error {}
  async function getJSON(url) {
    const known = cache.get(url);
    const headers = {Accept: 'application/json'};
    if (known) { headers['If-None-Match'] = known.etag; }
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), Math.min(10000, Math.max(2000, state.poll * 2000)));
    let resp, data;
    try {
      resp = await fetch(url, {cache: 'no-store', headers, signal: ctl.signal});
      if (resp.status === 304 && known) { return {ok: true, data: known.data, fresh: false}; }
      if (resp.status >= 500) { throw new Unreachable('HTTP ' + resp.status); }
      // a refusal that is no problem document (414: a batch longer than the
      // request line splitkd takes) is still a refusal, not an outage
      data = resp.ok || (resp.headers.get('Content-Type') || '').includes('json') ? await resp.json()
        : {status: resp.status, title: 'HTTP ' + resp.status + (resp.statusText ? ' ' + resp.statusText : ''),
          detail: 'HTTP ' + resp.status + (resp.status === 414 ? ': the request is longer than splitkd takes (its --max-header)' : '')};
    } catch (e) {
      throw e instanceof Unreachable ? e : new Unreachable(e.name === 'AbortError' ? 'timed out' : e.message);
    } finally {
      clearTimeout(timer);
    }
    const etag = resp.headers.get('ETag');
    if (resp.ok && etag) {
      cache.delete(url);
      cache.set(url, {etag, data});
      if (cache.size > CACHE_MAX) { cache.delete(cache.keys().next().value); }
    }
    return {ok: resp.ok, status: resp.status, data, fresh: true};
  }

  // ---------------------------------------------------------------- polling
  async function loadCatalog(digest) {
    const c = queryString(catalogQuery());
    const [t, m, v] = await Promise.all([getJSON('v1/targets' + c), getJSON('v1/models' + c), getJSON('version')]);
    // a reload between the requests: keep the old view, the next poll retries
    if (!t.ok || !m.ok || t.data.catalog !== digest || m.data.catalog !== digest) { return false; }
    meta.targets = t.data.targets;
    meta.models = m.data.models;
    meta.tByName = new Map(meta.targets.map((x) => [x.name, x]));
    meta.mByName = new Map(meta.models.map((x) => [x.name, x]));
    meta.version = v.ok ? v.data : null;
    if (meta.digest === null) {
      live.digestSeenAt = Date.now();
    } else {
      live.prevDigest = meta.digest;
      live.digestChangedAt = Date.now();
    }
    meta.digest = digest;
    return true;
  }

  async function tick(gen) {
    if (state.engines) { await tickEngines(gen); return; }
    const wantBase = state.override !== '';
    const [m, b] = await Promise.all([getJSON('v1/matrix' + query(true)),
      wantBase ? getJSON('v1/matrix' + query(false)) : null]);
    if (gen !== live.generation) { return; }
    if (!m.ok) { showProblem(m.data); return; }
    if (b && !b.ok) { showProblem(b.data); return; }
    showProblem(null);
    // a 304 hands back the cached object: identity says whether the grid shows it
    const base = b ? b.data : m.data;
    let fresh = m.data !== live.matrix || base !== live.base || live.view !== state.changes;
    if (m.data.catalog !== meta.digest) {
      fresh = (await loadCatalog(m.data.catalog)) || fresh;
      if (gen !== live.generation) { return; }
    }
    live.checkedAt = Date.now();
    if (fresh) {
      if (m.fresh || (b && b.fresh)) { live.changedAt = live.checkedAt; }
      live.matrix = m.data;
      live.base = base;
      render();
      await refreshRevisions(gen);
    }
    await refreshCatalogs(gen);
    await refreshExplain(fresh, gen);
  }

  function schedule(ms) {
    clearTimeout(live.timer);
    live.delay = ms;
    live.retryAt = Date.now() + ms;
    live.timer = setTimeout(run, ms);
  }
  function backoff() {
    const base = state.poll * 1000;
    const ms = Math.min(base * 2 ** (live.failures - 1), Math.max(base, 30000));
    return Math.round(ms * (0.9 + Math.random() * 0.2)); // spread a fleet of open pages
  }
  async function run() {
    clearTimeout(live.timer);
    if (document.hidden) { return; } // visibilitychange resumes
    live.inflight = true;
    live.rerun = false;
    let delay = pollMs();
    try {
      await tick(live.generation);
      live.failures = 0;
      live.downSince = null;
    } catch (e) {
      if (!(e instanceof Unreachable)) { throw e; }
      live.failures++;
      if (live.downSince === null) { live.downSince = Date.now(); }
      delay = backoff();
    } finally {
      live.inflight = false;
      if (live.rerun) {
        run();
      } else {
        schedule(delay);
      }
      showStatus();
    }
  }
  function kick() {
    live.generation++;
    if (live.inflight) { live.rerun = true; } else { run(); }
  }

  // ---------------------------------------------------------------- stream
  // While the stream is open a change arrives at once and the page polls
  // only as a safety net; while it is not (no EventSource, refused, lost),
  // it polls every state.poll seconds, and an EventSource reconnects by
  // itself (the stream's retry: hint). Losing an open stream polls at once,
  // and a reconnect that fails shows "stale" (an answer from a connection
  // kept alive through a drain would not), whatever the poll interval.
  function pollMs() {
    return (live.stream === 'open' ? Math.max(state.poll, STREAM_POLL) : state.poll) * 1000;
  }
  // The stream of the catalog shown (catalog=NAME; none: the default's).
  function streamURL() {
    return 'v1/events' + (state.catalog !== '' ? '?catalog=' + encodeURIComponent(state.catalog) : '');
  }
  function openStream() {
    if (typeof EventSource === 'undefined') { live.stream = 'none'; return; }
    if (live.es && live.es.readyState !== EventSource.CLOSED) {
      if (live.esURL === streamURL()) { return; } // one stream a page
      live.es.close(); // another catalog shown: its own stream instead
    }
    const es = new EventSource(streamURL());
    live.es = es;
    live.esURL = streamURL();
    live.stream = 'connecting';
    es.addEventListener('open', () => {
      live.stream = 'open';
      live.reopenMs = REOPEN_MS[0];
      kick(); // whatever changed while it was closed
    });
    for (const name of ['catalog', 'reset', 'removed']) { es.addEventListener(name, kick); }
    es.addEventListener('error', () => {
      if (live.es !== es) { return; } // a stream the page let go
      const was = live.stream;
      if (es.readyState === EventSource.CLOSED) { // refused (a 503 at the cap): not retried by itself
        live.stream = 'closed';
        setTimeout(openStream, live.reopenMs);
        live.reopenMs = Math.min(2 * live.reopenMs, REOPEN_MS[1]);
      } else {
        live.stream = 'connecting';
      }
      if (was === 'open') { kick(); return; }
      if (es.readyState !== EventSource.CLOSED && live.downSince === null) {
        live.downSince = Date.now(); // a reconnect failed: splitkd is unreachable (a poll clears it)
      }
      showStatus();
    });
  }

  // ---------------------------------------------------------------- status
  function showStatus() {
    const stale = live.downSince !== null;
    const refused = !stale && !$('problem').hidden;
    document.body.dataset.state = stale ? 'stale' : refused ? 'refused' : live.checkedAt ? 'live' : 'loading';
    document.body.dataset.pollMs = String(state.poll * 1000);
    document.body.dataset.stream = live.stream;
    $('live').textContent = document.body.dataset.state;
    $('stale').hidden = !stale;
    $('stale').dataset.retryMs = stale ? String(live.delay) : '';
    if (stale) {
      setTime($('down-since'), live.downSince);
      setTime($('stale-data'), live.changedAt);
      $('retry-in').textContent = 'Next try in ' + Math.max(0, Math.ceil((live.retryAt - Date.now()) / 1000)) + ' s.';
    }
    $('digest').textContent = meta.digest || '…';
    $('digest-changed').textContent = live.digestChangedAt
      ? 'changed ' + clock(live.digestChangedAt) + ' (was ' + live.prevDigest + ')'
      : meta.digest ? 'no reload seen since ' + clock(live.digestSeenAt) : '';
    setTime($('checked'), live.checkedAt);
    setTime($('changed'), live.changedAt);
    $('every').textContent = live.stream === 'open' ? '(changes pushed)' : '(every ' + state.poll + ' s)';
    const v = meta.version;
    $('version').textContent = v ? v.version + ' (' + v.build + ')' : '';
    const link = $('matrix-link');
    link.href = state.engines ? compareURL() : 'v1/matrix' + query(true);
    link.textContent = state.engines ? 'this comparison as JSON' : 'this matrix as JSON';
  }
  // the control that sets an input the API names in a problem's `param`
  const FIELD = {target: 'target-select', model: 'model-select'};
  for (const k of SHAPE.concat(['override', 'seq_lens'])) { FIELD[k] = k; } // and each engine input (loadEngines)
  function showProblem(p) {
    const node = $('problem');
    for (const id of Object.values(FIELD)) { $(id).removeAttribute('aria-invalid'); }
    checkBatch();
    node.hidden = !p;
    if (!p) { return; }
    node.textContent = 'splitkd refused these inputs, so the ' +
      (!state.engines ? 'grid' : live.compare && live.compare.seq_lens ? 'table' : 'chart') +
      ' shows the last answer: ' + (p.detail || p.title || 'HTTP error');
    if (p.param && Object.hasOwn(FIELD, p.param)) { $(FIELD[p.param]).setAttribute('aria-invalid', 'true'); }
  }

  // ---------------------------------------------------------------- grid
  // Names never hold a newline (catalog rule), so target + "\n" + model is a key.
  const key = (t, m) => t + '\n' + m;
  const grid = {key: '', cells: new Map(), active: ''};

  function nameNode(cls, name) { // a break opportunity after each -
    const span = el('span', cls);
    for (const part of name.split(/(?<=-)/)) { put(span, part, el('wbr')); }
    return span;
  }
  function headRow(cols) {
    const tr = put(el('tr'), el('th', 'corner', 'target \\ model'));
    for (const name of cols) {
      const m = meta.mByName.get(name);
      const th = put(el('th'), nameNode('name', name), el('span', 'meta', m ? m.num_q_heads + ' q' : ''),
        el('span', 'meta', m ? 'd' + (m.head_dim || ' ?') : ''));
      th.scope = 'col';
      if (m && m.notes) { th.title = m.notes; }
      tr.append(th);
    }
    return put(el('thead'), tr);
  }
  function bodyRow(name, cols, rowIndex, numRows) {
    const t = meta.tByName.get(name);
    const th = put(el('th'), nameNode('name', name),
      el('span', 'meta', t ? t.sm_count + ' SMs · ' + t.attn_decode_splitk : ''));
    th.scope = 'row';
    if (t && t.notes) { th.title = t.notes; }
    const tr = put(el('tr'), th);
    cols.forEach((model, i) => {
      const b = el('button', 'cell');
      b.type = 'button';
      b.tabIndex = -1;
      b.dataset.target = name;
      b.dataset.model = model;
      b.dataset.row = String(rowIndex);
      b.dataset.col = String(i);
      let where = rowIndex >= 2 && rowIndex >= numRows - 3 ? ' up' : '';
      where += i >= 3 && i >= cols.length - 3 ? ' end' : '';
      put(b, el('span', 'n'), el('span', 'd'), el('span', 'tip' + where));
      grid.cells.set(key(name, model), b);
      tr.append(put(el('td'), b));
    });
    return tr;
  }
  function buildTable(rows, cols) {
    const focused = document.activeElement && document.activeElement.classList.contains('cell');
    const table = $('grid');
    table.replaceChildren(table.caption);
    grid.cells = new Map();
    table.append(headRow(cols));
    const tbody = el('tbody');
    rows.forEach((name, i) => tbody.append(bodyRow(name, cols, i, rows.length)));
    table.append(tbody);
    if (!grid.cells.has(grid.active)) { grid.active = grid.cells.keys().next().value || ''; }
    const a = grid.cells.get(grid.active);
    if (a) { a.tabIndex = 0; if (focused) { a.focus(); } }
  }

  function describe(c, old) {
    const lines = [c.target + ' × ' + c.model,
      splits(c.num_splits) + ' · ' + c.policy + ' (' + c.source + ')',
      'workspace ' + int(c.workspace_slots) + ' slots · ' + bytes(c.workspace_bytes)];
    if (old) {
      lines.push('declared: ' + splits(old.num_splits) + ' · ' + int(old.workspace_slots) +
        ' slots · ' + bytes(old.workspace_bytes));
    }
    return lines;
  }
  function updateCell(b, c, old) {
    const changed = old.num_splits !== c.num_splits || old.workspace_slots !== c.workspace_slots ||
      old.workspace_bytes !== c.workspace_bytes;
    b.dataset.numSplits = String(c.num_splits);
    b.dataset.policy = c.policy;
    b.dataset.source = c.source;
    b.dataset.workspaceSlots = String(c.workspace_slots);
    b.dataset.workspaceBytes = c.workspace_bytes === null ? '' : String(c.workspace_bytes);
    b.dataset.changed = String(changed);
    b.dataset.declaredNumSplits = String(old.num_splits);
    const showOld = state.changes && changed;
    b.classList.remove('s1', 's2', 's3', 's4', 's5', 's6');
    b.classList.add(bin(c.num_splits));
    b.classList.toggle('chg', showOld);
    b.classList.toggle('same', state.changes && !changed);
    b.querySelector('.n').textContent = showOld && old.num_splits !== c.num_splits
      ? old.num_splits + ' → ' + c.num_splits : String(c.num_splits);
    b.querySelector('.d').textContent = showOld && old.num_splits === c.num_splits ? 'Δ slots' : '';
    const lines = describe(c, changed ? old : null);
    b.querySelector('.tip').textContent = lines.join('\n');
    b.setAttribute('aria-label', lines.join('; '));
    b.setAttribute('aria-pressed', String(state.target === c.target && state.model === c.model));
    return changed ? (old.num_splits !== c.num_splits ? 2 : 1) : 0;
  }

  function render() {
    const m = live.matrix;
    const rows = [...new Set(m.cells.map((c) => c.target))];
    const cols = [...new Set(m.cells.map((c) => c.model))];
    const k = JSON.stringify([rows, cols, meta.digest]);
    if (k !== grid.key) {
      buildTable(rows, cols);
      renderCatalog();
      grid.key = k;
    }
    const base = new Map(live.base.cells.map((c) => [key(c.target, c.model), c]));
    let nSplits = 0, nAny = 0;
    for (const c of m.cells) {
      const d = updateCell(grid.cells.get(key(c.target, c.model)), c, base.get(key(c.target, c.model)) || c);
      nSplits += d === 2 ? 1 : 0;
      nAny += d > 0 ? 1 : 0;
    }
    live.view = state.changes;
    for (const f of SHAPE) { $(f).placeholder = String(m[f]); } // the API's resolved defaults
    document.body.classList.toggle('changes', state.changes);
    layout();
    let s = rows.length + ' targets × ' + cols.length + ' models at max_batch_size ' + m.max_batch_size +
      ', num_seqs ' + m.num_seqs + ', max_rows ' + m.max_rows + '. ';
    s += m.override === null ? 'No override: every target runs its declared policy.'
      : 'Override "' + m.override + '" changes ' + nAny + ' of ' + m.cells.length + ' cells (' +
        nSplits + ' in split count) against the declared policies.';
    $('summary').textContent = s;
    $('warnings').replaceChildren(...m.warnings.map((w) => el('li', '', w)));
  }

  // columns: the members the catalog's entries have, in the order the
  // server writes them (its schema table's), merged over every entry: an
  // optional field shows as soon as one entry states it, and a field added
  // to the table needs nothing here (scripts/check-field-recipe.sh runs
  // this function on a scratch daemon's /v1/targets).
  function catalogColumns(entries) {
    const cols = [];
    for (const e of entries) {
      let at = 0;
      for (const k of Object.keys(e)) {
        const i = cols.indexOf(k);
        if (i < 0) { cols.splice(at, 0, k); at++; } else { at = i + 1; }
      }
    }
    return cols;
  }
  // end of columns

  function cellText(v) {
    if (v === undefined || v === null) { return '—'; }
    return Array.isArray(v) ? v.join(', ') : String(v);
  }

  function catalogTable(kind, entries) {
    const cols = catalogColumns(entries);
    const t = put(el('table'), put(el('thead'), put(el('tr'),
      ...cols.map((h) => el('th', '', h === 'name' ? kind : h)))));
    for (const e of entries) {
      t.append(put(el('tr'), ...cols.map((k) => el('td', '', cellText(e[k])))));
    }
    return t;
  }

  function renderCatalog() {
    $('catalog-body').replaceChildren(el('h3', '', 'Targets'), put(el('div', 'scroll'), catalogTable('target', meta.targets)),
      el('h3', '', 'Models'), put(el('div', 'scroll'), catalogTable('model', meta.models)));
  }

  // ---------------------------------------------------------------- revisions
  // What the replica holds, and what its last reload changed under the
  // what-ifs: GET /v1/revisions and GET /v1/diff, as curl sees them.
  async function refreshRevisions(gen) {
    const c = queryString(catalogQuery());
    const [r, d, h] = await Promise.all([getJSON('v1/revisions' + c), getJSON('v1/diff' + query(true)),
      getJSON('v1/history?limit=5')]);
    if (gen !== live.generation || !r.ok || !d.ok) { return; }
    renderRevisions(r.data, d.data);
    if (h.ok) { renderHistory(h.data.entries); }
  }

  // The last reload attempts (GET /v1/history), one line each.
  function renderHistory(entries) {
    $('history-list').replaceChildren(...entries.map((e) => {
      const li = put(el('li', e.result === 'ok' ? '' : 'error'), el('span', 'meta', (e.at || '') + ' · ' + e.trigger + ' · ' + e.catalog + ' · '),
        e.changed ? put(el('span'), el('code', '', e.from || '—'), ' → ', el('code', '', e.to), ' · ' + e.changed_cells + ' cells changed')
          : el('span', '', e.result === 'ok' ? 'unchanged' : 'refused: ' + e.error));
      li.dataset.seq = String(e.seq);
      return li;
    }));
  }

  function side(s, k) { return s === null ? '—' : String(s[k]); }

  function renderRevisions(r, d) {
    $('revision-list').replaceChildren(...r.revisions.map((v) => put(el('li', v.revision === r.current ? 'current' : ''),
      el('code', '', v.revision), ' ',
      el('span', 'meta', (v.loaded_at ? 'loaded ' + v.loaded_at : 'loaded at an unknown time') +
        (v.source ? ' from ' + v.source : '') + (v.revision === r.current ? ' · current' : '')))));
    const t = $('reload-cells');
    if (d.from === d.to) {
      $('reload-summary').textContent = '— none yet: one revision held';
      t.replaceChildren(t.querySelector('caption'));
      return;
    }
    $('reload-summary').textContent = d.from + ' → ' + d.to + ': ' + cellsSummary(d);
    renderCells(t, d);
  }

  // What a diff (GET /v1/diff) changes, in words: the cells and the entries.
  function cellsSummary(d) {
    return d.cells.length + ' cell' +
      (d.cells.length === 1 ? '' : 's') + ' changed, ' + d.unchanged + ' unchanged' +
      (d.targets.added.length ? '; targets added: ' + d.targets.added.join(', ') : '') +
      (d.targets.removed.length ? '; targets removed: ' + d.targets.removed.join(', ') : '') +
      (d.models.added.length ? '; models added: ' + d.models.added.join(', ') : '') +
      (d.models.removed.length ? '; models removed: ' + d.models.removed.join(', ') : '');
  }

  // A diff's changed cells into table t, each value old → new where it moved.
  function renderCells(t, d) {
    const cap = t.querySelector('caption');
    const head = put(el('thead'), put(el('tr'), ...['target', 'model', 'policy', 'num_splits',
      'workspace_slots', 'workspace_bytes'].map((h) => el('th', '', h))));
    const body = el('tbody');
    for (const c of d.cells) {
      const row = put(el('tr'), el('th', '', c.target), el('th', '', c.model));
      row.dataset.target = c.target;
      row.dataset.model = c.model;
      for (const k of ['policy', 'num_splits', 'workspace_slots', 'workspace_bytes']) {
        const a = side(c.from, k), b = side(c.to, k);
        row.append(el('td', a === b ? '' : 'moved', a === b ? a : a + ' → ' + b));
      }
      body.append(row);
    }
    t.replaceChildren(cap, head, body);
  }

  // ---------------------------------------------------------------- catalogs
  // The named catalogs a replica serves (GET /v1/catalogs): which one the
  // page shows (#catalog=NAME) and, with #compare=NAME, what moving from it
  // to the other changes (GET /v1/diff?from=A&to=B, the what-ifs applied).
  function fillSelect(sel, names, value, none) {
    const opts = (none ? [['', none]] : []).concat(names.map((n) => [n, n]));
    if (sel.options.length !== opts.length || [...sel.options].some((o, i) => o.value !== opts[i][0])) {
      sel.replaceChildren(...opts.map(([v, label]) => { const o = el('option', '', label); o.value = v; return o; }));
    }
    sel.value = value;
  }
  async function refreshCatalogs(gen) {
    const c = await getJSON('v1/catalogs');
    if (gen !== live.generation || !c.ok) { return; }
    const names = c.data.catalogs.map((x) => x.name);
    const current = state.catalog || c.data.default;
    $('catalogs').hidden = names.length < 2;
    fillSelect($('catalog-select'), names, current, null);
    fillSelect($('compare-select'), names.filter((n) => n !== current), state.compare, '—');
    const up = $('upgrade');
    up.hidden = state.compare === '';
    if (state.compare === '' || state.engines) { return; } // the upgrade diff is the grid's
    const d = await getJSON('v1/diff' + query(true, [['from', current], ['to', state.compare]]));
    if (gen !== live.generation) { return; }
    if (!d.ok) { $('upgrade-summary').textContent = d.data.detail || 'no diff'; return; }
    $('upgrade-title').textContent = 'Moving from ' + current + ' to ' + state.compare + ' changes';
    $('upgrade-summary').textContent = cellsSummary(d.data);
    renderCells($('upgrade-cells'), d.data);
  }
  function fromCatalogs() {
    state.catalog = $('catalog-select').value;
    state.compare = $('compare-select').value === state.catalog ? '' : $('compare-select').value;
    writeHash();
    openStream();
    kick();
  }

  // ---------------------------------------------------------------- explain
  function explainURL() {
    return 'v1/splits' + query(true, [['target', state.target], ['model', state.model], ['explain', '1']]);
  }
  async function refreshExplain(fresh, gen) {
    const sec = $('explain');
    if (!state.target) {
      sec.hidden = true;
      live.explainKey = '';
      layout();
      return;
    }
    const url = explainURL();
    if (!fresh && url === live.explainKey) { return; } // nothing moved: no request
    const r = await getJSON(url);
    if (gen !== live.generation) { return; }
    live.explainKey = url;
    renderExplain(r, url);
    layout();
  }
  function kv(dl, label, k, ...value) {
    const dd = put(el('dd'), ...value);
    if (k) { dd.dataset.k = k; }
    put(dl, el('dt', '', label), dd);
    return dd;
  }
  const num = (k, v, text) => { const s = el('span', 'num', text === undefined ? int(v) : text); s.dataset.k = k; return s; };
  function explainFacts(d) {
    const x = d.explain, dl = el('dl');
    kv(dl, 'Rule', 'rule', el('code', '', x.rule));
    kv(dl, 'Clamped to 1–16', 'clamped', x.clamped ? 'yes' : 'no');
    kv(dl, 'Workspace', 'workspace_rule', el('code', '', x.workspace_rule));
    kv(dl, 'Single stream', '', 'grid ', num('single_stream.grid', 0, x.single_stream.grid.join(' × ')),
      ' · ', num('single_stream.ctas', x.single_stream.ctas), ' CTAs · ',
      num('single_stream.waves', 0, x.single_stream.waves.toFixed(3)), ' waves on ' + int(d.sm_count) + ' SMs');
    kv(dl, 'At max batch', '', num('max_batch.num_seqs', x.max_batch.num_seqs), ' seqs · ',
      num('max_batch.num_splits', x.max_batch.num_splits), ' splits · ',
      num('max_batch.ctas', x.max_batch.ctas), ' CTAs · ',
      num('max_batch.waves', 0, x.max_batch.waves.toFixed(3)), ' waves');
    const r = x.co_batch_range;
    kv(dl, 'Co-batch invariant', 'co_batch_invariant', (x.co_batch_invariant ? 'yes: the same split count'
      : 'NO: the split count moves') + ' for every num_seqs in ' + int(r[0]) + '–' + int(r[1]));
    kv(dl, 'Inputs', '', 'sm_count ' + int(d.sm_count) + ' · declared ' + d.declared + ' · num_q_heads ' +
      int(d.num_q_heads) + ' · head_dim ' + int(d.head_dim) + ' · max_batch_size ' + int(d.max_batch_size) +
      ' · num_seqs ' + int(d.num_seqs) + ' · max_rows ' + int(d.max_rows) + ' · override ' +
      (d.override === null ? 'unset' : JSON.stringify(d.override)));
    if (d.warnings.length) { kv(dl, 'Warnings', 'warnings', put(el('ul'), ...d.warnings.map((w) => el('li', '', w)))); }
    return dl;
  }
  function policyTable(d) {
    const t = put(el('table', 'policies'), el('caption', '', 'What each policy gives here'),
      put(el('thead'), put(el('tr'), ...['', 'policy', 'splits', 'slots', 'workspace'].map((h) => el('th', '', h)))));
    for (const name of ['legacy', 'auto', 'declared', 'override']) {
      const p = d.explain.policies[name];
      const tr = put(el('tr'), el('th', '', name));
      tr.dataset.policy = name;
      if (!p) {
        const td = el('td', 'meta', 'unset');
        td.colSpan = 4;
        t.append(put(tr, td));
        continue;
      }
      if (p.policy === d.policy && p.num_splits === d.num_splits) { tr.className = 'in-use'; }
      t.append(put(tr, el('td', '', p.policy), put(el('td'), num('num_splits', p.num_splits)),
        put(el('td'), num('workspace_slots', p.workspace_slots)), el('td', '', bytes(p.workspace_bytes))));
    }
    return t;
  }
  // The explanation sits beside the grid when both fit, below it otherwise.
  const SIDE_MIN = 336; // px: the panel's narrowest readable width, plus the gap
  function layout() {
    const board = document.querySelector('.board');
    const fits = $('grid').offsetWidth + SIDE_MIN <= board.clientWidth;
    document.body.classList.toggle('side', fits && !$('explain').hidden);
  }
  function renderExplain(r, url) {
    const sec = $('explain');
    const close = el('button', 'close', '×');
    close.type = 'button';
    close.setAttribute('aria-label', 'Close the explanation');
    close.addEventListener('click', () => select('', ''));
    sec.replaceChildren(put(el('h2'), state.target + ' × ' + state.model + ': why', close));
    sec.hidden = false;
    sec.dataset.target = state.target;
    sec.dataset.model = state.model;
    if (!r.ok) {
      sec.append(el('p', 'banner', 'splitkd answered ' + r.status + ': ' + (r.data.detail || r.data.title)));
      return;
    }
    const d = r.data;
    sec.append(put(el('p', 'headline'), num('num_splits', d.num_splits), ' ' + (d.num_splits === 1 ? 'split' : 'splits') +
      ' · ' + d.policy + ' (' + d.source + ') · ', num('workspace_slots', d.workspace_slots), ' slots · ' +
      bytes(d.workspace_bytes)), explainFacts(d), policyTable(d));
    const t = meta.tByName.get(d.target), m = meta.mByName.get(d.model);
    if (t && t.notes) { sec.append(put(el('p', 'notes'), el('b', '', d.target + ': '), el('span', 'note', t.notes))); }
    if (m && m.notes) { sec.append(put(el('p', 'notes'), el('b', '', d.model + ': '), el('span', 'note', m.notes))); }
    const a = el('a', '', 'this answer as JSON');
    a.href = url;
    const other = el('button', 'link', 'what the other engines launch here');
    other.type = 'button';
    other.addEventListener('click', () => showView(true));
    sec.append(put(el('p', 'meta'), a, ' · ', other));
  }

  // ---------------------------------------------------------------- engines
  // view=engines: what every engine would launch for one target and model,
  // at every co-batch 1..max_batch_size (GET /v1/compare), drawn as split
  // count against num_seqs, with each engine's verdict (does the count move
  // with the batch, what holds it still and at what cost) and its largest
  // split-K scratch. The names and words in it are the API's, as text.
  function compareURL() {
    const p = catalogQuery([['target', state.target], ['model', state.model]]);
    for (const k of inputNames().concat(['max_batch_size', 'override', 'seq_lens'])) {
      if (state[k]) { p.set(k, state[k]); }
    }
    return 'v1/compare?' + commas(p); // target and model: never empty
  }
  // The view in state.engines onto the page: which sections show, which
  // button is pressed. Leaving a view forgets what it showed, so coming
  // back draws it again from its next answer.
  function applyView() {
    document.body.classList.toggle('engines', state.engines);
    for (const b of document.querySelectorAll('#views [data-view]')) {
      b.setAttribute('aria-pressed', String((b.dataset.view === 'engines') === state.engines));
    }
    if (live.shownView === state.engines) { return; }
    live.shownView = state.engines;
    if (state.engines) {
      live.matrix = null;
    } else {
      live.compare = null;
      $('engines-chart').replaceChildren();
      for (const id of ['engines-table', 'batch-table']) { $(id).replaceChildren($(id).caption); }
    }
  }
  function showView(engines) {
    state.engines = engines;
    applyView();
    writeHash();
    kick();
  }
  // The target and model shown when the URL names none: the explained
  // cell's if there is one, else the catalog's first of each.
  function chooseDefaults() {
    if (state.target && state.model) { return; }
    if (!meta.targets.length || !meta.models.length) { return; }
    state.target = state.target || meta.targets[0].name;
    state.model = state.model || meta.models[0].name;
    writeHash();
  }
  async function tickEngines(gen) {
    if (meta.digest === null) { // the catalog's names for the selectors, once
      const t = await getJSON('v1/targets' + queryString(catalogQuery()));
      if (gen !== live.generation) { return; }
      if (!t.ok) { showProblem(t.data); return; }
      if (!(await loadCatalog(t.data.catalog)) || gen !== live.generation) { return; }
    }
    if (meta.engines === null) { // not had at start (splitkd was down): now, and the URL's inputs into them
      await loadEngines();
      if (gen !== live.generation) { return; }
      readHash();
      syncControls();
    }
    chooseDefaults();
    const r = await getJSON(compareURL());
    if (gen !== live.generation) { return; }
    if (!r.ok) { showProblem(r.data); fillPairSelects(); return; }
    showProblem(null);
    let fresh = r.data !== live.compare;
    if (r.data.catalog !== meta.digest) {
      fresh = (await loadCatalog(r.data.catalog)) || fresh;
      if (gen !== live.generation) { return; }
    }
    live.checkedAt = Date.now();
    if (fresh) {
      if (r.fresh) { live.changedAt = live.checkedAt; }
      live.compare = r.data;
      renderEngines();
    }
    await refreshCatalogs(gen);
  }

  // A selector of the catalog's names; a spelling the URL holds that is
  // not one of them (an alias, a typo) stays selectable as typed.
  function fillPairSelects() {
    for (const [id, list, value] of [['target-select', meta.targets, state.target],
      ['model-select', meta.models, state.model]]) {
      const names = list.map((x) => x.name);
      fillSelect($(id), names.includes(value) || value === '' ? names : names.concat([value]), value, null);
    }
  }

  // runs of equal counts: [{from, to, n}], num_seqs from 1
  function runs(counts) {
    const out = [];
    counts.forEach((n, i) => {
      const last = out[out.length - 1];
      if (last && last.n === n) { last.to = i + 1; } else { out.push({from: i + 1, to: i + 1, n}); }
    });
    return out;
  }
  const span = (r) => r.from === r.to ? String(r.from) : r.from + '–' + r.to;
  // "2.05 MiB" to read, and under it "2,146,560 bytes", the exact count
  function scratch(k, n) {
    const known = n !== null && n !== undefined;
    // under 1 KiB the size is the byte count already
    const s = put(el('span', 'num', bytes(n)), ...(known && n >= 1024 ? [' ', el('span', 'exact meta', int(n) + ' bytes')] : []));
    s.dataset.k = k;
    s.dataset.bytes = known ? String(n) : '';
    return s;
  }
  // An engine input's placeholder: the value /v1/compare answered with (d:
  // null before one), else its default, else 'required' when some engine
  // needs it from the caller and 'unset' when only a GPU knows it.
  function placeholder(x, d) {
    const v = d ? d[x.name] : null;
    if (v !== null && v !== undefined) { return String(v); }
    if (x.default !== null) { return String(x.default); }
    // a batch's answer: required only where an engine says so
    if (d && d.seq_lens && !d.engines.some((e) => e.problem && e.problem.param === x.name)) { return 'unset'; }
    const asks = [...(meta.engines || new Map()).values()].some((e) => e.reads.includes(x.name) &&
      !e.gpu_reads.includes(x.name));
    return asks ? 'required' : 'unset';
  }
  function fillEngineInputs(d) {
    for (const x of INPUTS) { if (x.type === 'integer') { $(x.name).placeholder = placeholder(x, d); } }
    $('max_batch_size').placeholder = String(d.max_batch_size);
  }
  // GET /v1/engines: where each port came from, what it reads, and the
  // engines view's inputs, whose controls are made here, after the model's.
  async function loadEngines() {
    const e = await getJSON('v1/engines');
    if (!e.ok || meta.engines !== null) { return; }
    meta.engines = new Map(e.data.engines.map((x) => [x.name, x]));
    INPUTS = e.data.inputs;
    let after = $('model-select').closest('label');
    for (const x of INPUTS) {
      const flag = x.type === 'boolean', words = x.type === 'string';
      const label = el('label', flag ? 'check engines-only' : 'engines-only');
      const input = el(words ? 'select' : 'input');
      input.id = x.name;
      // what it is and what it takes, in the daemon's words and bounds
      label.title = x.description + (flag ? '' : words ? ' (one of ' + x.enum.join(', ') + '; default ' + x.default + ')'
        : ' (' + int(x.minimum) + ' to ' + int(x.maximum) + (x.default === null ? '' : '; default ' + int(x.default)) + ')');
      if (words) {
        // '' is the daemon's default, said as such; then each word it takes
        put(input, el('option', '', 'default (' + x.default + ')'), ...x.enum.map((w) => el('option', '', w)));
        input.options[0].value = '';
        put(label, x.name + ' ', input);
        input.addEventListener('change', fromControls);
      } else if (flag) {
        input.type = 'checkbox';
        put(label, input, ' ' + x.name);
        input.addEventListener('change', fromControls);
      } else {
        input.inputMode = 'numeric';
        input.autocomplete = 'off';
        input.spellcheck = false;
        input.placeholder = placeholder(x, null);
        put(label, x.name + ' ', input);
        wireField(input);
      }
      after.after(label);
      after = label;
      FIELD[x.name] = x.name;
    }
  }

  function renderEngines() {
    const d = live.compare;
    fillPairSelects();
    fillEngineInputs(d);
    if (meta.digest !== live.enginesDigest) { renderCatalog(); live.enginesDigest = meta.digest; }
    const batch = Array.isArray(d.seq_lens) ? d.seq_lens : null;
    document.body.classList.toggle('batch', batch !== null);
    $('engines-title').textContent = 'What each engine launches' + (batch ? ' for this batch: ' : ': ') +
      d.target + ' × ' + d.model;
    const drawn = d.engines.filter((e) => !e.problem), held = drawn.filter((e) => e.batch_invariant);
    const refused = d.engines.filter((e) => e.problem);
    const given = INPUTS.map((x) => x.name + ' ' + (typeof d[x.name] === 'boolean' || typeof d[x.name] === 'string' ? d[x.name]
      : d[x.name] === null || d[x.name] === undefined ? 'unset' : int(d[x.name])));
    const moving = drawn.filter((e) => !e.batch_invariant);
    $('engines-summary').textContent = int(d.sm_count) + ' SMs · ' + int(d.num_q_heads) + ' q heads · head_dim ' +
      int(d.head_dim) + (batch ? ' · a batch of ' + sequences(batch.length) + ', ' + int(Math.min(...batch)) + ' to ' +
        int(Math.max(...batch)) + ' tokens' : ' · co-batch 1–' + int(d.max_batch_size)) +
      given.map((g) => ' · ' + g).join('') + '. ' + held.length + ' of ' + d.engines.length +
      (batch ? ' engines launch every sequence as they would alone' : ' engines keep one split count whatever the batch') +
      (held.length ? ' (' + held.map((e) => e.engine).join(', ') + ')' : '') +
      (batch && moving.length ? '; ' + moving.map((e) => e.engine + ' moves ' + sequences(e.moved.length)).join(', ') : '') +
      (refused.length ? '; ' + refused.map((e) => e.engine).join(', ') + (refused.length === 1 ? ' does' : ' do') +
        ' not answer this shape' : '') + '.';
    $('warnings').replaceChildren(...(d.warnings || []).map((w) => el('li', '', w)));
    if (batch) {
      $('engines-chart').replaceChildren();
      batchTable(d, drawn);
      engineTable(d, true);
    } else {
      $('batch-table').replaceChildren($('batch-table').caption);
      drawChart(d);
      engineTable(d, false);
    }
  }

  // ---- a batch (seq_lens=): each sequence's count in this batch and alone.
  // Sequences are numbered from 1 in the text; data-from and data-to hold
  // the API's indices (from 0), as `moved` does.
  const sequences = (n) => int(n) + (n === 1 ? ' sequence' : ' sequences');
  const seqSpan = (from, to) => from === to ? 'sequence ' + (from + 1) : 'sequences ' + (from + 1) + '–' + (to + 1);
  const BATCH_MAX = 4096, LEN_MAX = 2147483647;
  // seq_lens as splitkd reads it (1 to 4,096 plain decimals from 1 to
  // 2,147,483,647, comma-separated): null when it would take it, else which
  // length is wrong, which splitkd's problem does not say. The page asks
  // splitkd either way, and shows its refusal as it does any other.
  function batchFault(text) {
    const parts = text.split(',');
    if (parts.length > BATCH_MAX) { return int(parts.length) + ' lengths, over ' + int(BATCH_MAX); }
    const i = parts.findIndex((x) => !/^[1-9][0-9]{0,9}$/.test(x) || Number(x) > LEN_MAX);
    if (i < 0) { return null; }
    const x = parts[i];
    return 'length ' + int(i + 1) + (x === '' ? ' is empty' : ' (“' + (x.length > 16 ? x.slice(0, 16) + '…' : x) + '”) ' +
      (!/^[0-9]+$/.test(x) ? 'is not a plain decimal' : /^0+$/.test(x) ? 'is zero'
        : /^0/.test(x) ? 'has a leading zero' : 'is over ' + int(LEN_MAX)));
  }
  // the batch field's own word, at once as it is typed: how many sequences,
  // or what splitkd would refuse (and the field marked)
  function checkBatch() {
    const f = $('seq_lens'), text = f.value;
    const fault = text === '' ? null : batchFault(text);
    if (fault) { f.setAttribute('aria-invalid', 'true'); } else { f.removeAttribute('aria-invalid'); }
    const lens = fault || text === '' ? [] : text.split(',').map(Number);
    $('seq_lens-note').textContent = text === '' ? 'no batch: the sweep over num_seqs'
      : fault ? 'not a batch splitkd takes: ' + fault
        : sequences(lens.length) + ', ' + int(Math.min(...lens)) + ' to ' + int(Math.max(...lens)) + ' tokens';
    return fault;
  }
  // rows of the batch table: a row runs on while the length and every
  // answering engine's counts and verdict stay the same
  function batchRows(d, drawn) {
    const movedSets = drawn.map((e) => new Set(e.moved));
    const sig = (i) => [d.seq_lens[i], ...drawn.map((e, j) => e.num_splits_by_seq[i] + '/' + e.alone_by_seq[i] +
      '/' + movedSets[j].has(i))].join(' ');
    const rows = [];
    d.seq_lens.forEach((len, i) => {
      const last = rows[rows.length - 1], s = sig(i);
      if (last && last.sig === s) { last.to = i; } else { rows.push({from: i, to: i, len, sig: s}); }
    });
    return {rows, movedSets};
  }
  function batchTable(d, drawn) {
    const t = $('batch-table');
    const cols = ['sequence', 'tokens'].concat(drawn.map((e) => e.engine));
    const head = put(el('tr'), el('th', '', 'sequence'), el('th', '', 'tokens'), ...drawn.map((e) =>
      put(el('th'), swatch(d.engines.indexOf(e) % DASH.length), el('code', '', e.engine))));
    for (const th of head.cells) { th.scope = 'col'; }
    const body = el('tbody');
    const {rows, movedSets} = batchRows(d, drawn);
    for (const r of rows) {
      const th = el('th', '', r.from === r.to ? String(r.from + 1) : (r.from + 1) + '–' + (r.to + 1));
      th.scope = 'row';
      const tr = put(el('tr'), th, el('td', 'len', int(r.len) + (r.from === r.to ? '' : ' each')));
      tr.dataset.from = String(r.from);
      tr.dataset.to = String(r.to);
      drawn.forEach((e, j) => {
        const inBatch = e.num_splits_by_seq[r.from], alone = e.alone_by_seq[r.from], moved = movedSets[j].has(r.from);
        const td = el('td', moved ? 'moved' : 'still');
        Object.assign(td.dataset, {engine: e.engine, from: String(r.from), to: String(r.to), batch: String(inBatch),
          alone: alone === null ? 'null' : String(alone), moved: String(moved)});
        // the commas for a screen reader, where the lines stand apart for the eye
        put(td, el('span', 'n', int(inBatch)), ' in the batch', el('span', 'sr', ', '), el('span', 'alone', (alone === null ? 'refused' : int(alone)) + ' alone'));
        if (moved) { put(td, el('span', 'sr', ', '), el('b', 'moved-mark', 'moved')); }
        tr.append(td);
      });
      body.append(tr);
    }
    for (const tr of body.rows) { [...tr.cells].forEach((c, i) => { c.dataset.label = cols[i]; }); }
    t.replaceChildren(t.caption, put(el('thead'), head), body);
  }
  // each sequence's count on this batch, in runs: "1 for all 8 sequences",
  // "13 for sequence 1 · 1 for sequences 2–8" (the first 12 runs written)
  function seqCounts(counts) {
    const rs = runs(counts);
    if (rs.length === 1) { return rs[0].n + ' for ' + (counts.length === 1 ? 'its one sequence' : 'all ' + sequences(counts.length)); }
    return rs.slice(0, 12).map((r) => r.n + ' for ' + seqSpan(r.from - 1, r.to - 1)).join(' · ') +
      (rs.length > 12 ? ' · and ' + int(rs.length - 12) + ' runs more' : '');
  }
  // the sequences that moved, consecutive ones with equal counts together:
  // "sequence 1: 11, alone 13" (the first 8 groups written)
  function movedText(moved, inBatch, alone) {
    const gs = [];
    for (const i of moved) {
      const g = gs[gs.length - 1];
      if (g && g.to === i - 1 && inBatch[g.from] === inBatch[i] && alone[g.from] === alone[i]) { g.to = i; } else { gs.push({from: i, to: i}); }
    }
    return gs.slice(0, 8).map((g) => seqSpan(g.from, g.to) + ': ' + int(inBatch[g.from]) + ' in the batch, ' +
      int(alone[g.from]) + ' alone').join(' · ') + (gs.length > 8 ? ' · and ' + int(gs.length - 8) + ' more' : '');
  }
  function movedCell(e, n) {
    const td = el('td', 'runs');
    td.dataset.k = 'moved';
    td.dataset.moved = e.moved.join(',');
    if (!e.moved.length) { return put(td, 'none: every sequence as alone'); }
    return put(td, num('moved', e.moved.length), ' of ' + sequences(n) + ' — ',
      el('span', '', movedText(e.moved, e.num_splits_by_seq, e.alone_by_seq)));
  }
  function batchVerdict(e, n) {
    // null: nothing moved, but some sequence is refused alone (alone_refused)
    const unknown = e.batch_invariant === null;
    const td = el('td', e.batch_invariant ? 'holds' : unknown ? '' : 'moves');
    const b = el('span', '', e.batch_invariant ? 'yes' : unknown ? 'unknown' : 'NO');
    b.dataset.k = 'batch_invariant';
    return put(td, b, e.batch_invariant ? ': as alone' : unknown ? ': ' + (e.alone_refused.detail || '')
      : ': ' + int(e.moved.length) + ' of ' + int(n) + ' moved');
  }
  function batchInvariantCell(e) {
    const td = el('td');
    td.dataset.k = 'invariant';
    if (e.batch_invariant) { return put(td, el('span', 'meta', 'nothing to do: nothing moved')); }
    const v = e.invariant;
    if (!v) { return put(td, el('span', 'note', e.invariant_note || 'no setting known')); }
    put(td, el('code', '', v.setting));
    if (v.problem) {
      put(td, ': refused here, ', el('span', 'note', v.problem.detail || v.problem.title));
    } else {
      const c = el('span', 'counts', seqCounts(v.num_splits_by_seq));
      c.dataset.k = 'invariant.num_splits_by_seq';
      c.dataset.counts = v.num_splits_by_seq.join(',');
      put(td, ': ', c, v.batch_invariant ? ', each as alone' : '', '; scratch ', scratch('invariant.workspace_bytes', v.workspace_bytes));
      if (!v.batch_invariant) {
        put(td, el('b', '', ' and still moves: '), movedText(v.moved, v.num_splits_by_seq, v.alone_by_seq));
      }
    }
    if (v.how) { put(td, ' ', el('span', 'how meta', v.how)); }
    return td;
  }

  // ---- the chart: inline SVG, log2 on both axes (counts step 32, 4, 1 and
  // co-batches double), one polyline per engine as a step after each
  // num_seqs, a mark where it steps with the count written beside it.
  const NS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) { e.setAttribute(k, String(v)); }
    if (text !== undefined) { e.textContent = String(text); }
    return e;
  }
  // per series: a dash and a mark shape, so no two lines differ by colour alone
  const DASH = ['', '8 3', '2 3', '10 3 2 3', '4 2', '1 2'];
  const MARK = ['M-4.5,0a4.5,4.5 0 1,0 9,0a4.5,4.5 0 1,0 -9,0', 'M-4,-4h8v8h-8z', 'M0,-5L5,4H-5z',
    'M0,-5.5L5.5,0L0,5.5L-5.5,0z', 'M0,5L5,-4H-5z', 'M-5,-1.5h3.5v-3.5h3v3.5h3.5v3h-3.5v3.5h-3v-3.5h-3.5z'];
  function ticks(max) { // powers of 2 up to max, at most about 8 of them, and max itself
    const out = [];
    const step = Math.max(1, Math.ceil(Math.log2(Math.max(2, max)) / 8));
    for (let e = 0; 2 ** e <= max; e += step) { out.push(2 ** e); }
    return out;
  }
  // Greedy: a label goes where it overlaps none placed before, else nowhere.
  function fits(boxes, b) {
    if (boxes.some((o) => b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h)) { return false; }
    boxes.push(b);
    return true;
  }
  const CHAR = 7.2; // px per character of a 12 px label, near enough to keep labels apart

  function drawChart(d) {
    const box = $('engines-chart');
    const series = d.engines.map((e, i) => ({e, i})).filter((s) => !s.e.problem);
    const N = d.max_batch_size;
    const top = Math.max(2, ...series.flatMap((s) => s.e.num_splits_by_num_seqs));
    const yMax = 2 ** Math.ceil(Math.log2(top));
    const nameW = Math.max(...d.engines.map((e) => e.engine.length)) * CHAR;
    const W = Math.max(320, Math.min(1200, box.clientWidth || 800));
    const M = {l: 44, r: Math.round(nameW + 6 * CHAR + 16), t: 30, b: 40};
    const H = W < 600 ? 290 : 330, pw = W - M.l - M.r, ph = H - M.t - M.b;
    const x = (n) => N === 1 ? M.l + pw / 2 : M.l + Math.log2(n) / Math.log2(N) * pw;
    const y = (v) => M.t + ph - Math.log2(Math.max(1, v)) / Math.log2(yMax) * ph;
    const r2 = (v) => Math.round(v * 100) / 100;
    const root = svg('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img'});
    root.setAttribute('aria-label', 'Split count against co-batch 1 to ' + N + ': ' + series.map((s) => {
      const rs = runs(s.e.num_splits_by_num_seqs);
      return s.e.engine + (rs.length === 1 ? ' ' + rs[0].n + ' at every co-batch'
        : ' ' + rs.map((r) => r.n + ' at ' + span(r)).join(', '));
    }).join('; ') + '. The table below gives the same numbers.');
    const grid = svg('g', {class: 'grid'}), axis = svg('g', {class: 'axis'});
    for (const v of ticks(yMax)) {
      grid.append(svg('line', {x1: M.l, x2: M.l + pw, y1: r2(y(v)), y2: r2(y(v)), 'data-axis': 'y', 'data-value': v}));
      axis.append(svg('text', {x: M.l - 6, y: r2(y(v)) + 4, 'text-anchor': 'end'}, int(v)));
    }
    const xt = ticks(N).filter((v) => x(N) - x(v) >= 28 || v === N);
    if (!xt.includes(N)) { xt.push(N); }
    for (const v of xt) {
      grid.append(svg('line', {x1: r2(x(v)), x2: r2(x(v)), y1: M.t, y2: M.t + ph, 'data-axis': 'x', 'data-value': v}));
      axis.append(svg('text', {x: r2(x(v)), y: M.t + ph + 16, 'text-anchor': 'middle'}, int(v)));
    }
    axis.append(svg('line', {x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph}),
      svg('line', {x1: M.l, x2: M.l, y1: M.t, y2: M.t + ph}));
    root.append(grid, axis,
      svg('text', {class: 'title', x: M.l + pw / 2, y: H - 6, 'text-anchor': 'middle'}, 'co-batch: num_seqs (log scale)'),
      svg('text', {class: 'title', x: 4, y: 12}, 'num_splits (log scale)'));
    const boxes = [];
    const ends = [];
    for (const {e, i} of series) {
      const rs = runs(e.num_splits_by_num_seqs), k = i % DASH.length;
      const g = svg('g', {class: 'series e' + k, 'data-engine': e.engine});
      const pts = [];
      rs.forEach((r, j) => {
        pts.push([x(r.from), y(r.n)]);
        pts.push([x(j + 1 < rs.length ? rs[j + 1].from : N), y(r.n)]);
      });
      const line = svg('polyline', {points: pts.map(([a, b]) => r2(a) + ',' + r2(b)).join(' ')});
      if (DASH[k]) { line.setAttribute('stroke-dasharray', DASH[k]); }
      g.append(line);
      for (const r of rs) {
        const mark = svg('path', {class: 'mark', d: MARK[k], transform: 'translate(' + r2(x(r.from)) + ',' + r2(y(r.n)) + ')',
          'data-num-seqs': r.from, 'data-num-splits': r.n});
        mark.append(svg('title', {}, e.engine + ': ' + splits(r.n) + ' at num_seqs ' + span(r)));
        g.append(mark);
      }
      root.append(g);
      ends.push({g, k, e, y: y(rs[rs.length - 1].n), n: rs[rs.length - 1].n, rs});
    }
    // the engine's name and last count at the right, moved apart where lines end together
    ends.sort((a, b) => a.y - b.y || a.k - b.k);
    let prev = -Infinity;
    for (const end of ends) {
      end.ly = Math.max(end.y, prev + 14);
      prev = end.ly;
    }
    const over = prev - (M.t + ph + 4);
    if (over > 0) { for (const end of ends) { end.ly -= over; } }
    for (const end of ends) {
      const lx = M.l + pw + 10;
      end.g.append(svg('line', {class: 'leader', x1: r2(M.l + pw), y1: r2(end.y), x2: lx - 2, y2: r2(end.ly)}),
        svg('text', {x: lx, y: r2(end.ly) + 4, class: 'end'}, end.e.engine + ' ' + end.n));
      boxes.push({x: lx, y: end.ly - 8, w: (end.e.engine.length + 5) * CHAR, h: 14});
    }
    // a flat line (the seed's) is in the way of any number written across it
    for (const end of ends) {
      if (end.rs.length === 1) { boxes.push({x: M.l, y: end.y - 2, w: pw, h: 4}); }
    }
    // the count beside each step's mark, above it or else below, where it
    // has room (the seed's first)
    for (const end of ends.slice().sort((a, b) => a.k - b.k)) {
      for (const r of end.rs) {
        const tx = x(r.from) + 6, label = String(r.n), w = label.length * CHAR;
        const ty = [y(r.n) - 6, y(r.n) + 15].find((t) => t <= M.t + ph - 2 && fits(boxes, {x: tx, y: t - 10, w, h: 12}));
        if (ty !== undefined) { end.g.append(svg('text', {x: r2(tx), y: r2(ty), class: 'step'}, label)); }
      }
    }
    box.replaceChildren(root);
    box.dataset.width = String(box.clientWidth);
  }

  // ---- the table: every step in numbers, the verdict, the cost of holding still
  function swatch(k) {
    const s = svg('svg', {width: 28, height: 12, viewBox: '0 0 28 12', class: 'e' + k, 'aria-hidden': 'true'});
    const line = svg('polyline', {points: '1,6 27,6', fill: 'none', 'stroke-width': 2});
    if (DASH[k]) { line.setAttribute('stroke-dasharray', DASH[k]); }
    s.append(line, svg('path', {class: 'mark', d: MARK[k], transform: 'translate(14,6)'}));
    return s;
  }
  function runsText(counts) {
    const rs = runs(counts);
    const td = el('td', 'runs');
    td.dataset.k = 'runs';
    if (rs.length === 1) {
      return put(td, put(el('span', 'run'), num('num_splits', rs[0].n)), ' at every co-batch 1–' + int(counts.length));
    }
    rs.forEach((r, j) => {
      const s = put(el('span', 'run'), num('num_splits', r.n), ' at ' + span(r));
      s.dataset.from = String(r.from);
      s.dataset.to = String(r.to);
      put(td, j ? ' · ' : '', s);
    });
    return td;
  }
  function verdict(e) {
    const td = el('td', e.batch_invariant ? 'holds' : 'moves');
    const b = el('span', '', e.batch_invariant ? 'yes' : 'NO');
    b.dataset.k = 'batch_invariant';
    return put(td, b, e.batch_invariant ? ': one split count' : ': ', e.batch_invariant ? '' : num('distinct', e.distinct),
      e.batch_invariant ? '' : ' distinct counts');
  }
  function invariantCell(e) {
    const td = el('td');
    td.dataset.k = 'invariant';
    if (e.batch_invariant) { return put(td, el('span', 'meta', 'nothing to do: it does not move')); }
    const v = e.invariant;
    if (!v) { return put(td, el('span', 'note', e.invariant_note || 'no setting known')); }
    put(td, el('code', '', v.setting));
    if (v.problem) {
      put(td, ': refused here, ', el('span', 'note', v.problem.detail || v.problem.title));
    } else {
      const counts = v.num_splits_by_num_seqs;
      const n = counts ? runs(counts) : [{n: v.num_splits}];
      put(td, ' costs ', n.length === 1 ? num('invariant.num_splits', n[0].n) : el('span', '', n.map((r) => r.n + ' at ' + span(r)).join(' · ')),
        ' ' + (n.length === 1 && n[0].n === 1 ? 'split' : 'splits') + ', scratch ', scratch('invariant.max_workspace_bytes', v.max_workspace_bytes));
      if (counts && !v.batch_invariant) { put(td, el('b', '', ' and still moves')); }
    }
    if (v.how) { put(td, ' ', el('span', 'how meta', v.how)); }
    return td;
  }
  // with max_model_len, /v1/compare gives each engine's reserve: the most
  // scratch any batch of the serve asks for, and how it was found
  function reserveOf(e, td) {
    const r = e.reserve;
    if (!r) { return td; }
    const line = el('span', 'reserve');
    line.dataset.k = 'reserve';
    if (r.problem) {
      put(line, 'no reserve: ', el('span', 'note', r.problem.detail || r.problem.title));
    } else {
      put(line, 'reserve ', scratch('reserve.workspace_bytes', r.workspace_bytes), ' ', el('span', 'meta', '(' + r.method + ')'));
    }
    return put(td, el('br'), line);
  }
  function engineTable(d, batch) {
    const t = $('engines-table');
    const cols = batch ? ['engine', 'moved in this batch', 'batch-invariant', 'held still by, and its counts on this batch',
      'split-K scratch of this launch'] : ['engine', 'split count by co-batch (num_seqs)', 'batch-invariant',
      'held still by, and its cost', 'max split-K scratch'];
    t.caption.textContent = batch ? "each engine's moved sequences in this batch, its invariance, what holds it still " +
      'with its counts on this batch, and the split-K scratch of the launch'
      : "each engine's split count by co-batch, its invariance and its split-K scratch";
    const head = put(el('thead'), put(el('tr'), ...cols.map((h) => el('th', '', h))));
    const body = el('tbody');
    d.engines.forEach((e, i) => {
      const info = meta.engines ? meta.engines.get(e.engine) : null;
      const th = put(el('th'), swatch(i % DASH.length), el('code', '', e.engine));
      if (info) {
        put(th, ' ', el('span', 'sub', info.title));
        if (info.repository) {
          put(th, ' ', el('span', 'sub meta', info.repository + ' @ ' + info.commits.map((c) => c.slice(0, 8)).join(', ')));
        }
      }
      if (e.policy) { put(th, ' ', el('span', 'sub meta', 'policy ' + e.policy)); }
      const tr = put(el('tr'), th);
      tr.dataset.engine = e.engine;
      if (e.problem) {
        const td = el('td', 'refused');
        td.colSpan = 4;
        td.dataset.k = 'problem';
        const p = e.problem;
        put(td, el('b', '', p.type === '/problems/unsupported-shape' ? 'refuses this shape: ' : (p.title || 'not answered') + ': '),
          el('span', 'note', p.detail || ''), p.param ? put(el('span'), ' · change ', el('code', '', p.param)) : '');
        body.append(put(tr, td));
        return;
      }
      if (batch) {
        const n = d.seq_lens.length;
        body.append(put(tr, movedCell(e, n), batchVerdict(e, n), batchInvariantCell(e),
          reserveOf(e, put(el('td'), scratch('workspace_bytes', e.workspace_bytes)))));
        return;
      }
      body.append(put(tr, runsText(e.num_splits_by_num_seqs), verdict(e), invariantCell(e),
        reserveOf(e, put(el('td'), scratch('max_workspace_bytes', e.max_workspace_bytes)))));
    });
    // a phone's stacked rows name each cell (style.css shows data-label)
    for (const tr of body.rows) { [...tr.cells].forEach((c, i) => { c.dataset.label = c.colSpan > 1 ? '' : cols[i]; }); }
    t.replaceChildren(t.caption, head, body);
  }
  function redrawChart() { // on resize, when the chart's room changed
    if (state.engines && live.compare && !live.compare.seq_lens && $('engines-chart').dataset.width !== String($('engines-chart').clientWidth)) {
      drawChart(live.compare);
    }
  }

  // ---------------------------------------------------------------- events
  function select(target, model) {
    state.target = target;
    state.model = model;
    for (const b of grid.cells.values()) {
      b.setAttribute('aria-pressed', String(b.dataset.target === target && b.dataset.model === model));
    }
    writeHash();
    kick();
  }
  function focusCell(b) {
    if (!b) { return; }
    const old = grid.cells.get(grid.active);
    if (old) { old.tabIndex = -1; }
    grid.active = key(b.dataset.target, b.dataset.model);
    b.tabIndex = 0;
    b.focus();
  }
  function cellAt(row, col) {
    return $('grid').querySelector('.cell[data-row="' + row + '"][data-col="' + col + '"]');
  }
  function onGridKey(e) {
    const b = e.target.closest('.cell');
    if (!b) { return; }
    const row = Number(b.dataset.row), col = Number(b.dataset.col);
    const last = $('grid').tBodies[0].rows.length - 1, lastCol = $('grid').tHead.rows[0].cells.length - 2;
    const to = {ArrowUp: [row - 1, col], ArrowDown: [row + 1, col], ArrowLeft: [row, col - 1],
      ArrowRight: [row, col + 1], Home: [e.ctrlKey ? 0 : row, 0], End: [e.ctrlKey ? last : row, lastCol]}[e.key];
    if (to) {
      e.preventDefault();
      focusCell(cellAt(Math.max(0, Math.min(last, to[0])), Math.max(0, Math.min(lastCol, to[1]))));
    }
  }

  let debounce = 0;
  function fromControls() {
    for (const k of SHAPE.concat(['override', 'seq_lens'], numberInputs())) { state[k] = $(k).value; }
    state.changes = $('changes').checked;
    for (const k of flagInputs()) { state[k] = $(k).checked ? 'true' : ''; }
    writeHash();
    kick();
  }
  // the engines view's target and model: the pair the grid explains, too
  function fromPair() {
    state.target = $('target-select').value;
    state.model = $('model-select').value;
    writeHash();
    kick();
  }
  // a typed field: its value taken 400 ms after the last key, or on change
  function wireField(f) {
    f.addEventListener('input', () => { clearTimeout(debounce); debounce = setTimeout(fromControls, 400); });
    f.addEventListener('change', () => { clearTimeout(debounce); fromControls(); });
  }
  function wire() {
    for (const k of SHAPE.concat(['override', 'seq_lens'])) { wireField($(k)); }
    $('seq_lens').addEventListener('input', checkBatch); // said at once; asked 400 ms after the last key
    for (const b of document.querySelectorAll('[data-seq-lens]')) {
      b.addEventListener('click', () => { $('seq_lens').value = b.dataset.seqLens; fromControls(); });
    }
    $('changes').addEventListener('change', fromControls);
    $('target-select').addEventListener('change', fromPair);
    $('model-select').addEventListener('change', fromPair);
    for (const b of document.querySelectorAll('#views [data-view]')) {
      b.addEventListener('click', () => showView(b.dataset.view === 'engines'));
    }
    $('catalog-select').addEventListener('change', fromCatalogs);
    $('compare-select').addEventListener('change', fromCatalogs);
    for (const b of document.querySelectorAll('[data-override]')) {
      b.addEventListener('click', () => { $('override').value = b.dataset.override; fromControls(); });
    }
    $('grid').addEventListener('click', (e) => {
      const b = e.target.closest('.cell');
      if (b) { focusCell(b); select(b.dataset.target, b.dataset.model); }
    });
    $('grid').addEventListener('keydown', onGridKey);
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && state.target && !state.engines) { // the engines view's pair is no selection
        const b = grid.cells.get(key(state.target, state.model));
        select('', '');
        focusCell(b);
      }
    });
    $('retry').addEventListener('click', kick);
    // A page left for another stays alive in the back/forward cache, and
    // its stream with it: six such pages hold every connection a browser
    // allows splitkd's origin, and no fetch of the page shown would start.
    // So the stream closes with the page and opens again if it comes back.
    window.addEventListener('pagehide', () => {
      if (live.es) { live.es.close(); live.es = null; live.stream = 'none'; }
    });
    window.addEventListener('pageshow', (e) => { if (e.persisted) { openStream(); } });
    window.addEventListener('hashchange', () => { readHash(); syncControls(); openStream(); kick(); });
    window.addEventListener('online', kick);
    window.addEventListener('resize', () => { layout(); redrawChart(); });
    document.addEventListener('visibilitychange', () => { if (!document.hidden) { kick(); } });
    // the countdown and the "stale" line move even between polls
    setInterval(() => { if (live.downSince !== null) { showStatus(); } }, 1000);
  }

  function start() {
    adoptSearch();
    readHash();
    syncControls();
    wire();
    grid.active = state.target ? key(state.target, state.model) : '';
    kick();
    openStream();
  }
  // the engine inputs' controls first, so the URL's values find them; a
  // splitkd that does not answer yet is the first tick's to show
  loadEngines().catch(() => {}).finally(start);
})();
