#!/usr/bin/env python3
"""bench.py — the Python client's roles in bench/clients.sh (`make bench`;
docs/BENCHMARKS.md, "Clients"):

    bench.py enqueue URL N QUEUE   enqueue_many of N no-op jobs into QUEUE;
                                   prints one line, `N jobs in S s` (after
                                   one request: not the first connection's)
    bench.py work URL QUEUE        one Worker at its default settings with a
                                   no-op handler for type `noop` on QUEUE,
                                   until SIGTERM (then it drains)

bench/clients.sh times every client's worker the same way from outside:
from the worker's start until its queue has nothing pending or running."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jobd  # noqa: E402


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[1] not in ("enqueue", "work"):
        print(__doc__, file=sys.stderr)
        return 2
    c = jobd.Client(sys.argv[2])
    if sys.argv[1] == "enqueue":
        n, queue = int(sys.argv[3]), sys.argv[4]
        items = [{"type": "noop", "queue": queue, "payload": {"i": i}} for i in range(n)]
        c.whoami()  # timed as a program that already talks to the server sees it
        t0 = time.monotonic()
        ids = c.enqueue_many(items)
        dt = time.monotonic() - t0
        assert len(ids) == n
        print(f"{n} jobs in {dt:.3f} s")
        return 0
    w = jobd.Worker(c, queues=[sys.argv[3]])
    w.register("noop", lambda job, ctx: None)
    w.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
