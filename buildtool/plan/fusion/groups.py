"""Channel groups: after the search, how many channels each channelwise window makes per call.

A channelwise window (geometry.channelwise: a CONV_2D's output read only by a depthwise) holds G
channels: the conv makes G output channels per call and the depthwise runs on the G-channel window,
so set-up and input loads are shared by G channels. The window's bytes grow G-fold and are planned:
choose_groups grows a block's window pool only where the packed layout has room for it over the
pool's whole lifetime (every other buffer stays where it is), so the arena never grows.
"""

from __future__ import annotations

import dataclasses

from ..arena.packers import profile
from .. import align_up
from .lifetimes import buffer_specs, layout, window_pool
from .schedule import BlockRun, FusedPlan, Schedule

# tried largest first; no 2: the kernel sets block 4 channels, and 2-channel calls run their scalar
# remainders (slower than the one-channel paths on cortex-m4: benchmarks/fusion.py --instructions)
GROUPS = (16, 8, 4)


def group_for(n_channels: int, cap: int) -> int:
    """The largest G of GROUPS, at most cap, dividing n_channels (1: none)."""
    return next((n for n in GROUPS if n <= cap and n_channels % n == 0), 1)


def with_groups(g, blk: BlockRun, cap: int, only: int | None = None) -> BlockRun:
    """blk with every channelwise window (or just window `only`) made group_for(its channels, cap)
    channels at a time."""
    groups = {t: group_for(g.tensors[t].shape[3], cap) for t in blk.windows
              if blk.channelwise(g, t) and only in (None, t)}
    return dataclasses.replace(blk, groups={t: n for t, n in sorted(groups.items()) if n > 1})


def _variants(g, blk: BlockRun):
    """Grouped versions of blk, best first: all its channelwise windows at each cap of GROUPS, then
    (with several) each window alone."""
    chw = [t for t in blk.windows if blk.channelwise(g, t)]
    for only in [None] + (chw if len(chw) > 1 else []):
        for cap in GROUPS:
            v = with_groups(g, blk, cap, only)
            if v.groups:
                yield v


def first_fit(j: int, size: int, offs: list, sizes: list, lives: list, top: int, align: int) -> int | None:
    """The lowest aligned offset where buffer j, `size` bytes, overlaps no buffer live at any of its
    steps and ends within top (None: nowhere)."""
    f, l = lives[j]
    taken = sorted((offs[i], offs[i] + align_up(max(sizes[i], 1), align)) for i in range(len(offs))
                   if i != j and lives[i][0] <= l and f <= lives[i][1])
    at = 0
    for a, b in taken:
        if at + size <= a:
            break
        at = max(at, align_up(b, align))
    return at if at + size <= top else None


def choose_groups(g, plan: FusedPlan, align: int) -> FusedPlan:
    """plan with channel groups where they cost no arena bytes: block by block, the first of its
    _variants whose grown window pool first_fit places in the plan's layout. Deterministic; plan
    itself when every block keeps G = 1."""
    sched = plan.schedule
    piped = {k for grp in sched.pipelined for k in grp}  # their pools are per tile row: left at G = 1
    specs, pools, _, alias = buffer_specs(g, sched, align)
    pool_of = {sp[0][1]: j for j, sp in enumerate(specs) if sp[0][0] == "p"}
    offs, sizes = [b.offset for b in plan.buffers], [sp[1] for sp in specs]
    lives = [(b.first_step, b.last_step) for b in plan.buffers]
    items = list(sched.items)
    for k, it in enumerate(items):
        if k in piped or k not in pool_of or not isinstance(it, BlockRun):
            continue
        for blk in _variants(g, it):
            inner, size = window_pool(g, blk, align)
            at = first_fit(pool_of[k], size, offs, sizes, lives, plan.arena_bytes, align)
            if at is not None:
                items[k], pools[k], offs[pool_of[k]], sizes[pool_of[k]] = blk, inner, at, size
                break
    if items == list(sched.items):
        return plan
    return _placed(g, plan, dataclasses.replace(sched, items=items), specs, sizes, pools, alias, offs, align)


def _placed(g, plan: FusedPlan, sched: Schedule, specs: list, sizes: list, pools: dict, alias: dict,
            offs: list, align: int) -> FusedPlan:
    """plan's layout with the buffers at offs and the sizes of sched (the grown window pools)."""
    specs = [(sp[0], n) + tuple(sp[2:]) for sp, n in zip(specs, sizes)]
    buffers, bands, woff, aoff, base = layout(specs, pools, alias, offs)
    live = profile([(align_up(max(n, 1), align) // align, b.first_step, b.last_step)
                    for n, b in zip(sizes, buffers)], len(plan.profile))
    return dataclasses.replace(plan, schedule=sched, buffers=buffers, bands=bands, window_offset=woff,
                               acc_offset=aoff, window_base=base, profile=[u * align for u in live],
                               lower_bound_bytes=max(plan.lower_bound_bytes, max(live) * align))


def grouped(sched: Schedule) -> dict:
    """{item: {window: G}} of the schedule's blocks with channel groups."""
    return {k: dict(it.groups) for k, it in enumerate(sched.items) if isinstance(it, BlockRun) and it.groups}
