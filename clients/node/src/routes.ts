// routes.ts — the one route table every request of this library goes
// through: each entry is a literal ["METHOD", "/path/{param}"] pair of
// docs/openapi.yaml, so a script can list the routes the client wraps, and
// the compiler refuses a pair whose path the generated spec types
// (openapi.ts) do not have.
import type { paths } from "./openapi.js";

export type Method = "GET" | "POST" | "PUT" | "DELETE";
type Route = readonly [Method, keyof paths];

export const ROUTES = {
  enqueue: ["POST", "/v1/jobs"],
  enqueueBatch: ["POST", "/v1/jobs/batch"],
  listJobs: ["GET", "/v1/jobs"],
  bulk: ["POST", "/v1/jobs/bulk"],
  getJob: ["GET", "/v1/jobs/{id}"],
  deleteJob: ["DELETE", "/v1/jobs/{id}"],
  cancel: ["POST", "/v1/jobs/{id}/cancel"],
  retry: ["POST", "/v1/jobs/{id}/retry"],
  attempts: ["GET", "/v1/jobs/{id}/attempts"],
  attemptLog: ["GET", "/v1/jobs/{id}/attempts/{attempt}/log"],
  putAttemptLog: ["POST", "/v1/jobs/{id}/attempts/{attempt}/log"],
  heartbeat: ["POST", "/v1/jobs/{id}/heartbeat"],
  progress: ["POST", "/v1/jobs/{id}/progress"],
  complete: ["POST", "/v1/jobs/{id}/complete"],
  fail: ["POST", "/v1/jobs/{id}/fail"],
  release: ["POST", "/v1/jobs/{id}/release"],
  claim: ["POST", "/v1/claim"],
  cancels: ["GET", "/v1/cancels"],
  events: ["GET", "/v1/events"],
  submitWorkflow: ["POST", "/v1/workflows"],
  getWorkflow: ["GET", "/v1/workflows/{id}"],
  listWorkflows: ["GET", "/v1/workflows"],
  addWorkflowSteps: ["POST", "/v1/workflows/{id}/steps"],
  cancelWorkflow: ["POST", "/v1/workflows/{id}/cancel"],
  retryWorkflow: ["POST", "/v1/workflows/{id}/retry"],
  deleteWorkflow: ["DELETE", "/v1/workflows/{id}"],
  createSchedule: ["POST", "/v1/schedules"],
  listSchedules: ["GET", "/v1/schedules"],
  putSchedule: ["PUT", "/v1/schedules/{name}"],
  getSchedule: ["GET", "/v1/schedules/{name}"],
  deleteSchedule: ["DELETE", "/v1/schedules/{name}"],
  pauseSchedule: ["POST", "/v1/schedules/{name}/pause"],
  resumeSchedule: ["POST", "/v1/schedules/{name}/resume"],
  triggerSchedule: ["POST", "/v1/schedules/{name}/trigger"],
  nextSchedule: ["GET", "/v1/schedules/{name}/next"],
  listQueues: ["GET", "/v1/queues"],
  putQueue: ["PUT", "/v1/queues/{name}"],
  queueGroups: ["GET", "/v1/queues/{name}/groups"],
  pauseQueue: ["POST", "/v1/queues/{name}/pause"],
  resumeQueue: ["POST", "/v1/queues/{name}/resume"],
  listWorkers: ["GET", "/v1/workers"],
  announceWorker: ["POST", "/v1/workers"],
  workerPresence: ["POST", "/v1/workers/{name}/presence"],
  withdrawWorker: ["POST", "/v1/workers/{name}/withdraw"],
  stats: ["GET", "/v1/stats"],
  whoami: ["GET", "/v1/whoami"],
  health: ["GET", "/healthz"],
  metrics: ["GET", "/metrics"],
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;
