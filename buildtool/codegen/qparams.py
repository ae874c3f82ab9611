"""Quantisation parameters of each kernel call, computed in Python exactly as
TFLite Micro's Prepare functions do, so the firmware never computes a scale.

The fixed-point primitives (QuantizeMultiplier, activation ranges) come from
buildtool.refops, the reference executor's implementation, so both share one
implementation.
"""

from __future__ import annotations

import numpy as np

from ..refops.quant_math import QRANGE, activation_range, quantize_multiplier_scalar
from ..refops.requant import channel_multipliers
from ..refops.elementwise import add_params, mul_params  # noqa: F401 (re-exported for model_c)
from ..refops.activation import q4_input_params as logistic_params  # noqa: F401 (re-exported for model_c)
from ..refops.softmax import softmax_params
from ..refops.leaky_relu import leaky_relu_params  # noqa: F401 (re-exported for model_c)
from ..refops.sub import sub_params  # noqa: F401 (re-exported for model_c)


def act_range(g, op) -> tuple:
    out = g.tensors[op.outputs[0]]
    return activation_range(op.options.get("activation", "NONE"), out.scale, out.zero_point, *QRANGE[out.dtype])


def conv_multipliers(g, op) -> tuple:
    """Per-output-channel (multipliers, shifts) lists; a per-tensor filter scale is replicated."""
    m, s = channel_multipliers(g, op)
    flt = g.tensors[op.inputs[1]]
    n = flt.shape[3] if op.opcode == "DEPTHWISE_CONV_2D" else flt.shape[0]
    m, s = np.broadcast_to(m, (n,)), np.broadcast_to(s, (n,))
    return [int(v) for v in m], [int(v) for v in s]


def fc_multipliers(g, op) -> tuple:
    """(multipliers, shifts, per_channel) of FULLY_CONNECTED."""
    m, s = channel_multipliers(g, op)
    return [int(v) for v in np.atleast_1d(m)], [int(v) for v in np.atleast_1d(s)], int(np.size(m) > 1)


def mean_params(ti, to, num: int) -> dict:
    """MEAN: integer path when input and output quantisation agree, else a multiplier that includes 1/num."""
    same = int(ti.zero_point == to.zero_point and np.float32(ti.scale) == np.float32(to.scale))
    m, s = quantize_multiplier_scalar(float(ti.scale) / float(to.scale))
    adj = min(num.bit_length() - 1, 32, 31 + s)
    m, s = (m << adj) // num, s - adj
    return dict(input_zp=ti.zero_point, output_zp=to.zero_point, multiplier=m, shift=s, same_qparams=same)


def softmax_quant(g, op) -> dict:
    mult, shift, diff_min = softmax_params(op.options.get("beta", 1.0), g.tensors[op.inputs[0]].scale)
    return dict(input_multiplier=mult, input_left_shift=shift, diff_min=diff_min)


def _int16_multiplier(real: float) -> tuple:
    """QuantizeMultiplier then DownScaleInt32ToInt16Multiplier."""
    m, e = quantize_multiplier_scalar(real)
    return (32767 if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16), e


def hard_swish_params(g, op) -> dict:
    """TFLM HardSwishPrepare: float32 scale arithmetic, int16 fixed-point multipliers."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    hires = np.float32(1.0 / 128.0) * np.float32(ti.scale)
    om, oe = _int16_multiplier(float(np.float32(hires / np.float32(to.scale))))
    rm, re = _int16_multiplier(float(np.float32(hires / np.float32(3.0 / 32768.0))))
    return dict(input_zero_point=ti.zero_point, output_zero_point=to.zero_point,
                reluish_multiplier_fixedpoint_int16=rm, reluish_multiplier_exponent=re,
                output_multiplier_fixedpoint_int16=om, output_multiplier_exponent=oe)


def requant_params(ti, to) -> dict:
    m, s = quantize_multiplier_scalar(float(ti.scale) / float(to.scale))
    return dict(input_zp=ti.zero_point, output_zp=to.zero_point, multiplier=m, shift=s)
