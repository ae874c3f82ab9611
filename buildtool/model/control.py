"""Control flow: IF and WHILE, which run other subgraphs of the model, as TFLite Micro runs them.

The reader reads each subgraph an IF or WHILE names into Graph.subgraphs (its tensors appended to the
model's, one index space: Graph.subgraph(k)). IF(cond, x...) copies x into the inputs of its then
(cond true) or else subgraph, runs it and copies its outputs to its own; WHILE(x...) starts from x,
runs its cond subgraph on the values and, while that gives true, its body subgraph, whose outputs
become the values; its outputs are the last values (TFLite Micro's byte copies, so no rescaling:
each subgraph's inputs and outputs have the operator's types and shapes). The planner plans each
subgraph as an arena of its own, placed in a scratch buffer of the operator live at its step only
(plan/arena/planner.py); codegen makes each subgraph a static C function (codegen/control_c.py).
"""

from __future__ import annotations

import contextlib
import contextvars

from ..errors import ModelError, short
from .ir import validate_graph

# the options naming an operator's subgraphs (IfOptions, WhileOptions), in the order they run
CONTROL_SUBGRAPHS = {"IF": ("then_subgraph", "else_subgraph"), "WHILE": ("cond_subgraph", "body_subgraph")}
TYPES = ("bool", "int8", "int16", "int32", "float32")


def subgraph_indices(op) -> tuple:
    """The subgraphs op runs (none for an operator that is not IF or WHILE)."""
    return tuple(op.options[k] for k in CONTROL_SUBGRAPHS.get(op.opcode, ()))


def _need(cond: bool, op, what: str) -> None:
    if not cond:
        raise ModelError(f"operator {op.index} ({op.opcode}): {what}")


def _sub(g, op, k):
    _need(k in g.subgraphs, op, f"subgraph {k} was not read")
    return g.subgraph(k)


def _same(g, op, mine: list, theirs: list, what: str) -> None:
    """The operator's tensors `mine` and a subgraph's `theirs` hold the same types and shapes."""
    _need(len(mine) == len(theirs), op, f"has {len(mine)} {what.split(' ')[0]}s, {what} has {len(theirs)}")
    for k, (a, b) in enumerate(zip(mine, theirs)):
        ta, tb = g.tensors[a], g.tensors[b]
        _need(ta.dtype in TYPES, op, f"tensor '{short(ta.name)}' is {ta.dtype}; control flow carries "
                                     f"{', '.join(TYPES)}")
        _need((ta.dtype, tuple(ta.shape)) == (tb.dtype, tuple(tb.shape)), op,
              f"{what.split(' ')[0]} {k} is {ta.dtype} {list(ta.shape)} but {what} {k} is {tb.dtype} "
              f"{list(tb.shape)}; TFLite Micro copies the bytes")


def check_subgraph(g, k: int) -> None:
    """Subgraph k's structure and every operator's checks; its variable tensors (state) are refused."""
    from .ops import check_op  # ops names this module's checks in opdefs: imported at use, no cycle

    s = g.subgraph(k)
    try:
        if not s.outputs:
            raise ModelError("has no outputs")
        for i in s.inputs:
            if g.tensors[i].is_const:
                raise ModelError(f"input tensor {i} is a constant")
        validate_graph(s)
        for op in s.operators:
            if any(i >= 0 and g.tensors[i].variable for i in op.inputs + op.outputs):
                raise ModelError(f"operator {op.index} ({op.opcode}) keeps state; buildtool keeps state only in "
                                 f"the model's subgraph")
            check_op(s, op)
    except ModelError as e:
        raise ModelError(f"subgraph {k}: {e}") from None


def _cond(g, op, i: int, what: str) -> None:
    t = g.tensors[i]
    _need(t.dtype == "bool" and t.num_elements == 1, op, f"{what} '{short(t.name)}' must be one bool, "
                                                         f"is {t.dtype} {list(t.shape)}")


def check_if(g, op) -> None:
    _need(len(op.inputs) >= 1 and op.inputs[0] >= 0, op, "needs a condition input")
    _need(all(i >= 0 for i in op.inputs), op, "has an absent input")
    _cond(g, op, op.inputs[0], "its condition")
    for k in subgraph_indices(op):
        s = _sub(g, op, k)
        _same(g, op, list(op.inputs[1:]), list(s.inputs), f"input of subgraph {k} input")
        _same(g, op, list(op.outputs), list(s.outputs), f"output of subgraph {k} output")
        check_subgraph(g, k)


def check_while(g, op) -> None:
    _need(all(i >= 0 for i in op.inputs) and op.inputs, op, "needs its loop values as inputs")
    c, b = (_sub(g, op, k) for k in subgraph_indices(op))
    kc, kb = subgraph_indices(op)
    _same(g, op, list(op.inputs), list(op.outputs), "input of its output")
    _same(g, op, list(op.inputs), list(c.inputs), f"input of subgraph {kc} input")
    _same(g, op, list(op.inputs), list(b.inputs), f"input of subgraph {kb} input")
    _same(g, op, list(op.inputs), list(b.outputs), f"input of subgraph {kb} output")
    _need(len(c.outputs) == 1, op, f"its cond subgraph {kc} must have one output")
    _cond(g, op, c.outputs[0], f"cond subgraph {kc}'s output")
    check_subgraph(g, kc)
    check_subgraph(g, kb)


# How many times a WHILE may run its body: TFLite Micro has no bound, so a loop whose condition never turns
# false would never end. The numpy executors stop at the bound run --max-iterations sets (this default:
# a trivial body costs about 1 ms an iteration there); the firmware at BT_MAX_ITERATIONS, a define of
# model.c (codegen/control_c.py: FIRMWARE_MAX_ITERATIONS unless the build defines it), where model_invoke
# then returns ITERATION_LIMIT_STATUS.
DEFAULT_MAX_ITERATIONS = 10_000
FIRMWARE_MAX_ITERATIONS = 1_000_000
ITERATION_LIMIT_STATUS = 5
_bound = contextvars.ContextVar("bt_max_iterations", default=DEFAULT_MAX_ITERATIONS)


class IterationLimit(ModelError):
    """A WHILE whose condition still held after its bound of iterations."""


@contextlib.contextmanager
def iteration_bound(n: int):
    """Inside, a WHILE run by the numpy executors stops after n iterations with IterationLimit."""
    token = _bound.set(int(n))
    try:
        yield
    finally:
        _bound.reset(token)


def while_loop(op, cond, body) -> None:
    """Run body() while cond() holds, as TFLite Micro's WHILE does, at most the bound's number of times."""
    bound = _bound.get()
    for _ in range(bound):
        if not cond():
            return
        body()
    if cond():
        raise IterationLimit(f"operator {op.index} (WHILE) ran {bound:,} iterations and its condition still "
                             f"holds: a loop that never ends? (a longer one: raise --max-iterations)")


__all__ = ["CONTROL_SUBGRAPHS", "subgraph_indices", "check_if", "check_while", "check_subgraph",
           "DEFAULT_MAX_ITERATIONS", "FIRMWARE_MAX_ITERATIONS", "ITERATION_LIMIT_STATUS", "IterationLimit",
           "iteration_bound", "while_loop"]
