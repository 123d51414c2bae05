#!/usr/bin/env python3
"""bench/clients/enqueue1.py URL CONNECTIONS SECONDS — one job per POST /v1/jobs
from an ordinary Python client: CONNECTIONS threads, each with its own
http.client.HTTPConnection (keep-alive), each sending the next request when
its 201 is in, for SECONDS. What a user's Python service can expect (the GIL
included). Prints the line bench/wrk.sh reads:
WRK requests= duration_us= errors= non201= lat_mean_us= lat_p50_us= lat_p99_us=
Stdlib only."""

import http.client
import sys
import threading
import time
import urllib.parse

BODY = b'{"type":"noop","payload":{"n":1}}'
HEADERS = {"Content-Type": "application/json"}


def client(host, port, path, until, out):
    lat, bad, errors = [], 0, 0
    conn = http.client.HTTPConnection(host, port)
    while time.monotonic() < until:
        t0 = time.monotonic()
        try:
            conn.request("POST", path, BODY, HEADERS)
            r = conn.getresponse()
            r.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection(host, port)
            continue
        lat.append(time.monotonic() - t0)
        if r.status != 201:
            bad += 1
    conn.close()
    out.append((lat, bad, errors))


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: enqueue1.py URL CONNECTIONS SECONDS")
    u = urllib.parse.urlsplit(sys.argv[1])
    conns, secs = int(sys.argv[2]), float(sys.argv[3])
    out = []
    t0 = time.monotonic()
    ts = [threading.Thread(target=client, args=(u.hostname, u.port, u.path, t0 + secs, out))
          for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dur = time.monotonic() - t0
    lat = sorted(x for o in out for x in o[0])
    pct = lambda p: round(lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1e6) if lat else 0
    mean = sum(lat) / len(lat) * 1e6 if lat else 0.0
    print(f"WRK requests={len(lat)} duration_us={round(dur * 1e6)} errors={sum(o[2] for o in out)} "
          f"non201={sum(o[1] for o in out)} lat_mean_us={mean:.1f} lat_p50_us={pct(50)} lat_p99_us={pct(99)}")


if __name__ == "__main__":
    main()
