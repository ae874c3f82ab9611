"""The trivial plan: every activation tensor in its own buffer, one after another.

Useful as a baseline and as an executor test (no two tensors ever overlap).
"""

from __future__ import annotations

from ...model.control import subgraph_indices
from ...model.ir import Graph
from ...model.ops import graph_macs
from .. import ArenaPlan, Buffer, TensorPlace, align_up


def naive_plan(g: Graph, align: int = 16) -> ArenaPlan:
    order = [op.index for op in g.operators]
    last = len(order) - 1
    first = {i: 0 for i in g.inputs}
    lastuse = {}
    for s, oi in enumerate(order):
        op = g.operators[oi]
        for i in g.act_inputs(op):
            lastuse[i] = s
        for o in op.outputs:
            first[o] = s
    for o in g.outputs:
        lastuse[o] = last
    variable = set(g.variable_tensors())
    for v in variable:
        first[v], lastuse[v] = 0, max(last, 0)
    buffers, places, off = [], {}, 0
    for t in g.tensors:
        if t.is_const or t.index not in first:
            continue
        b = Buffer(len(buffers), off, t.nbytes, first[t.index], lastuse.get(t.index, first[t.index]), [t.index],
                   "persistent" if t.index in variable else "tensor")
        buffers.append(b)
        places[t.index] = TensorPlace(t.index, t.name, b.id, off, t.nbytes, b.first_step, b.last_step)
        off += align_up(t.nbytes, align)
    total = sum(align_up(b.size, align) for b in buffers)
    subplans, scratch = {}, {}
    for s, oi in enumerate(order):  # IF / WHILE: each subgraph's naive plan, in a scratch buffer of its own
        ks = subgraph_indices(g.operators[oi])
        if ks:
            subplans.update({k: naive_plan(g.subgraph(k), align) for k in ks})
            size = max(subplans[k].arena_bytes for k in ks)
            scratch[oi] = Buffer(len(buffers), off, size, s, s, [], "scratch", oi)
            buffers.append(scratch[oi])
            off += align_up(size, align)
    return ArenaPlan(arena_bytes=off, lower_bound_bytes=0, total_activation_bytes=total, order=order,
                     buffers=buffers, tensors=places, scratch=scratch, planner="naive", optimal=False,
                     macs=graph_macs(g), params_bytes=g.params_bytes(), align=align,
                     subplans=dict(sorted(subplans.items())))
