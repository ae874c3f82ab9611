"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR, int8 (TFLM reference_ops semantics, raw codes in and out).

Nearest neighbour picks source rows/columns with float32 arithmetic (GetNearestNeighbor); code
generation compiles those index tables into model.c, so the firmware needs no float. Bilinear
int8 is ResizeBilinearInteger: 10-bit fixed-point source positions and weights.
"""

from __future__ import annotations

import numpy as np

from ..model.ops import _const, _need, _shape
from ..model.ops_extra import _one_input

from .quant_math import round_half_away, trunc_div_pot


def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """Source index of every output index (GetNearestNeighbor, float32 as in TFLM)."""
    f = np.float32
    if align_corners and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    pos = (np.arange(out_size, dtype=np.float32) + f(0.5 if half_pixel_centers else 0.0)) * scale
    idx = round_half_away(pos) if align_corners else np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half_pixel_centers else idx


def nearest_tables(g, op) -> tuple:
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    o = op.options
    args = (bool(o.get("align_corners")), bool(o.get("half_pixel_centers")))
    return nearest_indices(ti.shape[1], to.shape[1], *args), nearest_indices(ti.shape[2], to.shape[2], *args)


def resize_nearest_neighbor(g, op, ins, outs) -> None:
    ys, xs = nearest_tables(g, op)
    outs[0][...] = ins[0][:, ys][:, :, xs]


def bilinear_scale10(in_size: int, out_size: int, align_corners: bool) -> int:
    """Source step per output step in 1/1024 units (integer rounding as TFLM's)."""
    if align_corners and out_size > 1:
        return ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return ((1 << 10) * in_size + out_size // 2) // out_size


def _c_div(a, d: int):
    """C integer division (truncation toward zero) by a positive d."""
    a = np.asarray(a, dtype=np.int64)
    return np.where(a >= 0, a // d, -((-a) // d))


def bilinear_taps(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> tuple:
    """ComputeInterpolationValuesInteger for every output index: (scaled position, lower, upper)."""
    s = bilinear_scale10(in_size, out_size, align_corners)
    v = np.arange(out_size, dtype=np.int64) * s
    if half_pixel_centers:
        v = v + s // 2 - (1 << 9)
    lo = np.maximum(_c_div(v, 1 << 10), 0)
    hi = np.minimum(_c_div(v + (1 << 10) - 1, 1 << 10), in_size - 1)
    return v, lo, hi


def resize_bilinear(g, op, ins, outs) -> None:
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    o = op.options
    args = (bool(o.get("align_corners")), bool(o.get("half_pixel_centers")))
    vy, y0, y1 = bilinear_taps(ti.shape[1], to.shape[1], *args)
    vx, x0, x1 = bilinear_taps(ti.shape[2], to.shape[2], *args)
    x = ins[0][0].astype(np.int64)
    dy = (vy - (y0 << 10))[:, None, None]
    dx = (vx - (x0 << 10))[None, :, None]
    one = 1 << 10
    acc = (x[y0][:, x0] * (one - dy) * (one - dx) + x[y1][:, x0] * dy * (one - dx)
           + x[y0][:, x1] * (one - dy) * dx + x[y1][:, x1] * dy * dx)
    r = np.where(acc > 0, 1 << 19, -(1 << 19))
    outs[0][...] = trunc_div_pot(acc + r, 20).astype(np.int8)[None]


def check_resize(g, op):
    _one_input(g, op)
    size = _const(g, op, 1, "size").reshape(-1)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(len(inp) == 4 and inp[0] == 1, op, "needs a [1,H,W,C] input")
    _need(size.size == 2 and (size > 0).all(), op, "size must be two positive integers [new_h, new_w]")
    _need(out == (1, int(size[0]), int(size[1]), inp[3]), op,
          f"output shape {list(out)} != [1, {int(size[0])}, {int(size[1])}, {inp[3]}]")
    if op.opcode == "RESIZE_BILINEAR":
        align, half = bool(op.options.get("align_corners")), bool(op.options.get("half_pixel_centers"))
        _need(not (align and half), op, "align_corners and half_pixel_centers cannot both be set")
        for n_in, n_out, what in ((inp[1], out[1], "height"), (inp[2], out[2], "width")):
            _need(bilinear_taps(n_in, n_out, align, half)[1].max() < n_in, op,
                  f"{what} {n_in} -> {n_out}: at this ratio TFLM's integer interpolation reads past the input "
                  f"(undefined results); resize in two steps")
