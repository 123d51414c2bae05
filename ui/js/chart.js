// chart.js — the throughput chart of the overview: one stacked bar per
// bucket of GET /v1/stats (succeeded, failed, dead), drawn as SVG elements
// by Preact (no library, no inline style: colours come from app.css). The SVG
// holds only the bars and stretches to the box's width; the axis labels are
// HTML text around it, so they keep the page's font size at any width (text
// inside a stretched SVG is stretched with it).
import { html } from './html.js';

const W = 720;
const H = 160;
const KINDS = ['succeeded', 'failed', 'dead'];

function niceMax(v) {
  if (v <= 5) return 5;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return v;
}

export function Chart({ stats }) {
  const series = stats.series || [];
  const totals = { succeeded: 0, failed: 0, dead: 0 };
  let peak = 0;
  for (const b of series) {
    for (const k of KINDS) totals[k] += b[k] || 0;
    peak = Math.max(peak, KINDS.reduce((s, k) => s + (b[k] || 0), 0));
  }
  const max = niceMax(peak);
  const n = Math.max(series.length, 1);
  const bw = W / n;
  const y = (v) => (H * v) / max;
  const label = `Last hour: ${totals.succeeded} succeeded, ${totals.failed} failed, ${totals.dead} dead`;
  const bars = [];
  series.forEach((b, i) => {
    let base = 0;
    for (const k of KINDS) {
      const v = b[k] || 0;
      if (v > 0) {
        bars.push(html`<rect class=${'bar-' + k} x=${i * bw + 0.5}
          y=${H - y(base + v)} width=${Math.max(bw - 1, 1)} height=${y(v)}>
          <title>${b.t}: ${v} ${k}</title></rect>`);
      }
      base += v;
    }
  });
  const minutes = Math.round((series.length * (stats.step_s || 60)) / 60);
  return html`<figure class="chart">
    <div class="plot">
      <div class="y-ticks" aria-hidden="true"><span>${max}</span><span>0</span></div>
      <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label} preserveAspectRatio="none">
        <line class="grid" x1="0" y1="0.5" x2=${W} y2="0.5" vector-effect="non-scaling-stroke" />
        <line class="axis" x1="0" y1=${H - 0.5} x2=${W} y2=${H - 0.5}
          vector-effect="non-scaling-stroke" />
        ${bars}
      </svg>
    </div>
    <div class="x-ticks" aria-hidden="true">
      <span>${minutes ? `-${minutes}m` : ''}</span><span>now</span>
    </div>
    <figcaption>
      <span class="key k-succeeded">${totals.succeeded} succeeded</span>
      <span class="key k-failed">${totals.failed} failed</span>
      <span class="key k-dead">${totals.dead} dead</span>
      <span class="muted"> in the last hour, per ${stats.step_s || 60}s</span>
    </figcaption>
  </figure>`;
}
