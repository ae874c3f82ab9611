"""Hostile input reaching SCons builds (issue 9, items 1 and 2).

1. A model, out=, kernel_root=, input= or output= path that a shell or SCons' variable
   substitution would read as more than a word: the build works (the folder named after the
   model is made of safe characters) or is refused in one line, and no command is injected.
2. Files a later step reads back (plan.json, skeleton.json, firmware.json) that were edited or
   damaged after they were made: re-made (one line says so) or refused in one line, never
   turned into firmware.

Every build runs in a scratch project (SConstruct copied, buildtool linked), so
the default build folder build/host/NAME lands in a temporary directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import fixed_input, tflm_run

from buildtool import zoo
from buildtool.pipeline import build_dir_name
from buildtool.model.writer import serialize

ROOT = Path(__file__).resolve().parents[1]
# each would run `touch PWNED` (or expand $x) if it reached a shell or SCons' substitution as it is
NAMES = ['a";touch PWNED;"b', "$x", "$(touch PWNED)", "`touch PWNED`", "it's", "a b", "new\nline",
         '${__import__("os").system("touch PWNED")}']


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    top = tmp_path_factory.mktemp("hostile")
    shutil.copy(ROOT / "SConstruct", top / "SConstruct")
    (top / "buildtool").symlink_to(ROOT / "buildtool")
    (top / "m").mkdir()
    return top


@pytest.fixture(scope="module")
def tiny():
    g = zoo.build("tiny")
    data = serialize(g)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    return data, x, tflm_run(data, [x])[0]


def scons(top, *args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "SCons", "-Q", "-C", str(top), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def no_injection(top) -> None:
    hits = [p for d in (top, ROOT, Path.cwd()) for p in d.rglob("PWNED")]
    assert not hits, hits


def files(top) -> set:
    return {p for d in ("build", "m") if (top / d).exists() for p in (top / d).rglob("*")} | set(top.iterdir())


def output_line(y) -> str:
    return f"output: {' '.join(str(int(v)) for v in y.reshape(-1))}"


def test_build_dir_name_keeps_plain_names_and_maps_the_rest():
    for name in ("mbv2-w0.35", "tiny_cnn_32", "tiny", "mcunet-vww1", "v1.2_final"):
        assert build_dir_name(name) == name
    mapped = [build_dir_name(n) for n in NAMES + ["a_b", "..", ".", "-o", "é", "x" * 300]]
    assert all(m.replace("-", "").replace("_", "").replace(".", "").isalnum() and m.isascii() for m in mapped)
    assert len(set(mapped)) == len(mapped)  # "a b" and "a_b" (kept as it is) do not collide
    assert build_dir_name("a b") != build_dir_name("a\tb") and all(len(m) <= 100 for m in mapped)
    assert build_dir_name("a b") == build_dir_name("a b")


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_hostile_model_name_builds_and_runs(scratch, tiny, name):
    """The model, input and output files all carry the name; the default build folder is its safe form."""
    data, x, ref = tiny
    model, inp, outp = (scratch / "m" / f"{name}{ext}" for ext in (".tflite", ".npy", ".out.npy"))
    model.write_bytes(data)
    np.save(inp, x)
    r = scons(scratch, "run", "board=host", f"model={model}", f"input={inp}", f"output={outp}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (scratch / "build" / "host" / build_dir_name(name) / "firmware.elf").is_file()
    assert output_line(ref) in r.stdout
    assert np.array_equal(np.load(outp), ref)
    no_injection(scratch)


@pytest.mark.parametrize("arg", ['out={t}/a";touch PWNED;"b', "out={t}/$x", "out={t}/$(touch PWNED)",
                                 'out={t}/${{__import__("os").system("touch PWNED")}}', "out={t}/new\nline",
                                 "kernel_root={t}/`touch PWNED`", "kernel_root={t}/it's"], ids=range(7))
def test_unsafe_command_line_path_is_refused_in_one_line(scratch, arg):
    """out= and kernel_root= land on compiler command lines: refused before anything runs."""
    t = scratch / "refused"
    before = files(scratch)
    r = scons(scratch, "run", "board=host", "model=tiny", arg.format(t=t))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scons: *** ") and "not safe on a compiler command line" in lines[0]
    assert files(scratch) == before  # nothing made
    no_injection(scratch)


def test_spaces_in_out_and_kernel_root_work(scratch, tiny):
    data, x, ref = tiny
    d = scratch / "with space"
    shutil.copytree(ROOT / "buildtool" / "kernels", d / "my kernels", ignore=shutil.ignore_patterns("tests", "__pycache__"))
    model = scratch / "m" / "plain.tflite"
    model.write_bytes(data)
    r = scons(scratch, "run", "board=host", f"model={model}", f"out={d / 'o u t'}", f"kernel_root={d / 'my kernels'}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert output_line(ref) in r.stdout and (d / "o u t" / "firmware.elf").is_file()


# -- read-back files ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(scratch, tiny):
    """scons board=host model=tiny, built once: build/host/tiny in the scratch project."""
    r = scons(scratch, "board=host", "model=tiny")
    assert r.returncode == 0, r.stdout + r.stderr
    out = scratch / "build" / "host" / "tiny"
    return out, {n: (out / n).read_bytes()
                 for n in ("model.tflite", "plan.json", "skeleton.json", "firmware.json", "model.c", "weights.bin")}


def overlap(plan: dict) -> dict:
    """Two tensors live at the same step moved onto the same bytes (tensor and buffer offsets)."""
    bufs = {b["id"]: b for b in plan["buffers"]}
    ts = plan["tensors"]
    for a in ts:
        for b in ts:
            if (a["buffer"] != b["buffer"] and a["offset"] != b["offset"] and a["first_step"] <= b["last_step"]
                    and b["first_step"] <= a["last_step"]):
                b["offset"] = bufs[b["buffer"]]["offset"] = a["offset"]
                return plan
    raise AssertionError("no two tensors live together")


def run_and_check(scratch, out, before, ref, replans: str) -> None:
    """scons run: one line says the file is remade, the output is TFLM's, the read-back files are as before."""
    r = scons(scratch, "run", "board=host", "model=tiny")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    said = [line for line in r.stdout.splitlines() if replans in line]
    assert len(said) == 1, r.stdout
    assert output_line(ref) in r.stdout
    for n, data in before.items():
        assert (out / n).read_bytes() == data, n
    assert scons(scratch, "-q", "board=host", "model=tiny").returncode == 0  # and then up to date


def test_overlapping_plan_is_replanned(scratch, built, tiny):
    out, before = built
    (out / "plan.json").write_text(json.dumps(overlap(json.loads(before["plan.json"])), indent=1) + "\n")
    run_and_check(scratch, out, before, tiny[2], "plan.json: it does not match the digest recorded when it was "
                  "made (edited or damaged): re-planning")


def cc_lines(r) -> list:
    return [line for line in r.stdout.splitlines() if line.startswith("CC ")]


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_replanned_parallel_build_records_the_same_includes(scratch, tiny, board):
    """The -j2 version of test_overlapping_plan_is_replanned, in a folder of its own. The re-plan gives plan.json's
    bytes back, so model.c is not remade and nothing is compiled; the build after is up to date. It was not:
    SCons' include scanner skipped model.c (and cortex-m4's split depthwise unit) while the plan was being
    re-made, model.o recorded no bt_kernels.h, was recompiled, and the next build recompiled it again."""
    out = scratch / f"j2-{board}"
    args = ("-j2", f"board={board}", "model=tiny", f"out={out}")
    r = scons(scratch, *args)
    assert r.returncode == 0 and cc_lines(r), r.stdout + r.stderr
    before = {n: (out / n).read_bytes() for n in ("plan.json", "model.c", "weights.bin", "firmware.elf")}
    (out / "plan.json").write_text(json.dumps(overlap(json.loads(before["plan.json"])), indent=1) + "\n")
    r = scons(scratch, "run", *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "plan.json: it does not match the digest recorded when it was made (edited or damaged): re-planning" \
        in r.stdout and output_line(tiny[2]) in r.stdout
    assert cc_lines(r) == [], r.stdout
    for n, data in before.items():
        assert (out / n).read_bytes() == data, n
    q = scons(scratch, "-q", *args)
    assert q.returncode == 0, q.stdout + q.stderr
    r = scons(scratch, *args)
    assert r.returncode == 0 and cc_lines(r) == [], r.stdout + r.stderr


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_replanned_library_build_is_then_up_to_date(tmp_path, board):
    """BtModel(library=True) reaches model.o (and cortex-m4's depthwise unit) before anything else that waits on
    the plan: even at -j1 their include scan ran while plan.json was being re-made, and `scons -q` then found
    them out of date."""
    (tmp_path / "buildtool").symlink_to(ROOT / "buildtool")
    (tmp_path / "SConstruct").write_text(
        "import os, sys\nsys.path.insert(0, Dir('#').abspath)\nfrom buildtool.firmware.toolchain import SCONS_DIR\n"
        "env = Environment(tools=['default', 'btfirmware'], toolpath=[str(SCONS_DIR)], ENV=os.environ)\n"
        f"m = env.BtModel(board='{board}', model='tiny', out='lib', library=True)\nDefault(m.objects)\n")
    assert scons(tmp_path, "-j1").returncode == 0
    plan = tmp_path / "lib" / "plan.json"
    plan.write_text(json.dumps(overlap(json.loads(plan.read_text())), indent=1) + "\n")
    r = scons(tmp_path, "-j1")
    assert r.returncode == 0 and "re-planning" in r.stdout and cc_lines(r) == [], r.stdout + r.stderr
    q = scons(tmp_path, "-q", "-j1")
    assert q.returncode == 0, q.stdout + q.stderr


def test_overlapping_plan_with_a_matching_seal_fails_the_checker_and_is_replanned(scratch, built, tiny):
    """Even when the seal is rewritten to match, codegen checks the plan with the independent checker."""
    out, before = built
    bad = json.dumps(overlap(json.loads(before["plan.json"])), indent=1) + "\n"
    seal = json.loads((out / "plan.json.seal").read_text())
    seal["sha256"] = hashlib.sha256(bad.encode()).hexdigest()
    (out / "plan.json").write_text(bad)
    (out / "plan.json.seal").write_text(json.dumps(seal))
    r = scons(scratch, "run", "board=host", "model=tiny")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "it fails the plan checker: buffers" in r.stdout and "overlap in bytes while both live" in r.stdout
    assert output_line(tiny[2]) in r.stdout
    assert (out / "plan.json").read_bytes() == before["plan.json"]
    assert (out / "model.c").read_bytes() == before["model.c"]


@pytest.mark.parametrize("damage", ["plan.json", "plan.json.seal"])
def test_invalid_json_plan_is_replanned(scratch, built, tiny, damage):
    out, before = built
    (out / damage).write_text('{"arena_bytes": ')
    run_and_check(scratch, out, before, tiny[2], "re-planning")


def test_damaged_zoo_model_skeleton_and_manifest_are_remade(scratch, built, tiny):
    """A changed byte in the zoo's model.tflite would change a weight; a changed scale in skeleton.json
    every requantisation; a changed shape in firmware.json the input the run step sends."""
    out, before = built
    model = bytearray(before["model.tflite"])
    model[len(model) // 2] ^= 0x55
    (out / "model.tflite").write_bytes(model)
    skel = json.loads(before["skeleton.json"])
    q = next(t["quant"] for t in skel["tensors"] if t.get("quant"))
    q["scale"][0] *= 2
    (out / "skeleton.json").write_text(json.dumps(skel, indent=0, sort_keys=True) + "\n")
    man = json.loads(before["firmware.json"])
    man["inputs"][0]["shape"][1] = 1
    (out / "firmware.json").write_text(json.dumps(man, indent=1) + "\n")
    r = scons(scratch, "run", "board=host", "model=tiny")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skeleton.json: it does not match the digest recorded when it was made (edited or damaged): remaking it" \
        in r.stdout
    assert "firmware.json: it does not match the digest recorded when it was made" in r.stdout
    assert "model.tflite: it does not match the digest recorded when it was made" in r.stdout
    assert output_line(tiny[2]) in r.stdout
    for n, data in before.items():
        assert (out / n).read_bytes() == data, n


def test_unsound_plan_from_the_planner_is_refused_in_one_line(scratch, tmp_path):
    """A plan that fails the checker however often it is made (here: a poisoned plan cache) is
    refused in one line, exit 2, before any code is generated from it."""
    from buildtool.serve.cache import DiskStore

    env = dict(os.environ, BUILDTOOL_RUNTIME_DIR=str(tmp_path / "run"), BUILDTOOL_CACHE_DIR=str(tmp_path / "cache"),
               BUILDTOOL_NO_DAEMON="0", BUILDTOOL_DAEMON_WATCH="0")
    out = tmp_path / "b"
    try:
        r = scons(scratch, "board=host", "model=tiny", f"out={out}", str(out / "plan.json"), env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], env=env, capture_output=True,
                       timeout=60, cwd=ROOT)
        store = DiskStore(str(tmp_path / "cache"))
        entries = list((tmp_path / "cache" / "objects" / "arena").glob("*/*"))
        assert len(entries) == 1
        digest = entries[0].parent.name + entries[0].name
        store.put("arena", digest, overlap(store.get("arena", digest)))
        (out / "plan.json").unlink()
        r = scons(scratch, "run", "board=host", "model=tiny", f"out={out}", env=env)
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "fails the plan checker" in lines[0] and "even after re-planning" in lines[0]
        assert not (out / "model.c").exists() and not (out / "firmware.elf").exists()
    finally:
        subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], env=env, capture_output=True,
                       timeout=60, cwd=ROOT)


@pytest.mark.parametrize("args", [["model=/nonexistent/m.tflite"], ["model={t}"], ["model=$(touch PWNED)"],
                                  ['model=${{__import__("os").system("touch PWNED")}}'], ["board=$(touch PWNED)"]],
                         ids=range(5))
def test_bad_model_or_board_is_refused_in_one_line(scratch, args):
    before = files(scratch)
    r = scons(scratch, "board=host", *[a.format(t=scratch / "m") for a in args])
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scons: *** "), r.stderr
    assert files(scratch) == before  # nothing made
    no_injection(scratch)


def test_cli_board_run_default_folder_is_the_safe_name(tmp_path, monkeypatch, capsys, tiny):
    """`buildtool run --board` builds into build/BOARD/NAME too: the same safe folder name."""
    from buildtool import cli

    data, x, ref = tiny
    name = 'a"b $x'
    (tmp_path / f"{name}.tflite").write_bytes(data)
    np.save(tmp_path / "x.npy", x)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")
    rc = cli.main(["run", "--board", "host", f"{name}.tflite", "--input", "x.npy", "--output", "y.npy"])
    assert rc == 0, capsys.readouterr().err
    assert np.array_equal(np.load(tmp_path / "y.npy"), ref)
    assert (tmp_path / "build" / "host" / build_dir_name(name) / "firmware.elf").is_file()


def test_tool_imports_the_buildtool_python_finds(tmp_path):
    """A project elsewhere that loads the tool from a package (toolpath=`buildtool scons-dir`) gets
    buildtool through a normal import (here PYTHONPATH names a copy of the package that says so when
    imported), never relative to the tool's own file."""
    top = tmp_path / "checkout"
    top.mkdir()
    shutil.copytree(ROOT / "buildtool", top / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    with open(top / "buildtool" / "__init__.py", "a") as f:
        f.write("\nprint('buildtool imported from', __file__)\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "SConstruct").write_text(
        f"env = Environment(tools=['default', 'btfirmware'], toolpath=[{str(top / 'buildtool' / 'scons')!r}])\n"
        "print('folder', env.BtDefaultName('a b.tflite'))\n")
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-n"], cwd=elsewhere, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=str(top)))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert f"buildtool imported from {top / 'buildtool' / '__init__.py'}" in lines
    assert f"folder {build_dir_name('a b')}" in lines


# -- 3. a full disk, or a build state SCons cannot save (issue 31 item 9) ---------------------------
def _user_project(top: Path, data: bytes) -> None:
    """examples/scons with tiny.tflite: a user's project built with `buildtool scons-dir` as toolpath."""
    for f in ("SConstruct", "main.c"):
        shutil.copy(ROOT / "examples" / "scons" / f, top / f)
    (top / "tiny.tflite").write_bytes(data)


def _scons_user(top: Path, board: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_NO_DAEMON="1")
    return subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={ROOT / 'buildtool' / 'scons'}",
                           f"board={board}", "model=tiny.tflite"], cwd=top, env=env, capture_output=True, text=True,
                          timeout=300)


def _can_mount() -> bool:
    return subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True).returncode == 0


@pytest.mark.parametrize("kib", [24, 600])  # full at the first step's seal / in the middle of the compiles
def test_a_full_disk_under_scons_is_one_line_and_leaves_no_temp_file(tmp_path, tiny, kib):
    """A disk that fills during `scons` was the failed step's line, then SCons's own traceback saving
    .sconsign.dblite, a second one from its destructor, and .sconsign.tmp left behind. Now: the step's
    line only, exit 2, no temporary file. The project sits on a kib-KiB tmpfs in a private mount
    namespace (unshare -rm)."""
    if not _can_mount():
        if os.environ.get("CI") == "true":
            pytest.fail("a private tmpfs mount (unshare -rm) is needed for the full-disk test")
        pytest.skip("no private mounts here (unshare -rm)")
    src, top = tmp_path / "src", tmp_path / "p"
    src.mkdir()
    top.mkdir()
    _user_project(src, tiny[0])
    script = (f"set -e; mount -t tmpfs -o size={kib}k tmpfs {top}; cp -a {src}/. {top}/; cd {top}; set +e; "
              f"{sys.executable} -m SCons -Q toolpath={ROOT / 'buildtool' / 'scons'} board=cortex-m4 model=tiny.tflite; "
              f"rc=$?; find . -name '*.tmp*' > {tmp_path / 'left.txt'}; exit $rc")
    env = dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_NO_DAEMON="1")
    r = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1 and "No space left on device" in r.stdout + r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert (tmp_path / "left.txt").read_text() == ""  # no temporary file: ours, SCons's or the compiler's


def test_a_build_state_scons_cannot_save_is_one_line(tmp_path, tiny):
    """The build went through but SCons cannot write its state (here .sconsign.tmp is a folder in the
    way): one line saying so and what to do, exit 2, no traceback."""
    top = tmp_path / "p"
    top.mkdir()
    _user_project(top, tiny[0])
    (top / ".sconsign.tmp").mkdir()
    r = _scons_user(top, "host")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.splitlines() == ["scons: *** cannot save SCons's build state (.sconsign.dblite): Is a directory; "
                                     "free some space (or make the folder writable) and build again"], r.stderr
    assert (top / "build" / "host" / "app.elf").is_file() and (top / ".sconsign.tmp").is_dir()
