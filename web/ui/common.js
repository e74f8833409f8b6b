// Helpers every page module shares: the API's URL (../api/ relative to the
// dashboard, so it works under any api.basePath), JSON reads, links to
// object pages and table filling.
import { el } from './dom.js';

export const api = (p) => new URL('../api/' + p, location.href);
export const enc = encodeURIComponent;
export const byName = (list) => Object.fromEntries(list.map((x) => [x.name, x]));

// getJSON reads ../api/<path>; a status other than 2xx throws "path: status".
export async function getJSON(path) {
  const r = await fetch(api(path), { headers: { Accept: 'application/json' } });
  if (!r.ok) throw new Error(path + ': ' + r.status);
  return r.json();
}

export function fill(tbody, rows) { tbody.replaceChildren(...rows); }

// link points at an object page: #router/web@docker.
export function link(kind, name) { return el('a', { href: `#${kind}/${enc(name)}`, class: 'mono' }, name); }
