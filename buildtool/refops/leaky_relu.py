"""LEAKY_RELU, int8 and int16 (TFLM reference_ops::QuantizeLeakyRelu)."""

from __future__ import annotations

import numpy as np

from .quant_math import QRANGE, mbqm, quantize_multiplier_scalar


def leaky_relu_params(g, op) -> dict:
    """TFLM LeakyReluPrepare: both multipliers from double scale arithmetic (shared with codegen)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    si, so, alpha = float(ti.scale), float(to.scale), float(np.float32(op.options.get("alpha", 0.0)))
    ma, sa = quantize_multiplier_scalar(si * alpha / so)
    mi, s_i = quantize_multiplier_scalar(si / so)
    return dict(input_offset=ti.zero_point, output_offset=to.zero_point, output_multiplier_alpha=ma,
                output_shift_alpha=sa, output_multiplier_identity=mi, output_shift_identity=s_i)


def signed_mbqm(x, multiplier: int, shift: int):
    """What TFLM computes for a negative multiplier (negative alpha): the product with |multiplier|,
    negated, so ties round as for a positive multiplier (found against TFLM: -0.5 * -3 gives 1)."""
    if multiplier >= 0:
        return mbqm(x, multiplier, shift)
    return -mbqm(x, min(-multiplier, (1 << 31) - 1), shift)


def leaky_relu(g, op, ins, outs) -> None:
    p = leaky_relu_params(g, op)
    x = ins[0].astype(np.int64) - p["input_offset"]
    y = np.where(x >= 0, signed_mbqm(x, p["output_multiplier_identity"], p["output_shift_identity"]),
                 signed_mbqm(x, p["output_multiplier_alpha"], p["output_shift_alpha"])) + p["output_offset"]
    qmin, qmax = QRANGE[outs[0].dtype.name]
    outs[0][...] = np.clip(y, qmin, qmax).astype(outs[0].dtype).reshape(outs[0].shape)
