"""SOFTMAX int8 -> int8 with TFLM's fixed-point path (exp on Q5.26, reciprocal by Newton-Raphson).

TFLM requires the output to be scale 1/256, zero point -128. int16 -> int16 (softmax_s16) is TFLM's
table path instead: exp on [-10, 0] and 1/(1+x) on [0, 1], each a 513-entry int16 table that TFLM
builds at prepare time in float32 (softmax_luts16), looked up with linear interpolation.
"""

from __future__ import annotations

import math

import numpy as np

from .fixed_point import exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1
from .quant_math import clz32, mbqm, quantize_multiplier_scalar, rdbpot, srdhm, wrap32

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
    if ins[0].dtype == np.int16:
        return softmax_s16(g, op, ins, outs)
    x = ins[0].astype(np.int64)
    mult, shift, diff_min = softmax_params(op.options.get("beta", 1.0), g.tensors[op.inputs[0]].scale)
    out = softmax_rows(x.reshape(-1, x.shape[-1]), mult, shift, diff_min, np.iinfo(outs[0].dtype).bits)
    outs[0][...] = out.astype(outs[0].dtype).reshape(outs[0].shape)


def softmax_rows(x, mult: int, shift: int, diff_min: int, bits: int = 8) -> np.ndarray:
    """int8 rows [rows, depth] -> int8 (bits 8) or int16 (bits 16: scale 1/65536, zero point -32768).

    Where TFLM is undefined, the exact arithmetic: the sum of exponentials (Q12, at most 1.0 = 2^19 per
    term) is read as uint32 like TFLM's GetReciprocal does (exact below 8192; TFLM's int32 sum overflows
    past 4096) and saturates at 2^32 - 1 beyond; and the final rounding shift num_bits_over_unit + 31 - bits,
    which reaches 32 for int8 once the sum reaches 512 (TFLM aborts: gemmlowp asserts <= 31), is exact in
    int64 (an int32 below 2^31 shifted by 32 or more rounds to 0: every output the zero point, -128).
    kernels/reference/softmax.c does the same."""
    x = np.asarray(x, dtype=np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    live = diff >= diff_min
    scaled = srdhm(wrap32(diff << shift), mult)
    exps = exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS)
    sums = np.minimum(np.where(live, rdbpot(exps, ACCUM_INTEGER_BITS), 0).sum(axis=1), 0xFFFFFFFF)
    lo, hi = (-128, 127) if bits == 8 else (-32768, 32767)
    out = np.empty_like(x)
    for r in range(x.shape[0]):
        s = int(sums[r])  # >= 2^19: the maximum's own term
        headroom = clz32(s)
        bits_over_unit = ACCUM_INTEGER_BITS - headroom
        shifted_minus_one = int(wrap32(((s << headroom) & 0xFFFFFFFF) - (1 << 31)))
        scale = one_over_one_plus_x_for_x_in_0_1(np.array([shifted_minus_one]))[0]
        exponent = bits_over_unit + 31 - bits  # up to 35 for int8: rdbpot is exact in int64
        o = rdbpot(srdhm(scale, exps[r]), exponent) + lo
        out[r] = np.where(live[r], np.clip(o, lo, hi), lo)
    return out


# -- int16 -> int16 ---------------------------------------------------------------------------------
def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))


def _lut16(func, lo: float, hi: float) -> np.ndarray:
    """TFLM's 513-entry int16 table of func on [lo, hi] (output range [-1, 1] -> 65536 codes), all in
    float32 as TFLM computes it: 512 rounded samples, each lowered by half the (rounded) error that
    interpolating to the next sample makes at the midpoint, then the rounded value at hi."""
    f32 = np.float32
    lo, hi = f32(lo), f32(hi)
    step = f32((hi - lo) / f32(512))
    x = (lo + np.arange(512, dtype=f32) * step).astype(f32)
    nxt = (lo + np.arange(1, 513, dtype=f32) * step).astype(f32)
    inv = f32(32768)
    val, mid, after = (func(v).astype(f32) for v in (x, (x + step / f32(2)).astype(f32), nxt))
    sample = _round_away(val * inv)
    err = _round_away((after * inv + sample) / f32(2)) - _round_away(mid * inv)
    t = sample - _round_away(err / f32(2))
    last = _round_away(func(np.array([hi], f32)).astype(f32) * inv)
    return np.clip(np.concatenate([t, last]), -32768, 32767).astype(np.int16)


def softmax_luts16() -> tuple:
    """(exp table on [-10, 0], 1 / (1 + x) table on [0, 1])."""
    return _lut16(np.exp, -10.0, 0.0), _lut16(lambda v: np.float32(1) / (np.float32(1) + v), 0.0, 1.0)


def lut16_lookup(v, table):
    """Interpolated lookup of an int16 value: 512 segments of 128 codes, the rounded slope."""
    v = np.asarray(v, dtype=np.int64)
    t = table.astype(np.int64)
    k = 256 + (v >> 7)
    return t[k] + (((t[k + 1] - t[k]) * (v & 0x7F) + 64) >> 7)


def softmax16_params(beta: float, input_scale: float) -> tuple:
    """(multiplier, shift) taking beta * input differences to the exp table's 65535 codes per 10."""
    return quantize_multiplier_scalar(float(np.float32(beta)) * float(np.float32(input_scale)) / (10.0 / 65535.0))


def softmax_s16(g, op, ins, outs) -> None:
    """TFLM's int16 softmax: exp of the scaled differences from the row's maximum by table, the
    reciprocal of their sum by table after normalising it to [1, 2), output scale 2^-15."""
    exp_lut, rec_lut = softmax_luts16()
    mult, shift = softmax16_params(op.options.get("beta", 1.0), g.tensors[op.inputs[0]].scale)
    x = ins[0].astype(np.int64).reshape(-1, ins[0].shape[-1])
    diff = np.clip(mbqm(x - x.max(axis=1, keepdims=True), mult, shift) + 32767, -32768, 32767)
    exps = lut16_lookup(diff, exp_lut)
    out = np.empty_like(x)
    # the sum saturates at INT32_MAX (TFLM's int32 sum overflows, undefined, at 65549 logits at the maximum):
    # every output is then 0, the exact rounding (kernels/reference/softmax.c does the same)
    for r, total in enumerate(np.minimum(exps.sum(axis=1), (1 << 31) - 1)):
        headroom = clz32(int(total))
        norm = ((int(total) << (headroom - 1)) + (1 << 13)) >> 14  # the sum in [1, 2) as Q1.15
        rec = int(lut16_lookup(np.clip(norm - (1 << 15) - (1 << 16), -32768, 32767), rec_lut))
        rs = 31 - headroom
        out[r] = np.clip((exps[r] * rec + (1 << (rs - 1))) >> rs, 0, 32767)
    outs[0][...] = out.astype(np.int16).reshape(outs[0].shape)
