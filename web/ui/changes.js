// The overview's "Recent changes": every application of a configuration,
// newest first, in order, with the HTTP objects it added, removed and
// changed against the application before it. A version applied again
// (A→B→C→B) is listed each time it was applied. Read from the stored
// revisions (GET /api/revisions, re-read on each "config" message);
// without a store, the WebSocket's "config" messages since the page loaded.
import { el } from './dom.js';
import { getJSON } from './common.js';

const LIMIT = 20;
let stored = null; // /api/revisions (newest first); null: no store
const live = []; // {at, version, changes} from "config" messages, newest first

// SHOWN is the most objects one change names: a change adding 10 000
// routers says the first ones and how many more (the Revisions tab
// compares the two whole configurations).
const SHOWN = 20;

function changeParts(ch) {
  const parts = [];
  let more = 0;
  for (const kind of ['routers', 'services', 'middlewares']) {
    const c = (ch || {})[kind] || {};
    for (const what of ['added', 'removed', 'changed']) {
      for (const n of c[what] || []) {
        if (parts.length < SHOWN) parts.push(el('span', { class: what }, `${what} ${kind.slice(0, -1)} ${n}; `));
        else more++;
      }
    }
  }
  if (more) parts.push(el('a', { class: 'meta more', href: '#revisions' }, `and ${more.toLocaleString()} more changes (Revisions compares them)`));
  return parts;
}

function renderChangelog() {
  const ul = document.getElementById('changelog');
  const list = stored || live;
  ul.replaceChildren(...(list.length ? list.slice(0, LIMIT).map((c) => {
    const parts = changeParts(c.changes);
    const none = c.changes ? 'same HTTP objects (TCP/UDP, TLS, problems or sources changed)' : 'oldest kept revision';
    return el('li', { 'data-version': c.version, 'data-seq': c.seq ?? '', class: c.current ? 'current' : '' },
      el('span', { class: 'mono' }, new Date(c.at).toLocaleString() + (c.seq ? ' #' + c.seq : '') + ' ' + c.version.slice(0, 12) + ' '),
      parts.length ? parts : el('span', { class: 'meta' }, none));
  }) : [el('li', { class: 'empty' }, 'no changes recorded yet')]));
}

// addChange records a "config" message's change; shown only without a
// store (with one, loadChanges re-reads the revisions).
export function addChange(c) {
  live.unshift(c);
  if (live.length > LIMIT) live.pop();
  if (!stored) renderChangelog();
}

// loadChanges re-reads the stored revisions, so the list survives a
// reload of the page or of Gantry and never drops an application.
export async function loadChanges() {
  try { stored = await getJSON('revisions?limit=' + LIMIT); } catch { stored = null; }
  renderChangelog();
}
