"""The emitter: what every operator's C emitter works through, for one graph and plan.

It collects model.c's declarations and model_invoke's body, turns tensors into C expressions
(arena places, flash weights, strides), picks the kernel variant of a layer (kernel_variants.py),
and fills the parameter structs several emitters share (conv, pool, fully connected, broadcast)
from the prepare step (refops/prepare.py) only. The operators' emitters are functions fn(e, op)
named in the operator table (model/opdefs.py, column emit): model_c.py, extra_c.py, stateful_c.py;
fused plans subclass the emitter (fused_c.py).
"""

from __future__ import annotations

from ..errors import ModelError, PlanError
from ..model.ir import Graph
from ..plan import ArenaPlan, arena_symbol, region_of
from ..refops import prepare
from ..refops.activation import sigmoid_table16
from . import kernel_variants
from .c_text import CTYPES, c_comment, c_ints, c_struct, prod


class Emitter:
    """Collects declarations and the body of model_invoke for one graph and plan."""

    ext_offset = 0  # where the flash image's external part starts (0: none)
    ext_signature = 0  # flash.ext_signature of its tensors
    variants = None  # (guard macro, table) of the board's kernel set (kernel_variants.for_board), or None
    orders: dict = {}  # constant tensor -> the order the flash image holds it in (plan/weight_order.py)

    def __init__(self, g: Graph, plan: ArenaPlan, weight_offsets: dict):
        self.g, self.plan, self.w = g, plan, weight_offsets
        self.decls: list = []
        self.body: list = []
        self.used_variants: dict = {}  # variant called -> its dispatcher
        self.tables: set = set()  # the shared lookup tables already declared (sigmoid, softmax int16)

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

    def bias(self, op, bits: int = 32, pos: int | None = None) -> str:
        """Pointer to op's int<bits> bias, or 0 when it has none of that type (refops.prepare.bias_input:
        an int64 bias of the 16x8 kernels goes to bias64, never to an int32 bias field)."""
        b = prepare.bias_input(self.g, op, f"int{bits}", pos)
        return self.weight(b, f"int{bits}_t") if b >= 0 else "0"

    def operand(self, i: int) -> str:
        """A binary operator's operand: a flash constant or an activation, typed by its element type."""
        t = self.g.tensors[i]
        return self.weight(i, CTYPES[t.dtype]) if t.is_const else self.cact(i)

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
            st = [prod(dims[k + 1:]) for k in range(4)]
        return [0 if dims[k] == 1 and shape4[k] != 1 else st[k] for k in range(4)]

    # -- model.c text ---------------------------------------------------------------
    def declare(self, text: str) -> None:
        self.decls.append(text)

    def call(self, op, text: str) -> None:
        name = c_comment(self.g.tensors[op.outputs[0] if op.outputs else op.inputs[0]].name)  # ASSIGN_VARIABLE
        self.body.append(f"  /* op {op.index}: {op.opcode} -> {name} */\n"
                         f"  BT_PROFILE_BEGIN({op.index});\n  {text}\n  BT_PROFILE_END({op.index});")

    def table(self, name: str, ctype: str, values) -> str:
        """Declare a lookup table shared by every call that reads it, once per model.c; returns its name."""
        if name not in self.tables:
            self.tables.add(name)
            self.declare(f"static const {ctype} {name}[{len(values)}] = {c_ints(values)};")
        return name

    def sigmoid_table16(self) -> str:
        """The int16 sigmoid table (LOGISTIC, TANH, LSTM gates), declared in model.c once."""
        return self.table("bt_sigmoid_table16", "uint16_t", sigmoid_table16())

    # -- kernel variants --------------------------------------------------------------
    def kernel(self, kind: str, layer: dict) -> str:
        """The function model.c calls for a layer of kind "conv", "depthwise", "fully_connected" or
        "fully_connected_il" (interleaved weights): the variant the board's table picks
        (kernel_variants.py), else the set's dispatcher."""
        dispatcher = kernel_variants.DISPATCHERS[kind]
        if self.variants is None:
            return dispatcher
        name = kernel_variants.choose_codegen(self.variants[1], kind, layer)
        if name != dispatcher:
            self.used_variants[name] = dispatcher
        return name

    def conv_layer(self, op, fields: dict) -> dict:
        """A conv or depthwise layer for kernel_variants: its struct fields with its requantisation."""
        p = prepare.conv(self.g, op)
        b = prepare.bias_input(self.g, op)   # the biases too: kernel_variants.doubled_ok reads them
        biases = [int(v) for v in self.g.tensors[b].data.reshape(-1)] if b >= 0 else []
        return dict(fields, multipliers=list(p.multipliers), shifts=list(p.shifts), biases=biases)

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

    # -- parameter structs shared by several emitters ---------------------------------------
    def requant_arrays(self, op, p) -> tuple:
        """Declare op<i>_mult and op<i>_shift, the per-channel requantisation of prepared p; their names."""
        n = f"op{op.index}"
        self.declare(f"static const int32_t {n}_mult[{len(p.multipliers)}] = {c_ints(p.multipliers)};")
        self.declare(f"static const int32_t {n}_shift[{len(p.shifts)}] = {c_ints(p.shifts)};")
        return f"{n}_mult", f"{n}_shift"

    def conv_fields(self, op) -> dict:
        """bt_conv_params of CONV_2D / DEPTHWISE_CONV_2D (refops.prepare.conv; also fused tile loops)."""
        p = prepare.conv(self.g, op)
        win = p.window
        mult, shift = self.requant_arrays(op, p)
        return dict(
            **{"in": self.bt_shape(op.inputs[0]), "out": self.bt_shape(op.outputs[0])},
            kh=win.kh, kw=win.kw, stride_h=win.sh, stride_w=win.sw, dil_h=win.dh, dil_w=win.dw,
            pad_top=win.pad_top, pad_left=win.pad_left, input_offset=p.input_offset, output_offset=p.output_offset,
            act_min=p.act_min, act_max=p.act_max, filter=self.weight(op.inputs[1], "int8_t"),
            bias=self.bias(op), multiplier=mult, shift=shift)

    def wide_conv(self, op, fields: dict) -> str:
        """Declare bt_conv_wide_params {n}_p (16x8 kernels, transpose conv): an int64 bias in bias64."""
        n = f"op{op.index}"
        wide = dict(conv=fields, bias64=self.bias(op, 64))
        self.declare(f"static const bt_conv_wide_params {n}_p = {c_struct(wide)};")
        return n

    def pool_fields(self, op) -> dict:
        """bt_pool_params of MAX_POOL_2D / AVERAGE_POOL_2D (also used by fused tile loops)."""
        win = prepare.window(self.g, op)
        lo, hi = prepare.act_range(self.g, op)
        return {"in": self.bt_shape(op.inputs[0]), "out": self.bt_shape(op.outputs[0]),
                "filter_h": win.kh, "filter_w": win.kw, "stride_h": win.sh, "stride_w": win.sw,
                "pad_top": win.pad_top, "pad_left": win.pad_left, "act_min": lo, "act_max": hi}

    def fc_fields(self, op, reordered: bool = False) -> dict:
        """bt_fc_params of FULLY_CONNECTED (refops.prepare.fully_connected; also fused blocks' dense tails).
        Weights the image holds reordered (self.orders) are given as they are when the caller is the kernel
        that reads that order (reordered), else as a plain copy in model.c."""
        p = prepare.fully_connected(self.g, op)
        f = prepare.fields(p)
        per_ch = f.pop("per_channel")
        del f["multipliers"], f["shifts"]
        mult, shift = self.requant_arrays(op, p)
        w = op.inputs[1]
        if w in self.orders and not reordered:
            weights = f"op{op.index}_wplain"
            self.declare(f"static const int8_t {weights}[{self.g.tensors[w].data.size}] __attribute__((aligned(4))) = "
                         f"{c_ints(self.g.tensors[w].data.reshape(-1).tolist())};")
        else:
            weights = self.weight(w, "int8_t")
        return dict(f, weights=weights, bias=self.bias(op), multiplier=mult, shift=shift, per_channel=per_ch)

    def bcast(self, op) -> dict:
        """bt_bcast4 of a binary operator: the output's 4-D dims and each operand's strides in it."""
        out = self.g.tensors[op.outputs[0]]
        if len(out.shape) > 4:
            raise ModelError(f"operator {op.index} ({op.opcode}): more than 4 dimensions are not supported")
        dims = (1,) * (4 - len(out.shape)) + tuple(int(d) for d in out.shape)
        return dict(dims=list(dims), a_stride=self.operand_strides(op.inputs[0], dims),
                    b_stride=self.operand_strides(op.inputs[1], dims), out_stride=self.strides4(op.outputs[0], dims))

    def operand_strides(self, i: int, dims: tuple) -> list:
        """Element strides of operand i (a flash constant or an activation) broadcast to the 4-D dims."""
        if self.g.tensors[i].is_const:
            t = self.g.tensors[i]
            td = (1,) * (4 - len(t.shape)) + tuple(int(d) for d in t.shape)
            return [0 if td[k] == 1 and dims[k] != 1 else prod(td[k + 1:]) for k in range(4)]
        return self.strides4(i, dims)

    def reduce_geometry(self, op) -> dict:
        """MEAN, SUM, REDUCE_MAX, REDUCE_MIN: the input as [outer][reduce][inner] (adjacent reduced axes)."""
        ti = self.g.tensors[op.inputs[0]]
        rank = len(ti.shape)
        axes = list(prepare.mean_axes(self.g, op))
        if axes != list(range(axes[0], axes[-1] + 1)):
            raise ModelError(f"operator {op.index} ({op.opcode}) over non-adjacent axes {axes} is not supported")
        outer, reduce = prod(ti.shape[:axes[0]]), prod(ti.shape[axes[0]:axes[-1] + 1])
        inner = prod(ti.shape[axes[-1] + 1:])
        self.dense(op, op.outputs[0])
        ps = self.pixel_stride(op.inputs[0])
        if ps != (ti.shape[-1] if ti.shape else 1) and not (rank == 4 and axes == [1, 2]):
            raise PlanError(f"operator {op.index} ({op.opcode}) reads a strided view over axes {axes}; not supported")
        rstride = ps if rank == 4 and axes == [1, 2] else inner
        return dict(outer=outer, reduce=reduce, inner=inner, outer_stride=reduce * rstride, reduce_stride=rstride)

    def unary(self, op, ctype: str, fields: dict, fn: str) -> None:
        """Declare a one-input kernel's struct ({n = elements} + fields) and call fn on dense tensors."""
        n = f"op{op.index}"
        self.dense(op, op.inputs[0])
        self.dense(op, op.outputs[0])
        fields = dict(n=self.g.tensors[op.inputs[0]].num_elements, **fields)
        self.declare(f"static const {ctype} {n}_p = {c_struct(fields)};")
        self.call(op, f"{fn}(&{n}_p, {self.act(op.inputs[0])}, {self.act(op.outputs[0])});")


__all__ = ["Emitter"]
