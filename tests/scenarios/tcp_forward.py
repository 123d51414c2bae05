#!/usr/bin/env python3
"""tcp_forward.py — a TCP forwarder that can be cut, for scenario_partition.

    tcp_forward.py LISTEN_PORT TARGET_HOST TARGET_PORT PIDFILE

Listens on 127.0.0.1:LISTEN_PORT and forwards each connection to
TARGET_HOST:TARGET_PORT. SIGUSR1 cuts the link, SIGUSR2 heals it, SIGHUP
cuts only the way back (target to client: requests arrive, their answers
are held), which makes a request succeed on the server while its client
hears nothing until the heal.

While cut it behaves like a network that drops every packet, as seen from
both ends: bytes already read are held, not delivered; nothing more is read
(the kernel's buffers fill and the senders stall, as TCP does while it
retransmits into a dead link); new connections are not forwarded (their
connect hangs in the listen backlog until the client's own timeout). On
heal, everything held flows on, like retransmissions after a link comes
back. It is the fallback when network namespaces are not available
(no root): less faithful (the worker's host still has a route), but the
same protocol-level fault.
"""
import os
import signal
import socket
import sys
import threading

up = threading.Event()    # client -> target flows
down = threading.Event()  # target -> client flows
up.set()
down.set()


def pipe(src, dst, link):
    try:
        while True:
            link.wait()
            data = src.recv(65536)
            if not data:
                break
            link.wait()  # read just before a cut: hold it until the heal
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, host, port):
    try:
        t = socket.create_connection((host, port), timeout=10)
        t.settimeout(None)
    except OSError:
        conn.close()
        return
    threading.Thread(target=pipe, args=(conn, t, up), daemon=True).start()
    threading.Thread(target=pipe, args=(t, conn, down), daemon=True).start()


def accept_loop(ls, host, port):
    while True:
        conn, _ = ls.accept()
        up.wait()
        serve(conn, host, port)


def main():
    if len(sys.argv) != 5:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    lport, host, port, pidfile = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(64)
    signal.signal(signal.SIGUSR1, lambda *_: (up.clear(), down.clear()))
    signal.signal(signal.SIGUSR2, lambda *_: (up.set(), down.set()))
    signal.signal(signal.SIGHUP, lambda *_: down.clear())
    threading.Thread(target=accept_loop, args=(ls, host, port), daemon=True).start()
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
