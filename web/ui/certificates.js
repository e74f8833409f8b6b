// The Certificates tab: GET /api/tls/certificates, each certificate from
// ACME resolvers and from the configuration's tls section (resolver
// "file"): its hosts, issuer, resolver, the days left as a bar (full at 90
// days; red under 7, amber under 30) and its renewal state with the last
// error.
import { el } from './dom.js';
import { getJSON, link } from './common.js';

function renderCertificates(list) {
  const box = document.getElementById('cert-list');
  if (!list.length) { box.replaceChildren(el('p', { class: 'empty' }, 'No certificates: none in tls.certificates and no ACME resolver.')); return; }
  const day = 24 * 3600 * 1000;
  box.replaceChildren(el('table', { class: 'grid' },
    el('thead', {}, el('tr', {}, ['Hosts', 'Issuer', 'Resolver', 'Expires in', 'State', 'Used by'].map((h) => el('th', {}, h)))),
    el('tbody', {}, list.map((c) => {
      const days = c.notAfter ? Math.floor((Date.parse(c.notAfter) - Date.now()) / day) : null;
      const cls = days === null ? 'none' : days < 7 ? 'bad' : days < 30 ? 'soon' : 'fine';
      return el('tr', { 'data-cert': c.main, 'data-state': c.state },
        el('td', { class: 'mono' }, [c.main, ...(c.sans || [])].join(', ')),
        el('td', {}, c.issuer || '–'),
        el('td', { class: 'mono' }, c.resolver || 'file'),
        el('td', {}, days === null ? 'no certificate yet' : el('div', { class: 'expiry ' + cls, title: c.notAfter },
          bar(Math.max(2, Math.min(100, (days / 90) * 100))), el('span', {}, days + ' days'))),
        el('td', {}, el('span', { class: 'status ' + (c.state === 'valid' ? 'enabled' : c.state === 'failed' || c.state === 'expired' ? 'disabled' : 'warning') }, c.state),
          c.renewAt ? el('div', { class: 'meta' }, 'renews ' + new Date(c.renewAt).toLocaleDateString()) : null,
          !c.resolver ? el('div', { class: 'meta' }, 'not renewed by Gantry (replace the file)') : null,
          c.lastError ? el('div', { class: 'err' }, c.lastError) : null),
        el('td', {}, (c.usedBy || []).map((u) => [u.includes('@') ? link('router', u) : u, ' '])));
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
