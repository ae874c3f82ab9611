"""Execution-order search: among the topological orders of a branchy graph, find one whose
busiest step needs the fewest bytes.

Dynamic programming over the sets of operators already run (order ideals): the bytes live
after a set of operators do not depend on the order they ran in, so for each set we keep
only the best peak so far. Chains have one set per length; residual blocks and concat
branches a handful. A beam (the best `width` sets per length) and a deterministic work
budget (counted pairs of set and next operator, see best_order) bound time and memory on very
wide graphs, where the result is then a good order rather than the best one.

Tensors that will share bytes form one group: RESHAPE outputs join their input; with
in-place on, concat inputs join the concat output (views: the group is live from its first
producer on), and a same-size element-wise or depthwise operator whose input dies at it
needs no new bytes at that step (a strided depthwise output then keeps its input's size).
"""

from __future__ import annotations

from ...model.ir import Graph
from ...model.ops import ALIASING, ELEMENTWISE_INPLACE
from ...model.variables import order_edges
from .. import align_up
from .inplace import candidates


def _groups(g: Graph, views: list) -> dict:
    """tensor -> group root: RESHAPE outputs join their input, viewed concat inputs their output."""
    root = {}

    def r(t):
        while t in root:
            t = root[t]
        return t

    concat_ops = {d.op for d in views}
    for op in g.operators:
        if op.opcode in ALIASING and not g.tensors[op.inputs[0]].is_const:
            root[op.outputs[0]] = r(op.inputs[0])
        elif op.index in concat_ops:
            members = set(root.values())
            if all(r(x) == x and x not in members for x in op.inputs):
                for x in op.inputs:
                    root[x] = op.outputs[0]
    return {t: r(t) for t in root}


def _overwritable(g: Graph, align: int) -> list:
    """op -> [(input tensor, bytes saved at its step, bytes its output's buffer grows by)] for
    element-wise and depthwise operators that may run in place (the output then keeps the input's
    bytes: a strided depthwise output holds on to its bigger input's buffer)."""
    res = []
    for op in g.operators:
        if not op.outputs:  # ASSIGN_VARIABLE
            res.append([])
            continue
        o = g.tensors[op.outputs[0]]
        ob = align_up(o.nbytes, align)
        c = []
        if op.opcode in ELEMENTWISE_INPLACE:
            c = [(x, ob, 0) for x in g.act_inputs(op)
                 if tuple(g.tensors[x].shape) == tuple(o.shape) and g.tensors[x].nbytes == o.nbytes]
        elif (op.opcode == "DEPTHWISE_CONV_2D" and op.options.get("depth_multiplier", 1) == 1
              and g.tensors[op.inputs[0]].shape[3] == o.shape[3]):
            x = g.tensors[op.inputs[0]]
            c = [(x.index, ob - align_up(x.shape[1] * x.shape[2], align), align_up(x.nbytes, align) - ob)]
        res.append([e for e in c if e[1] > 0 and e[0] not in g.outputs])
    return res


# The order search's deterministic work budget: one unit is one (set, next operator) pair tried
# on a graph of up to 512 operators (sets are bit masks: on bigger graphs a pair costs one unit
# per 512 operators). About 100,000 units take a second here; every search gets at least
# MIN_WORK, which keeps it exact on chains, residual networks and small branchy graphs.
WORK_PER_SECOND = 100_000
MIN_WORK = 50_000


def order_work(time_budget: float) -> int:
    """Work units of one order search for a planning time budget (seconds)."""
    return max(MIN_WORK, int(WORK_PER_SECOND * time_budget))


def _low_bits(x: int, k: int) -> list:
    """The k lowest set bits of x (operator indices in model order)."""
    out = []
    while x and len(out) < k:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


def best_order(g: Graph, align: int, inplace: bool = False, width: int = 256, work: int | None = None,
               stats: dict | None = None, views: bool = True) -> list:
    """A topological order with the smallest peak of live bytes (exact unless the beam cut in).

    work bounds the work units spent (default: order_work of a 2 s budget; see WORK_PER_SECOND).
    Each step gets an even share of what is left; a step that cannot afford every ready operator
    of every set tries, from its best sets, only the ready operators earliest in the model order,
    down to one (then the model order itself), and keeps no more sets than it could afford.
    stats, when given, receives "work" (units spent) and "cut" (steps that could not try all).
    views=False (with inplace): concat inputs are not counted as views into the concat's output.
    """

    n = len(g.operators)
    work = order_work(2.0) if work is None else work
    model = [op.index for op in g.operators]
    views = [d for d in candidates(g, model) if d.kind == "concat"] if inplace and views else []
    root = _groups(g, views)
    r = lambda t: root.get(t, t)  # noqa: E731
    # variable (state) tensors are live at every step whatever the order: they do not steer it
    acts = lambda op: [i for i in g.act_inputs(op) if not g.tensors[i].variable]  # noqa: E731
    prod = g.producers()
    size, cons_mask, prod_mask, is_out = {}, {}, {}, set()
    ins = {r(i) for i in g.inputs}
    for t in sorted(set(prod) | set(g.inputs)):
        if g.tensors[t].is_const:
            continue
        k = r(t)
        if k == t:
            size[k] = align_up(g.tensors[t].nbytes, align)
        cons_mask.setdefault(k, 0)
        prod_mask[k] = prod_mask.get(k, 0) | (1 << prod[t] if t in prod else 0)
    for op in g.operators:
        for i in acts(op):
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
    for p, q in order_edges(g):  # a variable's reads and assignments keep the model's order
        if not pred[q] >> p & 1:
            pred[q] |= 1 << p
            succ[p].append(q)
    made = [sorted({r(o) for o in op.outputs} - ins) for op in g.operators]
    over = _overwritable(g, align) if inplace else [[] for _ in g.operators]
    # an output viewed inside a concat's buffer has its bytes there: it cannot also take its input's
    over = [c if op.outputs and r(op.outputs[0]) == op.outputs[0] else [] for op, c in zip(g.operators, over)]
    touched = [sorted({r(i) for i in acts(op)} | {r(o) for o in op.outputs}) for op in g.operators]

    start_live = sum(size[k] for k in ins if cons_mask[k] or k in is_out)
    ready0 = 0
    for v in range(n):
        if pred[v] == 0:
            ready0 |= 1 << v
    # (mask, live) -> (peak, index of the state it came from, operator run, ready mask). The live
    # bytes after a set of operators depend on the path only through in-place strided depthwise
    # runs, so a few lives per set are kept. Each step's states are kept in `trail` as
    # (from, operator) pairs, so an order is rebuilt at the end instead of copied at every step.
    states = {(0, start_live): (start_live, -1, -1, ready0)}
    trail, used, cut = [], 0, 0
    unit = 1 + n // 512
    for i in range(n):
        keys = sorted(states)
        pos = {key: k for k, key in enumerate(keys)}
        allowance = max(1, (work - used) // ((n - i) * unit))  # pairs
        take, keep = {key: n for key in keys}, width
        if sum(states[key][3].bit_count() for key in keys) > allowance:
            # not affordable: the best sets first, each trying its earliest ready operators
            cut += 1
            best = sorted(keys, key=lambda k: (states[k][0], k[1], k[0]))[:allowance]
            take, keep = {key: max(1, allowance // len(best)) for key in best}, min(width, allowance)
        nxt = {}
        for key in keys:
            if key not in take:
                continue
            mask, live = key
            peak, _, _, ready = states[key]
            for v in _low_bits(ready, take[key]):
                used += unit
                m2 = mask | 1 << v
                step = live + sum(size[k] for k in made[v] if not prod_mask[k] & mask)
                freed = sum(size[k] for k in touched[v] if k not in is_out and not cons_mask[k] & ~m2)
                # running v in place is a choice, not a rule: a strided depthwise output that keeps
                # its input's bigger buffer can cost more later than it saves now
                for saved, grow in [(0, 0)] + [(sv, -gr) for x, sv, gr in over[v]
                                               if r(x) not in is_out and not cons_mask[r(x)] & ~m2]:
                    k2 = (m2, step - freed - grow)
                    pk = max(peak, step - saved)
                    old = nxt.get(k2)
                    if old is not None and old[0] <= pk:
                        continue
                    nxt[k2] = (pk, pos[key], v)
        # drop a state when another one of the same set has no higher peak and no more live bytes
        front, kept = {}, {}
        for key in sorted(nxt, key=lambda k: (k[0], k[1], nxt[k][0])):
            pk = nxt[key][0]
            if key[0] in front and front[key[0]] <= pk:
                continue
            front[key[0]] = pk
            kept[key] = nxt[key]
        if len(kept) > keep:
            kept = {k: kept[k] for k in sorted(kept, key=lambda k: (kept[k][0], k[1], k[0]))[:keep]}
        new = {}
        for key, (pk, src, v) in kept.items():
            rd = states[keys[src]][3] & ~(1 << v)
            for w in succ[v]:
                if pred[w] & ~key[0] == 0:
                    rd |= 1 << w
            new[key] = (pk, src, v, rd)
        states = new
        trail.append([new[key][1:3] for key in sorted(new)])
    if stats is not None:
        stats.update(work=used, cut=cut)
    best = None
    for k, key in enumerate(sorted(states)):
        order = []
        for step in range(n - 1, -1, -1):
            k, v = trail[step][k]
            order.append(v)
        cand = (states[key][0], order[::-1])
        best = cand if best is None or cand < best else best
    return best[1]


def candidate_orders(g: Graph, align: int, inplace: bool = True, work: int | None = None) -> list:
    """The model's order first, then the searched orders (without and with in-place) that differ;
    each search spends at most `work` units (see best_order).

    The in-place search counts every concat's inputs as views, live from the first one's producer:
    when the views do not pay, an order that runs a depthwise or element-wise operator in place
    can still win, so a graph with concat views gets a third search, in-place without them."""
    res = [[op.index for op in g.operators]]
    if g.operators:
        searches = [(False, True), (True, True)] if inplace else [(False, True)]
        if inplace and any(d.kind == "concat" for d in candidates(g, res[0])):
            searches.append((True, False))
        for ip, views in searches:
            o = best_order(g, align, ip, work=work, views=views)
            if o not in res:
                res.append(o)
    return res
