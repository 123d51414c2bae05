#!/usr/bin/env python3
"""bench.py — how fast the Python client is (issue 31, "Fast enough"):

    bench.py enqueue URL [N]   enqueue_many of N jobs (default 10,000)
    bench.py process URL [N]   one Worker at its default settings, a no-op
                               handler, N jobs enqueued first (default 20,000)

Each prints one line, `python <what>: N jobs in S s: R jobs/s`. The jobs go
to a queue of their own (bench-py-PID). bench/run.sh here runs both beside
jobd's own `jobd worker --server` on one server and PostgreSQL database."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jobd  # noqa: E402


def enqueue(c: jobd.Client, queue: str, n: int) -> float:
    items = [{"type": "bench.noop", "queue": queue, "payload": {"i": i}} for i in range(n)]
    t0 = time.monotonic()
    ids = c.enqueue_many(items)
    dt = time.monotonic() - t0
    assert len(ids) == n
    return dt


def process(c: jobd.Client, queue: str, n: int) -> float:
    enqueue(c, queue, n)
    done = threading.Event()
    count = [0]
    lock = threading.Lock()
    w = jobd.Worker(c, queues=[queue])

    @w.handler("bench.noop")
    def noop(job: jobd.Job, ctx: jobd.Context) -> None:
        with lock:
            count[0] += 1
            if count[0] == n:
                done.set()
    t0 = time.monotonic()
    w.start()
    if not done.wait(600):
        raise SystemExit(f"only {count[0]} of {n} jobs ran in 600 s")
    while w.running:  # the last reports
        time.sleep(0.001)
    dt = time.monotonic() - t0
    w.stop()
    w.join(60)
    return dt


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] not in ("enqueue", "process"):
        print(__doc__, file=sys.stderr)
        return 2
    what, url = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else (10000 if what == "enqueue" else 20000)
    c = jobd.Client(url)
    queue = f"bench-py-{os.getpid()}"
    dt = enqueue(c, queue, n) if what == "enqueue" else process(c, queue, n)
    label = "enqueue_many" if what == "enqueue" else "worker (no-op, defaults)"
    print(f"python {label}: {n} jobs in {dt:.2f} s: {n / dt:.0f} jobs/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
