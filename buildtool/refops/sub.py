"""SUB, int8 and int16 (TFLM sub: ADD's rescaling and parameters, the second operand subtracted)."""

from __future__ import annotations

import numpy as np

from .elementwise import add_params
from .quant_math import rdbpot, srdhm, wrap32


def sub_params(g, op) -> dict:
    """TFLM CalculateOpDataSub: ADD's parameters (double arithmetic; checked against TFLM)."""
    return add_params(g, op)


def sub(g, op, ins, outs) -> None:
    p = sub_params(g, op)
    a = ins[0].astype(np.int64) + p["input1_offset"]
    b = ins[1].astype(np.int64) + p["input2_offset"]
    sa = rdbpot(srdhm(wrap32(a << p["left_shift"]), p["input1_multiplier"]), -p["input1_shift"])
    sb = rdbpot(srdhm(wrap32(b << p["left_shift"]), p["input2_multiplier"]), -p["input2_shift"])
    raw = rdbpot(srdhm(wrap32(sa - sb), p["output_multiplier"]), -p["output_shift"]) + p["output_offset"]
    outs[0][...] = np.clip(raw, p["act_min"], p["act_max"]).astype(outs[0].dtype).reshape(outs[0].shape)
