"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) and their CALL_ONCE init subgraph
(model/variables.py): models TensorFlow's converter wrote (tests/data/var_*.tflite, made by
`python3 scripts/variable_models.py`) and builder-made delay lines (int8 and 16x8), invoked several times
in a row: the numpy executor and host / Cortex-M4 firmware equal TFLite Micro on every invocation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.errors import ModelError
from buildtool.firmware import runner
from buildtool.model.ir import Operator, Tensor
from buildtool.model.reader import parse
from buildtool.model.variables import RESOURCE, bind, order_edges
from buildtool.model.writer import serialize
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import Session, run_unplanned
from buildtool.plan.arena.naive import naive_plan
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.fusion.planner import plan_fused
from buildtool.zoo.builder import GraphBuilder, as_int16x8
from test_stateful import random_inputs, tflm_sequence

DATA = Path(__file__).parent / "data"
TF_MODELS = ["var_accumulator_int8", "var_ring_int8", "var_accumulator_int16"]


def delay_model(int16: bool):
    """Two delay lines in series (the second reads what the first returned), one with a non-zero start."""
    b = GraphBuilder("delay", seed=3)
    x = b.input((1, 6), scale=0.02, zp=5)
    y = b.delay(b.fully_connected(x, 5), init=np.arange(-2, 3))
    g = b.finish([b.add(y, b.delay(y))])
    return as_int16x8(g) if int16 else g


def reset_model():
    """A delay line whose variable is then reset to a constant (ASSIGN_VARIABLE of a constant tensor, as the
    converter writes `v.assign(tf.zeros(...))`): every read after the first gives the constant."""
    b = GraphBuilder("reset", seed=5)
    x = b.input((1, 6), scale=0.02, zp=5)
    y = b.delay(x, init=np.arange(6))
    v = b.operators[-1].inputs[0]
    c = b.const("c", (np.arange(6) * 3).reshape(1, 6), "int8", b.tensors[x].quant)
    b._op("ASSIGN_VARIABLE", [v, c], [])
    return b.finish([b.add(y, x)])


def check_invocations(data: bytes, n: int = 6, seed: int = 0):
    """Our executor over n invocations (planned arena and the naive plan) equal to TFLM's on each."""
    g = parse(data)
    sets = random_inputs(g, np.random.default_rng(seed), n)
    want, _ = tflm_sequence(data, sets, len(g.outputs))
    assert checker.problems(g, plan_arena(g)) == []
    for plan in (plan_arena(g), naive_plan(g)):
        s = Session(g, plan)
        for k, (xs, w) in enumerate(zip(sets, want)):
            got = s.invoke(xs)
            assert all(y.dtype == e.dtype and np.array_equal(y, e.reshape(y.shape)) for y, e in zip(got, w)), k
    # the state changes the output: the same input twice gives two answers
    assert any(not np.array_equal(want[k][0], want[k + 1][0]) for k in range(n - 1))
    return g, sets, want


@pytest.mark.parametrize("name", TF_MODELS)
def test_tensorflow_models_match_tflm_over_invocations(name):
    data = (DATA / f"{name}.tflite").read_bytes()
    g, _, _ = check_invocations(data)
    # the converter's CALL_ONCE and VAR_HANDLEs are gone; each variable is one variable tensor with its start value
    assert not {"CALL_ONCE", "VAR_HANDLE"} & {op.opcode for op in g.operators}
    vs = g.variable_tensors()
    assert len(vs) == (2 if "ring" in name else 1) and all(g.tensors[v].init is not None for v in vs)
    if "ring" in name:  # its init subgraph assigns a non-zero constant: linspace(-0.9, 0.9) quantised
        assert len(set(g.tensors[vs[0]].init.reshape(-1).tolist())) == 32


def test_assigning_a_constant_matches_tflm():
    check_invocations(serialize(reset_model()), seed=3)


@pytest.mark.parametrize("int16", [False, True])
def test_builder_delay_round_trips_and_matches_tflm(int16):
    g = delay_model(int16)
    data = serialize(g)
    g2 = parse(data)
    assert [t.init.tolist() for t in g2.tensors if t.variable] == [t.init.tolist() for t in g.tensors if t.variable]
    assert serialize(g2) == data
    g2, sets, want = check_invocations(data, seed=1)
    # the first invocation reads the start value, the unplanned executor agrees
    assert np.array_equal(run_unplanned(g2, sets[0])[0], want[0][0].reshape(g2.tensors[g2.outputs[0]].shape))


def test_order_search_keeps_reads_before_the_assignment():
    """ASSIGN of an input right away, the READ late, behind a chain: the data edges allow running the ASSIGN
    first, the variable's order does not; the checker refuses such an order."""
    b = GraphBuilder("late_read", seed=4)
    x = b.input((1, 64), scale=0.02)
    h = b.fully_connected(b.fully_connected(x, 64), 64)
    y = b.delay(x)
    g = b.finish([b.add(h, b.fully_connected(y, 64))])
    read, assign = (op.index for op in g.operators if op.opcode in ("READ_VARIABLE", "ASSIGN_VARIABLE"))
    assert order_edges(g) == [(read, assign)]
    plan = plan_arena(g)
    assert plan.order.index(read) < plan.order.index(assign)
    order = [oi for oi in plan.order if oi != assign]
    bad = dataclasses.replace(plan, order=order[:order.index(read)] + [assign] + order[order.index(read):])
    assert any("same variable" in e for e in checker.problems(g, bad))


def test_variable_is_a_persistent_buffer_and_fusion_refuses_it():
    g = parse((DATA / "var_ring_int8.tflite").read_bytes())
    plan = plan_arena(g)
    pers = [b for b in plan.buffers if b.kind == "persistent"]
    assert sorted(t for b in pers for t in b.tensors) == g.variable_tensors()
    assert all((b.first_step, b.last_step) == (0, len(g.operators) - 1) for b in pers)
    with pytest.raises(Exception) as e:
        plan_fused(g, optimize="ram")
    assert "keeps state between invocations (ASSIGN_VARIABLE, READ_VARIABLE)" in str(e.value)


def _resource(i, name="h"):
    return Tensor(i, name, (), RESOURCE)


def test_bind_refusals_are_one_line():
    v = Tensor(1, "v", (1, 4), "int8")
    read = Operator(1, "READ_VARIABLE", (0,), (1,))
    handle = Operator(0, "VAR_HANDLE", (), (0,))
    with pytest.raises(ModelError, match="read but never assigned"):
        bind([_resource(0), v], [handle, read], {0: "v"}, {}, {})
    with pytest.raises(ModelError, match="not a variable handle"):
        bind([_resource(0), v, _resource(2)], [handle, Operator(1, "READ_VARIABLE", (2,), (1,))], {0: "v"}, {}, {})
    with pytest.raises(ModelError, match="runs after operator 1"):
        bind([_resource(0), v], [handle, read, Operator(2, "CALL_ONCE", (), ())], {0: "v"}, {2: 1}, {})
    with pytest.raises(ModelError, match="uses resource tensor 0"):
        bind([_resource(0), v], [handle, Operator(1, "ABS", (0,), (1,))], {0: "v"}, {}, {})


def test_reader_refuses_bad_init_subgraphs_in_one_line(monkeypatch):
    import tflite

    data = serialize(delay_model(False))
    orig = tflite.CallOnceOptionsAddInitSubgraphIndex
    for k, says in ((7, "names init subgraph 7, but the model has subgraphs 0..1"),
                    (0, "subgraph 0 is the model itself")):
        monkeypatch.setattr(tflite, "CallOnceOptionsAddInitSubgraphIndex", lambda b, _, k=k: orig(b, k))
        with pytest.raises(ModelError) as e:
            parse(serialize(delay_model(False)))
        assert says in str(e.value) and "\n" not in str(e.value)
    monkeypatch.setattr(tflite, "CallOnceOptionsAddInitSubgraphIndex", orig)
    # an init subgraph that computes: its ASSIGN_VARIABLE written as another operator
    from buildtool.model import writer

    real = writer._Writer._plain_op

    def plain(self, code, ins, outs, *a):
        if len(ins) == 2 and not outs and not a:  # the init subgraph's ASSIGN_VARIABLE -> a CALL_ONCE code
            code = 0
        return real(self, code, ins, outs, *a)

    monkeypatch.setattr(writer._Writer, "_plain_op", plain)
    with pytest.raises(ModelError) as e:
        parse(serialize(delay_model(False)))
    assert "init subgraph 1 runs CALL_ONCE (operator 1)" in str(e.value) and "\n" not in str(e.value)
    assert parse(data)  # the unpatched model reads


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_firmware_keeps_variables_between_invocations(board, tmp_path):
    models = [(n, (DATA / f"{n}.tflite").read_bytes()) for n in TF_MODELS] + \
        [("delay16", serialize(delay_model(True))), ("reset", serialize(reset_model()))]
    if board != "host":
        models = models[1:]  # the ring buffer (two variables), int16 accumulator and delay lines
    for name, data in models:
        g = parse(data)
        sets = random_inputs(g, np.random.default_rng(2), 4)
        want, _ = tflm_sequence(data, sets, 1)
        pipeline.build(g, board, tmp_path / name)
        got, _, _ = runner.run(board, tmp_path / name, sets, sequence=True, profile=False)
        assert [y.tolist() for y in got] == [w[0].reshape(y.shape).tolist() for y, w in zip(got, want)], name


def test_multi_model_firmware_keeps_each_models_variables(tmp_path, capsys, monkeypatch):
    """Two variable models in one joint arena (buildtool multi): each keeps its own state, the ring model's
    second run sees its first, byte-identical to TFLite Micro."""
    from buildtool import cli

    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")
    x1, x2 = np.arange(8, dtype=np.int8).reshape(1, 8), (np.arange(8, dtype=np.int8) * 3).reshape(1, 8)
    np.save(tmp_path / "x1.npy", x1)
    np.save(tmp_path / "x2.npy", x2)
    ring, acc = DATA / "var_ring_int8.tflite", DATA / "var_accumulator_int8.tflite"
    capsys.readouterr()
    assert cli.main(["multi", "--board", "host", "--build-dir", str(tmp_path / "b"), str(ring), str(acc),
                     "--input", str(tmp_path / "x1.npy"), "--input", str(tmp_path / "x2.npy")]) == 0
    runs = [line.split(": ")[1] for line in capsys.readouterr().out.splitlines() if line.startswith("run ")]
    want_ring, _ = tflm_sequence(ring.read_bytes(), [[x1], [x1]], 1)
    want_acc, _ = tflm_sequence(acc.read_bytes(), [[x2]], 1)
    text = [" ".join(str(v) for v in w[0].reshape(-1)) for w in (want_ring[0], want_acc[0], want_ring[1])]
    assert runs == text and text[0] != text[2]


def test_skeleton_keeps_start_values_and_gen_code_matches(tmp_path):
    """Build systems generate model.c from the weight-free skeleton: it keeps each variable's start value, so the
    C is the same as from the model (a lost start value would silently start from zeros)."""
    import json

    from buildtool.codegen import skeleton
    from buildtool.codegen.model_c import generate

    g = parse((DATA / "var_ring_int8.tflite").read_bytes())
    sk = skeleton.from_json(json.loads(json.dumps(skeleton.to_json(g))))
    assert [sk.tensors[v].init.tolist() for v in sk.variable_tensors()] == \
        [g.tensors[v].init.tolist() for v in g.variable_tensors()]
    plan = plan_arena(g)
    assert generate(sk, plan, "host")[0] == generate(g, plan, "host")[0]


def test_shared_name_is_read_as_a_c_string_as_tflm_does():
    """Issue 52: TFLite Micro reads a VAR_HANDLE's shared_name as a C string (c_str(), strcmp), whatever its
    stored length; a length of 0 over a NUL-terminated name names the same variable. Each string of
    var_ring_int8 spelling a variable's name (shared names and tensor names) in turn gets length 0: our
    outputs equal TFLite Micro's over six invocations, and those equal the original model's."""
    orig = (DATA / "var_ring_int8.tflite").read_bytes()
    zeroed = 0
    for name in (b"Variable", b"Variable_1"):
        at = 0
        while (at := orig.find(name + b"\0", at + 1)) > 0:
            if int.from_bytes(orig[at - 4:at], "little") == len(name):
                data = bytearray(orig)
                data[at - 4:at] = bytes(4)
                g, sets, want = check_invocations(bytes(data))
                base, _ = tflm_sequence(orig, sets, 1)
                assert all(np.array_equal(a[0], b[0]) for a, b in zip(want, base)), at
                assert len(g.variable_tensors()) == 2
                zeroed += 1
    assert zeroed >= 4
