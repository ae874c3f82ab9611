"""Stateful operators (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM): byte-exact against TFLite Micro over sequences of invocations, with the
state kept in persistent buffers of the arena, in the numpy executor and in firmware."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.firmware import runner
from buildtool.plan.arena import checker
from buildtool.plan.arena.naive import naive_plan
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder
from buildtool.errors import ModelError
from buildtool.plan.arena.execute import Session, run_sequence, run_unplanned
from buildtool.model.reader import load, parse
from buildtool.model.writer import serialize
from conftest import SHARED_MODELS

REAL = SHARED_MODELS / "real"
KWS = "tflm_keyword_scrambled_8bit"
SVDF_OUTPUTS = [5, 13, 21, 29, 37, 42, 47]  # every SVDF output of the keyword model
LSTM = "tflm_trained_lstm_int8"
LSTM_OUTPUT = 23  # the LSTM's own output (every time step), before the dense classifier


def real_model(name):
    p = REAL / f"{name}.tflite"
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is only on CI and developer machines)")
    return p


def tflm_sequence(data: bytes, input_sets: list, n_outputs: int, tensors=()) -> tuple:
    """Invoke one TFLM interpreter once per input set: (outputs per invocation, tensors after the last)."""
    from tflite_micro import runtime

    cfg = runtime.InterpreterConfig.kPreserveAllTensors if tensors else runtime.InterpreterConfig.kAllocationRecording
    # TFLM's default arena (10x the file) is too small for tiny files with large activations
    ip = runtime.Interpreter.from_bytes(data, arena_size=max(10 * len(data), 1 << 20), intrepreter_config=cfg)
    outs = []
    for xs in input_sets:
        for k, x in enumerate(xs):
            ip.set_input(x, k)
        ip.invoke()
        outs.append([np.array(ip.get_output(k)) for k in range(n_outputs)])
    return outs, {i: np.array(ip.GetTensor(i, 0)["tensor_data"]) for i in tensors}


def random_inputs(g, rng, n: int) -> list:
    sets = []
    for _ in range(n):
        xs = []
        for i in g.inputs:
            t = g.tensors[i]
            lim = 3000 if t.dtype == "int16" else 128
            xs.append(rng.integers(-lim, lim, size=t.shape).astype(t.dtype))
        sets.append(xs)
    return sets


def svdf_model(rng, seed: int):
    """A random SVDF (random sizes, rank, memory, int8 or int16 state), sometimes two stacked with a
    dense layer between, as the keyword model does."""
    b = GraphBuilder("svdf", seed=seed)
    x = b.input((1, int(rng.integers(1, 40))), scale=float(np.float32(rng.uniform(0.005, 0.1))),
                zp=int(rng.integers(-20, 20)))
    y = b.svdf(x, int(rng.integers(1, 20)), int(rng.integers(1, 4)), int(rng.integers(1, 10)),
               str(rng.choice(["int8", "int16"])))
    if rng.random() < 0.4:
        y = b.svdf(b.fully_connected(y, int(rng.integers(2, 12))), int(rng.integers(1, 8)), 1,
                   int(rng.integers(2, 6)), "int8")
    return b.finish()


def lstm_model(rng, seed: int):
    """A random LSTM: batch- or time-major, 1-2 batch rows, a few steps, cell clip or none, cell scales
    2^-13..2^-10 (the tanh input shift of either sign), sometimes followed by a dense layer."""
    b = GraphBuilder("lstm", seed=seed)
    tm = bool(rng.random() < 0.3)
    steps, batch, n_in = int(rng.integers(1, 8)), int(rng.integers(1, 3)), int(rng.integers(1, 20))
    x = b.input((steps, batch, n_in) if tm else (batch, steps, n_in),
                scale=float(np.float32(rng.uniform(0.005, 0.05))), zp=int(rng.integers(-20, 20)))
    y = b.lstm(x, int(rng.integers(1, 16)), time_major=tm, cell_clip=float(rng.choice([0.0, 2.0, 5.0])),
               cell_scale_power=int(rng.integers(-13, -9)))
    if rng.random() < 0.3:
        y = b.fully_connected(y, int(rng.integers(2, 8)))
    return b.finish()


def check_sequence(g, input_sets, plan=None, extra=()):
    """Our executor in its planned arena invoked like TFLM: every output of every invocation equal,
    and the state (variable tensors) equal after the last."""
    data = serialize(g)
    g = parse(data, name=g.name)
    want, state = tflm_sequence(data, input_sets, len(g.outputs), g.variable_tensors())
    plan = plan or plan_arena(g)
    s = Session(g, plan)
    for k, (xs, w) in enumerate(zip(input_sets, want)):
        for j, (y, e) in enumerate(zip(s.invoke(xs), w)):
            assert y.dtype == e.dtype and np.array_equal(y, e.reshape(y.shape)), (k, j)
    for v, e in state.items():
        assert np.array_equal(s.view(v).reshape(-1), e.reshape(-1)), f"state tensor {v}"
    return g, plan, want


# -- numpy executor ------------------------------------------------------------------------------
def test_random_svdf_models_match_tflm_over_invocations():
    rng = np.random.default_rng(10)
    dtypes = set()
    for case in range(16):
        g = svdf_model(rng, case)
        dtypes |= {g.tensors[v].dtype for v in g.variable_tensors()}
        check_sequence(g, random_inputs(g, rng, 5))
    assert dtypes == {"int8", "int16"}


def test_random_lstm_models_match_tflm_over_invocations():
    rng = np.random.default_rng(21)
    seen = set()
    for case in range(16):
        g = lstm_model(rng, case)
        op = next(o for o in g.operators if o.opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM")
        seen.add((op.options["time_major"], op.options["cell_clip"] > 0))
        check_sequence(g, random_inputs(g, rng, 4))
    assert seen == {(False, False), (False, True), (True, False), (True, True)}


def test_state_persists_only_within_a_session():
    rng = np.random.default_rng(4)
    g = svdf_model(rng, 7)
    plan = plan_arena(g)
    sets = random_inputs(g, rng, 3)
    seq = run_sequence(g, plan, sets)
    # a fresh session starts from the reset state: its first output is the sequence's first
    assert np.array_equal(Session(g, plan).invoke(sets[0])[0], seq[0][0])
    assert np.array_equal(run_unplanned(g, sets[0])[0], seq[0][0])
    # the same input a second time gives another output: the state moved on
    s = Session(g, plan)
    a, b = s.invoke(sets[0])[0], s.invoke(sets[0])[0]
    assert not np.array_equal(a, b)


# -- plan contract -------------------------------------------------------------------------------
def test_variable_tensors_get_persistent_buffers():
    g = load(str(real_model(KWS)))
    plan = plan_arena(g)
    n = len(plan.order)
    pers = plan.persistent()
    assert sorted(t for b in pers for t in b.tensors) == g.variable_tensors()
    for b in pers:
        assert (b.first_step, b.last_step) == (0, n - 1) and len(b.tensors) == 1
        lo, hi = b.offset, b.offset + b.size
        for o in plan.buffers:
            if o.id != b.id:
                assert o.offset >= hi or o.offset + o.size <= lo, "a persistent buffer shares bytes"
    assert plan_arena(g).to_json() == plan.to_json()
    # the naive plan keeps them too, and both run the same
    x = random_inputs(g, np.random.default_rng(0), 3)
    assert [o[0].tolist() for o in run_sequence(g, naive_plan(g), x)] == \
           [o[0].tolist() for o in run_sequence(g, plan, x)]


def test_checker_refuses_a_plan_that_reuses_state_bytes():
    g = load(str(real_model(KWS)))
    plan = plan_arena(g)
    v = g.variable_tensors()[0]
    pb = next(b for b in plan.buffers if b.tensors == [v])
    # a short-lived buffer moved onto the state: the state would be overwritten between invocations
    victim = next(b for b in plan.buffers if b.kind == "tensor" and b.size <= pb.size)
    bad = dataclasses.replace(plan, buffers=[dataclasses.replace(b, offset=pb.offset) if b.id == victim.id else b
                                             for b in plan.buffers],
                              tensors={k: (dataclasses.replace(p, offset=p.offset - victim.offset + pb.offset)
                                           if p.buffer == victim.id else p) for k, p in plan.tensors.items()})
    assert any("overlap" in e for e in checker.problems(g, bad))
    # the state in an ordinary (short-lived) buffer
    short = dataclasses.replace(plan, buffers=[dataclasses.replace(b, kind="tensor", last_step=0)
                                               if b.id == pb.id else b for b in plan.buffers])
    assert any(f"tensor {v}" in e for e in checker.problems(g, short))


# -- reader ----------------------------------------------------------------------------------
def test_reader_accepts_unread_empty_tensors_only():
    """The LSTM file carries empty [0] tensors only its `intermediates` list names (TFLM ignores them);
    an empty tensor an operator really reads stays an error."""
    g = load(str(real_model(LSTM)))
    assert [t.shape for t in g.tensors[18:23]] == [(0,)] * 5
    bad = g.copy()
    bad.tensors[2] = dataclasses.replace(bad.tensors[2], shape=(0,), data=np.zeros(0, np.int32))
    with pytest.raises(ModelError, match=r"tensor 2 .* has shape \[0\], which buildtool cannot plan"):
        parse(serialize(bad))


def test_lstm_variants_tflm_cannot_run_are_refused():
    g = lstm_model(np.random.default_rng(2), 2)
    op = g.operators[0]
    cifg = g.copy()
    cifg.operators[0].inputs = (op.inputs[0], -1) + tuple(op.inputs[2:])
    with pytest.raises(ModelError, match="no input gate"):
        parse(serialize(cifg))
    sig = g.copy()
    sig.operators[0].options["lstm_activation"] = "RELU"
    with pytest.raises(ModelError, match="cell activation RELU is not supported"):
        parse(serialize(sig))
    cell = g.copy()
    c = op.inputs[19]
    cell.tensors[c] = dataclasses.replace(cell.tensors[c], quant=dataclasses.replace(
        cell.tensors[c].quant, scale=np.array([0.001], np.float32)))
    with pytest.raises(ModelError, match="must be a power of two"):
        parse(serialize(cell))


def test_svdf_state_must_be_variable():
    g = svdf_model(np.random.default_rng(1), 1)
    g2 = g.copy()
    v = g2.variable_tensors()[0]
    g2.tensors[v] = dataclasses.replace(g2.tensors[v], variable=False)
    with pytest.raises(ModelError, match="svdf_0/state' before anything produces it"):
        parse(serialize(g2))
    # the checks of the operator itself say so too
    from buildtool.model.ops import check_op
    with pytest.raises(ModelError, match="activation state .* must be a variable tensor"):
        check_op(g2, g2.operators[0])


# -- firmware ------------------------------------------------------------------------------------
@pytest.mark.parametrize("board", ["host", "cortex-m4"])
@pytest.mark.parametrize("make", [svdf_model, lstm_model])
def test_random_stateful_firmware_over_invocations(board, make, tmp_path):
    rng = np.random.default_rng(11)
    for case in range(3 if board == "host" else 2):
        g = parse(serialize(make(rng, 100 + case)))
        sets = random_inputs(g, rng, 4)
        want, _ = tflm_sequence(serialize(g), sets, 1)
        out = tmp_path / f"c{case}"
        pipeline.build(g, board, out)
        got, _, _ = runner.run(board, out, sets, sequence=True, profile=False)
        assert [y.tolist() for y in got] == [w[0].reshape(y.shape).tolist() for y, w in zip(got, want)]


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_run_sequence_and_refusals(tmp_path, capsys, monkeypatch):
    from buildtool import cli

    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")
    rng = np.random.default_rng(12)
    g = svdf_model(rng, 12)
    (tmp_path / "m.tflite").write_bytes(serialize(g))
    sets = random_inputs(g, rng, 4)
    np.save(tmp_path / "x.npy", np.stack([s[0] for s in sets]))
    want, _ = tflm_sequence(serialize(g), sets, 1)
    args = ["run", str(tmp_path / "m.tflite"), "--input", str(tmp_path / "x.npy")]
    for extra in ([], ["--board", "host", "--build-dir", str(tmp_path / "b")]):
        assert cli.main(args + ["--sequence", "--output", str(tmp_path / "y.npy")] + extra) == 0
        assert np.load(tmp_path / "y.npy").tolist() == [w[0].tolist() for w in want]
    capsys.readouterr()
    # without --sequence the stacked file is the wrong shape; fusion cannot keep state
    assert cli.main(args) == 2
    assert cli.main(args[:2] + ["--input", str(tmp_path / "x.npy"), "--sequence", "--optimize", "ram"]) == 2
    assert cli.main(["plan", str(tmp_path / "m.tflite"), "--split", "auto"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "wants int8[1," in err[0] and "--sequence runs the plain plan" in err[1]
    assert "keeps state between invocations (SVDF)" in err[2] and "Traceback" not in "".join(err)
    assert err[2].startswith(f"buildtool: error: {tmp_path / 'm.tflite'}: the model keeps state"), err[2]


# -- build system --------------------------------------------------------------------------------
def test_skeleton_keeps_state_tensors():
    """The SCons build plans from the weight-free skeleton: it must still know which tensors are state."""
    import json

    from buildtool.codegen import skeleton

    g = load(str(real_model(LSTM)))
    sk = skeleton.from_json(json.loads(json.dumps(skeleton.to_json(g))))
    assert sk.variable_tensors() == g.variable_tensors() == [16, 17]
    assert plan_arena(sk).to_json() == plan_arena(g).to_json()


def test_scons_run_of_the_keyword_model(tmp_path):
    """`scons run` with its default input on a model whose input is int16."""
    import subprocess
    import sys

    from conftest import ROOT

    r = subprocess.run([sys.executable, "-m", "SCons", "-C", str(ROOT), "-Q", "run", "board=host",
                        f"model={real_model(KWS)}", f"out={tmp_path / 'build'}"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "output: 0 32767" in r.stdout and "SVDF" in r.stdout


def test_report_of_a_stateful_model_counts_its_state(tmp_path):
    from buildtool.report import plain_plan

    g = load(str(real_model(LSTM)))
    before = plain_plan(g)
    state = {t for b in before.buffers if b.kind == "persistent" for t in b.tensors}
    assert state == {16, 17} and before.arena_bytes == plan_arena(g).arena_bytes
    from buildtool import cli

    assert cli.main(["report", str(real_model(LSTM)), "-o", str(tmp_path / "r.html"), "--no-daemon"]) == 0
    assert "1.4 KiB" in (tmp_path / "r.html").read_text()


def test_generated_code_is_deterministic_and_resets_state_in_model_init():
    from buildtool.codegen.model_c import generate

    g = load(str(real_model(KWS)))
    plan = plan_arena(g)
    c1, h1 = generate(g, plan, "host")
    c2, h2 = generate(load(str(real_model(KWS))), plan_arena(g), "host")
    assert (c1, h1) == (c2, h2)
    init = c1.split("int model_init(void) {")[1].split("\n}\n")[0]
    for v in g.variable_tensors():
        t, off = g.tensors[v], plan.tensors[v].offset
        assert f"i < {t.nbytes}u; i++) bt_arena[{off}u + i] = (int8_t){t.zero_point};" in init
    assert "bt_arena[" not in c1.split("int model_invoke(void) {")[1].split("bt_svdf_s8")[0]
