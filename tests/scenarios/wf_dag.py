#!/usr/bin/env python3
"""wf_dag.py SEED STEPS [NAME] — a random workflow for scenario_workflow_dag.sh.

Prints a POST /v1/workflows body (docs/API.md, Workflows): STEPS steps of
type "scen" (tests/scenarios/handler.sh), refs s0000, s0001, ..., each with
0 to 3 parents drawn among the steps before it (so the graph has no cycle,
and a step with two or three parents is a fan-in), a run of 0.1 to 0.9 s
(long enough that the scenario's faults land while the workflow runs)
and, for about one step in eight, a transient failure of its first attempt
or two (payload fail_attempts, max_attempts 25). The same SEED gives the
same workflow. A summary (edges, fan-ins, roots, longest chain) goes to
stderr.
"""
import json
import random
import sys


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    name = sys.argv[3] if len(sys.argv) == 4 else f"dag-{seed}"
    rng = random.Random(seed)
    steps, depth = [], []
    for i in range(n):
        k = min(i, rng.choice((0, 1, 1, 2, 2, 3)))  # a root now and then, mostly 1-2 parents
        parents = sorted(rng.sample(range(i), k))
        payload = {"sleep_ms": rng.randint(100, 900)}
        r = rng.random()
        if r < 0.10:
            payload["fail_attempts"] = 1
        elif r < 0.125:
            payload["fail_attempts"] = 2
        step = {"ref": f"s{i:04d}", "type": "scen", "payload": payload, "max_attempts": 25}
        if parents:
            step["depends_on"] = [f"s{p:04d}" for p in parents]
        steps.append(step)
        depth.append(1 + max((depth[p] for p in parents), default=0))
    json.dump({"name": name, "idempotency_key": name, "steps": steps}, sys.stdout)
    edges = sum(len(s.get("depends_on", [])) for s in steps)
    fan_in = sum(1 for s in steps if len(s.get("depends_on", [])) >= 2)
    roots = sum(1 for s in steps if not s.get("depends_on"))
    failing = sum(1 for s in steps if "fail_attempts" in s["payload"])
    print(f"{n} steps, {edges} edges, {fan_in} fan-ins (2-3 parents), {roots} roots, "
          f"longest chain {max(depth, default=0)}, {failing} with transient failures", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
