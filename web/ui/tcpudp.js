// The TCP/UDP tab.

import { el } from './dom.js';
import { getAll, fill, link } from './common.js';
import { state, statusCell, errorsCell } from './state.js';

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

export function statCells(st, udp) {
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
  const servers = (s) => el('td', { class: 'mono' }, (s.weighted ? (s.weighted.services || []).map((c) => el('div', {}, link(s.proto + 'service', c.name), ' weight ' + (c.weight ?? 1)))
    : ((s.loadBalancer && s.loadBalancer.servers) || []).map((x) => el('div', {}, x.address || ''))));
  const used = (s, proto) => el('td', {}, (s.usedBy || []).map((n) => [link(proto + 'router', n), ' ']));
  fill(document.querySelector('#tcp-services tbody'), state.tcp.services.map((s) => el('tr', { 'data-name': s.name },
    statusCell(s.status), el('td', {}, link('tcpservice', s.name)), el('td', {}, s.type || ''), servers({ ...s, proto: 'tcp' }), used(s, 'tcp'),
    ...statCells(s.stats, false), errorsCell(s.error))));
  fill(document.querySelector('#tcp-middlewares tbody'), state.tcp.middlewares.map((m) => el('tr', { 'data-name': m.name },
    statusCell(m.status), el('td', {}, link('tcpmiddleware', m.name)), el('td', {}, m.type || ''), used(m, 'tcp'), errorsCell(m.error))));
  fill(document.querySelector('#udp-services tbody'), state.udp.services.map((s) => el('tr', { 'data-name': s.name },
    statusCell(s.status), el('td', {}, link('udpservice', s.name)), el('td', {}, s.type || ''), servers({ ...s, proto: 'udp' }), used(s, 'udp'),
    ...statCells(s.stats, true), errorsCell(s.error))));
}

// statsBlock is the live counters of a TCP/UDP router or service page,
// kept current by refreshStreamCounters.
export function statsBlock(proto, kind, name, st) {
  const udp = proto === 'udp';
  const heads = udp ? ['Sessions open', 'Sessions total', 'Datagrams in / out', 'Bytes in / out'] : ['Connections open', 'Connections total', 'Bytes in / out'];
  return el('table', { class: 'grid counters', 'data-counters': proto + kind + '/' + name },
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', {}, h)))), el('tbody', {}, el('tr', {}, statCells(st, udp))));
}

// refreshStreamCounters re-reads the TCP/UDP lists and rewrites every
// counters table on the page (each WebSocket sample while a TCP/UDP page
// is shown).
export async function refreshStreamCounters() {
  await loadTCPUDP();
  for (const t of document.querySelectorAll('[data-counters]')) {
    const [kind, name] = [t.dataset.counters.slice(0, t.dataset.counters.indexOf('/')), t.dataset.counters.slice(t.dataset.counters.indexOf('/') + 1)];
    const proto = kind.slice(0, 3);
    const list = kind.endsWith('router') ? state[proto].routers : state[proto].services;
    const it = list.find((x) => x.name === name);
    if (it) t.querySelector('tbody tr').replaceChildren(...statCells(it.stats, proto === 'udp'));
  }
}

// loadTCPUDP reads the TCP and UDP lists; a failed read throws and keeps
// the lists last read (loadAll tries again: empty tables would say there
// are no TCP or UDP routers).
export async function loadTCPUDP() {
  const [tr, ts, tm, ur, us] = await Promise.all(['tcp/routers', 'tcp/services', 'tcp/middlewares', 'udp/routers', 'udp/services'].map((p) => getAll(p)));
  state.tcp = { routers: tr, services: ts, middlewares: tm };
  state.udp = { routers: ur, services: us };
  renderTCPUDP();
}
