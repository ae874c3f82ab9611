"""Row and column dependencies of the operators a fusion block may contain.

Along one axis an operator maps an interval [lo, hi) of output positions to the
interval of input positions it reads: [lo*s - pad, (hi-1)*s - pad + k) clipped to the
input, with k the dilated window extent. Rows and columns are independent, which is
what makes every cost of a tiled block separable into a row part and a column part.
All functions work on numpy arrays of intervals at once; an empty interval (lo >= hi)
maps to the empty interval (0, 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import opdefs
from ...model.ops import conv_out_size, conv_padding

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
    for n, k, s, d in ((inp[1], kh, o["stride_h"], dh), (inp[2], kw, o["stride_w"], dw)):
        axes.append(Axis((k - 1) * d + 1, s, conv_padding(n, k, s, d, o["padding"]), n,
                         conv_out_size(n, k, s, d, o["padding"])))
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
    from ...refops.reduce import mean_axes

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


def macs_per_pixel(g, op) -> int:
    """MACs per output pixel (all channels): op_macs / (H_out * W_out)."""
    from ...model.ops import op_macs

    sh = g.tensors[op.outputs[0]].shape
    return op_macs(g, op) // (sh[1] * sh[2]) if len(sh) == 4 else 0
