"""Data-movement kernels: TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH (one permutation), SQUEEZE and
EXPAND_DIMS (reshapes), TFLM semantics.

DEPTH_TO_SPACE and SPACE_TO_DEPTH (TFLite's DCR order) are transposes of a 5-D view:
  DEPTH_TO_SPACE  [H, W, b, b, C/b^2] -> (0, 2, 1, 3, 4) -> [H, b, W, b, C/b^2] = [H*b, W*b, C/b^2]
  SPACE_TO_DEPTH  [H/b, b, W/b, b, C] -> (0, 2, 1, 3, 4) -> [H/b, W/b, b, b, C] = [H/b, W/b, C*b^2]
permutation() gives that view for all three, so code generation emits one kernel call for each.
"""

from __future__ import annotations

import numpy as np

from .shape_ops import reshape

squeeze = expand_dims = reshape


def permutation(g, op) -> tuple:
    """(input view shape, perm): the operator is out = transpose(in.reshape(view), perm)."""
    ti = g.tensors[op.inputs[0]]
    if op.opcode == "TRANSPOSE":
        return tuple(ti.shape), tuple(int(p) for p in g.tensors[op.inputs[1]].data.reshape(-1))
    return block_view(op.opcode, ti.shape, int(op.options["block_size"]))


def block_view(opcode: str, shape: tuple, b: int) -> tuple:
    """(view, perm) of DEPTH_TO_SPACE / SPACE_TO_DEPTH on a [1, H, W, C] tensor."""
    _, h, w, c = shape
    if opcode == "DEPTH_TO_SPACE":
        return (h, w, b, b, c // (b * b)), (0, 2, 1, 3, 4)
    return (h // b, b, w // b, b, c), (0, 2, 1, 3, 4)


def permute_geometry(view: tuple, perm: tuple, rank: int = 6) -> tuple:
    """(out_dims, in_strides) padded on the left to `rank`: output element (i_0..i_r) is input element
    sum_k i_k * in_strides[k] (dense row-major input of shape `view`)."""
    st = [int(np.prod(view[k + 1:], dtype=np.int64)) for k in range(len(view))]
    pad = rank - len(view)
    return [1] * pad + [int(view[p]) for p in perm], [0] * pad + [st[p] for p in perm]


def transpose(g, op, ins, outs) -> None:
    view, perm = permutation(g, op)
    outs[0][...] = np.transpose(ins[0].reshape(view), perm).reshape(outs[0].shape)


depth_to_space = space_to_depth = transpose
