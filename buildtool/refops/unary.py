"""ABS (int8, int16) and RSQRT (int8, int16): TFLM's elementwise.cc semantics.

ABS: v = |x - input zero point|; when the input and output scales are the same float32 value, out =
clamp(v + output zero point), else clamp(MBQM(v, input scale / output scale) + output zero point).
int16 needs zero points 0 (as every int16 tensor here).

RSQRT: v = x - input zero point; v == 0 gives the type's maximum; otherwise TFLM's fixed-point
1/sqrt(v) (GetInvSqrtQuantizedMultiplierExp: Newton-Raphson in Q3.28) applied to 1 with a shift of 20,
then requantised by 1 / (sqrt(input scale) * output scale) with the shift lowered by 20. TFLM fails the
invocation for an input below the input zero point (a negative real); here such an input gives 127,
as 0 does. An int8 input has 256 codes, so the result is a 256-entry table (rsqrt_table) that the numpy
kernel and the C kernel (bt_lut_s8, the table written into model.c) both look up; int16 computes each value
(bt_rsqrt_s16, the same arithmetic in C).

The parameter functions are shared with code generation (codegen/extra_c.py).
"""

from __future__ import annotations

import functools

import numpy as np

from .quant_math import INT32_MAX, QRANGE, clz32, mbqm, quantize_multiplier_scalar


def abs_params(g, op) -> dict:
    """TFLM PrepareAbsRsqrt for ABS: the rescale only when the float32 scales differ."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    si, so = np.float32(ti.scale), np.float32(to.scale)
    rescale = bool(si != so)
    m, s = quantize_multiplier_scalar(float(si) / float(so)) if rescale else (0, 0)
    return dict(input_offset=ti.zero_point, output_offset=to.zero_point, needs_rescale=int(rescale),
                multiplier=m, shift=s)


def abs_(g, op, ins, outs) -> None:
    p = abs_params(g, op)
    v = np.abs(ins[0].astype(np.int64) - p["input_offset"])
    if p["needs_rescale"]:
        v = mbqm(v, p["multiplier"], p["shift"])
    lo, hi = QRANGE[outs[0].dtype.name]
    outs[0][...] = np.clip(v + p["output_offset"], lo, hi).astype(outs[0].dtype).reshape(outs[0].shape)


# -- RSQRT ------------------------------------------------------------------------------------
def _i32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _srdhm(a: int, b: int) -> int:
    if a == b == -(1 << 31):
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) >> 31
    return q if ab + nudge >= 0 else -q


def _rdbpot(x: int, e: int) -> int:
    mask = (1 << e) - 1
    return (x >> e) + ((x & mask) > (mask >> 1) + (x < 0))


def _sat_shl(x: int, e: int) -> int:
    lim = (1 << (31 - e)) - 1
    return INT32_MAX if x > lim else -(1 << 31) if x < -lim else x << e


def inv_sqrt(v: int) -> tuple:
    """TFLite's GetInvSqrtQuantizedMultiplierExp(v, reverse_shift=-1): (multiplier, left shift)."""
    if v <= 1:
        return INT32_MAX, 0
    shift = 11
    while v >= 1 << 29:
        v //= 4
        shift += 1
    pairs = (clz32(v) - 1) // 2 - 1
    shift -= pairs
    v <<= 2 * pairs
    half_input = _rdbpot(v >> 1, 1)  # Q3.28
    half_three = (1 << 28) + (1 << 27)  # 1.5 in Q3.28
    x = 1 << 28  # 1.0
    for _ in range(5):
        x3 = _sat_shl(_srdhm(_srdhm(x, x), x), 6)  # x*x*x is Q9.22: back to Q3.28
        x = _sat_shl(_i32(_srdhm(half_three, x) - _srdhm(half_input, x3)), 3)  # Q6.25 -> Q3.28
    x = _srdhm(x, 1518500250)  # * sqrt(2)/2
    if shift < 0:
        x, shift = _i32(x << -shift), 0
    return x, -shift


def _mbqm1(x: int, m: int, s: int) -> int:
    return int(mbqm(np.array([x]), m, s)[0])


@functools.lru_cache(maxsize=1 << 17)  # int16: up to 65,536 codes a quantisation, each computed once
def _rsqrt_one(code: int, in_zp: int, out_zp: int, m: int, s: int, lo: int, hi: int) -> int:
    v = code - in_zp
    if v <= 0:  # 0: TFLM's maximum; below the zero point TFLM fails: the same maximum here
        return hi
    im, ishift = inv_sqrt(v)
    data = _mbqm1(1, im, ishift + 20)
    return int(np.clip(_mbqm1(data, m, s - 20) + out_zp, lo, hi))


@functools.lru_cache(maxsize=256)
def _rsqrt_table(in_zp: int, out_zp: int, m: int, s: int) -> tuple:
    return tuple(_rsqrt_one(code, in_zp, out_zp, m, s, -128, 127) for code in range(-128, 128))


def rsqrt_params(g, op) -> dict:
    """bt_rsqrt_params without n: the zero points and 1 / (sqrt(input scale) * output scale)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    real = 1.0 / (np.sqrt(float(np.float32(ti.scale))) * float(np.float32(to.scale)))
    m, s = quantize_multiplier_scalar(real)
    return dict(input_zero_point=ti.zero_point, output_zero_point=to.zero_point, multiplier=m, shift=s)


def rsqrt_table(g, op) -> np.ndarray:
    """int8 RSQRT's result for each input code -128..127 (index code + 128)."""
    p = rsqrt_params(g, op)
    return np.array(_rsqrt_table(*p.values()), np.int8)


def rsqrt(g, op, ins, outs) -> None:
    if outs[0].dtype == np.int16:  # int16 (TFLM's RsqrtEvalQuantized<int16_t>): each distinct code once
        lo, hi = QRANGE["int16"]
        codes, where = np.unique(ins[0].astype(np.int64), return_inverse=True)
        vals = np.array([_rsqrt_one(int(c), *rsqrt_params(g, op).values(), lo, hi) for c in codes], np.int16)
        outs[0][...] = vals[where].reshape(outs[0].shape)
        return
    t = rsqrt_table(g, op)
    outs[0][...] = t[ins[0].astype(np.int64) + 128].reshape(outs[0].shape)
