"""Random one-operator models of the activation, layout and resize operators (ops_extra.py) and of
TFLite Micro's further int8/int16 operators (ABS, RSQRT, ...), for
the TFLite Micro comparisons in test_executor.py (numpy executor) and test_ops_extra.py (firmware)."""

from __future__ import annotations

import numpy as np

from buildtool.zoo.builder import GraphBuilder


def rquant(rng):
    return float(np.float32(rng.uniform(0.005, 0.2))), int(rng.integers(-128, 128))


def _builder(rng, name):
    return GraphBuilder(name, seed=int(rng.integers(1 << 30)))


def _in(b, rng, shape):
    s, zp = rquant(rng)
    return b.input(tuple(int(d) for d in shape), scale=s, zp=zp)


def _shape4(rng, hi=7):
    return (1,) + tuple(int(rng.integers(1, hi)) for _ in range(3))


def _any_shape(rng):
    rank = int(rng.integers(1, 5))
    return tuple(int(rng.integers(1, 6)) for _ in range(rank))


def gen_relu(rng):
    b = _builder(rng, "relu")
    b.relu(_in(b, rng, _any_shape(rng)), out_quant=rquant(rng) if rng.random() < 0.7 else None)
    return b.finish()


def gen_relu6(rng):
    b = _builder(rng, "relu6")
    s = float(np.float32(rng.uniform(0.005, 0.1)))
    b.relu6(b.input(_shape4(rng), scale=s, zp=int(rng.integers(-128, 128))))
    return b.finish()


def gen_tanh(rng):
    b = _builder(rng, "tanh")
    s = float(np.float32(rng.uniform(0.002, 0.5)))
    b.tanh(b.input(_shape4(rng, 9), scale=s, zp=int(rng.integers(-128, 128))))
    return b.finish()


def gen_prelu(rng):
    b = _builder(rng, "prelu")
    shape = _shape4(rng)
    alpha = [(1, 1, shape[3]), (shape[3],), shape[1:], (1, 1, 1)][int(rng.integers(0, 4))]
    b.prelu(_in(b, rng, shape), alpha, out_quant=rquant(rng) if rng.random() < 0.7 else None)
    return b.finish()


def _minmax(rng, opcode):
    b = _builder(rng, opcode.lower())
    shape = _shape4(rng)
    other = tuple(d if rng.random() < 0.6 else 1 for d in shape)
    q = rquant(rng)
    x, y = b.input(shape, scale=q[0], zp=q[1], name="a"), b.input(other, scale=q[0], zp=q[1], name="b")
    if rng.random() < 0.5:
        x, y = y, x
    (b.maximum if opcode == "MAXIMUM" else b.minimum)(x, y)
    return b.finish()


def gen_transpose(rng):
    b = _builder(rng, "transpose")
    shape = _any_shape(rng) if rng.random() < 0.3 else (1,) + _any_shape(rng)
    b.transpose(_in(b, rng, shape), rng.permutation(len(shape)))
    return b.finish()


def gen_squeeze(rng):
    b = _builder(rng, "squeeze")
    shape = tuple(int(rng.choice([1, 1, 2, 3])) for _ in range(int(rng.integers(2, 5))))
    if 1 not in shape:
        shape = (1,) + shape
    if all(n == 1 for n in shape):
        shape = shape[:-1] + (2,)
    ones = [d for d, n in enumerate(shape) if n == 1]
    dims = () if rng.random() < 0.4 else tuple(int(d) - (len(shape) if rng.random() < 0.5 else 0)
                                               for d in rng.choice(ones, size=int(rng.integers(1, len(ones) + 1)),
                                                                   replace=False))
    b.squeeze(_in(b, rng, shape), dims)
    return b.finish()


def gen_expand_dims(rng):
    b = _builder(rng, "expand_dims")
    shape = tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4))))
    b.expand_dims(_in(b, rng, shape), int(rng.integers(-len(shape) - 1, len(shape) + 1)))
    return b.finish()


def gen_depth_to_space(rng):
    b = _builder(rng, "d2s")
    k = int(rng.integers(1, 4))
    shape = (1, int(rng.integers(1, 5)), int(rng.integers(1, 5)), k * k * int(rng.integers(1, 4)))
    b.depth_to_space(_in(b, rng, shape), k)
    return b.finish()


def gen_space_to_depth(rng):
    b = _builder(rng, "s2d")
    k = int(rng.integers(1, 4))
    shape = (1, k * int(rng.integers(1, 4)), k * int(rng.integers(1, 4)), int(rng.integers(1, 5)))
    b.space_to_depth(_in(b, rng, shape), k)
    return b.finish()


def _resize(rng, opcode):
    b = _builder(rng, opcode.lower())
    shape = _shape4(rng, 8)
    size = (int(rng.integers(1, 17)), int(rng.integers(1, 17)))
    mode = int(rng.integers(0, 3))  # plain, align_corners, half_pixel_centers
    fn = b.resize_nearest if opcode == "RESIZE_NEAREST_NEIGHBOR" else b.resize_bilinear
    fn(_in(b, rng, shape), size, align_corners=mode == 1, half_pixel_centers=mode == 2)
    return b.finish()


def gen_abs(rng):
    b = _builder(rng, "abs")
    x = _in(b, rng, _any_shape(rng))
    r = rng.random()  # the output's own quantisation, the input's (no rescale), or calibrated
    b.abs(x, out_quant=rquant(rng) if r < 0.5 else b.quant_of(x) if r < 0.75 else None)
    return b.finish()


def gen_rsqrt(rng):
    """Input zero point -128: every code is a non-negative real (TFLM fails on a negative one)."""
    b = _builder(rng, "rsqrt")
    x = b.input(_any_shape(rng), scale=float(np.float32(rng.uniform(0.0005, 0.5))), zp=-128)
    b.rsqrt(x, out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


def _compare(rng, opcode):
    """Inputs on their own quantisations, or one (equal codes compare equal); broadcast; the second a
    constant now and then."""
    b = _builder(rng, opcode.lower())
    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    other = tuple(d if rng.random() < 0.6 else 1 for d in shape)
    x = _in(b, rng, shape)
    if rng.random() < 0.3:
        q = rquant(rng)
        y = b.const("c", rng.integers(-128, 128, size=other), "int8", quant_of(q))
    else:
        y = b.input(other, *(b.quant_of(x) if rng.random() < 0.3 else rquant(rng)), name="b")
    if rng.random() < 0.5:
        x, y = y, x
    b.compare(opcode, x, y)
    return b.finish()


def quant_of(q):
    from buildtool.model.ir import Quant
    return Quant(np.array([q[0]], np.float32), np.array([q[1]], np.int64), 0)


COMPARISONS = ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")


def _bools(rng, b, shape):
    """A bool tensor of the shape: an int8 input compared with a constant (about half true)."""
    x = _in(b, rng, shape)
    zp = b.quant_of(x)[1]
    return b.compare(str(rng.choice(COMPARISONS[2:])), x, b.const("t", np.full((1,), zp, np.int8), "int8",
                                                                   quant_of(b.quant_of(x))))


def _logical(rng, opcode):
    b = _builder(rng, opcode.lower())
    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    if opcode == "LOGICAL_NOT":
        b.logical(opcode, _bools(rng, b, shape))
    else:
        other = tuple(d if rng.random() < 0.6 else 1 for d in shape)
        x, y = _bools(rng, b, shape), _bools(rng, b, other)
        b.logical(opcode, *((x, y) if rng.random() < 0.5 else (y, x)))
    return b.finish()


def gen_select_v2(rng):
    """The condition, x and y each of the output shape or broadcast; y on its own quantisation (requantised)."""
    b = _builder(rng, "select_v2")
    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    c, x, y = (tuple(d if rng.random() < 0.7 else 1 for d in shape) for _ in range(3))
    shape = tuple(np.broadcast_shapes(c, x, y))
    b.select_v2(_bools(rng, b, c), _in(b, rng, x), _in(b, rng, y))
    return b.finish()


def _reduce(rng, opcode):
    """MEAN's axes over a rank-2..4 input (batch 1), keep_dims or not; SUM on its own output quantisation."""
    b = _builder(rng, opcode.lower())
    rank = int(rng.integers(2, 5))
    shape = (1,) + tuple(int(rng.integers(1, 7)) for _ in range(rank - 1))
    first = int(rng.integers(1, rank))
    axes = list(range(first, int(rng.integers(first, rank)) + 1))
    axes = [a - rank if rng.random() < 0.3 else a for a in (axes[::-1] if rng.random() < 0.3 else axes)]
    b.reduce(opcode, _in(b, rng, shape), axes, keep_dims=bool(rng.random() < 0.5),
             out_quant=rquant(rng) if opcode == "SUM" and rng.random() < 0.5 else None)
    return b.finish()


def gen_slice(rng):
    b = _builder(rng, "slice")
    shape = (1,) + tuple(int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 4))))
    begin, size = [0], [1]
    for n in shape[1:]:
        lo = int(rng.integers(0, n))
        begin.append(lo)
        size.append(-1 if rng.random() < 0.25 else int(rng.integers(1, n - lo + 1)))
    b.slice(_in(b, rng, shape), begin, size)
    return b.finish()


def gen_padv2(rng):
    b = _builder(rng, "padv2")
    shape = (1,) + tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4))))
    pads = [[0, 0]] + [[int(rng.integers(0, 3)), int(rng.integers(0, 3))] for _ in shape[1:]]
    b.padv2(_in(b, rng, shape), pads, int(rng.integers(-128, 128)))
    return b.finish()


def gen_split_v(rng):
    b = _builder(rng, "split_v")
    shape = _shape4(rng)
    axis = int(rng.integers(1, 4))
    n = int(rng.integers(1, shape[axis] + 1))
    cuts = np.sort(rng.choice(np.arange(1, shape[axis]), n - 1, replace=False)) if n > 1 else []
    sizes = np.diff(np.concatenate([[0], cuts, [shape[axis]]])).astype(int).tolist()
    if rng.random() < 0.3:
        sizes[int(rng.integers(0, n))] = -1
    return b.finish(b.split_v(_in(b, rng, shape), sizes, axis=axis if rng.random() < 0.5 else axis - 4))


def gen_pack(rng):
    b = _builder(rng, "pack")
    shape = (1,) + tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(0, 3))))
    q = rquant(rng)
    xs = [b.input(shape, scale=q[0], zp=q[1], name=f"x{k}") for k in range(int(rng.integers(1, 4)))]
    axis = int(rng.integers(1, len(shape) + 1))
    b.pack(xs, axis=axis if rng.random() < 0.5 else axis - len(shape) - 1)
    return b.finish()


def gen_unpack(rng):
    b = _builder(rng, "unpack")
    shape = (1,) + tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4))))
    axis = int(rng.integers(1, len(shape)))
    return b.finish(b.unpack(_in(b, rng, shape), axis=axis if rng.random() < 0.5 else axis - len(shape)))


EXTRA_GENERATORS = {
    "RELU": gen_relu, "RELU6": gen_relu6, "TANH": gen_tanh, "PRELU": gen_prelu,
    "MAXIMUM": lambda r: _minmax(r, "MAXIMUM"), "MINIMUM": lambda r: _minmax(r, "MINIMUM"),
    "TRANSPOSE": gen_transpose, "SQUEEZE": gen_squeeze, "EXPAND_DIMS": gen_expand_dims,
    "DEPTH_TO_SPACE": gen_depth_to_space, "SPACE_TO_DEPTH": gen_space_to_depth,
    "RESIZE_NEAREST_NEIGHBOR": lambda r: _resize(r, "RESIZE_NEAREST_NEIGHBOR"),
    "RESIZE_BILINEAR": lambda r: _resize(r, "RESIZE_BILINEAR"),
    "ABS": gen_abs, "RSQRT": gen_rsqrt,
}
EXTRA_GENERATORS.update({op: (lambda r, op=op: _compare(r, op)) for op in COMPARISONS})
EXTRA_GENERATORS.update({op: (lambda r, op=op: _logical(r, op)) for op in ("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT")})
EXTRA_GENERATORS["SELECT_V2"] = gen_select_v2
EXTRA_GENERATORS.update({op: (lambda r, op=op: _reduce(r, op)) for op in ("SUM", "REDUCE_MAX", "REDUCE_MIN")})
EXTRA_GENERATORS.update({"SLICE": gen_slice, "PADV2": gen_padv2, "SPLIT_V": gen_split_v, "PACK": gen_pack,
                         "UNPACK": gen_unpack})


def gen_squared_difference(rng):
    """Inputs on their own quantisations, broadcast; the second a constant now and then; the output on its own
    quantisation or calibrated."""
    b = _builder(rng, "squared_difference")
    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    other = tuple(d if rng.random() < 0.6 else 1 for d in shape)
    x = _in(b, rng, shape)
    y = (b.const("c", rng.integers(-128, 128, size=other).astype(np.int8), "int8", quant_of(rquant(rng)))
         if rng.random() < 0.25 else _in(b, rng, other))
    if rng.random() < 0.5:
        x, y = y, x
    b.squared_difference(x, y, out_quant=rquant(rng) if rng.random() < 0.4 else None)
    return b.finish()


def gen_add_n(rng):
    b = _builder(rng, "add_n")
    shape = _any_shape(rng)
    shape = (1,) + shape[1:]
    q = rquant(rng)
    xs = [b.input(shape, scale=q[0], zp=q[1], name=f"x{k}") for k in range(int(rng.integers(2, 6)))]
    b.add_n(xs, out_quant=rquant(rng) if rng.random() < 0.4 else None)
    return b.finish()


def gen_zeros_like(rng):
    b = _builder(rng, "zeros_like")
    b.zeros_like(_in(b, rng, _any_shape(rng)))
    return b.finish()


EXTRA_GENERATORS.update({"SQUARED_DIFFERENCE": gen_squared_difference, "ADD_N": gen_add_n,
                         "ZEROS_LIKE": gen_zeros_like})


def _argminmax(rng, opcode):
    b = _builder(rng, opcode.lower())
    shape = (1,) + tuple(int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 4))))
    axis = int(rng.integers(1, len(shape)))
    x = _in(b, rng, shape)
    b.argminmax(opcode, x, axis if rng.random() < 0.5 else axis - len(shape))
    return b.finish()


def gen_gather(rng):
    b = _builder(rng, "gather")
    shape = (1,) + tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4))))
    axis = int(rng.integers(1, len(shape)))
    ishape = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3))))
    idx = rng.integers(0, shape[axis], size=ishape)
    axis = axis if rng.random() < 0.5 else axis - len(shape)
    if rng.random() < 0.5:  # computed indices: ARG_MAX over a last axis no longer than the gathered one
        b.gather_computed(_in(b, rng, shape), _computed_indices(b, rng, (1,) + ishape, shape[axis]), axis)
    else:
        b.gather(_in(b, rng, shape), idx, axis=axis)
    return b.finish()


def _computed_indices(b, rng, shape, below: int) -> int:
    """An int32 tensor of shape with values in [0, below): ARG_MAX over a model input of shape + (k,), k <= below."""
    return b.argminmax("ARG_MAX", _in(b, rng, tuple(shape) + (int(rng.integers(1, below + 1)),)), -1)


def gen_space_to_batch(rng):
    """Spatial sizes multiples of the block, no padding (TFLM pads with an uninitialised value)."""
    b = _builder(rng, "space_to_batch")
    block = [int(rng.integers(1, 4)) for _ in range(2 if rng.random() < 0.7 else 1)]
    shape = (1, *[bk * int(rng.integers(1, 4)) for bk in block], int(rng.integers(1, 5)))
    b.space_to_batch(_in(b, rng, shape), block, [[0, 0]] * len(block))
    return b.finish()


def gen_batch_to_space(rng):
    """SPACE_TO_BATCH_ND then BATCH_TO_SPACE_ND with its own block and crops (a batch-1 model input)."""
    b = _builder(rng, "batch_to_space")
    four = rng.random() < 0.7
    block = [int(rng.integers(1, 4)) for _ in range(2 if four else 1)]
    sizes = [int(rng.integers(1, 4)) * bk for bk in block]
    x = b.space_to_batch(_in(b, rng, (1, *sizes, int(rng.integers(1, 5)))), block, [[0, 0]] * len(block))
    shape = b.shape(x)
    crops = []
    for k, bk in enumerate(block):
        full = shape[1 + k] * bk
        lo = int(rng.integers(0, full))
        crops.append([lo, int(rng.integers(0, full - lo))])
    b.batch_to_space(x, block, crops)
    return b.finish()


def gen_mirror_pad(rng):
    b = _builder(rng, "mirror_pad")
    shape = (1,) + tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4))))
    mode = "REFLECT" if rng.random() < 0.5 else "SYMMETRIC"
    lim = [n - 1 if mode == "REFLECT" else n for n in shape]
    pads = [[0, 0]] + [[int(rng.integers(0, m + 1)), int(rng.integers(0, m + 1))] for m in lim[1:]]
    b.mirror_pad(_in(b, rng, shape), pads, mode)
    return b.finish()


def gen_reverse(rng):
    b = _builder(rng, "reverse")
    shape = (1,) + tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4))))
    first = int(rng.integers(1, len(shape)))
    axes = list(range(first, int(rng.integers(first, len(shape))) + 1))
    b.reverse(_in(b, rng, shape), [a if rng.random() < 0.5 else a - len(shape) for a in rng.permutation(axes)])
    return b.finish()


def gen_broadcast_to(rng):
    b = _builder(rng, "broadcast_to")
    out = (1,) + tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4))))
    k = int(rng.integers(1, len(out) + 1))
    src = tuple(d if rng.random() < 0.5 else 1 for d in out[len(out) - k:])
    b.broadcast_to(_in(b, rng, src), out)
    return b.finish()


EXTRA_GENERATORS.update({"ARG_MAX": lambda r: _argminmax(r, "ARG_MAX"), "ARG_MIN": lambda r: _argminmax(r, "ARG_MIN"),
                         "GATHER": gen_gather, "SPACE_TO_BATCH_ND": gen_space_to_batch,
                         "BATCH_TO_SPACE_ND": gen_batch_to_space, "MIRROR_PAD": gen_mirror_pad,
                         "REVERSE_V2": gen_reverse, "BROADCAST_TO": gen_broadcast_to})


def gen_batch_matmul(rng, const_rhs=None):
    """Ranks 3..5 (batch 1 first), broadcast batch dimensions, adj_x / adj_y; the RHS a constant now and then."""
    b = _builder(rng, "batch_matmul")
    rank = int(rng.integers(3, 6))
    batch = (1,) + tuple(int(rng.integers(1, 4)) for _ in range(rank - 3))
    m, k, n = (int(rng.integers(1, 7)) for _ in range(3))
    adj_x, adj_y = bool(rng.random() < 0.3), bool(rng.random() < 0.3)
    lb = tuple(d if rng.random() < 0.7 else 1 for d in batch)
    rb = tuple(d if rng.random() < 0.7 else 1 for d in batch)
    x = _in(b, rng, lb + ((k, m) if adj_x else (m, k)))
    rshape = rb + ((n, k) if adj_y else (k, n))
    const_rhs = rng.random() < 0.3 if const_rhs is None else const_rhs
    y = (b.const("w", rng.integers(-128, 128, size=rshape).astype(np.int8), "int8", quant_of(rquant(rng)))
         if const_rhs else _in(b, rng, rshape))
    b.batch_matmul(x, y, adj_x, adj_y, out_quant=rquant(rng) if rng.random() < 0.3 else None)
    return b.finish()


EXTRA_GENERATORS["BATCH_MATMUL"] = gen_batch_matmul


def gen_elu(rng):
    b = _builder(rng, "elu")
    b.elu(_in(b, rng, _any_shape(rng)), out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


def gen_l2_normalization(rng):
    b = _builder(rng, "l2_norm")
    b.l2_normalization(_in(b, rng, (1,) + _any_shape(rng)[:3]))
    return b.finish()


def gen_shape(rng):
    b = _builder(rng, "shape")
    b.shape_of(_in(b, rng, _any_shape(rng)))
    return b.finish()


def gen_gather_nd(rng):
    b = _builder(rng, "gather_nd")
    shape = (1,) + tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 4))))
    n = int(rng.integers(1, len(shape) + 1))
    lead = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3))))
    idx = np.stack([rng.integers(0, shape[k], size=lead) for k in range(n)], axis=-1)
    if rng.random() < 0.5:  # computed indices [1, ..., n] below k: params whose first n dimensions are k or more
        k = int(rng.integers(1, 4))
        shape = tuple(int(rng.integers(k, 5)) if d < n else s for d, s in enumerate(shape))
        b.gather_nd_computed(_in(b, rng, shape), _computed_indices(b, rng, (1,) + lead + (n,), k))
    else:
        b.gather_nd(_in(b, rng, shape), idx)
    return b.finish()


EXTRA_GENERATORS.update({"ELU": gen_elu, "L2_NORMALIZATION": gen_l2_normalization, "SHAPE": gen_shape,
                         "GATHER_ND": gen_gather_nd})


def gen_cumsum(rng):
    b = _builder(rng, "cumsum")
    shape = (1,) + tuple(int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 4))))
    axis = int(rng.integers(1, len(shape)))
    b.cumsum(_in(b, rng, shape), axis if rng.random() < 0.5 else axis - len(shape), bool(rng.random() < 0.5),
             bool(rng.random() < 0.5), out_quant=rquant(rng) if rng.random() < 0.4 else None)
    return b.finish()


EXTRA_GENERATORS["CUMSUM"] = gen_cumsum


def gen_embedding_lookup(rng):
    """Ids from ARG_MAX over an int8 [n, k] input (so the model input stays int8), a table of at least k rows."""
    b = _builder(rng, "embedding_lookup")
    n, k = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    ids = b.argminmax("ARG_MAX", _in(b, rng, (n, k)), 1)
    rows = k + int(rng.integers(0, 3))
    row = tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 3))))
    table = rng.integers(-128, 128, size=(rows,) + row)
    b.embedding_lookup(ids, table, *rquant(rng))
    return b.finish()


EXTRA_GENERATORS["EMBEDDING_LOOKUP"] = gen_embedding_lookup


def gen_cast_widen(rng):
    """CAST int8 -> int32 alone (test_int16 converts it to int16 -> int32)."""
    b = _builder(rng, "cast")
    b.cast(_in(b, rng, _any_shape(rng)))
    return b.finish()


def gen_cast(rng):
    """CAST from every type TFLite Micro converts (int8, int16, int32, float32, bool) to int8/int16/int32, each
    from an int8 input: the input itself, its DEQUANTIZE on a scale up to 400 (fractions, and floats past the
    int8/int16 range to saturate), that float cast to int16 and cast again to int8 (int16 values that wrap), its
    ARG_MAX (int32) and a GREATER of two more inputs (bool)."""
    b = _builder(rng, "cast")
    shape = (1,) + tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4))))
    x = b.input(shape, scale=float(np.float32(rng.uniform(0.01, 400))), zp=int(rng.integers(-128, 128)))
    other = _in(b, rng, shape)
    to = lambda: str(rng.choice(["int8", "int16", "int32"]))  # noqa: E731
    f = b.dequantize(x)
    outs = [b.cast(x, to()), b.cast(f, to()), b.cast(b.cast(f, "int16"), "int8"),
            b.cast(b.argminmax("ARG_MAX", x, -1), str(rng.choice(["int8", "int16"]))),
            b.cast(b.compare("GREATER", other, _in(b, rng, shape)), str(rng.choice(["int8", "int16"])))]
    return b.finish(outs)


EXTRA_GENERATORS["CAST"] = gen_cast


def gen_fill(rng):
    """FILL with constant dims and a computed value (a scalar model input; constant dims and value make a constant,
    which every operator refuses), the output on the value's quantisation or its own (TFLM copies the raw code)."""
    b = _builder(rng, "fill")
    shape = (1,) + tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(0, 4))))
    b.fill(shape, _in(b, rng, ()), out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


EXTRA_GENERATORS["FILL"] = gen_fill


def gen_log_softmax(rng):
    b = _builder(rng, "log_softmax")
    shape = [(1, int(rng.integers(1, 40))), (1,) + _any_shape(rng)[:3]][int(rng.integers(0, 2))]
    b.log_softmax(b.input(shape, scale=float(np.float32(rng.uniform(0.005, 0.5))), zp=int(rng.integers(-128, 128))))
    return b.finish()


EXTRA_GENERATORS["LOG_SOFTMAX"] = gen_log_softmax


def div_defined_quant(s1, s2, zp2, codes2, rng):
    """An output quantisation under which TFLM's DIV rounding shift stays <= 31 for every numerator: the shift
    is headroom (<= 31) + recip_shift (bit length of |divisor - zp2| - 1) - output_shift, so the output
    multiplier s1 / (s2 so) is taken at or above 2^(R - 1), R the largest recip_shift over the divisor codes."""
    r = max(int(abs(int(c) - zp2)).bit_length() - 1 for c in codes2)
    real = 2.0 ** (max(r, 0) - 1 + rng.uniform(0.05, 1.5))
    return float(np.float32(s1 / (s2 * real))), int(rng.integers(-128, 128))


def gen_div(rng):
    """DIV with broadcast, the divisor an activation or (a quarter of the time) a constant of small codes; the
    output quantisation keeps TFLM's shifts defined (div_defined_quant), so TFLM is the oracle on any input.
    tests/test_ops_extra.py covers the other quantisations against the exact reference."""
    b = _builder(rng, "div")
    shape = (1,) + _shape4(rng)[1:int(rng.integers(1, 5))]
    other = tuple(d if rng.random() < 0.6 else 1 for d in shape)
    sa, sb = (shape, other) if rng.random() < 0.5 else (other, shape)
    (s1, z1), (s2, z2) = rquant(rng), rquant(rng)
    x = b.input(sa, scale=s1, zp=z1, name="a")
    if rng.random() < 0.25:
        span = 1 << int(rng.integers(0, 8))
        codes = np.clip(z2 + rng.integers(-span, span + 1, size=sb), -128, 127).astype(np.int8)
        y = b.const("c", codes, "int8", quant_of((s2, z2)))
    else:
        codes = np.arange(-128, 128)
        y = b.input(sb, scale=s2, zp=z2, name="b")
    b.div(x, y, str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])),
          out_quant=div_defined_quant(s1, s2, z2, codes.reshape(-1), rng))
    return b.finish()


EXTRA_GENERATORS["DIV"] = gen_div


def gen_neg(rng):
    """NEG on float32 as TensorFlow writes it in a LayerNormalization: int8 -> DEQUANTIZE -> NEG -> QUANTIZE (a
    float32 model output now and then)."""
    b = _builder(rng, "neg")
    y = b.neg(b.dequantize(_in(b, rng, _any_shape(rng))))
    if rng.random() < 0.8:
        y = b.quantize(y, *rquant(rng))
    return b.finish(y)


EXTRA_GENERATORS["NEG"] = gen_neg


def gen_gelu(rng):
    """GELU (approximate false or true) on its own output quantisation or calibrated; the oracle is TensorFlow
    Lite's reference kernel (conftest.tflm_run: TFLite Micro does not register GELU)."""
    b = _builder(rng, "gelu")
    x = b.input(_any_shape(rng), scale=float(np.float32(rng.uniform(0.005, 0.2))), zp=int(rng.integers(-128, 128)))
    b.gelu(x, bool(rng.random() < 0.5), out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


EXTRA_GENERATORS["GELU"] = gen_gelu


def gen_delay(rng):
    """A resource variable: y = delay(x), a delay line with random start codes (READ_VARIABLE, then ASSIGN_VARIABLE
    of x; the writer writes its CALL_ONCE init subgraph). One invocation gives the start value; tests/test_variables.py
    invokes several times in a row."""
    b = _builder(rng, "delay")
    shape = (1,) + tuple(int(rng.integers(1, 7)) for _ in range(int(rng.integers(1, 3))))
    return b.finish([b.delay(_in(b, rng, shape), init=rng.integers(-128, 128, size=shape))])


EXTRA_GENERATORS.update({"READ_VARIABLE": gen_delay, "ASSIGN_VARIABLE": gen_delay})
