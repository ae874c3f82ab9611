"""The operators we support: their normalised options, shape checks and MAC counts.

Options keys (all operators):
  CONV_2D            padding ('SAME'|'VALID'), stride_h, stride_w, dilation_h, dilation_w, activation
  DEPTHWISE_CONV_2D  as CONV_2D plus depth_multiplier
  FULLY_CONNECTED    activation, keep_num_dims
  ADD, MUL           activation
  CONCATENATION      axis, activation
  AVERAGE_POOL_2D,
  MAX_POOL_2D        padding, stride_h, stride_w, filter_h, filter_w, activation
  MEAN               keep_dims            (axes come from constant input 1)
  PAD                -                    (paddings come from constant input 1)
  RESHAPE            -                    (the output tensor's shape is authoritative)
  SOFTMAX            beta
  SPLIT              num_splits           (axis comes from constant input 0)
  STRIDED_SLICE      begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, offset
  LOGISTIC, HARD_SWISH, QUANTIZE, DEQUANTIZE: none
  SUB                activation
  LEAKY_RELU         alpha
  TRANSPOSE_CONV     padding, stride_h, stride_w, activation  (inputs: output_shape, weights, input, [bias])
  RELU, RELU6, TANH, PRELU, MAXIMUM, MINIMUM: none   (PRELU alpha is constant input 1)
  TRANSPOSE          -                    (perm comes from constant input 1)
  RESIZE_NEAREST_NEIGHBOR,
  RESIZE_BILINEAR    align_corners, half_pixel_centers   (output size comes from constant input 1)
  SQUEEZE            squeeze_dims         (the output tensor's shape is authoritative)
  EXPAND_DIMS        -                    (axis comes from constant input 1)
  DEPTH_TO_SPACE,
  SPACE_TO_DEPTH     block_size
  ABS, RSQRT, EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: none  (comparisons: bool output)
  LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT: none (bool)   SELECT_V2: none (bool condition, then the two values)
activation is one of 'NONE', 'RELU', 'RELU_N1_TO_1', 'RELU6'.

Activations are int8; the operators in INT16_OPS also run 16x8 quantised (int16 activations with
zero point 0, int8 weights, int32 or int64 bias), as TFLite Micro does.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, short
from . import opdefs
from .ir import Graph, Operator
from .opdefs import OPDEFS
from .stateful import check_edge, edge_types

# The tables below are derived from the one table per operator, opdefs.OPDEFS.
SUPPORTED = tuple(d.name for d in OPDEFS)
# Operators that also take int16 activations (16x8 quantisation).
INT16_OPS = tuple(d.name for d in OPDEFS if "int16" in d.types[0])
ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6")
# Activation types of the operators that are not simply int8 (or int8/int16 on INT16_OPS): (inputs, outputs).
ACT_TYPES = {d.name: d.types for d in OPDEFS if d.types not in (((("int8",),) * 2), (("int8", "int16"),) * 2)}
# The smallest activation scale: 6.0 / scale (the RELU6 bound) must stay a finite float32.
MIN_SCALE = 1e-30
# Element-wise operators whose output may overwrite an input of the same size.
ELEMENTWISE_INPLACE = opdefs.names(memory="elementwise")
# Operators that only reinterpret their input's bytes.
ALIASING = opdefs.names(memory="alias")


def axis_padding(padding, axis: int):
    """A window's padding along axis 0 (height) or 1 (width): "SAME" or "VALID" as TFLite writes it, or the
    (before, after) pair of an explicit padding ((top, bottom), (left, right)): a PAD folded into its
    convolution (model/fold_pad.py), which no .tflite file holds."""
    return padding if isinstance(padding, str) else tuple(int(p) for p in padding[axis])


def conv_out_size(size: int, k: int, stride: int, dilation: int, padding) -> int:
    """Output size along one axis; padding: "SAME", "VALID" or that axis's (before, after) (axis_padding)."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    if not isinstance(padding, str):
        return (size + padding[0] + padding[1] - eff) // stride + 1
    return (size - eff + stride) // stride


def conv_padding(size: int, k: int, stride: int, dilation: int, padding) -> int:
    """Leading padding (top or left) as TFLite computes it (an explicit pair: its first)."""
    if not isinstance(padding, str):
        return int(padding[0])
    if padding != "SAME":
        return 0
    out = conv_out_size(size, k, stride, dilation, padding)
    eff = (k - 1) * dilation + 1
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2


def activation_types(opcode: str) -> tuple:
    """(input types, output types) of an operator's activations."""
    d = opdefs.BY_NAME.get(opcode)
    return d.types if d else (("int8",), ("int8",))


# Operators without int16 (16x8) activations here, and why (tests/test_ops_int16.py runs each in TFLite Micro):
TFLM_REFUSES_INT16 = "TFLite Micro refuses it in int16 too"
INT16_NOT_RUN = {
    **{op: TFLM_REFUSES_INT16 for op in (
        "HARD_SWISH", "RESIZE_BILINEAR", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "EQUAL", "NOT_EQUAL", "LESS",
        "LESS_EQUAL", "GREATER_EQUAL", "REDUCE_MAX", "REDUCE_MIN", "ADD_N", "ZEROS_LIKE", "ARG_MAX",
        "ARG_MIN", "GATHER", "GATHER_ND", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "MIRROR_PAD", "ELU",
        "L2_NORMALIZATION", "CUMSUM", "LOG_SOFTMAX", "DIV", "FILL", "SVDF")},
    "GREATER": "int8 only here; TFLite Micro's int16 GREATER runs but its output is not the comparison",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "int8 only here; TFLite Micro runs it 16x8",
    "GELU": "int8 only here; TFLite Micro has no GELU (int8 checked against TFLite's reference interpreter)",
}


def int16_support(name: str) -> str:
    """`buildtool ops`'s int16 column: yes (16x8 activations run), no and why (INT16_NOT_RUN), or n/a (an
    operator of bool, float, index or signal values)."""
    ins, outs = activation_types(name)
    if "int16" in ins or "int16" in outs:
        return "yes"
    if name in INT16_NOT_RUN:
        return f"no: {INT16_NOT_RUN[name]}"
    return "n/a"


def supported_table() -> list:
    """What `buildtool ops` prints: every supported operator, its activation types and whether it runs int16
    (int16_support), from the tables the checks use."""
    return [{"op": name, "inputs": list(activation_types(name)[0]), "outputs": list(activation_types(name)[1]),
             "int16": int16_support(name)} for name in SUPPORTED]


def unsupported_message(op: Operator) -> str:
    why = opdefs.NOT_BUILT.get(op.opcode)
    if why:  # a TFLite Micro operator deliberately not built: say why (docs/operators.md lists them)
        return f"operator {op.index} is {op.opcode}, which is not supported: {why}"
    return f"operator {op.index} is {op.opcode}, which is not supported; run 'buildtool ops' to see what is"


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _shape(g: Graph, i: int) -> tuple:
    return tuple(g.tensors[i].shape)


def _need(cond: bool, op: Operator, what: str) -> None:
    if not cond:
        raise ModelError(f"operator {op.index} ({op.opcode}): {what}")


def _const(g: Graph, op: Operator, pos: int, what: str):
    _need(len(op.inputs) > pos and op.inputs[pos] >= 0 and g.tensors[op.inputs[pos]].is_const, op,
          f"{what} (input {pos}) must be a constant tensor")
    return g.tensors[op.inputs[pos]].data


def check_op(g: Graph, op: Operator) -> None:
    """Semantic checks of one operator: arity, types, shapes. Raises ModelError."""
    if op.opcode not in SUPPORTED:
        raise ModelError(unsupported_message(op))
    o = op.options
    if "activation" in o and o["activation"] not in ACTIVATIONS:
        raise ModelError(f"operator {op.index} ({op.opcode}): fused activation {o['activation']} is not supported")
    _need(len(op.outputs) >= 1 or op.opcode == "ASSIGN_VARIABLE", op, "has no outputs")
    if opdefs.BY_NAME[op.opcode].check.startswith(("model.stateful:", "model.signal:", "model.control:")):  # own types
        return _CHECKS[op.opcode](g, op)
    if edge_types(g, op):
        return check_edge(g, op)
    _check_dtypes(g, op)
    fn = _CHECKS.get(op.opcode)
    if fn:
        fn(g, op)


def _check_dtypes(g, op) -> None:
    """Activation types: int8 everywhere, int16 (zero point 0) on INT16_OPS, float only at QUANTIZE's
    input and DEQUANTIZE's output, int32 at QUANTIZE's input and TRANSPOSE_CONV's output_shape."""
    act_in = [i for i in op.inputs if i >= 0 and not g.tensors[i].is_const]
    if op.opcode == "TRANSPOSE_CONV":
        act_in = [i for i in act_in if i != op.inputs[0]]  # output_shape (int32)
    if op.opcode in ("GATHER", "GATHER_ND", "FILL"):  # computed indices / dims: the operator's check says
        act_in = [i for i in act_in if i != op.inputs[0 if op.opcode == "FILL" else 1]]
    in_types, out_types = activation_types(op.opcode)
    for t, ok in [(g.tensors[i], in_types) for i in act_in] + [(g.tensors[i], out_types) for i in op.outputs]:
        name = short(t.name)
        if t.dtype not in ok and t.dtype.startswith("float"):
            raise ModelError(f"operator {op.index} ({op.opcode}): tensor {t.index} is {t.dtype}; float activations "
                             f"are not supported: convert with full-integer int8 quantisation")
        if t.dtype == "int16" and "int16" not in ok:
            if INT16_NOT_RUN.get(op.opcode, TFLM_REFUSES_INT16) != TFLM_REFUSES_INT16:
                raise ModelError(f"operator {op.index} ({op.opcode}): tensor {t.index} is int16; buildtool runs "
                                 f"{op.opcode} on int8 only: keep this operator int8 (QUANTIZE around it)")
            raise ModelError(f"operator {op.index} ({op.opcode}): tensor {t.index} is int16, and TFLite Micro runs "
                             f"{op.opcode} on int8 only: keep this operator int8 (QUANTIZE around it)")
        if t.dtype not in ok and not {"int8", "int16"} & set(ok):  # float-only in TFLite Micro (NEG)
            raise ModelError(f"operator {op.index} ({op.opcode}): tensor {t.index} is {t.dtype}, and TFLite Micro "
                             f"runs {op.opcode} on {'/'.join(ok)} only: keep it float (DEQUANTIZE before it, "
                             f"QUANTIZE after it)")
        if t.dtype not in ok:
            raise ModelError(f"operator {op.index} ({op.opcode}): tensor {t.index} is {t.dtype}; only "
                             f"{'/'.join(ok)} activations are supported: quantise the model to int8 (or 16x8)")
        if t.quant is None and t.dtype in ("int8", "int16"):
            raise ModelError(f"operator {op.index} ({op.opcode}): {t.dtype} tensor '{name}' has no quantisation")
        if t.dtype in ("int8", "int16") and not (t.quant.scale >= MIN_SCALE).all():
            raise ModelError(f"operator {op.index} ({op.opcode}): {t.dtype} tensor {t.index} has scale "
                             f"{float(t.quant.scale.min()):.3g}, too small to compute with (at least {MIN_SCALE:g})")
        if t.dtype == "int8" and not ((t.quant.zero_point >= -128) & (t.quant.zero_point <= 127)).all():
            raise ModelError(f"operator {op.index} ({op.opcode}): int8 tensor {t.index} has zero point "
                             f"{int(t.quant.zero_point[0])}, outside -128..127")
        if t.dtype == "int16" and t.quant is not None and int(t.quant.zero_point[0]) != 0:
            raise ModelError(f"operator {op.index} ({op.opcode}): int16 tensor '{name}' has zero point "
                             f"{int(t.quant.zero_point[0])}; 16x8 quantisation needs zero point 0")
    scaled_in, scaled_out = ([g.tensors[i] for i in ts if g.tensors[i].dtype in ("int8", "int16")
                              and g.tensors[i].quant is not None] for ts in (act_in, op.outputs))
    for t, o in ((t, o) for t in scaled_in for o in scaled_out):  # each input rescaled to each output
        _multiplier_ok(op, float(t.scale) / float(o.scale), f"input scale {t.scale:g} / output scale {o.scale:g} is")
    _activation_bounds_ok(op, scaled_out)
    if opdefs.BY_NAME[op.opcode].const_operands:  # its kernel rescales constant operands as activations
        for i in op.inputs:
            t = g.tensors[i] if i >= 0 else None
            if t is not None and t.is_const and t.dtype in ("int8", "int16") and (
                    t.quant is None or not (t.quant.scale >= MIN_SCALE).all()):
                raise ModelError(f"operator {op.index} ({op.opcode}): constant {t.dtype} operand '{short(t.name)}' "
                                 f"has no usable quantisation")
    if op.opcode not in ("QUANTIZE", "DEQUANTIZE", "RESHAPE", "CAST"):
        same = act_in + list(op.outputs) if in_types == out_types else act_in  # comparisons: bool out
        if "bool" not in out_types and set(out_types) <= set(in_types):  # SELECT_V2: bool beside the values
            same = [i for i in same if g.tensors[i].dtype != "bool"] + list(op.outputs)
        kinds = {g.tensors[i].dtype for i in same}
        _need(len(kinds) <= 1, op, f"mixes activation types {sorted(kinds)}; inputs and outputs must share one")


def _activation_bounds_ok(op, outputs) -> None:
    """A fused RELU6 / RELU_N1_TO_1's bounds (6 or +-1 over the output scale, float32) within int32: TFLite
    Micro's CalculateActivationRangeQuantized refuses the operator in Prepare past it ('failed to allocate
    tensors'), and past it our clamp would differ from any C build's."""
    bound = {"RELU6": 6.0, "RELU_N1_TO_1": 1.0}.get(op.options.get("activation"))
    for o in outputs if bound else ():
        _need(bool(np.float32(bound) / np.float32(o.scale) < 2.0 ** 31), op,
              f"fused {op.options['activation']}'s bound {bound:g} / output scale {o.scale:.3g} overflows int32 "
              f"(TFLite Micro refuses it); re-quantise")


def _bias_ok(g, op, pos: int, n: int) -> None:
    """Bias: int32 [n]; for int16 (16x8) activations int64 [n] too, or only int64 where TFLM reads the
    bias as int64 whatever its type (DEPTHWISE_CONV_2D, TRANSPOSE_CONV: checked against TFLM)."""
    if len(op.inputs) > pos and op.inputs[pos] >= 0:
        b = _const(g, op, pos, "bias")
        types = ("int32",)
        if g.tensors[op.outputs[0]].dtype == "int16":
            types = ("int64",) if op.opcode in ("DEPTHWISE_CONV_2D", "TRANSPOSE_CONV") else ("int32", "int64")
        _need(b.size == n and g.tensors[op.inputs[pos]].dtype in types, op,
              f"bias must be {' or '.join(types)} [{n}]" + ("; re-quantise the model with an int64 bias (16x8)"
                                                            if types == ("int64",) else ""))


def _weight_scales_ok(g, op, x: int, w: int, what: str) -> None:
    """Weights' scales finite and >= 0, and every requantisation multiplier input scale x weight scale /
    output scale below 2**31 (_multiplier_ok; past it the result differs between the host, Arm and TFLite
    Micro's build)."""
    fq, ti, to = g.tensors[op.inputs[w]].quant, g.tensors[op.inputs[x]], g.tensors[op.outputs[0]]
    fs = fq.scale.astype(np.float64)
    _need(bool(np.isfinite(fs).all() and (fs >= 0).all()), op, f"{what} scales must be finite and non-negative")
    if ti.quant is None or to.quant is None:
        return  # the activation checks say so
    eff = float(np.float64(ti.scale) * fs.max() / np.float64(to.scale))
    _multiplier_ok(op, eff, f"input x {what} / output scale = {eff:.3g},")


def _multiplier_ok(op, ratio: float, said: str) -> None:
    """A requantisation multiplier (a ratio of scales) below 2**31: a larger one has TFLite Micro's
    MultiplyByQuantizedMultiplier shift left by 32 or more (undefined in C). said: the ratio, for the line."""
    _need(ratio < 2.0 ** 31, op, f"{said} over TFLite Micro's 2**31 requantisation limit; re-quantise")


def _check_conv(g, op):
    o = op.options
    _need(len(op.inputs) >= 2 and op.inputs[0] >= 0, op, "needs input and filter")
    inp, flt, out = _shape(g, op.inputs[0]), _const(g, op, 1, "filter"), _shape(g, op.outputs[0])
    _need(len(inp) == 4 and len(out) == 4 and flt.ndim == 4, op, "input, filter and output must be 4-D")
    _need(inp[0] == 1 and out[0] == 1, op, f"batch size {inp[0]} is not supported; convert with batch size 1")
    _need(g.tensors[op.inputs[1]].dtype == "int8", op, "filter must be int8")
    dw = op.opcode == "DEPTHWISE_CONV_2D"
    cout = flt.shape[3] if dw else flt.shape[0]
    kh, kw = flt.shape[1], flt.shape[2]
    if dw:
        _need(flt.shape[0] == 1, op, "depthwise filter must be [1, kh, kw, cout]")
        _need(cout == inp[3] * o.get("depth_multiplier", 1), op,
              f"output channels {cout} != input channels {inp[3]} x depth multiplier")
    else:
        _need(flt.shape[3] >= 1 and inp[3] % flt.shape[3] == 0, op,
              f"filter depth {flt.shape[3]} does not divide input channels {inp[3]}")
        groups = inp[3] // flt.shape[3]
        _need(cout % groups == 0, op, f"output channels {cout} are not a multiple of its {groups} groups "
                                      f"(input channels {inp[3]} / filter depth {flt.shape[3]})")
    _need(out[3] == cout, op, f"output channels {out[3]} != filter channels {cout}")
    for k in ("stride_h", "stride_w", "dilation_h", "dilation_w"):
        _need(1 <= o.get(k, 1) <= 64, op, f"{k} {o.get(k)} out of range")
    span_h, span_w = (kh - 1) * o["dilation_h"] + 1, (kw - 1) * o["dilation_w"] + 1
    _need(o["padding"] != "VALID" or (span_h <= inp[1] and span_w <= inp[2]), op,
          f"filter {span_h}x{span_w} (dilated) is larger than its {inp[1]}x{inp[2]} input under VALID padding, "
          f"which leaves no output pixel")
    eh = conv_out_size(inp[1], kh, o["stride_h"], o["dilation_h"], axis_padding(o["padding"], 0))
    ew = conv_out_size(inp[2], kw, o["stride_w"], o["dilation_w"], axis_padding(o["padding"], 1))
    _need((out[1], out[2]) == (eh, ew), op, f"output size {out[1]}x{out[2]} != expected {eh}x{ew}")
    _bias_ok(g, op, 2, cout)
    fq = g.tensors[op.inputs[1]].quant
    _need(fq is not None and len(fq.scale) in (1, cout), op, "filter quantisation must be per-tensor or per-channel")
    _weight_scales_ok(g, op, 0, 1, "filter")


def _check_fc(g, op):
    _need(len(op.inputs) >= 2, op, "needs input and weights")
    inp, w, out = _shape(g, op.inputs[0]), _const(g, op, 1, "weights"), _shape(g, op.outputs[0])
    _need(w.ndim == 2 and len(out) >= 1, op, "weights must be 2-D [out, in] and the output at least 1-D")
    n_in = 1
    for d in inp:
        n_in *= d
    _need(w.shape[1] >= 1 and n_in % w.shape[1] == 0, op,
          f"input size {n_in} is not a multiple of weights depth {w.shape[1]}")
    _need(out[-1] == w.shape[0], op, f"output size {out[-1]} != weights rows {w.shape[0]}")
    rows = n_in // w.shape[1]
    _need(_elements(out) == rows * w.shape[0], op,
          f"output shape {list(out)[:8]} != {rows} rows of {w.shape[0]} (input {list(inp)[:8]})")
    _need(g.tensors[op.inputs[1]].dtype == "int8", op, "weights must be int8")
    _bias_ok(g, op, 2, w.shape[0])
    fq = g.tensors[op.inputs[1]].quant
    _need(fq is not None and len(fq.scale) in (1, w.shape[0]), op,
          "weights quantisation must be per-tensor or per-channel")
    _weight_scales_ok(g, op, 0, 1, "weights")


def fold_axes(dims, *strides) -> tuple:
    """(dims, strides, ...) of a walk over dims in which each array steps by its element strides, size-1 axes
    dropped and adjacent axes that every array walks as one merged (stride[i] == stride[i + 1] * dims[i + 1]):
    the fewest axes that visit the same elements in the same order (at least one). A 5-D broadcast whose
    arrays merge that way runs on the 4-D kernels (codegen's bt_bcast4)."""
    keep = [k for k, d in enumerate(dims) if d != 1]
    ds, ss = [int(dims[k]) for k in keep], [[int(s[k]) for k in keep] for s in strides]
    for i in range(len(ds) - 1, 0, -1):
        if all(s[i - 1] == s[i] * ds[i] for s in ss):
            ds[i - 1:i + 1] = [ds[i - 1] * ds[i]]
            for s in ss:
                s[i - 1:i + 1] = [s[i]]
    return (ds or [1], *(s or [0] for s in ss))


def broadcast_strides(shape, dims) -> list:
    """Element strides of a dense tensor of `shape` read broadcast to dims (right-aligned; 0 where broadcast)."""
    td = (1,) * (len(dims) - len(shape)) + tuple(int(d) for d in shape)
    return [0 if td[k] == 1 and dims[k] != 1 else _elements(td[k + 1:]) for k in range(len(dims))]


def folded_broadcast(out, shapes) -> tuple:
    """fold_axes of dense operands of `shapes` broadcast to the dense output `out`: (dims, out strides,
    operand strides, ...)."""
    return fold_axes(out, broadcast_strides(out, out), *(broadcast_strides(s, out) for s in shapes))


def _fits_4d_broadcast(op, out, shapes) -> None:
    """Above 4-D, the broadcast must fold to 4 axes (fold_axes): the kernels' bt_bcast4."""
    if len(out) > 4:
        _need(len(folded_broadcast(out, shapes)[0]) <= 4, op,
              f"a {len(out)}-D broadcast of {' and '.join(str(list(s)) for s in shapes)} that does not fold to 4 "
              f"dimensions is not supported; reshape it to at most 4")


def _check_binary(g, op):
    _need(len(op.inputs) == 2, op, "needs two inputs")
    a, b, out = _shape(g, op.inputs[0]), _shape(g, op.inputs[1]), _shape(g, op.outputs[0])
    try:
        bs = tuple(np.broadcast_shapes(a, b))
    except ValueError:
        bs = None
    _need(bs == tuple(out), op, f"input shapes {list(a)} and {list(b)} do not broadcast to {list(out)}")
    _fits_4d_broadcast(op, out, (a, b))
    if op.opcode == "MUL":
        t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
        if t1.quant is not None and t2.quant is not None and to.quant is not None:
            _multiplier_ok(op, float(t1.scale) * float(t2.scale) / float(to.scale),
                           f"input scales {t1.scale:g} x {t2.scale:g} / output scale {to.scale:g} is")
    if op.opcode in ("ADD", "SUB"):
        # TFLM rescales the sum by 2 * max(input scales) / (2**left_shift * output scale), which must be < 1
        t1, t2, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
        if t1.quant is not None and t2.quant is not None and to.quant is not None:
            shift = 15 if to.dtype == "int16" else 20
            _need(2 * max(t1.scale, t2.scale) < (1 << shift) * to.scale, op,
                  f"output scale {to.scale:g} too small for input scales {t1.scale:g}, {t2.scale:g} "
                  f"(TFLite Micro needs an output multiplier below 1); re-quantise")


def _check_same(g, op):
    _need(len(op.inputs) >= 1 and op.inputs[0] >= 0, op, "needs an input")
    _need(_shape(g, op.inputs[0]) == _shape(g, op.outputs[0]), op, "input and output shapes differ")
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if op.opcode == "HARD_SWISH" and ti.quant is not None and to.quant is not None:
        # TFLM's Prepare: (input scale / 128) / output scale, in float32, must quantise (QuantizeMultiplier:
        # frexp, the mantissa rounded to 31 bits) with an exponent <= 0
        hires = np.float32(np.float32(1.0 / 128.0) * np.float32(ti.scale))
        q, e = np.frexp(np.float64(hires / np.float32(to.scale)))
        _need(e + (np.floor(q * 2.0 ** 31 + 0.5) == 2.0 ** 31) <= 0, op,
              f"output scale {to.scale:g} too small for input scale {ti.scale:g} (TFLite Micro needs input scale "
              f"/ 128 below it); re-quantise")
        # its 'reluish' multiplier (input scale / 128) / (3 / 32768) shifts an int16 left by its exponent - 1;
        # either multiplier below 2**-15 has gemmlowp's int16 RoundingDivideByPOT shift by more than 15 (its
        # int16 mask wraps: +-1 for any value)
        out_e = e + (np.floor(q * 2.0 ** 31 + 0.5) == 2.0 ** 31)
        rel = float(np.float32(hires / np.float32(3.0 / 32768.0)))
        _need(2.0 ** -16 <= rel < 2.0 ** 31 and out_e >= -15, op,
              f"input scale {ti.scale:g} / output scale {to.scale:g} puts its multipliers outside TFLite Micro's "
              f"2**-16..2**31; re-quantise")


def _check_concat(g, op):
    out = _shape(g, op.outputs[0])
    axis = op.options.get("axis", 0)
    if axis < 0:
        axis += len(out)
    _need(0 <= axis < len(out), op, f"axis {op.options.get('axis')} out of range")
    total = 0
    for i in op.inputs:
        s = _shape(g, i)
        _need(len(s) == len(out) and all(s[d] == out[d] for d in range(len(out)) if d != axis), op,
              f"input shape {list(s)} does not fit output {list(out)} on axis {axis}")
        total += s[axis]
    _need(total == out[axis], op, f"inputs add up to {total} on axis {axis}, output has {out[axis]}")


def _check_pool(g, op):
    o = op.options
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(len(inp) == 4 and len(out) == 4 and inp[0] == 1 and out[0] == 1 and inp[3] == out[3], op,
          "needs [1,H,W,C] in and out")
    _need(o["filter_h"] >= 1 and o["filter_w"] >= 1 and o["stride_h"] >= 1 and o["stride_w"] >= 1, op,
          "filter and stride must be positive")
    _need(o["padding"] != "VALID" or (o["filter_h"] <= inp[1] and o["filter_w"] <= inp[2]), op,
          f"filter {o['filter_h']}x{o['filter_w']} is larger than its {inp[1]}x{inp[2]} input under VALID padding, "
          f"which leaves no output pixel")
    eh = conv_out_size(inp[1], o["filter_h"], o["stride_h"], 1, o["padding"])
    ew = conv_out_size(inp[2], o["filter_w"], o["stride_w"], 1, o["padding"])
    _need((out[1], out[2]) == (eh, ew), op, f"output size {out[1]}x{out[2]} != expected {eh}x{ew}")
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if ti.quant is not None and to.quant is not None:  # TFLite Micro's PoolingPrepare: float32 scales within 1e-6
        _need(float(abs(np.float32(ti.scale) - np.float32(to.scale))) <= 1e-6 and ti.zero_point == to.zero_point,
              op, f"output quantisation ({to.scale:.6g}, {to.zero_point}) != the input's ({ti.scale:.6g}, "
                  f"{ti.zero_point}); TFLite Micro's pools need them equal: re-quantise")


def _check_mean(g, op):
    axes = _const(g, op, 1, "axes").reshape(-1)
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(axes.size <= len(inp), op, f"{axes.size} axes for a rank-{len(inp)} input")
    for a in axes:
        _need(-len(inp) <= int(a) < len(inp), op, f"axis {int(a)} out of range")
    red = {int(a) % len(inp) for a in axes}
    keep = op.options.get("keep_dims", False)
    want = tuple(1 if d in red else n for d, n in enumerate(inp) if keep or d not in red)
    _need(out == want or (not want and _elements(out) == 1), op,
          f"output shape {list(out)[:8]} != {list(want)} (input {list(inp)[:8]}, axes {sorted(red)})")
    _need(reduce_split(inp, red) is not None, op,
          f"axes {sorted(red)} of {list(inp)[:8]} are not adjacent (size-1 axes aside), which the kernels "
          f"need; reduce them one run of adjacent axes at a time")


def reduce_split(shape, axes) -> tuple | None:
    """(outer, reduce, inner) element counts of a reduction of shape over axes when its reduced axes are one
    run of adjacent axes once size-1 axes are set aside (the kernels' [outer][reduce][inner]), else None."""
    red = [a for a in sorted(set(axes)) if shape[a] != 1]
    if not red:
        return _elements(shape), 1, 1
    between = [d for d in range(red[0], red[-1] + 1) if d not in red and shape[d] != 1]
    if between:
        return None
    return _elements(shape[:red[0]]), _elements(shape[red[0]:red[-1] + 1]), _elements(shape[red[-1] + 1:])


def _check_pad(g, op):
    p = _const(g, op, 1, "paddings")
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    _need(p.shape == (len(inp), 2) and (p >= 0).all(), op, "paddings must be non-negative [rank, 2]")
    _need(tuple(int(inp[d] + p[d, 0] + p[d, 1]) for d in range(len(inp))) == out, op,
          "output shape does not match paddings")
    _need(len(fold_pad(inp, p)[0]) <= 4, op, f"{len(inp)}-D padding {p.tolist()} that does not fold to 4 "
                                             f"dimensions is not supported; reshape it to at most 4")


def fold_pad(shape, pads) -> tuple:
    """(dims, before, after) of a PAD with adjacent axes merged where the inner one is not padded (its rows are
    whole: the outer axis pads whole rows) and unpadded size-1 axes dropped; at least one axis."""
    ds, bs, as_ = [], [], []
    for d, (b, a) in zip(shape, pads):
        if d == 1 and b == 0 and a == 0:
            continue
        if ds and b == 0 and a == 0:  # this axis is whole: merge it into the one before
            ds[-1], bs[-1], as_[-1] = ds[-1] * int(d), bs[-1] * int(d), as_[-1] * int(d)
        else:
            ds.append(int(d)), bs.append(int(b)), as_.append(int(a))
    return (ds, bs, as_) if ds else ([1], [0], [0])


def _check_reshape(g, op):
    a, b = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    _need(a.num_elements == b.num_elements, op, f"reshape {list(a.shape)} -> {list(b.shape)} changes size")


def _check_split(g, op):
    axis = int(_const(g, op, 0, "axis").reshape(-1)[0])
    inp = _shape(g, op.inputs[1])
    if axis < 0:
        axis += len(inp)
    _need(0 <= axis < len(inp), op, "axis out of range")
    n = len(op.outputs)
    _need(inp[axis] % n == 0, op, f"dimension {inp[axis]} does not split into {n}")
    want = inp[:axis] + (inp[axis] // n,) + inp[axis + 1:]
    for o in op.outputs:
        _need(_shape(g, o) == want, op, f"output shape {list(_shape(g, o))[:8]} != {list(want)}")


def _clamp_index(i, size, stride):
    if i < 0:
        i += size
    return min(max(i, 0), size) if stride > 0 else min(max(i, -1), size - 1)


def slice_bounds(size, begin, end, stride, bmask, emask, shrink, offset):
    """StridedSliceStartForAxis / EndForAxis: negative indices wrap, clamp, then masks override."""
    start = _clamp_index(begin, size, stride)
    if bmask:
        start = 0 if stride > 0 else size - 1
    if shrink:
        return start, start if start >= size else start + 1
    stop = _clamp_index(end + start if offset else end, size, stride)
    if emask:
        stop = size if stride > 0 else -1
    return start, stop


def _check_slice(g, op):
    for pos, what in ((1, "begin"), (2, "end"), (3, "strides")):
        _const(g, op, pos, what)
    o = op.options
    inp, out = _shape(g, op.inputs[0]), _shape(g, op.outputs[0])
    begin, end, st = (g.tensors[op.inputs[k]].data.reshape(-1).astype(int).tolist() for k in (1, 2, 3))
    _need(all(st), op, "strides must be non-zero")
    _need(not o.get("ellipsis_mask") and not o.get("new_axis_mask"), op,
          "ellipsis and new-axis masks are not supported")
    _need(len(begin) == len(end) == len(st) == len(inp), op,  # TFLM reads one per dimension (past a short one)
          f"begin, end and strides need one entry per input dimension (input {list(inp)[:8]})")
    _need(len(inp) <= 4, op, f"a {len(inp)}-D input: TFLite Micro slices at most 4 dimensions")
    n = 1
    for d, size in enumerate(inp):
        if d < len(begin):
            b, e = slice_bounds(size, begin[d], end[d], st[d], o.get("begin_mask", 0) >> d & 1,
                                 o.get("end_mask", 0) >> d & 1, o.get("shrink_axis_mask", 0) >> d & 1,
                                 o.get("offset", False))
            size = len(range(b, e, st[d]))
        n *= size
    _need(_elements(out) == n, op, f"output shape {list(out)[:8]} does not hold the {n} sliced elements")


def _check_transpose_conv(g, op):
    """Inputs (output_shape, weights [cout, kh, kw, cin], input [1, H, W, cin], [bias]): the output size
    is the one whose convolution with the same geometry gives the input size."""
    o = op.options
    inp, out = _shape(g, op.inputs[2]), _shape(g, op.outputs[0])
    flt = _const(g, op, 1, "weights")
    _need(len(inp) == 4 and len(out) == 4 and flt.ndim == 4, op, "input, weights and output must be 4-D")
    _need(inp[0] == 1 and out[0] == 1, op, "batch size must be 1")
    _need(g.tensors[op.inputs[1]].dtype == "int8", op, "weights must be int8")
    cout, kh, kw, cin = flt.shape
    _need(cin == inp[3] and cout == out[3], op, f"weights {list(flt.shape)} do not match input channels "
                                                 f"{inp[3]} and output channels {out[3]}")
    shp = g.tensors[op.inputs[0]]
    _need(shp.dtype == "int32" and shp.num_elements == 4, op, "output_shape (input 0) must be int32 [4]")
    if shp.is_const:
        _need(tuple(int(v) for v in shp.data.reshape(-1)) == tuple(out), op,
              f"output_shape {shp.data.reshape(-1).tolist()} != output tensor shape {list(out)}")
    for k in ("stride_h", "stride_w"):
        _need(1 <= o.get(k, 1) <= 64, op, f"{k} {o.get(k)} out of range")
    eh = conv_out_size(out[1], kh, o["stride_h"], 1, o["padding"])
    ew = conv_out_size(out[2], kw, o["stride_w"], 1, o["padding"])
    _need((inp[1], inp[2]) == (eh, ew), op, f"output size {out[1]}x{out[2]} does not give input size "
                                             f"{inp[1]}x{inp[2]} (expected an input of {eh}x{ew})")
    _bias_ok(g, op, 3, cout)
    fq = g.tensors[op.inputs[1]].quant
    _need(fq is not None and len(fq.scale) in (1, cout), op, "weights quantisation must be per-tensor or per-channel")
    _weight_scales_ok(g, op, 2, 1, "weights")


def conv_groups(g: Graph, op: Operator) -> int:
    """A CONV_2D's groups (TFLite Micro's conv: input depth / filter depth; Keras Conv2D(groups=g)): output
    channel o reads input channels [k * d, (k + 1) * d) of group k = o // (c_out / groups), d the filter
    depth. 1 for an ordinary conv and for any other operator."""
    if op.opcode != "CONV_2D" or len(op.inputs) < 2 or op.inputs[1] < 0 or op.inputs[0] < 0:
        return 1
    cin, d = g.tensors[op.inputs[0]].shape[-1], g.tensors[op.inputs[1]].shape[-1]
    return cin // d if d and cin % d == 0 else 1


def conv_macs(g: Graph, op: Operator) -> int:
    out = g.tensors[op.outputs[0]].shape
    flt = g.tensors[op.inputs[1]].shape
    per_out = flt[1] * flt[2] * (1 if op.opcode == "DEPTHWISE_CONV_2D" else flt[3])
    return int(out[1] * out[2] * out[3] * per_out)


def fc_macs(g: Graph, op: Operator) -> int:
    w = g.tensors[op.inputs[1]].shape
    rows = g.tensors[op.inputs[0]].num_elements // w[1]
    return int(rows * w[0] * w[1])


def transpose_conv_macs(g: Graph, op: Operator) -> int:
    flt = g.tensors[op.inputs[1]].shape
    return int(g.tensors[op.inputs[2]].num_elements * flt[0] * flt[1] * flt[2])


# Built from opdefs once this module's functions exist (ops_extra and stateful use the helpers above).
_CHECKS = opdefs.table("check")
_MACS = opdefs.table("macs")


def op_macs(g: Graph, op: Operator) -> int:
    """Multiply-accumulates of one operator (convolutions, dense layers, bilinear resize, SVDF, LSTM)."""
    fn = _MACS.get(op.opcode)
    return fn(g, op) if fn else 0


def graph_macs(g: Graph) -> int:
    return sum(op_macs(g, op) for op in g.operators)


def check_graph(g: Graph) -> None:
    if not g.inputs:
        raise ModelError("the graph has no inputs; a model needs at least one input tensor")
    if not g.outputs:
        raise ModelError("the graph has no outputs; a model needs at least one output tensor")
    if len(set(g.inputs)) != len(g.inputs):
        raise ModelError(f"the graph lists an input tensor twice (inputs {list(g.inputs)[:8]})")
    for i in list(g.inputs) + list(g.outputs):
        if g.tensors[i].is_const:
            raise ModelError(f"graph input/output tensor {i} is a constant; inputs and outputs must be activations")
    for op in g.operators:
        check_op(g, op)
    for i in g.inputs:
        t = g.tensors[i]
        if t.dtype not in ("int8", "int16", "int32", "float32", "uint32", "uint64"):
            raise ModelError(f"model input '{short(t.name)}' is {t.dtype}; only int8, int16, int32, float32 and "
                             f"(signal library energies) uint32/uint64 inputs are supported")


__all__ = ["SUPPORTED", "ACT_TYPES", "activation_types", "supported_table", "int16_support", "INT16_NOT_RUN", "unsupported_message", "check_op",
           "check_graph", "conv_groups", "fold_axes", "fold_pad", "reduce_split", "broadcast_strides", "folded_broadcast", "op_macs", "graph_macs", "axis_padding", "conv_out_size", "conv_padding", "ELEMENTWISE_INPLACE", "ALIASING",
           "INT16_OPS"]
