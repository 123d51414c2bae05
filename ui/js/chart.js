// chart.js — the throughput chart of the overview: one stacked bar per
// bucket of GET /v1/stats (succeeded, failed, dead), drawn as SVG elements
// by Preact (no library, no inline style: colours come from app.css).
import { html } from './html.js';

const W = 720;
const H = 160;
const PAD_L = 36;
const PAD_B = 18;
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
  const bw = (W - PAD_L) / n;
  const y = (v) => ((H - PAD_B) * v) / max;
  const label = `Last hour: ${totals.succeeded} succeeded, ${totals.failed} failed, ${totals.dead} dead`;
  const bars = [];
  series.forEach((b, i) => {
    let base = 0;
    for (const k of KINDS) {
      const v = b[k] || 0;
      if (v > 0) {
        bars.push(html`<rect class=${'bar-' + k} x=${PAD_L + i * bw + 0.5}
          y=${H - PAD_B - y(base + v)} width=${Math.max(bw - 1, 1)} height=${y(v)}>
          <title>${b.t}: ${v} ${k}</title></rect>`);
      }
      base += v;
    }
  });
  const minutes = Math.round((series.length * (stats.step_s || 60)) / 60);
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label} preserveAspectRatio="none">
      <line class="axis" x1=${PAD_L} y1=${H - PAD_B} x2=${W} y2=${H - PAD_B} />
      <line class="grid" x1=${PAD_L} y1="0.5" x2=${W} y2="0.5" />
      <text class="tick" x=${PAD_L - 4} y="10" text-anchor="end">${max}</text>
      <text class="tick" x=${PAD_L - 4} y=${H - PAD_B} text-anchor="end">0</text>
      <text class="tick" x=${PAD_L} y=${H - 4}>${minutes ? `-${minutes}m` : ''}</text>
      <text class="tick" x=${W} y=${H - 4} text-anchor="end">now</text>
      ${bars}
    </svg>
    <figcaption>
      <span class="key k-succeeded">${totals.succeeded} succeeded</span>
      <span class="key k-failed">${totals.failed} failed</span>
      <span class="key k-dead">${totals.dead} dead</span>
      <span class="muted"> in the last hour, per ${stats.step_s || 60}s</span>
    </figcaption>
  </figure>`;
}
