// Charts fed live: the history from /api/series, then one sample per
// WebSocket "stats" message.

import { el } from './dom.js';
import { ChartPair } from './chart.js';
import { getJSON } from './common.js';

// A chart pair shows one series of /api/series: the proxy total ("") or
// "router=NAME" / "service=NAME"; range 15m follows the WebSocket, 24h is
// re-read each minute.
export class LiveCharts {
  constructor(id, query) {
    this.pair = new ChartPair(id);
    this.query = query;
    this.range = '15m';
    this.loaded = 0;
    this.seq = 0; // numbers the reads of the series (load)
    this.pending = null; // samples pushed while a read is in flight
    this.el = this.pair.el;
    this.load();
  }
  // load reads the range's series and draws it. Samples pushed while the
  // read is in flight are kept and pushed again after it (push ignores
  // those the series already holds): the series is cut when the server
  // answers, and the samples pushed before the answer arrives would
  // otherwise be lost, leaving a hole in the chart. A read answered after
  // a newer one started (a range change) is dropped.
  async load() {
    const seq = ++this.seq;
    const q = (this.query ? this.query + '&' : '') + 'range=' + this.range;
    this.pending = [];
    try {
      const s = await getJSON('series?' + q);
      if (seq !== this.seq) return;
      this.pair.set(s, this.range === '24h' ? 1440 : 900);
      if (this.range === '15m') for (const [t, r] of this.pending) this.pair.pushRate(t, r);
      this.el.dataset.loaded = 'true';
    } catch { /* no live statistics: charts stay empty */ }
    if (seq !== this.seq) return;
    this.pending = null;
    this.loaded = Date.now();
  }
  setRange(r) { this.range = r; this.load(); }
  setSmooth(k) { this.pair.setSmooth(k); }
  push(t, rate) {
    if (this.range !== '15m') {
      if (!this.pending && Date.now() - this.loaded > 60000) this.load(); // none in flight
      return;
    }
    // A read of the series in flight: keep the sample for after it, at
    // most a range's worth (900 one-second samples).
    if (this.pending && this.pending.length < 900) this.pending.push([t, rate]);
    this.pair.pushRate(t, rate);
  }
}

// rangeButtons wires the range buttons of span to charts and adds the
// smoothing choice: 1-second samples as they are, or averaged over 5, 15
// or 60 seconds.
export function rangeButtons(span, charts) {
  if (!span.querySelector('select.smooth')) {
    const sel = el('select', { class: 'smooth', title: 'average the samples over' },
      [1, 5, 15, 60].map((k) => el('option', { value: String(k) }, k === 1 ? 'no smoothing' : `smooth ${k} s`)));
    sel.onchange = () => charts.setSmooth(Number(sel.value));
    span.append(' ', sel);
  }
  for (const b of span.querySelectorAll('button')) {
    b.onclick = () => {
      for (const x of span.querySelectorAll('button')) x.classList.toggle('on', x === b);
      charts.setRange(b.dataset.range);
    };
  }
}
