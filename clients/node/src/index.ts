// index.ts — the package's entry: @jobd/client (docs in README.md).
export { Client, Schedules, Queues, Workflows, type CallOptions } from "./client.js";
export { Worker, type Handler, type JobContext, type StopReason, type WorkerCounts, type WorkerOptions } from "./worker.js";
export {
  JobdError, BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError,
  StaleAttemptError, UnavailableError, ServerError, NetworkError, Permanent,
} from "./errors.js";
export type { ClientOptions } from "./http.js";
export { ROUTES, type Method, type RouteName } from "./routes.js";
export { VERSION } from "./version.js";
export type * from "./types.js";
export type { components, paths, operations } from "./openapi.js";
