"""Step `plan`: the memory plan of a model under plan options, as plan.json (sealed with what it is a
function of: the model's structure, the options, the planner's version)."""

from __future__ import annotations

import json

import dataclasses

from .. import targets
from ..firmware.fits import check_fits
from ..options import PlanOptions
from ..plan.arena.planner import plan_arena
from ..plan.fusion.planner import plan_fused
from . import Outputs
from .readback import load_plan, made_from
from .skeleton import read_skeleton


def plan_memory(graph, options: PlanOptions | None = None, memo=None):
    """The plan of graph under options: the layer-by-layer arena plan, or with optimize / splits /
    input_streamed the operator-splitting / fusion plan. The only place that chooses."""
    options = PlanOptions.from_map(options)
    if options.fused:
        return plan_fused(graph, memo=memo, **options.fused_kwargs())
    return plan_arena(graph, **options.arena_kwargs())


def in_process(graph, options: PlanOptions) -> dict:
    """The default planner of run(): this process, no cache."""
    return plan_memory(graph, options).to_json(graph)


def run(graph, options=None, planner=in_process, board: str | None = None, name: str | None = None) -> Outputs:
    """planner(graph, PlanOptions) -> the plan's JSON map: how the plan is made (the shells pass the
    planner daemon's, whose answer is byte-identical). board: refuse, in one line naming the RAM the
    model needs and the option that would fit it, a plan the board cannot hold (firmware/fits.py), so
    a build system learns it here, not from the linker after compiling; name: the model as messages
    name it (default: the graph's)."""
    options = PlanOptions.from_map(options)
    plan = planner(graph, options)
    if board is not None:
        named = graph if name is None else dataclasses.replace(graph, name=name)
        check_fits(named, load_plan(plan, graph), targets.get(board), "optimize=ram", options)
    return Outputs({"plan.json": json.dumps(plan, indent=1) + "\n"}, {"plan.json": made_from(graph, options)})


def run_file(skeleton_path: str, options=None, planner=in_process, board: str | None = None,
             name: str | None = None) -> Outputs:
    """The step as build rules run it: from skeleton.json."""
    return run(read_skeleton(skeleton_path).graph, options, planner, board, name)
