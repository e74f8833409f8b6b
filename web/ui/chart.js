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

// niceMax rounds v up to 1, 2 or 5 times a power of ten (at least min):
// its halves are round too (0 / 25 / 50).
function niceMax(v, min) {
  v = Math.max(v, min);
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// fmt writes a value with at most three significant digits and no
// trailing zeros: 0, 2.5, 25, 250, 1.25k.
function fmt(v) {
  if (v >= 10000) return (v / 1000).toFixed(0) + 'k';
  if (v >= 1000) return String(+(v / 1000).toFixed(2)) + 'k';
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return String(+v.toFixed(1));
  return String(+v.toFixed(2));
}

function timeLabel(ms, withDate) {
  const d = new Date(ms);
  return withDate ? d.toLocaleString([], { hour: '2-digit', minute: '2-digit', day: '2-digit', month: 'short' })
    : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

// smooth is the moving average of v over the last k samples (k <= 1: v).
export function smooth(v, k) {
  if (!(k > 1)) return v;
  const out = new Array(v.length);
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    sum += v[i];
    if (i >= k) sum -= v[i - k];
    out[i] = sum / Math.min(i + 1, k);
  }
  return out;
}

// scaleTop is the top of the y axis for values: their maximum, unless a
// few spikes stand far above the rest (more than 3 times the 95th
// percentile): then the axis stops above the 95th percentile and the
// spikes are drawn clipped at the top with a marker and their value.
export function scaleTop(values, min) {
  const vs = values.filter((x) => x > 0).sort((a, b) => a - b);
  if (!vs.length) return { top: niceMax(0, min), clipped: false };
  const max = vs[vs.length - 1];
  const p95 = vs[Math.floor(0.95 * (vs.length - 1))];
  if (vs.length >= 10 && max > 3 * p95 && p95 > 0) return { top: niceMax(p95 * 1.5, min), clipped: true };
  return { top: niceMax(max, min), clipped: false };
}

window.gantryCharts = window.gantryCharts || {};

// Chart is one line chart: lines is [{key, label, cls}], unit the y unit.
// axisUnit is the unit written on the y axis ("req/s", "ms"); clip
// lets a few spikes stand above the axis (scaleTop) instead of flattening
// the rest.
export class Chart {
  constructor(id, title, unit, lines, minMax, axisUnit, clip) {
    this.clip = !!clip;
    this.id = id;
    this.title = title;
    this.unit = unit;
    this.axisUnit = axisUnit || unit.trim();
    this.smoothing = 1;
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

  // setSmooth draws a moving average over k samples (1: the samples).
  setSmooth(k) {
    this.smoothing = k > 1 ? k : 1;
    this.el.dataset.smooth = String(this.smoothing);
    this.draw();
  }

  // draw plots the data: y labels 0 / half / top with the unit on the
  // top one ("0 / 25 / 50 req/s"), five time labels, one polyline per
  // line (smoothed when asked), and values above a clipped axis as
  // markers at the top.
  draw() {
    const W = 640, H = 170, L = 52, R = 10, T = 12, B = 22;
    const d = this.data;
    const n = d.t.length;
    const k = this.smoothing || 1;
    const shown = {};
    for (const l of this.lines) shown[l.key] = smooth(d[l.key], k);
    const all = this.lines.flatMap((l) => shown[l.key]);
    const sc = this.clip ? scaleTop(all, this.minMax) : { top: niceMax(Math.max(0, ...all), this.minMax) };
    const max = sc.top;
    const t0 = n ? d.t[0] : 0, t1 = n ? d.t[n - 1] : 1;
    const span = Math.max(t1 - t0, 1);
    const x = (t) => L + ((t - t0) / span) * (W - L - R);
    const y = (v) => T + (1 - Math.min(v, max) / max) * (H - T - B);
    const grid = [];
    for (const f of [0, 0.5, 1]) {
      grid.push(svg('line', { x1: L, x2: W - R, y1: y(max * f), y2: y(max * f), class: 'grid' }));
      grid.push(svg('text', { x: L - 4, y: y(max * f) + 4, class: 'axis y', 'text-anchor': 'end' }, fmt(max * f) + (f === 1 ? ' ' + this.axisUnit : '')));
    }
    const long = span > 60 * 60 * 1000;
    if (n > 1) {
      for (let i = 0; i <= 4; i++) {
        const t = t0 + (span * i) / 4;
        grid.push(svg('line', { x1: x(t), x2: x(t), y1: H - B, y2: H - B + 3, class: 'grid' }));
        grid.push(svg('text', { x: x(t), y: H - 6, class: 'axis x', 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, timeLabel(t, long)));
      }
    }
    const marks = [];
    const paths = this.lines.map((l) => {
      const pts = [];
      const v = shown[l.key];
      for (let i = 0; i < n; i++) {
        pts.push(x(d.t[i]).toFixed(1) + ',' + y(v[i]).toFixed(1));
        if (v[i] > max) {
          marks.push(svg('path', { d: `M${(x(d.t[i]) - 4).toFixed(1)},${T + 5} l4,-6 l4,6 z`, class: 'clipped ' + l.cls, 'data-line': l.key },
            svg('title', {}, `${l.label} ${fmt(v[i])}${this.unit} at ${timeLabel(d.t[i], long)} (above the axis)`)));
        }
      }
      return svg('polyline', { points: pts.join(' '), class: 'line ' + l.cls, 'data-line': l.key });
    });
    if (marks.length) grid.push(svg('text', { x: W - R, y: T - 2, class: 'axis clipnote', 'text-anchor': 'end' }, '▲ above the axis: hover for the value'));
    const legend = this.lines.map((l) => {
      const last = n ? d[l.key][n - 1] : 0;
      return el('span', { class: 'legend ' + l.cls }, `${l.label} ${fmt(last)}${this.unit}`);
    });
    const box = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img', 'aria-label': this.title }, grid, paths, marks);
    this.el.dataset.clipped = String(marks.length > 0);
    this.el.replaceChildren(el('figcaption', {}, el('strong', {}, this.title), ' ', legend, k > 1 ? el('span', { class: 'meta' }, ` (average of ${k} s)`) : null), box);
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
    ], 1, 'req/s');
    this.latency = new Chart(id + '-latency', 'Latency', ' ms', [
      { key: 'p50', label: 'p50', cls: 'p50' },
      { key: 'p99', label: 'p99', cls: 'p99' },
    ], 1, 'ms', true);
    this.el = el('div', { class: 'charts', 'data-charts': id }, this.rates.el, this.latency.el);
    this.rates.draw();
    this.latency.draw();
  }

  set(series, limit) {
    this.rates.set(series, limit);
    this.latency.set(series, limit);
  }

  // setSmooth averages both charts over k samples (1: off).
  setSmooth(k) {
    this.rates.setSmooth(k);
    this.latency.setSmooth(k);
  }

  // pushRate appends one observe.Rate sampled at t (ms).
  pushRate(t, r) {
    r = r || {};
    const v = { rps: r.rps || 0, e4xx: r.clientErrorsPerSecond || 0, e5xx: r.errorsPerSecond || 0, p50: r.p50ms || 0, p99: r.p99ms || 0 };
    this.rates.push(t, v);
    this.latency.push(t, v);
  }
}
