"""MEAN, int8 and int16 (TFLM reference semantics, reduce.h QuantizedMeanOrSum).

TFLM sums the raw int8 values in int32, folds 1/n into the input/output rescaling
multiplier (multiplier << floor(log2 n), divided by n, truncating) and applies it to
sum - in_zp * n with MultiplyByQuantizedMultiplier. Same and different input/output
quantisation take the same path.
"""

from __future__ import annotations

import numpy as np

from .quant_math import QRANGE, mbqm, quantize_multiplier_scalar, wrap32


def mean_axes(g, op) -> tuple:
    rank = len(g.tensors[op.inputs[0]].shape)
    axes = g.tensors[op.inputs[1]].data.reshape(-1)
    return tuple(sorted({int(a) % rank for a in axes}))


def mean_multiplier(in_scale: float, out_scale: float, n: int) -> tuple:
    mult, shift = quantize_multiplier_scalar(float(in_scale) / float(out_scale))
    s = min(n.bit_length() - 1, 32, 31 + shift)
    return int((mult << s) // n), shift - s


def mean(g, op, ins, outs) -> None:
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    axes = mean_axes(g, op)
    n = 1
    for a in axes:
        n *= ti.shape[a]
    total = ins[0].astype(np.int64).sum(axis=axes)
    mult, shift = mean_multiplier(ti.scale, to.scale, n)
    r = mbqm(wrap32(total - ti.zero_point * n), mult, shift) + to.zero_point
    outs[0][...] = np.clip(r, *QRANGE[to.dtype]).astype(to.dtype).reshape(outs[0].shape)
