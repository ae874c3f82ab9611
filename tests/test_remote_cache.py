"""The team-wide plan cache (buildtool/serve/remote_cache.py) against a real nginx WebDAV server.

Each test starts its own nginx (Debian nginx-extras) on 127.0.0.1 at a free port, with a
config written to a temporary directory, and stops it at the end. Skipped only when nginx is
not installed (a failure on CI, see conftest.py)."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import wait_until

from buildtool.serve import remote_cache, service
from buildtool.serve.cache import DiskStore, Memo, entry_digest
from buildtool.serve.remote_cache import RemoteCache

ROOT = Path(__file__).resolve().parents[1]
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
REMOTE_ENV = ("BUILDTOOL_REMOTE_CACHE", "BUILDTOOL_REMOTE_CACHE_WRITE", "BUILDTOOL_REMOTE_CACHE_TIMEOUT_S",
              "BUILDTOOL_REMOTE_CACHE_BACKOFF_S")

CONF = """\
daemon off;
master_process on;
worker_processes 1;
{user}pid {d}/nginx.pid;
error_log {d}/logs/error.log;
events {{ worker_connections 64; }}
http {{
  access_log {d}/logs/access.log;
  client_body_temp_path {d}/tmp/body;
  proxy_temp_path {d}/tmp/proxy;
  fastcgi_temp_path {d}/tmp/fastcgi;
  uwsgi_temp_path {d}/tmp/uwsgi;
  scgi_temp_path {d}/tmp/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {d}/data;
    location / {{
      dav_methods PUT DELETE MKCOL;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
      client_max_body_size 1g;
      log_not_found off;
    }}
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serving(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


@pytest.fixture
def nginx():
    if NGINX is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-extras; scripts/install.sh does)")
    d = tempfile.mkdtemp(prefix="btng", dir="/tmp")
    for sub in ("logs", "tmp", "data"):
        os.mkdir(os.path.join(d, sub))
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers otherwise run as nobody: no access to d
    proc = port = None
    for _ in range(3):  # the free port may be taken between the probe and nginx's bind: again
        port = free_port()
        Path(d, "nginx.conf").write_text(CONF.format(d=d, port=port, user=user))
        proc = subprocess.Popen([NGINX, "-p", d, "-c", os.path.join(d, "nginx.conf"), "-e",
                                 os.path.join(d, "logs", "error.log")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while proc.poll() is None and not _serving(port) and time.monotonic() < deadline:
            time.sleep(0.02)
        if proc.poll() is None and _serving(port):
            break
    else:
        pytest.fail(f"nginx did not start: {Path(d, 'logs', 'error.log').read_text()[-2000:]}")
    ng = SimpleNamespace(dir=d, data=os.path.join(d, "data"), port=port, url=f"http://127.0.0.1:{port}/bt",
                         log=os.path.join(d, "logs", "access.log"))
    yield ng
    proc.send_signal(signal.SIGQUIT)  # graceful stop of the master and its worker
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_remote_from_the_caller(monkeypatch):
    for k in REMOTE_ENV:
        monkeypatch.delenv(k, raising=False)


def puts(ng) -> int:
    """PUT requests in nginx's access log, once the count holds still for 0.2 s: nginx logs a request
    after its response has gone out, so the last line can trail the client by a moment."""
    def count():
        with open(ng.log) as f:
            return sum('"PUT ' in line for line in f)

    n, deadline = count(), time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.2)
        again = count()
        if again == n:
            return n
        n = again
    return n


def server_files(ng, area: str) -> list:
    return sorted(glob.glob(os.path.join(ng.data, "bt", area, "*")))


# -- two checkouts through the CLI and their daemons ----------------------------------------------

def checkout_copy(dst: Path) -> Path:
    """A second checkout: the package copied elsewhere (same sources, other path)."""
    shutil.copytree(ROOT / "buildtool", dst / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def cli(root: Path, env: dict, *args, timeout=240) -> subprocess.CompletedProcess:
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from buildtool.cli import main; sys.exit(main())"
    r = subprocess.run([sys.executable, "-c", code, str(root), *args], capture_output=True, text=True, env=env,
                       cwd=str(root), timeout=timeout)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    return r


def plan_json(root, env, *args) -> tuple:
    r = cli(root, env, "plan", *args, "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    return json.dumps({k: v for k, v in out.items() if k not in ("cache", "plan_ms")}, sort_keys=True), out["cache"]


def checkout_env(tmp: str, name: str, url: str, write: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in REMOTE_ENV + ("BUILDTOOL_NO_DAEMON",)}
    cache = os.path.join(tmp, name, "cache")
    env.update(BUILDTOOL_RUNTIME_DIR=os.path.join(tmp, name, "run"), BUILDTOOL_CACHE_DIR=cache,
               BUILDTOOL_CACHE=cache, BUILDTOOL_DAEMON_WATCH="0",
               BUILDTOOL_DAEMON_IDLE_S="300", BUILDTOOL_REMOTE_CACHE=url)
    if write:
        env["BUILDTOOL_REMOTE_CACHE_WRITE"] = "1"
    return env


def status(root, env) -> dict:
    r = cli(root, env, "daemon", "status", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


REQUESTS = (("mbv2-w0.35", "--optimize", "ram"), ("tiny",))


def test_second_checkout_with_empty_cache_plans_from_remote_hits(nginx, tmp_path):
    tmp = tempfile.mkdtemp(prefix="btrc", dir="/tmp")  # short: Unix socket paths are limited
    a_env, b_env = checkout_env(tmp, "a", nginx.url, True), checkout_env(tmp, "b", nginx.url, False)
    root_a, root_b = ROOT, checkout_copy(tmp_path / "checkout-b")
    try:
        plans_a = [plan_json(root_a, a_env, *req) for req in REQUESTS]
        assert all(c["misses"] >= 1 for _p, c in plans_a)  # computed in A
        sa = status(root_a, a_env)["remote"]
        assert sa["url"] == nginx.url and sa["write"] and sa["hits"] == 0 and not sa["down"]
        cli(root_a, a_env, "daemon", "stop")  # flushes: the entries and their publication land now
        assert len(server_files(nginx, "ac")) == 4 == len(server_files(nginx, "cas"))  # 2 plans + 2 model indexes
        published = puts(nginx)
        assert published == 8

        plans_b = [plan_json(root_b, b_env, *req) for req in REQUESTS]
        assert [p for p, _c in plans_b] == [p for p, _c in plans_a]  # the same plan bytes
        assert all(c == {"hits": 1, "misses": 0} for _p, c in plans_b)  # nothing computed in B
        sb = status(root_b, b_env)
        assert sb["misses"] == 0 and sb["hits"] == 2
        assert sb["remote"]["hits"] == 4 and sb["remote"]["corrupt"] == sb["remote"]["errors"] == 0
        assert not sb["remote"]["write"] and sb["remote"]["puts"] == 0
        cli(root_b, b_env, "daemon", "stop")
        assert puts(nginx) == published  # the read-only checkout never PUT
        assert len(server_files(nginx, "ac")) == 4
        assert DiskStore(b_env["BUILDTOOL_CACHE_DIR"], remote=None).stats()["entries"] == 4  # kept locally
        again = plan_json(root_b, b_env, *REQUESTS[1])  # a new daemon: a local hit, no remote look-up
        assert again[0] == plans_a[1][0] and status(root_b, b_env)["remote"]["hits"] == 0
    finally:
        for env, root in ((a_env, root_a), (b_env, root_b)):
            cli(root, env, "daemon", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


# -- damaged, foreign and missing entries, in process --------------------------------------------

def memo(tmp_path, name, url, write=False, timeout=2.0) -> Memo:
    return Memo(DiskStore(str(tmp_path / name), remote=RemoteCache(url, write=write, timeout=timeout)))


OPTS = {"time_budget": 0.2}


def test_corrupt_blob_and_foreign_entry_are_misses_and_plans_stay_right(nginx, tmp_path):
    want = json.dumps(service.plan_request("tiny", OPTS)["plan"])
    a = memo(tmp_path, "a", nginx.url, write=True)
    assert json.dumps(service.plan_request("tiny", OPTS, a.session())["plan"]) == want
    assert a.store.remote.stats()["puts"] == 2
    blobs = server_files(nginx, "cas")
    for p in blobs:  # a bit flipped in every blob on the server
        data = bytearray(Path(p).read_bytes())
        data[len(data) // 2] ^= 0x40
        Path(p).write_bytes(bytes(data))
    b = memo(tmp_path, "b", nginx.url)
    r = service.plan_request("tiny", OPTS, b.session())
    assert json.dumps(r["plan"]) == want and r["cache"] == {"hits": 0, "misses": 1}
    assert b.store.remote.stats()["corrupt"] == 2 and b.store.remote.stats()["hits"] == 0

    a.clear()
    a.store.remote = RemoteCache(nginx.url, write=True)
    service.plan_request("tiny", OPTS, a.session())  # republished: good blobs again
    acs = server_files(nginx, "ac")
    assert len(acs) == 2
    Path(acs[0]).write_bytes(Path(acs[1]).read_bytes())  # one AC now names the other entry's blob
    c = memo(tmp_path, "c", nginx.url)
    r = service.plan_request("tiny", OPTS, c.session())
    assert json.dumps(r["plan"]) == want
    st = c.store.remote.stats()
    assert st["corrupt"] == 1 and st["hits"] == 1  # the foreign entry is a miss, the other a hit

    for p in acs:  # not an action result at all, e.g. another tool's bytes under our prefix
        Path(p).write_bytes(b"\x00garbage")
    d = memo(tmp_path, "d", nginx.url)
    assert json.dumps(service.plan_request("tiny", OPTS, d.session())["plan"]) == want
    assert d.store.remote.stats()["corrupt"] == 2
    assert puts(nginx) == 8  # only the two writers' entries: the read-only memos never PUT


def test_remote_hit_is_kept_locally_and_not_published_again(nginx, tmp_path):
    a = memo(tmp_path, "a", nginx.url, write=True)
    service.plan_request("tiny", OPTS, a.session())
    n = puts(nginx)
    b = memo(tmp_path, "b", nginx.url, write=True)  # a writer that gets remote hits does not send them back
    service.plan_request("tiny", OPTS, b.session())
    assert b.store.remote.stats()["hits"] == 2 and puts(nginx) == n
    local = Memo(DiskStore(str(tmp_path / "b"), remote=None))
    assert service.plan_request("tiny", OPTS, local.session())["cache"] == {"hits": 1, "misses": 0}


def test_write_behind_store_publishes_when_flushed(nginx, tmp_path):
    store = DiskStore(str(tmp_path / "wb"), write_behind=True, remote=RemoteCache(nginx.url, write=True))
    store.quiet_s = 600  # only flush() writes
    m = Memo(store)
    service.plan_request("tiny", OPTS, m.session())
    assert server_files(nginx, "ac") == []  # nothing on the request's path
    store.flush()
    assert len(server_files(nginx, "ac")) == 2 and store.remote.stats()["puts"] == 2


def test_only_whole_plans_and_model_indexes_are_shared(nginx, tmp_path):
    m = memo(tmp_path, "a", nginx.url, write=True)
    r = service.plan_request("tiny", {"optimize": "ram", "time_budget": 0.2}, m.session())
    assert r["cache"]["misses"] > 2  # the fused plan and its fusion blocks
    names = {json.loads(Path(p).read_text())["outputFiles"][0]["path"] for p in server_files(nginx, "ac")}
    assert names == {"buildtool/fused", "buildtool/model"}


# -- a dead or silent server ------------------------------------------------------------------------

TOOL = textwrap.dedent("""
    import sys, time, json
    sys.path.insert(0, sys.argv[1])
    from buildtool.serve import service
    from buildtool.serve.cache import DiskStore, Memo
    m = Memo(DiskStore(sys.argv[2]))
    t0 = time.monotonic()
    for opts in ({"time_budget": 0.2}, {"time_budget": 0.2, "align": 8}, {"time_budget": 0.2, "align": 4}):
        service.plan_request("tiny", opts, m.session())
    print(json.dumps({"s": time.monotonic() - t0, "remote": m.store.remote.stats()}))
""")


def run_tool(tmp_path, url, timeout="0.5") -> tuple:
    env = {k: v for k, v in os.environ.items() if k not in REMOTE_ENV}
    env.update(BUILDTOOL_REMOTE_CACHE=url, BUILDTOOL_REMOTE_CACHE_TIMEOUT_S=timeout)
    r = subprocess.run([sys.executable, "-c", TOOL, str(ROOT), str(tmp_path / "c")], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout), r.stderr


def test_dead_server_is_a_miss_once_and_then_skipped(tmp_path):
    out, err = run_tool(tmp_path, f"http://127.0.0.1:{free_port()}/bt")  # nothing listens there
    assert out["remote"]["errors"] == 1 and out["remote"]["down"] and out["remote"]["skipped"] == 3
    assert len(err.splitlines()) <= 1 and "unreachable" in err and "Traceback" not in err
    assert out["s"] < 5


def test_silent_server_costs_one_bounded_timeout(tmp_path):
    with socket.socket() as s:  # accepts connections (the kernel does) and never answers
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        t0 = time.monotonic()
        out, err = run_tool(tmp_path, f"http://127.0.0.1:{s.getsockname()[1]}/bt", timeout="0.5")
    assert out["remote"]["errors"] == 1 and out["remote"]["skipped"] == 3
    assert 0.5 <= out["s"] < 5 and time.monotonic() - t0 < 30
    assert len(err.splitlines()) <= 1 and "timed out" in err


def test_dead_server_through_the_daemon(tmp_path):
    tmp = tempfile.mkdtemp(prefix="btrc", dir="/tmp")
    env = checkout_env(tmp, "x", f"http://127.0.0.1:{free_port()}/bt", False)
    env["BUILDTOOL_REMOTE_CACHE_TIMEOUT_S"] = "0.5"
    try:
        t0 = time.monotonic()
        r = cli(ROOT, env, "plan", "tiny", "--json")
        assert r.returncode == 0 and r.stderr == "" and time.monotonic() - t0 < 60
        assert status(ROOT, env)["remote"]["down"]
    finally:
        cli(ROOT, env, "daemon", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


# -- a slow server: an overall deadline per request, a timed back-off, signals that work ----------------

class SlowServer:
    """An HTTP "cache" on 127.0.0.1 that never gives a whole answer in time. Modes:
    trickle          status line and headers (Content-Length 50000), then the body a byte per interval
    trickle-headers  the status line and headers themselves a byte per interval
    stall            headers with a Content-Length, ten bytes of the body, then nothing (the connection stays open)
    silent           accepts and reads a request's head, never answers (nor reads a PUT's body)
    slow-cas         answers GET ac at once with an action result naming a blob; trickles everything else
    404              answers every request at once with 404 (a server that is back)
    requests: the request lines received (mode may be changed while it runs)."""

    def __init__(self, mode: str, interval: float = 1.0):
        self.mode, self.interval = mode, interval
        self.requests = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/bt"
        threading.Thread(target=self._accept, daemon=True).start()

    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        for c in list(self._conns):
            c.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        buf = b""
        try:
            while not self._stop.is_set():
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(1 << 16)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                line = head.split(b"\r\n", 1)[0].decode()
                with self._lock:
                    self.requests.append(line)
                if self.mode == "404":
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    buf = b""  # (no PUTs here: nothing of a body to skip)
                    continue
                if self.mode == "slow-cas" and line.startswith("GET /bt/ac/"):
                    body = remote_cache.ac_body("arena", "ab" * 32, 50000)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    continue
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50000\r\n\r\n"
                if self.mode == "silent":
                    pass
                elif self.mode == "stall":
                    conn.sendall(head + b"{" * 10)
                elif self.mode == "trickle-headers":
                    self._trickle(conn, b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 50000)
                else:  # trickle, slow-cas
                    conn.sendall(head)
                    self._trickle(conn, b" " * 50000)
                self._stop.wait()
                return
        except OSError:
            return

    def _trickle(self, conn, data: bytes) -> None:
        for i in range(len(data)):
            if self._stop.wait(self.interval):
                return
            conn.sendall(data[i:i + 1])


@pytest.fixture
def slow_server():
    servers = []

    def make(mode: str, interval: float = 1.0) -> SlowServer:
        servers.append(SlowServer(mode, interval))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def within(f, limit: float):
    """(f's result, seconds it took); fails if f has not returned after limit seconds (it is left running
    in a daemon thread: a hang fails the test instead of stalling the suite)."""
    out = {}
    t0 = time.monotonic()
    th = threading.Thread(target=lambda: out.setdefault("r", f()), daemon=True)
    th.start()
    th.join(limit)
    assert not th.is_alive(), f"still waiting after {limit} s"
    return out.get("r"), time.monotonic() - t0


def unreachable_warnings(caplog) -> list:
    return [r for r in caplog.records if "is unreachable" in r.getMessage()]


SLOW = ("trickle", "trickle-headers", "stall", "silent", "slow-cas")


@pytest.mark.parametrize("mode", SLOW)
def test_every_request_ends_by_one_overall_deadline(slow_server, mode, caplog):
    """GET (ac, and cas in slow-cas) and PUT each end at their deadline, however the server dawdles:
    a byte every 0.25 s never trips a read timeout of 1 s, but the request's deadline passes."""
    srv = slow_server(mode, interval=0.25)
    d = entry_digest("arena", b"k")
    rc = RemoteCache(srv.url, write=True, timeout=1.0)
    got, took = within(lambda: rc.get("arena", d), 10)
    assert got is None and 1.0 <= took < 1.9
    assert srv.count() == (2 if mode == "slow-cas" else 1)
    st = rc.stats()
    assert st["errors"] == 1 and st["down"] and st["hits"] == st["corrupt"] == 0
    w = unreachable_warnings(caplog)
    assert len(w) == 1 and "timed out: no whole answer within 1 s" in w[0].getMessage()

    put = RemoteCache(srv.url, write=True, timeout=1.0)
    blob = b"\x93" + os.urandom(1 << 20)
    ok, took = within(lambda: put.put("arena", d, blob), 10)
    assert ok is False and 1.0 <= took < 1.9 and put.stats()["errors"] == 1 and put.stats()["puts"] == 0


def test_a_failed_server_is_skipped_for_the_back_off_then_tried_once_again(slow_server, caplog):
    srv = slow_server("silent")
    rc = RemoteCache(srv.url, timeout=0.5, backoff=1.5)
    d = entry_digest("arena", b"k")
    assert within(lambda: rc.get("arena", d), 10)[0] is None
    assert srv.count() == 1 and rc.stats()["down"] and 1.0 < rc.stats()["retry_in_s"] <= 1.5
    for _ in range(5):  # down: skipped at once, the server is not asked
        assert within(lambda: rc.get("arena", d), 0.2)[0] is None
    assert srv.count() == 1 and rc.stats()["skipped"] == 5 and rc.stats()["errors"] == 1
    assert len(unreachable_warnings(caplog)) == 1

    time.sleep(rc.stats()["retry_in_s"] + 0.05)
    assert not rc.stats()["down"]
    threads = [threading.Thread(target=rc.get, args=("arena", d)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    st = rc.stats()
    assert srv.count() == 2  # one request tried the server again; the others skipped while it was out
    assert st["skipped"] == 8 and st["errors"] == 2 and st["down"]
    assert len(unreachable_warnings(caplog)) == 2  # one warning per down-period

    srv.mode = "404"  # the server is back
    time.sleep(rc.stats()["retry_in_s"] + 0.05)
    assert rc.get("arena", d) is None and srv.count() == 3
    st = rc.stats()
    assert st["misses"] == 1 and not st["down"] and st["retry_in_s"] == 0
    assert rc.get("arena", d) is None and srv.count() == 4 and rc.stats()["misses"] == 2  # up: asked every time
    assert len(unreachable_warnings(caplog)) == 2


def test_abort_ends_a_request_in_flight_at_once_and_skips_the_rest(slow_server):
    srv = slow_server("trickle", interval=0.2)
    rc = RemoteCache(srv.url, timeout=30)
    d = entry_digest("arena", b"k")
    out = []
    th = threading.Thread(target=lambda: out.append(rc.get("arena", d)), daemon=True)
    th.start()
    deadline = time.monotonic() + 10
    while srv.count() == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    t0 = time.monotonic()
    rc.abort()
    th.join(5)
    assert not th.is_alive() and out == [None] and time.monotonic() - t0 < 1
    assert rc.get("arena", d) is None and srv.count() == 1 and rc.stats()["skipped"] == 1 and rc.stats()["down"]


def test_backoff_from_the_environment(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE", "http://cache.example/bt")
    assert remote_cache.from_env().backoff == 60.0
    monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE_BACKOFF_S", "2.5")
    assert remote_cache.from_env().backoff == 2.5
    for bad in ("nan", "-1", "1e9", "soon"):
        monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE_BACKOFF_S", bad)
        assert remote_cache.from_env().backoff == 60.0


# -- ... through the daemon and the command line

DEADLINE_S = 1.5  # the server sends a byte a second: no single read ever waits this long
BACKOFF_S = 3.0
CLI_CODE = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "  # (as from a terminal,
            "sys.path.insert(0, sys.argv.pop(1)); from buildtool.cli import main; sys.exit(main())")  # whatever ran us)


def slow_env(tmp: str, url: str, deadline: float = DEADLINE_S) -> dict:
    env = checkout_env(tmp, "x", url, False)
    env.update(BUILDTOOL_REMOTE_CACHE_TIMEOUT_S=str(deadline), BUILDTOOL_REMOTE_CACHE_BACKOFF_S=str(BACKOFF_S))
    return env


def timed_plan(root, env, *args) -> tuple:
    """(plan JSON without the cache counters, seconds the client took); fails instead of hanging."""
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", CLI_CODE, str(root), "plan", "tiny", "--json", *args],
                       capture_output=True, text=True, env=env, cwd=str(root), timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 0 and r.stderr == "", r.stderr[-3000:]
    out = json.loads(r.stdout)
    return json.dumps({k: v for k, v in out.items() if k not in ("cache", "plan_ms")}, sort_keys=True), took


def reference(*args) -> tuple:
    """(plan JSON, seconds) planned in this process without any cache, for `plan tiny ARGS`."""
    opts = {"align": int(args[1])} if args else {}
    t0 = time.monotonic()
    plan = service.plan_request("tiny", opts)["plan"]
    return json.dumps(plan, sort_keys=True), time.monotonic() - t0


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False



@pytest.mark.parametrize("mode", ("trickle", "stall", "silent"))
def test_a_slow_server_costs_one_deadline_per_back_off_through_the_daemon(slow_server, tmp_path, mode):
    srv = slow_server(mode)
    tmp = tempfile.mkdtemp(prefix="btrc", dir="/tmp")
    root = checkout_copy(tmp_path / "co")  # frozen code: an edit to this checkout would restart the daemon
    env = slow_env(tmp, srv.url)
    try:
        cli(root, env, "daemon", "start")
        want, plan_s = reference()
        got, took = timed_plan(root, env)
        assert got == want  # byte-identical to a plan without a remote
        assert took < 3 * DEADLINE_S + plan_s + 1.0, took  # (+1 s: the client process itself)
        assert srv.count() == 1  # the model index's look-up; the plan's own was skipped

        got, took = timed_plan(root, env, "--align", "8")  # another plan, in the back-off: the server is not asked
        assert got == reference("--align", "8")[0] and took < DEADLINE_S + 1.0 and srv.count() == 1
        st = status(root, env)["remote"]
        assert st["down"] and st["errors"] == 1 and st["skipped"] == 2 and st["hits"] == 0

        time.sleep(st.get("retry_in_s", BACKOFF_S) + 0.1)  # the back-off is over: the next look-up tries the server again
        assert not status(root, env)["remote"]["down"]
        got, took = timed_plan(root, env, "--align", "4")
        assert got == reference("--align", "4")[0] and took < 3 * DEADLINE_S + plan_s + 1.0
        assert srv.count() == 2
        st = status(root, env)["remote"]
        assert st["down"] and st["errors"] == 2 and st["skipped"] == 2
        log = Path(tmp, "x", "run", "daemon.log").read_text()
        assert log.count("is unreachable (timed out: no whole answer within 1.5 s); planning without it "
                         "for the next 3 s") == 2  # one warning per down-period
    finally:
        cli(root, env, "daemon", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("sig", (signal.SIGTERM, signal.SIGINT), ids=("SIGTERM", "SIGINT"))
@pytest.mark.parametrize("warm", (False, True), ids=("starting", "warm"))
def test_a_client_waiting_on_a_slow_daemon_ends_on_sigterm_and_sigint(slow_server, tmp_path, sig, warm):
    """The daemon waits (30 s) on a server that never answers; the `buildtool plan` waiting on it ends at
    once on a signal, in one line; then the daemon, still waiting, ends at once on SIGTERM too.
    starting: the client starts the daemon (the ordinary path); warm: the thin client's fast path."""
    srv = slow_server("silent")
    tmp = tempfile.mkdtemp(prefix="btrc", dir="/tmp")
    root = checkout_copy(tmp_path / "co")
    env = slow_env(tmp, srv.url, deadline=30)
    try:
        if warm:
            cli(root, env, "daemon", "start")
        p = subprocess.Popen([sys.executable, "-c", CLI_CODE, str(root), "plan", "tiny"], env=env, cwd=str(root),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert wait_until(lambda: srv.count() >= 1, 60)  # the daemon is asking the server: the client waits
            time.sleep(0.3)
            assert p.poll() is None
            t0 = time.monotonic()
            p.send_signal(sig)
            out, err = p.communicate(timeout=10)
            took = time.monotonic() - t0
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        assert took < 2 and p.returncode == 128 + sig, (took, p.returncode, err[-3000:])
        assert err.splitlines() == [f"buildtool: interrupted ({sig.name})"] and out == ""

        pid = status(root, env)["pid"]
        t0 = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        assert wait_until(lambda: not pid_alive(pid), 10) and time.monotonic() - t0 < 2
        assert "stopping on SIGTERM" in Path(tmp, "x", "run", "daemon.log").read_text()
    finally:
        cli(root, env, "daemon", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


# -- configuration and checks, no server -------------------------------------------------------------

def test_configuration_from_the_environment(monkeypatch, caplog):
    assert remote_cache.from_env() is None and DiskStore("/nonexistent-x", remote=None).remote is None
    monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE", "http://ci:secret@cache.example:8080/team/bt/")
    rc = remote_cache.from_env()
    assert rc.url == "http://cache.example:8080/team/bt" and not rc.write and rc.timeout == 2.0
    assert rc.auth.startswith("Basic ") and "secret" not in json.dumps(rc.stats())
    monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE_WRITE", "1")
    monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE_TIMEOUT_S", "nan")
    rc = remote_cache.from_env()
    assert rc.write and rc.timeout == 2.0
    assert DiskStore("/nonexistent-x").remote is not None  # a store picks it up by default
    monkeypatch.setenv("BUILDTOOL_REMOTE_CACHE", "ftp://cache/bt")
    assert remote_cache.from_env() is None
    assert "not an http:// or https:// URL; the team cache is off" in caplog.text


def test_blob_and_action_result_checks():
    import msgpack

    d = entry_digest("arena", b"k")
    blob = msgpack.packb(["arena", d, {"x": 1}], use_bin_type=True)
    h = hashlib.sha256(blob).hexdigest()
    assert remote_cache.parse_ac(remote_cache.ac_body("arena", h, len(blob)), "arena") == (h, len(blob))
    assert remote_cache.check_blob(blob, h, len(blob), "arena", d) == {"x": 1}
    bad = [lambda: remote_cache.parse_ac(remote_cache.ac_body("fused", h, len(blob)), "arena"),
           lambda: remote_cache.parse_ac(remote_cache.ac_body("arena", "../../etc/passwd", 3), "arena"),
           lambda: remote_cache.parse_ac(b"{}", "arena"),
           lambda: remote_cache.check_blob(blob + b"x", h, len(blob) + 1, "arena", d),
           lambda: remote_cache.check_blob(blob, h, len(blob), "arena", entry_digest("arena", b"other"))]
    for f in bad:
        with pytest.raises(remote_cache.Corrupt):
            f()
