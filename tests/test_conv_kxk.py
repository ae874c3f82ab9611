"""The shared KxK convolution (kernels/cortex-m/conv_kxk.h, bt_conv_s8_kxk_rq2_ssat): which layers it takes
(kernel_variants.kxk_ok) and, forced on layers of several shapes, TFLite Micro's bytes on cortex-m4."""

from __future__ import annotations

import json

import numpy as np
import pytest

from buildtool.codegen import kernel_variants

VARIANT = "bt_conv_s8_kxk_rq2_ssat"


def _layer(**kw) -> dict:
    p = {"in": {"h": 8, "w": 8, "c": 16, "pixel_stride": 16}, "out": {"h": 8, "w": 8, "c": 16, "pixel_stride": 16},
         "kh": 3, "kw": 3, "stride_h": 1, "stride_w": 1, "dil_h": 1, "dil_w": 1, "pad_top": 1, "pad_left": 1,
         "act_min": -128, "act_max": 127, "multipliers": [1 << 30] * 16, "shifts": [-8] * 16, "codegen": True}
    p.update(kw)
    return p


def test_kxk_conditions():
    """kxk_ok takes a 3x3 of c_in % 4 == 0 into an even count of channels at the whole int8 range, and refuses what the
    kernel does not run: a 1x1, c_in % 4 != 0, an odd channel count, dilation, a lower bound, a shift whose zero point does
    not fold (below -22), a patch over BT_COL_MAX or under KXK_MIN_PATCH (3x3 of 12 channels: K 108), an input read with
    another pixel stride; the table offers it to model.c
    alone (after the variant the dispatcher takes)."""
    assert kernel_variants.kxk_ok(_layer())
    bad = [_layer(kh=1, kw=1), _layer(**{"in": {"h": 8, "w": 8, "c": 6, "pixel_stride": 6}}),
           _layer(**{"out": {"h": 8, "w": 8, "c": 15, "pixel_stride": 15}}, multipliers=[1 << 30] * 15,
                  shifts=[-8] * 15),
           _layer(dil_h=2), _layer(act_min=-100), _layer(shifts=[-8] * 15 + [-23]),
           _layer(**{"in": {"h": 8, "w": 8, "c": 80, "pixel_stride": 80}}),
           _layer(**{"in": {"h": 8, "w": 8, "c": 16, "pixel_stride": 32}}),
           _layer(**{"in": {"h": 8, "w": 8, "c": 12, "pixel_stride": 12}})]
    assert not any(kernel_variants.kxk_ok(p) for p in bad)
    table = kernel_variants.CORTEX_M
    assert VARIANT in kernel_variants.all_codegen(table, "conv", _layer())
    assert kernel_variants.choose_codegen(table, "conv", _layer()) != VARIANT
    assert not [n for n, pred in table["conv"] if n == VARIANT and pred(dict(_layer(), codegen=False))]


def _kxk_net():
    """KxK layers of several shapes, each patch at least KXK_MIN_PATCH: 3x3 stride 1 (K 144) on 11x11 (conv_kxk.h's
    strips, rows of 11 pixels leaving two columns, each a strip of triples 4 rows apart, the last short of its third
    pixel: 11 rows), a 3x3 VALID into 9x9 (strips and no column left), 5x5 (K 400), 3x2 VALID into 7x8 (K 144, two
    columns whose triples' pixels are 2 rows apart, the last triple's third alone: 7 rows), 3x3 stride 2 into 4x4 (K
    216, one column), 1x3 (K 144: kh 1, strips whose triples share no block), a 3x3 VALID of 64 channels (K 576: no
    strips, one triple a band, passes of 16 groups and the entry at 15) and a 2x2 stride 2 (K 160, one output row:
    no strips)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("kxk-net", seed=11)
    x = b.input((1, 11, 11, 16))
    x = b.conv2d(x, 16, 3, activation="NONE")
    x = b.conv2d(x, 16, 3, padding="VALID", activation="NONE")
    x = b.conv2d(x, 24, 5, activation="NONE")
    x = b.conv2d(x, 24, (3, 2), padding="VALID", activation="NONE")
    x = b.conv2d(x, 48, 3, stride=2, activation="NONE")
    x = b.conv2d(x, 64, (1, 3), activation="NONE")
    x = b.conv2d(x, 40, 3, padding="VALID", activation="NONE")
    b.conv2d(x, 4, 2, stride=2, activation="NONE")
    return b.finish()


@pytest.mark.slow
def test_kxk_forced_byte_exact(tmp_path):
    """Forced on every layer of _kxk_net (code_budget.forcing), model.c calls bt_conv_s8_kxk_rq2_ssat for each of its eight
    convolutions and the firmware's outputs are TFLite Micro's bytes."""
    from test_code_budget import _forced_byte_exact

    g = _kxk_net()
    xin = np.random.default_rng(5).integers(-128, 128, size=(1, 11, 11, 16), dtype=np.int8)
    _forced_byte_exact(g, VARIANT, xin, tmp_path)
    rows = json.loads((tmp_path / "firmware.json").read_text())["code_plan"]["layers"]
    assert [r["variant"] for r in rows] == [VARIANT] * 8


@pytest.mark.slow
@pytest.mark.parametrize("opts", [{}, {"splits": [[0, 0, 2]]}, {"optimize": "ram", "input_streamed": True},
                                  {"optimize": "ram", "band_input": False}])
def test_kxk_in_plans_of_row_bands_byte_exact(opts, tmp_path):
    """resnet_concat_64 (the golden set's model whose 3x3 layers take the variant at balanced: its model.c calls it) under
    plans that call layers on bands of output rows (a split, a streamed input, bands: y0 > 0, in_y0 > 0) gives TFLite
    Micro's bytes with the variant forced on every layer that may call it."""
    from buildtool import pipeline
    from buildtool.codegen import code_budget
    from buildtool.firmware import runner
    from buildtool.model.writer import serialize
    from buildtool.options import PlanOptions
    from conftest import SHARED_MODELS, tflm_run

    path = SHARED_MODELS / "resnet_concat_64.tflite"
    if not path.exists():
        pytest.skip("../shared not present")
    g = pipeline.read_model(str(path)).graph
    plan = pipeline.plan_memory(g, PlanOptions.from_map(opts))
    with code_budget.forcing(VARIANT):
        pipeline.build(g, "cortex-m4", tmp_path, plan=plan)
    assert f"{VARIANT}(" in (tmp_path / "model.c").read_text()
    xin = np.random.default_rng(7).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
    y, _, _ = runner.run("cortex-m4", tmp_path, xin)
    assert np.asarray(y).tobytes() == tflm_run(serialize(g), [xin])[0].tobytes()
