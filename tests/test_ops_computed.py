"""Issue 33 item 1, the operators left: CAST to int8/int16 (from int8, int16, int32, float32, bool), GATHER and
GATHER_ND with computed (non-constant) indices, FILL with a computed value. Each bit-exact with TFLite Micro in the
numpy executor and in host and Cortex-M4 firmware (test_executor.py and test_ops_extra.py run their random one-op
models too, opgen_extra.py); here the edges: float conversions past the range and non-finite, indices that TFLite
Micro refuses at invoke (our firmware's model_invoke fails there too, the numpy executor raises one line), CAST in
place, and a model TensorFlow converted (GATHER, GATHER_ND and FILL on computed inputs) on every kernel set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need
from test_ops_extra import check_firmware, inplace_plan

from buildtool import pipeline
from buildtool.errors import ModelError
from buildtool.firmware.toolchain import FirmwareError
from buildtool.firmware import runner
from buildtool.model.reader import load
from buildtool.model.writer import serialize
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder

BOARDS = ["host", "cortex-m4"]
DATA = Path(__file__).parent / "data"
EDGES = np.array([[np.nan, np.inf, -np.inf, 1e10, -1e10, 2.5e9, 127.99, -128.99, -129.0, 0.99, -0.99, 1e-40,
                   32767.9, 32768.0, -32769.5, 40000.0, 2147483520.0, -2147483648.0, -0.5, 300.25]], np.float32)


def cast_edges_model():
    b = GraphBuilder("cast_edges")
    x = b.input(EDGES.shape, dtype="float32")
    return b.finish([b.cast(x, t) for t in ("int8", "int16", "int32")])


def same(ys, want):
    assert len(ys) == len(want)
    for y, w in zip(ys, want):
        y, w = np.asarray(y), np.asarray(w)
        assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1)), (y.reshape(-1), w.reshape(-1))


@pytest.mark.parametrize("board", BOARDS)
def test_cast_from_float_past_the_range_matches_tflm(board, tmp_path):
    """NaN 0, truncation toward zero, saturation at the output type's bounds (infinities too), on x86 (host)
    and on the Cortex-M4 (whose float conversion instructions saturate differently from x86's)."""
    need(board)
    g = cast_edges_model()
    want = tflm_run(serialize(g), [EDGES], 3)
    assert want[0].reshape(-1)[:6].tolist() == [0, 127, -128, 127, -128, 127]
    p = plan_arena(g)
    same(run(g, p, [EDGES]), want)
    pipeline.build(g, board, tmp_path, plan=p)
    same(runner.run(board, tmp_path, [EDGES])[0], want)


def gather_model():
    """GATHER along axis 1 and GATHER_ND over the first two dimensions, both by int32 model inputs."""
    b = GraphBuilder("gather_computed")
    x = b.input((1, 5, 3), 0.1, 3, name="x")
    p = b.input((4, 5, 3), 0.2, -7, name="params")
    gi = b.input((2, 2), dtype="int32", name="gather_indices")
    ni = b.input((2, 2), dtype="int32", name="nd_indices")
    return b.finish([b.gather_computed(x, gi, 1), b.gather_nd_computed(p, ni)])


GATHER_OK = [[[0, 4], [2, 2]], [[4, 3], [0, 1]]]
ND_OK = [[[0, 1], [3, 4]], [[0, 5], [1, 7]], [[1, -1], [3, 0]]]  # a row inside the params: TFLM takes it
GATHER_BAD = [[[0, 5], [1, 1]], [[-1, 0], [0, 0]]]
ND_BAD = [[[3, 5], [0, 0]], [[4, 0], [0, 0]], [[0, -1], [0, 0]]]  # a row outside: TFLM fails the invocation


def gather_inputs(rng, gi, ni):
    return [rng.integers(-128, 128, size=(1, 5, 3), dtype=np.int8), rng.integers(-128, 128, size=(4, 5, 3),
            dtype=np.int8), np.array(gi, np.int32), np.array(ni, np.int32)]


@pytest.mark.parametrize("board", BOARDS)
def test_gather_by_computed_indices_matches_tflm_and_fails_where_it_fails(board, tmp_path):
    """Indices inside: byte-identical to TFLite Micro (GATHER_ND's row checked as TFLM checks it, so an index past
    its own dimension passes while the row stays inside). Outside: TFLite Micro fails the invocation, the numpy
    executor raises one line and the firmware's model_invoke fails (the harness exits 4)."""
    need(board)
    g = gather_model()
    data = serialize(g)
    p = plan_arena(g)
    assert checker.problems(g, p) == []
    pipeline.build(g, board, tmp_path, plan=p)
    rng = np.random.default_rng(5)
    for gi, ni in [(GATHER_OK[0], n) for n in ND_OK] + [(GATHER_OK[1], ND_OK[0])]:
        xs = gather_inputs(rng, gi, ni)
        want = tflm_run(data, xs, 2)
        same(run(g, p, xs), want)
        same(runner.run(board, tmp_path, xs)[0], want)
    for gi, ni in [(b, ND_OK[0]) for b in GATHER_BAD] + [(GATHER_OK[0], b) for b in ND_BAD]:
        xs = gather_inputs(rng, gi, ni)
        with pytest.raises(RuntimeError, match="Interpreter invocation failed"):
            tflm_run(data, xs, 2)
        with pytest.raises(ModelError, match=r"TFLite Micro fails the invocation there"):
            run(g, p, xs)
        with pytest.raises(FirmwareError, match="model_invoke failed"):
            runner.run(board, tmp_path, xs)


def fill_model(seed=3):
    """FILL by a computed scalar (the output on its own quantisation) between convolutions."""
    b = GraphBuilder("fill", seed=seed)
    x = b.input((1, 6, 5, 3), 0.05, 2)
    v = b.input((), 0.1, -4, name="value")
    f = b.fill((1, 6, 5, 4), v, out_quant=(0.07, 9))
    return b.finish(b.conv2d(b.add(b.conv2d(x, 4, 3, 1), f), 5, 3, 2))


@pytest.mark.parametrize("board", BOARDS)
def test_fill_by_a_computed_value_matches_tflm(board, tmp_path):
    need(board)
    g = fill_model()
    p = plan_arena(g)
    assert checker.problems(g, p) == []
    check_firmware(g, board, tmp_path, p, seeds=(0, 1, 2))


def test_bad_models_get_one_line_errors():
    def refused(g, pattern):
        from buildtool.model import ops

        with pytest.raises(ModelError, match=pattern) as e:
            ops.check_graph(g)
        assert "\n" not in str(e.value)

    g = fill_model()
    dims = g.operators[[op.opcode for op in g.operators].index("FILL")].inputs[0]
    g.tensors[dims].data = None
    g.inputs.append(dims)
    refused(g, r"\(FILL\): computed dims are not supported \(TFLite Micro refuses them")
    g = fill_model()
    g.tensors[[op for op in g.operators if op.opcode == "FILL"][0].inputs[0]].data = np.array([1, 6, 5, 5], np.int32)
    refused(g, r"dims \[1, 6, 5, 5\] differ from the output shape \[1, 6, 5, 4\]")
    b = GraphBuilder("f16")
    b.fill((1, 4), b.input((), 0.1, 0))
    g = b.finish()
    for t in g.tensors:
        if t.dtype == "int8":
            t.dtype = "int16"
    refused(g, r"\(FILL\): tensor \d+ is int16, and TFLite Micro runs FILL on int8 only")
    g = gather_model()
    g.tensors[g.inputs[2]].dtype = "int16"
    refused(g, r"\(GATHER\): indices must be int32")
    b = GraphBuilder("nd6")
    b.gather_nd_computed(b.input((2,) * 6 + (3,), 0.1, 0), b.input((1, 6), dtype="int32"))
    with pytest.raises(ModelError, match=r"index tuples of 6 values; TFLite Micro takes at most 5"):
        b.finish()


def cast_chain_model(seed=6):
    """CASTs between convolutions over tensors that die there, same size in and out (bool -> int8, int8 -> int8,
    int16 -> int16): in place."""
    b = GraphBuilder("cast_chain", seed=seed)
    x = b.input((1, 8, 7, 4), 0.05, 1)
    k = b.conv2d(x, 6, 3, 1)
    m = b.cast(b.compare("GREATER", k, b.conv2d(x, 6, 3, 1)), "int8")
    w = b.cast(b.cast(b.cast(b.conv2d(x, 6, 1, 1), "int16"), "int16"), "int8")
    return b.finish(b.conv2d(b.add(b.cast(b.add(m, w), "int8"), k), 3, 3, 2))


@pytest.mark.parametrize("board", BOARDS)
def test_cast_in_place_matches_tflm(board, tmp_path):
    need(board)
    g = cast_chain_model()
    forced = inplace_plan(g, ("CAST",))
    assert sum(g.operators[i].opcode == "CAST" for i in forced.inplace_ops) == 3
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    assert any(g.operators[i].opcode == "CAST" for i in planned.inplace_ops)
    for p in (forced, planned):
        check_firmware(g, board, tmp_path / str(len(p.inplace_ops)), p, seeds=(0, 1))


# one board of every kernel set
ALL_SETS = ["host", "cortex-m4", "cortex-m55", "riscv32", "xcore"]


def test_tensorflow_converted_model_on_every_kernel_set(tmp_path):
    """tests/data/computed_ops.tflite (scripts/computed_ops_model.py, TensorFlow 2.21): GATHER and GATHER_ND by
    ARG_MAX indices (once through int32 UNPACK and PACK), FILL by a REDUCE_MAX value, as the converter writes them;
    byte-identical to TFLite Micro in the executor and on one board of every kernel set, three inputs each."""
    path = DATA / "computed_ops.tflite"
    data = path.read_bytes()
    g = load(str(path))
    kinds = {op.opcode: op for op in g.operators}
    assert {"GATHER", "GATHER_ND", "FILL"} <= set(kinds)
    assert {g.tensors[kinds[k].outputs[0]].dtype for k in ("PACK", "UNPACK")} == {"int32"}
    assert not any(g.tensors[kinds[k].inputs[i]].is_const for k, i in (("GATHER", 1), ("GATHER_ND", 1), ("FILL", 1)))
    p = plan_arena(g)
    assert checker.problems(g, p) == []
    xs = [[np.random.default_rng(s).integers(-128, 128, size=(1, 10, 8), dtype=np.int8)] for s in range(3)]
    want = [tflm_run(data, x)[0] for x in xs]
    for x, w in zip(xs, want):
        same(run(g, p, x), [w])
    for board in ALL_SETS:
        need(board)
        pipeline.build(g, board, tmp_path / board, plan=p)
        for x, w in zip(xs, want):
            same([runner.run(board, tmp_path / board, x)[0]], [w])
