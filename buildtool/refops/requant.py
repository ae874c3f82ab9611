"""Output requantisation shared by conv, depthwise and fully-connected kernels."""

from __future__ import annotations

import numpy as np

from .quant_math import QRANGE, activation_range, mbqm, mbqm64, quantize_multiplier


def channel_multipliers(g, op) -> tuple:
    """Per-output-channel (multiplier, shift) from input, filter and output scales.

    effective = double(input_scale) * double(filter_scale[c]) / double(output_scale), as in
    TFLM's PopulateConvolutionQuantizationParams (a per-tensor filter scale broadcasts).
    """
    x = op.inputs[2] if op.opcode == "TRANSPOSE_CONV" else op.inputs[0]
    inp, flt, out = g.tensors[x], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    fs = flt.quant.scale.astype(np.float64)
    eff = (np.float64(inp.quant.scale[0]) * fs) / np.float64(out.quant.scale[0])
    return quantize_multiplier(eff)


def bias_of(g, op, n: int) -> np.ndarray:
    pos = 3 if op.opcode == "TRANSPOSE_CONV" else 2
    if len(op.inputs) > pos and op.inputs[pos] >= 0:
        return g.tensors[op.inputs[pos]].data.reshape(-1).astype(np.int64)
    return np.zeros(n, dtype=np.int64)


def wide_accumulator(g, op) -> bool:
    """16x8 kernels with an int64 bias or none accumulate in int64 and requantise with the int64
    MultiplyByQuantizedMultiplier (TFLM's ConvPerChannel<int64_t>); int8 ones, and int16 with an
    int32 bias, use the int32 one (checked against TFLM)."""
    if g.tensors[op.outputs[0]].dtype != "int16":
        return False
    pos = 3 if op.opcode == "TRANSPOSE_CONV" else 2
    has_bias = len(op.inputs) > pos and op.inputs[pos] >= 0
    return op.opcode == "TRANSPOSE_CONV" or not has_bias or g.tensors[op.inputs[pos]].dtype == "int64"


def requantize(acc, mult, shift, g, op) -> np.ndarray:
    """acc (int64, channels last) -> int8/int16 with the op's output zero point and fused activation."""
    out = g.tensors[op.outputs[0]]
    zp = out.zero_point
    qmin, qmax = QRANGE[out.dtype]
    lo, hi = activation_range(op.options.get("activation", "NONE"), out.scale, zp, qmin, qmax)
    r = (mbqm64(acc, mult, shift) if wide_accumulator(g, op) else mbqm(acc, mult, shift)) + zp
    return np.clip(r, lo, hi).astype(out.dtype)
