"""Issue 52.1: a writer never replaces what stands at its output path (fsutil.where_to_write).

Every writer (each `gen` step's outputs, its depfile and split header, `zoo -o`, `run --output`,
`report -o`) is run with its output a FIFO (written through: a reader gets the very bytes a regular file
gets), a symlink (the target is written, the link stays a link) and a character device (written through;
the node stays the node it was, nothing is made beside it). The device is a node this test makes in its
own folder with /dev/null's numbers when it may (root), so a regression replaces that node, never /dev/null.
"""

from __future__ import annotations

import os
import select
import stat
import threading
import time

import numpy as np
import pytest
from conftest import fixed_input

from buildtool import cli, fsutil, zoo


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    for argv in (["gen", "model", "tiny", "-o", str(d / "model.tflite")],
                 ["gen", "skeleton", str(d / "model.tflite"), "-o", str(d / "skeleton.json")],
                 ["gen", "plan", str(d / "skeleton.json"), "-o", str(d / "plan.json")]):
        assert cli.main(argv) == 0
    g = zoo.build("tiny")
    np.save(d / "x.npy", fixed_input(g.tensors[g.inputs[0]].shape))
    return d


# writer -> (its command line writing to OUT (in folder DIR), the file of it that is the special one)
WRITERS = {
    "gen model": (["gen", "model", "tiny", "-o", "OUT"], "model.tflite"),
    "gen skeleton": (["gen", "skeleton", "IN/model.tflite", "-o", "OUT"], "skeleton.json"),
    "gen plan": (["gen", "plan", "IN/skeleton.json", "-o", "OUT"], "plan.json"),
    "gen code": (["gen", "code", "IN/skeleton.json", "IN/plan.json", "--board", "host", "-o", "DIR"], "firmware.json"),
    "gen flash": (["gen", "flash", "IN/model.tflite", "--board", "host", "-o", "OUT"], "weights.bin"),
    "gen flash --split-header": (["gen", "flash", "IN/model.tflite", "--board", "host", "-o", "DIR/w.bin",
                                  "--split-header", "OUT"], "weights_split.h"),
    "gen board": (["gen", "board", "--board", "host", "-o", "DIR"], "board.json"),
    "gen --depfile": (["gen", "skeleton", "IN/model.tflite", "-o", "DIR/s.json", "--depfile", "OUT"], "s.d"),
    "zoo -o": (["zoo", "tiny", "-o", "OUT"], "tiny.tflite"),
    "run --output": (["run", "tiny", "--input", "IN/x.npy", "--output", "OUT"], "y.npy"),
    "report -o": (["report", "tiny", "-o", "OUT"], "r.html"),
}


def _argv(writer: str, inputs, d, out) -> list:
    argv, _ = WRITERS[writer]
    return [a.replace("IN", str(inputs)).replace("OUT", str(out)).replace("DIR", str(d)) for a in argv]


def _write(writer, inputs, d, out) -> int:
    return cli.main(_argv(writer, inputs, d, out))


def _reference(writer, inputs, tmp_path) -> bytes:
    """What the writer puts in a regular file (its folder named DIR: a depfile names it)."""
    d = tmp_path / "ref"
    d.mkdir()
    assert _write(writer, inputs, d, d / WRITERS[writer][1]) == 0
    return (d / WRITERS[writer][1]).read_bytes().replace(os.fsencode(d), b"DIR")


def _named(data: bytes, d) -> bytes:
    return data.replace(os.fsencode(d), b"DIR")


def _null_node(d):
    """A character device at d/null: a node of /dev/null's numbers made here (root), else /dev/null itself."""
    p = d / "null"
    try:
        os.mknod(p, stat.S_IFCHR | 0o666, os.stat("/dev/null").st_rdev)
        return p
    except PermissionError:
        return "/dev/null"


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_fifo_is_written_through_with_the_bytes_of_a_regular_file(writer, inputs, tmp_path):
    want = _reference(writer, inputs, tmp_path)
    d = tmp_path / "out"
    d.mkdir()
    fifo = d / WRITERS[writer][1]
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there before the writer opens it
    rc = []
    t = threading.Thread(target=lambda: rc.append(_write(writer, inputs, d, fifo)))
    t.start()
    got, deadline = [], time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            alive = t.is_alive()
            select.select([rfd], [], [], 0.05)
            try:
                chunk = os.read(rfd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                got.append(chunk)
            elif not alive:
                break
            else:
                time.sleep(0.01)
    finally:
        os.close(rfd)
        t.join(120)
    assert rc == [0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert _named(b"".join(got), d) == want
    extra = {"gen code": {"model.c", "model.h"}, "gen board": {"board.ld"}, "gen flash --split-header": {"w.bin"},
             "gen --depfile": {"s.json", "s.json.seal"}}.get(writer, set())
    assert set(os.listdir(d)) - extra == {fifo.name}, "something was made beside the FIFO (a seal, a figure, a temp)"


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_symlink_stays_and_its_target_gets_the_bytes(writer, inputs, tmp_path):
    want = _reference(writer, inputs, tmp_path)
    d, real = tmp_path / "out", tmp_path / "real"
    d.mkdir()
    real.mkdir()
    target = real / "target"
    target.write_bytes(b"old")
    link = d / WRITERS[writer][1]
    link.symlink_to(os.path.relpath(target, d))
    assert _write(writer, inputs, d, link) == 0
    assert os.path.islink(link) and os.readlink(link) == os.path.relpath(target, d)
    assert _named(target.read_bytes(), d) == want
    assert os.listdir(real) == ["target"], "a temp file was left beside the target"


def test_a_dangling_symlinks_target_is_made(inputs, tmp_path):
    link = tmp_path / "plan.json"
    link.symlink_to("sub/made.json")
    (tmp_path / "sub").mkdir()
    assert cli.main(["gen", "plan", str(inputs / "skeleton.json"), "-o", str(link)]) == 0
    assert os.path.islink(link) and (tmp_path / "sub" / "made.json").read_bytes() == (inputs / "plan.json").read_bytes()


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_character_device_is_written_through_and_stays(writer, inputs, tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    dev = d / WRITERS[writer][1]
    node = _null_node(tmp_path)
    if node == "/dev/null":
        dev.symlink_to("/dev/null")
    else:
        os.rename(node, dev)
    rdev = os.stat(dev).st_rdev
    assert _write(writer, inputs, d, dev) == 0
    st = os.stat(dev)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == rdev, "the device node was replaced"
    extra = {"gen code": {"model.c", "model.h"}, "gen board": {"board.ld"}, "gen flash --split-header": {"w.bin"},
             "gen --depfile": {"s.json", "s.json.seal"}}.get(writer, set())
    assert set(os.listdir(d)) - extra == {dev.name}, "something was made beside the device"


def test_a_full_device_is_one_line_and_stays(inputs, tmp_path, capsys):
    """/dev/full's numbers in a node of our own: the write fails with ENOSPC, in one line, and the node stays."""
    full = tmp_path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.stat("/dev/full").st_rdev)
    except PermissionError:
        full = "/dev/full"  # not root: the old code could not have replaced it either
    rc = cli.main(["gen", "flash", str(inputs / "model.tflite"), "--board", "host", "-o", str(full)])
    err = capsys.readouterr().err
    assert rc == 2 and err == (f"buildtool: error: cannot write {full}: No space left on device; "
                               "free some space or write elsewhere\n"), err
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_dev_stdout_is_written_through_to_the_processes_stdout(inputs, tmp_path):
    """`-o /dev/stdout > FILE`: the bytes land in FILE (the shell's file), which is not replaced."""
    import subprocess
    import sys

    out = tmp_path / "stdout.bin"
    with open(out, "wb") as f:
        ino = os.fstat(f.fileno()).st_ino
        r = subprocess.run([sys.executable, "-m", "buildtool.cli", "gen", "plan", str(inputs / "skeleton.json"),
                            "-o", "/dev/stdout"], stdout=f, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.stat(out).st_ino == ino and out.read_bytes() == (inputs / "plan.json").read_bytes()
    assert not os.path.exists("/dev/stdout.seal")


@pytest.mark.parametrize("kind", ["socket", "directory"])
def test_what_cannot_be_written_is_one_line(kind, tmp_path, capsys):
    p = tmp_path / "x"
    if kind == "socket":
        import socket

        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
    else:
        p.mkdir()
    rc = cli.main(["zoo", "tiny", "-o", str(p)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert err == ({"socket": f"buildtool: error: cannot write {p}: it is a socket; give a regular file, a FIFO "
                              "or a character device\n",
                    "directory": f"buildtool: error: cannot write {p}: it is a directory; give a file name\n"}[kind])
    assert (stat.S_ISSOCK if kind == "socket" else stat.S_ISDIR)(os.lstat(p).st_mode)


def test_a_symlink_loop_is_one_line(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to("b")
    b.symlink_to("a")
    rc = cli.main(["zoo", "tiny", "-o", str(a)])
    err = capsys.readouterr().err
    assert rc == 2 and err == f"buildtool: error: cannot write {a}: Too many levels of symbolic links\n", err
    assert os.path.islink(a) and os.path.islink(b)


def test_where_to_write_follows_a_chain_of_links(tmp_path):
    (tmp_path / "f").write_bytes(b"")
    (tmp_path / "l1").symlink_to("l2")
    (tmp_path / "l2").symlink_to(str(tmp_path / "f"))
    assert fsutil.where_to_write(tmp_path / "l1") == ("replace", str(tmp_path / "f"))
    assert fsutil.where_to_write("/dev/stdout")[0] == "through"
    assert fsutil.where_to_write(tmp_path / "new") == ("replace", str(tmp_path / "new"))


@pytest.mark.parametrize("cmd", ["zoo", "report"])
def test_dev_stdout_holds_the_files_bytes_alone(cmd, tmp_path):
    """`zoo tiny -o /dev/stdout > F`, `report tiny -o /dev/stdout > F`: F holds what a regular file gets
    (the 'wrote' line goes to stderr then), no figure or seal is made beside /dev/stdout."""
    import subprocess
    import sys

    ref = tmp_path / ("ref.tflite" if cmd == "zoo" else "ref.html")
    assert cli.main([cmd, "tiny", "-o", str(ref)]) == 0
    out = tmp_path / "stdout.bin"
    with open(out, "wb") as f:
        r = subprocess.run([sys.executable, "-m", "buildtool.cli", cmd, "tiny", "-o", "/dev/stdout"], stdout=f,
                           stderr=subprocess.PIPE, text=True, timeout=300)
    assert r.returncode == 0 and r.stderr == "wrote /dev/stdout\n", r.stderr
    assert out.read_bytes() == ref.read_bytes()
    assert not os.path.exists("/dev/stdout.svg")
