"""MEAN and SUM, int8 and int16 (TFLM reference semantics, reduce.h QuantizedMeanOrSum), REDUCE_MAX and
REDUCE_MIN (raw codes: TFLM requires the output's quantisation to be the input's).

TFLM sums the raw int8 values in int32, folds 1/n into the input/output rescaling
multiplier (multiplier << floor(log2 n), divided by n, truncating) and applies it to
sum - in_zp * n with MultiplyByQuantizedMultiplier. Same and different input/output
quantisation take the same path. SUM is the same arithmetic without the 1/n (prepare.sum_).
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
    total = wrap32(ins[0].astype(np.int64).sum(axis=axes))
    p = prepare.PREPARE[op.opcode](g, op)
    r = mbqm(wrap32(total - p.input_zp * n), p.multiplier, p.shift) + p.output_zp
    outs[0][...] = np.clip(r, *QRANGE[to.dtype]).astype(to.dtype).reshape(outs[0].shape)


def reduce_max(g, op, ins, outs) -> None:
    outs[0][...] = ins[0].max(axis=mean_axes(g, op)).reshape(outs[0].shape)


def reduce_min(g, op, ins, outs) -> None:
    outs[0][...] = ins[0].min(axis=mean_axes(g, op)).reshape(outs[0].shape)
