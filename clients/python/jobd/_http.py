"""HTTP transport: one keep-alive connection per thread (http.client is not
thread-safe), JSON bodies, the typed error of each error answer, and the
retries of docs/API.md, Errors: a request that met a network error, a 503,
a 429 or a 504 is sent again with jittered backoff when it is safe to repeat (the caller
says so: GETs, an enqueue with an idempotency key, fenced reports)."""
import http.client
import json
import random
import select
import socket
import threading
import time
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional, Tuple

from . import errors
from ._routes import Route

VERSION = "0.1.0"
USER_AGENT = f"jobd-python/{VERSION}"

# A connection idle for longer than this is not reused: the server closes
# idle connections after 60 s (docs/API.md, Conventions).
_IDLE_REUSE_S = 50.0
# Answers a request safe to repeat is sent again after (docs/API.md,
# Errors): 503 (nothing was written), 429 too_many_bulk, 504 commit_unknown.
_RETRIED = frozenset({429, 503, 504})
# The longest wait a Retry-After may impose on one retry.
_RETRY_AFTER_CAP_S = 5.0


class Answer:
    """A successful answer: its status, headers (lower-case names) and
    body (parsed JSON, text for text/plain, None when empty)."""

    def __init__(self, status: int, headers: Dict[str, str], body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Conn:
    """One HTTP/1.1 connection, used by one thread at a time. abort() may be
    called from any thread to end a request in flight, such as a
    long-polling claim when the worker stops; from then on every send on
    this connection fails at once (a stopped worker claims nothing)."""

    def __init__(self, scheme: str, host: str, port: int) -> None:
        self._scheme, self._host, self._port = scheme, host, port
        self._http: Optional[http.client.HTTPConnection] = None
        self._last_used = 0.0
        self._aborted = False

    def _fresh(self, timeout: float) -> http.client.HTTPConnection:
        if self._http is not None:
            stale = time.monotonic() - self._last_used > _IDLE_REUSE_S
            if stale or self._dropped():
                self.close()
        if self._http is None:
            cls = (http.client.HTTPSConnection if self._scheme == "https"
                   else http.client.HTTPConnection)
            self._http = cls(self._host, self._port, timeout=timeout)
            self._http.connect()
            sock = self._http.sock
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._http

    def _dropped(self) -> bool:
        """True when the server closed the idle connection: with no request
        outstanding, a readable socket can only mean EOF (or garbage)."""
        sock = self._http.sock if self._http is not None else None
        if sock is None:
            return True
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def send(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str],
             timeout: float) -> Tuple[int, Dict[str, str], bytes]:
        """Sends one request, returns (status, headers, body bytes); raises
        errors.NetworkError when the exchange failed (the connection is then
        closed)."""
        try:
            if self._aborted:
                raise ConnectionAbortedError("aborted")
            h = self._fresh(timeout)
            if h.sock is not None:
                h.sock.settimeout(timeout)
            if self._aborted:  # abort() may have come before the socket existed
                raise ConnectionAbortedError("aborted")
            h.request(method, path, body=body, headers=headers)
            resp = h.getresponse()
            data = resp.read()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            if resp.will_close:
                self.close()
            self._last_used = time.monotonic()
            return resp.status, hdrs, data
        except (OSError, http.client.HTTPException) as e:
            self.close()
            what = "aborted" if self._aborted else f"{type(e).__name__}: {e}"
            raise errors.NetworkError(
                f"{method} {path} to {self._host}:{self._port}: {what}") from None

    def abort(self) -> None:
        """Ends the request in flight, if any, and every later one (their
        send raises NetworkError)."""
        self._aborted = True
        h = self._http
        sock = h.sock if h is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        h, self._http = self._http, None
        if h is not None:
            try:
                h.close()
            except OSError:
                pass


class Transport:
    """Requests to one server with one token; safe to share between
    threads (each thread gets its own connection)."""

    def __init__(self, server: str, token: Optional[str], timeout: float, retries: int,
                 backoff: float) -> None:
        u = urllib.parse.urlsplit(server)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"server: not an http:// or https:// URL: {server!r}")
        self.server = server
        self._scheme = u.scheme
        self._host = u.hostname
        self._port = u.port or (443 if u.scheme == "https" else 80)
        self._prefix = u.path.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._local = threading.local()
        self._all: List[Conn] = []
        self._lock = threading.Lock()

    def new_conn(self) -> Conn:
        """A connection of its own, for a caller that may want to abort() it."""
        c = Conn(self._scheme, self._host, self._port)
        with self._lock:
            self._all.append(c)
        return c

    def _conn(self) -> Conn:
        c: Optional[Conn] = getattr(self._local, "conn", None)
        if c is None:
            c = self.new_conn()
            self._local.conn = c
        return c

    def close(self) -> None:
        """Closes every connection this transport opened."""
        with self._lock:
            conns, self._all = self._all, []
        for c in conns:
            c.close()
        self._local = threading.local()

    def path(self, route: Route, params: Optional[Mapping[str, Any]],
             query: Optional[Mapping[str, Any]]) -> str:
        p = route[1]
        for k, v in (params or {}).items():
            p = p.replace("{" + k + "}", urllib.parse.quote(str(v), safe=""))
        if "{" in p:
            raise ValueError(f"{route[0]} {route[1]}: a path parameter is missing")
        q = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        return self._prefix + p + ("?" + urllib.parse.urlencode(q) if q else "")

    def request(self, route: Route, *, params: Optional[Mapping[str, Any]] = None,
                query: Optional[Mapping[str, Any]] = None, body: Any = None,
                has_body: bool = False, headers: Optional[Mapping[str, str]] = None,
                safe: Optional[bool] = None, timeout: Optional[float] = None,
                retries: Optional[int] = None, conn: Optional[Conn] = None) -> Answer:
        """Sends `route` and returns its answer, or raises the typed error
        of an error answer (errors.JobdError). `body` is sent as JSON when
        it is not None or has_body is true. `safe` (default: GET) allows the
        retries of a network error or a 503."""
        method = route[0]
        path = self.path(route, params, query)
        data: Optional[bytes] = None
        hdrs = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if body is not None or has_body:
            data = json.dumps(body, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False).encode("utf-8")
            hdrs["Content-Type"] = "application/json"
        elif method in ("POST", "PUT"):
            data = b""
        if self._token:
            hdrs["Authorization"] = "Bearer " + self._token
        hdrs.update(headers or {})
        is_safe = method == "GET" if safe is None else safe
        tries = 1 + (self.retries if retries is None else retries) if is_safe else 1
        c = conn or self._conn()
        for i in range(tries):
            last = i == tries - 1
            try:
                status, rh, raw = c.send(method, path, data, hdrs, timeout or self.timeout)
            except errors.NetworkError:
                if last:
                    raise
                time.sleep(self._delay(i, None))
                continue
            parsed = _parse(rh, raw)
            if status in _RETRIED and not last:
                time.sleep(self._delay(i, rh.get("retry-after")))
                continue
            if status >= 400:
                raise errors.from_answer(status, parsed)
            return Answer(status, rh, parsed)
        raise AssertionError("unreachable")

    def _delay(self, i: int, retry_after: Optional[str]) -> float:
        """Full jitter: random(0, min(2 s, backoff * 2^i)), at least the
        answer's Retry-After seconds (at most 5 s)."""
        d = random.uniform(0, min(2.0, self.backoff * (2 ** i)))
        if retry_after is not None:
            try:
                d = max(d, min(_RETRY_AFTER_CAP_S, float(retry_after)))
            except ValueError:
                pass
        return d


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _parse(headers: Dict[str, str], raw: bytes) -> Any:
    if not raw:
        return None
    if headers.get("content-type", "").startswith("application/json"):
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return raw.decode("utf-8", "replace")
    return raw.decode("utf-8", "replace")
