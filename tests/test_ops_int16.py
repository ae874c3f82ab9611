"""Issue 54 item 6: `buildtool ops` says per operator whether it runs int16 (16x8) and, where it does not, whether
TFLite Micro refuses it in int16 too (a fair refusal) or runs it (a gap here). Each claim of model.ops.INT16_NOT_RUN
is run: the operator's one-operator model, made 16x8 past our check, in TFLite Micro."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need

from buildtool import pipeline
from buildtool.firmware import runner
from buildtool.errors import ModelError
from buildtool.model import ops
from buildtool.model.ops import INT16_NOT_RUN, TFLM_REFUSES_INT16, check_graph, int16_support, supported_table
from buildtool.model.writer import serialize
from buildtool.zoo.builder import GraphBuilder, as_int16x8

S = (1, 4, 4, 8)
CASES = {
    "HARD_SWISH": lambda b, x: b.hard_swish(x),
    "RESIZE_BILINEAR": lambda b, x: b.resize_bilinear(x, (8, 8)),
    "DEPTH_TO_SPACE": lambda b, x: b.depth_to_space(x, 2),
    "SPACE_TO_DEPTH": lambda b, x: b.space_to_depth(x, 2),
    **{op: (lambda b, x, op=op: b.compare(op, x, b.input(S, 0.01, 0, name="y")))
       for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")},
    "REDUCE_MAX": lambda b, x: b.reduce("REDUCE_MAX", x, axes=(1, 2)),
    "REDUCE_MIN": lambda b, x: b.reduce("REDUCE_MIN", x, axes=(1, 2)),
    "ADD_N": lambda b, x: b.add_n([x, x]),
    "ZEROS_LIKE": lambda b, x: b.zeros_like(x),
    "ARG_MAX": lambda b, x: b.argminmax("ARG_MAX", x, axis=3),
    "ARG_MIN": lambda b, x: b.argminmax("ARG_MIN", x, axis=3),
    "GATHER": lambda b, x: b.gather(x, [0, 2], axis=1),
    "GATHER_ND": lambda b, x: b.gather_nd(x, [[0, 1], [0, 0]]),
    "SPACE_TO_BATCH_ND": lambda b, x: b.space_to_batch(x, [2, 2], [[0, 0], [0, 0]]),
    "BATCH_TO_SPACE_ND": lambda b, x: b.batch_to_space(x, [1, 1], [[0, 0], [0, 0]]),
    "MIRROR_PAD": lambda b, x: b.mirror_pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]),
    "ELU": lambda b, x: b.elu(x),
    "L2_NORMALIZATION": lambda b, x: b.l2_normalization(x),
    "CUMSUM": lambda b, x: b.cumsum(x, axis=2),
    "LOG_SOFTMAX": lambda b, x: b.log_softmax(x),
    "DIV": lambda b, x: b.div(x, b.abs(x)),
    "FILL": lambda b, x: b.fill((1, 4), b.input((), 0.1, 0, name="value")),
    "SVDF": lambda b, x: b.svdf(b.reshape(x, (1, 128)), 4),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": lambda b, x: b.lstm(b.reshape(x, (1, 16, 8)), 4),
}


def int16_model(opcode, monkeypatch):
    """opcode's one-operator model made 16x8 by zoo.builder.as_int16x8 without our check (which refuses it)."""
    b = GraphBuilder(opcode.lower())
    CASES[opcode](b, b.input(S))
    g = b.finish()
    with monkeypatch.context() as m:
        m.setattr(importlib.import_module("buildtool.zoo.builder").ops, "check_graph", lambda g: None)
        g16 = as_int16x8(g)
    assert opcode in {op.opcode for op in g16.operators}
    return g16


def test_every_operator_without_int16_says_why():
    rows = {r["op"]: r["int16"] for r in supported_table()}
    assert {op for op, v in rows.items() if v.startswith("no: ")} == set(INT16_NOT_RUN) == set(CASES) | {"GELU"}
    assert rows["CONV_2D"] == "yes" and rows["RESIZE_BILINEAR"] == f"no: {TFLM_REFUSES_INT16}"
    assert {op for op, v in rows.items() if v == "n/a"} == {  # bool, float, int32 (ids) or signal values
        op for op in rows if not {"int8", "int16"} & set(ops.activation_types(op)[0] + ops.activation_types(op)[1])
        or op == "EMBEDDING_LOOKUP"}  # int32 ids -> its int8 table's rows


@pytest.mark.parametrize("opcode", sorted(CASES))
def test_the_claim_holds_in_tflite_micro(opcode, monkeypatch):
    g = int16_model(opcode, monkeypatch)
    xs = [np.random.default_rng(0).integers(-3000, 3000, size=g.tensors[i].shape).astype(g.tensors[i].dtype)
          for i in g.inputs]
    assert any(g.tensors[i].dtype == "int16" for i in g.inputs)
    fair = INT16_NOT_RUN[opcode] == TFLM_REFUSES_INT16
    if fair:
        with pytest.raises(RuntimeError):
            tflm_run(serialize(g), xs)
    elif opcode == "GREATER":  # runs, but gives neither the values' comparison nor the codes' (in a fresh process
        # all false: it leaves its output as the arena holds it)
        xs = [np.random.default_rng(s).integers(-3000, 3000, size=S).astype(np.int16) for s in (1, 2)]
        values = xs[0] * float(g.tensors[g.inputs[0]].scale) > xs[1] * float(g.tensors[g.inputs[1]].scale)
        got = tflm_run(serialize(g), xs)[0].reshape(S)
        assert not np.array_equal(got, values) and not np.array_equal(got, xs[0] > xs[1])
    else:
        assert tflm_run(serialize(g), xs)[0].size
    with pytest.raises(ModelError) as e:  # and our check refuses it in one line, saying which
        check_graph(g)
    said = ("TFLite Micro runs" if fair else "buildtool runs") + f" {opcode} on int8 only"
    if opcode in ("SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"):  # their own checks (model/stateful.py)
        said = "is int16; it must be int8"
    assert said in str(e.value) and "\n" not in str(e.value)
    assert int16_support(opcode).startswith("no: ")


@pytest.mark.slow
@pytest.mark.parametrize("board", ["executor", "host", "cortex-m4", "riscv32"])
def test_int16_rsqrt_is_tflite_micros(board, tmp_path):
    """RSQRT 16x8 (bt_rsqrt_s16: TFLite's inverse square root per value, reference/elementwise.c), on every
    non-negative code of its input (TFLite Micro fails below the zero point) and a random input."""
    b = GraphBuilder("rsqrt16")
    b.rsqrt(b.abs(b.input((1, 256, 16, 16))))
    g = as_int16x8(b.finish())
    op = g.operators[-1]
    assert g.tensors[op.inputs[0]].dtype == g.tensors[op.outputs[0]].dtype == "int16"
    every = np.arange(65536, dtype=np.int64).astype(np.int16).reshape(1, 256, 16, 16)
    xs = [[every], [np.random.default_rng(3).integers(-32768, 32768, size=(1, 256, 16, 16)).astype(np.int16)]]
    data = serialize(g)
    if board == "executor":
        from buildtool.plan.arena.execute import run
        from buildtool.plan.arena.planner import plan_arena
        got = [run(g, plan_arena(g), x)[0] for x in xs]
    else:
        need(board)
        pipeline.build(g, board, tmp_path)
        got = [runner.run(board, tmp_path, x)[0][0] for x in xs]
    for x, y in zip(xs, got):
        want = tflm_run(data, x)[0]
        assert len(np.unique(want)) > 1000 and np.array_equal(np.asarray(y).reshape(-1), want.reshape(-1))
