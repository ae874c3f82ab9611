"""model.c / model.h for a plan of either kind: the code generator each plan kind has.

The layer-by-layer plan (ArenaPlan) is emitted by `model_c.generate`, one kernel call per operator;
a fused or split plan (FusedPlan) by `fused_c.generate`, which drives the same emitter through its
tile schedule.
"""

from __future__ import annotations

from functools import singledispatch

from ..plan import ArenaPlan
from ..plan.fusion.schedule import FusedPlan
from . import fused_c, model_c


@singledispatch
def emit_c(plan, g, board: str, weights_align: int, **names) -> tuple:
    """(model.c, model.h) text for graph g run with plan on board; names: prefix (public symbols
    <prefix>_init, ...) and arena_base (an offset into a shared arena)."""
    raise TypeError(f"not a plan: {type(plan).__name__}")


@emit_c.register
def _(plan: ArenaPlan, g, board: str, weights_align: int, **names) -> tuple:
    return model_c.generate(g, plan, board, weights_align, **names)


@emit_c.register
def _(plan: FusedPlan, g, board: str, weights_align: int, **names) -> tuple:
    return fused_c.generate(g, plan, board, weights_align, **names)


__all__ = ["emit_c"]
