"""A worker process for the tests that signal or kill one:
worker_child.py URL QUEUE TYPE DIR CONCURRENCY. Its handler marks DIR/started.ID,
waits until DIR/gate exists (or the run is stopped), marks DIR/done.ID and
returns {"pid": PID}. Exits with run()'s outcome: 0 after a drain."""
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jobd  # noqa: E402


def main() -> None:
    url, queue, type_, d, conc = sys.argv[1:6]
    logging.basicConfig(level=logging.INFO, format="child: %(levelname)s %(message)s")
    w = jobd.Worker(jobd.Client(url, token=""), queues=[queue], concurrency=int(conc),
                    lease=1.5, shutdown_grace=20)

    @w.handler(type_)
    def block(job: jobd.Job, ctx: jobd.Context) -> object:
        open(os.path.join(d, f"started.{job.id}"), "w").close()
        while not os.path.exists(os.path.join(d, "gate")):
            if ctx.wait(0.02):
                break
        open(os.path.join(d, f"done.{job.id}"), "w").close()
        return {"pid": os.getpid()}

    open(os.path.join(d, "ready"), "w").close()
    w.run()


if __name__ == "__main__":
    main()
