"""IF and WHILE as TFLite Micro runs them (model/control.py), each subgraph run with one array per
tensor: the kernels run_unplanned calls. The arena executor runs them in the operator's scratch
buffer instead (plan/arena/execute.py); both copy values in and out, bytes unchanged."""

from __future__ import annotations

import numpy as np

from ..model.control import subgraph_indices, while_loop
from ..model.ir import NUMPY_DTYPE


def run_subgraph(g, k: int, values: list) -> list:
    """Subgraph k of g run on the arrays `values` (its inputs, in order): copies of its outputs."""
    from . import run_arrays  # the package's table names this module's kernels: resolved at use

    s = g.subgraph(k)
    return run_arrays(s, {i: np.array(v, dtype=NUMPY_DTYPE[g.tensors[i].dtype]).reshape(g.tensors[i].shape)
                          for i, v in zip(s.inputs, values)})


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

    def step():
        values[:] = run_subgraph(g, body, values)

    while_loop(op, lambda: truth(run_subgraph(g, cond, values)[0]), step)
    for y, v in zip(outs, values):
        y[...] = v


__all__ = ["run_subgraph", "truth", "if_", "while_"]
