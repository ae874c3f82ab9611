"""TRANSPOSE_CONV, int8 and 16x8 (TFLM reference_integer_ops::TransposeConv).

Inputs (output_shape, weights [cout, kh, kw, cin], input, [bias]). Every input pixel scatters
weights x (input - zero point) into an accumulator the size of the output (int32 for int8, int64
for int16 in TFLM; exact here) at out = in * stride - pad + k, where pad is the padding a
convolution of the output with the same geometry would use; then bias, requantisation, clamp.
"""

from __future__ import annotations

import numpy as np

from . import prepare
from .requant import bias_of, requantize


def transpose_conv(g, op, ins, outs) -> None:
    x = ins[-1]  # the data input (output_shape, when not constant, comes first and is not read)
    ti = g.tensors[op.inputs[2]]
    flt = g.tensors[op.inputs[1]].data.astype(np.float64)
    cout, kh, kw, cin = flt.shape
    _, h, w, _ = x.shape
    _, oh, ow, _ = outs[0].shape
    sh, sw = op.options["stride_h"], op.options["stride_w"]
    p = prepare.transpose_conv(g, op)
    pt, pl = p.pad_top, p.pad_left
    xin = x[0].astype(np.float64) - ti.zero_point
    full = np.zeros((max((h - 1) * sh + kh, pt + oh), max((w - 1) * sw + kw, pl + ow), cout), dtype=np.float64)
    for ky in range(kh):
        for kx in range(kw):
            full[ky:ky + (h - 1) * sh + 1:sh, kx:kx + (w - 1) * sw + 1:sw] += xin @ flt[:, ky, kx, :].T
    acc = full[pt:pt + oh, pl:pl + ow].astype(np.int64) + bias_of(g, op, cout)
    outs[0][...] = requantize(acc, np.array(p.multipliers), np.array(p.shifts), g, op).reshape(outs[0].shape)
