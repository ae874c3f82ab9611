"""Memory optimisers: operator splitting and patch-based multi-stage fusion.

plan_fused() (planner.py) is the one entry point the CLI uses; run the result with
buildtool.fusion_exec.run_fused().
"""

from ..options import DEFAULT_MAX_MAC_OVERHEAD, NO_CAP, parse_bytes
from .lifetimes import checker_view
from .planner import mac_cap, plan_from_front, plan_fused, plan_schedule
from .schedule import BlockRun, FusedPlan, Schedule, schedule_from_edges
from .search import Front, search_front
from .split import parse_split

__all__ = ["DEFAULT_MAX_MAC_OVERHEAD", "NO_CAP", "mac_cap", "plan_fused", "plan_from_front", "plan_schedule",
           "parse_bytes", "parse_split", "checker_view", "FusedPlan", "BlockRun", "Front", "Schedule",
           "schedule_from_edges", "search_front"]
