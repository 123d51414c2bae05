// client.ts — Client: every route of docs/API.md as a method (through the
// route table, routes.ts), with the types generated from docs/openapi.yaml.
// Objects come back as the API sends them (snake_case fields); options
// that go into a request body keep the API's names too.
import { Transport, jitter, sleep, type ClientOptions, type Request } from "./http.js";
import { BadRequestError, NetworkError } from "./errors.js";
import { durationMs, durationString } from "./duration.js";
import type {
  AnnounceRequest, Attempt, BulkFilter, BulkResult, ClaimRequest, ClaimResponse, CompleteRequest,
  Duration, EnqueueItem, EnqueueOptions, FailRequest, HeartbeatRequest, HeartbeatResponse, Job,
  JobEvent, JobFilter, JobPage, PresenceRequest, ProgressRequest, ProgressResponse, Queue, QueueGroup, QueueLimits, ReleaseRequest, Schedule, ScheduleNext,
  ScheduleSpec, StatsResponse, WhoAmI, WorkerInfo, Workflow, WorkflowPage, WorkflowSpec, WorkflowSubmitted,
} from "./types.js";

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request (and its retries). */
  signal?: AbortSignal;
}

const TERMINAL = new Set(["succeeded", "dead", "cancelled"]);
/** docs/API.md, POST /v1/jobs/batch: at most 10,000 jobs and 16 MiB a batch.
 * enqueueMany sends 1,000 a request, BATCH_PARALLEL at once: the server
 * writes ten batches of 1,000 faster than one of 10,000, and batches in
 * flight together share its commits (docs/BENCHMARKS.md, "Clients"). */
const BATCH_MAX_JOBS = 1_000;
const BATCH_PARALLEL = 4;
const BATCH_MAX_BYTES = 15 * 1024 * 1024;
const utf8 = new TextEncoder();

/** The JSON body of one job (docs/API.md, POST /v1/jobs). */
function jobBody(type: string, payload: unknown, o: Omit<EnqueueOptions, "signal">): Record<string, unknown> {
  if (typeof type !== "string") throw new TypeError("type: a job type (a string) is required");
  const { run_at, in: inDur, timeout, ...rest } = o as EnqueueOptions;
  delete (rest as { signal?: unknown }).signal;
  const b: Record<string, unknown> = { type };
  if (payload !== undefined) b.payload = payload;
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) b[k] = v;
  if (run_at !== undefined) b.run_at = run_at instanceof Date ? run_at.toISOString() : run_at;
  if (inDur !== undefined) b.in = durationString(inDur, "in");
  if (typeof timeout === "number") b.timeout_s = timeout;
  else if (timeout !== undefined && timeout !== null) b.timeout = durationString(timeout, "timeout");
  return b;
}

/** A client of one jobd server. Cheap to make; share one per process. */
export class Client {
  readonly transport: Transport;
  /** Named cron templates (docs/API.md, Schedules). */
  readonly schedules: Schedules;
  /** Queues: counts, pause, resume, limits (docs/API.md, Queues). */
  readonly queues: Queues;
  /** Workflows: jobs with dependencies among them, submitted at once (docs/API.md, Workflows). */
  readonly workflows: Workflows;
  /** Whether the server takes GET /v1/jobs/{id}?wait= (unknown until tried). */
  private waitQuery: boolean | undefined;

  /** `new Client()` (from $JOBD_SERVER and $JOBD_TOKEN), `new Client(url)` or `new Client({server, token, …})`. */
  constructor(options: ClientOptions | string = {}) {
    this.transport = new Transport(typeof options === "string" ? { server: options } : options);
    this.schedules = new Schedules(this);
    this.queues = new Queues(this);
    this.workflows = new Workflows(this);
  }

  /** @internal One request's answer body. */
  async call<T>(req: Request): Promise<T> {
    return (await this.transport.request<T>(req)).body;
  }

  /**
   * Enqueues one job. Sent again after a network error or a 503 only when
   * it has an idempotency_key (the server then answers the same job).
   */
  async enqueue(type: string, payload?: unknown, options: EnqueueOptions = {}): Promise<Job> {
    const body = jobBody(type, payload, options);
    return this.call<Job>({ route: "enqueue", body, retry: body.idempotency_key != null, signal: options.signal });
  }

  /**
   * Enqueues many jobs and returns them in order: one request per 1,000
   * jobs (or 15 MiB), up to four in flight; each request is all or nothing,
   * the list as a whole is not: when one fails, others may be enqueued, and
   * the call rejects with the first failure in order. A request is sent
   * again after a network error only when every job in it has an
   * idempotency_key.
   */
  async enqueueMany(items: Iterable<EnqueueItem>, options: CallOptions = {}): Promise<Job[]> {
    const sent: Promise<Job[]>[] = [];
    const inFlight = new Set<Promise<unknown>>();
    let parts: string[] = [];
    let bytes = 0;
    let keyed = true;
    const flush = async () => {
      if (parts.length === 0) return;
      const raw = `{"jobs":[${parts.join(",")}]}`;
      const retry = keyed;
      parts = [];
      bytes = 0;
      keyed = true;
      while (inFlight.size >= BATCH_PARALLEL) await Promise.race(inFlight);
      const p = this.call<{ jobs: Job[] }>({ route: "enqueueBatch", rawBody: raw, retry, signal: options.signal })
        .then((r) => r.jobs);
      const settled = p.then(() => undefined, () => undefined).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
      sent.push(p);
    };
    for (const it of items) {
      const { type, payload, ...o } = it;
      const b = jobBody(type, payload, o);
      const s = JSON.stringify(b);
      const n = s.length < 4096 && /^[\x00-\x7f]*$/.test(s) ? s.length : utf8.encode(s).length;
      if (parts.length >= BATCH_MAX_JOBS || (parts.length > 0 && bytes + n + 1 > BATCH_MAX_BYTES)) await flush();
      parts.push(s);
      bytes += n + 1;
      if (b.idempotency_key == null) keyed = false;
    }
    await flush();
    const results = await Promise.allSettled(sent);
    const out: Job[] = [];
    for (const r of results) {
      if (r.status === "rejected") throw r.reason;
      for (const j of r.value) out.push(j);
    }
    return out;
  }

  /** The job; NotFoundError when there is none. */
  async get(id: number, options: CallOptions = {}): Promise<Job> {
    return this.call<Job>({ route: "getJob", params: { id }, signal: options.signal });
  }

  /**
   * Waits until the job is terminal (succeeded, dead, cancelled) or
   * `timeout` (default 30s) passes, and returns it as it is then: a job
   * still pending or running is no error. Asks the server to hold the
   * request (`?wait=`, docs/API.md); a server without it is polled with
   * backoff (50 ms doubling to 1 s).
   */
  async wait(id: number, options: CallOptions & { timeout?: Duration } = {}): Promise<Job> {
    const end = Date.now() + durationMs(options.timeout ?? 30, "timeout");
    let delay = 50;
    for (;;) {
      const left = end - Date.now();
      if (this.waitQuery !== false && left > 0) {
        const w = Math.min(left, 60_000);
        try {
          const job = await this.call<Job>({ route: "getJob", params: { id }, query: { wait: `${Math.ceil(w)}ms` },
                                             extraMs: w, signal: options.signal });
          this.waitQuery = true;
          if (TERMINAL.has(job.status) || Date.now() >= end) return job;
          continue;
        } catch (e) {
          if (!(e instanceof BadRequestError && e.code === "invalid_query" && this.waitQuery === undefined)) throw e;
          this.waitQuery = false;
        }
      }
      const job = await this.get(id, options);
      if (TERMINAL.has(job.status) || Date.now() >= end) return job;
      await sleep(Math.min(delay, Math.max(0, end - Date.now())), options.signal);
      delay = Math.min(delay * 2, 1000);
    }
  }

  /** Cancels a pending job (now cancelled) or asks a running one to stop; ConflictError when it already finished. */
  async cancel(id: number, options: CallOptions = {}): Promise<Job> {
    return this.call<Job>({ route: "cancel", params: { id }, signal: options.signal });
  }

  /** Makes a dead or cancelled job pending again with fresh attempts; ConflictError otherwise. */
  async retry(id: number, options: CallOptions = {}): Promise<Job> {
    return this.call<Job>({ route: "retry", params: { id }, signal: options.signal });
  }

  /** Deletes a job that is not running, with its attempt history. */
  async delete(id: number, options: CallOptions = {}): Promise<void> {
    await this.call<unknown>({ route: "deleteJob", params: { id }, signal: options.signal });
  }

  /** One page of jobs, newest first, and the cursor of the next (null on the last). */
  async listJobs(filter: JobFilter = {}, options: CallOptions = {}): Promise<JobPage> {
    return this.call<JobPage>({ route: "listJobs", query: filter, signal: options.signal });
  }

  /** Every job the filter matches, newest first, page after page (`page_size` a request, default 100). */
  async *jobs(filter: Omit<JobFilter, "limit" | "after"> & { page_size?: number } = {},
              options: CallOptions = {}): AsyncGenerator<Job, void, undefined> {
    const { page_size, ...f } = filter;
    let after: string | null = null;
    do {
      const page: JobPage = await this.listJobs({ ...f, limit: page_size, ...(after ? { after } : {}) }, options);
      for (const j of page.jobs) yield j;
      after = page.next;
    } while (after !== null);
  }

  /** The job's attempts, oldest first (docs/API.md, GET /v1/jobs/{id}/attempts). */
  async attempts(id: number, options: CallOptions = {}): Promise<Attempt[]> {
    return (await this.call<{ attempts: Attempt[] }>({ route: "attempts", params: { id }, signal: options.signal })).attempts;
  }

  /** An attempt's log, the kept end of an exec handler's stderr (docs/API.md, GET /v1/jobs/{id}/attempts/{attempt}/log). */
  async attemptLog(id: number, attempt: number, options: CallOptions = {}): Promise<string> {
    return (await this.call<string | null>({ route: "attemptLog", params: { id, attempt }, signal: options.signal })) ?? "";
  }

  /** Hands in a running attempt's log before its report (docs/API.md, POST /v1/jobs/{id}/attempts/{attempt}/log). */
  async putAttemptLog(id: number, attempt: number, req: { lease_token?: string; text: string },
                      options: CallOptions & { retry?: boolean } = {}): Promise<{ attempt: number; bytes: number }> {
    return this.call<{ attempt: number; bytes: number }>({ route: "putAttemptLog", params: { id, attempt }, body: req, retry: options.retry ?? true, signal: options.signal });
  }

  /** Which of the listed jobs run with a cancel requested (docs/API.md, GET /v1/cancels); with
   *  `waitMs` the server holds the answer until a cancel may have been requested, so an empty
   *  answer only means "ask again". A worker's call, as the reports are. */
  async cancels(ids: number[], options: CallOptions & { waitMs?: number } = {}): Promise<number[]> {
    const query: Record<string, string> = { jobs: ids.join(",") };
    if (options.waitMs) query.wait = `${Math.ceil(options.waitMs)}ms`;
    return (await this.call<{ jobs: number[] }>({ route: "cancels", query, signal: options.signal })).jobs;
  }

  /**
   * The status changes of jobs as they happen (docs/API.md, GET /v1/events), as an async iterator: `for await (const e of c.events({queue}))`.
   * After a network error it reconnects with the last event's id, so nothing
   * under an hour old is missed; a 410 (the server no longer has them all) is
   * thrown as a JobdError with code `gone`. Ends when `signal` aborts or the
   * loop breaks.
   */
  async *events(filter: { queue?: string; type?: string; job?: number } = {},
                options: CallOptions & { lastEventId?: number } = {}): AsyncGenerator<JobEvent> {
    let last = options.lastEventId;
    const signal = options.signal;
    for (let n = 0; !signal?.aborted; ) {
      let res: globalThis.Response;
      try {
        res = await this.transport.stream({ route: "events", query: filter, signal,
          headers: last !== undefined ? { "last-event-id": String(last) } : {} });
      } catch (e) {
        if (!(e instanceof NetworkError) || n >= this.transport.retries) throw e;
        await sleep(jitter(n++, 100, 5000), signal);
        continue;
      }
      n = 0;
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let buf = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          for (let i; (i = buf.indexOf("\n\n")) >= 0; ) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let data: string | undefined;
            for (const line of frame.split("\n")) {
              if (line.startsWith("id: ")) last = Number(line.slice(4));
              else if (line.startsWith("data: ")) data = line.slice(6);
            }
            if (data !== undefined) yield JSON.parse(data) as JobEvent;
          }
        }
      } catch (e) {
        if (signal?.aborted) return;
        if (e instanceof SyntaxError) throw e;
        /* the connection broke: reconnect from `last` */
      } finally {
        reader.cancel().catch(() => {});
      }
    }
  }

  /** Retries, cancels or deletes every job the filter matches (docs/API.md, POST /v1/jobs/bulk). */
  async bulk(action: "retry" | "cancel" | "delete", filter: BulkFilter, limit?: number,
             options: CallOptions = {}): Promise<BulkResult> {
    return this.call<BulkResult>({ route: "bulk", body: { action, filter, ...(limit ? { limit } : {}) }, signal: options.signal });
  }

  /** Enqueued, succeeded, failed and dead per step (docs/API.md, GET /v1/stats). */
  async stats(query: { since?: string; step?: string; queue?: string } = {}, options: CallOptions = {}): Promise<StatsResponse> {
    return this.call<StatsResponse>({ route: "stats", query, signal: options.signal });
  }

  /** Every worker that announced itself (docs/API.md, GET /v1/workers). */
  async workers(options: CallOptions = {}): Promise<WorkerInfo[]> {
    return (await this.call<{ workers: WorkerInfo[] }>({ route: "listWorkers", signal: options.signal })).workers;
  }

  /** The role of this client's token, and whether the server has tokens. */
  async whoami(options: CallOptions = {}): Promise<WhoAmI> {
    return this.call<WhoAmI>({ route: "whoami", signal: options.signal });
  }

  /** Whether the server's store answers (GET /healthz). */
  async health(options: CallOptions = {}): Promise<boolean> {
    try {
      await this.transport.request<string>({ route: "health", retry: false, signal: options.signal });
      return true;
    } catch (e) {
      if ((e as { status?: number }).status === 503) return false;
      throw e;
    }
  }

  /** The Prometheus metrics, as text. */
  async metrics(options: CallOptions = {}): Promise<string> {
    return this.call<string>({ route: "metrics", signal: options.signal });
  }

  // The remote-worker protocol (docs/API.md, Remote workers); Worker uses
  // these, and they are here for a worker of one's own. Reports are fenced
  // by attempt and lease_token, so they are safe to send again.

  /** Claims due jobs (a long poll with wait_s). */
  async claim(req: ClaimRequest, options: CallOptions = {}): Promise<ClaimResponse> {
    return this.call<ClaimResponse>({ route: "claim", body: req, signal: options.signal,
                                      extraMs: (req.wait_s ?? 0) * 1000 });
  }

  async heartbeat(id: number, req: HeartbeatRequest, options: CallOptions & { retry?: boolean } = {}): Promise<HeartbeatResponse> {
    return this.call<HeartbeatResponse>({ route: "heartbeat", params: { id }, body: req, retry: options.retry ?? true, signal: options.signal });
  }

  /** A running attempt's progress (docs/API.md, POST /v1/jobs/{id}/progress): answered as a heartbeat. */
  async progress(id: number, req: ProgressRequest, options: CallOptions & { retry?: boolean } = {}): Promise<ProgressResponse> {
    return this.call<ProgressResponse>({ route: "progress", params: { id }, body: req, retry: options.retry ?? true, signal: options.signal });
  }

  async complete(id: number, req: CompleteRequest, options: CallOptions & { retry?: boolean } = {}): Promise<Job> {
    return this.call<Job>({ route: "complete", params: { id }, body: req, retry: options.retry ?? true, signal: options.signal });
  }

  async fail(id: number, req: FailRequest, options: CallOptions & { retry?: boolean } = {}): Promise<Job> {
    return this.call<Job>({ route: "fail", params: { id }, body: req, retry: options.retry ?? true, signal: options.signal });
  }

  async release(id: number, req: ReleaseRequest, options: CallOptions & { retry?: boolean } = {}): Promise<Job> {
    return this.call<Job>({ route: "release", params: { id }, body: req, retry: options.retry ?? true, signal: options.signal });
  }

  async announceWorker(req: AnnounceRequest, options: CallOptions = {}): Promise<void> {
    await this.call<unknown>({ route: "announceWorker", body: req, retry: true, signal: options.signal });
  }

  async workerPresence(id: string, req: PresenceRequest = {}, options: CallOptions = {}): Promise<void> {
    await this.call<unknown>({ route: "workerPresence", params: { name: id }, body: req, retry: true, signal: options.signal });
  }

  async withdrawWorker(id: string, options: CallOptions = {}): Promise<void> {
    await this.call<unknown>({ route: "withdrawWorker", params: { name: id }, retry: true, signal: options.signal });
  }
}

/** client.workflows (docs/API.md, Workflows). */
export class Workflows {
  constructor(private readonly c: Client) {}

  /**
   * Submits a workflow, all or nothing: its id and each step's job id by
   * ref. Sent again after a network error or a 503 only when it has an
   * idempotency_key (the server then answers the same workflow).
   */
  async submit(spec: WorkflowSpec, options: CallOptions = {}): Promise<WorkflowSubmitted> {
    return this.c.call<WorkflowSubmitted>({
      route: "submitWorkflow", body: spec, retry: spec.idempotency_key != null, signal: options.signal,
    });
  }

  /** The workflow with its status, counts and steps; NotFoundError when there is none. */
  async get(id: number, options: CallOptions = {}): Promise<Workflow> {
    return this.c.call<Workflow>({ route: "getWorkflow", params: { id }, signal: options.signal });
  }

  /**
   * Adds steps to a running workflow, for work found as it runs: their
   * depends_on may name existing refs and each other, and each step named
   * in `before` (which must still be waiting) waits for them too. Resolves
   * each new ref's job id; ConflictError (step_not_waiting naming
   * before[k], workflow_finished) when it is too late. Never sent twice by
   * the client: a repeat would add the steps again.
   */
  async addSteps(id: number, steps: WorkflowSpec["steps"], before?: string[],
                 options: CallOptions = {}): Promise<{ jobs: Record<string, number> }> {
    return this.c.call<{ jobs: Record<string, number> }>({
      route: "addWorkflowSteps", params: { id }, body: { steps, ...(before ? { before } : {}) }, signal: options.signal,
    });
  }

  /** Cancels every step that has not ended (a running one is asked to stop); a second cancel changes nothing. */
  async cancel(id: number, options: CallOptions = {}): Promise<Workflow> {
    return this.c.call<Workflow>({ route: "cancelWorkflow", params: { id }, retry: true, signal: options.signal });
  }

  /** Puts every dead or cancelled step back, pending or waiting as its parents say. */
  async retry(id: number, options: CallOptions = {}): Promise<Workflow> {
    return this.c.call<Workflow>({ route: "retryWorkflow", params: { id }, signal: options.signal });
  }

  /** Deletes an ended workflow with its steps' jobs; ConflictError (workflow_running) while a step has not ended. */
  async delete(id: number, options: CallOptions = {}): Promise<void> {
    await this.c.call<unknown>({ route: "deleteWorkflow", params: { id }, signal: options.signal });
  }

  /**
   * One page of workflows, newest first, without their steps; pass the
   * page's `next` as `after` for the next one (a page may hold fewer than
   * `limit` when filtered by status).
   */
  async list(filter: { status?: "running" | "succeeded" | "failed"; name?: string; limit?: number; after?: string } = {},
             options: CallOptions = {}): Promise<WorkflowPage> {
    return this.c.call<WorkflowPage>({ route: "listWorkflows", query: { ...filter }, signal: options.signal });
  }
}

/** client.schedules: named cron templates (docs/API.md, Schedules). */
export class Schedules {
  constructor(private readonly c: Client) {}

  /** Creates a schedule; ConflictError when the name is taken. */
  async create(spec: ScheduleSpec & { name: string }, options: CallOptions = {}): Promise<Schedule> {
    return this.c.call<Schedule>({ route: "createSchedule", body: spec, signal: options.signal });
  }

  /** Creates or replaces the schedule `name` (re-applying a definition keeps its next firing). */
  async put(name: string, spec: Omit<ScheduleSpec, "name">, options: CallOptions = {}): Promise<Schedule> {
    return this.c.call<Schedule>({ route: "putSchedule", params: { name }, body: spec, retry: true, signal: options.signal });
  }

  async get(name: string, options: CallOptions = {}): Promise<Schedule> {
    return this.c.call<Schedule>({ route: "getSchedule", params: { name }, signal: options.signal });
  }

  async list(options: CallOptions = {}): Promise<Schedule[]> {
    return (await this.c.call<{ schedules: Schedule[] }>({ route: "listSchedules", signal: options.signal })).schedules;
  }

  /** Deletes the schedule; the jobs it made stay. */
  async delete(name: string, options: CallOptions = {}): Promise<void> {
    await this.c.call<unknown>({ route: "deleteSchedule", params: { name }, signal: options.signal });
  }

  async pause(name: string, options: CallOptions = {}): Promise<Schedule> {
    return this.c.call<Schedule>({ route: "pauseSchedule", params: { name }, retry: true, signal: options.signal });
  }

  async resume(name: string, options: CallOptions = {}): Promise<Schedule> {
    return this.c.call<Schedule>({ route: "resumeSchedule", params: { name }, retry: true, signal: options.signal });
  }

  /** Makes a job of the schedule now; returns it. */
  async trigger(name: string, options: CallOptions = {}): Promise<Job> {
    return this.c.call<Job>({ route: "triggerSchedule", params: { name }, signal: options.signal });
  }

  /** The next `count` firings (default 5) after now. */
  async next(name: string, count?: number, options: CallOptions = {}): Promise<ScheduleNext> {
    return this.c.call<ScheduleNext>({ route: "nextSchedule", params: { name }, query: { count }, signal: options.signal });
  }
}

/** client.queues (docs/API.md, Queues). */
export class Queues {
  constructor(private readonly c: Client) {}

  /** Every queue with jobs, a pause flag or limits, by name. */
  async list(options: CallOptions = {}): Promise<Queue[]> {
    return (await this.c.call<{ queues: Queue[] }>({ route: "listQueues", signal: options.signal })).queues;
  }

  async pause(name: string, options: CallOptions = {}): Promise<Queue> {
    return this.c.call<Queue>({ route: "pauseQueue", params: { name }, retry: true, signal: options.signal });
  }

  async resume(name: string, options: CallOptions = {}): Promise<Queue> {
    return this.c.call<Queue>({ route: "resumeQueue", params: { name }, retry: true, signal: options.signal });
  }

  /**
   * The queue's groups with pending or running jobs, busiest first (`group`
   * null for its jobs without one); `limit` 1 to 1,000 (default 100).
   */
  async groups(name: string, filter: { limit?: number } = {}, options: CallOptions = {}): Promise<QueueGroup[]> {
    return (await this.c.call<{ groups: QueueGroup[] }>({
      route: "queueGroups", params: { name }, query: { ...filter }, signal: options.signal,
    })).groups;
  }

  /**
   * Sets the queue's limits: max_running and rate, and the same per group
   * (group_max_running, group_rate); a field left out keeps its limit, null removes it.
   */
  async put(name: string, limits: QueueLimits, options: CallOptions = {}): Promise<Queue> {
    return this.c.call<Queue>({ route: "putQueue", params: { name }, body: limits, retry: true, signal: options.signal });
  }
}
