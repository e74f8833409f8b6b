// Configuration diffs for the revisions page: every object of two merged
// configurations (http/tcp/udp routers, services, middlewares, transports;
// tls) compared by its JSON, and for each changed object a unified line
// diff of its definition. The provider that caused a change is the one the
// object's name is qualified with ("web@docker" → docker).

// stable is JSON with sorted keys, two-space indented.
export function stable(v) {
  const sort = (x) => {
    if (Array.isArray(x)) return x.map(sort);
    if (x && typeof x === 'object') {
      const o = {};
      for (const k of Object.keys(x).sort()) o[k] = sort(x[k]);
      return o;
    }
    return x;
  };
  return v === undefined ? '' : JSON.stringify(sort(v), null, 2);
}

// objects flattens a configuration into {"http routers web@file": def, …}.
export function objects(cfg) {
  const out = {};
  for (const proto of ['http', 'tcp', 'udp']) {
    const sec = (cfg || {})[proto] || {};
    for (const [kind, m] of Object.entries(sec)) {
      for (const [name, def] of Object.entries(m || {})) out[`${proto} ${kind} ${name}`] = def;
    }
  }
  const tls = (cfg || {}).tls;
  if (tls) {
    for (const [kind, m] of Object.entries(tls)) {
      if (Array.isArray(m)) m.forEach((def, i) => { out[`tls ${kind} #${i + 1}`] = def; });
      else for (const [name, def] of Object.entries(m || {})) out[`tls ${kind} ${name}`] = def;
    }
  }
  return out;
}

export function providerOf(key) {
  const name = key.split(' ').slice(2).join(' ');
  const i = name.lastIndexOf('@');
  return i >= 0 ? name.slice(i + 1) : (key.startsWith('tls ') ? 'tls' : '');
}

// compare returns the changed objects of a → b, sorted by key:
// [{key, provider, kind: 'added'|'removed'|'changed', before, after}].
export function compare(a, b) {
  const oa = objects(a), ob = objects(b);
  const keys = [...new Set([...Object.keys(oa), ...Object.keys(ob)])].sort();
  const out = [];
  for (const k of keys) {
    const before = stable(oa[k]), after = stable(ob[k]);
    if (before === after) continue;
    out.push({ key: k, provider: providerOf(k), kind: !before ? 'added' : !after ? 'removed' : 'changed', before, after });
  }
  return out;
}

// lineDiff is a unified diff of two texts as [{op: ' '|'-'|'+', text}],
// by longest common subsequence (object definitions are small).
export function lineDiff(a, b) {
  const x = a ? a.split('\n') : [], y = b ? b.split('\n') : [];
  const n = x.length, m = y.length;
  if (n * m > 4e6) { // too large to align: show it whole
    return [...x.map((t) => ({ op: '-', text: t })), ...y.map((t) => ({ op: '+', text: t }))];
  }
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { out.push({ op: ' ', text: x[i] }); i++; j++; }
    else if (i < n && (j === m || L[i + 1][j] >= L[i][j + 1])) { out.push({ op: '-', text: x[i] }); i++; }
    else { out.push({ op: '+', text: y[j] }); j++; }
  }
  return out;
}

// hunks keeps changed lines with context lines around them, marking cuts
// with {op: '@', text: '…'}.
export function hunks(lines, context = 3) {
  const keep = new Array(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.op !== ' ') for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out = [];
  let cut = false;
  lines.forEach((l, i) => {
    if (keep[i]) { if (cut) out.push({ op: '@', text: '…' }); cut = false; out.push(l); } else cut = true;
  });
  return out;
}
