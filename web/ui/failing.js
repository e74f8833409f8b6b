// The overview's "Failing now": which router fails and why.

import { el } from './dom.js';
import { byName, link } from './common.js';
import { state } from './state.js';

// failing lists the routers someone should look at, worst first, each with
// why: disabled (its error), servers down (which, and their last error),
// or answering 5xx (share over the last 10 seconds).
export function renderFailing() {
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
