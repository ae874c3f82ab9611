"""The two kinds of plan as one: read back from JSON, run in the numpy executor, checked.

A plan is data (`buildtool.plan`: ArenaPlan, layer by layer; `plan.fusion.FusedPlan`, operator
splitting and patch-based fusion). What differs per kind lives with the stage that owns it and is
chosen here by the plan's type: the executor (`plan.arena.execute`, `plan.fusion.execute`) and the
independent checker (`plan.arena.checker`, on a fused plan's buffer view). Code generation keeps its
own table (`codegen.emit`).
"""

from __future__ import annotations

from functools import singledispatch

from . import ArenaPlan, Plan
from .arena import checker
from .arena.execute import run as run_arena
from .fusion.execute import run_fused
from .fusion.lifetimes import checker_view
from .fusion.schedule import BlockRun, FusedPlan


def plan_from_json(d: dict, g=None) -> Plan:
    """A plan read back from its JSON (g: the graph it was made for; a fused plan needs it)."""
    if "input_accounting" in d:  # only a fused plan says how its input is counted
        return FusedPlan.from_json(d, g)
    return ArenaPlan.from_json(d)


@singledispatch
def execute(plan, g, inputs: list) -> list:
    """The graph's outputs for inputs, computed by the numpy reference executor inside the plan's arena."""
    raise TypeError(f"not a plan: {type(plan).__name__}")


@execute.register
def _(plan: ArenaPlan, g, inputs: list) -> list:
    return run_arena(g, plan, inputs)


@execute.register
def _(plan: FusedPlan, g, inputs: list) -> list:
    return run_fused(g, plan, inputs)


@singledispatch
def problems(plan, g) -> list:
    """What the independent checker finds wrong with the plan for g ([] when sound)."""
    raise TypeError(f"not a plan: {type(plan).__name__}")


@problems.register
def _(plan: ArenaPlan, g) -> list:
    return checker.problems(g, plan)


@problems.register
def _(plan: FusedPlan, g) -> list:
    ran = [k for it in plan.schedule.items for k in (range(it.p, it.q) if isinstance(it, BlockRun) else [it])]
    if sorted(ran) != list(range(len(g.operators))):  # (a plan of another model)
        return [f"the schedule does not run each of the model's {len(g.operators)} operators once"]
    return checker.problems(*checker_view(plan))


__all__ = ["plan_from_json", "execute", "problems"]
