"""MEAN, int8 and int16 (TFLM reference semantics, reduce.h QuantizedMeanOrSum).

TFLM sums the raw int8 values in int32, folds 1/n into the input/output rescaling
multiplier (multiplier << floor(log2 n), divided by n, truncating) and applies it to
sum - in_zp * n with MultiplyByQuantizedMultiplier. Same and different input/output
quantisation take the same path.
"""

from __future__ import annotations

import numpy as np

from . import prepare
from .prepare import mean_axes
from .quant_math import QRANGE, mbqm, wrap32


def mean(g, op, ins, outs) -> None:
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    axes = mean_axes(g, op)
    n = 1
    for a in axes:
        n *= ti.shape[a]
    total = ins[0].astype(np.int64).sum(axis=axes)
    p = prepare.mean_quant(ti, to, n)
    r = mbqm(wrap32(total - p.input_zp * n), p.multiplier, p.shift) + p.output_zp
    outs[0][...] = np.clip(r, *QRANGE[to.dtype]).astype(to.dtype).reshape(outs[0].shape)
