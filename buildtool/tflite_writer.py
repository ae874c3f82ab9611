"""Write the graph IR as an int8 TFLite flatbuffer (schema v3) that TFLite Micro loads.

The inverse of tflite_reader: it uses the same generated schema functions of the
`tflite` package on the flatbuffers runtime, so no schema copy is kept. The file
has one subgraph, no metadata and no signature defs; buffer 0 is the empty
sentinel, every constant has its own buffer with data aligned to 16 bytes, and
activations point at buffer 0. Output bytes depend only on the graph.
"""

from __future__ import annotations

import flatbuffers
import numpy as np
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.TensorType import TensorType

from .errors import ModelError
from .ir import NUMPY_DTYPE, Graph
from .opdefs import BY_NAME
from .stateful import STATEFUL_WRITERS

TYPE_CODES = {"float32": TensorType.FLOAT32, "float16": TensorType.FLOAT16, "int32": TensorType.INT32,
              "uint8": TensorType.UINT8, "int64": TensorType.INT64, "int16": TensorType.INT16,
              "int8": TensorType.INT8, "bool": TensorType.BOOL}
ACT_CODES = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
PAD_CODES = {"SAME": 0, "VALID": 1}
DATA_ALIGN = 16


def serialize(g: Graph) -> bytes:
    """The graph as .tflite bytes. Raises ModelError for an opcode or option the schema cannot hold."""
    return _Writer(g).build()


def save(g: Graph, path: str) -> None:
    """Write atomically: a reader never sees a half-written file."""
    from .fsutil import write_atomic

    write_atomic(path, serialize(g))


class _Writer:
    def __init__(self, g: Graph):
        self.g = g
        self.b = flatbuffers.Builder(1024)

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
        if t.variable:
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

    def _options(self, op):
        """(BuiltinOptions type, table offset or None) for one operator."""
        b, o, code = self.b, op.options, op.opcode

        def act():
            return ACT_CODES[o.get("activation", "NONE")]

        d = BY_NAME.get(code)
        if d is not None and d.options_empty:
            return self._empty_options(d.options)
        if code == "CONV_2D":
            tflite.Conv2DOptionsStart(b)
            tflite.Conv2DOptionsAddPadding(b, PAD_CODES[o["padding"]])
            tflite.Conv2DOptionsAddStrideW(b, o["stride_w"])
            tflite.Conv2DOptionsAddStrideH(b, o["stride_h"])
            tflite.Conv2DOptionsAddFusedActivationFunction(b, act())
            tflite.Conv2DOptionsAddDilationWFactor(b, o.get("dilation_w", 1))
            tflite.Conv2DOptionsAddDilationHFactor(b, o.get("dilation_h", 1))
            return BuiltinOptions.Conv2DOptions, tflite.Conv2DOptionsEnd(b)
        if code == "DEPTHWISE_CONV_2D":
            tflite.DepthwiseConv2DOptionsStart(b)
            tflite.DepthwiseConv2DOptionsAddPadding(b, PAD_CODES[o["padding"]])
            tflite.DepthwiseConv2DOptionsAddStrideW(b, o["stride_w"])
            tflite.DepthwiseConv2DOptionsAddStrideH(b, o["stride_h"])
            tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, o.get("depth_multiplier", 1))
            tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, act())
            tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, o.get("dilation_w", 1))
            tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, o.get("dilation_h", 1))
            return BuiltinOptions.DepthwiseConv2DOptions, tflite.DepthwiseConv2DOptionsEnd(b)
        if code == "FULLY_CONNECTED":
            tflite.FullyConnectedOptionsStart(b)
            tflite.FullyConnectedOptionsAddFusedActivationFunction(b, act())
            tflite.FullyConnectedOptionsAddKeepNumDims(b, bool(o.get("keep_num_dims", False)))
            return BuiltinOptions.FullyConnectedOptions, tflite.FullyConnectedOptionsEnd(b)
        if code == "ADD":
            tflite.AddOptionsStart(b)
            tflite.AddOptionsAddFusedActivationFunction(b, act())
            return BuiltinOptions.AddOptions, tflite.AddOptionsEnd(b)
        if code == "MUL":
            tflite.MulOptionsStart(b)
            tflite.MulOptionsAddFusedActivationFunction(b, act())
            return BuiltinOptions.MulOptions, tflite.MulOptionsEnd(b)
        if code == "CONCATENATION":
            tflite.ConcatenationOptionsStart(b)
            tflite.ConcatenationOptionsAddAxis(b, o.get("axis", 0))
            tflite.ConcatenationOptionsAddFusedActivationFunction(b, act())
            return BuiltinOptions.ConcatenationOptions, tflite.ConcatenationOptionsEnd(b)
        if code in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            tflite.Pool2DOptionsStart(b)
            tflite.Pool2DOptionsAddPadding(b, PAD_CODES[o["padding"]])
            tflite.Pool2DOptionsAddStrideW(b, o["stride_w"])
            tflite.Pool2DOptionsAddStrideH(b, o["stride_h"])
            tflite.Pool2DOptionsAddFilterWidth(b, o["filter_w"])
            tflite.Pool2DOptionsAddFilterHeight(b, o["filter_h"])
            tflite.Pool2DOptionsAddFusedActivationFunction(b, act())
            return BuiltinOptions.Pool2DOptions, tflite.Pool2DOptionsEnd(b)
        if code == "MEAN":
            tflite.ReducerOptionsStart(b)
            tflite.ReducerOptionsAddKeepDims(b, bool(o.get("keep_dims", False)))
            return BuiltinOptions.ReducerOptions, tflite.ReducerOptionsEnd(b)
        if code == "RESHAPE":
            shape = self._ints(tflite.ReshapeOptionsStartNewShapeVector, self.g.tensors[op.outputs[0]].shape)
            tflite.ReshapeOptionsStart(b)
            tflite.ReshapeOptionsAddNewShape(b, shape)
            return BuiltinOptions.ReshapeOptions, tflite.ReshapeOptionsEnd(b)
        if code == "SOFTMAX":
            tflite.SoftmaxOptionsStart(b)
            tflite.SoftmaxOptionsAddBeta(b, float(o.get("beta", 1.0)))
            return BuiltinOptions.SoftmaxOptions, tflite.SoftmaxOptionsEnd(b)
        if code == "SPLIT":
            tflite.SplitOptionsStart(b)
            tflite.SplitOptionsAddNumSplits(b, o.get("num_splits", len(op.outputs)))
            return BuiltinOptions.SplitOptions, tflite.SplitOptionsEnd(b)
        if code == "STRIDED_SLICE":
            tflite.StridedSliceOptionsStart(b)
            tflite.StridedSliceOptionsAddBeginMask(b, o.get("begin_mask", 0))
            tflite.StridedSliceOptionsAddEndMask(b, o.get("end_mask", 0))
            tflite.StridedSliceOptionsAddEllipsisMask(b, o.get("ellipsis_mask", 0))
            tflite.StridedSliceOptionsAddNewAxisMask(b, o.get("new_axis_mask", 0))
            tflite.StridedSliceOptionsAddShrinkAxisMask(b, o.get("shrink_axis_mask", 0))
            tflite.StridedSliceOptionsAddOffset(b, bool(o.get("offset", False)))
            return BuiltinOptions.StridedSliceOptions, tflite.StridedSliceOptionsEnd(b)
        if code == "SUB":
            tflite.SubOptionsStart(b)
            tflite.SubOptionsAddFusedActivationFunction(b, act())
            return BuiltinOptions.SubOptions, tflite.SubOptionsEnd(b)
        if code == "LEAKY_RELU":
            tflite.LeakyReluOptionsStart(b)
            tflite.LeakyReluOptionsAddAlpha(b, float(o.get("alpha", 0.0)))
            return BuiltinOptions.LeakyReluOptions, tflite.LeakyReluOptionsEnd(b)
        if code == "TRANSPOSE_CONV":
            tflite.TransposeConvOptionsStart(b)
            tflite.TransposeConvOptionsAddPadding(b, PAD_CODES[o["padding"]])
            tflite.TransposeConvOptionsAddStrideW(b, o["stride_w"])
            tflite.TransposeConvOptionsAddStrideH(b, o["stride_h"])
            tflite.TransposeConvOptionsAddFusedActivationFunction(b, act())
            return BuiltinOptions.TransposeConvOptions, tflite.TransposeConvOptionsEnd(b)
        if code in _EXTRA_OPTIONS:
            return _EXTRA_OPTIONS[code](self, op)
        if code in STATEFUL_WRITERS:
            return STATEFUL_WRITERS[code](b, o, ACT_CODES)
        return BuiltinOptions.NONE, None

    # -- options of the activation, layout and resize operators ---------------------------
    def _empty_options(self, name: str):
        getattr(tflite, f"{name}Start")(self.b)
        return getattr(BuiltinOptions, name), getattr(tflite, f"{name}End")(self.b)

    def _resize_options(self, op):
        name = BY_NAME[op.opcode].options
        getattr(tflite, f"{name}Start")(self.b)
        getattr(tflite, f"{name}AddAlignCorners")(self.b, bool(op.options.get("align_corners", False)))
        getattr(tflite, f"{name}AddHalfPixelCenters")(self.b, bool(op.options.get("half_pixel_centers", False)))
        return getattr(BuiltinOptions, name), getattr(tflite, f"{name}End")(self.b)

    def _squeeze_options(self, op):
        dims = list(op.options.get("squeeze_dims", ()))
        vec = self._ints(tflite.SqueezeOptionsStartSqueezeDimsVector, dims) if dims else None
        tflite.SqueezeOptionsStart(self.b)
        if vec is not None:
            tflite.SqueezeOptionsAddSqueezeDims(self.b, vec)
        return BuiltinOptions.SqueezeOptions, tflite.SqueezeOptionsEnd(self.b)

    def _block_options(self, op):
        name = BY_NAME[op.opcode].options
        getattr(tflite, f"{name}Start")(self.b)
        getattr(tflite, f"{name}AddBlockSize")(self.b, int(op.options["block_size"]))
        return getattr(BuiltinOptions, name), getattr(tflite, f"{name}End")(self.b)

    def _operator(self, op, opcode_index):
        b = self.b
        ins = self._ints(tflite.OperatorStartInputsVector, op.inputs)
        outs = self._ints(tflite.OperatorStartOutputsVector, op.outputs)
        opt_type, opts = self._options(op)
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, opcode_index)
        tflite.OperatorAddInputs(b, ins)
        tflite.OperatorAddOutputs(b, outs)
        if opts is not None:
            tflite.OperatorAddBuiltinOptionsType(b, opt_type)
            tflite.OperatorAddBuiltinOptions(b, opts)
        return tflite.OperatorEnd(b)

    def _opcode(self, name):
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
        buf_offs = [self._buffer(t.data) for t in reversed(const)][::-1]
        buf_offs.insert(0, self._buffer(None))

        opcodes = list(dict.fromkeys(op.opcode for op in g.operators))  # in order of first use
        code_index = {name: k for k, name in enumerate(opcodes)}
        code_offs = [self._opcode(name) for name in opcodes]

        tens_offs = [self._tensor(t, buf_index.get(t.index, 0)) for t in g.tensors]
        op_offs = [self._operator(op, code_index[op.opcode]) for op in g.operators]
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

        subgraphs = self._offsets(tflite.ModelStartSubgraphsVector, [sg])
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


_EXTRA_OPTIONS = {
    "RESIZE_NEAREST_NEIGHBOR": _Writer._resize_options, "RESIZE_BILINEAR": _Writer._resize_options,
    "SQUEEZE": _Writer._squeeze_options, "DEPTH_TO_SPACE": _Writer._block_options,
    "SPACE_TO_DEPTH": _Writer._block_options,
}
