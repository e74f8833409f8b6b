// Live line charts drawn as SVG by the page itself: no charting library.
// Why: the charts are a few polylines over at most 1440 points, which SVG
// draws in a few dozen lines; a library would add a dependency to vet and
// update, a bundle several times the size of the whole UI, and nothing the
// dashboard needs (it must work offline under a strict CSP, so no CDN).
//
// A chart keeps its data as columns, exposed for tests and curious people
// as window.gantryCharts[id] = { t: [ms…], <series>: [values…] }.

import { el } from './dom.js';

export const SVG_NS = 'http://www.w3.org/2000/svg'; // an XML namespace name: loads nothing

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const k of kids.flat()) {
    if (k === undefined || k === null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten (at least min).
function niceMax(v, min) {
  v = Math.max(v, min);
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmt(v) {
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

function timeLabel(ms, withDate) {
  const d = new Date(ms);
  return withDate ? d.toLocaleString([], { hour: '2-digit', minute: '2-digit', day: '2-digit', month: 'short' })
    : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

window.gantryCharts = window.gantryCharts || {};

// Chart is one line chart: lines is [{key, label, cls}], unit the y unit.
export class Chart {
  constructor(id, title, unit, lines, minMax) {
    this.id = id;
    this.title = title;
    this.unit = unit;
    this.lines = lines;
    this.minMax = minMax || 1;
    this.limit = 900;
    this.data = { t: [] };
    for (const l of lines) this.data[l.key] = [];
    window.gantryCharts[id] = this.data;
    this.el = document.createElement('figure');
    this.el.className = 'chart';
    this.el.dataset.chart = id;
  }

  // set replaces the data with a series from /api/series (columns).
  set(series, limit) {
    this.limit = limit || series.t.length || 900;
    this.data.t = series.t.slice();
    for (const l of this.lines) this.data[l.key] = (series[l.key] || []).slice();
    window.gantryCharts[this.id] = this.data;
    this.draw();
  }

  // push appends one sample (t in ms; values by line key), dropping the
  // oldest beyond the limit; a sample already present (same t) is ignored.
  push(t, values) {
    const d = this.data;
    if (d.t.length && t <= d.t[d.t.length - 1]) return;
    d.t.push(t);
    for (const l of this.lines) d[l.key].push(values[l.key] || 0);
    while (d.t.length > this.limit) {
      d.t.shift();
      for (const l of this.lines) d[l.key].shift();
    }
    this.draw();
  }

  draw() {
    const W = 640, H = 170, L = 46, R = 8, T = 10, B = 22;
    const d = this.data;
    const n = d.t.length;
    let max = 0;
    for (const l of this.lines) for (const v of d[l.key]) if (v > max) max = v;
    max = niceMax(max, this.minMax);
    const t0 = n ? d.t[0] : 0, t1 = n ? d.t[n - 1] : 1;
    const span = Math.max(t1 - t0, 1);
    const x = (t) => L + ((t - t0) / span) * (W - L - R);
    const y = (v) => T + (1 - v / max) * (H - T - B);
    const grid = [];
    for (const f of [0, 0.5, 1]) {
      grid.push(svg('line', { x1: L, x2: W - R, y1: y(max * f), y2: y(max * f), class: 'grid' }));
      grid.push(svg('text', { x: L - 4, y: y(max * f) + 4, class: 'axis', 'text-anchor': 'end' }, fmt(max * f)));
    }
    const long = span > 60 * 60 * 1000;
    if (n) {
      grid.push(svg('text', { x: L, y: H - 6, class: 'axis' }, timeLabel(t0, long)));
      grid.push(svg('text', { x: W - R, y: H - 6, class: 'axis', 'text-anchor': 'end' }, timeLabel(t1, long)));
    }
    const paths = this.lines.map((l) => {
      const pts = [];
      for (let i = 0; i < n; i++) pts.push(x(d.t[i]).toFixed(1) + ',' + y(d[l.key][i]).toFixed(1));
      return svg('polyline', { points: pts.join(' '), class: 'line ' + l.cls, 'data-line': l.key });
    });
    const legend = this.lines.map((l) => {
      const last = n ? d[l.key][n - 1] : 0;
      return el('span', { class: 'legend ' + l.cls }, `${l.label} ${fmt(last)}${this.unit}`);
    });
    const box = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img', 'aria-label': this.title }, grid, paths);
    this.el.replaceChildren(el('figcaption', {}, el('strong', {}, this.title), ' ', legend), box);
  }
}

// ChartPair is the two charts of one object: rates (requests, 4xx, 5xx per
// second) and latency (p50, p99 in ms), fed from /api/series and then from
// each WebSocket "stats" message.
export class ChartPair {
  constructor(id) {
    this.rates = new Chart(id + '-rates', 'Requests/s', '/s', [
      { key: 'rps', label: 'requests', cls: 'rps' },
      { key: 'e4xx', label: '4xx', cls: 'e4xx' },
      { key: 'e5xx', label: '5xx', cls: 'e5xx' },
    ], 1);
    this.latency = new Chart(id + '-latency', 'Latency', ' ms', [
      { key: 'p50', label: 'p50', cls: 'p50' },
      { key: 'p99', label: 'p99', cls: 'p99' },
    ], 1);
    this.el = el('div', { class: 'charts', 'data-charts': id }, this.rates.el, this.latency.el);
    this.rates.draw();
    this.latency.draw();
  }

  set(series, limit) {
    this.rates.set(series, limit);
    this.latency.set(series, limit);
  }

  // pushRate appends one observe.Rate sampled at t (ms).
  pushRate(t, r) {
    r = r || {};
    const v = { rps: r.rps || 0, e4xx: r.clientErrorsPerSecond || 0, e5xx: r.errorsPerSecond || 0, p50: r.p50ms || 0, p99: r.p99ms || 0 };
    this.rates.push(t, v);
    this.latency.push(t, v);
  }
}
