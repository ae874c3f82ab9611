"""Reference int8 kernels with TFLite Micro's exact integer semantics.

KERNELS maps an opcode to fn(graph, op, ins, outs, **band): `ins` are the arrays of
kernel_inputs(graph, op) (activation inputs; opdefs const_operands get constants too), `outs` its output
arrays, written in place. The sliding-window kernels (CONV_2D,
DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D) also accept y0, y1, in_row0 to
compute output rows [y0, y1) from an input band that starts at image row in_row0
(band_input_rows says which rows that band must hold). Element-wise kernels work
on any matching slices, so a band of rows needs no extra arguments.
"""

from __future__ import annotations

import numpy as np

from ..model import opdefs
from ..model.ir import NUMPY_DTYPE
from .prepare import window

KERNELS = opdefs.table("kernel")
# Sliding-window kernels, which also compute a band of output rows.
BANDED = opdefs.names(tiling="windowed")


def band_input_rows(g, op, y0: int, y1: int) -> tuple:
    """Input image rows [lo, hi) a BANDED op needs to compute its output rows [y0, y1)."""
    return window(g, op).input_rows(y0, y1)


def kernel_inputs(g, op) -> list:
    """Tensor indices a kernel receives in `ins`: the activation inputs in operator order.

    ADD, MUL, SUB and CONCATENATION (opdefs const_operands) receive every operand, constants included (their
    data comes from the graph); repeated inputs are passed once per position.
    """
    if opdefs.BY_NAME[op.opcode].const_operands:
        return [i for i in op.inputs if i >= 0]
    return [i for i in op.inputs if i >= 0 and not g.tensors[i].is_const]


def run_arrays(g, arrays: dict) -> list:
    """g's operators in order on one array per tensor (arrays: tensor -> array, g's inputs given; each output
    is made here, zeroed; constants come from the graph): copies of g's outputs. g may be a subgraph
    (Graph.subgraph): its tensors share the model's indices."""
    def get(i):
        t = g.tensors[i]
        return t.data if t.is_const else arrays[i]

    for op in g.operators:
        ins = [get(i) for i in kernel_inputs(g, op)]
        outs = []
        for o in op.outputs:
            t = g.tensors[o]
            arrays[o] = np.zeros(t.shape, dtype=NUMPY_DTYPE[t.dtype])
            outs.append(arrays[o])
        KERNELS[op.opcode](g, op, ins, outs)
    return [np.array(get(i)) for i in g.outputs]


__all__ = ["KERNELS", "BANDED", "kernel_inputs", "band_input_rows", "run_arrays"]
