"""Writing output files: the one atomic write every output of buildtool goes through.

write_atomic(path, data) writes a temp file beside path, named `.NAME.tmp<pid>-<random>` so it
can be recognised, fsyncs it and renames it over path: a reader sees the old file or the new
one, never half of one. On any exception (KeyboardInterrupt included) the temp file is removed;
a writer killed outright (SIGKILL, power loss) leaves its temp file behind, and the next write
of the same target removes it once its writer's pid is gone or it is older than an hour, so at
most one such file per target outlives its writer until the next write.

A write that fails (no such directory, a directory in the way, a full disk, a read-only file
system, no permission) raises WriteError: one line naming the path and what to do; the old
target, if any, is left as it was.

What stands at the path is never replaced by something else (where_to_write):
- a regular file, or nothing: the atomic write above;
- a symlink: its target is written atomically (the link stays a link; a dangling link's target is
  made), or through it as below when the target is not a regular file;
- a FIFO or a character device (`-o /dev/null`, `-o /dev/stdout`, a named pipe), and any path through
  /proc (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`): written through, as the shell's `>` does (a
  FIFO waits for its reader; a device's error, e.g. /dev/full's, is the one WriteError line); nothing
  else is made beside it (no seal, no temp file);
- a directory, a block device or a socket: one WriteError line, nothing written.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .errors import BuildtoolError

TEMP_STALE_S = 3600  # a temp file this old is left over even if a process with its pid is alive (pid reuse)
_HINTS = {errno.ENOSPC: "free some space or write elsewhere", errno.EDQUOT: "free some space or write elsewhere",
          errno.EROFS: "choose a writable directory", errno.EACCES: "choose a directory you may write to",
          errno.EPERM: "choose a directory you may write to", errno.ENAMETOOLONG: "choose a shorter name"}


class WriteError(BuildtoolError):
    """An output file or directory cannot be written."""


_client = threading.local()  # .umask: the daemon's thread writing for a client (client_umask)


@contextmanager
def for_client(key: str, value):
    """What this thread does inside is done for a client (the daemon serving another process): the
    setting key (umask, package) holds value, then its old value again."""
    old = getattr(_client, key, None)
    setattr(_client, key, value)
    try:
        yield
    finally:
        setattr(_client, key, old)


def client_setting(key: str):
    """The value for_client set for this thread (None outside it)."""
    return getattr(_client, key, None)


def client_umask(umask: int | None):
    """Files and directories this thread creates inside get the permission bits a process with this
    umask would give them (the daemon writes build outputs for its clients; None: this process's own)."""
    return for_client("umask", umask)


def write_error(path, e: OSError, what: str = "write") -> WriteError:
    """The one-line WriteError for an OSError met while writing path."""
    path = os.fspath(path)
    d = os.path.dirname(path) or "."
    if isinstance(e, IsADirectoryError) or os.path.isdir(path):
        return WriteError(f"cannot {what} {path}: it is a directory; give a file name")
    if isinstance(e, (FileNotFoundError, NotADirectoryError)) and not os.path.isdir(d):
        if os.path.lexists(d):
            return WriteError(f"cannot {what} {path}: {d} is not a directory; choose another path")
        return WriteError(f"cannot {what} {path}: directory {d} does not exist; create it or choose another path")
    hint = _HINTS.get(e.errno)
    return WriteError(f"cannot {what} {path}: {e.strerror or e}" + (f"; {hint}" if hint else ""))


def temp_prefix(path) -> str:
    """The name every temp file of path starts with (its directory's entries are matched against it)."""
    return f".{os.path.basename(os.fspath(path))}.tmp"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except OverflowError:
        return False
    return True


def clean_stale(path) -> int:
    """Remove the temp files of path left by writers that died (or older than TEMP_STALE_S); how many."""
    path = os.fspath(path)
    d = os.path.dirname(path) or "."
    pat = re.compile(re.escape(temp_prefix(path)) + r"(\d{1,10})-[0-9a-f]{8}$")
    removed = 0
    try:
        entries = list(os.scandir(d))
    except OSError:
        return 0
    now = time.time()
    for e in entries:
        m = pat.match(e.name)
        if not m:
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            pid = int(m.group(1))
            if (pid != os.getpid() and not _pid_alive(pid)) or now - st.st_mtime > TEMP_STALE_S:
                os.unlink(e.path)
                removed += 1
        except OSError:
            pass  # gone already, or not ours to remove
    return removed


def _open_temp(path: str, mode: int | None) -> tuple:
    prefix = os.path.join(os.path.dirname(path), f"{temp_prefix(path)}{os.getpid()}-")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = prefix + os.urandom(4).hex()
        try:
            return os.open(tmp, flags, 0o666 if mode is None else 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temp file name", prefix)


_MAX_LINKS = 40  # symlinks followed before a path counts as a loop (Linux's own limit)
_KINDS = ((stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _through_proc(p: str) -> bool:
    d = os.path.realpath(os.path.dirname(p) or ".")
    return d == "/proc" or d.startswith("/proc/")


def where_to_write(path) -> tuple:
    """(how, target) for a write to path: ("replace", file) -- the atomic write of file (path itself,
    or a symlink's final target) -- or ("through", path) -- open path and write into it (a FIFO, a
    character device, a path through /proc). WriteError when nothing may be written there."""
    path = os.fspath(path)
    p = path
    for _ in range(_MAX_LINKS):
        if _through_proc(p):
            return "through", path  # /dev/stdout, /dev/fd/N: the kernel's magic links to an open file
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return "replace", p
        except OSError as e:
            raise write_error(path, e) from None
        if stat.S_ISLNK(st.st_mode):
            try:
                p = os.path.join(os.path.dirname(p), os.readlink(p))
            except OSError as e:
                raise write_error(path, e) from None
            continue
        if stat.S_ISREG(st.st_mode):
            return "replace", p
        if stat.S_ISDIR(st.st_mode):
            raise write_error(path, IsADirectoryError(errno.EISDIR, "Is a directory"))
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
            return "through", path
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
        raise WriteError(f"cannot write {path}: it is {kind}; give a regular file, a FIFO or a character device")
    raise write_error(path, OSError(errno.ELOOP, "Too many levels of symbolic links"))


def writes_through(path) -> bool:
    """Whether a write to path goes into what stands there (a FIFO, a device, /dev/stdout) rather
    than replacing a regular file: nothing is to be made beside such an output (a seal, a figure)."""
    try:
        return where_to_write(path)[0] == "through"
    except WriteError:
        return False


def _write_through(path: str, data: bytes) -> None:
    """Write data into what stands at path (a FIFO waits for its reader, as the shell's `>` does)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise write_error(path, e) from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        raise WriteError(f"cannot write {path}: its reader closed it before the end; keep the reader open") from None
    except OSError as e:
        raise write_error(path, e) from None
    finally:
        os.close(fd)


def write_atomic(path, data, mode: int | None = None) -> None:
    """Write data (bytes, or str as UTF-8) to path atomically; mode: the file's permission bits
    (None: 0666 less the umask, as open() gives). What stands at path is never replaced by another
    kind of file (where_to_write: a symlink's target is written, a FIFO or device written through).
    Raises WriteError naming path on failure."""
    path = os.fspath(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    how, target = where_to_write(path)
    if how == "through":
        _write_through(target, data)
        return
    path = target
    if mode is None and getattr(_client, "umask", None) is not None:
        mode = 0o666 & ~_client.umask
    if os.path.isdir(path):
        raise write_error(path, IsADirectoryError(errno.EISDIR, "Is a directory"))
    clean_stale(path)
    try:
        fd, tmp = _open_temp(path, mode)
    except OSError as e:
        raise write_error(path, e) from None
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise write_error(path, e) from None
        raise
    _sync_dir(os.path.dirname(path) or ".")


def _sync_dir(d: str) -> None:
    """Make the rename itself durable; best effort (not every file system lets a directory be fsynced)."""
    try:
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def makedirs_private(path) -> None:
    """Create path and every missing parent, each one made here 0700 (existing ones are left as they are)."""
    _makedirs(path, 0o700)


def make_dirs(path, what: str = "create the build directory") -> None:
    """Create an output directory and its missing parents (0777 less the umask: a client's, under
    client_umask). Raises WriteError naming the path on failure."""
    u = getattr(_client, "umask", None)
    try:
        _makedirs(path, 0o777 if u is None else 0o777 & ~u, exact=u is not None)
    except OSError as e:
        raise write_error(path, e, what) from None
    if not os.path.isdir(path):
        raise WriteError(f"cannot {what} {os.fspath(path)}: a file is in the way; choose another path")


def _makedirs(path, mode: int, exact: bool = False) -> None:
    path = os.path.abspath(os.fspath(path))
    missing = []
    while not os.path.lexists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for p in reversed(missing):
        try:
            os.mkdir(p, mode)
        except FileExistsError:
            continue
        if exact:  # (mkdir's mode is cut by this process's umask)
            os.chmod(p, mode)


def stdout_error(stream, e: OSError, name: str = "standard output") -> WriteError:
    """The one line for a failed write to an output stream; the stream is pointed at /dev/null, so
    the interpreter's flush at exit does not print a second error."""
    _silence(stream)
    return WriteError(f"cannot write to {name}: {e.strerror or e}"
                      + (f"; {_HINTS[e.errno]}" if e.errno in _HINTS else ""))


class _GuardedStream:
    """sys.stdout whose write errors (a full disk, an I/O error) become one WriteError line.
    A closed pipe stays BrokenPipeError: the reader went away, which is not an error of ours."""

    def __init__(self, stream, name: str):
        self._stream, self._name = stream, name

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise stdout_error(self._stream, e, self._name) from None

    def write(self, s):
        return self._call(self._stream.write, s)

    def flush(self):
        return self._call(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _silence(stream) -> None:
    """Point the failed stream's descriptor at /dev/null, so that the interpreter's own flush at exit
    does not print a second error (what it still buffers cannot be written anyway)."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError, AttributeError):  # a test's capture stream has no descriptor
        pass


class guarded_stdout:
    """with guarded_stdout(): ... -- output errors on stdout inside (and at the final flush) are WriteErrors."""

    def __enter__(self):
        self._old = sys.stdout
        sys.stdout = _GuardedStream(self._old, "standard output")
        return sys.stdout

    def __exit__(self, *exc):
        guarded, sys.stdout = sys.stdout, self._old
        if exc[0] is None:
            guarded.flush()
        return False


def write_if_changed(path, data) -> None:
    """write_atomic, but an unchanged file is left untouched (its mtime too: make-like tools and
    Ninja's restat stop there)."""
    path = Path(path)
    data = data.encode() if isinstance(data, str) else data
    try:
        if not writes_through(path) and path.is_file() and path.read_bytes() == data:
            return
    except OSError:
        pass  # unreadable: write it
    write_atomic(path, data)
