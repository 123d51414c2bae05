// types.ts — the public names of the API's objects and request bodies,
// all taken from the types generated from docs/openapi.yaml (openapi.ts),
// so they follow the spec; only the options the client adds on top are
// written here.
import type { components, operations } from "./openapi.js";

type S = components["schemas"];
type Body<Op extends keyof operations> =
  operations[Op] extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

export type Job = S["Job"];
export type JobStatus = S["JobStatus"];
export type JobSpec = S["JobSpec"];
export type JobPage = S["JobPage"];
export type Attempt = S["Attempt"];
/** One status change of a job, from GET /v1/events (Client.events). */
export type JobEvent = S["Event"];
export type ClaimedJob = S["ClaimedJob"];
/** A parent of a claimed job, as its handler sees it (JobContext.parents). */
export type Parent = NonNullable<ClaimedJob["parents"]>[number];
export type ClaimRequest = S["ClaimRequest"];
export type Schedule = S["Schedule"];
/** A workflow to submit, its answer, and a workflow as read (docs/API.md, Workflows). */
export type WorkflowSpec = S["WorkflowSpec"];
export type WorkflowSubmitted = S["WorkflowSubmitted"];
export type Workflow = S["Workflow"];
export type WorkflowPage = S["WorkflowPage"];
export type WorkflowSummary = S["WorkflowSummary"];
export type ScheduleSpec = S["ScheduleSpec"];
export type Queue = S["Queue"];
export type QueueRate = S["QueueRate"];
export type StatsPoint = S["StatsPoint"];
export type WorkerInfo = S["Worker"];
export type BulkRequest = S["BulkRequest"];
export type BulkFilter = S["BulkFilter"];
export type BulkResult = S["BulkResult"];
/** The body of an error answer (docs/API.md, Errors). */
export type ErrorBody = S["Error"];

export type QueueLimits = Body<"putQueueLimits">;
export type HeartbeatRequest = Body<"heartbeatJob">;
export type ProgressRequest = Body<"reportProgress">;
export type CompleteRequest = Body<"completeJob">;
export type FailRequest = Body<"failJob">;
export type ReleaseRequest = Body<"releaseJob">;
export type AnnounceRequest = Body<"announceWorker">;
export type PresenceRequest = Body<"workerPresence">;

type Ok<Op extends keyof operations> =
  operations[Op] extends { responses: { 200: { content: { "application/json": infer R } } } } ? R : never;
export type ClaimResponse = Ok<"claimJobs">;
export type HeartbeatResponse = Ok<"heartbeatJob">;
export type ProgressResponse = Ok<"reportProgress">;
export type StatsResponse = Ok<"getStats">;
/** One group of a queue with its pending and running jobs (Queues.groups). */
export type QueueGroup = Ok<"listQueueGroups">["groups"][number];
export type ScheduleNext = Ok<"nextFirings">;
export type WhoAmI = Ok<"whoami">;

/** A duration: a string (`250ms`, `2s`, `1h30m`) or a number of seconds. */
export type Duration = string | number;

/**
 * What enqueue takes besides type and payload: the fields of the API's
 * job body by their API names, with `run_at` also a Date, and `in` and
 * `timeout` also numbers of seconds.
 */
export type EnqueueOptions = Omit<JobSpec, "type" | "payload" | "run_at" | "in" | "timeout"> & {
  run_at?: string | Date;
  in?: Duration;
  timeout?: Duration;
  /** Aborts the request. */
  signal?: AbortSignal;
};

/** One job for enqueueMany: the type, the payload and enqueue's options. */
export type EnqueueItem = { type: string; payload?: unknown } & Omit<EnqueueOptions, "signal">;

/** The filter of jobs() and listJobs() (docs/API.md, GET /v1/jobs). */
export type JobFilter = NonNullable<operations["listJobs"]["parameters"]["query"]>;
