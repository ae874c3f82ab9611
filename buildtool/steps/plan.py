"""Step `plan`: the memory plan of a model under plan options, as plan.json (sealed with what it is a
function of: the model's structure, the options, the planner's version)."""

from __future__ import annotations

import json

import dataclasses

from ..options import PlanOptions
from ..plan.planner import plan_memory  # (the step's planner, and this module's name for it)
from . import Outputs
from .readback import load_plan, made_from
from .skeleton import read_skeleton


def in_process(graph, options: PlanOptions) -> dict:
    """The default planner of run(): this process, no cache."""
    return plan_memory(graph, options).to_json(graph)


def run(graph, options=None, planner=in_process, board: str | None = None, name: str | None = None,
        measurer=None) -> Outputs:
    """planner(graph, PlanOptions) -> the plan's JSON map: how the plan is made (the shells pass the
    planner daemon's, whose answer is byte-identical). board: refuse, in one line naming the RAM the
    model needs and the option that would fit it, a plan the board cannot hold (firmware/fits.py), so
    a build system learns it here, not from the linker after compiling; on a board that picks its own
    plan (Target.auto_fit), the first plan of the fit ladder that fits it, with a note saying so (the
    seal stays on the options asked for). name: the model as messages name it (default: the graph's).
    measurer(graph, Target, options) -> measure(plan) -> Code, or None: on a board running its code from RAM,
    each plan's code measured and counted in the fit (steps.code.measurer; the shells pass it)."""
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

        measure = measurer(named, t, options) if measurer else None
        chosen, note = fitting_plan(named, load_plan(plan, graph), t, options, replan, measure)
        if note:
            plan, notes = made[id(chosen)], (note,)
        check_fits(named, chosen, t, "optimize=ram", options, measure(chosen) if measure else None)
    return Outputs({"plan.json": json.dumps(plan, indent=1) + "\n"}, {"plan.json": made_from(graph, options)},
                   notes)


def run_file(skeleton_path: str, options=None, planner=in_process, board: str | None = None,
             name: str | None = None, measurer=None) -> Outputs:
    """The step as build rules run it: from skeleton.json."""
    return run(read_skeleton(skeleton_path).graph, options, planner, board, name, measurer)
