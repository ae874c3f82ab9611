"""Issue 33 item 2: two small attention models converted to int8 by TensorFlow 2.21 (made by
`python3 scripts/attention_models.py DIR`): tests/data/kws_transformer.tflite (a keyword-spotting transformer)
and tests/data/tiny_vit.tflite (a tiny ViT): FULLY_CONNECTED, BATCH_MATMUL, TRANSPOSE, SOFTMAX, each
LayerNormalization as MEAN, DEQUANTIZE -> float32 NEG -> QUANTIZE, SQUARED_DIFFERENCE, MEAN, ADD, RSQRT, MUL,
and the GELU builtin (the ViT also a CONV_2D patch embedding).

TFLite Micro does not register GELU, so no one interpreter runs either model. What is compared how:
- every operator, on the model's own intermediate values, against a one-operator model of it on TFLite Micro
  (GELU: on TensorFlow Lite's reference kernel, its only oracle);
- the whole model against TFLite Micro cut at its GELUs: each GELU-free stretch of the graph runs as one model
  in TFLite Micro's interpreter, each GELU in TFLite's reference kernel, each fed the oracle's own values;
  every tensor passed across a cut and the output equal the numpy executor's byte for byte;
- the firmware of one board of every kernel set (host, cortex-m4, cortex-m55 in QEMU's mps3-an547, riscv32 in
  QEMU, xcore: its kernel set on the VPU C model, natively) byte-identical to the numpy executor; nucleo-l4r5zi
  (a real part) built and linked only;
- the whole model against TensorFlow Lite's reference interpreter (BUILTIN_REF) within one output code: its
  FULLY_CONNECTED rounds differently from TFLite Micro's on some rows;
- the arena: ours against TFLite Micro's planner on the same graph with each GELU replaced by a same-shape int8
  TANH (benchmarks/attention.py, docs/attention.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import load_file, tflite_ref_run, tflm_run
from test_firmware import need

from buildtool import pipeline
from buildtool.firmware import runner
from buildtool.model import ops
from buildtool.model.ir import Graph, sub_graph
from buildtool.model.reader import load
from buildtool.model.writer import serialize
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run, run_unplanned
from buildtool.plan.arena.planner import plan_arena

DATA = Path(__file__).parent / "data"
MODELS = ["kws_transformer", "tiny_vit"]
# one board of every kernel set (host, cortex-m, cortex-m55 Helium, riscv, xcore); nucleo-l4r5zi: link only
BOARDS = ["host", "cortex-m4", "cortex-m55", "riscv32", "xcore"]
# (our arena, TFLite Micro's arena head with GELU -> TANH): docs/attention.md
ARENA = {"kws_transformer": (17360, 20496), "tiny_vit": (30720, 30720)}


def inputs_of(seed: int, g: Graph) -> list:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=g.tensors[i].shape, dtype=np.int8) for i in g.inputs]


def all_values(g: Graph, xs: list) -> dict:
    every = [o for op in g.operators for o in op.outputs]
    values = dict(zip(every, run_unplanned(dataclasses.replace(g, outputs=every), xs)))
    values.update(zip(g.inputs, xs))
    return values


@pytest.mark.parametrize("name", MODELS)
def test_every_layer_matches_its_oracle(name):
    g = load(str(DATA / f"{name}.tflite"))
    ops.check_graph(g)
    assert {"GELU", "NEG", "BATCH_MATMUL", "RSQRT", "SQUARED_DIFFERENCE", "SOFTMAX", "MEAN"} <= \
        {op.opcode for op in g.operators}
    values = all_values(g, inputs_of(0, g))
    for op in g.operators:
        one, ins, outs = sub_graph(g, [op], f"op{op.index}")
        want = tflm_run(serialize(one), [values[i] for i in ins], len(outs))  # GELU: TFLite's reference kernel
        for o, w in zip(outs, want):
            assert values[o].dtype == w.dtype and np.array_equal(values[o].reshape(-1), w.reshape(-1)), \
                (op.index, op.opcode)


@pytest.mark.parametrize("name", MODELS)
def test_whole_model_equals_tflm_cut_at_its_gelus(name):
    """The oracle runs on its own values: TFLite Micro's interpreter on each GELU-free stretch, TFLite's
    reference GELU between them; every tensor crossing a cut and the output equal the executor's."""
    g = load(str(DATA / f"{name}.tflite"))
    stretches, cur = [], []
    for op in g.operators:
        if op.opcode == "GELU":
            stretches += [cur, [op]] if cur else [[op]]
            cur = []
        else:
            cur.append(op)
    stretches += [cur] if cur else []
    assert sum(s[0].opcode == "GELU" for s in stretches) == 2 and len(stretches) == 5
    for seed in (0, 1):
        xs = inputs_of(seed, g)
        ours = all_values(g, xs)
        oracle = dict(zip(g.inputs, xs))
        for k, chosen in enumerate(stretches):
            sub, ins, outs = sub_graph(g, chosen, f"stretch{k}")
            data = serialize(sub)
            runs = tflite_ref_run if chosen[0].opcode == "GELU" else tflm_run
            if runs is tflm_run:
                assert "GELU" not in {op.opcode for op in sub.operators}
            oracle.update(zip(outs, runs(data, [oracle[i] for i in ins], len(outs))))
            for o in outs:
                assert np.array_equal(ours[o].reshape(-1), np.asarray(oracle[o]).reshape(-1)), (seed, k, o)
        assert np.array_equal(ours[g.outputs[0]], np.asarray(oracle[g.outputs[0]]).reshape(ours[g.outputs[0]].shape))


@pytest.mark.parametrize("name", MODELS)
def test_firmware_on_every_kernel_set(name, tmp_path):
    """One firmware build per board; three inputs each, byte-identical to the numpy executor (which the two
    tests above tie to the oracle); the whole model within one code of TFLite's reference interpreter."""
    path = DATA / f"{name}.tflite"
    g = load(str(path))
    plan = plan_arena(g)
    assert checker.problems(g, plan) == []
    assert plan.arena_bytes == ARENA[name][0]
    seeds = (0, 1, 2)
    want = {s: run(g, plan, inputs_of(s, g))[0] for s in seeds}
    for s in seeds:
        ref = tflite_ref_run(path.read_bytes(), inputs_of(s, g))[0]
        assert np.abs(want[s].reshape(-1).astype(int) - ref.reshape(-1).astype(int)).max() <= 1, s
    for board in BOARDS:
        need(board)
        out = tmp_path / board
        pipeline.build(g, board, out, plan=plan)
        for s in seeds:
            y = runner.run(board, out, inputs_of(s, g))[0]
            assert np.array_equal(np.asarray(y).reshape(-1), want[s].reshape(-1)), (board, s)
    need("nucleo-l4r5zi")  # a real part: built and linked only
    pipeline.build(g, "nucleo-l4r5zi", tmp_path / "nucleo", plan=plan)
    assert (tmp_path / "nucleo" / "firmware.elf").stat().st_size > 0


def _bench():
    return load_file("bench_attention", Path(__file__).resolve().parents[1] / "benchmarks" / "attention.py")


@pytest.mark.parametrize("name", MODELS)
def test_arena_next_to_tflm(name):
    """docs/attention.md's figures: TFLite Micro's planner on the graph with each GELU a same-shape TANH."""
    g = load(str(DATA / f"{name}.tflite"))
    bench = _bench()
    stand_in = bench.gelu_as_tanh(g)
    assert "GELU" not in {op.opcode for op in stand_in.operators}
    assert [t.shape for t in stand_in.tensors] == [t.shape for t in g.tensors]
    ours, tflm = ARENA[name]
    assert plan_arena(g).arena_bytes == ours
    assert bench.tflm_arena(serialize(stand_in)) == tflm
    assert ours <= tflm
