"""Data-movement kernels: PAD, RESHAPE, CONCATENATION, SPLIT, STRIDED_SLICE (byte copies, TFLM semantics)."""

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
