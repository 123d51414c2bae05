// cases.mjs — the shared case list (clients/cases.json): caseTest(id, …)
// is node:test's test() for one case id, refusing ids the list lacks;
// test/meta.test.mjs checks every id of the list has a caseTest.
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { srcDir } from "./server.mjs";

export const cases = JSON.parse(readFileSync(join(srcDir, "clients", "cases.json"), "utf8"));
const ids = new Set(cases.cases.map((c) => c.id));

export function caseTest(id, opts, fn) {
  if (!ids.has(id)) throw new Error(`${id}: not a case of clients/cases.json`);
  return test(id, opts, fn);
}
