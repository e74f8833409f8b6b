// The TCP/UDP tab.

import { el } from './dom.js';
import { getJSON, fill, link } from './common.js';
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

export async function loadTCPUDP() {
  const get = (p) => getJSON(p + '?per_page=1000').catch(() => []);
  const [tr, ts, tm, ur, us] = await Promise.all([get('tcp/routers'), get('tcp/services'), get('tcp/middlewares'), get('udp/routers'), get('udp/services')]);
  state.tcp = { routers: tr, services: ts, middlewares: tm };
  state.udp = { routers: ur, services: us };
  renderTCPUDP();
}
