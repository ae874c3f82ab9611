"""Checks and MAC counts of the activation and layout operators (see ops.py for options).

RELU, RELU6, PRELU, MAXIMUM, MINIMUM, TRANSPOSE, SQUEEZE, EXPAND_DIMS, DEPTH_TO_SPACE, SPACE_TO_DEPTH, the
comparisons (EQUAL .. GREATER_EQUAL), TFLite Micro's further int8/int16 operators (issue 33: SQUARED_DIFFERENCE,
ADD_N, ARG_MAX/MIN, GATHER, GATHER_ND, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, REVERSE_V2,
BROADCAST_TO, BATCH_MATMUL, L2_NORMALIZATION, SHAPE, CUMSUM, EMBEDDING_LOOKUP, CAST, LOG_SOFTMAX, DIV, ...) and the
resizes' and BATCH_MATMUL's MAC counts. Named by opdefs.OPDEFS (the table per operator); use them through
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

from .ops import _check_mean, _check_pad, _check_same, _const, _fits_4d_broadcast, _need, _shape

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
    _fits_4d_broadcast(op, out, (inp, alpha.shape))


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
    if op.opcode == "LESS" and all(g.tensors[i].dtype == "int32" for i in op.inputs):
        return  # TFLM's int32 path compares the values (TensorFlow's WHILE loop counters)
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


def _same_type(g, op, tensors) -> None:
    kinds = {g.tensors[i].dtype for i in tensors}
    _need(len(kinds) == 1, op, f"mixes types {sorted(kinds)}; inputs and outputs must share one")


def _check_slice_v1(g, op):
    """SLICE (input, begin, size): constant int32 begin and size, one entry per dimension (size -1: to the end)."""
    _one_input(g, op)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    begin, size = (_const(g, op, k, w).reshape(-1).astype(int).tolist() for k, w in ((1, "begin"), (2, "size")))
    _need(len(begin) == len(size) == len(inp) <= 4, op, f"begin and size need one entry per dimension of the "
                                                         f"input {list(inp)} (at most 4)")
    want = []
    for b, s, n in zip(begin, size, inp):
        e = n if s < 0 else b + s
        _need(0 <= b <= e <= n, op, f"slice [{b}, {e}) is outside a dimension of {n}")
        want.append(e - b)
    _need(out == tuple(want), op, f"output shape {list(out)} != sliced {want}")


def _check_padv2(g, op):
    """PADV2: PAD's paddings, and a one-value constant on the output's quantisation (TFLM requires it)."""
    _check_pad(g, op)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        v = _const(g, op, 2, "constant_values")
        tv, to = g.tensors[op.inputs[2]], g.tensors[op.outputs[0]]
        _need(v.size == 1 and tv.dtype == to.dtype, op, f"constant_values must be one {to.dtype} value")
        _need(tv.quant is not None and np.float32(tv.scale) == np.float32(to.scale)
              and tv.zero_point == to.zero_point, op, "constant_values must have the output's quantisation, as "
                                                      "TFLite Micro requires")


def _check_split_v(g, op):
    """SPLIT_V (input, size_splits, axis): constant sizes (one -1 takes the rest) along a constant axis."""
    _one_input(g, op)
    inp = _shape(g, op.inputs[0])
    sizes = _const(g, op, 1, "size_splits").reshape(-1).astype(int).tolist()
    axis = int(_const(g, op, 2, "axis").reshape(-1)[0])
    _need(-len(inp) <= axis < len(inp), op, f"axis {axis} out of range")
    axis %= len(inp)
    _need(len(sizes) == len(op.outputs) and sizes.count(-1) <= 1, op,
          f"{len(sizes)} sizes for {len(op.outputs)} outputs (one -1 at most)")
    if -1 in sizes:
        sizes[sizes.index(-1)] = inp[axis] - sum(s for s in sizes if s != -1)
    _need(all(s >= 0 for s in sizes) and sum(sizes) == inp[axis], op,
          f"sizes {sizes} do not add up to dimension {inp[axis]}")
    for o, n in zip(op.outputs, sizes):
        want = inp[:axis] + (n,) + inp[axis + 1:]
        _need(_shape(g, o) == want, op, f"output shape {list(_shape(g, o))} != {list(want)}")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_pack(g, op):
    """PACK: values_count inputs of one shape stacked on a new axis."""
    out = _shape(g, op.outputs[0])
    n = op.options.get("values_count", len(op.inputs))
    _need(n == len(op.inputs) >= 1, op, f"values_count {n} != {len(op.inputs)} inputs")
    axis = op.options.get("axis", 0)
    _need(-len(out) <= axis < len(out), op, f"axis {axis} out of range")
    axis %= len(out)
    shape = _shape(g, op.inputs[0])
    _need(all(_shape(g, i) == shape for i in op.inputs), op, "inputs must share one shape")
    want = shape[:axis] + (n,) + shape[axis:]
    _need(out == want, op, f"output shape {list(out)} != {list(want)}")
    _same_type(g, op, [*op.inputs, *op.outputs])


def _check_unpack(g, op):
    """UNPACK: the input split along axis into num outputs, that axis removed."""
    _one_input(g, op)
    inp = _shape(g, op.inputs[0])
    axis = op.options.get("axis", 0)
    _need(-len(inp) <= axis < len(inp), op, f"axis {axis} out of range")
    axis %= len(inp)
    n = op.options.get("num", len(op.outputs))
    _need(n == len(op.outputs) == inp[axis], op, f"num {n} and {len(op.outputs)} outputs != dimension {inp[axis]}")
    want = inp[:axis] + inp[axis + 1:]
    for o in op.outputs:
        _need(_shape(g, o) == want, op, f"output shape {list(_shape(g, o))} != {list(want)}")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _per_tensor(g, op, i) -> None:
    t = g.tensors[i]
    _need(t.quant is not None and len(t.quant.scale) == 1, op, f"tensor {i} needs one (per-tensor) quantisation")


def _check_squared_difference(g, op):
    """SQUARED_DIFFERENCE: two inputs (either may be constant) of the output's type, broadcast to it (at most
    4-D), each per-tensor quantised."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs two inputs")
    _broadcast_to_output(g, op, op.inputs)
    _same_type(g, op, [*op.inputs, *op.outputs])
    for i in (*op.inputs, *op.outputs):
        _per_tensor(g, op, i)
    for i in op.inputs:
        if g.tensors[i].dtype == "int16":
            _need(g.tensors[i].zero_point == 0, op, f"int16 input tensor {i} needs zero point 0")


ADD_N_MAX_INPUTS = 15  # TFLM sums 2^19-scaled int8 values in int32: 16 terms (15 inputs + its offset) fit


def _check_add_n(g, op):
    """ADD_N: 2..15 inputs of the output's shape, all on one quantisation (TFLM requires it)."""
    _need(2 <= len(op.inputs) <= ADD_N_MAX_INPUTS and min(op.inputs) >= 0, op,
          f"{len(op.inputs)} inputs; TFLite Micro adds 2 or more, and more than {ADD_N_MAX_INPUTS} can overflow "
          f"its int32 sum")
    out = _shape(g, op.outputs[0])
    _need(all(_shape(g, i) == out for i in op.inputs), op, f"inputs must all have the output's shape {list(out)}")
    _same_type(g, op, [*op.inputs, *op.outputs])
    t0 = g.tensors[op.inputs[0]]
    for i in (*op.inputs, *op.outputs):
        _per_tensor(g, op, i)
    _need(all(np.float32(g.tensors[i].scale) == np.float32(t0.scale) and g.tensors[i].zero_point == t0.zero_point
              for i in op.inputs), op, "inputs must share one quantisation, as TFLite Micro requires")


def _axis_const(g, op, pos: int, rank: int, what: str = "axis") -> int:
    v = _const(g, op, pos, what).reshape(-1)
    _need(v.size == 1 and -rank <= int(v[0]) < rank, op, f"{what} must be one value in [-{rank}, {rank})")
    return int(v[0]) % rank


def _check_argminmax(g, op):
    """ARG_MAX / ARG_MIN: a constant axis, the int32 output the input without that axis (TFLM writes int32
    only)."""
    _one_input(g, op)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    a = _axis_const(g, op, 1, len(inp))
    _need(out == inp[:a] + inp[a + 1:], op, f"output shape {list(out)} != input {list(inp)} without axis {a}")


GATHER_ND_MAX = 5  # TFLite Micro: "Index innermost dimension length must not exceed 5"


def _check_gather(g, op):
    """GATHER: int32 indices (batch_dims 0), constant ones inside the axis (computed ones are checked as the model
    runs: TFLite Micro fails the invocation on one outside, and so do our firmware and executor); output = input
    with the axis replaced by the indices' shape."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs params and indices")
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(op.options.get("batch_dims", 0) == 0, op, "batch_dims other than 0 is not supported")
    _need(len(inp) >= 1, op, "params must have at least one dimension")
    a = op.options.get("axis", 0)
    _need(-len(inp) <= a < len(inp), op, f"axis {a} out of range")
    a %= len(inp)
    _need(g.tensors[op.inputs[1]].dtype == "int32", op, "indices must be int32 (TFLite Micro's GATHER takes no other)")
    if g.tensors[op.inputs[1]].is_const:
        idx = _const(g, op, 1, "indices")
        _need(idx.size == 0 or (idx.min() >= 0 and idx.max() < inp[a]), op,
              f"indices must lie in [0, {inp[a]}) (TFLite Micro fails on others)")
    want = inp[:a] + _shape(g, op.inputs[1]) + inp[a + 1:]
    _need(out == want, op, f"output shape {list(out)} != {list(want)}")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_space_batch(g, op):
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: a 3-D or 4-D input, a constant block per spatial dimension (one
    for 3-D) and constant paddings / crops [[top, bottom], [left, right]]."""
    _one_input(g, op)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(len(inp) in (3, 4) and len(out) == len(inp), op, f"needs a 3-D or 4-D input, not {list(inp)}")
    sp = len(inp) - 2
    block = _const(g, op, 1, "block_shape").reshape(-1).astype(int).tolist()
    edges = _const(g, op, 2, "paddings" if op.opcode == "SPACE_TO_BATCH_ND" else "crops").reshape(-1)
    edges = edges.astype(int).tolist()
    _need(len(block) == sp and min(block) >= 1 and len(edges) == 2 * sp and min(edges) >= 0, op,
          f"block_shape needs {sp} values >= 1 and the edges {sp} pairs >= 0")
    nb = int(np.prod(block))
    if op.opcode == "SPACE_TO_BATCH_ND":
        sizes = [inp[1 + k] + edges[2 * k] + edges[2 * k + 1] for k in range(sp)]
        _need(all(n % b == 0 for n, b in zip(sizes, block)), op, f"padded size {sizes} is not a multiple of the "
                                                                 f"block {block}")
        want = (inp[0] * nb, *[n // b for n, b in zip(sizes, block)], inp[-1])
        _need(not any(edges), op, f"paddings {edges}: TFLite Micro pads with an uninitialised value (its "
                                  f"output_offset is never set); pad with a PAD before it instead")
    else:
        _need(inp[0] % nb == 0, op, f"batch {inp[0]} is not a multiple of the block {block}")
        want = (inp[0] // nb, *[inp[1 + k] * block[k] - edges[2 * k] - edges[2 * k + 1] for k in range(sp)], inp[-1])
    _need(out == tuple(want), op, f"output shape {list(out)} != {list(want)}")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_mirror_pad(g, op):
    """MIRROR_PAD: constant paddings per dimension (at most 4), each at most the dimension less one (REFLECT)
    or the dimension (SYMMETRIC)."""
    _one_input(g, op)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(len(inp) <= 4, op, f"rank {len(inp)} is above the 4 supported")
    pads = _const(g, op, 1, "paddings").reshape(-1).astype(int).tolist()
    _need(len(pads) == 2 * len(inp), op, f"paddings need {len(inp)} pairs")
    mode = op.options.get("mode", 0)
    _need(mode in (0, 1), op, f"mode {mode} is neither REFLECT (0) nor SYMMETRIC (1)")
    for k, n in enumerate(inp):
        lim = n - 1 if mode == 0 else n
        _need(0 <= pads[2 * k] <= lim and 0 <= pads[2 * k + 1] <= lim, op,
              f"padding {pads[2 * k:2 * k + 2]} of a dimension of {n} exceeds {lim}")
    want = tuple(n + pads[2 * k] + pads[2 * k + 1] for k, n in enumerate(inp))
    _need(out == want, op, f"output shape {list(out)} != {list(want)}")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_reverse(g, op):
    """REVERSE_V2: constant, distinct, contiguous axes of an input of at most 5 dimensions (TFLM); the output
    keeps the shape."""
    _check_same(g, op)
    rank = len(_shape(g, op.inputs[0]))
    _need(1 <= rank <= 5, op, f"rank {rank} is outside the 1..5 supported")
    axes = _const(g, op, 1, "axis").reshape(-1).astype(int).tolist()
    _need(axes and all(-rank <= a < rank for a in axes), op, f"axes {axes} out of range for rank {rank}")
    norm = sorted({a % rank for a in axes})
    _need(len(norm) == len(axes) and norm == list(range(norm[0], norm[-1] + 1)), op,
          f"axes {axes} are not distinct and contiguous, as TFLite Micro requires")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_broadcast_to(g, op):
    """BROADCAST_TO: a constant shape the input broadcasts to, at most 5 dimensions (TFLM's kMaxDims)."""
    _one_input(g, op)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    shape = tuple(_const(g, op, 1, "shape").reshape(-1).astype(int).tolist())
    _need(len(shape) <= 5, op, f"rank {len(shape)} is above the 5 TFLite Micro broadcasts to")
    try:
        ok = tuple(np.broadcast_shapes(inp, shape)) == shape == out and len(inp) <= len(shape)
    except ValueError:
        ok = False
    _need(ok, op, f"input shape {list(inp)} does not broadcast to {list(shape)} (output {list(out)})")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_batch_matmul(g, op):
    """BATCH_MATMUL: LHS and RHS (either may be constant) of ranks 2..5 and the output's type, per-tensor
    quantised; batch dimensions broadcast; the inner dimensions (after adj_x / adj_y) agree."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs LHS and RHS")
    L, R, out = _shape(g, op.inputs[0]), _shape(g, op.inputs[1]), _shape(g, op.outputs[0])
    _need(2 <= len(L) <= 5 and 2 <= len(R) <= 5, op, f"ranks {len(L)} and {len(R)}: TFLite Micro takes 2 to 5")
    _same_type(g, op, [*op.inputs, *op.outputs])
    for i in (*op.inputs, *op.outputs):
        _per_tensor(g, op, i)
        if g.tensors[i].dtype == "int16":
            _need(g.tensors[i].zero_point == 0, op, f"int16 tensor {i} needs zero point 0")
    rank = max(len(L), len(R))
    L, R = (1,) * (rank - len(L)) + L, (1,) * (rank - len(R)) + R
    try:
        batch = tuple(np.broadcast_shapes(L[:-2], R[:-2]))
    except ValueError:
        batch = None
    _need(batch is not None, op, f"batch dimensions {list(L[:-2])} and {list(R[:-2])} do not broadcast")
    m, k = (L[-1], L[-2]) if op.options.get("adj_x", False) else (L[-2], L[-1])
    k2, n = (R[-1], R[-2]) if op.options.get("adj_y", False) else (R[-2], R[-1])
    _need(k == k2, op, f"inner dimensions {k} and {k2} differ")
    _need(out == batch + (m, n), op, f"output shape {list(out)} != {list(batch + (m, n))}")


def _check_l2_normalization(g, op):
    """L2_NORMALIZATION: at most 4-D, no fused activation (TFLM); the output codes are 1/128, zero point 0."""
    _check_same(g, op)
    _need(len(_shape(g, op.inputs[0])) <= 4, op, "more than 4 dimensions: TFLite Micro refuses them")
    _need(op.options.get("activation", "NONE") == "NONE", op, "a fused activation: TFLite Micro refuses it")


def _check_shape(g, op):
    """SHAPE: an int32 output of one value per input dimension."""
    _one_input(g, op)
    _need(_shape(g, op.outputs[0]) == (len(_shape(g, op.inputs[0])),), op,
          f"output shape {list(_shape(g, op.outputs[0]))} != [{len(_shape(g, op.inputs[0]))}]")
    _need(op.options.get("out_type", 2) == 2, op, "out_type must be int32, as TFLite Micro writes")


def _check_gather_nd(g, op):
    """GATHER_ND: int32 indices [..., n]; constant ones inside the first n dimensions of the params, computed ones
    checked as the model runs (TFLite Micro fails the invocation on a row outside the params, refops.norm)."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs params and indices")
    params, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    ishape = _shape(g, op.inputs[1])
    _need(g.tensors[op.inputs[1]].dtype == "int32" and len(ishape) >= 1 and 1 <= ishape[-1] <= len(params), op,
          f"indices must be int32 [..., n] with 1 <= n <= {len(params)}")
    n = ishape[-1]
    _need(n <= GATHER_ND_MAX, op, f"index tuples of {n} values; TFLite Micro takes at most {GATHER_ND_MAX}")
    if g.tensors[op.inputs[1]].is_const:
        idx = _const(g, op, 1, "indices")
        _need(idx.size == 0 or ((idx >= 0) & (idx < np.array(params[:n]))).all(), op,
              f"indices must lie inside the params' first {n} dimensions {list(params[:n])} (TFLite Micro fails on "
              f"others)")
    want = tuple(ishape[:-1]) + params[n:]
    _need(out == want, op, f"output shape {list(out)} != {list(want)}")
    _same_type(g, op, [op.inputs[0], *op.outputs])


def _check_cumsum(g, op):
    """CUMSUM: a constant int32 axis; the output keeps the input's shape."""
    _check_same(g, op)
    _axis_const(g, op, 1, max(len(_shape(g, op.inputs[0])), 1))
    _need(g.tensors[op.inputs[1]].dtype == "int32", op, "axis must be int32")


def _check_embedding_lookup(g, op):
    """EMBEDDING_LOOKUP: 1-D int32 ids, a constant int8 table of rank >= 2, the int8 output [ids, row...]."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs ids and a table")
    ids, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    table = _const(g, op, 1, "the table (a computed table is not supported)")
    _need(len(ids) == 1 and g.tensors[op.inputs[0]].dtype == "int32", op, "ids must be 1-D int32")
    _need(table.ndim >= 2 and g.tensors[op.inputs[1]].dtype == "int8", op, "the table must be int8 of rank >= 2")
    want = ids + tuple(table.shape[1:])
    _need(out == want, op, f"output shape {list(out)} != {list(want)}")


def _check_fill(g, op):
    """FILL: constant int32/int64 dims equal to the output's shape (TFLite Micro takes no computed dims) and a
    scalar value of the output's type, computed or constant, copied as its raw code."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs dims and a value")
    dims, value, out = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    _need(dims.is_const, op, "computed dims are not supported (TFLite Micro refuses them: 'Non-constant >dims< "
                             "tensor is not supported')")
    d = _const(g, op, 0, "dims")
    _need(dims.dtype in ("int32", "int64") and d.ndim == 1, op, "dims must be a 1-D int32 or int64 constant")
    _need(tuple(int(v) for v in d) == tuple(out.shape), op,
          f"dims {[int(v) for v in d]} differ from the output shape {list(out.shape)}")
    _need(len(value.shape) == 0 and value.dtype == out.dtype, op,
          f"the value must be a scalar (rank 0) of the output's type {out.dtype}")


CAST_TYPE_CODES = {"float32": 0, "int32": 2, "bool": 6, "int16": 7, "int8": 9}  # TFLite's TensorType codes


def _check_cast(g, op):
    """CAST: an int8, int16, int32, float32 or bool input converted to the int8, int16 or int32 output of its
    shape (raw values, refops.cast); TFLite's option types, when given, agree with the tensors'."""
    _check_same(g, op)
    for key, t in (("in_data_type", g.tensors[op.inputs[0]]), ("out_data_type", g.tensors[op.outputs[0]])):
        code = op.options.get(key)
        _need(code in (None, 0) or code == CAST_TYPE_CODES.get(t.dtype), op,
              f"{key} {code} does not match tensor type {t.dtype}")


def _check_log_softmax(g, op):
    """LOG_SOFTMAX: TFLM requires the int8 output on scale 16/256, zero point 127."""
    _check_same(g, op)
    to = g.tensors[op.outputs[0]]
    _need(np.float32(to.scale) == np.float32(16.0 / 256) and to.zero_point == 127, op,
          f"output quantisation ({to.scale:g}, {to.zero_point}) must be (16/256, 127), as TFLite Micro requires")


DIV_MAX_MULTIPLIER = 2.0 ** 21  # s1 / (s2 so) below it: TFLM's output_shift <= 22, its rounding shift >= 0


def _check_div(g, op):
    """DIV: two int8 inputs (either may be constant) broadcast to the output (at most 4-D), each per-tensor
    quantised; s1 / (s2 so) below 2^21 (above, TFLM's rounding shift can turn into a left shift)."""
    _need(len(op.inputs) == 2 and min(op.inputs) >= 0, op, "needs two inputs")
    _broadcast_to_output(g, op, op.inputs)
    _same_type(g, op, [*op.inputs, *op.outputs])
    for i in (*op.inputs, *op.outputs):
        _per_tensor(g, op, i)
    t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    real = float(np.float32(t1.scale) / (np.float32(t2.scale) * np.float32(to.scale)))
    _need(real < DIV_MAX_MULTIPLIER, op, f"input scale / (divisor scale * output scale) = {real:g} is 2^21 or "
          f"more (TFLite Micro's rounding shift would turn left); re-quantise the model")


def bilinear_macs(g, op) -> int:
    """Bilinear resize weighs 4 input pixels per output value (the other operators here only move,
    compare or rescale values: 0, like ADD and MUL)."""
    return 4 * g.tensors[op.outputs[0]].num_elements


def batch_matmul_macs(g, op) -> int:
    """BATCH_MATMUL: batch x M x N x K."""
    L, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    k = L[-2] if op.options.get("adj_x", False) else L[-1]
    return int(np.prod(out, dtype=np.int64)) * int(k)
