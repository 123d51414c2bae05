// http.ts — the transport under Client: one fetch per request through the
// route table (routes.ts), the bearer token, JSON both ways, typed errors
// (errors.ts), and retries with full-jitter backoff of requests that are
// safe to send again after a network error, a 503 (nothing was written),
// a 429 or a 504 commit_unknown (docs/API.md, Errors). Uses only the global fetch (Node 18+, browsers).
import { ROUTES, type RouteName } from "./routes.js";
import { errorFromResponse, JobdError, NetworkError } from "./errors.js";
import { durationMs } from "./duration.js";
import type { Duration } from "./types.js";

/** How a Client reaches the server. */
export interface ClientOptions {
  /** The server's base URL. Default: $JOBD_SERVER, else http://127.0.0.1:8080. */
  server?: string;
  /** A bearer token (docs/API.md, Tokens and roles). Default: $JOBD_TOKEN; null sends none. */
  token?: string | null;
  /** How many times a safe request is sent again after a network error or a 503. Default 5. */
  retries?: number;
  /** The backoff's base and cap: random(0, min(cap, base × 2^n)). Default 100ms and 5s. */
  retryBase?: Duration;
  retryCap?: Duration;
  /** A request with no answer after this is a NetworkError (long polls add their wait). Default 30s. */
  timeout?: Duration;
  /** Another fetch (a test's, a proxy agent's). Default the global one. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export interface Request {
  route: RouteName;
  params?: Record<string, string | number>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** A body already serialized as JSON (enqueueMany). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Safe to send again? Default: GET only. */
  retry?: boolean;
  signal?: AbortSignal | undefined;
  /** Added to the client's timeout (a long poll's wait). */
  extraMs?: number;
}

export interface Response<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** The environment of Node (and Deno, Bun); empty in a browser. */
export function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const v = p?.env?.[name];
  return v === "" ? undefined : v;
}

/** Resolves after ms, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => { clearTimeout(t); reject(signal!.reason); };
    const t = setTimeout(() => { signal?.removeEventListener("abort", onAbort); resolve(); }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Full jitter: random(0, min(cap, base × 2^n)). */
export function jitter(n: number, baseMs: number, capMs: number): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** Math.min(n, 30));
}

export class Transport {
  readonly server: string;
  readonly token: string | null;
  readonly retries: number;
  private readonly baseMs: number;
  private readonly capMs: number;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly headers: Record<string, string>;

  constructor(o: ClientOptions = {}) {
    const server = o.server ?? env("JOBD_SERVER") ?? "http://127.0.0.1:8080";
    if (!/^https?:\/\/[^/]/.test(server)) throw new TypeError(`server: ${JSON.stringify(server)} is not an http:// or https:// URL`);
    this.server = server.replace(/\/+$/, "");
    this.token = o.token === undefined ? env("JOBD_TOKEN") ?? null : o.token;
    this.retries = o.retries ?? 5;
    if (!Number.isInteger(this.retries) || this.retries < 0) throw new TypeError(`retries: ${o.retries} is not a whole number >= 0`);
    this.baseMs = durationMs(o.retryBase ?? "100ms", "retryBase");
    this.capMs = durationMs(o.retryCap ?? "5s", "retryCap");
    this.timeoutMs = durationMs(o.timeout ?? "30s", "timeout");
    const f = o.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("no fetch: Node 18 or later, or a browser, has a global fetch");
    this.fetchFn = f;
    this.headers = { ...o.headers };
  }

  /** The URL of a route with its path parameters and query. */
  url(req: Request): string {
    const [, path] = ROUTES[req.route];
    let p: string = path.replace(/\{(\w+)\}/g, (_, k: string) => {
      const v = req.params?.[k];
      if (v === undefined) throw new TypeError(`${k} is required`);
      return encodeURIComponent(String(v));
    });
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) {
      if (v === undefined || v === null) continue;
      q.set(k, v instanceof Date ? v.toISOString() : String(v));
    }
    const qs = q.toString();
    return this.server + p + (qs ? `?${qs}` : "");
  }

  /** Sends the request (again, if safe, after a network error or a 503); throws a JobdError for an error answer. */
  async request<T>(req: Request): Promise<Response<T>> {
    const [method] = ROUTES[req.route];
    const safe = req.retry ?? method === "GET";
    for (let n = 0; ; n++) {
      let err: JobdError;
      try {
        const res = await this.once<T>(method, req);
        if (res.status < 400) return res;
        const text = typeof res.body === "string" ? res.body : "";
        const ra = Number(res.headers.get("retry-after"));
        err = errorFromResponse(res.status, res.body, text, Number.isFinite(ra) && ra > 0 ? ra : null);
        if (res.status !== 503 && res.status !== 429 && res.status !== 504) throw err;
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        err = e;
      }
      if (!safe || n >= this.retries) throw err;
      const wait = Math.max(jitter(n, this.baseMs, this.capMs), (err.retryAfter ?? 0) * 1000 * (0.5 + Math.random() / 2));
      await sleep(wait, req.signal);
    }
  }

  /**
   * Opens a streamed answer (GET /v1/events): the fetch Response with its
   * body unread, once the headers say 2xx; throws a JobdError for an error
   * answer and a NetworkError when the server cannot be reached. No
   * timeout: the stream ends when req.signal aborts or the server ends it.
   */
  async stream(req: Request): Promise<globalThis.Response> {
    const [method, path] = ROUTES[req.route];
    const headers: Record<string, string> = { accept: "text/event-stream", ...this.headers, ...req.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: globalThis.Response;
    try {
      res = await this.fetchFn(this.url(req), { method, headers, signal: req.signal ?? null });
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason;
      const cause = (e as { cause?: { message?: string; code?: string } }).cause;
      throw new NetworkError(0, "network", `${method} ${path} on ${this.server}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
                             null, null, { cause: e });
    }
    if (res.status < 400) return res;
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = JSON.parse(text); } catch { parsed = text; }
    const ra = Number(res.headers.get("retry-after"));
    throw errorFromResponse(res.status, parsed, text, Number.isFinite(ra) && ra > 0 ? ra : null);
  }

  private async once<T>(method: string, req: Request): Promise<Response<T>> {
    const ac = new AbortController();
    const onAbort = () => ac.abort(req.signal!.reason);
    if (req.signal?.aborted) throw req.signal.reason;
    req.signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; ac.abort(); }, this.timeoutMs + (req.extraMs ?? 0));
    const headers: Record<string, string> = { accept: "application/json", ...this.headers, ...req.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (req.body !== undefined || req.rawBody !== undefined) {
      body = req.rawBody ?? JSON.stringify(req.body);
      headers["content-type"] = "application/json";
    }
    const [, path] = ROUTES[req.route];
    try {
      const res = await this.fetchFn(this.url(req), { method, headers, body, signal: ac.signal });
      const text = await res.text();
      const ct = res.headers.get("content-type") ?? "";
      let parsed: unknown = text;
      if (ct.includes("json") && text !== "") {
        try { parsed = JSON.parse(text); } catch { parsed = text; }
      }
      return { status: res.status, headers: res.headers, body: parsed as T };
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason;
      const cause = (e as { cause?: { message?: string; code?: string } }).cause;
      const why = timedOut ? `no answer within ${this.timeoutMs + (req.extraMs ?? 0)} ms`
        : cause?.code ?? cause?.message ?? (e as Error).message;
      throw new NetworkError(0, timedOut ? "timeout" : "network", `${method} ${path} on ${this.server}: ${why}`,
                             null, null, { cause: e });
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
    }
  }
}
