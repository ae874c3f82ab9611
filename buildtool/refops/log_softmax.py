"""LOG_SOFTMAX int8 (TFLM log_softmax.cc, reference_ops::LogSoftmaxQuantized), fixed point throughout.

Per row of the last axis: d = x - max; the terms with d >= diff_min add exp(MBQM(d, m, s) as Q5.26) rescaled
to Q12.19; log of that sum by TFLite's log_x_for_x_greater_than_or_equal_to_1<5> (log_x below, gemmlowp
arithmetic step by step); then out = RoundingDivideByPOT(MBQM(d, m, s) - log_sum, 22) + 127, clamped, where d
> max(diff_min - 1, MBQM(log_sum + INT32_MIN, reverse divisor, reverse shift)), else -128. TFLM requires the
output scale 16/256 and zero point 127. m, s, diff_min are SOFTMAX's (beta 1); the reverse divisor is
(2^(31 - s)) / m as QuantizeMultiplierSmallerThanOneExp. kernels/reference/log_softmax.c does the same.
"""

from __future__ import annotations

import numpy as np

from .fixed_point import exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1, rounding_half_sum
from .quant_math import INT32_MAX, INT32_MIN, clz32, mbqm, mul_by_pot, quantize_multiplier_scalar, rdbpot, srdhm
from .quant_math import wrap32
from .softmax import softmax_params

OUTPUT_SCALE, OUTPUT_ZERO_POINT = 16.0 / 256, 127
_LOG_2, _SQRT_SQRT_HALF, _SQRT_HALF, _QUARTER = 1488522236, 1805811301, 1518500250, 536870912
_ALPHA_N, _ALPHA_D, _ALPHA_I, _ALPHA_F = 117049297, 127690142, 1057819769, 638450708


def log_softmax_params(g, op) -> dict:
    """PreprocessLogSoftmaxScalingExp(beta 1, input scale, 5) and CalculateInputRadius."""
    m, s, diff_min = softmax_params(1.0, g.tensors[op.inputs[0]].scale)
    rd, rs = quantize_multiplier_scalar((1 << (31 - s)) / float(m))
    return dict(input_multiplier=m, input_left_shift=s, reverse_scaling_divisor=rd, reverse_scaling_shift=rs,
                diff_min=diff_min)


def _sat(x: int) -> int:
    return max(INT32_MIN, min(INT32_MAX, x))


def _pot(x: int, e: int) -> int:
    """SaturatingRoundingMultiplyByPOT(Param) on one int32."""
    return int(mul_by_pot(np.array([x]), e)[0])


def _mul(a: int, b: int) -> int:
    return int(srdhm(np.array([a]), np.array([b]))[0])


def _w(x: int) -> int:
    return int(wrap32(np.array([x]))[0])


def log_x(z: int, input_bits: int = 12, output_bits: int = 5) -> int:
    """log_x_for_x_greater_than_or_equal_to_1_impl<output_bits, input_bits>(z): raw Q(output_bits)."""
    accum = output_bits + 1
    shifted_quarter = _pot(_QUARTER, -accum)
    hp1 = clz32(z)
    r_a = _pot(_mul(_pot(z, hp1 - 1), _SQRT_HALF), 1)
    za_adj = _sat(_pot(input_bits - hp1, 31 - accum) + shifted_quarter)
    zb_head = clz32(_mul(z, _SQRT_HALF)) - 1
    r_b = _pot(z, zb_head)
    zb_adj = _sat(_pot(input_bits - zb_head, 31 - accum) - shifted_quarter)
    r = min(r_a, r_b)
    z_adj = max(za_adj, zb_adj)
    p = int(rounding_half_sum(np.array([r]), _SQRT_SQRT_HALF)[0])
    q = _w(r - _SQRT_SQRT_HALF)
    q = _w(q + q)
    sq = _mul(q, q)
    num = _w(_mul(q, r) + _mul(_mul(q, sq), _ALPHA_N))
    den = _w(_mul(p, _w(_w(_ALPHA_I + q) + _mul(_ALPHA_D, sq))) + _mul(_ALPHA_F, q))
    recip = int(one_over_one_plus_x_for_x_in_0_1(np.array([den]))[0])
    num_scaled = _pot(num, -accum)
    return _pot(_w(_mul(z_adj, _LOG_2) + _mul(num_scaled, recip)), accum - output_bits)


def log_softmax(g, op, ins, outs) -> None:
    p = log_softmax_params(g, op)
    depth = ins[0].shape[-1]
    rows = ins[0].astype(np.int64).reshape(-1, depth)
    out = np.empty_like(rows)
    for k, x in enumerate(rows):
        d = x - x.max()
        q5 = mbqm(d, p["input_multiplier"], p["input_left_shift"])
        exps = rdbpot(exp_on_negative_values(q5, 5), 12)
        total = _w(int(np.where(d >= p["diff_min"], exps, 0).sum()))
        log_sum = log_x(total)
        adj = max(p["diff_min"] - 1, int(mbqm(np.array([_w(log_sum + INT32_MIN)]), p["reverse_scaling_divisor"],
                                               p["reverse_scaling_shift"])[0]))
        o = rdbpot(wrap32(q5 - log_sum), 31 - 5 - 4) + OUTPUT_ZERO_POINT
        out[k] = np.where(d > adj, np.clip(o, -128, 127), -128)
    outs[0][...] = out.astype(np.int8).reshape(outs[0].shape)
