"""Turn a chosen path (plain operators, fusion blocks, split regions) into an executable schedule
and give every buffer a place in one arena, packed by the arena planner's packers.

Steps are the operators of the model order. A whole tensor lives from its producer to its
last reader; when either sits inside a block it lives over the whole block (a tile loop
revisits every operator of the block). Window buffers of cached schemes (hcache, linebuf)
keep data from tile to tile, so they live over the whole block; those of the recompute
scheme live from their producer to their last reader within the block (tile-steps), so
buffers of different layers share bytes. A MEAN that accumulates tiles owns an int32
accumulator over the block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import PlanError
from ..ir import Graph, Tensor
from ..ops import graph_macs, op_macs
from ..plan import ArenaPlan, Buffer, TensorPlace, align_up
from .costs import (Geometry, accumulator_bytes, cached_1d, geometry, macs_per_pixel, recompute_1d,
                    uniform_bounds, window_lifetimes, window_tensors)

# per-axis mode of each scheme: rows, columns
MODES = {"recompute": ("rec", "rec"), "hcache": ("rec", "cache"), "linebuf": ("cache", "cache")}


@dataclass
class AxisPlan:
    """One axis of one block for one tiling. rec: lo/hi[tensor] per tile; cache: hi[tensor] per step."""

    mode: str
    bounds: tuple
    lo: dict
    hi: dict
    ext: dict  # window tensor -> buffer extent along this axis
    work: dict  # tensor -> positions computed over the whole axis


def axis_plan(geo: Geometry, axis: int, mode: str, bounds: tuple) -> AxisPlan:
    if mode == "rec":
        iv = recompute_1d(geo.steps, axis, geo.tile_tensor, [bounds])
        lo = {t: v[0][0] for t, v in iv.items()}
        hi = {t: v[1][0] for t, v in iv.items()}
        ext = {t: int((hi[t] - lo[t]).max()) for t in iv}
        work = {t: int((hi[t] - lo[t]).sum()) for t in iv}
    else:
        iv = cached_1d(geo.steps, axis, geo.tile_tensor, [bounds])
        hi = {t: v[0][0] for t, v in iv.items()}
        lo = {}
        ext, work = {}, {}
        for t, (h, ln) in iv.items():
            prev = np.concatenate([[0], h[0][:-1]])
            ext[t] = int((h[0] - np.minimum(prev, ln[0])).max())
            work[t] = int(h[0][-1])
    return AxisPlan(mode, tuple(bounds), lo, hi, ext, work)


@dataclass
class BlockRun:
    """A fusion block (or split region) ready to execute: ops [p, q) tiled over its tile tensor."""

    p: int
    q: int
    scheme: str
    geo: Geometry
    rows: AxisPlan
    cols: AxisPlan
    windows: list  # window tensors (made inside, or streamed in)
    streamed: tuple  # graph inputs pulled from the source

    @property
    def tile(self) -> tuple:
        r, c = self.rows.bounds, self.cols.bounds
        return r[1] - r[0], c[1] - c[0]

    def window_shape(self, g, t: int) -> tuple:
        return self.rows.ext[t], self.cols.ext[t], g.tensors[t].shape[3]

    def macs(self, g) -> int:
        total = 0
        for s in self.geo.steps:
            total += macs_per_pixel(g, g.operators[s.op]) * self.rows.work[s.out] * self.cols.work[s.out]
        return total


def make_block(g, p: int, q: int, scheme: str, row_bounds: tuple, col_bounds: tuple, streamed: tuple = ()) -> BlockRun:
    if scheme not in MODES:
        raise PlanError(f"unknown fusion scheme '{scheme}' (known: {', '.join(MODES)})")
    geo = geometry(g, range(p, q))
    if scheme == "linebuf" and len(col_bounds) != 2:
        raise PlanError("the linebuf scheme needs one tile over the whole width")
    rm, cm = MODES[scheme]
    rows = axis_plan(geo, 0, rm, row_bounds)
    cols = axis_plan(geo, 1, cm, col_bounds)
    st = tuple(t for t in streamed if any(t in s.ins for s in geo.steps))
    return BlockRun(p, q, scheme, geo, rows, cols, window_tensors(g, geo, st), st)


def block_from_tile(g, p: int, q: int, scheme: str, th: int, tw: int, streamed: tuple = ()) -> BlockRun:
    y = g.tensors[geometry(g, range(p, q)).tile_tensor].shape
    return make_block(g, p, q, scheme, uniform_bounds(y[1], th), uniform_bounds(y[2], min(tw, y[2])), streamed)


@dataclass
class Schedule:
    """Items in execution order: an int (a plain operator) or a BlockRun."""

    items: list
    streamed: bool

    def blocks(self) -> list:
        return [it for it in self.items if isinstance(it, BlockRun)]


def schedule_from_edges(g, edges, streamed: bool) -> Schedule:
    items = []
    ins = tuple(g.inputs) if streamed else ()
    for e in edges:
        if e.scheme is None:
            items.append(e.p)
        else:
            items.append(block_from_tile(g, e.p, e.q, e.scheme, e.th, e.tw, ins if e.p == 0 else ()))
    return Schedule(items, streamed)


@dataclass
class FusedPlan:
    """The arena plan of a transformed network: whole tensors, windows, accumulators, packed."""

    schedule: Schedule
    arena_bytes: int
    lower_bound_bytes: int
    align: int
    buffers: list  # plan.Buffer; kind "tensor" | "window" | "accumulator"
    tensor_offset: dict  # whole tensor -> arena offset
    window_offset: dict  # (block index, tensor) -> arena offset
    acc_offset: dict  # block index -> arena offset of its accumulator
    macs: int
    vanilla_macs: int
    optimal: bool = False
    planner: str = ""
    profile: list = field(default_factory=list)  # bytes live at each step

    @property
    def mac_overhead(self) -> float:
        return self.macs / self.vanilla_macs if self.vanilla_macs else 1.0

    def to_json(self, g) -> dict:
        blocks, splits = [], []
        for bi, it in enumerate(self.schedule.items):
            if not isinstance(it, BlockRun):
                continue
            th, tw = it.tile
            blocks.append({"first_op": it.p, "last_op": it.q - 1, "tile": [th, tw], "cache": it.scheme,
                           "row_tiles": len(it.rows.bounds) - 1, "col_tiles": len(it.cols.bounds) - 1,
                           "window_bytes": sum(int(np.prod(it.window_shape(g, t))) for t in it.windows)})
        return {
            "arena_bytes": self.arena_bytes,
            "lower_bound_bytes": self.lower_bound_bytes,
            "input_accounting": "streamed" if self.schedule.streamed else "in-arena",
            "macs": self.macs,
            "vanilla_macs": self.vanilla_macs,
            "mac_overhead": round(self.mac_overhead, 6),
            "align": self.align,
            "planner": self.planner,
            "optimal": self.optimal,
            "fusion_blocks": blocks,
            "splits": splits,
            "buffers": [{"id": b.id, "offset": b.offset, "size": b.size, "first_step": b.first_step,
                         "last_step": b.last_step, "kind": b.kind, "tensors": list(b.tensors), "op": b.op}
                        for b in self.buffers],
        }


def buffer_specs(g, sched: Schedule) -> list:
    """[(key, size, first, last, kind)]: key is ("t", tensor) | ("w", block, tensor) | ("a", block)."""
    n = len(g.operators)
    span = {}  # op -> (first, last) steps a whole tensor touched by that op must cover
    for it in sched.items:
        if isinstance(it, BlockRun):
            for oi in it.geo.ops:
                span[oi] = (it.p, it.q - 1)
        else:
            span[it] = (it, it)
    first, last = {}, {}
    for i in g.inputs:
        if not (sched.streamed and i in g.inputs):
            first[i], last[i] = 0, 0
    inner = {t for it in sched.blocks() for t in it.windows}
    for op in g.operators:
        a, b = span[op.index]
        for o in op.outputs:
            if o not in inner:
                first[o] = min(first.get(o, a), a)
                last[o] = max(last.get(o, b), b)
        for i in g.act_inputs(op):
            if i in first:
                last[i] = max(last[i], b)
                first[i] = min(first[i], a) if i not in g.inputs else 0
    for o in g.outputs:
        if o in last:
            last[o] = n - 1
    specs = [(("t", t), g.tensors[t].nbytes, first[t], last[t], "tensor") for t in sorted(first)]
    for bi, it in enumerate(sched.items):
        if not isinstance(it, BlockRun):
            continue
        lifes = window_lifetimes(g, it.geo, it.streamed)
        for t in it.windows:
            f, l = lifes[t] if it.scheme == "recompute" else (it.p, it.q - 1)
            specs.append((("w", bi, t), int(np.prod(it.window_shape(g, t))), f, l, "window"))
        acc = accumulator_bytes(g, it.geo)
        if acc:
            specs.append((("a", bi), acc, it.p, it.q - 1, "accumulator"))
    return specs


def pack(specs: list, n: int, align: int, time_budget: float) -> tuple:
    """Offsets (bytes) for specs with the arena planner's packers and exact solver."""
    from ..arena import exact
    from ..arena.packers import PACKERS, top

    units = [(align_up(max(s[1], 1), align) // align, s[2], s[3]) for s in specs]
    prof = [0] * max(n, 1)
    for u, f, l in units:
        for s in range(f, l + 1):
            prof[s] += u
    lower = max(prof)
    best = None
    for name, fn in PACKERS.items():
        offs = fn(units)
        t = top(units, offs)
        if best is None or t < best[0]:
            best = (t, name, offs)
    t, name, offs = best
    optimal = t == lower
    if not optimal and time_budget > 0:
        res = exact.solve(units, offs, lower, t, time_budget)
        offs2, t2 = res[0], res[1]
        proven = res[2]
        if t2 < t:
            offs, t, name = offs2, t2, "exact"
        optimal = proven or t == lower
    return [o * align for o in offs], t * align, lower * align, name, optimal, [p * align for p in prof]


def plan_schedule(g, sched: Schedule, align: int = 16, time_budget: float = 2.0) -> FusedPlan:
    specs = buffer_specs(g, sched)
    offs, arena, lower, name, optimal, prof = pack(specs, len(g.operators), align, time_budget)
    buffers, toff, woff, aoff = [], {}, {}, {}
    for k, ((key, size, f, l, kind), off) in enumerate(zip(specs, offs)):
        tensors = [key[1]] if key[0] == "t" else ([key[2]] if key[0] == "w" else [])
        buffers.append(Buffer(k, off, size, f, l, tensors, kind))
        if key[0] == "t":
            toff[key[1]] = off
        elif key[0] == "w":
            woff[(key[1], key[2])] = off
        else:
            aoff[key[1]] = off
    macs = sum(it.macs(g) if isinstance(it, BlockRun) else op_macs(g, g.operators[it]) for it in sched.items)
    return FusedPlan(sched, arena, lower, align, buffers, toff, woff, aoff, macs, graph_macs(g), optimal, name, prof)


def checker_view(plan: FusedPlan) -> tuple:
    """(graph, ArenaPlan) of the buffer lifetimes alone, for the independent arena checker.

    Each buffer becomes an int8 tensor of its size; the operator at step s writes the buffers
    that start at s and reads every buffer that is live at s and started before.
    """
    from ..ir import Operator, Quant

    bufs = plan.buffers
    n = max((b.last_step for b in bufs), default=0) + 1
    q = Quant(np.ones(1, np.float32), np.zeros(1, np.int64))
    tensors = [Tensor(b.id, f"buf{b.id}", (max(b.size, 1),), "int8", q) for b in bufs]
    ops = []
    for s in range(n):
        ins = tuple(b.id for b in bufs if b.first_step < s <= b.last_step)
        outs = tuple(b.id for b in bufs if b.first_step == s)
        ops.append(Operator(s, "CONV_2D", ins, outs, {}))
    sg = Graph(tensors, ops, [], [], name="fused-buffers")
    places = {b.id: TensorPlace(b.id, f"buf{b.id}", b.id, b.offset, max(b.size, 1), b.first_step, b.last_step)
              for b in bufs}
    ap = ArenaPlan(arena_bytes=plan.arena_bytes, lower_bound_bytes=plan.lower_bound_bytes,
                   total_activation_bytes=sum(align_up(max(b.size, 1), plan.align) for b in bufs),
                   order=list(range(n)),
                   buffers=[Buffer(b.id, b.offset, max(b.size, 1), b.first_step, b.last_step, [b.id], "tensor")
                            for b in bufs],
                   tensors=places, align=plan.align)
    return sg, ap
