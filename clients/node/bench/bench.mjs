// bench.mjs — throughput of @jobd/client against a running `jobd server`:
//
//   node bench/bench.mjs enqueue-many --server URL [--n 10000]
//       enqueueMany of N jobs (a type nobody runs); prints jobs/s
//   node bench/bench.mjs process --server URL [--n 5000]
//       enqueues N no-op jobs, then one Worker at its defaults runs them;
//       prints jobs/s (wall time from run() to the last completion, and
//       the server's window: first started_at to last finished_at)
//   node bench/bench.mjs seed --server URL --type T --queue Q [--n 5000]
//   node bench/bench.mjs window --server URL --queue Q [--n 5000]
//       for another worker (jobd worker --server): enqueue its jobs; wait
//       until N of the queue succeeded and print the server's window
//
// bench/compare.sh runs them beside `jobd worker --server` on PostgreSQL.
import { Client, Worker } from "../dist/index.js";

const [cmd, ...rest] = process.argv.slice(2);
const opt = {};
for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, "")] = rest[i + 1];
const n = Number(opt.n ?? (cmd === "enqueue-many" ? 10000 : 5000));
const c = new Client({ server: opt.server });

async function seed(type, queue, count) {
  const items = Array.from({ length: count }, (_, i) => ({ type, queue, payload: { i } }));
  const t0 = performance.now();
  await c.enqueueMany(items);
  return (performance.now() - t0) / 1000;
}

/** Waits until count jobs of the queue succeeded; the server's first start to last finish, in seconds. */
async function window(queue, count) {
  let jobs;
  for (;;) {
    jobs = [];
    for await (const j of c.jobs({ queue, status: "succeeded", page_size: 1000 })) jobs.push(j);
    if (jobs.length >= count) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const start = Math.min(...jobs.map((j) => Date.parse(j.started_at)));
  const end = Math.max(...jobs.map((j) => Date.parse(j.finished_at)));
  return (end - start) / 1000;
}

const rate = (k, s) => `${Math.round(k / s)} jobs/s`;

if (cmd === "enqueue-many") {
  const s = await seed("bench.nobody", `bench-enq-${process.pid}`, n);
  console.log(`enqueue_many: ${n} jobs in ${s.toFixed(3)} s: ${rate(n, s)}`);
} else if (cmd === "process") {
  const queue = `bench-node-${process.pid}`;
  await seed("bench.noop", queue, n);
  const w = new Worker({ client: c, queues: [queue], handleSignals: false });
  w.handle("bench.noop", () => null);
  const t0 = performance.now();
  const run = w.run();
  while (w.counts.succeeded < n) await new Promise((r) => setTimeout(r, 5));
  const wall = (performance.now() - t0) / 1000;
  await w.stop();
  await run;
  const srv = await window(queue, n);
  console.log(`node worker (defaults: concurrency ${w.concurrency}): ${n} no-op jobs in ${wall.toFixed(3)} s: ` +
              `${rate(n, wall)} (server window ${srv.toFixed(3)} s: ${rate(n, srv)})`);
} else if (cmd === "seed") {
  const s = await seed(opt.type, opt.queue, n);
  console.log(`seeded ${n} ${opt.type} jobs in ${opt.queue} in ${s.toFixed(3)} s`);
} else if (cmd === "window") {
  const s = await window(opt.queue, n);
  console.log(`${opt.queue}: ${n} jobs, server window ${s.toFixed(3)} s: ${rate(n, s)}`);
} else {
  console.error("usage: bench.mjs enqueue-many|process|seed|window --server URL [--n N] [--type T --queue Q]");
  process.exit(2);
}
