"""Step `plan`: the memory plan of a model under plan options, as plan.json (sealed with what it is a
function of: the model's structure, the options, the planner's version)."""

from __future__ import annotations

import json

import dataclasses

from ..errors import PlanError
from ..options import PlanOptions
from ..plan.arena.planner import plan_arena
from ..plan.fusion.planner import plan_fused
from . import Outputs
from .readback import load_plan, made_from
from .skeleton import read_skeleton


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


def in_process(graph, options: PlanOptions) -> dict:
    """The default planner of run(): this process, no cache."""
    return plan_memory(graph, options).to_json(graph)


def run(graph, options=None, planner=in_process, board: str | None = None, name: str | None = None) -> Outputs:
    """planner(graph, PlanOptions) -> the plan's JSON map: how the plan is made (the shells pass the
    planner daemon's, whose answer is byte-identical). board: refuse, in one line naming the RAM the
    model needs and the option that would fit it, a plan the board cannot hold (firmware/fits.py), so
    a build system learns it here, not from the linker after compiling; on a board that picks its own
    plan (Target.auto_fit), the first plan of the fit ladder that fits it, with a note saying so (the
    seal stays on the options asked for). name: the model as messages name it (default: the graph's)."""
    options = PlanOptions.from_map(options)
    plan = planner(graph, options)
    notes = ()
    if board is not None:
        from .. import targets  # (with a board only: the boards and the fit checks are 0.02 s of a plan command)
        from ..firmware.fits import check_fits, fitting_plan  # (as targets)

        t = targets.get(board)
        named = graph if name is None else dataclasses.replace(graph, name=name)
        made = {}  # each plan the ladder made, by its object: its JSON as the planner gave it

        def replan(_g, opts):
            d = planner(graph, opts)
            p = load_plan(d, graph)
            made[id(p)] = d
            return p

        chosen, note = fitting_plan(named, load_plan(plan, graph), t, options, replan)
        if note:
            plan, notes = made[id(chosen)], (note,)
        check_fits(named, chosen, t, "optimize=ram", options)
    return Outputs({"plan.json": json.dumps(plan, indent=1) + "\n"}, {"plan.json": made_from(graph, options)},
                   notes)


def run_file(skeleton_path: str, options=None, planner=in_process, board: str | None = None,
             name: str | None = None) -> Outputs:
    """The step as build rules run it: from skeleton.json."""
    return run(read_skeleton(skeleton_path).graph, options, planner, board, name)
