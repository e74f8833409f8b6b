// Gantry dashboard. Plain ES modules, no dependencies, no build step.
// Everything shown comes from ../api/ (REST) and is refreshed live from
// ../api/ws: a "config" message re-reads the lists, "health" recolours
// servers and re-reads services, "stats" (one per second) extends the
// charts and updates rates and in-flight counts in place. Values are
// inserted with textContent only (names come from Docker labels and files:
// never trusted as HTML).

import { el } from './dom.js';
import { updateServers } from './flow.js';
import { loadMigration } from './migration.js';
import { api, getJSON, getAll } from './common.js';
import { watchOn, scheduleWatch } from './watch.js';
import { state, route } from './state.js';
import { LiveCharts, rangeButtons } from './livecharts.js';
import { renderFailing } from './failing.js';
import { recordStats } from './health.js';
import { renderDeps } from './deps.js';
import { renderRouters, renderRates, renderServices, renderInflight, renderMiddlewares, firstPage } from './objects.js';
import { renderDetail, closeDetail, pushDetail, refreshLive, reloadDetailCharts } from './detail.js';
import { loadTCPUDP, refreshStreamCounters } from './tcpudp.js';
import { fillEntryPoints, simulate } from './sim.js';
import { addChange, loadChanges } from './changes.js';
import { loadRevisions, initRevisions } from './revisions.js';
import { loadCertificates } from './certificates.js';
import { loadCluster, showVersion } from './cluster.js';
import { staticCard, loadStatic } from './static.js';
import { renderProblems, renderEntryPoints, renderProviders } from './lists.js';

function showTab() {
  const r = route();
  const tabFor = { router: 'routers', service: 'services', middleware: 'middlewares', entrypoint: 'entrypoints',
    tcprouter: 'tcpudp', tcpservice: 'tcpudp', tcpmiddleware: 'tcpudp', udprouter: 'tcpudp', udpservice: 'tcpudp' };
  const nav = r.tab === 'detail' ? tabFor[r.kind] : r.tab;
  for (const s of document.querySelectorAll('.tab')) s.classList.toggle('active', s.id === r.tab);
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.tab === nav);
  if (r.tab === 'detail') renderDetail();
  else closeDetail();
  if (r.tab === 'revisions') loadRevisions();
  scheduleWatch();
}
window.addEventListener('hashchange', showTab);

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

// ---- entrypoints (and the simulator's choice) ----
// A failed read keeps the list last read and tries again 2 s later: an
// empty list would say Gantry has no entrypoints (a read cut while a
// connection drops, or Chromium's ERR_NETWORK_CHANGED when the host's
// addresses change).
let epRetry = null;
async function loadEntryPoints() {
  clearTimeout(epRetry);
  let eps;
  try { eps = await getJSON('entrypoints'); } catch (err) {
    console.error(err);
    epRetry = setTimeout(loadEntryPoints, 2000);
    return;
  }
  state.entrypoints = eps;
  renderEntryPoints(state.entrypoints, state.routers);
  fillEntryPoints(eps);
  renderDetail();
}

let overviewCharts = null;

// ---- loading ----
// Reads are numbered when they start: a configuration message (loadAll,
// and the problems it carries) and a health message (refreshHealth) can
// have reads in flight at once, and whichever answered last was drawn, so
// an older, empty problems list could replace a newer one. A result older
// than the one drawn is dropped.
let reads = 0, allDrawn = 0, healthDrawn = 0;

async function loadAll() {
  const seq = ++reads;
  const [ov, probs, rs, ss, ms, ps] = await Promise.all([
    getJSON('overview'), getJSON('problems'), getAll('http/routers'),
    getAll('http/services'), getAll('http/middlewares'), getJSON('providers'),
  ]);
  if (seq < allDrawn) return; // a later loadAll has drawn everything
  allDrawn = seq;
  state.routers = rs;
  state.middlewares = ms;
  state.providers = ps;
  showHealth(seq, ov, probs, ss);
  renderRouters();
  renderMiddlewares();
  renderProviders(ps);
  renderEntryPoints(state.entrypoints, state.routers);
  fillEntryPoints(state.entrypoints);
  await loadStatic().catch(console.error);
  if (seq >= healthDrawn) renderOverview(ov);
  await loadTCPUDP();
  renderDetail();
  loadCertificates();
  loadCluster().catch(console.error);
  loadMigration(api).catch(console.error);
  showVersion(ov);
  document.body.dataset.version = ov.version || '';
  scheduleWatch();
}

// showHealth keeps and draws what a health refresh reads (the overview,
// the problems, the HTTP services) and what is drawn from them: the
// dependency boxes, the failing routers. loadAll sets the rest of state
// (routers, providers) first. seq numbers the read (see reads); an older
// one than the last drawn is dropped.
function showHealth(seq, ov, probs, ss) {
  if (seq < healthDrawn) return;
  healthDrawn = seq;
  state.problems = probs;
  state.services = ss;
  renderOverview(ov);
  renderProblems(state.problems);
  renderServices();
  renderDeps();
  renderFailing();
}

async function refreshHealth() {
  const seq = ++reads;
  const [ov, probs, ss] = await Promise.all([getJSON('overview'), getJSON('problems'), getAll('http/services')]);
  showHealth(seq, ov, probs, ss);
  refreshLive();
  scheduleWatch();
}

// loadAllRetrying reads everything again, and again 2 s after a failure
// (a read refused or cut while Gantry restarts or a connection drops): one
// failed read at the start left the page empty until the next
// configuration change.
let retryTimer = null;
function loadAllRetrying() {
  clearTimeout(retryTimer);
  loadAll().catch((err) => {
    console.error(err);
    retryTimer = setTimeout(loadAllRetrying, 2000);
  });
}

let reloadTimer = null;
function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => { loadAllRetrying(); loadRevisions(); loadChanges(); loadEntryPoints(); }, 50);
}

function onStats(m) {
  const st = m.stats;
  state.rates = m.routers || {};
  if (st) recordStats(st);
  renderRates();
  renderInflight();
  if (!st) return;
  const t = Date.parse(st.at);
  // A sample skipped (this page or the server fell behind): the charts
  // re-read what they missed from /api/series.
  const gap = lastSeq && st.seq > lastSeq + 1;
  lastSeq = st.seq;
  if (gap) { overviewCharts.load(); reloadDetailCharts(); }
  overviewCharts.push(t, st.total);
  pushDetail(t, st);
  renderFailing();
  scheduleWatch();
}
let lastSeq = 0;

function connect() {
  const u = api('ws');
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(u);
  const badge = document.getElementById('live');
  ws.onopen = () => { badge.textContent = 'live'; badge.className = 'badge on'; watchOn(ws); };
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
        // Newer than any read in flight: those answer for the
        // configuration before this one, and are dropped (see reads).
        if (m.problems) { healthDrawn = ++reads; state.problems = m.problems; renderProblems(state.problems); renderDeps(); }
        if (m.version !== state.version) { state.version = m.version; scheduleReload(); }
        break;
      case 'health':
        refreshHealth().catch(console.error);
        break;
      case 'providers':
        state.providers = m.providers || [];
        renderProviders(state.providers);
        renderDeps();
        refreshHealth().catch(console.error);
        break;
      case 'stats':
        onStats(m);
        if (route().tab === 'tcpudp' || /^(tcp|udp)(router|service)$/.test(route().kind || '')) refreshStreamCounters().catch(console.error);
        if (route().tab === 'cluster') loadCluster(2000).catch(console.error);
        if (route().tab === 'migration') loadMigration(api).catch(console.error);
        break;
    }
  };
}

document.getElementById('router-search').addEventListener('input', () => { firstPage('routers'); renderRouters(); });
initRevisions();
document.getElementById('sim-form').addEventListener('submit', (e) => simulate(e).catch((err) => { document.getElementById('sim-result').textContent = String(err); }));
overviewCharts = new LiveCharts('overview', '');
document.getElementById('overview-charts').append(overviewCharts.el);
rangeButtons(document.querySelector('.ranges[data-for=overview]'), overviewCharts);
sessionStorage.removeItem('gantry-dashboard-boot-failures'); // see boot.js
loadEntryPoints().then(showTab);
loadAllRetrying();
loadRevisions();
loadChanges();
connect();
