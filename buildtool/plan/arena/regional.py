"""Arena buffers across memory regions (docs/regions.md, "Arena buffers in several regions").

spread(g, plan, regions) gives every buffer of a layer-by-layer plan a region, packs each
region's buffers on their own with the arena packers (same align) and returns the plan with
virtual offsets: region k's buffers lie in [base_k, base_k + bytes_k), the regions one after the
other from the cheapest, so the executor and the checker see one arena in which no two regions
share a byte, and code generation maps an offset to (its region's arena, offset - base_k).

The assignment is exact for the model it solves: CP-SAT (one worker: deterministic) over
buffer -> region, minimising sum cost x traffic (bytes each buffer is written + read per
inference), with every region's live bytes at every step within its capacity. A packing can
need more than that peak; a region packed past its capacity gets its bound lowered by the
excess and the assignment is solved again (the repair loop), until every region fits or none can.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import PlanError
from .. import align_up, cpsat
from . import checker, exact
from .packers import PACKERS, best_of

REPAIRS = 40  # re-solves before giving up
EXACT_SECONDS = 1.0  # the exact packer's (deterministic) budget per region that overflows


@dataclass(frozen=True)
class ArenaRegion:
    """A region the arena may use: name, bytes its buffers may take, cost per byte moved."""

    name: str
    capacity: int
    cost: int = 1


def buffer_traffic(g, plan) -> list:
    """Bytes each buffer is written + read per inference: each tensor in it once written plus once
    per operator reading it; a scratch buffer once written and once read."""
    readers = {}
    for oi in plan.order:
        for i in set(g.operators[oi].inputs):
            readers[i] = readers.get(i, 0) + 1
    out = []
    for b in plan.buffers:
        if b.kind == "scratch":
            out.append(2 * b.size)
        else:
            out.append(sum(g.tensors[i].nbytes * (1 + readers.get(i, 0)) for i in b.tensors))
    return out


def spread(g, plan, regions: list):
    """plan with its buffers placed in regions (cheapest first); plan itself when it fits the
    first region whole. Raises PlanError (one line) when no placement fits."""
    if plan.arena_bytes <= regions[0].capacity:
        return plan
    a = plan.align
    units = [align_up(b.size, a) // a for b in plan.buffers]
    traffic = buffer_traffic(g, plan)
    bounds = [r.capacity // a for r in regions]
    for _ in range(REPAIRS):
        choice = _assign(plan, units, traffic, regions, bounds)
        if choice is None:
            break
        packed = [_pack(plan, units, [k for k, c in enumerate(choice) if c == r]) for r in range(len(regions))]
        over = [max(0, top - r.capacity // a) for (top, _), r in zip(packed, regions)]
        if not any(over):
            out = _regional_plan(g, plan, regions, choice, packed)
            checker.check(g, out)
            return out
        bounds = [b - o for b, o in zip(bounds, over)]
    raise PlanError(f"{g.name}: its arena ({plan.arena_bytes:,} B, {len(plan.buffers)} buffers) does not fit "
                    + ", ".join(f"{r.name} ({r.capacity:,} B free)" for r in regions))


def _live(plan) -> list:
    """For each step, the buffers live at it."""
    steps = [[] for _ in range(max(len(plan.order), 1))]
    for k, b in enumerate(plan.buffers):
        for s in range(b.first_step, b.last_step + 1):
            steps[s].append(k)
    return steps


def _assign(plan, units, traffic, regions, bounds):
    """Region index per buffer minimising sum cost x traffic, every region's live units at every
    step within its bound; None when none fits."""
    cp_model = cpsat.load()
    if min(bounds) < 0:
        return None

    m = cp_model.CpModel()
    x = one_region_each(m, len(units), len(regions))
    for live in _live(plan):
        for r, bound in enumerate(bounds):
            m.Add(sum(units[k] * x[k][r] for k in live) <= bound)
    m.Minimize(sum(regions[r].cost * traffic[k] * x[k][r] for k in range(len(units)) for r in range(len(regions))))
    return solve_choice(m, x, "the arena's placement")


def one_region_each(m, items: int, regions: int) -> list:
    """x[i][r]: item i lives in region r, exactly one r per item (a CP-SAT model's placement variables)."""
    x = [[m.NewBoolVar(f"x{i}_{r}") for r in range(regions)] for i in range(items)]
    for row in x:
        m.AddExactlyOne(row)
    return x


def solve_choice(m, x: list, what: str):
    """Solve a placement model over one_region_each's x: each item's region index, None when nothing
    fits; a PlanError naming `what` when not proven optimal in 60 s (one worker: deterministic)."""
    cp_model = cpsat.load()

    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.max_time_in_seconds = 60.0
    st = s.Solve(m)
    if st == cp_model.INFEASIBLE:
        return None
    if st != cp_model.OPTIMAL:
        raise PlanError(f"{what} over {len(x[0]) if x else 0} regions was not proven optimal in 60 s")
    return [next(r for r, v in enumerate(row) if s.Value(v)) for row in x]


def _pack(plan, units, members: list) -> tuple:
    """(top, offsets) in units of the buffers `members` packed on their own: the heuristic packers,
    then the exact solver (deterministic budget) when they leave a gap to the lower bound."""
    if not members:
        return 0, []
    bufs = [(units[k], plan.buffers[k].first_step, plan.buffers[k].last_step) for k in members]
    live = {}
    for u, f, l in bufs:
        for s in range(f, l + 1):
            live[s] = live.get(s, 0) + u
    lower = max(live.values())
    top, _, offs = best_of(bufs, PACKERS.items(), lower)
    if top > lower:
        eo, et, _, _ = exact.solve(bufs, offs, lower, top, EXACT_SECONDS, wall_cap=False)
        if et < top:
            top, offs = et, eo
    return top, list(offs)


def _regional_plan(g, plan, regions, choice, packed):
    """The plan with each buffer at its region's base + its offset there (virtual concatenation)."""
    a = plan.align
    base, info, where = 0, [], {}
    for r, (top, offs) in zip(range(len(regions)), packed):
        members = [k for k, c in enumerate(choice) if c == r]
        for k, o in zip(members, offs):
            where[k] = base + o * a
        if members or r == 0:
            info.append({"name": regions[r].name, "base": base, "bytes": top * a, "buffers": members})
        base += top * a
    buffers = [replace(b, offset=where[k]) for k, b in enumerate(plan.buffers)]
    moved = {b.id: where[k] - b.offset for k, b in enumerate(plan.buffers)}
    tensors = {i: replace(t, offset=t.offset + moved[t.buffer]) for i, t in plan.tensors.items()}
    scratch = {op: next(b for b in buffers if b.id == sb.id) for op, sb in plan.scratch.items()}
    return replace(plan, arena_bytes=base, buffers=buffers, tensors=tensors, scratch=scratch, arena_regions=info)


__all__ = ["ArenaRegion", "spread", "buffer_traffic"]
