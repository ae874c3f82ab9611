"""Team-wide plan cache on an existing Bazel HTTP cache (nginx WebDAV, bazel-remote, ...).

    BUILDTOOL_REMOTE_CACHE=http://host[:port]/prefix   on: the local DiskStore asks it on a local miss
    BUILDTOOL_REMOTE_CACHE_WRITE=1                     also publish computed entries (CI); default read-only
    BUILDTOOL_REMOTE_CACHE_TIMEOUT_S=2                 connect and each read wait at most this long

Layout (the Bazel HTTP cache's, so the server needs no change):
  {prefix}/cas/<sha256(blob)>  blob = msgpack [kind, entry_digest, value] (the local entry's payload)
  {prefix}/ac/<entry_digest>   a REAPI ActionResult in protojson naming that blob:
      {"outputFiles": [{"path": "buildtool/<kind>", "digest": {"hash": H, "sizeBytes": "N"}}]}
entry_digest = cache.entry_digest(kind, key) = sha256(kind \\0 key); keys hold structure hashes and the
planner version, never weights. Only whole-plan kinds and the model index are shared (SHARED_KINDS):
fine-grained fusion-block entries would cost a round trip each.

Every answer is checked: the AC names a blob of this kind, the blob's sha256 and size match, and the
blob holds this very (kind, digest). Anything else is a miss (counted as corrupt). The server is only
an accelerator: the first connection failure or timeout turns it off for the rest of the process
(one warning), so a dead server costs at most one timeout. http.client only, imported on first use.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import logging
import os
import re
import threading
import urllib.parse

import msgpack

SHARED_KINDS = frozenset({"arena", "fused", "model"})
DEFAULT_TIMEOUT_S = 2.0
MAX_TIMEOUT_S = 60.0
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


def from_env():
    """The RemoteCache $BUILDTOOL_REMOTE_CACHE names, or None (unset, or not an http(s) URL: one warning)."""
    url = os.environ.get("BUILDTOOL_REMOTE_CACHE", "").strip()
    if not url:
        return None
    write = os.environ.get("BUILDTOOL_REMOTE_CACHE_WRITE", "").strip().lower() in _TRUE
    try:
        return RemoteCache(url, write=write, timeout=timeout_from_env())
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
    """GET/PUT of entries in the Bazel HTTP cache layout under one URL prefix, with counters."""

    def __init__(self, url: str, write: bool = False, timeout: float = DEFAULT_TIMEOUT_S):
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
        self.down = False  # set by the first connection failure: skipped from then on
        self._lock = threading.Lock()
        self.counts = {"hits": 0, "misses": 0, "corrupt": 0, "errors": 0, "skipped": 0, "puts": 0}

    def shares(self, kind: str) -> bool:
        return kind in SHARED_KINDS

    def stats(self) -> dict:
        with self._lock:
            return {"url": self.url, "write": self.write, "down": self.down, **self.counts}

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def get(self, kind: str, digest: str):
        """(value, blob) from the server, or None on a miss of any sort (counted)."""
        if not self.shares(kind):
            return None
        if self.down:
            self._count("skipped")
            return None
        try:
            with self._connection() as conn:
                status, body = conn.request("GET", f"/ac/{digest}", limit=MAX_AC_BYTES,
                                            headers={"Accept": "application/json"})
                if status == 404:
                    self._count("misses")
                    return None
                if status != 200:
                    raise _HttpStatus(status)
                h, size = parse_ac(body, kind)
                status, blob = conn.request("GET", f"/cas/{h}", limit=size)
                if status == 404:  # an AC whose blob has gone (evicted): a plain miss
                    self._count("misses")
                    return None
                if status != 200:
                    raise _HttpStatus(status)
                value = check_blob(blob, h, size, kind, digest)
        except Corrupt:
            self._count("corrupt")
            return None
        except _HttpStatus:
            self._count("errors")
            return None
        except _Unreachable as e:
            self._went_down(e)
            return None
        self._count("hits")
        return value, blob

    def put(self, kind: str, digest: str, blob: bytes) -> bool:
        """Publish one entry (blob = msgpack [kind, digest, value]): PUT cas, then ac. Only when writing."""
        if not (self.write and self.shares(kind)) or self.down:
            return False
        h = hashlib.sha256(blob).hexdigest()
        try:
            with self._connection() as conn:
                status, _ = conn.request("PUT", f"/cas/{h}", blob, headers={"Content-Type": "application/octet-stream"})
                if status in (200, 201, 204):  # never publish an AC entry whose blob is not there
                    status, _ = conn.request("PUT", f"/ac/{digest}", ac_body(kind, h, len(blob)),
                                             headers={"Content-Type": "application/json"})
        except _Unreachable as e:
            self._went_down(e)
            return False
        if status not in (200, 201, 204):
            self._count("errors")
            return False
        self._count("puts")
        return True

    def _went_down(self, e: Exception) -> None:
        with self._lock:
            self.counts["errors"] += 1
            first, self.down = not self.down, True
        if first:
            logging.getLogger("buildtool.serve.cache").warning(
                "the team cache %s is unreachable (%s); planning without it from now on", self.url, e)

    def _connection(self) -> "_Connection":
        return _Connection(self)


class _HttpStatus(Exception):
    pass


class _Unreachable(Exception):
    pass


class _Connection:
    """One HTTP connection for one look-up or publish (at most two requests); every failure of the
    transport (refused, reset, timeout, a garbled reply) is _Unreachable."""

    def __init__(self, rc: RemoteCache):
        self.rc = rc
        cls = http.client.HTTPSConnection if rc.scheme == "https" else http.client.HTTPConnection
        self.conn = cls(rc.host, rc.port, timeout=rc.timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.conn.close()

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                limit: int = MAX_AC_BYTES) -> tuple:
        """(status, body of at most limit bytes); a longer body is Corrupt."""

        headers = dict(headers or {})
        if self.rc.auth:
            headers["Authorization"] = self.rc.auth
        try:
            self.conn.request(method, self.rc.prefix + path, body=body, headers=headers)
            r = self.conn.getresponse()
            length = r.getheader("Content-Length")
            if r.status == 200 and method == "GET" and length is not None and length.isdigit() and int(length) > limit:
                raise Corrupt("answer too large")
            data = r.read(limit + 1)
            if len(data) > limit and r.status == 200:
                raise Corrupt("answer too large")
            return r.status, data
        except (OSError, http.client.HTTPException) as e:  # timeouts are OSErrors
            raise _Unreachable(str(e) or type(e).__name__) from None
