"""Integer arithmetic of TFLite Micro's reference kernels, vectorised with numpy.

Every array holds int32 values in an int64 array, so intermediate products never
overflow in numpy; where the C code relies on int32 wrap-around we wrap explicitly.
Multipliers are computed from the float32 scales in double precision exactly as
TFLite's QuantizeMultiplier does (frexp, round half away from zero).
"""

from __future__ import annotations

import functools

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def wrap32(x):
    """Two's-complement wrap of int64 values into the int32 range."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def round_half_away(x):
    """std::round / TfLiteRound: halves go away from zero."""
    x = np.asarray(x, dtype=np.float64)  # exact for float32 inputs, so x + 0.5 cannot round
    return np.where(x >= 0, np.floor(x + 0.5), -np.floor(-x + 0.5))


def quantize_multiplier(real) -> tuple:
    """QuantizeMultiplier(double) -> (int32 multiplier, shift); vectorised over an array of reals."""
    r = np.asarray(real, dtype=np.float64)
    q, shift = np.frexp(r)
    q_fixed = round_half_away(q * float(1 << 31)).astype(np.int64)
    shift = shift.astype(np.int64)
    top = q_fixed == (1 << 31)
    q_fixed = np.where(top, q_fixed // 2, q_fixed)
    shift = np.where(top, shift + 1, shift)
    tiny = shift < -31
    q_fixed = np.where(tiny | (r == 0), 0, q_fixed)
    shift = np.where(tiny | (r == 0), 0, shift)
    return q_fixed, shift


def quantize_multiplier_scalar(real: float) -> tuple:
    m, s = quantize_multiplier(np.array([real]))
    return int(m[0]), int(s[0])


def trunc_div_pot(x, n: int):
    """C-style integer division (truncation toward zero) by 2**n."""
    x = np.asarray(x, dtype=np.int64)
    return np.where(x >= 0, x >> n, -((-x) >> n))


def srdhm(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    res = trunc_div_pot(ab + nudge, 31)
    return np.where((a == b) & (a == INT32_MIN), INT32_MAX, res)


def rdbpot(x, exponent):
    """gemmlowp RoundingDivideByPOT: rounding arithmetic right shift (exponent may be an array)."""
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


def sat_left_shift32(x, e: int):
    """gemmlowp SaturatingRoundingMultiplyByPOT with a positive exponent on int32."""
    x = np.asarray(x, dtype=np.int64)
    if e == 0:
        return x
    threshold = (1 << (31 - e)) - 1
    r = wrap32(x << e)
    r = np.where(x > threshold, INT32_MAX, r)
    return np.where(x < -threshold, INT32_MIN, r)


def mul_by_pot(x, e: int):
    """SaturatingRoundingMultiplyByPOT<e> for any sign of e."""
    if e > 0:
        return sat_left_shift32(x, e)
    if e < 0:
        return rdbpot(x, -e)
    return np.asarray(x, dtype=np.int64)


def mbqm(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier (double rounding, TFLM default build).

    multiplier and shift broadcast against x (per-channel on the last axis).
    """
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    return rdbpot(srdhm(wrap32(x << left), multiplier), right)


@functools.lru_cache(maxsize=1024)  # a pure function the fused executor calls once per tile
def activation_range(act: str, scale: float, zero_point: int, qmin: int = -128, qmax: int = 127) -> tuple:
    """CalculateActivationRangeQuantized: clamp bounds of a fused activation (float32 math)."""
    s = np.float32(scale)

    def q(f):
        return zero_point + int(round_half_away(np.float32(f) / s))

    if act == "RELU":
        return max(qmin, q(0.0)), qmax
    if act == "RELU6":
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if act == "RELU_N1_TO_1":
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    return qmin, qmax


def clz32(x: int) -> int:
    x &= 0xFFFFFFFF
    return 32 - x.bit_length()


QRANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


def mbqm64(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier(int64 x, ...) of TFLite's 16x8 kernels: the multiplier is first
    rounded to 16 bits (0x7FFF when it would overflow), then one rounding shift by 15 - shift."""
    x = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - np.asarray(shift, dtype=np.int64)
    return (x * reduced + (np.int64(1) << (total - 1))) >> total
