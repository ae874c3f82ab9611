"""Liveness: an execution order and aliasing decisions -> buffers with live intervals.

A tensor lives from the step that produces it (step 0 for graph inputs) to the last step
that reads it (the last step for graph outputs). Tensors that share bytes (a RESHAPE and its
input, an in-place output and the input it overwrites, concat views and their output) are
members of one buffer that lives over the union of their intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InternalError
from ...model.ir import Graph
from .. import align_up
from .packers import profile


@dataclass(frozen=True)
class Member:
    """A tensor stored in a buffer: its byte offset inside the buffer and its pixel stride."""

    tensor: int
    offset: int
    pixel_stride: int = 0  # 0 = dense


@dataclass(frozen=True)
class BufferSpec:
    """One allocation to be packed: size in bytes, live steps [first, last]."""

    members: tuple
    size: int
    first: int
    last: int
    kind: str = "tensor"  # "tensor" | "scratch" | "persistent" (a variable tensor, live at every step)
    op: int = -1


@dataclass(frozen=True)
class Decision:
    """One aliasing choice. kind: reshape | elementwise | depthwise | concat | pad | pointwise.

    elementwise/depthwise: the output takes the place of input `tensor` (the overwritten one).
    concat: the inputs become views into the output. reshape: the output aliases the input.
    pad: the input lies inside the (larger) output, pad_shift bytes from its start (pad_shifts).
    pointwise: a 1x1 CONV_2D's dying input lies pointwise_shift bytes from its output's start (at its tail, or
    past its end), so that a kernel going over the pixels forward in groups never overwrites an unread byte.
    The pair's buffer then takes in the buffers of tensors near it that fit its bytes unused while they live
    (pointwise_fill: before the op the output's head is free), its size being fixed over its whole life.
    """

    kind: str
    op: int
    tensor: int = -1


def activation_tensors(g: Graph) -> list:
    """Graph inputs, variable (state) tensors and every tensor some operator writes, sorted by index."""
    ts = {i for i in g.inputs if not g.tensors[i].is_const} | set(g.variable_tensors())
    for op in g.operators:
        ts.update(o for o in op.outputs if o >= 0)
    return sorted(ts)


def tensor_intervals(g: Graph, order: list) -> dict:
    """tensor index -> (first_step, last_step) for every activation tensor.

    A variable tensor lives at every step: its bytes carry the state from one invocation to the next.
    """
    last_step = len(order) - 1
    iv = {i: [0, 0] for i in g.inputs if not g.tensors[i].is_const}
    iv.update({v: [0, 0] for v in g.variable_tensors()})
    for s, oi in enumerate(order):
        op = g.operators[oi]
        for i in g.act_inputs(op):
            iv[i][1] = max(iv[i][1], s)
        for o in op.outputs:
            iv[o] = [s, s]
    for o in g.outputs:
        if o in iv:
            iv[o][1] = max(last_step, 0)
    for v in g.variable_tensors():
        iv[v] = [0, max(last_step, 0)]
    return {k: (v[0], v[1]) for k, v in iv.items()}


def concat_geometry(g: Graph, op) -> list | None:
    """[(input tensor, byte offset in output, pixel stride)] when a concat's inputs can be views.

    Concatenation on the channel axis of NHWC tensors: each input is a strided slice of the
    output (pixel stride = output channels). On an axis with only ones before it: each input is a contiguous block.
    """
    out = g.tensors[op.outputs[0]]
    if out.dtype != "int8":  # views (pixel strides) are int8 only
        return None
    rank = len(out.shape)
    axis = op.options.get("axis", 0)
    axis = axis + rank if axis < 0 else axis
    outer = 1
    for d in out.shape[:axis]:
        outer *= d
    res, off = [], 0
    for i in op.inputs:
        t = g.tensors[i]
        if axis == rank - 1 and outer > 1 and rank == 4:
            res.append((i, off, out.shape[-1]))
            off += t.shape[-1]
        elif outer == 1:
            res.append((i, off, 0))
            off += t.nbytes
        else:
            return None
    return res


def pad_shifts(g: Graph, op) -> tuple:
    """(least, most) bytes from a PAD's output start at which its input may lie for the pad to run in place.

    The kernel (kernels/reference/pad.c) writes the dense output in address order, reading each input
    element as it writes it. With the input shifted D bytes into the output, output position p(i) of
    input element i is written before elements i+1.. are read iff p(i) <= D + i for every i; p(i) - i
    (the padding before element i) grows with i, so D >= the padding before the last input element
    suffices, and D <= out - in keeps the input inside the output. (0, -1) when the PAD cannot run in
    place (more than 4 dimensions)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    rank = len(ti.shape)
    if rank > 4 or rank != len(to.shape):
        return 0, -1
    before = [int(b) for b in g.tensors[op.inputs[1]].data.reshape(-1, 2)[:, 0]]
    stride, last = 1, 0
    for k in reversed(range(rank)):
        last += (int(ti.shape[k]) - 1 + before[k]) * stride
        stride *= int(to.shape[k])
    n_in = 1
    for d in ti.shape:
        n_in *= int(d)
    item = to.nbytes // max(stride, 1)
    return (last - (n_in - 1)) * item, to.nbytes - ti.nbytes


def pad_shift(g: Graph, op) -> int:
    """Where build_buffers puts a PAD's input in its output: the greatest word-aligned shift allowed
    (pad_shifts), else the least."""
    lo, hi = pad_shifts(g, op)
    return max(lo, hi - hi % 4)


# A 1x1 convolution run over its own dying input (Decision "pointwise"). Output pixel p lies at p*c_out, input
# pixel p at D + p*c_in. A kernel that goes over the pixels forward in groups of consecutive pixels [a, b), reading
# only the group's inputs and writing only its outputs (in any order between them), never overwrites an input byte
# it has yet to read iff no group's outputs reach the first input byte of that group: b*c_out <= D + a*c_in for
# every group. With b - a <= G and b <= HW (and c_out >= c_in) the largest left side is at b = HW, a = HW - G:
# D >= HW*(c_out - c_in) + G*c_in, the pair taking HW*c_out + G*c_in bytes instead of HW*(c_out + c_in).
# G is the most pixels any 1x1 kernel that may run such a layer handles in one group (pointwise_group): the
# cortex-m set's patch-matrix and lean 1x1 kernels (kernels/cortex-m/conv_pm.h,
# conv_1x1.h) widen the triples of a pass into their int16 columns, at most 3 * BT_COL_MAX = 1920 input values
# (im2col.h), before writing any of the pass's outputs, and the lean kernel's last triple starts again at pixel
# n - 3 (one pixel recomputed): at most 1920 / c_in + 3 pixels; the tails (pairs, single pixels) and
# bt_conv_s8_direct (a pixel's output channels after its input) are groups of one to three. POINTWISE_GROUP_BYTES
# rounds 1920 up to 2048. G is at least one output row: the kernel sets whose 1x1 loops go channel group by
# channel group over every pixel of a call (cortex-m55 conv.c, riscv conv_pw.h, xcore, host) are called by model.c
# on bands of G // W rows, one group each (codegen/model_c.conv_2d), as is any cortex-m variant not named above.
POINTWISE_GROUP_BYTES = 2048


def pointwise_group(c_in: int, width: int) -> int:
    """G: the most consecutive pixels of c_in channels (rows of `width` pixels) a 1x1 kernel or band of calls reads
    before writing their outputs."""
    return max(-(-POINTWISE_GROUP_BYTES // max(int(c_in), 1)) + 3, int(width))


def pointwise_geometry(g: Graph, op) -> tuple | None:
    """(pixels, c_in, c_out) of a CONV_2D that may run over its own dying input: 1x1 filter, stride 1 (so no
    padding acts), one group, int8 4-D input and output of the same pixels, c_out >= c_in; else None."""
    if op.opcode != "CONV_2D" or len(op.inputs) < 2:
        return None
    x, o, f = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]], g.tensors[op.inputs[1]]
    if len(x.shape) != 4 or len(o.shape) != 4 or len(f.shape) != 4 or x.dtype != "int8" or o.dtype != "int8":
        return None
    if tuple(f.shape[1:3]) != (1, 1) or f.shape[3] != x.shape[3] or f.shape[0] != o.shape[3]:
        return None
    if op.options.get("stride_h", 1) != 1 or op.options.get("stride_w", 1) != 1:
        return None
    if tuple(x.shape[:3]) != tuple(o.shape[:3]) or o.shape[3] < x.shape[3]:
        return None
    return int(x.shape[0] * x.shape[1] * x.shape[2]), int(x.shape[3]), int(o.shape[3])


HOLE_ALIGN = 16  # a tensor moved into a pair's hole starts at a multiple of this from the buffer's start


def hole_offset(g: Graph, dst: dict, src: dict) -> int | None:
    """The lowest offset (a multiple of HOLE_ALIGN) at which the group src ({tensor: (offset, stride)}, with
    iv-style (first, last) in dst/src values' third item) fits inside group dst's bytes without sharing a byte
    with a member of dst live at a common step, or None."""
    def span(t, off, st):
        return off, off + extent(g, t, st)

    size = max(span(t, o, st)[1] for t, (o, st, _) in dst.items())
    base = min(o for o, _, _ in src.values())
    mem = [(t, o - base, st, iv) for t, (o, st, iv) in src.items()]
    need = max(span(t, o, st)[1] for t, o, st, _ in mem)
    busy = []
    for t, (o, st, (f, l)) in dst.items():
        a, b = span(t, o, st)
        for u, mo, mst, (mf, ml) in mem:
            if f <= ml and mf <= l:
                busy.append((a - (span(u, mo, mst)[1]), b - mo))  # q in (a - m_end, b - m_off) overlaps
    for q in sorted({0} | {-(-hi // HOLE_ALIGN) * HOLE_ALIGN for _, hi in busy}):
        if q < 0 or q + need > size:
            continue
        if all(not (lo < q < hi) for lo, hi in busy):
            return q - base
    return None


# pointwise_fill: the tensors a pair may take into its hole, those dying at most FILL_STEPS steps before its step
# or born at most FILL_STEPS after it (a static set: decision_tensors names them, so the in-place search builds
# them with the pair). Each, largest first, moves in when its whole buffer fits the pair's unused bytes and it
# dies before the pair's step and lives on at the pair's first step or the one before (the pair then lives from
# its first: the chain before an expansion moves in whole), or is born after the step and dies before the pair.
FILL_STEPS = 3


def fill_candidates(g: Graph, iv: dict, s: int, op) -> list:
    """The tensors the pair of the pointwise op at step s may take into its hole, largest first."""
    skip = {op.inputs[0], *op.outputs}
    near = [t for t, (f, l) in iv.items() if t not in skip and (s - FILL_STEPS <= l < s or s < f <= s + FILL_STEPS)]
    return sorted(near, key=lambda t: (-g.tensors[t].nbytes, t))


def pointwise_least_shift(g: Graph, op) -> int | None:
    """HW*(c_out - c_in) + G*c_in: the least bytes from a 1x1 convolution's output start to its input's for its
    groups to run over it (the rule above), None when it cannot run over its input (pointwise_geometry)."""
    geo = pointwise_geometry(g, op)
    if geo is None:
        return None
    hw, ci, co = geo
    return hw * (co - ci) + pointwise_group(ci, g.tensors[op.outputs[0]].shape[2]) * ci


def pointwise_shift(g: Graph, op) -> int:
    """Where build_buffers puts a 1x1 convolution's dying input in its output: pointwise_least_shift rounded up to
    a word."""
    d = pointwise_least_shift(g, op)
    return d + (-d) % 4


def decision_tensors(g: Graph, d: Decision, iv: dict | None = None, step: dict | None = None) -> set:
    """The tensors whose buffers build_buffers reads or changes when it applies d: decisions with no
    tensor in common (through chains of common tensors) are applied independently of each other.
    iv, step: tensor_intervals and {operator: step} of the order (a pointwise decision's fill_candidates)."""
    op = g.operators[d.op]
    ts = set(op.outputs)
    if d.kind == "reshape":
        ts.add(op.inputs[0])
    elif d.kind == "concat":
        ts.update(op.inputs)
    elif d.kind == "pointwise":
        ts.update(g.act_inputs(op))
        ts.update(fill_candidates(g, iv, step[d.op], op))
    else:
        ts.update(g.act_inputs(op))
        ts.add(d.tensor)
    return ts


def build_context(g: Graph, order: list) -> tuple:
    """What build_buffers derives from the graph and the order alone, for callers that build the
    buffers of one order many times (the in-place search)."""
    return ({oi: s for s, oi in enumerate(order)}, set(g.outputs), set(g.inputs), set(g.variable_tensors()))


def build_buffers(g: Graph, order: list, decisions: list, iv: dict | None = None, tensors=None,
                  context: tuple | None = None, control: dict | None = None) -> tuple:
    """Apply aliasing decisions in list order (skipping any that no longer fits) -> (buffers, applied).

    Buffers come out sorted by (first, smallest tensor index) so that ids are deterministic.
    iv: tensor_intervals(g, order), when the caller has it (the in-place search builds the buffers of
    one order hundreds of times); context: build_context(g, order), likewise. tensors: only these
    tensors' buffers (every tensor of every decision's decision_tensors must be among them).
    control: {IF / WHILE operator: bytes} the scratch buffer its subgraphs' arenas are placed in.
    """
    iv = tensor_intervals(g, order) if iv is None else iv
    step, outputs, inputs, variable = build_context(g, order) if context is None else context
    # group id -> {tensor: (offset, stride)}; every tensor starts in its own group
    tensors = iv if tensors is None else tensors
    groups = {t: {t: (0, 0)} for t in tensors}
    where = {t: t for t in tensors}
    scratch, applied = [], []

    def merge(src_tensor, dst_tensor, dst_off, stride):
        """Move src_tensor's whole group so that src_tensor sits at dst_off in dst's group."""
        gs, gd = where[src_tensor], where[dst_tensor]
        shift = dst_off - groups[gs][src_tensor][0]
        for t, (o, st) in groups.pop(gs).items():
            groups[gd][t] = (o + shift, stride if t == src_tensor else st)
            where[t] = gd
        lo = min(o for o, _ in groups[gd].values())
        if lo < 0:
            groups[gd] = {t: (o - lo, st) for t, (o, st) in groups[gd].items()}

    def dense(t):
        return groups[where[t]][t][1] == 0

    def overwrite_ok(op, x, o):
        s = step[op.index]
        gx = groups[where[x]]
        if where[x] == where[o] or not dense(x) or not dense(o) or x in variable:
            return False
        if any(where[i] == where[x] for i in g.act_inputs(op) if i != x):
            return False
        if any(where[i] == where[o] for i in g.act_inputs(op)):  # o already overwrites another input
            return False
        if any(t in outputs or iv[t][1] > s for t in gx):
            return False
        # o's group may hold only tensors born after this step or made by it: a graph input
        # lives from step 0 too, so at step 0 it would still be live beside x
        return all(iv[t][0] > s or t in op.outputs for t in groups[where[o]])

    for d in decisions:
        op = g.operators[d.op]
        o = op.outputs[0]
        if d.kind == "reshape":
            x = op.inputs[0]
            if where[x] == where[o] or not dense(x) or len(groups[where[o]]) != 1 or x in variable:
                continue
            merge(o, x, groups[where[x]][x][0], 0)
        elif d.kind in ("elementwise", "depthwise"):
            x = d.tensor
            if not overwrite_ok(op, x, o):
                continue
            merge(o, x, groups[where[x]][x][0], 0)
            if d.kind == "depthwise":
                h, w = g.tensors[x].shape[1], g.tensors[x].shape[2]
                s = step[op.index]
                scratch.append(BufferSpec((), h * w, s, s, "scratch", op.index))
        elif d.kind == "pad":
            x = d.tensor
            lo, hi = pad_shifts(g, op)
            if hi < lo or not overwrite_ok(op, x, o) or len(groups[where[o]]) != 1:
                continue
            merge(o, x, groups[where[x]][x][0] - pad_shift(g, op), 0)
        elif d.kind == "pointwise":
            x = d.tensor
            if (x != op.inputs[0] or pointwise_geometry(g, op) is None or not overwrite_ok(op, x, o)
                    or len(groups[where[o]]) != 1):
                continue
            merge(o, x, groups[where[x]][x][0] - pointwise_shift(g, op), 0)
            gd = where[o]
            for y in fill_candidates(g, iv, step[op.index], op):  # the pair's hole (pointwise_fill)
                gs = where.get(y)
                if gs is None or gs == gd or any(t in variable or t in outputs for t in groups[gs]):
                    continue
                f_s, l_s = min(iv[t][0] for t in groups[gs]), max(iv[t][1] for t in groups[gs])
                f_d, l_d = min(iv[t][0] for t in groups[gd]), max(iv[t][1] for t in groups[gd])
                if not (f_d - 1 <= l_s < step[op.index] or (f_s > step[op.index] and l_s <= l_d)):
                    continue
                at = hole_offset(g, {t: (off, st, iv[t]) for t, (off, st) in groups[gd].items()},
                                 {t: (off, st, iv[t]) for t, (off, st) in groups[gs].items()})
                if at is not None:
                    for t, (off, st) in groups.pop(gs).items():
                        groups[gd][t] = (off + at, st)
                        where[t] = gd
        elif d.kind == "concat":
            geo = concat_geometry(g, op)
            if geo is None or not dense(o) or len({i for i, _, _ in geo}) != len(geo):
                continue
            if any(len(groups[where[i]]) != 1 or i in inputs or i in outputs or i in variable for i, _, _ in geo):
                continue
            base = groups[where[o]][o][0]
            for i, off, stride in geo:
                merge(i, o, base + off, stride)
        else:
            raise InternalError(f"unknown in-place decision kind {d.kind!r}")
        applied.append(d)

    buffers = []
    for members in groups.values():
        ms = tuple(Member(t, o, st) for t, (o, st) in sorted(members.items()))
        size = max(m.offset + extent(g, m.tensor, m.pixel_stride) for m in ms)
        kind = "persistent" if ms[0].tensor in variable else "tensor"
        buffers.append(BufferSpec(ms, size, min(iv[m.tensor][0] for m in ms), max(iv[m.tensor][1] for m in ms),
                                  kind))
    buffers.sort(key=lambda b: (b.first, b.members[0].tensor))
    for oi, size in (control or {}).items():  # IF / WHILE: their subgraphs' arenas, live at their step
        scratch.append(BufferSpec((), size, step[oi], step[oi], "scratch", oi))
    return buffers + sorted(scratch, key=lambda b: (b.first, b.op)), applied


def extent(g: Graph, t: int, stride: int) -> int:
    """Bytes from a tensor's first to one past its last byte, for a pixel stride (0 = dense)."""
    tt = g.tensors[t]
    if not stride:
        return tt.nbytes
    inner = tt.shape[-1]
    return (tt.nbytes // inner - 1) * stride + inner


def live_profile(buffers: list, nsteps: int, align: int) -> list:
    """Sum of aligned buffer sizes live at each step."""
    return profile([(align_up(b.size, align), b.first, b.last) for b in buffers], nsteps)


def lower_bound(buffers: list, nsteps: int, align: int) -> int:
    """No packing of these buffers can use fewer bytes than the busiest step needs."""
    return max(live_profile(buffers, max(nsteps, 1), align), default=0)
