// The overview's "Failing now": which router fails and why, worst first:
// disabled (its configuration error), servers down (which, and the reason
// first), servers answering 5xx (which, and their share), the router's own
// 5xx share over the last seconds. Statuses and reasons come from
// health.js, as on every other page.

import { el } from './dom.js';
import { link } from './common.js';
import { state } from './state.js';
import { routerState } from './health.js';

const score = { disabled: 4, down: 3, degraded: 1 };

export function renderFailing() {
  const rows = [];
  for (const r of state.routers) {
    if (r.name.endsWith('@internal')) continue;
    const st = routerState(r);
    if (!score[st.status]) continue;
    const why = st.status === 'disabled' ? ['disabled: ' + st.why.join('; ')] : st.why;
    rows.push({ r, st, why, score: score[st.status] });
  }
  rows.sort((a, b) => b.score - a.score || a.r.name.localeCompare(b.r.name));
  const box = document.getElementById('failing');
  box.replaceChildren(rows.length
    ? el('ul', { class: 'failing' }, rows.map((x) => el('li', { 'data-router': x.r.name, 'data-state': x.st.status, class: x.st.status },
      el('span', { class: 'status ' + x.st.status }, x.st.status), ' ', link('router', x.r.name), ' — ', x.why.join(' · '))))
    : el('p', { class: 'empty ok' }, 'Every router is healthy.'));
}
