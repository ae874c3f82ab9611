"""Content-addressed planning cache and the memo interface planners call.

Planner code asks for a value with

    memo.get_or_compute(kind, key, compute)

where kind names the problem ("arena", and later e.g. "split-region",
"fusion-block"), key is a content key (canonical.plan_key / subgraph_key) and
compute() returns a msgpack-able value. The value returned is always the msgpack
round trip of what compute() gave, so a hit and a miss return identical data.

- NullMemo computes every time (in-process builds, --no-daemon).
- Memo adds an in-memory layer, a DiskStore, in-flight de-duplication (two threads
  asking for the same key compute it once) and counters. memo.session() gives a
  view with its own per-request hit/miss counters over the same shared state.

DiskStore entries are files objects/<kind>/<ab>/<digest>: magic, SHA-256 of the
payload, payload = msgpack [kind, digest, value]. Writes go to a temp file and
os.replace, so a reader never sees half an entry; a truncated or corrupt entry is
detected by its checksum, deleted and recomputed. The file mtime is the LRU
clock; past the size cap the least recently used entries are evicted.
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import tempfile
import threading
from typing import Callable

import msgpack

MAGIC = b"BTCACHE1"
HEADER = len(MAGIC) + 32
DEFAULT_CAP_BYTES = 512 << 20
_KIND = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_MISSING = object()


def default_cache_dir() -> str:
    d = os.environ.get("BUILDTOOL_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "buildtool")


def entry_digest(kind: str, key) -> str:
    if not _KIND.match(kind):
        raise ValueError(f"cache kind {kind!r} must be lower-case letters, digits, '-' or '_'")
    if isinstance(key, str):
        key = key.encode()
    return hashlib.sha256(kind.encode() + b"\0" + bytes(key)).hexdigest()


def _roundtrip(value):
    return msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False, strict_map_key=False)


class Stats:
    """Hit/miss counters per kind (thread-safe). Uncounted kinds (indexes) are left out."""

    def __init__(self):
        self._lock = threading.Lock()
        self.by_kind: dict = {}

    def add(self, kind: str, hit: bool) -> None:
        with self._lock:
            h, m = self.by_kind.get(kind, (0, 0))
            self.by_kind[kind] = (h + hit, m + (not hit))

    @property
    def hits(self) -> int:
        return sum(h for h, _ in self.by_kind.values())

    @property
    def misses(self) -> int:
        return sum(m for _, m in self.by_kind.values())

    def as_dict(self) -> dict:
        return {"hits": self.hits, "misses": self.misses}


class NullMemo:
    """Always computes; counts every call as a miss."""

    def __init__(self):
        self.stats = Stats()

    def get_or_compute(self, kind: str, key, compute: Callable, count: bool = True):
        entry_digest(kind, key)
        if count:
            self.stats.add(kind, False)
        return _roundtrip(compute())


class DiskStore:
    """Content-addressed files with checksums, atomic writes and an LRU size cap."""

    def __init__(self, root: str | None = None, cap_bytes: int = DEFAULT_CAP_BYTES):
        self.root = os.path.abspath(root or default_cache_dir())
        self.objects = os.path.join(self.root, "objects")
        self.cap_bytes = cap_bytes
        self.corrupt = 0  # entries found damaged and dropped since start
        self._lock = threading.Lock()
        self._size = None  # bytes on disk, scanned lazily

    def _path(self, kind: str, digest: str) -> str:
        return os.path.join(self.objects, kind, digest[:2], digest[2:])

    def get(self, kind: str, digest: str):
        """The stored value, or _MISSING. Damaged entries are deleted."""
        path = self._path(kind, digest)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (FileNotFoundError, NotADirectoryError):
            return _MISSING
        try:
            if data[:len(MAGIC)] != MAGIC or hashlib.sha256(data[HEADER:]).digest() != data[len(MAGIC):HEADER]:
                raise ValueError("checksum")
            k, d, value = msgpack.unpackb(data[HEADER:], raw=False, strict_map_key=False)
            if (k, d) != (kind, digest):
                raise ValueError("entry holds another key")
        except (ValueError, TypeError, msgpack.UnpackException):
            self._drop(path, len(data))
            self.corrupt += 1
            return _MISSING
        try:
            os.utime(path)  # LRU clock
        except OSError:
            pass
        return value

    def put(self, kind: str, digest: str, value) -> None:
        payload = msgpack.packb([kind, digest, value], use_bin_type=True)
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        path = self._path(kind, digest)
        d = os.path.dirname(path)
        os.makedirs(d, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        with self._lock:
            if self._size is None:
                self._size = self._scan_size()
            else:
                self._size += len(data)
            over = self._size > self.cap_bytes
        if over:
            self.evict(keep=path)

    def _drop(self, path: str, size: int) -> None:
        try:
            os.unlink(path)
        except OSError:
            return
        with self._lock:
            if self._size is not None:
                self._size -= size

    def _files(self):
        for root, _dirs, files in os.walk(self.objects):
            for f in files:
                if not f.startswith(".tmp"):
                    yield os.path.join(root, f)

    def _scan_size(self) -> int:
        total = 0
        for p in self._files():
            try:
                total += os.stat(p).st_size
            except OSError:
                pass
        return total

    def evict(self, keep: str | None = None) -> int:
        """Delete least recently used entries until the store is at most 90% of the cap."""
        entries = []
        for p in self._files():
            try:
                st = os.stat(p)
            except OSError:
                continue
            entries.append((st.st_mtime_ns, p, st.st_size))
        entries.sort()
        total = sum(e[2] for e in entries)
        target = self.cap_bytes * 9 // 10
        removed = 0
        for _mt, p, size in entries:
            if total <= target:
                break
            if p == keep:
                continue
            try:
                os.unlink(p)
            except OSError:
                continue
            total -= size
            removed += 1
        with self._lock:
            self._size = total
        return removed

    def stats(self) -> dict:
        n = size = 0
        for p in self._files():
            try:
                size += os.stat(p).st_size
                n += 1
            except OSError:
                pass
        return {"entries": n, "bytes": size, "cap_bytes": self.cap_bytes, "dir": self.root}

    def clear(self) -> int:
        n = 0
        for p in list(self._files()):
            try:
                os.unlink(p)
                n += 1
            except OSError:
                pass
        with self._lock:
            self._size = 0
        return n


class _Flight:
    def __init__(self):
        self.done = threading.Event()
        self.value = None
        self.error = None


class Memo:
    """Shared cache state: hot in-memory entries, a DiskStore (optional), in-flight table, totals."""

    def __init__(self, store: DiskStore | None = None, hot_entries: int = 8192):
        self.store = store
        self.stats = Stats()
        self._hot: collections.OrderedDict = collections.OrderedDict()
        self._hot_max = hot_entries
        self._flights: dict = {}
        self._lock = threading.Lock()

    def session(self) -> "MemoSession":
        return MemoSession(self)

    def get_or_compute(self, kind: str, key, compute: Callable, count: bool = True):
        return self._get(kind, key, compute, [self.stats] if count else [])

    def _get(self, kind: str, key, compute: Callable, stats: list):
        d = entry_digest(kind, key)
        hk = (kind, d)
        with self._lock:
            if hk in self._hot:
                self._hot.move_to_end(hk)
                value = self._hot[hk]
                flight, owner = None, False
            else:
                value = _MISSING
                flight = self._flights.get(hk)
                owner = flight is None
                if owner:
                    flight = self._flights[hk] = _Flight()
        if value is not _MISSING:
            self._count(stats, kind, True)
            return value
        if not owner:  # someone else is solving this very key: wait for their answer
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            self._count(stats, kind, True)
            return flight.value
        try:
            value = self.store.get(kind, d) if self.store is not None else _MISSING
            hit = value is not _MISSING
            if not hit:
                value = _roundtrip(compute())
                if self.store is not None:
                    self.store.put(kind, d, value)
            flight.value = value
            with self._lock:
                self._hot[hk] = value
                while len(self._hot) > self._hot_max:
                    self._hot.popitem(last=False)
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._lock:
                del self._flights[hk]
            flight.done.set()
        self._count(stats, kind, hit)
        return value

    @staticmethod
    def _count(stats: list, kind: str, hit: bool) -> None:
        for s in stats:
            s.add(kind, hit)

    def clear(self) -> int:
        with self._lock:
            self._hot.clear()
        return self.store.clear() if self.store is not None else 0


class MemoSession:
    """One request's view of a shared Memo: same entries, its own counters."""

    def __init__(self, shared: Memo):
        self.shared = shared
        self.stats = Stats()

    def get_or_compute(self, kind: str, key, compute: Callable, count: bool = True):
        stats = [self.stats, self.shared.stats] if count else []
        return self.shared._get(kind, key, compute, stats)
