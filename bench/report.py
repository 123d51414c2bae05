#!/usr/bin/env python3
"""Turns one bench/run.sh run into tables, ratios and plots.

  bench/report.py RESULTS_DIR [--docs docs/BENCHMARKS.md] [--plots docs/bench]

Reads RESULTS_DIR/{jobd,wrk,ceiling,shared}.jsonl (JSON lines in the shared
harness's contract; wrk.jsonl from bench/wrk.sh), lateness-*.txt (one latency in ms a line), env.md and
shared-env.md. Writes RESULTS_DIR/summary.md; with --docs, replaces the text
between the markers `<!-- bench:begin -->` and `<!-- bench:end -->` of that
file with the same summary (the prose around them is kept); with --plots,
renders PNGs there with gnuplot (if installed) and links them. Repeats of the
same configuration are reduced to their median. Stdlib only.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
# bench/clients.sh's tables go between markers of their own, so that a run of
# that step alone (CLIENTS_ONLY=1 bench/run.sh) leaves the rest as it is.
CBEGIN, CEND = "<!-- bench:clients:begin -->", "<!-- bench:clients:end -->"
# bench/run.sh's features block (lines with "round") likewise, so that
# FEATURES_ONLY=1 bench/run.sh rewrites only that block.
FBEGIN, FEND = "<!-- bench:features:begin -->", "<!-- bench:features:end -->"
# The features' targets, as fractions of the line they are held against.
FEAT_GOALS = {"groups 1": 0.9, "groups 1000": 0.7, "events": 0.9, "fanout": 0.8}
CLIENT_NAMES = {"curl": "curl, 10 batches of 1,000 on one connection", "python": "Python `enqueue_many`",
                "node": "Node `enqueueMany`", "go": "Go `EnqueueMany`",
                "jobd-http": "`jobd worker --server`, http handler to a no-op endpoint",
                "jobd-exec": "`jobd worker --server`, exec `/bin/true`",
                "go-worker": "Go `Worker`", "python-worker": "Python `Worker`", "node-worker": "Node `Worker`"}
CLIENT_GOALS = {"python": 0.8, "node": 0.8, "go": 0.8,  # of curl
                "go-worker": 0.5, "python-worker": 0.2, "node-worker": 0.2}  # of jobd-http
PG_PEERS = ("graphile-worker", "pg-boss")


def load(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


def med(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def fmt(x, unit=""):
    if x is None:
        return "–"
    if isinstance(x, float) and abs(x) < 100:
        return f"{x:,.1f}{unit}"
    return f"{round(x):,}{unit}"


def mb(kb):
    return "–" if kb is None else f"{kb / 1024:.1f} MB"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def group(rows, keyf):
    g = {}
    for r in rows:
        g.setdefault(keyf(r), []).append(r)
    return g


class Report:
    def __init__(self, d):
        self.dir = d
        rows = load(os.path.join(d, "jobd.jsonl"))
        # the features block's lines (bench/run.sh, interleaved rounds) carry "round"
        self.feat = [r for r in rows if r.get("bench") != "step" and "round" in r]
        self.jobd = [r for r in rows if r.get("bench") != "step" and "round" not in r]
        self.steps_failed = [r for r in rows if r.get("bench") == "step" and "--round" not in r.get("error", "")]
        self.feat_failed = [r for r in rows if r.get("bench") == "step" and "--round" in r.get("error", "")]
        self.wrk = [r for r in load(os.path.join(d, "wrk.jsonl")) if r.get("bench") != "step"]
        self.steps_failed += [r for r in load(os.path.join(d, "wrk.jsonl")) if r.get("bench") == "step"]
        self.ceil = load(os.path.join(d, "ceiling.jsonl"))
        self.shared = load(os.path.join(d, "shared.jsonl"))
        self.clients = load(os.path.join(d, "clients.jsonl"))
        self.errors = [r for r in self.jobd + self.wrk + self.ceil + self.shared + self.steps_failed
                       if r.get("error")]
        self.feat_errors = [r for r in self.feat + self.feat_failed if r.get("error")]
        self.client_errors = [r for r in self.clients if r.get("error")]
        self.ok = lambda rows: [r for r in rows if not r.get("error")]

    # ---- figures -----------------------------------------------------------------
    def jb(self, bench, **kw):
        return [r for r in self.ok(self.jobd)
                if r.get("bench") == bench and all(r.get(k) == v for k, v in kw.items())]

    def best_process(self, backend="pg", handler="c"):
        rs = self.jb("process", backend=backend, handler=handler)
        return max((r["process_jobs_per_s"] for r in rs), default=None)

    def shared_med(self, system, mode, field, variant=None):
        """{(variant, n, concurrency): median} for a system in the shared run."""
        rs = [r for r in self.ok(self.shared) if r.get("system") == system and r.get("mode") == mode
              and (variant is None or r.get("variant") == variant)]
        g = group(rs, lambda r: (r.get("variant"), r.get("n"), r.get("concurrency")))
        return {k: med([r.get(field) for r in v]) for k, v in g.items() if med([r.get(field) for r in v]) is not None}

    def best_shared(self, systems, mode, field, pred=None):
        best = (None, None)
        for s in systems:
            for k, v in self.shared_med(s, mode, field).items():
                if pred and not pred(s, k):
                    continue
                if best[0] is None or v > best[0]:
                    best = (v, f"{s} {k[0]}")
        return best

    def ceiling_seed_b(self):
        return self.best_shared(["sql-ceiling"], "throughput", "process_jobs_per_s",
                                lambda s, k: k[0].startswith("B:"))

    def ceil_rows(self, prefix):
        """ceiling.jsonl's runs of one statement set ("jobd" or "B:"), grouped by client count."""
        return group([r for r in self.ok(self.ceil) if str(r.get("variant", "")).startswith(prefix)],
                     lambda r: r.get("concurrency"))

    def ceiling_of(self, prefix):
        """(best client count's median jobs/s, {clients: median}) of ceiling.jsonl's runs of prefix."""
        vals = {c: med([r.get("process_jobs_per_s") for r in v]) for c, v in self.ceil_rows(prefix).items()}
        return max(vals.values(), default=None), vals

    def ceiling_jobd(self):
        return self.ceiling_of("jobd")

    # ---- sections -----------------------------------------------------------------
    def sec_enqueue(self):
        rows = []
        for r in self.jb("enqueue1") + self.jb("enqueue"):
            rate = r.get("enqueue_single_jobs_per_s") or r.get("enqueue_jobs_per_s")
            rows.append([r["backend"], r["variant"].split(", ", 1)[1], r["n"],
                         r.get("settings", {}).get("clients", 1), fmt(rate),
                         mb(r.get("server_peak_rss_kb")) if r.get("server_peak_rss_kb") else "–"])
        return table(["store", "how", "jobs", "clients", "jobs/s", "server peak RSS"], rows)

    def wrk_rows(self, client=None, **kw):
        """bench/wrk.sh's lines (wrk.jsonl) without errors; client None = any."""
        return [r for r in self.ok(self.wrk) if (client is None or r.get("client", "wrk") == client)
                and all(r.get(k) == v for k, v in kw.items())]

    def sec_wrk(self):
        names = {"wrk": "wrk (C, Lua script)", "python": "Python http.client, a thread each",
                 "node": "Node fetch, all in flight at once"}
        order = {"wrk": 0, "python": 1, "node": 2}
        rows = []
        for r in sorted(self.wrk_rows(), key=lambda r: (r.get("backend") != "pg", order.get(r.get("client", "wrk"), 9),
                                                        r.get("concurrency", 0))):
            lat = r.get("latency_ms", {})
            rows.append([r["backend"], names.get(r.get("client", "wrk"), r.get("client")), r.get("concurrency"),
                         fmt(r.get("enqueue_jobs_per_s")), fmt(lat.get("mean"), " ms"), fmt(lat.get("p50"), " ms"),
                         fmt(lat.get("p99"), " ms"), fmt(r.get("server_cpu_ms_per_1000_jobs"), " ms"),
                         fmt(r.get("postgres_cpu_ms_per_1000_jobs"), " ms")])
        return table(["store", "client", "connections", "jobs/s", "mean", "p50", "p99",
                      "server CPU per 1,000 jobs", "PostgreSQL CPU per 1,000 jobs"], rows)

    def sec_process(self):
        rows = []
        for r in sorted(self.jb("process"), key=lambda r: (r["backend"], r["handler"], r["workers"],
                                                           bool(r.get("events")))):
            cpu = r.get("cpu", {})
            handler = "C no-op" if r["handler"] == "c" else "exec /bin/true"
            rows.append([r["backend"], handler + (", event log recording" if r.get("events") else ""),
                         r["workers"], r["concurrency"], r["n"], fmt(r["process_jobs_per_s"]),
                         mb(r.get("worker_peak_rss_kb")), fmt(cpu.get("worker_pct"), " %"),
                         fmt(cpu.get("server_pct"), " %") if r["backend"] == "pg" else "–"])
        return table(["store", "handler", "workers", "concurrency each", "jobs", "jobs/s",
                      "worker peak RSS", "workers' CPU", "PostgreSQL CPU"], rows)

    # ---- the features block -----------------------------------------------------------
    @staticmethod
    def cpu_per_1000(r):
        """CPU ms per 1,000 jobs of a process line: the worker's and (PostgreSQL) its server's."""
        c, secs = r.get("cpu") or {}, r.get("process_s")
        if not secs or c.get("worker_pct") is None:
            return None
        return (c["worker_pct"] + (c.get("server_pct") or 0)) / 100 * secs / r["n"] * 1e6

    def feat_rounds(self, be, cpu=False):
        """{variant key: {round: jobs/s}} of one store's features block (cpu: CPU ms per
        1,000 jobs instead, from the process lines and the deps-fanout lines that carry it);
        keys: plain, "groups G", events, progress, independent and fanout (deps-fanout)."""
        out = {}
        for r in self.ok(self.feat):
            if r.get("backend") != be:
                continue
            if r.get("bench") == "process":
                g = r.get("groups") or 0
                key = (f"groups {g}" if g else "events" if r.get("events") else
                       "progress" if r.get("progress") else "plain")
                v = self.cpu_per_1000(r) if cpu else r["process_jobs_per_s"]
                if v is not None:
                    out.setdefault(key, {})[r["round"]] = v
            elif r.get("bench") == "deps_fanout" and not cpu:
                out.setdefault("independent", {})[r["round"]] = r["independent_jobs_per_s"]
                out.setdefault("fanout", {})[r["round"]] = r["fanout_jobs_per_s"]
            elif r.get("bench") == "deps_fanout" and r.get("fanout_cpu_ms_per_1000"):
                out.setdefault("independent", {})[r["round"]] = r["independent_cpu_ms_per_1000"]
                out.setdefault("fanout", {})[r["round"]] = r["fanout_cpu_ms_per_1000"]
        return out

    def feat_ratio(self, rounds, key):
        """(median, min, max) of key's per-round ratio to its base (plain; fan-out: the
        independent jobs of the same deps-fanout run), over the rounds that have both."""
        base = rounds.get("independent" if key == "fanout" else "plain", {})
        rs = [v / base[k] for k, v in rounds.get(key, {}).items() if base.get(k)]
        return (med(rs), min(rs), max(rs)) if rs else (None, None, None)

    def feat_targets(self):
        """[(name, goal, ratio, (lo, hi), store)] of the features block, for the Targets tables."""
        names = {"events": "processing with the event log recording / plain jobs",
                 "fanout": "a fan-out of n with a fan-in / n independent jobs (deps-fanout)"}
        out = []
        for be in ("pg", "sqlite"):
            rounds = self.feat_rounds(be)
            for key, goal in FEAT_GOALS.items():
                q, lo, hi = self.feat_ratio(rounds, key)
                if q is None:
                    continue
                g = key.split(" ")[1] if key.startswith("groups") else None
                name = names.get(key) or f"claim with the jobs in {int(g):,} group{'s' if g != '1' else ''} / plain jobs"
                out.append((name, goal, q, (lo, hi), be))
        return out

    def sec_features(self, be):
        """One store's features block: each variant's median jobs/s over the rounds, and
        its ratio to plain jobs in the same rounds (the median of the per-round ratios)."""
        rounds = self.feat_rounds(be)
        if not rounds:
            return ""
        cpu = self.feat_rounds(be, cpu=True)
        nr = max(len(v) for v in rounds.values())
        n = next((r["n"] for r in self.ok(self.feat) if r.get("backend") == be and r.get("bench") == "process"), None)
        nd = next((r["n"] for r in self.ok(self.feat) if r.get("backend") == be and r.get("bench") == "deps_fanout"), None)
        names = {"plain": "plain jobs", "events": "the event log recording (no reader)",
                 "progress": "progress reported once a job (`jobd_progress`)",
                 "independent": "independent jobs, enqueued by `jobd_enqueue_batch` (deps-fanout)",
                 "fanout": "a root, its children and a fan-in (deps-fanout)"}
        keys = ["plain"] + sorted((k for k in rounds if k.startswith("groups")), key=lambda k: int(k.split()[1]))
        keys += [k for k in ("events", "progress", "independent", "fanout") if k in rounds]
        rows = []
        for key in keys:
            xs = rounds.get(key, {})
            name = names.get(key) or (f"in {int(key.split()[1]):,} group{'s' if key != 'groups 1' else ''}")
            size = nd if key in ("independent", "fanout") else n
            each = ", ".join(fmt(xs[r]) for r in sorted(xs))
            if key == "plain":
                ratio, vs = "100 %", "–"
            else:
                q, lo, hi = self.feat_ratio(rounds, key)
                vs = "the independent jobs" if key == "fanout" else "plain jobs"
                ratio = "–" if q is None else (f"{100 * q:.0f} %" + (f" ({100 * lo:.0f}–{100 * hi:.0f})" if hi != lo else ""))
            goal = FEAT_GOALS.get(key)
            q = self.feat_ratio(rounds, key)[0] if key != "plain" else None
            met = "–" if goal is None or q is None else f"≥ {100 * goal:.0f} %: " + ("met" if q >= goal else "**missed**")
            cs = cpu.get(key, {})
            base = cpu.get("independent" if key == "fanout" else "plain", {})
            cq = med([base[k] / v for k, v in cs.items() if base.get(k) and v]) if key != "plain" else None
            crow = f"{fmt(med(list(cs.values())), ' ms')}" + (f" ({100 * cq:.0f} %)" if cq else "") if cs else "–"
            rows.append([name, f"{size:,}" if size else "–", fmt(med(list(xs.values()))), each, vs, ratio, met,
                         crow])
        out = [f"{'PostgreSQL' if be == 'pg' else 'SQLite'}: {nr} round{'s' if nr > 1 else ''}, one C worker "
               "(concurrency 100, its default prefetch), median jobs/s; the ratio is the median of the "
               "rounds' ratios (their range in brackets). CPU: the worker's"
               + (" and the PostgreSQL server's" if be == "pg" else "") + " per 1,000 jobs, median, and in "
               "brackets plain jobs' CPU per job over this one's (the fan-out: the independent jobs'; the "
               "median of the rounds'), which the machine's other load disturbs less than the wall time:", "",
               table(["what", "jobs", "jobs/s (median)", "each round", "held against", "ratio", "target",
                      "CPU per 1,000 jobs"], rows)]
        return "\n".join(out)

    def render_features(self):
        env = os.path.join(self.dir, "env.md")
        parts = [f"_Generated by `bench/report.py` from `{os.path.relpath(self.dir)}` (the features block of "
                 "`bench/run.sh`); do not edit between the markers._", ""]
        if os.path.exists(env):
            parts += [open(env).read().strip(), ""]
        for be in ("pg", "sqlite"):
            t = self.sec_features(be)
            if t:
                parts += [t, ""]
        if self.feat_errors:
            parts += ["Failed: " + "; ".join(r["error"] for r in self.feat_errors), ""]
        return "\n".join(parts).strip()

    def sec_deps(self):
        rows = []
        for r in self.jb("deps_chain"):
            rows.append([r["backend"], "child start after its parent's end (p50 / p99 / max)",
                         f"{fmt(r.get('p50_ms'), ' ms')} / {fmt(r.get('p99_ms'), ' ms')} / "
                         f"{fmt(r.get('max_ms'), ' ms')}", f"{r.get('pairs', 0):,} pairs"])
        for r in self.jb("deps_fanout"):
            rows.append([r["backend"], "fan-out + fan-in vs independent jobs (jobs/s)",
                         f"{fmt(r.get('fanout_jobs_per_s'))} vs {fmt(r.get('independent_jobs_per_s'))}"
                         f" = {100 * r.get('ratio', 0):.0f} %", f"{r['n']:,} jobs"])
        return table(["store", "what", "result", "size"], rows)

    def sec_lateness(self):
        rows = []
        for r in self.jb("lateness"):
            rows.append([r["backend"], "due now, one enqueue at a time" if r.get("due_now")
                         else "due at known instants over %.0f s" % (r.get("settings", {}).get("spread_ms", 0) / 1000),
                         r["n"], r.get("poll", ""), fmt(r.get("p50_ms"), " ms"),
                         fmt(r.get("p90_ms"), " ms"), fmt(r.get("p99_ms"), " ms"),
                         fmt(r.get("max_ms"), " ms"), r.get("early", 0), mb(r.get("worker_peak_rss_kb"))])
        return table(["store", "jobs", "n", "wake-up", "p50", "p90", "p99", "max", "early", "worker RSS"], rows)

    def sec_scaling(self):
        rows = []
        base = {}
        rs = sorted(self.jb("scaling"), key=lambda r: (r["backend"], r.get("future", 0), r["pending"]))
        for r in rs:
            if not r.get("future"):
                base.setdefault(r["backend"], r["claim_complete_jobs_per_s"])
        for r in rs:
            b = base.get(r["backend"])
            rel = f"{100 * r['claim_complete_jobs_per_s'] / b:.0f} %" if b else "–"
            rows.append([r["backend"], f"{r['pending']:,}", f"{r.get('future', 0):,}",
                         fmt(r["claim_complete_jobs_per_s"]), rel, fmt(r.get("seed_s"), " s")])
        return table(["store", "pending (due)", "future-dated in the way", "claim+complete jobs/s",
                      "vs the smallest", "seeding took"], rows)

    def sec_ceiling(self):
        rows = []
        # bench/sql/ceiling.py: jobd's statements and B interleaved on one server
        paired = bool(self.ceil_rows("B:"))
        for prefix in ("jobd", "B:"):
            for c, v in sorted(self.ceil_rows(prefix).items()):
                xs = [r["process_jobs_per_s"] for r in v]
                what = ("seed design, " if prefix == "B:" else "") + v[0]["variant"]
                what += " (interleaved, one server)" if paired else ""
                rows.append([what, c, fmt(med(xs)) if len(xs) == 1 else
                             f"{fmt(med(xs))} (median of {len(xs)}: {fmt(min(xs))}–{fmt(max(xs))})"])
        for (var, n, c), v in sorted(self.shared_med("sql-ceiling", "throughput", "process_jobs_per_s").items()):
            rows.append([f"seed design, {var} (shared harness)", c, fmt(v)])
        for (var, n, c), v in sorted(self.shared_med("pgbench", "tps", "tps").items()):
            rows.append([f"pgbench {var} (transactions/s)", c, fmt(v)])
        return table(["what pgbench ran", "clients", "jobs/s"], rows)

    def sec_shared(self):
        rows = []
        ok = self.ok(self.shared)
        g = group([r for r in ok if r.get("system") not in ("sql-ceiling", "pgbench")],
                   lambda r: (r.get("system"), r.get("variant"), r.get("mode"), r.get("n"), r.get("concurrency"),
                              r.get("poll") if r.get("mode") == "latency" else None))
        order = {"jobd": 0, "graphile-worker": 1, "pg-boss": 2, "bullmq": 3, "beanstalkd": 4}
        for k in sorted(g, key=lambda k: (order.get(k[0], 9), str(k[1]), str(k[2]), k[3] or 0, k[4] or 0)):
            v = g[k]
            m = lambda f: med([r.get(f) for r in v])
            sysname = f"**{k[0]}**" if k[0] == "jobd" else k[0]
            if k[2] == "throughput":
                fig = f"enqueue {fmt(m('enqueue_jobs_per_s'))}/s, process **{fmt(m('process_jobs_per_s'))}/s**"
            elif k[2] == "enqueue1":
                fig = f"one call per job **{fmt(m('enqueue_single_jobs_per_s'))}/s**"
            elif k[2] == "latency":
                fig = f"p50 {fmt(m('p50_ms'), ' ms')}, p99 **{fmt(m('p99_ms'), ' ms')}**, max {fmt(m('max_ms'), ' ms')}"
            else:
                fig = ""
            poll = k[5] or ""
            if len(poll) > 70:  # keep both ends: the setting is first (pollers) or last (BullMQ's hz)
                poll = poll[:45] + " … " + poll[-22:]
            variant = f"{k[1]}; {poll}" if poll else k[1]
            rows.append([sysname, variant, k[2], k[3], k[4], fig, mb(m("worker_peak_rss_kb")), len(v)])
        return table(["system", "variant", "mode", "n", "concurrency", "result (median)", "worker RSS", "runs"], rows)

    def targets(self):
        out = []

        def row(name, target, value, ok, how):
            out.append([name, target, value, "–" if ok is None else ("met" if ok else "**missed**"), how])

        ceilB, ceilB_name = self.ceiling_seed_b()
        ceilJ, _ = self.ceiling_jobd()
        # The first target: jobd's own SQL ceiling against B, both from
        # bench/sql/ceiling.py (interleaved runs on one server, medians).
        pairB, valsB = self.ceiling_of("B:")
        if ceilJ and pairB:
            reps = max((len(v) for v in self.ceil_rows("B:").values()), default=0)
            row("SQL ceiling of jobd's own statements / SQL ceiling B", "≥ 95 %",
                f"{100 * ceilJ / pairB:.0f} % ({fmt(ceilJ)} / {fmt(pairB)})", ceilJ / pairB >= 0.95,
                f"bench/sql/ceiling.py: the two interleaved on one server, the median of {reps} runs "
                "at each client count, the best count of each")
        # The processing target: jobd in the shared harness with the
        # local queue of Graphile Worker's batched variant (jobd.mjs's default
        # prefetch), at the harness's concurrency.
        gwb = sorted((r.get("concurrency") or 0, re.search(r"localQueue (\d+)", r["variant"]).group(1))
                     for r in self.ok(self.shared)
                     if r.get("system") == "graphile-worker" and "localQueue" in r.get("variant", ""))
        conc, lq = gwb[0] if gwb else (10, "500")
        jobd_shared, _ = self.best_shared(
            ["jobd"], "throughput", "process_jobs_per_s",
            lambda s, k: str(k[0]).endswith(f"prefetch {lq}") and k[2] == conc)
        jobd_own = self.best_process("pg", "c")
        best_pg_peer, peer_name = self.best_shared(PG_PEERS, "throughput", "process_jobs_per_s")
        own_w = max(self.jb("process", backend="pg", handler="c"), key=lambda r: r["process_jobs_per_s"],
                    default={}).get("workers")
        cands = [(jobd_shared, f"jobd in the shared harness (one worker process, its procedure, prefetch {lq} = Graphile's localQueue)"),
                 (jobd_own, f"jobd_bench process, best run ({own_w} worker processes)")]
        for jp, who in cands:
            if ceilB and jp:
                row(f"processing, C handlers / SQL ceiling B — {who}", "≥ 75 %",
                    f"{100 * jp / ceilB:.0f} % ({fmt(jp)} / {fmt(ceilB)})", jp / ceilB >= 0.75,
                    "the seed design's ceiling B (best of 4 and 8 clients), same run")
        if ceilJ and jobd_own:
            row("processing, best own run / ceiling of jobd's own statements", "(diagnostic)",
                f"{100 * jobd_own / ceilJ:.0f} % ({fmt(jobd_own)} / {fmt(ceilJ)})", None,
                "what the worker loop leaves of what its own SQL allows")
        for jp, who in cands:
            if best_pg_peer and jp:
                row(f"processing, jobd / best PostgreSQL peer — {who}", "≥ 2×",
                    f"{jp / best_pg_peer:.2f}× ({fmt(jp)} / {fmt(best_pg_peer)}, {peer_name})",
                    jp / best_pg_peer >= 2, "the peer in the shared harness, same run")
        e1 = self.jb("enqueue1", backend="pg")
        e1v = max((r["enqueue_single_jobs_per_s"] for r in e1), default=None)
        if e1v is not None:
            how = "jobd_bench enqueue1 (C clients, keep-alive)"
            fs = self.fsync_per_s()
            if fs:
                # each client waits for its durable commit: at most 10 jobs per fsync
                how += f"; bound with 10 clients: 10 × fsync rate = {fmt(10 * fs)}/s on this disk"
            row("one job per HTTP request, 10 clients (PostgreSQL)", "≥ 15,000/s", f"{fmt(e1v)}/s", e1v >= 15000, how)
        w10 = max(self.wrk_rows("wrk", backend="pg", concurrency=10), key=lambda r: r["enqueue_jobs_per_s"],
                  default=None)
        if w10 is not None:
            v = w10["enqueue_jobs_per_s"]
            row("one job per HTTP request, 10 connections, wrk (PostgreSQL)", "≥ 15,000/s", f"{fmt(v)}/s",
                v >= 15000, f"bench/wrk.sh (wrk -t2, keep-alive); mean latency "
                f"{fmt(w10.get('latency_ms', {}).get('mean'), ' ms')}, server CPU "
                f"{fmt(w10.get('server_cpu_ms_per_1000_jobs'), ' ms')} and PostgreSQL CPU "
                f"{fmt(w10.get('postgres_cpu_ms_per_1000_jobs'), ' ms')} per 1,000 jobs")
        pe1, pe1_name = self.best_shared(PG_PEERS, "enqueue1", "enqueue_single_jobs_per_s")
        je1, _ = self.best_shared(["jobd"], "enqueue1", "enqueue_single_jobs_per_s")
        for v, who in ((je1, "jobd in the shared harness (its Node client)"),
                       (e1v, "jobd_bench enqueue1 (C clients)")):
            if pe1 and v:
                row(f"one call per job, jobd / best PostgreSQL peer — {who}", "≥ 10×",
                    f"{v / pe1:.1f}× ({fmt(v)} / {fmt(pe1)}, {pe1_name})", v / pe1 >= 10,
                    "peers: their single-enqueue call, 10 callers, in the shared harness")
        for be in ("pg", "sqlite"):
            for now in (True, False):
                lt = [r for r in self.jb("lateness", backend=be) if bool(r.get("due_now")) == now]
                if lt and lt[0].get("p99_ms") is not None:
                    p = lt[0]["p99_ms"]
                    what = "a job due now" if now else "jobs due at known instants"
                    row(f"lateness p99, {what}, idle worker ({be})", "≤ 10 ms", f"{fmt(p, ' ms')}", p <= 10,
                        "jobd_bench lateness" + (" --due-now 1 (includes the enqueue's commit)" if now else ""))
        wr = [r.get("worker_peak_rss_kb") for r in self.jb("process", handler="c") + self.jb("lateness") + self.jb("scaling")
              if r.get("worker_peak_rss_kb")]
        if wr:
            row("worker peak RSS (C-handler worker process)", "≤ 10 MB", mb(max(wr)), max(wr) <= 10 * 1024,
                "largest VmHWM over every run with a C worker")
        xr = [r.get("worker_peak_rss_kb") for r in self.jb("process", handler="exec") if r.get("worker_peak_rss_kb")]
        if xr:
            row("worker peak RSS (`jobd worker`, exec handlers)", "≤ 10 MB", mb(max(xr)), max(xr) <= 10 * 1024,
                "largest VmHWM of the jobd worker processes")
        sr = [r.get("server_peak_rss_kb") for r in self.jobd if r.get("server_peak_rss_kb")]
        if sr:
            row("`jobd server` peak RSS", "≤ 30 MB", mb(max(sr)), max(sr) <= 30 * 1024, "largest VmHWM over the HTTP enqueue runs")
        for be in ("pg", "sqlite"):
            sc = [r for r in self.jb("scaling", backend=be) if not r.get("future")]
            if len(sc) >= 2:
                lo = min(sc, key=lambda r: r["pending"])
                hi = max(sc, key=lambda r: r["pending"])
                rel = hi["claim_complete_jobs_per_s"] / lo["claim_complete_jobs_per_s"]
                row(f"claim+complete at {hi['pending']:,} vs {lo['pending']:,} pending ({be})", "within 20 %",
                    f"{100 * rel:.0f} %", rel >= 0.8, "jobd_bench scaling")
        for r in self.jb("deps_chain"):
            p = r.get("p99_ms")
            if p is not None:
                row(f"child start after its parent's end, p99, idle worker ({r['backend']})", "≤ 10 ms",
                    fmt(p, " ms"), p <= 10, "jobd_bench deps-chain: parent's handler return to child's handler start")
        for r in self.jb("deps_fanout"):  # a deps-fanout line outside the features block
            row(f"fan-out of {r['n']:,} with a fan-in / as many independent jobs ({r['backend']})", "≥ 80 %",
                f"{100 * r['ratio']:.0f} %", r["ratio"] >= 0.8, "jobd_bench deps-fanout, one worker")
        for name, goal, q, (lo, hi), be in self.feat_targets():
            row(f"{name} ({be})", f"≥ {100 * goal:.0f} %", f"{100 * q:.0f} % ({100 * lo:.0f}–{100 * hi:.0f})",
                q >= goal, "the features block (below): one C worker, the median of the rounds' ratios, "
                "interleaved rounds")
        return table(["target", "wanted", "measured", "", "how"], out)

    def fsync_per_s(self):
        """pg_test_fsync's fdatasync rate from env.md (ops/s), or None."""
        p = os.path.join(self.dir, "env.md")
        if not os.path.exists(p):
            return None
        m = re.search(r"fdatasync\): ([\d.]+) ops/sec", open(p).read())
        return float(m.group(1)) if m else None

    # ---- plots ----------------------------------------------------------------------
    def plots(self, pdir):
        if not shutil.which("gnuplot"):
            print("report.py: gnuplot not installed, no plots", file=sys.stderr)
            return []
        os.makedirs(pdir, exist_ok=True)
        made = []
        data = os.path.join(self.dir, "plot-data")
        os.makedirs(data, exist_ok=True)
        # throughput vs workers
        series = []
        for be in ("pg", "sqlite"):
            for h, label in (("c", "C no-op"), ("exec", "exec /bin/true")):
                rs = sorted(self.jb("process", backend=be, handler=h), key=lambda r: r["workers"])
                if not rs:
                    continue
                f = os.path.join(data, f"process-{be}-{h}.dat")
                with open(f, "w") as fh:
                    for r in rs:
                        fh.write(f"{r['workers']} {r['process_jobs_per_s']}\n")
                series.append(f"'{f}' using 1:2 with linespoints lw 2 title '{'PostgreSQL' if be == 'pg' else 'SQLite'}, {label}'")
        ceilB, _ = self.ceiling_seed_b()
        ceilJ, _ = self.ceiling_jobd()
        best_pg_peer, peer_name = self.best_shared(PG_PEERS, "throughput", "process_jobs_per_s")
        for v, t in ((ceilB, "SQL ceiling B (seed design)"), (ceilJ, "SQL ceiling, jobd's statements"),
                     (best_pg_peer, f"best PostgreSQL peer ({peer_name[:40]})" if peer_name else "")):
            if v:
                series.append(f"{v} with lines dt 2 lw 1 title \"{t}\"")
        if series:
            out = os.path.join(pdir, "throughput-workers.png")
            self.gnuplot(f"""
set terminal pngcairo size 900,560 noenhanced font ',10'
set output '{out}'
set title 'No-op jobs processed per second vs worker processes (one run)'
set xlabel 'worker processes'
set ylabel 'jobs/s (log scale)'
set logscale y
set logscale x 2
set xrange [0.85:9.5]
set xtics (1,2,4,8)
set grid
set key outside bottom center horizontal maxrows 3
plot {', '.join(series)}
""")
            made.append(("throughput-workers.png", "Processing rate vs worker processes"))
        # lateness distribution (CDF)
        series = []
        for be, title in (("pg", "PostgreSQL, due at known instants"), ("sqlite", "SQLite, due at known instants"),
                          ("pg-now", "PostgreSQL, due now"), ("sqlite-now", "SQLite, due now")):
            src = os.path.join(self.dir, f"lateness-{be}.txt")
            if not os.path.exists(src):
                continue
            vals = sorted(float(x) for x in open(src) if x.strip())
            if not vals:
                continue
            f = os.path.join(data, f"lateness-{be}.dat")
            with open(f, "w") as fh:
                for i, v in enumerate(vals):
                    fh.write(f"{v} {(i + 1) / len(vals)}\n")
            series.append(f"'{f}' using 1:2 with lines lw 2 title '{title}'")
        if series:
            out = os.path.join(pdir, "lateness.png")
            self.gnuplot(f"""
set terminal pngcairo size 900,500 noenhanced font ',10'
set output '{out}'
set title 'Lateness of delayed jobs (start - run_at), idle worker: cumulative distribution'
set xlabel 'ms late (log scale)'
set ylabel 'fraction of jobs started'
set logscale x
set grid
set key bottom right
set yrange [0:1]
plot {', '.join(series)}
""")
            made.append(("lateness.png", "Lateness distribution"))
        # peers, processing rate, one bar each
        bars = []
        for s in ("jobd", "graphile-worker", "pg-boss", "bullmq", "beanstalkd", "sql-ceiling"):
            for (var, n, c), v in sorted(self.shared_med(s, "throughput", "process_jobs_per_s").items()):
                short = var if len(var) <= 44 else var[:28] + ".." + var[-14:]
                bars.append((f"{s}: {short} (c={c})", v))
        if bars:
            f = os.path.join(data, "peers.dat")
            with open(f, "w") as fh:
                for name, v in reversed(bars):  # gnuplot draws row 0 at the bottom
                    fh.write(f"\"{name}\" {v}\n")
            out = os.path.join(pdir, "peers.png")
            self.gnuplot(f"""
set terminal pngcairo size 1000,{200 + 22 * len(bars)} noenhanced font ',9'
set output '{out}'
set title 'No-op jobs/s in the shared harness, same run, same machine'
set style fill solid 0.6
set boxwidth 0.7
set yrange [-0.5:{len(bars) - 0.5}]
set xlabel 'jobs/s'
set grid x
unset key
set lmargin 52
plot '{f}' using (column(2)*0.5):0:(column(2)*0.5):(0.35):yticlabels(1) with boxxyerror
""")
            made.append(("peers.png", "jobd beside the peers and the SQL ceilings"))
        return made

    def gnuplot(self, script):
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            print(f"report.py: gnuplot failed: {r.stderr[-500:]}", file=sys.stderr)

    def sec_clients(self):
        """bench/clients.sh: each client's enqueue_many against curl, each
        worker process against jobd's own (one run, the medians of its rounds)."""
        ok = self.ok(self.clients)

        def median_s(bench, client):
            return med([r["s"] for r in ok if r.get("bench") == bench and r.get("client") == client])

        def n_of(bench, client):
            return next((r["n"] for r in ok if r.get("bench") == bench and r.get("client") == client), None)

        def goal(key, ratio):
            g = CLIENT_GOALS.get(key)
            if g is None or ratio is None:
                return "–"
            return f"≥ {g:.0%}: {'met' if ratio >= g else 'missed'}"
        rounds = max((r.get("round", 1) for r in ok if r.get("bench") == "enqueue"), default=0)
        base = median_s("enqueue", "curl")
        rows = []
        for c in ("curl", "python", "node", "go"):
            sec = median_s("enqueue", c)
            if sec is None:
                continue
            n = n_of("enqueue", c)
            ratio = base / sec if base and c != "curl" else None
            rows.append([CLIENT_NAMES[c], fmt(sec * 1000, " ms"), fmt(n / sec),
                         "100%" if c == "curl" else (f"{ratio:.0%}" if ratio else "–"), goal(c, ratio)])
        out = [f"Enqueue of 10,000 jobs, median of {rounds} alternating rounds (a client's figure is the "
               "`enqueue_many` call's own time; curl's, its process's wall time):", "",
               table(["how", "time", "jobs/s", "of curl", "goal"], rows), ""]
        ref = median_s("worker", "jobd-http")
        ref_rate = n_of("worker", "jobd-http") / ref if ref else None
        rows = []
        for c in ("jobd-http", "go", "python", "node", "jobd-exec"):
            sec = median_s("worker", c)
            if sec is None:
                continue
            n = n_of("worker", c)
            key = c if c.startswith("jobd") else c + "-worker"
            ratio = (n / sec) / ref_rate if ref_rate and not c.startswith("jobd") else None
            rows.append([CLIENT_NAMES[key], n, fmt(sec, " s"), fmt(n / sec),
                         "100%" if c == "jobd-http" else (f"{ratio:.0%}" if ratio else "–"), goal(key, ratio)])
        out += ["One worker process at its default settings on no-op jobs prefilled into its queue, timed "
                "from its start until the queue has nothing pending or running:", "",
                table(["worker", "jobs", "time", "jobs/s", "of jobd's", "goal"], rows)]
        if self.client_errors:
            out += ["", "Failed: " + "; ".join(r["error"] for r in self.client_errors)]
        return "\n".join(out)

    # ---- the document -----------------------------------------------------------------
    def render(self, plots, plot_rel):
        env = open(os.path.join(self.dir, "env.md")).read().strip() if os.path.exists(os.path.join(self.dir, "env.md")) else ""
        parts = [f"_Generated by `bench/report.py` from `{os.path.relpath(self.dir)}`; "
                 "do not edit between the markers (re-run `make bench`)._", "",
                 "### Machine", "", env, "", "### Targets", "", self.targets(), ""]
        if plots:
            parts += ["### Plots", ""]
            parts += [f"![{t}]({plot_rel}/{f})" for f, t in plots] + [""]
        parts += ["### Enqueue", "", self.sec_enqueue(), ""]
        if self.wrk:
            parts += ["### One job per HTTP request, by client (bench/wrk.sh)", "",
                      "Each connection sends its next `POST /v1/jobs` when its `201` is in "
                      "(keep-alive); a fresh server each run; CPU from /proc over the run.", "",
                      self.sec_wrk(), ""]
        parts += ["### Processing no-op jobs", "", self.sec_process(), "",
                  "### Lateness of delayed jobs", "", self.sec_lateness(), "",
                  "### Dependencies (bench_deps.c)", "", self.sec_deps(), "",
                  "### Scaling with the number of pending jobs", "", self.sec_scaling(), "",
                  "### SQL ceilings (pgbench, no scheduler)", "", self.sec_ceiling(), ""]
        if self.shared:
            parts += ["### jobd beside the peers (shared harness, same run)", "", self.sec_shared(), ""]
            senv = os.path.join(self.dir, "shared-env.md")
            if os.path.exists(senv):
                parts += ["<details><summary>The shared harness's machine and server settings</summary>", "",
                          open(senv).read().strip(), "", "</details>", ""]
        if self.errors:
            parts += ["### Failed steps", ""]
            parts += [f"- {r.get('system')} {r.get('bench', '')} {r.get('variant', '')} {r.get('mode', '')}: {r['error']}"
                      for r in self.errors] + [""]
        return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--docs")
    ap.add_argument("--plots")
    a = ap.parse_args()
    rep = Report(a.dir)
    # A run of the clients step alone (CLIENTS_ONLY=1), or of the features block
    # (FEATURES_ONLY=1), rewrites only its block.
    main_too = bool(rep.jobd or rep.wrk or rep.ceil or rep.shared)
    ftext = rep.render_features() if rep.feat or rep.feat_failed else ""
    plots = rep.plots(a.plots) if a.plots and main_too else []
    rel = os.path.relpath(a.plots, os.path.dirname(a.docs)) if a.plots and a.docs else "."
    text = rep.render(plots, rel) if main_too else ""
    ctext = ""
    if rep.clients:
        env = os.path.join(a.dir, "env.md")
        ctext = (f"_Generated by `bench/report.py` from `{os.path.relpath(a.dir)}` (bench/clients.sh); "
                 "do not edit between the markers._\n\n"
                 + (open(env).read().strip() + "\n\n" if os.path.exists(env) else "") + rep.sec_clients())
    with open(os.path.join(a.dir, "summary.md"), "w") as f:
        f.write(text + ("\n\n### Features beside plain jobs\n\n" + ftext if ftext else "")
                + ("\n\n### Clients\n\n" + ctext if ctext else "") + "\n")
    if a.docs:
        doc = open(a.docs).read() if os.path.exists(a.docs) else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
        for begin, end, body in ((BEGIN, END, text), (FBEGIN, FEND, ftext), (CBEGIN, CEND, ctext)):
            if not body:
                continue
            if begin not in doc or end not in doc:
                sys.exit(f"report.py: {a.docs} lacks the markers {begin} / {end}")
            pre, rest = doc.split(begin, 1)
            _, post = rest.split(end, 1)
            doc = pre + begin + "\n" + body + "\n" + end + post
        with open(a.docs, "w") as f:
            f.write(doc)
    print(text + ("\n\n" + ftext if ftext else "") + ("\n\n" + ctext if ctext else ""))


if __name__ == "__main__":
    main()
