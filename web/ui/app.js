// Gantry dashboard. Plain ES modules, no dependencies, no build step.
// Everything shown comes from ../api/ (REST) and is refreshed live from
// ../api/ws: a "config" message re-reads the lists, "health" recolours
// servers and re-reads services, "stats" (one per second) extends the
// charts and updates rates and in-flight counts in place. Values are
// inserted with textContent only (names come from Docker labels and files:
// never trusted as HTML).

import { el } from './dom.js';
import { ChartPair } from './chart.js';
import { routeFlow, serviceFlow, updateServers } from './flow.js';
import { loadMigration } from './migration.js';
import { api, getJSON, enc, byName, fill, link } from './common.js';
import { renderChangelog, addChange, loadHistory } from './changes.js';
import { loadRevisions, initRevisions } from './revisions.js';
import { loadCertificates } from './certificates.js';
import { loadCluster } from './cluster.js';
import { staticCard, loadStatic } from './static.js';
import { renderProblems, renderEntryPoints, renderProviders } from './lists.js';

const state = {
  version: '', rates: {}, servers: [], problems: [],
  routers: [], services: [], middlewares: [], entrypoints: [],
  tcp: { routers: [], services: [], middlewares: [] }, udp: { routers: [], services: [] },
  recent: {}, // router name -> last 10 samples of its rate
};

function statusCell(s) { return el('td', { class: 'status ' + (s || '') }, s || ''); }
function errorsCell(errs) { return el('td', {}, (errs || []).map((e) => el('div', { class: 'err' }, e))); }

// ---- pages ----
// The hash is a tab ("#routers") or an object page ("#router/web@docker").
function route() {
  const h = decodeURIComponent((location.hash || '#overview').slice(1));
  const i = h.indexOf('/');
  return i < 0 ? { tab: h } : { tab: 'detail', kind: h.slice(0, i), name: h.slice(i + 1) };
}

function showTab() {
  const r = route();
  const tabFor = { router: 'routers', service: 'services', middleware: 'middlewares', entrypoint: 'entrypoints',
    tcprouter: 'tcpudp', tcpservice: 'tcpudp', tcpmiddleware: 'tcpudp', udprouter: 'tcpudp', udpservice: 'tcpudp' };
  const nav = r.tab === 'detail' ? tabFor[r.kind] : r.tab;
  for (const s of document.querySelectorAll('.tab')) s.classList.toggle('active', s.id === r.tab);
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.tab === nav);
  if (r.tab === 'detail') renderDetail();
  else detail = null;
  if (r.tab === 'revisions') loadRevisions();
}
window.addEventListener('hashchange', showTab);

// ---- charts ----
// A chart pair shows one series of /api/series: the proxy total ("") or
// "router=NAME" / "service=NAME"; range 15m follows the WebSocket, 24h is
// re-read each minute.
class LiveCharts {
  constructor(id, query) {
    this.pair = new ChartPair(id);
    this.query = query;
    this.range = '15m';
    this.loaded = 0;
    this.el = this.pair.el;
    this.load();
  }
  async load() {
    const q = (this.query ? this.query + '&' : '') + 'range=' + this.range;
    try {
      const s = await getJSON('series?' + q);
      this.pair.set(s, this.range === '24h' ? 1440 : 900);
      this.el.dataset.loaded = 'true';
    } catch { /* no live statistics: charts stay empty */ }
    this.loaded = Date.now();
  }
  setRange(r) { this.range = r; this.load(); }
  push(t, rate) {
    if (this.range === '15m') this.pair.pushRate(t, rate);
    else if (Date.now() - this.loaded > 60000) this.load();
  }
}

let overviewCharts = null;
function rangeButtons(span, charts) {
  for (const b of span.querySelectorAll('button')) {
    b.onclick = () => {
      for (const x of span.querySelectorAll('button')) x.classList.toggle('on', x === b);
      charts.setRange(b.dataset.range);
    };
  }
}

// ---- overview ----
function renderOverview(o) {
  const card = (title, sec, href) => el('a', { class: 'card', href },
    el('div', {}, title),
    el('div', { class: 'n' }, sec ? sec.total : 0),
    el('div', { class: 'sub' },
      el('span', { class: 'status warning' }, (sec ? sec.warnings : 0) + ' warnings'),
      el('span', { class: 'status disabled' }, (sec ? sec.errors : 0) + ' errors')));
  const cards = [
    card('Routers', o.http.routers, '#routers'),
    card('Services', o.http.services, '#services'),
    card('Middlewares', o.http.middlewares, '#middlewares'),
  ];
  if (o.servers) {
    cards.push(el('a', { class: 'card', id: 'card-servers', href: '#services' }, el('div', {}, 'Servers'),
      el('div', { class: 'n' }, o.servers.total),
      el('div', { class: 'sub' }, el('span', { class: o.servers.down ? 'down' : 'up' }, o.servers.down + ' down'))));
  }
  cards.push(el('a', { class: 'card', href: '#problems' }, el('div', {}, 'Problems'), el('div', { class: 'n' + (o.problems ? ' error' : '') }, o.problems),
    el('div', { class: 'sub' }, 'providers: ' + ((o.providers || []).join(', ') || 'none'))));
  const sc = staticCard();
  if (sc) cards.push(sc);
  document.getElementById('cards').replaceChildren(...cards);
}

// failing lists the routers someone should look at, worst first, each with
// why: disabled (its error), servers down (which, and their last error),
// or answering 5xx (share over the last 10 seconds).
function renderFailing() {
  const services = byName(state.services);
  const live = Object.fromEntries(state.servers.map((s) => [s.url, s]));
  const downOf = (name, depth = 0) => {
    const s = services[name];
    if (!s || depth > 8) return [];
    const kids = s.weighted ? s.weighted.services.map((c) => c.name)
      : s.mirroring ? [s.mirroring.service] : s.failover ? [s.failover.service, s.failover.fallback].filter(Boolean) : [];
    if (kids.length) return kids.flatMap((k) => downOf(k, depth + 1));
    return ((s.loadBalancer && s.loadBalancer.servers) || []).map((x) => x.url)
      .filter((u) => (live[u] ? !live[u].up : (s.serverStatus || {})[u] === 'DOWN')).map((u) => live[u] || { url: u });
  };
  const rows = [];
  for (const r of state.routers) {
    if (r.name.endsWith('@internal')) continue;
    const why = [];
    let score = 0;
    if (r.status === 'disabled') { why.push('disabled: ' + ((r.error || []).join('; ') || 'error')); score += 3; }
    const down = downOf(r.service);
    if (down.length) { why.push(down.map((s) => `server ${s.url} DOWN${s.lastError ? ' (' + s.lastError + ')' : ''}`).join('; ')); score += 2; }
    const rec = state.recent[r.name] || [];
    const req = rec.reduce((a, x) => a + x.rps, 0), e5 = rec.reduce((a, x) => a + x.errorsPerSecond, 0);
    if (e5 > 0) { why.push(`${(100 * e5 / req).toFixed(0)}% of responses are 5xx (last ${rec.length}s)`); score += 1 + e5 / req; }
    if (why.length) rows.push({ r, why, score });
  }
  rows.sort((a, b) => b.score - a.score || a.r.name.localeCompare(b.r.name));
  const box = document.getElementById('failing');
  box.replaceChildren(rows.length
    ? el('ul', { class: 'failing' }, rows.map((x) => el('li', { 'data-router': x.r.name }, el('span', { class: 'status disabled' }, '●'), ' ', link('router', x.r.name), ' — ', x.why.join(' · '))))
    : el('p', { class: 'empty ok' }, 'Every router is healthy.'));
}

// ---- routers ----
function priorityText(r) {
  if (r.priority > 1e15) return 'max (internal)';
  if (r.priority) return String(r.priority);
  return (r.rule || '').length + ' (rule length)';
}

function renderRouters() {
  const q = document.getElementById('router-search').value.toLowerCase();
  fill(document.querySelector('#routers tbody'), state.routers.filter((r) => !q || r.name.toLowerCase().includes(q) || (r.rule || '').toLowerCase().includes(q)).map((r) => el('tr', { 'data-name': r.name },
    statusCell(r.status),
    el('td', { class: 'mono name' }, link('router', r.name), (r.error || []).map((e) => el('div', { class: 'err' }, e))),
    el('td', { class: 'mono rule' }, r.rule || ''),
    el('td', {}, (r.using || r.entryPoints || []).join(', ')),
    el('td', {}, (r.middlewares || []).map((m) => [link('middleware', m), ' '])),
    el('td', {}, r.service ? link('service', r.service) : ''),
    el('td', { class: 'priority' }, priorityText(r)),
    el('td', { class: 'rps' }), el('td', { class: 'errors' }), el('td', { class: 'latency' }))));
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
function liveServer(url) { return state.servers.find((x) => x.url === url); }
function renderServices() {
  fill(document.querySelector('#services tbody'), state.services.map((s) => el('tr', { 'data-name': s.name },
    statusCell(s.status),
    el('td', {}, link('service', s.name)),
    el('td', {}, s.type || ''),
    el('td', {}, Object.entries(s.serverStatus || {}).map(([url, st]) => el('div', { class: 'server', 'data-url': url },
      el('span', { class: st === 'UP' ? 'up' : 'down' }, st), ' ', el('span', { class: 'mono' }, url), ' ',
      el('span', { class: 'inflight' }, ((liveServer(url) || {}).inFlight || 0) + ' in flight')))),
    el('td', {}, (s.usedBy || []).map((n) => [link('router', n), ' '])),
    errorsCell(s.error))));
}
function renderInflight() {
  for (const d of document.querySelectorAll('#services .server')) {
    d.querySelector('.inflight').textContent = ((liveServer(d.dataset.url) || {}).inFlight || 0) + ' in flight';
  }
}

// ---- middlewares ----
function renderMiddlewares() {
  fill(document.querySelector('#middlewares tbody'), state.middlewares.map((m) => el('tr', { 'data-name': m.name },
    statusCell(m.status), el('td', {}, link('middleware', m.name)), el('td', {}, m.type || ''),
    el('td', {}, (m.usedBy || []).map((n) => [link('router', n), ' '])), errorsCell(m.error))));
}

// ---- object pages ----
// detail is the object page being shown: {kind, name, charts}.
let detail = null;

function definition(item) {
  const skip = new Set(['name', 'provider', 'status', 'error', 'usedBy', 'using', 'serverStatus', 'serverDetails', 'type']);
  const o = {};
  for (const [k, v] of Object.entries(item || {})) if (!skip.has(k)) o[k] = v;
  return el('pre', { class: 'mono def' }, JSON.stringify(o, null, 2));
}

function header(kind, item, name) {
  return el('div', { class: 'dhead' },
    el('h2', {}, el('span', { class: 'kind' }, kind), ' ', el('span', { class: 'mono' }, name), ' ',
      item ? el('span', { class: 'status ' + item.status }, item.status || '') : el('span', { class: 'status disabled' }, 'not found')),
    item && item.error && item.error.length ? el('div', { class: 'errbox' }, item.error.map((e) => el('div', {}, e))) : null);
}

function chartBlock(charts) {
  const span = el('span', { class: 'ranges' }, el('button', { type: 'button', class: 'on', 'data-range': '15m' }, '15 min'), el('button', { type: 'button', 'data-range': '24h' }, '24 h'));
  rangeButtons(span, charts);
  return [el('div', { class: 'chart-head' }, el('h3', {}, 'Traffic'), span), charts.el];
}

function renderDetail() {
  const r = route();
  if (r.tab !== 'detail') return;
  const body = document.getElementById('detail-body');
  const same = detail && detail.kind === r.kind && detail.name === r.name;
  const charts = same ? detail.charts : null;
  const ctx = { middlewares: byName(state.middlewares), services: byName(state.services), live: Object.fromEntries(state.servers.map((s) => [s.url, s])) };
  let parts = [];
  let newCharts = charts;
  switch (r.kind) {
    case 'router': {
      const it = state.routers.find((x) => x.name === r.name);
      parts = [header('router', it, r.name)];
      if (it) {
        newCharts = charts || new LiveCharts('router', 'router=' + enc(r.name));
        parts.push(el('h3', {}, 'Route'), routeFlow(it, ctx), chartBlock(newCharts), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'service': {
      const it = ctx.services[r.name];
      parts = [header('service', it, r.name)];
      if (it) {
        newCharts = charts || new LiveCharts('service', 'service=' + enc(r.name));
        parts.push(el('p', {}, 'Used by: ', (it.usedBy || []).map((n) => [link('router', n), ' '])));
        parts.push(el('h3', {}, 'Sends to'), serviceFlow(r.name, ctx));
        parts.push(chartBlock(newCharts), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'middleware': {
      const it = ctx.middlewares[r.name];
      parts = [header('middleware', it, r.name)];
      if (it) parts.push(el('p', {}, 'Type: ', it.type || '', ' · used by: ', (it.usedBy || []).map((n) => [link('router', n), ' '])), el('h3', {}, 'Definition'), definition(it));
      break;
    }
    case 'tcprouter': case 'udprouter': {
      const proto = r.kind.slice(0, 3);
      const list = state[proto];
      const it = list.routers.find((x) => x.name === r.name);
      parts = [header(proto.toUpperCase() + ' router', it, r.name)];
      if (it) {
        const pctx = { middlewares: byName(list.middlewares || []), services: byName(list.services), live: {}, proto };
        parts.push(el('h3', {}, 'Route'), routeFlow(it, pctx), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'tcpservice': case 'udpservice': case 'tcpmiddleware': {
      const proto = r.kind.slice(0, 3);
      const what = r.kind.slice(3);
      const list = state[proto];
      const it = (what === 'service' ? list.services : list.middlewares || []).find((x) => x.name === r.name);
      parts = [header(proto.toUpperCase() + ' ' + what, it, r.name)];
      if (it) {
        parts.push(el('p', {}, 'Used by: ', (it.usedBy || []).map((n) => [link(proto + 'router', n), ' '])));
        if (what === 'service') parts.push(el('h3', {}, 'Sends to'), serviceFlow(r.name, { middlewares: {}, services: byName(list.services), live: {}, proto }));
        parts.push(el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'entrypoint': {
      const it = state.entrypoints.find((x) => x.name === r.name);
      parts = [header('entrypoint', it ? { status: 'enabled' } : null, r.name)];
      if (it) {
        parts.push(el('p', {}, 'Address: ', el('span', { class: 'mono' }, it.address || ''), ' · ', it.dynamic ? el('span', { class: 'tag dyn' }, 'dynamic') : 'static'));
        if (it.dynamic) parts.push(el('p', {}, 'Asked for by: ', (it.requestedBy || []).map((q) => [el('strong', {}, q.provider), q.source ? ' (' + q.source + ')' : '', ' ']), (it.requestedBy || []).length ? '' : 'no provider any more (draining)'));
        parts.push(el('p', {}, 'Routers: ', state.routers.filter((x) => (x.using || x.entryPoints || []).includes(r.name)).map((x) => [link('router', x.name), ' '])));
        parts.push(el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
  }
  detail = { kind: r.kind, name: r.name, charts: newCharts };
  body.replaceChildren(...parts.flat());
}

// ---- TCP and UDP ----
// Each router row shows its live counts ("stats", Gantry's addition to
// Traefik's shapes): connections (UDP: sessions) open and in total, and the
// bytes (UDP: datagrams and bytes) from and to clients; the tab re-reads
// them with every stats message while it is shown.
function fmtBytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (n = n || 0; n >= 1024 && i < u.length - 1; i++) n /= 1024;
  return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + u[i];
}

function statCells(st, udp) {
  st = st || {};
  const cells = [el('td', { class: 'num open' }, String(st.open || 0)), el('td', { class: 'num' }, String(st.total || 0))];
  if (udp) cells.push(el('td', { class: 'num' }, (st.datagramsIn || 0) + ' / ' + (st.datagramsOut || 0)));
  cells.push(el('td', { class: 'num bytes' }, fmtBytes(st.bytesIn) + ' / ' + fmtBytes(st.bytesOut)));
  return cells;
}

function renderTCPUDP() {
  fill(document.querySelector('#tcp-routers tbody'), state.tcp.routers.map((r) => el('tr', { 'data-name': r.name },
    statusCell(r.status), el('td', {}, link('tcprouter', r.name)), el('td', { class: 'mono' }, r.rule || ''),
    el('td', {}, (r.using || r.entryPoints || []).join(', ')), el('td', {}, r.service ? link('tcpservice', r.service) : ''),
    ...statCells(r.stats, false), errorsCell(r.error))));
  fill(document.querySelector('#udp-routers tbody'), state.udp.routers.map((r) => el('tr', { 'data-name': r.name },
    statusCell(r.status), el('td', {}, link('udprouter', r.name)),
    el('td', {}, (r.using || r.entryPoints || []).join(', ')), el('td', {}, r.service ? link('udpservice', r.service) : ''),
    ...statCells(r.stats, true), errorsCell(r.error))));
}

async function loadTCPUDP() {
  const get = (p) => getJSON(p + '?per_page=1000').catch(() => []);
  const [tr, ts, tm, ur, us] = await Promise.all([get('tcp/routers'), get('tcp/services'), get('tcp/middlewares'), get('udp/routers'), get('udp/services')]);
  state.tcp = { routers: tr, services: ts, middlewares: tm };
  state.udp = { routers: ur, services: us };
  renderTCPUDP();
}

// ---- simulator ----
async function loadEntryPoints() {
  let eps = [];
  try { eps = await getJSON('entrypoints'); } catch { /* keep empty */ }
  state.entrypoints = eps;
  renderEntryPoints(state.entrypoints, state.routers);
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
        el('td', {}, i + 1), el('td', {}, link('router', c.router)), el('td', {}, c.priority), el('td', { class: 'mono' }, c.rule),
        el('td', { class: c.matched ? 'up' : 'down' }, c.matched ? 'yes' : 'no'), el('td', {}, c.reason))))));
}

// ---- loading ----
async function loadAll() {
  const [ov, probs, rs, ss, ms, ps] = await Promise.all([
    getJSON('overview'), getJSON('problems'), getJSON('http/routers?per_page=1000'),
    getJSON('http/services?per_page=1000'), getJSON('http/middlewares?per_page=1000'), getJSON('providers'),
  ]);
  state.problems = probs;
  state.routers = rs;
  state.services = ss;
  state.middlewares = ms;
  renderOverview(ov);
  renderProblems(state.problems);
  renderRouters();
  renderServices();
  renderMiddlewares();
  renderProviders(ps);
  renderFailing();
  renderEntryPoints(state.entrypoints, state.routers);
  await loadStatic().catch(console.error);
  renderOverview(ov);
  await loadTCPUDP();
  renderDetail();
  loadCertificates();
  loadCluster().catch(console.error);
  loadMigration(api).catch(console.error);
  if (ov.version) document.getElementById('version').textContent = ov.version.slice(0, 12);
  document.body.dataset.version = ov.version || '';
}

async function refreshHealth() {
  const [ov, probs, ss] = await Promise.all([getJSON('overview'), getJSON('problems'), getJSON('http/services?per_page=1000')]);
  state.problems = probs;
  state.services = ss;
  renderOverview(ov);
  renderProblems(state.problems);
  renderServices();
  renderFailing();
}

let reloadTimer = null;
function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => { loadAll().catch(console.error); loadRevisions(); loadEntryPoints(); }, 50);
}

function onStats(m) {
  const st = m.stats;
  state.rates = m.routers || {};
  renderRates();
  renderInflight();
  if (!st) return;
  const t = Date.parse(st.at);
  overviewCharts.push(t, st.total);
  for (const [name, r] of Object.entries(st.routers || {})) {
    const rec = (state.recent[name] ||= []);
    rec.push(r);
    if (rec.length > 10) rec.shift();
  }
  for (const name of Object.keys(state.recent)) if (!(st.routers || {})[name]) delete state.recent[name];
  if (detail && detail.charts) {
    const src = detail.kind === 'router' ? st.routers : st.services;
    detail.charts.push(t, (src || {})[detail.name]);
  }
  renderFailing();
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
    if (m.servers) {
      state.servers = m.servers;
      updateServers(document.getElementById('detail-body'), m.servers);
    }
    switch (m.type) {
      case 'config':
        if (m.changes) addChange({ at: m.at, version: m.version, changes: m.changes });
        if (m.problems) { state.problems = m.problems; renderProblems(state.problems); }
        if (m.version !== state.version) { state.version = m.version; scheduleReload(); }
        break;
      case 'health':
        refreshHealth().catch(console.error);
        break;
      case 'providers':
        renderProviders(m.providers || []);
        refreshHealth().catch(console.error);
        break;
      case 'stats':
        onStats(m);
        if (route().tab === 'tcpudp') loadTCPUDP().catch(console.error);
        if (route().tab === 'cluster') loadCluster(2000).catch(console.error);
        if (route().tab === 'migration') loadMigration(api).catch(console.error);
        break;
    }
  };
}

document.getElementById('router-search').addEventListener('input', renderRouters);
initRevisions();
document.getElementById('sim-form').addEventListener('submit', (e) => simulate(e).catch((err) => { document.getElementById('sim-result').textContent = String(err); }));
overviewCharts = new LiveCharts('overview', '');
document.getElementById('overview-charts').append(overviewCharts.el);
rangeButtons(document.querySelector('.ranges[data-for=overview]'), overviewCharts);
renderChangelog();
loadEntryPoints().then(showTab);
loadAll().catch(console.error);
loadRevisions();
loadHistory();
connect();
