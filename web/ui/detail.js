// Object pages: a router, service, middleware or entrypoint (HTTP, TCP,
// UDP), with its route picture, live charts and definition.

import { el } from './dom.js';
import { byName, enc, link } from './common.js';
import { state, route } from './state.js';
import { routeFlow, serviceFlow } from './flow.js';
import { LiveCharts, rangeButtons } from './livecharts.js';

// detail is the object page being shown: {kind, name, charts}.
let detail = null;

function definition(item) {
  const skip = new Set(['name', 'provider', 'status', 'error', 'usedBy', 'using', 'serverStatus', 'serverDetails', 'type']);
  const o = {};
  for (const [k, v] of Object.entries(item || {})) if (!skip.has(k)) o[k] = v;
  return el('pre', { class: 'mono def' }, JSON.stringify(o, null, 2));
}

function header(kind, item, name) {
  return el('div', { class: 'dhead' },
    el('h2', {}, el('span', { class: 'kind' }, kind), ' ', el('span', { class: 'mono' }, name), ' ',
      item ? el('span', { class: 'status ' + item.status }, item.status || '') : el('span', { class: 'status disabled' }, 'not found')),
    item && item.error && item.error.length ? el('div', { class: 'errbox' }, item.error.map((e) => el('div', {}, e))) : null);
}

function chartBlock(charts) {
  const span = el('span', { class: 'ranges' }, el('button', { type: 'button', class: 'on', 'data-range': '15m' }, '15 min'), el('button', { type: 'button', 'data-range': '24h' }, '24 h'));
  rangeButtons(span, charts);
  return [el('div', { class: 'chart-head' }, el('h3', {}, 'Traffic'), span), charts.el];
}

export function renderDetail() {
  const r = route();
  if (r.tab !== 'detail') return;
  const body = document.getElementById('detail-body');
  const same = detail && detail.kind === r.kind && detail.name === r.name;
  const charts = same ? detail.charts : null;
  const ctx = { middlewares: byName(state.middlewares), services: byName(state.services), live: Object.fromEntries(state.servers.map((s) => [s.url, s])) };
  let parts = [];
  let newCharts = charts;
  switch (r.kind) {
    case 'router': {
      const it = state.routers.find((x) => x.name === r.name);
      parts = [header('router', it, r.name)];
      if (it) {
        newCharts = charts || new LiveCharts('router', 'router=' + enc(r.name));
        parts.push(el('h3', {}, 'Route'), routeFlow(it, ctx), chartBlock(newCharts), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'service': {
      const it = ctx.services[r.name];
      parts = [header('service', it, r.name)];
      if (it) {
        newCharts = charts || new LiveCharts('service', 'service=' + enc(r.name));
        parts.push(el('p', {}, 'Used by: ', (it.usedBy || []).map((n) => [link('router', n), ' '])));
        parts.push(el('h3', {}, 'Sends to'), serviceFlow(r.name, ctx));
        parts.push(chartBlock(newCharts), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'middleware': {
      const it = ctx.middlewares[r.name];
      parts = [header('middleware', it, r.name)];
      if (it) parts.push(el('p', {}, 'Type: ', it.type || '', ' · used by: ', (it.usedBy || []).map((n) => [link('router', n), ' '])), el('h3', {}, 'Definition'), definition(it));
      break;
    }
    case 'tcprouter': case 'udprouter': {
      const proto = r.kind.slice(0, 3);
      const list = state[proto];
      const it = list.routers.find((x) => x.name === r.name);
      parts = [header(proto.toUpperCase() + ' router', it, r.name)];
      if (it) {
        const pctx = { middlewares: byName(list.middlewares || []), services: byName(list.services), live: {}, proto };
        parts.push(el('h3', {}, 'Route'), routeFlow(it, pctx), el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'tcpservice': case 'udpservice': case 'tcpmiddleware': {
      const proto = r.kind.slice(0, 3);
      const what = r.kind.slice(3);
      const list = state[proto];
      const it = (what === 'service' ? list.services : list.middlewares || []).find((x) => x.name === r.name);
      parts = [header(proto.toUpperCase() + ' ' + what, it, r.name)];
      if (it) {
        parts.push(el('p', {}, 'Used by: ', (it.usedBy || []).map((n) => [link(proto + 'router', n), ' '])));
        if (what === 'service') parts.push(el('h3', {}, 'Sends to'), serviceFlow(r.name, { middlewares: {}, services: byName(list.services), live: {}, proto }));
        parts.push(el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
    case 'entrypoint': {
      const it = state.entrypoints.find((x) => x.name === r.name);
      parts = [header('entrypoint', it ? { status: 'enabled' } : null, r.name)];
      if (it) {
        parts.push(el('p', {}, 'Address: ', el('span', { class: 'mono' }, it.address || ''), ' · ', it.dynamic ? el('span', { class: 'tag dyn' }, 'dynamic') : 'static'));
        if (it.dynamic) parts.push(el('p', {}, 'Asked for by: ', (it.requestedBy || []).map((q) => [el('strong', {}, q.provider), q.source ? ' (' + q.source + ')' : '', ' ']), (it.requestedBy || []).length ? '' : 'no provider any more (draining)'));
        parts.push(el('p', {}, 'Routers: ', state.routers.filter((x) => (x.using || x.entryPoints || []).includes(r.name)).map((x) => [link('router', x.name), ' '])));
        parts.push(el('h3', {}, 'Definition'), definition(it));
      }
      break;
    }
  }
  detail = { kind: r.kind, name: r.name, charts: newCharts };
  body.replaceChildren(...parts.flat());
}

// closeDetail forgets the object page (another tab is shown).
export function closeDetail() { detail = null; }

// pushDetail extends the shown object page's charts with one sample.
export function pushDetail(t, st) {
  if (!detail || !detail.charts) return;
  const src = detail.kind === 'router' ? st.routers : st.services;
  detail.charts.push(t, (src || {})[detail.name]);
}
