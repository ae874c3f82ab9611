"""ELU (int8), L2_NORMALIZATION (int8), SHAPE and GATHER_ND (int8, constant indices): TFLM's semantics.

ELU (elu.cc): a 256-entry table made in float32 as TFLM's PopulateLookupTable does: d = scale * (code - zero
point), t = exp(d) - 1 for d < 0 else d, out = clamp(round(t * (1 / output scale)) + output zero point). exp
is float32's, the double exponential rounded to float32 (the correctly rounded value).

L2_NORMALIZATION (reference_integer_ops::L2Normalization): per row of the last axis, acc = sum (x - zero
point)^2, (m, s) = GetInvSqrtQuantizedMultiplierExp(acc, -1) (unary.inv_sqrt), out = clamp(MBQM(x - zero point,
m, s + 7), -128, 127): codes of scale 1/128, zero point 0, whatever the output tensor says (TFLM does not read
it). The C kernel computes the inverse square root with the same integer steps.

SHAPE: the input's dimensions as int32. GATHER_ND with constant indices is GATHER over the flattened leading
dimensions (gather_nd_rows: one row per index tuple), so its C call is bt_gather_s8.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ModelError
from .activation import operands
from .quant_math import mbqm, round_half_away
from .unary import inv_sqrt

L2_OUTPUT_SHIFT = 7  # TFLM's kOutputScale: outputs in 1/128


@functools.lru_cache(maxsize=256)
def _elu_table(scale: float, zp: int, out_scale: float, out_zp: int) -> tuple:
    s, inv = np.float32(scale), np.float32(1) / np.float32(out_scale)
    out = []
    for code in range(-128, 128):
        d = np.float32(s * np.float32(code - zp))
        t = np.float32(np.float32(np.exp(np.float64(d))) - np.float32(1)) if d < 0 else d
        r = float(round_half_away(np.float32(t * inv)))
        out.append(int(np.clip(int(np.float32(np.float32(r) + np.float32(out_zp))), -128, 127)))
    return tuple(out)


def elu_table(g, op) -> np.ndarray:
    """int8 ELU's result for each input code -128..127 (index code + 128)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    return np.array(_elu_table(float(np.float32(ti.scale)), ti.zero_point, float(np.float32(to.scale)),
                               to.zero_point), np.int8)


def elu(g, op, ins, outs) -> None:
    outs[0][...] = elu_table(g, op)[ins[0].astype(np.int64) + 128].reshape(outs[0].shape)


def l2_normalization(g, op, ins, outs) -> None:
    zp = g.tensors[op.inputs[0]].zero_point
    depth = ins[0].shape[-1] if ins[0].ndim else 1
    x = ins[0].astype(np.int64).reshape(-1, depth) - zp
    out = np.empty_like(x)
    for r in range(x.shape[0]):
        m, s = inv_sqrt(int((x[r] * x[r]).sum()))
        out[r] = mbqm(x[r], m, s + L2_OUTPUT_SHIFT)
    outs[0][...] = np.clip(out, -128, 127).astype(np.int8).reshape(outs[0].shape)


def shape(g, op, ins, outs) -> None:
    outs[0][...] = np.array(g.tensors[op.inputs[0]].shape, np.int32).reshape(outs[0].shape)


def gather_nd_strides(g, op) -> tuple:
    """(rows, row elements, the row stride of each index position) of GATHER_ND's params: an index tuple t picks
    row sum(t[j] * stride[j]) of the params as [rows][row elements] (TFLM's from_pos / slice_size)."""
    params = tuple(int(d) for d in g.tensors[op.inputs[0]].shape)
    nd = int(g.tensors[op.inputs[1]].shape[-1])
    strides = [int(np.prod(params[j + 1:nd], dtype=np.int64)) for j in range(nd)]
    return int(np.prod(params[:nd], dtype=np.int64)), int(np.prod(params[nd:], dtype=np.int64)), strides


def gather_nd_rows(g, op, idx=None) -> tuple:
    """(rows, row elements, the flat row of each index tuple) of GATHER_ND's params and indices (idx: computed
    indices; None: the constant ones). A row outside [0, rows) is kept as it is (the caller refuses it)."""
    rows, inner, strides = gather_nd_strides(g, op)
    idx = np.asarray(g.tensors[op.inputs[1]].data if idx is None else idx, np.int64)
    flat = idx.reshape(-1, len(strides)) @ np.array(strides, np.int64)
    return rows, inner, [int(v) for v in np.atleast_1d(flat)]


def gather_nd(g, op, ins, outs) -> None:
    """TFLM gather_nd.cc: an index tuple whose row lies outside the params (checked on the flat row, as TFLM does:
    one index may pass its dimension when the row stays inside) fails the invocation."""
    params, idx = operands(g, op, ins)
    rows, inner, flat = gather_nd_rows(g, op, idx)
    bad = [r for r in flat if not 0 <= r < rows]
    if bad:
        raise ModelError(f"operator {op.index} (GATHER_ND): an index tuple picks row {bad[0]} of {rows} as the model "
                         f"runs; TFLite Micro fails the invocation there (and the firmware's model_invoke returns 1)")
    outs[0][...] = np.asarray(params).reshape(rows, inner)[flat].reshape(outs[0].shape)
