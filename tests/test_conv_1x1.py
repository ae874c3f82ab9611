"""The cortex-m set's lean shared 1x1 convolution (kernels/cortex-m/conv_1x1.h, bt_conv_s8_1x1_rq2_ssat; issue 50):
its kernel_variants row's conditions, the code budget's offer, and its outputs forced on 1x1 layers (code_budget.forcing)
against TFLite Micro's bytes on cortex-m4."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import model_calls, tflm_run

from buildtool import pipeline
from buildtool.codegen import code_budget, kernel_variants
from buildtool.firmware import runner
from buildtool.model.writer import serialize
from buildtool.options import PlanOptions

LEAN = "bt_conv_s8_1x1_rq2_ssat"
TABLE = kernel_variants.CORTEX_M


def _layer(**kw) -> dict:
    p = {"in": {"h": 6, "w": 6, "c": 64, "pixel_stride": 64}, "out": {"h": 6, "w": 6, "c": 107, "pixel_stride": 128},
         "kh": 1, "kw": 1, "stride_h": 1, "stride_w": 1, "dil_h": 1, "dil_w": 1, "pad_top": 0, "pad_left": 0,
         "input_offset": 128, "output_offset": -128, "act_min": -128, "act_max": 127,
         "multipliers": [1 << 30] * 107, "shifts": [-8] * 107}
    p.update(kw)
    return p


def test_row_offered_never_dispatched():
    """A vww-like rows-live 1x1 (107 live channels of 128) is offered the lean variant after bt_conv_s8_pm_rq2_ssat (the
    table's choice stays the dispatcher's); each of its conditions turned off drops it."""
    p = _layer()
    assert kernel_variants.choose(TABLE, "conv", p) == "bt_conv_s8_pm_rq2_ssat"
    names = kernel_variants.all_codegen(TABLE, "conv", p)
    assert names.index(LEAN) == names.index("bt_conv_s8_pm_rq2_ssat") + 1
    assert LEAN in kernel_variants.CODEGEN_ONLY
    off = [dict(kh=3, kw=3), dict(pad_top=1), dict(pad_left=1),
           dict(**{"in": {"h": 6, "w": 6, "c": 66, "pixel_stride": 66}}),
           dict(**{"in": {"h": 6, "w": 6, "c": 4, "pixel_stride": 4}}),
           dict(act_min=0), dict(act_max=100), dict(shifts=[-8] * 106 + [-23])]
    for kw in off:
        assert LEAN not in kernel_variants.all_codegen(TABLE, "conv", _layer(**kw)), kw
    assert LEAN in kernel_variants.all_codegen(TABLE, "conv", _layer(shifts=[-22] * 106 + [0],
                                                                      multipliers=[1 << 30] * 106 + [0]))
    assert LEAN in kernel_variants.all_codegen(TABLE, "conv", _layer(stride_h=2, stride_w=2))   # ResNet's shortcuts


def test_measured_within_a_percent_of_the_patch_matrix_variant():
    """variant_costs.json prices it on conv 1x1 (code_budget's candidates need a figure for every variant offered) at a
    fraction of bt_conv_s8_pm_rq2_ssat's bytes and within 1 % of its modelled cycles on vww's 1x1 shapes."""
    m = code_budget.costs()["cortex-m"]
    lean, pm = (code_budget._cost(m, "variants", n, "conv 1x1", 0) for n in (LEAN, "bt_conv_s8_pm_rq2_ssat"))
    assert lean is not None and lean[0] * 3 < pm[0]
    for k, ch in ((8, 16), (32, 64), (64, 128), (128, 128), (256, 256)):
        a, b = (code_budget._cost(m, "variants", n, "conv 1x1", k, ch)[1] for n in (LEAN, "bt_conv_s8_pm_rq2_ssat"))
        assert abs(a / b - 1) <= 0.01, (k, a / b)


def _graph(name: str, shape: tuple, couts: tuple, seed: int, stride: int = 1):
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder(name, seed=seed)
    x = b.input(shape)
    for cout in couts:
        x = b.conv2d(x, cout, 1, stride, activation="NONE")
    return b.finish()


@pytest.mark.slow
@pytest.mark.parametrize("shape,couts", [
    ((1, 7, 5, 8), (12, 13, 36, 40, 68, 9)),   # 35 pixels (two left: the last triple again), K 8-68, odd channels
    ((1, 4, 4, 16), (24, 7, 8)),               # 16 pixels (one left: bt_mv1x1)
    ((1, 1, 2, 12), (20, 5)),                  # 2 pixels (one a pass)
    ((1, 32, 32, 16, 2), (32, 64, 12)),        # stride 2 (ResNet-8's shortcuts): rows of 16, 8, 4 (triples across
    ((1, 13, 11, 8, 2), (20, 9, 8)),           # rows pixel by pixel), odd maps (7x6, 4x3, 2x2: the last row and
])                                             # column unread), one pixel left (bt_mv1x4), the last triple again
def test_forced_byte_exact(shape, couts, tmp_path: Path):
    """Every 1x1 layer forced onto the lean variant: model.c calls it, and the cortex-m4 firmware's outputs are TFLite
    Micro's bytes."""
    stride = shape[4] if len(shape) == 5 else 1
    shape = shape[:4]
    g = _graph("lean-1x1", shape, couts, seed=sum(couts), stride=stride)
    xin = np.random.default_rng(2).integers(-128, 128, size=shape, dtype=np.int8)
    with code_budget.forcing(LEAN):
        pipeline.build(g, "cortex-m4", tmp_path, plan=pipeline.plan_memory(g, PlanOptions()))
    assert len(model_calls((tmp_path / "model.c").read_text(), LEAN)) >= len(couts) - 1
    y, _, _ = runner.run("cortex-m4", tmp_path, xin)
    assert np.asarray(y).tobytes() == tflm_run(serialize(g), [xin])[0].tobytes()
