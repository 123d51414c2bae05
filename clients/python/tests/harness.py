"""Test fixtures of the client suite: a real `jobd server` on the store
under test (SQLite file or a fresh PostgreSQL database), waiting on
conditions with deadlines, a stub HTTP server that answers what a test
scripts, and a TCP proxy that drops a connection on cue."""
import http.server
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)  # clients/python
SRC = os.environ.get("JOBD_SRC") or os.path.normpath(os.path.join(PKG, "..", ".."))
sys.path.insert(0, PKG)

import jobd  # noqa: E402

# Generous deadlines: the machine may be loaded (docs/STYLE.md, Tests).
DEADLINE = float(os.environ.get("JOBD_TEST_DEADLINE", "30"))


def jobd_bin() -> str:
    b = os.environ.get("JOBD_BIN")
    if b:
        return b
    for d in ("build-asan", "build"):
        p = os.path.join(SRC, d, "jobd")
        if os.access(p, os.X_OK):
            return p
    raise RuntimeError("JOBD_BIN is not set and no build-asan/jobd or build/jobd: build jobd")


def wait_until(cond: Callable[[], Any], what: str, timeout: float = DEADLINE,
               every: float = 0.02) -> Any:
    """Polls cond() until it returns something true, returns that; fails
    the test with `what` when the deadline passes."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)
        every = min(0.2, every * 1.5)


def stopper(w: Any) -> Callable[[], None]:
    """A cleanup that stops a Worker or AsyncWorker and waits for it."""
    def stop() -> None:
        w.stop()
        if hasattr(w, "join"):
            w.join(30)
    return stop


_seq = [0]


def unique(prefix: str) -> str:
    """A name no other test uses (queues and types keep tests apart)."""
    _seq[0] += 1
    return f"{prefix}-{os.getpid()}-{_seq[0]}".replace("_", "-").lower()


class Server:
    """A `jobd server` child process on `db`, listening on a free port."""

    def __init__(self, db: str, extra: Optional[List[str]] = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="jobd-py-server.")
        self.log_path = os.path.join(self.dir, "server.log")
        self.log = open(self.log_path, "w")
        args = [jobd_bin(), "server", "--db", db, "--listen", "127.0.0.1:0",
                "--reap-interval", "200ms", "--backoff-base", "50ms", "--backoff-cap", "200ms",
                "--shutdown-grace", "2s", "--access-log", "off"] + (extra or [])
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        self.url = wait_until(self._url, "the server to say where it listens")

    def _url(self) -> Optional[str]:
        if self.proc.poll() is not None:
            raise RuntimeError(f"jobd server exited ({self.proc.returncode}):\n{self.tail()}")
        with open(self.log_path) as f:
            m = re.search(r"listening on (http://[0-9.]+:[0-9]+)", f.read())
        return m.group(1) if m else None

    def tail(self, n: int = 30) -> str:
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Store:
    """The store under test: JOBD_CLIENT_STORE=sqlite (a temp file) or pg
    (a database of its own in $JOBD_TEST_PG_URL, dropped at the end)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.dir = tempfile.mkdtemp(prefix="jobd-py-store.")
        self.pgdb: Optional[str] = None
        if kind == "sqlite":
            self.url = "sqlite:" + os.path.join(self.dir, "jobd.db")
        elif kind == "pg":
            base = os.environ["JOBD_TEST_PG_URL"]
            self.pgdb = f"jobd_clients_py_{os.getpid()}"
            self._psql(base, f"DROP DATABASE IF EXISTS {self.pgdb} WITH (FORCE)")
            self._psql(base, f"CREATE DATABASE {self.pgdb}")
            self.url = re.sub(r"/[^/?]*(\?|$)", "/" + self.pgdb + r"\1", base.split("://", 1)[1], 1)
            self.url = base.split("://", 1)[0] + "://" + self.url
        else:
            raise ValueError(f"unknown store {kind!r}")

    @staticmethod
    def _psql(url: str, sql: str) -> None:
        subprocess.run(["psql", "-qX", url, "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                       stdout=subprocess.DEVNULL)

    def close(self) -> None:
        if self.pgdb is not None:
            try:
                self._psql(os.environ["JOBD_TEST_PG_URL"],
                           f"DROP DATABASE IF EXISTS {self.pgdb} WITH (FORCE)")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


_state: Dict[str, Any] = {}


def store() -> Store:
    if "store" not in _state:
        _state["store"] = Store(os.environ.get("JOBD_CLIENT_STORE", "sqlite"))
    s: Store = _state["store"]
    return s


def server() -> Server:
    """The one server of this run (started on first use)."""
    if "server" not in _state:
        _state["server"] = Server(store().url)
    s: Server = _state["server"]
    return s


def client(**kw: Any) -> jobd.Client:
    return jobd.Client(server().url, token="", **kw)


def shutdown() -> None:
    for k in ("server", "store"):
        v = _state.pop(k, None)
        if v is not None:
            v.stop() if k == "server" else v.close()


class Stub:
    """A stub HTTP server: `script` is a list of answers handed out in
    turn, each (status, body) or "drop" (close the connection without an
    answer); `requests` records (method, path) of each request."""

    def __init__(self, script: Optional[List[Any]] = None,
                 answer: Optional[Callable[[str, str], Tuple[int, Any]]] = None) -> None:
        self.script = list(script or [])
        self.answer = answer
        self.requests: List[Tuple[str, str]] = []
        stub = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                stub.requests.append((self.command, self.path))
                if stub.answer is not None:
                    a: Any = stub.answer(self.command, self.path)
                else:
                    a = stub.script.pop(0) if stub.script else (500, {"error": {
                        "code": "internal", "message": "stub: no answer left", "field": None}})
                if a == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, body = a
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class DropProxy:
    """A TCP proxy to `target` that, for the first request whose first line
    matches `pattern`, forwards it to the server, then drops the client's
    connection instead of passing the answer on: the request was carried
    out, the client saw a network error. `hits` counts matching requests."""

    def __init__(self, target: str, pattern: str) -> None:
        host, port = target.split("://", 1)[1].split(":")
        self.target = (host, int(port))
        self.pattern = re.compile(pattern.encode())
        self.hits = 0
        self.dropped = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(c,), daemon=True).start()

    def _pipe(self, c: socket.socket) -> None:
        s = socket.create_connection(self.target)
        drop_next = False
        try:
            while True:
                r, _, _ = select.select([c, s], [], [], 1.0)
                if self._closed:
                    return
                if c in r:
                    data = c.recv(65536)
                    if not data:
                        return
                    if self.pattern.search(data.split(b"\r\n", 1)[0]):
                        self.hits += 1
                        if self.dropped == 0:
                            drop_next = True
                    s.sendall(data)
                if s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    if drop_next:
                        self.dropped += 1
                        return
                    c.sendall(data)
        except OSError:
            return
        finally:
            c.close()
            s.close()

    def close(self) -> None:
        self._closed = True
        self.sock.close()
