"""One table per operator: every fact the tool keeps about an opcode, in one row.

The tables other modules use are derived from OPDEFS: ops.SUPPORTED, INT16_OPS, ACT_TYPES,
ELEMENTWISE_INPLACE, ALIASING, the checks and MAC counts (ops.py), refops.KERNELS, BANDED and
kernel_inputs, the STRUCTURAL_INPUTS of canonical.py and flash.py, the reader's REQUIRED_INPUTS and
ALL_REQUIRED, the TFLite options table and its fields (tflite_options reads and writes them from the
row), fusion.geometry's WINDOWED, POINTWISE, UNARY and MINMAX, and the C emitter codegen.model_c.emit_op
calls (column emit; fused blocks: codegen/fused_c.py). Functions are named, not imported, so this module
imports nothing of the tool; `resolve` finds them on first use. An operator's prepare, when it has one,
is refops.prepare.PREPARE[opcode]. docs/adding-an-operator.md says how to add one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

I8 = ("int8",)
I8_16 = ("int8", "int16")


N_OUTPUTS = "<number of outputs>"  # an option default: the operator's number of outputs


@dataclass(frozen=True)
class Field:
    """One field of a TFLite options table (tflite_options.py reads and writes it)."""
    key: str  # the IR's options key (the reason, for kind 'refuse')
    schema: str  # schema.fbs field name: the accessor, `{Table}Add{schema}`
    kind: str = "int"  # int, bool, float, padding, activation, ints, output_shape, refuse
    default: object = ...  # value when absent from the file or the IR; ...: the writer needs it
    zero_is_default: bool = False  # 0 in the file means the default (dilation, depth multiplier)


_ACT = Field("activation", "FusedActivationFunction", "activation", "NONE")
_PAD = Field("padding", "Padding", "padding")
_STRIDES = (Field("stride_w", "StrideW"), Field("stride_h", "StrideH"))
_DILATION = (Field("dilation_w", "DilationWFactor", default=1, zero_is_default=True),
             Field("dilation_h", "DilationHFactor", default=1, zero_is_default=True))
_RESIZE = (Field("align_corners", "AlignCorners", "bool", False),
           Field("half_pixel_centers", "HalfPixelCenters", "bool", False))
_BLOCK = (Field("block_size", "BlockSize", default=0),)
_MASKS = tuple(Field(f"{m}_mask", f"{m.title().replace('_', '')}Mask", default=0)
               for m in ("begin", "end", "ellipsis", "new_axis", "shrink_axis"))


def _opts(table: str, *fields, required: bool = False) -> dict:
    return dict(options=table, option_fields=tuple(fields), options_required=required)


@dataclass(frozen=True)
class OpDef:
    """One operator. check, macs, kernel, emit: 'module:function' under buildtool (None: none)."""
    name: str
    check: str | None  # semantic check (arity, types, shapes); raises ModelError
    kernel: str  # reference numpy kernel fn(g, op, ins, outs, **band)
    emit: str | None = None  # C emitter fn(e, op) on a codegen.emitter.Emitter: model.c's call; None: no firmware
    types: tuple = (I8_16, I8_16)  # activation types (inputs, outputs): int8 and 16x8 unless said
    macs: str | None = None  # multiply-accumulate count fn(g, op); None: 0
    required_inputs: int = 1  # inputs it cannot run without (the rest may be -1)
    all_required: bool = False  # every listed input must be present
    const_operands: bool = False  # its kernel receives constant inputs too (kernel_inputs)
    structural: tuple = ()  # positions of constant inputs whose values define shapes or slicing (plan keys)
    # In place: 'alias' (the output is the input's bytes), 'elementwise' (may overwrite a same-size input),
    # 'concat' (inputs may be views into the output), 'depthwise' (channel by channel through scratch),
    # 'pad' (the dying input lies inside the larger output: plan/arena/liveness.pad_shifts).
    memory: str = ""
    tiling: str = ""  # fusion: 'windowed' (sliding window, banded kernel), 'pointwise', 'unary', 'minmax'
    options: str = ""  # TFLite builtin options table (reader/writer), '' when it has none
    option_fields: tuple = ()  # its fields (Field), in the order the writer adds them; () an empty table
    options_required: bool = False  # the reader refuses the operator without its options table
    custom: str = ""  # a CUSTOM operator's custom_code (its options: the flexbuffer map, model/signal.py)


def _t(ins, outs=None) -> tuple:
    return (ins, ins if outs is None else outs)


_BIN = dict(required_inputs=2, all_required=True)
_CMP = _t(I8, ("bool",))  # comparisons: int8 inputs, bool output
_BOOL = _t(("bool",))
_CF = ("bool", "int8", "int16", "int32", "float32")  # what IF and WHILE carry (model/control.py checks it)
_REDUCER = _opts("ReducerOptions", Field("keep_dims", "KeepDims", "bool", False))

_POOL = _opts("Pool2DOptions", _PAD, *_STRIDES, Field("filter_w", "FilterWidth"), Field("filter_h", "FilterHeight"),
              _ACT, required=True)

OPDEFS = (
    OpDef("CONV_2D", "model.ops:_check_conv", "refops.conv:conv2d", "codegen.model_c:conv_2d",
          macs="model.ops:conv_macs", required_inputs=2, tiling="windowed",
          **_opts("Conv2DOptions", _PAD, *_STRIDES, _ACT, *_DILATION, required=True)),
    OpDef("DEPTHWISE_CONV_2D", "model.ops:_check_conv", "refops.depthwise:depthwise_conv2d",
          "codegen.model_c:depthwise_conv_2d", macs="model.ops:conv_macs", required_inputs=2, memory="depthwise",
          tiling="windowed",
          **_opts("DepthwiseConv2DOptions", _PAD, *_STRIDES,
                  Field("depth_multiplier", "DepthMultiplier", default=1, zero_is_default=True), _ACT, *_DILATION,
                  required=True)),
    OpDef("FULLY_CONNECTED", "model.ops:_check_fc", "refops.fully_connected:fully_connected",
          "codegen.model_c:fully_connected", macs="model.ops:fc_macs", required_inputs=2,
          **_opts("FullyConnectedOptions", Field("uses shuffled weights, which are not supported", "WeightsFormat",
                                                 "refuse"), _ACT, Field("keep_num_dims", "KeepNumDims", "bool", False))),
    # int32 too: TFLM's int32 path (TensorFlow's WHILE loop counters: model/control.py)
    OpDef("ADD", "model.ops:_check_binary", "refops.elementwise:add", "codegen.model_c:add", const_operands=True,
          types=_t(("int8", "int16", "int32")), memory="elementwise", tiling="pointwise", **_opts("AddOptions", _ACT), **_BIN),
    OpDef("MUL", "model.ops:_check_binary", "refops.elementwise:mul", "codegen.model_c:mul", const_operands=True,
          memory="elementwise", tiling="pointwise", **_opts("MulOptions", _ACT), **_BIN),
    OpDef("CONCATENATION", "model.ops:_check_concat", "refops.shape_ops:concatenation", "codegen.model_c:concatenation",
          all_required=True, const_operands=True, memory="concat",
          **_opts("ConcatenationOptions", Field("axis", "Axis", default=0), _ACT, required=True)),
    OpDef("AVERAGE_POOL_2D", "model.ops:_check_pool", "refops.pooling:average_pool2d",
          "codegen.model_c:average_pool_2d", tiling="windowed", **_POOL),
    OpDef("MAX_POOL_2D", "model.ops:_check_pool", "refops.pooling:max_pool2d", "codegen.model_c:max_pool_2d",
          tiling="windowed", **_POOL),
    OpDef("MEAN", "model.ops:_check_mean", "refops.reduce:mean", "codegen.model_c:mean", required_inputs=2,
          **_REDUCER, structural=(1,)),
    OpDef("PAD", "model.ops:_check_pad", "refops.shape_ops:pad", "codegen.model_c:pad", required_inputs=2,
          **_opts("PadOptions"), structural=(1,), memory="pad"),
    OpDef("RESHAPE", "model.ops:_check_reshape", "refops.shape_ops:reshape", "codegen.model_c:reshape",
          types=_t(("int8", "uint8", "int16", "int32", "int64", "bool")), memory="alias",
          **_opts("ReshapeOptions", Field("new_shape", "NewShape", "output_shape")), structural=(1,)),
    # int8 -> int16 SOFTMAX: stateful.EDGE_TYPES
    OpDef("SOFTMAX", "model.ops_extra:_check_softmax", "refops.softmax:softmax", "codegen.model_c:softmax",
          **_opts("SoftmaxOptions", Field("beta", "Beta", "float", 1.0))),
    OpDef("LOGISTIC", "refops.activation:check_sigmoid_like", "refops.elementwise:logistic", "codegen.model_c:logistic",
          memory="elementwise"),
    OpDef("QUANTIZE", "model.ops:_check_same", "refops.elementwise:quantize", "codegen.model_c:quantize",
          types=_t(("int8", "int16", "int32", "float32"), ("int8", "int16", "int32")), memory="elementwise",
          **_opts("QuantizeOptions")),
    OpDef("DEQUANTIZE", "model.ops:_check_same", "refops.elementwise:dequantize", "codegen.model_c:dequantize",
          types=_t(("int8", "int16"), ("int8", "int16", "float32")), **_opts("DequantizeOptions")),
    OpDef("HARD_SWISH", "model.ops:_check_same", "refops.elementwise:hard_swish", "codegen.model_c:hard_swish",
          types=_t(I8), memory="elementwise", **_opts("HardSwishOptions")),
    OpDef("SPLIT", "model.ops:_check_split", "refops.shape_ops:split", "codegen.model_c:split", required_inputs=2,
          **_opts("SplitOptions", Field("num_splits", "NumSplits", default=N_OUTPUTS)), structural=(0,)),
    OpDef("STRIDED_SLICE", "model.ops:_check_slice", "refops.shape_ops:strided_slice", "codegen.model_c:strided_slice",
          required_inputs=4, **_opts("StridedSliceOptions", *_MASKS, Field("offset", "Offset", "bool", False)),
          structural=(1, 2, 3)),
    OpDef("RELU", "model.ops:_check_same", "refops.activation:relu", "codegen.extra_c:relu", memory="elementwise",
          tiling="unary"),
    OpDef("RELU6", "model.ops:_check_same", "refops.activation:relu6", "codegen.extra_c:relu6", memory="elementwise",
          tiling="unary"),
    OpDef("TANH", "refops.activation:check_sigmoid_like", "refops.activation:tanh", "codegen.extra_c:tanh",
          memory="elementwise", tiling="unary"),
    OpDef("PRELU", "model.ops_extra:_check_prelu", "refops.activation:prelu", "codegen.extra_c:prelu",
          memory="elementwise", tiling="unary", **_BIN),
    OpDef("MAXIMUM", "model.ops:_check_binary", "refops.activation:maximum", "codegen.extra_c:maximum",
          memory="elementwise", tiling="minmax", **_opts("MaximumMinimumOptions"), **_BIN),
    OpDef("MINIMUM", "model.ops:_check_binary", "refops.activation:minimum", "codegen.extra_c:minimum",
          memory="elementwise", tiling="minmax", **_opts("MaximumMinimumOptions"), **_BIN),
    OpDef("TRANSPOSE", "model.ops_extra:_check_transpose", "refops.layout:transpose", "codegen.extra_c:transpose",
          required_inputs=2, **_opts("TransposeOptions"), structural=(1,)),
    OpDef("RESIZE_NEAREST_NEIGHBOR", "refops.resize:check_resize", "refops.resize:resize_nearest_neighbor",
          "codegen.extra_c:resize_nearest_neighbor", required_inputs=2,
          **_opts("ResizeNearestNeighborOptions", *_RESIZE), structural=(1,)),
    OpDef("RESIZE_BILINEAR", "refops.resize:check_resize", "refops.resize:resize_bilinear",
          "codegen.extra_c:resize_bilinear", types=_t(I8), macs="model.ops_extra:bilinear_macs", required_inputs=2,
          **_opts("ResizeBilinearOptions", *_RESIZE), structural=(1,)),
    OpDef("SQUEEZE", "model.ops_extra:_check_squeeze", "refops.layout:squeeze", "codegen.model_c:reshape",
          memory="alias", **_opts("SqueezeOptions", Field("squeeze_dims", "SqueezeDims", "ints", ()))),
    OpDef("EXPAND_DIMS", "model.ops_extra:_check_expand_dims", "refops.layout:expand_dims", "codegen.model_c:reshape",
          required_inputs=2, memory="alias", **_opts("ExpandDimsOptions"), structural=(1,)),
    OpDef("DEPTH_TO_SPACE", "model.ops_extra:_check_space_depth", "refops.layout:depth_to_space",
          "codegen.extra_c:transpose", types=_t(I8), **_opts("DepthToSpaceOptions", *_BLOCK)),
    OpDef("SPACE_TO_DEPTH", "model.ops_extra:_check_space_depth", "refops.layout:space_to_depth",
          "codegen.extra_c:transpose", types=_t(I8), **_opts("SpaceToDepthOptions", *_BLOCK)),
    OpDef("LEAKY_RELU", "model.ops:_check_same", "refops.leaky_relu:leaky_relu", "codegen.model_c:leaky_relu",
          memory="elementwise", tiling="unary", **_opts("LeakyReluOptions", Field("alpha", "Alpha", "float", 0.0))),
    OpDef("SUB", "model.ops:_check_binary", "refops.sub:sub", "codegen.model_c:sub", const_operands=True,
          memory="elementwise", tiling="pointwise", **_opts("SubOptions", _ACT), **_BIN),
    OpDef("TRANSPOSE_CONV", "model.ops:_check_transpose_conv", "refops.transpose_conv:transpose_conv",
          "codegen.model_c:transpose_conv", macs="model.ops:transpose_conv_macs", required_inputs=3,
          **_opts("TransposeConvOptions", _PAD, *_STRIDES, _ACT, required=True)),
    # Stateful operators: their check owns the types (stateful.py), their state lives in variable tensors.
    OpDef("SVDF", "model.stateful:check_svdf", "refops.svdf:svdf", "codegen.stateful_c:svdf", types=_t(I8),
          macs="model.stateful:svdf_macs", required_inputs=5,
          **_opts("SVDFOptions", Field("rank", "Rank"), _ACT, required=True)),
    OpDef("UNIDIRECTIONAL_SEQUENCE_LSTM", "model.stateful:check_lstm", "refops.lstm:lstm", "codegen.stateful_c:lstm",
          types=_t(I8), macs="model.stateful:lstm_macs", **_opts("UnidirectionalSequenceLSTMOptions",
                  Field("lstm_activation", "FusedActivationFunction", "activation", "TANH"),
                  Field("cell_clip", "CellClip", "float", 0.0), Field("proj_clip", "ProjClip", "float", 0.0),
                  Field("time_major", "TimeMajor", "bool", False), required=True)),
    # TFLite Micro's other int8/int16 operators (issue 33)
    OpDef("ABS", "model.ops:_check_same", "refops.unary:abs_", "codegen.extra_c:abs_", memory="elementwise",
          **_opts("AbsOptions")),
    OpDef("RSQRT", "model.ops:_check_same", "refops.unary:rsqrt", "codegen.extra_c:rsqrt", types=_t(I8_16),
          memory="elementwise"),
    OpDef("EQUAL", "model.ops_extra:_check_compare", "refops.compare:compare", "codegen.extra_c:compare",
          types=_CMP, memory="elementwise", **_opts("EqualOptions"), **_BIN),
    OpDef("NOT_EQUAL", "model.ops_extra:_check_compare", "refops.compare:compare", "codegen.extra_c:compare",
          types=_CMP, memory="elementwise", **_opts("NotEqualOptions"), **_BIN),
    OpDef("LESS", "model.ops_extra:_check_compare", "refops.compare:compare", "codegen.extra_c:compare",
          types=_t(("int8", "int32"), ("bool",)), memory="elementwise", **_opts("LessOptions"), **_BIN),
    OpDef("LESS_EQUAL", "model.ops_extra:_check_compare", "refops.compare:compare", "codegen.extra_c:compare",
          types=_CMP, memory="elementwise", **_opts("LessEqualOptions"), **_BIN),
    OpDef("GREATER", "model.ops_extra:_check_compare", "refops.compare:compare", "codegen.extra_c:compare",
          types=_CMP, memory="elementwise", **_opts("GreaterOptions"), **_BIN),
    OpDef("GREATER_EQUAL", "model.ops_extra:_check_compare", "refops.compare:compare", "codegen.extra_c:compare",
          types=_CMP, memory="elementwise", **_opts("GreaterEqualOptions"), **_BIN),
    OpDef("LOGICAL_AND", "model.ops_extra:_check_logical", "refops.logical:logical_and", "codegen.extra_c:logical",
          types=_BOOL, memory="elementwise", **_opts("LogicalAndOptions"), **_BIN),
    OpDef("LOGICAL_OR", "model.ops_extra:_check_logical", "refops.logical:logical_or", "codegen.extra_c:logical",
          types=_BOOL, memory="elementwise", **_opts("LogicalOrOptions"), **_BIN),
    OpDef("LOGICAL_NOT", "model.ops:_check_same", "refops.logical:logical_not", "codegen.extra_c:logical_not",
          types=_BOOL, memory="elementwise", **_opts("LogicalNotOptions")),
    OpDef("SELECT_V2", "model.ops_extra:_check_select", "refops.logical:select_v2", "codegen.extra_c:select_v2",
          types=_t(("bool",) + I8_16, I8_16), memory="elementwise", required_inputs=3, all_required=True,
          **_opts("SelectV2Options")),
    OpDef("SUM", "model.ops:_check_mean", "refops.reduce:mean", "codegen.model_c:mean", required_inputs=2,
          **_REDUCER, structural=(1,)),
    OpDef("REDUCE_MAX", "model.ops_extra:_check_reduce_minmax", "refops.reduce:reduce_max",
          "codegen.extra_c:reduce_minmax", types=_t(I8), required_inputs=2, **_REDUCER,
          structural=(1,)),
    OpDef("REDUCE_MIN", "model.ops_extra:_check_reduce_minmax", "refops.reduce:reduce_min",
          "codegen.extra_c:reduce_minmax", types=_t(I8), required_inputs=2, **_REDUCER,
          structural=(1,)),
    OpDef("SLICE", "model.ops_extra:_check_slice_v1", "refops.shape_ops:slice_", "codegen.model_c:slice_",
          required_inputs=3, all_required=True, **_opts("SliceOptions"), structural=(1, 2)),
    OpDef("PADV2", "model.ops_extra:_check_padv2", "refops.shape_ops:pad", "codegen.model_c:pad", required_inputs=2,
          **_opts("PadV2Options"), structural=(1,), memory="pad"),
    OpDef("SPLIT_V", "model.ops_extra:_check_split_v", "refops.shape_ops:split_v", "codegen.model_c:split_v",
          required_inputs=3, all_required=True,
          **_opts("SplitVOptions", Field("num_splits", "NumSplits", default=N_OUTPUTS)), structural=(1, 2)),
    # int32 too (TFLM's kernels are byte moves for every type): TensorFlow stacks computed GATHER_ND indices
    OpDef("PACK", "model.ops_extra:_check_pack", "refops.shape_ops:pack", "codegen.model_c:pack", all_required=True,
          types=_t(("int8", "int16", "int32")),
          **_opts("PackOptions", Field("values_count", "ValuesCount"), Field("axis", "Axis", default=0), required=True)),
    OpDef("UNPACK", "model.ops_extra:_check_unpack", "refops.shape_ops:unpack", "codegen.model_c:unpack",
          types=_t(("int8", "int16", "int32")),
          **_opts("UnpackOptions", Field("num", "Num", default=N_OUTPUTS), Field("axis", "Axis", default=0))),
    OpDef("SQUARED_DIFFERENCE", "model.ops_extra:_check_squared_difference", "refops.arith:squared_difference",
          "codegen.extra_c:squared_difference", memory="elementwise",
          **_opts("SquaredDifferenceOptions"), **_BIN),
    OpDef("ADD_N", "model.ops_extra:_check_add_n", "refops.arith:add_n", "codegen.extra_c:add_n", types=_t(I8),
          all_required=True, memory="elementwise", **_opts("AddNOptions")),
    OpDef("ZEROS_LIKE", "model.ops:_check_same", "refops.arith:zeros_like", "codegen.extra_c:zeros_like",
          types=_t(I8), memory="elementwise", **_opts("ZerosLikeOptions")),
    OpDef("ARG_MAX", "model.ops_extra:_check_argminmax", "refops.index_ops:argminmax", "codegen.extra_c:argminmax",
          types=_t(I8, ("int32",)), required_inputs=2, all_required=True,
          **_opts("ArgMaxOptions", Field("output_type", "OutputType", default=2)), structural=(1,)),
    OpDef("ARG_MIN", "model.ops_extra:_check_argminmax", "refops.index_ops:argminmax", "codegen.extra_c:argminmax",
          types=_t(I8, ("int32",)), required_inputs=2, all_required=True,
          **_opts("ArgMinOptions", Field("output_type", "OutputType", default=2)), structural=(1,)),
    OpDef("GATHER", "model.ops_extra:_check_gather", "refops.index_ops:gather", "codegen.extra_c:gather",
          types=_t(I8), **_BIN, **_opts("GatherOptions", Field("axis", "Axis", default=0),
                                         Field("batch_dims", "BatchDims", default=0)), structural=(1,)),
    OpDef("SPACE_TO_BATCH_ND", "model.ops_extra:_check_space_batch", "refops.index_ops:space_to_batch_nd",
          "codegen.extra_c:space_batch", types=_t(I8), required_inputs=3, all_required=True,
          **_opts("SpaceToBatchNDOptions"), structural=(1, 2)),
    OpDef("BATCH_TO_SPACE_ND", "model.ops_extra:_check_space_batch", "refops.index_ops:batch_to_space_nd",
          "codegen.extra_c:space_batch", types=_t(I8), required_inputs=3, all_required=True,
          **_opts("BatchToSpaceNDOptions"), structural=(1, 2)),
    OpDef("MIRROR_PAD", "model.ops_extra:_check_mirror_pad", "refops.index_ops:mirror_pad",
          "codegen.extra_c:mirror_pad", types=_t(I8), **_BIN,
          **_opts("MirrorPadOptions", Field("mode", "Mode", default=0)), structural=(1,)),
    OpDef("REVERSE_V2", "model.ops_extra:_check_reverse", "refops.index_ops:reverse_v2", "codegen.extra_c:strided_copy",
          **_BIN, **_opts("ReverseV2Options"), structural=(1,)),
    OpDef("BROADCAST_TO", "model.ops_extra:_check_broadcast_to", "refops.index_ops:broadcast_to",
          "codegen.extra_c:strided_copy", **_BIN, **_opts("BroadcastToOptions"), structural=(1,)),
    OpDef("BATCH_MATMUL", "model.ops_extra:_check_batch_matmul", "refops.matmul:batch_matmul",
          "codegen.extra_c:batch_matmul", macs="model.ops_extra:batch_matmul_macs", **_BIN,
          **_opts("BatchMatMulOptions", Field("adj_x", "AdjX", "bool", False), Field("adj_y", "AdjY", "bool", False),
                  Field("asymmetric_quantize_inputs", "AsymmetricQuantizeInputs", "bool", False))),
    OpDef("ELU", "model.ops:_check_same", "refops.norm:elu", "codegen.extra_c:elu", types=_t(I8), memory="elementwise"),
    OpDef("L2_NORMALIZATION", "model.ops_extra:_check_l2_normalization", "refops.norm:l2_normalization",
          "codegen.extra_c:l2_normalization", types=_t(I8), memory="elementwise", **_opts("L2NormOptions", _ACT)),
    OpDef("SHAPE", "model.ops_extra:_check_shape", "refops.norm:shape", "codegen.extra_c:shape",
          types=_t(I8_16, ("int32",)), **_opts("ShapeOptions", Field("out_type", "OutType", default=2))),
    OpDef("GATHER_ND", "model.ops_extra:_check_gather_nd", "refops.norm:gather_nd", "codegen.extra_c:gather_nd",
          types=_t(I8), **_BIN, **_opts("GatherNdOptions"), structural=(1,)),
    OpDef("CUMSUM", "model.ops_extra:_check_cumsum", "refops.arith:cumsum", "codegen.extra_c:cumsum", types=_t(I8),
          memory="elementwise", **_BIN, **_opts("CumsumOptions", Field("exclusive", "Exclusive", "bool", False),
                                                Field("reverse", "Reverse", "bool", False)), structural=(1,)),
    OpDef("EMBEDDING_LOOKUP", "model.ops_extra:_check_embedding_lookup", "refops.index_ops:embedding_lookup",
          "codegen.extra_c:embedding_lookup", types=_t(("int32",), ("int8",)), **_BIN),
    OpDef("CAST", "model.ops_extra:_check_cast", "refops.cast:cast", "codegen.extra_c:cast",
          types=(("int8", "int16", "int32", "float32", "bool"), ("int8", "int16", "int32")), memory="elementwise",
          **_opts("CastOptions", Field("in_data_type", "InDataType", default=0),
                  Field("out_data_type", "OutDataType", default=0))),
    OpDef("LOG_SOFTMAX", "model.ops_extra:_check_log_softmax", "refops.log_softmax:log_softmax",
          "codegen.extra_c:log_softmax", types=_t(I8), memory="elementwise", **_opts("LogSoftmaxOptions")),
    OpDef("DIV", "model.ops_extra:_check_div", "refops.div:div", "codegen.extra_c:div", types=_t(I8),
          const_operands=True, memory="elementwise", **_opts("DivOptions", _ACT), **_BIN),
    # float32 between DEQUANTIZE and QUANTIZE (TensorFlow's int8 LayerNormalization); int8/int16: NOT_BUILT
    OpDef("NEG", "model.ops:_check_same", "refops.float_ops:neg", "codegen.extra_c:neg", types=_t(("float32",)),
          memory="elementwise", **_opts("NegOptions")),
    # oracle: TensorFlow Lite's reference kernel (the tflite-micro interpreter does not register GELU)
    OpDef("GELU", "model.ops:_check_same", "refops.gelu:gelu", "codegen.extra_c:gelu", types=_t(I8),
          memory="elementwise", **_opts("GeluOptions", Field("approximate", "Approximate", "bool", False))),
    # int8 only: TFLite Micro fails an int16 FILL at invoke; its dims must be constant (TFLM refuses others)
    OpDef("FILL", "model.ops_extra:_check_fill", "refops.index_ops:fill", "codegen.extra_c:fill", types=_t(I8),
          **_BIN, **_opts("FillOptions"), structural=(0,)),
    # resource variables (model/variables.py: the reader binds VAR_HANDLE and evaluates a constant CALL_ONCE init)
    OpDef("READ_VARIABLE", "model.variables:check_read_variable", "refops.variables:read_variable",
          "codegen.stateful_c:read_variable"),
    OpDef("ASSIGN_VARIABLE", "model.variables:check_assign_variable", "refops.variables:assign_variable",
          "codegen.stateful_c:assign_variable", required_inputs=2, all_required=True, const_operands=True),
    # control flow (model/control.py): the subgraphs they run are read into Graph.subgraphs, each planned as an
    # arena in the operator's scratch buffer (plan/arena/planner.py) and made a C function (codegen/control_c.py)
    OpDef("IF", "model.control:check_if", "refops.control:if_", "codegen.control_c:if_", types=_t(_CF),
          const_operands=True, **_opts("IfOptions", Field("then_subgraph", "ThenSubgraphIndex"),
                                       Field("else_subgraph", "ElseSubgraphIndex"), required=True)),
    OpDef("WHILE", "model.control:check_while", "refops.control:while_", "codegen.control_c:while_",
          types=_t(_CF), const_operands=True, **_opts("WhileOptions", Field("cond_subgraph", "CondSubgraphIndex"),
                                                      Field("body_subgraph", "BodySubgraphIndex"), required=True)),
)
# TFLite Micro's signal library (custom operators, their custom_options a flexbuffer map kept as the options dict)
_U32, _U64, _I16 = ("uint32",), ("uint64",), ("int16",)
OPDEFS += tuple(
    OpDef(f"SIGNAL_{name}", f"model.signal:check_{name.lower()}", f"refops.signal:{name.lower()}",
          f"codegen.signal_c:{name.lower()}", types=types, custom=custom, memory=memory, const_operands=True)
    for name, custom, types, memory in (
        ("WINDOW", "SignalWindow", _t(_I16), "elementwise"),
        ("RFFT", "SignalRfft", _t(_I16), ""),
        ("ENERGY", "SignalEnergy", _t(_I16, _U32), ""),
        ("FILTER_BANK", "SignalFilterBank", _t(_U32 + _I16, _U64), ""),
        ("FILTER_BANK_SQUARE_ROOT", "SignalFilterBankSquareRoot", _t(_U64 + ("int32",), _U32), ""),
        ("FILTER_BANK_LOG", "SignalFilterBankLog", _t(_U32, _I16), ""),
        ("PCAN", "SignalPCAN", _t(_U32 + _I16, _U32), "elementwise"),
        ("FILTER_BANK_SPECTRAL_SUBTRACTION", "SignalFilterBankSpectralSubtraction", _t(_U32), ""),  # state: output 1
        # state: a hidden variable input (model/signal.py STATE_INPUT)
        ("FRAMER", "SignalFramer", _t(_I16, _I16 + ("bool",)), ""),
        ("STACKER", "SignalStacker", _t(_I16, _I16 + ("bool",)), ""),
        ("DELAY", "SignalDelay", _t(_I16), ""),
        ("OVERLAP_ADD", "SignalOverlapAdd", _t(_I16), ""),
        ("IRFFT", "SignalIrfft", _t(_I16), ""),  # a hidden input: kiss_fftri's work buffer
        ("FFT_AUTO_SCALE", "SignalFftAutoScale", _t(_I16, _I16 + ("int32",)), ""),
    ))
BY_NAME = {d.name: d for d in OPDEFS}
CUSTOM = {d.custom: d.name for d in OPDEFS if d.custom}  # custom_code -> opcode (reader, writer)


# TFLite Micro operators deliberately not built, and why (for docs/operators.md). Float-only: TFLite Micro's
# interpreter (the tflite-micro package) refuses int8 and int16 models of them (TensorFlow-converted one-operator
# models retyped to int8 / int16 with a quantisation).
NOT_BUILT = {
    "NEG": "int8/int16: float-only in TFLite Micro ('Type INT8 (9) not supported' at invoke); float32 is built "
           "(TensorFlow writes it between DEQUANTIZE and QUANTIZE in each LayerNormalization of an int8 model)",
    "SQUARE": "float-only in TFLite Micro (int8/int16 fail at invoke)",
    "EXP": "float-only in TFLite Micro (int8/int16 fail at prepare)",
    "LOG": "float-only in TFLite Micro (int8/int16 fail at invoke)",
    "FLOOR_DIV": "float32/int32 only in TFLite Micro ('Type INT8 is not supported by FLOOR_DIV')",
    "FLOOR_MOD": "float32/int32 only in TFLite Micro ('Type INT8 is not supported by FLOOR_MOD')",
    "FILL": "int16: TFLite Micro fails at invoke ('Fill only currently supports float32 for input 1'); computed "
            "dims: TFLite Micro refuses them ('Non-constant >dims< tensor is not supported'); a constant value too: "
            "an unfolded constant (refused, as every operator of constants only); int8 with a computed value is built",
    # TensorFlow's int8 converter writes these in float32 between DEQUANTIZE and QUANTIZE (checked with TensorFlow
    # 2.21 and the tflite-micro interpreter, which runs them on its float kernels)
    **{name: "float-only in TFLite Micro (TensorFlow's int8 converter writes it in float32 between DEQUANTIZE and "
             f"QUANTIZE); not built{why}: keep it outside the network (before its input or after its output)"
       for name, why in (("SIN", " (TFLite Micro calls its host's sinf, not correctly rounded everywhere)"),
                         ("COS", " (TFLite Micro calls its host's cosf, not correctly rounded everywhere)"),
                         ("FLOOR", ""), ("CEIL", ""), ("ROUND", ""))},
    "SQRT": "int8: TensorFlow's converter writes it in int8, and TFLite Micro fails at invoke (float-only kernel); "
            "use RSQRT, which is built",
    "L2_POOL_2D": "float-only in TFLite Micro (its l2_pool_2d kernel has a float32 path only)",
    "BROADCAST_ARGS": "int32/int64 shape arithmetic: TensorFlow folds it when shapes are constant, and computed "
                      "shapes are not supported (every tensor's shape is fixed at build time)",
}


def names(**where) -> tuple:
    """Opcodes, in table order, whose fields equal the given values: names(tiling='windowed')."""
    return tuple(d.name for d in OPDEFS if all(getattr(d, k) == v for k, v in where.items()))


def resolve(ref: str | None):
    """The function a 'module:function' reference names (module under buildtool), or None."""
    if ref is None:
        return None
    mod, fn = ref.split(":")
    return getattr(importlib.import_module(f"buildtool.{mod}"), fn)


def table(column: str) -> dict:
    """{opcode: function} of one reference column (check, kernel, macs, emit), operators without one left out."""
    return {d.name: resolve(getattr(d, column)) for d in OPDEFS if getattr(d, column)}


__all__ = ["Field", "N_OUTPUTS", "OpDef", "OPDEFS", "BY_NAME", "CUSTOM", "NOT_BUILT", "names", "resolve", "table"]
