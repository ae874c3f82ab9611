"""Does a model fit its board: the arena (its RAM part) and stack against the board's RAM, the weights
against its flash or memory regions, refused in one line before anything is written or linked, with
the option that would fit it when the least-RAM fusion plan would (the only firmware module that runs
the planner)."""

from __future__ import annotations

from .. import targets
from ..errors import BuildtoolError
from ..model.ir import Graph
from ..options import PlanOptions
from ..plan import first_bytes
from ..plan.fusion.planner import plan_fused
from ..plan.fusion.search import search_front
from ..plan.regions import place, place_arena
from ..units import exact
from .toolchain import FirmwareError, ram_size


def optimize_ram_hint(g: Graph, plan, t: targets.Target, options: PlanOptions, how: str = "--optimize ram") -> str:
    """'; with --optimize ram it fits (...)' when the least-RAM fusion plan would fit the board, else ''
    (how: the option as the caller spells it).

    The fusion search's least peak is a lower bound of every packed fused arena, so the
    (slower) packing only runs when that bound leaves room for the stack.
    """
    if options.fused or plan.regions(g):  # already optimised (or asked to be): nothing to suggest
        return ""

    align = options.align
    room = t.ram_bytes - t.stack_bytes
    try:
        front = search_front(g, False, align)
        if not front.solutions or min(s.peak for s in front.solutions) > room:
            return ""
        for cap, spelled in ((None, how), ("none", f"{how} --max-mac-overhead none")):
            fused = plan_fused(g, optimize="ram", align=align, time_budget=options.time_budget,
                               max_mac_overhead=cap)
            if fused.arena_bytes <= room:
                return (f"; with {spelled} it fits (arena {exact(fused.arena_bytes)} + stack {exact(t.stack_bytes)} = "
                        f"{exact(fused.arena_bytes + t.stack_bytes)})")
    except BuildtoolError:  # a graph the fusion planner does not take: no hint
        return ""
    return ""


def check_fits(g: Graph, plan, t: targets.Target, hint: str = "--optimize ram", options=None) -> None:
    """Refuse, before anything is written or linked, a model whose arena (its RAM part, when the
    board's regions take the rest: regions.place_arena) and stack exceed the board's RAM or whose
    weights exceed its flash: one line naming the board's size and the
    need, suggesting --optimize ram (or hint: how the caller spells it) when the least-RAM
    fusion plan would fit."""

    plan = place_arena(g, plan, t)  # on a board with regions, arena buffers RAM cannot hold go elsewhere
    if t.ram_bytes and first_bytes(plan) + t.stack_bytes > t.ram_bytes:
        need = first_bytes(plan) + t.stack_bytes
        raise FirmwareError(f"{g.name} does not fit board {t.name}: it needs {exact(need)} of RAM (arena "
                            f"{exact(first_bytes(plan))} + stack {exact(t.stack_bytes)}), the board has {ram_size(t)}"
                            + optimize_ram_hint(g, plan, t, PlanOptions.from_map(options), hint))
    if t.regions:  # the placement fits every weight in a region, or says by how much it cannot
        place(g, plan, t)
    elif t.flash_bytes and g.params_bytes() > t.flash_bytes:
        raise FirmwareError(f"{g.name} does not fit board {t.name}: its weights need {exact(g.params_bytes())} of "
                            f"flash, the board has {exact(t.flash_bytes)}")
