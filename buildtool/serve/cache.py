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
payload, payload = msgpack [kind, digest, value]. Writes go to a temp file
(.tmp<pid>-...) and os.replace, so a reader never sees half an entry; a truncated
or corrupt entry, or anything that is not a regular file at an entry's path, is a
miss: it is deleted and recomputed. The file mtime is the LRU clock; past the size
cap the least recently used entries are evicted. Directories are private (0700).

The cache is only an accelerator: a store that cannot be written (read-only, full
disk, unwritable HOME) never fails a plan; the value is returned unstored and one
warning is logged per store.

With $BUILDTOOL_REMOTE_CACHE set, a DiskStore also asks that team cache on a local miss
(whole-plan kinds and the model index; remote_cache.py), keeps what it gets, and, with
$BUILDTOOL_REMOTE_CACHE_WRITE=1, publishes the entries it computes (after the local write).
"""

from __future__ import annotations

import collections
import errno
import hashlib
import logging
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from typing import Callable

import msgpack

from ..errors import InternalError

MAGIC = b"BTCACHE1"
HEADER = len(MAGIC) + 32
DEFAULT_CAP_BYTES = 512 << 20
HOT_BYTES = 64 << 20  # the in-memory layer holds at most this much msgpack
WRITE_BEHIND_QUIET_S = 0.2  # the writer starts once puts have paused this long ...
WRITE_BEHIND_MAX_BYTES = 32 << 20  # ... or once this much waits
TEMP_STALE_S = 3600  # a temp file this old is left over even if its pid is alive (pid reuse)
_KIND = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_TEMP = re.compile(r"^\.tmp(\d+)?")
_MISSING = object()
_FROM_ENV = object()


class Cancelled(Exception):
    """Raised at a memo check point when the request's client has gone (see MemoSession)."""


def default_cache_dir() -> str:
    d = os.environ.get("BUILDTOOL_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "buildtool")


def entry_digest(kind: str, key) -> str:
    if not _KIND.match(kind):
        raise InternalError(f"cache kind {kind!r} must be lower-case letters, digits, '-' or '_'")
    if isinstance(key, str):
        key = key.encode()
    return hashlib.sha256(kind.encode() + b"\0" + bytes(key)).hexdigest()


def _roundtrip(value):
    return _sized_roundtrip(value)[0]


def _sized_roundtrip(value) -> tuple:
    return _packed_roundtrip(value)[:2]


def _packed_roundtrip(value) -> tuple:
    """(round-tripped value, its msgpack size, the msgpack bytes): the store writes these bytes as they are."""
    data = msgpack.packb(value, use_bin_type=True)
    return msgpack.unpackb(data, raw=False, strict_map_key=False), len(data), data


def _quiet_s() -> float:
    """WRITE_BEHIND_QUIET_S, or $BUILDTOOL_CACHE_WRITE_QUIET_S (tests: a long pause, so only an exit flushes)."""
    try:
        v = float(os.environ.get("BUILDTOOL_CACHE_WRITE_QUIET_S", "") or WRITE_BEHIND_QUIET_S)
    except ValueError:
        return WRITE_BEHIND_QUIET_S
    return v if 0 <= v <= 3600 else WRITE_BEHIND_QUIET_S


def _write_file(f, data: bytes) -> None:
    f.write(data)  # (a module function so a test can crash a flush between two entries or inside one)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        pass
    return True


def _stale_temp(name: str, mtime: float, now: float) -> bool:
    """A temp file of a writer that died (its pid is gone) or that is older than TEMP_STALE_S."""
    m = _TEMP.match(name)
    if m is None:
        return False
    return now - mtime > TEMP_STALE_S or (m.group(1) is not None and not _pid_alive(int(m.group(1))))


def _remove(path: str) -> bool:
    """Delete whatever is at path (file, symlink, fifo or directory tree); True if it went."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return False
    except OSError:
        return False
    return True


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


def _listdir(path: str) -> list:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


class DiskStore:
    """Content-addressed files with checksums, atomic writes and an LRU size cap.

    write_behind=True (the daemon): put() only queues the finished entry bytes; a background
    writer thread writes the queue once puts have paused for WRITE_BEHIND_QUIET_S and no request
    is being solved (busy(); a plan's hundreds of block entries land after it is answered) or when it holds more than
    WRITE_BEHIND_MAX_BYTES; flush() writes it all now (daemon exit). Queued entries are read
    back from the queue. Every entry is still written to a temp file and renamed, so a crash
    mid-flush loses only queued entries (misses), never leaves a damaged one. No fsync: the
    cache is an accelerator, and a file a power cut truncates fails its checksum (a miss).

    remote: a remote_cache.RemoteCache asked on a local miss (its hits are kept here, not published
    again) and sent computed entries when it writes; by default the one $BUILDTOOL_REMOTE_CACHE names."""

    def __init__(self, root: str | None = None, cap_bytes: int = DEFAULT_CAP_BYTES, write_behind: bool = False,
                 remote=_FROM_ENV):
        self.root = os.path.abspath(root or default_cache_dir())
        self.objects = os.path.join(self.root, "objects")
        self.cap_bytes = cap_bytes
        self.corrupt = 0  # entries found damaged and dropped since start
        self.write_errors = 0  # values that could not be stored (read-only cache, full disk)
        self._lock = threading.Lock()
        self._size = None  # bytes on disk, scanned lazily
        self._private: set = set()  # directories known to exist with mode 0700
        self.write_behind = write_behind
        self._pending: dict = {}  # (kind, digest) -> entry bytes not yet written (write-behind)
        self._pending_bytes = 0
        self._last_put = 0.0
        self._wake = threading.Condition(threading.Lock())
        self._write_lock = threading.Lock()  # one flush at a time (writer thread, flush(), clear())
        self._writer = None
        self._planning = 0  # requests being solved (the daemon's busy()): the writer waits for none
        self.quiet_s = _quiet_s()
        if remote is _FROM_ENV:
            remote = None
            if os.environ.get("BUILDTOOL_REMOTE_CACHE"):
                # (only then: its http.client, ssl and email are 0.02 s of every plan command)
                from .remote_cache import from_env

                remote = from_env()
        self.remote = remote
        self._publish: set = set()  # queued (kind, digest) to send to the remote once written locally

    def _path(self, kind: str, digest: str) -> str:
        return os.path.join(self.objects, kind, digest[:2], digest[2:])

    def get(self, kind: str, digest: str):
        """The stored value, or _MISSING. Damaged entries (of any sort) are deleted and are misses."""
        return self.get_sized(kind, digest)[0]

    def get_sized(self, kind: str, digest: str) -> tuple:
        """(value, msgpack size of the value) or (_MISSING, 0); a local miss asks the remote, if any."""
        value, size = self._get_local(kind, digest)
        if value is _MISSING and self.remote is not None:
            got = self.remote.get(kind, digest)
            if got is not None:
                value, blob = got
                self._put_payload(kind, digest, blob, publish=False)
                return value, len(blob)
        return value, size

    def _get_local(self, kind: str, digest: str) -> tuple:
        with self._wake:
            queued = self._pending.get((kind, digest))
        if queued is not None:
            return msgpack.unpackb(queued[HEADER:], raw=False, strict_map_key=False)[2], len(queued)
        path = self._path(kind, digest)
        try:  # no symlinks followed, no blocking on a fifo
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return _MISSING, 0  # a non-directory in the way is replaced by put()
        except OSError:
            self._damaged(path)
            return _MISSING, 0
        try:
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise ValueError("not a regular file")
                data = f.read()
            if data[:len(MAGIC)] != MAGIC or hashlib.sha256(data[HEADER:]).digest() != data[len(MAGIC):HEADER]:
                raise ValueError("checksum")
            k, d, value = msgpack.unpackb(data[HEADER:], raw=False, strict_map_key=False)
            if (k, d) != (kind, digest):
                raise ValueError("entry holds another key")
        except (OSError, ValueError, TypeError, msgpack.UnpackException):
            self._damaged(path)
            return _MISSING, 0
        try:
            os.utime(path)  # LRU clock
        except OSError:
            pass
        return value, len(data) - HEADER

    def put(self, kind: str, digest: str, value, packed: bytes | None = None) -> bool:
        """Store value (packed: its msgpack bytes, when the caller has them); False (and one warning
        per store) when the cache cannot be written. With write_behind the entry is queued: True."""
        if packed is None:
            payload = msgpack.packb([kind, digest, value], use_bin_type=True)
        else:  # msgpack of [kind, digest, value] without packing the value again
            payload = b"\x93" + msgpack.packb(kind) + msgpack.packb(digest) + packed
        publish = self.remote is not None and self.remote.write and self.remote.shares(kind)
        return self._put_payload(kind, digest, payload, publish)

    def _put_payload(self, kind: str, digest: str, payload: bytes, publish: bool) -> bool:
        data = MAGIC + hashlib.sha256(payload).digest() + payload
        if not self.write_behind:
            ok = self._store(kind, digest, data)
            if publish:
                self.remote.put(kind, digest, payload)
            return ok
        with self._wake:
            if publish:
                self._publish.add((kind, digest))
            old = self._pending.pop((kind, digest), None)
            self._pending_bytes += len(data) - (len(old) if old is not None else 0)
            self._pending[(kind, digest)] = data
            self._last_put = time.monotonic()
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_behind, name="cache-writer", daemon=True)
                self._writer.start()
            self._wake.notify()
        return True

    def busy(self, delta: int) -> None:
        """A request starts (+1) or ends (-1): the writer stays off the CPU while any is solved."""
        with self._wake:
            self._planning = max(0, self._planning + delta)
            self._wake.notify()

    def _write_behind(self) -> None:
        while True:
            with self._wake:
                while not self._pending:
                    self._wake.wait()
                quiet = time.monotonic() - self._last_put
                if (quiet < self.quiet_s or self._planning) and self._pending_bytes < WRITE_BEHIND_MAX_BYTES:
                    self._wake.wait(self.quiet_s if self._planning else self.quiet_s - quiet)
                    continue
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - a failed write never fails a plan; the writer keeps going
                logging.getLogger("buildtool.serve.cache").exception("cache writer")

    def flush(self) -> int:
        """Write every queued entry now (batch, one thread at a time); the number written."""
        n = 0
        with self._write_lock:
            while True:
                with self._wake:
                    if not self._pending:
                        return n
                    (kind, digest), data = next(iter(self._pending.items()))
                try:
                    self._store(kind, digest, data)  # a failed write is counted and logged there
                    n += 1
                finally:
                    with self._wake:  # dropped from the queue once on disk (get() always finds it) or failed
                        publish = False
                        if self._pending.get((kind, digest)) is data:
                            del self._pending[(kind, digest)]
                            self._pending_bytes -= len(data)
                            publish = (kind, digest) in self._publish
                            self._publish.discard((kind, digest))
                if publish:  # after the local write, off the request's path
                    self.remote.put(kind, digest, data[HEADER:])

    def _store(self, kind: str, digest: str, data: bytes) -> bool:
        path = self._path(kind, digest)
        try:
            self._write(path, data)
        except OSError as e:
            with self._lock:
                self.write_errors += 1
                first = self.write_errors == 1
            if first:
                logging.getLogger("buildtool.serve.cache").warning(
                    "the plan cache in %s cannot be written (%s); plans are made but not stored",
                    self.root, e.strerror or e)
            return False
        with self._lock:
            if self._size is None:
                self._size = self._scan_size()
            else:
                self._size += len(data)
            over = self._size > self.cap_bytes
        if over:
            self.evict(keep=path)
        return True

    def _write(self, path: str, data: bytes) -> None:
        d = os.path.dirname(path)
        self._private_dirs(d)
        try:
            fd, tmp = tempfile.mkstemp(dir=d, prefix=f".tmp{os.getpid()}-")
        except (FileNotFoundError, NotADirectoryError):  # removed or damaged since we made it: again
            self._private.clear()
            self._private_dirs(d)
            fd, tmp = tempfile.mkstemp(dir=d, prefix=f".tmp{os.getpid()}-")
        try:
            with os.fdopen(fd, "wb") as f:
                _write_file(f, data)
            try:
                os.replace(tmp, path)
            except OSError as e:
                if e.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST) or not _remove(path):
                    raise
                os.replace(tmp, path)  # a directory stood at the entry's path: it is gone now
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _private_dirs(self, d: str) -> None:
        """Create root .. d, each 0700; replace a non-directory in the way; tighten old 0755 ones."""
        if d in self._private:
            return
        os.makedirs(os.path.dirname(self.root), exist_ok=True)
        chain = [self.root]
        rel = os.path.relpath(d, self.root)
        for part in rel.split(os.sep):
            chain.append(os.path.join(chain[-1], part))
        for p in chain:
            if p in self._private:
                continue
            try:
                os.mkdir(p, 0o700)
            except FileExistsError:
                st = os.stat(p) if p == self.root else os.lstat(p)  # the root may be a symlink (a moved ~/.cache)
                if not stat.S_ISDIR(st.st_mode):
                    if p == self.root:
                        raise NotADirectoryError(errno.ENOTDIR, "not a directory", p) from None
                    _remove(p)  # a damaged store: a file or symlink where a directory belongs
                    os.mkdir(p, 0o700)
                elif p != self.root and st.st_mode & 0o077 and st.st_uid == os.getuid():
                    os.chmod(p, 0o700)  # made 0755 by an older version (the root is the user's choice)
            self._private.add(p)

    def _damaged(self, path: str) -> None:
        try:
            size = os.lstat(path).st_size
        except OSError:
            size = 0
        if _remove(path):
            with self._lock:
                self.corrupt += 1
                if self._size is not None:
                    self._size -= size
        else:
            with self._lock:
                self.corrupt += 1

    def _files(self):
        for root, _dirs, files in os.walk(self.objects):
            for f in files:
                if not _TEMP.match(f):
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
        self.flush()  # counts what is on disk, queued entries included
        n = size = 0
        for p in self._files():
            try:
                size += os.stat(p).st_size
                n += 1
            except OSError:
                pass
        return {"entries": n, "bytes": size, "cap_bytes": self.cap_bytes, "dir": self.root,
                "remote": self.remote.stats() if self.remote is not None else None}

    def clean_temps(self) -> int:
        """Delete temp files left by interrupted writes (writer dead, or older than TEMP_STALE_S)."""
        n, now = 0, time.time()
        for root, _dirs, files in os.walk(self.objects):
            for f in files:
                p = os.path.join(root, f)
                try:
                    stale = _stale_temp(f, os.lstat(p).st_mtime, now)
                except OSError:
                    continue
                if stale and _remove(p):
                    n += 1
        return n

    def clear(self) -> int:
        """Delete every entry, damaged ones (directories, links, misplaced files) included; the
        number removed. Temp files of live writers are left to finish."""
        with self._wake:
            n = len(self._pending)  # queued entries are dropped unwritten
            self._pending.clear()
            self._publish.clear()
            self._pending_bytes = 0
        self.clean_temps()
        for kind in _listdir(self.objects):
            kp = os.path.join(self.objects, kind)
            if not os.path.isdir(kp) or os.path.islink(kp):
                n += _remove(kp)
                continue
            for ab in _listdir(kp):
                ap = os.path.join(kp, ab)
                if not os.path.isdir(ap) or os.path.islink(ap):
                    n += _remove(ap)
                    continue
                for name in _listdir(ap):
                    if not _TEMP.match(name):
                        n += _remove(os.path.join(ap, name))
        with self._lock:
            self._size = None
        return n


class _Flight:
    def __init__(self):
        self.done = threading.Event()
        self.value = None
        self.error = None


class Memo:
    """Shared cache state: hot in-memory entries, a DiskStore (optional), in-flight table, totals."""

    def __init__(self, store: DiskStore | None = None, hot_entries: int = 8192, hot_bytes: int = HOT_BYTES):
        self.store = store
        self.stats = Stats()
        self._hot: collections.OrderedDict = collections.OrderedDict()  # (kind, digest) -> (value, size)
        self._hot_max = hot_entries
        self._hot_bytes_max = hot_bytes
        self._hot_bytes = 0
        self._flights: dict = {}
        self._lock = threading.Lock()

    def session(self, check: Callable | None = None) -> "MemoSession":
        return MemoSession(self, check)

    def get_or_compute(self, kind: str, key, compute: Callable, count: bool = True):
        return self._get(kind, key, compute, [self.stats] if count else [])

    def _get(self, kind: str, key, compute: Callable, stats: list, check: Callable | None = None):
        d = entry_digest(kind, key)
        hk = (kind, d)
        while True:
            if check is not None:
                check()  # raises Cancelled when the request's client has gone
            with self._lock:
                if hk in self._hot:
                    self._hot.move_to_end(hk)
                    value = self._hot[hk][0]
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
            if owner:
                break
            # someone else is solving this very key: wait for their answer (checking our own client)
            while not flight.done.wait(0.2):
                if check is not None:
                    check()
            if isinstance(flight.error, Cancelled):
                continue  # their client went away, ours did not: solve it ourselves
            if flight.error is not None:
                raise flight.error
            self._count(stats, kind, True)
            return flight.value
        try:
            value, size = self.store.get_sized(kind, d) if self.store is not None else (_MISSING, 0)
            hit = value is not _MISSING
            if not hit:
                value, size, packed = _packed_roundtrip(compute())
                if self.store is not None:
                    self.store.put(kind, d, value, packed)
            flight.value = value
            with self._lock:
                self._hot[hk] = (value, size)
                self._hot_bytes += size
                while self._hot and (len(self._hot) > self._hot_max or self._hot_bytes > self._hot_bytes_max):
                    self._hot_bytes -= self._hot.popitem(last=False)[1][1]
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
            self._hot_bytes = 0
        return self.store.clear() if self.store is not None else 0


class MemoSession:
    """One request's view of a shared Memo: same entries, its own counters.

    check(), if given, is called at every get_or_compute (and while waiting for another
    request's answer): the daemon raises Cancelled from it once the client has hung up,
    so abandoned work stops at its next cache look-up and its memory is freed."""

    def __init__(self, shared: Memo, check: Callable | None = None):
        self.shared = shared
        self.stats = Stats()
        self.check = check

    def get_or_compute(self, kind: str, key, compute: Callable, count: bool = True):
        stats = [self.stats, self.shared.stats] if count else []
        return self.shared._get(kind, key, compute, stats, self.check)
