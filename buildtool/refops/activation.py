"""Element-wise kernels: RELU, RELU6, TANH, PRELU, MAXIMUM, MINIMUM (TFLM semantics); int8, and int16
(16x8). int16 TANH and LOGISTIC interpolate one 256-entry sigmoid table (sigmoid_table16).

The parameter functions are shared with code generation (codegen/model_c.py), so the C kernels
get the same integers. Each kernel computes its whole result before writing, so an output that
exactly aliases an input (in-place execution) is safe.
"""

from __future__ import annotations

import functools

import numpy as np

from ..model.ops import _check_same, _need

from .fixed_point import exp_on_negative_values, rounding_half_sum
from .quant_math import (INT32_MAX, mbqm, mul_by_pot, quantize_multiplier_scalar, rdbpot, round_half_away, srdhm,
    wrap32)


def operands(g, op, ins) -> list:
    """Every input in operator order: constants from the graph, activations from `ins` (kernel_inputs)."""
    it = iter(ins)
    return [g.tensors[i].data if g.tensors[i].is_const else next(it) for i in op.inputs if i >= 0]


def type_range(t) -> tuple:
    """(min, max) of tensor t's integer type."""
    info = np.iinfo(t.dtype)
    return int(info.min), int(info.max)


def relu_params(g, op) -> dict:
    """TFLM CalculateReluOpData: requantise input -> output, clamp at real 0 (and nothing above)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    m, s = quantize_multiplier_scalar(float(ti.scale) / float(to.scale))
    lo, hi = type_range(to)
    return dict(input_zp=ti.zero_point, output_zp=to.zero_point, multiplier=m, shift=s,
                act_min=max(lo, to.zero_point), act_max=hi)


def relu6_bounds(g, op) -> tuple:
    """TFLM Relu6: a clamp of the raw input codes to [input zero point, 6.0 in the INPUT's quantisation]
    (the output's quantisation is not used)."""
    ti = g.tensors[op.inputs[0]]
    six = int(round_half_away(np.float32(6.0) / np.float32(ti.scale))) + ti.zero_point
    return ti.zero_point, int(np.clip(six, *type_range(ti)))


def q4_input_params(g, op) -> dict:
    """LOGISTIC / TANH int8: the input rescaled to Q4.27 (TFLM CalculateArithmeticOpData)."""
    ti = g.tensors[op.inputs[0]]
    q, shift = np.frexp(float(ti.scale) * float(1 << 27))
    mult = int(round_half_away(q * float(1 << 31)))
    radius = int(np.floor(15 * float(1 << 27) / float(2.0 ** int(shift))))
    return dict(input_zero_point=ti.zero_point, input_range_radius=radius, input_multiplier=mult,
                input_left_shift=int(shift))


def tanh_params(g, op) -> dict:
    """Input rescaled to Q4.27 (TFLM CalculateArithmeticOpData for TANH; the same numbers as LOGISTIC)."""
    return q4_input_params(g, op)


def prelu_params(g, op) -> dict:
    """TFLM CalculatePreluParams: one multiplier for x >= 0, one (with alpha's scale) for x < 0."""
    ti, ta, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    m1, s1 = quantize_multiplier_scalar(float(ti.scale) / float(to.scale))
    m2, s2 = quantize_multiplier_scalar(float(ti.scale) * float(ta.scale) / float(to.scale))
    return dict(input_offset=-ti.zero_point, alpha_offset=-ta.zero_point, output_offset=to.zero_point,
                output_multiplier_1=m1, output_shift_1=s1, output_multiplier_2=m2, output_shift_2=s2)


def relu(g, op, ins, outs) -> None:
    p = relu_params(g, op)
    y = mbqm(ins[0].astype(np.int64) - p["input_zp"], p["multiplier"], p["shift"]) + p["output_zp"]
    outs[0][...] = np.clip(y, p["act_min"], p["act_max"]).reshape(outs[0].shape)


def relu6(g, op, ins, outs) -> None:
    lo, hi = relu6_bounds(g, op)
    outs[0][...] = np.clip(ins[0], lo, hi).reshape(outs[0].shape)


def tanh_q0(a):
    """gemmlowp tanh of a Q4.27 value, Q0.31 result (raw int32 in int64 arrays)."""
    a = np.asarray(a, dtype=np.int64)
    neg = a < 0
    e = exp_on_negative_values(-np.abs(a), 5)  # ExactMulByPot<1>: the same raw value read as Q5.26
    # one_minus_x_over_one_plus_x_for_x_in_0_1: Newton-Raphson for 1/(1+x) in Q2.29, then 2/(1+x) - 1
    half_den = rounding_half_sum(e, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half_den, -1010580540))
    for _ in range(3):
        one_minus = wrap32((1 << 29) - srdhm(half_den, x))
        x = wrap32(x + mul_by_pot(srdhm(x, one_minus), 2))
    r = mul_by_pot(wrap32(x - (1 << 29)), 2)  # (1 - e) / (1 + e) = tanh(|a|)
    return np.where(a == 0, 0, np.where(neg, -r, r))


def tanh(g, op, ins, outs) -> None:
    """TFLM reference_integer_ops::Tanh: output on scale 1/128, zero point 0 (int16: tanh_s16)."""
    if outs[0].dtype == np.int16:
        return tanh_s16(g, op, ins, outs)
    p = tanh_params(g, op)
    x = ins[0].astype(np.int64) - p["input_zero_point"]
    q4 = mbqm(x, p["input_multiplier"], p["input_left_shift"])
    y = np.clip(rdbpot(tanh_q0(q4), 31 - 7), -128, 127)
    r = p["input_range_radius"]
    y = np.where(x <= -r, -128, np.where(x >= r, 127, y))
    outs[0][...] = y.astype(np.int8).reshape(outs[0].shape)


def prelu(g, op, ins, outs) -> None:
    p = prelu_params(g, op)
    x, alpha = operands(g, op, ins)
    v = x.astype(np.int64) + p["input_offset"]
    a = np.broadcast_to(alpha.astype(np.int64) + p["alpha_offset"], v.shape)
    pos = mbqm(v, p["output_multiplier_1"], p["output_shift_1"])
    neg = mbqm(wrap32(v * a), p["output_multiplier_2"], p["output_shift_2"])
    y = np.where(v >= 0, pos, neg) + p["output_offset"]
    info = np.iinfo(outs[0].dtype)
    outs[0][...] = np.clip(y, info.min, info.max).reshape(outs[0].shape)


def maximum(g, op, ins, outs) -> None:
    a, b = operands(g, op, ins)
    outs[0][...] = np.maximum(a, b).reshape(outs[0].shape)


def minimum(g, op, ins, outs) -> None:
    a, b = operands(g, op, ins)
    outs[0][...] = np.minimum(a, b).reshape(outs[0].shape)


# -- int16 LOGISTIC and TANH: linear interpolation in a table of the sigmoid --------------------------
LUT16_STEP = 24  # table entry i samples sigmoid(i / 24): 256 entries cover [0, 10.625]


@functools.lru_cache(maxsize=1)
def sigmoid_table16() -> np.ndarray:
    """The 256 uint16 samples TFLM's int16 LOGISTIC and TANH interpolate (found by matching TFLM on
    every int16 input; docs/arena.md): entry i is 65536 * sigmoid(i / 24) lowered by half the error
    that linear interpolation to the next entry makes at the midpoint, rounded half up; the last
    entry is 65535, the saturated value beyond the table."""
    x = np.arange(256, dtype=np.float64) / LUT16_STEP
    h = 1.0 / LUT16_STEP

    def f(v):
        return 65536.0 / (1.0 + np.exp(-v))

    val = f(x)
    err = (val + f(x + h)) / 2.0 - f(x + h / 2.0)
    t = np.floor(val - err / 2.0 + 0.5)
    t[-1] = 65535
    t = np.minimum(t, 65535).astype(np.uint16)
    t.flags.writeable = False  # computed once and shared
    return t


# Largest input multiplier: x * multiplier must fit in int32 for every int16 x.
LUT16_MAX_MULTIPLIER = 65535


def lut16_params(g, op) -> dict:
    """TFLM's int16 LOGISTIC / TANH input rescaling to 1/(3 * 4096) units: d = (x * multiplier +
    round) >> left_shift. A power-of-two input scale of 2^-12 (TANH: also 2^-11) is a plain multiply
    by 3 << shift; any other scale gets a multiplier in (16383.5, 32767] (doubled with the shift
    from the float32 scale in double arithmetic, then truncated)."""
    s = float(np.float32(g.tensors[op.inputs[0]].scale))
    lg = np.log2(s)
    shift = 12 + int(round(lg))
    if abs(lg - round(lg)) < 1e-3 and shift in ((0, 1) if op.opcode == "TANH" else (0,)):
        return dict(input_multiplier=3 << shift, input_left_shift=0)
    m, shift = s * 4096.0 * 3.0, 0
    while m <= 32767.0 / 2.0 and shift <= 30:
        shift, m = shift + 1, m * 2.0
    return dict(input_multiplier=int(m), input_left_shift=shift)


def _lut16_interp(a, frac_bits: int, saturated: int):
    """Table value at a / 2^frac_bits (a >= 0) by linear interpolation, in units of 2^-frac_bits."""
    t = sigmoid_table16().astype(np.int64)
    uh = a >> frac_bits
    k = np.minimum(uh, 254)
    ut = a & ((1 << frac_bits) - 1)
    return np.where(uh >= 255, saturated, (t[k] << frac_bits) + ut * (t[k + 1] - t[k]))


def _lut16_input(g, op, x):
    p = lut16_params(g, op)
    sh = p["input_left_shift"]
    return (x.astype(np.int64) * p["input_multiplier"] + ((1 << sh) >> 1)) >> sh


def sigmoid16(d) -> np.ndarray:
    """Q0.15 sigmoid of d (in 1/(3 * 4096) units): sigmoid(-x) = 1 - sigmoid(x) with TFLM's rounding.
    Also the LSTM's gates (refops/lstm.py)."""
    d = np.asarray(d, dtype=np.int64)
    r = _lut16_interp(np.abs(d), 9, 0x7FFF << 10)
    return (np.where(d >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1) >> 10).astype(np.int16)


def tanh16(d) -> np.ndarray:
    """Q0.15 tanh = 2 * sigmoid(2x) - 1 from the same table (d read with one bit less of fraction)."""
    d = np.asarray(d, dtype=np.int64)
    r = _lut16_interp(np.abs(d), 8, 0xFFFF << 8)
    return (np.where(d >= 0, r - (1 << 23) + (1 << 7), (1 << 23) - r + (1 << 7) - 1) >> 8).astype(np.int16)


def logistic_s16(g, op, ins, outs) -> None:
    """int16 LOGISTIC: output scale 2^-15, zero point 0."""
    outs[0][...] = sigmoid16(_lut16_input(g, op, ins[0])).reshape(outs[0].shape)


def tanh_s16(g, op, ins, outs) -> None:
    """int16 TANH: output scale 2^-15, zero point 0."""
    outs[0][...] = tanh16(_lut16_input(g, op, ins[0])).reshape(outs[0].shape)


def check_sigmoid_like(g, op):
    """LOGISTIC and TANH; int16 (TFLM's table interpolation) needs the output on scale 2^-15 and an
    input scale whose rescaling multiplier fits the kernel's int32 product."""
    _check_same(g, op)
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if to.dtype != "int16":
        return
    lg = np.log2(float(to.scale))
    _need(round(lg) == -15 and abs(lg + 15) < 1e-3, op,
          f"int16 output scale {float(to.scale):g} must be 2^-15 (1/32768), as TFLM's int16 {op.opcode} writes; "
          f"re-quantise the model")
    _need(lut16_params(g, op)["input_multiplier"] <= LUT16_MAX_MULTIPLIER, op,
          f"int16 input scale {float(ti.scale):g} is too large (at most {LUT16_MAX_MULTIPLIER / 12288:.4g})")
