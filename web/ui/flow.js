// The picture of one route: entrypoints → router → middlewares (in order)
// → service (→ child services of weighted, mirroring and failover) →
// servers with health and in-flight requests. Every box links to its page;
// a disabled or missing object is drawn red with its error. Server boxes
// carry data-server=<url> so health and in-flight updates recolour them in
// place (updateServers), without a reload.

import { el } from './dom.js';
import { routerState, serviceState, serverTraffic, splitError, paint, trafficText } from './health.js';

const MAX_DEPTH = 8;

function box(kind, name, href, status, lines, errors) {
  return el('a', { class: `box ${kind} ${status || ''}`, href, 'data-kind': kind, 'data-name': name, title: `${kind} ${name}` },
    el('span', { class: 'kind' }, kind),
    el('span', { class: 'bname mono' }, name),
    (lines || []).map((l) => el('span', { class: 'meta' }, l)),
    (errors || []).map((e) => el('span', { class: 'berr', title: e }, e)));
}

function column(cls, ...kids) {
  return el('div', { class: 'col ' + cls }, kids);
}

// errLines is why a server is down, the reason first ("connection
// refused"), then the URL it was about; the whole error on hover.
function errLines(msg) {
  const e = splitError(msg);
  return [el('span', { class: 'berr reason', title: e.full }, e.reason),
    e.url && e.reason !== e.full ? el('span', { class: 'meta errurl', title: e.full }, e.url) : null];
}

// serverBox draws one server; live is url → {up, inFlight} from the
// WebSocket, status the API's "UP"/"DOWN". TCP and UDP servers (addresses)
// have no live state: drawn without health. An HTTP server shows its
// recent traffic: requests/s, 5xx share and latency.
function serverBox(service, url, status, live, pfx) {
  const s = live[url];
  if (!s && !status && pfx) {
    return box('server', url, '#' + pfx + 'service/' + encodeURIComponent(service), 'enabled', ['address']);
  }
  const up = s ? s.up : status !== 'DOWN';
  const b = box('server', url, '#' + pfx + 'service/' + encodeURIComponent(service), up ? 'up' : 'down',
    [el('span', {}, el('span', { class: 'health' }, up ? 'UP' : 'DOWN'), ' · ', el('span', { class: 'inflight' }, (s ? s.inFlight : 0) + ' in flight')),
      el('span', { class: 'traffic' }, trafficText(serverTraffic(url)))]);
  if (s && !up && s.lastError) b.append(...errLines(s.lastError).filter(Boolean));
  b.dataset.server = url;
  b.classList.toggle('failing', serverTraffic(url).share > 0);
  return b;
}

// stateBox marks an HTTP router or service box with its combined status
// (refreshStates keeps it current).
function stateBox(b, kind, name, r) {
  b.setAttribute('data-state-' + kind, name);
  const title = b.title;
  paint(b, kind === 'router' ? routerState(r) : serviceState(name));
  b.title = title + (b.title ? '\n' + b.title : '');
}

// serviceTree draws service name and what it sends to, recursively.
function serviceTree(name, ctx, depth, label) {
  const s = ctx.services[name];
  const pfx = ctx.proto || '';
  const href = '#' + pfx + 'service/' + encodeURIComponent(name);
  if (!s) {
    if (name.endsWith('@internal')) return el('div', { class: 'tree' }, box('service', name, href, 'enabled', ['internal', label]));
    return el('div', { class: 'tree' }, box('service', name, href, 'disabled', [label], ['service does not exist']));
  }
  const meta = [s.type || '', label];
  const node = box('service', name, href, s.status, meta, s.error);
  if (!pfx) stateBox(node, 'service', name);
  if (depth >= MAX_DEPTH) return el('div', { class: 'tree' }, node);
  const kids = [];
  if (s.weighted) {
    for (const c of s.weighted.services || []) kids.push(serviceTree(c.name, ctx, depth + 1, 'weight ' + (c.weight ?? 1)));
  } else if (s.mirroring) {
    kids.push(serviceTree(s.mirroring.service, ctx, depth + 1, 'main'));
    for (const m of s.mirroring.mirrors || []) kids.push(serviceTree(m.name, ctx, depth + 1, 'mirror ' + (m.percent ?? 0) + '%'));
  } else if (s.failover) {
    kids.push(serviceTree(s.failover.service, ctx, depth + 1, 'primary'));
    if (s.failover.fallback) kids.push(serviceTree(s.failover.fallback, ctx, depth + 1, 'fallback'));
  } else if (s.loadBalancer) {
    const status = s.serverStatus || {};
    for (const srv of s.loadBalancer.servers || []) {
      const url = srv.url || srv.address || '';
      kids.push(serverBox(name, url, status[url], ctx.live, pfx));
    }
  }
  return el('div', { class: 'tree' }, node, kids.length ? el('div', { class: 'children' }, kids) : null);
}

// redirectBox draws where an entrypoint redirection sends requests: a
// router on noop@internal whose redirectScheme middleware answers them
// ("https :8443", permanent 301); null for any other router.
function redirectBox(r, ctx) {
  if (r.service !== 'noop@internal') return null;
  for (const name of r.middlewares || []) {
    const rs = (ctx.middlewares[name] || {}).redirectScheme;
    if (rs) {
      return box('redirect', (rs.scheme || 'https') + (rs.port ? ' :' + rs.port : ''), '#middleware/' + encodeURIComponent(name), 'enabled',
        [rs.permanent ? 'permanent redirect (301)' : 'temporary redirect (302)']);
    }
  }
  return null;
}

// routeFlow draws router r; ctx = {middlewares, services, live, proto}
// where the first two map qualified names to API items, live maps server
// URLs to their live state and proto is '' (HTTP), 'tcp' or 'udp' (the
// prefix of the pages the boxes link to).
export function routeFlow(r, ctx) {
  const pfx = ctx.proto || '';
  const eps = (r.using && r.using.length ? r.using : r.entryPoints) || [];
  const cols = [];
  cols.push(column('eps', eps.length ? eps.map((ep) => box('entrypoint', ep, '#entrypoint/' + encodeURIComponent(ep), 'enabled', []))
    : box('entrypoint', 'none', '#routers', 'disabled', [], ['no entrypoint'])));
  const rb = box(pfx ? pfx + ' router' : 'router', r.name, '#' + pfx + 'router/' + encodeURIComponent(r.name), r.status, [r.rule || ''], r.error);
  if (!pfx) stateBox(rb, 'router', r.name, r);
  cols.push(column('router', rb));
  for (const name of r.middlewares || []) {
    const m = ctx.middlewares[name];
    const href = '#' + pfx + 'middleware/' + encodeURIComponent(name);
    cols.push(column('mw', m ? box('middleware', name, href, m.status, [m.type || ''], m.error)
      : box('middleware', name, href, 'disabled', [], ['middleware does not exist'])));
  }
  cols.push(column('svc', redirectBox(r, ctx) || (r.service ? serviceTree(r.service, ctx, 0, '') : box('service', 'none', '#services', 'disabled', [], ['no service']))));
  return el('div', { class: 'flow', 'data-router': r.name }, cols);
}

// serviceFlow draws service name alone and what it sends to.
export function serviceFlow(name, ctx) {
  return el('div', { class: 'flow', 'data-service': name }, column('svc', serviceTree(name, ctx, 0, '')));
}

// updateServers recolours every server box from the live server list and
// refreshes its traffic.
export function updateServers(root, servers) {
  const byURL = {};
  for (const s of servers || []) byURL[s.url] = s;
  for (const b of root.querySelectorAll('a.box[data-server]')) {
    const s = byURL[b.dataset.server];
    const tr = b.querySelector('.traffic');
    if (tr) tr.textContent = trafficText(serverTraffic(b.dataset.server));
    b.classList.toggle('failing', serverTraffic(b.dataset.server).share > 0);
    if (!s) continue;
    b.classList.toggle('up', s.up);
    b.classList.toggle('down', !s.up);
    b.querySelector('.health').textContent = s.up ? 'UP' : 'DOWN';
    b.querySelector('.inflight').textContent = s.inFlight + ' in flight';
    for (const e of b.querySelectorAll('.berr, .errurl')) e.remove();
    if (!s.up && s.lastError) b.append(...errLines(s.lastError).filter(Boolean));
  }
}
