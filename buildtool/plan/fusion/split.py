"""Operator splitting (XMOS AN02008 style): a region of operators top..bottom computed in N
horizontal slices of its last output, each slice recomputing the rows it needs above.

A split region is a fusion block with full-width row tiles (the hcache scheme with one
column tile), so it shares the cost model, the arena plan and the executor with fusion.
`auto` searches every set of non-overlapping regions and slice counts at once with the
same exact DAG search, restricted to such blocks.
"""

from __future__ import annotations

from ...errors import PlanError
from ...options import parse_split  # noqa: F401  (the one parser; re-exported by fusion)
from .dag import block_ok, build_network
from .geometry import even_bounds, geometry
from .schedule import Schedule, make_block

def split_schedule(g, splits, streamed: bool = False) -> Schedule:
    """The schedule running each region (top, bottom, n) in n row slices, every other operator as usual."""
    net = build_network(g, streamed)
    regions = sorted(splits)
    for (t0, b0, _), (t1, _, _) in zip(regions, regions[1:]):
        if t1 <= b0:
            raise PlanError(f"split regions {t0}:{b0} and {t1}:... overlap; give disjoint operator ranges")
    items, k = [], 0
    ins = tuple(g.inputs) if streamed else ()
    for top, bottom, n in regions:
        if bottom >= len(g.operators):
            raise PlanError(f"split region {top}:{bottom}: the model has only {len(g.operators)} operators")
        if not block_ok(net, top, bottom + 1) or (bottom == top and geometry(g, [top]).reduce_op >= 0):
            raise PlanError(f"operators {top}..{bottom} cannot be split: every operator must be a convolution, "
                            f"pooling or same-shape element-wise op, and only the last one's output may be used "
                            f"after the region")
        items.extend(range(k, top))
        y = g.tensors[geometry(g, range(top, bottom + 1)).tile_tensor].shape
        items.append(make_block(g, top, bottom + 1, "hcache", even_bounds(y[1], n), (0, y[2]),
                                ins if top == 0 else ()))
        k = bottom + 1
    items.extend(range(k, len(g.operators)))
    if streamed and not (items and not isinstance(items[0], int)):
        raise PlanError("--input-streamed needs a split region that starts at operator 0")
    return Schedule(items, streamed, "split")
