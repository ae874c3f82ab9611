"""plan_memory: the one place that chooses the planner of a graph under plan options (layer by layer, or
operator splitting / fusion, and whether an optimiser's plan beats doing nothing). Here, below the steps,
so that a process that only plans (`buildtool plan --no-daemon`) loads no plan read-back or skeleton."""

from __future__ import annotations

from ..errors import PlanError
from ..options import PlanOptions
from .arena.planner import plan_arena
from .fusion.planner import plan_fused


def plan_memory(graph, options: PlanOptions | None = None, memo=None):
    """The plan of graph under options: the layer-by-layer arena plan, or with optimize / splits /
    input_streamed the operator-splitting / fusion plan. The only place that chooses.

    An optimiser never returns more than doing nothing: under --optimize ram and --split auto the
    layer-by-layer plan (its own order search and exact packer) is kept when its arena is smaller than
    the best fused plan's; under --optimize macs when it fits the RAM limit with fewer MACs, or when it
    fits a limit the fused search could not meet. Explicit splits and a streamed input (never whole
    in RAM) are what the user asked for and are returned as planned."""
    options = PlanOptions.from_map(options)
    if not options.fused:
        return plan_arena(graph, **options.arena_kwargs())
    if options.input_streamed or options.splits not in (None, "auto"):
        return plan_fused(graph, memo=memo, **options.fused_kwargs())
    plain = plan_arena(graph, **options.arena_kwargs())
    fits = options.ram_limit is None or plain.arena_bytes <= options.ram_limit
    try:
        fused = plan_fused(graph, memo=memo, **options.fused_kwargs())
    except PlanError:
        if options.ram_limit is not None and fits:
            return plain
        raise
    if options.optimize == "macs":
        return plain if fits and plain.macs < fused.macs else fused
    return plain if plain.arena_bytes < fused.arena_bytes else fused
