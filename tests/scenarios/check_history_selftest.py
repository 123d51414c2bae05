#!/usr/bin/env python3
"""check_history_selftest.py — proves check_history.py can fail.

Feeds the checker crafted histories and store dumps: one good case (a job
superseded after a killed first attempt) that must pass, and one bad case
per violation kind (overlap, lost, duplicate, ...) that must fail naming
that kind; then the same for a workflow (--workflow: rules early and
workflow). A checker that always says "ok" fails this test.
"""
import os
import json
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_history.py")

S = 1_000_000_000  # one second in ns


def row(id_, status="succeeded", attempt=1, worker="w1", result=True):
    r = {"id": id_, "status": status, "attempt": attempt, "worker_id": worker}
    if result:
        r["result"] = {"worker": worker, "attempt": attempt}
    return r


def run_case(tmp, name, history, jobs, expect, extra_args=()):
    h = os.path.join(tmp, name + ".history")
    j = os.path.join(tmp, name + ".jobs")
    e = os.path.join(tmp, name + ".expect")
    with open(h, "w") as f:
        f.writelines(f"{a} {b} {c} {d} {g}\n" for a, b, c, d, g in history)
    with open(j, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in jobs)
    with open(e, "w") as f:
        f.writelines(f"{i}\n" for i in expect)
    p = subprocess.run([sys.executable, CHECKER, "--history", h, "--jobs", j, "--expect", e, *extra_args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


GOOD_HISTORY = [
    (1, 1, "w1", 0 * S, 1 * S),
    (2, 1, "w1", 0 * S, 1 * S),      # killed run of job 2 ended (superseded) ...
    (2, 2, "w2", 3 * S, 4 * S),      # ... before attempt 2 started
]
GOOD_JOBS = [row(1), row(2, attempt=2, worker="w2")]

CASES = [
    # name, history, jobs, expect, extra args, expected exit, text that must appear
    ("good", GOOD_HISTORY, GOOD_JOBS, [1, 2], (), 0, "overlaps found 0, lost 0, duplicates 0, stale starts 0"),
    ("overlap", [(1, 1, "w1", 0, 3 * S), (1, 2, "w2", 2 * S, 4 * S)],
     [row(1, attempt=2, worker="w2")], [1], (), 1, "overlaps found 1"),
    ("stale_start", [(1, 2, "w2", 2 * S, 3 * S), (1, 1, "w1", 4 * S, 5 * S)],
     [row(1, attempt=2, worker="w2")], [1], (), 1, "stale starts 1"),
    ("lost_missing_row", [(1, 1, "w1", 0, S)], [row(1)], [1, 2], (), 1, "lost 1"),
    ("lost_not_succeeded", [(1, 1, "w1", 0, S)], [row(1, status="pending", result=False)], [1], (), 1, "lost 1"),
    ("lost_no_run", [], [row(1)], [1], (), 1, "lost 1"),
    ("duplicate_rows", [(1, 1, "w1", 0, S)], [row(1), row(1)], [1], (), 1, "duplicates 1"),
    ("duplicate_token", [(1, 1, "w1", 0, S), (1, 1, "w2", 2 * S, 3 * S)], [row(1)], [1], (), 1,
     "duplicates 1"),
    ("ran_after_success", [(1, 1, "w1", 0, S), (1, 2, "w2", 2 * S, 3 * S)], [row(1)], [1], (), 1,
     "duplicates 1"),
    ("wrong_worker", [(1, 1, "w1", 0, S)], [row(1, worker="w2", result=False)], [1], (), 1, "duplicates 1"),
    ("wrong_result", [(1, 2, "w2", 2 * S, 3 * S), (1, 1, "w1", 0, S)],
     [{"id": 1, "status": "succeeded", "attempt": 2, "worker_id": "w2",
       "result": {"worker": "w1", "attempt": 1}}], [1], (), 1, "duplicates 1"),
    ("unexpected_job", [(1, 1, "w1", 0, S)], [row(1), row(2)], [1], (), 1, "unexpected 1"),
    ("extra_allowed", [(1, 1, "w1", 0, S), (2, 1, "w1", 0, S)], [row(1), row(2)], [1], ("--allow-extra",), 0,
     "1 beyond the expected"),
    ("extra_not_finished", [(1, 1, "w1", 0, S)], [row(1), row(2, status="running", result=False)], [1],
     ("--allow-extra",), 1, "lost 1"),
    ("phantom_run", [(1, 1, "w1", 0, S), (9, 1, "w1", 0, S)], [row(1)], [1], (), 1, "unexpected 1"),
]


# A workflow of three steps: a and b, then c after both (fan-in). Jobs 1, 2, 3.
def wf_answer(status="succeeded", c_status="succeeded", c_deps=("a", "b")):
    steps = [{"ref": "a", "job_id": 1, "type": "scen", "status": "succeeded", "depends_on": []},
             {"ref": "b", "job_id": 2, "type": "scen", "status": "succeeded", "depends_on": []},
             {"ref": "c", "job_id": 3, "type": "scen", "status": c_status, "depends_on": list(c_deps)}]
    counts = {"waiting": 0, "pending": 0, "running": 0, "succeeded": 0, "dead": 0, "cancelled": 0}
    for st in steps:
        counts[st["status"]] += 1
    return {"id": 7, "name": "selftest", "status": status, "counts": counts, "steps": steps}


WF_SUBMITTED = {"name": "selftest", "steps": [{"ref": "a", "type": "scen"}, {"ref": "b", "type": "scen"},
                                              {"ref": "c", "type": "scen", "depends_on": ["a", "b"]}]}
# b fails at attempt 1 (its run ends at 2 s) and succeeds at attempt 2 (ends at 4 s); c starts at 5 s.
WF_HISTORY = [(1, 1, "w1", 0, 1 * S), (2, 1, "w2", 0, 2 * S), (2, 2, "w1", 3 * S, 4 * S),
              (3, 1, "w2", 5 * S, 6 * S)]
WF_JOBS = [row(1), row(2, attempt=2), row(3, worker="w2")]
WF_STARTS = [(1, 1, "w1", 0), (2, 1, "w2", 0), (2, 2, "w1", 3 * S), (3, 1, "w2", 5 * S)]

WF_CASES = [
    # name, history, starts, jobs, workflow answer, exit, text that must appear
    ("workflow_good", WF_HISTORY, WF_STARTS, WF_JOBS, wf_answer(), 0,
     "early starts 0, workflow problems 0"),
    # c ran (and was accepted) at 3.5 s: after b's failed run ended, before its successful one did.
    ("early_after_a_failed_run", WF_HISTORY[:3] + [(3, 1, "w2", 35 * S // 10, 6 * S)],
     WF_STARTS[:3] + [(3, 1, "w2", 35 * S // 10)], WF_JOBS, wf_answer(), 1, "early starts 1"),
    # c's first attempt was killed before its end (only its start is recorded), at 1 s.
    ("early_killed_start", WF_HISTORY[:3] + [(3, 2, "w2", 5 * S, 6 * S)],
     WF_STARTS[:3] + [(3, 1, "w1", 1 * S), (3, 2, "w2", 5 * S)], WF_JOBS[:2] + [row(3, attempt=2, worker="w2")],
     wf_answer(), 1, "early starts 1"),
    ("workflow_not_finished", WF_HISTORY[:3], WF_STARTS[:3], WF_JOBS[:2] + [row(3, "waiting", 0, None, False)],
     wf_answer("running", "waiting"), 1, "workflow problems 4"),
    ("workflow_lost_an_edge", WF_HISTORY, WF_STARTS, WF_JOBS, wf_answer(c_deps=("a",)), 1,
     "workflow problems 1"),
]


def run_wf_case(tmp, name, history, starts, jobs, answer):
    s = os.path.join(tmp, name + ".starts")
    w = os.path.join(tmp, name + ".workflow")
    sub = os.path.join(tmp, name + ".submitted")
    with open(s, "w") as f:
        f.writelines(f"{a} {b} {c} {d}\n" for a, b, c, d in starts)
    with open(w, "w") as f:
        json.dump(answer, f)
    with open(sub, "w") as f:
        json.dump(WF_SUBMITTED, f)
    return run_case(tmp, name, history, jobs, [1, 2, 3],
                    ("--workflow", w, "--submitted", sub, "--starts", s))


def main():
    failed = 0
    with tempfile.TemporaryDirectory(prefix="jobd-checksel.") as tmp:
        results = [(name, want_rc, want_text, run_case(tmp, name, history, jobs, expect, extra))
                   for name, history, jobs, expect, extra, want_rc, want_text in CASES]
        results += [(name, want_rc, want_text, run_wf_case(tmp, name, history, starts, jobs, answer))
                    for name, history, starts, jobs, answer, want_rc, want_text in WF_CASES]
        for name, want_rc, want_text, (rc, out) in results:
            ok = rc == want_rc and want_text in out
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc} (want {want_rc})")
            if not ok:
                failed += 1
                print("  want text: " + want_text)
                print("  " + out.replace("\n", "\n  "))
        # Bad input is exit 2 with a reason, not a silent pass.
        bad = os.path.join(tmp, "bad.history")
        with open(bad, "w") as f:
            f.write("1 one w1 0 5\n")
        empty = os.path.join(tmp, "empty.jobs")
        open(empty, "w").close()
        p = subprocess.run([sys.executable, CHECKER, "--history", bad, "--jobs", empty, "--expect-count", "1"],
                           capture_output=True, text=True)
        ok = p.returncode == 2 and "must be integers" in p.stderr
        print(f"{'ok  ' if ok else 'FAIL'} bad_input: exit {p.returncode} (want 2)")
        failed += 0 if ok else 1
    print("check_history_selftest: " + ("FAIL" if failed else f"ok, {len(CASES) + len(WF_CASES) + 1} cases"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
