"""Issue 33 item 2: a keyword-spotting transformer converted to int8 by TensorFlow 2.21
(tests/data/kws_transformer.tflite, made by `python3 scripts/attention_models.py DIR`: FULLY_CONNECTED,
BATCH_MATMUL, TRANSPOSE, SOFTMAX, each LayerNormalization as MEAN, DEQUANTIZE -> float32 NEG -> QUANTIZE,
SQUARED_DIFFERENCE, MEAN, ADD, RSQRT, MUL, and the GELU builtin) plans and runs.

No one interpreter is its oracle: TFLite Micro does not register GELU, and TensorFlow Lite's reference kernels
are not TFLite Micro's (its FULLY_CONNECTED differs by one code on some rows of this model). So every layer is
checked on the model's own intermediate values against its oracle (a one-operator model of it: TFLite Micro, GELU
on TFLite's reference kernel), the host firmware against the numpy executor byte for byte, and the whole model
against TFLite's reference interpreter within one output code."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import tflite_ref_run, tflm_run
from test_firmware import need

from buildtool import pipeline
from buildtool.firmware import runner
from buildtool.model import ops
from buildtool.model.ir import Graph
from buildtool.model.reader import load
from buildtool.model.writer import serialize
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run, run_unplanned
from buildtool.plan.arena.planner import plan_arena

MODEL = Path(__file__).parent / "data" / "kws_transformer.tflite"


def one_op_graph(g: Graph, op) -> Graph:
    """op alone: its tensors (constants kept), its activation inputs as the graph's inputs."""
    used = list(dict.fromkeys([i for i in op.inputs if i >= 0] + list(op.outputs)))
    new = {old: k for k, old in enumerate(used)}
    tensors = [dataclasses.replace(g.tensors[i], index=new[i]) for i in used]
    one = dataclasses.replace(op, index=0, inputs=tuple(new[i] if i >= 0 else -1 for i in op.inputs),
                              outputs=tuple(new[o] for o in op.outputs), options=dict(op.options))
    inputs = list(dict.fromkeys(new[i] for i in op.inputs if i >= 0 and not g.tensors[i].is_const))
    return Graph(tensors, [one], inputs, [new[o] for o in op.outputs], name=f"op{op.index}")


def inputs_of(seed: int, g: Graph) -> list:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=g.tensors[i].shape, dtype=np.int8) for i in g.inputs]


def test_kws_transformer_every_layer_matches_its_oracle():
    g = load(str(MODEL))
    ops.check_graph(g)
    assert {"GELU", "NEG", "BATCH_MATMUL", "RSQRT", "SQUARED_DIFFERENCE"} <= {op.opcode for op in g.operators}
    every = [o for op in g.operators for o in op.outputs]
    values = dict(zip(every, run_unplanned(dataclasses.replace(g, outputs=every), inputs_of(0, g))))
    values.update(zip(g.inputs, inputs_of(0, g)))
    for op in g.operators:
        one = one_op_graph(g, op)
        xs = [values[i] for i in dict.fromkeys(i for i in op.inputs if i >= 0 and not g.tensors[i].is_const)]
        want = tflm_run(serialize(one), xs, len(op.outputs))  # GELU: TFLite's reference kernel
        for o, w in zip(op.outputs, want):
            assert values[o].dtype == w.dtype and np.array_equal(values[o].reshape(-1), w.reshape(-1)), \
                (op.index, op.opcode)


@pytest.mark.parametrize("board", ["host"])
def test_kws_transformer_on_host_firmware(board, tmp_path):
    need(board)
    g = load(str(MODEL))
    plan = plan_arena(g)
    assert checker.problems(g, plan) == []
    pipeline.build(g, board, tmp_path, plan=plan)
    data = MODEL.read_bytes()
    for seed in (0, 1, 2):
        xs = inputs_of(seed, g)
        y = runner.run(board, tmp_path, xs)[0]
        ours = run(g, plan, xs)[0]
        assert np.array_equal(np.asarray(y).reshape(-1), ours.reshape(-1)), seed
        ref = tflite_ref_run(data, xs)[0]
        assert np.abs(ours.reshape(-1).astype(int) - ref.reshape(-1).astype(int)).max() <= 1, seed
