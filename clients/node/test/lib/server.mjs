// server.mjs — a real `jobd server` for the suites: $JOBD_BIN on the store
// named by $JOBD_CLIENT_STORE (sqlite: a temp file; pg: a database of its
// own made in $JOBD_TEST_PG_URL), on a free port, stopped and removed by
// stop(). Also small helpers to wait on conditions (no fixed sleeps).
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const here = dirname(fileURLToPath(import.meta.url));
export const pkgDir = join(here, "..", "..");
export const srcDir = process.env.JOBD_SRC ?? join(pkgDir, "..", "..");

export function jobdBin() {
  const b = process.env.JOBD_BIN;
  if (!b) throw new Error("JOBD_BIN must point at the jobd binary (scripts/test.sh sets it)");
  return b;
}

/** Polls fn() until it returns a truthy value, or fails after ms. */
export async function until(fn, ms = 20000, what = "condition") {
  const end = Date.now() + ms;
  let last;
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

function psql(url, sql) {
  execFileSync("psql", ["-qX", url, "-c", sql], { stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * Starts a server. opts.tokens: lines of a tokens file; opts.args: more
 * flags. Returns {url, dir, stop(), log()}.
 */
export async function startServer(opts = {}) {
  const store = process.env.JOBD_CLIENT_STORE ?? "sqlite";
  const dir = mkdtempSync(join(tmpdir(), "jobd-node-"));
  let db, dropdb = null;
  if (store === "pg") {
    const base = process.env.JOBD_TEST_PG_URL;
    if (!base) throw new Error("JOBD_CLIENT_STORE=pg needs JOBD_TEST_PG_URL");
    dropdb = `jobd_node_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
    psql(base, `CREATE DATABASE ${dropdb}`);
    const u = new URL(base);
    u.pathname = `/${dropdb}`;
    db = u.toString();
  } else {
    db = `sqlite:${join(dir, "jobs.db")}`;
  }
  const args = ["server", "--db", db, "--listen", "127.0.0.1:0", "--shutdown-grace", "2s",
                "--access-log", "off", ...(opts.args ?? [])];
  if (opts.tokens) {
    writeFileSync(join(dir, "tokens"), opts.tokens.join("\n") + "\n");
    chmodSync(join(dir, "tokens"), 0o600);
    args.push("--tokens", join(dir, "tokens"));
  }
  const logPath = join(dir, "server.log");
  writeFileSync(logPath, "");
  const { openSync } = await import("node:fs");
  const fd = openSync(logPath, "a");
  const child = spawn(jobdBin(), args, { stdio: ["ignore", "ignore", fd] });
  let exited = false;
  child.on("exit", () => { exited = true; });
  const log = () => readFileSync(logPath, "utf8");
  const url = await until(() => {
    if (exited) throw new Error(`the server exited: ${log()}`);
    const m = /listening on (http:\/\/\S+)/.exec(log());
    return m && m[1];
  }, 30000, "the server to listen");
  return {
    url, dir, db, log,
    async stop() {
      if (!exited) {
        child.kill("SIGTERM");
        await until(() => exited, 20000, "the server to exit");
      }
      if (dropdb) {
        try { psql(process.env.JOBD_TEST_PG_URL, `DROP DATABASE IF EXISTS ${dropdb} WITH (FORCE)`); } catch { /* best effort */ }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
