"""The geometry of tiling: which positions of each tensor a tile of a fusion block reads and computes.

Along one axis an operator maps an interval [lo, hi) of output positions to the
interval of input positions it reads: [lo*s - pad, (hi-1)*s - pad + k) clipped to the
input, with k the dilated window extent. Rows and columns are independent, which is
what makes every cost of a tiled block separable into a row part and a column part.
All functions work on numpy arrays of intervals at once; an empty interval (lo >= hi)
maps to the empty interval (0, 0).

A block's Geometry is its operators as Steps (output tensor, row and column Axis, spatial
inputs), its tiled tensor and an optional accumulating tail (a MEAN over height and width, or a
dense layer over the flattened last output). Per axis, a tiling (tile boundaries) gives each
tensor's interval at every tile (recompute: recompute_1d) or the positions computed after every
step (cache: cached_1d); an AxisPlan holds that for one block and tiling, and interval() reads
the positions of a tensor computed at one tile (what the executor and the generated C run).
Which tensors get a window buffer, and the windows that need fewer bytes than their interval
(made channel by channel, overwritten in place, pulled a few rows at a time), are geometry too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ...model import opdefs
from ...model.ops import axis_padding, conv_groups, conv_out_size, conv_padding
from ...refops.prepare import mean_axes

# Operators that can run on a tile of their output given tiles of their inputs.
WINDOWED = opdefs.names(tiling="windowed")
POINTWISE = opdefs.names(tiling="pointwise")
# Element-wise operators with one activation input (PRELU: and a per-channel constant alpha), and
# MAXIMUM / MINIMUM, which tile like ADD.
UNARY = opdefs.names(tiling="unary")
MINMAX = opdefs.names(tiling="minmax")


@dataclass(frozen=True)
class Axis:
    """One operator along one axis: window extent k, stride s, leading padding, sizes."""

    k: int
    s: int
    pad: int
    n_in: int
    n_out: int

    def need(self, lo, hi) -> tuple:
        """Input interval read by output interval [lo, hi) (arrays), clipped; empty stays empty."""
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.asarray(hi, dtype=np.int64)
        a = np.maximum(lo * self.s - self.pad, 0)
        b = np.minimum((hi - 1) * self.s - self.pad + self.k, self.n_in)
        empty = (hi <= lo) | (b <= a)
        return np.where(empty, 0, a), np.where(empty, 0, b)

    def need_end(self, hi) -> np.ndarray:
        """End of the input read by output positions [0, hi)."""
        hi = np.asarray(hi, dtype=np.int64)
        return np.where(hi > 0, np.minimum((hi - 1) * self.s - self.pad + self.k, self.n_in), 0)

    def form(self) -> list:
        return [self.k, self.s, self.pad, self.n_in, self.n_out]


def identity(n: int) -> Axis:
    return Axis(1, 1, 0, n, n)


def _window_axes(g, op) -> tuple:
    inp = g.tensors[op.inputs[0]].shape
    o = op.options
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        f = g.tensors[op.inputs[1]].shape
        kh, kw = f[1], f[2]
    else:
        kh, kw = o["filter_h"], o["filter_w"]
    dh, dw = o.get("dilation_h", 1), o.get("dilation_w", 1)
    axes = []
    for a, (n, k, s, d) in enumerate(((inp[1], kh, o["stride_h"], dh), (inp[2], kw, o["stride_w"], dw))):
        pad = axis_padding(o["padding"], a)
        axes.append(Axis((k - 1) * d + 1, s, conv_padding(n, k, s, d, pad), n, conv_out_size(n, k, s, d, pad)))
    return tuple(axes)


def is_spatial(g, t: int) -> bool:
    sh = g.tensors[t].shape
    return len(sh) == 4 and sh[0] == 1


def int8_only(g, op) -> bool:
    """Fused and split code runs int8 kernels only (int16 activations stay unfused)."""
    return all(g.tensors[i].dtype == "int8" for i in g.act_inputs(op) + list(op.outputs))


def tileable(g, op) -> bool:
    """Can op compute any output tile from input tiles (so it may sit inside a fusion block)?"""
    out = op.outputs[0]
    if len(op.outputs) != 1 or not is_spatial(g, out) or not int8_only(g, op):
        return False
    ins = g.act_inputs(op)
    if op.opcode in WINDOWED:
        if op.opcode == "AVERAGE_POOL_2D" and op.options["padding"] != "VALID":
            return False  # the divisor counts in-image taps: a padded tile would change it
        if op.opcode == "DEPTHWISE_CONV_2D" and op.options.get("depth_multiplier", 1) != 1:
            return False
        if conv_groups(g, op) > 1 and g.tensors[out].shape[3] == conv_groups(g, op):
            return False  # grouped with one output channel a group: the sets' one-channel tile paths assume whole pixels
        return len(ins) == 1 and ins[0] == op.inputs[0] and is_spatial(g, ins[0])
    if op.opcode in UNARY:
        return len(ins) == 1 and ins[0] == op.inputs[0] and g.tensors[ins[0]].shape == g.tensors[out].shape and (
            op.opcode != "PRELU" or _per_channel(g.tensors[op.inputs[1]].shape))
    if op.opcode in POINTWISE + MINMAX:
        shape = g.tensors[out].shape
        return (len(op.inputs) == 2 and all(i >= 0 and not g.tensors[i].is_const for i in op.inputs)
                and all(tuple(g.tensors[i].shape) == tuple(shape) for i in op.inputs))
    return False


def _per_channel(shape) -> bool:
    """A constant that broadcasts over batch, rows and columns of an NHWC tensor (one value per channel)."""
    return all(d == 1 for d in shape[:-1])


def reduces_tiles(g, op) -> bool:
    """A MEAN over height and width: it can accumulate a block's output one tile at a time."""
    if op.opcode != "MEAN" or not is_spatial(g, op.inputs[0]) or not int8_only(g, op):
        return False
    return mean_axes(g, op) == (1, 2)


def flattens(g, op) -> bool:
    """A RESHAPE of a spatial [1, H, W, C] tensor to [1, H*W*C] (NHWC order: a flatten)."""
    if op.opcode != "RESHAPE" or not is_spatial(g, op.inputs[0]) or not int8_only(g, op):
        return False
    return tuple(g.tensors[op.outputs[0]].shape) == (1, g.tensors[op.inputs[0]].num_elements)


def dense_reads_whole(g, op, t: int) -> bool:
    """Is op a FULLY_CONNECTED whose one input row is all of tensor t (one batch)?

    Then it can accumulate t a tile at a time: element ((y*W + x)*C + c) of the row is
    pixel (y, x), channel c."""
    if op.opcode != "FULLY_CONNECTED" or op.inputs[0] != t or not int8_only(g, op):
        return False
    w = g.tensors[op.inputs[1]]
    return w.data is not None and len(w.shape) == 2 and w.shape[1] == g.tensors[t].num_elements


def op_axes(g, op) -> tuple:
    """(row Axis, column Axis) mapping op's output tile to the tile of each spatial input."""
    if op.opcode in WINDOWED:
        return _window_axes(g, op)
    sh = g.tensors[op.inputs[0]].shape
    return identity(sh[1]), identity(sh[2])


# -- blocks -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One operator of a block: output tensor, its (row, column) axes, spatial inputs."""

    op: int
    out: int
    axes: tuple  # (row Axis, column Axis)
    ins: tuple  # spatial activation inputs


@dataclass(frozen=True)
class Geometry:
    """The shape of a block: its steps in order, the tiled tensor, an optional reducing MEAN."""

    ops: tuple  # every operator index of the block, in order
    steps: tuple  # Step for each tileable operator (all but a final MEAN)
    tile_tensor: int  # Y: the last spatial tensor, cut into tiles
    reduce_op: int  # the MEAN or FULLY_CONNECTED operator that accumulates Y, or -1
    flat_op: int = -1  # the RESHAPE flattening Y for that FULLY_CONNECTED, or -1

    @functools.cached_property
    def makers(self) -> dict:
        """tensor -> the steps that make it, in order (made once: channelwise and inplace_source ask per tensor)."""
        out = {}
        for st in self.steps:
            out.setdefault(st.out, []).append(st)
        return out

    @functools.cached_property
    def readers(self) -> dict:
        """tensor -> the steps that read it, in order, each once."""
        out = {}
        for st in self.steps:
            for t in dict.fromkeys(st.ins):
                out.setdefault(t, []).append(st)
        return out


def dense_tail(g, ops) -> tuple | None:
    """(flatten RESHAPE or -1, FULLY_CONNECTED) when ops end in a dense layer that reads the
    whole last spatial tensor (directly or flattened), else None."""
    fc = g.operators[ops[-1]]
    if fc.opcode != "FULLY_CONNECTED":
        return None
    if len(ops) >= 2:
        rs = g.operators[ops[-2]]
        if flattens(g, rs) and dense_reads_whole(g, fc, rs.outputs[0]):
            return rs.index, fc.index
    if is_spatial(g, fc.inputs[0]) and dense_reads_whole(g, fc, fc.inputs[0]):
        return -1, fc.index
    return None


def geometry(g, ops) -> Geometry:
    ops = tuple(ops)
    flat, reduce_op = dense_tail(g, ops) or (-1, ops[-1] if reduces_tiles(g, g.operators[ops[-1]]) else -1)
    body = [oi for oi in ops if oi not in (reduce_op, flat)]
    steps = []
    for oi in body:
        op = g.operators[oi]
        steps.append(Step(oi, op.outputs[0], op_axes(g, op), tuple(g.act_inputs(op))))
    y = steps[-1].out if steps else g.operators[flat if flat >= 0 else reduce_op].inputs[0]
    return Geometry(ops, tuple(steps), y, reduce_op, flat)


def is_dense(g, geo: Geometry) -> bool:
    """Does the block end in a FULLY_CONNECTED accumulating its tiles (iterative dense)?"""
    return geo.reduce_op >= 0 and g.operators[geo.reduce_op].opcode == "FULLY_CONNECTED"


def window_tensors(g, geo: Geometry, streamed: tuple = ()) -> list:
    """Tensors that get a window buffer: made inside the block (not its output), or streamed in."""
    made = [st.out for st in geo.steps]
    inner = made if geo.reduce_op >= 0 else made[:-1]
    ext = [t for st in geo.steps for t in st.ins if t in streamed and t not in made]
    return list(dict.fromkeys(inner + ext))


def channelwise(g, geo: Geometry, t: int) -> bool:
    """Is t made by a CONV_2D and read only by a depthwise convolution of the block?

    Then the recompute scheme makes t one channel at a time right before the depthwise
    convolution uses that channel (an inverted bottleneck's expansion never exists whole,
    not even within a tile): t's window holds one channel.
    """
    made = geo.makers.get(t, ())
    users = geo.readers.get(t, ())
    return (len(made) == 1 and g.operators[made[0].op].opcode == "CONV_2D" and len(users) == 1
            and conv_groups(g, g.operators[made[0].op]) == 1  # a grouped conv makes whole pixels (per group)
            and g.operators[users[0].op].opcode == "DEPTHWISE_CONV_2D" and t != geo.tile_tensor
            and g.operators[users[0].op].inputs[0] == t)


def inplace_source(g, geo: Geometry, t: int) -> int | None:
    """The window a 1x1 convolution's output window t overwrites in place (recompute scheme), or None.

    A 1x1 stride-1 CONV_2D with no more output than input channels whose input window is made
    by the operator just before it and read by it alone can write output pixel i over input pixel i's bytes (pixels in raster order,
    each read whole before it is written: its output starts at or before its input), so the
    two windows share bytes, as TinyEngine does for in-place layers.
    """
    made = geo.makers.get(t, ())
    if len(made) != 1 or (t == geo.tile_tensor and geo.reduce_op < 0) or channelwise(g, geo, t):
        return None
    op = g.operators[made[0].op]
    if op.opcode != "CONV_2D" or made[0].ins != (op.inputs[0],) or conv_groups(g, op) > 1:
        return None  # a grouped conv's later groups still read the pixels its first groups would overwrite
    src = op.inputs[0]
    f = g.tensors[op.inputs[1]].shape
    if f[1] != 1 or f[2] != 1 or op.options["stride_h"] != 1 or op.options["stride_w"] != 1:
        return None
    if g.tensors[t].shape[3] > g.tensors[src].shape[3] or src == geo.tile_tensor:
        return None
    k = geo.steps.index(made[0])
    if k == 0 or geo.steps[k - 1].out != src or [s.op for s in geo.readers.get(src, ())] != [op.index]:
        return None  # made by the operator just before (so a block holds both or starts at op), read by op alone
    return src


def pulled_rows(g, geo: Geometry, t: int) -> int:
    """Rows of a streamed input t that the recompute scheme holds at once, or 0 (the whole interval).

    When t's only reader in the block is one sliding-window operator, that operator makes its
    output tile one row at a time and pulls from the source just the rows that row reads
    (its dilated kernel height), so the input window is a few rows of the tile's columns.
    """
    readers = [s for s in geo.steps if t in s.ins]
    if len(readers) != 1 or g.operators[readers[0].op].opcode not in WINDOWED:
        return 0
    if conv_groups(g, g.operators[readers[0].op]) > 1:
        return 0  # a grouped conv reads its tile per group (codegen fused_c), not pulled row by row
    if g.operators[readers[0].op].inputs[0] != t:
        return 0
    ax = readers[0].axes[0]
    return min(ax.k, ax.n_in)


# -- intervals along one axis ---------------------------------------------------------------
BIG = np.int64(1) << 40


def uniform_bounds(n: int, t: int) -> tuple:
    return tuple(list(range(0, n, t)) + [n])


def even_bounds(n: int, parts: int) -> tuple:
    """n positions in `parts` near-equal slices, the larger first (as numpy.array_split)."""
    parts = max(1, min(parts, n))
    q, r = divmod(n, parts)
    b, out = 0, [0]
    for i in range(parts):
        b += q + (i < r)
        out.append(b)
    return tuple(out)


def bounds_matrix(bounds_list) -> np.ndarray:
    """Stack boundary tuples into [cand, tiles + 1], padding by repeating the last boundary."""
    m = max(len(b) for b in bounds_list)
    arr = np.empty((len(bounds_list), m), dtype=np.int64)
    for i, b in enumerate(bounds_list):
        arr[i, :len(b)] = b
        arr[i, len(b):] = b[-1]
    return arr


def _hull(cur, new) -> tuple:
    if cur is None:
        return new
    (a0, b0), (a1, b1) = cur, new
    e0, e1 = b0 <= a0, b1 <= a1
    lo = np.where(e0, a1, np.where(e1, a0, np.minimum(a0, a1)))
    hi = np.where(e0, b1, np.where(e1, b0, np.maximum(b0, b1)))
    return lo, hi


def recompute_1d(steps, axis: int, y: int, bounds_list) -> dict:
    """Recompute mode: tensor -> (lo, hi) arrays [cand, tile] of the interval each tile needs
    (bounds_list: boundary tuples, or their bounds_matrix).

    Padding tiles (beyond a candidate's last) are empty intervals.
    """
    b = bounds_list if isinstance(bounds_list, np.ndarray) else bounds_matrix(bounds_list)
    need = {y: (b[:, :-1], b[:, 1:])}
    for st in reversed(steps):
        if st.out not in need:
            continue
        lo, hi = need[st.out]
        ax: Axis = st.axes[axis]
        a, e = ax.need(lo, hi)
        for t in st.ins:
            need[t] = _hull(need.get(t), (a, e))
    return need


def cached_1d(steps, axis: int, y: int, bounds_list) -> dict:
    """Cache mode: tensor -> (hi, lo_need) arrays [cand, step] (bounds_list as recompute_1d's).

    hi[i] = positions computed after step i; lo_need[i] = lowest position any consumer
    reads at step i (BIG when none reads).
    """
    b = bounds_list if isinstance(bounds_list, np.ndarray) else bounds_matrix(bounds_list)
    hi = {y: b[:, 1:]}
    lo_need = {y: np.full_like(b[:, 1:], BIG)}
    for st in reversed(steps):
        if st.out not in hi:
            continue
        h = hi[st.out]
        prev = np.concatenate([np.zeros_like(h[:, :1]), h[:, :-1]], axis=1)
        ax: Axis = st.axes[axis]
        end = ax.need_end(h)
        a, e = ax.need(prev, h)
        a = np.where(e > a, a, BIG)
        for t in st.ins:
            hi[t] = np.maximum(hi[t], end) if t in hi else end
            lo_need[t] = np.minimum(lo_need[t], a) if t in lo_need else a
    return {t: (hi[t], lo_need[t]) for t in hi}


@dataclass
class AxisPlan:
    """One axis of one block for one tiling.

    rec: lo/hi[tensor] = interval each tile needs; cache: hi[tensor] = positions computed
    after each step, lo[tensor] = lowest position read at that step.
    """

    mode: str
    bounds: tuple
    lo: dict
    hi: dict
    ext: dict  # window tensor -> buffer extent along this axis
    work: dict  # tensor -> positions computed over the whole axis


def axis_plan(geo: Geometry, axis: int, mode: str, bounds: tuple) -> AxisPlan:
    if mode == "rec":
        iv = recompute_1d(geo.steps, axis, geo.tile_tensor, [bounds])
        lo = {t: v[0][0] for t, v in iv.items()}
        hi = {t: v[1][0] for t, v in iv.items()}
        ext = {t: int((hi[t] - lo[t]).max()) for t in iv}
        work = {t: int((hi[t] - lo[t]).sum()) for t in iv}
    else:
        iv = cached_1d(geo.steps, axis, geo.tile_tensor, [bounds])
        hi = {t: v[0][0] for t, v in iv.items()}
        lo = {t: v[1][0] for t, v in iv.items()}  # lowest position read at each step (huge: none)
        ext, work = {}, {}
        for t, (h, ln) in iv.items():
            prev = np.concatenate([[0], h[0][:-1]])
            ext[t] = int((h[0] - np.minimum(prev, ln[0])).max())
            work[t] = int(h[0][-1])
    return AxisPlan(mode, tuple(bounds), lo, hi, ext, work)


def interval(ap, t: int, i: int) -> tuple:
    """Positions of t computed at tile/step i along one axis."""
    if ap.mode == "rec":
        return int(ap.lo[t][i]), int(ap.hi[t][i])
    h = ap.hi[t]
    return (int(h[i - 1]) if i > 0 else 0), int(h[i])
