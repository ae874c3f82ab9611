"""Client side of the planner daemon: find or start it, ask, and turn failures into one-line errors.

    plan(model, options, no_daemon=False) -> {"plan", "cache", "plan_ms"}

The daemon is only a speed-up: plan(..., no_daemon=True) calls service.plan_request
in this process and returns the same plan bytes. Starting: when nothing answers on
the socket and no daemon holds the lock, the client launches the server module of
this very buildtool (its package directory first on sys.path, so a daemon started
from another checkout's root imports the same code) with --detach (it double-forks
away) and polls the socket with a deadline. A daemon of another version exits when
we say hello; a stale socket is removed by the new daemon. A client starts at most
one daemon per connection: one that exits at once, runs other code or does not answer
raises DaemonUnavailable, and plan() then warns once and plans in its own process (as
it does when the runtime directory is unusable). If the daemon dies in the middle of
a request, the request is sent once more to a freshly started daemon.

Model paths travel absolute, with the path as typed ("source") for messages, so the
daemon's errors read exactly like in-process ones; paths and messages that are not
UTF-8 travel as bytes (protocol.to_wire).

Waiting stays interruptible (interruptible()): while a client in the main thread waits for the
daemon (its start or its answer), SIGINT and SIGTERM end the wait at once, so Ctrl-C or a kill never
has to wait for a slow plan. In a process of its own (the CLI) the wait raises Interrupted, a
KeyboardInterrupt the command line reports in one line (exit 128 + the signal's number); in a host
with a handler of its own (SCons marks its build interrupted) that handler runs first and the wait
then raises WaitInterrupted, a BuildtoolError the host reports as a failed step. A signal the process
ignores stays ignored. Closing the connection makes the daemon cancel the request. (A client in
another thread cannot install handlers: its wait is bounded by the daemon's answer.)

Only light modules are imported here, so a warm request costs milliseconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import sys
import threading
import time

import msgpack

from ... import errors
from ...errors import BuildtoolError
from . import protocol

START_TIMEOUT_S = 15.0
REPLY_TIMEOUT_S = 3600.0
RESPAWN_GAP_S = 5.0  # a daemon still importing under load must not get a twin
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_SERVER = "import sys; sys.path.insert(0, sys.argv.pop(1)); from buildtool.cli.served import server_main as main; " \
          "sys.exit(main(sys.argv[1:]))"
_warned = False


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM ended a wait for the daemon (the process's own handling of it: see interruptible)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_code = 128 + signum


class WaitInterrupted(BuildtoolError):
    """SIGINT or SIGTERM ended a wait for the daemon after the host's own handler ran (see interruptible)."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted ({signal.Signals(signum).name}) while waiting for the planner daemon")
        self.signum = signum


@contextlib.contextmanager
def interruptible():
    """While inside, SIGINT and SIGTERM end the current thread's wait at once, if it is the main thread:
    with Python's own handling of the signal (KeyboardInterrupt, or SIGTERM's default: death without a
    word) Interrupted is raised; with a handler of the host's (SCons) that handler runs first and then
    WaitInterrupted is raised (an exception a step may fail with). An ignored signal stays ignored; the
    handlers before are back on the way out."""
    old = {}

    def handler(signum, frame):
        prev = old.get(signum)
        if callable(prev) and prev is not signal.default_int_handler:
            prev(signum, frame)  # the host's own handling (it may raise itself)
            raise WaitInterrupted(signum)
        raise Interrupted(signum)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            prev = signal.getsignal(sig)
            if prev is signal.SIG_IGN or prev is None:  # ignored on purpose (`cmd &`, nohup), or not Python's
                continue
            try:
                old[sig] = signal.signal(sig, handler)
            except ValueError:  # not the main interpreter
                break
    try:
        yield
    finally:
        for sig, prev in old.items():
            signal.signal(sig, prev)


def _lock_free(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing drops the probe lock at once


def _raise_reply(reply: dict):
    kind = reply.get("kind")
    cls = getattr(errors, kind, None) if kind in ("ModelError", "PlanError", "UsageError") else BuildtoolError
    e = cls(protocol.from_wire(reply.get("error", "the planner daemon sent an error")))
    if kind == "InternalError":  # the daemon's message already says so and where its log is
        e.exit_code = errors.InternalError.exit_code
    raise e


class DaemonClient:
    """One connection to the daemon, opened lazily, re-opened (and the daemon restarted) when lost."""

    def __init__(self, start: bool = True, start_timeout: float = START_TIMEOUT_S, idle_s: float | None = None):
        self.paths = protocol.paths()
        self.start = start
        self.start_timeout = start_timeout
        self.idle_s = idle_s
        self.daemon_pid = None
        self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def spawn(self) -> None:
        import subprocess  # (only when a daemon must be started: a warm request never pays for it)

        # Not `python -m`: that puts the current directory first on sys.path, and run from the root of
        # another checkout the daemon would import that checkout's buildtool (other code: a respawn loop).
        cmd = [sys.executable, "-c", _SERVER, PACKAGE_PARENT, "--detach"]
        if self.idle_s is not None:
            cmd += ["--idle", str(self.idle_s)]
        try:
            with open(self.paths["log"], "ab") as logf:
                os.chmod(self.paths["log"], 0o600)
                # The server forks twice and the first process exits at once: wait() reaps it without blocking.
                rc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, close_fds=True,
                                      cwd=PACKAGE_PARENT, start_new_session=True).wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise protocol.DaemonUnavailable(f"the planner daemon could not be started ({e})") from None
        if rc != 0:
            raise protocol.DaemonUnavailable(f"the planner daemon failed to start (exit status {rc}); "
                                             f"see {self.paths['log']}")

    def _connect_once(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5.0)
        try:
            s.connect(self.paths["socket"])
            protocol.send(s, {"type": "hello", **protocol.versions()})
            reply = protocol.recv(s)
        except (OSError, protocol.ConnectionLost, protocol.ProtocolError):
            s.close()
            return None, None
        if reply is None or reply.get("type") != "hello":
            s.close()
            return None, None
        return s, reply

    def connect(self) -> bool:
        """Open a handshaken connection; start a daemon if allowed. False if none runs and start=False.
        SIGINT/SIGTERM end the wait (interruptible)."""
        with interruptible():
            return self._connect()

    def _connect(self) -> bool:
        deadline = time.monotonic() + self.start_timeout
        spawned = None  # when we started one: at most once, so there is no respawn loop
        while True:
            s, reply = self._connect_once()
            if s is not None and reply.get("ok"):
                s.settimeout(REPLY_TIMEOUT_S)
                self._sock, self.daemon_pid = s, reply.get("pid")
                return True
            if s is not None:
                s.close()  # another version: it is exiting now, its lock frees shortly
                if spawned is not None:
                    raise protocol.DaemonUnavailable(
                        f"the planner daemon started for this client runs other code (buildtool "
                        f"{reply.get('buildtool')}, code {reply.get('code')}; this client: {protocol.versions()}); "
                        f"see {self.paths['log']}")
            elif not self.start and _lock_free(self.paths["lock"]):
                return False
            if self.start and _lock_free(self.paths["lock"]):
                if spawned is None:
                    self.spawn()
                    spawned = time.monotonic()
                elif time.monotonic() - spawned > RESPAWN_GAP_S:
                    raise protocol.DaemonUnavailable(f"the planner daemon exited as it started; "
                                                     f"see {self.paths['log']}")
            if time.monotonic() > deadline:
                raise protocol.DaemonUnavailable(f"the planner daemon did not answer within "
                                                 f"{self.start_timeout:.0f} s; see {self.paths['log']}")
            time.sleep(0.01)

    def request(self, msg: dict) -> dict:
        """Send msg and wait for the answer (starting the daemon if needed); SIGINT/SIGTERM end the wait
        (interruptible) and close the connection, so the daemon cancels the request."""
        try:
            with interruptible():
                return self._request(msg)
        except (Interrupted, WaitInterrupted):
            self.close()
            raise

    def _request(self, msg: dict) -> dict:
        for attempt in (1, 2):
            if self._sock is None and not self._connect():
                raise BuildtoolError("no planner daemon is running")
            try:
                protocol.send(self._sock, msg)
                reply = protocol.recv(self._sock)
                if reply is None:
                    raise protocol.ConnectionLost("closed")
            except socket.timeout:
                self.close()
                raise BuildtoolError(f"the planner daemon did not answer within {REPLY_TIMEOUT_S:.0f} s; "
                                     f"see {self.paths['log']}, or use --no-daemon") from None
            except (OSError, protocol.ConnectionLost):
                self.close()
                if attempt == 2:
                    raise BuildtoolError(f"the planner daemon died twice while answering; see "
                                         f"{self.paths['log']}, or use --no-daemon") from None
                continue
            if reply.get("type") == "error":
                _raise_reply(reply)
            return reply
        raise errors.InternalError("the daemon client's retry loop ended without an answer")

    def plan(self, model, options: dict | None = None) -> dict:
        options = dict(options or {})
        try:
            msgpack.packb(options, use_bin_type=True)
        except (TypeError, ValueError, OverflowError):  # 2**64, a numpy scalar: checked (and made plain) here
            from ...options import PlanOptions  # (not on the fast path: the import costs milliseconds)

            options = PlanOptions.from_map(options).canonical()
        msg = protocol.plan_message(model, options)
        return self.request(msg)["result"]

    def status(self) -> dict:
        return self.request({"type": "status"})["status"]

    def clear(self) -> int:
        return self.request({"type": "clear"})["removed"]

    def stop(self, wait_s: float = 10.0) -> None:
        """Ask the daemon to exit and wait until it has released its lock."""
        self.request({"type": "stop"})
        self.close()
        deadline = time.monotonic() + wait_s
        while not _lock_free(self.paths["lock"]):
            if time.monotonic() > deadline:
                raise BuildtoolError(f"the planner daemon did not stop within {wait_s:.0f} s; see {self.paths['log']}")
            time.sleep(0.02)


def daemon_wanted(no_daemon: bool = False) -> bool:
    """False with --no-daemon or BUILDTOOL_NO_DAEMON=1 (CI, sandboxes without a writable runtime dir)."""
    return not no_daemon and os.environ.get("BUILDTOOL_NO_DAEMON", "") in ("", "0")


def warn_once(text: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(f"buildtool: warning: {text}", file=sys.stderr)
