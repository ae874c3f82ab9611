"""Write the graph IR as an int8 TFLite flatbuffer (schema v3) that TFLite Micro loads.

The inverse of tflite_reader: it uses the same generated schema functions of the
`tflite` package on the flatbuffers runtime, so no schema copy is kept. The file
has one subgraph (and a CALL_ONCE init subgraph when it has resource variables: model/variables.py), no
metadata and no signature defs; buffer 0 is the empty
sentinel, every constant has its own buffer with data aligned to 16 bytes, and
activations point at buffer 0. Output bytes depend only on the graph.
"""

from __future__ import annotations

import dataclasses

import flatbuffers
import numpy as np
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite.TensorType import TensorType

from ..errors import ModelError
from ..fsutil import write_atomic
from . import signal, tflite_options
from .control import CONTROL_SUBGRAPHS
from .signal import STATE_INPUT, STATE_OUTPUT
from .fold_pad import unfold_pads
from .ir import NUMPY_DTYPE, Graph
from .opdefs import OPDEFS
from .variables import resource_variables, start_value

TYPE_CODES = {"float32": TensorType.FLOAT32, "float16": TensorType.FLOAT16, "int32": TensorType.INT32,
              "uint8": TensorType.UINT8, "int64": TensorType.INT64, "int16": TensorType.INT16,
              "int8": TensorType.INT8, "bool": TensorType.BOOL, "uint32": TensorType.UINT32,
              "uint64": TensorType.UINT64}
DATA_ALIGN = 16
CUSTOM_CODE = {d.name: d.custom for d in OPDEFS if d.custom}


def serialize(g: Graph) -> bytes:
    """The graph as .tflite bytes (a folded PAD written back as the PAD it was: fold_pad.unfold_pads).
    Raises ModelError for an opcode or option the schema cannot hold."""
    return _Writer(_strip_state(unfold_pads(g))).build()


def _strip_state(g: Graph) -> Graph:
    """g without the state inputs the reader gave the signal operators TFLite Micro keeps state for outside
    the tensors (signal.STATE_INPUT): those inputs dropped, the tensors left out and the rest renumbered."""
    hidden = {i for op in g.operators if op.opcode in STATE_INPUT for i in op.inputs[STATE_INPUT[op.opcode]:]}
    if not hidden:
        return g
    keep = [t for t in g.tensors if t.index not in hidden]
    new = {t.index: k for k, t in enumerate(keep)}

    def m(i):
        return new[i] if i >= 0 else i

    ops = [dataclasses.replace(op, inputs=tuple(m(i) for i in op.inputs[:STATE_INPUT.get(op.opcode, len(op.inputs))]),
                               outputs=tuple(m(i) for i in op.outputs)) for op in g.operators]
    return dataclasses.replace(g, tensors=[dataclasses.replace(t, index=new[t.index]) for t in keep], operators=ops,
                               inputs=[m(i) for i in g.inputs], outputs=[m(i) for i in g.outputs])


def save(g: Graph, path: str) -> None:
    """Write atomically: a reader never sees a half-written file."""

    write_atomic(path, serialize(g))


class _Writer:
    def __init__(self, g: Graph):
        self.g = g
        self.b = flatbuffers.Builder(1024)
        self.state = {op.outputs[STATE_OUTPUT[op.opcode]] for op in g.operators if op.opcode in STATE_OUTPUT}

    # -- vectors --------------------------------------------------------------
    def _ints(self, start_fn, values, width=4):
        b = self.b
        start_fn(b, len(values))
        for v in reversed(list(values)):
            (b.PrependInt32 if width == 4 else b.PrependInt64)(int(v))
        return b.EndVector()

    def _floats(self, start_fn, values):
        b = self.b
        start_fn(b, len(values))
        for v in reversed(list(values)):
            b.PrependFloat32(float(v))
        return b.EndVector()

    def _offsets(self, start_fn, offs):
        b = self.b
        start_fn(b, len(offs))
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    def _bytes(self, payload: bytes):
        b = self.b
        b.StartVector(1, len(payload), DATA_ALIGN)
        b.head -= len(payload)
        b.Bytes[b.head:b.head + len(payload)] = payload
        b.vectorNumElems = len(payload)
        return b.EndVector()

    # -- tables ---------------------------------------------------------------
    def _quant(self, q):
        sc = self._floats(tflite.QuantizationParametersStartScaleVector, q.scale)
        zp = self._ints(tflite.QuantizationParametersStartZeroPointVector, q.zero_point, width=8)
        tflite.QuantizationParametersStart(self.b)
        tflite.QuantizationParametersAddScale(self.b, sc)
        tflite.QuantizationParametersAddZeroPoint(self.b, zp)
        tflite.QuantizationParametersAddQuantizedDimension(self.b, int(q.axis))
        return tflite.QuantizationParametersEnd(self.b)

    def _resource(self, name: str):
        """A RESOURCE tensor: a variable handle (VAR_HANDLE's output), shape []."""
        b = self.b
        nm = b.CreateString(name)
        shape = self._ints(tflite.TensorStartShapeVector, [])
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, TensorType.RESOURCE)
        tflite.TensorAddBuffer(b, 0)
        tflite.TensorAddName(b, nm)
        return tflite.TensorEnd(b)

    def _plain_op(self, opcode_index: int, ins, outs, opt_type=None, opts=None):
        """An operator the IR does not hold (VAR_HANDLE, CALL_ONCE, the init subgraph's ASSIGN_VARIABLE)."""
        b = self.b
        i = self._ints(tflite.OperatorStartInputsVector, ins)
        o = self._ints(tflite.OperatorStartOutputsVector, outs)
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, opcode_index)
        tflite.OperatorAddInputs(b, i)
        tflite.OperatorAddOutputs(b, o)
        if opts is not None:
            tflite.OperatorAddBuiltinOptionsType(b, opt_type)
            tflite.OperatorAddBuiltinOptions(b, opts)
        return tflite.OperatorEnd(b)

    def _var_handle(self, code: int, out: int, name: str):
        nm = self.b.CreateString(name)
        tflite.VarHandleOptionsStart(self.b)
        tflite.VarHandleOptionsAddSharedName(self.b, nm)
        opts = tflite.VarHandleOptionsEnd(self.b)
        return self._plain_op(code, [], [out], tflite.BuiltinOptions.VarHandleOptions, opts)

    def _init_subgraph(self, variables: list, code_index: dict, buf_base: int):
        """Subgraph 1, which CALL_ONCE runs once: VAR_HANDLE + ASSIGN_VARIABLE of each variable's start value
        (tensors 2k: its handle, 2k + 1: the constant in buffer buf_base + k)."""
        b, g = self.b, self.g
        tens, ops = [], []
        for k, v in enumerate(variables):
            t = g.tensors[v]
            tens.append(self._resource(t.name))
            tens.append(self._tensor(dataclasses.replace(t, variable=False, init=None, data=start_value(t)),
                                     buf_base + k))
            ops.append(self._var_handle(code_index["VAR_HANDLE"], 2 * k, t.name))
            ops.append(self._plain_op(code_index["ASSIGN_VARIABLE"], [2 * k, 2 * k + 1], []))
        tensors = self._offsets(tflite.SubGraphStartTensorsVector, tens)
        operators = self._offsets(tflite.SubGraphStartOperatorsVector, ops)
        inputs = self._ints(tflite.SubGraphStartInputsVector, [])
        outputs = self._ints(tflite.SubGraphStartOutputsVector, [])
        name = b.CreateString("init")
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, tensors)
        tflite.SubGraphAddInputs(b, inputs)
        tflite.SubGraphAddOutputs(b, outputs)
        tflite.SubGraphAddOperators(b, operators)
        tflite.SubGraphAddName(b, name)
        return tflite.SubGraphEnd(b)

    def _tensor(self, t, buffer_index):
        b = self.b
        name = b.CreateString(t.name)
        shape = self._ints(tflite.TensorStartShapeVector, t.shape)
        quant = self._quant(t.quant) if t.quant is not None else None
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, TYPE_CODES[t.dtype])
        tflite.TensorAddBuffer(b, buffer_index)
        tflite.TensorAddName(b, name)
        if quant is not None:
            tflite.TensorAddQuantization(b, quant)
        if t.variable and t.index not in self.state:  # a signal operator's state output is not one in the file
            tflite.TensorAddIsVariable(b, True)
        return tflite.TensorEnd(b)

    def _buffer(self, data):
        b = self.b
        vec = None
        if data is not None:
            arr = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False)
            vec = self._bytes(arr.tobytes())
        tflite.BufferStart(b)
        if vec is not None:
            tflite.BufferAddData(b, vec)
        return tflite.BufferEnd(b)

    def _operator(self, op, opcode_index):
        b = self.b
        ins = self._ints(tflite.OperatorStartInputsVector, op.inputs)
        outs = self._ints(tflite.OperatorStartOutputsVector, op.outputs)
        opt_type, opts = tflite_options.write(self, op)
        custom = None
        if op.opcode in CUSTOM_CODE:  # a custom operator: its options are a flexbuffer map
            payload = signal.write_options(op)
            tflite.OperatorStartCustomOptionsVector(b, len(payload))
            for v in reversed(payload):
                b.PrependUint8(v)
            custom = b.EndVector()
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, opcode_index)
        tflite.OperatorAddInputs(b, ins)
        tflite.OperatorAddOutputs(b, outs)
        if opts is not None:
            tflite.OperatorAddBuiltinOptionsType(b, opt_type)
            tflite.OperatorAddBuiltinOptions(b, opts)
        if custom is not None:
            tflite.OperatorAddCustomOptions(b, custom)
        return tflite.OperatorEnd(b)

    def _opcode(self, name):
        if name in CUSTOM_CODE:
            cc = self.b.CreateString(CUSTOM_CODE[name])
            tflite.OperatorCodeStart(self.b)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(self.b, BuiltinOperator.CUSTOM)
            tflite.OperatorCodeAddCustomCode(self.b, cc)
            tflite.OperatorCodeAddVersion(self.b, 1)
            tflite.OperatorCodeAddBuiltinCode(self.b, BuiltinOperator.CUSTOM)
            return tflite.OperatorCodeEnd(self.b)
        code = getattr(BuiltinOperator, name, None)
        if code is None:
            raise ModelError(f"operator {name} has no TFLite builtin code; it cannot be written")
        tflite.OperatorCodeStart(self.b)
        tflite.OperatorCodeAddDeprecatedBuiltinCode(self.b, min(code, 127))
        tflite.OperatorCodeAddVersion(self.b, 1)
        tflite.OperatorCodeAddBuiltinCode(self.b, code)
        return tflite.OperatorCodeEnd(self.b)

    # -- model ----------------------------------------------------------------
    def build(self) -> bytes:
        g, b = self.g, self.b
        for t in g.tensors:
            if t.dtype not in TYPE_CODES:
                raise ModelError(f"tensor {t.index} '{t.name}' has type {t.dtype}, which TFLite cannot hold")
            if t.data is not None and t.data.dtype != np.dtype(NUMPY_DTYPE[t.dtype]):
                raise ModelError(f"tensor {t.index} '{t.name}': data is {t.data.dtype}, tensor type is {t.dtype}")
        # Buffers are written last-to-first so the file lays them out in index order.
        const = [t for t in g.tensors if t.is_const]
        buf_index = {t.index: k + 1 for k, t in enumerate(const)}
        # Resource variables: VAR_HANDLEs after a CALL_ONCE of subgraph 1, which assigns their start values
        # (buffers after the constants'), as TensorFlow's converter writes them (model/variables.py).
        variables = resource_variables(g)
        starts = [start_value(g.tensors[v]) for v in variables]
        buf_offs = [self._buffer(d) for d in reversed(starts)][::-1]
        buf_offs = [self._buffer(t.data) for t in reversed(const)][::-1] + buf_offs
        buf_offs.insert(0, self._buffer(None))

        pre = ["CALL_ONCE", "VAR_HANDLE"] if variables else []
        sub_ops = [op.opcode for k in sorted(g.subgraphs) for op in g.subgraphs[k].operators]
        opcodes = list(dict.fromkeys(pre + [op.opcode for op in g.operators] + sub_ops
                                     + (["ASSIGN_VARIABLE"] if variables else [])))
        code_index = {name: k for k, name in enumerate(opcodes)}
        code_offs = [self._opcode(name) for name in opcodes]

        if g.subgraphs:  # control flow: each subgraph's tensors in a table of its own, after the model's
            if variables:
                raise ModelError(f"model '{g.name}' has both resource variables and control flow; the writer "
                                 f"writes one or the other")
            return self._with_subgraphs(code_index, code_offs, buf_index, buf_offs)
        tens_offs = [self._resource(t.name) if t.index in variables else self._tensor(t, buf_index.get(t.index, 0))
                     for t in g.tensors]
        op_offs = [self._operator(op, code_index[op.opcode]) for op in g.operators]
        if variables:
            tflite.CallOnceOptionsStart(b)
            tflite.CallOnceOptionsAddInitSubgraphIndex(b, 1)
            once = tflite.CallOnceOptionsEnd(b)
            op_offs = [self._plain_op(code_index["CALL_ONCE"], [], [], tflite.BuiltinOptions.CallOnceOptions, once)] + \
                [self._var_handle(code_index["VAR_HANDLE"], v, g.tensors[v].name) for v in variables] + op_offs
            init_sg = self._init_subgraph(variables, code_index, 1 + len(const))
        tensors = self._offsets(tflite.SubGraphStartTensorsVector, tens_offs)
        operators = self._offsets(tflite.SubGraphStartOperatorsVector, op_offs)
        inputs = self._ints(tflite.SubGraphStartInputsVector, g.inputs)
        outputs = self._ints(tflite.SubGraphStartOutputsVector, g.outputs)
        sg_name = b.CreateString("main")
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, tensors)
        tflite.SubGraphAddInputs(b, inputs)
        tflite.SubGraphAddOutputs(b, outputs)
        tflite.SubGraphAddOperators(b, operators)
        tflite.SubGraphAddName(b, sg_name)
        sg = tflite.SubGraphEnd(b)

        return self._finish([sg] + ([init_sg] if variables else []), code_offs, buf_offs)

    def _subgraph(self, name: str, tensors: list, ops: list, inputs: list, outputs: list, code_index: dict,
                  buf_index: dict, position: dict):
        """One subgraph table over the graph's tensors `tensors` (global indices, written in this order and
        renumbered from 0); an IF's / WHILE's subgraph indices as `position` maps them."""
        b, g = self.b, self.g
        local = {t: k for k, t in enumerate(tensors)}

        def m(ts):
            return tuple(local[i] if i >= 0 else i for i in ts)

        tens_offs = [self._tensor(g.tensors[t], buf_index.get(t, 0)) for t in tensors]
        op_offs = []
        for op in ops:
            opts = {k: (position[v] if k in CONTROL_SUBGRAPHS.get(op.opcode, ()) else v) for k, v in op.options.items()}
            op_offs.append(self._operator(dataclasses.replace(op, inputs=m(op.inputs), outputs=m(op.outputs),
                                                              options=opts), code_index[op.opcode]))
        tv = self._offsets(tflite.SubGraphStartTensorsVector, tens_offs)
        ov = self._offsets(tflite.SubGraphStartOperatorsVector, op_offs)
        iv = self._ints(tflite.SubGraphStartInputsVector, m(inputs))
        outv = self._ints(tflite.SubGraphStartOutputsVector, m(outputs))
        nm = b.CreateString(name)
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, tv)
        tflite.SubGraphAddInputs(b, iv)
        tflite.SubGraphAddOutputs(b, outv)
        tflite.SubGraphAddOperators(b, ov)
        tflite.SubGraphAddName(b, nm)
        return tflite.SubGraphEnd(b)

    def _with_subgraphs(self, code_index: dict, code_offs: list, buf_index: dict, buf_offs: list) -> bytes:
        """The model and the subgraphs its IF / WHILE operators run (subgraphs 1.. in index order): each holds
        the tensors its operators and inputs/outputs use, the model every other one (model/control.py)."""
        g = self.g
        ks = sorted(g.subgraphs)
        position = {k: p + 1 for p, k in enumerate(ks)}
        own = {k: sorted(g.subgraph(k).referenced()) for k in ks}
        taken = set().union(*own.values())
        if len(taken) != sum(len(v) for v in own.values()) or taken & g.referenced():
            raise ModelError(f"model '{g.name}': a tensor is shared by two of its subgraphs; TFLite subgraphs each "
                             f"have tensors of their own")
        sgs = [self._subgraph("main", [t.index for t in g.tensors if t.index not in taken], g.operators, g.inputs,
                              g.outputs, code_index, buf_index, position)]
        for k in ks:
            s = g.subgraphs[k]
            sgs.append(self._subgraph(f"subgraph{k}", own[k], s.operators, s.inputs, s.outputs, code_index,
                                      buf_index, position))
        return self._finish(sgs, code_offs, buf_offs)

    def _finish(self, sgs: list, code_offs: list, buf_offs: list) -> bytes:
        b, g = self.b, self.g
        subgraphs = self._offsets(tflite.ModelStartSubgraphsVector, sgs)
        codes = self._offsets(tflite.ModelStartOperatorCodesVector, code_offs)
        buffers = self._offsets(tflite.ModelStartBuffersVector, buf_offs)
        desc = b.CreateString(g.description) if g.description else None
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, codes)
        tflite.ModelAddSubgraphs(b, subgraphs)
        if desc is not None:
            tflite.ModelAddDescription(b, desc)
        tflite.ModelAddBuffers(b, buffers)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())


