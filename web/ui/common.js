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

// getAll reads every page of a paginated list (../api/<path>, per_page
// 1000, following X-Next-Page) and returns them as one array.
export async function getAll(path) {
  const out = [];
  for (let page = 1; ; ) {
    const sep = path.includes('?') ? '&' : '?';
    const p = `${path}${sep}per_page=1000&page=${page}`;
    const r = await fetch(api(p), { headers: { Accept: 'application/json' } });
    if (!r.ok) throw new Error(p + ': ' + r.status);
    out.push(...(await r.json()));
    const next = Number(r.headers.get('X-Next-Page') || 1);
    if (!(next > page)) return out;
    page = next;
  }
}

// linkList links at most max names of kind, then says how many more
// there are ("and 9 950 more"): a list of every router using an
// entrypoint or a service is unreadable, and slow, at 10 000 routers.
export function linkList(kind, names, max = 50) {
  names = names || [];
  const shown = names.slice(0, max).map((n) => [link(kind, n), ' ']);
  if (names.length > max) shown.push(el('span', { class: 'meta more' }, `and ${(names.length - max).toLocaleString()} more`));
  return shown;
}
