// The route simulator: which router a request would get, and why.

import { el } from './dom.js';
import { api, link } from './common.js';

// fillEntryPoints offers the entrypoints in the form, keeping the choice.
export function fillEntryPoints(eps) {
  const sel = document.getElementById('sim-ep');
  const cur = sel.value;
  sel.replaceChildren(...eps.map((e) => el('option', { value: e.name, selected: e.name === cur }, e.name)));
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
    el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, '#'), el('th', {}, 'Router'), el('th', {}, 'Priority'), el('th', {}, 'Rule'), el('th', {}, 'Matched'), el('th', {}, 'Why'))),
      el('tbody', {}, res.candidates.map((c, i) => el('tr', { 'data-router': c.router },
        el('td', {}, i + 1), el('td', {}, link('router', c.router)), el('td', {}, c.priority), el('td', { class: 'mono' }, c.rule),
        el('td', { class: c.matched ? 'up' : 'down' }, c.matched ? 'yes' : 'no'), el('td', {}, c.reason))))));
}
