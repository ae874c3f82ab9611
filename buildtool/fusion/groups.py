"""Channel groups: after the search, how many channels each channelwise window makes per call.

A channelwise window (costs.channelwise: a CONV_2D's output read only by a depthwise) holds G
channels: the conv makes G output channels per call and the depthwise runs on the G-channel window,
so set-up and input loads are shared by G channels. The window's bytes grow G-fold and are packed
like any window; choose_groups keeps the largest G for which the re-packed arena is not larger.
"""

from __future__ import annotations

import dataclasses

from .lifetimes import window_pool
from .schedule import BlockRun, FusedPlan, Schedule

# tried largest first; no 2: the kernel sets block 4 channels, and 2-channel calls run their scalar
# remainders (slower than the one-channel paths on cortex-m4: benchmarks/fusion.py --instructions)
GROUPS = (16, 8, 4)


def group_for(n_channels: int, cap: int) -> int:
    """The largest G of GROUPS, at most cap, dividing n_channels (1: none)."""
    return next((n for n in GROUPS if n <= cap and n_channels % n == 0), 1)


def with_groups(g, blk: BlockRun, cap: int) -> BlockRun:
    """blk with every channelwise window made group_for(its channels, cap) channels at a time."""
    groups = {t: group_for(g.tensors[t].shape[3], cap) for t in blk.windows if blk.channelwise(g, t)}
    return dataclasses.replace(blk, groups={t: n for t, n in sorted(groups.items()) if n > 1})


def _fits(g, plan: FusedPlan, k: int, blk: BlockRun, align: int) -> bool:
    """Can the grown window pool of item k fit under the plan's arena at its steps (live bytes there
    plus the pool's growth; a cheap filter before packing)?"""
    grow = window_pool(g, blk, align)[1] - window_pool(g, plan.schedule.items[k], align)[1]
    s0, s1 = plan.item_steps[k]
    return max(plan.profile[s0:s1 + 1], default=0) + grow <= plan.arena_bytes


def _best(g, plan: FusedPlan, k: int, cap: int, align: int) -> BlockRun:
    """Item k at the largest G within cap whose grown pool passes _fits (the block itself: none)."""
    blk = plan.schedule.items[k]
    for c in GROUPS:
        if c <= cap:
            cand = with_groups(g, blk, c)
            if cand.groups and _fits(g, plan, k, cand, align):
                return cand
    return blk


def _candidates(g, plan: FusedPlan, ks: list, align: int):
    """Group assignments {item: block} to try, best first: every block at each cap of GROUPS, then
    the blocks with the most headroom at the largest cap, half of them, a quarter, ... one."""
    for cap in GROUPS:
        yield {k: _best(g, plan, k, cap, align) for k in ks}
    top = {k: _best(g, plan, k, GROUPS[0], align) for k in ks}
    ranked = sorted((k for k in ks if top[k].groups), key=lambda k: (max(plan.profile[
        plan.item_steps[k][0]:plan.item_steps[k][1] + 1]) + window_pool(g, top[k], align)[1], k))
    n = len(ranked) // 2
    while n >= 1:
        yield {k: top[k] for k in ranked[:n]}
        n //= 2


def choose_groups(g, plan: FusedPlan, align: int, pack) -> FusedPlan:
    """plan with channel groups where they cost no arena bytes: the first of _candidates whose
    schedule, re-packed by pack(schedule), has an arena <= plan's. Deterministic; plan itself when
    no candidate fits."""
    items = plan.schedule.items
    ks = [k for k, it in enumerate(items) if isinstance(it, BlockRun) and any(it.channelwise(g, t) for t in it.windows)]
    tried = set()
    for cand in _candidates(g, plan, ks, align):
        key = tuple((k, tuple(sorted(b.groups.items()))) for k, b in sorted(cand.items()) if b.groups)
        if not key or key in tried:
            continue
        tried.add(key)
        new = [cand.get(k, it) for k, it in enumerate(items)]
        packed = pack(dataclasses.replace(plan.schedule, items=new))
        if packed.arena_bytes <= plan.arena_bytes:
            return packed
    return plan


def grouped(sched: Schedule) -> dict:
    """{item: {window: G}} of the schedule's blocks with channel groups."""
    return {k: dict(it.groups) for k, it in enumerate(sched.items) if isinstance(it, BlockRun) and it.groups}
