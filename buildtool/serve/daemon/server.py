"""The planner daemon: keeps planned answers hot and shares them between builds.

    cli.served.server_main([--detach] [--idle S])   (what serve.daemon.client spawns)

One daemon per user: it holds an exclusive flock on daemon.lock for its whole
life and serves daemon.sock (0600) in the private runtime directory; if either
file is removed or replaced under it, it exits (a second daemon may own them now).
A thread per connection (at most MAX_CONNECTIONS). A connection idle between messages
(its hello not sent yet, or waiting for its next request) is closed after IDLE_CONN_S,
a message must arrive whole within MESSAGE_S of its first byte, and a new connection
when MAX_CONNECTIONS are open closes the longest-idle one to get in (its client
reconnects on its next request), so idle or stalled clients never keep a plan or
`daemon status` out; only MAX_CONNECTIONS connections all at work refuse one. At most MAX_PLANS plans at
once; requests for the same key are solved once (cache.Memo). A request whose
client hangs up is cancelled at its next cache look-up (cache.Cancelled), so
abandoned work stops and its memory is freed. A request that fails, a malformed
message, or any exception in a connection thread is logged and answered with an
error and never stops the daemon. The log rotates to daemon.log.1 past
LOG_ROTATE_BYTES. It exits after --idle seconds without requests, on SIGTERM or SIGINT, on a
"stop" request, or when a client of another version says hello. A signal also ends the team-cache
requests in flight at once (remote_cache.RemoteCache.abort: they are only an accelerator), so the
daemon never waits on a slow server to stop; a "stop" request still publishes what it flushes.

BUILDTOOL_DAEMON_WATCH=0 turns off re-planning of changed models (e.g. on network
file systems without inotify). BUILDTOOL_DAEMON_TEST_DELAY_S (tests only) delays every plan reply so a test can
kill the daemon in the middle of a request; the delay is a cancellation check point.
BUILDTOOL_DAEMON_LOG_MAX_BYTES overrides LOG_ROTATE_BYTES.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import resource
import select
import signal
import socket
import sys
import threading
import time
import traceback

from dataclasses import dataclass

from ... import steps, zoo
from ...errors import BuildtoolError, UsageError
from ...fsutil import client_umask
from ...plan.canonical import planner_version
from .. import service
from ..cache import Cancelled, DiskStore, Memo
from . import protocol
from .watch import ModelWatcher

log = logging.getLogger("buildtool.serve.daemon")
DEFAULT_IDLE_S = 3 * 3600
CONN_TIMEOUT_S = 600  # sending a reply to a client that does not read it
IDLE_CONN_S = 30.0  # a connection waiting for its next message (or its hello) this long is closed
MESSAGE_S = 30.0  # a message's bytes must all arrive within this of its first
LOG_ROTATE_BYTES = 4 << 20
MAX_CONNECTIONS = 64
MAX_PLANS = max(2, os.cpu_count() or 1)  # plans solved at once; more requests wait (bounds memory and CPU)


def client_gone(conn: socket.socket) -> bool:
    """True once the peer has hung up. Our client sends nothing while it waits for an answer,
    so a readable socket means end of file (or a reset)."""
    try:
        ready = select.poll()
        ready.register(conn, select.POLLIN | select.POLLHUP | select.POLLERR)
        if not ready.poll(0):
            return False
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class _RotatingLog(logging.StreamHandler):
    """Log lines to stderr (the log file, when detached); past max_bytes the file moves to .1 and a new
    one takes over fds 1 and 2, so tracebacks written straight to stderr rotate with it."""

    def __init__(self, path: str, max_bytes: int):
        super().__init__(sys.stderr)
        self.path, self.max_bytes = path, max_bytes

    def emit(self, record):
        super().emit(record)
        try:
            if os.fstat(2).st_size > self.max_bytes and os.fstat(2).st_ino == os.stat(self.path).st_ino:
                sys.stderr.flush()
                os.replace(self.path, self.path + ".1")
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.close(fd)
        except OSError:
            pass


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@dataclass(frozen=True)
class Shell:
    """The command-line side the daemon runs for its clients, handed in by the process that starts it
    (cli.served.server_main): the server sits below the CLI and never imports it."""

    serve: object  # cli.served.serve(argv, cwd, planner, gen_planner) -> {"lines", "exit"} | None
    step_args: object  # cli.gen_steps.step_args(args) -> the parsed step of a `gen` request
    run_step: object  # cli.gen_steps.run_step(parsed, planner, say)


class Daemon:
    def __init__(self, paths: dict, idle_s: float, cache_dir: str | None, cap_bytes: int, shell: Shell | None = None):
        self.shell = shell
        self.paths = paths
        self.idle_s = idle_s
        self.memo = Memo(DiskStore(cache_dir, cap_bytes, write_behind=True))  # written after the answer
        self.versions = protocol.versions()
        planner_version()  # fixed now, from the code this process loads
        self.started = time.time()
        self.stop_event = threading.Event()
        self.signalled = None  # the signal that stopped the daemon, if one did
        self.replans = 0
        self.watcher = None
        self._lock = threading.Lock()
        self._active = 0
        self._connections = 0
        self._idle: dict = {}  # connection -> since when it waits for a message (monotonic)
        self._slots = threading.BoundedSemaphore(MAX_PLANS)
        self._last_active = time.monotonic()
        self._delay = float(os.environ.get("BUILDTOOL_DAEMON_TEST_DELAY_S", "0") or 0)
        self._watch_on = os.environ.get("BUILDTOOL_DAEMON_WATCH", "1") not in ("0", "")

    def interrupt(self, signum, _frame=None) -> None:
        """SIGTERM/SIGINT: stop serving, and end the team cache's requests in flight now (lock-free,
        as a signal handler must be: abort() shuts their sockets down)."""
        self.signalled = signum
        self.stop_event.set()
        remote = self.memo.store.remote
        if remote is not None:
            remote.abort()

    # -- bookkeeping -----------------------------------------------------------
    def _busy(self, delta: int) -> None:
        with self._lock:
            self._active += delta
            self._last_active = time.monotonic()
        if delta:
            self.memo.store.busy(delta)  # the cache writer waits until no plan is being solved

    def idle_for(self) -> float:
        with self._lock:
            return 0.0 if self._active else time.monotonic() - self._last_active

    def status(self) -> dict:
        store = self.memo.store.stats()
        return {"pid": os.getpid(), "uptime_s": round(time.time() - self.started, 3),
                "entries": store["entries"], "cache_bytes": store["bytes"], "cache_cap_bytes": store["cap_bytes"],
                "cache_dir": store["dir"], "hits": self.memo.stats.hits, "misses": self.memo.stats.misses,
                "corrupt_dropped": self.memo.store.corrupt, "cache_write_errors": self.memo.store.write_errors,
                "remote": store["remote"],  # the team cache: url, write, down, hits, misses, corrupt, errors, ...
                "watched": self.watcher.watched if self.watcher else 0,
                "replans": self.replans, "idle_timeout_s": self.idle_s, "log": self.paths["log"],
                "socket": self.paths["socket"], "memory": _rss_bytes(), "planner": planner_version(),
                **self.versions}

    # -- planning ----------------------------------------------------------------
    def _cancel_check(self, conn: socket.socket | None):
        """A check that raises cache.Cancelled once the client has hung up (planners call it often)."""
        def check():
            if conn is not None and client_gone(conn):
                raise Cancelled("the client hung up")
        return check

    @contextlib.contextmanager
    def _planning_slot(self, check):
        """Hold one of MAX_PLANS planning slots (waited for while the client waits; then the test delay)."""
        while not self._slots.acquire(timeout=0.2):
            check()
        try:
            check()  # the client may have gone while we waited
            deadline = time.monotonic() + self._delay
            while time.monotonic() < deadline:
                check()
                time.sleep(0.05)
            yield
        finally:
            self._slots.release()

    def plan(self, msg: dict, conn: socket.socket | None = None) -> dict:
        check = self._cancel_check(conn)
        options = msg.get("options") or {}
        if not isinstance(options, dict):
            raise protocol.ProtocolError("plan options must be a map")
        source = protocol.from_wire(msg.get("source"))
        if source is not None and not isinstance(source, str):
            raise protocol.ProtocolError("source must be a string")
        model = protocol.from_wire(msg.get("model"))
        if "model_bytes" in msg:
            model = msg["model_bytes"]
            if not isinstance(model, bytes):
                raise protocol.ProtocolError("model_bytes must be bytes")
        elif isinstance(model, str) and os.path.isabs(model):
            pass
        elif isinstance(msg.get("zoo"), str):
            model = msg["zoo"]
            if model not in zoo.names(large=True):
                raise UsageError(f"'{model}' is neither a model file nor a zoo name "
                                 f"(zoo: {', '.join(zoo.names(large=True))})")
        else:
            raise protocol.ProtocolError("a plan request needs an absolute model path, model_bytes or a zoo name")
        with self._planning_slot(check):
            result = service.plan_request(model, options, self.memo.session(check), source=source)
        if "model" in msg and self._watch_on:
            self._watch(model, service.normalize_options(options))
        return result

    def gen(self, msg: dict, conn: socket.socket | None = None) -> dict:
        """Run one `buildtool gen` step for a client (its paths absolute); its plan step plans
        through this daemon's memo, in a planning slot. The reply: the step done and its notes (lines
        the client prints) and the SHA-256 of every file it wrote, as this process sees it (the client
        checks it sees the same: protocol.gen_outputs)."""
        if self.shell is None:
            raise protocol.ProtocolError("this daemon was started without the command line: it plans only")
        check = self._cancel_check(conn)
        raw = msg.get("args")
        try:
            a = self.shell.step_args({k: protocol.from_wire(v) for k, v in raw.items()}
                                     if isinstance(raw, dict) else raw)
        except ValueError as e:
            raise protocol.ProtocolError(str(e)) from None

        # its files as the client would have made them; its depfile naming the client's install
        notes = []
        with client_umask(protocol.umask_of(msg)), steps.sources_for(protocol.package_of(msg)):
            self.shell.run_step(a, self._gen_planner(check), notes.append)
        return {"type": "ok", "done": a.step, "notes": notes,
                "outputs": protocol.output_digests(protocol.gen_outputs(vars(a)))}

    def _gen_planner(self, check):
        """How a gen step run here plans: through this daemon's memo, in a planning slot."""
        def planner(graph, options):
            with self._planning_slot(check):
                return service.plan_request(graph, options.to_map(), self.memo.session(check))

        return planner

    def cli(self, msg: dict, conn: socket.socket | None = None) -> dict | None:
        """Run a client's command line (cli.served.serve; its plans through plan() above): the lines to
        print and the exit status, or None when the client must run it itself."""
        if self.shell is None:
            return None  # a daemon started without the command line plans only: the client runs it
        argv, cwd = protocol.from_wire(msg.get("argv")), protocol.from_wire(msg.get("cwd"))
        if not (isinstance(argv, list) and all(isinstance(x, str) for x in argv)
                and isinstance(cwd, str) and os.path.isabs(cwd)):
            raise protocol.ProtocolError("a cli request needs argv (strings) and an absolute cwd")

        def planner(model, options, source):  # cli.served.serve made a model file's path absolute (client's cwd)
            return self.plan(protocol.plan_message(model, options, source, zoo=not os.path.isabs(model)), conn)

        with client_umask(protocol.umask_of(msg)), steps.sources_for(protocol.package_of(msg)):
            r = self.shell.serve(argv, cwd, planner, self._gen_planner(self._cancel_check(conn)))
        if r is not None:
            r["lines"] = [[bool(err), protocol.to_wire(text)] for err, text in r["lines"]]
        return r

    def _watch(self, path: str, options: dict) -> None:
        with self._lock:
            if self.watcher is None:
                self.watcher = ModelWatcher(self._replan)
        self.watcher.watch(path, options)

    def _replan(self, path: str, options_list: list) -> None:
        self._busy(+1)
        try:
            for opts in options_list:
                r = service.plan_request(path, opts, self.memo.session())
                log.info("re-planned %s after a change: %s in %.1f ms", path, r["cache"], r["plan_ms"])
            with self._lock:
                self.replans += 1
        finally:
            self._busy(-1)

    # -- connections -------------------------------------------------------------
    def handle(self, conn: socket.socket) -> None:
        try:
            self._serve_connection(conn)
        except BaseException as e:  # nothing may end a connection thread silently (MemoryError included)
            try:
                log.error("connection thread failed:\n%s", traceback.format_exc())
                protocol.send(conn, {"type": "error", "kind": "InternalError",
                                     "error": _internal_error(e, self.paths["log"])})
            except BaseException:
                pass
        finally:
            conn.close()
            with self._lock:
                self._connections -= 1

    def _next_message(self, conn: socket.socket) -> dict | None:
        """The connection's next message, or None when its client closed it, was idle past IDLE_CONN_S
        or was closed to make room (evict_idle). While it waits it counts as idle."""
        with self._lock:
            self._idle[conn] = time.monotonic()
        try:
            conn.settimeout(IDLE_CONN_S)
            try:
                return protocol.recv(conn, MESSAGE_S, self._got_bytes(conn), request=True)
            except socket.timeout:
                log.info("closed a connection idle for %.0f s", IDLE_CONN_S)
                return None
        finally:
            with self._lock:
                self._idle.pop(conn, None)

    def _got_bytes(self, conn: socket.socket):
        """Called once a message's first bytes arrived: the connection is at work, no longer idle."""
        def busy():
            with self._lock:
                self._idle.pop(conn, None)
        return busy

    def evict_idle(self) -> bool:
        """Close the longest-idle connection (to let a new one in); False when none is idle."""
        with self._lock:
            if not self._idle:
                return False
            conn = min(self._idle, key=self._idle.get)
            del self._idle[conn]
        try:
            conn.shutdown(socket.SHUT_RDWR)  # its thread's recv returns at once; the thread closes it
        except OSError:
            pass
        log.info("closed an idle connection: %d are open", MAX_CONNECTIONS)
        return True

    def _serve_connection(self, conn: socket.socket) -> None:
        conn.settimeout(CONN_TIMEOUT_S)
        try:
            hello = self._next_message(conn)
            if hello is None:
                return
            conn.settimeout(CONN_TIMEOUT_S)
            if hello.get("type") != "hello":
                protocol.send(conn, {"type": "error", "error": "expected a hello message first"})
                return
            theirs = {k: hello.get(k) for k in self.versions}
            ok = theirs == self.versions
            protocol.send(conn, {"type": "hello", "ok": ok, "pid": os.getpid(), "planner": planner_version(),
                                 **self.versions})
            if not ok:
                log.info("client of another version %s (ours %s): exiting so it can start its own",
                         theirs, self.versions)
                self.stop_event.set()
                return
            while not self.stop_event.is_set():
                msg = self._next_message(conn)
                if msg is None:
                    return
                conn.settimeout(CONN_TIMEOUT_S)
                protocol.send(conn, self.answer(msg, conn))
                if msg["type"] == "stop":
                    self.stop_event.set()
                    return
        except protocol.ProtocolError as e:  # cannot resynchronise: say why, then hang up
            log.info("refused a message: %s", e)
            try:
                protocol.send(conn, {"type": "error", "error": str(e), "kind": "ProtocolError"})
            except OSError:
                pass
        except (OSError, protocol.ConnectionLost) as e:
            log.info("connection ended: %s", e)

    def answer(self, msg: dict, conn: socket.socket | None = None) -> dict:
        t = msg["type"]
        self._busy(+1)
        try:
            if t == "plan":
                return {"type": "result", "result": self.plan(msg, conn)}
            if t == "gen":
                return self.gen(msg, conn)
            if t == "cli":
                return {"type": "cli", **(self.cli(msg, conn) or {"lines": None})}
            if t == "status":
                return {"type": "status", "status": self.status()}
            if t == "clear":
                return {"type": "ok", "removed": self.memo.clear()}
            if t in ("stop", "ping"):
                return {"type": "ok"}
            return {"type": "error", "error": f"unknown request type '{t}'", "kind": "ProtocolError"}
        except BuildtoolError as e:
            return {"type": "error", "error": protocol.to_wire(str(e)), "kind": type(e).__name__}
        except Cancelled:
            log.info("%s request cancelled: its client hung up", t)
            return {"type": "error", "error": "cancelled: the client hung up", "kind": "BuildtoolError"}
        except Exception as e:
            log.error("internal error on %s request:\n%s", t, traceback.format_exc())
            return {"type": "error", "kind": "InternalError", "error": _internal_error(e, self.paths["log"])}
        finally:
            self._busy(-1)

    def still_owner(self, lock_fd: int, sock_ino: int) -> bool:
        """Our lock file and socket are still the ones at their paths (not deleted or replaced)."""
        try:
            return (os.stat(self.paths["lock"]).st_ino == os.fstat(lock_fd).st_ino
                    and os.stat(self.paths["socket"]).st_ino == sock_ino)
        except OSError:
            return False

    def serve(self, listener: socket.socket, lock_fd: int | None = None, sock_ino: int | None = None) -> None:
        listener.settimeout(0.25)
        while not self.stop_event.is_set():
            if self.idle_for() > self.idle_s:
                log.info("idle for %.0f s: exiting", self.idle_s)
                break
            if lock_fd is not None and not self.still_owner(lock_fd, sock_ino):
                log.warning("%s or %s was removed or replaced: exiting (another daemon may own them)",
                            self.paths["lock"], self.paths["socket"])
                break
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError as e:
                log.warning("accept failed: %s", e)
                time.sleep(0.1)
                continue
            self._busy(0)
            with self._lock:
                full = self._connections >= MAX_CONNECTIONS
            if full and self.evict_idle():  # room for this one: the evicted thread ends at once
                full = False
            with self._lock:
                if not full:
                    self._connections += 1
            if full:
                log.warning("refused a connection: %d are open", MAX_CONNECTIONS)
                try:
                    protocol.send(conn, {"type": "error", "kind": "InternalError", "error":
                                         f"the planner daemon is serving {MAX_CONNECTIONS} connections; try again"})
                except OSError:
                    pass
                conn.close()
                continue
            try:
                threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
            except Exception as e:  # e.g. no memory for a thread: refuse this one, keep serving
                log.error("cannot serve a connection: %s", e)
                with self._lock:
                    self._connections -= 1
                conn.close()


def _internal_error(e: BaseException, log_path: str) -> str:
    what = " ".join(f"{type(e).__name__}: {e}".split())[:300]
    return protocol.to_wire(f"internal error in the planner daemon ({what}); see {log_path}, "
                            f"or run with --no-daemon")


def _detach(log_path: str) -> None:
    """Double fork + setsid: no controlling terminal, not a child of the build, stdio to the log."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    os.chdir("/")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)


def _take_lock(path: str, wait_s: float = 0.1):
    """The one-daemon-per-user lock, or None if another daemon holds it.

    The short wait covers a client's lock probe (client._lock_free), held for microseconds."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.02)


def _listen(path: str) -> socket.socket:
    try:  # we hold the lock, so anything at the socket path is left over from a dead daemon
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        s.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    s.listen(64)
    return s


def main(argv=None, shell: Shell | None = None) -> int:
    """The daemon process; shell: what it runs for clients' command lines and gen steps (without one,
    plan requests only)."""
    ap = argparse.ArgumentParser(prog="python -m buildtool.cli.daemon")
    ap.add_argument("--detach", action="store_true", help="double-fork into the background")
    ap.add_argument("--idle", type=float, default=float(os.environ.get("BUILDTOOL_DAEMON_IDLE_S", DEFAULT_IDLE_S)),
                    help="exit after this many seconds without requests")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--cache-cap-mb", type=float, default=float(os.environ.get("BUILDTOOL_CACHE_CAP_MB", 512)))
    a = ap.parse_args(argv)
    p = protocol.paths()
    try:
        if os.path.getsize(p["log"]) > LOG_ROTATE_BYTES:
            os.replace(p["log"], p["log"] + ".1")
    except OSError:
        pass
    if a.detach:
        _detach(p["log"])
    handler = (_RotatingLog(p["log"], int(os.environ.get("BUILDTOOL_DAEMON_LOG_MAX_BYTES") or LOG_ROTATE_BYTES))
               if a.detach else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter(f"%(asctime)s [{os.getpid()}] %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    threading.excepthook = lambda h: log.error("thread %s died:\n%s", h.thread and h.thread.name, "".join(
        traceback.format_exception(h.exc_type, h.exc_value, h.exc_traceback)))
    lock_fd = _take_lock(p["lock"])
    if lock_fd is None:
        log.info("another daemon holds %s: not starting a second one", p["lock"])
        return 0
    listener = _listen(p["socket"])
    ino = os.stat(p["socket"]).st_ino
    d = Daemon(p, a.idle, a.cache_dir, int(a.cache_cap_mb * (1 << 20)), shell)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, d.interrupt)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    log.info("serving %s (versions %s, cache %s, idle timeout %.0f s)", p["socket"], d.versions,
             d.memo.store.root, a.idle)

    def clean():
        n = d.memo.store.clean_temps()
        if n:
            log.info("removed %d temp files left by interrupted cache writes", n)

    threading.Thread(target=clean, name="clean-temps", daemon=True).start()  # off the first request's path
    try:
        d.serve(listener, lock_fd, ino)
    finally:
        if d.signalled is not None:
            log.info("stopping on %s", signal.Signals(d.signalled).name)
        listener.close()
        try:
            if os.stat(p["socket"]).st_ino == ino:
                os.unlink(p["socket"])
        except OSError:
            pass
        if d.watcher:
            d.watcher.stop()
        deadline = time.monotonic() + 5
        while d.idle_for() == 0.0 and time.monotonic() < deadline:  # let running requests answer
            time.sleep(0.05)
        try:  # the write-behind queue goes to disk before the lock is released
            n = d.memo.store.flush()
            if n:
                log.info("wrote %d queued cache entries", n)
        except Exception:  # noqa: BLE001 - never keeps the daemon from stopping
            log.error("cache flush failed:\n%s", traceback.format_exc())
        log.info("stopped")
        os.close(lock_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
