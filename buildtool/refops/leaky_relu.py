"""LEAKY_RELU, int8 and int16 (TFLM reference_ops::QuantizeLeakyRelu)."""

from __future__ import annotations

import numpy as np

from .quant_math import QRANGE, mbqm, quantize_multiplier_scalar


def leaky_relu_params(g, op) -> dict:
    """TFLM LeakyReluPrepare: both multipliers from float32 scale arithmetic (shared with codegen)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    si, so, alpha = np.float32(ti.scale), np.float32(to.scale), np.float32(op.options.get("alpha", 0.0))
    ma, sa = quantize_multiplier_scalar(float(np.float32(np.float32(si * alpha) / so)))
    mi, s_i = quantize_multiplier_scalar(float(np.float32(si / so)))
    return dict(input_offset=ti.zero_point, output_offset=to.zero_point, output_multiplier_alpha=ma,
                output_shift_alpha=sa, output_multiplier_identity=mi, output_shift_identity=s_i)


def leaky_relu(g, op, ins, outs) -> None:
    p = leaky_relu_params(g, op)
    x = ins[0].astype(np.int64) - p["input_offset"]
    y = np.where(x >= 0, mbqm(x, p["output_multiplier_identity"], p["output_shift_identity"]),
                 mbqm(x, p["output_multiplier_alpha"], p["output_shift_alpha"])) + p["output_offset"]
    qmin, qmax = QRANGE[outs[0].dtype.name]
    outs[0][...] = np.clip(y, qmin, qmax).astype(outs[0].dtype).reshape(outs[0].shape)
