"""Turn a chosen path (plain operators, fusion blocks, split regions) into an executable schedule
and give every buffer a place in one arena, packed by the arena planner's packers.

Steps are the operators of the model order. A whole tensor lives from its producer to its
last reader; when either sits inside a block it lives over the whole block (a tile loop
revisits every operator of the block). Window buffers of cached schemes (hcache, linebuf)
keep data from tile to tile, so they live over the whole block; those of the recompute
scheme live from their producer to their last reader within the block (tile-steps), so
buffers of different layers share bytes. A MEAN or dense layer that accumulates tiles owns
an accumulator over the block (the flattened tensor a dense layer reads is never made).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..errors import PlanError
from ..ir import Graph, Tensor
from ..ops import graph_macs, op_macs
from ..plan import ArenaPlan, Buffer, TensorPlace, align_up
from .costs import (Geometry, accumulator_bytes, cached_1d, channelwise, geometry, macs_per_pixel,
                    inplace_source, pulled_rows, recompute_1d, tail_macs, uniform_bounds, window_lifetimes,
                    window_tensors)

# per-axis mode of each scheme: rows, columns
MODES = {"recompute": ("rec", "rec"), "hcache": ("rec", "cache"), "linebuf": ("cache", "cache")}


@dataclass
class AxisPlan:
    """One axis of one block for one tiling.

    rec: lo/hi[tensor] = interval each tile needs; cache: hi[tensor] = positions computed
    after each step, lo[tensor] = lowest position read at that step.
    """

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
        lo = {t: v[1][0] for t, v in iv.items()}  # lowest position read at each step (huge: none)
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

    def window_shape(self, g, t: int) -> tuple:
        rows = self.pulled_rows(g, t) or self.rows.ext[t]
        return rows, self.cols.ext[t], 1 if self.channelwise(g, t) else g.tensors[t].shape[3]

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
    mode: str = "fusion"  # "fusion" | "split": how the JSON names the blocks
    banded: tuple = ()  # tensors held as row bands: made and freed row by row between blocks
    inplace: bool = False  # plain element-wise operators write over the whole input they read last

    def blocks(self) -> list:
        return [it for it in self.items if isinstance(it, BlockRun)]


def schedule_from_edges(g, edges, streamed: bool, mode: str = "fusion") -> Schedule:
    from .dag import build_network, main_tensor

    items, banded = [], []
    ins = tuple(g.inputs) if streamed else ()
    net = build_network(g, streamed)
    for e in edges:
        if e.scheme is None:
            items.append(e.p)
        else:
            items.append(block_from_tile(g, e.p, e.q, e.scheme, e.th, e.tw, ins if e.p == 0 else ()))
            if e.band_in:
                banded.append(main_tensor(net, e.p))
    return Schedule(items, streamed, mode, tuple(sorted(set(banded))))


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
        from ..errors import InternalError

        raise InternalError(f"step {step} is beyond the fused plan's {len(self.profile)} steps")

    def regions(self, g) -> list:
        d = self.to_json(g)
        return d["fusion_blocks"] + d["splits"]

    def manifest_order(self, g) -> tuple:
        from ..codegen.fused_c import manifest_order

        return manifest_order(g, self)

    def emit_c(self, g, board: str, weights_align: int) -> tuple:
        from ..codegen.fused_c import generate

        return generate(g, self, board, weights_align)

    def execute(self, g, inputs: list) -> list:
        from ..fusion_exec import run_fused

        return run_fused(g, self, inputs)

    def problems(self, g) -> list:
        from ..arena.checker import problems

        return problems(*checker_view(self))

    def layout_json(self) -> dict:
        """Everything to_json's summary leaves out: the schedule and every offset (from_json's input)."""
        items = []
        for it in self.schedule.items:
            items.append(int(it) if not isinstance(it, BlockRun) else
                         {"p": int(it.p), "q": int(it.q), "scheme": it.scheme, "rows": _ints(it.rows.bounds),
                          "cols": _ints(it.cols.bounds), "streamed": _ints(it.streamed)})
        return {"items": items, "streamed": bool(self.schedule.streamed), "mode": self.schedule.mode,
                "banded": _ints(self.schedule.banded), "inplace": bool(self.schedule.inplace),
                "bands": [[int(t), [_ints(b) for b in self.bands[t]]] for t in sorted(self.bands)],
                "window_offset": [[int(k), int(t), int(o)] for (k, t), o in sorted(self.window_offset.items())],
                "acc_offset": [[int(k), int(o)] for k, o in sorted(self.acc_offset.items())],
                "item_steps": [_ints(x) for x in self.item_steps], "profile": _ints(self.profile),
                "mac_cap": None if self.mac_cap is None else ("none" if self.mac_cap == float("inf") else self.mac_cap)}

    @classmethod
    def from_json(cls, d: dict, g) -> "FusedPlan":
        """The plan to_json(g) wrote, rebuilt for g (the same graph's structure)."""
        if g is None or "layout" not in d:
            raise PlanError("a fused plan's JSON without its layout (or without its graph) cannot be read back")
        lay = d["layout"]
        items = [it if isinstance(it, int) else
                 make_block(g, it["p"], it["q"], it["scheme"], tuple(it["rows"]), tuple(it["cols"]),
                            tuple(it["streamed"])) for it in lay["items"]]
        sched = Schedule(items, lay["streamed"], lay["mode"], tuple(lay["banded"]), lay["inplace"])
        buffers = [Buffer(b["id"], b["offset"], b["size"], b["first_step"], b["last_step"], list(b["tensors"]),
                          b["kind"]) for b in d["buffers"]]
        cap = lay["mac_cap"]
        return cls(sched, d["arena_bytes"], d["lower_bound_bytes"], d["align"], buffers,
                   {t: [tuple(b) for b in bs] for t, bs in lay["bands"]},
                   {(k, t): o for k, t, o in lay["window_offset"]}, {k: o for k, o in lay["acc_offset"]},
                   [tuple(x) for x in lay["item_steps"]], d["macs"], d["vanilla_macs"], d["optimal"], d["planner"],
                   list(lay["profile"]), float("inf") if cap == "none" else cap, d.get("tradeoff"))

    def to_json(self, g=None) -> dict:
        blocks, splits = [], []
        for it in self.schedule.blocks():
            th, tw = it.tile
            if self.schedule.mode == "split":
                splits.append({"top": it.p, "bottom": it.q - 1, "slices": len(it.rows.bounds) - 1})
                continue
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
            **({} if self.mac_cap is None else
               {"max_mac_overhead": "none" if self.mac_cap == float("inf") else round(self.mac_cap, 6),
                "tradeoff": self.tradeoff}),
            "align": self.align,
            "planner": self.planner,
            "optimal": self.optimal,
            "fusion_blocks": blocks,
            "splits": splits,
            "banded_tensors": list(self.schedule.banded),
            "buffers": [{"id": b.id, "offset": b.offset, "size": b.size, "first_step": b.first_step,
                         "last_step": b.last_step, "kind": b.kind, "tensors": list(b.tensors)}
                        for b in self.buffers],
            "layout": self.layout_json(),
        }


def item_steps(sched: Schedule) -> list:
    out, s = [], 0
    for it in sched.items:
        k = it.n_steps if isinstance(it, BlockRun) else 1
        out.append((s, s + k - 1))
        s += k
    return out


def _bands_of(born: np.ndarray, dies: np.ndarray, rows_per_band: int = 1) -> list:
    """Row bands [(r0, r1, first, last)] of `rows_per_band` rows (one row: every band of a
    tensor has the same size, so a band freed by the input fits any band of the output)."""
    n = len(born)
    return [(r0, min(r0 + rows_per_band, n), int(born[r0:r0 + rows_per_band].min()),
             int(max(dies[r0:r0 + rows_per_band].max(), born[r0:r0 + rows_per_band].max())))
            for r0 in range(0, n, rows_per_band)]


def window_pool(g, blk: BlockRun, align: int) -> tuple:
    """Offsets of a block's windows inside its pool, and the pool's size.

    Cached schemes keep every window for the whole block. Recompute windows live from
    their producer to their last reader within one tile pass, so the arena packers lay
    them out over those operator steps and they share bytes.
    """
    if not blk.windows:
        return {}, 0
    lifes = window_lifetimes(g, blk.geo, blk.streamed)
    root, need = {}, {}  # window -> the window whose bytes it occupies; root -> {step: bytes}
    for t in blk.windows:
        src = blk.inplace_source(g, t)
        root[t] = root[src] if src is not None else t
        f, l = lifes[t] if blk.scheme == "recompute" else (blk.p, blk.q - 1)
        size = align_up(int(np.prod(blk.window_shape(g, t))), align)
        steps = need.setdefault(root[t], {})
        for st in range(f + (src is not None), l + 1):  # at its step an in-place output is inside its input
            steps[st] = max(steps.get(st, 0), size)
    at, top = _pack_pool(need)
    return {t: at[root[t]] for t in blk.windows}, top


def _pack_pool(need: dict) -> tuple:
    """Offsets for buffers whose size varies by step ({key: {step: bytes}}): first fit in a few
    orders (each buffer at the lowest offset clear of those placed at every step it lives),
    keeping the lowest top. Deterministic."""
    keys = sorted(need)
    orders = (lambda k: (-max(need[k].values()), min(need[k]), k), lambda k: (min(need[k]), k),
              lambda k: (-sum(need[k].values()), k))
    best = None
    for order in orders:
        at = {}
        for k in sorted(keys, key=order):
            cands = sorted({0} | {at[j] + sz for j in at for sz in need[j].values()})
            for o in cands:
                if all(not (at[j] < o + need[k][st] and o < at[j] + need[j][st])
                       for j in at for st in need[k] if st in need[j]):
                    at[k] = o
                    break
        top = max((at[k] + sz for k in at for sz in need[k].values()), default=0)
        if best is None or top < best[1]:
            best = (at, top)
    return best


def buffer_specs(g, sched: Schedule, align: int) -> tuple:
    """([(key, size, first, last, kind)], pools, steps, alias): key ("t", tensor, r0, r1) | ("p", item)
    | ("a", item); alias maps an in-place output to the tensor whose buffer holds it."""
    steps = item_steps(sched)
    n_steps = steps[-1][1] + 1 if steps else 1
    item_of = {}
    for k, it in enumerate(sched.items):
        for oi in (it.geo.ops if isinstance(it, BlockRun) else [it]):
            item_of[oi] = k
    inner = {t for it in sched.blocks() for t in it.windows}
    inner |= {g.operators[it.geo.flat_op].outputs[0] for it in sched.blocks() if it.geo.flat_op >= 0}  # never made
    prod, users = {}, {}
    for op in g.operators:
        for o in op.outputs:
            prod[o] = item_of[op.index]
        for i in g.act_inputs(op):
            users.setdefault(i, set()).add(item_of[op.index])
    whole = [t for t in sorted(set(prod) | set(g.inputs))
             if t not in inner and not (sched.streamed and t in g.inputs)]
    # in place: a plain element-wise operator writes its output over the whole input it reads
    # last; the output is no buffer of its own, the input's lives on until the output dies
    from .dag import build_network, inplace_input

    net = build_network(g, sched.streamed, align) if sched.inplace else None
    alias = {}
    for it in sched.items if sched.inplace else ():
        x = inplace_input(net, it) if not isinstance(it, BlockRun) else None
        o = g.operators[it].outputs[0] if x is not None else None
        if x is not None and {x, o}.isdisjoint(inner | set(sched.banded)):
            alias[o] = alias.get(x, x)
    specs = []
    for t in whole:
        if t in alias:
            continue
        first = 0 if t in g.inputs else steps[prod[t]][0]
        members = [t] + [a for a, r in alias.items() if r == t]
        last = max((steps[k][1] for m in members for k in users.get(m, ())), default=first)
        if t in g.outputs or any(m in g.outputs for m in members):
            last = n_steps - 1
        sh = g.tensors[t].shape
        if t in sched.banded:
            n = sh[1]
            born = (np.zeros(n, np.int64) if t in g.inputs else
                    steps[prod[t]][0] + sched.items[prod[t]].written_step(n))
            dies = np.zeros(n, np.int64)
            for k in users[t]:
                dies = np.maximum(dies, steps[k][0] + sched.items[k].last_read_step(t, n))
            row = g.tensors[t].nbytes // n
            for r0, r1, f, l in _bands_of(born, dies):
                specs.append((("t", t, r0, r1), (r1 - r0) * row, f, l, "band"))
        else:
            rows = sh[1] if len(sh) == 4 else 1
            specs.append((("t", t, 0, rows), g.tensors[t].nbytes, first, last, "tensor"))
    for t in g.variable_tensors():  # state (SVDF/LSTM): live at every step, never shared
        specs.append((("t", t, 0, 1), g.tensors[t].nbytes, 0, n_steps - 1, "persistent"))
    pools = {}
    for k, it in enumerate(sched.items):
        if not isinstance(it, BlockRun):
            continue
        offs, size = window_pool(g, it, align)
        pools[k] = offs
        if size:
            specs.append((("p", k), size, steps[k][0], steps[k][1], "windows"))
        acc = accumulator_bytes(g, it.geo)
        if acc:
            specs.append((("a", k), acc, steps[k][0], steps[k][1], "accumulator"))
    return specs, pools, steps, alias


def pack(specs: list, n: int, align: int, time_budget: float, rounds: int = 0, pinned: tuple = ()) -> tuple:
    """Offsets (bytes) for [(key, size, first, last, ...)] with the arena planner's packers and exact solver.

    pinned: spec indices laid out first, one after another from offset 0 (the row bands of an
    input held in the arena, which then stays one contiguous tensor); the other buffers are
    placed around them by first fit in the packers' orders.
    """
    from ..arena import exact
    from ..arena.packers import PACK_WORK, PACKERS, _best_fit, _first_fit, _place, _profile, best_of, top

    units = [(align_up(max(s[1], 1), align) // align, s[2], s[3]) for s in specs]
    diff = [0] * (max(n, 1) + 1)
    for u, f, l in units:
        diff[f] += u
        diff[l + 1] -= u
    prof = list(np.cumsum(diff[:-1]))
    lower = int(max(prof)) if prof else 0
    best = None
    prof_u = _profile(units)
    pressure = [max(prof_u[f:l + 1]) for _, f, l in units]
    band = [len(s) > 4 and s[4] == "band" for s in specs]
    # row bands flow through the arena in birth order around the blocks' pools placed first
    flow = {"pools+size,bands": (lambda i: (band[i], units[i][1] if band[i] else -units[i][0], i)),
            "pools+conflict,bands": (lambda i: (band[i], units[i][1] if band[i] else -pressure[i], i))}
    if pinned:
        rest = [i for i in range(len(units)) if i not in set(pinned)]
        orders = {"pinned+size": lambda i: (-units[i][0], units[i][1], i),
                  "pinned+conflict": lambda i: (-pressure[i], -units[i][0], units[i][1], i),
                  "pinned+order": lambda i: (units[i][1], i),
                  "pinned+longest": lambda i: (-(units[i][2] - units[i][1]), -units[i][0], units[i][1], i),
                  **{"pinned+" + k: v for k, v in flow.items()}}
        pairs = len(units) * (len(units) - 1) // 2
        for k, (name, key) in enumerate(orders.items()):
            if k and 2 * (k + 1) * pairs > PACK_WORK:  # each order is two quadratic placements
                break
            for fit in (_first_fit, _best_fit):
                offs = _place(units, list(pinned) + sorted(rest, key=key), fit)
                t = top(units, offs)
                if best is None or t < best[0]:
                    best = (t, name, offs)
    else:
        cands = list(PACKERS.items()) + [
            (f"{k}+{fit.__name__.strip('_')}", lambda u, k=k, fit=fit: _place(u, sorted(range(len(u)), key=flow[k]), fit))
            for k in flow for fit in (_first_fit, _best_fit)]
        best = best_of(units, cands, lower)
    t, name, offs = best
    # each round is one quadratic placement: at most 2 x PACK_WORK pairs (30 rounds up to 700 buffers)
    rounds = min(rounds, 2 * PACK_WORK // max(len(units) * (len(units) - 1) // 2, 1))
    if t > lower and rounds:
        offs2, t2 = improve(units, offs, lower, rounds, pinned)
        if t2 < t:
            offs, t, name = offs2, t2, name + "+improve"
    optimal = t == lower
    if not optimal and time_budget > 0 and not pinned:
        res = exact.solve(units, offs, lower, t, time_budget, wall_cap=False)  # load-independent
        if res[1] < t:
            offs, t, name = res[0], res[1], "exact"
        optimal = bool(res[2]) or t == lower
    return [o * align for o in offs], t * align, lower * align, name, optimal, [int(p) * align for p in prof]


def improve(units: list, offsets: list, lower: int, rounds: int, pinned: tuple = (), seed: int = 0) -> tuple:
    """Iterated greedy: re-place with first fit, the buffers at the top and a random tenth first,
    the rest in their current offset order (which never raises the top). Pinned buffers stay
    first, in order. Deterministic."""
    import random

    from ..arena.packers import _first_fit, _place, top

    rng = random.Random(seed)
    best, bt = list(offsets), top(units, offsets)
    n = len(units)
    for _ in range(rounds):
        if bt <= lower:
            break
        front = {i for i in range(n) if best[i] + units[i][0] == bt}
        front.update(rng.sample(range(n), k=max(1, n // 10)))
        front -= set(pinned)
        rest = [i for i in range(n) if i not in set(pinned)]
        seq = list(pinned) + sorted(rest, key=lambda i: (i not in front, -units[i][0] if i in front else best[i], i))
        new = _place(units, seq, _first_fit)
        t = top(units, new)
        if t <= bt:
            best, bt = new, t
    return best, bt


def plan_schedule(g, sched: Schedule, align: int = 16, time_budget: float = 2.0, rounds: int = 30) -> FusedPlan:
    """Pack the schedule's buffers: the planner's packers, `rounds` of iterated greedy, then
    the exact solver for time_budget seconds (deterministic time) if still above the bound."""
    specs, pools, steps, alias = buffer_specs(g, sched, align)
    n_steps = steps[-1][1] + 1 if steps else 1
    pinned = tuple(sorted((k for k, sp in enumerate(specs) if sp[0][0] == "t" and sp[0][1] in g.inputs
                           and sp[4] == "band"), key=lambda k: specs[k][0][2]))
    offs, arena, lower, name, optimal, prof = pack(specs, n_steps, align, time_budget, rounds, pinned)
    buffers, bands, woff, aoff = [], {}, {}, {}
    for k, ((key, size, f, l, kind), off) in enumerate(zip(specs, offs)):
        tensors = [key[1]] if key[0] == "t" else (sorted(pools[key[1]]) if key[0] == "p" else [])
        buffers.append(Buffer(k, off, size, f, l, tensors, kind))
        if key[0] == "t":
            bands.setdefault(key[1], []).append((key[2], key[3], off))
        elif key[0] == "p":
            for t, o in pools[key[1]].items():
                woff[(key[1], t)] = off + o
        else:
            aoff[key[1]] = off
    for o, x in sorted(alias.items()):
        bands[o] = list(bands[x])
        buffers[next(b.id for b in buffers if b.kind == "tensor" and x in b.tensors)].tensors.append(o)
    macs = sum(it.macs(g) if isinstance(it, BlockRun) else op_macs(g, g.operators[it]) for it in sched.items)
    return FusedPlan(sched, arena, lower, align, buffers, bands, woff, aoff, steps, macs, graph_macs(g),
                     optimal, name, prof)


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
