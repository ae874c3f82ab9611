"""Read an int8 TFLite flatbuffer (schema v3) into the graph IR.

The tables on the hot path (model, subgraph, tensors, quantisation, buffers,
operators, operator codes) are read directly from the bytes: each distinct vtable
once, scalars with struct, vectors in one struct call or as numpy views, with the
field slots of TensorFlow's schema.fbs named below (no flatc step in the build).
Option tables, a few fields per operator, go through the generated classes of the
`tflite` package (PyPI). Nothing is trusted: every table, vtable, field, vector
and buffer is checked against the file before it is read, and anything still
raised on a corrupt file becomes a ModelError. tests/test_reader_equiv.py keeps
the generated-accessor reading as the reference the direct reads must match.
"""

from __future__ import annotations

import os
import struct

import numpy as np
from tflite.BuiltinOperator import BuiltinOperator
from tflite.TensorType import TensorType

from ..errors import ModelError, one_line, short
from .ir import NUMPY_DTYPE, Graph, Operator, Quant, Tensor, validate_graph
from .ops import SUPPORTED, check_graph, unsupported_message
from .opdefs import BY_NAME, CUSTOM, OPDEFS
from . import signal, tflite_options
from .signal import STATE_INPUT, STATE_OUTPUT
from .files import read_model_file
from .variables import INIT_OPS, RESOURCE, bind
from .control import CONTROL_SUBGRAPHS

OPCODE_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
TYPE_NAMES = {TensorType.FLOAT32: "float32", TensorType.FLOAT16: "float16", TensorType.INT32: "int32",
              TensorType.UINT8: "uint8", TensorType.INT64: "int64", TensorType.INT16: "int16",
              TensorType.INT8: "int8", TensorType.BOOL: "bool", TensorType.UINT32: "uint32",
              TensorType.UINT64: "uint64"}
TYPE_ENUM = {v: k for k, v in vars(TensorType).items() if not k.startswith("_")}
# Inputs an operator cannot run without (the rest are optional, -1 = absent); checked here so that
# the shape checks never see a missing one.
REQUIRED_INPUTS = {d.name: d.required_inputs for d in OPDEFS if d.required_inputs > 1}
ALL_REQUIRED = tuple(d.name for d in OPDEFS if d.all_required)
# Limits that keep every file under the size limit read or refused within about a second (reading costs
# ~0.1 ms per operator and ~0.2 ms per tensor): a flatbuffer lets entries share one table, so a small file
# can claim millions of operators or tensors. Far above any model a microcontroller runs.
MAX_TENSORS = 1 << 13
MAX_OPERATORS = 1 << 12
MAX_OPERATOR_IO = 1 << 12  # inputs or outputs of one operator, or of the graph
def load(path: str) -> Graph:
    """Read a .tflite file that can plan. Raises ModelError with a one-line message on any problem."""
    return parse(read_model_file(path), name=_name(path), source=path)


def load_any(path: str) -> tuple:
    """(graph, problem) for any well-formed model, including unsupported operators and types; problem
    names (without the path) what would stop it from planning, or is None. For `inspect`."""
    g, issues = read(read_model_file(path), name=_name(path), source=path)
    return g, blocker(g, issues)


def _name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def parse(data: bytes, name: str = "model", source: str = "<bytes>") -> Graph:
    """Bytes -> Graph; raises ModelError naming the first blocking problem, operator support first."""
    g, issues = read(data, name, source)
    problem = blocker(g, issues)
    if problem:
        raise ModelError(f"{source}: {problem}")
    return g


def read(data: bytes, name: str = "model", source: str = "<bytes>") -> tuple:
    """(graph, {tensor index: problem}) of a well-formed model; raises ModelError only when the file
    is not one (corrupt flatbuffer, indices out of range, data that does not fit its tensor)."""
    if len(data) < 16:
        raise ModelError(f"{source}: file is {len(data)} bytes, too short to be a TFLite model (truncated?)")
    if data[4:8] != b"TFL3":
        raise ModelError(f"{source}: not a TFLite model (no 'TFL3' flatbuffer identifier); "
                         f"give a .tflite file made by the TFLite converter")
    try:
        r = _Reader(bytes(data), source)
        with np.errstate(all="ignore"):
            return r.graph(name), r.issues
    except ModelError:
        raise
    except RecursionError:
        raise ModelError(f"{source}: corrupt TFLite flatbuffer (cyclic offsets)") from None
    except (struct.error, IndexError, ValueError, TypeError, OverflowError, AttributeError,
            UnicodeDecodeError, KeyError, MemoryError) as e:
        kind = "read past the end" if isinstance(e, (struct.error, IndexError)) else "inconsistent data"
        raise ModelError(f"{source}: corrupt or truncated TFLite flatbuffer ({kind}); "
                         f"re-export the model with the TFLite converter") from None


def blocker(g: Graph, issues: dict | None = None) -> str | None:
    """The first problem that stops g from planning (without the model path), or None.

    Order: operator support, required operator inputs, then problems
    of tensors that supported operators use (issues: read()'s), the graph's structure and each
    operator's semantic checks (types, shapes). A tensor only an unsupported operator uses never
    blocks reading."""
    for op in g.operators:
        if op.opcode not in SUPPORTED:
            return unsupported_message(op)
    for op in g.operators:
        need = REQUIRED_INPUTS.get(op.opcode, 1)
        ins = op.inputs
        if len(ins) < need or any(t < 0 for t in (ins if op.opcode in ALL_REQUIRED else ins[:need])):
            return f"operator {op.index} ({op.opcode}) lacks a required input (inputs {list(ins)[:8]}, needs {need})"
    if issues:
        used = {t for op in g.operators for t in op.inputs + op.outputs} | set(g.inputs) | set(g.outputs)
        for t in sorted(used & set(issues)):
            return issues[t]
    try:
        with np.errstate(all="ignore"):
            validate_graph(g)
            check_graph(g)
    except ModelError as e:
        return one_line(str(e))
    return None


def _text(raw: bytes) -> str:
    """A name from the file, safe for one-line messages: control characters become '?'."""
    s = raw.decode("utf-8", "replace")
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else "?" for c in s)


# Field slots (vtable byte offsets: 4 + 2 x the field's position in TensorFlow's schema.fbs) of the
# tables read directly; option tables go through the generated classes.
_MODEL = {"version": 4, "operator_codes": 6, "subgraphs": 8, "description": 10, "buffers": 12}
_SUBGRAPH = {"tensors": 4, "inputs": 6, "outputs": 8, "operators": 10}
_TENSOR = {"shape": 4, "type": 6, "buffer": 8, "name": 10, "quantization": 12, "is_variable": 14,
           "sparsity": 16}
_QUANT = {"scale": 8, "zero_point": 10, "quantized_dimension": 16}
_OPERATOR = {"opcode_index": 4, "inputs": 6, "outputs": 8, "builtin_options": 12, "custom_options": 14}
_OPCODE = {"deprecated_builtin_code": 4, "custom_code": 6, "builtin_code": 10}
_BUFFER = {"data": 4, "offset": 6, "size": 8}
_NSLOTS = 8  # vtables are padded to this many slots: absent fields read as offset 0
_I8, _U8, _U16 = struct.Struct("<b").unpack_from, struct.Struct("<B").unpack_from, struct.Struct("<H").unpack_from
_I32, _U32 = struct.Struct("<i").unpack_from, struct.Struct("<I").unpack_from
_U64 = struct.Struct("<Q").unpack_from
_ITEMSIZE = {k: np.dtype(v).itemsize for k, v in NUMPY_DTYPE.items()}


def _quant_params(scale, zp, axis: int, shape: tuple, dtype: str):
    """Quant from the stored scales, zero points (one or one per scale) and quantized_dimension."""
    ns = len(scale)
    if len(zp) == 1 and ns > 1:
        zp = np.repeat(zp, ns)
    if ns > 1 and not (0 <= axis < len(shape) and shape[axis] == ns):
        # TFLite Micro reads per-channel parameters only where they mean something (int8 filters); it
        # ignores quantized_dimension elsewhere, e.g. on a 1-D bias whose converter left axis 3.
        if len(shape) == 1 and shape[0] == ns:
            axis = 0
        elif dtype != "int8":
            return None
    return Quant(scale, zp, axis)


class _Reader:
    """Reads the flatbuffer directly: each vtable is read once (tables of one kind share a few), scalar
    fields with struct, vectors as numpy views or one struct call, every offset and length checked
    against the file before it is used."""

    def __init__(self, buf: bytes, source: str):
        self.buf = buf
        self.n = len(buf)
        self.src = source
        self.issues = {}  # tensor index -> what stops it from planning (blocker() decides if it matters)
        # Entries of vectors a converter never shares (operator inputs/outputs, scales, zero points) must
        # fit in the file together; shared ones would let a small file make us read gigabytes.
        self.budget = self.n
        self.tables = {}  # table position -> (kind, index): operators and tensors are never shared
        self.data = {}  # buffer index -> constant array (tensors that share a buffer share its array)
        self.vtables = {}  # vtable position -> its field offsets, padded to _NSLOTS

    def fail(self, msg: str):
        raise ModelError(f"{self.src}: {msg}")

    def _table(self, pos: int, what: str) -> tuple:
        """(pos, field offsets) of the table at pos; the table and its vtable must lie in the file."""
        if not (0 <= pos <= self.n - 4):
            self.fail(f"corrupt flatbuffer: {what} table lies outside the file (truncated?)")
        vt = pos - _I32(self.buf, pos)[0]
        slots = self.vtables.get(vt)
        if slots is None:
            if not (0 <= vt <= self.n - 4):
                self.fail(f"corrupt flatbuffer: {what} vtable lies outside the file (truncated?)")
            size, obj = _U16(self.buf, vt)[0], _U16(self.buf, vt + 2)[0]
            if size < 4 or size & 1 or vt + size > self.n:
                self.fail(f"corrupt flatbuffer: {what} vtable of {size} bytes does not fit the file (truncated?)")
            slots = struct.unpack_from(f"<{(size - 4) // 2}H", self.buf, vt + 4)
            if any(s >= obj for s in slots if s):
                self.fail(f"corrupt flatbuffer: {what} has a field outside its {obj}-byte table")
            slots = self.vtables[vt] = (obj,) + slots + (0,) * (_NSLOTS - len(slots))
        if pos + slots[0] > self.n:
            self.fail(f"corrupt flatbuffer: {what} table lies outside the file (truncated?)")
        return pos, slots

    def _own_table(self, pos: int, kind: str, i: int) -> tuple:
        """Operators and tensors each have their own table; two entries naming one table is corruption."""
        t = self._table(pos, f"{kind} {i}")
        prev = self.tables.setdefault(pos, (kind, i))
        if prev != (kind, i):
            self.fail(f"corrupt flatbuffer: {kind} {i} and {prev[0]} {prev[1]} are the same table")
        return t

    @staticmethod
    def _at(t: tuple, slot: int) -> int:
        """The position of field `slot` (a vtable byte offset) of table t, or 0 when absent."""
        o = t[1][(slot >> 1) - 1]  # t[1][0] is the object size, t[1][1] the field at vtable byte 4
        return t[0] + o if o else 0

    def _ref(self, t: tuple, slot: int, what: str) -> int:
        """Where the offset field `slot` of t points, or -1 when absent."""
        f = self._at(t, slot)
        if not f:
            return -1
        if f > self.n - 4:
            self.fail(f"corrupt flatbuffer: {what} lies outside the file (truncated?)")
        return f + _U32(self.buf, f)[0]

    def _vector(self, t: tuple, slot: int, elem: int, what: str, cap: int | None = None) -> tuple:
        """(start, count) of the vector field `slot` of t, (0, 0) when absent; count checked against
        the file (it must fit where it lies) and against cap."""
        v = self._ref(t, slot, what)
        if v < 0:
            return 0, 0
        if v > self.n - 4:
            self.fail(f"corrupt flatbuffer: {what} lies outside the file (truncated?)")
        n = _U32(self.buf, v)[0]
        if n * elem > self.n - v - 4:
            self.fail(f"corrupt flatbuffer: {what} claims {n} entries, more than the file holds (truncated?)")
        if cap is not None and n > cap:
            self.fail(f"{what} has {n} entries, more than the {cap} buildtool reads")
        return v + 4, n

    def _tables(self, t: tuple, slot: int, what: str, cap: int | None = None) -> list:
        """Positions of the tables a vector of offsets names (a capped vector: read in one go)."""
        start, n = self._vector(t, slot, 4, what, cap)
        return [start + 4 * k + o for k, o in enumerate(struct.unpack_from(f"<{n}I", self.buf, start))]

    def _entry(self, vec: tuple, k: int) -> int:
        """Position of the table entry k of an uncapped vector of offsets (start, count) names."""
        p = vec[0] + 4 * k
        return p + _U32(self.buf, p)[0]

    def _string(self, t: tuple, slot: int, what: str):
        start, n = self._vector(t, slot, 1, what)
        return self.buf[start:start + n] if start else None

    def _scalar(self, t: tuple, slot: int, get, default=0):
        f = self._at(t, slot)
        return get(self.buf, f)[0] if f else default

    def graph(self, name: str) -> Graph:
        root = _U32(self.buf, 0)[0]
        if root + 4 > self.n:
            self.fail("corrupt flatbuffer: root table outside the file (truncated?)")
        m = self._table(root, "model")
        version = self._scalar(m, _MODEL["version"], _U32)
        if version != 3:
            self.fail(f"TFLite schema version {version} is not supported (need 3)")
        subgraphs = self._vector(m, _MODEL["subgraphs"], 4, "subgraph list")
        if not subgraphs[1]:
            self.fail("model has no subgraphs")
        # Subgraph 0 is the model, as in TFLite Micro; the others only run under control-flow operators:
        # a CALL_ONCE init subgraph that assigns constants to resource variables is evaluated here
        # (model/variables.py); those IF and WHILE run are read into Graph.subgraphs (model/control.py).
        # Operator codes and buffers are read where used: their counts are bounded by the file only.
        opcodes = self._vector(m, _MODEL["operator_codes"], 4, "operator code list")
        codes = {}
        buffers = self._vector(m, _MODEL["buffers"], 4, "buffer list")
        sg = self._table(self._entry(subgraphs, 0), "subgraph")
        tensor_tables = self._tables(sg, _SUBGRAPH["tensors"], "tensor list", MAX_TENSORS)
        ntens = len(tensor_tables)
        ops, handles, calls = self._operators(sg, opcodes, codes, ntens)
        inputs = self._ivec(sg, _SUBGRAPH["inputs"], "subgraph inputs")
        outputs = self._ivec(sg, _SUBGRAPH["outputs"], "subgraph outputs")
        for t in list(inputs) + list(outputs):  # an index out of range is a broken file, for inspect too
            if not (0 <= t < ntens):
                self.fail(f"subgraph input/output tensor index {t} out of range (0..{ntens - 1})")
        tensors = [self._tensor(buffers, pos, i) for i, pos in enumerate(tensor_tables)]
        if handles or calls or any(t.dtype == RESOURCE for t in tensors):
            inits = {}
            for i in sorted(calls):
                inits.update(self._init_values(subgraphs, calls[i], i, opcodes, codes, buffers))
            tensors, ops = bind(tensors, ops, handles, calls, inits, self.fail)
        for op in ops:  # a signal operator's state output persists across invocations (model/signal.py)
            k = STATE_OUTPUT.get(op.opcode)
            if k is not None and k < len(op.outputs) and 0 <= op.outputs[k] < ntens:
                tensors[op.outputs[k]].variable = True
        for op in ops:  # ... and the state TFLite Micro keeps outside the tensors becomes one (an extra input)
            if op.opcode in STATE_INPUT and len(op.inputs) == STATE_INPUT[op.opcode] and op.outputs \
                    and 0 <= op.inputs[0] < len(tensors) and 0 <= op.outputs[0] < len(tensors):
                shape = signal.state_shape(op.opcode, op.options, tensors[op.inputs[0]].shape)
                if shape is not None:
                    tensors.append(Tensor(len(tensors), f"{tensors[op.outputs[0]].name}/state", shape, "int16", None,
                                          None, variable=True))
                    op.inputs = op.inputs + (len(tensors) - 1,)
        desc = self._string(m, _MODEL["description"], "model description")
        subs = {}
        self._control_subgraphs(ops, subgraphs, opcodes, codes, buffers, tensors, subs, (0,))
        return Graph(tensors, ops, inputs, outputs, name=name,
                     description=desc.decode("utf-8", "replace") if desc else "", subgraphs=subs)

    def _operators(self, sg: tuple, opcodes: tuple, codes: dict, ntens: int, base: int = 0, k: int = 0) -> tuple:
        """(operators, VAR_HANDLE names, CALL_ONCE init subgraphs) of subgraph table sg (subgraph k), its
        tensor indices shifted by base (a control-flow subgraph's tensors follow the model's)."""
        ops, handles, calls = [], {}, {}
        ncodes = opcodes[1]
        where = f"subgraph {k} " if k else ""
        for i, pos in enumerate(self._tables(sg, _SUBGRAPH["operators"], f"{where}operator list", MAX_OPERATORS)):
            op = self._own_table(pos, f"{where}operator", i)
            ci = self._scalar(op, _OPERATOR["opcode_index"], _U32)
            if not (0 <= ci < ncodes):
                self.fail(f"{where}operator {i} uses opcode index {ci}, but the model has {ncodes} operator codes")
            if ci not in codes:
                codes[ci] = self._opcode(self._entry(opcodes, ci))
            opcode = codes[ci]
            ins = tuple(self._ivec(op, _OPERATOR["inputs"], f"operator {i} inputs"))
            outs = tuple(self._ivec(op, _OPERATOR["outputs"], f"operator {i} outputs"))
            for t in ins + outs:
                if not (-1 <= t < ntens):
                    self.fail(f"{where}operator {i} ({opcode}) refers to tensor {t}, but the "
                              f"{'subgraph' if k else 'model'} has {ntens} tensors")
            if opcode == "VAR_HANDLE":
                handles[i] = self._var_name(op, i)
            elif opcode == "CALL_ONCE":
                calls[i] = self._option_int(op, i, "CallOnceOptions", "InitSubgraphIndex")
            # Options only of operators we run: an unsupported one is refused by name, not by its options.
            if opcode in SUPPORTED and BY_NAME[opcode].custom:
                raw = self._string(op, _OPERATOR["custom_options"], f"operator {i} custom options")
                opts = signal.read_options(raw, opcode, i, self.fail)
            elif opcode in SUPPORTED:
                table = self._ref(op, _OPERATOR["builtin_options"], f"operator {i} options")
                opts = self._options(table if table >= 0 else None, opcode, i, len(outs))
            else:
                opts = {}
            shift = (lambda ts: tuple(t + base if t >= 0 else t for t in ts)) if base else tuple
            ops.append(Operator(i, opcode, shift(ins), shift(outs), opts))
        return ops, handles, calls

    def _control_subgraphs(self, ops: list, subgraphs: tuple, opcodes: tuple, codes: dict, buffers: tuple,
                           tensors: list, subs: dict, path: tuple) -> None:
        """Read the subgraphs IF and WHILE operators of ops run (model/control.py) into subs, their tensors
        appended to the model's (one index space), recursively; path: the subgraphs being read (a cycle,
        which TFLite Micro would recurse into forever, is refused)."""
        n = subgraphs[1]
        for op in ops:
            for key in CONTROL_SUBGRAPHS.get(op.opcode, ()) if op.opcode in SUPPORTED else ():
                k = op.options.get(key, -1)
                if not (1 <= k < n):
                    self.fail(f"operator {op.index} ({op.opcode}) names subgraph {k}, but the model has subgraphs "
                              f"0..{n - 1} and subgraph 0 is the model itself")
                if k in path:
                    self.fail(f"operator {op.index} ({op.opcode}) runs subgraph {k} inside itself; recursive "
                              f"subgraphs are not supported")
                if k in subs:
                    continue
                sg = self._table(self._entry(subgraphs, k), f"subgraph {k}")
                tables = self._tables(sg, _SUBGRAPH["tensors"], f"subgraph {k} tensor list", MAX_TENSORS)
                base = len(tensors)
                sops, handles, calls = self._operators(sg, opcodes, codes, len(tables), base, k)
                sub_tensors = [self._tensor(buffers, pos, base + j) for j, pos in enumerate(tables)]
                if handles or calls or any(t.dtype == RESOURCE for t in sub_tensors):
                    self.fail(f"subgraph {k} (run by operator {op.index}, {op.opcode}) uses resource variables; "
                              f"buildtool runs them only in the model's subgraph")
                tensors.extend(sub_tensors)
                if len(tensors) > MAX_TENSORS:
                    self.fail(f"the model and its subgraphs hold more than {MAX_TENSORS} tensors")
                io = []
                for slot in ("inputs", "outputs"):
                    v = self._ivec(sg, _SUBGRAPH[slot], f"subgraph {k} {slot}")
                    if any(not (0 <= t < len(tables)) for t in v):
                        self.fail(f"subgraph {k} {slot} refer to a tensor outside 0..{len(tables) - 1}")
                    io.append([t + base for t in v])
                subs[k] = Graph(tensors, sops, io[0], io[1], name=f"subgraph {k}")
                self._control_subgraphs(sops, subgraphs, opcodes, codes, buffers, tensors, subs, path + (k,))

    def _option_table(self, op: tuple, i: int, table: str) -> tuple:
        pos = self._ref(op, _OPERATOR["builtin_options"], f"operator {i} options")
        if pos < 0:
            self.fail(f"operator {i} has no {table} table")
        return self._table(pos, f"operator {i} options")

    def _option_int(self, op: tuple, i: int, table: str, field: str) -> int:
        return self._scalar(self._option_table(op, i, table), tflite_options.vtable_offset(table, field), _I32)

    def _var_name(self, op: tuple, i: int) -> str:
        """A VAR_HANDLE's shared_name: what names its variable (TFLite Micro matches a missing container
        with any, and the converter writes one container)."""
        t = self._option_table(op, i, "VarHandleOptions")
        slot = tflite_options.vtable_offset("VarHandleOptions", "SharedName")
        start, _ = self._vector(t, slot, 1, f"operator {i} name")
        if not start:
            return ""
        # TFLite Micro reads the name as a C string (flatbuffers' c_str(), compared with strcmp): its bytes up
        # to the first NUL, whatever the string's stored length says
        end = self.buf.find(b"\0", start)
        if end < 0:
            self.fail(f"operator {i} (VAR_HANDLE): its shared_name has no terminating NUL byte")
        return _text(bytes(self.buf[start:end]))

    def _init_values(self, subgraphs: tuple, k: int, i: int, opcodes: tuple, codes: dict, buffers: tuple) -> dict:
        """{shared_name: constant Tensor} the CALL_ONCE operator i's init subgraph k assigns, in its order;
        refused unless it only assigns constants to variables (VAR_HANDLE, ASSIGN_VARIABLE)."""
        n = subgraphs[1]
        if not (1 <= k < n):
            self.fail(f"operator {i} (CALL_ONCE) names init subgraph {k}, but the model has subgraphs 0..{n - 1} "
                      f"and subgraph 0 is the model itself")
        where = f"CALL_ONCE init subgraph {k}"
        sg = self._table(self._entry(subgraphs, k), f"subgraph {k}")
        if self._vector(sg, _SUBGRAPH["inputs"], 4, f"{where} inputs")[1] or \
                self._vector(sg, _SUBGRAPH["outputs"], 4, f"{where} outputs")[1]:
            self.fail(f"{where} has inputs or outputs; TFLite Micro runs an init subgraph without any")
        tables = self._tables(sg, _SUBGRAPH["tensors"], f"{where} tensor list", MAX_TENSORS)
        names, values, issues = {}, {}, self.issues
        self.issues = {}  # problems of the init subgraph's tensors are not the model's
        try:
            for j, pos in enumerate(self._tables(sg, _SUBGRAPH["operators"], f"{where} operator list",
                                                 MAX_OPERATORS)):
                op = self._table(pos, f"{where} operator {j}")
                ci = self._scalar(op, _OPERATOR["opcode_index"], _U32)
                if not (0 <= ci < opcodes[1]):
                    self.fail(f"{where} operator {j} uses opcode index {ci}, but the model has {opcodes[1]} "
                              f"operator codes")
                if ci not in codes:
                    codes[ci] = self._opcode(self._entry(opcodes, ci))
                opcode = codes[ci]
                if opcode not in INIT_OPS:
                    self.fail(f"{where} runs {opcode} (operator {j}); buildtool evaluates an init subgraph at build "
                              f"time only when it assigns constants to variables (VAR_HANDLE, ASSIGN_VARIABLE)")
                ins = self._ivec(op, _OPERATOR["inputs"], f"{where} operator {j} inputs")
                outs = self._ivec(op, _OPERATOR["outputs"], f"{where} operator {j} outputs")
                if any(not (0 <= t < len(tables)) for t in ins + outs):
                    self.fail(f"{where} operator {j} ({opcode}) refers to a tensor outside 0..{len(tables) - 1}")
                if opcode == "VAR_HANDLE":
                    if ins or len(outs) != 1:
                        self.fail(f"{where}: VAR_HANDLE (operator {j}) must have no inputs and one output")
                    names[outs[0]] = self._var_name(op, j)
                    continue
                if len(ins) != 2 or outs or ins[0] not in names:
                    self.fail(f"{where}: ASSIGN_VARIABLE (operator {j}) must assign a VAR_HANDLE's variable")
                t = self._tensor(buffers, tables[ins[1]], ins[1], own=False)
                if not t.is_const or t.dtype == RESOURCE or ins[1] in self.issues:
                    self.fail(f"{where} assigns variable '{short(names[ins[0]])}' a computed or unreadable value "
                              f"(tensor {ins[1]}); buildtool evaluates only constants at build time")
                values[names[ins[0]]] = t
        finally:
            self.issues = issues
        return values

    def _opcode(self, pos: int) -> str:
        oc = self._table(pos, "operator code")
        dep = self._scalar(oc, _OPCODE["deprecated_builtin_code"], _I8)
        code = self._scalar(oc, _OPCODE["builtin_code"], _I32)
        # builtin_code below PLACEHOLDER_FOR_GREATER_OP_CODES (127) defers to the deprecated byte field
        code = max(dep if code < BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES else code, dep)
        if code == BuiltinOperator.CUSTOM:
            cc = self._string(oc, _OPCODE["custom_code"], "custom code")
            if cc and _text(cc) in CUSTOM:  # a custom operator buildtool runs (TFLite Micro's signal library)
                return CUSTOM[_text(cc)]
            return "CUSTOM:" + (short(_text(cc)) if cc else "?")
        return OPCODE_NAMES.get(code, f"UNKNOWN_{code}")

    def _ivec(self, t: tuple, slot: int, what: str, cap=MAX_OPERATOR_IO, spend=True) -> list:
        """An int32 vector as a list of ints: its length checked against the file first, read in one go."""
        start, n = self._vector(t, slot, 4, what, cap)
        if n == 0:
            return []
        if spend:
            self._spend(n, 4, what)
        return list(struct.unpack_from(f"<{n}i", self.buf, start))

    def _spend(self, n: int, elem: int, what: str) -> None:
        self.budget -= n * elem
        if self.budget < 0:
            self.fail(f"corrupt flatbuffer: {what} and earlier vectors claim more entries than the file holds")

    def _tensor(self, buffers: tuple, pos: int, i: int, own: bool = True) -> Tensor:
        t = self._own_table(pos, "tensor", i) if own else self._table(pos, f"tensor {i}")
        nm = self._string(t, _TENSOR["name"], f"tensor {i} name")
        name = _text(nm) if nm else f"t{i}"
        ttype = self._scalar(t, _TENSOR["type"], _I8)
        if ttype == TensorType.RESOURCE:  # a variable handle: model/variables.py binds it
            return Tensor(i, name, (), RESOURCE)
        if ttype not in TYPE_NAMES:
            self.fail(f"tensor {i} '{short(name)}' has type {TYPE_ENUM.get(ttype, ttype)}, which buildtool "
                      f"cannot read")
        dtype = TYPE_NAMES[ttype]
        # The stored shape is what TFLite Micro runs with; shape_signature (a -1 batch) is ignored, as it does.
        shape = tuple(self._ivec(t, _TENSOR["shape"], f"tensor {i} shape", 64, spend=False))
        label = f"tensor {i} '{short(name)}'"
        if len(shape) > 6:
            self.issues[i] = f"{label} has rank {len(shape)}; at most 6 is supported"
        elif any(d <= 0 or d > (1 << 24) for d in shape):
            self.issues[i] = f"{label} has shape {list(shape)}, which buildtool cannot plan"
        if self._at(t, _TENSOR["sparsity"]):
            self.issues[i] = f"{label} is sparse; sparse models are not supported"
        quant = self._quant(t, i, name, shape, dtype)
        data = None
        b = self._scalar(t, _TENSOR["buffer"], _U32)
        nbuf = buffers[1]
        if not (0 <= b < max(nbuf, 1)):
            self.fail(f"{label} uses buffer {b}, but the model has {nbuf} buffers")
        if b > 0:
            start, size = self._buffer(self._entry(buffers, b), b)
            if size:
                n = 1
                for d in shape:
                    n *= d
                want = n * _ITEMSIZE[dtype]
                if any(d < 0 for d in shape):
                    self.fail(f"tensor {i} holds constant data but has shape {list(shape)[:8]}")
                if size != want:
                    self.fail(f"tensor {i}: buffer holds {size} bytes, shape {list(shape)[:8]} of {dtype} "
                              f"needs {want} (truncated?)")
                flat = self.data.get((b, dtype))
                if flat is None:
                    flat = self.data[(b, dtype)] = np.frombuffer(self.buf, NUMPY_DTYPE[dtype], n, start).copy()
                data = flat.reshape(shape)
        if self._scalar(t, _TENSOR["is_variable"], _U8):  # TFLM resets the state at start-up whatever the buffer holds
            return Tensor(i, name, shape, dtype, quant, None, variable=True)
        return Tensor(i, name, shape, dtype, quant, data)

    def _quant(self, t, i, name, shape, dtype):
        qpos = self._ref(t, _TENSOR["quantization"], f"tensor {i} quantisation")
        if qpos < 0:
            return None
        q = self._table(qpos, f"tensor {i} quantisation")
        s0, ns = self._vector(q, _QUANT["scale"], 4, "scales", 1 << 24)
        z0, nz = self._vector(q, _QUANT["zero_point"], 8, "zero points", 1 << 24)
        if not ns:
            return None
        self._spend(ns, 4, f"tensor {i} scales")
        self._spend(nz, 8, f"tensor {i} zero points")
        scale = np.frombuffer(self.buf, np.float32, ns, s0)
        zp = np.frombuffer(self.buf, np.int64, nz, z0) if nz else np.zeros(1, np.int64)
        if nz not in (ns, 1):
            self.fail(f"tensor {i} '{short(name)}': {ns} scales but {nz} zero points")
        return _quant_params(scale, zp, self._scalar(q, _QUANT["quantized_dimension"], _I32), shape, dtype)

    def _buffer(self, pos: int, b: int) -> tuple:
        """(start, size) of buffer b's bytes in the file: its data vector, or offset and size past the
        flatbuffer (large models)."""
        buf = self._table(pos, f"buffer {b}")
        off = self._scalar(buf, _BUFFER["offset"], _U64)
        if off > 1:
            size = self._scalar(buf, _BUFFER["size"], _U64)
            if off + size > self.n:
                self.fail(f"buffer {b} lies outside the file (bytes {off}..{off + size} of {self.n}; truncated?)")
            return off, size
        start, n = self._vector(buf, _BUFFER["data"], 1, f"buffer {b}")
        if start and start + n > self.n:
            self.fail(f"buffer {b} lies outside the file (truncated?)")
        return start, n

    def _options(self, table: int | None, opcode: str, i: int, n_outputs: int) -> dict:
        """Normalised options of operator i from its builtin_options table (position or None):
        tflite_options.read, from the operator's row in opdefs."""
        if table is not None:
            self._table(table, f"operator {i} options")
        return tflite_options.read(self, opcode, table, i, n_outputs)

    def _enum(self, table, v, i, what):
        if v not in table:
            self.fail(f"operator {i}: unknown {what} value {v}")
        return table[v]


