"""Data-movement kernels: PAD (and PADV2), RESHAPE, CONCATENATION, SPLIT, STRIDED_SLICE, SLICE, SPLIT_V, PACK,
UNPACK (byte copies, TFLM semantics)."""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..model.ops import slice_bounds


def pad(g, op, ins, outs) -> None:
    """Pads with the constant input 2 when given, else with the output zero point."""
    p = g.tensors[op.inputs[1]].data.reshape(-1, 2).astype(np.int64)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        value = int(g.tensors[op.inputs[2]].data.reshape(-1)[0])
    else:
        value = g.tensors[op.outputs[0]].zero_point
    x = ins[0]
    inner = tuple(slice(int(p[d, 0]), int(p[d, 0]) + x.shape[d]) for d in range(x.ndim))
    out = np.full(outs[0].shape, value, dtype=outs[0].dtype)
    out[inner] = x
    outs[0][...] = out


def reshape(g, op, ins, outs) -> None:
    if not _same_memory(ins[0], outs[0]):
        outs[0][...] = ins[0].reshape(outs[0].shape)


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.size == b.size and a.flags.c_contiguous and b.flags.c_contiguous)


def concatenation(g, op, ins, outs) -> None:
    """Copies each input into its slice of the output unless it already lives there (a planned view)."""
    out = outs[0]
    axis = op.options.get("axis", 0) % out.ndim
    start = 0
    for x in ins:
        idx = tuple(slice(start, start + x.shape[axis]) if d == axis else slice(None) for d in range(out.ndim))
        dst = out[idx]
        if not (dst.__array_interface__["data"][0] == x.__array_interface__["data"][0]
                and dst.strides == x.strides):
            dst[...] = x
        start += x.shape[axis]


def split(g, op, ins, outs) -> None:
    x = ins[0]
    axis = int(g.tensors[op.inputs[0]].data.reshape(-1)[0]) % x.ndim
    parts = np.split(x, len(outs), axis=axis)
    for o, part in zip(outs, parts):
        o[...] = part


def strided_slice(g, op, ins, outs) -> None:
    """TFLM's strided_slice_logic; ellipsis and new-axis masks are not supported."""
    x = ins[0]
    o = op.options
    if o.get("ellipsis_mask", 0) or o.get("new_axis_mask", 0):
        raise ModelError(f"operator {op.index} (STRIDED_SLICE) uses an ellipsis or new-axis mask, which is not "
                         f"supported; re-export the model without them")
    begin, end, strides = (g.tensors[op.inputs[k]].data.reshape(-1).astype(np.int64) for k in (1, 2, 3))
    idx = []
    for d in range(x.ndim):
        if d >= len(begin):
            idx.append(slice(None))
            continue
        st = int(strides[d])
        b, e = slice_bounds(x.shape[d], int(begin[d]), int(end[d]), st, o.get("begin_mask", 0) >> d & 1,
                             o.get("end_mask", 0) >> d & 1, o.get("shrink_axis_mask", 0) >> d & 1,
                             o.get("offset", False))
        idx.append(np.arange(b, e, st))
    out = x[np.ix_(*idx)]
    outs[0][...] = out.reshape(outs[0].shape)


def slice_bounds_v1(g, op) -> list:
    """SLICE's [begin, end) per axis: size -1 runs to the end (TFLM slice.cc)."""
    shape = g.tensors[op.inputs[0]].shape
    begin, size = (g.tensors[op.inputs[k]].data.reshape(-1).astype(np.int64) for k in (1, 2))
    return [(int(b), int(n) if s < 0 else int(b + s)) for b, s, n in zip(begin, size, shape)]


def slice_(g, op, ins, outs) -> None:
    idx = tuple(slice(b, e) for b, e in slice_bounds_v1(g, op))
    outs[0][...] = ins[0][idx].reshape(outs[0].shape)


def split_v(g, op, ins, outs) -> None:
    x = ins[0]
    axis = int(g.tensors[op.inputs[2]].data.reshape(-1)[0]) % x.ndim
    start = 0
    for o in outs:
        n = o.shape[axis] if o.ndim == x.ndim else 1
        o[...] = np.take(x, np.arange(start, start + n), axis=axis).reshape(o.shape)
        start += n


def pack(g, op, ins, outs) -> None:
    axis = op.options.get("axis", 0) % outs[0].ndim
    outs[0][...] = np.stack(ins, axis=axis)


def unpack(g, op, ins, outs) -> None:
    x = ins[0]
    axis = op.options.get("axis", 0) % x.ndim
    for k, o in enumerate(outs):
        o[...] = np.take(x, k, axis=axis).reshape(o.shape)
