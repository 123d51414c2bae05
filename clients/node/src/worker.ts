// worker.ts — Worker: runs handlers registered by job type against a jobd
// server, as `jobd worker --server` does (docs/WORKER.md, Remote workers;
// docs/API.md, Remote workers and Workers): it announces itself and keeps
// its presence, long-polls claims for its free slots, heartbeats each job
// at a third of the lease, reports with the attempt and lease_token, sends
// reports again after network errors, stops a handler (ctx.signal) on
// timeout_s, cancellation and a lost lease, releases jobs it claimed but
// will not start, and drains on SIGTERM/SIGINT within shutdownGrace.
import { Client } from "./client.js";
import { env, jitter, sleep, type ClientOptions } from "./http.js";
import { durationMs } from "./duration.js";
import { BadRequestError, ForbiddenError, JobdError, NetworkError, NotFoundError, Permanent,
         StaleAttemptError, UnauthorizedError, UnavailableError } from "./errors.js";
import { VERSION } from "./version.js";
import type { ClaimedJob, Duration, Job, Parent, ProgressRequest } from "./types.js";

/** Why a handler's ctx.signal was aborted. */
export type StopReason = "cancelled" | "timeout" | "lease_lost" | "shutdown";

/** What a handler gets beside its job. */
export interface JobContext {
  /** Aborted when the job is cancelled, times out, loses its lease or the worker shuts down. */
  readonly signal: AbortSignal;
  /** Why the signal was aborted, or null while it is not. */
  readonly reason: StopReason | null;
  /** True once a cancel of the job reached this worker. */
  readonly cancelled: boolean;
  /** This worker's id. */
  readonly workerId: string;
  /** The job's parents as they were when it was claimed, in id order ([] without). */
  readonly parents: readonly Parent[];
  /**
   * Reports the job's progress (POST /v1/jobs/{id}/progress, fenced with
   * the attempt and lease token, and a heartbeat too): percent 0..100, a
   * message (at most 1 KiB), any JSON data (at most 16 KiB); each report
   * replaces the last. Resolves true when the server took it, false (never
   * a rejection) when it did not: the attempt is no longer live
   * (stale_attempt) or the server could not be reached.
   */
  progress(percent?: number | null, message?: string | null, data?: unknown): Promise<boolean>;
}

/** A handler: its return value (JSON) is the job's result; throw to fail it, throw Permanent to make it dead. */
export type Handler = (job: ClaimedJob, ctx: JobContext) => unknown;

export interface WorkerOptions extends ClientOptions {
  /** The client to talk through. Default: a new one from the connection options. */
  client?: Client;
  /** Queues to claim from. Default: every queue. */
  queues?: string[];
  /** Jobs run at once. Default 8. */
  concurrency?: number;
  /** Jobs claimed ahead of free slots (each holds a lease while it waits). Default 0. */
  prefetch?: number;
  /** The lease a claim and each heartbeat asks for. Default 60s. */
  lease?: Duration;
  /** How often each running job is heartbeated. Default a third of the lease. */
  heartbeat?: Duration;
  /** How long running jobs may finish after stop() or SIGTERM. Default 30s. */
  shutdownGrace?: Duration;
  /** The longest a claim waits for a job (a long poll, at most 30s). Default 30s. */
  longPoll?: Duration;
  /** The worker id written on claimed jobs. Default HOST:PID (and :N for a second worker in a process). */
  id?: string;
  /** Stop (drain) on SIGTERM and SIGINT while run() runs (Node). Default true. */
  handleSignals?: boolean;
  /** Where the worker says what went wrong. Default console (warnings and errors). */
  logger?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

/** How many of each outcome this worker has seen. */
export interface WorkerCounts {
  claimed: number;
  succeeded: number;
  failed: number;
  released: number;
  /** Reports that changed nothing: the lease was gone (another worker may run the job). */
  lost: number;
  /** Reports sent again after a network error or a 503. */
  reportRetries: number;
}

type Outcome =
  | { kind: "complete"; result: unknown }
  | { kind: "fail"; error: string; retryable: boolean; retryInS?: number };

/** One claimed job, from its claim to its report. */
interface Run {
  job: ClaimedJob;
  ac: AbortController;
  ctx: JobContext;
  reason: StopReason | null;
  leaseEnd: number;
  started: boolean;
  settled: boolean;
  handlerDone: boolean;
  reportDone: boolean;
  hbTimer?: ReturnType<typeof setInterval>;
  hbBusy: number;
  watchdog?: ReturnType<typeof setTimeout>;
  timeoutTimer?: ReturnType<typeof setTimeout>;
}

type Proc = {
  pid?: number;
  on?: (s: string, f: () => void) => void;
  off?: (s: string, f: () => void) => void;
};
const proc = (globalThis as { process?: Proc }).process;
let workersMade = 0;

function errorText(e: unknown): string {
  if (e instanceof Error) {
    const stack = e.stack && e.stack.includes(e.message) ? e.stack : `${e.name}: ${e.message}`;
    return stack.length > 3500 ? stack.slice(0, 3500) + "…" : stack;
  }
  try { return typeof e === "string" ? e : JSON.stringify(e) ?? String(e); } catch { return String(e); }
}

export class Worker {
  readonly client: Client;
  readonly queues: string[];
  readonly concurrency: number;
  readonly prefetch: number;
  readonly counts: WorkerCounts = { claimed: 0, succeeded: 0, failed: 0, released: 0, lost: 0, reportRetries: 0 };
  private idOpt: string | undefined;
  private workerId = "";
  private readonly leaseMs: number;
  private readonly hbMs: number;
  private readonly graceMs: number;
  private readonly longPollMs: number;
  private readonly handleSignals: boolean;
  private readonly log: NonNullable<WorkerOptions["logger"]>;
  private readonly handlers = new Map<string, Handler>();
  private readonly runs = new Set<Run>();
  private readonly queued: Run[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private stopAc = new AbortController();
  private claimAc: AbortController | null = null;
  private wake: (() => void) | null = null;
  private reportDeadline = Infinity;
  private active = 0;

  constructor(options: WorkerOptions = {}) {
    this.client = options.client ?? new Client(options);
    this.queues = options.queues ?? [];
    this.concurrency = options.concurrency ?? 8;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1 || this.concurrency > 100_000)
      throw new TypeError(`concurrency: ${options.concurrency} is not a whole number from 1 to 100000`);
    this.prefetch = options.prefetch ?? 0;
    if (!Number.isInteger(this.prefetch) || this.prefetch < 0 || this.prefetch > 10_000)
      throw new TypeError(`prefetch: ${options.prefetch} is not a whole number from 0 to 10000`);
    this.leaseMs = durationMs(options.lease ?? 60, "lease");
    if (this.leaseMs < 1000) throw new TypeError("lease: at least 1s");
    this.hbMs = durationMs(options.heartbeat ?? this.leaseMs / 3000, "heartbeat");
    if (this.hbMs <= 0 || this.hbMs >= this.leaseMs) throw new TypeError("heartbeat: must be shorter than the lease");
    this.graceMs = durationMs(options.shutdownGrace ?? 30, "shutdownGrace");
    this.longPollMs = Math.min(30_000, durationMs(options.longPoll ?? 30, "longPoll"));
    this.idOpt = options.id ?? env("JOBD_WORKER_ID");
    this.handleSignals = options.handleSignals ?? true;
    this.log = options.logger ?? ((level, msg) => {
      if (level === "warn" || level === "error") console.error(`jobd worker: ${level}: ${msg}`);
    });
  }

  /** This worker's id (known once run() started). */
  get id(): string {
    return this.workerId;
  }

  /** Registers the handler of a job type; the worker claims only types it has handlers for. */
  handle(type: string, handler: Handler): this {
    if (typeof handler !== "function") throw new TypeError(`handler of ${type}: not a function`);
    if (this.running) throw new Error("handle: register handlers before run()");
    this.handlers.set(type, handler);
    return this;
  }

  /**
   * Runs until stop() or SIGTERM/SIGINT, then drains: claims nothing more,
   * releases jobs not started, lets running ones finish within
   * shutdownGrace, stops the rest (reported as failed, due again now),
   * withdraws. Rejects on an error no retry can mend (a bad token).
   */
  run(): Promise<void> {
    if (this.handlers.size === 0) throw new TypeError("run: no handler registered (worker.handle(type, fn))");
    if (!this.running) this.running = this.main();
    return this.running;
  }

  /** Begins the drain; resolves when run() does. */
  stop(): Promise<void> {
    this.beginStop();
    return this.running ?? Promise.resolve();
  }

  private beginStop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stopAc.abort(new Error("worker stopping"));
    this.claimAc?.abort(new Error("worker stopping"));
    this.kick();
  }

  private kick(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const done = () => { this.pending.delete(p); };
    p.then(done, done);
    return p;
  }

  private async main(): Promise<void> {
    hostName = await hostname();
    this.workerId = this.idOpt ?? `${hostName}:${proc?.pid ?? 0}${++workersMade === 1 ? "" : `:${workersMade}`}`;
    const onSignal = () => this.beginStop();
    if (this.handleSignals) for (const s of ["SIGTERM", "SIGINT"]) proc?.on?.(s, onSignal);
    let fatal: unknown = null;
    try {
      await this.announce();
      const presence = this.presenceLoop();
      try {
        await this.claimLoop();
      } catch (e) {
        fatal = e;
        this.beginStop();
      }
      await this.drain();
      await presence;
      await this.client.withdrawWorker(this.workerId).catch((e) => this.log("warn", `withdraw: ${errorText(e)}`));
    } finally {
      if (this.handleSignals) for (const s of ["SIGTERM", "SIGINT"]) proc?.off?.(s, onSignal);
    }
    if (fatal) throw fatal;
  }

  private announceBody() {
    return {
      id: this.workerId, hostname: hostName, pid: proc?.pid ?? 0, version: `jobd-node ${VERSION}`,
      queues: this.queues, types: [...this.handlers.keys()], concurrency: this.concurrency,
      heartbeat_ms: Math.max(1, Math.round(this.hbMs)),
    };
  }

  private async announce(): Promise<void> {
    try {
      await this.client.announceWorker(this.announceBody(), { signal: this.stopAc.signal });
    } catch (e) {
      if (e instanceof UnauthorizedError || e instanceof ForbiddenError || e instanceof BadRequestError) throw e;
      if (!this.stopping) this.log("warn", `announce: ${errorText(e)}`);
    }
  }

  private async presenceLoop(): Promise<void> {
    while (!this.stopping) {
      await sleep(this.hbMs, this.stopAc.signal).catch(() => undefined);
      if (this.stopping) break;
      try {
        await this.client.workerPresence(this.workerId, {}, { signal: this.stopAc.signal });
      } catch (e) {
        if (e instanceof NotFoundError) await this.announce().catch(() => undefined);
        else if (!this.stopping) this.log("warn", `presence: ${errorText(e)}`);
      }
    }
    await this.client.workerPresence(this.workerId, { draining: true }).catch(() => undefined);
  }

  private capacity(): number {
    return this.concurrency + this.prefetch - this.runs.size;
  }

  private async claimLoop(): Promise<void> {
    let errors = 0;
    const types = [...this.handlers.keys()];
    while (!this.stopping) {
      const free = this.capacity();
      if (free <= 0) {
        await new Promise<void>((r) => { this.wake = r; });
        continue;
      }
      const sent = performance.now();
      this.claimAc = new AbortController();
      let ans;
      try {
        ans = await this.client.claim({
          worker_id: this.workerId, types, ...(this.queues.length ? { queues: this.queues } : {}),
          limit: Math.min(free, 1000), lease_s: this.leaseMs / 1000, wait_s: this.longPollMs / 1000,
        }, { signal: this.claimAc.signal });
        errors = 0;
      } catch (e) {
        if (this.stopping) break;
        if (e instanceof NetworkError || e instanceof UnavailableError || (e instanceof JobdError && e.status >= 500)) {
          this.log("warn", `claim: ${errorText(e)}`);
          await sleep(jitter(errors++, 100, 5000) + 50, this.stopAc.signal).catch(() => undefined);
          continue;
        }
        throw e;
      } finally {
        this.claimAc = null;
      }
      for (const job of ans.jobs) this.accept(job, sent + (ans.held_ms ?? 0) + job.lease_remaining_ms);
    }
  }

  private accept(job: ClaimedJob, leaseEnd: number): void {
    this.counts.claimed++;
    if (this.stopping || leaseEnd <= performance.now()) {
      this.releaseJob(job);
      return;
    }
    const ac = new AbortController();
    const run: Run = {
      job, ac, reason: null, leaseEnd, started: false, settled: false, handlerDone: false,
      reportDone: false, hbBusy: 0, ctx: undefined as unknown as JobContext,
    };
    const workerId = this.workerId;
    run.ctx = {
      signal: ac.signal, workerId,
      get reason() { return run.reason; },
      get cancelled() { return run.reason === "cancelled"; },
      parents: job.parents ?? [],
      progress: (percent, message, data) => this.progress(run, percent, message, data),
    };
    this.runs.add(run);
    run.hbTimer = setInterval(() => this.heartbeat(run), this.hbMs);
    this.armWatchdog(run);
    if (this.started() < this.concurrency) this.start(run);
    else this.queued.push(run);
  }

  /** Handlers running now (started, not yet returned). */
  private started(): number {
    return this.active;
  }

  private armWatchdog(run: Run): void {
    if (run.watchdog) clearTimeout(run.watchdog);
    run.watchdog = setTimeout(() => this.abortRun(run, "lease_lost", "no heartbeat answered in time"),
                              Math.max(0, run.leaseEnd - performance.now()));
  }

  private start(run: Run): void {
    run.started = true;
    this.active++;
    const h = this.handlers.get(run.job.type);
    const t = run.job.timeout_s;
    if (t != null) run.timeoutTimer = setTimeout(() => this.abortRun(run, "timeout"), t * 1000);
    let p: Promise<unknown>;
    try {
      p = Promise.resolve(h!(run.job, run.ctx));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (result) => this.finish(run, { kind: "complete", result: result === undefined ? null : result }),
      (err) => this.finish(run, {
        kind: "fail", error: errorText(err), retryable: !(err instanceof Permanent),
        ...(typeof (err as { retryInS?: unknown })?.retryInS === "number" ? { retryInS: (err as { retryInS: number }).retryInS } : {}),
      }),
    ).finally(() => {
      this.active--;
      run.handlerDone = true;
      this.maybeFree(run);
    });
  }

  private startQueued(): void {
    while (this.queued.length > 0 && this.started() < this.concurrency && !this.stopping) {
      const run = this.queued.shift()!;
      if (!run.settled) this.start(run);
    }
  }

  /** Stops a run: aborts its handler and reports it (nothing when the lease is lost). */
  private abortRun(run: Run, reason: StopReason, why = ""): void {
    if (run.settled) return;
    run.reason = reason;
    run.ac.abort(new Error(`job ${run.job.id}: ${reason}`));
    if (reason === "lease_lost") {
      this.log("warn", `job ${run.job.id} attempt ${run.job.attempt}: lease lost (${why}); dropping it`);
      this.counts.lost++;
      run.settled = true;
      this.endTimers(run);
      run.reportDone = true;
      this.maybeFree(run);
      return;
    }
    if (!run.started) {
      run.settled = true;
      this.endTimers(run);
      this.releaseJob(run.job).finally(() => { run.reportDone = true; this.maybeFree(run); });
      return;
    }
    const outcome: Outcome = reason === "timeout"
      ? { kind: "fail", error: `timed out after ${run.job.timeout_s}s`, retryable: true }
      : reason === "cancelled"
        ? { kind: "fail", error: "cancelled", retryable: false }
        : { kind: "fail", error: "the worker shut down before the job finished", retryable: true, retryInS: 0 };
    this.finish(run, outcome);
  }

  private endTimers(run: Run): void {
    clearInterval(run.hbTimer);
    clearTimeout(run.watchdog);
    clearTimeout(run.timeoutTimer);
  }

  /** A run's slot is free once its report is done and its handler returned (one ignoring its signal keeps it). */
  private maybeFree(run: Run): void {
    if (!run.reportDone || (run.started && !run.handlerDone)) return;
    if (!this.runs.delete(run)) return;
    this.startQueued();
    this.kick();
  }

  /**
   * One heartbeat. A slow answer does not hold up the next one (up to
   * three in flight): the lease end is counted from when the latest
   * answered heartbeat was sent, so on a loaded server a late answer must
   * not make the worker's own clock give the job up.
   */
  private async heartbeat(run: Run): Promise<void> {
    if (run.hbBusy >= 3 || run.settled) return;
    run.hbBusy++;
    const sent = performance.now();
    try {
      const a = await this.client.heartbeat(run.job.id, {
        attempt: run.job.attempt, lease_token: run.job.lease_token, lease_s: this.leaseMs / 1000,
      }, { retry: false });
      if (run.settled) return;
      if (sent + this.leaseMs > run.leaseEnd) {
        run.leaseEnd = sent + this.leaseMs;
        this.armWatchdog(run);
      }
      if (a.cancel_requested) this.abortRun(run, "cancelled");
    } catch (e) {
      if (e instanceof StaleAttemptError || e instanceof NotFoundError) this.abortRun(run, "lease_lost", `heartbeat: ${e.message}`);
      else this.log("debug", `heartbeat of job ${run.job.id}: ${errorText(e)}`);
    } finally {
      run.hbBusy--;
    }
  }

  /** A handler's progress report (JobContext.progress); a cancel in its answer stops the run as a heartbeat's would. */
  private async progress(run: Run, percent?: number | null, message?: string | null, data?: unknown): Promise<boolean> {
    if (percent != null && !(percent >= 0 && percent <= 100)) throw new RangeError("progress: percent must be within 0..100");
    const body: ProgressRequest = { attempt: run.job.attempt, lease_token: run.job.lease_token };
    if (percent != null) body.percent = percent;
    if (message != null) body.message = message;
    if (data !== undefined) body.data = data as never;
    try {
      const a = await this.client.progress(run.job.id, body);
      if (a.cancel_requested && !run.settled) this.abortRun(run, "cancelled");
      return true;
    } catch (e) {
      if (!(e instanceof JobdError)) throw e;
      this.log("warn", `progress of job ${run.job.id} attempt ${run.job.attempt} not taken: ${e.message}`);
      return false;
    }
  }

  private finish(run: Run, outcome: Outcome): void {
    if (run.settled) return;
    run.settled = true;
    this.endTimers(run);
    this.track(this.report(run, outcome)).finally(() => {
      run.reportDone = true;
      this.maybeFree(run);
    });
  }

  /**
   * Sends a report until it lands or the lease (or the shutdown's 5 s) is
   * over. A report sent again after a network error that meets
   * stale_attempt landed when the job shows that attempt ended with the
   * outcome we sent (docs/API.md, Remote workers).
   */
  private async report(run: Run, o: Outcome): Promise<void> {
    const { id, attempt, lease_token } = run.job;
    let maybeLanded = false;
    for (let n = 0; ; n++) {
      try {
        if (o.kind === "complete") {
          const j = await this.client.complete(id, { attempt, lease_token, result: o.result as never }, { retry: false });
          this.counted(j, o);
        } else {
          const j = await this.client.fail(id, {
            attempt, lease_token, error: o.error, retryable: o.retryable,
            ...(o.retryInS !== undefined ? { retry_in_s: o.retryInS } : {}),
          }, { retry: false });
          this.counted(j, o);
        }
        return;
      } catch (e) {
        if (e instanceof StaleAttemptError) {
          if (maybeLanded && (await this.landed(id, attempt, o))) {
            this.counted(null, o);
            return;
          }
          this.counts.lost++;
          this.log("warn", `job ${id} attempt ${attempt}: the report was stale (the lease was lost)`);
          return;
        }
        if (e instanceof BadRequestError && o.kind === "complete" && o.result !== null) {
          this.log("error", `job ${id}: the server refused its result (${e.message}); completing it without one`);
          o = { kind: "complete", result: null };
          continue;
        }
        if (e instanceof BadRequestError && o.kind === "fail" && !o.error.startsWith("(the error report")) {
          this.log("error", `job ${id}: the server refused its failure report (${e.message})`);
          o = { ...o, error: `(the error report was refused: ${e.code})` };
          continue;
        }
        const retryable = e instanceof NetworkError || e instanceof UnavailableError || (e instanceof JobdError && e.status >= 500);
        const deadline = Math.min(run.leaseEnd + 30_000, this.reportDeadline);
        if (!retryable || performance.now() >= deadline) {
          this.counts.lost++;
          this.log("error", `job ${id} attempt ${attempt}: report failed: ${errorText(e)}`);
          return;
        }
        // No answer, or 504 commit_unknown: the report may have landed.
        if (e instanceof NetworkError || (e instanceof JobdError && e.status === 504)) maybeLanded = true;
        this.counts.reportRetries++;
        await sleep(Math.min(jitter(n, 100, 2000) + 20, Math.max(0, deadline - performance.now())));
      }
    }
  }

  private counted(_j: Job | null, o: Outcome): void {
    if (o.kind === "complete") this.counts.succeeded++;
    else this.counts.failed++;
  }

  /** Did the attempt end with this outcome (an earlier copy of the report landed)? */
  private async landed(id: number, attempt: number, o: Outcome): Promise<boolean> {
    try {
      if (o.kind === "complete") {
        const j = await this.client.get(id);
        return j.attempt === attempt && j.status === "succeeded";
      }
      const a = (await this.client.attempts(id)).find((x) => x.attempt === attempt);
      return a !== undefined && ["failed", "dead", "cancelled"].includes(a.outcome);
    } catch {
      return false;
    }
  }

  private releaseJob(job: ClaimedJob): Promise<void> {
    return this.track((async () => {
      try {
        await this.client.release(job.id, { attempt: job.attempt, lease_token: job.lease_token });
        this.counts.released++;
      } catch (e) {
        this.log(e instanceof StaleAttemptError ? "debug" : "warn", `release of job ${job.id}: ${errorText(e)}`);
      }
    })());
  }

  private async drain(): Promise<void> {
    this.beginStop();
    for (const run of this.queued.splice(0)) this.abortRun(run, "shutdown");
    const graceEnd = performance.now() + this.graceMs;
    while ([...this.runs].some((r) => r.started && !r.settled) && performance.now() < graceEnd) {
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, Math.max(0, Math.min(250, graceEnd - performance.now())));
      });
    }
    this.reportDeadline = performance.now() + 5000;
    for (const run of [...this.runs]) this.abortRun(run, "shutdown");
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

let hostName = "unknown";

/** The host's name (Node), or the page's (a browser). */
async function hostname(): Promise<string> {
  try {
    const spec = "node:os";
    const os = (await import(spec)) as { hostname(): string };
    return os.hostname();
  } catch {
    return (globalThis as { location?: { hostname?: string } }).location?.hostname || "browser";
  }
}
