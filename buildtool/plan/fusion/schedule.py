"""The schedule IR: a chosen path (plain operators, fusion blocks, split regions) as an executable
schedule, and FusedPlan, the arena plan of one (buffer lifetimes: lifetimes.py; packing: arena.packers;
planning: planner.py).

A fusion block tiles operators [p, q) over its tile tensor: per axis, each tile's interval of
every tensor (recompute) or the positions computed after each step (cached schemes), and the
window buffers that hold them (geometry.AxisPlan). One row of tiles is one tile-step. The blocks of
a pipelined group run their tile rows interleaved, in pull_order (pipelined pairs: pipeline.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...errors import InternalError, PlanError
from .. import Buffer
from .costs import macs_per_pixel, tail_macs
from .dag import build_network, main_tensor
from .geometry import (AxisPlan, Geometry, axis_plan, channelwise, geometry, inplace_source, pulled_rows,
                       uniform_bounds, window_tensors)

# per-axis mode of each scheme: rows, columns
MODES = {"recompute": ("rec", "rec"), "hcache": ("rec", "cache"), "linebuf": ("cache", "cache")}


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
    groups: dict = field(default_factory=dict)  # channelwise window -> channels made per call (absent: 1)

    @property
    def tile(self) -> tuple:
        r, c = self.rows.bounds, self.cols.bounds
        return r[1] - r[0], c[1] - c[0]

    def channelwise(self, g, t: int) -> bool:
        """Is t made one channel at a time, right before its depthwise reader (recompute only)?"""
        return self.scheme == "recompute" and channelwise(g, self.geo, t)

    def inplace_source(self, g, t: int) -> int | None:
        """The window whose bytes t's 1x1 convolution overwrites pixel by pixel (recompute only):
        t's window starts at the same offset; None when t has its own bytes."""
        return inplace_source(g, self.geo, t) if self.scheme == "recompute" else None

    def pulled_rows(self, g, t: int) -> int:
        """Rows of streamed input t held at once: its reader makes one output row at a time and
        pulls just the rows that row reads (recompute only; 0: the tile's whole interval)."""
        if self.scheme != "recompute" or t not in self.streamed:
            return 0
        return min(pulled_rows(g, self.geo, t), self.rows.ext[t])

    def group(self, t: int) -> int:
        """Channels of channelwise window t made per call (its window's channel count)."""
        return self.groups.get(t, 1)

    def window_shape(self, g, t: int) -> tuple:
        rows = self.pulled_rows(g, t) or self.rows.ext[t]
        return rows, self.cols.ext[t], self.group(t) if self.channelwise(g, t) else g.tensors[t].shape[3]

    @property
    def n_steps(self) -> int:
        """Tile-steps of the block: one per row of tiles (rows are the outer loop)."""
        return len(self.rows.bounds) - 1

    def last_read_step(self, t: int, n_rows: int) -> np.ndarray:
        """For each row of t (read whole from the arena): the last tile-step that reads it."""
        lo = self.rows.lo[t]
        if self.rows.mode == "rec":
            lo = np.where(self.rows.hi[t] > lo, lo, n_rows)
        lo = np.minimum(lo, n_rows)
        rows = np.arange(n_rows)
        # last step r with lo[r] <= row (lo is non-decreasing), else the first step
        return np.maximum(np.searchsorted(lo, rows, side="right") - 1, 0)

    def written_step(self, n_rows: int) -> np.ndarray:
        """For each row of the output tile tensor: the tile-step that writes it."""
        b = np.array(self.rows.bounds)
        return np.searchsorted(b, np.arange(n_rows), side="right") - 1

    def macs(self, g) -> int:
        total = 0
        for s in self.geo.steps:
            total += macs_per_pixel(g, g.operators[s.op]) * self.rows.work[s.out] * self.cols.work[s.out]
        return total + tail_macs(g, self.geo)


def make_block(g, p: int, q: int, scheme: str, row_bounds: tuple, col_bounds: tuple, streamed: tuple = (),
               groups: dict | None = None) -> BlockRun:
    if scheme not in MODES:
        raise PlanError(f"unknown fusion scheme '{scheme}' (known: {', '.join(MODES)})")
    geo = geometry(g, range(p, q))
    if scheme == "linebuf" and len(col_bounds) != 2:
        raise PlanError("the linebuf scheme needs one tile over the whole width")
    rm, cm = MODES[scheme]
    rows = axis_plan(geo, 0, rm, row_bounds)
    cols = axis_plan(geo, 1, cm, col_bounds)
    st = tuple(t for t in streamed if any(t in s.ins for s in geo.steps))
    blk = BlockRun(p, q, scheme, geo, rows, cols, window_tensors(g, geo, st), st)
    for t, n in (groups or {}).items():
        if t not in blk.windows or not blk.channelwise(g, t) or n < 1 or g.tensors[t].shape[3] % n:
            raise PlanError(f"block {p}-{q - 1}: window {t} cannot be made {n} channels at a time")
    blk.groups = {int(t): int(n) for t, n in sorted((groups or {}).items()) if n != 1}
    return blk


def block_from_tile(g, p: int, q: int, scheme: str, th: int, tw: int, streamed: tuple = ()) -> BlockRun:
    y = g.tensors[geometry(g, range(p, q)).tile_tensor].shape
    return make_block(g, p, q, scheme, uniform_bounds(y[1], th), uniform_bounds(y[2], min(tw, y[2])), streamed)


@dataclass
class Schedule:
    """Items in execution order: an int (a plain operator) or a BlockRun."""

    items: list
    streamed: bool
    mode: str = "fusion"  # "fusion" | "split": how the JSON names the blocks
    banded: tuple = ()  # tensors held as row bands: made and freed row by row between blocks
    inplace: bool = False  # plain element-wise operators write over the whole input they read last
    pipelined: tuple = ()  # groups of consecutive block items whose tile rows run interleaved (pull_order)

    def blocks(self) -> list:
        return [it for it in self.items if isinstance(it, BlockRun)]


def schedule_from_edges(g, edges, streamed: bool, mode: str = "fusion") -> Schedule:
    items, banded = [], []
    ins = tuple(g.inputs) if streamed else ()
    net = build_network(g, streamed)
    pipelined = []
    for e in edges:
        if e.scheme is None:
            items.append(e.p)
            continue
        q = e.pipe[0] if e.pipe else e.q
        items.append(block_from_tile(g, e.p, q, e.scheme, e.th, e.tw, ins if e.p == 0 else ()))
        if e.band_in:
            banded.append(main_tensor(net, e.p))
        if e.pipe:  # the second block of a pipelined pair reads the first one's rows as they are made
            items.append(block_from_tile(g, q, e.q, *e.pipe[1:]))
            banded.append(main_tensor(net, q))
            pipelined.append((len(items) - 2, len(items) - 1))
    return Schedule(items, streamed, mode, tuple(sorted(set(banded))), pipelined=tuple(pipelined))


def pull_order(blocks: list) -> list:
    """(block index, tile row) in execution order: the last block runs its rows in order and,
    before each, every earlier block runs the rows that make what that row reads."""
    done = [0] * len(blocks)
    order = []

    def run_to(b: int, rows: int) -> None:
        while blocks[b].rows.bounds[done[b]] < rows:
            need(b, done[b])
            order.append((b, done[b]))
            done[b] += 1

    def need(b: int, i: int) -> None:
        if b > 0:
            x = blocks[b - 1].geo.tile_tensor
            run_to(b - 1, int(min(blocks[b].rows.hi[x][i], blocks[b - 1].rows.bounds[-1])))

    last = len(blocks) - 1
    for i in range(blocks[last].n_steps):
        need(last, i)
        order.append((last, i))
    done[last] = blocks[last].n_steps
    for b in range(last - 1, -1, -1):  # rows nobody downstream reads (none in a valid pair)
        while done[b] < blocks[b].n_steps:
            order.append((b, done[b]))
            done[b] += 1
    return order


def _ints(xs) -> list:
    return [int(x) for x in xs]


@dataclass
class FusedPlan:
    """The arena plan of a transformed network: whole tensors (or their row bands), window
    pools and accumulators, packed over tile-steps.

    Steps are tile-steps: one per plain operator, one per row of tiles of a block.
    Implements plan.Plan; its JSON carries the whole layout, so from_json rebuilds it exactly.
    """

    kind: ClassVar[str] = "fused"
    schedule: Schedule
    arena_bytes: int
    lower_bound_bytes: int
    align: int
    buffers: list  # plan.Buffer; kind "tensor" | "band" | "windows" | "accumulator"
    bands: dict  # whole tensor -> [(first row, end row, arena offset)] (one band when not banded)
    window_offset: dict  # (item index, tensor) -> arena offset
    acc_offset: dict  # item index -> arena offset of its accumulator
    item_steps: list  # item index -> (first step, last step)
    macs: int
    vanilla_macs: int
    optimal: bool = False
    planner: str = ""
    profile: list = field(default_factory=list)  # bytes live at each tile-step
    mac_cap: float | None = None  # --optimize ram: the MAC factor it kept within (inf: none)
    tradeoff: dict | None = None  # the plan across the cap (fusion.plan_fused), when it differs
    window_base: dict = field(default_factory=dict)  # pipelined item -> its window pool's offset per tile row
    search_cap: int = 0  # the longest block --time-budget let the search analyse somewhere (0: no cut)

    @property
    def mac_overhead(self) -> float:
        return self.macs / self.vanilla_macs if self.vanilla_macs else 1.0

    def live_bytes(self) -> list:
        return list(self.profile)

    def step_span(self, step: int) -> tuple:
        """The stretch of the operator axis a tile-step covers: a block's tile-steps share its operators."""
        for k, (s0, s1) in enumerate(self.item_steps):
            if s0 <= step <= s1:
                it = self.schedule.items[k]
                if not isinstance(it, BlockRun):
                    return it, it + 1
                w = (it.q - it.p) / (s1 - s0 + 1)
                return it.p + (step - s0) * w, it.p + (step - s0 + 1) * w
        raise InternalError(f"step {step} is beyond the fused plan's {len(self.profile)} steps")

    def regions(self, g) -> list:
        d = self.to_json(g)
        return d["fusion_blocks"] + d["splits"]

    def manifest_order(self, g) -> tuple:
        """(profile region ids, their names): one per plain operator or block, in execution order."""
        order, names = [], []
        later = {k for grp in self.schedule.pipelined for k in grp[1:]}
        last = {grp[0]: self.schedule.items[grp[-1]] for grp in self.schedule.pipelined}
        for k, it in enumerate(self.schedule.items):
            if k in later:
                continue  # a pipelined group is one region, named after its first block
            if k in last:
                order.append(it.p)
                names.append(f"PIPELINED_{it.p}_{last[k].q - 1}")
            elif isinstance(it, BlockRun):
                order.append(it.p)
                names.append(f"FUSED_{it.p}_{it.q - 1}")
            else:
                order.append(it)
                names.append(g.operators[it].opcode)
        return order, names

    def layout_json(self) -> dict:
        """Everything to_json's summary leaves out: the schedule and every offset (from_json's input)."""
        items = []
        for it in self.schedule.items:
            items.append(int(it) if not isinstance(it, BlockRun) else
                         {"p": int(it.p), "q": int(it.q), "scheme": it.scheme, "rows": _ints(it.rows.bounds),
                          "cols": _ints(it.cols.bounds), "streamed": _ints(it.streamed),
                          **({"groups": [[int(t), int(n)] for t, n in sorted(it.groups.items())]} if it.groups else {})})
        return {"items": items, "streamed": bool(self.schedule.streamed), "mode": self.schedule.mode,
                "banded": _ints(self.schedule.banded), "inplace": bool(self.schedule.inplace),
                "bands": [[int(t), [_ints(b) for b in self.bands[t]]] for t in sorted(self.bands)],
                "window_offset": [[int(k), int(t), int(o)] for (k, t), o in sorted(self.window_offset.items())],
                "acc_offset": [[int(k), int(o)] for k, o in sorted(self.acc_offset.items())],
                "item_steps": [_ints(x) for x in self.item_steps], "profile": _ints(self.profile),
                "mac_cap": None if self.mac_cap is None else ("none" if self.mac_cap == float("inf") else self.mac_cap),
                **({"pipelined": [_ints(grp) for grp in self.schedule.pipelined],
                    "window_base": [[int(k), _ints(v)] for k, v in sorted(self.window_base.items())]}
                   if self.schedule.pipelined else {})}

    @classmethod
    def from_json(cls, d: dict, g) -> "FusedPlan":
        """The plan to_json(g) wrote, rebuilt for g (the same graph's structure)."""
        if g is None or "layout" not in d:
            raise PlanError("a fused plan's JSON without its layout (or without its graph) cannot be read back")
        lay = d["layout"]
        items = [it if isinstance(it, int) else
                 make_block(g, it["p"], it["q"], it["scheme"], tuple(it["rows"]), tuple(it["cols"]),
                            tuple(it["streamed"]), dict(it.get("groups", ()))) for it in lay["items"]]
        sched = Schedule(items, lay["streamed"], lay["mode"], tuple(lay["banded"]), lay["inplace"],
                         tuple(tuple(grp) for grp in lay.get("pipelined", ())))
        buffers = [Buffer(b["id"], b["offset"], b["size"], b["first_step"], b["last_step"], list(b["tensors"]),
                          b["kind"]) for b in d["buffers"]]
        cap = lay["mac_cap"]
        return cls(sched, d["arena_bytes"], d["lower_bound_bytes"], d["align"], buffers,
                   {t: [tuple(b) for b in bs] for t, bs in lay["bands"]},
                   {(k, t): o for k, t, o in lay["window_offset"]}, {k: o for k, o in lay["acc_offset"]},
                   [tuple(x) for x in lay["item_steps"]], d["macs"], d["vanilla_macs"], d["optimal"], d["planner"],
                   list(lay["profile"]), float("inf") if cap == "none" else cap, d.get("tradeoff"),
                   {k: list(v) for k, v in lay.get("window_base", ())}, d.get("search_cut_to_block_ops", 0))

    def to_json(self, g=None) -> dict:
        blocks, splits = [], []
        piped = {k: grp for grp in self.schedule.pipelined for k in grp}
        for k, it in enumerate(self.schedule.items):
            if not isinstance(it, BlockRun):
                continue
            th, tw = it.tile
            if self.schedule.mode == "split":
                splits.append({"top": it.p, "bottom": it.q - 1, "slices": len(it.rows.bounds) - 1})
                continue
            blocks.append({"first_op": it.p, "last_op": it.q - 1, "tile": [th, tw], "cache": it.scheme,
                           "row_tiles": len(it.rows.bounds) - 1, "col_tiles": len(it.cols.bounds) - 1,
                           "window_bytes": sum(int(np.prod(it.window_shape(g, t))) for t in it.windows),
                           **({"pipelined_with": [self.schedule.items[j].p for j in piped[k] if j != k]}
                              if k in piped else {})})
        return {
            "arena_bytes": self.arena_bytes,
            "lower_bound_bytes": self.lower_bound_bytes,
            "input_accounting": "streamed" if self.schedule.streamed else "in-arena",
            "macs": self.macs,
            "vanilla_macs": self.vanilla_macs,
            "mac_overhead": round(self.mac_overhead, 6),
            **({} if self.mac_cap is None else
               {"max_mac_overhead": "none" if self.mac_cap == float("inf") else round(self.mac_cap, 6),
                "tradeoff": self.tradeoff}),
            "align": self.align,
            "planner": self.planner,
            "optimal": self.optimal,
            **({"search_cut_to_block_ops": self.search_cap} if self.search_cap else {}),
            "fusion_blocks": blocks,
            "splits": splits,
            "banded_tensors": list(self.schedule.banded),
            "buffers": [{"id": b.id, "offset": b.offset, "size": b.size, "first_step": b.first_step,
                         "last_step": b.last_step, "kind": b.kind, "tensors": list(b.tensors)}
                        for b in self.buffers],
            "layout": self.layout_json(),
        }
