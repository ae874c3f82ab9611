"""Quantisation parameters of each kernel call, computed in Python exactly as
TFLite Micro's Prepare functions do, so the firmware never computes a scale.

The fixed-point primitives (QuantizeMultiplier, activation ranges) come from
buildtool.refops, the reference executor's implementation, so both share one
implementation.
"""

from __future__ import annotations

from ..refops import prepare
from ..refops.elementwise import add_params, mul_params  # noqa: F401 (re-exported for model_c)
from ..refops.activation import q4_input_params as logistic_params  # noqa: F401 (re-exported for model_c)
from ..refops.softmax import softmax_params
from ..refops.leaky_relu import leaky_relu_params  # noqa: F401 (re-exported for model_c)
from ..refops.sub import sub_params  # noqa: F401 (re-exported for model_c)


act_range = prepare.act_range


def conv_multipliers(g, op) -> tuple:
    """Per-output-channel (multipliers, shifts) lists; a per-tensor filter scale is replicated."""
    p = prepare.PREPARE[op.opcode](g, op)
    return list(p.multipliers), list(p.shifts)


def fc_multipliers(g, op) -> tuple:
    """(multipliers, shifts, per_channel) of FULLY_CONNECTED."""
    p = prepare.fully_connected(g, op)
    return list(p.multipliers), list(p.shifts), p.per_channel


def mean_params(ti, to, num: int) -> dict:
    """MEAN: bt_mean_params' quantisation fields (refops.prepare.mean_quant)."""
    return prepare.fields(prepare.mean_quant(ti, to, num))


def softmax_quant(g, op) -> dict:
    mult, shift, diff_min = softmax_params(op.options.get("beta", 1.0), g.tensors[op.inputs[0]].scale)
    return dict(input_multiplier=mult, input_left_shift=shift, diff_min=diff_min)


def hard_swish_params(g, op) -> dict:
    """bt_hard_swish_params' fields but n (refops.prepare.hard_swish)."""
    return prepare.fields(prepare.hard_swish(g, op))


def requant_params(ti, to) -> dict:
    """bt_requant_params' fields but n (refops.prepare.requant)."""
    return prepare.fields(prepare.requant(ti, to))
