// Routers, services and middlewares: the lists and their live columns.
// A router's and a service's status combines configuration and health
// (health.js); "Configuration errors" are the configuration's, "5xx share"
// the responses'.

import { el } from './dom.js';
import { fill, link, linkList } from './common.js';
import { state, statusCell, errorsCell } from './state.js';
import { routerState, serviceState, serverFacts, splitError, paint, refreshStates, trafficText } from './health.js';

// Lists show one page of PAGE rows (a table of 10 000 routers re-painted
// every second is not usable); pager draws "1–100 of 10 001" with the
// previous and next pages.
export const PAGE = 100;
const pages = { routers: 1, services: 1 };

function pageOf(tab, list) {
  const last = Math.max(1, Math.ceil(list.length / PAGE));
  pages[tab] = Math.min(Math.max(1, pages[tab]), last);
  const from = (pages[tab] - 1) * PAGE;
  return { rows: list.slice(from, from + PAGE), from, last };
}

function pager(tab, total, from, last, redraw) {
  const box = document.getElementById(tab + '-pager');
  if (!box) return;
  const go = (p) => el('button', { type: 'button', disabled: p < 1 || p > last, onclick: () => { pages[tab] = p; redraw(); } }, p < pages[tab] ? '‹ previous' : 'next ›');
  box.replaceChildren(total ? `${(from + 1).toLocaleString()}–${Math.min(from + PAGE, total).toLocaleString()} of ${total.toLocaleString()}` : 'none',
    ' ', go(pages[tab] - 1), ' ', go(pages[tab] + 1));
}

// firstPage shows the first page of tab's list (a new filter).
export function firstPage(tab) { pages[tab] = 1; }

// routerIndex finds a router by name once per list (a row asking
// state.routers.find would make a page quadratic).
let routerIdx = { list: null, map: new Map() };
export function routerNamed(name) {
  if (routerIdx.list !== state.routers) routerIdx = { list: state.routers, map: new Map(state.routers.map((r) => [r.name, r])) };
  return routerIdx.map.get(name);
}

// stateCell is the combined status of a router or service, kept current by
// refreshStates.
function stateCell(kind, name) {
  const td = el('td', { class: 'status', ['data-state-' + kind]: name });
  paint(td, kind === 'router' ? routerState(routerNamed(name)) : serviceState(name));
  return td;
}


function priorityText(r) {
  if (r.priority > 1e15) return 'max (internal)';
  if (r.priority) return String(r.priority);
  return (r.rule || '').length + ' (rule length)';
}

export function renderRouters() {
  const q = document.getElementById('router-search').value.toLowerCase();
  const list = state.routers.filter((r) => !q || r.name.toLowerCase().includes(q) || (r.rule || '').toLowerCase().includes(q));
  const { rows, from, last } = pageOf('routers', list);
  fill(document.querySelector('#routers tbody'), rows.map((r) => el('tr', { 'data-name': r.name },
    stateCell('router', r.name),
    el('td', { class: 'mono name' }, link('router', r.name), (r.error || []).map((e) => el('div', { class: 'err' }, e))),
    el('td', { class: 'mono rule' }, r.rule || ''),
    el('td', {}, (r.using || r.entryPoints || []).join(', ')),
    el('td', {}, (r.middlewares || []).map((m) => [link('middleware', m), ' '])),
    el('td', {}, r.service ? link('service', r.service) : ''),
    el('td', { class: 'priority' }, priorityText(r)),
    el('td', { class: 'rps' }), el('td', { class: 'errors' }), el('td', { class: 'latency' }))));
  pager('routers', list.length, from, last, renderRouters);
  renderRates();
}

export function renderRates() {
  for (const tr of document.querySelectorAll('#routers tbody tr')) {
    const r = state.rates[tr.dataset.name];
    tr.querySelector('.rps').textContent = r ? r.rps.toFixed(1) : '0.0';
    tr.querySelector('.errors').textContent = r ? (r.errorRatio * 100).toFixed(1) + '%' : '0.0%';
    tr.querySelector('.latency').textContent = r && r.rps > 0 ? `${r.p50ms.toFixed(1)} / ${r.p99ms.toFixed(1)}` : '–';
  }
  refreshStates(document.getElementById('routers'));
}

// ---- services ----
// serverLine is one server of a service in the list: health, URL, why it
// is down (the reason first, the whole error on hover), traffic.
function serverLine(service, url) {
  const f = serverFacts(service, url);
  const e = splitError(f.lastError);
  return el('div', { class: 'server', 'data-url': url, 'data-service': service },
    el('span', { class: 'health ' + (f.up ? 'up' : 'down') }, f.up ? 'UP' : 'DOWN'), ' ', el('span', { class: 'mono' }, url), ' ',
    el('span', { class: 'reason err', title: e.full }, !f.up && f.lastError ? e.reason : ''), ' ',
    el('span', { class: 'traffic meta' }, trafficText(f.traffic)), ' ',
    el('span', { class: 'inflight meta' }, f.inFlight + ' in flight'));
}

export function renderServices() {
  const { rows, from, last } = pageOf('services', state.services);
  fill(document.querySelector('#services tbody'), rows.map((s) => el('tr', { 'data-name': s.name },
    stateCell('service', s.name),
    el('td', {}, link('service', s.name)),
    el('td', {}, s.type || ''),
    el('td', {}, Object.keys(s.serverStatus || {}).slice(0, 20).map((url) => serverLine(s.name, url))),
    el('td', {}, linkList('router', s.usedBy, 20)),
    errorsCell(s.error))));
  pager('services', state.services.length, from, last, renderServices);
}

// renderInflight refreshes the services list's live parts in place.
export function renderInflight() {
  for (const d of document.querySelectorAll('#services .server')) d.replaceWith(serverLine(d.dataset.service, d.dataset.url));
  refreshStates(document.getElementById('services'));
}

// ---- middlewares ----
export function renderMiddlewares() {
  fill(document.querySelector('#middlewares tbody'), state.middlewares.map((m) => el('tr', { 'data-name': m.name },
    statusCell(m.status), el('td', {}, link('middleware', m.name)), el('td', {}, m.type || ''),
    el('td', {}, linkList('router', m.usedBy, 20)), errorsCell(m.error))));
}
