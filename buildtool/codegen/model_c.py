"""Generate model.c / model.h: the planned model as straight-line C calls into bt_kernels.h.

One static arena of exactly plan.arena_bytes; each operator (in plan order) is one kernel
call on tensors at their planned offsets, bracketed by profiling hooks with the operator
index. Every quantisation parameter is a const struct computed here. Weights are read in
place from the flash image (symbol bt_weights) at offsets that depend only on shapes, so
model.c does not change when weight values change.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..plan import flash
from . import kernel_variants
from ..errors import ModelError, PlanError
from ..model.ir import Graph
from ..model.ops import slice_bounds
from ..plan import ArenaPlan, arena_symbol, first_bytes, region_of
from ..refops import prepare
from . import qparams
from .extra_c import ExtraOpsEmitter

CTYPES = {"int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "float32": "float"}
from .stateful_c import STATEFUL_EMITTERS, state_reset

HEADER_GUARD = "BT_MODEL_H"
PREFIX_RE = re.compile(r"[a-z][a-z0-9_]*")


def _comment(text: str) -> str:
    """Text safe inside a C comment or string: printable ASCII, no comment end, no quotes."""
    return "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "?" for c in text).replace("*/", "*?")


def _ints(vals, per_line: int = 12) -> str:
    vals = [str(int(v)) for v in vals]
    lines = [", ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    return "{\n  " + ",\n  ".join(lines) + "\n}" if len(vals) > per_line else "{" + ", ".join(vals) + "}"


def _float(v: float) -> str:
    """Exact float32 literal (hex float)."""
    return f"{float(np.float32(v)).hex()}f"


def _struct(fields: dict, indent: str = "  ") -> str:
    if all(isinstance(v, (int, np.integer)) for v in fields.values()) and len(fields) <= 6:
        return "{" + ", ".join(f".{k} = {int(v)}" for k, v in fields.items()) + "}"
    parts = []
    for k, v in fields.items():
        if isinstance(v, dict):
            v = _struct(v, indent + "  ")
        elif isinstance(v, (list, tuple)):
            v = "{" + ", ".join(str(int(x)) for x in v) + "}"
        parts.append(f"{indent}.{k} = {v}")
    return "{\n" + ",\n".join(parts) + "\n" + indent[:-2] + "}"


def _prod(xs) -> int:
    return int(math.prod(int(x) for x in xs))


class _Emitter(ExtraOpsEmitter):
    """Collects declarations and the body of model_invoke for one graph and plan."""

    ext_offset = 0  # where the flash image's external part starts (0: none)
    ext_signature = 0  # flash.ext_signature of its tensors
    variants = None  # (guard macro, table) of the board's kernel set (kernel_variants.for_board), or None

    def __init__(self, g: Graph, plan: ArenaPlan, weight_offsets: dict):
        self.g, self.plan, self.w = g, plan, weight_offsets
        self.decls: list = []
        self.body: list = []
        self.used_variants: dict = {}  # variant called -> its dispatcher

    # -- addresses ----------------------------------------------------------------
    def place(self, i: int):
        p = self.plan.tensors.get(i)
        if p is None:
            raise PlanError(f"tensor {i} '{self.g.tensors[i].name}' has no place in the arena plan; "
                            f"re-plan the model")
        return p

    def at(self, off: int) -> str:
        """C expression of plan arena offset off: bt_arena + off, or with the buffers placed in several
        regions (arena/regional.py) that region's arena + the offset in it."""
        if not getattr(self.plan, "arena_regions", None):
            return f"bt_arena + {off}"
        r = region_of(self.plan, off)
        return f"{arena_symbol(self.plan, r)} + {off - r['base']}"

    def act(self, i: int, ctype: str = "int8_t") -> str:
        return f"(({ctype} *)({self.at(self.place(i).offset)}))"

    def cact(self, i: int) -> str:
        """Activation pointer typed by the tensor's element type."""
        return self.act(i, CTYPES[self.g.tensors[i].dtype])

    def sfx(self, i: int) -> str:
        """Kernel name suffix of tensor i's element type: s8 or s16."""
        return "s16" if self.g.tensors[i].dtype == "int16" else "s8"

    def weight(self, i: int, ctype: str) -> str:
        if i not in self.w:
            raise ModelError(f"constant tensor {i} '{self.g.tensors[i].name}' is not in the flash image")
        off = self.w[i]
        if self.ext_offset and off >= self.ext_offset:  # placed in an external region (regions.py)
            return f"((const {ctype} *)(bt_weights_ext + {off - self.ext_offset}))"
        return f"((const {ctype} *)(bt_weights + {off}))"

    def pixel_stride(self, i: int) -> int:
        t = self.g.tensors[i]
        ps = self.place(i).pixel_stride
        return ps if ps else (t.shape[-1] if t.shape else 1)

    def dense(self, op, i: int) -> None:
        """Refuse a strided view where the kernel (or the model I/O when op is None) needs dense bytes."""
        t = self.g.tensors[i]
        if not t.is_const and self.place(i).pixel_stride not in (0, t.shape[-1] if t.shape else 1):
            who = f"operator {op.index} ({op.opcode})" if op is not None else "model input/output"
            raise PlanError(f"{who} cannot use tensor '{t.name}' as a strided view; plan without that view")

    def bt_shape(self, i: int) -> dict:
        t = self.g.tensors[i]
        if len(t.shape) != 4 or t.shape[0] != 1:
            raise ModelError(f"tensor '{t.name}' must be [1,H,W,C], is {list(t.shape)}")
        return dict(h=t.shape[1], w=t.shape[2], c=t.shape[3], pixel_stride=self.pixel_stride(i))

    def strides4(self, i: int, shape4: tuple) -> list:
        """Byte strides of tensor i viewed as the 4-D shape4 (its own shape right-aligned)."""
        t = self.g.tensors[i]
        dims = (1,) * (4 - len(t.shape)) + tuple(int(d) for d in t.shape)
        ps = self.pixel_stride(i)
        if len(t.shape) == 4:
            st = [dims[1] * dims[2] * ps, dims[2] * ps, ps, 1]
        else:
            if ps != (t.shape[-1] if t.shape else 1):
                raise PlanError(f"tensor '{t.name}' is a strided view but not NHWC")
            st = [_prod(dims[k + 1:]) for k in range(4)]
        return [0 if dims[k] == 1 and shape4[k] != 1 else st[k] for k in range(4)]

    def declare(self, text: str) -> None:
        self.decls.append(text)

    def call(self, op, text: str) -> None:
        name = _comment(self.g.tensors[op.outputs[0]].name)
        self.body.append(f"  /* op {op.index}: {op.opcode} -> {name} */\n"
                         f"  BT_PROFILE_BEGIN({op.index});\n  {text}\n  BT_PROFILE_END({op.index});")

    def kernel(self, kind: str, layer: dict) -> str:
        """The function model.c calls for a layer of kind "conv", "depthwise" or "fully_connected": the
        variant the board's table picks (kernel_variants.py), else the set's dispatcher."""
        dispatcher = kernel_variants.DISPATCHERS[kind]
        if self.variants is None:
            return dispatcher
        name = kernel_variants.choose(self.variants[1], kind, layer)
        if name != dispatcher:
            self.used_variants[name] = dispatcher
        return name

    def conv_layer(self, op, fields: dict) -> dict:
        """A conv or depthwise layer for kernel_variants: its struct fields with its requantisation."""
        p = prepare.conv(self.g, op)
        return dict(fields, multipliers=list(p.multipliers), shifts=list(p.shifts))

    # -- operators ----------------------------------------------------------------
    def conv_fields(self, op) -> dict:
        g = self.g
        p = prepare.conv(g, op)
        win, n = p.window, f"op{op.index}"
        self.declare(f"static const int32_t {n}_mult[{len(p.multipliers)}] = {_ints(p.multipliers)};")
        self.declare(f"static const int32_t {n}_shift[{len(p.shifts)}] = {_ints(p.shifts)};")
        has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0 and g.tensors[op.inputs[2]].dtype == "int32"
        return dict(
            **{"in": self.bt_shape(op.inputs[0]), "out": self.bt_shape(op.outputs[0])},
            kh=win.kh, kw=win.kw, stride_h=win.sh, stride_w=win.sw, dil_h=win.dh, dil_w=win.dw,
            pad_top=win.pad_top, pad_left=win.pad_left, input_offset=p.input_offset, output_offset=p.output_offset,
            act_min=p.act_min, act_max=p.act_max, filter=self.weight(op.inputs[1], "int8_t"),
            bias=self.weight(op.inputs[2], "int32_t") if has_bias else "0",
            multiplier=f"{n}_mult", shift=f"{n}_shift")

    def TRANSPOSE_CONV(self, op):
        g, o, n = self.g, op.options, f"op{op.index}"
        x, y = op.inputs[2], op.outputs[0]
        self.dense(op, x)
        self.dense(op, y)
        flt = g.tensors[op.inputs[1]]
        p = prepare.transpose_conv(g, op)
        self.declare(f"static const int32_t {n}_mult[{len(p.multipliers)}] = {_ints(p.multipliers)};")
        self.declare(f"static const int32_t {n}_shift[{len(p.shifts)}] = {_ints(p.shifts)};")
        has_bias = len(op.inputs) > 3 and op.inputs[3] >= 0
        fields = {"in": self.bt_shape(x), "out": self.bt_shape(y), "kh": flt.shape[1], "kw": flt.shape[2],
                  "stride_h": o["stride_h"], "stride_w": o["stride_w"], "dil_h": 1, "dil_w": 1,
                  "pad_top": p.pad_top, "pad_left": p.pad_left, "input_offset": p.input_offset,
                  "output_offset": p.output_offset, "act_min": p.act_min, "act_max": p.act_max,
                  "filter": self.weight(op.inputs[1], "int8_t"),
                  "bias": self.weight(op.inputs[3], "int32_t") if has_bias else "0",
                  "multiplier": f"{n}_mult", "shift": f"{n}_shift"}
        self.wide_conv(op, fields)
        self.call(op, f"bt_transpose_conv_{self.sfx(y)}(&{n}_p, {self.cact(x)}, {self.cact(y)});")

    def wide_conv(self, op, fields: dict) -> str:
        """Declare bt_conv_wide_params {n}_p (16x8 kernels, transpose conv): int64 bias in bias64."""
        n = f"op{op.index}"
        pos = 3 if op.opcode == "TRANSPOSE_CONV" else 2
        b64 = len(op.inputs) > pos and op.inputs[pos] >= 0 and self.g.tensors[op.inputs[pos]].dtype == "int64"
        if b64:
            fields["bias"] = "0"
        wide = dict(conv=fields, bias64=self.weight(op.inputs[pos], "int64_t") if b64 else "0")
        self.declare(f"static const bt_conv_wide_params {n}_p = {_struct(wide)};")
        return n

    def CONV_2D(self, op):
        n = f"op{op.index}"
        if self.g.tensors[op.outputs[0]].dtype == "int16":
            self.wide_conv(op, self.conv_fields(op))
            h = self.g.tensors[op.outputs[0]].shape[1]
            self.call(op, f"bt_conv_s16(&{n}_p, {self.cact(op.inputs[0])}, 0, {self.cact(op.outputs[0])}, 0, {h});")
            return
        fields = self.conv_fields(op)
        self.declare(f"static const bt_conv_params {n}_p = {_struct(fields)};")
        h = self.g.tensors[op.outputs[0]].shape[1]
        fn = self.kernel("conv", self.conv_layer(op, fields))
        if fn in kernel_variants.INSTANCES and kernel_variants.instances():
            self.call(op, f"{self.instance(n, fn, h)}({self.act(op.inputs[0])}, {self.act(op.outputs[0])});")
            return
        self.call(op, f"{fn}(&{n}_p, {self.act(op.inputs[0])}, 0, {self.act(op.outputs[0])}, 0, {h});")

    def instance(self, n: str, variant: str, h: int) -> str:
        """Declare {n}_conv, the layer's own instance of `variant`'s loops (the set's macro on its constant
        parameters, kernel_variants.INSTANCES; its own stack frame); returns its name."""
        macro, extra = kernel_variants.INSTANCES[variant]
        self.used_variants.pop(variant, None)
        self.use_macro(macro)
        args = "".join(f", {a}" for a in extra)
        self.declare(f"static __attribute__((noinline)) void {n}_conv(const int8_t *in, int8_t *out) {{\n"
                     f"  {macro}(&{n}_p, in, 0, out, 0, {h}{args});\n}}")
        return f"{n}_conv"

    def use_macro(self, macro: str) -> None:
        """model.c calls a kernel set's INSTANCES macro: its fallback (another set linked) is bt_conv_s8."""
        params = ", ".join(("p", "in", "in_y0", "out", "y0", "y1") + kernel_variants.INSTANCE_PARAMS[macro])
        self.used_variants[f"{macro}({params})"] = "bt_conv_s8(p, in, in_y0, out, y0, y1)"

    def bias64(self, op, pos: int = 2) -> str:
        """Pointer to an int64 bias (16x8 kernels) or 0."""
        b = op.inputs[pos] if len(op.inputs) > pos else -1
        return self.weight(b, "int64_t") if b >= 0 and self.g.tensors[b].dtype == "int64" else "0"

    def DEPTHWISE_CONV_2D(self, op):
        n = f"op{op.index}"
        fields = dict(conv=self.conv_fields(op), depth_multiplier=op.options.get("depth_multiplier", 1))
        self.declare(f"static const bt_depthwise_params {n}_p = {_struct(fields)};")
        if self.g.tensors[op.outputs[0]].dtype == "int16":
            h = self.g.tensors[op.outputs[0]].shape[1]
            self.call(op, f"bt_depthwise_s16(&{n}_p, {self.bias64(op)}, {self.cact(op.inputs[0])}, 0, "
                          f"{self.cact(op.outputs[0])}, 0, {h});")
            return
        if op.index in self.plan.inplace_ops:
            sc = self.plan.scratch.get(op.index)
            if sc is None or self.place(op.inputs[0]).offset != self.place(op.outputs[0]).offset:
                raise PlanError(f"in-place depthwise operator {op.index} needs a scratch buffer and its output "
                                f"at its input's offset; re-plan the model")
            self.call(op, f"bt_depthwise_s8_inplace(&{n}_p, {self.act(op.inputs[0])}, {self.at(sc.offset)});")
            return
        h = self.g.tensors[op.outputs[0]].shape[1]
        layer = dict(self.conv_layer(op, fields["conv"]), depth_multiplier=fields["depth_multiplier"])
        fn = self.kernel("depthwise", layer)
        self.call(op, f"{fn}(&{n}_p, {self.act(op.inputs[0])}, 0, {self.act(op.outputs[0])}, 0, {h});")

    def FULLY_CONNECTED(self, op):
        g, n = self.g, f"op{op.index}"
        to = g.tensors[op.outputs[0]]
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        p = prepare.fields(prepare.fully_connected(g, op))
        mult, shift, per_ch = p.pop("multipliers"), p.pop("shifts"), p.pop("per_channel")
        self.declare(f"static const int32_t {n}_mult[{len(mult)}] = {_ints(mult)};")
        self.declare(f"static const int32_t {n}_shift[{len(shift)}] = {_ints(shift)};")
        has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0 and g.tensors[op.inputs[2]].dtype == "int32"
        fields = dict(p, weights=self.weight(op.inputs[1], "int8_t"),
                      bias=self.weight(op.inputs[2], "int32_t") if has_bias else "0",
                      multiplier=f"{n}_mult", shift=f"{n}_shift", per_channel=per_ch)
        self.declare(f"static const bt_fc_params {n}_p = {_struct(fields)};")
        if to.dtype == "int16":
            self.call(op, f"bt_fully_connected_s16(&{n}_p, {self.bias64(op)}, {self.cact(op.inputs[0])}, "
                          f"{self.cact(op.outputs[0])});")
            return
        fn = self.kernel("fully_connected", dict(fields, multipliers=list(mult), shifts=list(shift)))
        self.call(op, f"{fn}(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")

    def _operand(self, i: int) -> str:
        t = self.g.tensors[i]
        return self.weight(i, CTYPES[t.dtype]) if t.is_const else self.cact(i)

    def _bcast(self, op) -> dict:
        out = self.g.tensors[op.outputs[0]]
        if len(out.shape) > 4:
            raise ModelError(f"operator {op.index} ({op.opcode}): more than 4 dimensions are not supported")
        dims = (1,) * (4 - len(out.shape)) + tuple(int(d) for d in out.shape)

        def strides(i):
            if self.g.tensors[i].is_const:
                t = self.g.tensors[i]
                td = (1,) * (4 - len(t.shape)) + tuple(int(d) for d in t.shape)
                return [0 if td[k] == 1 and dims[k] != 1 else _prod(td[k + 1:]) for k in range(4)]
            return self.strides4(i, dims)

        return dict(dims=list(dims), a_stride=strides(op.inputs[0]), b_stride=strides(op.inputs[1]),
                    out_stride=self.strides4(op.outputs[0], dims))

    def _binary(self, op, params: dict, struct: str, fn: str):
        n = f"op{op.index}"
        self.declare(f"static const {struct} {n}_p = {_struct(dict(params, b=self._bcast(op)))};")
        self.call(op, f"{fn}_{self.sfx(op.outputs[0])}(&{n}_p, {self._operand(op.inputs[0])}, "
                      f"{self._operand(op.inputs[1])}, {self.cact(op.outputs[0])});")

    def ADD(self, op):
        self._binary(op, qparams.add_params(self.g, op), "bt_add_params", "bt_add")

    def SUB(self, op):
        self._binary(op, qparams.sub_params(self.g, op), "bt_add_params", "bt_sub")

    def MUL(self, op):
        self._binary(op, qparams.mul_params(self.g, op), "bt_mul_params", "bt_mul")

    def pool_fields(self, op) -> dict:
        """bt_pool_params of MAX_POOL_2D / AVERAGE_POOL_2D (also used by fused tile loops)."""
        win = prepare.window(self.g, op)
        lo, hi = prepare.act_range(self.g, op)
        return {"in": self.bt_shape(op.inputs[0]), "out": self.bt_shape(op.outputs[0]),
                "filter_h": win.kh, "filter_w": win.kw, "stride_h": win.sh, "stride_w": win.sw,
                "pad_top": win.pad_top, "pad_left": win.pad_left, "act_min": lo, "act_max": hi}

    def _pool(self, op, fn: str):
        n = f"op{op.index}"
        self.declare(f"static const bt_pool_params {n}_p = {_struct(self.pool_fields(op))};")
        h = self.g.tensors[op.outputs[0]].shape[1]
        self.call(op, f"{fn}(&{n}_p, {self.cact(op.inputs[0])}, 0, {self.cact(op.outputs[0])}, 0, {h});")

    def AVERAGE_POOL_2D(self, op):
        self._pool(op, f"bt_avg_pool_{self.sfx(op.outputs[0])}")

    def MAX_POOL_2D(self, op):
        self._pool(op, f"bt_max_pool_{self.sfx(op.outputs[0])}")

    def MEAN(self, op):
        g, n = self.g, f"op{op.index}"
        ti = g.tensors[op.inputs[0]]
        rank = len(ti.shape)
        axes = list(prepare.mean_axes(g, op))
        if axes != list(range(axes[0], axes[-1] + 1)):
            raise ModelError(f"operator {op.index} (MEAN) over non-adjacent axes {axes} is not supported")
        outer, reduce = _prod(ti.shape[:axes[0]]), _prod(ti.shape[axes[0]:axes[-1] + 1])
        inner = _prod(ti.shape[axes[-1] + 1:])
        self.dense(op, op.outputs[0])
        ps = self.pixel_stride(op.inputs[0])
        if ps != (ti.shape[-1] if ti.shape else 1) and not (rank == 4 and axes == [1, 2]):
            raise PlanError(f"operator {op.index} (MEAN) reads a strided view over axes {axes}; not supported")
        rstride = ps if rank == 4 and axes == [1, 2] else inner
        fields = dict(outer=outer, reduce=reduce, inner=inner, outer_stride=reduce * rstride, reduce_stride=rstride,
                      **prepare.fields(prepare.mean(g, op)))
        self.declare(f"static const bt_mean_params {n}_p = {_struct(fields)};")
        self.call(op, f"bt_mean_{self.sfx(op.outputs[0])}(&{n}_p, {self.cact(op.inputs[0])}, "
                      f"{self.cact(op.outputs[0])});")

    def SOFTMAX(self, op):
        n, t = f"op{op.index}", self.g.tensors[op.inputs[0]]
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        depth = t.shape[-1]
        if t.dtype == "int16":
            return self.softmax16(op)
        fields = dict(rows=t.num_elements // depth, depth=depth, **qparams.softmax_quant(self.g, op))
        self.declare(f"static const bt_softmax_params {n}_p = {_struct(fields)};")
        if self.g.tensors[op.outputs[0]].dtype == "int16":
            self.call(op, f"bt_softmax_s8_s16(&{n}_p, {self.act(op.inputs[0])}, "
                          f"{self.act(op.outputs[0], 'int16_t')});")
            return
        self.call(op, f"bt_softmax_s8(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")

    def _unary(self, op, ctype: str, fields: dict, fn: str):
        n = f"op{op.index}"
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        fields = dict(n=self.g.tensors[op.inputs[0]].num_elements, **fields)
        self.declare(f"static const {ctype} {n}_p = {_struct(fields)};")
        self.call(op, f"{fn}(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")

    def LEAKY_RELU(self, op):
        n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
        self.dense(op, x)
        self.dense(op, y)
        fields = dict(n=self.g.tensors[x].num_elements, **qparams.leaky_relu_params(self.g, op))
        self.declare(f"static const bt_leaky_relu_params {n}_p = {_struct(fields)};")
        self.call(op, f"bt_leaky_relu_{self.sfx(y)}(&{n}_p, {self.cact(x)}, {self.cact(y)});")

    def LOGISTIC(self, op):
        if self.g.tensors[op.outputs[0]].dtype == "int16":
            return self.lut16(op, "bt_logistic_s16")
        self._unary(op, "bt_logistic_params", qparams.logistic_params(self.g, op), "bt_logistic_s8")

    def HARD_SWISH(self, op):
        self._unary(op, "bt_hard_swish_params", qparams.hard_swish_params(self.g, op), "bt_hard_swish_s8")

    def QUANTIZE(self, op):
        ti, to = self.g.tensors[op.inputs[0]], self.g.tensors[op.outputs[0]]
        if ti.dtype == "float32":
            self.dense(op, op.outputs[0])
            self.call(op, f"bt_quantize_f32_{self.sfx(op.outputs[0])}({ti.num_elements}, {_float(to.scale)}, "
                          f"{to.zero_point}, {self.act(op.inputs[0], 'float')}, {self.cact(op.outputs[0])});")
            return
        if ti.dtype == to.dtype == "int8":
            self._unary(op, "bt_requant_params", qparams.requant_params(ti, to), "bt_requantize_s8")
            return
        n = f"op{op.index}"
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        fields = dict(n=ti.num_elements, **qparams.requant_params(ti, to))
        self.declare(f"static const bt_requant_params {n}_p = {_struct(fields)};")
        self.call(op, f"bt_requantize(&{n}_p, {self.act(op.inputs[0])}, {ti.nbytes // ti.num_elements}, "
                      f"{self.act(op.outputs[0])}, {to.nbytes // to.num_elements});")

    def DEQUANTIZE(self, op):
        ti = self.g.tensors[op.inputs[0]]
        self.dense(op, op.inputs[0])
        self.call(op, f"bt_dequantize_{self.sfx(op.inputs[0])}_f32({ti.num_elements}, {_float(ti.scale)}, "
                      f"{ti.zero_point}, {self.cact(op.inputs[0])}, {self.act(op.outputs[0], 'float')});")

    def PAD(self, op):
        g, n = self.g, f"op{op.index}"
        ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        if len(ti.shape) > 4:
            raise ModelError(f"operator {op.index} (PAD): more than 4 dimensions are not supported")
        self.dense(op, op.inputs[0])
        k = 4 - len(ti.shape)
        pads = g.tensors[op.inputs[1]].data.reshape(-1, 2)
        out_dims = [1] * k + [int(d) for d in to.shape]
        view = self.place(op.outputs[0]).pixel_stride not in (0, to.shape[-1])
        fields = dict(in_dims=[1] * k + [int(d) for d in ti.shape], out_dims=out_dims,
                      before=[0] * k + [int(p) for p in pads[:, 0]],
                      out_stride=self.strides4(op.outputs[0], tuple(out_dims)) if view else [0, 0, 0, 0],
                      pad_value=to.zero_point if to.quant is not None else 0)
        self.declare(f"static const bt_pad_params {n}_p = {_struct(fields)};")
        self.call(op, f"bt_pad_{self.sfx(op.outputs[0])}(&{n}_p, {self.cact(op.inputs[0])}, "
                      f"{self.cact(op.outputs[0])});")

    def _strided_copy(self, op, src: int, dst_expr: str, dims: list, out_stride: list, tag: str):
        """Copy dense tensor src into a strided destination (PAD with no padding)."""
        n = f"op{op.index}_{tag}"
        fields = dict(in_dims=dims, out_dims=dims, before=[0, 0, 0, 0], out_stride=out_stride, pad_value=0)
        self.declare(f"static const bt_pad_params {n} = {_struct(fields)};")
        return f"bt_pad_s8(&{n}, {self._operand(src)}, {dst_expr});"

    def CONCATENATION(self, op):
        g, n = self.g, f"op{op.index}"
        to = g.tensors[op.outputs[0]]
        rank = len(to.shape)
        axis = op.options.get("axis", 0) % rank
        out_place = self.place(op.outputs[0])
        views = [i for i in op.inputs if not g.tensors[i].is_const and self.place(i).buffer == out_place.buffer]
        if not views and self.place(op.outputs[0]).pixel_stride in (0, to.shape[-1]) and all(
                g.tensors[i].is_const or self.place(i).pixel_stride in (0, g.tensors[i].shape[-1])
                for i in op.inputs):
            sizes = [g.tensors[i].nbytes // _prod(g.tensors[i].shape[:axis]) for i in op.inputs]
            self._concat_params(n, sizes, _prod(to.shape[:axis]))
            srcs = ", ".join(self.weight(i, "int8_t") if g.tensors[i].is_const else self.act(i) for i in op.inputs)
            self.call(op, f"{{\n    const int8_t *const in[{len(sizes)}] = {{{srcs}}};\n"
                          f"    bt_concat_s8(&{n}_p, in, {self.act(op.outputs[0])});\n  }}")
            return
        if rank > 4 or to.dtype != "int8":
            raise ModelError(f"operator {op.index} (CONCATENATION): strided int16 or more than 4-D concatenation "
                             f"is not supported")
        dims_out = (1,) * (4 - rank) + tuple(int(d) for d in to.shape)
        ax4 = axis + 4 - rank
        ost = self.strides4(op.outputs[0], dims_out)
        copies, pos = [], 0
        for k, i in enumerate(op.inputs):
            t = g.tensors[i]
            if i not in views:
                self.dense(op, i)
                dims = [1] * (4 - rank) + [int(d) for d in t.shape]
                copies.append(self._strided_copy(op, i, f"{self.act(op.outputs[0])} + {pos * ost[ax4]}", dims, ost,
                                                 f"in{k}"))
            pos += t.shape[axis]
        text = "\n  ".join(copies) if copies else "/* every input was written in place into its slice */"
        self.call(op, text)

    def _concat_params(self, n: str, sizes: list, outer: int) -> None:
        """bt_concat_params {n}_p: `outer` rows of the given byte sizes (concat, split, reshape copy)."""
        self.declare(f"static const int32_t {n}_sizes[{len(sizes)}] = {_ints(sizes)};")
        self.declare(f"static const bt_concat_params {n}_p = {{.n = {len(sizes)}, .outer = {outer}, "
                     f".size = {n}_sizes}};")

    def RESHAPE(self, op):
        src, dst = op.inputs[0], op.outputs[0]
        self.dense(op, src)
        self.dense(op, dst)
        if self.place(src).offset == self.place(dst).offset:
            self.call(op, "/* reshape: output shares the input's bytes */")
            return
        n = f"op{op.index}"
        size = self.g.tensors[src].nbytes
        self._concat_params(n, [size], 1)
        self.call(op, f"{{\n    const int8_t *const in[1] = {{{self.act(src)}}};\n"
                      f"    bt_concat_s8(&{n}_p, in, {self.act(dst)});\n  }}")

    def SPLIT(self, op):
        g, n = self.g, f"op{op.index}"
        ti = g.tensors[op.inputs[1]]
        axis = int(g.tensors[op.inputs[0]].data.reshape(-1)[0]) % len(ti.shape)
        self.dense(op, op.inputs[1])
        for o in op.outputs:
            self.dense(op, o)
        sizes = [g.tensors[o].nbytes // _prod(g.tensors[o].shape[:axis]) for o in op.outputs]
        self._concat_params(n, sizes, _prod(ti.shape[:axis]))
        outs = ", ".join(self.act(o) for o in op.outputs)
        self.call(op, f"{{\n    int8_t *const out[{len(sizes)}] = {{{outs}}};\n"
                      f"    bt_split_s8(&{n}_p, {self.act(op.inputs[1])}, out);\n  }}")

    def STRIDED_SLICE(self, op):
        g, n, o = self.g, f"op{op.index}", op.options
        ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        if o.get("ellipsis_mask", 0) or o.get("new_axis_mask", 0) or len(ti.shape) > 4:
            raise ModelError(f"operator {op.index} (STRIDED_SLICE): ellipsis/new-axis masks and more than "
                             f"4 dimensions are not supported")
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        begin, end, strides = (g.tensors[op.inputs[k]].data.reshape(-1).astype(np.int64) for k in (1, 2, 3))
        k = 4 - len(ti.shape)
        b4, s4, o4 = [0] * k, [1] * k, [1] * k
        for d, size in enumerate(ti.shape):
            st = int(strides[d]) if d < len(strides) else 1
            if d < len(begin):
                lo, hi = slice_bounds(size, int(begin[d]), int(end[d]), st, o.get("begin_mask", 0) >> d & 1,
                                       o.get("end_mask", 0) >> d & 1, o.get("shrink_axis_mask", 0) >> d & 1,
                                       o.get("offset", False))
            else:
                lo, hi = 0, size
            b4.append(lo)
            s4.append(st)
            o4.append(max(0, len(range(lo, hi, st))))
        if _prod(o4) != to.num_elements:
            raise ModelError(f"operator {op.index} (STRIDED_SLICE): resolved slice {o4} does not match the output "
                             f"shape {list(to.shape)}")
        fields = dict(in_dims=[1] * k + [int(d) for d in ti.shape], out_dims=o4, begin=b4, stride=s4)
        self.declare(f"static const bt_slice_params {n}_p = {_struct(fields)};")
        self.call(op, f"bt_strided_slice_{self.sfx(op.outputs[0])}(&{n}_p, {self.cact(op.inputs[0])}, "
                      f"{self.cact(op.outputs[0])});")


for _name, _fn in STATEFUL_EMITTERS.items():
    setattr(_Emitter, _name, _fn)


def _io_table(e: _Emitter, name: str, idx: list, streamed: tuple = (), prefix: str = "model") -> list:
    """Pointer and size of each model input/output; a streamed input has 0 bytes (it is
    pulled a region at a time by the generated code, never held whole)."""
    ptrs = ", ".join("bt_arena" if i in streamed else e.at(e.place(i).offset) for i in idx) or "0"
    sizes = ", ".join("0" if i in streamed else str(e.g.tensors[i].nbytes) for i in idx) or "0"
    for i in idx:
        if i not in streamed:
            e.dense(None, i)
    return [f"static void *const bt_{name}s[] = {{{ptrs}}};",
            f"static const uint32_t bt_{name}_bytes[] = {{{sizes}}};",
            f"void *{prefix}_{name}(int i) {{ return (i >= 0 && i < {len(idx)}) ? bt_{name}s[i] : 0; }}",
            f"uint32_t {prefix}_{name}_bytes(int i) {{ return (i >= 0 && i < {len(idx)}) ? bt_{name}_bytes[i] : 0; }}"]


def emit_op(e: _Emitter, oi: int) -> None:
    op = e.g.operators[oi]
    fn = getattr(e, op.opcode, None)
    if fn is None:
        raise ModelError(f"operator {op.index} is {op.opcode}, which firmware generation does not support")
    fn(op)


def check_prefix(prefix: str) -> None:
    """A name prefix must make C identifiers of its own (not the runtime's bt_/fx_ names)."""
    if not PREFIX_RE.fullmatch(prefix) or prefix in ("bt", "fx") or prefix.startswith(("bt_", "fx_")):
        raise PlanError(f"model name prefix '{_comment(prefix)}' must be a lower-case C identifier "
                        f"([a-z][a-z0-9_]*) not starting with bt_ or fx_")


def _shared_arena(prefix: str, arena_base, align: int, plan=None) -> str:
    """model.c's arena line(s): its own static arena (and one per further region the plan places
    buffers in, in the linker section .bt_arena_<region>), or (arena_base given) its part of the
    shared bt_arena that the multi-model firmware defines (offsets from byte arena_base of it)."""
    p = prefix.upper()
    if arena_base is None:
        more = (getattr(plan, "arena_regions", None) or [])[1:]
        return "\n".join([f"int8_t bt_arena[{p}_ARENA_BYTES] __attribute__((aligned({align})));"]
                         + [f"int8_t {arena_symbol(plan, r)}[{r['bytes']}] "
                            f"__attribute__((section(\".bt_arena_{r['name']}\"), aligned({align})));" for r in more])
    lines = [f"/* bt_arena is shared with other models (defined by the multi-model firmware); this model's\n"
             f"   offsets start at its byte {arena_base}. */"]
    if arena_base:
        lines.append(f"#define bt_arena (bt_arena + {arena_base})")
    return "\n".join(lines)


def _placement_groups(g: Graph, plan, target: str, weights_align: int):
    """The flash image's [primary, external] tensor groups on a board with memory regions (regions.py),
    None when every weight stays in the primary region or the board is not a registered one."""
    from .. import targets
    from ..errors import UsageError
    from ..plan.regions import image_groups

    try:
        board = targets.get(target)
    except UsageError:
        return None
    return image_groups(g, plan, board, weights_align)


def _ext_decl(e) -> str:
    """model.h's declaration of the external part of the flash image (none when it has none)."""
    if not e.ext_offset:
        return ""
    return ("/* The flash image's external part, from byte " + str(e.ext_offset)
            + " (firmware_src/common/weights.S). */\nextern const uint8_t bt_weights_ext[];\n")


def _ext_check(e) -> str:
    """model_init's check that the linked image splits where this code reads it, the same tensors
    external (none when unsplit)."""
    if not e.ext_offset:
        return ""
    return (f"  if ((w[56] | w[57] << 8 | w[58] << 16 | (uint32_t)w[59] << 24) != {e.ext_offset}u ||\n"
            f"      (w[60] | w[61] << 8 | w[62] << 16 | (uint32_t)w[63] << 24) != {e.ext_signature}u) return 4;\n")


def _variant_block(e) -> str:
    """model.c's include of the kernel set's bt_variants.h when it calls variants, and the fallback
    to the dispatchers when another set is linked (--kernels reference, a user's kernel folder)."""
    if not e.used_variants:
        return ""
    fallback = "".join(f"#define {v} {d}\n" for v, d in sorted(e.used_variants.items()))
    return (f"\n/* Kernel variants chosen per layer (buildtool/kernel_variants.py). */\n"
            f"#if defined __has_include\n#if __has_include(\"bt_variants.h\")\n#include \"bt_variants.h\"\n"
            f"#endif\n#endif\n#ifndef {e.variants[0]}  /* another kernel set: its dispatchers choose */\n"
            f"{fallback}#endif\n")


def generate(g: Graph, plan: ArenaPlan, target: str, weights_align: int = 16, emit=None,
             emitter=_Emitter, streamed: tuple = (), prefix: str = "model", arena_base=None) -> tuple:
    """(model_c, model_h) source text for graph g run with `plan`; deterministic.

    emit(e), when given, fills the emitter's declarations and body instead of one call per
    operator of plan.order (fused plans: buildtool/codegen/fused_c.py, with its own emitter
    class); streamed: graph inputs the generated code pulls itself. prefix names the public
    symbols (<prefix>_init, _invoke, _input, ...; weights <prefix>_weights unless "model");
    arena_base (multi-model firmware): no arena of its own, plan offsets are from that byte of
    a shared bt_arena."""
    check_prefix(prefix)
    placed = getattr(emit, "plan", plan)  # a fused plan's emit carries it: its tile counts place weights
    split = _placement_groups(g, placed, target, weights_align) if prefix == "model" else None
    groups = split[0] if split else None
    offsets = flash.layout(g, weights_align, groups)
    e = emitter(g, plan, offsets)
    e.variants = kernel_variants.for_board(target)
    e.ext_offset = flash.ext_offset(g, weights_align, groups)
    e.ext_signature = flash.ext_signature(groups)
    if emit is None:
        for oi in plan.order:
            emit_op(e, oi)
    else:
        emit(e)
    for i in list(g.inputs) + list(g.outputs):
        if i in streamed:
            continue
        if g.tensors[i].is_const or i not in plan.tensors:
            raise ModelError(f"model input/output tensor {i} is constant or unplanned; firmware needs activations")
    mhash = flash.model_hash(g)
    align = max(16, plan.align, weights_align)
    from ..firmware.toolchain import c_string

    label = _comment(g.name)
    p, P = prefix, prefix.upper()
    guard = HEADER_GUARD if p == "model" else f"BT_{P}_H"
    weights = "bt_weights" if p == "model" else f"{p}_weights"
    h = f"""/* Generated by buildtool for model '{label}' on board '{target}'. Do not edit. */
#ifndef {guard}
#define {guard}
#include <stdint.h>

#define {P}_NAME {c_string(g.name)}
#define {P}_ARENA_BYTES {first_bytes(plan)}u
#define {P}_NUM_OPS {len(g.operators)}
#define {P}_NUM_STEPS {len(plan.order)}
#define {P}_NUM_INPUTS {len(g.inputs)}
#define {P}_NUM_OUTPUTS {len(g.outputs)}
#define {P}_WEIGHTS_BYTES {max(offsets[i] + g.tensors[i].nbytes for i in offsets) if offsets else flash.HEADER_BYTES}u

/* The tensor arena: all activations live here at their planned offsets. */
extern int8_t bt_arena[];
/* The flash image (weights.bin), linked read-only; see buildtool/flash.py. */
extern const uint8_t {weights}[];
{_ext_decl(e)}
/* 0 when the linked weights image has the expected magic, version and model hash. */
int {p}_init(void);
/* Runs every operator in plan order; returns 0. */
int {p}_invoke(void);
void *{p}_input(int i);
void *{p}_output(int i);
uint32_t {p}_input_bytes(int i);
uint32_t {p}_output_bytes(int i);

/* Profiling hooks, called with the operator index around every operator.
   Weak no-op defaults live in model.c; define BT_PROFILE_BEGIN/END to replace the calls. */
void bt_profile_begin(int op);
void bt_profile_end(int op);
#endif
"""
    steps = "\n".join(e.body)
    state = "".join(line + "\n" for line in state_reset(e))
    c = f"""/* Generated by buildtool for model '{label}' on board '{target}'. Do not edit.
   Plan: {plan.planner}, arena {plan.arena_bytes} bytes, {len(plan.order)} steps. */
#include <stdint.h>
#include "bt_kernels.h"
#include "model.h"
{_variant_block(e)}
#ifndef BT_PROFILE_BEGIN
#define BT_PROFILE_BEGIN(op) bt_profile_begin(op)
#define BT_PROFILE_END(op) bt_profile_end(op)
#endif

__attribute__((weak)) void bt_profile_begin(int op) {{ (void)op; }}
__attribute__((weak)) void bt_profile_end(int op) {{ (void)op; }}

{_shared_arena(p, arena_base, align, plan)}{"" if p == "model" else chr(10) + "#define bt_weights " + weights}

static const uint8_t bt_model_hash[16] = {_ints(list(mhash), 16)};

int {p}_init(void) {{
  static const uint8_t magic[4] = {{'B', 'T', 'W', 'F'}};
  const uint8_t *w = bt_weights;
  for (int i = 0; i < 4; i++)
    if (w[i] != magic[i]) return 1;
  if ((w[4] | w[5] << 8 | w[6] << 16 | (uint32_t)w[7] << 24) != {flash.FORMAT_VERSION}u) return 2;
  for (int i = 0; i < 16; i++)
    if (w[40 + i] != bt_model_hash[i]) return 3;
{_ext_check(e)}{state}  return 0;
}}

{chr(10).join(_io_table(e, "input", list(g.inputs), streamed, p))}
{chr(10).join(_io_table(e, "output", list(g.outputs), (), p))}

{chr(10).join(e.decls)}

int {p}_invoke(void) {{
{steps}
  return 0;
}}
"""
    return c, h
