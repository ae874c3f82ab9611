"""A 1x1 convolution over its own dying input (PlanOptions.inplace_pointwise, issue 49 item 3): the input lies at
the output's tail, D = HW*(c_out - c_in) + G*c_in bytes from its start (plan/arena/liveness.pointwise_shift), so
that a kernel going forward over the pixels in groups of at most G never overwrites an input byte it has yet to
read. Checked: the option is off by default (no plan changes), the planner takes it where it lowers the peak and the
arena is the independent count HW*c_out + G*c_in, the checker refuses a shift one byte short, the numpy executor
(which runs the groups as an MCU kernel may, outputs first) gives TFLite Micro's bytes at the planner's shift and
other bytes at a shift a pixel short, and the Cortex-M4, Cortex-M55 and riscv32 firmware give TFLite Micro's bytes
(the cortex-m set's kernels over the whole map, the others' channel-outer 1x1 loops called on bands of rows)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need

from buildtool import pipeline
from buildtool.errors import PlanError
from buildtool.firmware import runner
from buildtool.model.writer import serialize
from buildtool.options import PlanOptions
from buildtool.plan import align_up
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import _pointwise_in_place, run, tensor_view
from buildtool.refops import KERNELS
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder


def expansion(h: int, w: int, cin: int, cout: int, tail: int = 0, seed: int = 0):
    """x (h x w x cin, the graph input) -> 1x1 conv to cout [-> 1x1 conv to tail]: the expansion's input dies there."""
    b = GraphBuilder(f"pw_{h}x{w}_{cin}_{cout}_{tail}", seed=seed)
    x = b.input((1, h, w, cin), scale=0.05, zp=3)
    y = b.conv2d(x, cout, 1, 1, activation="RELU6")
    if tail:
        y = b.conv2d(y, tail, 1, 1, activation="NONE")
    return b.finish([y])


def group(cin: int, w: int) -> int:
    """G = max(ceil(2048 / c_in) + 3, W): a cortex-m pass's widened columns (3 * BT_COL_MAX = 1920 values rounded
    up) plus the lean kernel's last triple started three pixels back, and at least one row (the banded calls)."""
    return max(-(-2048 // cin) + 3, w)


def independent_pair_bytes(h: int, w: int, cin: int, cout: int) -> int:
    """HW*c_out + G*c_in, D rounded up to a word."""
    hw, g = h * w, group(cin, w)
    d = hw * (cout - cin) + g * cin
    return d + (-d) % 4 + hw * cin


def _expansion_output(g, x):
    """The first convolution's output, computed apart from any arena."""
    op = g.operators[0]
    y = np.zeros(g.tensors[op.outputs[0]].shape, np.int8)
    KERNELS[op.opcode](g, op, [np.array(x)], [y])
    return y


def _inputs(g, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, g.tensors[i].shape).astype(np.int8) for i in g.inputs]


def test_off_by_default_and_plans_unchanged():
    g = expansion(24, 20, 16, 96)
    assert PlanOptions().inplace_pointwise is False
    assert "inplace_pointwise" not in PlanOptions().canonical()  # old cache keys and seals stay
    assert PlanOptions.from_strings({"inplace_pointwise": "1"}).to_map() == {"inplace_pointwise": True}
    plain = plan_arena(g)
    assert not plain.inplace_ops
    assert plain.arena_bytes == align_up(24 * 20 * 16, 16) + align_up(24 * 20 * 96, 16)


@pytest.mark.parametrize("h,w,cin,cout", [(24, 20, 16, 96), (80, 80, 16, 96), (7, 9, 8, 24), (5, 3, 24, 24)])
def test_planner_arena_is_the_independent_count(h, w, cin, cout):
    g = expansion(h, w, cin, cout)
    plan = plan_arena(g, inplace_pointwise=True)
    want = align_up(independent_pair_bytes(h, w, cin, cout), 16)
    plain = align_up(h * w * cin, 16) + align_up(h * w * cout, 16)
    if want < plain:
        assert plan.inplace_ops == [0] and plan.arena_bytes == want
    else:  # kept only where it lowers the peak
        assert plan.inplace_ops == [] and plan.arena_bytes == plain
    assert checker.problems(g, plan) == []


def test_mobilenetv2_largest_1x1_fits_the_part_alone():
    """mobilenetv2_160_a1's 16 -> 96 expansion at 80x80 (716,800 B as two tensors) in 616,496 B: under the
    NUCLEO-L4R5ZI's 640 KiB of SRAM."""
    g = expansion(80, 80, 16, 96)
    plan = plan_arena(g, inplace_pointwise=True)
    assert plan.arena_bytes == 616_496 < 640 * 1024 < 716_800


def test_checker_and_executor_refuse_a_short_shift():
    h, w, cin, cout = 24, 22, 16, 96   # 528 pixels, G = 131: four groups and one of 4 (the executor's first)
    g = expansion(h, w, cin, cout, tail=8)
    plan = plan_arena(g, inplace_pointwise=True)
    conv = g.operators[0]
    x, o = conv.inputs[0], conv.outputs[0]
    assert 0 in plan.inplace_ops
    at, shift = plan.tensors[o].offset, plan.tensors[x].offset - plan.tensors[o].offset
    assert shift == independent_pair_bytes(h, w, cin, cout) - h * w * cin
    xs = _inputs(g)
    want = tflm_run(serialize(g), xs, 1)[0]
    assert np.array_equal(np.asarray(run(g, plan, xs)[0]).reshape(-1), want.reshape(-1))

    def moved(d):
        return dataclasses.replace(plan, tensors={**plan.tensors, x: dataclasses.replace(plan.tensors[x], offset=at + d)})

    least = h * w * (cout - cin) + group(cin, w) * cin   # the rule, before the word rounding
    assert checker.problems(g, moved(least)) == []
    bad = [p for p in checker.problems(g, moved(least - 1)) if "yet to read" in p]
    assert len(bad) == 1
    # the executor refuses a shift a byte short; its groups, run as an MCU kernel may (each group's outputs first),
    # give other bytes at a shift a pixel short
    with pytest.raises(PlanError, match="forward groups need at least"):
        run(g, moved(least - 1), xs)
    arena = np.zeros(plan.arena_bytes, np.uint8)
    for d, same in ((least, True), (least - cin, False)):
        xv = tensor_view(arena, g.tensors[x], at + d)
        yv = tensor_view(arena, g.tensors[o], at)
        xv[...] = xs[0]
        _pointwise_in_place(g, conv, xv, yv)
        assert np.array_equal(yv, _expansion_output(g, xs[0])) == same


@pytest.mark.slow
@pytest.mark.parametrize("board,banded", [("cortex-m4", False), ("cortex-m55", True), ("riscv32", True),
                                          ("riscv32-rvv", True), ("xcore", True),
                                          ("host", True)])
def test_firmware_matches_tflm_with_the_smaller_arena(board, banded, tmp_path):
    need(board)
    # 40 x 9 = 360 pixels: several groups of 131 (bands of 14 rows of 9), then a projection; W = 140 > 131: G = W
    for shape in ((40, 9), (3, 140)):
        g = expansion(*shape, 16, 96, tail=4, seed=3)
        opts = PlanOptions(inplace_pointwise=True)
        plan = pipeline.plan_memory(g, opts)
        base = pipeline.plan_memory(g, PlanOptions())
        assert 0 in plan.inplace_ops and plan.arena_bytes < base.arena_bytes
        out = tmp_path / f"{shape[0]}x{shape[1]}"
        pipeline.build(g, board, out, options=opts, plan=plan)
        k = max(group(16, shape[1]) // shape[1], 1)
        loop = f"y += {k})  /* over its own input" in (out / "model.c").read_text()
        assert loop == (banded and k < shape[0])
        xs = _inputs(g, 5)
        y = runner.run(board, out, xs)[0]
        assert np.asarray(y).tobytes() == tflm_run(serialize(g), xs)[0].tobytes()


def test_mbv2_peaks_with_and_without_equal_an_independent_count():
    """mbv2-w0.35 (zoo): without the option the peak is its first expansion's input and output (8 -> 48 channels at
    72x72); with it the expansion's pair (HW*c_out + G*c_in: the chain before it, the network input included, moves
    into the pair's free head) lives on under the stride-2 depthwise's output (in place) while the projection after it
    writes its own output: align(pair) + align(projection's output). Counted here from the shapes alone."""
    from buildtool import zoo

    g = zoo.build("mbv2-w0.35")
    off, on = plan_arena(g), plan_arena(g, inplace_pointwise=True)
    exp = next(op for op in g.operators if op.opcode == "CONV_2D" and g.tensors[op.inputs[1]].shape[1:3] == (1, 1)
               and g.tensors[op.outputs[0]].shape[3] > g.tensors[op.inputs[0]].shape[3])
    x, o = g.tensors[exp.inputs[0]], g.tensors[exp.outputs[0]]
    dw = next(op for op in g.operators if op.inputs[0] == exp.outputs[0])
    proj = next(op for op in g.operators if op.inputs[0] == dw.outputs[0])
    _, h, w, cin = x.shape
    assert off.arena_bytes == align_up(x.nbytes, 16) + align_up(o.nbytes, 16) == 290_304
    pair = independent_pair_bytes(h, w, cin, o.shape[3])
    assert on.arena_bytes == align_up(pair, 16) + align_up(g.tensors[proj.outputs[0]].nbytes, 16) == 261_280
    assert exp.index in on.inplace_ops and dw.index in on.inplace_ops
    assert checker.problems(g, on) == []


@pytest.mark.slow
@pytest.mark.parametrize("board", ["cortex-m4", "cortex-m55", "riscv32"])
def test_mbv2_firmware_with_the_option_matches_tflm(board, tmp_path):
    """A MobileNetV2 whose peak is at a 1x1 expansion, built with the option, gives TFLite Micro's bytes."""
    from test_firmware import check_bit_exact, model_bytes

    need(board)
    check_bit_exact(model_bytes("mbv2-w0.35"), board, tmp_path, inplace_pointwise=True)
    assert "over its own input" in (tmp_path / "model.c").read_text() or board == "cortex-m4"
