// Object pages: a router, service, middleware or entrypoint (HTTP, TCP,
// UDP), with its route picture, live charts and definition.

import { el } from './dom.js';
import { byName, enc, link, linkList } from './common.js';
import { state, route } from './state.js';
import { routeFlow, serviceFlow } from './flow.js';
import { LiveCharts, rangeButtons } from './livecharts.js';
import { routerState, serviceState, leaves, splitError, paint, refreshStates } from './health.js';
import { tlsPanel } from './tls.js';
import { statsBlock } from './tcpudp.js';
import { redirectNote } from './lists.js';

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

// stateHeader is the header of an HTTP router or service page: its
// combined status and, under it, why (refreshed with every sample).
function stateHeader(kind, item, name) {
  const h = header(kind, item, name);
  if (!item) return h;
  const word = h.querySelector('h2 .status');
  word.setAttribute('data-state-' + kind, name);
  const why = el('ul', { class: 'why', ['data-why-' + kind]: name });
  const st = kind === 'router' ? routerState(item) : serviceState(name);
  paint(word, st);
  fillWhy(why, st);
  h.append(why);
  return h;
}

function fillWhy(ul, st) {
  ul.replaceChildren(...(st.status === 'enabled' ? [] : st.why.map((w) => el('li', { class: st.status }, w))));
}

// serversTable lists the servers behind a service with, for each, its
// health, why it is down (the reason first, the whole error on hover) and
// its traffic over the last seconds: requests/s, 5xx share, p50/p99.
function serversTable(service) {
  const rows = leaves(service).map((f) => {
    const e = splitError(f.lastError);
    const t = f.traffic;
    const idle = !t.samples || t.rps === 0;
    return el('tr', { 'data-row-server': f.url, class: !f.up || t.share > 0 ? 'bad' : '' },
      el('td', { class: 'health ' + (f.up ? 'up' : 'down') }, f.up ? 'UP' : 'DOWN'),
      el('td', { class: 'mono' }, f.url, el('div', { class: 'meta' }, f.service)),
      el('td', { class: 'reason err', title: e.full }, !f.up && f.lastError ? e.reason : ''),
      el('td', { class: 'num rps' }, idle ? '0.0' : t.rps.toFixed(1)),
      el('td', { class: 'num share' + (t.share > 0 ? ' err' : '') }, idle ? '–' : (100 * t.share).toFixed(0) + '%'),
      el('td', { class: 'num latency' }, idle ? '–' : `${t.p50.toFixed(1)} / ${t.p99.toFixed(1)}`),
      el('td', { class: 'num' }, String(f.inFlight)));
  });
  return el('table', { class: 'grid servers', 'data-servers-of': service },
    el('thead', {}, el('tr', {}, ['Health', 'Server', 'Why down', 'Req/s', '5xx share', 'p50 / p99 ms', 'In flight'].map((x) => el('th', {}, x)))),
    el('tbody', {}, rows.length ? rows : [el('tr', {}, el('td', { colSpan: 7, class: 'empty' }, 'no servers'))]));
}

// refreshLive updates the page's statuses, whys and server tables in
// place (each WebSocket sample).
export function refreshLive() {
  const body = document.getElementById('detail-body');
  if (!body || !detail) return;
  refreshStates(body);
  for (const ul of body.querySelectorAll('[data-why-router], [data-why-service]')) {
    const st = ul.dataset.whyRouter !== undefined ? routerState(state.routers.find((x) => x.name === ul.dataset.whyRouter)) : serviceState(ul.dataset.whyService);
    fillWhy(ul, st);
  }
  for (const t of body.querySelectorAll('[data-servers-of]')) t.replaceWith(serversTable(t.dataset.serversOf));
}

function chartBlock(charts) {
  const span = el('span', { class: 'ranges' }, el('button', { type: 'button', class: 'on', 'data-range': '15m' }, '15 min'), el('button', { type: 'button', 'data-range': '24h' }, '24 h'));
  rangeButtons(span, charts);
  return [el('div', { class: 'chart-head' }, el('h3', {}, 'Traffic'), span), charts.el];
}

export function renderDetail() {
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
      parts = [stateHeader('router', it, r.name)];
      if (it) {
        newCharts = charts || new LiveCharts('router', 'router=' + enc(r.name));
        parts.push(el('h3', {}, 'Route'), routeFlow(it, ctx), tlsPanel(it));
        if (it.service) parts.push(el('h3', {}, 'Servers'), serversTable(it.service));
        parts.push(chartBlock(newCharts), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'service': {
      const it = ctx.services[r.name];
      parts = [stateHeader('service', it, r.name)];
      if (it) {
        newCharts = charts || new LiveCharts('service', 'service=' + enc(r.name));
        parts.push(el('p', {}, 'Used by: ', linkList('router', it.usedBy)));
        parts.push(el('h3', {}, 'Sends to'), serviceFlow(r.name, ctx), el('h3', {}, 'Servers'), serversTable(r.name));
        parts.push(chartBlock(newCharts), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'middleware': {
      const it = ctx.middlewares[r.name];
      parts = [header('middleware', it, r.name)];
      if (it) parts.push(el('p', {}, 'Type: ', it.type || '', ' · used by: ', linkList('router', it.usedBy)), el('h3', {}, 'Definition'), definition(it));
      break;
    }
    case 'tcprouter': case 'udprouter': {
      const proto = r.kind.slice(0, 3);
      const list = state[proto];
      const it = list.routers.find((x) => x.name === r.name);
      parts = [header(proto.toUpperCase() + ' router', it, r.name)];
      if (it) {
        const pctx = { middlewares: byName(list.middlewares || []), services: byName(list.services), live: {}, proto };
        parts.push(el('h3', {}, 'Route'), routeFlow(it, pctx), tlsPanel(it), el('h3', {}, 'Live counters'), statsBlock(proto, 'router', r.name, it.stats),
          el('h3', {}, 'Definition'), definition(it));
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
        if (what === 'service') {
          parts.push(el('h3', {}, 'Sends to'), serviceFlow(r.name, { middlewares: {}, services: byName(list.services), live: {}, proto }));
          parts.push(el('h3', {}, 'Live counters (the routers using it, summed)'), statsBlock(proto, 'service', r.name, it.stats));
        }
        parts.push(el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'entrypoint': {
      const it = state.entrypoints.find((x) => x.name === r.name);
      parts = [header('entrypoint', it ? { status: 'enabled' } : null, r.name)];
      if (it) {
        parts.push(el('p', {}, 'Address: ', el('span', { class: 'mono' }, it.address || ''), ' · ', it.dynamic ? el('span', { class: 'tag dyn' }, 'dynamic') : 'static'));
        parts.push(redirectNote(it));
        if (it.dynamic) parts.push(el('p', {}, 'Asked for by: ', (it.requestedBy || []).map((q) => [el('strong', {}, q.provider), q.source ? ' (' + q.source + ')' : '', ' ']), (it.requestedBy || []).length ? '' : 'no provider any more (draining)'));
        parts.push(el('p', {}, 'Routers: ', linkList('router', state.routers.filter((x) => (x.using || x.entryPoints || []).includes(r.name)).map((x) => x.name))));
        parts.push(el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
  }
  detail = { kind: r.kind, name: r.name, charts: newCharts };
  body.replaceChildren(...parts.flat().filter(Boolean));
}

// closeDetail forgets the object page (another tab is shown).
export function closeDetail() { detail = null; }

// reloadDetailCharts re-reads the shown page's charts from /api/series.
export function reloadDetailCharts() {
  if (detail && detail.charts) detail.charts.load();
}

// pushDetail extends the shown object page's charts with one sample.
export function pushDetail(t, st) {
  refreshLive();
  if (!detail || !detail.charts) return;
  const src = detail.kind === 'router' ? st.routers : st.services;
  detail.charts.push(t, (src || {})[detail.name]);
}
