"""Memory optimisers: operator splitting and patch-based multi-stage fusion.

plan_fused() (planner.py) is the one entry point the CLI uses; run the result with
buildtool.plan.fusion.execute.run_fused().
"""

import importlib

# name -> the module that defines it, loaded on first use (the schedule IR without the search)
_WHERE = {"DEFAULT_MAX_MAC_OVERHEAD": "...options", "NO_CAP": "...options", "parse_bytes": "...options",
          "checker_view": ".lifetimes", "mac_cap": ".planner", "plan_from_front": ".planner",
          "plan_fused": ".planner", "plan_schedule": ".planner", "BlockRun": ".schedule", "FusedPlan": ".schedule",
          "Schedule": ".schedule", "schedule_from_edges": ".schedule", "Front": ".search", "search_front": ".search",
          "parse_split": ".split"}
__all__ = list(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
