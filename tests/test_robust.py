"""Robustness at the edges: atomic writes that survive being killed, full disks and directories in the
way, hostile build paths, absurd numbers on the command line. Every failure is one line and exit 2."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import ROOT, fixed_input, tflm_run

from buildtool import cli, fsutil, zoo
from buildtool.model.writer import serialize


def run_cli(args, capsys) -> tuple:
    """Exit status and stderr of `buildtool ARGS` in this process (argparse's own errors included)."""
    try:
        rc = cli.main(args)
    except SystemExit as e:
        rc = e.code
    return rc, capsys.readouterr().err


def one_line_error(rc, err) -> bool:
    """Exit 2 and one error line (argparse's own refusals print the usage above it)."""
    lines = err.splitlines()
    if lines and lines[0].startswith("usage:"):
        lines = [x for x in lines if x.startswith("buildtool")]
    return rc == 2 and len(lines) == 1 and lines[0].startswith("buildtool") and "Traceback" not in err


def temps(d) -> list:
    return sorted(n for n in os.listdir(d) if ".tmp" in n)


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")


# -- 1. one atomic write ----------------------------------------------------------------
_KILLED_WRITER = """
import os, sys, time
from buildtool import cli
def hang(src, dst):  # stop between writing the temp file and renaming it
    print("writing", flush=True)
    time.sleep(600)
os.replace = hang
cli.main(["zoo", "tiny", "-o", sys.argv[1]])
"""


def test_a_writer_killed_mid_write_leaves_one_temp_file_that_the_next_write_removes(tmp_path):
    out = tmp_path / "t.tflite"
    out.write_bytes(b"old")
    p = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline() == "writing\n"
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    left = temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(".t.tflite.tmp"), left  # recognisable: hidden, the target's name
    assert out.read_bytes() == b"old"
    assert cli.main(["zoo", "tiny", "-o", str(out)]) == 0
    assert temps(tmp_path) == []
    assert out.read_bytes() == serialize(zoo.build("tiny"))


_KILLED_KERNEL_BUILD = """
import subprocess, time
from buildtool import targets
from buildtool.firmware import toolchain
real = subprocess.run
def run(cmd, *args, **kw):
    if cmd[0].endswith("ar"):  # every kernel compiled: stop before the archive is made
        print("archiving", flush=True)
        time.sleep(600)
    return real(cmd, *args, **kw)
subprocess.run = run
toolchain.kernel_library(targets.get("host"))
"""


def test_a_kernel_build_killed_midway_leaves_nothing_in_the_kernel_cache(tmp_path):
    (tmp_path / "tmp").mkdir()  # the system's temp directory, which keeps what the killed build left
    env = {**os.environ, "BUILDTOOL_CACHE": str(tmp_path / "cache"), "TMPDIR": str(tmp_path / "tmp")}
    p = subprocess.Popen([sys.executable, "-c", _KILLED_KERNEL_BUILD], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                         env=env)
    try:
        assert p.stdout.readline() == "archiving\n"
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    (lib_dir,) = (tmp_path / "cache" / "kernels").iterdir()
    assert os.listdir(lib_dir) == []


def test_a_live_writers_temp_file_is_kept_unless_it_is_an_hour_old(tmp_path):
    out = tmp_path / "w.bin"
    live = tmp_path / f"{fsutil.temp_prefix(out)}{os.getppid()}-0123abcd"  # pytest's parent is alive
    live.write_bytes(b"half")
    fsutil.write_atomic(out, b"one")
    assert temps(tmp_path) == [live.name]
    old = time.time() - fsutil.TEMP_STALE_S - 60
    os.utime(live, (old, old))
    fsutil.write_atomic(out, "two")
    assert temps(tmp_path) == [] and out.read_bytes() == b"two"


def test_full_disk_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    out = tmp_path / "w.bin"
    out.write_bytes(b"old contents")
    real_write = os.write
    calls = []

    def write(fd, data):  # half the data goes out, then the disk is full
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data)[:len(data) // 2])

    monkeypatch.setattr(fsutil.os, "write", write)
    with pytest.raises(fsutil.WriteError, match=r"^cannot write .*w\.bin: No space left on device; free some space"):
        fsutil.write_atomic(out, b"x" * 100000)
    assert out.read_bytes() == b"old contents" and temps(tmp_path) == []


def test_an_interrupted_write_removes_its_temp_file(tmp_path, monkeypatch):
    out = tmp_path / "w.bin"
    out.write_bytes(b"old")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fsutil.write_atomic(out, b"new")
    assert out.read_bytes() == b"old" and temps(tmp_path) == []


def test_every_writer_uses_the_one_helper(tmp_path, monkeypatch):
    """cli, flash, report, firmware and the .tflite writer all write through fsutil.write_atomic."""
    from buildtool import pipeline, report
    from buildtool.cli import common
    from buildtool.plan import flash
    from buildtool.model import writer as tflite_writer

    seen = []
    real = fsutil.write_atomic
    monkeypatch.setattr(fsutil, "write_atomic", lambda p, d, mode=None: (seen.append(os.path.basename(p)),
                                                                        real(p, d, mode)))
    for mod in (common, flash, report, tflite_writer):  # firmware writes through fsutil.write_if_changed -> fsutil.write_atomic
        monkeypatch.setattr(mod, "write_atomic", fsutil.write_atomic)
    g = zoo.build("tiny")
    common.write_atomic(str(tmp_path / "a.npy"), b"1")
    flash.write_image(str(tmp_path / "w.bin"), flash.build_image(g, "host", 16))
    tflite_writer.save(g, str(tmp_path / "t.tflite"))
    fsutil.write_if_changed(tmp_path / "m.c", "int x;\n")
    a = cli.build_parser().parse_args(["report", "tiny", "--optimize", "ram", "--no-daemon"])
    report.write_report(g, common.make_plan(g, a, common.plan_options(a)), common.make_plan(g, a), str(tmp_path / "r.html"))
    assert seen == ["a.npy", "w.bin", "t.tflite", "m.c", "r.html", "r.svg"]
    assert temps(tmp_path) == []


# -- 2, 6. outputs that cannot be written -------------------------------------------------
def test_report_into_a_missing_directory_is_one_line(tmp_path, capsys):
    rc, err = run_cli(["report", "tiny", "-o", str(tmp_path / "nope" / "r.html")], capsys)
    assert one_line_error(rc, err), err
    assert err == (f"buildtool: error: cannot write {tmp_path / 'nope' / 'r.html'}: directory {tmp_path / 'nope'} "
                   f"does not exist; create it or choose another path\n")
    assert not (tmp_path / "nope").exists()


@pytest.fixture
def x_npy(tmp_path):
    g = zoo.build("tiny")
    p = tmp_path / "x.npy"
    np.save(p, fixed_input(g.tensors[g.inputs[0]].shape))
    return str(p)


@pytest.mark.parametrize("cmd", ["zoo", "run", "report", "build-dir"])
def test_a_directory_or_a_file_in_the_way_is_one_line(cmd, tmp_path, x_npy, capsys):
    d = tmp_path / "d"
    d.mkdir()
    (d / "keep").write_bytes(b"k")
    args = {"zoo": ["zoo", "tiny", "-o", str(d)], "run": ["run", "tiny", "--input", x_npy, "--output", str(d)],
            "report": ["report", "tiny", "-o", str(d)],
            "build-dir": ["run", "tiny", "--board", "host", "--input", x_npy, "--build-dir", str(d / "keep" / "b")]}
    rc, err = run_cli(args[cmd], capsys)
    assert one_line_error(rc, err), err
    assert ("it is a directory; give a file name" in err if cmd != "build-dir"
            else f"cannot create the build directory {d / 'keep' / 'b'}: {d / 'keep'} is not a directory" in err), err
    assert os.listdir(d) == ["keep"] and (d / "keep").read_bytes() == b"k"
    assert sorted(os.listdir(tmp_path)) == ["d", "x.npy"]  # no report figure without its page


@pytest.mark.parametrize("args", [["plan", "tiny", "--json"], ["plan", "tiny"], ["inspect", "tiny"], ["ops"],
                                  ["zoo", "--list"], ["boards"], ["flash", "verify", "IMAGE"]])
def test_a_full_disk_under_stdout_is_one_line(args, tmp_path):
    from buildtool.plan import flash

    img = tmp_path / "w.bin"
    flash.write_image(str(img), flash.build_image(zoo.build("tiny"), "host", 16))
    args = [str(img) if a == "IMAGE" else a for a in args]
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "buildtool.cli"] + args, cwd=ROOT, stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)  # no daemon: the autouse fixture
    assert r.returncode == 2 and r.stderr == ("buildtool: error: cannot write to standard output: No space left on "
                                              "device; free some space or write elsewhere\n"), r.stderr


def test_a_full_disk_at_link_time_is_one_line_naming_the_image(tmp_path, monkeypatch):
    from buildtool import pipeline
    from buildtool.firmware import toolchain

    real = subprocess.run

    def run(cmd, *args, **kw):  # the linker meets a full disk writing the image
        if any(str(c).endswith("firmware.elf.tmp") for c in cmd):
            return subprocess.CompletedProcess(cmd, 1, "", "/usr/bin/ld: final link failed: No space left on device\n"
                                                           "collect2: error: ld returned 1 exit status\n")
        return real(cmd, *args, **kw)

    monkeypatch.setattr(toolchain.subprocess, "run", run)
    with pytest.raises(fsutil.WriteError) as e:
        pipeline.build("tiny", "host", tmp_path / "b")
    assert str(e.value) == (f"cannot write {tmp_path / 'b' / 'firmware.elf'}: No space left on device; "
                            f"free some space or write elsewhere")


# -- 3. a build directory no C string can hold as it is ------------------------------------
def test_firmware_builds_and_runs_in_a_build_dir_with_quotes_backslashes_and_dollars(tmp_path, x_npy, capsys):
    out = tmp_path / "we\"ird\\ $HOME 'q" / "b"
    y = tmp_path / "y.npy"
    rc = cli.main(["run", "tiny", "--board", "host", "--input", x_npy, "--output", str(y), "--build-dir", str(out)])
    assert rc == 0, capsys.readouterr().err
    want = tflm_run(serialize(zoo.build("tiny")), [np.load(x_npy)])[0]
    assert np.load(y).tobytes() == want.tobytes()
    assert (out / "firmware.elf").exists()


def test_weights_define_escapes_for_c_and_the_assembler():
    from buildtool.firmware.toolchain import weights_define

    assert weights_define('/a"b\\c $d\'e??/w.bin') == r'-DBT_WEIGHTS_FILE="/a\"b\\c $d' + "'" + r'e\077\077/w.bin"'
    assert weights_define("/x\ny/\u00e9.bin") == r'-DBT_WEIGHTS_FILE="/x\012y/\303\251.bin"'


# -- 4. numbers on the command line ---------------------------------------------------------
HUGE, HUGER = "9" * 400, "9" * 5000


@pytest.mark.parametrize("opts", [
    ["--optimize", "macs", "--ram-limit", HUGE], ["--optimize", "macs", "--ram-limit", HUGER],
    ["--optimize", "macs", "--ram-limit", HUGE + ".5KiB"], ["--align", HUGE],
    ["--align", HUGER], ["--align", "x" * 5000], ["--time-budget", "x" * 5000],
    ["--split", f"0:1:{HUGE}"], ["--split", f"0:1:{HUGER}"], ["--split", f"{HUGER}:1:2"],
])
def test_absurd_numbers_are_one_short_line(opts, capsys):
    rc, err = run_cli(["plan", "tiny"] + opts, capsys)
    assert one_line_error(rc, err) and len(err.splitlines()[-1]) < 200, err


def test_parse_bytes_is_exact():
    """Decimal sizes in exact arithmetic (2.01 * 1000 in floats is 2009.99...), rounded down to a byte."""
    from buildtool.options import parse_bytes

    texts = ("2.01kB", "2.05MB", "65536", "64KiB", "64kB", "0.5KiB", "64.5KiB", "0.1MiB", " 12 B ", "1.5")
    assert [parse_bytes(t) for t in texts] == [2010, 2050000, 65536, 65536, 64000, 512, 66048, 104857, 12, 1]


@pytest.mark.parametrize("idle", ["nan", "inf", "-1", "0", HUGE, "x" * 5000])
def test_daemon_idle_must_be_a_positive_number_of_seconds(idle, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BUILDTOOL_RUNTIME_DIR", str(tmp_path / "run"))
    rc, err = run_cli(["daemon", "start", "--idle", idle], capsys)
    assert one_line_error(rc, err) and "--idle" in err and len(err.splitlines()[-1]) < 200, err
    assert not (tmp_path / "run" / "daemon.sock").exists()


# -- 5. the daemon's directory ---------------------------------------------------------------
def test_runtime_dir_parents_are_created_private(tmp_path, monkeypatch):
    from buildtool.serve.daemon.protocol import runtime_dir

    d = tmp_path / "a" / "b" / "run"
    monkeypatch.setenv("BUILDTOOL_RUNTIME_DIR", str(d))
    old = os.umask(0o022)
    try:
        assert runtime_dir() == str(d)
    finally:
        os.umask(old)
    for p in (tmp_path / "a", tmp_path / "a" / "b", d):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700, p


def test_a_bug_is_one_internal_error_line_with_its_own_exit_status(monkeypatch, capsys):
    """An exception no check anticipated (a broken invariant) reaches the user as one 'internal error'
    line asking for a report, exit status 3, in the CLI and in SCons; BUILDTOOL_DEBUG=1 keeps the traceback."""
    from buildtool import cli
    from buildtool.errors import InternalError
    from buildtool.serve import service

    def broken(*a, **k):
        raise KeyError("offsets")

    monkeypatch.setattr(service, "plan_memory", broken)
    monkeypatch.delenv("BUILDTOOL_DEBUG", raising=False)
    assert cli.main(["plan", "tiny", "--no-daemon"]) == InternalError.exit_code == 3
    err = capsys.readouterr().err.splitlines()
    # the model as typed first, as every error about it (issue 52)
    assert len(err) == 1 and err[0].startswith("buildtool: error: tiny: internal error: KeyError: 'offsets'; please "
                                               "report")
    monkeypatch.setenv("BUILDTOOL_DEBUG", "1")
    with pytest.raises(KeyError):
        cli.main(["plan", "tiny", "--no-daemon"])


def test_scons_turns_a_bug_into_one_line(tmp_path):
    """The SCons tool's steps: a bug in a step is one 'internal error' line, no traceback."""
    import SCons.Errors

    sys.path.insert(0, str(ROOT / "buildtool" / "scons"))
    try:
        import btfirmware
    finally:
        sys.path.pop(0)

    def step(target, source, env):
        raise ValueError("bad offset")

    with pytest.raises(SCons.Errors.UserError) as e:
        btfirmware._one_line(step)([], [], {})
    assert str(e.value).startswith("internal error: ValueError: bad offset; please report")


def test_report_of_a_flat_memory_curve_is_drawn(tmp_path, capsys):
    """Issue 31 item 9: a chain of identical pools keeps the same bytes live at every step; `report`
    drew its log axis from one tick to itself (ZeroDivisionError, exit 3). Now it writes the report
    with a scale."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("pools", seed=0)
    x = b.input((1, 8, 8, 4))
    for _ in range(4):
        x = b.max_pool(x, 2, 1, padding="SAME")
    (tmp_path / "pools.tflite").write_bytes(serialize(b.finish([x])))
    out = tmp_path / "r.html"
    assert cli.main(["report", str(tmp_path / "pools.tflite"), "-o", str(out), "--no-daemon"]) == 0
    svg = (tmp_path / "r.svg").read_text()
    assert "nan" not in svg.lower() and svg.count('stroke="#ddd"') >= 2  # at least two grid lines: a scale


def test_inspect_refuses_a_graph_output_index_out_of_range_in_one_line(tmp_path, capsys):
    """Issue 31 item 9: a subgraph output naming a tensor the model does not have was an IndexError
    (exit 3) in inspect while plan refused it; both now say so in the same one line, exit 2."""
    import dataclasses

    g = zoo.build("tiny")
    bad = tmp_path / "badout.tflite"
    bad.write_bytes(serialize(dataclasses.replace(g, outputs=[len(g.tensors) + 3])))
    want = f"subgraph input/output tensor index {len(g.tensors) + 3} out of range (0..{len(g.tensors) - 1})"
    for cmd in ("inspect", "plan"):
        capsys.readouterr()
        assert cli.main([cmd, str(bad), "--no-daemon"] if cmd == "plan" else [cmd, str(bad)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0] == f"buildtool: error: {bad}: {want}", err


def _const_reshape_model():
    """A RESHAPE reading a constant (its output a constant the converter did not fold); the input unused."""
    import dataclasses

    import numpy as np

    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("rc", seed=0, calib_batch=2)
    x = b.input((1, 4, 4, 2))
    g = b.finish([b.fully_connected(b.reshape(x, (1, 32)), 4)])
    tens, op = list(g.tensors), g.operators[0]
    c = dataclasses.replace(tens[op.outputs[0]], index=len(tens), name="c",
                            data=np.arange(32, dtype=np.int8).reshape(1, 32))
    ops = [dataclasses.replace(op, inputs=(c.index, *op.inputs[1:])), *g.operators[1:]]
    return dataclasses.replace(g, tensors=tens + [c], operators=ops)


def _valid_pool_bigger_than_its_input():
    """MAX_POOL_2D 6x6, VALID, on a 4x4 input (and a 1x1 output declared)."""
    import dataclasses

    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("pv", seed=0, calib_batch=2)
    x = b.input((1, 4, 4, 8))
    g = b.finish([b.max_pool(x, k=6, stride=1, padding="SAME")])
    op = g.operators[0]
    tens = list(g.tensors)
    tens[op.outputs[0]] = dataclasses.replace(tens[op.outputs[0]], shape=(1, 1, 1, 8))
    return dataclasses.replace(g, tensors=tens, operators=[dataclasses.replace(op, options=dict(op.options,
                                                                                                padding="VALID"))])


@pytest.mark.parametrize("make, want", [
    (_const_reshape_model, "operator 0 (RESHAPE) has only constant inputs (a constant the converter did not "
                           "fold); convert again with constant folding on"),
    (_valid_pool_bigger_than_its_input, "operator 0 (MAX_POOL_2D): filter 6x6 is larger than its 4x4 input under "
                                        "VALID padding, which leaves no output pixel")])
def test_run_refuses_what_it_cannot_run_in_the_line_plan_gives(make, want, tmp_path, capsys):
    """Issue 31 item 9: `run` on a RESHAPE of a constant was an IndexError (exit 3) while `plan` accepted
    the model; a VALID pool larger than its input was refused with an 'expected -1x-1' size. Now plan,
    run and inspect say the same one line (exit 2)."""
    import numpy as np

    from buildtool import cli

    g = make()
    path = tmp_path / "m.tflite"
    path.write_bytes(serialize(g))
    x = tmp_path / "x.npy"
    np.save(x, np.zeros(g.tensors[g.inputs[0]].shape, np.int8))
    for args in (["plan", str(path), "--no-daemon"], ["run", str(path), "--input", str(x), "--no-daemon"]):
        capsys.readouterr()
        assert cli.main(args) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(f"buildtool: error: {path}: {want}"), err
    assert cli.main(["inspect", str(path)]) == 0 and f"would not plan: {want}" in capsys.readouterr().out
