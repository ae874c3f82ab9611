"""An independent verifier of arena plans.

It recomputes everything it needs from the graph and plan.order alone (it shares no code with
the planner) and answers one question: does running the operators in this order with these
placements ever overwrite a byte that is still needed? Plus the bookkeeping the executor and
code generator rely on: buffers cover their tensors, alignment, arena size, lower bound.
"""

from __future__ import annotations

import numpy as np

from ...errors import PlanError
from ...model.control import subgraph_indices
from ...model.ir import Graph
from ...model.ops import ALIASING, ELEMENTWISE_INPLACE
from ...model.variables import order_edges
from .. import ArenaPlan

_ELEMENTWISE = ELEMENTWISE_INPLACE


def _up(n: int, a: int) -> int:
    return -(-n // a) * a


def _span(g: Graph, p) -> tuple:
    """[start, end) bytes a placed tensor touches."""
    t = g.tensors[p.index]
    if not p.pixel_stride:
        return p.offset, p.offset + t.nbytes
    inner = t.shape[-1]
    return p.offset, p.offset + (t.nbytes // inner - 1) * p.pixel_stride + inner


def _bytes(g: Graph, p) -> np.ndarray:
    t = g.tensors[p.index]
    if not p.pixel_stride:
        return np.arange(p.offset, p.offset + t.nbytes)
    inner = t.shape[-1]
    px = np.arange(t.nbytes // inner) * p.pixel_stride + p.offset
    return (px[:, None] + np.arange(inner)[None, :]).reshape(-1)


def _share_bytes(g: Graph, a, b) -> bool:
    (a0, a1), (b0, b1) = _span(g, a), _span(g, b)
    if a1 <= b0 or b1 <= a0:
        return False
    if not a.pixel_stride and not b.pixel_stride:
        return True
    return np.intersect1d(_bytes(g, a), _bytes(g, b), assume_unique=True).size > 0


def problems(g: Graph, plan: ArenaPlan) -> list:
    """Everything wrong with the plan (empty when it is sound)."""
    err = []
    n = len(g.operators)
    a = plan.align
    if a < 1 or a & (a - 1):
        return [f"align {a} is not a power of two"]
    order = list(plan.order)
    if sorted(order) != list(range(n)):
        return [f"order is not a permutation of the {n} operators"]
    step = {oi: s for s, oi in enumerate(order)}
    for p, q in order_edges(g):  # a variable's reads and assignments in the model's order
        if step[p] > step[q]:
            err.append(f"operator {q} ({g.operators[q].opcode}) runs before operator {p} "
                       f"({g.operators[p].opcode}) of the same variable; they must keep the model's order")

    # liveness, recomputed from scratch
    variable = {t.index for t in g.tensors if t.variable}
    have = {i for i in g.inputs if not g.tensors[i].is_const} | variable
    first = {i: 0 for i in have}
    last = {i: (max(n - 1, 0) if i in variable else 0) for i in have}
    for s, oi in enumerate(order):
        op = g.operators[oi]
        for i in op.inputs:
            if i < 0 or g.tensors[i].is_const:
                continue
            if i not in have:
                err.append(f"step {s}: operator {oi} reads tensor {i} before it is produced")
                continue
            last[i] = max(last[i], s)
        for o in op.outputs:
            have.add(o)
            if o not in variable:  # a signal operator's state output lives at every step (model/signal.py)
                first[o] = last[o] = s
    if err:
        return err
    for o in g.outputs:
        if o in last:
            last[o] = max(n - 1, 0)

    # every activation tensor placed, with the right size and interval
    if set(plan.tensors) != have:
        miss, extra = sorted(have - set(plan.tensors)), sorted(set(plan.tensors) - have)
        return [f"placed tensors differ from activation tensors (missing {miss[:5]}, extra {extra[:5]})"]
    bufs = {b.id: b for b in plan.buffers}
    if len(bufs) != len(plan.buffers):
        err.append("buffer ids are not unique")
    for t, p in sorted(plan.tensors.items()):
        if p.index != t or p.size != g.tensors[t].nbytes:
            err.append(f"tensor {t}: place has index {p.index}, size {p.size} (expected {g.tensors[t].nbytes})")
        if (p.first_step, p.last_step) != (first[t], last[t]):
            err.append(f"tensor {t}: live {p.first_step}..{p.last_step}, recomputed {first[t]}..{last[t]}")
        b = bufs.get(p.buffer)
        if b is None or b.kind != ("persistent" if t in variable else "tensor"):
            err.append(f"tensor {t}: buffer {p.buffer} does not exist or is not a "
                       f"{'persistent' if t in variable else 'tensor'} buffer")
            continue
        if t in variable and (b.tensors != [t] or (b.first_step, b.last_step) != (0, max(n - 1, 0))):
            err.append(f"variable tensor {t}: its persistent buffer {b.id} must hold it alone at every step")
        s0, s1 = _span(g, p)
        if p.pixel_stride < 0 or s0 < b.offset or s1 > b.offset + b.size:
            err.append(f"tensor {t}: bytes {s0}..{s1} outside buffer {b.id} ({b.offset}..{b.offset + b.size})")
        if not (b.first_step <= first[t] and last[t] <= b.last_step):
            err.append(f"tensor {t}: live {first[t]}..{last[t]} outside buffer {b.id}'s steps")
        if t not in b.tensors:
            err.append(f"tensor {t} is not listed in its buffer {b.id}")
    for b in plan.buffers:
        if b.offset < 0 or b.offset % a:
            err.append(f"buffer {b.id}: offset {b.offset} is not a non-negative multiple of {a}")
        if b.offset + _up(b.size, a) > plan.arena_bytes:
            err.append(f"buffer {b.id}: ends at {b.offset + _up(b.size, a)}, beyond the arena ({plan.arena_bytes})")
        if not (0 <= b.first_step <= b.last_step < max(n, 1)):
            err.append(f"buffer {b.id}: steps {b.first_step}..{b.last_step} out of range")
        for t in b.tensors:
            if t not in plan.tensors or plan.tensors[t].buffer != b.id:
                err.append(f"buffer {b.id} lists tensor {t}, which is placed elsewhere")
    if plan.arena_bytes % a or plan.arena_bytes < 0:
        err.append(f"arena_bytes {plan.arena_bytes} is not a multiple of {a}")

    # scratch buffers: one per listed op, live exactly at its step
    scratch_ids = set()
    for oi, sb in sorted(plan.scratch.items()):
        b = bufs.get(sb.id)
        if b is None or b != sb or b.kind != "scratch" or b.op != oi or oi not in step:
            err.append(f"scratch of operator {oi} does not match a scratch buffer")
            continue
        if (b.first_step, b.last_step) != (step[oi], step[oi]) or b.tensors:
            err.append(f"scratch of operator {oi} must live only at its step and hold no tensors")
        scratch_ids.add(b.id)
    for b in plan.buffers:
        if b.kind == "scratch" and b.id not in scratch_ids:
            err.append(f"scratch buffer {b.id} is not listed in plan.scratch")
    err += _control_problems(g, plan)
    if err:
        return err

    # buffers live at a common step never share bytes
    bl = sorted(plan.buffers, key=lambda b: (b.offset, b.id))
    for i, x in enumerate(bl):
        for y in bl[i + 1:]:
            if y.offset >= x.offset + _up(x.size, a):
                break
            if x.first_step <= y.last_step and y.first_step <= x.last_step:
                err.append(f"buffers {x.id} and {y.id} overlap in bytes while both live")

    # lower bound and totals, recomputed
    change = [0] * (max(n, 1) + 1)
    for b in plan.buffers:
        change[b.first_step] += _up(b.size, a)
        change[b.last_step + 1] -= _up(b.size, a)
    prof = np.cumsum(change[:-1]).tolist()
    if plan.lower_bound_bytes != max(prof):
        err.append(f"lower_bound_bytes {plan.lower_bound_bytes} != recomputed {max(prof)}")
    tot = sum(_up(g.tensors[t].nbytes, a) for t in have)
    if plan.total_activation_bytes != tot:
        err.append(f"total_activation_bytes {plan.total_activation_bytes} != recomputed {tot}")

    err += _sharing_problems(g, plan, step, first, last)
    err += region_problems(plan)
    err += staged_problems(g, plan, step)
    return err


def staged_problems(g: Graph, plan: ArenaPlan, step: dict) -> list:
    """Weights staged in SRAM (plan/staging.py): each a constant input of its operator, which alone reads it,
    copied at that operator's step into bytes that, aligned, lie inside the arena and share none with a buffer
    live at that step (or inside bt_staging), nor with another tensor staged at the same step; one copied once
    ("once": by model_init, in bt_staging only) shares no byte of bt_staging with any other."""
    err, a = [], plan.align
    if not plan.staged:
        return [f"staging_bytes {plan.staging_bytes} without staged tensors"] if plan.staging_bytes else []
    if plan.arena_regions or plan.subplans:
        return ["weights staged in a plan over several arena regions or with subgraphs"]
    readers = {}
    for op in g.operators:
        for i in set(op.inputs):
            readers.setdefault(i, set()).add(op.index)
    spans = {}
    for d in plan.staged:
        oi, t, lo, size = d["op"], d["tensor"], d["offset"], d["size"]
        what = f"staged tensor {t} of operator {oi}"
        if oi not in step or d["step"] != step[oi]:
            err.append(f"{what}: step {d['step']} is not the operator's")
            continue
        if not (0 <= t < len(g.tensors)) or not g.tensors[t].is_const or readers.get(t) != {oi}:
            err.append(f"{what} is not a constant that operator alone reads")
            continue
        if size != g.tensors[t].nbytes:
            err.append(f"{what}: {size} B, the tensor has {g.tensors[t].nbytes}")
        hi = lo + _up(size, a)
        end = plan.staging_bytes if d["spare"] else plan.arena_bytes
        if lo < 0 or lo % a or hi > end:
            err.append(f"{what}: bytes {lo}..{hi} not aligned inside {'bt_staging' if d['spare'] else 'the arena'} "
                       f"(0..{end})")
        if d.get("once") and not d["spare"]:
            err.append(f"{what}: copied once but in the arena, which other steps reuse")
        # a copy made once (model_init) holds its bt_staging bytes at every step
        near = [x for k, v in spans.items() if k[1] and (d.get("once") or k[2]) or k == (d["step"], d["spare"], False)
                for x in v] if d["spare"] else spans.get((d["step"], False, False), [])
        for x0, x1, other in near:
            if lo < x1 and x0 < hi:
                err.append(f"{what} shares bytes {max(lo, x0)}..{min(hi, x1)} with staged tensor {other}")
        spans.setdefault((d["step"], d["spare"], bool(d.get("once"))), []).append((lo, hi, t))
        if d["spare"]:
            continue
        for b in plan.buffers:
            b0, b1 = b.offset, b.offset + _up(b.size, a)
            if b.first_step <= d["step"] <= b.last_step and lo < b1 and b0 < hi:
                err.append(f"{what} shares bytes {max(lo, b0)}..{min(hi, b1)} with buffer {b.id}, live at step "
                           f"{d['step']}")
    return err


def region_problems(plan) -> list:
    """A plan over several arena regions: the regions lie one after the other from 0 to arena_bytes
    (each its own address space), every buffer is in exactly one, and wholly inside it (so no two
    regions share a byte and each region's offsets run from 0 to its bytes)."""
    regs = getattr(plan, "arena_regions", None) or []
    if not regs:
        return []
    err, at, owner = [], 0, {}
    for r in regs:
        if r["base"] != at or r["bytes"] < 0 or r["bytes"] % plan.align:
            err.append(f"arena region {r['name']} at {r['base']} ({r['bytes']} B) does not follow at {at}")
        at = r["base"] + r["bytes"]
        for k in r["buffers"]:
            owner.setdefault(k, []).append(r)
    if at != plan.arena_bytes:
        err.append(f"arena regions end at {at}, arena_bytes is {plan.arena_bytes}")
    for b in plan.buffers:
        rs = owner.get(b.id, [])
        if len(rs) != 1:
            err.append(f"buffer {b.id} is in {len(rs)} arena regions")
        elif not (rs[0]["base"] <= b.offset and b.offset + _up(b.size, plan.align) <= rs[0]["base"] + rs[0]["bytes"]):
            err.append(f"buffer {b.id} [{b.offset}, {b.offset + b.size}) is not inside region {rs[0]['name']}")
    return err


def _view_places(g: Graph, op, out) -> dict | None:
    """tensor -> (offset, pixel_stride) each concat input must have to be a view of `out`."""
    rank = len(g.tensors[op.outputs[0]].shape)
    shape = g.tensors[op.outputs[0]].shape
    axis = op.options.get("axis", 0) % rank
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    res, pos = {}, 0
    for i in op.inputs:
        t = g.tensors[i]
        if axis == rank - 1 and outer > 1 and rank == 4:
            res[i] = (out.offset + pos, shape[-1])
            pos += t.shape[-1]
        elif outer == 1:
            res[i] = (out.offset + pos, 0)
            pos += t.nbytes
        else:
            return None
    return res


def _inplace_rule(g: Graph, plan: ArenaPlan, oi: int, step: dict, last: dict, consumers: dict) -> tuple:
    """(pairs this in-place op justifies, problem or None)."""
    op = g.operators[oi]
    s = step[oi]
    P = plan.tensors
    o = op.outputs[0]
    po = P[o]
    outs, ins = set(g.outputs), set(g.inputs)
    if op.opcode == "CONCATENATION":
        views = _view_places(g, op, po)
        if views is None or po.pixel_stride or op.options.get("activation", "NONE") != "NONE":
            return set(), f"operator {oi}: concat cannot use views"
        if len(set(op.inputs)) != len(op.inputs):
            return set(), f"operator {oi}: concat repeats an input"
        for i in op.inputs:
            t, pi = g.tensors[i], P.get(i)
            if pi is None or (pi.offset, pi.pixel_stride) != views[i]:
                return set(), f"operator {oi}: input {i} is not a view at its slice of the output"
            if i in outs or i in ins or t.variable or consumers.get(i) != {oi} or last[i] != s:
                return set(), f"operator {oi}: input {i} has other readers or is a graph input/output"
            if t.quant != g.tensors[o].quant or t.dtype != g.tensors[o].dtype:
                return set(), f"operator {oi}: input {i} quantisation differs from the output's"
        return {frozenset((i, o)) for i in op.inputs}, None
    if op.opcode in ("PAD", "PADV2"):
        x = op.inputs[0]
        px, tx, to = P[x], g.tensors[x], g.tensors[o]
        if px.pixel_stride or po.pixel_stride:
            return set(), f"operator {oi}: a pad in place needs dense input and output"
        if last[x] != s or x in outs or tx.variable:
            return set(), f"operator {oi}: overwritten input {x} is still needed after this step"
        item = np.dtype(tx.dtype).itemsize if tx.dtype != "bool" else 1
        shift = px.offset - po.offset
        if shift % item or shift < _pad_least_shift(g, op) * item or shift + tx.nbytes > to.nbytes:
            return set(), (f"operator {oi}: pad input {x} at {shift} B into the output: the forward copy would "
                           f"overwrite input it has yet to read")
        return {frozenset((x, o))}, None
    if op.opcode == "CONV_2D":
        return _pointwise_rule(g, plan, oi, last[op.inputs[0]] != s)
    if op.opcode in _ELEMENTWISE or op.opcode == "DEPTHWISE_CONV_2D":
        dw = op.opcode == "DEPTHWISE_CONV_2D"
        cands = [op.inputs[0]] if dw else [i for i in op.inputs if i >= 0 and not g.tensors[i].is_const]
        for x in cands:
            px, tx, to = P[x], g.tensors[x], g.tensors[o]
            if px.offset != po.offset or px.pixel_stride or po.pixel_stride:
                continue
            if last[x] != s or x in outs or tx.variable:
                return set(), f"operator {oi}: overwritten input {x} is still needed after this step"
            if dw:
                sc = plan.scratch.get(oi)
                if (op.options.get("depth_multiplier", 1) != 1 or tx.shape[3] != to.shape[3] or tx.dtype != "int8"
                        or to.nbytes > tx.nbytes):
                    return set(), f"operator {oi}: depthwise in place needs depth multiplier 1"
                if sc is None or sc.size < tx.shape[1] * tx.shape[2]:
                    return set(), f"operator {oi}: depthwise in place needs a {tx.shape[1] * tx.shape[2]} B scratch"
            elif tuple(tx.shape) != tuple(to.shape) or tx.nbytes != to.nbytes:
                return set(), f"operator {oi}: in-place input {x} and output differ in shape"
            return {frozenset((x, o))}, None
        return set(), f"operator {oi}: listed in place but its output does not sit on an input"
    return set(), f"operator {oi} ({op.opcode}) cannot run in place"


# The most input bytes a 1x1 kernel of any kernel set that runs a convolution over its own input reads before it
# writes their outputs (kernels/cortex-m: a pass's int16 columns, 3 * BT_COL_MAX values, rounded up), plus the
# three pixels the lean kernel's last triple starts back by, and at least an output row (model.c's bands of rows
# on the other kernel sets): kept here, not taken from the planner.
_POINTWISE_BYTES, _POINTWISE_BACK = 2048, 3


def _pointwise_rule(g: Graph, plan: ArenaPlan, oi: int, still_needed: bool) -> tuple:
    """A 1x1 CONV_2D over its own dying input: output pixel p at po + p*c_out, input pixel p at px + p*c_in.
    A kernel writing each group of at most G consecutive pixels [a, b) after reading it (the groups in forward
    order) clobbers no unread input byte iff every group's outputs end at or before its first input byte:
    po + b*c_out <= px + a*c_in, checked here for every group of G pixels ending at every b (not by a formula)."""
    op = g.operators[oi]
    x, o = op.inputs[0], op.outputs[0]
    P = plan.tensors
    tx, to, tf = g.tensors[x], g.tensors[o], g.tensors[op.inputs[1]]
    px, po = P[x], P[o]
    if (tx.dtype != "int8" or to.dtype != "int8" or len(tx.shape) != 4 or len(to.shape) != 4 or len(tf.shape) != 4
            or tuple(tf.shape[1:3]) != (1, 1) or tf.shape[3] != tx.shape[3]
            or (op.options.get("stride_h", 1), op.options.get("stride_w", 1)) != (1, 1)
            or tuple(tx.shape[:3]) != tuple(to.shape[:3]) or to.shape[3] < tx.shape[3]):
        return set(), f"operator {oi}: only a 1x1 stride-1 int8 convolution with c_out >= c_in runs over its input"
    if px.pixel_stride or po.pixel_stride:
        return set(), f"operator {oi}: a 1x1 convolution over its input needs dense input and output"
    if still_needed or x in set(g.outputs) or tx.variable:
        return set(), f"operator {oi}: overwritten input {x} is still needed after this step"
    hw = int(np.prod(tx.shape[:3], dtype=np.int64))
    ci, co = int(tx.shape[3]), int(to.shape[3])
    grp = max(-(-_POINTWISE_BYTES // ci) + _POINTWISE_BACK, int(to.shape[2]))
    b = np.arange(1, hw + 1, dtype=np.int64)
    a = np.maximum(b - grp, 0)
    worst = int((po.offset + b * co - (px.offset + a * ci)).max())
    if worst > 0:
        return set(), (f"operator {oi}: 1x1 convolution input {x} at {px.offset - po.offset} B from its output: a "
                       f"group of {grp} pixels would overwrite input it has yet to read ({worst} B too early)")
    return {frozenset((x, o))}, None


def _pad_least_shift(g: Graph, op) -> int:
    """Elements the input of a PAD must lie past its output's start so that writing the output in address
    order, each element read as it is written, never overwrites an element not yet read: the most by which
    an input element's output position exceeds its own index (found by padding the indices)."""
    ti = g.tensors[op.inputs[0]]
    pads = g.tensors[op.inputs[1]].data.reshape(-1, 2).astype(np.int64)
    idx = np.arange(int(np.prod(ti.shape, dtype=np.int64)), dtype=np.int64).reshape(ti.shape)
    where = np.flatnonzero(np.pad(idx, [tuple(p) for p in pads], constant_values=-1).reshape(-1) >= 0)
    return int((where - np.arange(where.size)).max(initial=0))


def _sharing_problems(g: Graph, plan: ArenaPlan, step: dict, first: dict, last: dict) -> list:
    """Tensors in one buffer that are live together and share bytes need a rule that allows it."""
    err = []
    consumers = {}
    for op in g.operators:
        for i in op.inputs:
            if i >= 0 and not g.tensors[i].is_const:
                consumers.setdefault(i, set()).add(op.index)
    allowed = set()
    for oi in sorted(set(plan.inplace_ops)):
        if not (0 <= oi < len(g.operators)):
            err.append(f"in-place operator {oi} does not exist")
            continue
        pairs, why = _inplace_rule(g, plan, oi, step, last, consumers)
        if why:
            err.append(why)
        allowed |= pairs
    # RESHAPE aliases: identical dense placement, transitively
    root = {}

    def find(t):
        while root.get(t, t) != t:
            t = root[t]
        return t

    P = plan.tensors
    for op in g.operators:
        if op.opcode in ALIASING and op.inputs[0] in P:
            x, o = op.inputs[0], op.outputs[0]
            if (P[x].offset, P[x].pixel_stride, P[o].pixel_stride) == (P[o].offset, 0, 0):
                root[find(o)] = find(x)
    strided = {t for t, p in P.items() if p.pixel_stride}
    view_ok = {t for pr in allowed for t in pr} & strided
    for t in sorted(strided - view_ok):
        err.append(f"tensor {t} has a pixel stride but is no view of an in-place concat")
    members = {}
    for t, p in P.items():
        members.setdefault(p.buffer, []).append(t)
    for b, ts in sorted(members.items()):
        ts.sort()
        for i, x in enumerate(ts):
            for y in ts[i + 1:]:
                if not (first[x] <= last[y] and first[y] <= last[x]):
                    continue
                if not _share_bytes(g, P[x], P[y]):
                    continue
                if frozenset((x, y)) in allowed:
                    continue
                if find(x) == find(y) and (P[x].offset, P[x].pixel_stride) == (P[y].offset, P[y].pixel_stride):
                    continue
                err.append(f"tensors {x} and {y} share bytes while both live (buffer {b})")
    return err


def _control_problems(g: Graph, plan: ArenaPlan) -> list:
    """IF / WHILE: every subgraph it runs has a sound plan of its own (checked as a graph of its own) whose
    arena fits in the operator's scratch buffer (live at its step only: checked above with the others)."""
    err, want = [], set()
    for op in g.operators:
        ks = subgraph_indices(op)
        want.update(ks)
        for k in ks:
            sp, sb = plan.subplans.get(k), plan.scratch.get(op.index)
            if sp is None:
                err.append(f"operator {op.index} ({op.opcode}) runs subgraph {k}, which has no plan")
            elif sb is None or sb.size < sp.arena_bytes:
                err.append(f"operator {op.index} ({op.opcode}): subgraph {k}'s {sp.arena_bytes}-byte arena does not "
                           f"fit its scratch buffer ({sb.size if sb else 0} B)")
    for k in sorted(set(plan.subplans) - want):
        err.append(f"plan of subgraph {k}, which no operator runs")
    for k in sorted(want & set(plan.subplans)):
        err += [f"subgraph {k}: {e}" for e in problems(g.subgraph(k), plan.subplans[k])]
    return err


def check(g: Graph, plan: ArenaPlan) -> None:
    """Raise PlanError when the plan is unsound (an internal error of the planner)."""
    err = problems(g, plan)
    if err:
        raise PlanError(f"internal error: arena plan for '{g.name}' failed verification: {err[0]} "
                        f"({len(err)} problem(s)); please report this model")


# -- several models in one arena ---------------------------------------------------------------
def footprint(plan, base: int = 0) -> list:
    """[(start, end, persistent)] bytes of the shared arena a model's plan may write, its offsets
    counted from byte `base`: every buffer of an arena plan (aligned), the whole arena of any other
    plan (a fused plan holds no state and is taken as writing all of it)."""
    if getattr(plan, "kind", "") != "arena":
        return [(base, base + plan.arena_bytes, False)]
    return [(base + b.offset, base + b.offset + _up(b.size, plan.align), b.kind == "persistent")
            for b in plan.buffers]


def joint_problems(parts: list, arena_bytes: int) -> list:
    """What is wrong with several models sharing one arena of arena_bytes (empty when sound).
    parts: [(name, footprint)]. No byte of one model's state (persistent buffers) may be written by
    another model, and every model stays inside the arena."""
    err = []
    for name, fp in parts:
        for lo, hi, _ in fp:
            if lo < 0 or hi > arena_bytes:
                err.append(f"{name}: bytes {lo}..{hi} outside the shared arena (0..{arena_bytes})")
    for name, fp in parts:
        for other, ofp in parts:
            if other == name:
                continue
            for s0, s1, keep in ofp:
                if not keep:
                    continue
                for lo, hi, _ in fp:
                    if lo < s1 and s0 < hi:
                        err.append(f"{name} writes bytes {max(lo, s0)}..{min(hi, s1)} of {other}'s state")
    return err
