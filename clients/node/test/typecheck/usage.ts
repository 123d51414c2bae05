// usage.ts — compiled by test/meta.test.mjs with `tsc --noEmit`
// (tsconfig.typecheck.json): the package's declarations as a TypeScript
// user imports them (by name, through package.json's exports), and the
// mistakes they must refuse (@ts-expect-error).
import {
  Client, Worker, Permanent, NotFoundError, StaleAttemptError, JobdError, ROUTES,
  type Job, type JobStatus, type ClaimedJob, type JobContext, type Schedule, type Queue, type Parent,
  type WorkflowSubmitted, type Workflow,
} from "@jobd/client";

export async function usage(): Promise<void> {
  const c = new Client({ server: "http://127.0.0.1:8080", token: null, retries: 2, timeout: "10s" });
  const j: Job = await c.enqueue("email.send", { to: "a@b.c" }, {
    queue: "mail", priority: 5, run_at: new Date(), max_attempts: 3, idempotency_key: "k", timeout: "30s",
  });
  await c.enqueue("email.send", {}, { in: "5m", timeout: 1.5 });
  const status: JobStatus = j.status;
  const id: number = j.id;
  const lastError: string | null = j.last_error;
  const many: Job[] = await c.enqueueMany([{ type: "a", payload: 1, queue: "q" }, { type: "b" }]);
  for await (const x of c.jobs({ status: "pending", queue: "mail", page_size: 50 })) void x.run_at;
  const done = await c.wait(id, { timeout: 10 });
  const s: Schedule = await c.schedules.put("nightly", { cron: "0 3 * * *", type: "report" });
  const q: Queue[] = await c.queues.list();
  await c.queues.put("mail", { max_running: 4, rate: { limit: 10, per: "1s" } });
  const child = await c.enqueue("t", {}, { depends_on: [j.id], on_parent_failure: "run" });
  const parents: number[] = child.depends_on;
  await c.enqueue("t", {}, { debounce: { key: "k", for: "5s" } });
  await c.enqueue("t", {}, { unique: { key: "k", for: "1h" } });
  await c.enqueue("t", {}, { group: "tenant-1" });
  const busiest: string | null = (await c.queues.groups("mail", { limit: 5 }))[0]?.group ?? null;
  await c.queues.put("mail", { group_max_running: 2, group_rate: null });
  void busiest;
  const inWorkflow: number | null = child.workflow;
  const sub: WorkflowSubmitted = await c.workflows.submit({ name: "n", steps: [{ ref: "a", type: "t" }] });
  const wf: Workflow = await c.workflows.get(sub.id);
  const added: number | undefined = (await c.workflows.addSteps(sub.id, [{ ref: "b", type: "t", depends_on: ["a"] }], ["c"])).jobs.b;
  const cancelled: Workflow = await c.workflows.cancel(sub.id);
  await c.workflows.retry(sub.id);
  await c.workflows.delete(sub.id);
  void [added, cancelled];
  void [status, lastError, many, done, s, q, ROUTES.cancel[0], parents, inWorkflow, wf.steps];
  // @ts-expect-error: on_parent_failure is "cancel" or "run"
  await c.enqueue("t", {}, { depends_on: [1], on_parent_failure: "skip" });

  // @ts-expect-error: not a field of a job body
  await c.enqueue("t", {}, { prioritee: 1 });
  // @ts-expect-error: priority is a number
  await c.enqueue("t", {}, { priority: "high" });
  // @ts-expect-error: a status the API does not have
  const bad: JobStatus = "finished";
  void bad;

  try {
    await c.get(1);
  } catch (e) {
    if (e instanceof NotFoundError) {
      const code: string = e.code;
      const field: string | null = e.field;
      const st: number = e.status;
      void [code, field, st];
    }
    if (e instanceof StaleAttemptError && e instanceof JobdError) void e.message;
  }

  const w = new Worker({ client: c, queues: ["mail"], concurrency: 4, lease: "2s", shutdownGrace: 30 });
  w.handle("email.send", async (job: ClaimedJob, ctx: JobContext) => {
    const signal: AbortSignal = ctx.signal;
    if (ctx.cancelled || signal.aborted) return null;
    if (job.attempt > 3) throw new Permanent("giving up");
    const ps: readonly Parent[] = ctx.parents;
    const took: boolean = await ctx.progress(50, "half", { n: ps.length });
    await ctx.progress(null, "no percent");
    void took;
    return { sent: job.payload, token: job.lease_token };
  });
  await w.run();
}
