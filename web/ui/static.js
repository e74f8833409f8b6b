// The Static tab and the overview's static card: GET /api/static, the
// static configuration's revision, its file and each live reload with its
// trigger, outcome, what it applied, what it refused and why, and why the
// file did not load. The last reload is a problem when it did not load
// (invalid) or left changes unapplied (refused, partial): the running
// static configuration is then not what the file says.
import { el } from './dom.js';
import { api, fill } from './common.js';

let current = null; // /api/static; null: not reported

const staticBad = (rl) => !!rl && ['invalid', 'refused', 'partial'].includes(rl.outcome);
const outcomeClass = { applied: 'enabled', unchanged: 'muted', partial: 'warning', refused: 'disabled', invalid: 'disabled' };
// changeText names what changed: each option under the section with its
// own kind ("log.format added, log.noColor added"), else the section.
const changeText = (c) => (c.options && c.options.length ? c.options : [c]).map((o) => o.path + ' ' + o.kind).join(', ');

// staticCard is the overview's card: the static revision and the last
// reload's outcome, red when it is a problem; null when not reported.
export function staticCard() {
  const st = current;
  if (!st) return null;
  const last = (st.reloads || [])[0];
  const bad = staticBad(last);
  return el('a', { class: 'card' + (bad ? ' bad' : ''), id: 'card-static', href: '#static' }, el('div', {}, 'Static configuration'),
    el('div', { class: 'n' + (bad ? ' error' : '') }, 'rev ' + st.revision),
    el('div', { class: 'sub' }, last
      ? el('span', { class: 'status ' + (outcomeClass[last.outcome] || '') }, 'last reload ' + last.outcome + ' (' + last.trigger + ', ' + new Date(last.at).toLocaleTimeString() + ')')
      : el('span', {}, 'not reloaded since start')),
    bad ? el('div', { class: 'err' }, last.error || (last.refused || []).map((r) => changeText(r) + ': ' + r.reason).join('; ')) : null);
}

function renderStatic() {
  const st = current;
  const last = st && (st.reloads || [])[0];
  const bad = staticBad(last);
  const badge = document.getElementById('static-badge');
  badge.textContent = bad ? 1 : 0;
  badge.className = 'count ' + (bad ? 'some' : 'zero');
  const sum = document.getElementById('static-summary');
  if (!st) { sum.replaceChildren(el('p', { class: 'empty' }, 'Static configuration reloads are not reported.')); return; }
  sum.replaceChildren(
    el('p', { class: 'big' }, 'Revision ', st.revision, st.since ? ' · since ' + new Date(st.since).toLocaleString() : ''),
    st.file ? el('p', {}, 'File: ', el('span', { class: 'mono' }, st.file), ' (reloaded on SIGHUP and when it changes)') : el('p', { class: 'meta' }, 'No file: reloaded on SIGHUP'),
    bad ? el('div', { class: 'errbox', id: 'static-problem' }, 'The last reload was ', el('strong', {}, last.outcome),
      ': the running static configuration is not what the file says. ', last.error || (last.refused || []).map((r) => changeText(r) + ' (' + r.reason + ')').join('; ')) : '',
    (st.reloads || []).length ? '' : el('p', { class: 'empty ok' }, 'No reload since start.'));
  fill(document.querySelector('#static-reloads tbody'), (st.reloads || []).map((rl) => el('tr', { class: staticBad(rl) ? 'bad' : '', 'data-outcome': rl.outcome },
    el('td', {}, rl.revision), el('td', {}, new Date(rl.at).toLocaleString()), el('td', {}, rl.trigger),
    el('td', { class: 'status ' + (outcomeClass[rl.outcome] || '') }, rl.outcome),
    el('td', { class: 'mono' }, (rl.applied || []).map((c) => el('div', { class: 'added' }, changeText(c)))),
    el('td', {}, (rl.refused || []).map((r) => el('div', {}, el('span', { class: 'mono removed' }, changeText(r)), ' ', el('span', { class: 'err' }, r.reason)))),
    el('td', { class: 'err' }, rl.error || ''))));
}

// loadStatic re-reads /api/static and renders the tab (not the card: the
// overview calls staticCard when it renders).
export async function loadStatic() {
  const r = await fetch(api('static'), { headers: { Accept: 'application/json' } });
  current = r.ok ? await r.json() : null;
  renderStatic();
}
