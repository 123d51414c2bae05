// dag.js — where the steps of a workflow go in its drawing (views/workflow.js).
// Layers from left to right: a step's layer is 1 + the largest layer of its
// parents (0 for a step with none), so every edge points right. Within a
// layer the steps are ordered by the mean row of their parents (roots in
// the order they were submitted; ties keep it), which keeps most edges
// short and uncrossed without a full crossing minimisation; each layer is
// centred on the tallest when that is short (CENTRE_MAX). Pure: steps in, coordinates out, O(steps + edges).
// A parent ref that names no listed step (its job was deleted) is left out;
// a cycle cannot come from the API, and its steps would be put in layer 0.
export const BOX_W = 184;
export const BOX_H = 46;
const GAP_X = 64; // between layers, where the edges run
const GAP_Y = 14;
const PAD = 12;
// Layers are centred on the tallest while it fits in about a screen; past
// that they start at the top, so the roots and the join of a wide fan-out
// are in sight when the page opens, not hundreds of rows down.
const CENTRE_MAX = 12;

// steps: [{ref, depends_on: [ref]}] (borrowed). Returns {nodes, edges,
// width, height}: nodes[i] = {i, ref, layer, x, y} for steps[i]; edges
// {from, to, d} (node indexes and an SVG path from the parent's right side
// to the child's left side).
export function layout(steps) {
  const n = steps.length;
  const index = new Map(steps.map((s, i) => [s.ref, i]));
  const parents = steps.map((s) => [...new Set((s.depends_on || [])
    .map((r) => index.get(r)).filter((j) => j !== undefined))]);
  const kids = steps.map(() => []);
  parents.forEach((ps, i) => ps.forEach((p) => kids[p].push(i)));
  // Kahn's order: a step after all its parents.
  const left = parents.map((ps) => ps.length);
  const layer = new Array(n).fill(0);
  const queue = [];
  for (let i = 0; i < n; i++) if (left[i] === 0) queue.push(i);
  for (let q = 0; q < queue.length; q++) {
    const i = queue[q];
    for (const k of kids[i]) {
      layer[k] = Math.max(layer[k], layer[i] + 1);
      if (--left[k] === 0) queue.push(k);
    }
  }
  const depth = n ? Math.max(...layer) + 1 : 0;
  const layers = Array.from({ length: depth }, () => []);
  for (let i = 0; i < n; i++) layers[layer[i]].push(i); // submission order
  const row = new Array(n).fill(0);
  layers.forEach((ids, l) => {
    if (l > 0) {
      const bary = (i) => parents[i].reduce((a, p) => a + row[p], 0) / (parents[i].length || 1);
      const key = new Map(ids.map((i) => [i, bary(i)]));
      ids.sort((a, b) => key.get(a) - key.get(b) || a - b);
    }
    ids.forEach((i, r) => { row[i] = r; });
  });
  const tallest = Math.max(0, ...layers.map((ids) => ids.length));
  const centre = tallest <= CENTRE_MAX;
  const nodes = steps.map((s, i) => {
    const shift = centre ? (tallest - layers[layer[i]].length) * (BOX_H + GAP_Y) / 2 : 0;
    return {
      i, ref: s.ref, layer: layer[i],
      x: PAD + layer[i] * (BOX_W + GAP_X),
      y: PAD + shift + row[i] * (BOX_H + GAP_Y),
    };
  });
  const edges = [];
  parents.forEach((ps, i) => ps.forEach((p) => {
    const a = nodes[p];
    const b = nodes[i];
    const x1 = a.x + BOX_W;
    const y1 = a.y + BOX_H / 2;
    const x2 = b.x - 4; // room for the arrowhead
    const y2 = b.y + BOX_H / 2;
    const mid = (x1 + x2) / 2;
    edges.push({ from: p, to: i, d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` });
  }));
  return {
    nodes, edges,
    width: PAD * 2 + Math.max(1, depth) * (BOX_W + GAP_X) - GAP_X,
    height: PAD * 2 + Math.max(1, tallest) * (BOX_H + GAP_Y) - GAP_Y,
  };
}
