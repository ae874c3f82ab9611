"""IF and WHILE as TFLite Micro runs them (model/control.py), each subgraph run with one array per
tensor: the kernels run_unplanned calls. The arena executor runs them in the operator's scratch
buffer instead (plan/arena/execute.py); both copy values in and out, bytes unchanged."""

from __future__ import annotations

import numpy as np

from ..model.control import subgraph_indices
from ..model.ir import NUMPY_DTYPE


def run_subgraph(g, k: int, values: list) -> list:
    """Subgraph k of g run on the arrays `values` (its inputs, in order): copies of its outputs."""
    from . import KERNELS, kernel_inputs  # the package's table names this module's kernels: resolved at use

    s = g.subgraph(k)
    arrays = {}
    for i, v in zip(s.inputs, values):
        t = g.tensors[i]
        arrays[i] = np.array(v, dtype=NUMPY_DTYPE[t.dtype]).reshape(t.shape)

    def get(i):
        return g.tensors[i].data if g.tensors[i].is_const else arrays[i]

    for op in s.operators:
        ins = [get(i) for i in kernel_inputs(s, op)]
        outs = []
        for o in op.outputs:
            t = g.tensors[o]
            arrays[o] = np.zeros(t.shape, dtype=NUMPY_DTYPE[t.dtype])
            outs.append(arrays[o])
        KERNELS[op.opcode](s, op, ins, outs)
    return [np.array(get(i)) for i in s.outputs]


def truth(x) -> bool:
    """A bool tensor's one value."""
    return bool(np.asarray(x).reshape(-1)[0])


def if_(g, op, ins, outs) -> None:
    then, else_ = subgraph_indices(op)
    for y, v in zip(outs, run_subgraph(g, then if truth(ins[0]) else else_, ins[1:])):
        y[...] = v


def while_(g, op, ins, outs) -> None:
    cond, body = subgraph_indices(op)
    values = [np.array(x) for x in ins]
    while truth(run_subgraph(g, cond, values)[0]):
        values = run_subgraph(g, body, values)
    for y, v in zip(outs, values):
        y[...] = v


__all__ = ["run_subgraph", "truth", "if_", "while_"]
