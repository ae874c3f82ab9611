"""Issue 52.5 and 52.6: nothing unbounded in the planner daemon and the Bazel worker; a gen step the
daemon says it did but whose outputs this process does not see (another mount namespace) runs here."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from buildtool import cli
from buildtool.cli import gen as gen_cli
from buildtool.serve.daemon import client, protocol


# -- 6. a daemon that writes where the client cannot see ------------------------------------------
class _FakeDaemon:
    """A daemon in another mount namespace: it says the step is done (with the digests it saw) and
    nothing appears here. claim: {path: bytes} the reply says were written."""

    calls = []

    def __init__(self, claim=None):
        self.claim = claim or {}

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def request(self, msg):
        _FakeDaemon.calls.append(msg)
        return {"type": "ok", "done": msg["args"]["step"], "notes": [],
                "outputs": {p: hashlib.sha256(b).hexdigest() for p, b in self.claim.items()}}


@pytest.fixture
def model(tmp_path):
    assert cli.main(["gen", "model", "tiny", "-o", str(tmp_path / "m.tflite"), "--no-daemon"]) == 0
    assert cli.main(["gen", "skeleton", str(tmp_path / "m.tflite"), "-o", str(tmp_path / "want.json"),
                     "--no-daemon"]) == 0
    return tmp_path


@pytest.mark.parametrize("case", ["nothing", "stale file", "claims the right bytes"])
def test_a_gen_step_whose_daemon_outputs_are_not_here_runs_in_this_process(case, model, monkeypatch, capsys):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    out = model / "s.json"
    want = (model / "want.json").read_bytes()
    claim = {}
    if case == "stale file":
        out.write_bytes(b"an earlier build's\n")
        claim = {str(out): want}
    elif case == "claims the right bytes":
        claim = {str(out): want}
    _FakeDaemon.calls = []
    monkeypatch.setattr(cli, "run_in_daemon", lambda argv: None)  # not the fast path to a daemon an earlier test left
    monkeypatch.setattr(gen_cli, "DaemonClient", _FakeDaemon(claim))
    monkeypatch.setattr(client, "_warned", False)
    monkeypatch.chdir(model)
    assert cli.main(["gen", "skeleton", "m.tflite", "-o", "s.json"]) == 0
    assert len(_FakeDaemon.calls) == 1 and out.read_bytes() == want
    err = capsys.readouterr().err
    assert err == ("buildtool: warning: the planner daemon's output s.json is not here (a daemon in another mount "
                   "namespace?); running the step in this process\n"), err


def test_a_gen_step_whose_outputs_are_here_is_not_run_again(model, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    out = model / "s.json"
    out.write_bytes((model / "want.json").read_bytes())  # as the daemon wrote it
    monkeypatch.setattr(cli, "run_in_daemon", lambda argv: None)
    monkeypatch.setattr(gen_cli, "DaemonClient", _FakeDaemon({str(out): out.read_bytes()}))
    monkeypatch.setattr("buildtool.cli.gen_steps.run_step", lambda a: pytest.fail("ran here"))
    assert cli.main(["gen", "skeleton", str(model / "m.tflite"), "-o", str(out)]) == 0


def test_an_output_written_through_never_goes_to_the_daemon(model, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    _FakeDaemon.calls = []
    monkeypatch.setattr(cli, "run_in_daemon", lambda argv: None)
    monkeypatch.setattr(gen_cli, "DaemonClient", _FakeDaemon())
    assert cli.main(["gen", "skeleton", str(model / "m.tflite"), "-o", "/dev/null"]) == 0
    assert _FakeDaemon.calls == []


class _FakeThinDaemon(_FakeDaemon):
    """The fast path's daemon in another mount namespace: it ran the command line and claims its outputs."""

    def connect(self):
        return True

    def request(self, msg):
        _FakeDaemon.calls.append(msg)
        return {"type": "cli", "lines": [], "exit": 0,
                "outputs": {p: hashlib.sha256(b).hexdigest() for p, b in self.claim.items()}}


def test_the_fast_path_runs_a_gen_step_here_when_its_outputs_are_not_here(model, monkeypatch):
    from buildtool.serve.daemon import thin

    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    out = model / "s.json"
    _FakeDaemon.calls = []
    monkeypatch.setattr(thin, "DaemonClient", lambda start=False: _FakeThinDaemon({str(out): b"its bytes"}))
    assert thin.run_in_daemon(["gen", "skeleton", str(model / "m.tflite"), "-o", str(out)]) is None
    out.write_bytes(b"its bytes")  # now this process sees what the daemon wrote
    assert thin.run_in_daemon(["gen", "skeleton", str(model / "m.tflite"), "-o", str(out)]) == 0
    assert len(_FakeDaemon.calls) == 2


def test_a_fifo_among_the_outputs_is_unseen_without_blocking(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    assert protocol.unseen_output({str(fifo): hashlib.sha256(b"").hexdigest()}) == str(fifo)


def test_the_daemon_runs_no_gen_step_whose_output_is_written_through(tmp_path):
    from buildtool.cli import served

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    assert served.serve(["gen", "model", "tiny", "-o", str(fifo)], str(tmp_path), None, lambda g, o: None) is None
    assert served.serve(["gen", "model", "tiny", "-o", "/dev/stdout"], str(tmp_path), None, lambda g, o: None) is None


def test_gen_outputs_names_every_file_a_step_writes():
    assert protocol.gen_outputs({"step": "code", "output": "/o", "depfile": "/d"}) == [
        "/o/model.c", "/o/model.h", "/o/firmware.json", "/d"]
    assert protocol.gen_outputs({"step": "flash", "output": "/w.bin", "split_header": "/s.h"}) == ["/w.bin", "/s.h"]


# -- 5. a WHILE that never ends ------------------------------------------------------------------------
RELIABILITY = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "reliability"


def _reliability(name: str) -> Path:
    p = RELIABILITY / f"{name}.tflite"
    if not p.exists():
        pytest.skip(f"{p} not present")
    return p


@pytest.fixture
def x_1x8(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.zeros((1, 8), np.int8))
    return str(p)


def _buildtool(args, timeout=300):
    return subprocess.run([sys.executable, "-m", "buildtool.cli"] + [str(a) for a in args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, "BUILDTOOL_NO_DAEMON": "1"})


def test_run_stops_a_while_that_never_ends_in_one_line_naming_the_model(x_1x8):
    m = _reliability("while_forever")
    r = _buildtool(["run", m, "--input", x_1x8, "--max-iterations", "50"], timeout=120)
    assert r.returncode == 2 and r.stderr == (
        f"buildtool: error: {m}: operator 0 (WHILE) ran 50 iterations and its condition still holds: a loop that "
        f"never ends? (a longer one: raise --max-iterations)\n"), r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("bound, done", [(5, True), (4, False)])
def test_the_bound_lets_a_loop_of_exactly_that_many_iterations_end(bound, done):
    """A WHILE of 5 iterations (cond i < 5) runs with a bound of 5 and is stopped by 4, in both executors."""
    from buildtool.model.control import IterationLimit, iteration_bound
    from buildtool.plan.arena.execute import run_unplanned
    from buildtool.plan.kinds import execute
    from buildtool.steps.readback import load_plan
    from buildtool.serve import service
    from buildtool.steps.models import read_model

    g = read_model(str(_reliability("while_1e6"))).graph
    g = _with_limit(g, 5)
    plan = load_plan(service.plan_request(g, {})["plan"], g)
    x = [np.arange(8, dtype=np.int8).reshape(1, 8)]
    with iteration_bound(bound):
        for run in (lambda: execute(plan, g, x), lambda: run_unplanned(g, x)):
            if done:
                assert int(run()[1].reshape(-1)[0]) == 5
            else:
                with pytest.raises(IterationLimit, match="^operator 0 \\(WHILE\\) ran 4 iterations"):
                    run()


def _with_limit(g, n: int):
    """while_1e6 with its loop's limit (the cond subgraph's one int32 constant, 1e6) set to n."""
    import dataclasses

    kc = g.operators[0].options["cond_subgraph"]
    s = g.subgraph(kc)
    consts = [i for op in s.operators for i in op.inputs if g.tensors[i].is_const]
    assert len(consts) == 1 and int(np.asarray(g.tensors[consts[0]].data).reshape(-1)[0]) == 1_000_000
    tensors = list(g.tensors)
    t = tensors[consts[0]]
    tensors[consts[0]] = dataclasses.replace(t, data=np.full(np.shape(t.data), n, np.int32))
    return dataclasses.replace(g, tensors=tensors)


def test_the_firmware_stops_a_while_that_never_ends_in_one_line_naming_the_model(x_1x8, tmp_path):
    m = _reliability("while_forever")
    r = _buildtool(["run", m, "--input", x_1x8, "--board", "host", "--build-dir", tmp_path / "b"])
    assert r.returncode == 2, r.stderr
    line = r.stderr.splitlines()[-1]
    assert line.startswith(f"buildtool: error: {m}: firmware on host exited with 4 (model_invoke "
                           "failed): bt: a WHILE operator ran BT_MAX_ITERATIONS iterations and its condition "
                           "still holds"), r.stderr
    assert "Traceback" not in r.stderr


def test_the_firmware_runs_a_long_loop_to_its_end_and_its_timeout_names_the_model(x_1x8, tmp_path):
    from buildtool import pipeline
    from buildtool.firmware import runner, toolchain
    from buildtool.steps.models import read_model

    g = read_model(str(_reliability("while_1e6"))).graph
    pipeline.build(g, "host", tmp_path)
    y = runner.run("host", tmp_path, np.zeros((1, 8), np.int8))[0]
    assert int(np.asarray(y[1]).reshape(-1)[0]) == 1_000_000  # the bound lets a loop of exactly 1e6 end
    with pytest.raises(toolchain.FirmwareError) as e:
        runner.run("host", tmp_path, np.zeros((1, 8), np.int8), timeout=0.01)
    assert str(e.value) == "model 'while_1e6': firmware on host exited with 124 (timeout): stopped after 0.01 s"


# -- 5. the Bazel persistent worker's frames -----------------------------------------------------------
def _frame(msg: bytes) -> bytes:
    from buildtool.integrations.bazel import _varint

    return _varint(len(msg)) + msg


def _request(args: list, rid: int) -> bytes:
    from buildtool.integrations.bazel import _varint

    body = b"".join(b"\x0a" + _varint(len(a.encode())) + a.encode() for a in args) + b"\x18" + _varint(rid)
    return _frame(body)


def test_a_malformed_work_request_is_one_line_on_stderr_and_an_error_response():
    """The issue's frame (field 1 with wire type 3), then a good request: the worker answers both, in order."""
    from buildtool.integrations.bazel import parse_request

    stream = b"\x02\x0b\x00" + _request(["model", "nosuchzoo", "-o", "/nonexistent/x"], 7)
    r = subprocess.run([sys.executable, "-m", "buildtool.integrations.bazel", "gen", "--persistent_worker"],
                       input=stream, capture_output=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0
    assert r.stderr.decode() == ("buildtool: error: Bazel worker: a malformed WorkRequest (wire type 3 of field 1); "
                                 "skipped it\n")
    first = parse_request(r.stdout[1:1 + r.stdout[0]])  # a WorkResponse reads as fields 1..3 too
    assert first["requestId"] == 0
    assert b"\x08\x02" in r.stdout[:3] and b"\x18\x07" in r.stdout  # exit 2; the next request answered (id 7)


@pytest.mark.parametrize("bad, why", [
    (b"\x0a\x05ab", "it ends inside a field"),
    (b"\x0a\x02\xff\xfe", "an argument is not UTF-8"),
    (b"\x18" + b"\xff" * 11, "a varint longer than 10 bytes"),
    (b"\x0c", "wire type 4 of field 1")])
def test_each_kind_of_malformed_request_is_named(bad, why):
    from buildtool.integrations.bazel import MalformedRequest, parse_request

    with pytest.raises(MalformedRequest) as e:
        parse_request(bad)
    assert str(e.value) == why


def test_an_oversized_frame_is_refused_without_being_buffered():
    """A 64 MiB frame: refused on its length, its bytes read and dropped (peak memory a few MiB, not
    64), and the request after it read in step."""
    import threading
    import tracemalloc

    from buildtool.integrations import bazel

    r, w = os.pipe()
    size = 64 << 20

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(bazel._varint(size))
            block = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                f.write(block)
            f.write(_request(["plan", "x"], 3))

    t = threading.Thread(target=feed)
    t.start()
    tracemalloc.start()
    try:
        got = list(bazel.requests(r))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        t.join()
        os.close(r)
    assert [str(x) if isinstance(x, Exception) else x for x in got] == [
        "67,108,864 bytes, more than the 16 MiB a request may have", {"arguments": ["plan", "x"], "requestId": 3}]
    assert peak < 8 << 20, peak


# -- 5. the planner daemon: idle and stalled clients, message memory, the watched list ------------------
@pytest.fixture
def daemon(tmp_path, monkeypatch):
    """A Daemon of this process serving a socket of its own (its thread stopped at the end)."""
    import socket
    import tempfile
    import threading

    from buildtool.serve.daemon import server

    d_dir = tempfile.mkdtemp(prefix="bth", dir="/tmp")  # short: a Unix socket path is ~100 bytes at most
    monkeypatch.setenv("BUILDTOOL_RUNTIME_DIR", os.path.join(d_dir, "run"))  # DaemonClient finds this one
    paths = dict(protocol.paths(), lock="")
    d = server.Daemon(paths, 600, str(tmp_path / "cache"), 1 << 20)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(paths["socket"])
    listener.listen(128)
    t = threading.Thread(target=d.serve, args=(listener,), daemon=True)
    t.start()
    yield d
    d.stop_event.set()
    t.join(10)
    listener.close()
    import shutil

    shutil.rmtree(d_dir, ignore_errors=True)


def _raw(d):
    import socket

    s = socket.socket(socket.AF_UNIX)
    s.connect(d.paths["socket"])
    return s


def _status(d, timeout=10):
    s = _raw(d)
    s.settimeout(timeout)
    try:
        protocol.send(s, {"type": "hello", **protocol.versions()})
        assert protocol.recv(s)["ok"]
        protocol.send(s, {"type": "status"})
        return protocol.recv(s)
    finally:
        s.close()


def test_64_idle_connections_keep_neither_status_nor_a_plan_out(daemon):
    """The issue's 64 idle connections (connected, nothing sent): `daemon status` and a plan are answered at
    once, each closing the longest-idle connection to get in (it was refused: 'serving 64 connections')."""
    from buildtool.serve.daemon import server

    import time

    idle = [_raw(daemon) for _ in range(server.MAX_CONNECTIONS)]
    from conftest import wait_until

    assert wait_until(lambda: daemon._connections == server.MAX_CONNECTIONS and len(daemon._idle) == len(idle))
    t = time.monotonic()
    assert _status(daemon)["type"] == "status"
    s = _raw(daemon)
    s.settimeout(60)
    protocol.send(s, {"type": "hello", **protocol.versions()})
    assert protocol.recv(s)["ok"]
    protocol.send(s, protocol.plan_message("tiny", {}, zoo=True))
    reply = protocol.recv(s)
    assert reply["type"] == "result" and reply["result"]["plan"]["arena_bytes"] > 0, reply
    assert time.monotonic() - t < 30
    closed = 0
    for c in idle:  # the evicted ones read end of file at once
        c.setblocking(False)
        try:
            closed += c.recv(1) == b""
        except BlockingIOError:
            pass
        c.close()
    s.close()
    assert closed >= 1


def test_an_idle_or_stalled_connection_is_closed_early(daemon, monkeypatch):
    from buildtool.serve.daemon import server
    from conftest import wait_until

    monkeypatch.setattr(server, "IDLE_CONN_S", 0.3)
    monkeypatch.setattr(server, "MESSAGE_S", 0.3)
    quiet, slow = _raw(daemon), _raw(daemon)
    slow.sendall(b"\x00\x00\x01\x00" + b"\x81")  # a 256-byte message, 1 byte of it sent
    for c in (quiet, slow):
        c.settimeout(10)
        assert c.recv(1) == b""  # closed by the daemon, long before CONN_TIMEOUT_S
        c.close()
    assert wait_until(lambda: daemon._connections == 0)


def test_a_client_whose_idle_connection_was_closed_reconnects(daemon, monkeypatch):
    """A build holding its connection between steps longer than IDLE_CONN_S: its next request still
    gets its answer (the client resends once on a new connection)."""
    import time

    from buildtool.serve.daemon import server
    from buildtool.serve.daemon.client import DaemonClient

    monkeypatch.setattr(server, "IDLE_CONN_S", 0.3)
    with DaemonClient(start=False) as c:
        assert c.status()["pid"] == os.getpid()
        time.sleep(1.0)  # the daemon closed the connection meanwhile
        assert c.status()["pid"] == os.getpid()


def test_a_big_message_costs_about_its_size_once(monkeypatch):
    """A 16 MiB message is held once while read and once decoded (a copy of the body is not made)."""
    import socket
    import threading
    import tracemalloc

    body = {"type": "ping", "pad": b"\1" * (16 << 20)}
    data = protocol.encode(body)
    a, b = socket.socketpair()
    t = threading.Thread(target=lambda: (b.sendall(data), b.close()))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        t.start()
        msg = protocol.recv(a)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
        t.join()
        a.close()
    assert msg["pad"] == body["pad"]
    assert peak < 2.4 * (16 << 20), peak


@pytest.mark.parametrize("what", ["one wide array", "many small maps"])
def test_a_request_of_millions_of_small_objects_is_refused_before_they_are_made(what):
    """4 Mi empty arrays in one array, or 1,024 arrays of 4,096 empty maps: one ProtocolError line, memory
    about the message's size (decoded they were 4 million Python objects of 56 bytes or more each)."""
    import socket
    import struct
    import threading
    import tracemalloc

    n = 4 << 20
    if what == "one wide array":
        body, why = b"\xdd" + struct.pack(">I", n) + b"\x90" * n, f"{n} exceeds max_array_len(4096)"
    else:
        inner = b"\xdc" + struct.pack(">H", 4096) + b"\x80" * 4096
        body, why = b"\xdc" + struct.pack(">H", 1024) + inner * 1024, "more than 4096 arrays and maps"
    a, b = socket.socketpair()
    t = threading.Thread(target=lambda: (b.sendall(struct.pack(">I", len(body)) + body), b.close()))
    tracemalloc.start()
    try:
        t.start()
        with pytest.raises(protocol.ProtocolError) as e:
            protocol.recv(a, request=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        t.join()
        a.close()
    assert str(e.value) == f"a request too large in structure ({why})"
    assert peak < 3 * len(body), peak


def test_the_watched_model_list_is_bounded(tmp_path, monkeypatch):
    from buildtool.serve.daemon import watch

    monkeypatch.setattr(watch, "MAX_WATCHED", 3)
    monkeypatch.setattr(watch, "MAX_OPTIONS", 2)
    w = watch.ModelWatcher(lambda p, o: None)
    try:
        for k in range(10):
            (tmp_path / f"d{k}").mkdir()
            w.watch(str(tmp_path / f"d{k}" / "m.tflite"), {"k": k})
        for k in range(5):
            w.watch(str(tmp_path / "d9" / "m.tflite"), {"o": k})
        assert w.watched == 3 and w.folders == 3
        assert list(w._options) == [str(tmp_path / f"d{k}" / "m.tflite") for k in (7, 8, 9)]
        assert len(w._options[str(tmp_path / "d9" / "m.tflite")]) == 2
    finally:
        w.stop()


# -- 6. three scons in one tree -----------------------------------------------------------------------
@pytest.mark.slow
def test_three_cold_scons_in_one_tree_all_succeed(tmp_path):
    """The issue's race (board=host, cold, tiny_cnn_32): three scons started together each deleted and
    rewrote objects the others were linking (6 of 9 failed: cannot find .../obj/kernels/transpose.o).
    The build folder's lock makes the later ones wait, say so, and find everything up to date."""
    import shutil

    model = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models" / "tiny_cnn_32.tflite"
    if not model.exists():
        pytest.skip(f"{model} not present")
    top = tmp_path / "t"
    top.mkdir()
    shutil.copy(ROOT / "SConstruct", top / "SConstruct")
    (top / "buildtool").symlink_to(ROOT / "buildtool")
    for _ in range(2):
        shutil.rmtree(top / "build", ignore_errors=True)
        for f in top.glob(".sconsign*"):
            f.unlink()
        ps = [subprocess.Popen([sys.executable, "-m", "SCons", "-Q", "-C", str(top), "board=host", f"model={model}"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
              for _ in range(3)]
        outs = [p.communicate(timeout=600)[0] for p in ps]
        assert [p.returncode for p in ps] == [0, 0, 0], "\n----\n".join(outs)
        assert sum("scons: waiting for another build of" in o for o in outs) >= 1, outs
        elf = top / "build" / "host" / "tiny_cnn_32" / "firmware.elf"
        assert elf.is_file()
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-q", "-C", str(top), "board=host", f"model={model}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr  # up to date
