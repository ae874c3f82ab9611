"""The SCons build (SConstruct + site_scons/site_tools/btfirmware): declared outputs, `scons -q`,
and SCons' own dependency tracking (one kernel edit -> one object; a weight edit -> flash image only)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import fixed_input, tflm_run

from buildtool import firmware, flash, targets, tflite_reader, zoo
from buildtool.tflite_writer import serialize

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ("skeleton.json", "plan.json", "model.c", "model.h", "firmware.json", "weights.bin", "board.ld",
           "firmware.elf", "compile_commands.json")


def scons(*args, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "SCons", "-C", str(ROOT), *args], capture_output=True, text=True,
                       timeout=300)
    if check and r.returncode != 0:
        raise AssertionError(f"scons {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def compiled(r) -> list:
    """Object files the build compiled, from SCons' command echo."""
    return sorted(Path(m).name for m in re.findall(r" -o (\S+\.o) ", r.stdout))



@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A model file and a private copy of kernels/ (so a test may edit a kernel), shared by the
    tests of this module so the build is done once; each test starts with an incremental `scons`."""
    tmp_path = tmp_path_factory.mktemp("scons")
    kroot = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", kroot, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    model = tmp_path / "m.tflite"
    model.write_bytes(serialize(zoo.build("tiny")))
    return tmp_path, model, kroot


def args_for(tmp, model, kroot, board="host"):
    return [f"board={board}", f"model={model}", f"out={tmp / 'build'}", f"kernel_root={kroot}"]


def test_build_declares_outputs_and_is_then_up_to_date(project):
    tmp, model, kroot = project
    args = args_for(tmp, model, kroot)
    r = scons(*args)
    out = tmp / "build"
    if not compiled(r):  # another test of the module built it first: start clean
        r = scons("-c", *args) and scons(*args)
    for name in OUTPUTS[:6] + ("firmware.elf", "compile_commands.json"):
        assert (out / name).is_file(), name
    objs = {p.name for p in (out / "obj").rglob("*.o")}
    assert {"model.o", "weights.o", "conv.o", "add.o"} <= objs
    assert len(compiled(r)) == len(objs)
    db = json.loads((out / "compile_commands.json").read_text())
    assert {Path(e["output"]).name for e in db} == objs
    assert all(e["command"].startswith("gcc ") and " -c " in e["command"] for e in db)
    flash.verify(str(out / "weights.bin"))
    assert scons("-q", *args, check=False).returncode == 0
    assert compiled(scons(*args)) == []


def test_kernel_edit_recompiles_only_that_object(project):
    tmp, model, kroot = project
    args = args_for(tmp, model, kroot)
    scons(*args)
    src = kroot / "reference" / "pad.c"
    src.write_text(src.read_text() + f"\n/* edited by test_scons {src.stat().st_mtime_ns} */\n")
    assert scons("-q", *args, check=False).returncode != 0
    assert compiled(scons(*args)) == ["pad.o"]
    assert scons("-q", *args, check=False).returncode == 0


def test_weight_edit_rebuilds_only_the_flash_image(project):
    tmp, model, kroot = project
    args = args_for(tmp, model, kroot)
    scons(*args)
    out = tmp / "build"
    before = {n: (out / n).stat().st_mtime_ns for n in ("model.c", "model.h", "plan.json")}
    model_o = (out / "obj" / "model.o").stat().st_mtime_ns
    old_image = (out / "weights.bin").read_bytes()

    g = tflite_reader.load(str(model))
    w = g.tensors[g.operators[0].inputs[1]]
    w.data = w.data.copy()
    w.data.flat[0] = 5 if w.data.flat[0] != 5 else -5
    model.write_bytes(serialize(g))

    r = scons(*args)
    assert compiled(r) == ["weights.o"]
    assert "codegen" not in r.stdout and "plan " not in r.stdout
    assert {n: (out / n).stat().st_mtime_ns for n in before} == before
    assert (out / "obj" / "model.o").stat().st_mtime_ns == model_o
    assert (out / "weights.bin").read_bytes() != old_image
    # the relinked firmware computes with the new weight
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, _, _ = firmware.run("host", out, x)
    assert np.array_equal(y, tflm_run(model.read_bytes(), [x])[0])


def test_scons_run_prints_output_and_ram(project):
    tmp, model, kroot = project
    board = "cortex-m4" if not targets.get("cortex-m4").missing_tools() else "host"
    r = scons("run", *args_for(tmp, model, kroot, board))
    g = tflite_reader.load(str(model))
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = tflm_run(model.read_bytes(), [x])[0]
    assert f"output: {' '.join(str(int(v)) for v in ref.reshape(-1))}" in r.stdout
    assert re.search(r"RAM: arena \d+ B \+ stack \d+ B \+ other static \d+ B = \d+ B", r.stdout)
    assert (tmp / "build" / "board.ld").is_file() == (board != "host")


def test_default_build_dir_is_build_board_model():
    """Without out=, a zoo name builds into build/BOARD/MODEL under the project."""
    r = scons("-n", "board=host", "model=tiny")
    assert os.path.join("build", "host", "tiny", "plan.json") in r.stdout


def test_scons_plans_through_the_daemon(tmp_path):
    """The BtPlan step asks the planner daemon (started on demand): a second build of the same model
    structure is a cache hit, and the plan is byte-identical to the in-process planner's."""
    env = dict(os.environ, BUILDTOOL_RUNTIME_DIR=str(tmp_path / "run"), BUILDTOOL_CACHE_DIR=str(tmp_path / "cache"),
               BUILDTOOL_NO_DAEMON="0", BUILDTOOL_DAEMON_WATCH="0")
    model = tmp_path / "m.tflite"
    model.write_bytes(serialize(zoo.build("tiny")))

    def status() -> dict:
        r = subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "status", "--json"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    try:
        for out in ("b1", "b2"):
            r = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-C", str(ROOT), "board=host", f"model={model}",
                                f"out={tmp_path / out}", str(tmp_path / out / "plan.json")], env=env,
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
        st = status()
        assert (st["hits"], st["misses"]) == (1, 1)
        plan1 = (tmp_path / "b1" / "plan.json").read_bytes()
        assert plan1 == (tmp_path / "b2" / "plan.json").read_bytes()
        from buildtool.arena import plan_arena
        from buildtool.codegen.skeleton import from_json

        skel = from_json(json.loads((tmp_path / "b1" / "skeleton.json").read_text()))
        assert json.loads(plan1) == plan_arena(skel).to_json()
    finally:
        subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], env=env, capture_output=True,
                       timeout=60)
