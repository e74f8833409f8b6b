// The Cluster tab: every instance registered in Consul (cluster.consul):
// its ID (this one marked), address, the configuration version it serves,
// its health check, and whether it agrees with the version most passing
// instances serve; the summary says in one line whether they all agree.
// The tab exists only when the API has a cluster (GET /api/cluster is 404
// without cluster.consul).
import { el } from './dom.js';
import { api, fill } from './common.js';

function renderCluster(cs) {
  const tab = document.getElementById('cluster-tab');
  const summary = document.getElementById('cluster-summary');
  const tbody = document.querySelector('#cluster-list tbody');
  tab.hidden = false;
  if (cs.error) {
    summary.replaceChildren(el('p', { class: 'err', id: 'cluster-state', 'data-agree': 'unknown' }, 'Consul does not answer: ' + cs.error));
    return;
  }
  const passing = cs.instances.filter((i) => i.status === 'passing');
  const counts = {};
  for (const i of passing) counts[i.configVersion] = (counts[i.configVersion] || 0) + 1;
  const majority = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] || '';
  const short = (v) => (v || '–').slice(0, 12);
  const odd = cs.instances.filter((i) => i.status === 'passing' && i.configVersion !== majority).length;
  const badge = document.getElementById('cluster-badge');
  badge.textContent = String(odd);
  badge.className = 'count ' + (odd ? 'some' : 'zero');
  summary.replaceChildren(el('p', { id: 'cluster-state', 'data-agree': String(cs.agree), class: cs.agree ? 'empty ok' : 'err big' },
    cs.agree
      ? `All ${passing.length} passing instances of ${cs.service} serve configuration ${short(majority)}.`
      : `Instances of ${cs.service} disagree: ` + Object.entries(counts).map(([v, n]) => `${short(v)} on ${n}`).join(', ') + '.'));
  fill(tbody, cs.instances.map((i) => {
    const agrees = i.status !== 'passing' ? null : i.configVersion === majority;
    return el('tr', { 'data-instance': i.id, 'data-agree': agrees === null ? 'n/a' : String(agrees), class: agrees === false ? 'disagree' : '' },
      el('td', { class: 'mono' }, i.id, i.self ? el('span', { class: 'meta' }, ' (this instance)') : null),
      el('td', { class: 'mono' }, i.address + (i.port ? ':' + i.port : '')),
      el('td', { class: 'mono', title: i.configVersion }, short(i.configVersion)),
      el('td', { class: 'status ' + (i.status === 'passing' ? 'enabled' : i.status === 'warning' ? 'warning' : 'disabled') }, i.status),
      el('td', { class: agrees === false ? 'err' : 'meta' }, agrees === null ? 'not counted (not passing)' : agrees ? 'yes' : 'no: serves another version'));
  }));
}

let on = true; // false once the API said there is no cluster
let loadedAt = 0;

// loadCluster re-reads /api/cluster; minGapMs skips the read when the last
// one is more recent (the stats messages come every second).
export async function loadCluster(minGapMs = 0) {
  if (!on || Date.now() - loadedAt < minGapMs) return;
  loadedAt = Date.now();
  const r = await fetch(api('cluster'), { headers: { Accept: 'application/json' } });
  if (r.status === 404) { on = false; return; }
  const body = await r.json().catch(() => ({}));
  renderCluster(r.ok ? body : { error: body.message || r.status });
}

// showVersion puts the configuration version in the header: the content
// version (/api/overview configVersion), the one the Cluster tab lists
// for this instance, so both read the same; the revision version (which
// also hashes problems and origins) is in its title.
export function showVersion(ov) {
  const v = ov.configVersion || ov.version;
  if (!v) return;
  const h = document.getElementById('version');
  h.textContent = v.slice(0, 12);
  h.dataset.version = v;
  h.title = 'configuration ' + v + (ov.version && ov.version !== v ? '\nrevision ' + ov.version : '');
}
