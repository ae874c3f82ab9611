"""Pipelined blocks (buildtool/plan/fusion/pipeline.py): two consecutive fusion blocks run with their tile
rows interleaved, so the first block's output lives as a ring of the rows the second still needs.

The network: a 32x32 input streamed, a stem block, three inverted residuals at 16x16 and one down
to 8x8, then MEAN and a dense layer. Run one after the other, any cut through the 16x16 stage holds
a whole 16x16x16 tensor at its last tile row; pipelined, it never does. Outputs are compared with
TFLite Micro (firmware) and the plain executor (numpy), the arena with the independent checker,
and the search's cost of the pair with the packer's own live bytes over the pair's steps.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import fixed_input, tflm_run

from buildtool import pipeline, targets
from buildtool.firmware import runner
from buildtool.plan.arena import checker
from buildtool.zoo.builder import GraphBuilder
from buildtool.plan.arena.execute import run_unplanned
from buildtool.plan.fusion.lifetimes import checker_view
from buildtool.plan.fusion.planner import plan_fused
from buildtool.plan.fusion.search import search_front
from buildtool.plan.fusion.planner import plan_schedule
from buildtool.plan.fusion.schedule import FusedPlan, pull_order, schedule_from_edges
from buildtool.plan.fusion.execute import run_fused
from buildtool.model.writer import serialize
from buildtool.zoo import inverted_residual

INF = float("inf")


def pipe_net():
    b = GraphBuilder("pipe-net", seed=5)
    y = b.conv2d(b.input((1, 32, 32, 3)), 16, k=3, stride=2)
    y = b.conv2d(b.depthwise(y, k=3), 16, k=1, activation="NONE")
    for _ in range(3):
        y = inverted_residual(b, y, 16, 3, 1)
    y = inverted_residual(b, y, 24, 3, 2)
    for _ in range(2):
        y = inverted_residual(b, y, 24, 3, 1)
    return b.finish([b.fully_connected(b.mean(y), 10)])


@pytest.fixture(scope="module")
def net():
    """(graph, its front with and without pipelined pairs, the least-RAM plan, input, TFLM output)."""
    g = pipe_net()
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=True, time_budget=0)
    return (g, search_front(g, streamed=True), search_front(g, streamed=True, pipelined=False), plan, x,
            tflm_run(serialize(g), [x])[0])


def _pair(sol):
    return next(e for e in sol.edges if e.pipe)


def test_search_finds_a_pipelined_pair_below_every_sequential_plan(net):
    g, front, seq, plan, _, _ = net
    best, sequential = front.p1(INF), seq.p1(INF)
    assert best.peak < sequential.peak  # no cut through the 16x16 stage holds a whole tensor now
    e = _pair(best)
    assert (e.p, e.pipe[0]) == (0, 11) and e.scheme in ("recompute", "hcache")
    assert plan.schedule.pipelined == ((0, 1),)
    a, b = plan.schedule.items[:2]
    assert (a.p, a.q, b.p, b.q) == (e.p, e.pipe[0], e.pipe[0], e.q)
    # the search's pair cost is the packer's live bytes over the pair's steps (two computations)
    s0 = plan.item_steps[0][0]
    s1 = max(plan.item_steps[0][1], plan.item_steps[1][1])
    assert max(plan.profile[s0:s1 + 1]) == e.ram
    assert plan.item_steps[0][0] < plan.item_steps[1][0] < plan.item_steps[0][1]  # interleaved
    assert checker.problems(*checker_view(plan)) == []
    assert plan.arena_bytes < sequential.peak
    d = plan.to_json(g)
    assert d["fusion_blocks"][0]["pipelined_with"] == [e.pipe[0]] and d["layout"]["pipelined"] == [[0, 1]]
    assert FusedPlan.from_json(json.loads(json.dumps(d)), g).to_json(g) == d


def test_pull_order_runs_each_row_once_after_the_rows_it_reads(net):
    g, _, _, plan, _, _ = net
    a, b = plan.schedule.items[:2]
    order = pull_order([a, b])
    assert sorted(order) == [(0, i) for i in range(a.n_steps)] + [(1, j) for j in range(b.n_steps)]
    y = a.geo.tile_tensor
    made = 0
    for blk, i in order:
        if blk == 0:
            made = a.rows.bounds[i + 1]
            continue
        need = min(int(b.rows.hi[y][i]), a.rows.bounds[-1])
        # every row B reads exists, and A ran no tile row more than that took
        assert made == min(r for r in a.rows.bounds if r >= need)


@pytest.mark.parametrize("tiles", [(("hcache", 2, 1), ("recompute", 2, 4)), (("recompute", 4, 8), ("hcache", 4, 1))])
def test_pipelined_schedule_executes_bit_exact(net, tiles):
    """Coarse tilings of the same pair (the least-RAM plan's one-pixel tiles take a minute in numpy)."""
    g, front, _, _, x, _ = net
    sol = front.p1(INF)
    e = _pair(sol)
    (sa, ha, wa), (sb, hb, wb) = tiles
    edges = [dataclasses.replace(x_, scheme=sa, th=ha, tw=wa, pipe=(e.pipe[0], sb, hb, wb)) if x_ is e else x_
             for x_ in sol.edges]
    plan = plan_schedule(g, schedule_from_edges(g, edges, True), 16, 0.0)
    assert plan.schedule.pipelined and plan.window_base  # each tile row has its own window pool
    stats = {}
    out = run_fused(g, plan, [x], stats)
    assert all(np.array_equal(u, v) for u, v in zip(out, run_unplanned(g, [x])))
    assert stats["macs"] == plan.macs
    assert checker.problems(*checker_view(plan)) == []
    assert plan.arena_bytes >= plan.lower_bound_bytes == max(plan.profile)


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_pipelined_firmware_bit_exact(net, board, tmp_path):
    """The least-RAM plan as firmware: row functions called in the planned order, each block's window
    pool at its own offset per tile row; outputs equal TFLite Micro's, the arena is the plan's."""
    missing = targets.get(board).missing_tools()
    if missing:
        pytest.skip(f"{board} needs {', '.join(missing)}")
    g, _, _, plan, x, ref = net
    paths = pipeline.build(g, board, tmp_path, plan=plan)
    src = (tmp_path / "model.c").read_text()
    assert "fx_block0_row(row[0]++)" in src and "fx_block1_row(row[1]++)" in src and "fx0_base[" in src
    y, _, ram = runner.run(board, tmp_path, x)
    assert np.array_equal(y, ref)
    assert runner.symbols(targets.get(board), paths["elf"])["bt_arena"][1] == plan.arena_bytes == ram["arena_bytes"]
