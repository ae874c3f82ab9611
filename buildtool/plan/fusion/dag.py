"""The network as a DAG: nodes are cuts between operators, edges are layers or fusion blocks.

Cut p (0..n) is the state after the first p operators of the model order; the tensors
live across it are held whole in the arena. An edge p -> q runs operators [p, q):
either one operator as usual (q = p + 1) or a fusion block. While an edge runs, every
tensor live across p or q is in the arena (residual tensors held across a block count
towards its peak), plus the block's window buffers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import PlanError
from ...model.ops import ELEMENTWISE_INPLACE
from .. import align_up
from .geometry import dense_tail, reduces_tiles, tileable


@dataclass
class Network:
    g: object
    streamed: bool  # the graph input comes from a source callback, a band at a time
    align: int
    born: dict = field(default_factory=dict)  # tensor -> producing operator (-1: graph input)
    last: dict = field(default_factory=dict)  # tensor -> last reading operator (n: graph output; -1: none)
    whole: list = field(default_factory=list)  # cut -> aligned bytes of the tensors live across it
    first_start: list = field(default_factory=list)  # q -> smallest p with [p, q) a candidate block run
    users: dict = field(default_factory=dict)  # tensor -> operator indices that read it, in order
    made_live: dict = field(default_factory=dict)  # q -> live_maker(q), computed on first use
    made_across: dict = field(default_factory=dict)  # q -> [bytes made by operators [q - j, q) held across q]
    end_rules: dict = field(default_factory=dict)  # q -> end_rule(q), computed on first use

    @property
    def n(self) -> int:
        return len(self.g.operators)

    def held(self, t: int) -> int:
        if self.streamed and t in self.g.inputs:
            return 0
        return align_up(self.g.tensors[t].nbytes, self.align)

    def is_live(self, t: int, p: int) -> bool:
        """Is tensor t held whole across cut p (made before it, read at or after it)?"""
        s, e = self.born.get(t, -1), self.last.get(t, -1)
        return s < p <= e or (p == 0 and s == -1)

    def live_maker(self, q: int) -> int:
        """The last operator k in [first_start[q], q - 1) with an output held across cut q (-1: none):
        a block [p, q) with p <= k would need that output whole while its tiles run (block_ok)."""
        k = self.made_live.get(q)
        if k is None:
            ops = self.g.operators
            k = next((k for k in range(q - 2, max(self.first_start[q], 0) - 1, -1)
                      if any(self.is_live(o, q) for o in ops[k].outputs)), -1)
            self.made_live[q] = k
        return k

    def edge_whole(self, p: int, q: int) -> int:
        """Aligned bytes of whole tensors in the arena while edge p -> q runs: those live across p
        or q (the ones across q not across p are made by operators p..q-1), and for one operator
        its outputs nobody reads."""
        ops = self.g.operators
        made = self.made_across.setdefault(q, [0])  # extended back from q as far as asked, once per q
        while len(made) <= q - p:
            k = q - len(made)
            made.append(made[-1] + sum(self.held(o) for o in ops[k].outputs if self.is_live(o, q)))
        res = self.whole[p] + made[q - p]
        if q == p + 1:
            res += sum(self.held(o) for o in ops[p].outputs if not self.is_live(o, q))
        return res


def build_network(g, streamed: bool = False, align: int = 16) -> Network:
    net = Network(g, streamed, align)
    n = len(g.operators)
    prod = {i: -1 for i in g.inputs}
    last = {}
    for op in g.operators:
        for o in op.outputs:
            prod[o] = op.index
        for i in g.act_inputs(op):
            last[i] = max(last.get(i, -1), op.index)
            net.users.setdefault(i, []).append(op.index)
    for o in g.outputs:
        last[o] = n
    net.born, net.last = prod, last
    change = [0] * (n + 2)
    for t, s in prod.items():  # live across cuts s + 1 .. last (a graph input across cut 0 at least)
        e = max(last.get(t, -1), 0) if s == -1 else last.get(t, -1)
        if e >= s + 1:
            change[s + 1] += net.held(t)
            change[e + 1] -= net.held(t)
    run = 0
    for p in range(n + 1):
        run += change[p]
        net.whole.append(run)
    if streamed:
        for i in g.inputs:
            users = [op.index for op in g.operators if i in g.act_inputs(op)]
            if not users or not all(tileable(g, g.operators[u]) for u in users):
                raise PlanError("--input-streamed needs the model input read only by convolution, pooling "
                                "or element-wise operators; plan without --input-streamed")
    start = 0
    for q in range(1, n + 1):
        op = g.operators[q - 1]
        if tileable(g, op):
            net.first_start.append(start)
        elif reduces_tiles(g, op) and q >= 2 and tileable(g, g.operators[q - 2]):
            net.first_start.append(start)
        else:
            net.first_start.append(-1)
        if not tileable(g, op):
            start = q
    net.first_start.insert(0, -1)
    for q in range(2, n + 1):  # a dense layer over the last spatial output, flattened or not
        k = tail_cut(g, q)
        if k is not None:
            net.first_start[q] = net.first_start[k]
    return net


def tail_cut(g, q: int) -> int | None:
    """The cut before a dense tail ending at operator q-1 (before its flattening RESHAPE, else
    before the dense layer), when the operator just before that cut is tileable and makes the
    tensor the tail reads: a block ending at q then accumulates the dense layer tile by tile."""
    tail = dense_tail(g, range(max(q - 2, 0), q))
    if tail is None:
        return None
    k = tail[0] if tail[0] >= 0 else tail[1]
    if k < 1 or not tileable(g, g.operators[k - 1]) or g.operators[k - 1].outputs[0] != g.operators[k].inputs[0]:
        return None
    return k


def block_ok(net: Network, p: int, q: int) -> bool:
    """Can operators [p, q) run as one fusion block?"""
    lo, hi = end_rule(net, q)
    if not lo <= p < hi:
        return False
    if net.streamed:
        g = net.g
        for i in g.inputs:
            if p != 0 and any(p <= u < q for u in net.users.get(i, [])):
                return False
            if p == 0 and net.is_live(i, q):
                return False
    return True


def end_rule(net: Network, q: int) -> tuple:
    """(lo, hi): the starts p with lo <= p < hi are those block_ok's rules on the operators before cut q
    allow (a streamed input aside); lo >= hi when no block may end at q. Computed once per cut (the
    search asks for every start of every end)."""
    rule = net.end_rules.get(q)
    if rule is None:
        net.end_rules[q] = rule = _end_rule(net, q)
    return rule


def _end_rule(net: Network, q: int) -> tuple:
    g = net.g
    if net.first_start[q] < 0:
        return 0, 0
    hi = q
    last = g.operators[q - 1]
    k = tail_cut(g, q)
    if k is not None:
        hi = min(hi, k)
    elif reduces_tiles(g, last):
        if last.inputs[0] != g.operators[q - 2].outputs[0]:
            return 0, 0
        hi = min(hi, q - 1)
    elif not tileable(g, last):
        return 0, 0
    return max(net.first_start[q], net.live_maker(q) + 1), hi  # no operator of [p, q - 1) makes a tensor held across q


# The longest block the search considers (operators). Every block of the zoo's networks is
# shorter; the cap keeps the search linear in the length of very deep tileable runs.
MAX_BLOCK_OPS = 96


def block_starts(net: Network, q: int, cap: int = MAX_BLOCK_OPS) -> range:
    """The cuts p that may start a block ending at q as far as block_ok's rule on tensors used
    after q goes (scanning back from q - 1, the first operator that makes such a tensor ends it)
    and the block length cap (at most MAX_BLOCK_OPS operators) allow."""
    p0 = net.first_start[q]
    if p0 < 0:
        return range(0)
    p0 = max(p0, q - min(cap, MAX_BLOCK_OPS))
    p = q - 1
    while p > p0 and not any(net.is_live(o, q) for o in net.g.operators[p - 1].outputs):
        p -= 1
    return range(p, q)


def plain_ok(net: Network, p: int) -> bool:
    """Can operator p run on its own, as usual? Not when it would read a streamed input whole."""
    if not net.streamed:
        return True
    return not any(i in net.g.inputs for i in net.g.act_inputs(net.g.operators[p]))


def main_tensor(net: Network, p: int) -> int | None:
    """The tensor a block starting at cut p may consume row by row: the output of operator p-1
    (the graph input at cut 0, unless it is streamed)."""
    g = net.g
    if p == 0:
        return g.inputs[0] if len(g.inputs) == 1 and not net.streamed else None
    return g.operators[p - 1].outputs[0]


def dies_in(net: Network, t: int | None, p: int, q: int) -> bool:
    """Is t read only by operators [p, q) (so its rows can be freed as the block's tiles pass)?"""
    if t is None or t in net.g.outputs:
        return False
    users = net.users.get(t, [])
    return bool(users) and p <= users[0] and users[-1] < q


def inplace_input(net: Network, p: int) -> int | None:
    """The input whose bytes operator p's output takes when p runs as usual: a same-shape
    element-wise operator over an input it is the last reader of, neither a graph input nor a
    graph output (the arena planner's element-wise in-place). None when there is none."""
    g = net.g
    op = g.operators[p]
    if op.opcode not in ELEMENTWISE_INPLACE or op.outputs[0] in g.outputs:
        return None
    o = g.tensors[op.outputs[0]]
    for x in g.act_inputs(op):
        t = g.tensors[x]
        if (tuple(t.shape) == tuple(o.shape) and t.nbytes == o.nbytes and t.dtype == o.dtype
                and net.last.get(x) == p and x not in g.inputs and x not in g.outputs):
            return x
    return None
