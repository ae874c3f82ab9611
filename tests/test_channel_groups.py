"""Channel-group windows (fusion/groups.py): a channelwise window holds G channels, the conv makes G
output channels per call and the depthwise runs on the G-channel window.

One least-RAM plan of mcunet-vww1 (whose post-pass keeps G > 1 for some blocks) is checked against
the plan the post-pass started from (G = 1): never a larger arena, the windows' bytes in the packed
layout, the independent arena checker, the JSON round trip, and bit-exact outputs (numpy executor,
cortex-m4 and riscv32 firmware in QEMU) against TFLite Micro.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import fixed_input, tflm_run

from buildtool import pipeline, targets, zoo
from buildtool.plan import kinds
from buildtool.firmware import runner
from buildtool.codegen.fused_c import generate
from buildtool.errors import PlanError
from buildtool.plan.fusion.schedule import FusedPlan
from buildtool.plan.fusion import groups, planner
from buildtool.plan.fusion.planner import plan_fused
from buildtool.plan.fusion.schedule import make_block
from buildtool.plan.fusion.execute import run_fused
from buildtool.model.writer import serialize

MODEL = "mcunet-vww1"


@pytest.fixture(scope="module")
def case():
    """(graph, tflite bytes, plan with groups, the G = 1 plan the post-pass started from)."""
    g = zoo.build(MODEL)
    seen = []
    real = groups.choose_groups

    def spy(g, plan, align):
        seen.append(plan)
        return real(g, plan, align)

    planner.choose_groups = spy  # (a module fixture: no monkeypatch)
    try:
        plan = plan_fused(g, optimize="ram", time_budget=0.3)
    finally:
        planner.choose_groups = real
    return g, serialize(g), plan, seen[0]


@pytest.fixture(scope="module")
def reference(case):
    g, data, _, _ = case
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    return x, tflm_run(data, [x])[0]


def test_groups_cost_no_arena_and_are_packed(case):
    g, _, plan, base = case
    chosen = groups.grouped(plan.schedule)
    assert chosen, "the post-pass kept G = 1 everywhere: nothing to test"
    assert not groups.grouped(base.schedule)
    assert plan.arena_bytes <= base.arena_bytes
    assert kinds.problems(plan, g) == [] and kinds.problems(base, g) == []
    assert max(b.offset + b.size for b in plan.buffers) <= plan.arena_bytes
    for k, ws in chosen.items():
        blk, old = plan.schedule.items[k], base.schedule.items[k]
        for t, n in ws.items():
            assert n in groups.GROUPS and g.tensors[t].shape[3] % n == 0 and blk.channelwise(g, t)
            assert blk.window_shape(g, t) == old.window_shape(g, t)[:2] + (n,)
            off, size = plan.window_offset[(k, t)], int(np.prod(blk.window_shape(g, t)))
            pool = [b for b in plan.buffers if b.kind == "windows" and b.offset <= off
                    and off + size <= b.offset + b.size and b.first_step <= plan.item_steps[k][0]]
            assert pool, f"window {t} of item {k} ({size} B at {off}) lies in no packed window buffer"
    # blocks the post-pass left alone are the base plan's blocks
    for k, it in enumerate(plan.schedule.items):
        if k not in chosen and not isinstance(it, int):
            assert (it.p, it.q, it.rows.bounds, it.cols.bounds) == (base.schedule.items[k].p, base.schedule.items[k].q,
                                                                     base.schedule.items[k].rows.bounds,
                                                                     base.schedule.items[k].cols.bounds)


def test_groups_round_trip_and_reach_the_c_code(case):
    g, _, plan, base = case
    d = json.loads(json.dumps(plan.to_json(g)))
    back = FusedPlan.from_json(d, g)
    assert back.to_json(g) == d and groups.grouped(back.schedule) == groups.grouped(plan.schedule)
    code, base_code = generate(g, plan, "cortex-m4")[0], generate(g, base, "cortex-m4")[0]
    for k, ws in groups.grouped(plan.schedule).items():  # a window's channel count is its pixel stride in C
        for t, n in ws.items():
            def window(ps):
                return rf"fx{k}_t{t}_c\[c\]\[2\], \d+, {ps}, 0\}}"
            assert re.search(window(n), code) and re.search(window(1), base_code) and not re.search(window(1), code)
    assert generate(g, plan, "cortex-m4")[0] == code
    blk = next(it for it in plan.schedule.items if not isinstance(it, int) and it.groups)
    t = next(iter(blk.groups))
    with pytest.raises(PlanError, match="cannot be made 5 channels at a time"):
        make_block(g, blk.p, blk.q, blk.scheme, blk.rows.bounds, blk.cols.bounds, blk.streamed, {t: 5})


def test_groups_numpy_executor_bit_exact(case, reference):
    g, _, plan, base = case
    x, ref = reference
    stats = {}
    assert np.array_equal(run_fused(g, plan, [x], stats)[0], ref)
    assert stats["macs"] == plan.macs == base.macs


@pytest.mark.slow
@pytest.mark.parametrize("board", ["cortex-m4", "riscv32"])
def test_groups_firmware_bit_exact(case, reference, board, tmp_path):
    missing = targets.get(board).missing_tools()
    if missing:
        pytest.skip(f"{board} needs {', '.join(missing)}")
    g, _, plan, _ = case
    x, ref = reference
    paths = pipeline.build(g, board, tmp_path, plan=plan)
    y, _, ram = runner.run(board, tmp_path, x)
    assert np.array_equal(y, ref)
    assert runner.symbols(targets.get(board), paths["elf"])["bt_arena"][1] == plan.arena_bytes == ram["arena_bytes"]
