"""The planner daemon: keeps planned answers hot and shares them between builds.

    python -m buildtool.daemon.server [--detach] [--idle S]

One daemon per user: it holds an exclusive flock on daemon.lock for its whole
life and serves daemon.sock (0600) in the private runtime directory. A thread
per connection; requests for the same key are solved once (cache.Memo). A
request that fails, or a malformed message, gets an error reply and never stops
the daemon. It exits after --idle seconds without requests, on SIGTERM, on a
"stop" request, or when a client of another version says hello.

BUILDTOOL_DAEMON_WATCH=0 turns off re-planning of changed models (e.g. on network
file systems without inotify). BUILDTOOL_DAEMON_TEST_DELAY_S (tests only) delays every plan reply so a test can
kill the daemon in the middle of a request.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import logging
import os
import signal
import socket
import sys
import threading
import time
import traceback

from ..canonical import planner_version
from ..errors import BuildtoolError, UsageError
from . import protocol

log = logging.getLogger("buildtool.daemon")
DEFAULT_IDLE_S = 3 * 3600
CONN_TIMEOUT_S = 600
LOG_ROTATE_BYTES = 4 << 20


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Daemon:
    def __init__(self, paths: dict, idle_s: float, cache_dir: str | None, cap_bytes: int):
        from ..cache import DiskStore, Memo

        self.paths = paths
        self.idle_s = idle_s
        self.memo = Memo(DiskStore(cache_dir, cap_bytes))
        self.versions = protocol.versions()
        planner_version()  # fixed now, from the code this process loads
        self.started = time.time()
        self.stop_event = threading.Event()
        self.replans = 0
        self.watcher = None
        self._lock = threading.Lock()
        self._active = 0
        self._last_active = time.monotonic()
        self._delay = float(os.environ.get("BUILDTOOL_DAEMON_TEST_DELAY_S", "0") or 0)
        self._watch_on = os.environ.get("BUILDTOOL_DAEMON_WATCH", "1") not in ("0", "")

    # -- bookkeeping -----------------------------------------------------------
    def _busy(self, delta: int) -> None:
        with self._lock:
            self._active += delta
            self._last_active = time.monotonic()

    def idle_for(self) -> float:
        with self._lock:
            return 0.0 if self._active else time.monotonic() - self._last_active

    def status(self) -> dict:
        store = self.memo.store.stats()
        return {"pid": os.getpid(), "uptime_s": round(time.time() - self.started, 3),
                "entries": store["entries"], "cache_bytes": store["bytes"], "cache_cap_bytes": store["cap_bytes"],
                "cache_dir": store["dir"], "hits": self.memo.stats.hits, "misses": self.memo.stats.misses,
                "corrupt_dropped": self.memo.store.corrupt, "watched": self.watcher.watched if self.watcher else 0,
                "replans": self.replans, "idle_timeout_s": self.idle_s, "log": self.paths["log"],
                "socket": self.paths["socket"], "memory": _rss_bytes(), "planner": planner_version(),
                **self.versions}

    # -- planning ----------------------------------------------------------------
    def plan(self, msg: dict) -> dict:
        from .. import service

        options = msg.get("options") or {}
        if not isinstance(options, dict):
            raise protocol.ProtocolError("plan options must be a map")
        if "model_bytes" in msg:
            model = msg["model_bytes"]
            if not isinstance(model, bytes):
                raise protocol.ProtocolError("model_bytes must be bytes")
        elif isinstance(msg.get("model"), str) and os.path.isabs(msg["model"]):
            model = msg["model"]
        elif isinstance(msg.get("zoo"), str):
            from .. import zoo

            model = msg["zoo"]
            if model not in zoo.names():
                raise UsageError(f"'{model}' is neither a model file nor a zoo name (zoo: {', '.join(zoo.names())})")
        else:
            raise protocol.ProtocolError("a plan request needs an absolute model path, model_bytes or a zoo name")
        if self._delay:
            time.sleep(self._delay)
        result = service.plan_request(model, options, self.memo.session())
        if "model" in msg and self._watch_on:
            self._watch(model, service.normalize_options(options))
        return result

    def _watch(self, path: str, options: dict) -> None:
        with self._lock:
            if self.watcher is None:
                from .watch import ModelWatcher

                self.watcher = ModelWatcher(self._replan)
        self.watcher.watch(path, options)

    def _replan(self, path: str, options_list: list) -> None:
        from .. import service

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
        conn.settimeout(CONN_TIMEOUT_S)
        try:
            hello = protocol.recv(conn)
            if hello is None:
                return
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
                msg = protocol.recv(conn)
                if msg is None:
                    return
                protocol.send(conn, self.answer(msg))
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
        finally:
            conn.close()

    def answer(self, msg: dict) -> dict:
        t = msg["type"]
        self._busy(+1)
        try:
            if t == "plan":
                return {"type": "result", "result": self.plan(msg)}
            if t == "status":
                return {"type": "status", "status": self.status()}
            if t == "clear":
                return {"type": "ok", "removed": self.memo.clear()}
            if t in ("stop", "ping"):
                return {"type": "ok"}
            return {"type": "error", "error": f"unknown request type '{t}'", "kind": "ProtocolError"}
        except BuildtoolError as e:
            return {"type": "error", "error": str(e), "kind": type(e).__name__}
        except Exception as e:
            log.error("internal error on %s request:\n%s", t, traceback.format_exc())
            return {"type": "error", "kind": "BuildtoolError",
                    "error": f"internal error in the planner daemon ({type(e).__name__}: {e}); "
                             f"see {self.paths['log']}, or run with --no-daemon"}
        finally:
            self._busy(-1)

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(0.25)
        while not self.stop_event.is_set():
            if self.idle_for() > self.idle_s:
                log.info("idle for %.0f s: exiting", self.idle_s)
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
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m buildtool.daemon.server")
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
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format=f"%(asctime)s [{os.getpid()}] %(levelname)s %(message)s")
    lock_fd = _take_lock(p["lock"])
    if lock_fd is None:
        log.info("another daemon holds %s: not starting a second one", p["lock"])
        return 0
    listener = _listen(p["socket"])
    ino = os.stat(p["socket"]).st_ino
    d = Daemon(p, a.idle, a.cache_dir, int(a.cache_cap_mb * (1 << 20)))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: d.stop_event.set())
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    log.info("serving %s (versions %s, cache %s, idle timeout %.0f s)", p["socket"], d.versions,
             d.memo.store.root, a.idle)
    try:  # warm imports before the first request; if one fails, requests report it (and the log has it)
        for name in ("arena", "service", "tflite_reader"):
            importlib.import_module(f"buildtool.{name}")
    except Exception:
        log.error("cannot import the planner:\n%s", traceback.format_exc())
    try:
        d.serve(listener)
    finally:
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
        log.info("stopped")
        os.close(lock_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
