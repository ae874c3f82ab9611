"""TRANSPOSE_CONV, int8 and 16x8 (TFLM reference_integer_ops::TransposeConv).

Inputs (output_shape, weights [cout, kh, kw, cin], input, [bias]). Every input pixel scatters
weights x (input - zero point) into an accumulator the size of the output (int32 for int8, int64
for int16 in TFLM; exact here) at out = in * stride - pad + k, where pad is the padding a
convolution of the output with the same geometry would use; then bias, requantisation, clamp.
"""

from __future__ import annotations

import numpy as np

from ..ops import conv_padding
from .requant import bias_of, channel_multipliers, requantize


def transpose_conv_padding(g, op) -> tuple:
    """(pad_top, pad_left) of TFLM's ComputePaddingHeightWidth on the output size."""
    out = g.tensors[op.outputs[0]].shape
    _, kh, kw, _ = g.tensors[op.inputs[1]].shape
    o = op.options
    return (conv_padding(out[1], kh, o["stride_h"], 1, o["padding"]),
            conv_padding(out[2], kw, o["stride_w"], 1, o["padding"]))


def transpose_conv(g, op, ins, outs) -> None:
    x = ins[-1]  # the data input (output_shape, when not constant, comes first and is not read)
    ti = g.tensors[op.inputs[2]]
    flt = g.tensors[op.inputs[1]].data.astype(np.float64)
    cout, kh, kw, cin = flt.shape
    _, h, w, _ = x.shape
    _, oh, ow, _ = outs[0].shape
    sh, sw = op.options["stride_h"], op.options["stride_w"]
    pt, pl = transpose_conv_padding(g, op)
    xin = x[0].astype(np.float64) - ti.zero_point
    full = np.zeros((max((h - 1) * sh + kh, pt + oh), max((w - 1) * sw + kw, pl + ow), cout), dtype=np.float64)
    for ky in range(kh):
        for kx in range(kw):
            full[ky:ky + (h - 1) * sh + 1:sh, kx:kx + (w - 1) * sw + 1:sw] += xin @ flt[:, ky, kx, :].T
    acc = full[pt:pt + oh, pl:pl + ow].astype(np.int64) + bias_of(g, op, cout)
    mult, shift = channel_multipliers(g, op)
    outs[0][...] = requantize(acc, mult, shift, g, op).reshape(outs[0].shape)
