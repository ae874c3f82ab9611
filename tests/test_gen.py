"""`buildtool gen STEP`: declared outputs, byte-identical with the pipeline, rewritten only when they
change, depfiles naming the code that ran (the plan step's even when the daemon planned)."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from buildtool.options import PlanOptions
from buildtool import pipeline, steps


def gen(*args, daemon=False, check=True):
    env = dict(os.environ)
    if daemon:
        env.pop("BUILDTOOL_NO_DAEMON", None)
    else:
        env["BUILDTOOL_NO_DAEMON"] = "1"
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "gen", *map(str, args)], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.mark.parametrize("opts", [[], ["--opt", "optimize=ram"]])
def test_steps_make_the_pipelines_bytes(opts, tmp_path):
    """Plain: every step in this process; fused: every step (but board) in the daemon."""
    d, daemon = tmp_path, bool(opts)
    gen("model", "mbv2-w0.35", "-o", d / "m.tflite", daemon=daemon)
    gen("skeleton", d / "m.tflite", "-o", d / "skeleton.json", daemon=daemon)
    gen("plan", d / "skeleton.json", "-o", d / "plan.json", "--depfile", d / "plan.d", *opts, daemon=daemon)
    code_in = d / ("m.tflite" if opts else "skeleton.json")
    gen("code", code_in, d / "plan.json", "--board", "cortex-m4", "-o", d / "gen", "--name", "mbv2-w0.35", daemon=daemon)
    gen("flash", d / "m.tflite", "--board", "cortex-m4", "-o", d / "weights.bin", daemon=daemon)
    gen("board", "--board", "cortex-m4", "-o", d / "gen")
    m = pipeline.read_model("mbv2-w0.35")
    plan = pipeline.plan_memory(m.graph, pipeline.PlanOptions.from_strings(dict(o.split("=") for o in opts[1::2])))
    want = pipeline.generate(m, plan, "cortex-m4", d / "want")
    for key, got in (("plan", d / "plan.json"), ("model_c", d / "gen" / "model.c"), ("model_h", d / "gen" / "model.h"),
                     ("manifest", d / "gen" / "firmware.json"), ("weights", d / "weights.bin")):
        assert got.read_bytes() == want[key].read_bytes(), key
    dep = (d / "plan.d").read_text()
    # with the daemon, the depfile still names the planner's sources (this process never imported them)
    assert str(ROOT / "buildtool" / "plan" / "arena" / "order.py") in dep
    assert str(ROOT / "buildtool" / "plan" / "fusion" / "search.py") in dep
    assert dep.startswith(f"{d / 'plan.json'}: {d / 'skeleton.json'}")
    assert (d / "gen" / "board.ld").is_file() and '"cc": "arm-none-eabi-gcc"' in (d / "gen" / "board.json").read_text()


def test_unchanged_output_is_not_rewritten_and_weights_leave_the_skeleton(tmp_path):
    d = tmp_path
    gen("model", "tiny", "-o", d / "m.tflite")
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    os.utime(d / "s.json", (1, 1))
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    assert os.stat(d / "s.json").st_mtime == 1  # same bytes: untouched (restat stops the rebuild)
    from buildtool.model.writer import serialize
    import numpy as np

    g = pipeline.read_model(str(d / "m.tflite")).graph.copy()
    for t in g.tensors:
        if t.data is not None and t.dtype == "int8" and t.data.ndim == 4:
            t.data = np.where(t.data == 127, -127, t.data + 1).astype(np.int8)  # no filter row all zero
    (d / "m.tflite").write_bytes(serialize(g))
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    assert os.stat(d / "s.json").st_mtime == 1  # a weight-only edit leaves the skeleton (and the plan) alone
    w = next(t for t in g.tensors if t.data is not None and t.dtype == "int8" and t.data.ndim == 4)
    w.data[0] = 0  # a pruned output channel: model.c computes it as a constant (model/weight_facts.py)
    (d / "m.tflite").write_bytes(serialize(g))
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    assert os.stat(d / "s.json").st_mtime != 1 and '"zero_rows": [\n0\n]' in (d / "s.json").read_text()


@pytest.mark.parametrize("args,needle", [
    (["plan", "{d}/nope.json", "-o", "{d}/p.json"], "nope.json"),
    (["plan", "{d}/s.json", "-o", "{d}/p.json", "--opt", "optimize=fast"], "optimize='fast'"),
    (["plan", "{d}/s.json", "-o", "{d}/p.json", "--opt", "optimize"], "must be key=value"),
    (["code", "{d}/s.json", "--board", "cortex-m4", "-o", "{d}/g"], "needs the plan"),
    (["flash", "tiny.tflite", "-o", "{d}/w.bin"], "needs --board"),
    (["board", "--board", "pdp11", "-o", "{d}/g"], "pdp11"),
    (["model", "nosuch", "-o", "{d}/m.tflite"], "neither a model file nor a zoo name"),
    (["skeleton", "{d}/m.tflite", "-o", "{d}/s2.json", "--depfile-target", "{d}/s.stamp"], "give both"),
    (["skeleton", "{d}/m.tflite", "-o", "{d}/s2.json", "--depfile", "{d}/s.d", "--depfile-outputs"],
     "give --depfile FILE --depfile-target STAMP too"),
    (["code", "{d}/m.tflite", "{d}/s.json", "--board", "cortex-m4", "-o", "{d}/g"],  # the skeleton as the plan
     "s.json is not a buildtool plan for this model (TypeError); make it again with buildtool gen plan"),
    (["flash", "{d}/m.tflite", "{d}/s.json", "--board", "cortex-m4", "-o", "{d}/w.bin"], "s.json is not a buildtool plan"),
])
def test_bad_input_is_one_line(args, needle, tmp_path):
    gen("model", "tiny", "-o", tmp_path / "m.tflite")
    gen("skeleton", tmp_path / "m.tflite", "-o", tmp_path / "s.json")
    r = gen(*[a.format(d=tmp_path) for a in args], check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], r.stderr


def test_a_fused_plan_of_another_model_is_refused_by_the_checker(tmp_path):
    """tiny's least-RAM plan given with mbv2-w0.35: the code and flash steps name the plan and why
    (its schedule does not run the model's operators), and write nothing."""
    d = tmp_path
    gen("model", "tiny", "-o", d / "t.tflite")
    gen("skeleton", d / "t.tflite", "-o", d / "t.json")
    gen("plan", d / "t.json", "-o", d / "tp.json", "--opt", "optimize=ram")
    gen("model", "mbv2-w0.35", "-o", d / "m.tflite")
    for args in (["code", d / "m.tflite", d / "tp.json", "--board", "cortex-m4", "-o", d / "g"],
                 ["flash", d / "m.tflite", d / "tp.json", "--board", "cortex-m4", "-o", d / "w.bin"]):
        r = gen(*args, check=False)
        assert r.returncode == 2 and r.stderr == (
            f"buildtool: error: {d / 'tp.json'} fails the plan checker (the schedule does not run each of the "
            f"model's {len(pipeline.read_model(str(d / 'm.tflite')).graph.operators)} operators once); make it "
            "again with buildtool gen plan\n"), r.stderr
    assert not (d / "g").exists() and not (d / "w.bin").exists()


_PROBE = """
import importlib, json, sys
step = importlib.import_module("buildtool.steps." + sys.argv[1])
getattr(step, sys.argv[2])(*json.loads(sys.argv[3]))
print(json.dumps(sorted(m.__file__ for n, m in list(sys.modules.items())
                        if n.startswith("buildtool") and getattr(m, "__file__", None))))
"""


def test_step_sources_cover_every_module_a_step_runs(tmp_path):
    """steps.sources(step) is read from the source (imports.closure), never kept by hand: every
    buildtool module a step imports when it runs alone in a process (plain and fused plans; the
    OpDef tables' functions and the board plugins, loaded by name, included) is among them, so a
    depfile never misses an edit; and the planner's search is not among the code step's, so an edit
    to it stops at the plan step."""
    d = tmp_path
    gen("model", "tiny", "-o", d / "m.tflite")
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    gen("plan", d / "s.json", "-o", d / "p.json")
    gen("plan", d / "s.json", "-o", d / "f.json", "--opt", "optimize=ram", "--opt", "time_budget=0.2")
    m, s, p, f = (str(d / n) for n in ("m.tflite", "s.json", "p.json", "f.json"))
    runs = [("model", "run", ["tiny"]), ("skeleton", "run", [m]), ("plan", "run_file", [s, {}]),
            ("plan", "run_file", [s, {"optimize": "ram", "time_budget": 0.2}]),
            ("code", "run_files", [s, p, "cortex-m4"]), ("code", "run_files", [m, f, "riscv32"]),
            ("flash", "run_files", [m, "riscv32"]), ("flash", "run_files", [m, "cortex-m4", f]),
            ("board", "run", ["cortex-m4", str(d / "g")])]
    for step, fn, args in runs:
        r = subprocess.run([sys.executable, "-c", _PROBE, step, fn, json.dumps(args)], capture_output=True, text=True,
                           cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
        assert r.returncode == 0, r.stderr
        imported = json.loads(r.stdout.splitlines()[-1])
        missing = set(imported) - set(steps.sources(step))
        assert not missing, (step, args, sorted(missing))
    code = steps.sources("code")
    for planner in ("plan/arena/planner.py", "plan/fusion/planner.py", "plan/fusion/search.py"):
        assert str(ROOT / "buildtool" / planner) in steps.sources("plan") and str(ROOT / "buildtool" / planner) not in code
    assert str(ROOT / "buildtool" / "codegen" / "templates" / "model.c.in") in code  # package data the step reads


_LIGHT = """
import json, sys
from buildtool import cli
rc = cli.main(sys.argv[1:])
print(json.dumps([rc, sorted(n for n in ("numpy", "buildtool.model.reader", "buildtool.pipeline", "tflite")
                             if n in sys.modules)]))
"""


def test_steps_run_in_the_daemon_with_the_same_bytes(tmp_path):
    """Every step but board runs in the warm daemon: the client imports neither numpy nor the model
    reader; outputs and depfiles are byte-identical with the steps run here; errors name paths as
    typed, word for word as here; a daemon that cannot be used is one warning and the step run here."""
    (tmp_path / "m.tflite").write_bytes(pipeline.zoo_model("tiny"))
    # (--depfile-target: a stamp the build system touches, CMake's, through the gen client (the first step, which
    # starts the daemon) and the thin client's fast path)
    steps = [("model", "tiny", "-o", "{o}/z.tflite", "--depfile", "{o}/z.d", "--depfile-target", "{o}/z.stamp"),
             ("skeleton", "m.tflite", "-o", "{o}/s.json", "--depfile", "{o}/s.d", "--depfile-target", "s.stamp",
              "--depfile-outputs"),
             ("plan", "{o}/s.json", "-o", "{o}/p.json", "--depfile", "{o}/p.d", "--opt", "optimize=ram"),
             ("code", "m.tflite", "{o}/p.json", "--board", "cortex-m4", "-o", "{o}/g", "--depfile", "{o}/g.d"),
             ("flash", "m.tflite", "--board", "cortex-m4", "-o", "{o}/w.bin", "--depfile", "{o}/w.d")]

    def run(args, o, **env):
        e = {k: v for k, v in os.environ.items() if k != "BUILDTOOL_NO_DAEMON"}
        e.update(PYTHONPATH=str(ROOT), **env)
        return subprocess.run([sys.executable, "-c", _LIGHT, "gen", *[a.format(o=o) for a in args]],
                              capture_output=True, text=True, cwd=tmp_path, env=e, timeout=300)

    for o, env in (("here", {"BUILDTOOL_NO_DAEMON": "1"}), ("daemon", {})):
        (tmp_path / o).mkdir()
        for args in steps:
            r = run(args, o, **env)
            rc, heavy = json.loads(r.stdout.splitlines()[-1])
            assert rc == 0 and r.stderr == "", r.stderr
            light = heavy == []
            assert light == (o == "daemon"), (args, r.stdout)
    here = sorted(p.relative_to(tmp_path / "here") for p in (tmp_path / "here").rglob("*") if p.is_file())
    assert len(here) == 16  # 5 steps' 7 outputs, 4 seals (z.tflite, s.json, p.json, g/firmware.json), 5 depfiles
    for rel in here:
        a, b = (tmp_path / "here" / rel).read_bytes(), (tmp_path / "daemon" / rel).read_bytes()
        assert a.replace(b"/here/", b"/daemon/") == b, rel
    for o in ("here", "daemon"):  # the stamp is the target, as typed relative to the working directory
        assert (tmp_path / o / "z.d").read_text().startswith(f"{tmp_path / o / 'z.stamp'}: "), o
        assert (tmp_path / o / "s.d").read_text().startswith(f"{tmp_path / 's.stamp'}: "), o
        # (--depfile-outputs: its outputs among the stamp's prerequisites, for Make; the model's depfile without)
        assert f"  {tmp_path / o / 's.json'} " in (tmp_path / o / "s.d").read_text(), o
        assert str(tmp_path / o / "z.tflite") not in (tmp_path / o / "z.d").read_text(), o
        assert (tmp_path / o / "p.d").read_text().startswith(f"{tmp_path / o / 'p.json'}: "), o  # (default: outputs)
    for args in (("flash", "nope.tflite", "--board", "host", "-o", "x.bin"),
                 ("code", "m.tflite", "missing/p.json", "--board", "host", "-o", "g2")):
        errs = [run(args, ".", **env) for env in ({"BUILDTOOL_NO_DAEMON": "1"}, {})]
        assert [json.loads(r.stdout)[0] for r in errs] == [2, 2] and errs[0].stderr == errs[1].stderr, errs
        assert str(tmp_path) not in errs[1].stderr and args[1 if args[0] == "flash" else 2] in errs[1].stderr
    (tmp_path / "not-a-dir").write_text("")
    (tmp_path / "fallback").mkdir()
    r = run(steps[4], "fallback", BUILDTOOL_RUNTIME_DIR=str(tmp_path / "not-a-dir" / "run"))
    assert json.loads(r.stdout)[0] == 0 and "warning" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert (tmp_path / "fallback" / "w.bin").read_bytes() == (tmp_path / "here" / "w.bin").read_bytes()


def test_the_plan_step_refuses_a_plan_the_board_cannot_hold(tmp_path):
    """gen plan --board B: a model B's RAM cannot hold is one line naming the RAM it needs (build
    systems learn it here, not from the linker after compiling), nothing written; a board that holds
    it gets the same plan.json bytes as without --board."""
    d = tmp_path
    gen("model", "mbv2-w0.35", "-o", d / "m.tflite")
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    r = gen("plan", d / "s.json", "-o", d / "p.json", "--board", "hifive1", "--name", "mbv2-w0.35", check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("buildtool: error: mbv2-w0.35 does not fit board hifive1: it needs "), lines[0]
    assert "the board has 16,384 B of RAM" in lines[0] and not (d / "p.json").exists()
    gen("plan", d / "s.json", "-o", d / "a.json")
    gen("plan", d / "s.json", "-o", d / "b.json", "--board", "cortex-m4")
    assert (d / "a.json").read_bytes() == (d / "b.json").read_bytes()


def test_a_board_that_picks_its_plan_says_which_on_every_path(tmp_path):
    """gen plan --board xcore on a model whose layer-by-layer arena no XU316 tile holds (wide104: 507 KiB,
    with the stack past the tile before any code): the plan is the least-RAM one (optimize=ram's bytes),
    sealed on the options asked for (none), and one line says so, in this process and through the daemon
    alike; a board that does not pick (cortex-m4) keeps the plain plan without a word."""
    from test_fit import wide_model

    from buildtool.model.writer import serialize

    d = tmp_path
    (d / "m.tflite").write_bytes(serialize(wide_model(104)))
    gen("skeleton", d / "m.tflite", "-o", d / "s.json")
    gen("plan", d / "s.json", "-o", d / "ram.json", "--opt", "optimize=ram")
    outs = {}
    for how, daemon in (("here", False), ("daemon", True)):
        r = gen("plan", d / "s.json", "-o", d / f"{how}.json", "--board", "xcore", "--name", "wide104",
                daemon=daemon)
        outs[how] = r.stdout
        assert r.stdout.startswith("buildtool: wide104: the layer-by-layer plan needs 527,360 B of xcore's RAM "
                                   "(arena 519,168 B + stack 8,192 B), which has 524,288 B of RAM (512 KiB); ") and \
            len(r.stdout.splitlines()) == 1 and "planned with optimize=ram instead" in r.stdout, r.stdout
        assert (d / f"{how}.json").read_bytes() == (d / "ram.json").read_bytes()
        assert json.loads((d / f"{how}.json.seal").read_text())["options"] == json.loads(json.dumps(PlanOptions().canonical()))
    assert outs["here"] == outs["daemon"]
    r = gen("plan", d / "s.json", "-o", d / "m4.json", "--board", "cortex-m4")
    assert r.stdout == "" and json.loads((d / "m4.json").read_text()).get("fusion_blocks") is None
