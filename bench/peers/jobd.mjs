// jobd under the peer harness (bench/harness/peers/lib/harness.mjs), beside
// Graphile Worker, pg-boss, BullMQ and beanstalkd. bench/peers/run-shared.sh
// copies this file into a copy of bench/harness/peers/ and runs run-all.sh,
// whose "jobd" block runs it on the same fresh PostgreSQL as the peers.
//
//   JOBD_BIN=build/jobd JOBD_BENCH_BIN=build/jobd_bench node jobd.mjs    throughput
//   MODE=latency ... / MODE=enqueue1 ...                                  as for every peer
//   JOBD_PREFETCH=auto ...                 jobd's default prefetch instead of Graphile's 500
//
// What runs: `jobd server` (the HTTP API, started fresh by reset()) takes the
// enqueues: bulk = POST /v1/jobs/batch with ENQUEUE_CHUNK jobs per request,
// one = POST /v1/jobs (answered 201 after its commit; the server group-commits
// concurrent requests). The worker is its own binary, like beanstalkd-py.mjs's:
// `jobd_bench cworker`, a C program on libjobd's embedded worker API with a
// no-op C handler, CONCURRENCY handler threads (= its claim limit), so its
// peak RSS and CPU are jobd's, not Node's. For latency the handler records
// Date.now()-equivalent minus the payload's `due` (ms) and writes them out on
// SIGTERM; collect() reads them. Completion is counted in jobd's own store:
// succeeded rows in jobd.all_jobs (a completion leaves its row succeeded in
// jobd.jobs until the server's archive pass moves it to jobd.jobs_done), and
// while jobs are in progress jobd's exact counters (count() says why).

import { spawn, execFileSync } from 'node:child_process';
import { openSync, closeSync, readFileSync, unlinkSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main, sleep } from './lib/harness.mjs';
import { ensureDatabase, client } from './lib/pgutil.mjs';

const JOBD = process.env.JOBD_BIN || 'jobd';
const BENCH = process.env.JOBD_BENCH_BIN || 'jobd_bench';
const DB = 'bench_jobd';

function jobdVersion() {
  try { return execFileSync(JOBD, ['--version']).toString().trim().replace(/^jobd /, ''); } catch { return 'unknown'; }
}

/** Starts `jobd server` on a free loopback port; resolves to {proc, base}. */
async function startServer(url) {
  const log = `/tmp/bench-jobd-server-${process.pid}.log`;
  try { unlinkSync(log); } catch {}
  const fd = openSync(log, 'a');
  const proc = spawn(JOBD, ['server', '--db', url, '--listen', '127.0.0.1:0'], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  proc.on('exit', () => { exited = true; });
  for (let i = 0; i < 1500; i++) {
    const m = existsSync(log) && readFileSync(log, 'utf8').match(/listening on (http:\/\/[^\s]+)/);
    if (m) return { proc, base: m[1], log, exited: () => exited };
    if (exited) throw new Error(`jobd server exited at start: ${readFileSync(log, 'utf8').slice(-500)}`);
    await sleep(20);
  }
  proc.kill('SIGKILL');
  throw new Error('jobd server did not listen within 30 s');
}

async function stopProc(proc) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((r) => proc.on('exit', r));
  proc.kill('SIGTERM');
  await Promise.race([gone, sleep(15000).then(() => proc.kill('SIGKILL'))]);
}

async function post(url, body) {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`POST ${url}: HTTP ${r.status}: ${text.slice(0, 300)}`);
  return text;
}

const toSpec = (j) => ({
  type: 'noop',
  payload: j.runAt ? { ...j.data, due: j.runAt } : j.data,
  ...(j.runAt ? { run_at: new Date(j.runAt).toISOString() } : {}),
});

// The worker's local queue ([worker] prefetch, docs/WORKER.md): by default
// the size of Graphile Worker's batched variant's (GW_LOCAL_QUEUE, 500), the
// setting the processing target names; JOBD_PREFETCH=N another size,
// JOBD_PREFETCH=auto jobd's own default (adapts to handler run time, up to 1000).
const prefetchSetting = () => process.env.JOBD_PREFETCH || process.env.GW_LOCAL_QUEUE || '500';
const prefetch = () => (prefetchSetting() === 'auto' ? 0 : Number(prefetchSetting()));

const adapter = {
  system: 'jobd',
  version: jobdVersion(),
  serverComms: ['postgres', 'jobd'],
  durability: 'PostgreSQL commit, fsync on every commit (synchronous_commit=on); 201 only after the commit',
  // prefetch N: the worker claims up to N jobs ahead of its handler threads,
  // as Graphile Worker's batched variant fetches localQueue.size ahead.
  variant: () => (prefetch() ? `HTTP API + C-handler worker (libjobd), prefetch ${prefetch()}` : 'HTTP API + C-handler worker (libjobd)'),
  settings: (env) => ({ worker_concurrency: env.concurrency, prefetch: prefetch() || 'auto (adapts to handler run time, up to 1000)', claim_limit: prefetch() ? env.concurrency + prefetch() : `up to ${env.concurrency} + 1000`, enqueue_chunk: env.chunk, worker: 'jobd_bench cworker (jobd_worker_* API, no-op C handler)' }),

  async open(env) {
    const url = await ensureDatabase(env.pgUrl, DB);
    const db = await client(url);
    let server = null;
    return {
      bulkMethod: `POST /v1/jobs/batch, ${env.chunk} jobs per request`,
      singleMethod: 'POST /v1/jobs (concurrent requests group-committed by the server)',
      pollDescription: () => 'LISTEN/NOTIFY wake-up, a timer for the soonest run_at, 5 s safety-net poll (defaults)',
      notes: () => 'jobd server takes the enqueues over HTTP; the worker is a separate C process (libjobd embedded worker); done = succeeded rows in jobd.all_jobs (while jobs are in progress, the exact counters of jobd.stats_buckets)',
      async reset() {
        if (server) await stopProc(server.proc);
        await db.query("set client_min_messages = warning");
        await db.query('drop schema if exists jobd cascade');
        execFileSync(JOBD, ['migrate', '--db', url], { stdio: ['ignore', 'ignore', 'inherit'] });
        await db.query('checkpoint');
        server = await startServer(url);
      },
      async enqueueBulk(jobs) {
        for (let i = 0; i < jobs.length; i += env.chunk) {
          await post(`${server.base}/v1/jobs/batch`, { jobs: jobs.slice(i, i + env.chunk).map(toSpec) });
        }
      },
      async enqueueOne(job) {
        await post(`${server.base}/v1/jobs`, toSpec(job));
      },
      // While jobs are being worked on, jobd's own counters (jobd.stats_buckets,
      // written in the transaction of every enqueue and every completion, so
      // exact): a few rows, where counting the rows themselves scanned every
      // job at each poll (15 ms at 20,000 jobs, 150 ms at 200,000, on the
      // database the worker is using). Before the first job finishes and
      // once every job has, the rows themselves say it (one scan).
      async count() {
        const s = (await db.query(
          `select coalesce(sum(enqueued), 0)::int as enq, coalesce(sum(succeeded), 0)::int as done,
                  coalesce(sum(dead), 0)::int as dead from jobd.stats_buckets`)).rows[0];
        if (s.done + s.dead > 0 && s.done + s.dead < s.enq)
          return { done: s.done, failed: s.dead, pending: s.enq - s.done - s.dead, total: s.enq };
        const r = await db.query(
          `select count(*) filter (where status in ('pending', 'running'))::int as hot,
                  count(*) filter (where status = 'succeeded')::int as done,
                  count(*) filter (where status in ('dead', 'cancelled'))::int as failed
             from jobd.all_jobs`);
        const { hot, done, failed } = r.rows[0];
        return { done, failed, pending: hot, total: hot + done + failed };
      },
      async close() {
        if (server) {
          await stopProc(server.proc);
          try { unlinkSync(server.log); } catch {}
        }
        await db.end();
      },
    };
  },

  async prepareWorker(env) {
    const url = await ensureDatabase(env.pgUrl, DB);
    const out = `/tmp/bench-jobd-lat-${process.pid}.json`;
    let proc = null;
    return {
      async start() {
        // --out: the worker writes {handled, lat} on exit (lat only for payloads with `due`)
        const args = ['cworker', '--db', url, '--concurrency', String(env.concurrency), '--out', out];
        if (prefetch()) args.push('--prefetch', String(prefetch()));
        proc = spawn(BENCH, args, { stdio: ['ignore', 'inherit', 'inherit'] });
      },
      pid: () => proc.pid,
      async stop() { await stopProc(proc); },
      async collect() {
        try {
          const r = JSON.parse(readFileSync(out, 'utf8'));
          unlinkSync(out);
          return r;
        } catch {
          return { handled: null, lat: [] };
        }
      },
    };
  },
};

main(adapter, fileURLToPath(import.meta.url));
