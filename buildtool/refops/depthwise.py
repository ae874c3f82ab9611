"""DEPTHWISE_CONV_2D, int8, per-channel or per-tensor (TFLM reference semantics).

Computed as a sum over the kh*kw filter taps, each a whole-plane multiply.
"""

from __future__ import annotations

import numpy as np

from . import prepare
from .requant import bias_of, requantize
from .window import Window, taps, window_block

dw_window = prepare.window


def depthwise_acc(block, flt, win: Window, rows: int) -> np.ndarray:
    """Accumulators [rows, W_out, C_out] of a zero-point-free int32 block [*, *, C_out]."""
    acc = np.zeros((rows, win.out_w, flt.shape[-1]), dtype=np.int32)
    for ky in range(win.kh):
        for kx in range(win.kw):
            acc += taps(block, win, ky, kx, rows) * flt[ky, kx]
    return acc


def depthwise_conv2d(g, op, ins, outs, y0: int = 0, y1: int | None = None, in_row0: int = 0,
                     channels: slice = slice(None)) -> None:
    """Write output rows [y0, y1) (and output channels `channels`) into outs[0].

    With `channels`, ins[0] holds only the input channels those output channels read
    (depth multiplier 1: the same slice) and outs[0] only those output channels.
    """
    p = prepare.conv(g, op)
    win = p.window
    y1 = win.out_h if y1 is None else y1
    rows = y1 - y0
    zp_in = g.tensors[op.inputs[0]].zero_point
    dm = op.options.get("depth_multiplier", 1)
    flt = g.tensors[op.inputs[1]].data[0].astype(np.int32)  # [kh, kw, C_out]
    cout = flt.shape[-1]
    block = window_block(ins[0], win, y0, y1, in_row0, zp_in, np.int32) - zp_in
    if dm > 1:
        block = np.repeat(block, dm, axis=-1)
    sel = np.arange(cout)[channels]
    acc = depthwise_acc(block, flt[:, :, sel], win, rows).astype(np.int64) + bias_of(g, op, cout)[sel]
    mult, shift = np.array(p.multipliers)[sel], np.array(p.shifts)[sel]
    outs[0][...] = requantize(acc, mult, shift, g, op).reshape(1, rows, win.out_w, len(sel))
