"""Geometry shared by the sliding-window kernels (conv, depthwise, pooling).

A kernel may be asked for a band of output rows [y0, y1) while holding only a band
of input rows that starts at image row `in_row0`. `window_block` cuts the input
rows and columns the band needs, filling positions outside the image with a
padding value, so every kernel then runs a VALID window over the block.
"""

from __future__ import annotations

import numpy as np

from ..errors import InternalError
from ..model.ops import axis_padding, conv_out_size, conv_padding


class Window:
    """Output size and leading padding of a 2-D window op on an [1, H, W, C] input."""

    def __init__(self, in_h, in_w, kh, kw, sh, sw, dh, dw, padding):
        self.in_h, self.in_w = in_h, in_w
        self.kh, self.kw, self.sh, self.sw, self.dh, self.dw = kh, kw, sh, sw, dh, dw
        ph, pw = axis_padding(padding, 0), axis_padding(padding, 1)
        self.out_h = conv_out_size(in_h, kh, sh, dh, ph)
        self.out_w = conv_out_size(in_w, kw, sw, dw, pw)
        self.pad_top = conv_padding(in_h, kh, sh, dh, ph)
        self.pad_left = conv_padding(in_w, kw, sw, dw, pw)
        self.ekh = (kh - 1) * dh + 1
        self.ekw = (kw - 1) * dw + 1

    def input_rows(self, y0: int, y1: int) -> tuple:
        """Image rows [lo, hi) (clipped to the image) that output rows [y0, y1) read."""
        lo = y0 * self.sh - self.pad_top
        hi = (y1 - 1) * self.sh - self.pad_top + self.ekh
        return max(lo, 0), min(hi, self.in_h)


def window_block(x, win: Window, y0: int, y1: int, in_row0: int, fill, dtype) -> np.ndarray:
    """[rows, cols, C] block covering output rows [y0, y1), padded with `fill` outside the image.

    x is [1, R, W, C] holding image rows [in_row0, in_row0 + R).
    """
    lo = y0 * win.sh - win.pad_top
    hi = (y1 - 1) * win.sh - win.pad_top + win.ekh
    cols = (win.out_w - 1) * win.sw + win.ekw
    c = x.shape[-1]
    block = np.full((hi - lo, cols, c), fill, dtype=dtype)
    r0, r1 = max(lo, 0), min(hi, win.in_h)
    if r1 > r0:
        if r0 < in_row0 or r1 > in_row0 + x.shape[1]:
            raise InternalError(f"input band rows [{in_row0}, {in_row0 + x.shape[1]}) do not cover "
                             f"rows [{r0}, {r1}) needed for output rows [{y0}, {y1})")
        c1 = min(win.in_w, cols - win.pad_left)
        block[r0 - lo:r1 - lo, win.pad_left:win.pad_left + c1] = x[0, r0 - in_row0:r1 - in_row0, :c1]
    return block


def taps(block: np.ndarray, win: Window, ky: int, kx: int, rows: int) -> np.ndarray:
    """The [rows, out_w, C] slice of `block` that filter tap (ky, kx) multiplies."""
    r = ky * win.dh
    c = kx * win.dw
    return block[r:r + (rows - 1) * win.sh + 1:win.sh, c:c + (win.out_w - 1) * win.sw + 1:win.sw]
