"""model.c calls of the activation, layout and resize operators (RELU .. SPACE_TO_DEPTH), and the int16
table kernels of LOGISTIC, TANH and SOFTMAX.

A mixin of the plain emitter (model_c._Emitter): every parameter comes from the reference
executor's functions (buildtool/refops/activation.py, layout.py, resize.py), so the C kernels get
the same integers and index tables as the numpy kernels.
"""

from __future__ import annotations

from . import model_c as _m  # model_c imports this module first; its helpers are used at call time
from ..errors import ModelError
from ..refops.activation import lut16_params, prelu_params, relu6_bounds, relu_params, sigmoid_table16, tanh_params
from ..refops.layout import permutation, permute_geometry
from ..refops.resize import bilinear_scale10, nearest_tables
from ..refops.softmax import softmax16_params, softmax_luts16


class ExtraOpsEmitter:
    """Methods named after the opcodes; `self` is a model_c._Emitter."""

    def RELU(self, op):
        self._unary(op, "bt_relu_params", relu_params(self.g, op), f"bt_relu_{self.sfx(op.outputs[0])}")

    def RELU6(self, op):
        lo, hi = relu6_bounds(self.g, op)
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        n = self.g.tensors[op.inputs[0]].num_elements
        self.call(op, f"bt_relu6_{self.sfx(op.outputs[0])}({n}, {lo}, {hi}, {self.cact(op.inputs[0])}, "
                      f"{self.cact(op.outputs[0])});")

    def TANH(self, op):
        if self.g.tensors[op.outputs[0]].dtype == "int16":
            return self.lut16(op, "bt_tanh_s16")
        self._unary(op, "bt_tanh_params", tanh_params(self.g, op), "bt_tanh_s8")

    def sigmoid_table16(self) -> str:
        """The int16 sigmoid table (LOGISTIC, TANH, LSTM gates), declared in model.c once."""
        if not getattr(self, "_lut16_declared", False):
            self._lut16_declared = True
            self.declare(f"static const uint16_t bt_sigmoid_table16[256] = {_m._ints(sigmoid_table16())};")
        return "bt_sigmoid_table16"

    def lut16(self, op, fn: str):
        """int16 LOGISTIC / TANH: the sigmoid table goes into model.c once, shared by every such call."""
        self.sigmoid_table16()
        x, y = op.inputs[0], op.outputs[0]
        self.dense(op, x)
        self.dense(op, y)
        n = f"op{op.index}"
        fields = dict(n=self.g.tensors[x].num_elements, **lut16_params(self.g, op), table="bt_sigmoid_table16")
        self.declare(f"static const bt_lut16_params {n}_p = {_m._struct(fields)};")
        self.call(op, f"{fn}(&{n}_p, {self.cact(x)}, {self.cact(y)});")

    def softmax16(self, op):
        """int16 -> int16 SOFTMAX: its two tables go into model.c once, shared by every such call."""
        if not getattr(self, "_softmax16_declared", False):
            self._softmax16_declared = True
            for name, t in zip(("bt_softmax_exp16", "bt_softmax_rec16"), softmax_luts16()):
                self.declare(f"static const int16_t {name}[513] = {_m._ints(t)};")
        n, t = f"op{op.index}", self.g.tensors[op.inputs[0]]
        mult, shift = softmax16_params(op.options.get("beta", 1.0), t.scale)
        fields = dict(rows=t.num_elements // t.shape[-1], depth=t.shape[-1], input_multiplier=mult,
                      input_left_shift=shift, exp_lut="bt_softmax_exp16", rec_lut="bt_softmax_rec16")
        self.declare(f"static const bt_softmax16_params {n}_p = {_m._struct(fields)};")
        self.call(op, f"bt_softmax_s16(&{n}_p, {self.cact(op.inputs[0])}, {self.cact(op.outputs[0])});")

    def PRELU(self, op):
        n = f"op{op.index}"
        fields = dict(prelu_params(self.g, op), b=self._bcast(op))
        self.declare(f"static const bt_prelu_params {n}_p = {_m._struct(fields)};")
        self.call(op, f"bt_prelu_{self.sfx(op.outputs[0])}(&{n}_p, {self._operand(op.inputs[0])}, "
                      f"{self._operand(op.inputs[1])}, {self.cact(op.outputs[0])});")

    def _minmax(self, op, fn: str):
        n = f"op{op.index}"
        self.declare(f"static const bt_bcast4 {n}_p = {_m._struct(self._bcast(op))};")
        self.call(op, f"{fn}_{self.sfx(op.outputs[0])}(&{n}_p, {self._operand(op.inputs[0])}, "
                      f"{self._operand(op.inputs[1])}, {self.cact(op.outputs[0])});")

    def MAXIMUM(self, op):
        self._minmax(op, "bt_maximum")

    def MINIMUM(self, op):
        self._minmax(op, "bt_minimum")

    def _esize(self, i: int) -> int:
        """Bytes per element: the byte-moving kernels (transpose, nearest resize) take int16 as 2 bytes."""
        return self.g.tensors[i].nbytes // max(self.g.tensors[i].num_elements, 1)

    def TRANSPOSE(self, op):
        view, perm = permutation(self.g, op)
        if len(view) > 6:
            raise ModelError(f"operator {op.index} ({op.opcode}): more than 6 dimensions are not supported")
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        e = self._esize(op.inputs[0])
        if e > 1:  # the same permutation of bytes, with one more innermost axis for an element's bytes
            view, perm = tuple(view) + (e,), tuple(perm) + (len(view),)
        dims, strides = permute_geometry(view, perm)
        n = f"op{op.index}"
        self.declare(f"static const bt_transpose_params {n}_p = {_m._struct(dict(out_dims=dims, in_stride=strides))};")
        self.call(op, f"bt_transpose_s8(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")

    DEPTH_TO_SPACE = SPACE_TO_DEPTH = TRANSPOSE

    def SQUEEZE(self, op):
        self.RESHAPE(op)

    def EXPAND_DIMS(self, op):
        self.RESHAPE(op)

    def RESIZE_NEAREST_NEIGHBOR(self, op):
        n = f"op{op.index}"
        ys, xs = nearest_tables(self.g, op)
        self.declare(f"static const int32_t {n}_y[{len(ys)}] = {_m._ints(ys)};")
        self.declare(f"static const int32_t {n}_x[{len(xs)}] = {_m._ints(xs)};")
        e = self._esize(op.inputs[0])
        shapes = [self.bt_shape(i) for i in (op.inputs[0], op.outputs[0])]
        shapes = [dict(s, c=s["c"] * e, pixel_stride=s["pixel_stride"] * e) for s in shapes]  # bytes
        fields = {"in": shapes[0], "out": shapes[1], "src_y": f"{n}_y", "src_x": f"{n}_x"}
        self.declare(f"static const bt_resize_nearest_params {n}_p = {_m._struct(fields)};")
        self.call(op, f"bt_resize_nearest_s8(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")

    def RESIZE_BILINEAR(self, op):
        n, o = f"op{op.index}", op.options
        ti, to = self.g.tensors[op.inputs[0]], self.g.tensors[op.outputs[0]]
        align = bool(o.get("align_corners"))
        fields = {"in": self.bt_shape(op.inputs[0]), "out": self.bt_shape(op.outputs[0]),
                  "scale10_h": bilinear_scale10(ti.shape[1], to.shape[1], align),
                  "scale10_w": bilinear_scale10(ti.shape[2], to.shape[2], align),
                  "half_pixel_centers": int(bool(o.get("half_pixel_centers")))}
        self.declare(f"static const bt_resize_bilinear_params {n}_p = {_m._struct(fields)};")
        self.call(op, f"bt_resize_bilinear_s8(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")
