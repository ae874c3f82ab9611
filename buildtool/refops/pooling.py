"""AVERAGE_POOL_2D and MAX_POOL_2D, int8 and int16 (TFLM reference semantics).

Padding positions are skipped: the average divides by the number of in-image taps
(rounding half away from zero), the maximum ignores them.
"""

from __future__ import annotations

import numpy as np

from .prepare import act_range as _act, window as pool_window
from .quant_math import QRANGE
from .window import taps, window_block


def average_pool2d(g, op, ins, outs, y0: int = 0, y1: int | None = None, in_row0: int = 0) -> None:
    win = pool_window(g, op)
    y1 = win.out_h if y1 is None else y1
    rows = y1 - y0
    block = window_block(ins[0], win, y0, y1, in_row0, 0, np.int32)
    ones = np.ones((1, ins[0].shape[1], win.in_w, 1), dtype=np.int32)
    mask = window_block(ones, win, y0, y1, in_row0, 0, np.int32)
    acc = np.zeros((rows, win.out_w, block.shape[-1]), dtype=np.int32)
    cnt = np.zeros((rows, win.out_w, 1), dtype=np.int32)
    for ky in range(win.kh):
        for kx in range(win.kw):
            acc += taps(block, win, ky, kx, rows)
            cnt += taps(mask, win, ky, kx, rows)
    half = cnt // 2
    q = np.where(acc > 0, (acc + half) // cnt, -((-acc + half) // cnt))  # C truncating division
    lo, hi = _act(g, op)
    outs[0][...] = np.clip(q, lo, hi).astype(outs[0].dtype).reshape(outs[0].shape)


def max_pool2d(g, op, ins, outs, y0: int = 0, y1: int | None = None, in_row0: int = 0) -> None:
    win = pool_window(g, op)
    y1 = win.out_h if y1 is None else y1
    rows = y1 - y0
    qmin = QRANGE[outs[0].dtype.name][0]
    block = window_block(ins[0], win, y0, y1, in_row0, qmin - 1, np.int32)
    m = np.full((rows, win.out_w, block.shape[-1]), qmin, dtype=np.int32)
    for ky in range(win.kh):
        for kx in range(win.kw):
            np.maximum(m, taps(block, win, ky, kx, rows), out=m)
    lo, hi = _act(g, op)
    outs[0][...] = np.clip(m, lo, hi).astype(outs[0].dtype).reshape(outs[0].shape)
