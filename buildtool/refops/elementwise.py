"""Element-wise int8 kernels: ADD, MUL, LOGISTIC, HARD_SWISH, QUANTIZE, DEQUANTIZE (TFLM semantics).

Each kernel computes its whole result before writing, so an output that exactly
aliases an input (in-place execution) is safe.
"""

from __future__ import annotations

import numpy as np

from . import fixed_point, prepare
from .activation import logistic_s16, operands, q4_input_params
from .quant_math import mbqm, quantize_multiplier_scalar, rdbpot, round_half_away, srdhm, wrap32


_out_act = prepare.act_range


def add_params(g, op) -> dict:
    """TFLM's ADD parameters: inputs rescaled to twice the larger scale with 20 bits of headroom
    (15 for int16).

    Shared with code generation (codegen/qparams.py), so the C kernels get the same integers.
    """
    t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    twice_max = 2.0 * float(max(np.float32(t1.scale), np.float32(t2.scale)))
    left_shift = 15 if to.dtype == "int16" else 20
    m1, s1 = quantize_multiplier_scalar(float(t1.scale) / twice_max)
    m2, s2 = quantize_multiplier_scalar(float(t2.scale) / twice_max)
    mo, so = quantize_multiplier_scalar(twice_max / ((1 << left_shift) * float(to.scale)))
    lo, hi = _out_act(g, op)
    return dict(input1_offset=-t1.zero_point, input2_offset=-t2.zero_point, output_offset=to.zero_point,
                left_shift=left_shift, input1_multiplier=m1, input1_shift=s1, input2_multiplier=m2,
                input2_shift=s2, output_multiplier=mo, output_shift=so, act_min=lo, act_max=hi)


def mul_params(g, op) -> dict:
    """TFLM's int8 MUL parameters (shared with code generation)."""
    t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    m, s = quantize_multiplier_scalar(float(t1.scale) * float(t2.scale) / float(to.scale))
    lo, hi = _out_act(g, op)
    return dict(input1_offset=-t1.zero_point, input2_offset=-t2.zero_point, output_offset=to.zero_point,
                output_multiplier=m, output_shift=s, act_min=lo, act_max=hi)


def add_sub(p: dict, ins, outs, sign: int = 1) -> None:
    """TFLM's quantised ADD (sign 1) and SUB (sign -1) with ADD's parameters p."""
    a = ins[0].astype(np.int64) + p["input1_offset"]
    b = ins[1].astype(np.int64) + p["input2_offset"]
    sa = rdbpot(srdhm(wrap32(a << p["left_shift"]), p["input1_multiplier"]), -p["input1_shift"])
    sb = rdbpot(srdhm(wrap32(b << p["left_shift"]), p["input2_multiplier"]), -p["input2_shift"])
    raw = rdbpot(srdhm(wrap32(sa + sign * sb), p["output_multiplier"]), -p["output_shift"]) + p["output_offset"]
    outs[0][...] = np.clip(raw, p["act_min"], p["act_max"]).astype(outs[0].dtype).reshape(outs[0].shape)


def add(g, op, ins, outs) -> None:
    if outs[0].dtype == np.int32:  # TFLM's int32 path: the sum, wrapping; its fused activation is not applied
        a, b = (np.asarray(v, np.int64) for v in operands(g, op, ins))
        outs[0][...] = wrap32(a + b).astype(np.int32).reshape(outs[0].shape)
        return
    add_sub(add_params(g, op), ins, outs)


def mul(g, op, ins, outs) -> None:
    p = mul_params(g, op)
    a = ins[0].astype(np.int64) + p["input1_offset"]
    b = ins[1].astype(np.int64) + p["input2_offset"]
    raw = mbqm(wrap32(a * b), p["output_multiplier"], p["output_shift"]) + p["output_offset"]
    outs[0][...] = np.clip(raw, p["act_min"], p["act_max"]).astype(outs[0].dtype).reshape(outs[0].shape)


def logistic(g, op, ins, outs) -> None:
    """Input rescaled to Q4.27, gemmlowp logistic, output on scale 1/256 with zero point -128 (int16:
    activation.logistic_s16)."""
    if outs[0].dtype == np.int16:
        return logistic_s16(g, op, ins, outs)
    ti = g.tensors[op.inputs[0]]
    p = q4_input_params(g, op)
    radius = p["input_range_radius"]
    x = ins[0].astype(np.int64) - ti.zero_point
    q4 = mbqm(x, p["input_multiplier"], p["input_left_shift"])
    y = rdbpot(fixed_point.logistic(q4, 4), 23) - 128
    y = np.clip(y, -128, 127)
    y = np.where(x <= -radius, -128, np.where(x >= radius, 127, y))
    outs[0][...] = y.astype(np.int8).reshape(outs[0].shape)


def _srdhm16(a, b):
    ab = np.asarray(a, dtype=np.int64) * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    t = ab + nudge
    r = np.where(t >= 0, t >> 15, -((-t) >> 15))
    return np.where((a == b) & (a == -32768), 32767, r)


def _sdhm16(a, b):
    ab = np.asarray(a, dtype=np.int64) * b
    r = np.where(ab >= 0, ab >> 15, -((-ab) >> 15))
    return np.where((a == b) & (a == -32768), 32767, r)


def _sat_shl16(x, n):
    return np.clip(np.asarray(x, dtype=np.int64) * (1 << n), -32768, 32767)


def hard_swish(g, op, ins, outs) -> None:
    """x * relu6(x + 3) / 6 in 16-bit fixed point (TFLM reference HardSwish)."""
    p = prepare.hard_swish(g, op)
    out_m, out_e = p.output_multiplier_fixedpoint_int16, p.output_multiplier_exponent
    rel_m, rel_e = p.reluish_multiplier_fixedpoint_int16, p.reluish_multiplier_exponent
    v = ins[0].astype(np.int64) - p.input_zero_point
    hires = v * 128
    pre_out = _srdhm16(hires, out_m)
    r = hires
    if rel_e > 0:
        r = _sat_shl16(r, rel_e - 1)
    r = _srdhm16(r, rel_m)
    if rel_e > 0:
        r = _sat_shl16(r, 1)
    if rel_e < 0:
        r = rdbpot(r, -rel_e)
    r = (r + (1 << 15)) >> 1
    y = rdbpot(_sdhm16(r, pre_out), -out_e) + p.output_zero_point
    outs[0][...] = np.clip(y, -128, 127).astype(np.int8).reshape(outs[0].shape)


def quantize(g, op, ins, outs) -> None:
    """float32 -> int8/int16 (AffineQuantize) or int8/int16/int32 -> int8/int16/int32 requantisation."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if ti.dtype == "float32":
        q = round_half_away(ins[0].astype(np.float32) / np.float32(to.scale)).astype(np.int64) + to.zero_point
    else:
        p = prepare.requant(ti, to)
        q = mbqm(wrap32(ins[0].astype(np.int64) - p.input_zp), p.multiplier, p.shift) + p.output_zp
    lim = np.iinfo(outs[0].dtype)
    outs[0][...] = np.clip(q, lim.min, lim.max).astype(outs[0].dtype).reshape(outs[0].shape)


def dequantize(g, op, ins, outs) -> None:
    ti = g.tensors[op.inputs[0]]
    outs[0][...] = (np.float32(ti.scale) * (ins[0].astype(np.int32) - ti.zero_point).astype(np.float32)
                    ).reshape(outs[0].shape)
