"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) and CALL_ONCE, as TFLite Micro runs them.

TensorFlow's converter writes a tf.Variable as a VAR_HANDLE (a resource tensor naming the variable by
container and shared_name) that READ_VARIABLE copies out of and ASSIGN_VARIABLE copies into, plus a
CALL_ONCE whose init subgraph assigns each variable its initial value on the first invocation.
TFLite Micro keeps each variable in a persistent buffer: the first ASSIGN_VARIABLE's Prepare allocates
it and fills every byte with that value's int8 zero point, READ copies the buffer's bytes, ASSIGN
overwrites them, both without rescaling.

The reader (`bind`) turns this into the IR's variable tensors: each variable becomes one variable
tensor (the first VAR_HANDLE's output slot; the state SVDF keeps, in a persistent buffer of the plan),
READ_VARIABLE(var) -> value and ASSIGN_VARIABLE(var, value) take it as their first input, and
VAR_HANDLE and CALL_ONCE are gone. An init subgraph is evaluated at build time into the variable's
start value (`Tensor.init`) when it only assigns constants (VAR_HANDLE + ASSIGN_VARIABLE of constant
tensors); anything else is refused. Without one, the start value is TFLM's fill. The plan must keep
each variable's reads and assignments in the model's order (`order_edges`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, short
from .ir import NUMPY_DTYPE, Operator, Tensor

RESOURCE = "resource"  # the reader's dtype of a RESOURCE tensor until bind() replaces it
ACCESS = ("READ_VARIABLE", "ASSIGN_VARIABLE")
INIT_OPS = ("VAR_HANDLE", "ASSIGN_VARIABLE")  # what an init subgraph may run to be evaluated at build time


def _fail(what: str):
    raise ModelError(what)


def bind(tensors: list, ops: list, handles: dict, calls: dict, inits: dict, fail=_fail) -> tuple:
    """(tensors, operators) with resource variables as variable tensors.

    handles: {operator index: shared_name} of the VAR_HANDLE operators; calls: {operator index: init
    subgraph} of the CALL_ONCE operators; inits: {shared_name: constant Tensor} what the init subgraphs
    assign (the last assignment of a name wins, as they run in order). fail(msg) raises ModelError."""
    var_of, by_name = {}, {}  # resource tensor -> variable tensor; shared_name -> variable tensor
    for op in ops:
        if op.opcode == "VAR_HANDLE":
            if op.inputs or len(op.outputs) != 1 or tensors[op.outputs[0]].dtype != RESOURCE:
                fail(f"operator {op.index} (VAR_HANDLE) must have no inputs and one resource tensor output")
            var_of[op.outputs[0]] = by_name.setdefault(handles[op.index], op.outputs[0])
    first = min((op.index for op in ops if op.opcode in ACCESS), default=len(ops))
    for i in sorted(calls):
        if i > first:
            fail(f"operator {i} (CALL_ONCE) runs after operator {first} ({ops[first].opcode}) used a variable; "
                 f"buildtool evaluates an init subgraph only when it runs before every variable access")
    uses = {}  # variable tensor -> [(operator, value tensor)] in model order
    for op in ops:
        if op.opcode in ACCESS:
            n_in, n_out = (1, 1) if op.opcode == "READ_VARIABLE" else (2, 0)
            if len(op.inputs) != n_in or len(op.outputs) != n_out:
                fail(f"operator {op.index} ({op.opcode}) needs {n_in} input(s) and {n_out} output(s), "
                     f"has {len(op.inputs)} and {len(op.outputs)}")
            h = op.inputs[0]
            if h not in var_of:
                fail(f"operator {op.index} ({op.opcode}): input tensor {h} is not a variable handle that a "
                     f"VAR_HANDLE of the model's subgraph makes")
            value = op.outputs[0] if n_out else op.inputs[1]
            if value < 0 or tensors[value].dtype == RESOURCE:
                fail(f"operator {op.index} ({op.opcode}): its value tensor {value} must be a tensor of values")
            uses.setdefault(var_of[h], []).append((op, value))
        elif op.opcode not in ("VAR_HANDLE", "CALL_ONCE"):
            for t in op.inputs + op.outputs:
                if t >= 0 and tensors[t].dtype == RESOURCE:
                    fail(f"operator {op.index} ({op.opcode}) uses resource tensor {t}; only READ_VARIABLE and "
                         f"ASSIGN_VARIABLE may")
    new = list(tensors)
    name_of = {v: k for k, v in by_name.items()}
    for v, lst in uses.items():
        name = name_of[v]
        reads = [tensors[x] for op, x in lst if op.opcode == "READ_VARIABLE"]
        assigns = [tensors[x] for op, x in lst if op.opcode == "ASSIGN_VARIABLE"]
        like = tensors[lst[0][1]]  # the variable holds what its first user reads or writes
        quant = (reads or assigns)[0].quant
        dtype, shape = like.dtype, tuple(like.shape)
        if dtype not in NUMPY_DTYPE:
            fail(f"variable '{short(name)}' holds {dtype} values, which buildtool cannot read")
        c = inits.get(name)
        if c is not None:
            if c.dtype != dtype or tuple(c.shape) != shape:
                fail(f"variable '{short(name)}': its CALL_ONCE init subgraph assigns {c.dtype} {list(c.shape)}, "
                     f"the model uses it as {dtype} {list(shape)}")
            init = np.array(c.data, dtype=NUMPY_DTYPE[dtype]).reshape(shape)
        elif assigns:
            # TFLM's Allocate: every byte the int8 zero point of the first assigned value
            zp = int(assigns[0].quant.zero_point[0]) if assigns[0].quant is not None else 0
            n = int(np.prod(shape, dtype=np.int64)) * np.dtype(NUMPY_DTYPE[dtype]).itemsize
            init = np.full(n, zp & 0xFF, np.uint8).view(NUMPY_DTYPE[dtype]).reshape(shape)
        else:
            fail(f"variable '{short(name)}' is read but never assigned (no ASSIGN_VARIABLE, no CALL_ONCE init "
                 f"subgraph); TFLite Micro cannot run it")
        new[v] = Tensor(v, name, shape, dtype, quant, None, variable=True, init=init)
    for i, t in enumerate(new):
        if t.dtype == RESOURCE:  # a handle of a variable nobody uses, or a second handle of one
            new[i] = Tensor(i, t.name, (0,), "int8")
    kept = []
    for op in ops:
        if op.opcode in ("VAR_HANDLE", "CALL_ONCE"):
            continue
        ins = (var_of[op.inputs[0]],) + tuple(op.inputs[1:]) if op.opcode in ACCESS else op.inputs
        kept.append(Operator(len(kept), op.opcode, ins, op.outputs, op.options))
    return new, kept


def resource_variables(g) -> list:
    """Variable tensors READ_VARIABLE / ASSIGN_VARIABLE use (the writer writes them as VAR_HANDLEs), sorted."""
    return sorted({op.inputs[0] for op in g.operators if op.opcode in ACCESS and op.inputs and op.inputs[0] >= 0})


def start_value(t) -> np.ndarray:
    """A variable tensor's start value: Tensor.init, or every byte its state_fill_byte."""
    if t.init is not None:
        return np.asarray(t.init, dtype=NUMPY_DTYPE[t.dtype]).reshape(t.shape)
    return np.full(t.nbytes, t.state_fill_byte, np.uint8).view(NUMPY_DTYPE[t.dtype]).reshape(t.shape)


def order_edges(g) -> list:
    """(before, after) operator pairs the data edges do not imply: per variable, an assignment runs after
    every earlier access of it and before every later one (a read sees the value the model order gives)."""
    last_assign, since, edges = {}, {}, []
    for op in g.operators:
        if op.opcode not in ACCESS or not op.inputs:
            continue
        v = op.inputs[0]
        if v in last_assign:
            edges.append((last_assign[v], op.index))
        if op.opcode == "ASSIGN_VARIABLE":
            edges.extend((r, op.index) for r in since.get(v, []))
            last_assign[v], since[v] = op.index, []
        else:
            since.setdefault(v, []).append(op.index)
    return edges


# -- checks (opdefs' check column) ----------------------------------------------------------------------
def _need(cond: bool, op, what: str) -> None:
    if not cond:
        raise ModelError(f"operator {op.index} ({op.opcode}): {what}")


def _value(g, op, var, t, what: str) -> None:
    _need(t.dtype in ("int8", "int16"), op, f"{what} '{short(t.name)}' is {t.dtype}; buildtool runs int8 and "
                                            f"int16 variables (convert with variable quantisation on)")
    _need(t.dtype == var.dtype and tuple(t.shape) == tuple(var.shape), op,
          f"{what} is {t.dtype} {list(t.shape)} but variable '{short(var.name)}' is {var.dtype} {list(var.shape)}")


def _variable(g, op):
    _need(len(op.inputs) >= 1 and op.inputs[0] >= 0 and g.tensors[op.inputs[0]].variable, op,
          "its first input must be a variable (a VAR_HANDLE's resource)")
    return g.tensors[op.inputs[0]]


def check_read_variable(g, op) -> None:
    var = _variable(g, op)
    _need(len(op.inputs) == 1 and len(op.outputs) == 1, op, "needs 1 input and 1 output")
    _value(g, op, var, g.tensors[op.outputs[0]], "output")


def check_assign_variable(g, op) -> None:
    var = _variable(g, op)
    _need(len(op.inputs) == 2 and not op.outputs and op.inputs[1] >= 0, op, "needs 2 inputs and no outputs")
    _need(op.inputs[1] != op.inputs[0], op, "assigns a variable to itself")
    _value(g, op, var, g.tensors[op.inputs[1]], "value")
