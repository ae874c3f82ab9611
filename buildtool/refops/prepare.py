"""One prepare per operator (TFLite Micro's OpData pattern).

Each function computes, once, the integers a kernel needs (multipliers, shifts, offsets,
activation range, window geometry) and returns a small frozen OpData. The numpy kernels
(refops) and code generation (codegen) both read it, so the two cannot disagree.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .quant_math import QRANGE, activation_range, quantize_multiplier_scalar
from .requant import channel_multipliers
from ..model.ops import conv_padding
from .window import Window


def act_range(g, op) -> tuple:
    """(act_min, act_max): the fused activation clamped to the output type."""
    out = g.tensors[op.outputs[0]]
    return activation_range(op.options.get("activation", "NONE"), out.scale, out.zero_point, *QRANGE[out.dtype])


def window(g, op) -> Window:
    """Sliding-window geometry of CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D."""
    inp, o = g.tensors[op.inputs[0]].shape, op.options
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        f = g.tensors[op.inputs[1]].shape
        return Window(inp[1], inp[2], f[1], f[2], o["stride_h"], o["stride_w"],
                      o.get("dilation_h", 1), o.get("dilation_w", 1), o["padding"])
    return Window(inp[1], inp[2], o["filter_h"], o["filter_w"], o["stride_h"], o["stride_w"], 1, 1, o["padding"])


BIAS_INPUT = {"TRANSPOSE_CONV": 3, "SVDF": 3}  # the bias's input position where it is not 2


def bias_input(g, op, dtype: str = "int32", pos: int | None = None) -> int:
    """The tensor index of op's bias (input `pos`, by default BIAS_INPUT's or 2) when it has one of type
    dtype, else -1: the one "has a bias" rule of every parameter struct (an int64 bias, 16x8, is never
    an int32 bias field)."""
    pos = BIAS_INPUT.get(op.opcode, 2) if pos is None else pos
    b = op.inputs[pos] if len(op.inputs) > pos else -1
    return b if b >= 0 and g.tensors[b].dtype == dtype else -1


def fields(data) -> dict:
    """An OpData's fields in declaration order (the C struct's order)."""
    return {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}


@dataclass(frozen=True)
class ChannelRequant:
    """Per-output-channel requantisation, offsets and activation range of the convolutions."""
    multipliers: tuple
    shifts: tuple
    input_offset: int
    output_offset: int
    act_min: int
    act_max: int


@dataclass(frozen=True)
class ConvData(ChannelRequant):
    """CONV_2D / DEPTHWISE_CONV_2D: the requantisation and the window."""
    window: Window


@dataclass(frozen=True)
class TransposeConvData(ChannelRequant):
    """TRANSPOSE_CONV (inputs output_shape, weights, input, [bias]): padding on the output size."""
    pad_top: int
    pad_left: int


_REQUANT_MEMO: dict = {}  # content key -> fields: the fused executor prepares per tile, the math once


def _channel_requant(g, op, x: int) -> dict:
    """ChannelRequant's fields for data input x; a per-tensor filter scale is replicated. Memoised on
    everything the result depends on (scales, zero points, shapes, activation), never on identities."""
    flt, ti, to = g.tensors[op.inputs[1]], g.tensors[x], g.tensors[op.outputs[0]]
    if any(t.quant is None for t in (ti, flt, to)):
        return _channel_requant_of(g, op, x)
    key = (op.opcode, op.options.get("activation", "NONE"), tuple(flt.shape), to.dtype,
           *(np.asarray(v).tobytes() for t in (ti, flt, to) for v in (t.quant.scale, t.quant.zero_point)))
    hit = _REQUANT_MEMO.get(key)
    if hit is None:
        if len(_REQUANT_MEMO) > 4096:
            _REQUANT_MEMO.clear()
        hit = _REQUANT_MEMO[key] = _channel_requant_of(g, op, x)
    return dict(hit)


def _channel_requant_of(g, op, x: int) -> dict:
    m, s = channel_multipliers(g, op)
    flt = g.tensors[op.inputs[1]]
    n = flt.shape[3] if op.opcode == "DEPTHWISE_CONV_2D" else flt.shape[0]
    lo, hi = act_range(g, op)
    return dict(multipliers=tuple(int(v) for v in np.broadcast_to(m, (n,))),
                shifts=tuple(int(v) for v in np.broadcast_to(s, (n,))), input_offset=-g.tensors[x].zero_point,
                output_offset=g.tensors[op.outputs[0]].zero_point, act_min=lo, act_max=hi)


def conv(g, op) -> ConvData:
    return ConvData(window=window(g, op), **_channel_requant(g, op, op.inputs[0]))


def transpose_conv(g, op) -> TransposeConvData:
    """TFLM ComputePaddingHeightWidth on the output size."""
    out = g.tensors[op.outputs[0]].shape
    _, kh, kw, _ = g.tensors[op.inputs[1]].shape
    o = op.options
    return TransposeConvData(pad_top=conv_padding(out[1], kh, o["stride_h"], 1, o["padding"]),
                             pad_left=conv_padding(out[2], kw, o["stride_w"], 1, o["padding"]),
                             **_channel_requant(g, op, op.inputs[2]))


@dataclass(frozen=True)
class FcData:
    """FULLY_CONNECTED (bt_fc_params without its pointers)."""
    n_in: int
    n_out: int
    batches: int
    input_offset: int
    filter_offset: int
    output_offset: int
    act_min: int
    act_max: int
    multipliers: tuple
    shifts: tuple
    per_channel: int


def fully_connected(g, op) -> FcData:
    ti, to, tw = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]], g.tensors[op.inputs[1]]
    m, s = channel_multipliers(g, op)
    lo, hi = act_range(g, op)
    per_channel = int(np.size(m) > 1)
    # TFLM subtracts per-tensor weights' zero point; its per-channel kernel ignores theirs (checked against TFLM)
    return FcData(tw.shape[1], tw.shape[0], ti.num_elements // tw.shape[1], -ti.zero_point,
                  0 if per_channel else -tw.zero_point, to.zero_point, lo, hi, tuple(int(v) for v in np.atleast_1d(m)),
                  tuple(int(v) for v in np.atleast_1d(s)), per_channel)


@dataclass(frozen=True)
class RequantData:
    """QUANTIZE between integer types (bt_requant_params without n)."""
    input_zp: int
    output_zp: int
    multiplier: int
    shift: int


def requant(ti, to) -> RequantData:
    m, s = quantize_multiplier_scalar(float(ti.scale) / float(to.scale))
    return RequantData(ti.zero_point, to.zero_point, m, s)


@dataclass(frozen=True)
class MeanData(RequantData):
    """MEAN (bt_mean_params' quantisation): 1/num folded into the rescaling multiplier."""
    same_qparams: int


def mean_axes(g, op) -> tuple:
    """MEAN's reduced axes, sorted, non-negative."""
    rank = len(g.tensors[op.inputs[0]].shape)
    return tuple(sorted({int(a) % rank for a in g.tensors[op.inputs[1]].data.reshape(-1)}))


def mean_quant(ti, to, num: int) -> MeanData:
    """TFLM QuantizedMeanOrSum: multiplier << floor(log2 num), divided by num (truncating)."""
    same = int(ti.zero_point == to.zero_point and np.float32(ti.scale) == np.float32(to.scale))
    r = requant(ti, to)
    adj = min(num.bit_length() - 1, 32, 31 + r.shift)
    return MeanData(r.input_zp, r.output_zp, int((r.multiplier << adj) // num), r.shift - adj, same)


def _int16_multiplier(real: float) -> tuple:
    """QuantizeMultiplier then DownScaleInt32ToInt16Multiplier."""
    m, e = quantize_multiplier_scalar(real)
    return (32767 if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16), e


@dataclass(frozen=True)
class HardSwishData:
    """HARD_SWISH (bt_hard_swish_params without n)."""
    input_zero_point: int
    output_zero_point: int
    reluish_multiplier_fixedpoint_int16: int
    reluish_multiplier_exponent: int
    output_multiplier_fixedpoint_int16: int
    output_multiplier_exponent: int


def hard_swish(g, op) -> HardSwishData:
    """TFLM HardSwishPrepare: float32 scale arithmetic, int16 fixed-point multipliers."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    hires = np.float32(1.0 / 128.0) * np.float32(ti.scale)
    om, oe = _int16_multiplier(float(np.float32(hires / np.float32(to.scale))))
    rm, re = _int16_multiplier(float(np.float32(hires / np.float32(3.0 / 32768.0))))
    return HardSwishData(ti.zero_point, to.zero_point, rm, re, om, oe)


def mean(g, op) -> MeanData:
    ti = g.tensors[op.inputs[0]]
    num = 1
    for a in mean_axes(g, op):
        num *= int(ti.shape[a])
    return mean_quant(ti, g.tensors[op.outputs[0]], num)


def sum_(g, op) -> MeanData:
    """SUM: MEAN's arithmetic without the 1/num (TFLM QuantizedMeanOrSum with compute_sum)."""
    return mean_quant(g.tensors[op.inputs[0]], g.tensors[op.outputs[0]], 1)


PREPARE = {"CONV_2D": conv, "DEPTHWISE_CONV_2D": conv, "FULLY_CONNECTED": fully_connected,
           "HARD_SWISH": hard_swish, "MEAN": mean, "SUM": sum_, "TRANSPOSE_CONV": transpose_conv,
           "QUANTIZE": lambda g, op: requant(g.tensors[op.inputs[0]], g.tensors[op.outputs[0]])}
