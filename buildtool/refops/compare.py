"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL on int8 (TFLM comparisons.cc, *WithScaling):
each input's codes are rescaled to a common grid, v = MBQM((x - zero point) << 8, scale), multiplier and
shift from the input's own scale (QuantizeMultiplierSmallerThanOneExp: TFLM checks scale < 1), and the
two are compared; the output is bool, broadcast over up to 4 dimensions.

The parameter function is shared with code generation (codegen/extra_c.py).
"""

from __future__ import annotations

import numpy as np

from .activation import operands
from .quant_math import quantize_multiplier_scalar, mbqm

LEFT_SHIFT = 8  # TFLM's kLeftShift
# The opcodes in the C kernel's order (bt_compare_params.kind).
COMPARISONS = ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")
_FN = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


def compare_params(g, op) -> dict:
    ta, tb = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]]
    ma, sa = quantize_multiplier_scalar(float(np.float32(ta.scale)))
    mb, sb = quantize_multiplier_scalar(float(np.float32(tb.scale)))
    return dict(kind=COMPARISONS.index(op.opcode), left_shift=LEFT_SHIFT, input1_offset=-ta.zero_point,
                input1_multiplier=ma, input1_shift=sa, input2_offset=-tb.zero_point, input2_multiplier=mb,
                input2_shift=sb)


def compare(g, op, ins, outs) -> None:
    a, b = operands(g, op, ins)
    if g.tensors[op.inputs[0]].dtype == "int32":  # TFLM's int32 path: the values compared as they are
        outs[0][...] = _FN[COMPARISONS.index(op.opcode)](a, b).reshape(outs[0].shape)
        return
    p = compare_params(g, op)
    va = mbqm((a.astype(np.int64) + p["input1_offset"]) << LEFT_SHIFT, p["input1_multiplier"], p["input1_shift"])
    vb = mbqm((b.astype(np.int64) + p["input2_offset"]) << LEFT_SHIFT, p["input2_multiplier"], p["input2_shift"])
    outs[0][...] = _FN[p["kind"]](va, vb).reshape(outs[0].shape)
