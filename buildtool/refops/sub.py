"""SUB, int8 and int16 (TFLM sub: ADD's rescaling with the second operand negated).

TFLM prepares SUB's multipliers in float32 arithmetic (ADD's in double), so the parameters are
computed here rather than shared with ADD; the element loop is ADD's.
"""

from __future__ import annotations

import numpy as np

from .quant_math import QRANGE, activation_range, quantize_multiplier_scalar, rdbpot, srdhm, wrap32


def sub_params(g, op) -> dict:
    """TFLM CalculateOpDataSub (shared with code generation)."""
    t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    s1, s2, so = np.float32(t1.scale), np.float32(t2.scale), np.float32(to.scale)
    left_shift = 15 if to.dtype == "int16" else 20
    twice_max = np.float32(2) * max(s1, s2)
    m1, sh1 = quantize_multiplier_scalar(float(np.float32(s1 / twice_max)))
    m2, sh2 = quantize_multiplier_scalar(float(np.float32(s2 / twice_max)))
    mo, sho = quantize_multiplier_scalar(float(np.float32(twice_max / (np.float32(1 << left_shift) * so))))
    lo, hi = activation_range(op.options.get("activation", "NONE"), to.scale, to.zero_point, *QRANGE[to.dtype])
    return dict(input1_offset=-t1.zero_point, input2_offset=-t2.zero_point, output_offset=to.zero_point,
                left_shift=left_shift, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
                input2_shift=sh2, output_multiplier=mo, output_shift=sho, act_min=lo, act_max=hi)


def sub(g, op, ins, outs) -> None:
    p = sub_params(g, op)
    a = ins[0].astype(np.int64) + p["input1_offset"]
    b = ins[1].astype(np.int64) + p["input2_offset"]
    sa = rdbpot(srdhm(wrap32(a << p["left_shift"]), p["input1_multiplier"]), -p["input1_shift"])
    sb = rdbpot(srdhm(wrap32(b << p["left_shift"]), p["input2_multiplier"]), -p["input2_shift"])
    raw = rdbpot(srdhm(wrap32(sa - sb), p["output_multiplier"]), -p["output_shift"]) + p["output_offset"]
    outs[0][...] = np.clip(raw, p["act_min"], p["act_max"]).astype(outs[0].dtype).reshape(outs[0].shape)
