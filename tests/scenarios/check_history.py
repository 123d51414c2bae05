#!/usr/bin/env python3
"""check_history.py — checks a scenario's run history against the store.

Inputs:
  --history FILE  lines "JOB ATTEMPT WORKER START_NS END_NS", one per handler
                  run that ended (tests/scenarios/handler.sh writes them);
  --jobs FILE     the store's final job rows: JSON lines or one JSON array of
                  objects with at least id, status, attempt, and optionally
                  worker_id and result (psql's row_to_json, sqlite3 -json,
                  or `jobd jobs` piped);
  --expect FILE   the job ids that must exist, one per line (for example the
                  ids of every acknowledged enqueue); or --expect-count N for
                  ids 1..N.

What it proves, per expected job (the accepted run is the run whose attempt
is the row's final attempt: attempt is the fencing token, and only a report
carrying the row's current attempt can have made it succeeded):
  lost        the job is missing from the store, is not succeeded, or no
              run was recorded for its accepted attempt;
  duplicate   the job is in the store twice, two runs carry the same
              (job, attempt) (two holders of one lease), a run has a higher
              attempt than the accepted one (the job ran again after the
              store accepted its completion), or the row's worker_id/result
              names another run than the accepted one;
  overlap     the accepted run overlaps in time any other run of the job:
              it would have run while another holder still worked on it.
  stale       a run started after a run of a higher attempt of the same
              job had started: its lease was gone before it began (the
              higher attempt was claimed after the lower one's lease ended),
              so it ran without a live lease, whether or not it overlapped.
Runs of earlier attempts that ended without being accepted (the worker was
killed, stopped or cut off and its lease was reaped) are allowed and
counted as "superseded".

With --workflow FILE (the answer of GET /v1/workflows/{id} read once the
workflow ended; docs/MODEL.md, Workflows), for the steps of that workflow:
  early       a step started before all its parents had finished: its
              first start (the earliest of its runs, and of the starts in
              --starts, default HISTORY.starts: a run killed before its end
              left only a start) precedes the end of a parent's accepted
              run (the run the store accepted; a parent's failed or
              superseded runs do not count as its finish), or a parent has
              no accepted run at all;
  workflow    the workflow did not end well: its status is not succeeded,
              a count other than succeeded is not 0, a step is not
              succeeded, or (with --submitted FILE, the POST /v1/workflows
              body) its steps or their depends_on differ from what was
              submitted.

Prints what it verified and exits 1 on any violation, 2 on bad input.
"""
import argparse
import collections
import json
import os
import sys


def load_history(path):
    runs = collections.defaultdict(list)
    n = 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 5:
                raise ValueError(f"{path}:{lineno}: want 5 fields, got {len(parts)}: {line!r}")
            job, attempt, worker, start, end = parts
            try:
                run = (int(attempt), worker, int(start), int(end))
                job = int(job)
            except ValueError:
                raise ValueError(f"{path}:{lineno}: job, attempt, start and end must be integers: {line!r}")
            if run[3] < run[2]:
                raise ValueError(f"{path}:{lineno}: run ends before it starts: {line!r}")
            runs[job].append(run)
            n += 1
    return runs, n


def load_jobs(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stripped = text.strip()
    if stripped.startswith("["):
        rows = json.loads(stripped)
    else:
        rows = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{lineno}: not JSON: {e}")
    jobs = collections.defaultdict(list)
    for r in rows:
        if not isinstance(r, dict) or "id" not in r or "status" not in r or "attempt" not in r:
            raise ValueError(f"{path}: a row lacks id, status or attempt: {r!r}")
        result = r.get("result")
        if isinstance(result, str):  # sqlite3 -json gives the column as text
            try:
                result = json.loads(result)
            except json.JSONDecodeError:
                pass
        jobs[int(r["id"])].append({"status": r["status"], "attempt": int(r["attempt"]),
                                   "worker_id": r.get("worker_id"), "result": result})
    return jobs


def load_expect(args):
    if args.expect_count is not None:
        return list(range(1, args.expect_count + 1))
    ids = []
    with open(args.expect, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if line:
                try:
                    ids.append(int(line))
                except ValueError:
                    raise ValueError(f"{args.expect}:{lineno}: not a job id: {line!r}")
    return ids


def load_starts(path):
    """JOB ATTEMPT WORKER START_NS lines (handler.sh's HISTORY.starts): job -> first start."""
    first = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise ValueError(f"{path}:{lineno}: want 4 fields, got {len(parts)}: {line.strip()!r}")
            try:
                job, start = int(parts[0]), int(parts[3])
            except ValueError:
                raise ValueError(f"{path}:{lineno}: job and start must be integers: {line.strip()!r}")
            first[job] = min(first.get(job, start), start)
    return first


def load_json(path):
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON: {e}")


def check_workflow(wf, submitted, runs, starts, jobs, v):
    """The rules early and workflow (see the module's doc); returns the number of edges checked."""
    steps = wf.get("steps") or []
    by_ref = {s["ref"]: s for s in steps}
    counts = wf.get("counts") or {}
    if wf.get("status") != "succeeded":
        v["workflow"].append(f"workflow {wf.get('id')}: status {wf.get('status')}, not succeeded")
    for k in ("waiting", "pending", "running", "dead", "cancelled"):
        if counts.get(k, 0) != 0:
            v["workflow"].append(f"workflow {wf.get('id')}: {counts.get(k)} step(s) {k}")
    if counts.get("succeeded") != len(steps):
        v["workflow"].append(f"workflow {wf.get('id')}: counts say {counts.get('succeeded')} succeeded "
                             f"of {len(steps)} steps")
    for st in steps:
        if st.get("status") != "succeeded":
            v["workflow"].append(f"step {st['ref']} (job {st['job_id']}): status {st.get('status')}")
    if submitted is not None:
        want = {s["ref"]: sorted(s.get("depends_on") or []) for s in submitted.get("steps", [])}
        got = {ref: sorted(s.get("depends_on") or []) for ref, s in by_ref.items()}
        if set(want) != set(got):
            v["workflow"].append(f"steps submitted {len(want)}, in the workflow {len(got)}: "
                                 f"missing {sorted(set(want) - set(got))[:5]}, "
                                 f"extra {sorted(set(got) - set(want))[:5]}")
        for ref in sorted(set(want) & set(got)):
            if want[ref] != got[ref]:
                v["workflow"].append(f"step {ref}: depends_on {got[ref]}, submitted {want[ref]}")
    edges = 0
    for st in steps:
        child = st["job_id"]
        first = min([r[2] for r in runs.get(child, [])] + ([starts[child]] if child in starts else []),
                    default=None)
        if first is None:
            continue  # never started: the workflow rule says what is wrong with it
        for pref in st.get("depends_on") or []:
            edges += 1
            parent = by_ref[pref]["job_id"] if pref in by_ref else None
            rows = jobs.get(parent, [])
            acc = [r for r in runs.get(parent, []) if rows and rows[0]["status"] == "succeeded"
                   and r[0] == rows[0]["attempt"]]
            if not acc:
                v["early"].append(f"step {st['ref']} (job {child}) started at {first}, but its parent "
                                  f"{pref} (job {parent}) has no successful finish recorded")
            elif first < acc[0][3]:
                v["early"].append(f"step {st['ref']} (job {child}) started at {first}, before its parent "
                                  f"{pref} (job {parent}) finished at {acc[0][3]} (attempt {acc[0][0]} "
                                  f"on {acc[0][1]})")
    return edges


def overlaps(a, b):
    return a[2] < b[3] and b[2] < a[3]


def check(runs, jobs, expect, allow_extra):
    v = collections.defaultdict(list)  # kind -> messages
    hist = collections.Counter()
    superseded = 0
    expected = set(expect)
    if len(expected) != len(expect):
        v["duplicate"].append(f"the expected ids list {len(expect) - len(expected)} id(s) twice")
    for job in sorted(expected):
        rows = jobs.get(job, [])
        if not rows:
            v["lost"].append(f"job {job}: not in the store")
            continue
        if len(rows) > 1:
            v["duplicate"].append(f"job {job}: {len(rows)} rows in the store")
        row = rows[0]
        if row["status"] != "succeeded":
            v["lost"].append(f"job {job}: status {row['status']} (attempt {row['attempt']}), not succeeded")
            continue
        a = row["attempt"]
        hist[a] += 1
        jr = runs.get(job, [])
        accepted = [r for r in jr if r[0] == a]
        if not accepted:
            v["lost"].append(f"job {job}: succeeded at attempt {a} but no run of attempt {a} was recorded")
            continue
        if len(accepted) > 1:
            v["duplicate"].append(f"job {job}: {len(accepted)} runs of attempt {a} "
                                  f"(workers {', '.join(r[1] for r in accepted)})")
        acc = accepted[0]
        later = [r for r in jr if r[0] > a]
        if later:
            v["duplicate"].append(f"job {job}: ran again at attempt(s) "
                                  f"{sorted({r[0] for r in later})} after attempt {a} was accepted")
        if row["worker_id"] not in (None, acc[1]):
            v["duplicate"].append(f"job {job}: the store names worker {row['worker_id']} "
                                  f"but attempt {a} ran on {acc[1]}")
        res = row["result"]
        if isinstance(res, dict) and "worker" in res and (res.get("worker") != acc[1] or res.get("attempt") != a):
            v["duplicate"].append(f"job {job}: the stored result {json.dumps(res)} is not "
                                  f"the accepted run's (worker {acc[1]}, attempt {a})")
        for r in jr:
            for q in jr:
                if q[0] > r[0] and q[2] < r[2]:
                    v["stale"].append(f"job {job}: attempt {r[0]} on {r[1]} started at {r[2]}, after "
                                      f"attempt {q[0]} on {q[1]} had started at {q[2]}")
                    break
        for r in jr:
            if r is acc:
                continue
            if overlaps(acc, r):
                v["overlap"].append(f"job {job}: accepted attempt {a} on {acc[1]} "
                                    f"[{acc[2]}, {acc[3]}] overlaps attempt {r[0]} on {r[1]} [{r[2]}, {r[3]}]")
            elif r[0] < a:
                superseded += 1
    for job, rows in sorted(jobs.items()):
        if job in expected:
            continue
        if not allow_extra:
            v["unexpected"].append(f"job {job}: in the store but not expected")
        elif rows[0]["status"] != "succeeded":
            v["lost"].append(f"job {job} (not in the expected list): status {rows[0]['status']}, not succeeded")
        elif len(rows) > 1:
            v["duplicate"].append(f"job {job}: {len(rows)} rows in the store")
    for job in sorted(runs):
        if job not in jobs:
            v["unexpected"].append(f"job {job}: ran ({len(runs[job])} run(s)) but is not in the store")
    return v, hist, superseded


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", required=True)
    ap.add_argument("--jobs", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--expect")
    g.add_argument("--expect-count", type=int)
    ap.add_argument("--allow-extra", action="store_true",
                    help="jobs in the store beyond the expected ones are allowed (they must succeed too)")
    ap.add_argument("--workflow", help="GET /v1/workflows/{id} once it ended: rules early and workflow")
    ap.add_argument("--submitted", help="the POST /v1/workflows body (with --workflow)")
    ap.add_argument("--starts", help="handler starts, JOB ATTEMPT WORKER START_NS (default HISTORY.starts)")
    args = ap.parse_args()
    wf = submitted = None
    starts = {}
    try:
        runs, nruns = load_history(args.history)
        jobs = load_jobs(args.jobs)
        expect = load_expect(args)
        if args.workflow:
            wf = load_json(args.workflow)
            submitted = load_json(args.submitted) if args.submitted else None
            sp = args.starts or args.history + ".starts"
            if args.starts or os.path.exists(sp):
                starts = load_starts(sp)
    except (OSError, ValueError) as e:
        print(f"check_history: {e}", file=sys.stderr)
        return 2
    if not expect:
        print("check_history: no expected jobs: nothing would be proved", file=sys.stderr)
        return 2
    v, hist, superseded = check(runs, jobs, expect, args.allow_extra)
    if wf is not None:
        edges = check_workflow(wf, submitted, runs, starts, jobs, v)
    hist_s = ", ".join(f"{a}: {n}" for a, n in sorted(hist.items())) or "none"
    expected = set(expect)
    extra = sum(1 for j in jobs if j not in expected)
    print(f"check_history: jobs {len(expect)} expected, {len(jobs)} in the store ({extra} beyond the expected)")
    print(f"check_history: runs {nruns} recorded, {superseded} superseded (earlier attempts not accepted)")
    print(f"check_history: accepted attempts histogram {{{hist_s}}}")
    print(f"check_history: overlaps found {len(v['overlap'])}, lost {len(v['lost'])}, "
          f"duplicates {len(v['duplicate'])}, stale starts {len(v['stale'])}, unexpected {len(v['unexpected'])}")
    if wf is not None:
        print(f"check_history: workflow {wf.get('id')} {wf.get('status')}, {len(wf.get('steps') or [])} steps, "
              f"{edges} edges checked, {len(starts)} jobs with recorded starts; "
              f"early starts {len(v['early'])}, workflow problems {len(v['workflow'])}")
    bad = [m for k in ("lost", "duplicate", "overlap", "stale", "unexpected", "early", "workflow") for m in v[k]]
    for m in bad[:20]:
        print(f"  VIOLATION {m}")
    if len(bad) > 20:
        print(f"  … and {len(bad) - 20} more")
    print("check_history: " + ("FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
