"""Issue 54 item 1: grouped convolution (Keras Conv2D(groups=g): a CONV_2D whose filter depth is the input's
channels / g, which TFLite Micro runs). tests/data/grouped_conv_{int8,int16}.tflite (scripts/grouped_conv_model.py,
TensorFlow 2.21): groups 4, 8, 2 (stride 2, VALID) and 8 (dilation 2), then an ordinary 1x1. Checked, counted,
planned, run by the numpy executor and by firmware on every kernel set byte for byte as TFLite Micro; fused plans
keep the grouped convs whole (grouped_conv_chain_int8.tflite: between layers fusion tiles); a split region holding one and malformed groups are refused in one line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need

from buildtool import pipeline
from buildtool.errors import ModelError, PlanError
from buildtool.firmware import runner
from buildtool.model import weight_facts
from buildtool.model.ops import check_graph, conv_groups, op_macs
from buildtool.model.reader import load, parse
from buildtool.model.writer import serialize
from buildtool.plan import weight_order
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.fusion.execute import run_fused
from buildtool.plan.fusion.planner import plan_fused

DATA = Path(__file__).parent / "data"
GROUPS = [4, 8, 2, 8, 1]  # as scripts/grouped_conv_model.py writes them
# one board of every kernel set (cortex-m0plus: the reference set), RVV too
INT8_BOARDS = ["host", "cortex-m4", "cortex-m55", "riscv32", "riscv32-rvv", "xcore", "cortex-m0plus"]
INT16_BOARDS = ["host", "cortex-m4", "cortex-m55", "riscv32"]


def model(kind: str):
    path = DATA / f"grouped_conv_{kind}.tflite"
    return path.read_bytes(), load(str(path))


def inputs(kind: str, n: int = 3) -> list:
    dt = np.dtype(kind)
    info = np.iinfo(dt)
    return [[np.random.default_rng(s).integers(info.min, info.max + 1, size=(1, 12, 12, 24), dtype=dt)]
            for s in range(n)]


def same(y, want) -> None:
    y, want = np.asarray(y), np.asarray(want)
    assert y.dtype == want.dtype and np.array_equal(y.reshape(-1), want.reshape(-1))


@pytest.mark.parametrize("kind", ["int8", "int16"])
def test_checked_counted_and_executed_as_tflite_micro(kind):
    data, g = model(kind)
    check_graph(g)
    assert [conv_groups(g, op) for op in g.operators] == GROUPS
    for op, groups in zip(g.operators, GROUPS):  # MACs: each output reads its own group's channels only
        _, oh, ow, oc = g.tensors[op.outputs[0]].shape
        kh, kw = g.tensors[op.inputs[1]].shape[1:3]
        assert op_macs(g, op) == oh * ow * oc * kh * kw * g.tensors[op.inputs[0]].shape[3] // groups
    p = plan_arena(g)
    assert checker.problems(g, p) == []
    for x in inputs(kind):
        want = tflm_run(data, x)[0]
        assert len(np.unique(want)) > 50  # not a saturated output
        same(run(g, p, x)[0], want)


@pytest.mark.slow
@pytest.mark.parametrize("kind,board", [("int8", b) for b in INT8_BOARDS] + [("int16", b) for b in INT16_BOARDS])
def test_firmware_on_every_kernel_set_is_tflite_micros(kind, board, tmp_path):
    need(board)
    data, g = model(kind)
    pipeline.build(g, board, tmp_path)
    c = (tmp_path / "model.c").read_text()
    assert "static __attribute__((noinline)) void op0_groups(" in c and "for (int32_t k = 0; k < 4; k++, " in c
    assert "op4_groups" not in c  # the ordinary 1x1
    for x in inputs(kind, 2):
        same(runner.run(board, tmp_path, x)[0][0], tflm_run(data, x)[0])


def test_a_grouped_conv_with_zero_rows_keeps_its_filter_in_order(tmp_path):
    """A filter with enough zero rows runs on its live rows only (plan/weight_order.py rows-live), which reorders
    them: a grouped conv keeps them in the model's order (each group's call reads its own slice)."""
    _, g = model("int8")
    g = g.copy()
    op = g.operators[0]  # 3x3, 4 groups of 12 output channels
    f = g.tensors[op.inputs[1]]
    zeroed = f.data.copy()
    zeroed[12:36] = 0  # groups 1 and 2
    g.tensors[op.inputs[1]] = dataclasses.replace(f, data=zeroed)
    k = int(np.prod(f.shape[1:]))
    assert len(weight_facts.zero_rows(g.tensors[op.inputs[1]])) * k >= weight_order.ROWS_LIVE_GAIN * f.shape[0]
    assert weight_order.live_rows(g, op) is None
    data = serialize(g)
    g = parse(data)
    pipeline.build(g, "host", tmp_path)
    for x in inputs("int8", 2):
        same(runner.run("host", tmp_path, x)[0][0], tflm_run(data, x)[0])


def test_fused_plans_run_grouped_convs_whole(tmp_path):
    """grouped_conv_chain_int8: fusion tiles the ordinary layers around the grouped convs, which run whole; the
    numpy executor and host firmware of that plan are TFLite Micro's bytes."""
    path = DATA / "grouped_conv_chain_int8.tflite"
    data, g = path.read_bytes(), load(str(path))
    grouped = {k for k, op in enumerate(g.operators) if conv_groups(g, op) > 1}
    assert grouped == {2, 5}
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", time_budget=0.3)
    blocks = [it for it in plan.schedule.items if not isinstance(it, int)]
    assert blocks and all(not grouped & set(range(b.p, b.q)) for b in blocks)
    assert plan.arena_bytes < plan_arena(g).arena_bytes
    xs = [[np.random.default_rng(s).integers(-128, 128, size=(1, 32, 32, 8), dtype=np.int8)] for s in range(2)]
    pipeline.build(g, "host", tmp_path, plan=plan)
    for x in xs:
        want = tflm_run(data, x)[0]
        same(run_fused(g, plan, x)[0], want)
        same(runner.run("host", tmp_path, x)[0][0], want)


def test_a_split_region_with_a_grouped_conv_is_refused_in_one_line():
    _, g = model("int8")
    with pytest.raises(PlanError) as e:
        plan_fused(g, splits=[(2, 4, 2)])
    assert str(e.value) == ("split region 2:4: operator 2 is a grouped CONV_2D (2 groups), which split and fused "
                            "plans run whole; split a region without it")


@pytest.mark.parametrize("depth,cout,msg", [
    (5, 48, "filter depth 5 does not divide input channels 24"),
    (6, 18, "output channels 18 are not a multiple of its 4 groups (input channels 24 / filter depth 6)")])
def test_malformed_groups_are_refused_in_one_line(depth, cout, msg):
    _, g = model("int8")
    op = g.operators[0]
    f, b, y = (g.tensors[i] for i in (op.inputs[1], op.inputs[2], op.outputs[0]))
    g.tensors[f.index] = dataclasses.replace(f, data=np.zeros((cout, 3, 3, depth), np.int8),
                                             shape=(cout, 3, 3, depth),
                                             quant=dataclasses.replace(f.quant, scale=f.quant.scale[:cout],
                                                                       zero_point=f.quant.zero_point[:cout]))
    g.tensors[b.index] = dataclasses.replace(b, data=b.data[:cout], shape=(cout,))
    g.tensors[y.index] = dataclasses.replace(y, shape=(1, 12, 12, cout))
    with pytest.raises(ModelError) as e:
        check_graph(g)
    assert msg in str(e.value) and "\n" not in str(e.value)
