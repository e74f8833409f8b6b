// The route simulator: which router a request would get, and why, and
// then everything that applies to it: the winning router's route picture
// (entrypoint, router, its middlewares in order, service), the
// entrypoint's redirection router ("web-to-websecure@internal") included.

import { el } from './dom.js';
import { api, byName, link } from './common.js';
import { state } from './state.js';
import { routeFlow } from './flow.js';

// httpScore ranks an entrypoint as the simulator's default: the number of
// HTTP routers (not Gantry's own) on it; UDP entrypoints and the API's
// own ("traefik") never win.
function httpScore(e) {
  if (/\/udp$/i.test(e.address || '') || e.name === 'traefik') return -1;
  return state.routers.filter((r) => !r.name.endsWith('@internal') && (r.using || r.entryPoints || []).includes(e.name)).length;
}

// defaultEntryPoint is the HTTP entrypoint with the most routers (the
// first by name on a tie): never a TCP-only or UDP one just because its
// name sorts first.
export function defaultEntryPoint(eps) {
  let best = null, score = -2;
  for (const e of eps) {
    const s = httpScore(e);
    if (s > score) { best = e; score = s; }
  }
  return best ? best.name : '';
}

// fillEntryPoints offers the entrypoints in the form, keeping a choice
// the user made, else the default.
export function fillEntryPoints(eps) {
  const sel = document.getElementById('sim-ep');
  const cur = sel.dataset.chosen ? sel.value : defaultEntryPoint(eps);
  sel.replaceChildren(...eps.map((e) => el('option', { value: e.name, selected: e.name === cur }, e.name)));
  sel.value = cur;
  sel.onchange = () => { sel.dataset.chosen = 'true'; };
}

// applied shows what serves the request once the winner is known.
function applied(winner) {
  const r = state.routers.find((x) => x.name === winner);
  if (!r) return el('p', { class: 'meta' }, 'The winning router is not in the HTTP router list.');
  const mws = r.middlewares || [];
  return el('div', { class: 'sim-applied', 'data-router': winner },
    el('h3', {}, 'What applies'),
    el('p', {}, 'Middlewares, in order: ', mws.length ? mws.map((m, i) => [i ? ' → ' : '', link('middleware', m)]) : 'none',
      ' · service: ', r.service ? link('service', r.service) : 'none'),
    routeFlow(r, { middlewares: byName(state.middlewares), services: byName(state.services), live: Object.fromEntries(state.servers.map((s) => [s.url, s])) }));
}

export async function simulate(ev) {
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
    res.winner ? applied(res.winner) : null,
    el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, '#'), el('th', {}, 'Router'), el('th', {}, 'Priority'), el('th', {}, 'Rule'), el('th', {}, 'Matched'), el('th', {}, 'Why'))),
      el('tbody', {}, res.candidates.map((c, i) => el('tr', { 'data-router': c.router },
        el('td', {}, i + 1), el('td', {}, link('router', c.router)), el('td', {}, c.priority), el('td', { class: 'mono' }, c.rule),
        el('td', { class: c.matched ? 'up' : 'down' }, c.matched ? 'yes' : 'no'), el('td', {}, c.reason))))));
}
