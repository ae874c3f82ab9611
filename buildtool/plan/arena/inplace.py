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

A candidate is kept only when it lowers the peak: start from all of them and drop, last first,
every one whose removal does not raise the lower bound.
"""

from __future__ import annotations

from ...model.ir import Graph
from ...model.opdefs import BY_NAME
from ...model.ops import ALIASING
from .liveness import Decision, build_buffers, concat_geometry, lower_bound, tensor_intervals


def reshape_decisions(g: Graph, order: list) -> list:
    return [Decision("reshape", oi) for oi in order if g.operators[oi].opcode in ALIASING
            and not g.tensors[g.operators[oi].inputs[0]].is_const]


def candidates(g: Graph, order: list) -> list:
    """Every in-place decision that may be legal in this order (concat views first)."""
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
    return concat + other


# The local search's deterministic work budget: one unit is one operator (or decision) of one
# lower-bound evaluation. About 50,000 units take a second here; every search gets at least
# MIN_WORK, three times what the zoo's biggest network needs (mcunet-in3: 9,085 units).
WORK_PER_SECOND = 50_000
MIN_WORK = 30_000


def choose_work(time_budget: float) -> int:
    """Work units of one in-place choice for a planning time budget (seconds)."""
    return max(MIN_WORK, int(WORK_PER_SECOND * time_budget))


def choose(g: Graph, order: list, align: int, work: int | None = None, stats: dict | None = None) -> list:
    """The in-place decisions (after the RESHAPE aliases) that the lower bound says are worth it.

    Candidates interact (dropping one can make another necessary), so this is a small local
    search: from all candidates and from none, alternately add any candidate that lowers the bound
    and drop any whose removal does not raise it, until nothing changes; the better end wins.
    work bounds the units spent (default: choose_work of a 2 s budget): the search from all gets
    half, the one from none the rest, and each stops where its share runs out. stats, when given,
    receives "work" (units spent).
    """
    base = reshape_decisions(g, order)
    cands = candidates(g, order)
    n = len(order)
    index = {d: k for k, d in enumerate(cands)}
    memo = {}
    work = choose_work(2.0) if work is None else work
    spent = [0]
    iv = tensor_intervals(g, order)  # the same for every set of decisions tried

    def lb(chosen):
        key = tuple(sorted(chosen))
        if key not in memo:
            spent[0] += n + len(base) + len(key)
            bufs, applied = build_buffers(g, order, base + [cands[k] for k in key], iv)
            memo[key] = (lower_bound(bufs, n, align), frozenset(index[d] for d in applied if d in index))
        return memo[key]

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
