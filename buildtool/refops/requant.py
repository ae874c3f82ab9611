"""Output requantisation shared by conv, depthwise and fully-connected kernels."""

from __future__ import annotations

import numpy as np

from .quant_math import activation_range, mbqm, quantize_multiplier


def channel_multipliers(g, op) -> tuple:
    """Per-output-channel (multiplier, shift) from input, filter and output scales.

    effective = double(input_scale) * double(filter_scale[c]) / double(output_scale), as in
    TFLM's PopulateConvolutionQuantizationParams (a per-tensor filter scale broadcasts).
    """
    inp, flt, out = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    fs = flt.quant.scale.astype(np.float64)
    eff = (np.float64(inp.quant.scale[0]) * fs) / np.float64(out.quant.scale[0])
    return quantize_multiplier(eff)


def bias_of(g, op, n: int) -> np.ndarray:
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        return g.tensors[op.inputs[2]].data.reshape(-1).astype(np.int64)
    return np.zeros(n, dtype=np.int64)


def requantize(acc, mult, shift, g, op) -> np.ndarray:
    """acc (int64, channels last) -> int8 with the op's output zero point and fused activation."""
    out = g.tensors[op.outputs[0]]
    zp = out.zero_point
    lo, hi = activation_range(op.options.get("activation", "NONE"), out.scale, zp)
    r = mbqm(acc, mult, shift) + zp
    return np.clip(r, lo, hi).astype(np.int8)
