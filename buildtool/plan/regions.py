"""Placement of a model in a board's memory regions (docs/regions.md).

place(graph, plan, board) puts every weight tensor of the flash image in a region that may hold
weights, minimising the sum over tensors of (the region's cost per byte read) x (bytes the tensor's
readers fetch per inference), under every region's size; the arena goes to the cheapest region that
may hold it and fits it. Pure and deterministic: the same inputs give the same placement.

Traffic: a layer-by-layer plan reads each weight once per inference; a fused plan reads a block's
weights once per tile, an operator-splitting region once per slice (the plan's counts).

Two weight regions are a 0/1 knapsack, solved exactly by dynamic programming over the cheaper
region's free bytes (in units of the weights' alignment); more are a generalised assignment,
solved exactly by CP-SAT (one worker, so deterministic).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from . import cpsat

from ..errors import PlanError
from . import align_up
from .arena.regional import ArenaRegion, one_region_each, solve_choice
from .arena.regional import spread as spread_arena
from .flash import EXT_ALIGN, HEADER_BYTES, flash_tensors, tables_bytes


@dataclass(frozen=True)
class Placement:
    """Where everything goes: weights (tensor -> region name), the arena's region, bytes used per region."""

    board: str
    weights: dict
    arena: str | None
    arena_bytes: int
    used: dict  # region name -> bytes this model uses there (weights image part, arena)
    sizes: dict  # region name -> the region's size
    traffic: dict  # tensor -> bytes read per inference
    cost: int  # sum of cost x traffic
    primary: str = ""  # the region holding the image's header (bt_weights)
    order: tuple = field(default=())  # the regions in the board's order
    arena_parts: dict = field(default_factory=dict)  # region -> arena bytes there, when the buffers are spread
    arena_buffers: tuple = field(default=())  # then (region, offset there, size, first step, last step) each

    def group(self, region: str, tensors: list) -> list:
        """tensors (in their given order) placed in region."""
        return [i for i in tensors if self.weights[i] == region]

    def external(self) -> list:
        """Regions other than the primary that hold weights, in board order."""
        return [r for r in self.order if r != self.primary and any(v == r for v in self.weights.values())]

    def to_json(self) -> dict:
        return {"board": self.board, "arena": self.arena, "arena_bytes": self.arena_bytes, "cost": self.cost,
                "regions": [{"name": r, "size": self.sizes[r], "used": self.used.get(r, 0),
                             "tensors": sorted(i for i, v in self.weights.items() if v == r)} for r in self.order]
                } | ({"arena_parts": dict(self.arena_parts)} if self.arena_parts else {})


def traffic(g, plan=None) -> dict:
    """tensor -> bytes its readers fetch per inference (a fused block re-reads per tile, a split per slice)."""
    reads = [1] * len(g.operators)
    for r in (plan.regions(g) if plan is not None else []):
        if "first_op" in r:
            lo, hi, n = r["first_op"], r["last_op"], r["row_tiles"] * r["col_tiles"]
        else:
            lo, hi, n = r["top"], r["bottom"], r["slices"]
        for k in range(lo, hi + 1):
            reads[k] = max(reads[k], n)
    out = {i: 0 for i in flash_tensors(g)}
    for k, op in enumerate(g.operators):
        for i in set(op.inputs):
            if i in out:
                out[i] += reads[k] * g.tensors[i].nbytes
    return out


def weight_capacity(r, primary: bool, code_bytes: int | None = None) -> int:
    """Bytes of tensors region r can take (the primary one also holds the header and the split padding).
    code_bytes: what the linked code, constants and .data take of the region holding the code, as a
    trial link measured it (steps/code.py); kept back where it exceeds the region's reserve (the
    board's allowance for code and whatever else it keeps there)."""
    kept = max(r.reserve, code_bytes) if code_bytes is not None and "code" in r.holds else r.reserve
    return max(0, r.size - kept - (HEADER_BYTES + EXT_ALIGN if primary else 0))


def place(g, plan, board, align: int | None = None, code_bytes: int | None = None) -> Placement:
    """The placement of graph g (planned by plan, None: layer by layer) on Target board; code_bytes:
    the code's measured bytes in the region holding it (None: the region's reserve stands for them)."""
    align = align or board.weights_align
    regions = board.memory_regions()
    wregs = [r for r in regions if "weights" in r.holds]
    if not wregs:
        raise PlanError(f"board {board.name} has no memory region that may hold weights")
    primary = next((r for r in wregs if r.memory == "FLASH"), wregs[0])
    wregs = [primary] + [r for r in wregs if r is not primary]
    tensors = flash_tensors(g)
    sizes = [align_up(g.tensors[i].nbytes, align) for i in tensors]
    t = traffic(g, plan)
    caps = [weight_capacity(r, r is primary, code_bytes) for r in wregs]
    tables = tables_bytes(g, align)  # the requantisation tables: in the image's primary part (flash.py)
    choice = None if tables > caps[0] else _assign([t[i] for i in tensors], sizes, [r.cost for r in wregs],
                                                   [caps[0] - tables] + caps[1:], align)
    if choice is None:
        raise _no_fit(g, board, wregs, caps, sum(sizes) + tables)
    weights = {i: wregs[c].name for i, c in zip(tensors, choice)}
    used = {r.name: 0 for r in regions}
    for i, c, s in zip(tensors, choice, sizes):
        used[wregs[c].name] += s
    used[primary.name] += HEADER_BYTES + tables
    if any(c for c in choice):  # the image's part in the primary region ends where the external part starts
        used[primary.name] = align_up(used[primary.name], EXT_ALIGN)
    spread = getattr(plan, "arena_regions", None)
    arena_reg = spread[0]["name"] if spread else _arena_region(
        regions, plan.arena_bytes + board.stack_bytes if plan is not None else 0)
    arena_bytes = plan.arena_bytes if plan is not None else 0
    for r in spread or ([{"name": arena_reg, "bytes": arena_bytes}] if arena_reg is not None else []):
        used[r["name"]] += r["bytes"]
    cost = sum(wregs[c].cost * t[i] for i, c in zip(tensors, choice))
    return Placement(board.name, weights, arena_reg, arena_bytes, used, {r.name: r.size for r in regions},
                     t, cost, primary.name, tuple(r.name for r in regions),
                     {r["name"]: r["bytes"] for r in spread or []}, _spread_buffers(plan) if spread else ())


def _spread_buffers(plan) -> tuple:
    """(region, region-local offset, size, first step, last step) of each buffer of a spread plan."""
    at = {b.id: b for b in plan.buffers}
    return tuple((r["name"], at[k].offset - r["base"], at[k].size, at[k].first_step, at[k].last_step)
                 for r in plan.arena_regions for k in r["buffers"])


def arena_regions(board) -> list:
    """The board's regions that may hold arena buffers as arena/regional.py takes them, cheapest first
    (board order breaks ties): capacity = size - reserve, less the stack in the RAM region."""
    regions = board.memory_regions()
    regs = sorted((r for r in regions if "arena" in r.holds), key=lambda r: (r.cost, regions.index(r)))
    return [ArenaRegion(r.name, max(0, r.size - r.reserve - (board.stack_bytes if r.memory == "RAM" else 0)), r.cost)
            for r in regs]


def place_arena(g, plan, board):
    """plan with its arena buffers spread over the board's regions when the board has regions of its
    own and the arena does not fit the cheapest whole (arena/regional.py); else plan itself. A fused
    plan keeps its arena whole (its tile buffers are not placed one by one)."""
    if plan is None or plan.kind != "arena" or not board.regions or plan.arena_regions:
        return plan
    regs = arena_regions(board)
    memory = {r.name: r.memory for r in board.memory_regions()}
    if not regs or memory[regs[0].name] != "RAM":  # the firmware's bt_arena is in RAM
        return plan
    return spread_arena(g, plan, regs)


def _no_fit(g, board, wregs, caps, need: int) -> PlanError:
    """The one line naming every weight region, its free bytes and how many bytes are short."""
    have = sum(caps)
    return PlanError(f"{g.name}: its {need:,} B of weights and requantisation tables do not fit board {board.name}'s weight regions "
                     + ", ".join(f"{r.name} ({c:,} B free)" for r, c in zip(wregs, caps))
                     + f": {max(need - have, 0):,} B short" + ("" if need > have else " once packed"))


def _arena_region(regions, need: int):
    """The cheapest region (board order breaks ties) that may hold the arena and fits need bytes."""
    fits = [r for r in regions if "arena" in r.holds and r.size >= need]
    return min(fits, key=lambda r: (r.cost, regions.index(r))).name if fits else None


def _assign(traffic: list, sizes: list, costs: list, caps: list, align: int):
    """Region index per item minimising sum cost[r] * traffic[i] with each region's sizes within its
    capacity; None when no assignment fits."""
    if sum(sizes) <= caps[0] and costs[0] <= min(costs):
        return [0] * len(sizes)
    if len(costs) == 1:
        return [0] * len(sizes) if sum(sizes) <= caps[0] else None
    if len(costs) == 2:
        return _knapsack(traffic, sizes, costs, caps, align)
    return _cp_sat(traffic, sizes, costs, caps)


def _knapsack(traffic, sizes, costs, caps, align):
    """Two regions: choose the set kept in region 0 maximising the cost it saves, exactly.

    best[c] is the largest saving of a set of exactly c units (-1: no such set); a set is
    admissible when its units fit region 0 and the rest fit region 1."""
    units = [s // align for s in sizes]
    total = sum(units)
    hi = min(caps[0] // align, total)
    lo = max(0, total - caps[1] // align)
    if lo > hi:
        return None
    gain = [(costs[1] - costs[0]) * t for t in traffic]
    best = np.full(hi + 1, -1, dtype=np.int64)
    best[0] = 0
    take = np.zeros((len(units), hi + 1), dtype=bool)
    for k, (u, v) in enumerate(zip(units, gain)):
        if u > hi:
            continue
        cand = np.full(hi + 1, -1, dtype=np.int64)
        src = best[:hi + 1 - u]
        cand[u:] = np.where(src >= 0, src + v, -1)
        better = cand > best
        take[k] = better
        best = np.where(better, cand, best)
    window = best[lo:hi + 1]
    if window.max() < 0:
        return None
    c = hi - int(np.argmax(window[::-1]))  # of the best sets, the one keeping most in region 0
    out = [1] * len(units)
    for k in range(len(units) - 1, -1, -1):
        if take[k, c]:
            out[k] = 0
            c -= units[k]
    return out


def _cp_sat(traffic, sizes, costs, caps):
    """Three or more regions: the generalised assignment, exactly, with CP-SAT (one worker)."""
    cp_model = cpsat.load()

    m = cp_model.CpModel()
    x = one_region_each(m, len(sizes), len(costs))
    for r, cap in enumerate(caps):
        m.Add(sum(sizes[i] * x[i][r] for i in range(len(sizes))) <= cap)
    m.Minimize(sum(costs[r] * traffic[i] * x[i][r] for i in range(len(sizes)) for r in range(len(costs))))
    return solve_choice(m, x, "the weight placement")


def describe(p: Placement) -> list:
    """One line per region holding something: name, bytes used / size, what."""
    lines = []
    for r in p.order:
        n = sum(1 for v in p.weights.values() if v == r)
        parts = p.arena_parts or ({p.arena: p.arena_bytes} if p.arena else {})
        whole = len(parts) == 1
        what = ([f"{n} weight tensors"] if n else []) + (
            ["the arena" if whole else f"arena buffers ({parts[r]:,} B)"] if r in parts else [])
        if what:
            lines.append(f"{r}: {p.used[r]:,} / {p.sizes[r]:,} B ({', '.join(what)})")
    return lines


def image_groups(g, plan, board, align: int | None = None, code_bytes: int | None = None):
    """The flash image's tensor groups when the placement puts weights outside the primary region:
    ([primary tensors, external tensors], external region name), each in first-use order; None when
    the board has no regions of its own or every weight stays in the primary region (the image is
    then as it always was). code_bytes: as place's."""
    if not board.regions:
        return None
    p = place(g, plan, board, align, code_bytes)
    ext = p.external()
    if not ext:
        return None
    if len(ext) > 1:
        raise PlanError(f"{g.name}: the placement uses {len(ext)} external weight regions ({', '.join(ext)}); "
                        f"the firmware supports one")
    tensors = flash_tensors(g)
    return [p.group(p.primary, tensors), p.group(ext[0], tensors)], ext[0]
