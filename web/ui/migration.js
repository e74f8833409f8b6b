// The ingress-nginx migration page: GET /api/kubernetes/ingress-nginx/migration
// (providers.kubernetesIngressNGINX), the report `gantry migrate
// ingress-nginx` prints. One line of totals says what moves unchanged; one
// table per Ingress lists each nginx.ingress.kubernetes.io/ annotation as
// served exactly, approximated (and how) or refused (and why). The tab
// exists only when the API has the provider (404 otherwise).
import { el } from './dom.js';

const supportClass = { exact: 'enabled', approximated: 'warning', refused: 'disabled' };

export function renderMigration(rep) {
  const tab = document.getElementById('migration-tab');
  const summary = document.getElementById('migration-summary');
  const list = document.getElementById('migration-list');
  tab.hidden = false;
  if (rep.error) {
    summary.replaceChildren(el('p', { class: 'err', id: 'migration-state' }, String(rep.error)));
    list.replaceChildren();
    return;
  }
  const t = rep.totals;
  const badge = document.getElementById('migration-badge');
  badge.textContent = String(t.refused);
  badge.className = 'count ' + (t.refused ? 'some' : 'zero');
  summary.replaceChildren(el('p', { id: 'migration-state', 'data-ingresses': String(t.ingresses), 'data-unchanged': String(t.unchanged),
    'data-exact': String(t.exact), 'data-approximated': String(t.approximated), 'data-refused': String(t.refused), 'data-denied': String(t.denied),
    class: t.refused || t.denied ? 'big' : 'empty ok' },
  `${t.ingresses} Ingresses: ${t.unchanged} move unchanged, ${t.denied} answer 503. ` +
  `${t.annotations} annotations: ${t.exact} exact, ${t.approximated} approximated, ${t.refused} refused.`));
  list.replaceChildren(...(rep.ingresses || []).map((ing) => {
    const id = ing.namespace + '/' + ing.name;
    const rows = (ing.annotations || []).map((a) => el('tr', { 'data-annotation': a.annotation, 'data-support': a.support },
      el('td', { class: 'mono' }, a.annotation),
      el('td', { class: 'mono', title: a.value || '' }, a.value || ''),
      el('td', { class: 'status ' + (supportClass[a.support] || '') }, a.support + (a.critical ? ' (paths answer 503)' : '')),
      el('td', {}, a.detail || '')));
    return el('div', { class: 'migration-ingress', 'data-ingress': id, 'data-status': ing.status },
      el('h2', {}, el('span', { class: 'mono' }, id), ing.canary ? el('span', { class: 'meta' }, ' (canary)') : null,
        el('span', { class: 'status ' + (ing.status === 'served' ? 'enabled' : 'disabled') }, ' ' + ing.status)),
      rows.length
        ? el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', {}, 'Annotation'), el('th', {}, 'Value'), el('th', {}, 'Gantry'), el('th', {}, 'How / why'))), el('tbody', {}, rows))
        : el('p', { class: 'empty' }, 'No nginx.ingress.kubernetes.io annotations.'),
      (ing.problems || []).map((p) => el('div', { class: 'err' }, p)));
  }));
}

let on = true; // false once the API said there is no ingress-nginx provider
export async function loadMigration(api) {
  if (!on) return;
  const r = await fetch(api('kubernetes/ingress-nginx/migration'), { headers: { Accept: 'application/json' } });
  if (r.status === 404) { on = false; return; }
  const body = await r.json().catch(() => ({}));
  renderMigration(r.ok ? body : { error: body.message || r.status });
}
