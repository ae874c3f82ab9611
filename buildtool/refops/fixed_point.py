"""gemmlowp fixed-point transcendental functions used by SOFTMAX and LOGISTIC.

Values are raw int32 fixed-point numbers held in int64 arrays; `ib` is the number
of integer bits of the input format (gemmlowp's FixedPoint<int32_t, ib>).
"""

from __future__ import annotations

import numpy as np

from .quant_math import INT32_MAX, mul_by_pot, rdbpot, srdhm, wrap32


def exp_on_interval_minus_quarter_to_0(a):
    """exp(x) for x in [-1/4, 0), Q0.31 in and out."""
    const_term = 1895147668
    one_third = 715827883
    x = wrap32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap32(srdhm(wrap32(x4_over_4 + x3), one_third) + x2), 1)
    return wrap32(const_term + srdhm(const_term, wrap32(x + poly)))


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
           (2, 39332535), (3, 720401), (4, 242))


def exp_on_negative_values(a, ib: int):
    """exp(x) for x <= 0 given in Q(ib).(31-ib); result Q0.31."""
    a = np.asarray(a, dtype=np.int64)
    frac = 31 - ib
    quarter = 1 << (frac - 2)
    a_mod = wrap32((a & (quarter - 1)) - quarter)
    result = exp_on_interval_minus_quarter_to_0(mul_by_pot(a_mod, ib))
    remainder = wrap32(a_mod - a)
    for exponent, mult in _BARREL:
        if ib > exponent:
            bit = 1 << (frac + exponent)
            result = np.where((remainder & bit) != 0, srdhm(result, mult), result)
    if ib > 5:
        result = np.where(a < -(1 << (36 - ib)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def rounding_half_sum(a, b):
    s = np.asarray(a, dtype=np.int64) + b
    sign = np.where(s >= 0, 1, -1)
    t = s + sign
    return np.where(t >= 0, t // 2, -((-t) // 2))


def one_over_one_plus_x_for_x_in_0_1(a):
    """1 / (1 + x) for x in [0, 1) by Newton-Raphson; Q0.31 in and out."""
    half_den = rounding_half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half_den, -1010580540))  # Q2.29
    one_q2 = 1 << 29
    for _ in range(3):
        hdx = srdhm(half_den, x)
        one_minus = wrap32(one_q2 - hdx)
        x = wrap32(x + mul_by_pot(srdhm(x, one_minus), 2))
    return mul_by_pot(x, 1)


def logistic(a, ib: int):
    """1 / (1 + exp(-x)), input Q(ib).(31-ib), output Q0.31."""
    a = np.asarray(a, dtype=np.int64)
    pos = a > 0
    abs_in = np.where(pos, a, -a)
    r_pos = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-abs_in, ib))
    r_neg = wrap32(INT32_MAX - r_pos)
    return np.where(a == 0, 1 << 30, np.where(pos, r_pos, r_neg))
