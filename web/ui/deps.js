// Outages of what Gantry depends on — a provider's source (the Consul
// agent, the Docker endpoint, the Kubernetes API), a middleware's backend
// (Redis), the cluster registration, an ACME CA — shown first on the
// overview and atop the Problems tab: what is down, the reason first, since
// when, and what keeps serving meanwhile. From /api/providers (states,
// backends included) and /api/problems (the ACME resolvers' failures).

import { el } from './dom.js';
import { state } from './state.js';
import { splitError } from './health.js';

const BAD = new Set(['down', 'error']);

// outages lists {name, what, reason, full, since, effect}.
function outages() {
  const out = [];
  for (const p of state.providers || []) {
    if (!BAD.has(p.state)) continue;
    const e = splitError(p.lastError || p.state);
    const backend = p.name.startsWith('redis ') || p.name === 'cluster registration';
    out.push({
      name: p.name, reason: e.reason, full: p.lastError || '', since: p.lastErrorAt,
      effect: backend ? (p.name.startsWith('redis ') ? 'rate limits using it answer 500' : 'this instance is not registered')
        : p.state === 'down' ? 'its last configuration keeps serving' : 'restarting; its last configuration keeps serving',
    });
  }
  for (const p of state.problems || []) {
    if (p.provider !== 'acme' || p.severity !== 'error') continue;
    const e = splitError(p.message);
    out.push({ name: 'ACME ' + (p.source || ''), reason: e.reason, full: p.message, effect: 'certificates already held keep serving' });
  }
  return out;
}

function item(o) {
  return el('li', { 'data-dep': o.name },
    el('strong', { class: 'mono' }, o.name), ' ', el('span', { class: 'status down' }, 'unreachable'), ': ',
    el('span', { class: 'reason', title: o.full }, o.reason),
    o.since ? el('span', { class: 'meta' }, ' · since ' + new Date(o.since).toLocaleTimeString()) : null,
    el('span', { class: 'meta' }, ' · ' + o.effect));
}

// renderDeps fills the overview's and the Problems tab's dependency boxes.
export function renderDeps() {
  const list = outages();
  const fillBox = (box, quietOK) => {
    if (!box) return;
    box.dataset.outages = String(list.length);
    if (!list.length) {
      const names = (state.providers || []).map((p) => p.name);
      box.className = 'deps ok';
      box.replaceChildren(quietOK || !names.length ? '' : el('p', { class: 'meta' }, 'Dependencies reachable: ', names.join(', ')));
      return;
    }
    box.className = 'deps bad';
    box.replaceChildren(el('h2', {}, list.length === 1 ? 'A dependency is down' : `${list.length} dependencies are down`),
      el('ul', {}, list.map(item)));
  };
  fillBox(document.getElementById('deps'), false);
  fillBox(document.getElementById('problem-deps'), true);
}
