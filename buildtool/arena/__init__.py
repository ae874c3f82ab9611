"""Arena planning: liveness, lower bound, packers, exact solver, order search, checker."""

from .checker import check, problems
from .naive import naive_plan
from .planner import plan_arena

__all__ = ["naive_plan", "plan_arena", "check", "problems"]
