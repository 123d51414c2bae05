#!/usr/bin/env python3
"""ha_client.py — the continuous client of the failover scenarios.

  ha_client.py --servers URL,URL --expect FILE --events FILE --stop FILE
               [--batch N] [--interval-ms MS] [--sleep-ms MS]

One enqueue thread per server posts N "scen" jobs (POST /v1/jobs/batch)
every interval, and appends the id of every job the server acknowledged
(HTTP 201) to --expect, flushed at once: those are the jobs that must
exist in the end. A refused or failed request is counted, never retried
(its jobs were not acknowledged, so nothing is promised about them). One
watcher thread polls every server's /healthz every 100 ms and writes each
change of its answer to --events as "UNIX_NS healthz SERVER STATUS"; each
enqueue thread writes "UNIX_NS enqueue SERVER fail|ok" when its requests
start or stop succeeding. It stops when --stop exists and prints one line:
"acked=N failed_requests=N max_ack_gap_ms=N".
"""
import argparse
import json
import os
import threading
import time
import urllib.error
import urllib.request


def now_ns():
    return time.time_ns()


class Out:
    def __init__(self, expect, events):
        self.lock = threading.Lock()
        self.expect = open(expect, "a", encoding="utf-8")
        self.events = open(events, "a", encoding="utf-8")
        self.acked = 0
        self.failed = 0
        self.last_ack = None
        self.max_gap_ns = 0

    def ack(self, ids):
        with self.lock:
            for i in ids:
                self.expect.write(f"{i}\n")
            self.expect.flush()
            t = now_ns()
            if self.last_ack is not None:
                self.max_gap_ns = max(self.max_gap_ns, t - self.last_ack)
            self.last_ack = t
            self.acked += len(ids)

    def event(self, what):
        with self.lock:
            self.events.write(f"{now_ns()} {what}\n")
            self.events.flush()


def enqueue_loop(url, args, out, stop):
    body = json.dumps({"jobs": [{"type": "scen", "payload": {"sleep_ms": args.sleep_ms},
                                 "max_attempts": 25} for _ in range(args.batch)]}).encode()
    state = "ok"
    while not os.path.exists(stop):
        t0 = time.monotonic()
        ok = False
        try:
            req = urllib.request.Request(url + "/v1/jobs/batch", data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=15) as r:
                if r.status == 201:
                    out.ack([j["id"] for j in json.load(r)["jobs"]])
                    ok = True
        except (urllib.error.URLError, OSError, ValueError):
            pass
        if not ok:
            with out.lock:
                out.failed += 1
        if ok != (state == "ok"):
            state = "ok" if ok else "fail"
            out.event(f"enqueue {url} {state}")
        left = args.interval_ms / 1000 - (time.monotonic() - t0)
        if left > 0:
            time.sleep(left)


def health_loop(urls, out, stop):
    last = {}
    while not os.path.exists(stop):
        for u in urls:
            try:
                with urllib.request.urlopen(u + "/healthz", timeout=2) as r:
                    code = r.status
            except urllib.error.HTTPError as e:
                code = e.code
            except (urllib.error.URLError, OSError):
                code = 0
            if last.get(u) != code:
                last[u] = code
                out.event(f"healthz {u} {code}")
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--stop", required=True)
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--interval-ms", type=int, default=100)
    ap.add_argument("--sleep-ms", type=int, default=20)
    args = ap.parse_args()
    urls = args.servers.split(",")
    out = Out(args.expect, args.events)
    ts = [threading.Thread(target=enqueue_loop, args=(u, args, out, args.stop)) for u in urls]
    ts.append(threading.Thread(target=health_loop, args=(urls, out, args.stop)))
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"acked={out.acked} failed_requests={out.failed} "
          f"max_ack_gap_ms={out.max_gap_ns // 1000000}", flush=True)


if __name__ == "__main__":
    main()
