"""Graph IR: the one in-memory form of a model that every later stage reads.

A Graph holds tensors (activations or constants) and operators in the model's
order. Operators refer to tensors by index; index -1 means "optional input
absent". Options are plain dicts with normalised keys (see ops.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .signal import STATE_OUTPUT

DTYPE_BYTES = {"int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "float32": 4, "float16": 2, "bool": 1,
               "uint32": 4, "uint64": 8}  # uint32/uint64: the signal library's energies (model/signal.py)
NUMPY_DTYPE = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
               "float32": np.float32, "float16": np.float16, "bool": np.bool_, "uint32": np.uint32,
               "uint64": np.uint64}


@dataclass
class Quant:
    """Affine quantisation: real = scale * (q - zero_point). Per-tensor when len(scale) == 1."""

    scale: np.ndarray  # float32, shape (n,)
    zero_point: np.ndarray  # int64, shape (n,)
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1

    def __eq__(self, other):
        return (isinstance(other, Quant) and self.axis == other.axis
                and np.array_equal(self.scale, other.scale) and np.array_equal(self.zero_point, other.zero_point))


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple
    dtype: str
    quant: Quant | None = None
    data: np.ndarray | None = None  # constant data, already shaped; None for activations
    # A variable tensor (`is_variable` in the flatbuffer: SVDF/LSTM state) is an activation that an
    # operator updates in place and that persists across invocations. Its start value is TFLite
    # Micro's reset value (state_fill_byte), whatever data the file holds.
    variable: bool = False
    # A resource variable's start value (READ_VARIABLE / ASSIGN_VARIABLE state, model/variables.py): the
    # value its CALL_ONCE init subgraph assigns, or TFLM's fill; None: every byte state_fill_byte.
    init: np.ndarray | None = None
    # What code generation may know of a constant's values when they are absent (a skeleton's zeros stand in
    # for them): model/weight_facts.py's record, None when data holds the real values.
    facts: dict | None = None

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def state_fill_byte(self) -> int:
        """The byte TFLM's ResetVariableTensors memsets a variable tensor with: the zero point of an
        int8 tensor, 0 for every other type."""
        return self.zero_point & 0xFF if self.dtype == "int8" and self.quant is not None else 0

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def nbytes(self) -> int:
        return self.num_elements * DTYPE_BYTES[self.dtype]

    @property
    def scale(self) -> float:
        return float(self.quant.scale[0])

    @property
    def zero_point(self) -> int:
        return int(self.quant.zero_point[0])


@dataclass
class Operator:
    index: int
    opcode: str  # builtin name, e.g. "CONV_2D"
    inputs: tuple  # tensor indices, -1 = absent optional input
    outputs: tuple
    options: dict = field(default_factory=dict)


@dataclass
class Graph:
    tensors: list
    operators: list
    inputs: list  # tensor indices
    outputs: list
    name: str = "model"
    description: str = ""
    # The subgraphs IF and WHILE operators run (model/control.py), by their index in the file: Graphs over
    # this graph's tensor list (one index space), read through subgraph(k).
    subgraphs: dict = field(default_factory=dict)

    def subgraph(self, k: int) -> "Graph":
        """Subgraph k (a branch, condition or loop body) over this graph's tensors and subgraphs."""
        return dataclasses.replace(self.subgraphs[k], tensors=self.tensors, subgraphs=self.subgraphs)

    # -- queries --------------------------------------------------------------
    def tensor(self, i: int) -> Tensor:
        return self.tensors[i]

    def variable_tensors(self) -> list:
        """Indices of the persistent (variable) tensors, sorted."""
        return [t.index for t in self.tensors if t.variable]

    def referenced(self) -> set:
        """Tensor indices some operator or the subgraph inputs/outputs refer to."""
        ref = set(self.inputs) | set(self.outputs)
        for op in self.operators:
            ref.update(i for i in list(op.inputs) + list(op.outputs) if i >= 0)
        return ref

    def activation_tensors(self) -> list:
        return [t for t in self.tensors if not t.is_const]

    def producers(self) -> dict:
        """tensor index -> operator index that writes it."""
        return {o: op.index for op in self.operators for o in op.outputs if o >= 0}

    def consumers(self) -> dict:
        """tensor index -> list of operator indices that read it (in model order, no repeats)."""
        out: dict = {}
        for op in self.operators:
            for i in op.inputs:
                if i >= 0 and not self.tensors[i].is_const:
                    lst = out.setdefault(i, [])
                    if not lst or lst[-1] != op.index:
                        lst.append(op.index)
        return out

    def act_inputs(self, op: Operator) -> list:
        """Non-constant input tensor indices of op, de-duplicated, in order."""
        seen = []
        for i in op.inputs:
            if i >= 0 and not self.tensors[i].is_const and i not in seen:
                seen.append(i)
        return seen

    def params_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors if t.is_const)

    def copy(self) -> "Graph":
        return dataclasses.replace(
            self,
            tensors=[dataclasses.replace(t) for t in self.tensors],
            operators=[dataclasses.replace(o, options=dict(o.options)) for o in self.operators],
            inputs=list(self.inputs), outputs=list(self.outputs),
            subgraphs={k: dataclasses.replace(s, operators=[dataclasses.replace(o, options=dict(o.options))
                                                            for o in s.operators])
                       for k, s in self.subgraphs.items()})

    # -- hashing --------------------------------------------------------------
    def structure_hash(self) -> str:
        """Hash of everything that affects memory planning, never weight values."""
        h = hashlib.sha256()
        for t in self.tensors:
            h.update(repr((t.index, t.shape, t.dtype, t.is_const) + (("variable",) if t.variable else ())).encode())
        for op in self.operators:
            h.update(repr((op.opcode, op.inputs, op.outputs, sorted(op.options.items()))).encode())
        h.update(repr((self.inputs, self.outputs)).encode())
        for k in sorted(self.subgraphs):  # control flow: what each subgraph runs
            s = self.subgraphs[k]
            h.update(repr((k, [(op.opcode, op.inputs, op.outputs, sorted(op.options.items())) for op in s.operators],
                           s.inputs, s.outputs)).encode())
        return h.hexdigest()


def validate_graph(g: Graph) -> None:
    """Structural checks shared by the reader and programmatic builders.

    Raises ModelError naming the first problem found.
    """

    n = len(g.tensors)
    referenced = g.referenced()
    for t in g.tensors:
        if t.dtype not in DTYPE_BYTES:
            raise ModelError(f"tensor {t.index} '{t.name}' has unsupported type {t.dtype}")
        if t.index not in referenced and t.num_elements == 0 and t.data is None:
            continue  # an empty placeholder no operator reads (e.g. an LSTM's unused intermediates)
        if t.variable and t.data is not None:
            raise ModelError(f"tensor {t.index} '{t.name}' is variable but has constant data")
        if any((not isinstance(d, (int, np.integer))) or d <= 0 or d > (1 << 24) for d in t.shape):
            raise ModelError(f"tensor {t.index} '{t.name}' has invalid shape {list(t.shape)}")
        if t.nbytes > (1 << 31):
            raise ModelError(f"tensor {t.index} '{t.name}' is too large ({t.nbytes} bytes)")
        if t.data is not None and t.data.size != t.num_elements:
            raise ModelError(f"tensor {t.index} '{t.name}': constant data has {t.data.size} elements, "
                             f"shape {list(t.shape)} needs {t.num_elements}")
        q = t.quant
        if q is not None:
            if len(q.scale) != len(q.zero_point) and len(q.zero_point) != 1:
                raise ModelError(f"tensor {t.index} '{t.name}': {len(q.scale)} scales but "
                                 f"{len(q.zero_point)} zero points")
            if len(q.scale) > 1:
                if not (0 <= q.axis < len(t.shape)) or t.shape[q.axis] != len(q.scale):
                    raise ModelError(f"tensor {t.index} '{t.name}': {len(q.scale)} per-channel scales "
                                     f"do not match shape {list(t.shape)} on axis {q.axis}")
            if not np.all(np.isfinite(q.scale)) or np.any(q.scale <= 0):
                raise ModelError(f"tensor {t.index} '{t.name}': quantisation scale must be positive and finite")
    for i in list(g.inputs) + list(g.outputs):
        if not (0 <= i < n):
            raise ModelError(f"subgraph input/output tensor index {i} out of range (0..{n - 1})")
    written = set(g.inputs) | set(g.variable_tensors())
    state_written = set()
    for op in g.operators:
        for i in list(op.inputs) + list(op.outputs):
            if not (-1 <= i < n):
                raise ModelError(f"operator {op.index} ({op.opcode}) refers to tensor {i}, "
                                 f"but the model has {n} tensors")
        if op.inputs and all(i < 0 or g.tensors[i].is_const for i in op.inputs):
            raise ModelError(f"operator {op.index} ({op.opcode}) has only constant inputs (a constant the "
                             f"converter did not fold); convert again with constant folding on")
        for i in g.act_inputs(op):
            if i not in written:
                raise ModelError(f"operator {op.index} ({op.opcode}) reads tensor {i} "
                                 f"'{g.tensors[i].name}' before anything produces it")
        for o in op.outputs:
            if o < 0:
                raise ModelError(f"operator {op.index} ({op.opcode}) has an absent output")
            if g.tensors[o].is_const:
                raise ModelError(f"operator {op.index} ({op.opcode}) writes constant tensor {o}")
            if g.tensors[o].variable and STATE_OUTPUT.get(op.opcode) == list(op.outputs).index(o) \
                    and o not in state_written:  # the signal library's state: an output that persists
                state_written.add(o)
                continue
            if g.tensors[o].variable:
                raise ModelError(f"operator {op.index} ({op.opcode}) has variable tensor {o} as an output; "
                                 f"state tensors are operator inputs")
            if o in written:
                raise ModelError(f"tensor {o} is written twice (operator {op.index})")
            written.add(o)
    for o in g.outputs:
        if o not in written and not g.tensors[o].is_const:
            raise ModelError(f"subgraph output tensor {o} is never produced")


def sub_graph(g: Graph, chosen: list, name: str) -> tuple:
    """The operators `chosen` (in order) alone: their tensors (constants kept); as inputs the activations they
    read and do not make, as outputs those they make that another operator or the graph's outputs read."""
    made = [o for op in chosen for o in op.outputs]
    outside = {i for op in g.operators if op not in chosen for i in op.inputs} | set(g.outputs)
    outs = [o for o in made if o in outside]
    ins = list(dict.fromkeys(i for op in chosen for i in op.inputs
                             if i >= 0 and not g.tensors[i].is_const and i not in made))
    used = list(dict.fromkeys([i for op in chosen for i in op.inputs if i >= 0] + made))
    new = {old: k for k, old in enumerate(used)}
    tensors = [dataclasses.replace(g.tensors[i], index=new[i]) for i in used]
    operators = [dataclasses.replace(op, index=k, inputs=tuple(new[i] if i >= 0 else -1 for i in op.inputs),
                                     outputs=tuple(new[o] for o in op.outputs), options=dict(op.options))
                 for k, op in enumerate(chosen)]
    return Graph(tensors, operators, [new[i] for i in ins], [new[o] for o in outs], name=name), ins, outs
