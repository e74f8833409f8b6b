// The overview's "Recent changes": each configuration change as the
// WebSocket's "config" messages announce it, filled after a page load from
// the stored revisions, with the objects it added, removed and changed.
import { el } from './dom.js';
import { getJSON, enc } from './common.js';

const changes = []; // {at, version, changes}, newest first

function changeParts(ch) {
  const parts = [];
  for (const kind of ['routers', 'services', 'middlewares']) {
    const c = (ch || {})[kind] || {};
    for (const what of ['added', 'removed', 'changed']) {
      for (const n of c[what] || []) parts.push(el('span', { class: what }, `${what} ${kind.slice(0, -1)} ${n}; `));
    }
  }
  return parts;
}

export function renderChangelog() {
  const ul = document.getElementById('changelog');
  const seen = new Set();
  const list = changes.filter((c) => !seen.has(c.version) && seen.add(c.version));
  ul.replaceChildren(...(list.length ? list.slice(0, 20).map((c) => {
    const parts = changeParts(c.changes);
    return el('li', { 'data-version': c.version }, el('span', { class: 'mono' }, new Date(c.at).toLocaleString() + ' ' + c.version.slice(0, 12) + ' '), parts.length ? parts : 'no object changes');
  }) : [el('li', { class: 'empty' }, 'no changes recorded yet')]));
}

// addChange records a "config" message's change and re-renders.
export function addChange(c) {
  changes.unshift(c);
  renderChangelog();
}

// loadHistory fills the recent changes from the stored revisions, so the
// list is not empty after a reload of the page or of Gantry.
export async function loadHistory() {
  let revs;
  try { revs = await getJSON('revisions?limit=11'); } catch { return; }
  const diffs = await Promise.all(revs.slice(0, -1).map((r, i) =>
    getJSON(`revisions/${enc(revs[i + 1].version)}/diff/${enc(r.version)}`).then((d) => ({ at: r.at, version: r.version, changes: d.changes })).catch(() => null)));
  const have = new Set(changes.map((c) => c.version));
  for (const d of diffs) if (d && !have.has(d.version)) changes.push(d);
  changes.sort((a, b) => new Date(b.at) - new Date(a.at));
  renderChangelog();
}
