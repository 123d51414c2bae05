// duration.ts — durations as the API spells them (docs/API.md,
// Conventions: `250ms`, `2s`, `5m`, `1h`, `1d` or sums like `1h30m`), and
// numbers of seconds, which this library accepts wherever a duration goes.
import type { Duration } from "./types.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration string or a number of seconds; throws a TypeError naming `what`. */
export function durationMs(d: Duration, what: string): number {
  if (typeof d === "number") {
    if (!Number.isFinite(d) || d < 0) throw new TypeError(`${what}: ${d} is not a number of seconds >= 0`);
    return d * 1000;
  }
  if (typeof d !== "string" || !/^(\d+(ms|s|m|h|d))+$/.test(d))
    throw new TypeError(`${what}: ${JSON.stringify(d)} is not a duration like 250ms, 2s, 5m, 1h30m`);
  let ms = 0;
  for (const [, n, unit] of d.matchAll(/(\d+)(ms|s|m|h|d)/g)) ms += Number(n) * UNIT_MS[unit as string]!;
  return ms;
}

/** A duration for a request: strings go as they are, seconds become milliseconds (`1500ms`). */
export function durationString(d: Duration, what: string): string {
  if (typeof d === "string") {
    durationMs(d, what);
    return d;
  }
  const ms = durationMs(d, what);
  if (!Number.isInteger(ms)) throw new TypeError(`${what}: ${d} s is not a whole number of milliseconds`);
  return `${ms}ms`;
}
