"""Issue 33 item 1, the operators left: CAST to int8/int16 (from int8, int16, int32, float32, bool), GATHER and
GATHER_ND with computed (non-constant) indices, FILL with a computed value. Each bit-exact with TFLite Micro in the
numpy executor and in host and Cortex-M4 firmware (test_executor.py and test_ops_extra.py run their random one-op
models too, opgen_extra.py); here the edges: float conversions past the range and non-finite, indices that TFLite
Micro refuses at invoke (our firmware's model_invoke fails there too, the numpy executor raises one line)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need
from test_ops_extra import check_firmware

from buildtool import pipeline
from buildtool.errors import ModelError
from buildtool.firmware.toolchain import FirmwareError
from buildtool.firmware import runner
from buildtool.model.writer import serialize
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder

BOARDS = ["host", "cortex-m4"]
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
