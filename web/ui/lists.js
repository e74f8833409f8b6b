// The Problems, Entrypoints and Providers tabs: what is wrong, grouped by
// provider and source (file:line, label, tag, namespace/name), each
// problem linking the objects it names; the static and dynamic
// entrypoints with who asked for them; each provider's state.
import { el } from './dom.js';
import { fill, link, linkList } from './common.js';

export function renderProblems(ps) {
  ps = ps || [];
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

// renderEntryPoints lists the static and the dynamic entrypoints (asked
// for by a provider's label, tag or file), with who asked and the routers
// on each.
export function renderEntryPoints(entrypoints, routers) {
  const using = (name) => routers.filter((x) => (x.using || x.entryPoints || []).includes(name));
  fill(document.querySelector('#ep-list tbody'), entrypoints.map((e) => el('tr', { 'data-name': e.name, class: e.dynamic ? 'dynamic' : '' },
    el('td', {}, link('entrypoint', e.name)), el('td', { class: 'mono' }, e.address || ''),
    el('td', {}, e.dynamic ? el('span', { class: 'tag dyn' }, 'dynamic') : el('span', { class: 'tag' }, 'static')),
    el('td', {}, (e.requestedBy || []).map((q) => el('div', {}, el('strong', {}, q.provider), q.source ? [' ', el('span', { class: 'meta' }, q.source)] : null))),
    el('td', {}, linkList('router', using(e.name).map((x) => x.name), 20)))));
}

// renderProviders shows each provider's state, last update, restarts,
// last error and its problems' count.
export function renderProviders(list) {
  document.getElementById('provider-list').replaceChildren(...list.map((p) => el('div', { class: 'provider', 'data-name': p.name },
    el('h3', {}, p.name, ' ', el('span', { class: 'status ' + (p.state === 'ok' ? 'enabled' : p.state === 'error' || p.state === 'down' ? 'disabled' : 'warning') }, p.state)),
    el('div', {}, 'Last update: ', p.lastPublish ? new Date(p.lastPublish).toLocaleString() : 'never', ' · restarts: ', p.restarts || 0),
    p.lastError ? el('div', { class: 'err' }, 'Last error: ', p.lastError) : null,
    (p.problemList || []).length ? el('p', {}, el('a', { href: '#problems' }, (p.problemList || []).length + ' problems')) : null)));
}

// redirectNote says where entrypoint ep redirects every request
// (entryPoints.<name>.http.redirections); nothing ([]) when it does not.
export function redirectNote(ep) {
  const rd = ((ep.http || {}).redirections || {}).entryPoint;
  if (!rd) return [];
  return el('p', { class: 'redirects' }, 'Redirects every request to entrypoint ', link('entrypoint', rd.to), ' (', rd.scheme || 'https',
    rd.permanent === false ? ', temporary' : ', permanent', ')');
}
