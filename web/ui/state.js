// The dashboard's state, as last read from the API and the WebSocket, and
// the few things the pages built from it share: the page the hash names
// and the status and error cells of the object tables.
import { el } from './dom.js';

export const state = {
  version: '', rates: {}, servers: [], problems: [],
  routers: [], services: [], middlewares: [], entrypoints: [],
  tcp: { routers: [], services: [], middlewares: [] }, udp: { routers: [], services: [] },
  recent: {}, // router name -> last 10 samples of its rate
  providers: [], // /api/providers: sources and backends with their state
};

// route is the page the hash names: a tab ("#routers") or an object page
// ("#router/web@docker").
export function route() {
  const h = decodeURIComponent((location.hash || '#overview').slice(1));
  const i = h.indexOf('/');
  return i < 0 ? { tab: h } : { tab: 'detail', kind: h.slice(0, i), name: h.slice(i + 1) };
}

export function statusCell(s) { return el('td', { class: 'status ' + (s || '') }, s || ''); }
export function errorsCell(errs) { return el('td', {}, (errs || []).map((e) => el('div', { class: 'err' }, e))); }
