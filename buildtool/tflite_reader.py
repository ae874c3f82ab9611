"""Read an int8 TFLite flatbuffer (schema v3) into the graph IR.

Uses the generated schema classes of the `tflite` package (PyPI) on top of the
`flatbuffers` runtime: they are generated from TensorFlow's own schema.fbs, so
we do not keep a copy of the schema or a flatc step in the build. The Python
flatbuffers runtime does not verify buffers, so every offset, length and index
is checked here before it is used, and anything the runtime still raises on a
corrupt file becomes a ModelError.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite.TensorType import TensorType

from .errors import ModelError
from .ir import NUMPY_DTYPE, Graph, Operator, Quant, Tensor, validate_graph
from .ops import check_graph
from .stateful import STATEFUL_OPTIONS

OPCODE_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
TYPE_NAMES = {TensorType.FLOAT32: "float32", TensorType.FLOAT16: "float16", TensorType.INT32: "int32",
              TensorType.UINT8: "uint8", TensorType.INT64: "int64", TensorType.INT16: "int16",
              TensorType.INT8: "int8", TensorType.BOOL: "bool"}
ACT = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
PAD = {0: "SAME", 1: "VALID"}
# Inputs an operator cannot run without (the rest are optional, -1 = absent); checked here so that
# the shape checks never see a missing one.
REQUIRED_INPUTS = {"CONV_2D": 2, "DEPTHWISE_CONV_2D": 2, "FULLY_CONNECTED": 2, "ADD": 2, "MUL": 2,
                   "MEAN": 2, "PAD": 2, "SPLIT": 2, "STRIDED_SLICE": 4, "SVDF": 5}
ALL_REQUIRED = ("ADD", "MUL", "CONCATENATION")
MAX_TENSORS = 1 << 20
MAX_FILE = 1 << 31


def load(path: str) -> Graph:
    """Read a .tflite file. Raises ModelError with a one-line message on any problem."""
    if not os.path.exists(path):
        raise ModelError(f"model file not found: {path}")
    if os.path.isdir(path):
        raise ModelError(f"{path} is a directory, not a .tflite model file")
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE:
            raise ModelError(f"{path}: file is {size} bytes, larger than the 2 GiB a flatbuffer can hold")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ModelError(f"cannot read model file {path}: {e.strerror}") from None
    name = os.path.splitext(os.path.basename(path))[0]
    return parse(data, name=name, source=path)


def parse(data: bytes, name: str = "model", source: str = "<bytes>") -> Graph:
    if len(data) < 16:
        raise ModelError(f"{source}: file is {len(data)} bytes, too short to be a TFLite model (truncated?)")
    if data[4:8] != b"TFL3":
        raise ModelError(f"{source}: not a TFLite model (no 'TFL3' flatbuffer identifier); "
                         f"give a .tflite file made by the TFLite converter")
    try:
        g = _Reader(bytes(data), source).graph(name)
    except ModelError:
        raise
    except RecursionError:
        raise ModelError(f"{source}: corrupt TFLite flatbuffer (cyclic offsets)") from None
    except (struct.error, IndexError, ValueError, TypeError, OverflowError, AttributeError,
            UnicodeDecodeError, KeyError, MemoryError) as e:
        kind = "read past the end" if isinstance(e, (struct.error, IndexError)) else "inconsistent data"
        raise ModelError(f"{source}: corrupt or truncated TFLite flatbuffer ({kind}); "
                         f"re-export the model with the TFLite converter") from None
    validate_graph(g)
    check_graph(g)
    return g


def _text(raw: bytes) -> str:
    """A name from the file, safe for one-line messages: control characters become '?'."""
    return "".join(c if c.isprintable() else "?" for c in raw.decode("utf-8", "replace"))


class _Reader:
    def __init__(self, buf: bytes, source: str):
        self.buf = buf
        self.n = len(buf)
        self.src = source

    def fail(self, msg: str):
        raise ModelError(f"{self.src}: {msg}")

    def _len(self, n: int, elem: int, what: str) -> int:
        if n < 0 or n * elem > self.n:
            self.fail(f"corrupt flatbuffer: {what} claims {n} entries, more than the file holds (truncated?)")
        return n

    def _table_ok(self, obj, what: str):
        pos = obj._tab.Pos
        if not (0 <= pos <= self.n - 4):
            self.fail(f"corrupt flatbuffer: {what} table lies outside the file (truncated?)")
        return obj

    def graph(self, name: str) -> Graph:
        root = struct.unpack_from("<I", self.buf, 0)[0]
        if root + 4 > self.n:
            self.fail("corrupt flatbuffer: root table outside the file (truncated?)")
        m = tflite.Model.GetRootAs(self.buf, 0)
        version = m.Version()
        if version != 3:
            self.fail(f"TFLite schema version {version} is not supported (need 3)")
        nsub = self._len(m.SubgraphsLength(), 4, "subgraph list")
        if nsub < 1:
            self.fail("model has no subgraphs")
        if nsub > 1:
            self.fail(f"model has {nsub} subgraphs; only single-subgraph models are supported")
        ncodes = self._len(m.OperatorCodesLength(), 4, "operator code list")
        codes = []
        for i in range(ncodes):
            oc = self._table_ok(m.OperatorCodes(i), "operator code")
            code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            if code == BuiltinOperator.CUSTOM:
                cc = oc.CustomCode()
                codes.append("CUSTOM:" + (_text(cc) if cc else "?"))
            else:
                codes.append(OPCODE_NAMES.get(code, f"UNKNOWN_{code}"))
        nbuf = self._len(m.BuffersLength(), 4, "buffer list")
        sg = self._table_ok(m.Subgraphs(0), "subgraph")
        ntens = self._len(sg.TensorsLength(), 4, "tensor list")
        if ntens > MAX_TENSORS:
            self.fail(f"model has {ntens} tensors, more than supported")
        tensors = [self._tensor(m, sg.Tensors(i), i, nbuf) for i in range(ntens)]
        ops = []
        for i in range(self._len(sg.OperatorsLength(), 4, "operator list")):
            op = self._table_ok(sg.Operators(i), "operator")
            ci = op.OpcodeIndex()
            if not (0 <= ci < ncodes):
                self.fail(f"operator {i} uses opcode index {ci}, but the model has {ncodes} operator codes")
            opcode = codes[ci]
            ins = tuple(int(x) for x in self._ivec(op.InputsLength(), op.Inputs, "operator inputs"))
            outs = tuple(int(x) for x in self._ivec(op.OutputsLength(), op.Outputs, "operator outputs"))
            for t in ins + outs:
                if not (-1 <= t < ntens):
                    self.fail(f"operator {i} ({opcode}) refers to tensor {t}, but the model has {ntens} tensors")
            from .ops import SUPPORTED
            if opcode not in SUPPORTED:
                self.fail(f"operator {i} is {opcode}, which is not supported "
                          f"(supported: {', '.join(SUPPORTED)})")
            need = REQUIRED_INPUTS.get(opcode, 1)
            if len(ins) < need or any(t < 0 for t in (ins if opcode in ALL_REQUIRED else ins[:need])):
                self.fail(f"operator {i} ({opcode}) lacks a required input (inputs {list(ins)}, needs {need})")
            ops.append(Operator(i, opcode, ins, outs, self._options(op, opcode, i)))
        inputs = [int(x) for x in self._ivec(sg.InputsLength(), sg.Inputs, "subgraph inputs")]
        outputs = [int(x) for x in self._ivec(sg.OutputsLength(), sg.Outputs, "subgraph outputs")]
        desc = m.Description()
        return Graph(tensors, ops, inputs, outputs, name=name,
                     description=desc.decode("utf-8", "replace") if desc else "")

    def _ivec(self, n, get, what):
        return [get(j) for j in range(self._len(n, 4, what))]

    def _tensor(self, m, t, i, nbuf) -> Tensor:
        self._table_ok(t, f"tensor {i}")
        nm = t.Name()
        name = _text(nm) if nm else f"t{i}"
        ttype = t.Type()
        if ttype not in TYPE_NAMES:
            self.fail(f"tensor {i} '{name}' has unsupported type {ttype}")
        dtype = TYPE_NAMES[ttype]
        shape = tuple(int(d) for d in self._ivec(t.ShapeLength(), t.Shape, f"tensor {i} shape"))
        if len(shape) > 6:
            self.fail(f"tensor {i} '{name}' has rank {len(shape)}; at most 6 is supported")
        if t.ShapeSignatureLength() and any(int(d) < 0 for d in
                                            self._ivec(t.ShapeSignatureLength(), t.ShapeSignature, "signature")):
            self.fail(f"tensor {i} '{name}' has a dynamic shape; convert with static shapes (batch_size=1)")
        for d in shape:
            # 0 is left to validate_graph: an empty tensor no operator reads (an LSTM's intermediates) is fine
            if d < 0 or d > (1 << 24):
                self.fail(f"tensor {i} '{name}' has invalid shape {list(shape)}")
        if t.Sparsity() is not None:
            self.fail(f"tensor {i} '{name}' is sparse; sparse models are not supported")
        quant = None
        q = t.Quantization()
        if q is not None:
            self._table_ok(q, f"tensor {i} quantisation")
            ns = self._len(q.ScaleLength(), 4, "scales")
            nz = self._len(q.ZeroPointLength(), 8, "zero points")
            if ns:
                scale = np.array([q.Scale(j) for j in range(ns)], dtype=np.float32)
                zp = np.array([q.ZeroPoint(j) for j in range(nz)] or [0], dtype=np.int64)
                if nz not in (ns, 0, 1) or (ns > 1 and nz == 1 and False):
                    self.fail(f"tensor {i} '{name}': {ns} scales but {nz} zero points")
                if len(zp) == 1 and ns > 1:
                    zp = np.repeat(zp, ns)
                quant = Quant(scale, zp, int(q.QuantizedDimension()))
        data = None
        b = t.Buffer()
        if not (0 <= b < max(nbuf, 1)):
            self.fail(f"tensor {i} '{name}' uses buffer {b}, but the model has {nbuf} buffers")
        if b > 0:
            raw = self._buffer(m.Buffers(b), b)
            if raw is not None and len(raw):
                n = 1
                for d in shape:
                    n *= d
                want = n * np.dtype(NUMPY_DTYPE[dtype]).itemsize
                if len(raw) != want:
                    self.fail(f"tensor {i} '{name}': buffer holds {len(raw)} bytes, shape {list(shape)} "
                              f"of {dtype} needs {want} (truncated?)")
                data = np.frombuffer(raw, dtype=NUMPY_DTYPE[dtype]).reshape(shape).copy()
        if t.IsVariable():  # TFLM resets the state at start-up whatever the buffer holds
            return Tensor(i, name, shape, dtype, quant, None, variable=True)
        return Tensor(i, name, shape, dtype, quant, data)

    def _buffer(self, buf, b):
        self._table_ok(buf, f"buffer {b}")
        off = buf.Offset()
        if off > 1:
            size = buf.Size()
            if off + size > self.n:
                self.fail(f"buffer {b} lies outside the file (bytes {off}..{off + size} of {self.n}; truncated?)")
            return self.buf[off:off + size]
        n = buf.DataLength()
        if n == 0:
            return None
        o = buf._tab.Offset(4)
        start = buf._tab.Vector(o)
        if start < 0 or start + n > self.n or n < 0:
            self.fail(f"buffer {b} lies outside the file (truncated?)")
        return self.buf[start:start + n]

    def _options(self, op, opcode: str, i: int) -> dict:
        table = op.BuiltinOptions()

        def load(cls):
            if table is None:
                return None
            o = cls()
            o.Init(table.Bytes, table.Pos)
            return o

        if opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            o = load(tflite.Conv2DOptions if opcode == "CONV_2D" else tflite.DepthwiseConv2DOptions)
            if o is None:
                self.fail(f"operator {i} ({opcode}) has no options")
            d = {"padding": self._enum(PAD, o.Padding(), i, "padding"), "stride_h": o.StrideH(),
                 "stride_w": o.StrideW(), "dilation_h": o.DilationHFactor() or 1,
                 "dilation_w": o.DilationWFactor() or 1,
                 "activation": self._enum(ACT, o.FusedActivationFunction(), i, "activation")}
            if opcode == "DEPTHWISE_CONV_2D":
                d["depth_multiplier"] = o.DepthMultiplier() or 1
            return d
        if opcode == "FULLY_CONNECTED":
            o = load(tflite.FullyConnectedOptions)
            if o is None:
                return {"activation": "NONE", "keep_num_dims": False}
            if o.WeightsFormat() != 0:
                self.fail(f"operator {i} (FULLY_CONNECTED) uses shuffled weights, which are not supported")
            return {"activation": self._enum(ACT, o.FusedActivationFunction(), i, "activation"),
                    "keep_num_dims": bool(o.KeepNumDims())}
        if opcode in ("ADD", "MUL"):
            o = load(tflite.AddOptions if opcode == "ADD" else tflite.MulOptions)
            return {"activation": self._enum(ACT, o.FusedActivationFunction(), i, "activation") if o else "NONE"}
        if opcode == "CONCATENATION":
            o = load(tflite.ConcatenationOptions)
            if o is None:
                self.fail(f"operator {i} (CONCATENATION) has no options")
            return {"axis": o.Axis(), "activation": self._enum(ACT, o.FusedActivationFunction(), i, "activation")}
        if opcode in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            o = load(tflite.Pool2DOptions)
            if o is None:
                self.fail(f"operator {i} ({opcode}) has no options")
            return {"padding": self._enum(PAD, o.Padding(), i, "padding"), "stride_h": o.StrideH(),
                    "stride_w": o.StrideW(), "filter_h": o.FilterHeight(), "filter_w": o.FilterWidth(),
                    "activation": self._enum(ACT, o.FusedActivationFunction(), i, "activation")}
        if opcode == "MEAN":
            o = load(tflite.ReducerOptions)
            return {"keep_dims": bool(o.KeepDims()) if o else False}
        if opcode == "SOFTMAX":
            o = load(tflite.SoftmaxOptions)
            return {"beta": float(o.Beta()) if o else 1.0}
        if opcode == "SPLIT":
            o = load(tflite.SplitOptions)
            return {"num_splits": o.NumSplits() if o else len(self._ivec(op.OutputsLength(), op.Outputs, "o"))}
        if opcode == "STRIDED_SLICE":
            o = load(tflite.StridedSliceOptions)
            if o is None:
                return {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
                        "shrink_axis_mask": 0, "offset": False}
            return {"begin_mask": o.BeginMask(), "end_mask": o.EndMask(), "ellipsis_mask": o.EllipsisMask(),
                    "new_axis_mask": o.NewAxisMask(), "shrink_axis_mask": o.ShrinkAxisMask(),
                    "offset": bool(o.Offset())}
        if opcode in STATEFUL_OPTIONS:
            return STATEFUL_OPTIONS[opcode](self, load, i)
        return {}

    def _enum(self, table, v, i, what):
        if v not in table:
            self.fail(f"operator {i}: unknown {what} value {v}")
        return table[v]
