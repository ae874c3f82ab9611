"""Control flow (IF, WHILE: model/control.py) against TFLite Micro, the models TensorFlow's converter wrote
(scripts/variable_models.py): each subgraph planned as its own arena in its operator's scratch buffer,
checked by the independent plan checker, run by the numpy executor and in host / Cortex-M4 firmware."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.errors import ModelError
from buildtool.firmware import runner
from buildtool.model.reader import blocker, parse
from buildtool.plan import ArenaPlan
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import Session, run_unplanned
from buildtool.plan.arena.planner import plan_arena
from buildtool.refops.control import run_subgraph
from test_stateful import tflm_sequence

DATA = Path(__file__).parent / "data"
IF_MODEL = DATA / "cf_if_int8.tflite"


def _inputs(n: int, seed: int = 0) -> list:
    """Random int8 inputs plus the extremes (the IF's sum > 0 false at -128 and 0, true at 127)."""
    rng = np.random.default_rng(seed)
    return [[rng.integers(-128, 128, (1, 8), dtype=np.int8)] for _ in range(n)] + \
        [[np.full((1, 8), v, np.int8)] for v in (-128, -1, 0, 1, 127)]


def _branches(g, sets: list) -> set:
    """Which way the IF went on each input set (its condition, from the main graph's GREATER)."""
    op = next(op for op in g.operators if op.opcode == "IF")
    s = dataclasses.replace(g, operators=g.operators[:op.index], outputs=[op.inputs[0]])
    return {bool(run_unplanned(s, x)[0].reshape(-1)[0]) for x in sets}


def test_if_reads_its_branches_and_plans_them_in_its_scratch():
    g = parse(IF_MODEL.read_bytes())
    op = g.operators[3]
    assert (op.opcode, op.options) == ("IF", {"then_subgraph": 2, "else_subgraph": 1})
    assert sorted(g.subgraphs) == [1, 2]
    assert [o.opcode for o in g.subgraph(1).operators] == ["QUANTIZE", "ABS", "SUB", "DEQUANTIZE"]
    assert [o.opcode for o in g.subgraph(2).operators] == ["QUANTIZE", "MUL", "ADD", "DEQUANTIZE"]
    plan = plan_arena(g)
    sb = plan.scratch[3]
    assert (sb.first_step, sb.last_step) == (plan.step_of()[3],) * 2  # live at the IF's step only
    assert sb.size == max(p.arena_bytes for p in plan.subplans.values()) == 48
    assert plan.arena_bytes == 128 and checker.problems(g, plan) == []
    back = ArenaPlan.from_json(json.loads(json.dumps(plan.to_json(g))))
    assert back == plan and back.to_json(g)["subgraphs"][0]["subgraph"] == 1


def test_if_executor_is_tflite_micros():
    data = IF_MODEL.read_bytes()
    g = parse(data)
    sets = _inputs(40)
    assert _branches(g, sets) == {False, True}  # both branches run
    want, _ = tflm_sequence(data, sets, 1)
    s = Session(g, plan_arena(g))
    for x, w in zip(sets, want):
        y = s.invoke(x)[0]
        assert y.tolist() == w[0].reshape(y.shape).tolist()
        assert y.tolist() == run_unplanned(g, x)[0].tolist()


def test_checker_catches_a_broken_subgraph_plan():
    """The checker verifies each subgraph's plan as a graph of its own and that it fits the scratch buffer."""
    g = parse(IF_MODEL.read_bytes())
    plan = plan_arena(g)
    small = dataclasses.replace(plan, scratch={3: dataclasses.replace(plan.scratch[3], size=32)})
    assert any("does not fit its scratch buffer" in e for e in checker.problems(g, small))
    sub = plan.subplans[1]
    t0, t1 = sorted(sub.tensors)[:2]  # the branch's input and its QUANTIZE output, live together
    moved = dataclasses.replace(sub, tensors=dict(sub.tensors))
    moved.tensors[t1] = dataclasses.replace(sub.tensors[t1], offset=sub.tensors[t0].offset,
                                            buffer=sub.tensors[t0].buffer)
    bad = dataclasses.replace(plan, subplans={**plan.subplans, 1: moved})
    assert any(e.startswith("subgraph 1: ") for e in checker.problems(g, bad))
    missing = dataclasses.replace(plan, subplans={2: plan.subplans[2]})
    assert any("runs subgraph 1, which has no plan" in e for e in checker.problems(g, missing))


@pytest.mark.parametrize("board", ["host", "cortex-m4", "cortex-m55", "riscv32"])
def test_if_firmware_is_tflite_micros(board, tmp_path):
    data = IF_MODEL.read_bytes()
    g = parse(data)
    sets = _inputs(6, 1)
    assert _branches(g, sets) == {False, True}
    want, _ = tflm_sequence(data, sets, 1)
    pipeline.build(g, board, tmp_path / "b")
    c = (tmp_path / "b" / "model.c").read_text()
    assert "static void bt_subgraph1(int8_t *sg)" in c and "static void bt_subgraph2(int8_t *sg)" in c
    got, _, _ = runner.run(board, tmp_path / "b", sets, sequence=True, profile=False)
    assert [y.tolist() for y in got] == [w[0].reshape(y.shape).tolist() for y, w in zip(got, want)]


@pytest.mark.parametrize("name", ["cf_if_int8", "cf_while_int8"])
def test_skeleton_keeps_the_subgraphs(name):
    """Build systems generate model.c from skeleton.json: the subgraphs come back, the same C."""
    from buildtool.codegen import skeleton
    from buildtool.codegen.model_c import generate

    g = parse((DATA / f"{name}.tflite").read_bytes())
    sk = skeleton.from_json(json.loads(json.dumps(skeleton.to_json(g))))
    assert sk.structure_hash() == g.structure_hash()
    plan = plan_arena(g)
    assert generate(sk, plan, "host")[0] == generate(g, plan, "host")[0]


def test_subgraph_problems_are_refused_in_one_line():
    g = parse(IF_MODEL.read_bytes())
    assert run_subgraph(g, 1, [np.full((1, 8), -0.5, np.float32)])[0].shape == (1, 8)
    bad = g.copy()
    bad.subgraphs[1] = dataclasses.replace(bad.subgraphs[1], outputs=[bad.subgraphs[1].operators[2].outputs[0]])
    msg = blocker(bad)
    assert msg == ("operator 3 (IF): output 0 is float32 [1, 8] but output of subgraph 1 output 0 is int8 [1, 8]; "
                   "TFLite Micro copies the bytes")
    assert bad.structure_hash() != g.structure_hash()  # plan caches tell the subgraphs apart


def test_fusion_refuses_control_flow_in_one_line(capsys, monkeypatch):
    from buildtool import cli

    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")
    capsys.readouterr()
    assert cli.main(["plan", str(IF_MODEL), "--optimize", "ram"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has control flow (IF); splitting and fusion cannot" in err[0]
    assert err[0].startswith(f"buildtool: error: {IF_MODEL}: the model has control flow"), err[0]  # issue 52


def test_the_writer_writes_each_subgraph():
    """serialize writes the model and each subgraph with tensors of its own: the file reads back the same and
    TFLite Micro runs it as the converter's."""
    from buildtool.model.writer import serialize

    data = IF_MODEL.read_bytes()
    g = parse(data)
    out = serialize(g)
    back = parse(out)
    assert back.structure_hash() == g.structure_hash() and serialize(back) == out
    sets = _inputs(10, 2)
    assert [w[0].tolist() for w in tflm_sequence(out, sets, 1)[0]] == \
        [w[0].tolist() for w in tflm_sequence(data, sets, 1)[0]]



WHILE_MODEL = DATA / "cf_while_int8.tflite"


def test_while_reads_cond_and_body_and_plans_them_in_one_scratch():
    g = parse(WHILE_MODEL.read_bytes())
    op = g.operators[1]
    assert (op.opcode, op.options) == ("WHILE", {"cond_subgraph": 1, "body_subgraph": 2})
    assert [o.opcode for o in g.subgraph(1).operators] == ["LESS"]
    assert [o.opcode for o in g.subgraph(2).operators] == ["QUANTIZE", "ADD", "MUL", "ADD", "DEQUANTIZE"]
    assert [g.tensors[o.outputs[0]].dtype for o in g.subgraph(2).operators[1:2]] == ["int32"]  # the counter
    plan = plan_arena(g)
    assert plan.scratch[1].size == max(p.arena_bytes for p in plan.subplans.values()) == 64
    assert plan.arena_bytes == 144 and checker.problems(g, plan) == []
    assert ArenaPlan.from_json(json.loads(json.dumps(plan.to_json(g)))) == plan


def test_while_executor_is_tflite_micros():
    """Three times y = y / 2 + 0.1 (TensorFlow's loop: an int32 counter, ADD and LESS in int32)."""
    data = WHILE_MODEL.read_bytes()
    g = parse(data)
    sets = _inputs(40, 3)
    want, _ = tflm_sequence(data, sets, 1)
    s = Session(g, plan_arena(g))
    for x, w in zip(sets, want):
        y = s.invoke(x)[0]
        assert y.tolist() == w[0].reshape(y.shape).tolist() == run_unplanned(g, x)[0].tolist()


@pytest.mark.parametrize("board", ["host", "cortex-m4", "cortex-m55", "riscv32"])
def test_while_firmware_is_tflite_micros(board, tmp_path):
    data = WHILE_MODEL.read_bytes()
    g = parse(data)
    sets = _inputs(6, 4)
    want, _ = tflm_sequence(data, sets, 1)
    pipeline.build(g, board, tmp_path / "b")
    c = (tmp_path / "b" / "model.c").read_text()
    assert "bt_add_s32(" in c and "bt_compare_s32(" in c and "for (uint32_t it = 0;; it++)" in c and "BT_MAX_ITERATIONS" in c
    got, _, _ = runner.run(board, tmp_path / "b", sets, sequence=True, profile=False)
    assert [y.tolist() for y in got] == [w[0].reshape(y.shape).tolist() for y, w in zip(got, want)]


def test_random_while_models_in_firmware(tmp_path):
    """Random counted loops (0 to 4 iterations, a random int8 body, the counter an output too) in host firmware,
    byte-identical to TFLite Micro."""
    from opgen_control import gen_while

    from buildtool.model.writer import serialize

    rng = np.random.default_rng(5)
    counts = set()
    for k in range(4):
        g = gen_while(rng)
        data = serialize(g)
        xs = [rng.integers(-128, 128, g.tensors[g.inputs[0]].shape, dtype=np.int8)]
        want, _ = tflm_sequence(data, [xs], 2)
        pipeline.build(g, "host", tmp_path / str(k))
        got, _, _ = runner.run("host", tmp_path / str(k), [xs], sequence=True, profile=False)
        assert [np.asarray(y).reshape(-1).tolist() for y in got[0]] == [w.reshape(-1).tolist() for w in want[0]]
        counts.add(int(want[0][1].reshape(-1)[0]))
    assert len(counts) > 1  # loops of different lengths


def test_int32_add_and_less_outside_loops(tmp_path):
    """int32 ADD (wrapping; TFLite Micro applies no fused activation, RELU included) and LESS on the values, as
    TFLite Micro's int32 paths, in a model of their own (host firmware too); splitting and fusion (int8/int16
    tile code) refuse the int32 ADD in one line."""
    from buildtool.errors import PlanError
    from buildtool.model.ir import Graph, Operator, Tensor
    from buildtool.model.writer import serialize
    from buildtool.plan.fusion.planner import plan_fused
    from test_executor import tflm_run

    big = np.array([2**31 - 5, -3, 7, -(2**31)], np.int32)
    t = [Tensor(0, "x", (4,), "int32"), Tensor(1, "k", (4,), "int32", data=big), Tensor(2, "s", (4,), "int32"),
         Tensor(3, "r", (4,), "int32"), Tensor(4, "lt", (4,), "bool")]
    ops = [Operator(0, "ADD", (0, 1), (2,), {"activation": "NONE"}),
           Operator(1, "ADD", (2, 0), (3,), {"activation": "RELU"}), Operator(2, "LESS", (3, 0), (4,), {})]
    g = Graph(t, ops, [0], [2, 3, 4], name="int32_ops")
    x = [np.array([10, -5, 2**31 - 1, -1], np.int32)]
    want = tflm_run(serialize(g), x, 3)
    got = Session(g, plan_arena(g)).invoke(x)
    assert [y.tolist() for y in got] == [w.reshape(-1).tolist() for w in want]
    assert got[0].tolist() == [-2147483643, -8, -2147483642, 2147483647]  # wrapped
    assert got[1].tolist()[:2] == [-2147483633, -13]  # RELU not applied
    pipeline.build(g, "host", tmp_path)
    fw, _, _ = runner.run("host", tmp_path, [x], sequence=True, profile=False)
    assert [np.asarray(y).reshape(-1).tolist() for y in fw[0]] == [y.tolist() for y in got]
    with pytest.raises(PlanError, match="adds int32 values"):
        plan_fused(g, optimize="ram")


def _nested_loop():
    """(y, n) = WHILE(0, x) over three iterations whose body runs an IF (ABS on the first two, x + x after): a
    subgraph running another, each with tensors of its own (subgraphs 1 cond, 2 body, 3 then, 4 else)."""
    from buildtool.model.ir import Graph, Operator, Quant, Tensor

    tensors = []

    def tensor(name, shape, dtype="int8", q=None, data=None):
        quant = None if q is None else Quant(np.array([q[0]], np.float32), np.array([q[1]], np.int64))
        tensors.append(Tensor(len(tensors), name, tuple(shape), dtype, quant,
                              None if data is None else np.array(data, dtype=dtype).reshape(shape)))
        return len(tensors) - 1

    s, q = (1, 8), (0.05, 3)
    x, i0 = tensor("x", s, q=q), tensor("i0", (), "int32", data=0)
    yi, yx = tensor("n", (), "int32"), tensor("y", s, q=q)
    ci, cx, lim, cb = (tensor("ci", (), "int32"), tensor("cx", s, q=q), tensor("lim", (), "int32", data=3),
                       tensor("cb", (), "bool"))
    bi, bx, one, two = (tensor("bi", (), "int32"), tensor("bx", s, q=q), tensor("one", (), "int32", data=1),
                        tensor("two", (), "int32", data=2))
    bi2, sel, bx2 = tensor("bi2", (), "int32"), tensor("sel", (), "bool"), tensor("bx2", s, q=q)
    tx, ty, ex, ey = tensor("tx", s, q=q), tensor("ty", s, q=(0.05, -128)), tensor("ex", s, q=q), tensor("ey", s, q=q)
    subs = {1: Graph(tensors, [Operator(0, "LESS", (ci, lim), (cb,), {})], [ci, cx], [cb]),
            2: Graph(tensors, [Operator(0, "ADD", (bi, one), (bi2,), {"activation": "NONE"}),
                               Operator(1, "LESS", (bi, two), (sel,), {}),
                               Operator(2, "IF", (sel, bx), (bx2,), {"then_subgraph": 3, "else_subgraph": 4})],
                     [bi, bx], [bi2, bx2]),
            3: Graph(tensors, [Operator(0, "ABS", (tx,), (ty,), {})], [tx], [ty]),
            4: Graph(tensors, [Operator(0, "ADD", (ex, ex), (ey,), {"activation": "NONE"})], [ex], [ey])}
    op = Operator(0, "WHILE", (i0, x), (yi, yx), {"cond_subgraph": 1, "body_subgraph": 2})
    return Graph(tensors, [op], [x], [yx, yi], name="nested", subgraphs=subs)


def test_nested_control_flow_and_a_subgraph_running_itself(tmp_path):
    """An IF inside a WHILE's body: written, read back, planned (the IF's scratch inside the body's arena,
    inside the WHILE's scratch), checked and run byte-identical to TFLite Micro, in host firmware too. A subgraph
    that runs itself is refused in one line."""
    from buildtool.model.ir import Operator, Tensor
    from buildtool.model.writer import serialize

    data = serialize(_nested_loop())
    g = parse(data)
    assert sorted(g.subgraphs) == [1, 2, 3, 4]
    plan = plan_arena(g)
    assert checker.problems(g, plan) == [] and sorted(plan.subplans[2].subplans) == [3, 4]
    sets = _inputs(8, 6)
    want, _ = tflm_sequence(data, sets, 2)
    s = Session(g, plan)
    for x, w in zip(sets, want):
        assert [y.reshape(-1).tolist() for y in s.invoke(x)] == [v.reshape(-1).tolist() for v in w]
    assert int(want[0][1].reshape(-1)[0]) == 3
    pipeline.build(g, "host", tmp_path)
    got, _, _ = runner.run("host", tmp_path, sets, sequence=True, profile=False)
    assert [[np.asarray(y).reshape(-1).tolist() for y in ys] for ys in got] == \
        [[v.reshape(-1).tolist() for v in w] for w in want]
    bad = g.copy()  # subgraph 3 (a branch) runs an IF whose then branch is subgraph 3 itself
    t = len(bad.tensors)
    out3 = bad.tensors[bad.subgraphs[3].outputs[0]]
    bad.tensors += [Tensor(t, "c", (), "bool"), Tensor(t + 1, "z", tuple(out3.shape), "int8", out3.quant)]
    b3 = bad.subgraphs[3]
    b3.operators.append(Operator(1, "IF", (t, b3.inputs[0]), (t + 1,), {"then_subgraph": 3, "else_subgraph": 4}))
    b3.inputs.append(t)
    with pytest.raises(ModelError, match=r"operator 1 \(IF\) runs subgraph 3 inside itself; recursive subgraphs "
                                         r"are not supported"):
        parse(serialize(bad))
