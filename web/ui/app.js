// Gantry dashboard. Plain ES module, no dependencies. Everything shown comes
// from ../api/ (REST) and is refreshed live from ../api/ws: a "config"
// message re-reads the lists, "health" re-reads services, "stats" updates
// the rate columns in place. Values are inserted with textContent only
// (names come from Docker labels and files: never trusted as HTML).

const api = (p) => new URL('../api/' + p, location.href);

const state = { version: '', rates: {}, servers: [], changes: [] };

// el builds an element: el('td', {class: 'x'}, 'text', child, ...).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

async function getJSON(path) {
  const r = await fetch(api(path), { headers: { Accept: 'application/json' } });
  if (!r.ok) throw new Error(path + ': ' + r.status);
  return r.json();
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function statusCell(s) {
  return el('td', { class: 'status ' + (s || '') }, s || '');
}

function errorsCell(errs) {
  return el('td', {}, (errs || []).map((e) => el('div', { class: 'err' }, e)));
}

// ---- tabs ----
function showTab() {
  const name = (location.hash || '#overview').slice(1);
  for (const s of document.querySelectorAll('.tab')) s.classList.toggle('active', s.id === name);
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.tab === name);
}
window.addEventListener('hashchange', showTab);

// ---- overview ----
function renderOverview(o, problems) {
  const card = (title, sec, extra) => el('div', { class: 'card' },
    el('div', {}, title),
    el('div', { class: 'n' }, sec ? sec.total : 0),
    el('div', { class: 'sub' },
      el('span', { class: 'status warning' }, (sec ? sec.warnings : 0) + ' warnings'),
      el('span', { class: 'status disabled' }, (sec ? sec.errors : 0) + ' errors')),
    extra);
  const cards = [
    card('Routers', o.http.routers),
    card('Services', o.http.services),
    card('Middlewares', o.http.middlewares),
  ];
  if (o.servers) {
    cards.push(el('div', { class: 'card', id: 'card-servers' }, el('div', {}, 'Servers'),
      el('div', { class: 'n' }, o.servers.total),
      el('div', { class: 'sub' }, el('span', { class: o.servers.down ? 'down' : 'up' }, o.servers.down + ' down'))));
  }
  cards.push(el('div', { class: 'card' }, el('div', {}, 'Problems'), el('div', { class: 'n' + (o.problems ? ' error' : '') }, o.problems),
    el('div', { class: 'sub' }, 'providers: ' + ((o.providers || []).join(', ') || 'none'))));
  document.getElementById('cards').replaceChildren(...cards);
  fill(document.querySelector('#problems tbody'), (problems || []).map((p) => el('tr', {},
    el('td', { class: p.severity }, p.severity), el('td', {}, p.provider), el('td', { class: 'mono' }, p.source), el('td', {}, p.message))));
}

function renderChangelog() {
  const ul = document.getElementById('changelog');
  ul.replaceChildren(...state.changes.slice(0, 20).map((c) => {
    const parts = [];
    for (const kind of ['routers', 'services', 'middlewares']) {
      const ch = c.changes[kind] || {};
      for (const what of ['added', 'removed', 'changed']) {
        for (const n of ch[what] || []) parts.push(el('span', { class: what }, `${what} ${kind.slice(0, -1)} ${n}; `));
      }
    }
    return el('li', {}, el('span', { class: 'mono' }, new Date(c.at).toLocaleTimeString() + ' ' + c.version.slice(0, 12) + ' '), parts.length ? parts : 'no object changes');
  }));
}

// ---- routers ----
// priorityText shows the effective priority: the configured one, else the
// rule's length (Traefik's default); internal routers sit at the top of the
// range, beyond what a JavaScript number holds exactly.
function priorityText(r) {
  if (r.priority > 1e15) return 'max (internal)';
  if (r.priority) return String(r.priority);
  return (r.rule || '').length + ' (rule length)';
}

let routers = [];
function renderRouters() {
  const q = document.getElementById('router-search').value.toLowerCase();
  const tbody = document.querySelector('#routers tbody');
  fill(tbody, routers.filter((r) => !q || r.name.toLowerCase().includes(q) || (r.rule || '').toLowerCase().includes(q)).map((r) => {
    return el('tr', { 'data-name': r.name },
      statusCell(r.status),
      el('td', { class: 'mono name' }, r.name, (r.error || []).map((e) => el('div', { class: 'err' }, e))),
      el('td', { class: 'mono rule' }, r.rule || ''),
      el('td', {}, (r.using || r.entryPoints || []).join(', ')),
      el('td', { class: 'mono' }, (r.middlewares || []).join(', ')),
      el('td', { class: 'mono' }, r.service || ''),
      el('td', { class: 'priority' }, priorityText(r)),
      el('td', { class: 'rps' }), el('td', { class: 'errors' }), el('td', { class: 'latency' }));
  }));
  renderRates();
}

function renderRates() {
  for (const tr of document.querySelectorAll('#routers tbody tr')) {
    const r = state.rates[tr.dataset.name];
    tr.querySelector('.rps').textContent = r ? r.rps.toFixed(1) : '0.0';
    tr.querySelector('.errors').textContent = r ? (r.errorRatio * 100).toFixed(1) + '%' : '0.0%';
    tr.querySelector('.latency').textContent = r && r.rps > 0 ? `${r.p50ms.toFixed(1)} / ${r.p99ms.toFixed(1)}` : '–';
  }
}

// ---- services ----
let services = [];
function inflight(url) {
  const s = state.servers.find((x) => x.url === url || url.startsWith(x.url));
  return s ? s.inFlight : 0;
}
function renderServices() {
  fill(document.querySelector('#services tbody'), services.map((s) => el('tr', { 'data-name': s.name },
    statusCell(s.status),
    el('td', { class: 'mono' }, s.name),
    el('td', {}, s.type || ''),
    el('td', {}, Object.entries(s.serverStatus || {}).map(([url, st]) => el('div', { class: 'server', 'data-url': url },
      el('span', { class: st === 'UP' ? 'up' : 'down' }, st), ' ', el('span', { class: 'mono' }, url), ' ',
      el('span', { class: 'inflight' }, inflight(url) + ' in flight')))),
    el('td', { class: 'mono' }, (s.usedBy || []).join(', ')),
    errorsCell(s.error))));
}
function renderInflight() {
  for (const d of document.querySelectorAll('#services .server')) {
    d.querySelector('.inflight').textContent = inflight(d.dataset.url) + ' in flight';
  }
}

// ---- middlewares ----
function renderMiddlewares(list) {
  fill(document.querySelector('#middlewares tbody'), list.map((m) => el('tr', { 'data-name': m.name },
    statusCell(m.status), el('td', { class: 'mono' }, m.name), el('td', {}, m.type || ''),
    el('td', { class: 'mono' }, (m.usedBy || []).join(', ')), errorsCell(m.error))));
}

// ---- providers ----
function renderProviders(list) {
  document.getElementById('provider-list').replaceChildren(...list.map((p) => el('div', { class: 'provider', 'data-name': p.name },
    el('h3', {}, p.name, ' ', el('span', { class: 'status ' + (p.state === 'ok' ? 'enabled' : p.state === 'error' ? 'disabled' : 'warning') }, p.state)),
    el('div', {}, 'Last update: ', p.lastPublish ? new Date(p.lastPublish).toLocaleString() : 'never', ' · restarts: ', p.restarts || 0),
    p.lastError ? el('div', { class: 'err' }, 'Last error: ', p.lastError) : null,
    el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, 'Severity'), el('th', {}, 'Source'), el('th', {}, 'Objects'), el('th', {}, 'Message'))),
      el('tbody', {}, (p.problemList || []).map((x) => el('tr', {}, el('td', { class: x.severity }, x.severity), el('td', { class: 'mono' }, x.source),
        el('td', { class: 'mono' }, (x.objects || []).join(', ')), el('td', {}, x.message))))))));
}

// ---- revisions ----
async function loadRevisions() {
  let list;
  try { list = await getJSON('revisions?limit=50'); } catch { list = []; }
  fill(document.querySelector('#revisions tbody'), list.map((r, i) => el('tr', { 'data-version': r.version },
    el('td', {}, el('input', { type: 'radio', name: 'rev-a', value: r.version, checked: i === 1 })),
    el('td', {}, el('input', { type: 'radio', name: 'rev-b', value: r.version, checked: i === 0 })),
    el('td', { class: 'mono' }, r.version.slice(0, 16), r.current ? ' (current)' : ''),
    el('td', {}, new Date(r.at).toLocaleString()), el('td', {}, r.routers), el('td', {}, r.services), el('td', {}, r.middlewares), el('td', {}, r.problems))));
}

// showDiff compares two revisions: the object-level changes from the API,
// and for each object its JSON before and after (both already redacted).
async function showDiff() {
  const a = document.querySelector('input[name=rev-a]:checked');
  const b = document.querySelector('input[name=rev-b]:checked');
  const out = document.getElementById('diff');
  if (!a || !b) { out.textContent = 'Pick two revisions.'; return; }
  const [d, ra, rb] = await Promise.all([
    getJSON(`revisions/${encodeURIComponent(a.value)}/diff/${encodeURIComponent(b.value)}`),
    getJSON(`revisions/${encodeURIComponent(a.value)}`),
    getJSON(`revisions/${encodeURIComponent(b.value)}`),
  ]);
  const obj = (rev, kind, name) => {
    const h = (rev.config && rev.config.http) || {};
    const v = (h[kind] || {})[name];
    return v === undefined ? '' : JSON.stringify(v, null, 2);
  };
  const rows = [];
  for (const kind of ['routers', 'services', 'middlewares']) {
    const ch = d.changes[kind] || {};
    for (const what of ['added', 'removed', 'changed']) {
      for (const n of ch[what] || []) {
        rows.push(el('tr', { 'data-object': n },
          el('td', { class: what }, what), el('td', {}, kind), el('td', { class: 'mono' }, n),
          el('td', {}, el('pre', { class: 'mono before' }, obj(ra, kind, n))),
          el('td', {}, el('pre', { class: 'mono after' }, obj(rb, kind, n)))));
      }
    }
  }
  out.replaceChildren(el('h3', {}, `${d.from.slice(0, 12)} → ${d.to.slice(0, 12)}`),
    rows.length
      ? el('table', { class: 'grid', id: 'diff-table' },
        el('thead', {}, el('tr', {}, el('th', {}, 'Change'), el('th', {}, 'Kind'), el('th', {}, 'Name'), el('th', {}, 'Before (A)'), el('th', {}, 'After (B)'))),
        el('tbody', {}, rows))
      : el('p', {}, 'No object changes.'));
}

// ---- simulator ----
async function loadEntryPoints() {
  let eps = [];
  try { eps = await getJSON('entrypoints'); } catch { /* keep empty */ }
  const sel = document.getElementById('sim-ep');
  const cur = sel.value;
  sel.replaceChildren(...eps.map((e) => el('option', { value: e.name, selected: e.name === cur }, e.name)));
}

async function simulate(ev) {
  ev.preventDefault();
  const headers = {};
  for (const line of document.getElementById('sim-headers').value.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  const body = {
    method: document.getElementById('sim-method').value,
    url: document.getElementById('sim-url').value,
    entryPoint: document.getElementById('sim-ep').value,
    clientIP: document.getElementById('sim-ip').value,
    headers,
  };
  const out = document.getElementById('sim-result');
  const r = await fetch(api('simulate'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const res = await r.json();
  if (!r.ok) { out.replaceChildren(el('p', { class: 'err' }, res.message || r.status)); return; }
  out.replaceChildren(
    el('p', { class: 'winner' }, res.winner ? ['Winner: ', el('strong', { class: 'mono' }, res.winner)] : 'No router matches: the request gets 404.'),
    el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, '#'), el('th', {}, 'Router'), el('th', {}, 'Priority'), el('th', {}, 'Rule'), el('th', {}, 'Matched'), el('th', {}, 'Why'))),
      el('tbody', {}, res.candidates.map((c, i) => el('tr', { 'data-router': c.router },
        el('td', {}, i + 1), el('td', { class: 'mono' }, c.router), el('td', {}, c.priority), el('td', { class: 'mono' }, c.rule),
        el('td', { class: c.matched ? 'up' : 'down' }, c.matched ? 'yes' : 'no'), el('td', {}, c.reason))))));
}

// ---- loading ----
async function loadAll() {
  const [ov, probs, rs, ss, ms, ps] = await Promise.all([
    getJSON('overview'), getJSON('problems'), getJSON('http/routers?per_page=1000'),
    getJSON('http/services?per_page=1000'), getJSON('http/middlewares?per_page=1000'), getJSON('providers'),
  ]);
  renderOverview(ov, probs);
  routers = rs; renderRouters();
  services = ss; renderServices();
  renderMiddlewares(ms);
  renderProviders(ps);
  if (ov.version) document.getElementById('version').textContent = ov.version.slice(0, 12);
  document.body.dataset.version = ov.version || '';
}

let reloadTimer = null;
function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => { loadAll().catch(console.error); loadRevisions(); loadEntryPoints(); }, 50);
}

function connect() {
  const u = api('ws');
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(u);
  const badge = document.getElementById('live');
  ws.onopen = () => { badge.textContent = 'live'; badge.className = 'badge on'; };
  ws.onclose = () => {
    badge.textContent = 'offline'; badge.className = 'badge off';
    setTimeout(connect, 2000);
  };
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.servers) state.servers = m.servers;
    switch (m.type) {
      case 'config':
        if (m.changes) { state.changes.unshift({ at: m.at, version: m.version, changes: m.changes }); renderChangelog(); }
        if (m.version !== state.version) { state.version = m.version; scheduleReload(); }
        break;
      case 'health':
        getJSON('http/services?per_page=1000').then((ss) => { services = ss; renderServices(); });
        getJSON('overview').then((ov) => getJSON('problems').then((p) => renderOverview(ov, p)));
        break;
      case 'providers':
        renderProviders(m.providers || []);
        getJSON('overview').then((ov) => getJSON('problems').then((p) => renderOverview(ov, p)));
        break;
      case 'stats':
        state.rates = m.routers || {};
        renderRates();
        renderInflight();
        break;
    }
  };
}

document.getElementById('router-search').addEventListener('input', renderRouters);
document.getElementById('diff-btn').addEventListener('click', () => showDiff().catch((e) => { document.getElementById('diff').textContent = String(e); }));
document.getElementById('sim-form').addEventListener('submit', (e) => simulate(e).catch((err) => { document.getElementById('sim-result').textContent = String(err); }));
showTab();
loadAll().catch(console.error);
loadRevisions();
loadEntryPoints();
connect();
