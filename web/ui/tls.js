// The router page's TLS panel: the certificate resolver, the domains, the
// certificate actually served for them (the one whose usedBy names the
// router, else the one whose names cover its host, else Gantry's generated
// default), its expiry, and the TLS options in force.

import { el } from './dom.js';
import { getJSON } from './common.js';

// hostsOf lists the hostnames a router's certificate must cover: its
// tls.domains, else the Host / HostSNI names of its rule.
export function hostsOf(r) {
  const out = [];
  for (const d of (r.tls && r.tls.domains) || []) out.push(d.main, ...(d.sans || []));
  if (!out.length) {
    for (const m of String(r.rule || '').matchAll(/Host(?:SNI)?\(([^)]*)\)/g)) {
      for (const h of m[1].matchAll(/[`"]([^`"]+)[`"]/g)) if (h[1] !== '*') out.push(h[1]);
    }
  }
  return [...new Set(out.filter(Boolean).map((h) => h.toLowerCase()))];
}

// covers reports whether certificate name n (maybe "*.example.com")
// covers host h.
function covers(n, h) {
  n = String(n || '').toLowerCase();
  if (n === h) return true;
  return n.startsWith('*.') && h.endsWith(n.slice(1)) && !h.slice(0, -n.length + 1).includes('.');
}

// servedCert picks the certificate served for router r from the list.
export function servedCert(r, certs) {
  const byUse = certs.find((c) => (c.usedBy || []).includes(r.name) && c.notAfter);
  if (byUse) return byUse;
  const hosts = hostsOf(r);
  if (!hosts.length) return null;
  const names = (c) => (c.dnsNames && c.dnsNames.length ? c.dnsNames : [c.main, ...(c.sans || [])]);
  return certs.find((c) => c.notAfter && hosts.every((h) => names(c).some((n) => covers(n, h))))
    || certs.find((c) => c.notAfter && hosts.some((h) => names(c).some((n) => covers(n, h)))) || null;
}

// leftText is the time left until t: "3 days 4 h", "5 h 12 min", "expired".
export function leftText(t, now = Date.now()) {
  const ms = Date.parse(t) - now;
  if (ms <= 0) return 'expired';
  const min = Math.floor(ms / 60000), h = Math.floor(min / 60), d = Math.floor(h / 24);
  if (d >= 2) return `${d} days`;
  if (d >= 1) return `${d} day ${h - 24 * d} h`;
  if (h >= 1) return `${h} h ${min - 60 * h} min`;
  return `${min} min`;
}

const row = (k, ...v) => el('tr', { 'data-tls': k }, el('th', {}, k), el('td', {}, v));

// lastRead holds the certificates and options read last ([certs, opts]),
// so a page drawn again (every configuration change redraws it) shows the
// panel filled at once instead of empty until the next read answers.
let lastRead = null;

// tlsPanel returns the panel for router r (HTTP or TCP), filled once the
// certificates and options are read; null without a tls section.
export function tlsPanel(r) {
  if (!r.tls) return null;
  const tbody = el('tbody', {});
  const box = el('div', { class: 'tlspanel', 'data-router': r.name }, el('h3', {}, 'TLS'), el('table', { class: 'grid kv' }, tbody));
  const optName = r.tls.options || 'default';
  const fillIn = (certs, opts) => {
    const c = servedCert(r, certs);
    const o = opts.find((x) => x.name === optName);
    const hosts = hostsOf(r);
    const rows = [
      row('Resolver', r.tls.certResolver ? el('span', { class: 'mono' }, r.tls.certResolver) : 'none (a certificate from the tls section or the default)'),
      row('Domains', hosts.length ? el('span', { class: 'mono' }, hosts.join(', ')) : 'any (no host in the rule)'),
    ];
    if (c) {
      const left = leftText(c.notAfter);
      const life = Date.parse(c.notAfter) - Date.parse(c.notBefore || c.notAfter);
      const frac = life > 0 ? (Date.parse(c.notAfter) - Date.now()) / life : 1;
      rows.push(row('Certificate served', el('span', { class: 'mono' }, [c.main, ...(c.sans || [])].join(', ')), ' · issuer ', c.issuer || '–',
        ' · ', c.resolver ? 'from resolver ' + c.resolver : 'from the tls section'));
      rows.push(row('Expires', el('span', { class: 'expires ' + (left === 'expired' || frac < 0.1 ? 'down' : frac < 0.34 ? 'pending' : 'up'), title: c.notAfter },
        new Date(c.notAfter).toLocaleString(), ' (in ', left, ')'), c.state && c.state !== 'valid' ? el('span', { class: 'err' }, ' · ' + c.state + (c.lastError ? ': ' + c.lastError : '')) : null));
    } else {
      rows.push(row('Certificate served', el('span', { class: 'pending' }, 'Gantry\'s generated default certificate: no certificate covers ' + (hosts.join(', ') || 'this router'))));
    }
    rows.push(row('TLS options', el('span', { class: 'mono' }, optName), o
      ? ` · ${o.minVersion}${o.maxVersion ? '–' + o.maxVersion : ' or later'} · client certificates: ${o.clientAuthType}${o.clientCAs ? ` (${o.clientCAs} CAs)` : ''}${o.sniStrict ? ' · sniStrict' : ''}${(o.alpnProtocols || []).length ? ' · ALPN ' + o.alpnProtocols.join(', ') : ''}${o.configured ? '' : ' (defaults)'}`
      : el('span', { class: 'err' }, ' · not defined: the default options apply')));
    tbody.replaceChildren(...rows);
    box.dataset.loaded = 'true';
  };
  if (lastRead) fillIn(...lastRead);
  Promise.all([getJSON('tls/certificates').catch(() => []), getJSON('tls/options').catch(() => [])]).then(([c, o]) => {
    lastRead = [c, o];
    fillIn(c, o);
  });
  return box;
}
