#!/usr/bin/env python3
"""pg_commit_cut.py — a PostgreSQL proxy that breaks connections at COMMIT,
for scenario_commit_outcome.

    pg_commit_cut.py LISTEN_PORT TARGET_HOST TARGET_PORT PIDFILE STATSFILE

Forwards each connection on 127.0.0.1:LISTEN_PORT to TARGET_HOST:TARGET_PORT
and reads the client's side of the protocol (v3, no TLS: the client must use
sslmode=disable). At each point where a transaction that inserted into
jobd.jobs would commit — a simple-query COMMIT (or END) after such an
insert, or the Sync that ends an implicit transaction (an extended-protocol
batch without BEGIN) that ran one — it does, by a fixed pattern over all
connections (so every run injects as many faults of each kind):

  after   (2 in 8) forward the commit to the server, then cut: the client's
          socket is closed before any answer reaches it, and the server's
          side gets the commit followed by end-of-file, so the server
          commits (it reads what came before the EOF) while the client
          hears nothing: the "503 that was written" of issue 27;
  before  (1 in 8) cut without forwarding it: the server sees end-of-file in
          the open transaction and rolls it back (nothing was written);
  pass           forward as usual.

Every cut appends one line ("after" or "before") to STATSFILE. While the
file STATSFILE.blackout exists, each "after" cut is followed by 3 s in
which new connections are closed at once (PostgreSQL unreachable), so the
client cannot learn how its commit ended.
"""
import os
import socket
import struct
import sys
import threading
import time

INSERT_MARK = b"INSERT INTO jobd.jobs"
PATTERN = ["pass", "after", "pass", "before", "pass", "after", "pass", "pass"]
lock = threading.Lock()
points = [0]  # commit points seen, over all connections
refuse_until = [0.0]  # monotonic time until which new connections are closed


def draw():
    with lock:
        points[0] += 1
        return PATTERN[points[0] % len(PATTERN)]


def record(stats, what):
    with lock, open(stats, "a") as f:
        f.write(what + "\n")


def drain_and_close(srv):
    """Half-close towards the server (it reads everything sent, then EOF) and
    discard its answers until it closes, so no reset races the commit."""
    try:
        srv.shutdown(socket.SHUT_WR)
        srv.settimeout(10)
        while srv.recv(65536):
            pass
    except OSError:
        pass
    srv.close()


class Conn:
    def __init__(self, cli, srv, stats):
        self.cli, self.srv, self.stats = cli, srv, stats
        self.buf = b""          # client bytes read, not yet forwarded or parsed
        self.started = False    # the startup packet went through
        self.stmts = {}         # prepared statement name -> query text
        self.portals = {}       # portal name -> query text
        self.dirty = False      # an insert into jobd.jobs since the last commit point
        self.explicit = False   # BEGIN seen: a Sync does not commit

    def commit_point(self, kind, body):
        """Whether the message kind/body would commit a transaction with an insert."""
        if kind == b"Q":
            q = body.rstrip(b"\0").strip().rstrip(b";").strip().upper()
            if q.startswith(b"BEGIN"):
                self.explicit = True
            if q in (b"COMMIT", b"END"):
                hit, self.dirty, self.explicit = self.dirty, False, False
                return hit
            if q == b"ROLLBACK":
                self.dirty = self.explicit = False
            return False
        if kind == b"P":
            name, rest = body.split(b"\0", 1)
            self.stmts[name] = rest.split(b"\0", 1)[0]
        elif kind == b"B":
            portal, rest = body.split(b"\0", 1)
            self.portals[portal] = self.stmts.get(rest.split(b"\0", 1)[0], b"")
        elif kind == b"E":
            text = self.portals.get(body.split(b"\0", 1)[0], b"")
            if text.strip().upper().startswith(b"BEGIN"):
                self.explicit = True
            if INSERT_MARK in text:
                self.dirty = True
        elif kind == b"S" and not self.explicit:
            hit, self.dirty = self.dirty, False
            return hit
        return False

    def client_data(self, data):
        """Parses and forwards client bytes; False once the connection is cut."""
        self.buf += data
        out = b""
        while True:
            if not self.started:
                if len(self.buf) < 8:
                    break
                n = struct.unpack("!I", self.buf[:4])[0]
                if len(self.buf) < n:
                    break
                code = struct.unpack("!I", self.buf[4:8])[0]
                self.started = code == 196608  # StartupMessage (not SSL/GSS/cancel)
                out += self.buf[:n]
                self.buf = self.buf[n:]
                continue
            if len(self.buf) < 5:
                break
            n = struct.unpack("!I", self.buf[1:5])[0]
            if len(self.buf) < 1 + n:
                break
            kind, body, msg = self.buf[:1], self.buf[5:1 + n], self.buf[:1 + n]
            self.buf = self.buf[1 + n:]
            what = draw() if self.commit_point(kind, body) else "pass"
            if what != "pass":
                if what == "after" and os.path.exists(self.stats + ".blackout"):
                    with lock:
                        refuse_until[0] = time.monotonic() + 3
                self.srv.sendall(out + (msg if what == "after" else b""))
                self.cli.close()
                record(self.stats, what)
                drain_and_close(self.srv)
                return False
            out += msg
        if out:
            self.srv.sendall(out)
        return True

    def run(self):
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.cli, selectors.EVENT_READ, "c")
        sel.register(self.srv, selectors.EVENT_READ, "s")
        try:
            while True:
                for key, _ in sel.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        raise EOFError
                    if key.data == "s":
                        self.cli.sendall(data)
                    elif not self.client_data(data):
                        return
        except (OSError, EOFError):
            pass
        for s in (self.cli, self.srv):
            try:
                s.close()
            except OSError:
                pass


def main():
    if len(sys.argv) != 6:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    lport, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    pidfile, stats = sys.argv[4], sys.argv[5]
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(64)
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    while True:
        cli, _ = ls.accept()
        with lock:
            refused = time.monotonic() < refuse_until[0]
        if refused:
            cli.close()
            continue
        try:
            srv = socket.create_connection((host, port), timeout=10)
            srv.settimeout(None)
        except OSError:
            cli.close()
            continue
        c = Conn(cli, srv, stats)
        threading.Thread(target=c.run, daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
