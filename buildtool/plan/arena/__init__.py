"""Arena planning: liveness, lower bound, packers, exact solver, order search, checker.

The names below load their module on first use, so importing one part (the checker, the packers)
does not import the planner and its solver.
"""

import importlib

_WHERE = {"naive_plan": "naive", "plan_arena": "planner", "check": "checker", "problems": "checker"}
__all__ = ["naive_plan", "plan_arena", "check", "problems"]


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
