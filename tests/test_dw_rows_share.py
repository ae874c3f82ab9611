"""model_c._share_dw_rows: depthwise layers on bt_dw_rows_q4_RL moved onto a longer row length another layer calls
where the bt_dw_q4_RL no longer linked buys the rows widened again, and the longest onto a shorter one (its rows in
more strips) where that buys the strips; outputs byte-identical to TFLite Micro."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.codegen import kernel_variants, model_c
from buildtool.model.writer import serialize
from buildtool.pipeline import plan_memory
from buildtool.steps.models import Model
from buildtool.zoo.builder import GraphBuilder

from conftest import tflm_run


def _model(h=24, c=8, c2=16):
    """A 3x3 depthwise on hxhxc and one on (h/2)x(h/2)xc2, both on bt_dw_q4 (full int8 range). The default: 24x24x8
    (rows of 32 cells) and 12x12x16 (16 cells; on 32 it still widens its 12 rows in one chunk)."""
    b = GraphBuilder(f"dwshare{h}", seed=3)
    y = b.depthwise(b.input((1, h, h, c)), 3, activation="NONE")
    y = b.conv2d(y, c2, k=3, stride=2, activation="NONE")
    return b.finish([b.depthwise(y, 3, activation="NONE")])


# (the model's shapes, its calls at optimize_code=speed, at the default): a shorter row length onto the longer one;
# a 48x48x8 layer (56 cells) onto the 24x24x64 one's 32 in two strips of 24 (on 56 the 24x24x64 layer would widen 4
# more rows a group of its 16, more than the bt_dw_q4_32 dropped buys)
SHARES = {"longer": (dict(), [("bt_dw_rows_q4e_16", "2"), ("bt_dw_rows_q4e_32", "0")],
                     [("bt_dw_rows_q4e_32", "0"), ("bt_dw_rows_q4e_32", "2")]),
          "strips": (dict(h=48, c=8, c2=64), [("bt_dw_rows_q4e_32", "2"), ("bt_dw_rows_q4e_56", "0")],
                     [("bt_dw_rows_q4e_32", "0"), ("bt_dw_rows_q4e_32", "2")])}
# (every strip of these layers is whole quads: model.c calls bt_dw_rows_q4e_RL, kernel_variants.dw_rows_entry)


def _plan(g):
    return plan_memory(g, pipeline.PlanOptions(inplace=False))  # (in place, the first would run its own path)


def _calls(src: str) -> list:
    return sorted(re.findall(r"^  (bt_dw_rows_q4e?_\d+)\(&op(\d+)_p", src, re.M))


def test_widened_rows_model():
    """_dw_rows_widened follows depthwise.c's chunks: 12 rows of 128 channels in one chunk on rows of 16 or 32 cells,
    two of 6 on 56 cells; 24 rows of 64 channels in two chunks on 32 cells, four on 56."""
    def rows(h, c, rl):
        return model_c._dw_rows_widened(dict(out=dict(h=h, w=h, c=c), stride_h=1, stride_w=1), rl)
    assert [rows(12, 128, rl) for rl in (16, 32, 56)] == [14 * 32, 14 * 32, 16 * 32]
    assert [rows(24, 64, rl) for rl in (32, 56)] == [28 * 16, 32 * 16]


def test_strips_model():
    """_dw_rows_strips follows depthwise.c dw_rows with a row length built in: 48 outputs in one strip on 56 cells, two
    of 24 on 32, four of 12 on 16; a transposed 5-wide map's 25-long rows in one strip on 32 cells."""
    def strips(h, w, c, rl):
        return model_c._dw_rows_strips(dict(out=dict(h=h, w=w, c=c), stride_h=1, stride_w=1), rl)
    assert [strips(48, 48, 8, rl) for rl in (56, 32, 16)] == [(1, 384, 48), (2, 384, 24), (4, 384, 12)]
    assert strips(25, 5, 64, 32) == (1, 5 * 64, 25)


def test_rows_entry_takes_whole_quads_alone():
    """kernel_variants.dw_rows_entry: bt_dw_rows_q4e_RL (no last column, dw_q4s) where the map runs as it is and every
    strip's outputs are a multiple of four; a strip of 26 (a pair left), a 25x5 map (transposed, kws: rows of 25) or
    a 48-wide map on 56 cells split where 32 would not (two strips of 24 on 32) as the rows ask."""
    def entry(h, w, rl):
        return kernel_variants.dw_rows_entry(dict(out=dict(h=h, w=w, c=8), stride_h=1, stride_w=1), rl)
    assert [entry(24, 24, 32), entry(12, 12, 16), entry(48, 48, 32), entry(48, 48, 56)] == [
        "bt_dw_rows_q4e_32", "bt_dw_rows_q4e_16", "bt_dw_rows_q4e_32", "bt_dw_rows_q4e_56"]
    assert [entry(26, 26, 32), entry(25, 5, 32), entry(50, 50, 56)] == [
        "bt_dw_rows_q4_32", "bt_dw_rows_q4_32", "bt_dw_rows_q4_56"]


@pytest.mark.parametrize("share", sorted(SHARES))
def test_layers_share_a_row_length(share):
    shapes, at_speed, at_default = SHARES[share]
    g = _model(**shapes)
    plan = _plan(g)
    balanced = pipeline.code(Model(g.name, g.name, g), plan, "cortex-m4")["model.c"]
    speed = pipeline.code(Model(g.name, g.name, g), plan, "cortex-m4",
                          pipeline.PlanOptions(optimize_code="speed"))["model.c"]
    assert _calls(speed) == at_speed and _calls(balanced) == at_default
    dropped = {v for v, _ in at_speed} - {v for v, _ in at_default}
    assert dropped and all(f"#define {v} " not in balanced and f"#define {v} " in speed for v in dropped)


@pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                    reason="arm toolchain not installed")
@pytest.mark.parametrize("share", sorted(SHARES))
def test_shared_row_length_is_bit_exact(share, tmp_path):
    from buildtool.firmware import runner

    shapes, _, at_default = SHARES[share]
    g = _model(**shapes)
    x = np.random.default_rng(5).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
    want = tflm_run(serialize(g), [x])[0]
    pipeline.build(g, "cortex-m4", tmp_path / "b", plan=_plan(g))
    assert _calls((tmp_path / "b" / "model.c").read_text()) == at_default
    got = np.asarray(runner.run("cortex-m4", tmp_path / "b", x)[0])
    assert got.tobytes() == np.asarray(want).tobytes()
