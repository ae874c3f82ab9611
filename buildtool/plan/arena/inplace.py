"""In-place candidates and the choice among them (the operators' kinds: opdefs.OpDef.memory).

- RESHAPE, SQUEEZE, EXPAND_DIMS (ops.ALIASING): the output always aliases its input (no copy).
- Element-wise operators (ops.ELEMENTWISE_INPLACE): the output overwrites an input of the
  same shape that this operator is the last reader of.
- CONCATENATION: its inputs are views into the output's buffer (each producer writes its slice),
  when every input is read only by the concat, is no graph input/output, has the output's
  quantisation and the concat has no fused activation.
- DEPTHWISE_CONV_2D with depth multiplier 1: the output overwrites its dying input, one channel
  plane at a time through an H_in x W_in scratch buffer live only at that step.
- PAD, PADV2: the dying input lies inside the output, shifted so that the kernel's forward copy
  never writes over an input byte it has yet to read (liveness.pad_shifts).
- CONV_2D 1x1, stride 1, c_out >= c_in, int8 (only when asked: PlanOptions.inplace_pointwise): the dying input
  lies at the tail of the output (or past its end), shifted so that a kernel going forward over the pixels in
  groups never writes over an input byte it has yet to read (liveness.pointwise_shift).

A candidate is kept only when it lowers the peak: start from all of them and drop, last first,
every one whose removal does not raise the lower bound.
"""

from __future__ import annotations

import numpy as np

from ...model.ir import Graph
from ...model.opdefs import BY_NAME
from ...model.ops import ALIASING
from .. import align_up
from .liveness import (Decision, build_buffers, build_context, concat_geometry, decision_tensors, pointwise_geometry,
                       tensor_intervals)


def reshape_decisions(g: Graph, order: list) -> list:
    return [Decision("reshape", oi) for oi in order if g.operators[oi].opcode in ALIASING
            and not g.tensors[g.operators[oi].inputs[0]].is_const]


def candidates(g: Graph, order: list, pointwise: bool = False) -> list:
    """Every in-place decision that may be legal in this order (concat views first); pointwise: 1x1
    convolutions over their dying input too."""
    iv = tensor_intervals(g, order)
    cons = g.consumers()
    outs, ins = set(g.outputs), set(g.inputs)
    concat, other = [], []
    for s, oi in enumerate(order):
        op = g.operators[oi]
        if not op.outputs:  # ASSIGN_VARIABLE writes only its variable
            continue
        o = g.tensors[op.outputs[0]]
        kind = BY_NAME[op.opcode].memory if op.opcode in BY_NAME else ""
        if kind == "concat" and op.options.get("activation", "NONE") == "NONE":
            xs = list(op.inputs)
            if (all(i >= 0 and not g.tensors[i].is_const for i in xs) and len(set(xs)) == len(xs)
                    and all(cons.get(i) == [oi] and i not in outs and i not in ins
                            and g.tensors[i].dtype == o.dtype and g.tensors[i].quant == o.quant for i in xs)
                    and concat_geometry(g, op) is not None):
                concat.append(Decision("concat", oi))
        elif kind == "elementwise":
            for x in g.act_inputs(op):
                t = g.tensors[x]
                if (tuple(t.shape) == tuple(o.shape) and t.nbytes == o.nbytes and iv[x][1] == s
                        and x not in outs):
                    other.append(Decision("elementwise", oi, x))
        elif kind == "pad":
            x = op.inputs[0]
            if iv[x][1] == s and x not in outs and not g.tensors[x].variable:
                other.append(Decision("pad", oi, x))
        elif kind == "depthwise" and op.options.get("depth_multiplier", 1) == 1:
            x = op.inputs[0]
            t = g.tensors[x]
            if (len(t.shape) == 4 and t.shape[3] == o.shape[3] and t.dtype == o.dtype == "int8"
                    and iv[x][1] == s and x not in outs):
                other.append(Decision("depthwise", oi, x))
        elif pointwise and op.opcode == "CONV_2D" and pointwise_geometry(g, op) is not None:
            x = op.inputs[0]
            if iv[x][1] == s and x not in outs and not g.tensors[x].variable:
                other.append(Decision("pointwise", oi, x))
    return concat + other


# The local search's deterministic work budget: one unit is one operator (or decision) of one
# lower-bound evaluation, as building every buffer of the set would cost. About 50,000 units took a
# second when each evaluation did that; the incremental bound (_Bounds) runs 2.5 to 12 million a
# second (nasnet_like 24 to 96 cells), so the search now stays far inside its time budget. The
# units are kept as they were so that every plan stays the same. Every search gets at least
# MIN_WORK, three times what the zoo's biggest network needs (mcunet-in3: 9,085 units).
WORK_PER_SECOND = 50_000
MIN_WORK = 30_000


def choose_work(time_budget: float) -> int:
    """Work units of one in-place choice for a planning time budget (seconds)."""
    return max(MIN_WORK, int(WORK_PER_SECOND * time_budget))


def allowed(g: Graph, decisions: list, allow=None) -> list:
    """The decisions allow(g, decision) keeps (all of them when allow is None): a runtime that executes only
    some aliasing safely (plan/tflm.py: TFLite Micro's kernels) plans with the rest left out."""
    return decisions if allow is None else [d for d in decisions if allow(g, d)]


def choose(g: Graph, order: list, align: int, work: int | None = None, stats: dict | None = None,
           allow=None, pointwise: bool = False) -> list:
    """The in-place decisions (after the RESHAPE aliases) that the lower bound says are worth it.

    Candidates interact (dropping one can make another necessary), so this is a small local
    search: from all candidates and from none, alternately add any candidate that lowers the bound
    and drop any whose removal does not raise it, until nothing changes; the better end wins.
    work bounds the units spent (default: choose_work of a 2 s budget): the search from all gets
    half, the one from none the rest, and each stops where its share runs out. stats, when given,
    receives "work" (units spent). pointwise: 1x1 convolutions over their dying input are candidates too.

    The bound of a set of decisions is evaluated incrementally (_Bounds): decisions that share no
    tensor, directly or through other decisions, are applied independently, so each such part's
    buffers are built once per subset of its decisions, and a set's live profile is the previous
    set's with the one changed part's replaced. The units counted are those of building all the
    buffers for every set (the search and its cut-off are as before; it just runs faster).
    """
    base = allowed(g, reshape_decisions(g, order), allow)
    cands = allowed(g, candidates(g, order, pointwise), allow)
    n = len(order)
    work = choose_work(2.0) if work is None else work
    spent = [0]
    bounds = _Bounds(g, order, align, base, cands)

    def lb(chosen):
        key = tuple(sorted(chosen))
        if key not in bounds.memo:
            spent[0] += n + len(base) + len(key)
        return bounds.bound(chosen, key)

    def settle(chosen, stop):
        cur, cur_lb = lb(chosen)[1], lb(chosen)[0]
        for _ in range(2 * len(cands) + 2):
            changed = False
            for k in range(len(cands)):
                if k not in cur and spent[0] < stop:
                    t_lb, t_set = lb(cur | {k})
                    if t_lb < cur_lb:
                        cur, cur_lb, changed = t_set, t_lb, True
            for k in sorted(cur, reverse=True):
                if spent[0] >= stop:
                    break
                t_lb, t_set = lb(cur - {k})
                if t_lb <= cur_lb:
                    cur, cur_lb, changed = t_set, t_lb, True
            if not changed or spent[0] >= stop:
                break
        return cur_lb, len(cur), sorted(cur)

    from_all = settle(frozenset(range(len(cands))), work // 2)
    best = min(from_all, settle(frozenset(), work))
    if stats is not None:
        stats.update(work=spent[0])
    return base + [cands[k] for k in best[2]]


class _Bounds:
    """lower_bound(build_buffers(base + the chosen candidates)) and the candidates applied, for sets
    of candidates (indices into cands), each part of independent decisions built once per subset.

    The decisions are split into parts: two decisions are in one part when they share a tensor
    (liveness.decision_tensors), directly or through others of the part. build_buffers applies a
    decision by looking at and merging only the buffers of its own tensors, so a part's buffers
    depend only on which of its decisions are chosen, in the same list order. Tensors of no decision
    keep their own buffers whatever is chosen. A set's profile is kept; the next set asked for (one
    candidate more or less, in the local search) differs from it in one part, whose profile is
    replaced: the work per set is that part's, not the graph's."""

    def __init__(self, g: Graph, order: list, align: int, base: list, cands: list):
        self.g, self.order, self.align, self.n = g, order, align, max(len(order), 1)
        self.iv = tensor_intervals(g, order)
        self.context = build_context(g, order)
        self.index = {d: k for k, d in enumerate(cands)}
        decisions = base + cands
        # union-find over tensors, joined by each decision's tensors
        root = {}

        def find(t):
            while root.get(t, t) != t:
                root[t] = root.get(root[t], root[t])
                t = root[t]
            return t

        steps = {oi: s for s, oi in enumerate(order)}
        touched = [sorted(decision_tensors(g, d, self.iv, steps)) for d in decisions]
        for ts in touched:
            a = find(ts[0])
            for t in ts[1:]:
                b = find(t)
                if a != b:
                    root[b] = a
        part_of, self.tensors, self.base = {}, [], []
        self.cand_part = []
        for j, (d, ts) in enumerate(zip(decisions, touched)):
            r = find(ts[0])
            if r not in part_of:
                part_of[r] = len(self.tensors)
                self.tensors.append(set())
                self.base.append([])
            p = part_of[r]
            self.tensors[p].update(ts)
            if j < len(base):
                self.base[p].append(d)
            else:
                self.cand_part.append(p)
        self.cands = cands
        self.part_memo = {}  # (part, its chosen candidates) -> (profile array, applied candidates)
        # the profile of every part's buffers with none of its candidates, and of the other tensors
        free = set(self.iv).difference(*self.tensors) if self.tensors else set(self.iv)
        prof = np.zeros(self.n + 1, np.int64)
        for t in free:
            f, l = self.iv[t]
            prof[f] += align_up(g.tensors[t].nbytes, align)
            prof[l + 1] -= align_up(g.tensors[t].nbytes, align)
        self.ref_prof = np.cumsum(prof)[:self.n]
        self.ref_parts = [()] * len(self.tensors)
        self.ref_applied, self.ref_set = frozenset(), frozenset()
        for p in range(len(self.tensors)):
            part_prof, applied = self._part(p, ())
            self.ref_prof = self.ref_prof + part_prof
            self.ref_applied |= applied
        self.memo = {}

    def _part(self, p: int, chosen: tuple) -> tuple:
        """(profile of part p's buffers, candidates applied) with the candidates `chosen` (sorted)."""
        key = (p, chosen)
        if key not in self.part_memo:
            bufs, applied = build_buffers(self.g, self.order, self.base[p] + [self.cands[k] for k in chosen],
                                          self.iv, self.tensors[p], self.context)
            diff = np.zeros(self.n + 1, np.int64)
            for b in bufs:
                u = align_up(b.size, self.align)
                diff[b.first] += u
                diff[b.last + 1] -= u
            self.part_memo[key] = (np.cumsum(diff)[:self.n],
                                   frozenset(self.index[d] for d in applied if d in self.index))
        return self.part_memo[key]

    def bound(self, chosen, key: tuple) -> tuple:
        """(lower bound in bytes, candidates applied) for the set chosen (key: it sorted); the set
        becomes the reference the next one is compared with."""
        if key in self.memo:
            return self.memo[key]
        # only the parts of the candidates in or out of the reference set but not both are rebuilt
        toggled = {}
        for k in chosen ^ self.ref_set:
            toggled.setdefault(self.cand_part[k], set()).add(k)
        prof, applied = self.ref_prof, self.ref_applied
        new_parts = self.ref_parts if not toggled else list(self.ref_parts)
        for p, ks in toggled.items():
            mine = tuple(sorted(ks.symmetric_difference(self.ref_parts[p])))
            old_prof, old_applied = self._part(p, self.ref_parts[p])
            new_prof, new_applied = self._part(p, mine)
            prof = prof - old_prof + new_prof
            applied = (applied - old_applied) | new_applied
            new_parts[p] = mine
        self.ref_prof, self.ref_applied, self.ref_parts, self.ref_set = prof, applied, new_parts, frozenset(chosen)
        self.memo[key] = (int(prof.max()), applied)
        return self.memo[key]
