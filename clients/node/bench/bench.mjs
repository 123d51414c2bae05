// bench.mjs — the Node client's roles in bench/clients.sh (`make bench`;
// docs/BENCHMARKS.md, "Clients"), against $JOBD_SERVER or --server:
//
//   node bench/bench.mjs enqueue-many --server URL --n N --queue Q
//       enqueueMany of N no-op jobs into Q; prints one line, `N jobs in S s`
//       (after one request, so the time is not the first connection's)
//   node bench/bench.mjs work --server URL --queue Q
//       one Worker at its default settings with a no-op handler for type
//       `noop` on Q, until SIGTERM (then it drains)
//
// bench/clients.sh times every client's worker the same way from outside:
// from the worker's start until its queue has nothing pending or running.
import { Client, Worker } from "../dist/index.js";

const [cmd, ...rest] = process.argv.slice(2);
const opt = {};
for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, "")] = rest[i + 1];
const c = new Client({ server: opt.server });

if (cmd === "enqueue-many" && opt.queue) {
  const n = Number(opt.n ?? 10000);
  const items = Array.from({ length: n }, (_, i) => ({ type: "noop", queue: opt.queue, payload: { i } }));
  await c.whoami(); // timed as a program that already talks to the server sees it
  const t0 = performance.now();
  const jobs = await c.enqueueMany(items);
  const s = (performance.now() - t0) / 1000;
  if (jobs.length !== n) throw new Error(`enqueued ${jobs.length} of ${n}`);
  console.log(`${n} jobs in ${s.toFixed(3)} s`);
} else if (cmd === "work" && opt.queue) {
  const w = new Worker({ client: c, queues: [opt.queue] });
  w.handle("noop", () => null);
  await w.run();
} else {
  console.error("usage: bench.mjs enqueue-many --server URL --n N --queue Q | work --server URL --queue Q");
  process.exit(2);
}
