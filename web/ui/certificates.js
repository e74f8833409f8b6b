// The Certificates tab: GET /api/tls/certificates, each certificate from
// ACME resolvers and from the configuration's tls section (resolver
// "file"): its hosts, issuer, resolver, the time left (days and hours;
// hours and minutes under a day, so 1-hour and 6-day certificates read
// right) with a bar of the fraction of its lifetime left, its renewal
// (date and time) and state with the last error, and the routers it
// serves. Colours: an ACME certificate is green until its renewal time,
// amber in its renewal window, red when a renewal in that window failed,
// under a tenth of its lifetime is left, or it expired; a file
// certificate (never renewed by Gantry) is amber in the last third of its
// lifetime and red under a tenth.
import { el } from './dom.js';
import { getJSON, link } from './common.js';

const MIN = 60 * 1000;
const plural = (n, w) => n + ' ' + w + (n === 1 ? '' : 's');

// left writes a duration in ms: "5 days 3 h", "3 h 12 min", "42 min".
export function left(ms) {
  const m = Math.round(Math.abs(ms) / MIN);
  const d = Math.floor(m / 1440), h = Math.floor((m % 1440) / 60), mm = m % 60;
  if (d > 0) return plural(d, 'day') + ' ' + h + ' h';
  if (h > 0) return h + ' h ' + mm + ' min';
  return mm + ' min';
}

const when = (t) => new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

// expiryClass is fine, soon or bad (see the file's comment).
function expiryClass(c, now) {
  const end = Date.parse(c.notAfter), start = Date.parse(c.notBefore || c.notAfter);
  const frac = end > start ? (end - now) / (end - start) : 0;
  if (end <= now || frac < 0.1 || c.state === 'expired' || c.state === 'failed') return 'bad';
  if (c.resolver && c.renewAt) {
    if (now < Date.parse(c.renewAt)) return 'fine';
    return c.lastError ? 'bad' : 'soon';
  }
  return frac < 1 / 3 ? 'soon' : 'fine';
}

function renewal(c, now) {
  if (!c.resolver) {
    return [el('div', { class: 'meta' }, 'not renewed by Gantry (replace the file)'),
      c.state === 'expiring' ? el('div', { class: 'err' }, 'replace before ' + when(c.notAfter)) : null];
  }
  if (!c.renewAt) return null;
  const at = Date.parse(c.renewAt);
  return el('div', { class: 'meta renews' }, at > now ? 'renews ' + when(at) + ' (in ' + left(at - now) + ')' : 'renewal due since ' + when(at));
}

// user links "router NAME", "tcp router NAME" (or a bare NAME@provider)
// to the router's page; anything else ("defaultGeneratedCert", "store
// default") is text.
function user(u) {
  const m = /^(tcp router|router) (.+)$/.exec(u);
  if (m) return link(m[1] === 'router' ? 'router' : 'tcprouter', m[2]);
  return u.includes('@') ? link('router', u) : el('span', { class: 'meta' }, u);
}

const stateClass = { valid: 'enabled', failed: 'disabled', expired: 'disabled' };

function renderCertificates(list) {
  const box = document.getElementById('cert-list');
  if (!list.length) { box.replaceChildren(el('p', { class: 'empty' }, 'No certificates: none in tls.certificates and no ACME resolver.')); return; }
  const now = Date.now();
  box.replaceChildren(el('table', { class: 'grid' },
    el('thead', {}, el('tr', {}, ['Hosts', 'Issuer', 'Resolver', 'Expires in', 'State', 'Used by'].map((h) => el('th', {}, h)))),
    el('tbody', {}, list.map((c) => {
      const end = c.notAfter ? Date.parse(c.notAfter) : null;
      const start = Date.parse(c.notBefore || c.notAfter);
      const cls = end === null ? 'none' : expiryClass(c, now);
      const frac = end === null || end <= start ? 0 : (end - now) / (end - start);
      return el('tr', { 'data-cert': c.main, 'data-state': c.state },
        el('td', { class: 'mono' }, [c.main, ...(c.sans || [])].join(', ')),
        el('td', {}, c.issuer || '–'),
        el('td', { class: 'mono' }, c.resolver || 'file'),
        el('td', {}, end === null ? 'no certificate yet' : el('div', { class: 'expiry ' + cls, title: 'valid ' + when(start) + ' – ' + when(end) },
          bar(Math.max(2, Math.min(100, frac * 100))), el('span', { class: 'left' }, end > now ? left(end - now) : 'expired ' + left(now - end) + ' ago'))),
        el('td', {}, el('span', { class: 'status ' + (stateClass[c.state] || 'warning') }, c.state),
          renewal(c, now),
          c.lastError ? el('div', { class: 'err' }, c.lastError) : null),
        el('td', { class: 'users' }, (c.usedBy || []).map((u) => [user(u), ' '])));
    }))));
}

// bar is a bar pct% wide, sized through the CSSOM (the UI's CSP allows no
// inline style attributes).
function bar(pct) {
  const b = el('div', { class: 'bar' });
  b.style.width = pct + '%';
  return b;
}

export async function loadCertificates() {
  try { renderCertificates(await getJSON('tls/certificates')); } catch { renderCertificates([]); }
}
