"""Team-wide plan cache on an existing Bazel HTTP cache (nginx WebDAV, bazel-remote, ...).

    BUILDTOOL_REMOTE_CACHE=http://host[:port]/prefix   on: the local DiskStore asks it on a local miss
    BUILDTOOL_REMOTE_CACHE_WRITE=1                     also publish computed entries (CI); default read-only
    BUILDTOOL_REMOTE_CACHE_TIMEOUT_S=2                 one request (connect, headers, whole body) at most
    BUILDTOOL_REMOTE_CACHE_BACKOFF_S=60                after a failure, skip the server this long, then try again

Layout (the Bazel HTTP cache's, so the server needs no change):
  {prefix}/cas/<sha256(blob)>  blob = msgpack [kind, entry_digest, value] (the local entry's payload)
  {prefix}/ac/<entry_digest>   a REAPI ActionResult in protojson naming that blob:
      {"outputFiles": [{"path": "buildtool/<kind>", "digest": {"hash": H, "sizeBytes": "N"}}]}
entry_digest = cache.entry_digest(kind, key) = sha256(kind \\0 key); keys hold structure hashes and the
planner version, never weights. Only whole-plan kinds and the model index are shared (SHARED_KINDS):
fine-grained fusion-block entries would cost a round trip each.

Every answer is checked: the AC names a blob of this kind, the blob's sha256 and size match, and the
blob holds this very (kind, digest). Anything else is a miss (counted as corrupt).

The server is only an accelerator, and a slow one must not stall plans:
- Deadline. Every HTTP request (GET ac, GET cas, PUT) has one overall deadline, TIMEOUT_S from its
  start, covering connect, sending, the status line and headers and the whole body: every receive and
  send of the connection's socket (_DeadlineSocket) waits only for what is left of it, and bodies are
  read in chunks up to their size cap. A server that trickles a byte a second, never finishes a body
  or never answers costs one deadline; the socket is then closed. (A socket timeout alone bounds each
  read, not the request.) A look-up is at most two requests on one connection.
- Back-off. A failed request (refused, reset, deadline passed, garbled reply) marks the server down
  for BACKOFF_S: look-ups and publishes are skipped (counted in "skipped"), with one warning per
  down-period. When it is over, one request tries the server again (the others keep skipping until
  it ends): an answer ends the down-period, another failure starts a new one. A long-lived daemon
  so uses the server again once it is back, and a dead server costs one deadline per BACKOFF_S.
- abort() (a daemon stopping on SIGTERM or SIGINT) ends the requests in flight at once (their sockets
  are shut down) and skips every later one.
An HTTP status other than 200/404 is an error but not a failure of the server: no back-off.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import logging
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse

import msgpack

SHARED_KINDS = frozenset({"arena", "fused", "model"})
DEFAULT_TIMEOUT_S = 2.0
MAX_TIMEOUT_S = 60.0
DEFAULT_BACKOFF_S = 60.0
MAX_BACKOFF_S = 24 * 3600.0
READ_CHUNK = 64 << 10
MAX_AC_BYTES = 64 << 10
MAX_BLOB_BYTES = 64 << 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_TRUE = ("1", "true", "yes", "on")


class Corrupt(Exception):
    """An answer that is not the entry asked for (damaged, foreign or too large)."""


def timeout_from_env() -> float:
    """$BUILDTOOL_REMOTE_CACHE_TIMEOUT_S if it is a number in (0, 60], else DEFAULT_TIMEOUT_S."""
    try:
        t = float(os.environ.get("BUILDTOOL_REMOTE_CACHE_TIMEOUT_S", "") or DEFAULT_TIMEOUT_S)
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return t if 0 < t <= MAX_TIMEOUT_S else DEFAULT_TIMEOUT_S


def backoff_from_env() -> float:
    """$BUILDTOOL_REMOTE_CACHE_BACKOFF_S if it is a number in [0, 1 day], else DEFAULT_BACKOFF_S."""
    try:
        t = float(os.environ.get("BUILDTOOL_REMOTE_CACHE_BACKOFF_S", "") or DEFAULT_BACKOFF_S)
    except ValueError:
        return DEFAULT_BACKOFF_S
    return t if 0 <= t <= MAX_BACKOFF_S else DEFAULT_BACKOFF_S


def from_env():
    """The RemoteCache $BUILDTOOL_REMOTE_CACHE names, or None (unset, or not an http(s) URL: one warning)."""
    url = os.environ.get("BUILDTOOL_REMOTE_CACHE", "").strip()
    if not url:
        return None
    write = os.environ.get("BUILDTOOL_REMOTE_CACHE_WRITE", "").strip().lower() in _TRUE
    try:
        return RemoteCache(url, write=write, timeout=timeout_from_env(), backoff=backoff_from_env())
    except ValueError as e:
        logging.getLogger("buildtool.serve.cache").warning("%s; the team cache is off", e)
        return None


def ac_body(kind: str, blob_hash: str, size: int) -> bytes:
    """The AC entry: an ActionResult naming the CAS blob (bazel-remote validates this shape)."""
    return json.dumps({"outputFiles": [{"path": f"buildtool/{kind}",
                                        "digest": {"hash": blob_hash, "sizeBytes": str(size)}}]}).encode()


def parse_ac(body: bytes, kind: str) -> tuple:
    """(blob hash, size) named by an AC body for this kind; Corrupt if it is anything else."""
    try:
        f = json.loads(body)["outputFiles"][0]
        h, size = f["digest"]["hash"], int(f["digest"]["sizeBytes"])
        ok = f["path"] == f"buildtool/{kind}" and isinstance(h, str) and _HEX64.match(h)
    except (ValueError, KeyError, IndexError, TypeError):
        ok = False
    if not ok or not 0 < size <= MAX_BLOB_BYTES:
        raise Corrupt("not an action result for this kind")
    return h, size


def check_blob(blob: bytes, blob_hash: str, size: int, kind: str, digest: str):
    """The value in a CAS blob, after checking its hash, size and that it holds (kind, digest)."""

    if len(blob) != size or hashlib.sha256(blob).hexdigest() != blob_hash:
        raise Corrupt("blob does not match its hash")
    try:
        k, d, value = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException):
        raise Corrupt("blob is not an entry") from None
    if (k, d) != (kind, digest):
        raise Corrupt("blob holds another entry")
    return value


class RemoteCache:
    """GET/PUT of entries in the Bazel HTTP cache layout under one URL prefix, with counters; each
    request within timeout seconds, the server skipped for backoff seconds after a failure."""

    def __init__(self, url: str, write: bool = False, timeout: float = DEFAULT_TIMEOUT_S,
                 backoff: float = DEFAULT_BACKOFF_S):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"BUILDTOOL_REMOTE_CACHE={url!r} is not an http:// or https:// URL")
        try:
            self.port = u.port
        except ValueError:
            raise ValueError(f"BUILDTOOL_REMOTE_CACHE={url!r} has a bad port") from None
        self.scheme, self.host, self.prefix = u.scheme, u.hostname, u.path.rstrip("/")
        self.url = f"{u.scheme}://{u.hostname}{f':{u.port}' if u.port else ''}{self.prefix}"  # no credentials
        self.auth = None
        if u.username is not None:  # http://user:password@host/prefix: basic auth (e.g. for CI's writes)
            cred = f"{urllib.parse.unquote(u.username)}:{urllib.parse.unquote(u.password or '')}"
            self.auth = "Basic " + base64.b64encode(cred.encode()).decode()
        self.write = write
        self.timeout = timeout
        self.backoff = backoff
        self.aborted = False  # abort(): every request from then on is skipped
        self._down_until = None  # monotonic end of the down-period after a failure; None: up
        self._probing = False  # the down-period is over and one request is trying the server again
        self._socks: set = set()  # sockets of requests in flight (abort() shuts them down)
        self._lock = threading.Lock()
        self.counts = {"hits": 0, "misses": 0, "corrupt": 0, "errors": 0, "skipped": 0, "puts": 0}

    def shares(self, kind: str) -> bool:
        return kind in SHARED_KINDS

    @property
    def down(self) -> bool:
        """Skipped now: within a down-period (or while its retry is in flight), or aborted."""
        with self._lock:
            return self.aborted or self._retry_in() > 0 or self._probing

    def _retry_in(self) -> float:
        return 0.0 if self._down_until is None else max(0.0, self._down_until - time.monotonic())

    def stats(self) -> dict:
        down = self.down
        with self._lock:
            return {"url": self.url, "write": self.write, "down": down, "timeout_s": self.timeout,
                    "backoff_s": self.backoff, "retry_in_s": round(self._retry_in(), 3), **self.counts}

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def abort(self) -> None:
        """End the requests in flight now and skip every later one (a daemon stopping on a signal).
        Takes no lock, so a signal handler may call it."""
        self.aborted = True
        for s in list(self._socks):  # (one C call under the GIL: a consistent copy)
            try:
                socket.socket.shutdown(s, socket.SHUT_RDWR)  # a blocked receive returns at once
            except OSError:
                pass

    def _admit(self):
        """None when the server is to be skipped now (counted), else whether this request is the one
        trying the server again after a down-period."""
        with self._lock:
            if self.aborted or self._probing or self._retry_in() > 0:
                self.counts["skipped"] += 1
                return None
            probe = self._down_until is not None
            self._probing = self._probing or probe
            return probe

    def _probe_over(self, probe: bool) -> None:
        """However the retry ended (an exception no handler expects included), others may try again."""
        if probe:
            with self._lock:
                self._probing = False

    def _answered(self, probe: bool) -> None:
        """The server answered (any HTTP status): a retry after a down-period ends it."""
        if not probe:
            return
        with self._lock:
            self._down_until, self._probing = None, False
        logging.getLogger("buildtool.serve.cache").info("the team cache %s answers again", self.url)

    def _went_down(self, e: Exception, probe: bool) -> None:
        """A request failed: a new down-period unless one is on (one warning per down-period)."""
        with self._lock:
            self.counts["errors"] += 1
            if probe:
                self._probing = False
            new = not self.aborted and self._retry_in() <= 0
            if new:
                self._down_until = time.monotonic() + self.backoff
        if new:
            logging.getLogger("buildtool.serve.cache").warning(
                "the team cache %s is unreachable (%s); planning without it for the next %g s",
                self.url, e, self.backoff)

    def get(self, kind: str, digest: str):
        """(value, blob) from the server, or None on a miss of any sort (counted)."""
        if not self.shares(kind):
            return None
        probe = self._admit()
        if probe is None:
            return None
        try:
            return self._get(kind, digest, probe)
        finally:
            self._probe_over(probe)

    def _get(self, kind: str, digest: str, probe: bool):
        try:
            with self._connection() as conn:
                status, body = conn.request("GET", f"/ac/{digest}", limit=MAX_AC_BYTES,
                                            headers={"Accept": "application/json"})
                if status == 404:
                    self._answered(probe)
                    self._count("misses")
                    return None
                if status != 200:
                    raise _HttpStatus(status)
                h, size = parse_ac(body, kind)
                status, blob = conn.request("GET", f"/cas/{h}", limit=size)
                if status == 404:  # an AC whose blob has gone (evicted): a plain miss
                    self._answered(probe)
                    self._count("misses")
                    return None
                if status != 200:
                    raise _HttpStatus(status)
                value = check_blob(blob, h, size, kind, digest)
        except Corrupt:
            self._answered(probe)
            self._count("corrupt")
            return None
        except _HttpStatus:
            self._answered(probe)
            self._count("errors")
            return None
        except _Unreachable as e:
            self._went_down(e, probe)
            return None
        self._answered(probe)
        self._count("hits")
        return value, blob

    def put(self, kind: str, digest: str, blob: bytes) -> bool:
        """Publish one entry (blob = msgpack [kind, digest, value]): PUT cas, then ac. Only when writing."""
        if not (self.write and self.shares(kind)):
            return False
        probe = self._admit()
        if probe is None:
            return False
        try:
            return self._put(kind, digest, blob, probe)
        finally:
            self._probe_over(probe)

    def _put(self, kind: str, digest: str, blob: bytes, probe: bool) -> bool:
        h = hashlib.sha256(blob).hexdigest()
        try:
            with self._connection() as conn:
                status, _ = conn.request("PUT", f"/cas/{h}", blob, headers={"Content-Type": "application/octet-stream"})
                if status in (200, 201, 204):  # never publish an AC entry whose blob is not there
                    status, _ = conn.request("PUT", f"/ac/{digest}", ac_body(kind, h, len(blob)),
                                             headers={"Content-Type": "application/json"})
        except Corrupt:  # an answer past the size cap: the server answered, oddly
            self._answered(probe)
            self._count("errors")
            return False
        except _Unreachable as e:
            self._went_down(e, probe)
            return False
        self._answered(probe)
        if status not in (200, 201, 204):
            self._count("errors")
            return False
        self._count("puts")
        return True

    def _connection(self) -> "_Connection":
        return _Connection(self)


class _HttpStatus(Exception):
    pass


class _Unreachable(Exception):
    pass


class _Deadline:
    """A socket whose every receive and send waits only until `deadline` (monotonic): the timeout is
    set to what is left before each call, so a server sending a byte a second cannot stretch a
    request (a plain socket timeout bounds each call alone). Past the deadline, or once the cache
    is aborted, a call raises TimeoutError at once."""

    deadline = 0.0
    rc = None

    def _arm(self) -> None:
        if self.rc is not None and self.rc.aborted:
            raise ConnectionAbortedError("the team cache was switched off (stopping)")
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        self.settimeout(left)

    def recv(self, *args):
        self._arm()
        return super().recv(*args)

    def recv_into(self, *args):
        self._arm()
        return super().recv_into(*args)

    def send(self, *args):
        self._arm()
        return super().send(*args)

    def sendall(self, *args):  # (a plain socket's sendall waits at most its timeout in all)
        self._arm()
        return super().sendall(*args)


class _DeadlineSocket(_Deadline, socket.socket):
    pass


class _DeadlineSSLSocket(_Deadline, ssl.SSLSocket):
    pass


class _HTTPConnection(http.client.HTTPConnection):
    """http.client's connection on a _DeadlineSocket: connecting waits only until the deadline too."""

    deadline = 0.0
    rc = None

    def connect(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        raw = socket.create_connection((self.host, self.port), left, self.source_address)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._wrap(raw)
        self.sock.deadline, self.sock.rc = self.deadline, self.rc
        self.rc._socks.add(self.sock)

    def _wrap(self, raw: socket.socket):
        return _DeadlineSocket(raw.family, raw.type, raw.proto, raw.detach())


class _HTTPSConnection(_HTTPConnection):
    default_port = http.client.HTTPS_PORT

    def __init__(self, host, port, **kw):
        super().__init__(host, port, **kw)
        self._context = ssl.create_default_context()
        self._context.sslsocket_class = _DeadlineSSLSocket

    def _wrap(self, raw: socket.socket):  # (the TLS handshake waits at most raw's timeout: the time left)
        return self._context.wrap_socket(raw, server_hostname=self.host)


class _Connection:
    """One HTTP connection for one look-up or publish (at most two requests, each within the cache's
    timeout); every failure of the transport (refused, reset, deadline passed, a garbled reply) is
    _Unreachable."""

    def __init__(self, rc: RemoteCache):
        self.rc = rc
        cls = _HTTPSConnection if rc.scheme == "https" else _HTTPConnection
        self.conn = cls(rc.host, rc.port, timeout=rc.timeout)
        self.conn.rc = rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        sock = self.conn.sock
        self.rc._socks.discard(sock)
        self.conn.close()

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                limit: int = MAX_AC_BYTES) -> tuple:
        """(status, body of at most limit bytes), all within the cache's timeout; a longer body is Corrupt."""

        headers = dict(headers or {})
        if self.rc.auth:
            headers["Authorization"] = self.rc.auth
        deadline = self.conn.deadline = time.monotonic() + self.rc.timeout
        if self.conn.sock is not None:  # the second request on this connection: a deadline of its own
            self.conn.sock.deadline = deadline
        try:
            self.conn.request(method, self.rc.prefix + path, body=body, headers=headers)
            r = self.conn.getresponse()
            length = r.getheader("Content-Length")
            if r.status == 200 and method == "GET" and length is not None and length.isdigit() and int(length) > limit:
                raise Corrupt("answer too large")
            data = bytearray()
            while len(data) <= limit:  # in chunks, each receive within the deadline
                chunk = r.read(min(READ_CHUNK, limit + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
                if time.monotonic() > deadline:
                    raise TimeoutError("timed out")
            if len(data) > limit and r.status == 200:
                raise Corrupt("answer too large")
            return r.status, bytes(data)
        except (OSError, http.client.HTTPException) as e:  # timeouts are OSErrors
            if self.rc.aborted:
                raise _Unreachable("switched off: stopping") from None
            if isinstance(e, TimeoutError) or time.monotonic() >= deadline:
                raise _Unreachable(f"timed out: no whole answer within {self.rc.timeout:g} s") from None
            raise _Unreachable(str(e) or type(e).__name__) from None
