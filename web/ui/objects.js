// Routers, services and middlewares: the lists and their live columns.

import { el } from './dom.js';
import { fill, link } from './common.js';
import { state, statusCell, errorsCell } from './state.js';

function priorityText(r) {
  if (r.priority > 1e15) return 'max (internal)';
  if (r.priority) return String(r.priority);
  return (r.rule || '').length + ' (rule length)';
}

export function renderRouters() {
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

export function renderRates() {
  for (const tr of document.querySelectorAll('#routers tbody tr')) {
    const r = state.rates[tr.dataset.name];
    tr.querySelector('.rps').textContent = r ? r.rps.toFixed(1) : '0.0';
    tr.querySelector('.errors').textContent = r ? (r.errorRatio * 100).toFixed(1) + '%' : '0.0%';
    tr.querySelector('.latency').textContent = r && r.rps > 0 ? `${r.p50ms.toFixed(1)} / ${r.p99ms.toFixed(1)}` : '–';
  }
}

// ---- services ----
function liveServer(url) { return state.servers.find((x) => x.url === url); }
export function renderServices() {
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
export function renderInflight() {
  for (const d of document.querySelectorAll('#services .server')) {
    d.querySelector('.inflight').textContent = ((liveServer(d.dataset.url) || {}).inFlight || 0) + ' in flight';
  }
}

// ---- middlewares ----
export function renderMiddlewares() {
  fill(document.querySelector('#middlewares tbody'), state.middlewares.map((m) => el('tr', { 'data-name': m.name },
    statusCell(m.status), el('td', {}, link('middleware', m.name)), el('td', {}, m.type || ''),
    el('td', {}, (m.usedBy || []).map((n) => [link('router', n), ' '])), errorsCell(m.error))));
}
