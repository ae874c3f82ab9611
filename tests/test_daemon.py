"""The planner daemon as a real background process, in a private runtime directory per test.

Every test sets BUILDTOOL_RUNTIME_DIR and BUILDTOOL_CACHE_DIR to fresh directories,
so it never meets the user's daemon, and stops (or kills) every daemon it saw.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from types import SimpleNamespace

import pytest

from buildtool.serve import service
from buildtool.cli import daemon as daemon_cli
from buildtool.serve.daemon import client, protocol
from buildtool.serve.daemon.client import DaemonClient
from buildtool.serve.service import plan_json as plan
from buildtool.errors import BuildtoolError, ModelError
from buildtool.model.writer import save, serialize
from conftest import wait_until
from test_cache import reweighted, small_cnn


def alive(pid: int) -> bool:
    """Running and not a zombie (a detached daemon's parent may never reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False



@pytest.fixture
def rt(monkeypatch):
    d = tempfile.mkdtemp(prefix="btd", dir="/tmp")  # short: Unix socket paths are limited to ~100 bytes
    env = SimpleNamespace(dir=d, run=os.path.join(d, "run"), cache=os.path.join(d, "cache"), pids=[])
    monkeypatch.setenv("BUILDTOOL_RUNTIME_DIR", env.run)
    monkeypatch.setenv("BUILDTOOL_CACHE_DIR", env.cache)
    monkeypatch.setenv("BUILDTOOL_DAEMON_IDLE_S", "300")  # a daemon a crashed test leaves behind ends itself
    monkeypatch.delenv("BUILDTOOL_DAEMON_TEST_DELAY_S", raising=False)
    monkeypatch.setenv("BUILDTOOL_DAEMON_WATCH", "0")  # exact hit/miss counts: no background re-plans
    yield env
    for _ in range(2):  # twice: a twin spawned under load may take the lock (within 0.1 s) as the first stops
        try:
            c = DaemonClient(start=False, start_timeout=5)
            if c.connect():
                env.pids.append(c.daemon_pid)
                c.stop()
        except BuildtoolError:
            pass
        time.sleep(0.2)
    for pid in env.pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(d, ignore_errors=True)


def model_file(env, name, channels=(8, 16, 12), seed=0):
    p = os.path.join(env.dir, f"{name}.tflite")
    save(small_cnn(channels, seed=seed, name=name), p)
    return p


def expected(path, options=None) -> str:
    return json.dumps(service.plan_request(path, options)["plan"])


def pid_now(env) -> int:
    with DaemonClient() as c:
        c.connect()
        env.pids.append(c.daemon_pid)
        return c.daemon_pid


def test_starts_on_demand_plans_identically_and_reports(rt, capsys):
    m = model_file(rt, "a")
    assert daemon_cli.main(["status"]) == 1
    assert not os.path.exists(os.path.join(rt.run, "daemon.sock"))
    r1 = plan(m)
    pid = pid_now(rt)
    assert alive(pid) and pid != os.getpid()
    assert json.dumps(r1["plan"]) == expected(m) == json.dumps(plan(m, no_daemon=True)["plan"])
    assert r1["cache"] == {"hits": 0, "misses": 1} and r1["plan_ms"] > 0
    r2 = plan(m)
    assert r2["cache"] == {"hits": 1, "misses": 0} and json.dumps(r2["plan"]) == json.dumps(r1["plan"])
    sock = os.path.join(rt.run, "daemon.sock")
    assert stat.S_ISSOCK(os.stat(sock).st_mode) and stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(rt.run).st_mode) == 0o700
    capsys.readouterr()
    assert daemon_cli.main(["status", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["running"] and s["pid"] == pid and s["socket"] == sock and s["log"] == os.path.join(rt.run, "daemon.log")
    assert (s["hits"], s["misses"]) == (1, 1) and s["entries"] == 2  # the arena plan + the model index entry
    assert s["memory"] > 1 << 20 and s["uptime_s"] > 0 and s["watched"] == 0
    assert os.path.getsize(s["log"]) > 0
    assert daemon_cli.main(["stop"]) == 0
    assert wait_until(lambda: not alive(pid)) and not os.path.exists(sock)
    # the cache survives the restart
    assert plan(m)["cache"] == {"hits": 1, "misses": 0}
    assert daemon_cli.main(["clear", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"removed": 2}
    assert plan(m)["cache"] == {"hits": 0, "misses": 1}


def test_no_daemon_never_starts_one(rt):
    m = model_file(rt, "a")
    assert json.dumps(plan(m, no_daemon=True)["plan"]) == expected(m)
    assert not os.path.exists(os.path.join(rt.run, "daemon.sock"))


def test_kill9_mid_request_next_call_works(rt, monkeypatch):
    m = model_file(rt, "a")
    monkeypatch.setenv("BUILDTOOL_DAEMON_TEST_DELAY_S", "1.5")
    first = pid_now(rt)
    out = {}

    def call():
        with DaemonClient() as c:
            out["r"] = c.plan(m)
            out["pid"] = c.daemon_pid

    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.5)  # the daemon is sleeping inside the request
    os.kill(first, signal.SIGKILL)
    t.join(30)
    assert not alive(first)
    rt.pids.append(out["pid"])
    assert out["pid"] != first and json.dumps(out["r"]["plan"]) == expected(m)
    monkeypatch.delenv("BUILDTOOL_DAEMON_TEST_DELAY_S")
    assert json.dumps(plan(m)["plan"]) == expected(m)


def test_stale_socket_from_dead_daemon_is_cleaned(rt):
    m = model_file(rt, "a")
    pid = pid_now(rt)
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not alive(pid))
    sock = os.path.join(rt.run, "daemon.sock")

    def refused():
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(sock)
            except ConnectionRefusedError:
                return True
        return False

    assert wait_until(refused)  # the threads of a killed process take a moment to go
    assert os.path.exists(sock)  # left behind by kill -9
    assert json.dumps(plan(m)["plan"]) == expected(m)
    assert pid_now(rt) != pid
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)  # a live socket again, where the dead one was
    s.close()


def test_client_of_another_version_restarts_daemon(rt):
    m = model_file(rt, "a")
    code = ("import sys, buildtool; buildtool.__version__ = '0.0.0-old'; "
            "from buildtool.cli.served import server_main as main; sys.exit(main(['--detach']))")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    sock = os.path.join(rt.run, "daemon.sock")
    assert wait_until(lambda: os.path.exists(sock))
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    protocol.send(s, {"type": "hello", **protocol.versions()})
    hello = protocol.recv(s)
    s.close()
    old = hello["pid"]
    rt.pids.append(old)
    assert hello["ok"] is False and hello["buildtool"] == "0.0.0-old"
    assert wait_until(lambda: not alive(old))  # our hello made it exit
    assert json.dumps(plan(m)["plan"]) == expected(m)
    with DaemonClient() as c:
        st = c.status()
    rt.pids.append(st["pid"])
    assert st["pid"] != old and st["buildtool"] == protocol.versions()["buildtool"]


def test_eight_clients_at_once_share_one_daemon(rt):
    models = [model_file(rt, f"m{k}", (8, 8 + 4 * k, 12)) for k in range(4)]
    jobs = [models[0], models[0], models[0], models[1], models[1], models[2], models[3], models[3]]
    want = {m: expected(m) for m in models}
    results = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def run(k):
        with DaemonClient() as c:
            c.connect()
            barrier.wait()
            results[k] = (c.plan(jobs[k]), c.daemon_pid)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    pids = {pid for _, pid in results}
    rt.pids.extend(pids)
    assert len(pids) == 1
    for (r, _), m in zip(results, jobs):
        assert json.dumps(r["plan"]) == want[m]
    assert sum(r["cache"]["misses"] for r, _ in results) == len(models)
    assert sum(r["cache"]["hits"] for r, _ in results) == len(jobs) - len(models)


def test_corrupt_cache_entry_is_recomputed(rt):
    m = model_file(rt, "a")
    want = expected(m)
    assert plan(m)["cache"] == {"hits": 0, "misses": 1}
    assert daemon_cli.main(["stop"]) == 0  # its memory layer would hide the damage
    arena = os.path.join(rt.cache, "objects", "arena")
    (entry,) = [os.path.join(r, f) for r, _, fs in os.walk(arena) for f in fs]
    data = open(entry, "rb").read()
    open(entry, "wb").write(data[: len(data) - 7])  # truncated
    r = plan(m)
    assert r["cache"] == {"hits": 0, "misses": 1} and json.dumps(r["plan"]) == want
    with DaemonClient() as c:
        assert c.status()["corrupt_dropped"] == 1
    assert open(entry, "rb").read() == data  # rewritten whole
    assert plan(m)["cache"] == {"hits": 1, "misses": 0}


def test_oversized_and_garbage_messages_are_refused(rt):
    m = model_file(rt, "a")
    pid = pid_now(rt)
    sock = os.path.join(rt.run, "daemon.sock")
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    size = 100 << 20
    reply = {}

    def reader():
        try:
            reply["msg"] = protocol.recv(s)
        except (OSError, BuildtoolError) as e:
            reply["err"] = e

    t = threading.Thread(target=reader)
    t.start()
    try:
        s.sendall(struct.pack(">I", size) + b"\xa5" * size)
    except OSError:
        pass  # the daemon hangs up without reading 100 MB
    t.join(10)
    s.close()
    assert reply.get("msg", {}).get("type") == "error", reply
    assert "exceeds the 64 MiB limit" in reply["msg"]["error"]
    for garbage in (b"\x00\x00\x00\x05\xc1\xc1\xc1\xc1\xc1", os.urandom(4096), b"\x00\x00\x00\x02\x91\x01"):
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.sendall(garbage)
        s.shutdown(socket.SHUT_WR)
        try:
            r = protocol.recv(s)
        except (OSError, BuildtoolError):
            r = None
        s.close()
        assert r is None or r["type"] == "error"
    with DaemonClient() as c:  # still the same daemon, still serving
        assert json.dumps(c.plan(m)["plan"]) == expected(m)
        assert c.daemon_pid == pid


def test_failing_requests_answer_errors_and_daemon_survives(rt):
    m = model_file(rt, "a")
    bad = os.path.join(rt.dir, "bad.tflite")
    with open(bad, "wb") as f:
        f.write(b"not a model at all, just some bytes")
    with DaemonClient() as c:
        with pytest.raises(ModelError, match="not a TFLite model") as e:
            c.plan(bad)
        assert "\n" not in str(e.value)
        with pytest.raises(ModelError, match="model file not found"):
            c.plan(os.path.join(rt.dir, "missing.tflite"))
        with pytest.raises(BuildtoolError, match="unknown planning option"):
            c.plan(m, {"bogus": 1})
        with pytest.raises(BuildtoolError, match="unknown request type"):
            c.request({"type": "eval", "code": "1"})
        assert json.dumps(c.plan(m)["plan"]) == expected(m)
        rt.pids.append(c.daemon_pid)


def test_incremental_weights_hit_channel_change_misses(rt):
    m = model_file(rt, "a")
    opts = {"time_budget": 0}
    assert plan(m, opts)["cache"] == {"hits": 0, "misses": 1}
    with open(m, "wb") as f:  # retrained: every weight and scale changed, structure the same
        f.write(serialize(reweighted(small_cnn(name="a"), 7)))
    r = plan(m, opts)
    assert r["cache"] == {"hits": 1, "misses": 0} and json.dumps(r["plan"]) == expected(m, opts)
    save(small_cnn((8, 20, 12), name="a"), m)  # one layer's channel count: the whole-graph entry misses
    r = plan(m, opts)
    assert r["cache"] == {"hits": 0, "misses": 1} and json.dumps(r["plan"]) == expected(m, opts)
    rt.pids.append(pid_now(rt))


def test_watcher_replans_changed_model_in_background(rt, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_DAEMON_WATCH", "1")
    m = model_file(rt, "a")
    plan(m)
    with DaemonClient() as c:
        st = c.status()
        before = st["replans"]
        rt.pids.append(c.daemon_pid)
    assert st["watched"] == 1
    save(small_cnn((8, 24, 12), name="a"), m)  # written to a temp file and renamed over the model

    def replanned():
        with DaemonClient() as c:
            return c.status()["replans"] > before

    assert wait_until(replanned, 15)
    r = plan(m)
    assert r["cache"] == {"hits": 1, "misses": 0} and json.dumps(r["plan"]) == expected(m)


def test_idle_daemon_exits(rt, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_DAEMON_IDLE_S", "1")
    pid = pid_now(rt)
    assert wait_until(lambda: not alive(pid), 10)
    assert not os.path.exists(os.path.join(rt.run, "daemon.sock"))
    assert "idle for" in open(os.path.join(rt.run, "daemon.log")).read()


def test_incremental_fusion_blocks_through_daemon(rt, tmp_path):
    """The daemon's per-request counts equal an in-process Memo's on the same sequence
    (test_cache proves which blocks those are: only the ones touching the change)."""
    from buildtool.serve.cache import DiskStore, Memo

    m = model_file(rt, "f")
    opts = {"optimize": "ram", "time_budget": 0}
    local = Memo(DiskStore(str(tmp_path / "local")))
    steps = [lambda: None,
             lambda: open(m, "wb").write(serialize(reweighted(small_cnn(name="f"), 4))),
             lambda: save(small_cnn((8, 20, 12), name="f"), m)]
    for change in steps:
        change()
        want = service.plan_request(m, opts, local.session())
        got = plan(m, opts)
        assert got["cache"] == want["cache"] and json.dumps(got["plan"]) == json.dumps(want["plan"])
    assert want["cache"]["hits"] > 0 and want["cache"]["misses"] > 1
    rt.pids.append(pid_now(rt))


def test_daemon_that_cannot_start_fails_fast_and_plans_in_process(rt, monkeypatch, capsys):
    monkeypatch.setenv("BUILDTOOL_DAEMON_IDLE_S", "not-a-number")
    monkeypatch.setattr(client, "_warned", False)
    m = model_file(rt, "a")
    t = time.monotonic()
    with pytest.raises(BuildtoolError, match="failed to start .* see .*daemon.log"):
        DaemonClient().connect()
    assert json.dumps(plan(m)["plan"]) == expected(m)
    assert json.dumps(plan(m)["plan"]) == expected(m)
    assert time.monotonic() - t < 10
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("buildtool: warning: the planner daemon failed to start")
    assert err[0].endswith("; planning in this process")
    assert "not-a-number" in open(os.path.join(rt.run, "daemon.log")).read()


def test_graph_bytes_and_zoo_requests(rt):
    g = small_cnn((8, 12, 12))
    want = json.dumps(service.plan_request(g)["plan"])
    with DaemonClient() as c:
        assert json.dumps(c.plan(g)["plan"]) == want  # sent as .tflite bytes
        assert c.plan(serialize(g))["cache"] == {"hits": 1, "misses": 0}
        assert json.dumps(c.plan("tiny")["plan"]) == json.dumps(service.plan_request("tiny")["plan"])
        with pytest.raises(BuildtoolError, match="neither a model file nor a zoo name"):
            c.plan("no-such-zoo-model")
        rt.pids.append(c.daemon_pid)


def test_a_zoo_name_from_a_command_line_stays_a_zoo_name_in_the_daemon(tmp_path, monkeypatch):
    """The daemon's side of a client's command line says which string is a zoo name: a file of that
    name in the daemon's own directory does not turn it into a path (plan_message's zoo=)."""
    from buildtool.serve.daemon import protocol

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").write_bytes(b"not a model")
    assert "model" in protocol.plan_message("tiny", {})  # undecided: the file here wins
    assert protocol.plan_message("tiny", {}, zoo=True)["zoo"] == "tiny"
    m = protocol.plan_message("/abs/tiny", {}, "tiny", zoo=False)
    assert protocol.from_wire(m["model"]) == "/abs/tiny" and protocol.from_wire(m["source"]) == "tiny"


def test_warm_fused_plan_cli_imports_neither_numpy_nor_fusion(rt):
    """A warm `plan --optimize ram` answered by the daemon prints from the plan's JSON: the CLI
    process imports only what it uses (checked in -X importtime's list, not by timing)."""
    p = model_file(rt, "imp")
    cmd = [sys.executable, "-X", "importtime", "-m", "buildtool.cli", "plan", p, "--optimize", "ram"]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(service.__file__))))
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr[-2000:]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == first.stdout and r.stdout.startswith("imp: arena ") and "fusion blocks" in r.stdout
    imported = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "buildtool.serve.daemon.client" in imported  # the list is real: the client was imported
    assert not {m for m in imported if m.split(".")[0] == "numpy" or m.startswith("buildtool.plan.fusion")}
    # nor the other commands' modules, nor what only a miss or --json needs, nor (the daemon runs the
    # command line: daemon/thin.py) the parser, the options and the pipeline
    assert not imported & {"buildtool.cli.gen", "buildtool.integrations.watch", "buildtool.cli.multi", "buildtool.netsplit.cli",
                           "buildtool.cli.daemon", "hashlib", "json", "argparse", "dataclasses",
                           "buildtool.options", "buildtool.pipeline"}


def _cli(args, cwd, umask=None, **env):
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "buildtool.cli", *args], capture_output=True,
                       text=True, cwd=cwd, timeout=120,  # this checkout's buildtool, installed or not
                       env=dict(os.environ, PYTHONPATH=str(Path(service.__file__).resolve().parents[2]), **env),
                       preexec_fn=None if umask is None else lambda: os.umask(umask))
    lines = r.stderr.splitlines()
    ran_here = any(line.endswith("| argparse") for line in lines)
    return (r.returncode, r.stdout, [x for x in lines if not x.startswith("import time:")]), ran_here


def test_the_daemon_runs_a_warm_command_line_with_the_output_of_one_run_here(rt):
    """A running daemon runs `buildtool plan ...` for the client (daemon/thin.py -> cli.served.serve): the same
    stdout, stderr and exit status as --no-daemon, with paths relative to the client's directory and
    errors naming the model as typed; a usage error and --help still come from this process."""
    m = model_file(rt, "thin")
    d = os.path.dirname(m)
    runs = [["plan", "thin.tflite", "--optimize", "ram"],  # relative to the client's cwd, not the daemon's
            ["plan", "thin.tflite"],
            ["plan", "tiny", "--input-streamed", "--optimize", "ram"],  # a zoo name
            ["plan", "thin.tflite", "--optimize", "macs", "--ram-limit", "100"],  # a PlanError, exit 2
            ["plan", "missing.tflite"]]  # a ModelError: the path as typed
    here = [_cli(a + ["--no-daemon"], d) for a in runs]
    assert all(ran for _, ran in here)
    _cli(runs[0], d)  # starts the daemon (this one ran here)
    for args, (want, _) in zip(runs, here):
        got, ran_here = _cli(args, d)
        assert not ran_here, args  # the daemon ran it: this process never imported argparse
        assert got == want, args
    assert here[3][0][0] == 2 and here[3][0][2][-1].startswith("buildtool: error: thin.tflite: no plan fits 100 B")
    assert here[4][0][2] == ["buildtool: error: missing.tflite: model file not found; check the path"]
    bad, ran_here = _cli(["plan", "thin.tflite", "--optimize", "fast"], d)
    assert ran_here and bad[0] == 2 and "invalid choice: 'fast'" in bad[2][-1]
    assert _cli(["plan", "thin.tflite", "--json"], d)[1] is False
    out = json.loads(_cli(["plan", "thin.tflite", "--json"], d)[0][1])
    assert out["cache"]["hits"] == 1 and out["arena_bytes"] == json.loads(
        _cli(["plan", "thin.tflite", "--json", "--no-daemon"], d)[0][1])["arena_bytes"]


def test_the_daemon_runs_warm_gen_steps_with_the_files_and_output_of_one_run_here(rt):
    """`buildtool gen STEP` through the fast path (the build systems' one process per step): every step
    the daemon may run writes the same bytes as with --no-daemon, paths taken from the client's
    directory; an error names the path as typed, with the same status; `gen board` runs here."""
    m = model_file(rt, "genthin")
    d = os.path.dirname(m)
    steps = lambda o: [["gen", "skeleton", "genthin.tflite", "-o", f"{o}/s.json", "--depfile", f"{o}/s.d"],  # noqa: E731
                       ["gen", "plan", f"{o}/s.json", "-o", f"{o}/p.json", "--opt", "optimize=ram"],
                       ["gen", "code", "genthin.tflite", f"{o}/p.json", "--board", "cortex-m4", "-o", f"{o}/c"],
                       ["gen", "flash", "genthin.tflite", f"{o}/p.json", "--board", "cortex-m4", "-o", f"{o}/w.bin"],
                       ["gen", "model", "tiny", "-o", f"{o}/tiny.tflite"],
                       ["gen", "skeleton", "nothere.tflite", "-o", f"{o}/x.json"],  # a ModelError
                       ["gen", "skeleton", "genthin.tflite", "-o", "nodir/x.json"]]  # a WriteError
    for o in ("here", "there"):
        os.mkdir(os.path.join(d, o))
    here = [_cli(a + ["--no-daemon"], d) for a in steps("here")]
    assert [r[0][0] for r in here] == [0, 0, 0, 0, 0, 2, 2] and all(ran for _, ran in here)
    _cli(["plan", "genthin.tflite"], d)  # starts the daemon
    for args, (want, _) in zip(steps("there"), here):
        got, ran_here = _cli(args, d)
        assert not ran_here, args
        assert got == want, args
    assert here[5][0][2] == ["buildtool: error: nothere.tflite: model file not found; check the path"]
    assert here[6][0][2] == ["buildtool: error: cannot write nodir/x.json: directory nodir does not exist; "
                             "create it or choose another path"]
    for f in ("s.json", "p.json", "c/model.c", "c/model.h", "c/firmware.json", "w.bin", "tiny.tflite"):
        assert (Path(d) / "there" / f).read_bytes() == (Path(d) / "here" / f).read_bytes(), f
    dep = (Path(d) / "there" / "s.d").read_text()
    assert dep.startswith(f"{Path(d) / 'there' / 's.json'}: {Path(m)}") and "model/reader.py" in dep
    assert _cli(["gen", "board", "--board", "cortex-m4", "-o", "b"], d)[1]  # not a daemon step: here


def test_the_daemon_writes_a_clients_files_with_the_clients_umask(rt):
    """A daemon started by a build with umask 077 writes a gen step's files (and the output directory
    it creates) as the step's own process would have: 0644 / 0755 under umask 022, 0640 / 0750
    under 027, as with --no-daemon."""
    m = model_file(rt, "um")
    d = os.path.dirname(m)
    assert _cli(["plan", "um.tflite"], d, umask=0o077)[0][0] == 0  # starts the daemon: umask 077
    mode = lambda p: stat.S_IMODE(os.stat(os.path.join(d, p)).st_mode)  # noqa: E731
    for umask, want in ((0o022, 0o644), (0o027, 0o640)):
        for o, flag in ((f"d{umask:o}", []), (f"h{umask:o}", ["--no-daemon"])):
            for args in (["gen", "skeleton", "um.tflite", "-o", f"{o}.json"],
                         ["gen", "plan", f"{o}.json", "-o", f"{o}p.json"],
                         ["gen", "code", "um.tflite", f"{o}p.json", "--board", "cortex-m4", "-o", f"{o}/c"]):
                (code, _, err), ran_here = _cli(args + flag, d, umask=umask)
                assert code == 0 and ran_here == bool(flag), (args, err)
            assert [mode(f"{o}{f}") for f in (".json", "p.json", "/c/model.c", "/c/firmware.json")] == [want] * 4, o
            assert mode(o) == mode(f"{o}/c") == 0o777 & ~umask, o  # the directories gen code created


def test_write_behind_entries_are_on_disk_once_the_daemon_stops(rt, monkeypatch):
    """The daemon writes cache entries behind its answers; stopping it flushes them: an in-process
    memo over the same directory then hits the plan and every fusion block."""
    from buildtool.serve.cache import DiskStore, Memo

    monkeypatch.setenv("BUILDTOOL_CACHE_WRITE_QUIET_S", "600")  # the writer waits: only the exit flush writes
    m = model_file(rt, "wb")
    opts = {"optimize": "ram", "time_budget": 0}
    cold = plan(m, opts)
    assert cold["cache"]["misses"] > 1
    pid = pid_now(rt)
    assert not os.path.exists(os.path.join(rt.cache, "objects", "fused"))  # queued, not yet written
    assert daemon_cli.main(["stop"]) == 0
    assert wait_until(lambda: not alive(pid))
    store = DiskStore(rt.cache)
    assert store.stats()["entries"] == cold["cache"]["misses"] + 1  # + the model index entry
    local = Memo(store)
    again = service.plan_request(m, opts, local.session())
    assert again["cache"] == {"hits": 1, "misses": 0} and json.dumps(again["plan"]) == json.dumps(cold["plan"])
    assert store.corrupt == 0
