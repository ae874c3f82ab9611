"""DIV int8 (TFLM div.cc, reference_ops::DivElementwise / BroadcastDivSlowQuantized).

Per element: v1 = x1 - zp1, v2 = x2 - zp2 (both negated when v2 < 0); GetReciprocal(v2, 31): h = clz(v2),
recip_shift = 31 - h, inv = one_over_one_plus_x((v2 << h) - 2^31); headroom = CountLeadingSignBits(v1)
(31 for 0); q = SRDHM(v1 << headroom, inv); out = clamp(RoundingDivideByPOT(SRDHM(q, output_multiplier), e)
+ output zero point, the activation's range), e = headroom + recip_shift - output_shift. The output multiplier
is QuantizeMultiplier(s1 / (s2 so)), the scales' quotient taken in float32 as TFLM does.

Where TFLM is undefined, the exact arithmetic (as SOFTMAX, scripts/operators_table.py NOTES):
- e passes 31 whenever the numerator is small next to the divisor (v1 = 0 gives headroom 31 alone): gemmlowp
  asserts e <= 31 and TFLM's release build shifts by e mod 32 on x86 (saturated codes, zp + 1 for v1 = 0).
  Here the shift is exactly rounded: x / 2^e for an int32 x and e >= 32 rounds to 0, except INT32_MIN / 2^32
  = -1/2 -> -1, so the output is the output zero point (clamped to the activation's range). Where e <= 31 the
  bytes are TFLM's.
- v2 = 0 (the divisor at its zero point): clz gives 32, (v2 << 32) is read as 0 (what x86 and Arm compute)
  and the reciprocal's Newton-Raphson wraps in two's complement (TFLM's int32 overflow in practice): a fixed
  reciprocal DIV_BY_ZERO_INV, recip_shift -1.
The check refuses s1 / (s2 so) >= 2^21 (output_shift above 22), where e could turn negative (a left shift,
undefined in TFLM too). kernels/reference/div.c does the same.
"""

from __future__ import annotations

import numpy as np

from .activation import operands
from .fixed_point import one_over_one_plus_x_for_x_in_0_1
from .prepare import act_range
from .quant_math import INT32_MIN, quantize_multiplier_scalar, srdhm, wrap32

# one_over_one_plus_x_for_x_in_0_1(-1.0) with two's-complement wrapping: the reciprocal of a zero divisor
DIV_BY_ZERO_INV = int(one_over_one_plus_x_for_x_in_0_1(np.array([INT32_MIN]))[0])


def div_params(g, op) -> dict:
    """TFLM CalculateOpDataDiv: real multiplier = s1 / (s2 * so) in float32, then QuantizeMultiplier."""
    t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    real = np.float32(t1.scale) / (np.float32(t2.scale) * np.float32(to.scale))
    m, s = quantize_multiplier_scalar(float(real))
    lo, hi = act_range(g, op)
    return dict(input1_offset=-t1.zero_point, input2_offset=-t2.zero_point, output_offset=to.zero_point,
                output_multiplier=m, output_shift=s, act_min=lo, act_max=hi)


def clz32_array(x) -> np.ndarray:
    """Leading zeros of uint32 values (0 -> 32), element-wise; x in [0, 2^32)."""
    return 32 - np.frexp(np.asarray(x, np.float64))[1].astype(np.int64)


def rdbpot_exact(x, e) -> np.ndarray:
    """x / 2^e rounded to nearest, ties away from zero, for any e >= 0 (gemmlowp's RoundingDivideByPOT where
    e <= 31): for |x| <= 2^31 and e >= 33 the quotient is within 1/4 of 0, so e is capped at 40."""
    x = np.asarray(x, np.int64)
    e = np.minimum(np.asarray(e, np.int64), 40)
    mask = (np.int64(1) << e) - 1
    return (x >> e) + ((x & mask) > (mask >> 1) + (x < 0))


def div_exponents(p: dict, v1, v2) -> tuple:
    """(v1 with v2's sign folded in, v2 >= 0, headroom, recip_shift, e) of TFLM's element-wise step."""
    v1, v2 = np.asarray(v1, np.int64), np.asarray(v2, np.int64)
    neg = v2 < 0
    v1, v2 = np.where(neg, -v1, v1), np.where(neg, -v2, v2)
    recip_shift = 31 - clz32_array(v2)
    headroom = clz32_array(v1 ^ (v1 >> 63)) - 1  # CountLeadingSignBits; 31 for 0 and -1
    return v1, v2, headroom, recip_shift, headroom + recip_shift - p["output_shift"]


def div_codes(p: dict, x1, x2) -> np.ndarray:
    """int8 codes x1 / x2 (broadcast) with DIV's parameters p; see the module docstring."""
    v1, v2, headroom, recip_shift, e = div_exponents(p, np.asarray(x1, np.int64) + p["input1_offset"],
                                                     np.asarray(x2, np.int64) + p["input2_offset"])
    h = clz32_array(v2)
    shifted = wrap32(((v2 << np.minimum(h, 31)) & 0xFFFFFFFF) - (1 << 31))  # v2 = 0: 0 - 2^31
    inv = np.where(v2 == 0, DIV_BY_ZERO_INV, one_over_one_plus_x_for_x_in_0_1(shifted))
    q = srdhm(wrap32(v1 << headroom), inv)
    raw = rdbpot_exact(srdhm(q, p["output_multiplier"]), e) + p["output_offset"]
    return np.clip(raw, p["act_min"], p["act_max"])


def div(g, op, ins, outs) -> None:
    a, b = operands(g, op, ins)
    outs[0][...] = div_codes(div_params(g, op), a, b).astype(np.int8).reshape(outs[0].shape)
