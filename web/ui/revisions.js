// The Revisions tab: the stored configuration revisions, and the
// comparison of two of them: one block per object that differs, headed by
// what changed and the provider that caused it, with a unified diff of its
// definition (both already redacted by the API).
import { el } from './dom.js';
import { getJSON, enc, fill } from './common.js';
import { compare, lineDiff, hunks } from './diff.js';

// loadRevisions lists every application of a configuration, newest
// first: a version applied again is a new row (#seq), and only the newest
// is "(current)". The counts are the overview's (/api/revisions).
export async function loadRevisions() {
  let list;
  try { list = await getJSON('revisions?limit=50'); } catch { list = []; }
  fill(document.querySelector('#revisions tbody'), list.map((r, i) => el('tr', { 'data-version': r.version, 'data-seq': r.seq, class: r.current ? 'current' : '' },
    el('td', {}, el('input', { type: 'radio', name: 'rev-a', value: r.version, checked: i === 1 })),
    el('td', {}, el('input', { type: 'radio', name: 'rev-b', value: r.version, checked: i === 0 })),
    el('td', { class: 'mono seq' }, '#' + r.seq),
    el('td', { class: 'mono' }, r.version.slice(0, 16), r.current ? ' (current)' : ''),
    el('td', {}, new Date(r.at).toLocaleString()), el('td', { class: 'routers' }, r.routers), el('td', { class: 'services' }, r.services),
    el('td', { class: 'middlewares' }, r.middlewares), el('td', { class: 'problems' + (r.problems ? ' error' : '') }, r.problems))));
}

async function showDiff() {
  const a = document.querySelector('input[name=rev-a]:checked');
  const b = document.querySelector('input[name=rev-b]:checked');
  const out = document.getElementById('diff');
  if (!a || !b) { out.textContent = 'Pick two revisions.'; return; }
  const [ra, rb] = await Promise.all([getJSON(`revisions/${enc(a.value)}`), getJSON(`revisions/${enc(b.value)}`)]);
  const full = document.getElementById('diff-full').checked;
  const changes = compare(ra.config, rb.config);
  const blocks = changes.map((c) => {
    let lines = lineDiff(c.before, c.after);
    if (!full) lines = hunks(lines);
    return el('div', { class: 'dblock', 'data-object': c.key },
      el('div', { class: 'dtitle' }, el('span', { class: c.kind }, c.kind), ' ', el('span', { class: 'mono' }, c.key), ' ',
        el('span', { class: 'provider-tag' }, 'by ' + (c.provider || 'unknown'))),
      el('pre', { class: 'mono udiff' }, lines.map((l) => el('div', { class: 'l' + (l.op === '+' ? ' add' : l.op === '-' ? ' del' : l.op === '@' ? ' cut' : '') }, (l.op === '@' ? '' : l.op + ' ') + l.text))));
  });
  out.replaceChildren(
    el('h3', {}, `${ra.version.slice(0, 12)} (${new Date(ra.at).toLocaleString()}) → ${rb.version.slice(0, 12)} (${new Date(rb.at).toLocaleString()})`),
    blocks.length ? el('div', { id: 'diff-table' }, blocks) : el('p', { class: 'empty' }, 'No differences.'));
}

// initRevisions wires the Compare button.
export function initRevisions() {
  document.getElementById('diff-btn').addEventListener('click', () => showDiff().catch((e) => { document.getElementById('diff').textContent = String(e); }));
}
