// meta.test.mjs — the checks that keep the package honest: every case id
// of clients/cases.json has a test; src/openapi.ts is what openapi-typescript
// makes of docs/openapi.yaml now (the spec and the types cannot drift); the
// route table wraps every route of the spec; the declarations type-check
// as a user sees them; `npm pack` makes a tarball that imports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cases } from "./lib/cases.mjs";
import { here, pkgDir, srcDir } from "./lib/server.mjs";
import { ROUTES, VERSION } from "../dist/index.js";

const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const tmp = () => mkdtempSync(join(tmpdir(), "jobd-node-meta-"));

test("every case of clients/cases.json has a test", () => {
  const found = new Map();
  for (const f of readdirSync(here.replace(/\/lib$/, "")).filter((f) => f.endsWith(".test.mjs"))) {
    const text = readFileSync(join(here, "..", f), "utf8");
    for (const [, id] of text.matchAll(/caseTest\("([a-z0-9_]+)"/g)) found.set(id, [...(found.get(id) ?? []), f]);
  }
  const missing = cases.cases.map((c) => c.id).filter((id) => !found.has(id));
  assert.deepEqual(missing, [], `case ids without a test: ${missing.join(", ")}`);
  for (const [id, files] of found) assert.equal(files.length, 1, `${id} is tested more than once: ${files}`);
});

test("src/openapi.ts is generated from docs/openapi.yaml", () => {
  const d = tmp();
  try {
    const out = join(d, "openapi.ts");
    const args = pkg.scripts.gen.split(/\s+/).slice(1).map((a) => a === "src/openapi.ts" ? out : a);
    execFileSync(process.execPath, [join(pkgDir, "node_modules/openapi-typescript/bin/cli.js"), ...args],
                 { cwd: pkgDir, stdio: ["ignore", "ignore", "pipe"] });
    const want = readFileSync(out, "utf8");
    const have = readFileSync(join(pkgDir, "src/openapi.ts"), "utf8");
    assert.ok(want === have, "clients/node/src/openapi.ts differs from what docs/openapi.yaml generates: " +
              "run `npm run gen` in clients/node and commit src/openapi.ts");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("the route table wraps every route of docs/openapi.yaml", () => {
  const spec = readFileSync(join(srcDir, "docs/openapi.yaml"), "utf8");
  const routes = [];
  let path = null;
  for (const line of spec.split("\n")) {
    const p = /^  (\/\S*):\s*$/.exec(line);
    if (p) path = p[1];
    else if (/^\S/.test(line)) path = null;
    const m = /^    (get|post|put|delete|patch):/.exec(line);
    if (m && path) routes.push(`${m[1].toUpperCase()} ${path}`);
  }
  assert.ok(routes.length > 30, `parsed ${routes.length} routes`);
  const wrapped = new Set(Object.values(ROUTES).map(([m, p]) => `${m} ${p}`));
  assert.deepEqual(routes.filter((r) => !wrapped.has(r)), [], "routes of the spec without a client method");
  assert.deepEqual([...wrapped].filter((r) => !routes.includes(r)), [], "routes the spec does not have");
  const src = readFileSync(join(pkgDir, "src/routes.ts"), "utf8");
  assert.equal([...src.matchAll(/\["(GET|POST|PUT|DELETE)", "(\/[^"]*)"\]/g)].length, wrapped.size,
               "each route is one literal pair in src/routes.ts");
});

test("VERSION is package.json's", () => {
  assert.equal(VERSION, pkg.version);
});

test("the declarations type-check as a user imports them", () => {
  execFileSync(process.execPath, [join(pkgDir, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.typecheck.json"],
               { cwd: pkgDir, stdio: ["ignore", "pipe", "pipe"] });
});

test("npm pack makes a tarball that installs and imports", () => {
  const d = tmp();
  try {
    const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", d],
                             { cwd: pkgDir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const info = JSON.parse(out)[0];
    assert.equal(info.name, "@jobd/client");
    const files = info.files.map((f) => f.path);
    for (const f of ["package.json", "README.md", "dist/index.js", "dist/index.d.ts", "dist/worker.js",
                     "dist/openapi.d.ts", "src/index.ts"])
      assert.ok(files.includes(f), `${f} is in the tarball`);
    assert.ok(!files.some((f) => f.startsWith("test/") || f.startsWith("node_modules/")), "no tests or modules");
    const app = join(d, "app");
    const mod = join(app, "node_modules", "@jobd", "client");
    mkdirSync(mod, { recursive: true });
    execFileSync("tar", ["xzf", join(d, info.filename), "-C", mod, "--strip-components=1"]);
    const got = execFileSync(process.execPath, ["--input-type=module", "-e",
      "import * as j from '@jobd/client'; console.log([typeof j.Client, typeof j.Worker, typeof j.NotFoundError, j.VERSION].join(' '))"],
      { cwd: app, encoding: "utf8" });
    assert.equal(got.trim(), `function function function ${pkg.version}`);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
