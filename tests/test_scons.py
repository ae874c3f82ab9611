"""The SCons build (SConstruct + buildtool/scons/btfirmware): declared outputs, `scons -q`,
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
from conftest import fixed_input, load_file, tflm_run

from buildtool.plan import flash
from buildtool.firmware import runner
from buildtool.options import PlanOptions
from buildtool import targets, zoo
from buildtool.model import reader as tflite_reader
from buildtool.model.writer import serialize

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ("skeleton.json", "plan.json", "model.c", "model.h", "firmware.json", "weights.bin", "board.ld",
           "firmware.elf", "compile_commands.json")


def scons(*args, check=True, verbose=True) -> subprocess.CompletedProcess:
    """scons with full commands echoed (VERBOSE=1): the tests read which objects were compiled."""
    args = args + (("VERBOSE=1",) if verbose and not any(a.startswith("VERBOSE=") for a in args) else ())
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
    shutil.copytree(ROOT / "buildtool" / "kernels", kroot, ignore=shutil.ignore_patterns("tests", "__pycache__"))
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
    unused = kroot / "reference" / "pad.c"  # no PAD in the model: pad.c is not compiled at all (issue 50)
    unused.write_text(unused.read_text() + "\n/* edited by test_scons */\n")
    assert scons("-q", *args, check=False).returncode == 0
    src = kroot / "reference" / "conv_s16.c"  # compiled for the model's CONV_2D (library.OP_KERNELS)
    src.write_text(src.read_text() + f"\n/* edited by test_scons {src.stat().st_mtime_ns} */\n")
    assert scons("-q", *args, check=False).returncode != 0
    assert compiled(scons(*args)) == ["conv_s16.o"]
    assert scons("-q", *args, check=False).returncode == 0


def test_split_kernel_compiles_only_the_files_model_c_calls(project):
    """cortex-m's depthwise is split by path (issue 50 item 3): tiny's model.c calls bt_dw_rows_q4e_32 alone, so its
    unit OUT/kernels/depthwise.c includes depthwise_q4s.c alone; an edit of another path's file compiles nothing,
    one of depthwise_q4s.c the unit's object alone."""
    tmp, model, kroot = project
    args = ["board=cortex-m4", f"model={model}", f"out={tmp / 'build-m4'}", f"kernel_root={kroot}"]
    r = scons(*args)
    unit = tmp / "build-m4" / "kernels" / "depthwise.c"
    if compiled(r):
        assert "depthwise.o" in compiled(r) and len(compiled(r)) == 13  # 12 CC lines and weights.o
    assert unit.read_text() == ("#define DW_EMIT_Q4E\n#define DW_EMIT_W4\n#define DW_EMIT_DWP\n"  # its flags, first
                                f'#include "{(kroot / "cortex-m" / "depthwise_q4s.c").as_posix()}"\n')
    other = kroot / "cortex-m" / "depthwise_rows.c"
    other.write_text(other.read_text() + f"\n/* edited by test_scons {other.stat().st_mtime_ns} */\n")
    assert compiled(scons(*args)) == []
    used = kroot / "cortex-m" / "depthwise_q4s.c"
    used.write_text(used.read_text() + f"\n/* edited by test_scons {used.stat().st_mtime_ns} */\n")
    assert compiled(scons(*args)) == ["depthwise.o"]
    assert scons("-q", *args, check=False).returncode == 0  # up to date: the unit's step does not rerun either
    assert compiled(scons(*args)) == []


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
    assert scons("-q", *args, check=False).returncode == 0  # a second build runs nothing
    assert (out / "weights.bin").read_bytes() != old_image
    # the relinked firmware computes with the new weight
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, _, _ = runner.run("host", out, x)
    assert np.array_equal(y, tflm_run(model.read_bytes(), [x])[0])


def test_scons_run_prints_output_and_ram(project):
    tmp, model, kroot = project
    board = "cortex-m4" if not targets.get("cortex-m4").missing_tools() else "host"
    r = scons("run", *args_for(tmp, model, kroot, board))
    g = tflite_reader.load(str(model))
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = tflm_run(model.read_bytes(), [x])[0]
    assert f"output: {' '.join(str(int(v)) for v in ref.reshape(-1))}" in r.stdout
    m = re.search(r"RAM: arena ([\d,]+) B \+ stack ([\d,]+) B \+ other static ([\d,]+) B = ([\d.,]+) KiB \(([\d,]+) B\)$",
                  r.stdout, re.M)
    arena, stack, other, kib, total = (float(v.replace(",", "")) for v in m.groups())
    assert arena + stack + other == total and kib == round(total / 1024, 1) and arena > 0
    assert (tmp / "build" / "board.ld").is_file() == (board != "host")


def test_helium_board_runs_bit_exact_with_its_kernel_set(tmp_path):
    """board=cortex-m55 (QEMU mps3-an547): compiled with the Helium kernel set, output equal to TFLite Micro's."""
    from conftest import fixed_input, tflm_run

    g = zoo.build("tiny")
    model = tmp_path / "m.tflite"
    model.write_bytes(serialize(g))
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    np.save(tmp_path / "x.npy", x)
    scons("run", "board=cortex-m55", f"model={model}", f"out={tmp_path / 'b'}", f"input={tmp_path / 'x.npy'}",
          f"output={tmp_path / 'y.npy'}")
    assert np.array_equal(np.load(tmp_path / "y.npy"), tflm_run(model.read_bytes(), [x])[0])
    files = {Path(e["file"]).as_posix() for e in json.loads((tmp_path / "b" / "compile_commands.json").read_text())}
    assert any(f.endswith("kernels/cortex-m55/conv.c") for f in files), sorted(files)


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
        from buildtool.plan.arena.planner import plan_arena
        from buildtool.codegen.skeleton import from_json

        skel = from_json(json.loads((tmp_path / "b1" / "skeleton.json").read_text()))
        assert json.loads(plan1) == plan_arena(skel).to_json()
    finally:
        subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], env=env, capture_output=True,
                       timeout=60)


# -- build variables, board limits, several inputs, one-line errors (issues 9, 10, 12) ----------
def one_line_error(r, *parts) -> str:
    """The build was refused with exit 2 and one line on stderr holding every part; no traceback."""
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scons: *** "), r.stderr
    for p in parts:
        assert p in lines[0], (p, lines[0])
    return lines[0]


@pytest.mark.parametrize("args, parts", [
    (["align=abc"], ["align='abc'", "a power of two from 1 to 4096"]),
    (["align=24"], ["align=24", "a power of two"]),
    (["time_budget=-1"], ["time_budget=-1", "a number from 0 to 3600"]),
    (["time_budget=nan"], ["time_budget=nan", "a number from 0 to 3600"]),
    (["order_search=maybe"], ["order_search='maybe'", "true or false"]),
    (["inplace=2"], ["inplace='2'", "true or false"]),
    (["kernels=nosuch"], ["kernels='nosuch'", "board host has no kernel set 'nosuch'", "its sets are host, reference"]),
    (["board=cortex-m4", "kernels=cortex-m,xcore"], ["no kernel set 'xcore'", "its sets are cortex-m, reference"]),
    (["bord=host"], ["unknown build variable(s) 'bord'; known: board, model"]),
], ids=["align-abc", "align-24", "budget-neg", "budget-nan", "order-maybe", "inplace-2", "kernels", "kernels-board",
        "typo"])
def test_bad_build_variable_is_refused_in_one_line(args, parts):
    one_line_error(scons("-n", *args, check=False), *parts)


def test_plan_variables_reach_the_planner(tmp_path):
    """align=64 order_search=off inplace=no: accepted spellings, and the plan is made with them."""
    scons("board=host", "model=tiny", f"out={tmp_path}", "align=64", "order_search=off", "inplace=no",
          str(tmp_path / "plan.json"))
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["buffers"] and all(b["offset"] % 64 == 0 for b in plan["buffers"])
    seal = json.loads((tmp_path / "plan.json.seal").read_text())
    assert (seal["options"]["align"], seal["options"]["order_search"], seal["options"]["inplace"]) == (64, False, False)


def test_help_lists_every_variable_with_its_default():
    r = scons("-h")
    for name, default in (("board", "host"), ("model", "tiny"), ("out", ""), ("kernels", ""), ("kernel_root", ""),
                          ("input", ""), ("output", ""), ("align", "16"), ("time_budget", "2"),
                          ("order_search", "1"), ("inplace", "1")):
        line = next((x for x in r.stdout.splitlines() if x.split()[:1] == [name]), None)
        assert line is not None, (name, r.stdout)
        assert len(line.split()) > 2 and (not default or line.endswith(f"[default {default}]")), line


def test_model_too_big_for_the_board_is_refused_in_one_line(tmp_path):
    """hifive1 has 16 KiB of RAM: the fits check (toolchain.check_fits) refuses before any code is
    generated or linked, not a page of linker errors."""
    r = scons("board=hifive1", "model=mcunet-vww1", f"out={tmp_path}", check=False)
    one_line_error(r, "mcunet-vww1 does not fit board hifive1: it needs 91,648 B of RAM (arena 89,600 B + stack "
                   "2,048 B), the board has 16,384 B of RAM (16 KiB)")
    assert "overflowed" not in r.stdout + r.stderr
    assert not any((tmp_path / n).exists() for n in ("model.c", "model.h", "firmware.json", "firmware.elf"))


def test_a_rejected_model_leaves_no_empty_build_folder(tmp_path):
    """Issue 53: a model refused before any step writes a file (here: not a TFLite file) leaves no build
    folder holding only SCons' .sconsign.dblite; a folder with files in it stays."""
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"junk")
    out = tmp_path / "out" / "bad"
    r = scons("board=host", f"model={bad}", f"out={out}", check=False)
    one_line_error(r, "too short to be a TFLite model")
    assert not out.exists() and (tmp_path / "out").is_dir()  # (outside the project: only the folder itself)
    r = scons("board=hifive1", "model=mcunet-vww1", f"out={out}", check=False)
    one_line_error(r, "mcunet-vww1 does not fit board hifive1")
    assert (out / "skeleton.json").is_file() and (out / ".sconsign.dblite").is_file()


def test_too_big_but_fits_fused_names_the_optimize_ram_build(tmp_path):
    """A model whose least-RAM fused plan fits: the line names the build variable, and with it the
    same build succeeds (SCons passes every plan option)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("big", seed=1)
    x = b.input((1, 48, 48, 3))
    x = b.conv2d(b.conv2d(x, 8, 3), 8, 3)
    model = tmp_path / "big.tflite"
    model.write_bytes(serialize(b.finish([b.conv2d(x, 8, 3, stride=2)])))
    r = scons("board=hifive1", f"model={model}", f"out={tmp_path / 'b'}", check=False)
    one_line_error(r, "big does not fit board hifive1: it needs 38,912 B of RAM (arena 36,864 B + stack 2,048 B), the "
                   "board has 16,384 B of RAM (16 KiB); with optimize=ram it fits "
                   "(arena 11,872 B + stack 2,048 B = 13,920 B)")  # within the default 1.3x MACs
    assert not (tmp_path / "b" / "model.c").exists()
    r = scons("board=hifive1", f"model={model}", f"out={tmp_path / 'b'}", "optimize=ram")
    assert json.loads((tmp_path / "b" / "plan.json").read_text())["arena_bytes"] == 11872
    assert (tmp_path / "b" / "firmware.elf").is_file()


BAD_SCRIPT_PLUGIN = """
import dataclasses

from buildtool import targets


class Board(targets.Target):
    \"\"\"cortex-m4 with its linker script minus the program headers: ld then puts .bss in a load
    segment at a flash address, which QEMU's loader would zero-fill.\"\"\"

    def linker_script(self):
        s = targets.get("cortex-m4").linker_script()
        s = s[:s.index("PHDRS {")] + s[s.index("SECTIONS {"):]
        for tag in (" :text", " :data", " :NONE", " :psram"):
            s = s.replace(tag, "")
        return s


def boards():
    m4 = next(t for t in __import__("buildtool.boards.cortex_m", fromlist=["targets"]).targets() if t.name == "cortex-m4")
    return [Board(**{**dataclasses.asdict(m4), "name": "m4-default-phdrs"}),
            dataclasses.replace(m4, name="m4-tight", ram_bytes=6144 + m4.stack_bytes)]
"""


def scons_with_plugin(tmp_path, *args) -> subprocess.CompletedProcess:
    """scons with two more boards from a plugin on PYTHONPATH (an installed distribution's
    buildtool.targets entry point): m4-default-phdrs (a linker script without program headers)
    and m4-tight (RAM for exactly tiny's arena and the stack)."""
    if targets.get("cortex-m4").missing_tools():
        pytest.skip("needs the cortex-m4 toolchain")
    site = tmp_path / "site"
    (site / "badboard-0.dist-info").mkdir(parents=True)
    (site / "badboard-0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: badboard\nVersion: 0\n")
    (site / "badboard-0.dist-info" / "entry_points.txt").write_text("[buildtool.targets]\nbad = badboard:boards\n")
    (site / "badboard.py").write_text(BAD_SCRIPT_PLUGIN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "SCons", "-C", str(ROOT), *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_misplaced_load_segment_is_refused_and_the_elf_removed(tmp_path):
    """The segment check (toolchain.check_segments) runs after the SCons link too: a third-party
    board whose linker script would have QEMU zero-fill flash gets one line, exit 2, and no firmware.elf."""
    r = scons_with_plugin(tmp_path, "board=m4-default-phdrs", "model=tiny", f"out={tmp_path / 'b'}")
    one_line_error(r, "firmware for board m4-default-phdrs: the load segment at physical address",
                   "zero-fills 6,144 B in flash")
    assert not (tmp_path / "b" / "firmware.elf").exists()


def test_link_overflow_is_one_line(tmp_path):
    """RAM for the arena and the stack but not the harness' static data: the fits check passes and the
    linker's overflow becomes firmware.build's one line (the figures from the arena plan)."""
    r = scons_with_plugin(tmp_path, "board=m4-tight", "model=tiny", f"out={tmp_path / 'b'}")
    line = one_line_error(r, "tiny does not fit board m4-tight: it needs ")
    assert re.search(r"it needs [\d,]+ B of RAM \(arena 6,144 B \+ stack 8,192 B \+ other static data\), the board "
                     r"has 14,336 B of RAM \(14 KiB\)$", line), line
    assert "overflowed" not in r.stdout + r.stderr and not (tmp_path / "b" / "firmware.elf").exists()


def two_in_two_out():
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("two_in_two_out", seed=5)
    a = b.input((1, 6, 6, 3), name="image")
    c = b.input((1, 6, 6, 4), scale=1.0 / 64, zp=5, name="bias_map")
    s = b.add(b.conv2d(a, 4, 3, activation="NONE"), c)
    return b.finish([s, b.conv2d(c, 2, 1)])


def test_scons_run_with_several_inputs_and_outputs(tmp_path):
    """input=a.npy,b.npy or one .npz (buildtool run's rules); output=y.npz keeps every output."""
    data = serialize(two_in_two_out())
    model = tmp_path / "two.tflite"
    model.write_bytes(data)
    rng = np.random.default_rng(1)
    xs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in ((1, 6, 6, 3), (1, 6, 6, 4))]
    refs = tflm_run(data, xs, n_outputs=2)
    for k, x in enumerate(xs):
        np.save(tmp_path / f"x{k}.npy", x)
    np.savez(tmp_path / "x.npz", *xs)
    base = ["run", "board=host", f"model={model}", f"out={tmp_path / 'b'}"]
    saved = set()
    for inp in (f"{tmp_path / 'x0.npy'},{tmp_path / 'x1.npy'}", str(tmp_path / "x.npz")):
        (tmp_path / "y.npz").unlink(missing_ok=True)
        r = scons(*base, f"input={inp}", f"output={tmp_path / 'y.npz'}")
        for k, ref in enumerate(refs):
            assert f"output{k}: {' '.join(str(int(v)) for v in ref.reshape(-1))}" in r.stdout
        with np.load(tmp_path / "y.npz") as y:
            assert list(y.keys()) == ["arr_0", "arr_1"]
            assert all(np.array_equal(y[f"arr_{k}"], ref) and y[f"arr_{k}"].dtype == ref.dtype
                       for k, ref in enumerate(refs))
        saved.add((tmp_path / "y.npz").read_bytes())
    assert len(saved) == 1  # the same outputs, the same bytes
    one_line_error(scons(*base, f"input={tmp_path / 'x0.npy'}", check=False),
                   "the model has 2 inputs, 1 given; give input=a.npy,b.npy with one .npy per input in order "
                   "(image, bias_map), or one .npz")
    one_line_error(scons(*base, f"input={tmp_path / 'x1.npy'},{tmp_path / 'x0.npy'}", check=False),
                   "is int8[1, 6, 6, 4], the model wants int8[1, 6, 6, 3] for its input image")
    one_line_error(scons(*base, f"output={tmp_path / 'y.npy'}", check=False),
                   "the model has 2 outputs; name a .npz file to save them all")
    assert not (tmp_path / "y.npy").exists()


@pytest.mark.parametrize("case", ["missing", "board", "zoo", "damaged", "input"])
def test_errors_end_in_one_line(tmp_path, case):
    """No traceback from any refusal: SConstruct time (model, board, zoo name) or a build step's (a
    damaged model file read by the skeleton step, an input file the run step cannot read)."""
    model = tmp_path / "m.tflite"
    data = serialize(zoo.build("tiny"))
    model.write_bytes(data[:len(data) // 2] if case == "damaged" else data)
    (tmp_path / "x.npy").write_text("not an array\n")
    args = {"missing": [f"model={tmp_path / 'nope.tflite'}"], "board": ["board=nosuch"], "zoo": ["model=nosuchzoo"],
            "damaged": [f"model={model}"], "input": ["run", f"model={model}", f"input={tmp_path / 'x.npy'}"]}[case]
    want = {"missing": "model file not found", "board": "unknown board 'nosuch'", "zoo": "neither a model file nor a "
            "zoo name", "damaged": "corrupt flatbuffer", "input": f"cannot read input {tmp_path / 'x.npy'}"}[case]
    one_line_error(scons(*args, f"out={tmp_path / 'b'}", check=False), want)


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_fused_build_runs_bit_exact_and_weight_edits_remake_its_code(board, tmp_path):
    """optimize=ram through SCons: the firmware's output equals TFLite Micro's; a fused plan's model.c
    holds weight copies, so a weight-only edit remakes it (a plain plan's does not: see
    test_weight_edit_rebuilds_only_the_flash_image)."""
    from conftest import fixed_input, tflm_run

    if targets.get(board).missing_tools():
        pytest.skip(f"needs the {board} toolchain")
    g = zoo.build("mbv2-w0.35")
    model = tmp_path / "m.tflite"
    model.write_bytes(serialize(g))
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    np.save(tmp_path / "x.npy", x)
    want = tflm_run(model.read_bytes(), [x])[0]
    base = (f"board={board}", f"model={model}", f"out={tmp_path / 'b'}", "optimize=ram")
    scons("run", *base, f"input={tmp_path / 'x.npy'}", f"output={tmp_path / 'y.npy'}")
    assert np.array_equal(np.load(tmp_path / "y.npy"), want)  # (the numpy executor on this plan: test_fusion)
    before = (tmp_path / "b" / "model.c").read_bytes()
    h = g.copy()  # the same model with other weight values (scales unchanged: model.c's multipliers stay)
    rng = np.random.default_rng(3)
    for t in h.tensors:
        if t.data is not None and t.dtype == "int8" and t.data.ndim == 4:
            t.data = rng.integers(-127, 128, size=t.data.shape).astype(np.int8)
    model.write_bytes(serialize(h))
    scons("run", *base, f"input={tmp_path / 'x.npy'}", f"output={tmp_path / 'y.npy'}")
    assert (tmp_path / "b" / "model.c").read_bytes() != before
    assert np.array_equal(np.load(tmp_path / "y.npy"), tflm_run(model.read_bytes(), [x])[0])


def test_a_zoo_name_with_dots_stays_whole(tmp_path):
    """mbv2-w0.35 names its default build folder and model.h's MODEL_NAME whole (not mbv2-w0, not mbv2_w0_35)."""
    tool = load_file("btfirmware_tool", ROOT / "buildtool" / "scons" / "btfirmware" / "__init__.py")
    assert tool.default_name("mbv2-w0.35") == "mbv2-w0.35" and tool.default_name("a/b/m.v2.tflite") == "m.v2"
    scons("board=host", "model=mbv2-w0.35", f"out={tmp_path / 'b'}")
    assert '#define MODEL_NAME "mbv2-w0.35"' in (tmp_path / "b" / "model.h").read_text()


def test_quiet_output_and_the_memory_summary(tmp_path):
    """By default one short line a step (CC/AS/LD, no compiler flags) and, after the link, RAM and
    flash in use against the board's; VERBOSE=1 prints the full commands."""
    if targets.get("cortex-m4").missing_tools():
        pytest.skip("needs the cortex-m4 toolchain")
    r = scons("board=cortex-m4", "model=tiny", f"out={tmp_path / 'b'}", verbose=False)
    lines = r.stdout.splitlines()
    assert f"CC {tmp_path / 'b' / 'model.c'}" in lines and f"LD {tmp_path / 'b' / 'firmware.elf'}" in lines
    assert not any("-mcpu" in ln for ln in lines) and max(map(len, lines)) < 300  # was 1,089
    plan = json.loads((tmp_path / "b" / "plan.json").read_text())
    size = subprocess.run(["arm-none-eabi-size", "-A", str(tmp_path / "b" / "firmware.elf")], capture_output=True,
                          text=True, check=True).stdout
    sec = {p[0]: int(p[1]) for p in (ln.split() for ln in size.splitlines()) if len(p) >= 2 and p[1].isdigit()}
    ram = sec[".stack"] + sec[".data"] + sec[".bss"]  # an independent count from the section table
    flash = sec[".text"] + sec[".data"] + sec[".bt_weights"]
    summary = [ln for ln in lines if ln.startswith("cortex-m4: RAM ")]
    pct = lambda n: f"{100 * n / (4 << 20):.0f} %"  # noqa: E731  (of the board's 4 MiB)
    assert summary == [f"cortex-m4: RAM {ram / 1024:,.1f} KiB of 4,096.0 KiB ({pct(ram)}) = arena "
                       f"{plan['arena_bytes'] / 1024:.1f} KiB + stack {sec['.stack'] / 1024:.1f} KiB + static "
                       f"{(sec['.data'] + sec['.bss'] - plan['arena_bytes']) / 1024:.1f} KiB; flash "
                       f"{flash / 1024:,.1f} KiB of 4,096.0 KiB ({pct(flash)}) = code "
                       f"{(sec['.text'] + sec['.data']) / 1024:.1f} "
                       f"KiB + weights (with requantisation tables) {sec['.bt_weights'] / 1024:.1f} KiB"]
    (tmp_path / "b" / "obj" / "model.o").unlink()
    r = scons("board=cortex-m4", "model=tiny", f"out={tmp_path / 'b'}", "VERBOSE=1")
    assert any(ln.startswith("arm-none-eabi-gcc ") and "-mcpu=cortex-m4" in ln for ln in r.stdout.splitlines())


def test_xcore_headline_builds_the_plan_that_fits_a_tile(tmp_path):
    """`scons board=xcore model=mobilenetv2`, the command the product is known by: its layer-by-layer
    arena (700 KiB) fits no XU316 tile (512 KiB of SRAM, code included), so the xcore board picks the
    least-RAM plan that does, says so in one line, and the firmware that would fit a tile runs
    byte-identical with TFLite Micro; a second scons reruns nothing and says nothing more."""
    out = tmp_path / "b"
    x = fixed_input((1, 160, 160, 3))
    np.save(tmp_path / "x.npy", x)
    base = ("board=xcore", "model=mobilenetv2", f"out={out}")
    r = scons("run", *base, f"input={tmp_path / 'x.npy'}", f"output={tmp_path / 'y.npy'}", verbose=False)
    notes = [line for line in r.stdout.splitlines() if "planned with" in line]
    assert len(notes) == 1 and notes[0].startswith("scons: mobilenetv2: the layer-by-layer plan needs 724,992 B "
                                                   "of xcore's RAM"), r.stdout
    assert "planned with optimize=ram instead" in notes[0]
    plan = json.loads((out / "plan.json").read_text())
    assert plan["fusion_blocks"] and plan["arena_bytes"] == int(re.search(r"arena ([\d,]+) B,", notes[0])
                                                                  .group(1).replace(",", ""))
    assert json.loads((out / "plan.json.seal").read_text())["options"] == json.loads(json.dumps(PlanOptions().canonical()))  # sealed on what was asked
    ram = re.search(r"^xcore: RAM ([\d,.]+) KiB of 512\.0 KiB .* arena ([\d,.]+) KiB", r.stdout, re.M)
    assert ram and float(ram.group(1).replace(",", "")) < 512, r.stdout
    want = tflm_run((out / "model.tflite").read_bytes(), [x])[0]
    assert np.array_equal(np.load(tmp_path / "y.npy"), want)
    again = scons(*base)
    assert "planned with" not in again.stdout and " -o " not in again.stdout, again.stdout


# -- parallel builds: SCons runs the tool's Python steps in its worker threads (SConstruct sets num_jobs) ----------

def test_lines_of_steps_running_at_once_stay_whole(tmp_path, monkeypatch):
    """A step's line (the RAM/flash summary after each link, a plan's note, 're-planning') is one write: print()
    wrote the text and its newline apart, and SCons' stdout flushes every write, so under -j two links ending
    together printed 'host: RAM ...host: RAM ...' and then two newlines (SCons' own 'CC x' echo is one write)."""
    import threading
    import time

    from buildtool import steps

    tool = load_file("btfirmware_tool", ROOT / "buildtool" / "scons" / "btfirmware" / "__init__.py")
    steps.store(steps.Outputs({"firmware.json": '{"arena_bytes": 1}\n'}, {"firmware.json": {}}),
                {"firmware.json": str(tmp_path / "firmware.json")})
    (tmp_path / "firmware.elf").write_bytes(b"")
    monkeypatch.setattr(runner, "memory_summary",
                        lambda t, elf, arena, staged=None: f"summary of {threading.current_thread().name}")

    class Unbuffered:  # SCons' stdout: each write flushed (here: a thread switch at every write)
        parts = []

        def write(self, s):
            time.sleep(0.002)
            self.parts.append(s)

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", Unbuffered())
    env = {"BT_OUT": str(tmp_path), "BT_BOARD": "host"}
    threads = [threading.Thread(target=tool._summary, args=([tmp_path / "firmware.elf"], [], env), name=f"link{k}")
               for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = "".join(Unbuffered.parts)
    monkeypatch.undo()
    assert sorted(text.splitlines()) == [f"summary of link{k}" for k in range(6)], text


PARALLEL_SCONSTRUCT = """\
import os, sys
sys.path.insert(0, Dir('#').abspath)
from buildtool.firmware.toolchain import SCONS_DIR
env = Environment(tools=['default', 'btfirmware'], toolpath=[str(SCONS_DIR)], ENV=os.environ)
nodes = env.BtFirmware(board='host', model='tiny', out='host-tiny')
nodes += env.BtFirmware(board='cortex-m4', model='two.tflite', out='m4-two')
nodes += env.BtFirmware(board='cortex-m4', model='tiny', out='m4-tiny-ram', plan_options={'optimize': 'ram'})
nodes += env.BtMultiFirmware(board='host', models=['tiny', 'two.tflite'], out='multi')
Default(nodes)
"""
PARALLEL_OUTS = ("host-tiny", "m4-two", "m4-tiny-ram", "multi")


@pytest.mark.slow
@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_parallel_build_of_several_models_is_the_serial_build(tmp_path, daemon):
    """One SConstruct, four firmwares (host and cortex-m4, a zoo name and a file, a layer-by-layer and a fused plan, a
    multi-model firmware), each build from cold caches (compile cache, plan cache, daemon): at -j4, where SCons
    runs the tool's Python steps in its worker threads at once, every file of every build folder (plan.json,
    model.c, weights.bin, the objects, firmware.elf, the seals) is byte-identical with the -j1 build's, and each
    RAM/flash line is whole."""
    if targets.get("cortex-m4").missing_tools():
        pytest.skip("needs the cortex-m4 toolchain")
    top = tmp_path / "project"
    top.mkdir()
    (top / "buildtool").symlink_to(ROOT / "buildtool")
    (top / "SConstruct").write_text(PARALLEL_SCONSTRUCT)
    (top / "two.tflite").write_bytes(serialize(two_in_two_out()))
    made = {}
    for jobs in (1, 4):
        env = dict(os.environ, BUILDTOOL_CACHE=str(tmp_path / f"cache-j{jobs}"),
                   BUILDTOOL_CACHE_DIR=str(tmp_path / f"plans-j{jobs}"),
                   BUILDTOOL_RUNTIME_DIR=str(tmp_path / f"run-j{jobs}"), BUILDTOOL_NO_DAEMON="0" if daemon else "1",
                   BUILDTOOL_DAEMON_WATCH="0")
        try:
            r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"-j{jobs}"], cwd=top, env=env,
                               capture_output=True, text=True, timeout=600)
            if daemon:  # the three BtPlan steps planned there (the multi-model step plans in the scons process)
                st = subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "status", "--json"], env=env,
                                    cwd=ROOT, capture_output=True, text=True, timeout=60)
                assert st.returncode == 0 and json.loads(st.stdout)["misses"] >= 3, st.stdout + st.stderr
        finally:
            if daemon:
                subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], env=env, cwd=ROOT,
                               capture_output=True, timeout=60)
        assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr
        summaries = [line for line in r.stdout.splitlines() if ": RAM " in line]
        assert len(summaries) == 4 and all(re.fullmatch(r"(host|cortex-m4): RAM [^:]+", s) for s in summaries), \
            r.stdout
        made[jobs] = {str(p.relative_to(top)): p.read_bytes() for d in PARALLEL_OUTS
                      for p in sorted((top / d).rglob("*")) if p.is_file()}
        for d in PARALLEL_OUTS:
            shutil.rmtree(top / d)
        (top / ".sconsign.dblite").unlink()
    assert {"host-tiny/plan.json", "m4-tiny-ram/model.c", "m4-two/weights.bin", "multi/firmware.elf"} <= set(made[1])
    assert made[1].keys() == made[4].keys()
    assert [n for n in made[1] if made[1][n] != made[4][n]] == []
