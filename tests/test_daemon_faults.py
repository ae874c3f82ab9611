"""Faults around the planner daemon and its cache: each test reproduces one defect a red team found.

Every test gets private BUILDTOOL_RUNTIME_DIR / BUILDTOOL_CACHE_DIR (the rt fixture of test_daemon).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time

import pytest

from buildtool.model.files import max_model_bytes
from buildtool import cli
from buildtool.serve import service
from buildtool.serve.daemon import client, protocol, server
from buildtool.serve.daemon.client import DaemonClient
from buildtool.serve.service import plan_json as plan
from buildtool.errors import ModelError, UsageError
from test_daemon import alive, expected, model_file, pid_now, rt, wait_until  # noqa: F401 (rt is a fixture)
from test_reader_fuzz import bad_models


def run_cli(args, capsys):
    capsys.readouterr()
    rc = cli.main(args)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def fresh_warning(monkeypatch):
    monkeypatch.setattr(client, "_warned", False)


def log_text(rt) -> str:
    with open(os.path.join(rt.run, "daemon.log"), errors="replace") as f:
        return f.read()


# -- issue 10 item 7: errors through the daemon read exactly like --no-daemon ------------------
def test_errors_through_daemon_equal_in_process(rt, capsys, monkeypatch):
    paths = bad_models(__import__("pathlib").Path(rt.dir))
    monkeypatch.chdir(rt.dir)  # relative paths, as a user types them
    for name in ("truncated", "unsupported-op", "missing", "not-tflite"):
        rel = os.path.basename(paths[name])
        rc_d, _, err_d = run_cli(["plan", rel], capsys)
        rc_n, _, err_n = run_cli(["plan", rel, "--no-daemon"], capsys)
        assert (rc_d, err_d) == (rc_n, err_n) and rc_n == 2, name
        assert len(err_n.splitlines()) == 1 and rel in err_n and rt.dir not in err_n, err_n
    rt.pids.append(pid_now(rt))


# -- item 11: a model path that is not UTF-8 -----------------------------------------------------
def test_non_utf8_model_path_through_daemon(rt, fresh_warning):
    good = os.fsdecode(os.path.join(rt.dir.encode(), b"caf\xe9.tflite"))  # latin-1 bytes: not UTF-8
    shutil.copy(model_file(rt, "a"), good)
    assert json.dumps(plan(good)["plan"]) == expected(good)
    missing = os.fsdecode(os.path.join(rt.dir.encode(), b"\xff\xfe.tflite"))
    with pytest.raises(ModelError) as d:
        plan(missing)
    with pytest.raises(ModelError) as n:
        plan(missing, no_daemon=True)
    assert str(d.value) == str(n.value) == f"{missing}: model file not found; check the path"
    with DaemonClient() as c:
        assert c.status()["misses"] == 1  # the first plan went through the daemon
        rt.pids.append(c.daemon_pid)


# -- options: types are checked at the protocol boundary ----------------------------------------------
@pytest.mark.parametrize("options, needle", [({"align": "16"}, "align='16' is invalid"),
                                             ({"time_budget": float("nan")}, "time_budget=nan is invalid"),
                                             ({"align": 2 ** 64}, "align=18446744073709551616 is invalid"),
                                             ({"inplace": "no"}, "inplace='no' is invalid")])
def test_daemon_checks_option_types(rt, options, needle):
    m = model_file(rt, "a")
    with DaemonClient() as c:
        rt.pids.append(c.daemon_pid)
        with pytest.raises(UsageError, match=needle):  # what the client says before sending
            c.plan(m, options)
        if options != {"align": 2 ** 64}:  # the daemon's own check, for clients that are not ours
            with pytest.raises(UsageError, match=needle):
                c.request({"type": "plan", "model": m, "options": options})
        assert json.dumps(c.plan(m)["plan"]) == expected(m)  # still serving


def test_cli_refuses_out_of_range_numbers_in_one_line(rt, capsys):
    for args in (["--align", str(2 ** 64)], ["--align", str(2 ** 40)], ["--time-budget", "nan"],
                 ["--time-budget", "1e9"], ["--optimize", "ram", "--max-mac-overhead", "inf"]):
        for where in ([], ["--no-daemon"]):
            rc, _, err = run_cli(["plan", "tiny", *args, *where], capsys)
            assert rc == 2 and len(err.splitlines()) == 1 and "is invalid: it must be" in err, (args, err)
    rc, _, err = run_cli(["report", "tiny", "--align", str(2 ** 64), "-o", os.path.join(rt.dir, "r.html")], capsys)
    assert rc == 2 and "--align 18446744073709551616 is invalid" in err


# -- item 3: a cache that cannot be written never fails a plan ------------------------------------------
def test_unwritable_cache_dir_through_daemon(rt, monkeypatch):
    blocker = os.path.join(rt.dir, "file")
    open(blocker, "w").close()
    monkeypatch.setenv("BUILDTOOL_CACHE_DIR", os.path.join(blocker, "cache"))  # below a regular file
    m, n = model_file(rt, "a"), model_file(rt, "b", (8, 12, 12))
    assert json.dumps(plan(m)["plan"]) == expected(m)
    assert json.dumps(plan(n)["plan"]) == expected(n)
    with DaemonClient() as c:
        rt.pids.append(c.daemon_pid)
        assert c.status()["cache_write_errors"] >= 2
    assert log_text(rt).count("cannot be written") == 1


# -- item 14: a runtime directory someone else made -------------------------------------------------
def test_unusable_runtime_dir_plans_in_process(rt, capsys, fresh_warning):
    os.makedirs(rt.run, mode=0o700)
    os.chmod(rt.run, 0o777)  # as another user's pre-created /tmp/buildtool-<uid> would be to us
    m = model_file(rt, "a")
    capsys.readouterr()
    assert json.dumps(plan(m)["plan"]) == expected(m)
    assert json.dumps(plan(m)["plan"]) == expected(m)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "is not a private directory owned by you" in err[0]
    assert err[0].startswith("buildtool: warning:") and err[0].endswith("; planning in this process")
    assert not os.path.exists(os.path.join(rt.run, "daemon.sock"))
    rc, out, _ = run_cli(["daemon", "clear"], capsys)
    assert rc == 0 and out.startswith("removed ")


# -- issue 10 item 8: started from another checkout's root -------------------------------------------
def test_daemon_started_from_another_checkout_runs_our_code(rt, monkeypatch, capsys, fresh_warning):
    clone = os.path.join(rt.dir, "clone")
    shutil.copytree(os.path.dirname(service.__file__), os.path.join(clone, "buildtool"), copy_function=shutil.copy,
                    ignore=shutil.ignore_patterns("__pycache__"))  # a clone: new paths and mtimes
    m = model_file(rt, "a")
    monkeypatch.chdir(clone)
    assert json.dumps(plan(m)["plan"]) == expected(m)
    assert capsys.readouterr().err == ""  # no warning: the daemon answered
    with DaemonClient() as c:
        st = c.status()
        rt.pids.append(c.daemon_pid)
    assert st["code"] == protocol.versions()["code"] and st["misses"] == 1


def test_daemon_of_other_code_is_started_once_then_in_process(rt, monkeypatch, capsys, fresh_warning):
    other = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import buildtool; buildtool.__version__ = '0-other'; "
             "from buildtool.cli.served import server_main as main; sys.exit(main(sys.argv[1:]))")
    monkeypatch.setattr(client, "_SERVER", other)
    m = model_file(rt, "a")
    assert json.dumps(plan(m)["plan"]) == expected(m)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "runs other code" in err[0] and err[0].endswith("; planning in this process")
    assert wait_until(lambda: "client of another version" in log_text(rt))
    assert log_text(rt).count("serving ") == 1  # one daemon started, no respawn loop


# -- item 15: the lock file removed under a running daemon -------------------------------------------------
def test_daemon_exits_when_its_lock_is_removed(rt):
    m = model_file(rt, "a")
    first = pid_now(rt)
    os.unlink(os.path.join(rt.run, "daemon.lock"))
    assert wait_until(lambda: not alive(first), 10)  # it gives way instead of running on orphaned
    assert "was removed or replaced" in log_text(rt)
    assert json.dumps(plan(m)["plan"]) == expected(m)
    second = pid_now(rt)
    assert second != first and alive(second)


# -- item 7: a daemon that keeps serving -----------------------------------------------------------
def test_request_of_a_client_that_hung_up_is_cancelled(rt, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_DAEMON_TEST_DELAY_S", "60")
    m = model_file(rt, "a")
    with DaemonClient() as c:
        c.connect()
        pid = c.daemon_pid
        rt.pids.append(pid)
        protocol.send(c._sock, {"type": "plan", "model": m, "options": {}})
    # the client is gone (as when a build's timeout kills it); the daemon stops that work at once
    assert wait_until(lambda: "plan request cancelled: its client hung up" in log_text(rt), 10)
    with DaemonClient() as c:
        assert c.status()["pid"] == pid


def test_no_connection_thread_dies_silently(rt, monkeypatch, tmp_path):
    paths = {"log": str(tmp_path / "log"), "socket": "", "lock": ""}
    d = server.Daemon(paths, 60, str(tmp_path / "cache"), 1 << 20)

    def no_memory(sock, *a, **k):
        raise MemoryError()

    a, b = socket.socketpair()
    monkeypatch.setattr(server.protocol, "recv", no_memory)
    d._connections = 1
    t = threading.Thread(target=d.handle, args=(a,))
    t.start()
    t.join(10)
    monkeypatch.undo()
    reply = protocol.recv(b)
    assert reply["type"] == "error" and "internal error in the planner daemon (MemoryError" in reply["error"]
    assert d._connections == 0
    b.close()


def test_log_rotates_by_size(rt, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_DAEMON_LOG_MAX_BYTES", "4000")
    m = model_file(rt, "a")
    pid = pid_now(rt)
    sock = os.path.join(rt.run, "daemon.sock")
    for _ in range(60):  # each refused message logs a line
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.sendall(b"\x00\x00\x00\x02\x91\x01")
        try:
            protocol.recv(s)
        except (OSError, protocol.ProtocolError, protocol.ConnectionLost):
            pass
        s.close()
    log = os.path.join(rt.run, "daemon.log")
    assert wait_until(lambda: os.path.exists(log + ".1"))
    assert os.path.getsize(log) < 8000 and os.path.getsize(log + ".1") < 8000
    with DaemonClient() as c:
        assert json.dumps(c.plan(m)["plan"]) == expected(m) and c.daemon_pid == pid


def test_model_size_is_bounded_and_fifos_do_not_hang(rt):
    big = os.path.join(rt.dir, "big.tflite")
    with open(big, "wb") as f:
        f.truncate(max_model_bytes() + 1)  # sparse: no disk, no memory
    fifo = os.path.join(rt.dir, "fifo.tflite")
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    for path, needle in ((big, "larger than the 268435456 byte model size limit"), (fifo, "is a FIFO, not a regular file")):
        with pytest.raises(ModelError, match=needle) as d:
            plan(path)
        with pytest.raises(ModelError) as n:
            plan(path, no_daemon=True)
        assert str(d.value) == str(n.value)
    rt.pids.append(pid_now(rt))


def test_plans_at_once_are_capped_and_a_waiting_request_of_a_gone_client_never_runs(monkeypatch, tmp_path):
    from buildtool.serve.cache import Cancelled

    d = server.Daemon({"log": str(tmp_path / "log"), "socket": "", "lock": ""}, 60, str(tmp_path / "c"), 1 << 20)
    d._slots = threading.BoundedSemaphore(1)
    running, most, ran = [0], [0], []
    lock = threading.Lock()

    def fake_plan(model, options, memo, source=None):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            ran.append(model)
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return {"plan": model}

    monkeypatch.setattr(service, "plan_request", fake_plan)
    pairs = [socket.socketpair() for _ in range(4)]
    out = {}

    def call(k):
        try:
            out[k] = d.plan({"type": "plan", "zoo": "tiny"}, pairs[k][0])
        except Cancelled as e:
            out[k] = e

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in threads[:3]:
        t.start()
    time.sleep(0.1)
    threads[3].start()
    pairs[3][1].close()  # this client hangs up while its request waits for a slot
    for t in threads:
        t.join(10)
    assert most[0] == 1 and len(ran) == 3
    assert isinstance(out[3], Cancelled) and all(out[k] == {"plan": "tiny"} for k in range(3))
    for a, b in pairs:
        a.close()
        b.close()


def test_numpy_option_values_go_through_the_daemon(rt):
    import numpy as np

    m = model_file(rt, "a")
    with DaemonClient() as c:
        rt.pids.append(c.daemon_pid)
        got = c.plan(m, {"align": np.int64(32), "time_budget": np.float32(0.5)})["plan"]
    assert json.dumps(got) == expected(m, {"align": 32, "time_budget": 0.5})


# -- item 16: temp files of interrupted writes ------------------------------------------------------
def test_daemon_start_removes_stale_temp_files(rt):
    ab = os.path.join(rt.cache, "objects", "arena", "ab")
    os.makedirs(ab)
    dead = os.path.join(ab, ".tmp999999999-x")  # its writer (no such pid) was killed mid-write
    open(dead, "wb").write(b"half an entry")
    rt.pids.append(pid_now(rt))
    assert wait_until(lambda: not os.path.exists(dead))
    assert wait_until(lambda: "removed 1 temp files" in log_text(rt))  # logged just after the removal


# -- issue 31 item 7: two installs of the same code share one daemon -------------------------------------------
def test_code_fingerprint_is_the_code_bytes_not_paths_or_mtimes(tmp_path, monkeypatch):
    """The handshake's code fingerprint: a copy of the package elsewhere (new paths, new mtimes) gives
    the same one, so alternating installs of one commit keep their warm daemon; a save that leaves the
    bytes as they were changes nothing; one changed byte changes it."""
    from buildtool import sources

    here = sources.code_version()
    clone = tmp_path / "other-install" / "buildtool"
    shutil.copytree(sources.PKG, clone, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sources, "PKG", str(clone))
    assert sources.code_version() == here
    f = clone / "plan" / "arena" / "planner.py"
    os.utime(f, (1, 1))
    assert sources.code_version() == here
    f.write_bytes(f.read_bytes() + b"#")
    assert sources.code_version() != here


def test_a_daemon_of_another_install_writes_depfiles_naming_the_clients_files(rt, monkeypatch, tmp_path):
    """Two installs of the same code share one daemon; the gen steps it runs for this install (started
    through the gen client, then through the thin client's fast path) write depfiles naming this
    install's sources, not the daemon's."""
    from buildtool import sources

    other = tmp_path / "other-install"
    shutil.copytree(sources.PKG, other / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(client, "PACKAGE_PARENT", str(other))  # the daemon starts from the other install
    m = model_file(rt, "a")
    d = os.path.dirname(m)
    for k in (1, 2):  # 1: gen's own client starts the daemon; 2: the thin client's fast path
        assert cli.main(["gen", "skeleton", m, "-o", f"{d}/s{k}.json", "--depfile", f"{d}/s{k}.d"]) == 0
        dep = open(f"{d}/s{k}.d").read()
        assert os.path.join(sources.PKG, "model", "reader.py") in dep and str(other) not in dep, dep
    with DaemonClient(start=False) as c:
        assert c.connect()
        rt.pids.append(c.daemon_pid)
        assert str(other) in open(f"/proc/{c.daemon_pid}/cmdline").read().replace("\0", " ")
