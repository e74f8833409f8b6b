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
import { compare, lineDiff, hunks } from './diff.js';
import { loadMigration } from './migration.js';

const api = (p) => new URL('../api/' + p, location.href);

const state = {
  version: '', rates: {}, servers: [], changes: [], problems: [],
  routers: [], services: [], middlewares: [], entrypoints: [],
  tcp: { routers: [], services: [], middlewares: [] }, udp: { routers: [], services: [] },
  recent: {}, // router name -> last 10 samples of its rate
  static: null, // /api/static; null: not reported
};

async function getJSON(path) {
  const r = await fetch(api(path), { headers: { Accept: 'application/json' } });
  if (!r.ok) throw new Error(path + ': ' + r.status);
  return r.json();
}

const byName = (list) => Object.fromEntries(list.map((x) => [x.name, x]));
const enc = encodeURIComponent;

function fill(tbody, rows) { tbody.replaceChildren(...rows); }
function statusCell(s) { return el('td', { class: 'status ' + (s || '') }, s || ''); }
function errorsCell(errs) { return el('td', {}, (errs || []).map((e) => el('div', { class: 'err' }, e))); }
function link(kind, name) { return el('a', { href: `#${kind}/${enc(name)}`, class: 'mono' }, name); }

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

function changeParts(ch) {
  const parts = [];
  for (const kind of ['routers', 'services', 'middlewares']) {
    const c = (ch || {})[kind] || {};
    for (const what of ['added', 'removed', 'changed']) {
      for (const n of c[what] || []) parts.push(el('span', { class: what }, `${what} ${kind.slice(0, -1)} ${n}; `));
    }
  }
  return parts;
}

function renderChangelog() {
  const ul = document.getElementById('changelog');
  const seen = new Set();
  const list = state.changes.filter((c) => !seen.has(c.version) && seen.add(c.version));
  ul.replaceChildren(...(list.length ? list.slice(0, 20).map((c) => {
    const parts = changeParts(c.changes);
    return el('li', { 'data-version': c.version }, el('span', { class: 'mono' }, new Date(c.at).toLocaleString() + ' ' + c.version.slice(0, 12) + ' '), parts.length ? parts : 'no object changes');
  }) : [el('li', { class: 'empty' }, 'no changes recorded yet')]));
}

// loadHistory fills the recent changes from the stored revisions, so the
// list is not empty after a reload of the page or of Gantry.
async function loadHistory() {
  let revs;
  try { revs = await getJSON('revisions?limit=11'); } catch { return; }
  const diffs = await Promise.all(revs.slice(0, -1).map((r, i) =>
    getJSON(`revisions/${enc(revs[i + 1].version)}/diff/${enc(r.version)}`).then((d) => ({ at: r.at, version: r.version, changes: d.changes })).catch(() => null)));
  const have = new Set(state.changes.map((c) => c.version));
  for (const d of diffs) if (d && !have.has(d.version)) state.changes.push(d);
  state.changes.sort((a, b) => new Date(b.at) - new Date(a.at));
  renderChangelog();
}

// ---- problems ----
function renderProblems() {
  const ps = state.problems || [];
  const badge = document.getElementById('problem-badge');
  badge.textContent = ps.length;
  badge.className = 'count ' + (ps.length ? 'some' : 'zero');
  const groups = {};
  for (const p of ps) {
    const prov = p.provider || 'gantry';
    const src = p.source || '';
    ((groups[prov] ||= {})[src] ||= []).push(p);
  }
  const box = document.getElementById('problem-groups');
  if (!ps.length) { box.replaceChildren(el('p', { class: 'empty ok' }, 'no problems')); return; }
  box.replaceChildren(...Object.keys(groups).sort().map((prov) => {
    const srcs = groups[prov];
    const n = Object.values(srcs).reduce((a, l) => a + l.length, 0);
    return el('div', { class: 'pgroup', 'data-provider': prov },
      el('h3', {}, prov, ' ', el('span', { class: 'count some' }, n)),
      Object.keys(srcs).sort().map((src) => el('div', { class: 'psource', 'data-source': src },
        el('div', { class: 'mono src' }, src || '(no source)'),
        el('ul', {}, srcs[src].map((p) => el('li', { class: p.severity },
          el('span', { class: 'sev ' + p.severity }, p.severity), ' ',
          (p.objects || []).map((o) => [problemObject(o), ' ']),
          p.message))))));
  }));
}

function objLink(kind, name) {
  return ['router', 'service', 'middleware'].includes(kind) ? link(kind, name) : el('span', { class: 'mono' }, kind + ' ' + name);
}

// problemObject links "router web@file" or "tcp router db@file".
function problemObject(o) {
  const w = o.split(' ');
  if ((w[0] === 'tcp' || w[0] === 'udp') && w.length > 2) return link(w[0] + w[1], w.slice(2).join(' '));
  return objLink(w[0], w.slice(1).join(' '));
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

// ---- certificates ----
// renderCertificates shows each certificate, from ACME resolvers and from
// the configuration's tls section (resolver "file"): its hosts, issuer,
// resolver, the days left as a bar (full at 90 days; red under 7, amber
// under 30) and its renewal state with the last error.
function renderCertificates(list) {
  const box = document.getElementById('cert-list');
  if (!list.length) { box.replaceChildren(el('p', { class: 'empty' }, 'No certificates: none in tls.certificates and no ACME resolver.')); return; }
  const day = 24 * 3600 * 1000;
  box.replaceChildren(el('table', { class: 'grid' },
    el('thead', {}, el('tr', {}, ['Hosts', 'Issuer', 'Resolver', 'Expires in', 'State', 'Used by'].map((h) => el('th', {}, h)))),
    el('tbody', {}, list.map((c) => {
      const days = c.notAfter ? Math.floor((Date.parse(c.notAfter) - Date.now()) / day) : null;
      const cls = days === null ? 'none' : days < 7 ? 'bad' : days < 30 ? 'soon' : 'fine';
      return el('tr', { 'data-cert': c.main, 'data-state': c.state },
        el('td', { class: 'mono' }, [c.main, ...(c.sans || [])].join(', ')),
        el('td', {}, c.issuer || '–'),
        el('td', { class: 'mono' }, c.resolver || 'file'),
        el('td', {}, days === null ? 'no certificate yet' : el('div', { class: 'expiry ' + cls, title: c.notAfter },
          bar(Math.max(2, Math.min(100, (days / 90) * 100))), el('span', {}, days + ' days'))),
        el('td', {}, el('span', { class: 'status ' + (c.state === 'valid' ? 'enabled' : c.state === 'failed' || c.state === 'expired' ? 'disabled' : 'warning') }, c.state),
          c.renewAt ? el('div', { class: 'meta' }, 'renews ' + new Date(c.renewAt).toLocaleDateString()) : null,
          !c.resolver ? el('div', { class: 'meta' }, 'not renewed by Gantry (replace the file)') : null,
          c.lastError ? el('div', { class: 'err' }, c.lastError) : null),
        el('td', {}, (c.usedBy || []).map((u) => [u.includes('@') ? link('router', u) : u, ' '])));
    }))));
}

// bar is a bar pct% wide, sized through the CSSOM (the UI's CSP allows no
// inline style attributes).
function bar(pct) {
  const b = el('div', { class: 'bar' });
  b.style.width = pct + '%';
  return b;
}

async function loadCertificates() {
  try { renderCertificates(await getJSON('tls/certificates')); } catch { renderCertificates([]); }
}

// ---- cluster ----
// renderCluster shows every instance registered in Consul (cluster.consul):
// its ID (this one marked), address, the configuration version it serves,
// its health check, and whether it agrees with the version most passing
// instances serve; the summary says in one line whether they all agree.
// The tab exists only when the API has a cluster (GET /api/cluster is 404
// without cluster.consul).
function renderCluster(cs) {
  const tab = document.getElementById('cluster-tab');
  const summary = document.getElementById('cluster-summary');
  const tbody = document.querySelector('#cluster-list tbody');
  tab.hidden = false;
  if (cs.error) {
    summary.replaceChildren(el('p', { class: 'err', id: 'cluster-state', 'data-agree': 'unknown' }, 'Consul does not answer: ' + cs.error));
    return;
  }
  const passing = cs.instances.filter((i) => i.status === 'passing');
  const counts = {};
  for (const i of passing) counts[i.configVersion] = (counts[i.configVersion] || 0) + 1;
  const majority = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] || '';
  const short = (v) => (v || '–').slice(0, 12);
  const odd = cs.instances.filter((i) => i.status === 'passing' && i.configVersion !== majority).length;
  const badge = document.getElementById('cluster-badge');
  badge.textContent = String(odd);
  badge.className = 'count ' + (odd ? 'some' : 'zero');
  summary.replaceChildren(el('p', { id: 'cluster-state', 'data-agree': String(cs.agree), class: cs.agree ? 'empty ok' : 'err big' },
    cs.agree
      ? `All ${passing.length} passing instances of ${cs.service} serve configuration ${short(majority)}.`
      : `Instances of ${cs.service} disagree: ` + Object.entries(counts).map(([v, n]) => `${short(v)} on ${n}`).join(', ') + '.'));
  fill(tbody, cs.instances.map((i) => {
    const agrees = i.status !== 'passing' ? null : i.configVersion === majority;
    return el('tr', { 'data-instance': i.id, 'data-agree': agrees === null ? 'n/a' : String(agrees), class: agrees === false ? 'disagree' : '' },
      el('td', { class: 'mono' }, i.id, i.self ? el('span', { class: 'meta' }, ' (this instance)') : null),
      el('td', { class: 'mono' }, i.address + (i.port ? ':' + i.port : '')),
      el('td', { class: 'mono', title: i.configVersion }, short(i.configVersion)),
      el('td', { class: 'status ' + (i.status === 'passing' ? 'enabled' : i.status === 'warning' ? 'warning' : 'disabled') }, i.status),
      el('td', { class: agrees === false ? 'err' : 'meta' }, agrees === null ? 'not counted (not passing)' : agrees ? 'yes' : 'no: serves another version'));
  }));
}

let clusterOn = true; // false once the API said there is no cluster
let clusterAt = 0;
async function loadCluster() {
  if (!clusterOn) return;
  clusterAt = Date.now();
  const r = await fetch(api('cluster'), { headers: { Accept: 'application/json' } });
  if (r.status === 404) { clusterOn = false; return; }
  const body = await r.json().catch(() => ({}));
  renderCluster(r.ok ? body : { error: body.message || r.status });
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

// ---- static configuration ----
// The last live reload of the static configuration is a problem when it
// did not load (invalid) or left changes unapplied (refused, partial):
// the running static configuration is then not what the file says.
const staticBad = (rl) => !!rl && ['invalid', 'refused', 'partial'].includes(rl.outcome);
const outcomeClass = { applied: 'enabled', unchanged: 'muted', partial: 'warning', refused: 'disabled', invalid: 'disabled' };
const changeText = (c) => c.path + ' ' + c.kind;

// staticCard is the overview's card: the static revision and the last
// reload's outcome, red when it is a problem.
function staticCard() {
  const st = state.static;
  if (!st) return null;
  const last = (st.reloads || [])[0];
  const bad = staticBad(last);
  return el('a', { class: 'card' + (bad ? ' bad' : ''), id: 'card-static', href: '#static' }, el('div', {}, 'Static configuration'),
    el('div', { class: 'n' + (bad ? ' error' : '') }, 'rev ' + st.revision),
    el('div', { class: 'sub' }, last
      ? el('span', { class: 'status ' + (outcomeClass[last.outcome] || '') }, 'last reload ' + last.outcome + ' (' + last.trigger + ', ' + new Date(last.at).toLocaleTimeString() + ')')
      : el('span', {}, 'not reloaded since start')),
    bad ? el('div', { class: 'err' }, last.error || (last.refused || []).map((r) => changeText(r) + ': ' + r.reason).join('; ')) : null);
}

// renderStatic shows /api/static: revision, file, and each reload with
// its trigger, outcome, what it applied, what it refused and why, and why
// the file did not load.
function renderStatic() {
  const st = state.static;
  const last = st && (st.reloads || [])[0];
  const bad = staticBad(last);
  const badge = document.getElementById('static-badge');
  badge.textContent = bad ? 1 : 0;
  badge.className = 'count ' + (bad ? 'some' : 'zero');
  const sum = document.getElementById('static-summary');
  if (!st) { sum.replaceChildren(el('p', { class: 'empty' }, 'Static configuration reloads are not reported.')); return; }
  sum.replaceChildren(
    el('p', { class: 'big' }, 'Revision ', st.revision, st.since ? ' · since ' + new Date(st.since).toLocaleString() : ''),
    st.file ? el('p', {}, 'File: ', el('span', { class: 'mono' }, st.file), ' (reloaded on SIGHUP and when it changes)') : el('p', { class: 'meta' }, 'No file: reloaded on SIGHUP'),
    bad ? el('div', { class: 'errbox', id: 'static-problem' }, 'The last reload was ', el('strong', {}, last.outcome),
      ': the running static configuration is not what the file says. ', last.error || (last.refused || []).map((r) => changeText(r) + ' (' + r.reason + ')').join('; ')) : '',
    (st.reloads || []).length ? '' : el('p', { class: 'empty ok' }, 'No reload since start.'));
  fill(document.querySelector('#static-reloads tbody'), (st.reloads || []).map((rl) => el('tr', { class: staticBad(rl) ? 'bad' : '', 'data-outcome': rl.outcome },
    el('td', {}, rl.revision), el('td', {}, new Date(rl.at).toLocaleString()), el('td', {}, rl.trigger),
    el('td', { class: 'status ' + (outcomeClass[rl.outcome] || '') }, rl.outcome),
    el('td', { class: 'mono' }, (rl.applied || []).map((c) => el('div', { class: 'added' }, changeText(c)))),
    el('td', {}, (rl.refused || []).map((r) => el('div', {}, el('span', { class: 'mono removed' }, changeText(r)), ' ', el('span', { class: 'err' }, r.reason)))),
    el('td', { class: 'err' }, rl.error || ''))));
}

async function loadStatic() {
  const r = await fetch(api('static'), { headers: { Accept: 'application/json' } });
  state.static = r.ok ? await r.json() : null;
  renderStatic();
}

// ---- entrypoints ----
// renderEntryPoints lists the static and the dynamic entrypoints (asked
// for by a provider's label, tag or file), with who asked and the routers
// on each.
function renderEntryPoints() {
  const using = (name) => state.routers.filter((x) => (x.using || x.entryPoints || []).includes(name));
  fill(document.querySelector('#ep-list tbody'), state.entrypoints.map((e) => el('tr', { 'data-name': e.name, class: e.dynamic ? 'dynamic' : '' },
    el('td', {}, link('entrypoint', e.name)), el('td', { class: 'mono' }, e.address || ''),
    el('td', {}, e.dynamic ? el('span', { class: 'tag dyn' }, 'dynamic') : el('span', { class: 'tag' }, 'static')),
    el('td', {}, (e.requestedBy || []).map((q) => el('div', {}, el('strong', {}, q.provider), q.source ? [' ', el('span', { class: 'meta' }, q.source)] : null))),
    el('td', {}, using(e.name).map((x) => [link('router', x.name), ' '])))));
}

// ---- providers ----
function renderProviders(list) {
  document.getElementById('provider-list').replaceChildren(...list.map((p) => el('div', { class: 'provider', 'data-name': p.name },
    el('h3', {}, p.name, ' ', el('span', { class: 'status ' + (p.state === 'ok' ? 'enabled' : p.state === 'error' || p.state === 'down' ? 'disabled' : 'warning') }, p.state)),
    el('div', {}, 'Last update: ', p.lastPublish ? new Date(p.lastPublish).toLocaleString() : 'never', ' · restarts: ', p.restarts || 0),
    p.lastError ? el('div', { class: 'err' }, 'Last error: ', p.lastError) : null,
    (p.problemList || []).length ? el('p', {}, el('a', { href: '#problems' }, (p.problemList || []).length + ' problems')) : null)));
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

// showDiff compares two revisions' merged configurations: one block per
// object that differs, headed by what changed and the provider that caused
// it, with a unified diff of its definition (both already redacted).
async function showDiff() {
  const a = document.querySelector('input[name=rev-a]:checked');
  const b = document.querySelector('input[name=rev-b]:checked');
  const out = document.getElementById('diff');
  if (!a || !b) { out.textContent = 'Pick two revisions.'; return; }
  const [ra, rb] = await Promise.all([getJSON(`revisions/${enc(a.value)}`), getJSON(`revisions/${enc(b.value)}`)]);
  const full = document.getElementById('diff-full').checked;
  const changes = compare(ra.config, rb.config);
  const blocks = changes.map((c) => {
    let lines = lineDiff(c.before, c.after);
    if (!full) lines = hunks(lines);
    return el('div', { class: 'dblock', 'data-object': c.key },
      el('div', { class: 'dtitle' }, el('span', { class: c.kind }, c.kind), ' ', el('span', { class: 'mono' }, c.key), ' ',
        el('span', { class: 'provider-tag' }, 'by ' + (c.provider || 'unknown'))),
      el('pre', { class: 'mono udiff' }, lines.map((l) => el('div', { class: 'l' + (l.op === '+' ? ' add' : l.op === '-' ? ' del' : l.op === '@' ? ' cut' : '') }, (l.op === '@' ? '' : l.op + ' ') + l.text))));
  });
  out.replaceChildren(
    el('h3', {}, `${ra.version.slice(0, 12)} (${new Date(ra.at).toLocaleString()}) → ${rb.version.slice(0, 12)} (${new Date(rb.at).toLocaleString()})`),
    blocks.length ? el('div', { id: 'diff-table' }, blocks) : el('p', { class: 'empty' }, 'No differences.'));
}

// ---- simulator ----
async function loadEntryPoints() {
  let eps = [];
  try { eps = await getJSON('entrypoints'); } catch { /* keep empty */ }
  state.entrypoints = eps;
  renderEntryPoints();
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
  renderProblems();
  renderRouters();
  renderServices();
  renderMiddlewares();
  renderProviders(ps);
  renderFailing();
  renderEntryPoints();
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
  renderProblems();
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
        if (m.changes) { state.changes.unshift({ at: m.at, version: m.version, changes: m.changes }); renderChangelog(); }
        if (m.problems) { state.problems = m.problems; renderProblems(); }
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
        if (route().tab === 'cluster' && Date.now() - clusterAt > 2000) loadCluster().catch(console.error);
        if (route().tab === 'migration') loadMigration(api).catch(console.error);
        break;
    }
  };
}

document.getElementById('router-search').addEventListener('input', renderRouters);
document.getElementById('diff-btn').addEventListener('click', () => showDiff().catch((e) => { document.getElementById('diff').textContent = String(e); }));
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
