"""MACs of each profiled region of a firmware (an operator, or a fused block), for the run report."""

from __future__ import annotations

from .ops import op_macs


def region_macs(g, plan) -> list:
    """MACs per region in the order of plan.manifest_order: an operator's MACs, or those a fused
    block executes (its recomputed rows included)."""
    schedule = getattr(plan, "schedule", None)
    items = schedule.items if schedule is not None else plan.manifest_order(g)[0]
    return [int(it.macs(g)) if hasattr(it, "macs") else op_macs(g, g.operators[it]) for it in items]


__all__ = ["region_macs"]
