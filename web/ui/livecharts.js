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
    this.el = this.pair.el;
    this.load();
  }
  async load() {
    const q = (this.query ? this.query + '&' : '') + 'range=' + this.range;
    try {
      const s = await getJSON('series?' + q);
      this.pair.set(s, this.range === '24h' ? 1440 : 900);
      this.el.dataset.loaded = 'true';
    } catch { /* no live statistics: charts stay empty */ }
    this.loaded = Date.now();
  }
  setRange(r) { this.range = r; this.load(); }
  setSmooth(k) { this.pair.setSmooth(k); }
  push(t, rate) {
    if (this.range === '15m') this.pair.pushRate(t, rate);
    else if (Date.now() - this.loaded > 60000) this.load();
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
