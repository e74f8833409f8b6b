// One status per object, combining its configuration and its health, and
// the facts behind it: which server is down and why, which answers 5xx.
// Every page (the lists, the object pages, the route picture, "Failing
// now") asks here, so a word means one thing everywhere:
//
//   enabled   configured and serving: no server down, no 5xx lately
//   warning   serving, with a configuration warning
//   degraded  serving, but a server is down or 5xx were answered in the
//             last RECENT seconds
//   down      configured, but no server can answer (all down)
//   disabled  not served: a configuration error
//
// Traffic is averaged over the last RECENT one-second samples of the
// WebSocket's "stats" (rates weighted by requests, so an idle second does
// not dilute a failing one).
import { byName } from './common.js';
import { state } from './state.js';

export const RECENT = 10;

// services and liveByURL index the current lists once per list (the
// pages ask per server; a rebuild per question would be quadratic).
let svcIndex = { list: null, map: {} };
let liveIndex = { list: null, map: {} };
function services() {
  if (svcIndex.list !== state.services) svcIndex = { list: state.services, map: byName(state.services) };
  return svcIndex.map;
}
function liveByURL() {
  if (liveIndex.list !== state.servers) liveIndex = { list: state.servers, map: Object.fromEntries(state.servers.map((s) => [s.url, s])) };
  return liveIndex.map;
}
const MAX_DEPTH = 8;

const recent = { routers: {}, services: {}, servers: {} };
const normIndex = new WeakMap(); // map -> its keys normalised (byURL)

function keep(bucket, rates) {
  for (const [k, r] of Object.entries(rates || {})) {
    const l = (bucket[k] ||= []);
    l.push(r);
    if (l.length > RECENT) l.shift();
  }
  for (const k of Object.keys(bucket)) if (!(rates || {})[k]) delete bucket[k];
  normIndex.delete(bucket);
}

// recordStats keeps one "stats" sample (Stats: routers, services, servers).
export function recordStats(st) {
  keep(recent.routers, st.routers);
  keep(recent.services, st.services);
  keep(recent.servers, st.servers);
  state.recent = recent.routers;
}

// traffic sums the recent samples of one object: requests/s, the share
// answered 5xx (0..1), the worst p50 and p99 (ms) and the samples' count.
function traffic(list) {
  list = list || [];
  let req = 0, e5 = 0, p50 = 0, p99 = 0;
  for (const x of list) {
    req += x.rps || 0;
    e5 += x.errorsPerSecond || 0;
    if (x.rps > 0) { p50 = Math.max(p50, x.p50ms || 0); p99 = Math.max(p99, x.p99ms || 0); }
  }
  return { rps: list.length ? req / list.length : 0, share: req > 0 ? e5 / req : 0, p50, p99, samples: list.length };
}

// sameURL compares server URLs as written in the configuration and as the
// proxy names them (a trailing slash apart).
const norm = (u) => String(u || '').replace(/\/+$/, '');

// byURL finds url in map (keyed by URL), exactly or as norm writes it;
// the normalised index is built once per map.
function byURL(map, url) {
  if (map[url]) return map[url];
  let idx = normIndex.get(map);
  if (!idx) {
    idx = {};
    for (const [k, v] of Object.entries(map)) idx[norm(k)] = v;
    normIndex.set(map, idx);
  }
  return idx[norm(url)];
}

export const routerTraffic = (name) => traffic(recent.routers[name]);
export const serviceTraffic = (name) => traffic(recent.services[name]);
export const serverTraffic = (url) => traffic(byURL(recent.servers, url));

// trafficText is one server's recent traffic: "4.0 req/s · 5xx 50% · p50 2 / p99 9 ms".
export function trafficText(t) {
  if (!t.samples || t.rps === 0) return 'no traffic';
  return `${t.rps.toFixed(1)} req/s · 5xx ${(100 * t.share).toFixed(0)}% · p50 ${t.p50.toFixed(1)} / p99 ${t.p99.toFixed(1)} ms`;
}

// liveServer is the health checker's view of url ({up, inFlight,
// lastError}), undefined when it does not track it.
export function liveServer(url) {
  return byURL(liveByURL(), url);
}

// splitError cuts a health-check or forwarding error into its reason (what
// went wrong: "connection refused", "status 500, want 2xx or 3xx", "timeout
// after 1s") and the URL it was about; full is the whole text.
export function splitError(msg) {
  const full = String(msg || '');
  const m = full.match(/(?:https?|h2c):\/\/[^\s"]+/);
  const url = m ? m[0].replace(/:$/, '') : '';
  const parts = full.split(/:\s+/).map((p) => p.trim()).filter(Boolean);
  let reason = parts.length ? parts[parts.length - 1] : full;
  if (/^(dial|read|write) (tcp|udp)/.test(reason) || reason === url) reason = full;
  return { reason, url, full };
}

// serverFacts is one server of service: up (health check, else the API's
// serverStatus), its last error and its recent traffic.
export function serverFacts(service, url) {
  const s = services()[service];
  const live = liveServer(url);
  const status = s && s.serverStatus ? byURL(s.serverStatus, url) : undefined;
  const up = live ? live.up : status !== 'DOWN';
  return { service, url, up, lastError: live ? live.lastError || '' : '', inFlight: live ? live.inFlight || 0 : 0, traffic: serverTraffic(url) };
}

// leaves lists the servers a service sends to, through weighted,
// mirroring (the main service only), failover and load balancers.
export function leaves(name, depth = 0) {
  const s = services()[name];
  if (!s || depth > MAX_DEPTH) return [];
  if (s.weighted) return (s.weighted.services || []).flatMap((c) => leaves(c.name, depth + 1));
  if (s.mirroring) return leaves(s.mirroring.service, depth + 1);
  if (s.failover) return [s.failover.service, s.failover.fallback].filter(Boolean).flatMap((c) => leaves(c, depth + 1));
  return ((s.loadBalancer && s.loadBalancer.servers) || []).map((x) => serverFacts(name, x.url || x.address || ''));
}

const rank = { enabled: 0, warning: 1, degraded: 2, down: 3, disabled: 4 };
const worse = (a, b) => (rank[a] >= rank[b] ? a : b);
const pct = (x) => (100 * x).toFixed(0) + '%';

// downText says why a server is down: its reason first, then its URL.
export function downText(f) {
  const e = splitError(f.lastError);
  return `server ${f.url} DOWN` + (f.lastError ? ': ' + e.reason : '');
}

// serviceState is the status of service name with why (sentences).
export function serviceState(name, depth = 0) {
  const s = services()[name];
  if (!s) {
    if (String(name).endsWith('@internal')) return { status: 'enabled', why: [] };
    return { status: 'disabled', why: [`service ${name} does not exist`] };
  }
  if (s.status === 'disabled') return { status: 'disabled', why: s.error && s.error.length ? s.error : ['configuration error'] };
  let status = 'enabled';
  const why = [];
  const kids = (list, all) => {
    const st = list.map((c) => ({ name: c, ...serviceState(c, depth + 1) }));
    const bad = st.filter((c) => c.status === 'down' || c.status === 'disabled');
    for (const c of st) if (c.status !== 'enabled' && c.status !== 'warning') why.push(...c.why);
    if (bad.length && bad.length === st.length && all) return 'down';
    if (st.some((c) => rank[c.status] >= rank.degraded)) return 'degraded';
    return 'enabled';
  };
  if (depth > MAX_DEPTH) return { status, why };
  if (s.weighted) status = kids((s.weighted.services || []).map((c) => c.name), true);
  else if (s.failover) {
    const main = serviceState(s.failover.service, depth + 1);
    const back = s.failover.fallback ? serviceState(s.failover.fallback, depth + 1) : { status: 'down', why: [] };
    const dead = (x) => x.status === 'down' || x.status === 'disabled';
    if (dead(main) && dead(back)) status = 'down';
    else if (rank[main.status] >= rank.degraded || rank[back.status] >= rank.degraded) status = 'degraded';
    why.push(...main.why, ...(dead(main) ? back.why : []));
  } else if (s.mirroring) {
    const main = serviceState(s.mirroring.service, depth + 1);
    status = main.status === 'disabled' ? 'down' : main.status;
    why.push(...main.why);
  } else if (s.loadBalancer) {
    const fs = leaves(name, depth);
    const down = fs.filter((f) => !f.up);
    for (const f of down) why.push(downText(f));
    if (fs.length && down.length === fs.length) status = 'down';
    else if (down.length) status = 'degraded';
    for (const f of fs) {
      if (f.traffic.share > 0) {
        why.push(`server ${f.url} answers ${pct(f.traffic.share)} 5xx`);
        status = worse(status, 'degraded');
      }
    }
  }
  const tr = serviceTraffic(name);
  if (tr.share > 0 && status === 'enabled') { status = 'degraded'; why.push(`${pct(tr.share)} of responses are 5xx (last ${tr.samples}s)`); }
  if (status === 'enabled' && s.status === 'warning') { status = 'warning'; why.push(...(s.error || [])); }
  return { status, why: [...new Set(why)] };
}

// routerState is the status of router r (an API item) with why.
export function routerState(r) {
  if (!r) return { status: 'disabled', why: ['not found'] };
  if (r.status === 'disabled') return { status: 'disabled', why: r.error && r.error.length ? r.error : ['configuration error'] };
  const why = [];
  let status = 'enabled';
  if (r.service) {
    const s = serviceState(r.service);
    status = s.status === 'disabled' ? 'down' : s.status;
    why.push(...s.why);
  }
  const tr = routerTraffic(r.name);
  if (tr.share > 0) {
    status = worse(status, 'degraded');
    why.push(`${pct(tr.share)} of responses are 5xx (last ${tr.samples}s)`);
  }
  if (status === 'enabled' && r.status === 'warning') { status = 'warning'; why.push(...(r.error || [])); }
  return { status, why: [...new Set(why)] };
}

// refreshStates updates, in place, every element under root marked
// data-state-router or data-state-service: its status word, colour and
// why (the title).
export function refreshStates(root) {
  const routers = byName(state.routers);
  for (const e of root.querySelectorAll('[data-state-router], [data-state-service]')) {
    const st = e.dataset.stateRouter !== undefined ? routerState(routers[e.dataset.stateRouter]) : serviceState(e.dataset.stateService);
    paint(e, st);
  }
}

// paint writes st on e: a status word (class "status") or a box.
export function paint(e, st) {
  for (const k of Object.keys(rank)) e.classList.toggle(k, k === st.status);
  e.title = st.why.join('\n');
  e.dataset.state = st.status;
  if (e.classList.contains('status')) e.textContent = st.status;
}
