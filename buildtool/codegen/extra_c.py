"""model.c calls of the activation, layout and resize operators (RELU .. SPACE_TO_DEPTH), the int16
table kernels of LOGISTIC, TANH and SOFTMAX, and TFLite Micro's further int8/int16 operators (issue 33).

Emitters fn(e, op) on an emitter.Emitter, named in the operator table (model/opdefs.py, column
emit): every parameter comes from the reference executor's functions (buildtool/refops/activation.py,
layout.py, resize.py), so the C kernels get the same integers and index tables as the numpy kernels.
"""

from __future__ import annotations

from ..errors import ModelError
from ..model.ops_extra import CAST_TYPE_CODES
from ..refops.activation import lut16_params, prelu_params, relu6_bounds, relu_params, tanh_params
from ..refops.layout import permutation, permute_geometry
from ..refops.resize import bilinear_scale10, nearest_tables
from ..refops.softmax import softmax16_params, softmax_luts16
from ..refops.compare import COMPARISONS, compare_params
from ..refops.unary import abs_params, rsqrt_params, rsqrt_table
from ..refops.arith import add_n_params, cumsum_geometry, squared_difference_params
from ..refops.log_softmax import log_softmax_params
from ..refops.div import div_params
from ..refops.gelu import gelu_table
from ..refops.matmul import matmul_params
from ..refops.norm import elu_table, gather_nd_rows, gather_nd_strides
from ..refops.index_ops import (argminmax_geometry, embedding_geometry, gather_geometry, mirror_pad_geometry,
    space_batch_geometry, strided_geometry)
from .c_text import c_ints, c_local_array, c_struct


def relu(e, op) -> None:
    e.unary(op, "bt_relu_params", relu_params(e.g, op), f"bt_relu_{e.sfx(op.outputs[0])}")


def relu6(e, op) -> None:
    lo, hi = relu6_bounds(e.g, op)
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
    n = e.g.tensors[op.inputs[0]].num_elements
    e.call(op, f"bt_relu6_{e.sfx(op.outputs[0])}({n}, {lo}, {hi}, {e.cact(op.inputs[0])}, "
               f"{e.cact(op.outputs[0])});")


def tanh(e, op) -> None:
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        lut16(e, op, "bt_tanh_s16")
        return
    e.unary(op, "bt_tanh_params", tanh_params(e.g, op), "bt_tanh_s8")


def lut16(e, op, fn: str) -> None:
    """int16 LOGISTIC / TANH: the sigmoid table goes into model.c once, shared by every such call."""
    table = e.sigmoid_table16()
    x, y = op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    n = f"op{op.index}"
    fields = dict(n=e.g.tensors[x].num_elements, **lut16_params(e.g, op), table=table)
    e.declare(f"static const bt_lut16_params {n}_p = {c_struct(fields)};")
    e.call(op, f"{fn}(&{n}_p, {e.cact(x)}, {e.cact(y)});")


def softmax16(e, op) -> None:
    """int16 -> int16 SOFTMAX: its two tables go into model.c once, shared by every such call."""
    exp, rec = (e.table(name, "int16_t", t) for name, t in zip(("bt_softmax_exp16", "bt_softmax_rec16"),
                                                              softmax_luts16()))
    n, t = f"op{op.index}", e.g.tensors[op.inputs[0]]
    mult, shift = softmax16_params(op.options.get("beta", 1.0), t.scale)
    fields = dict(rows=t.num_elements // t.shape[-1], depth=t.shape[-1], input_multiplier=mult,
                  input_left_shift=shift, exp_lut=exp, rec_lut=rec)
    e.declare(f"static const bt_softmax16_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_softmax_s16(&{n}_p, {e.cact(op.inputs[0])}, {e.cact(op.outputs[0])});")


def prelu(e, op) -> None:
    n = f"op{op.index}"
    fields = dict(prelu_params(e.g, op), b=e.bcast(op))
    e.declare(f"static const bt_prelu_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_prelu_{e.sfx(op.outputs[0])}(&{n}_p, {e.operand(op.inputs[0])}, "
               f"{e.operand(op.inputs[1])}, {e.cact(op.outputs[0])});")


def _minmax(e, op, fn: str) -> None:
    n = f"op{op.index}"
    e.declare(f"static const bt_bcast4 {n}_p = {c_struct(e.bcast(op))};")
    e.call(op, f"{fn}_{e.sfx(op.outputs[0])}(&{n}_p, {e.operand(op.inputs[0])}, "
               f"{e.operand(op.inputs[1])}, {e.cact(op.outputs[0])});")


def maximum(e, op) -> None:
    _minmax(e, op, "bt_maximum")


def minimum(e, op) -> None:
    _minmax(e, op, "bt_minimum")


def _esize(e, i: int) -> int:
    """Bytes per element: the byte-moving kernels (transpose, nearest resize) take int16 as 2 bytes."""
    return e.g.tensors[i].nbytes // max(e.g.tensors[i].num_elements, 1)


def _dense_call(e, op, struct: str, fields: dict, fn: str, src: str | None = None, dst: str | None = None) -> None:
    """The common shape of a one-input, one-output kernel on dense tensors: `static const struct opN_p =
    {fields}` and `fn(&opN_p, src, dst)` (src, dst: the input's and output's int8_t pointers by default)."""
    n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    e.declare(f"static const {struct} {n}_p = {c_struct(fields)};")
    e.call(op, f"{fn}(&{n}_p, {src or e.act(x)}, {dst or e.act(y)});")


def transpose(e, op) -> None:
    """TRANSPOSE, and DEPTH_TO_SPACE / SPACE_TO_DEPTH (the same permutation kernel on a view)."""
    view, perm = permutation(e.g, op)
    if len(view) > 6:
        raise ModelError(f"operator {op.index} ({op.opcode}): more than 6 dimensions are not supported")
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
    size = _esize(e, op.inputs[0])
    if size > 1:  # the same permutation of bytes, with one more innermost axis for an element's bytes
        view, perm = tuple(view) + (size,), tuple(perm) + (len(view),)
    dims, strides = permute_geometry(view, perm)
    n = f"op{op.index}"
    e.declare(f"static const bt_transpose_params {n}_p = {c_struct(dict(out_dims=dims, in_stride=strides))};")
    e.call(op, f"bt_transpose_s8(&{n}_p, {e.act(op.inputs[0])}, {e.act(op.outputs[0])});")


def resize_nearest_neighbor(e, op) -> None:
    n = f"op{op.index}"
    ys, xs = nearest_tables(e.g, op)
    e.declare(f"static const int32_t {n}_y[{len(ys)}] = {c_ints(ys)};")
    e.declare(f"static const int32_t {n}_x[{len(xs)}] = {c_ints(xs)};")
    size = _esize(e, op.inputs[0])
    shapes = [e.bt_shape(i) for i in (op.inputs[0], op.outputs[0])]
    shapes = [dict(s, c=s["c"] * size, pixel_stride=s["pixel_stride"] * size) for s in shapes]  # bytes
    fields = {"in": shapes[0], "out": shapes[1], "src_y": f"{n}_y", "src_x": f"{n}_x"}
    e.declare(f"static const bt_resize_nearest_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_resize_nearest_s8(&{n}_p, {e.act(op.inputs[0])}, {e.act(op.outputs[0])});")


def resize_bilinear(e, op) -> None:
    n, o = f"op{op.index}", op.options
    ti, to = e.g.tensors[op.inputs[0]], e.g.tensors[op.outputs[0]]
    align = bool(o.get("align_corners"))
    fields = {"in": e.bt_shape(op.inputs[0]), "out": e.bt_shape(op.outputs[0]),
              "scale10_h": bilinear_scale10(ti.shape[1], to.shape[1], align),
              "scale10_w": bilinear_scale10(ti.shape[2], to.shape[2], align),
              "half_pixel_centers": int(bool(o.get("half_pixel_centers")))}
    e.declare(f"static const bt_resize_bilinear_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_resize_bilinear_s8(&{n}_p, {e.act(op.inputs[0])}, {e.act(op.outputs[0])});")


def abs_(e, op) -> None:
    n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    fields = dict(n=e.g.tensors[x].num_elements, **abs_params(e.g, op))
    e.declare(f"static const bt_abs_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_abs_{e.sfx(y)}(&{n}_p, {e.cact(x)}, {e.cact(y)});")


def _lut_s8(e, op, table) -> None:
    """An int8 operator computed as a 256-entry table of its result per input code (made here, one per
    operator), then bt_lut_s8's lookup."""
    x, y, n = op.inputs[0], op.outputs[0], f"op{op.index}"
    e.dense(op, x)
    e.dense(op, y)
    e.declare(f"static const int8_t {n}_t[256] = {c_ints(table.tolist())};")
    e.call(op, f"bt_lut_s8({e.g.tensors[x].num_elements}, {n}_t, {e.act(x)}, {e.act(y)});")


def rsqrt(e, op) -> None:
    """int8 RSQRT: refops.unary.rsqrt_table; int16: bt_rsqrt_s16 (refops.unary.rsqrt_params)."""
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        _dense_call(e, op, "bt_rsqrt_params", dict(n=e.g.tensors[op.inputs[0]].num_elements,
                                                   **rsqrt_params(e.g, op)), "bt_rsqrt_s16",
                    e.cact(op.inputs[0]), e.cact(op.outputs[0]))
        return
    _lut_s8(e, op, rsqrt_table(e.g, op))


def compare(e, op) -> None:
    """EQUAL .. GREATER_EQUAL: int8 operands (activations or flash constants), bool (one byte) output."""
    n = f"op{op.index}"
    if e.g.tensors[op.inputs[0]].dtype == "int32":  # TFLM's int32 path: the values (reference/compare.c)
        fields = dict(kind=COMPARISONS.index(op.opcode), b=e.bcast(op))
        e.declare(f"static const bt_compare_params {n}_p = {c_struct(fields)};")
        e.call(op, f"bt_compare_s32(&{n}_p, {e.operand(op.inputs[0])}, {e.operand(op.inputs[1])}, "
                   f"{e.act(op.outputs[0], 'uint8_t')});")
        return
    fields = dict(compare_params(e.g, op), b=e.bcast(op))
    e.declare(f"static const bt_compare_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_compare_s8(&{n}_p, {e.operand(op.inputs[0])}, {e.operand(op.inputs[1])}, "
               f"{e.act(op.outputs[0], 'uint8_t')});")


def logical(e, op) -> None:
    """LOGICAL_AND (kind 0) / LOGICAL_OR (kind 1) on bool bytes, broadcast."""
    n = f"op{op.index}"
    e.declare(f"static const bt_bcast4 {n}_p = {c_struct(e.bcast(op))};")
    kind = 0 if op.opcode == "LOGICAL_AND" else 1
    a, b = (e.weight(i, "uint8_t") if e.g.tensors[i].is_const else e.act(i, "uint8_t") for i in op.inputs)
    e.call(op, f"bt_logical_b({kind}, &{n}_p, {a}, {b}, {e.act(op.outputs[0], 'uint8_t')});")


def logical_not(e, op) -> None:
    x, y = op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    e.call(op, f"bt_logical_not_b({e.g.tensors[x].num_elements}, {e.act(x, 'uint8_t')}, {e.act(y, 'uint8_t')});")


def select_v2(e, op) -> None:
    """SELECT_V2: the bool condition's bytes, then x or y's raw codes (int8 or int16), broadcast."""
    n, out = f"op{op.index}", e.g.tensors[op.outputs[0]]
    if len(out.shape) > 4:
        raise ModelError(f"operator {op.index} ({op.opcode}): more than 4 dimensions are not supported")
    dims = (1,) * (4 - len(out.shape)) + tuple(int(d) for d in out.shape)
    c, x, y = op.inputs
    fields = dict(dims=list(dims), c_stride=e.operand_strides(c, dims), x_stride=e.operand_strides(x, dims),
                  y_stride=e.operand_strides(y, dims), out_stride=e.strides4(op.outputs[0], dims))
    e.declare(f"static const bt_select_params {n}_p = {c_struct(fields)};")
    cond = e.weight(c, "uint8_t") if e.g.tensors[c].is_const else e.act(c, "uint8_t")
    e.call(op, f"bt_select_{e.sfx(op.outputs[0])}(&{n}_p, {cond}, {e.operand(x)}, {e.operand(y)}, "
               f"{e.cact(op.outputs[0])});")


def reduce_minmax(e, op) -> None:
    """REDUCE_MAX (kind 0) / REDUCE_MIN (kind 1) of raw codes over MEAN's [outer][reduce][inner] geometry."""
    n = f"op{op.index}"
    fields = dict(e.reduce_geometry(op), kind=0 if op.opcode == "REDUCE_MAX" else 1)
    e.declare(f"static const bt_reduce_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_reduce_minmax_{e.sfx(op.outputs[0])}(&{n}_p, {e.cact(op.inputs[0])}, {e.cact(op.outputs[0])});")


def squared_difference(e, op) -> None:
    """SQUARED_DIFFERENCE: int8 or int16 operands (activations or flash constants), broadcast."""
    n = f"op{op.index}"
    fields = dict(squared_difference_params(e.g, op), b=e.bcast(op))
    e.declare(f"static const bt_squared_difference_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_squared_difference_{e.sfx(op.outputs[0])}(&{n}_p, {e.operand(op.inputs[0])}, "
               f"{e.operand(op.inputs[1])}, {e.cact(op.outputs[0])});")


def add_n(e, op) -> None:
    """ADD_N: the inputs (activations or flash constants, dense) as an array of pointers."""
    n, y = f"op{op.index}", op.outputs[0]
    for i in (*op.inputs, y):
        e.dense(op, i)
    fields = dict(n=e.g.tensors[y].num_elements, count=len(op.inputs), **add_n_params(e.g, op))
    e.declare(f"static const bt_add_n_params {n}_p = {c_struct(fields)};")
    srcs = [e.operand(i) for i in op.inputs]
    e.call(op, f"{{\n    {c_local_array('const int8_t *', 'in', srcs)}"
               f"    bt_add_n_s8(&{n}_p, in, {e.act(y)});\n  }}")


def zeros_like(e, op) -> None:
    y = op.outputs[0]
    e.dense(op, y)
    e.call(op, f"bt_zeros_s8({e.g.tensors[y].num_elements}, {e.act(y)});")


def argminmax(e, op) -> None:
    """ARG_MAX / ARG_MIN: int8 in, int32 out, over [outer][axis][inner]."""
    _dense_call(e, op, "bt_argminmax_params", argminmax_geometry(e.g, op), "bt_argminmax_s8",
                dst=e.act(op.outputs[0], "int32_t"))


def gather(e, op) -> None:
    """GATHER: the constant indices compiled into model.c; the input an activation or a flash constant."""
    n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    p = gather_geometry(e.g, op)
    p["inner"] *= _esize(e, x)
    e.declare(f"static const bt_gather_params {n}_p = {c_struct(p)};")
    src = e.weight(x, "int8_t") if e.g.tensors[x].is_const else e.act(x)
    it = e.g.tensors[op.inputs[1]]
    if not it.is_const:  # computed: checked as the model runs, as TFLM does (model_invoke fails)
        e.dense(op, it.index)
        e.call(op, f"if (bt_gather_idx_s8(&{n}_p, {e.act(it.index, 'int32_t')}, {src}, {e.act(y)}) != 0) return 1;")
        return
    idx = [int(v) for v in it.data.reshape(-1)]
    e.declare(f"static const int32_t {n}_i[{max(len(idx), 1)}] = {c_ints(idx or [0])};")
    e.call(op, f"bt_gather_s8(&{n}_p, {n}_i, {src}, {e.act(y)});")


def space_batch(e, op) -> None:
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (int8, dense)."""
    fn = "bt_space_to_batch_s8" if op.opcode == "SPACE_TO_BATCH_ND" else "bt_batch_to_space_s8"
    _dense_call(e, op, "bt_space_batch_params", space_batch_geometry(e.g, op), fn)


def mirror_pad(e, op) -> None:
    _dense_call(e, op, "bt_mirror_pad_params", mirror_pad_geometry(e.g, op), "bt_mirror_pad_s8")


def strided_copy(e, op) -> None:
    """REVERSE_V2 and BROADCAST_TO: bt_transpose_s8's strided gather of bytes from the first byte read."""
    x = op.inputs[0]
    base, dims, strides = strided_geometry(e.g, op, _esize(e, x))
    _dense_call(e, op, "bt_transpose_params", dict(out_dims=dims, in_stride=strides), "bt_transpose_s8",
                src=f"{e.act(x)} + {base}")


def batch_matmul(e, op) -> None:
    """BATCH_MATMUL: int8 or int16 operands (activations or flash constants), dense."""
    n, y = f"op{op.index}", op.outputs[0]
    for i in (*op.inputs, y):
        e.dense(op, i)
    e.declare(f"static const bt_batch_matmul_params {n}_p = {c_struct(matmul_params(e.g, op))};")
    e.call(op, f"bt_batch_matmul_{e.sfx(y)}(&{n}_p, {e.operand(op.inputs[0])}, {e.operand(op.inputs[1])}, "
               f"{e.cact(y)});")


def elu(e, op) -> None:
    """int8 ELU: refops.norm.elu_table."""
    _lut_s8(e, op, elu_table(e.g, op))


def l2_normalization(e, op) -> None:
    x, y = op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    t = e.g.tensors[x]
    depth = t.shape[-1] if t.shape else 1
    e.call(op, f"bt_l2_norm_s8({t.num_elements // max(depth, 1)}, {depth}, {t.zero_point}, {e.act(x)}, "
               f"{e.act(y)});")


def shape(e, op) -> None:
    """SHAPE: the input's dimensions, an int32 array in model.c copied by bt_transpose_s8 as bytes."""
    n, y = f"op{op.index}", op.outputs[0]
    dims = [int(d) for d in e.g.tensors[op.inputs[0]].shape]
    e.dense(op, y)
    e.declare(f"static const int32_t {n}_d[{max(len(dims), 1)}] = {c_ints(dims or [0])};")
    p = dict(out_dims=[1, 1, 1, 1, 1, 4 * len(dims)], in_stride=[0, 0, 0, 0, 0, 1])
    e.declare(f"static const bt_transpose_params {n}_p = {c_struct(p)};")
    e.call(op, f"bt_transpose_s8(&{n}_p, (const int8_t *){n}_d, {e.act(y)});")


def gather_nd(e, op) -> None:
    """GATHER_ND: constant indices as bt_gather_s8 over the params' flattened leading dimensions; computed ones
    (bt_gather_nd_s8) checked as the model runs, as TFLM does (model_invoke fails)."""
    n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    it = e.g.tensors[op.inputs[1]]
    if not it.is_const:
        e.dense(op, it.index)
        rows, inner, strides = gather_nd_strides(e.g, op)
        p = dict(count=it.num_elements // len(strides), nd=len(strides), rows=rows, inner=inner * _esize(e, x),
                 stride=strides + [0] * (5 - len(strides)))
        e.declare(f"static const bt_gather_nd_params {n}_p = {c_struct(p)};")
        src = e.weight(x, "int8_t") if e.g.tensors[x].is_const else e.act(x)
        e.call(op, f"if (bt_gather_nd_s8(&{n}_p, {e.act(it.index, 'int32_t')}, {src}, {e.act(y)}) != 0) return 1;")
        return
    rows, inner, flat = gather_nd_rows(e.g, op)
    e.declare(f"static const int32_t {n}_i[{max(len(flat), 1)}] = {c_ints(flat or [0])};")
    p = dict(outer=1, axis_size=rows, count=len(flat), inner=inner * _esize(e, x))
    e.declare(f"static const bt_gather_params {n}_p = {c_struct(p)};")
    src = e.weight(x, "int8_t") if e.g.tensors[x].is_const else e.act(x)
    e.call(op, f"bt_gather_s8(&{n}_p, {n}_i, {src}, {e.act(y)});")


def cumsum(e, op) -> None:
    """CUMSUM: ADD_N's rescaling (refops.arith.add_n_params) along the constant axis."""
    fields = dict(q=dict(n=0, count=0, **add_n_params(e.g, op)), **cumsum_geometry(e.g, op))
    _dense_call(e, op, "bt_cumsum_params", fields, "bt_cumsum_s8")


def embedding_lookup(e, op) -> None:
    """EMBEDDING_LOOKUP: int32 ids (an activation or a constant) into the flash table."""
    ids, table, y = op.inputs[0], op.inputs[1], op.outputs[0]
    e.dense(op, ids)
    e.dense(op, y)
    p = embedding_geometry(e.g, op)
    src = e.weight(ids, "int32_t") if e.g.tensors[ids].is_const else e.act(ids, "int32_t")
    e.call(op, f"bt_embedding_lookup_s8({p['count']}, {p['rows']}, {p['row_bytes']}, {src}, "
               f"{e.weight(table, 'int8_t')}, {e.act(y)});")


def cast(e, op) -> None:
    """CAST: bt_cast with both tensors' TFLite type codes (refops.cast)."""
    x, y = op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    tx, ty = e.g.tensors[x], e.g.tensors[y]
    src = e.weight(x, "void") if tx.is_const else e.act(x, "void")
    e.call(op, f"bt_cast({tx.num_elements}, {CAST_TYPE_CODES[tx.dtype]}, {CAST_TYPE_CODES[ty.dtype]}, {src}, "
               f"{e.act(y, 'void')});")


def log_softmax(e, op) -> None:
    t = e.g.tensors[op.inputs[0]]
    depth = t.shape[-1] if t.shape else 1
    fields = dict(rows=t.num_elements // max(depth, 1), depth=depth, **log_softmax_params(e.g, op))
    _dense_call(e, op, "bt_log_softmax_params", fields, "bt_log_softmax_s8")


def div(e, op) -> None:
    """DIV int8: operands (activations or flash constants), broadcast (refops.div: the exact shift past 31)."""
    n = f"op{op.index}"
    e.declare(f"static const bt_div_params {n}_p = {c_struct(dict(div_params(e.g, op), b=e.bcast(op)))};")
    e.call(op, f"bt_div_s8(&{n}_p, {e.operand(op.inputs[0])}, {e.operand(op.inputs[1])}, {e.cact(op.outputs[0])});")


def neg(e, op) -> None:
    """NEG on float32 (between DEQUANTIZE and QUANTIZE): n floats negated."""
    x, y = op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    e.call(op, f"bt_neg_f32({e.g.tensors[x].num_elements}, {e.act(x, 'float')}, {e.act(y, 'float')});")


def gelu(e, op) -> None:
    """int8 GELU: refops.gelu.gelu_table (TFLite's LUTPopulate)."""
    _lut_s8(e, op, gelu_table(e.g, op))


def fill(e, op) -> None:
    """FILL int8: the value's code (an activation or a flash constant) over the output."""
    v, y = op.inputs[1], op.outputs[0]
    e.dense(op, y)
    src = e.weight(v, "int8_t") if e.g.tensors[v].is_const else e.act(v)
    e.call(op, f"bt_fill_s8({e.g.tensors[y].num_elements}, {src}, {e.act(y)});")
