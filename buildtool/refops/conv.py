"""CONV_2D, int8 with per-channel or per-tensor filter quantisation (TFLM reference semantics), grouped
when the filter depth is a fraction of the input's channels (output channel o reads group o // (c_out /
groups)'s input channels, as TFLM's reference conv).

The accumulation is exact in float64 (|sum| < 2**53), which lets BLAS do the
matrix product; padding taps contribute zero because the block is filled with
the input zero point before subtracting it.
"""

from __future__ import annotations

import numpy as np

from . import prepare
from .requant import bias_of, requantize
from .window import window_block

conv_window = prepare.window


def conv2d(g, op, ins, outs, y0: int = 0, y1: int | None = None, in_row0: int = 0) -> None:
    """Write output rows [y0, y1) of CONV_2D into outs[0] ([1, y1-y0, W_out, C_out])."""
    p = prepare.conv(g, op)
    win = p.window
    y1 = win.out_h if y1 is None else y1
    rows = y1 - y0
    zp_in = g.tensors[op.inputs[0]].zero_point
    flt = g.tensors[op.inputs[1]].data
    cout, kh, kw, cin = flt.shape
    block = window_block(ins[0], win, y0, y1, in_row0, zp_in, np.int16)
    block = block.astype(np.float64) - zp_in
    v = np.lib.stride_tricks.sliding_window_view(block, (win.ekh, win.ekw), axis=(0, 1))
    v = v[::win.sh, ::win.sw, :, ::win.dh, ::win.dw][:rows, :win.out_w]  # [rows, W_out, cin, kh, kw]
    groups = block.shape[-1] // cin  # grouped conv (TFLM: input depth / filter depth), 1 for most
    taps = np.ascontiguousarray(v.transpose(0, 1, 3, 4, 2)).reshape(rows * win.out_w, kh * kw, groups, cin)
    w = flt.reshape(groups, cout // groups, kh * kw * cin).astype(np.float64)
    acc = np.concatenate([taps[:, :, k].reshape(-1, kh * kw * cin) @ w[k].T for k in range(groups)], axis=1)
    acc = acc.astype(np.int64) + bias_of(g, op, cout)
    outs[0][...] = requantize(acc, np.array(p.multipliers), np.array(p.shifts), g, op).reshape(1, rows, win.out_w, cout)
