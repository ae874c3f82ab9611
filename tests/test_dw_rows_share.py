"""model_c._share_dw_rows: depthwise layers on bt_dw_rows_q4_RL moved onto a longer row length another layer calls
where the bt_dw_q4_RL no longer linked buys the rows widened again, and the longest onto a shorter one (its rows in
more strips) where that buys the strips; outputs byte-identical to TFLite Micro."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.codegen import model_c
from buildtool.model.writer import serialize
from buildtool.pipeline import plan_memory
from buildtool.steps.models import Model
from buildtool.zoo.builder import GraphBuilder

from conftest import tflm_run


def _model():
    """A 3x3 depthwise on 24x24x8 (rows of 32 cells) and one on 12x12x16 (16 cells; on 32 it still widens its 12
    rows in one chunk), both on bt_dw_q4 (full int8 range)."""
    b = GraphBuilder("dwshare", seed=3)
    y = b.depthwise(b.input((1, 24, 24, 8)), 3, activation="NONE")
    y = b.conv2d(y, 16, k=3, stride=2, activation="NONE")
    return b.finish([b.depthwise(y, 3, activation="NONE")])


def _plan(g):
    return plan_memory(g, pipeline.PlanOptions(inplace=False))  # (in place, the first would run its own path)


def _calls(src: str) -> list:
    return re.findall(r"^  (bt_dw_rows_q4_\d+)\(&op(\d+)_p", src, re.M)


def test_widened_rows_model():
    """_dw_rows_widened follows depthwise.c's chunks: 12 rows of 128 channels in one chunk on rows of 16 or 32 cells,
    two of 6 on 56 cells; 24 rows of 64 channels in two chunks on 32 cells, four on 56."""
    def rows(h, c, rl):
        return model_c._dw_rows_widened(dict(out=dict(h=h, w=h, c=c), stride_h=1, stride_w=1), rl)
    assert [rows(12, 128, rl) for rl in (16, 32, 56)] == [14 * 32, 14 * 32, 16 * 32]
    assert [rows(24, 64, rl) for rl in (32, 56)] == [28 * 16, 32 * 16]


def test_shorter_row_length_shares_the_longer():
    g = _model()
    plan = _plan(g)
    balanced = pipeline.code(Model("dwshare", "dwshare", g), plan, "cortex-m4")["model.c"]
    speed = pipeline.code(Model("dwshare", "dwshare", g), plan, "cortex-m4",
                          pipeline.PlanOptions(optimize_code="speed"))["model.c"]
    assert sorted(_calls(speed)) == [("bt_dw_rows_q4_16", "2"), ("bt_dw_rows_q4_32", "0")]
    assert sorted(_calls(balanced)) == [("bt_dw_rows_q4_32", "0"), ("bt_dw_rows_q4_32", "2")]
    assert "#define bt_dw_rows_q4_16 " not in balanced and "#define bt_dw_rows_q4_16 " in speed


@pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                    reason="arm toolchain not installed")
def test_shared_row_length_is_bit_exact(tmp_path):
    from buildtool.firmware import runner

    g = _model()
    x = np.random.default_rng(5).integers(-128, 128, size=(1, 24, 24, 8), dtype=np.int8)
    want = tflm_run(serialize(g), [x])[0]
    pipeline.build(g, "cortex-m4", tmp_path / "b", plan=_plan(g))
    assert sorted(_calls((tmp_path / "b" / "model.c").read_text())) == [("bt_dw_rows_q4_32", "0"),
                                                                       ("bt_dw_rows_q4_32", "2")]
    got = np.asarray(runner.run("cortex-m4", tmp_path / "b", x)[0])
    assert got.tobytes() == np.asarray(want).tobytes()


def _wide_model():
    """A 3x3 depthwise on 48x48x8 (rows of 56 cells) and one on 24x24x64 (32 cells: on 56 it would widen 4 more rows
    a group of its 16, more than the bt_dw_q4_32 dropped buys), both on bt_dw_q4."""
    b = GraphBuilder("dwsplit", seed=4)
    y = b.depthwise(b.input((1, 48, 48, 8)), 3, activation="NONE")
    y = b.conv2d(y, 64, k=3, stride=2, activation="NONE")
    return b.finish([b.depthwise(y, 3, activation="NONE")])


def test_strips_model():
    """_dw_rows_strips follows depthwise.c dw_rows with a row length built in: 48 outputs in one strip on 56 cells, two
    of 24 on 32, four of 12 on 16; a transposed 5-wide map's 25-long rows in one strip on 32 cells."""
    def strips(h, w, c, rl):
        return model_c._dw_rows_strips(dict(out=dict(h=h, w=w, c=c), stride_h=1, stride_w=1), rl)
    assert [strips(48, 48, 8, rl) for rl in (56, 32, 16)] == [(1, 384, 48), (2, 384, 24), (4, 384, 12)]
    assert strips(25, 5, 64, 32) == (1, 5 * 64, 25)


def test_longest_row_length_splits_onto_a_shorter():
    g = _wide_model()
    plan = _plan(g)
    balanced = pipeline.code(Model("dwsplit", "dwsplit", g), plan, "cortex-m4")["model.c"]
    speed = pipeline.code(Model("dwsplit", "dwsplit", g), plan, "cortex-m4",
                          pipeline.PlanOptions(optimize_code="speed"))["model.c"]
    assert sorted(_calls(speed)) == [("bt_dw_rows_q4_32", "2"), ("bt_dw_rows_q4_56", "0")]
    assert sorted(_calls(balanced)) == [("bt_dw_rows_q4_32", "0"), ("bt_dw_rows_q4_32", "2")]
    assert "#define bt_dw_rows_q4_56 " not in balanced and "#define bt_dw_rows_q4_56 " in speed


@pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                    reason="arm toolchain not installed")
def test_split_strips_are_bit_exact(tmp_path):
    from buildtool.firmware import runner

    g = _wide_model()
    x = np.random.default_rng(6).integers(-128, 128, size=(1, 48, 48, 8), dtype=np.int8)
    want = tflm_run(serialize(g), [x])[0]
    pipeline.build(g, "cortex-m4", tmp_path / "b", plan=_plan(g))
    assert sorted(_calls((tmp_path / "b" / "model.c").read_text())) == [("bt_dw_rows_q4_32", "0"),
                                                                       ("bt_dw_rows_q4_32", "2")]
    got = np.asarray(runner.run("cortex-m4", tmp_path / "b", x)[0])
    assert got.tobytes() == np.asarray(want).tobytes()
