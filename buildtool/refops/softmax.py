"""SOFTMAX int8 -> int8 with TFLM's fixed-point path (exp on Q5.26, reciprocal by Newton-Raphson).

TFLM requires the output to be scale 1/256, zero point -128.
"""

from __future__ import annotations

import math

import numpy as np

from .fixed_point import exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1
from .quant_math import clz32, quantize_multiplier_scalar, rdbpot, srdhm, wrap32

SCALED_DIFF_INTEGER_BITS = 5
ACCUM_INTEGER_BITS = 12


def softmax_params(beta: float, input_scale: float) -> tuple:
    """PreprocessSoftmaxScaling + CalculateInputRadius: (multiplier, left_shift, diff_min)."""
    real = min(float(np.float32(beta)) * float(np.float32(input_scale)) * (1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               float((1 << 31) - 1))
    mult, shift = quantize_multiplier_scalar(real)
    radius = math.floor(((1 << SCALED_DIFF_INTEGER_BITS) - 1) * (1 << (31 - SCALED_DIFF_INTEGER_BITS))
                        / (1 << shift))
    return mult, shift, -radius


def softmax(g, op, ins, outs) -> None:
    x = ins[0].astype(np.int64)
    depth = x.shape[-1]
    x = x.reshape(-1, depth)
    mult, shift, diff_min = softmax_params(op.options.get("beta", 1.0), g.tensors[op.inputs[0]].scale)
    diff = x - x.max(axis=1, keepdims=True)
    live = diff >= diff_min
    scaled = srdhm(wrap32(diff << shift), mult)
    exps = exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS)
    sums = wrap32(np.where(live, rdbpot(exps, ACCUM_INTEGER_BITS), 0).sum(axis=1))
    out = np.empty_like(x)
    lim = np.iinfo(outs[0].dtype)  # int8 output, or int16 (scale 1/65536, zero point -32768)
    bits = lim.bits
    for r in range(x.shape[0]):
        s = int(sums[r])
        headroom = clz32(s)
        bits_over_unit = ACCUM_INTEGER_BITS - headroom
        shifted_minus_one = int(wrap32(((s & 0xFFFFFFFF) << headroom & 0xFFFFFFFF) - (1 << 31)))
        scale = one_over_one_plus_x_for_x_in_0_1(np.array([shifted_minus_one]))[0]
        exponent = bits_over_unit + 31 - bits
        o = rdbpot(srdhm(scale, exps[r]), exponent) + lim.min
        out[r] = np.where(live[r], np.clip(o, lim.min, lim.max), lim.min)
    outs[0][...] = out.astype(outs[0].dtype).reshape(outs[0].shape)
