"""Execution-order search: among the topological orders of a branchy graph, find one whose
busiest step needs the fewest bytes.

Dynamic programming over the sets of operators already run (order ideals): the bytes live
after a set of operators do not depend on the order they ran in, so for each set we keep
only the best peak so far. Chains have one set per length; residual blocks and concat
branches a handful. A beam (the best `width` sets per length) bounds the work on very wide
graphs, where the result is then a good order rather than the best one. RESHAPE outputs
share their input's bytes and cost nothing.
"""

from __future__ import annotations

from ..ir import Graph
from ..plan import align_up


def _groups(g: Graph) -> dict:
    """tensor -> alias root (RESHAPE outputs join their input)."""
    root = {}
    for op in g.operators:
        if op.opcode == "RESHAPE" and not g.tensors[op.inputs[0]].is_const:
            x = op.inputs[0]
            root[op.outputs[0]] = root.get(x, x)
    return root


def best_order(g: Graph, align: int, width: int = 256) -> list:
    """A topological order with the smallest peak of live bytes (exact unless the beam cut in)."""
    n = len(g.operators)
    root = _groups(g)
    r = lambda t: root.get(t, t)  # noqa: E731
    prod = g.producers()
    size, cons_mask, is_out = {}, {}, set()
    for t in range(len(g.tensors)):
        if g.tensors[t].is_const or (t not in prod and t not in g.inputs):
            continue
        k = r(t)
        if k == t:
            size[k] = align_up(g.tensors[t].nbytes, align)
        cons_mask.setdefault(k, 0)
    for op in g.operators:
        for i in g.act_inputs(op):
            cons_mask[r(i)] |= 1 << op.index
    for o in g.outputs:
        is_out.add(r(o))
    pred = [0] * n
    succ = [[] for _ in range(n)]
    for op in g.operators:
        for i in g.act_inputs(op):
            if i in prod:
                p = prod[i]
                if not pred[op.index] >> p & 1:
                    pred[op.index] |= 1 << p
                    succ[p].append(op.index)
    new = [[r(o) for o in op.outputs if r(o) == o] for op in g.operators]
    touched = [sorted({r(i) for i in g.act_inputs(op)} | {r(o) for o in op.outputs}) for op in g.operators]

    start_live = sum(size[k] for k in size if k in {r(i) for i in g.inputs}
                     and (cons_mask[k] or k in is_out))
    ready0 = tuple(v for v in range(n) if pred[v] == 0)
    # mask -> (peak, live, order, ready)
    states = {0: (start_live, start_live, (), ready0)}
    for _ in range(n):
        nxt = {}
        for mask in sorted(states):
            peak, live, order, ready = states[mask]
            for v in ready:
                m2 = mask | 1 << v
                step = live + sum(size[k] for k in new[v])
                freed = sum(size[k] for k in touched[v] if k not in is_out and not cons_mask[k] & ~m2)
                cand = (max(peak, step), step - freed)
                old = nxt.get(m2)
                if old is not None and old[:2] <= cand:
                    continue
                rd = tuple(sorted([w for w in ready if w != v]
                                  + [w for w in succ[v] if pred[w] & ~m2 == 0]))
                nxt[m2] = (cand[0], cand[1], order + (v,), rd)
        if len(nxt) > width:
            keep = sorted(nxt, key=lambda k: (nxt[k][0], nxt[k][1], k))[:width]
            nxt = {k: nxt[k] for k in keep}
        states = nxt
    (_, (_, _, order, _)), = states.items()
    return list(order)


def candidate_orders(g: Graph, align: int) -> list:
    """The model's order first, then the searched order when it differs."""
    model = [op.index for op in g.operators]
    found = best_order(g, align) if g.operators else model
    return [model] if found == model else [model, found]
