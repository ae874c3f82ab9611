"""Every setting of the fusion tables (docs/fusion.md, msf-CNN's Table 1 layout: P1 at F = 1.1 .. inf,
P2 at 16 .. 256 kB, input streamed and input in the arena) runs with outputs byte-identical to the
unfused network: the reference executor runs the plans of the smallest table model tile by tile in
the planned arena, and the host firmware (the generated tile loops, the same schedule) runs every
table model's. Settings that give the same plan run once; an unreachable RAM limit is a PlanError."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import fixed_input
from test_fusion import _check_plan

from buildtool import pipeline, zoo
from buildtool.firmware import runner
from buildtool.serve.cache import Memo
from buildtool.errors import PlanError
from buildtool.plan.arena.execute import run_unplanned
from buildtool.plan.fusion.planner import plan_fused

TABLE_MODELS = ["mcunet-vww1", "mbv2-w0.35", "mcunet-in3", "mobilenetv2"]
P1 = [dict(optimize="ram", max_mac_overhead=f) for f in (1.1, 1.2, 1.3, 1.4, 1.5, "none")]
P2 = [dict(optimize="macs", ram_limit=kb * 1000) for kb in (16, 32, 64, 128, 256)]


def table_plans(g, streamed: bool) -> list:
    """The distinct plans of one table row (one model, one accounting)."""
    memo, seen, plans = Memo(), set(), []
    for setting in P1 + P2:
        try:
            plan = plan_fused(g, input_streamed=streamed, time_budget=0, memo=memo, **setting)
        except PlanError as e:
            assert setting in P2 and "smallest reachable peak" in str(e)
            continue
        if setting in P2:
            assert plan.arena_bytes <= setting["ram_limit"]
        key = json.dumps(plan.to_json(g), sort_keys=True)
        if key not in seen:
            seen.add(key)
            plans.append(plan)
    assert plans
    return plans


def extremes(g, plans: list) -> list:
    """The least-RAM plan, the most-RAM plan and the plan with the most fusion blocks (distinct)."""
    blocks = [len(p.to_json(g)["fusion_blocks"]) for p in plans]
    picks = [min(range(len(plans)), key=lambda i: plans[i].arena_bytes),
             max(range(len(plans)), key=lambda i: plans[i].arena_bytes), max(range(len(plans)), key=blocks.__getitem__)]
    return [plans[i] for i in sorted(set(picks))]


@pytest.mark.slow
def test_reference_executor_runs_the_streamed_table_extremes():
    """The numpy executor on the streamed row (rows pulled from the sensor: its hardest path), on its
    extreme plans (the executor runs tile by tile in numpy: ~30 s a plan, the least-RAM one, a pipelined
    pair at 7.5x MACs, about a minute); every setting of both rows
    runs as firmware below."""
    g = zoo.build("mcunet-vww1")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])
    plans = table_plans(g, True)
    picked = extremes(g, plans)
    assert len(plans) > len(picked) >= 2
    for plan in picked:
        _check_plan(g, plan, x, ref)


@pytest.mark.slow
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "in-arena"])
@pytest.mark.parametrize("name", TABLE_MODELS)
def test_firmware_runs_every_table_setting(name, streamed, tmp_path):
    g = zoo.build(name)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = run_unplanned(g, [x])[0]
    for k, plan in enumerate(table_plans(g, streamed)):
        out = tmp_path / str(k)
        pipeline.build(g, "host", out, plan=plan)
        y, _, ram = runner.run("host", out, x)
        assert np.array_equal(y, ref), (name, streamed, plan.to_json(g)["fusion_blocks"])
        assert ram["arena_bytes"] == plan.arena_bytes
