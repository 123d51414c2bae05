// jobd under the peer harness (bench/harness/peers/lib/harness.mjs), beside
// Graphile Worker, pg-boss, BullMQ and beanstalkd. bench/peers/run-shared.sh
// copies this file into a copy of bench/harness/peers/ and runs run-all.sh,
// whose "jobd" block runs it on the same fresh PostgreSQL as the peers.
//
//   JOBD_BIN=build/jobd JOBD_BENCH_BIN=build/jobd_bench node jobd.mjs    throughput
//   MODE=latency ... / MODE=enqueue1 ...                                  as for every peer
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
// jobd.jobs until the server's archive pass moves it to jobd.jobs_done).

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

const prefetch = () => Number(process.env.JOBD_PREFETCH || 0);

const adapter = {
  system: 'jobd',
  version: jobdVersion(),
  serverComms: ['postgres', 'jobd'],
  durability: 'PostgreSQL commit, fsync on every commit (synchronous_commit=on); 201 only after the commit',
  // JOBD_PREFETCH=N: the worker claims up to N jobs ahead of its handler
  // threads ([worker] prefetch, docs/WORKER.md), as Graphile Worker's batched
  // variant fetches localQueue.size ahead; unset: jobd's default (= concurrency).
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
      notes: () => 'jobd server takes the enqueues over HTTP; the worker is a separate C process (libjobd embedded worker); done = succeeded rows in jobd.all_jobs',
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
      async count() {
        const r = await db.query(
          `select (select count(*) from jobd.jobs where status <> 'succeeded')::int as hot,
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
