"""ARG_MAX, ARG_MIN, GATHER, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, REVERSE_V2 and BROADCAST_TO:
TFLM's reference semantics on raw codes (no requantisation; int8, and int16 where TFLM has it).

ARG_MAX / ARG_MIN (arg_min_max.cc): the first index of the largest / smallest code along the constant axis,
int32 output. GATHER (gather.cc): rows of the input picked along `axis` by constant int32 indices
(batch_dims 0). SPACE_TO_BATCH_ND moves each block offset to its own batch (TFLM pads with
params.output_offset, which its Prepare never sets: uninitialised arena bytes, so the check refuses any
padding; the kernels here would pad with 0); BATCH_TO_SPACE_ND is the inverse with crops (3-D inputs are
NH1C, as TFLM extends them). MIRROR_PAD: REFLECT leaves the edge out, SYMMETRIC repeats it. REVERSE_V2 flips
the constant axes; BROADCAST_TO repeats the input to a constant shape. EMBEDDING_LOOKUP (embedding_lookup.cc,
int8 -> int8) copies the rows of a constant table picked by int32 ids (an activation); TFLM fails the invocation
on an id outside the table, here such a row is all code 0.

The geometry functions are shared with code generation (codegen/extra_c.py), so the C kernels get the same
integers.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .activation import operands


def _const_ints(g, op, pos: int) -> list:
    return [int(v) for v in g.tensors[op.inputs[pos]].data.reshape(-1)]


# -- ARG_MAX / ARG_MIN ------------------------------------------------------------------
def argminmax_geometry(g, op) -> dict:
    """The input as [outer][axis][inner] around the reduced axis."""
    shape = g.tensors[op.inputs[0]].shape
    a = _const_ints(g, op, 1)[0] % len(shape)
    return dict(outer=int(np.prod(shape[:a], dtype=np.int64)), axis=int(shape[a]),
                inner=int(np.prod(shape[a + 1:], dtype=np.int64)), kind=0 if op.opcode == "ARG_MAX" else 1)


def argminmax(g, op, ins, outs) -> None:
    p = argminmax_geometry(g, op)
    x = ins[0].reshape(p["outer"], p["axis"], p["inner"])
    r = np.argmax(x, axis=1) if p["kind"] == 0 else np.argmin(x, axis=1)  # the first on ties, as TFLM
    outs[0][...] = r.astype(np.int32).reshape(outs[0].shape)


# -- GATHER -------------------------------------------------------------------------------
def gather_geometry(g, op) -> dict:
    """The input as [outer][axis_size][inner]; `count` indices along the axis."""
    shape = g.tensors[op.inputs[0]].shape
    a = op.options.get("axis", 0) % len(shape)
    return dict(outer=int(np.prod(shape[:a], dtype=np.int64)), axis_size=int(shape[a]),
                count=int(g.tensors[op.inputs[1]].num_elements), inner=int(np.prod(shape[a + 1:], dtype=np.int64)))


def gather(g, op, ins, outs) -> None:
    """TFLM gather.cc: an index outside [0, axis size) (computed indices; constant ones are checked) fails the
    invocation."""
    x, idx = operands(g, op, ins)
    p = gather_geometry(g, op)
    idx = np.asarray(idx).reshape(-1).astype(np.int64)
    bad = idx[(idx < 0) | (idx >= p["axis_size"])]
    if bad.size:
        raise ModelError(f"operator {op.index} (GATHER): index {int(bad[0])} lies outside [0, {p['axis_size']}) as "
                         f"the model runs; TFLite Micro fails the invocation there (and the firmware's model_invoke "
                         f"returns 1)")
    v = x.reshape(p["outer"], p["axis_size"], p["inner"])[:, idx, :]
    outs[0][...] = v.reshape(outs[0].shape)


# -- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND --------------------------------------------------
def _nhwc(shape) -> tuple:
    """TFLM ExtendShapeSpaceToBatch / ExtendShapeBatchToSpace: 3-D NHC as NH1C."""
    shape = tuple(int(d) for d in shape)
    return shape if len(shape) == 4 else (shape[0], shape[1], 1, shape[2])


def space_batch_geometry(g, op) -> dict:
    """Block size and the top/left padding (SPACE_TO_BATCH_ND) or crop (BATCH_TO_SPACE_ND) of the 4-D view;
    pad_value 0 (TFLM's is uninitialised: the check refuses padding)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    block = _const_ints(g, op, 1)
    edges = _const_ints(g, op, 2)
    four = len(ti.shape) == 4
    return dict(in_dims=list(_nhwc(ti.shape)), out_dims=list(_nhwc(to.shape)), block_h=block[0],
                block_w=block[1] if four else 1, top=edges[0], left=edges[2] if four else 0,
                pad_value=0)


def space_to_batch_nd(g, op, ins, outs) -> None:
    p = space_batch_geometry(g, op)
    n, h, w, c = p["in_dims"]
    on, oh, ow, _ = p["out_dims"]
    bh, bw = p["block_h"], p["block_w"]
    x = ins[0].reshape(n, h, w, c)
    padded = np.full((n, oh * bh, ow * bw, c), p["pad_value"], x.dtype)
    padded[:, p["top"]:p["top"] + h, p["left"]:p["left"] + w, :] = x
    # out[(sh * bw + sw) * n + b, y, x] = padded[b, y * bh + sh, x * bw + sw]
    v = padded.reshape(n, oh, bh, ow, bw, c).transpose(2, 4, 0, 1, 3, 5)
    outs[0][...] = v.reshape(outs[0].shape)


def batch_to_space_nd(g, op, ins, outs) -> None:
    p = space_batch_geometry(g, op)
    n, h, w, c = p["in_dims"]
    on, oh, ow, _ = p["out_dims"]
    bh, bw = p["block_h"], p["block_w"]
    x = ins[0].reshape(bh, bw, on, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(on, h * bh, w * bw, c)
    outs[0][...] = x[:, p["top"]:p["top"] + oh, p["left"]:p["left"] + ow, :].reshape(outs[0].shape)


# -- MIRROR_PAD -----------------------------------------------------------------------------
def mirror_pad_geometry(g, op) -> dict:
    """4-D in/out dims (right-aligned), the padding before each dimension and TFLM's offset (REFLECT 1,
    SYMMETRIC 0)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    k = 4 - len(ti.shape)
    pads = np.asarray(g.tensors[op.inputs[1]].data).reshape(-1, 2)
    return dict(in_dims=[1] * k + [int(d) for d in ti.shape], out_dims=[1] * k + [int(d) for d in to.shape],
                before=[0] * k + [int(v) for v in pads[:, 0]], offset=1 if op.options.get("mode", 0) == 0 else 0)


def mirror_pad(g, op, ins, outs) -> None:
    pads = np.asarray(g.tensors[op.inputs[1]].data).reshape(-1, 2).astype(int).tolist()
    mode = "reflect" if op.options.get("mode", 0) == 0 else "symmetric"
    outs[0][...] = np.pad(ins[0], pads, mode=mode).reshape(outs[0].shape)


# -- REVERSE_V2 / BROADCAST_TO ----------------------------------------------------------------
def reverse_axes(g, op) -> list:
    rank = len(g.tensors[op.inputs[0]].shape)
    return sorted({a % rank for a in _const_ints(g, op, 1)})


def reverse_v2(g, op, ins, outs) -> None:
    outs[0][...] = np.flip(ins[0], axis=tuple(reverse_axes(g, op))).reshape(outs[0].shape)


def broadcast_to(g, op, ins, outs) -> None:
    outs[0][...] = np.broadcast_to(ins[0], outs[0].shape)


def strided_geometry(g, op, esize: int) -> tuple:
    """REVERSE_V2 and BROADCAST_TO as bt_transpose_s8's strided gather of bytes: (the byte offset of the
    first element read, out_dims, in_stride), 6-D, the element's bytes innermost."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    out = tuple(int(d) for d in to.shape)
    src = (1,) * (len(out) - len(ti.shape)) + tuple(int(d) for d in ti.shape)
    st = [int(np.prod(src[k + 1:], dtype=np.int64)) * esize for k in range(len(src))]
    base = 0
    if op.opcode == "REVERSE_V2":
        for a in reverse_axes(g, op):
            base += (src[a] - 1) * st[a]
            st[a] = -st[a]
    else:
        st = [0 if src[k] == 1 and out[k] != 1 else st[k] for k in range(len(out))]
    dims, strides = list(out) + [esize], st + [1]
    # merge away size-1 dimensions so that up to 5 dimensions of the tensor fit
    keep = [k for k in range(len(dims)) if dims[k] != 1] or [len(dims) - 1]
    dims, strides = [dims[k] for k in keep], [strides[k] for k in keep]
    pad = 6 - len(dims)
    return base, [1] * pad + dims, [0] * pad + strides


# -- EMBEDDING_LOOKUP ------------------------------------------------------------------------
def embedding_geometry(g, op) -> dict:
    """The constant table as [rows][row bytes]; count ids."""
    tv = g.tensors[op.inputs[1]]
    return dict(rows=int(tv.shape[0]), row_bytes=int(tv.num_elements // max(tv.shape[0], 1)),
                count=int(g.tensors[op.inputs[0]].num_elements))


def embedding_lookup(g, op, ins, outs) -> None:
    ids, table = operands(g, op, ins)
    p = embedding_geometry(g, op)
    ids = np.asarray(ids, np.int64).reshape(-1)
    rows = np.asarray(table).reshape(p["rows"], p["row_bytes"])
    ok = (ids >= 0) & (ids < p["rows"])
    out = np.where(ok[:, None], rows[np.where(ok, ids, 0)], 0)
    outs[0][...] = out.astype(outs[0].dtype).reshape(outs[0].shape)


def fill(g, op, ins, outs) -> None:
    """FILL (TFLM fill.cc): the value's raw code everywhere (no requantisation)."""
    _, value = operands(g, op, ins)
    outs[0][...] = np.asarray(value).reshape(())
