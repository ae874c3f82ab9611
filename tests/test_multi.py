"""Several models in one firmware and one shared arena (issue 15 item 2): each model bit-exact against
TFLite Micro on cortex-m4 (plain plans) and riscv32 (fused plans), the first model run again after
the others (its state and the shared arena survive them), the joint arena checked against an
independent computation, the joint checker catching a model that writes another's state."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.codegen.emit import emit_c
from buildtool.firmware import runner
from buildtool.plan.arena.checker import footprint, joint_problems
from buildtool.zoo.builder import GraphBuilder
from buildtool.cli import main
from buildtool.plan.joint import model_options, plan_joint, prefixes
from buildtool.options import PlanOptions
from buildtool.model.writer import serialize
from conftest import SHARED_MODELS, shared_model
from test_firmware import need
from test_stateful import real_model, tflm_sequence

KWS_REAL = "tflm_keyword_scrambled_8bit"  # SVDF state; its softmax saturates, so it cannot show state


def svdf_graph():
    """A small SVDF stack whose output shows its state (the second invocation differs from the first)."""
    b = GraphBuilder("wake", seed=3)
    x = b.input((1, 24), scale=0.05, zp=3)
    y = b.svdf(x, 12, 2, 6, "int16")
    return b.finish([b.svdf(b.fully_connected(y, 10), 8, 1, 4, "int8")])


def models(tmp_path_factory) -> list:
    """(model, .tflite bytes): the state-showing SVDF first (it runs first and last), two shared CNNs,
    the real keyword model."""
    wake = tmp_path_factory.mktemp("wake") / "wake.tflite"
    wake.write_bytes(serialize(svdf_graph()))
    paths = [wake, shared_model("dscnn_kws"), shared_model("tiny_cnn_32"), real_model(KWS_REAL)]
    return [(pipeline.read_model(str(p)), p.read_bytes()) for p in paths]


def inputs(model, seed: int) -> list:
    g, rng = model.graph, np.random.default_rng(seed)
    return [rng.integers(-3000 if g.tensors[i].dtype == "int16" else -128,
                         3000 if g.tensors[i].dtype == "int16" else 128, size=g.tensors[i].shape)
            .astype(g.tensors[i].dtype) for i in g.inputs]


def build_and_run(tmp_path_factory, board: str, options: PlanOptions) -> dict:
    need(board)
    ms = models(tmp_path_factory)
    plans = [pipeline.plan_memory(m.graph, model_options(m.graph, options)) for m, _ in ms]
    out = tmp_path_factory.mktemp(f"multi-{board}")
    paths, joint = pipeline.build_multi([m for m, _ in ms], board, out, plans=plans)
    xs = [inputs(m, k) for k, (m, _) in enumerate(ms)]
    runs, ram = pipeline.run_multi(board, out, xs)
    return dict(ms=ms, plans=plans, joint=joint, paths=paths, xs=xs, runs=runs, ram=ram, out=out, board=board)


@pytest.fixture(scope="module")
def m4(tmp_path_factory):
    return build_and_run(tmp_path_factory, "cortex-m4", PlanOptions())


@pytest.fixture(scope="module")
def rv(tmp_path_factory):
    return build_and_run(tmp_path_factory, "riscv32", PlanOptions(optimize="ram", time_budget=0.5))


def independent_arena(plans: list, graphs: list) -> tuple:
    """(joint bytes, state bytes) from the plans' JSON alone: every model's persistent buffers
    (aligned) side by side, then the largest of (own arena - own persistent bytes), which is each
    model's need without its state when its state sits below its other buffers' top."""
    state, need = 0, []
    for p, g in zip(plans, graphs):
        d = p.to_json(g)
        pers = [b for b in d.get("buffers", []) if b["kind"] == "persistent"]
        mine = sum(-(-b["size"] // d["align"]) * d["align"] for b in pers)
        top = max((b["offset"] + b["size"] for b in d.get("buffers", []) if b["kind"] != "persistent"), default=0)
        assert all(b["offset"] < top for b in pers) or not pers  # the premise of own - state
        state += mine
        need.append(d["arena_bytes"] - mine)
    return state + max(need), state


@pytest.mark.parametrize("which", ["m4", "rv"])
def test_every_model_bit_exact_and_first_model_state_survives(which, request):
    r = request.getfixturevalue(which)
    ms, xs, runs = r["ms"], r["xs"], r["runs"]
    assert [k for k, _ in runs] == [0, 1, 2, 3, 0]
    refs = [tflm_sequence(data, [x, x], len(m.graph.outputs))[0] for (m, data), x in zip(ms, xs)]
    first_seen = set()
    for k, ys in runs:
        n = 1 if k in first_seen else 0  # the first model's second run is its second invocation
        first_seen.add(k)
        assert len(ys) == len(refs[k][n])
        for y, ref in zip(ys, refs[k][n]):
            assert y.dtype == ref.dtype and np.array_equal(y, ref), (r["board"], ms[k][0].name, n)
    assert not np.array_equal(refs[0][0][0], refs[0][1][0])  # the wake model's state changes its output
    assert r["ram"]["arena_bytes"] == r["joint"].arena_bytes


@pytest.mark.parametrize("which", ["m4", "rv"])
def test_joint_arena_is_the_largest_need_plus_every_state(which, request):
    r = request.getfixturevalue(which)
    joint, plans = r["joint"], r["plans"]
    want, state = independent_arena(plans, [m.graph for m, _ in r["ms"]])
    assert (joint.arena_bytes, joint.persistent_bytes) == (want, state)
    assert state == sum(16 * -(-t.nbytes // 16) for m, _ in r["ms"] for t in map(m.graph.tensors.__getitem__,
                                                                               m.graph.variable_tensors()))
    assert joint.arena_bytes <= max(p.arena_bytes for p in plans) + state
    assert joint.problems() == []
    rep = json.loads((r["out"] / "joint.json").read_text())
    assert rep == joint.report() and rep["largest_own_arena_bytes"] == max(p.arena_bytes for p in plans)
    kinds = ["arena"] * 4 if which == "m4" else ["arena", "fused", "fused", "arena"]
    assert [m["kind"] for m in rep["models"]] == kinds
    # the linked firmware: one shared arena of the joint size, each model's symbols prefixed
    t = pipeline.board(r["board"])
    sym = runner.symbols(t, r["paths"]["elf"])
    assert sym["bt_arena"][1] == joint.arena_bytes
    for p in joint.parts:
        assert {f"{p.prefix}_init", f"{p.prefix}_invoke", f"{p.prefix}_weights"} <= set(sym)
    assert "model_invoke" not in sym


def test_joint_checker_catches_a_model_writing_anothers_state(m4):
    joint = m4["joint"]
    wake, cnn = joint.parts[0], joint.parts[1]
    state = [b for b in wake.plan.buffers if b.kind == "persistent"][0]
    bad = dataclasses.replace(cnn.plan, buffers=[dataclasses.replace(cnn.plan.buffers[0], offset=state.offset)]
                              + cnn.plan.buffers[1:])
    fps = [(p.prefix, footprint(bad if p is cnn else p.plan, p.base)) for p in joint.parts]
    err = joint_problems(fps, joint.arena_bytes)
    assert err[0].startswith(f"{cnn.prefix} writes bytes {state.offset}..")
    assert err[0].endswith(f"of {wake.prefix}'s state")
    assert all(e.startswith(f"{cnn.prefix} writes bytes ") for e in err)
    assert joint_problems(fps[:1] + fps[2:], joint.arena_bytes) == []  # without the moved buffer: sound
    assert joint_problems([("a", [(0, 64, True)]), ("b", [(48, 128, False)])], 128) == \
        ["b writes bytes 48..64 of a's state"]
    assert joint_problems([("a", [(0, 160, False)])], 128) == ["a: bytes 0..160 outside the shared arena (0..128)"]


def test_default_prefix_keeps_model_names_and_prefixes_are_c_names(m4):
    ms = m4["ms"]
    c, h = emit_c(m4["plans"][2], ms[2][0].graph, "cortex-m4", 16)
    assert "int model_invoke(void)" in c and "int8_t bt_arena[MODEL_ARENA_BYTES]" in c and "#define bt_arena" not in c
    c2 = (m4["out"] / "tiny_cnn_32" / "model.c").read_text()
    assert "int tiny_cnn_32_invoke(void)" in c2 and "model_" not in c2.replace("bt_model_hash", "")
    assert prefixes(["a-b", "a_b", "9x", "bt_x", "model", ""]) == ["a_b", "a_b_2", "m_9x", "m_bt_x", "m_model", "m"]


def test_cli_builds_runs_and_refuses_in_one_line(m4, tmp_path, capsys):
    ms = m4["ms"]
    files = []
    for k in (1, 2):
        np.save(tmp_path / f"x{k}.npy", m4["xs"][k][0])
        files += ["--input", str(tmp_path / f"x{k}.npy")]
    specs = [str(SHARED_MODELS / "dscnn_kws.tflite"), str(SHARED_MODELS / "tiny_cnn_32.tflite")]
    need("host")  # a third board: natively, the same bytes as in QEMU
    assert main(["multi", *specs, "--board", "host", "--build-dir", str(tmp_path / "b"), *files]) == 0
    out = capsys.readouterr().out.splitlines()
    own = [p.arena_bytes for p in m4["plans"][1:3]]
    assert out[0].startswith(f"joint arena {max(own):,} B = state 0 B")
    want = [m4["runs"][1][1][0], m4["runs"][2][1][0], m4["runs"][1][1][0]]
    names = [ms[1][0].name, ms[2][0].name, ms[1][0].name]
    assert out[3:] == [f"run {n + 1} {name}: {' '.join(map(str, y.reshape(-1).tolist()))}"
                       for n, (name, y) in enumerate(zip(names, want))]
    # fused plans for the CNNs, the layer-by-layer plan for the model with state
    np.save(tmp_path / "x3.npy", m4["xs"][3][0])
    assert main(["multi", *specs, str(real_model(KWS_REAL)), "--board", "host", "--build-dir", str(tmp_path / "f"),
                 *files, "--input", str(tmp_path / "x3.npy"), "--optimize", "ram", "--time-budget", "0.5",
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [m["kind"] for m in rep["models"]] == ["fused", "fused", "arena"]
    assert rep["persistent_bytes"] == m4["joint"].parts[3].persistent_bytes
    assert [r["model"] for r in rep["runs"]] == [names[0], names[1], ms[3][0].name, names[0]]
    want_f = [want[0], want[1], m4["runs"][3][1][0], want[0]]
    assert [r["outputs"] for r in rep["runs"]] == [[y.reshape(-1).tolist()] for y in want_f]
    for argv, msg in ((["multi", specs[0], "--board", "cortex-m4"], "at least two models"),
                      (["multi", *specs, "--board", "cortex-m4", files[0], files[1]], "once per model (2), 1 given"),
                      (["multi", *specs, "--board", "cortex-m4", "--input-streamed", "--optimize", "ram",
                        "--build-dir", str(tmp_path / "c")], "input-streamed")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and msg in err and "Traceback" not in err


def test_plan_joint_refuses_one_model(m4):
    from buildtool.errors import UsageError

    with pytest.raises(UsageError, match="at least two"):
        plan_joint([m4["ms"][0][0]], [m4["plans"][0]])


def test_scons_builds_the_same_firmware_and_is_then_up_to_date(m4, tmp_path):
    import subprocess
    import sys

    from buildtool.firmware.toolchain import SCONS_DIR

    need("host")
    (tmp_path / "SConstruct").write_text(
        f"env = Environment(tools=['default', 'btfirmware'], toolpath=[{str(SCONS_DIR)!r}])\n"
        "env.BtMultiFirmware(board=ARGUMENTS['board'], models=ARGUMENTS['models'].split(','), out='build')\n")
    models = f"{SHARED_MODELS / 'dscnn_kws.tflite'},{SHARED_MODELS / 'tiny_cnn_32.tflite'}"

    def scons(*args):
        return subprocess.run([sys.executable, "-m", "SCons", "-C", str(tmp_path), f"models={models}", *args],
                              capture_output=True, text=True, timeout=300)

    r = scons("board=host")
    assert r.returncode == 0, r.stdout + r.stderr
    runs, _ = pipeline.run_multi("host", tmp_path / "build", [m4["xs"][1], m4["xs"][2]])
    want = [m4["runs"][1][1][0], m4["runs"][2][1][0], m4["runs"][1][1][0]]
    assert [k for k, _ in runs] == [0, 1, 0] and all(np.array_equal(ys[0], y) for (_, ys), y in zip(runs, want))
    assert scons("board=host", "-q").returncode == 0  # every output declared and up to date
    r = scons("board=nope")
    assert r.returncode == 2 and "unknown board 'nope'" in r.stderr and "Traceback" not in r.stderr
