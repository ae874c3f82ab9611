"""Checks and MAC counts of the activation and layout operators (see ops.py for options).

RELU, RELU6, PRELU, MAXIMUM, MINIMUM, TRANSPOSE, SQUEEZE, EXPAND_DIMS, DEPTH_TO_SPACE, SPACE_TO_DEPTH, the
comparisons (EQUAL .. GREATER_EQUAL) and the resizes' MAC counts. Named by opdefs.OPDEFS (the table per operator); use them through
buildtool.model.ops. The checks that need a kernel's own arithmetic live with the kernel:
LOGISTIC/TANH (int16 table parameters) in refops.activation, the resizes (TFLM's interpolation taps)
in refops.resize.

TFLM facts (checked against it, tests/test_ops_extra.py): MAXIMUM and MINIMUM compare raw codes
and accept any quantisation (converters give inputs and output one); RELU6 clamps raw codes in the
input's quantisation and TANH writes scale 1/128, zero point 0, whatever the output tensor says;
the resizes, transposes and reshapes copy or interpolate raw codes. Only PRELU requantises.
"""

from __future__ import annotations

import numpy as np

from .ops import _check_mean, _check_same, _const, _need, _shape

MAX_TRANSPOSE_RANK = 5  # TFLM's reference Transpose


def _one_input(g, op):
    _need(len(op.inputs) >= 1 and op.inputs[0] >= 0, op, "needs an input")


def _check_softmax(g, op):
    """int16 -> int16 SOFTMAX (TFLM's table path) writes scale 2^-15, zero point 0 (int8 -> int16 is a
    model edge: stateful.check_edge)."""
    _check_same(g, op)
    to = g.tensors[op.outputs[0]]
    if to.dtype == "int16":
        _need(abs(float(to.scale) - 2.0 ** -15) <= 1e-3 * 2.0 ** -15, op,
              f"int16 output scale {float(to.scale):g} must be 2^-15 (1/32768), as TFLM's int16 SOFTMAX writes; "
              f"re-quantise the model")


def _check_prelu(g, op):
    _need(len(op.inputs) == 2 and op.inputs[0] >= 0, op, "needs input and alpha")
    alpha = _const(g, op, 1, "alpha")
    ta = g.tensors[op.inputs[1]]
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(ta.dtype == "int8" and ta.quant is not None and len(ta.quant.scale) == 1, op,
          "alpha must be int8 with per-tensor quantisation")
    try:
        fits = alpha.ndim <= len(inp) and tuple(np.broadcast_shapes(inp, alpha.shape)) == inp == out
    except ValueError:
        fits = False
    _need(fits, op, f"alpha shape {list(alpha.shape)} must broadcast to the input shape {list(inp)} "
          f"(= output shape {list(out)})")


def _check_transpose(g, op):
    _one_input(g, op)
    perm = [int(p) for p in _const(g, op, 1, "perm").reshape(-1)]
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(len(inp) <= MAX_TRANSPOSE_RANK, op, f"rank {len(inp)} is above the {MAX_TRANSPOSE_RANK} supported")
    _need(sorted(perm) == list(range(len(inp))), op, f"perm {perm} is not a permutation of the {len(inp)} axes")
    _need(tuple(inp[p] for p in perm) == out, op, f"output shape {list(out)} != input {list(inp)} permuted by {perm}")


def _check_squeeze(g, op):
    _one_input(g, op)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    dims = [int(d) for d in op.options.get("squeeze_dims", ())]
    _need(all(-len(inp) <= d < len(inp) for d in dims), op, f"squeeze_dims {dims} out of range for rank {len(inp)}")
    drop = {d % len(inp) for d in dims} if dims else {d for d, n in enumerate(inp) if n == 1}
    _need(all(inp[d] == 1 for d in drop), op, f"squeeze_dims {sorted(drop)} name dimensions that are not 1")
    want = tuple(n for d, n in enumerate(inp) if d not in drop)
    _need(out == want, op, f"output shape {list(out)} != squeezed input {list(want)}")


def _check_expand_dims(g, op):
    _one_input(g, op)
    ax = _const(g, op, 1, "axis").reshape(-1)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(ax.size == 1 and -len(inp) - 1 <= int(ax[0]) <= len(inp), op, "axis must be one value in [-rank-1, rank]")
    a = int(ax[0]) % (len(inp) + 1)
    want = inp[:a] + (1,) + inp[a:]
    _need(out == want, op, f"output shape {list(out)} != input with a 1 at axis {a}: {list(want)}")


def _check_space_depth(g, op):
    _one_input(g, op)
    b = op.options.get("block_size", 0)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(len(inp) == 4 and inp[0] == 1, op, "needs a [1,H,W,C] input")
    _need(isinstance(b, (int, np.integer)) and 1 <= b <= 64, op, f"block_size {b} out of range")
    if op.opcode == "DEPTH_TO_SPACE":
        _need(inp[3] % (b * b) == 0, op, f"input channels {inp[3]} are not a multiple of block_size^2 = {b * b}")
        want = (1, inp[1] * b, inp[2] * b, inp[3] // (b * b))
    else:
        _need(inp[1] % b == 0 and inp[2] % b == 0, op, f"input size {inp[1]}x{inp[2]} is not a multiple of "
              f"block_size {b}")
        want = (1, inp[1] // b, inp[2] // b, inp[3] * b * b)
    _need(out == want, op, f"output shape {list(out)} != expected {list(want)}")


def _check_compare(g, op):
    """EQUAL .. GREATER_EQUAL: two int8 inputs (either may be constant) broadcast to the bool output, at
    most 4-D; TFLM rescales each input by its own scale, which it requires below 1."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs two inputs")
    a, b, out = _shape(g, op.inputs[0]), _shape(g, op.inputs[1]), _shape(g, op.outputs[0])
    try:
        bs = tuple(np.broadcast_shapes(a, b))
    except ValueError:
        bs = None
    _need(bs == out, op, f"input shapes {list(a)} and {list(b)} do not broadcast to {list(out)}")
    _need(len(out) <= 4, op, f"rank {len(out)} is above the 4 TFLite Micro compares")
    for i in op.inputs:
        t = g.tensors[i]
        _need(t.dtype == "int8" and t.quant is not None, op, f"input tensor {i} is {t.dtype}; comparisons take int8")
        _need(float(np.float32(t.scale)) < 1.0, op, f"input tensor {i} has scale {t.scale:g}; TFLite Micro "
              f"compares inputs with scales below 1 only")


def _broadcast_to_output(g, op, inputs) -> None:
    shapes = [_shape(g, i) for i in inputs]
    out = _shape(g, op.outputs[0])
    try:
        bs = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        bs = None
    _need(bs == out, op, f"input shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast to {list(out)}")
    _need(len(out) <= 4, op, f"rank {len(out)} is above the 4 supported")


def _check_logical(g, op):
    """LOGICAL_AND / LOGICAL_OR: two bool inputs broadcast to the bool output."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs two inputs")
    _broadcast_to_output(g, op, op.inputs)
    for i in op.inputs:
        _need(g.tensors[i].dtype == "bool", op, f"input tensor {i} is {g.tensors[i].dtype}; it must be bool")


def _check_select(g, op):
    """SELECT_V2 (condition, x, y): a bool condition, x, y and the output of one type; all broadcast."""
    _need(len(op.inputs) == 3 and min(op.inputs) >= 0, op, "needs condition, x and y")
    c, x, y = (g.tensors[i] for i in op.inputs)
    out = g.tensors[op.outputs[0]]
    _need(c.dtype == "bool", op, f"condition (input 0) is {c.dtype}; it must be bool")
    _need(x.dtype == y.dtype == out.dtype, op, f"x, y and the output must share one type ({x.dtype}, {y.dtype}, "
                                               f"{out.dtype})")
    _broadcast_to_output(g, op, op.inputs)


def _check_reduce_minmax(g, op):
    """REDUCE_MAX / REDUCE_MIN: MEAN's axes and shapes; TFLM requires the output quantisation to be the input's."""
    _check_mean(g, op)
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    _need(np.float32(ti.scale) == np.float32(to.scale) and ti.zero_point == to.zero_point, op,
          f"output quantisation ({to.scale:g}, {to.zero_point}) must be the input's ({ti.scale:g}, {ti.zero_point}), "
          f"as TFLite Micro requires")


def bilinear_macs(g, op) -> int:
    """Bilinear resize weighs 4 input pixels per output value (the other operators here only move,
    compare or rescale values: 0, like ADD and MUL)."""
    return 4 * g.tensors[op.outputs[0]].num_elements

