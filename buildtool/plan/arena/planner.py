"""plan_arena: the smallest arena we can find for a graph, verified before it is returned.

For each candidate execution order and aliasing choice: liveness -> buffers -> lower bound ->
every heuristic packer. The exact solver then works on the candidates, lowest bound first,
while one could still beat the best arena (they share one deterministic budget). The smallest
arena wins; ties go to the lower bound, then to the earlier candidate and packer, so the
result is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import PlanError
from ...model.control import subgraph_indices
from ...model.ir import Graph
from ...model.ops import graph_macs
from .. import ArenaPlan, Buffer, TensorPlace, align_up
from . import checker, exact
from .inplace import allowed, choose, choose_work, reshape_decisions
from .liveness import activation_tensors, build_buffers, lower_bound, tensor_intervals
from .order import candidate_orders, order_work
from .packers import PACKERS, best_of


@dataclass
class _Candidate:
    order: list
    decisions: list  # applied aliasing decisions
    buffers: list  # [BufferSpec]
    units: list  # [(size in align units, first, last)]
    lower: int  # lower bound in units
    offsets: list  # best packing so far, in units
    top: int
    planner: str
    optimal: bool


def _candidate(g: Graph, order: list, decisions: list, align: int, control: dict) -> _Candidate:
    bufs, applied = build_buffers(g, order, decisions, control=control)
    units = [(align_up(b.size, align) // align, b.first, b.last) for b in bufs]
    lower = lower_bound(bufs, len(order), align) // align
    t, name, offs = best_of(units, PACKERS.items(), lower)
    return _Candidate(order, applied, bufs, units, lower, offs, t, name, t == lower)


def plan_arena(g: Graph, align: int = 16, time_budget: float = 2.0, order_search: bool = True,
               inplace: bool = True, allow=None, scratch: dict | None = None,
               inplace_pointwise: bool = False) -> ArenaPlan:
    """Plan the tensor arena of g (see plan.py for what the plan promises). allow(g, decision), when given,
    keeps only the aliasing decisions it returns true for (inplace.allowed), RESHAPE aliases included.
    scratch: {operator index: bytes} a scratch buffer live at that operator's step (another runtime's kernel
    buffers: plan/tflm.py), planned like an IF's."""
    if not isinstance(align, int) or align < 1 or align & (align - 1):
        raise PlanError(f"alignment {align} must be a power of two; pass e.g. align=16")
    if not time_budget >= 0:
        raise PlanError("time budget must not be negative; pass e.g. time_budget=2")
    # control flow: each subgraph an IF / WHILE runs planned first, as an arena of its own that the operator's
    # scratch buffer holds (the largest of its subgraphs': they run one at a time)
    subplans = {k: plan_arena(g.subgraph(k), align, time_budget, order_search, inplace, allow,
                              inplace_pointwise=inplace_pointwise)
                for op in g.operators for k in subgraph_indices(op)}
    control = {op.index: max(subplans[k].arena_bytes for k in subgraph_indices(op))
               for op in g.operators if subgraph_indices(op)}
    control.update({oi: b for oi, b in (scratch or {}).items() if b > 0 and oi not in control})
    model = [op.index for op in g.operators]
    orders = candidate_orders(g, align, inplace, order_work(time_budget)) if order_search else [model]
    cands = []
    for order in orders:
        choices = [allowed(g, reshape_decisions(g, order), allow)]
        if inplace:
            chosen = choose(g, order, align, choose_work(time_budget), allow=allow, pointwise=inplace_pointwise)
            if chosen != choices[0]:
                choices.append(chosen)
        for ds in choices:
            cands.append(_candidate(g, order, ds, align, control))
    best = min(cands, key=lambda c: (c.top, c.lower))
    # exact solving, most promising candidate first, while one could still beat the best arena
    budget = time_budget
    for k in sorted(range(len(cands)), key=lambda k: (cands[k].lower, cands[k].top, k)):
        c = cands[k]
        if budget <= 0.01 * time_budget or c.lower >= best.top:
            break
        offs, t, proven, used = exact.solve(c.units, c.offsets, c.lower, c.top, budget)
        budget -= used
        if t < c.top:
            c.offsets, c.top, c.planner = offs, t, "exact"
        c.optimal = proven or t == c.lower
        best = min(cands, key=lambda c: (c.top, c.lower, not c.optimal))
    plan = _to_plan(g, best, align)
    plan.subplans = dict(sorted(subplans.items()))
    checker.check(g, plan)
    return plan


def _to_plan(g: Graph, c: _Candidate, align: int) -> ArenaPlan:
    buffers, places, scratch = [], {}, {}
    iv = tensor_intervals(g, c.order)
    for k, (b, off) in enumerate(zip(c.buffers, c.offsets)):
        base = off * align
        buf = Buffer(k, base, b.size, b.first, b.last, [m.tensor for m in b.members], b.kind, b.op)
        buffers.append(buf)
        if b.kind == "scratch":
            scratch[b.op] = buf
        for m in b.members:
            t = g.tensors[m.tensor]
            f, l = iv[m.tensor]
            places[m.tensor] = TensorPlace(m.tensor, t.name, k, base + m.offset, t.nbytes, f, l, m.pixel_stride)
    inplace_ops = sorted(d.op for d in c.decisions if d.kind != "reshape")
    total = sum(align_up(g.tensors[t].nbytes, align) for t in activation_tensors(g))
    return ArenaPlan(arena_bytes=c.top * align, lower_bound_bytes=c.lower * align, total_activation_bytes=total,
                     order=list(c.order), buffers=buffers, tensors=dict(sorted(places.items())), scratch=scratch,
                     inplace_ops=inplace_ops, planner=c.planner, optimal=c.optimal, macs=graph_macs(g),
                     params_bytes=g.params_bytes(), align=align)
