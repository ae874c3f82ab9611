"""Arena planning: liveness, lower bound, packers, exact solver, order search, checker."""

from .naive import naive_plan

__all__ = ["naive_plan"]
