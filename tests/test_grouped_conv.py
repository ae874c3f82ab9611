"""Issue 54 item 1: grouped convolution (Keras Conv2D(groups=g): a CONV_2D whose filter depth is the input's
channels / g, which TFLite Micro runs). tests/data/grouped_conv_{int8,int16}.tflite (scripts/grouped_conv_model.py,
TensorFlow 2.21): groups 4, 8, 2 (stride 2, VALID) and 8 (dilation 2), then an ordinary 1x1. Checked, counted,
planned, run by the numpy executor and by firmware on every kernel set byte for byte as TFLite Micro; fused and
split plans tile them (one call per group on channel views of the tile; grouped_conv_chain_int8.tflite: grouped
convs between ordinary layers), byte for byte too; malformed groups are refused in one line."""

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
from buildtool.plan.fusion.geometry import tileable
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


CHAIN = "grouped_conv_chain_int8"  # 32x32x8; grouped convs at operators 2 and 5 between ordinary layers
FUSED_BOARDS = ["host", "cortex-m4", "riscv32", "cortex-m55", "riscv32-rvv", "xcore", "cortex-m0plus"]


def fused_cases():
    """(name, model bytes, graph, plan, its inputs): each test model under --optimize ram and under a split region
    holding all its grouped convs (the chain's operators 2..5 in 4 slices, grouped_conv_int8's 0..4 in 3)."""
    for name, shape, split in [(CHAIN, (1, 32, 32, 8), (2, 5, 4)), ("grouped_conv_int8", (1, 12, 12, 24), (0, 4, 3))]:
        path = DATA / f"{name}.tflite"
        data, g = path.read_bytes(), load(str(path))
        xs = [[np.random.default_rng(s).integers(-128, 128, size=shape, dtype=np.int8)] for s in range(2)]
        yield name, data, g, plan_fused(g, optimize="ram", max_mac_overhead="none", time_budget=0.3), xs
        yield name, data, g, plan_fused(g, splits=[split]), xs


def tiled(g, plan) -> set:
    """The grouped convs of g that plan runs inside a fusion block or split region."""
    blocks = [range(b.p, b.q) for b in plan.schedule.items if not isinstance(b, int)]
    return {k for k, op in enumerate(g.operators) if conv_groups(g, op) > 1 and any(k in r for r in blocks)}


def test_fused_and_split_plans_tile_grouped_convs_as_tflite_micro():
    """Fusion (--optimize ram) and operator splitting tile grouped convs (their tile computed group by group, as
    TFLite Micro's conv): the numpy tile executor's bytes are TFLite Micro's; the split region holds every
    grouped conv, the fused plans at least one and a smaller arena than layer by layer."""
    for name, data, g, plan, xs in fused_cases():
        grouped = {k for k, op in enumerate(g.operators) if conv_groups(g, op) > 1}
        assert tiled(g, plan) == grouped if plan.schedule.mode == "split" else tiled(g, plan), name
        assert plan.schedule.mode == "split" or plan.arena_bytes < plan_arena(g).arena_bytes
        for x in xs:
            same(run_fused(g, plan, x)[0], tflm_run(data, x)[0])


@pytest.mark.slow
@pytest.mark.parametrize("board", FUSED_BOARDS)
def test_fused_and_split_firmware_tiles_grouped_convs_as_tflite_micro(board, tmp_path):
    """The same plans' firmware on every kernel set: each grouped conv's tile is one fx_win per group on channel
    views (a row-banded tensor through per-group row tables, which grouped_conv_int8's fused plan has)."""
    need(board)
    banded = False
    for n, (name, data, g, plan, xs) in enumerate(fused_cases()):
        if board == "cortex-m0plus" and plan.schedule.mode == "split" and name != CHAIN:
            assert plan.arena_bytes + 2048 > 16384  # its 16 KiB of RAM cannot hold this split plan and the stack
            continue
        out = tmp_path / str(n)
        pipeline.build(g, board, out, plan=plan)
        c = (out / "model.c").read_text()
        k = min(tiled(g, plan))
        assert f"fx_win(FX_CONV, &op{k}_pg[gk], &gi, &go, " in c and f"op{k}_groups" not in c
        banded |= "_grows" in c
        for x in xs:
            same(runner.run(board, out, x)[0][0], tflm_run(data, x)[0])
    assert banded


def test_a_grouped_conv_with_one_output_channel_a_group_runs_whole():
    """A grouped conv making one channel per group stays out of blocks (the kernel sets' one-channel tile paths
    assume whole pixels); the same conv with 12 a group may be tiled."""
    _, g = model("int8")
    op = g.operators[0]  # 3x3, 4 groups of 6 input channels
    assert tileable(g, op)
    g = g.copy()
    f, y = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    g.tensors[f.index] = dataclasses.replace(f, shape=(4, 3, 3, 6))
    g.tensors[y.index] = dataclasses.replace(y, shape=(1, 12, 12, 4))
    assert conv_groups(g, op) == 4 and not tileable(g, op)


def test_a_split_region_with_a_grouped_conv_runs_as_tflite_micro():
    """--split 2:4:2 (a grouped conv of 2 groups at its top, one of 8 inside) plans and runs byte for byte."""
    data, g = model("int8")
    plan = plan_fused(g, splits=[(2, 4, 2)])
    blocks = [(b.p, b.q) for b in plan.schedule.items if not isinstance(b, int)]
    assert blocks == [(2, 5)] and tiled(g, plan) == {2, 3}
    for x in inputs("int8", 2):
        x = [x[0].astype(np.int8)]
        same(run_fused(g, plan, x)[0], tflm_run(data, x)[0])


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
