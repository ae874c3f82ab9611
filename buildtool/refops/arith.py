"""SQUARED_DIFFERENCE (int8, int16), ADD_N (int8) and ZEROS_LIKE (int8): TFLM's squared_difference.cc,
add_n.cc (reference_ops::AddN) and zeros_like.cc semantics.

SQUARED_DIFFERENCE: each operand x is rescaled to twice the larger input scale, v = MBQM((x - zero point)
<< left_shift, scale / (2 max scale)) (left_shift 7 on int8, 0 on int16), and out = clamp(MBQM((v1 - v2)^2,
(2 max scale)^2 / (2^(2 left_shift) output scale)) + output zero point), the type's range; broadcast over up
to 4 dimensions.

ADD_N: every input has one quantisation (TFLM requires it); each is rescaled by 1/2 with ADD's 20 bits of
headroom and summed, starting, as TFLM's reference AddN does, from the input offset itself rescaled
(x = input offset, "x = 0"): out = clamp(MBQM(s(-zp) + sum_j s(x_j - zp), 2 scale / (2^20 output scale)) +
output zero point). The extra s(-zp) term is TFLM's, kept for bit-exactness.

ZEROS_LIKE: raw code 0 (not the zero point), whatever the quantisation.

CUMSUM (int8, cumsum.cc and reference_ops::CumSum): ADD_N's rescaling of one input (ADD_N_SHIFT, 1/2, the
accumulator starting from the rescaled input offset); along the constant axis, forward or reversed, each output
the running sum (exclusive: before adding its own input), requantised. The int32 running sum wraps as TFLM's
does in practice (two's complement) on long axes.

The parameter functions are shared with code generation (codegen/extra_c.py).
"""

from __future__ import annotations

import numpy as np

from .activation import operands
from .quant_math import QRANGE, mbqm, quantize_multiplier_scalar, wrap32

ADD_N_SHIFT = 20  # TFLM's kAddNIntegerShift


def squared_difference_params(g, op) -> dict:
    """TFLM SquaredDifferencePrepare / PrepareQuantized (double arithmetic on the float32 scales)."""
    t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    s1, s2, so = (np.float32(t.scale) for t in (t1, t2, to))
    left_shift = 0 if to.dtype == "int16" else 7
    twice_max = 2.0 * float(max(s1, s2))
    m1, sh1 = quantize_multiplier_scalar(float(s1) / twice_max)
    m2, sh2 = quantize_multiplier_scalar(float(s2) / twice_max)
    mo, sho = quantize_multiplier_scalar(twice_max * twice_max / float(np.float32((1 << 2 * left_shift) * so)))
    return dict(input1_offset=-t1.zero_point, input2_offset=-t2.zero_point, output_offset=to.zero_point,
                left_shift=left_shift, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
                input2_shift=sh2, output_multiplier=mo, output_shift=sho)


def squared_difference(g, op, ins, outs) -> None:
    p = squared_difference_params(g, op)
    a, b = operands(g, op, ins)
    va = mbqm((a.astype(np.int64) + p["input1_offset"]) << p["left_shift"], p["input1_multiplier"],
              p["input1_shift"])
    vb = mbqm((b.astype(np.int64) + p["input2_offset"]) << p["left_shift"], p["input2_multiplier"],
              p["input2_shift"])
    d = va - vb
    raw = mbqm(d * d, p["output_multiplier"], p["output_shift"]) + p["output_offset"]
    lo, hi = QRANGE[outs[0].dtype.name]
    outs[0][...] = np.clip(raw, lo, hi).astype(outs[0].dtype).reshape(outs[0].shape)


def add_n_params(g, op) -> dict:
    """TFLM add_n.cc CalculateOpData (int8)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    si, so = float(np.float32(ti.scale)), float(np.float32(to.scale))
    mi, shi = quantize_multiplier_scalar(si / (2 * si))
    mo, sho = quantize_multiplier_scalar(2 * si / ((1 << ADD_N_SHIFT) * so))
    return dict(input_offset=-ti.zero_point, output_offset=to.zero_point, left_shift=ADD_N_SHIFT,
                input_multiplier=mi, input_shift=shi, output_multiplier=mo, output_shift=sho)


def add_n(g, op, ins, outs) -> None:
    p = add_n_params(g, op)

    def scaled(x):
        return mbqm((np.asarray(x, np.int64) + p["input_offset"]) << p["left_shift"], p["input_multiplier"],
                    p["input_shift"])

    acc = scaled(np.zeros(outs[0].shape, np.int64))  # TFLM starts from the rescaled input offset
    for x in operands(g, op, ins):
        acc = acc + scaled(x.reshape(outs[0].shape))
    raw = mbqm(acc, p["output_multiplier"], p["output_shift"]) + p["output_offset"]
    outs[0][...] = np.clip(raw, -128, 127).astype(np.int8)


def zeros_like(g, op, ins, outs) -> None:
    outs[0][...] = 0


def cumsum_geometry(g, op) -> dict:
    """The input as [before][depth][after] around the constant axis, and the options."""
    shape = g.tensors[op.inputs[0]].shape
    a = int(np.asarray(g.tensors[op.inputs[1]].data).reshape(-1)[0]) % len(shape)
    return dict(before=int(np.prod(shape[:a], dtype=np.int64)), depth=int(shape[a]),
                after=int(np.prod(shape[a + 1:], dtype=np.int64)), exclusive=int(bool(op.options.get("exclusive"))),
                reverse=int(bool(op.options.get("reverse"))))


def cumsum(g, op, ins, outs) -> None:
    p, q = add_n_params(g, op), cumsum_geometry(g, op)

    def scaled(x):
        return mbqm((np.asarray(x, np.int64) + p["input_offset"]) << p["left_shift"], p["input_multiplier"],
                    p["input_shift"])

    x = scaled(ins[0].reshape(q["before"], q["depth"], q["after"]))
    if q["reverse"]:
        x = x[:, ::-1]
    acc = scaled(np.zeros((q["before"], 1, q["after"]), np.int64))  # TFLM starts from the rescaled offset
    run = wrap32(acc + np.cumsum(x, axis=1))
    if q["exclusive"]:
        run = np.concatenate([acc, run[:, :-1]], axis=1)
    if q["reverse"]:
        run = run[:, ::-1]
    raw = mbqm(run, p["output_multiplier"], p["output_shift"]) + p["output_offset"]
    outs[0][...] = np.clip(raw, -128, 127).astype(np.int8).reshape(outs[0].shape)
