"""The cortex-m set's lean shared 1x1 convolution (kernels/cortex-m/conv_1x1.h, bt_conv_s8_1x1_rq2_ssat, and with doubled
sums bt_conv_s8_1x1_rq2m_ssat; issue 50): their kernel_variants rows' conditions, the code budget's offer, their outputs
forced on 1x1 layers (code_budget.forcing) against TFLite Micro's bytes on cortex-m4, and ResNet-8's shortcuts on the
doubled one at balanced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import model_calls, shared_model, tflm_run

from buildtool import pipeline
from buildtool.codegen import code_budget, kernel_variants
from buildtool.firmware import runner
from buildtool.model.writer import serialize
from buildtool.options import PlanOptions

LEAN = "bt_conv_s8_1x1_rq2_ssat"
LEANM = "bt_conv_s8_1x1_rq2m_ssat"  # doubled sums (bt_rq2m)
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


def test_doubled_row_offered_where_doubled_sums_fit():
    """The doubled-sums entry is offered after the bt_rq2 one where lean_1x1 holds, the biases' bound is known and 2a stays
    in int32 (|bias| + K 255 128 < 2^30), and the patch is at most 4 C values; never the table's (dispatcher's) choice."""
    p = _layer(bias_bound=(1 << 20) - 1)
    names = kernel_variants.all_codegen(TABLE, "conv", p)
    assert names.index(LEANM) == names.index(LEAN) + 1 and LEANM in kernel_variants.CODEGEN_ONLY
    assert kernel_variants.choose(TABLE, "conv", p) == "bt_conv_s8_pm_rq2_ssat"
    assert LEANM in kernel_variants.all_codegen(TABLE, "conv", dict(p, stride_h=2, stride_w=2))
    k = 64 * 255 * 128
    assert LEANM in kernel_variants.all_codegen(TABLE, "conv", _layer(bias_bound=(1 << 30) - k - 1))
    off = [dict(bias_bound=None), dict(bias_bound=(1 << 30) - k), dict(shifts=[-8] * 106 + [-23]),
           dict(bias_bound=0, out={"h": 6, "w": 6, "c": 15, "pixel_stride": 16},
                multipliers=[1 << 30] * 15, shifts=[-8] * 15)]   # K 64 > 4 C
    for kw in off:
        q = _layer(**{"bias_bound": (1 << 20) - 1, **kw})
        assert LEANM not in kernel_variants.all_codegen(TABLE, "conv", q), kw


def test_measured_within_a_percent_of_the_patch_matrix_variant():
    """variant_costs.json prices it on conv 1x1 (code_budget's candidates need a figure for every variant offered) at a
    fraction of bt_conv_s8_pm_rq2_ssat's bytes and within 1 % of its modelled cycles on vww's 1x1 shapes."""
    m = code_budget.costs()["cortex-m"]
    lean, pm = (code_budget._cost(m, "variants", n, "conv 1x1", 0) for n in (LEAN, "bt_conv_s8_pm_rq2_ssat"))
    assert lean is not None and lean[0] * 3 < pm[0]
    for k, ch in ((8, 16), (32, 64), (64, 128), (128, 128), (256, 256)):
        a, b = (code_budget._cost(m, "variants", n, "conv 1x1", k, ch)[1] for n in (LEAN, "bt_conv_s8_pm_rq2_ssat"))
        assert abs(a / b - 1) <= 0.01, (k, a / b)


def test_doubled_measured_faster_at_the_same_bytes():
    """variant_costs.json prices the doubled-sums entry on conv 1x1 within 3 % of the bt_rq2 one's bytes (one body, two
    entries: the doubling's SADD16s and bias shifts alone; measured 3,112 and 3,058 B) and at fewer modelled cycles on ResNet-8's shortcuts (K 16 into 32 channels, 32 into 64) and vww's shapes."""
    m = code_budget.costs()["cortex-m"]
    lean, dbl = (code_budget._cost(m, "variants", n, "conv 1x1", 0) for n in (LEAN, LEANM))
    assert dbl is not None and abs(dbl[0] / lean[0] - 1) <= 0.03
    for k, ch in ((16, 32), (32, 64), (8, 16), (64, 128), (128, 128)):
        a, b = (code_budget._cost(m, "variants", n, "conv 1x1", k, ch)[1] for n in (LEANM, LEAN))
        assert a < b, (k, ch, a, b)


def test_resnet8_shortcuts_call_the_doubled_lean_1x1():
    """ResNet-8: at balanced its two 1x1 stride-2 shortcuts (ops 6 and 10) call a lean shared 1x1 entry, no instance
    of their own (balanced takes the least code within its cycles, and the bt_rq2 entry is 54 B less); given the
    doubled-sums entry's extra bytes and no more (speed within balanced's bytes + 64), both take the doubled-sums
    entry, the faster one, and no other layer does."""
    m = pipeline.read_model(str(shared_model("mlperf-tiny/pretrainedResnet_quant")))
    plan = pipeline.plan_memory(m.graph, PlanOptions())
    bal = pipeline.code(m, plan, "cortex-m4", PlanOptions(optimize_code="balanced"))
    src = bal["model.c"]
    assert sorted(o for n in (LEAN, LEANM) for _, o in model_calls(src, n)) == [6, 10]
    assert not re.search(r"void op(6|10)_conv\(", src)
    budget = json.loads(bal["firmware.json"])["code_plan"]["bytes"] + 64
    fast = pipeline.code(m, plan, "cortex-m4", PlanOptions(optimize_code="speed", code_budget=budget))
    assert sorted(o for _, o in model_calls(fast["model.c"], LEANM)) == [6, 10]
    assert not model_calls(fast["model.c"], LEAN)


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
    _forced_byte_exact(LEAN, shape, couts, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("shape,couts,calls", [
    ((1, 32, 32, 16, 2), (32, 64, 12), (0, 1)),   # ResNet-8's shortcuts' shapes (16 -> 32 at stride 2), rows of 16, 8
    ((1, 13, 11, 8, 2), (20, 9, 8), (0, 1)),      # odd maps, one pixel left (bt_mv1x4: bt_rq2 on undoubled sums)
    ((1, 7, 5, 8), (12, 13, 36, 40, 68, 9), (0, 1, 3, 4)),   # stride 1: two pixels left, odd channel counts
])
def test_forced_doubled_byte_exact(shape, couts, calls, tmp_path: Path):
    """The same forced onto the doubled-sums entry: the layers it takes call it (not a c_in % 4 != 0 one, nor one of a
    patch over 4 C: 64 into 12 channels, 68 into 9), and the outputs are TFLite Micro's bytes."""
    _forced_byte_exact(LEANM, shape, couts, tmp_path, calls)


def _forced_byte_exact(name: str, shape: tuple, couts: tuple, tmp_path: Path, calls: tuple | None = None) -> None:
    stride = shape[4] if len(shape) == 5 else 1
    shape = shape[:4]
    g = _graph("lean-1x1", shape, couts, seed=sum(couts), stride=stride)
    xin = np.random.default_rng(2).integers(-128, 128, size=shape, dtype=np.int8)
    with code_budget.forcing(name):
        pipeline.build(g, "cortex-m4", tmp_path, plan=pipeline.plan_memory(g, PlanOptions()))
    called = sorted(o for _, o in model_calls((tmp_path / "model.c").read_text(), name))
    assert called == list(calls) if calls is not None else len(called) >= len(couts) - 1
    y, _, _ = runner.run("cortex-m4", tmp_path, xin)
    assert np.asarray(y).tobytes() == tflm_run(serialize(g), [xin])[0].tobytes()


WIDE = "bt_conv_s8_1x1_wide"  # a 1x1 over more than BT_COL_MAX input channels (kernels/cortex-m/conv_1x1w.h)


def test_wide_row_the_dispatchers_choice_over_a_column():
    """The wide 1x1 is the table's (and so bt_conv_s8's) choice for a 1x1 of c_in % 4 == 0 over BT_COL_MAX channels up to
    3 BT_COL_MAX (MobileNetV2's 960 -> 160), with any requantisation and activation; bt_conv_s8_direct outside it."""
    q = {"in": {"h": 5, "w": 5, "c": 960, "pixel_stride": 960}, "out": {"h": 5, "w": 5, "c": 160, "pixel_stride": 160},
         "multipliers": [1 << 29] * 160, "shifts": [3] * 160, "act_min": 0, "act_max": 6}
    assert kernel_variants.choose(TABLE, "conv", _layer(**q)) == WIDE
    assert kernel_variants.choose(TABLE, "conv", _layer(**dict(q, stride_h=2, stride_w=2))) == WIDE
    assert kernel_variants.choose(TABLE, "conv", _layer()) != WIDE   # K 64: the patch matrix
    off = [dict(kh=3, kw=3), dict(pad_top=1), dict(pad_left=1),
           {"in": {"h": 5, "w": 5, "c": 962, "pixel_stride": 962}},
           {"in": {"h": 5, "w": 5, "c": 1924, "pixel_stride": 1924}},
           {"out": {"h": 5, "w": 5, "c": 3, "pixel_stride": 3}}]
    for kw in off:
        assert kernel_variants.choose(TABLE, "conv", _layer(**dict(q, **kw))) == "bt_conv_s8_direct", kw


@pytest.mark.slow
@pytest.mark.parametrize("shape,couts,stride,board", [
    ((1, 5, 5, 960), (160,), 1, "cortex-m4"),       # MobileNetV2's projection: 8 triples, one pixel left, 2 blocks
    ((1, 5, 5, 960), (160,), 1, "nucleo-l4r5zi"),   # the same with BT_ICACHE_BYTES (6 groups a pass)
    ((1, 5, 5, 960), (320,), 1, "cortex-m4"),       # 960 -> 320: 4 blocks of pairs
    ((1, 3, 7, 676), (37,), 2, "cortex-m4"),        # stride 2 (rows of 4 from 7: triples across rows), two pixels
    ((1, 3, 7, 676), (37,), 2, "nucleo-l4r5zi"),    # left, odd channels, K = 480 + 196 (groups left after the passes)
    ((1, 2, 7, 1600), (9, 5), 1, "cortex-m4"),      # K over two columns (4 chunks), 9 and 5 channels
])
def test_wide_byte_exact(shape, couts, stride, board, tmp_path: Path):
    """model.c calls the wide 1x1 for each such layer (not the 9 -> 5 one) and the firmware's outputs are TFLite
    Micro's bytes."""
    g = _graph("wide-1x1", shape, couts, seed=sum(couts) + shape[3], stride=stride)
    xin = np.random.default_rng(3).integers(-128, 128, size=shape, dtype=np.int8)
    pipeline.build(g, board, tmp_path, plan=pipeline.plan_memory(g, PlanOptions()))
    assert [o for _, o in model_calls((tmp_path / "model.c").read_text(), WIDE)] == [0]
    y, _, _ = runner.run(board, tmp_path, xin)
    assert np.asarray(y).tobytes() == tflm_run(serialize(g), [xin])[0].tobytes()
