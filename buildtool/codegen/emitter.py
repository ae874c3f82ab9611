"""The emitter: what every operator's C emitter works through, for one graph and plan.

It collects model.c's declarations and model_invoke's body, turns tensors into C expressions
(arena places, flash weights, strides), picks the kernel variant of a layer (kernel_variants.py),
and fills the parameter structs several emitters share (conv, pool, fully connected, broadcast)
from the prepare step (refops/prepare.py) only. The operators' emitters are functions fn(e, op)
named in the operator table (model/opdefs.py, column emit): model_c.py, extra_c.py, stateful_c.py;
fused plans subclass the emitter (fused_c.py).
"""

from __future__ import annotations

from ..errors import ModelError, PlanError, UsageError
from ..model import weight_facts
from ..model.ir import Graph
from ..model.ops import conv_groups, folded_broadcast, reduce_split
from ..plan import ArenaPlan, arena_symbol, region_of, weight_order
from ..refops import prepare
from ..refops.activation import sigmoid_table16
from . import code_budget, kernel_variants
from .c_text import CTYPES, c_comment, c_ints, c_struct, prod


# model.c's copy of staged weights (plan/staging.py): four words a pass (LDM/STM), then the tail bytes; GCC would
# turn the loop into a memcpy call, which a firmware without a C library does not have
# (no-tree-loop-distribute-patterns)
STAGE_COPY = """static __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
void bt_stage_copy(int8_t *dst, const uint8_t *src, uint32_t n) {
  uint32_t *d = (uint32_t *)(void *)dst;
  const uint32_t *s = (const uint32_t *)(const void *)src;
  for (uint32_t k = n / 16; k; k--, d += 4, s += 4) {
    uint32_t a = s[0], b = s[1], c = s[2], e = s[3];
    d[0] = a, d[1] = b, d[2] = c, d[3] = e;
  }
  for (uint32_t k = n & ~15u; k < n; k++) dst[k] = (int8_t)src[k];
}"""


# bt_kernels.h's 16-bit fields of the layer structs, name -> the range its type holds: the sizes of bt_conv_params and
# bt_pool_params (unsigned), bt_fc_params' offsets and bounds and bt_pool_params' bounds (signed); narrow so that each
# layer's struct in model.c is smaller (checked in any struct that has the field)
_U16, _S16 = (0, 65535), (-32768, 32767)
PARAM16 = dict.fromkeys(("kh", "kw", "stride_h", "stride_w", "dil_h", "dil_w", "filter_h", "filter_w"), _U16) | \
    dict.fromkeys(("input_offset", "filter_offset", "output_offset", "act_min", "act_max"), _S16)


def param16(op, fields: dict) -> dict:
    """fields, checked: each field PARAM16 names holds its value in 16 bits."""
    for k, (lo, hi) in PARAM16.items():
        if k in fields and not lo <= int(fields[k]) <= hi:
            raise ModelError(f"operator {op.index} ({op.opcode}): its {k} {int(fields[k])} is outside {lo}..{hi}, the "
                             f"range of the kernels' 16-bit parameter; change the layer (its geometry or quantisation)")
    return fields


class Emitter:
    """Collects declarations and the body of model_invoke for one graph and plan."""

    ext_offset = 0  # where the flash image's external part starts (0: none)
    ext_signature = 0  # flash.ext_signature of its tensors
    variants = None  # (guard macro, table) of the board's kernel set (kernel_variants.for_board), or None
    code_speed = False  # optimize_code=speed: the fastest code, whatever its bytes (fused_c.resolve_columns)
    instance_rate = None  # cycles a byte of code buys (kernel_variants.instance_rate; model_c._share_dw_rows), or None
    spread_tables = False  # may a rows-live layer's spread run from a table (model_c._spread_rows)
    orders: dict = {}  # constant tensor -> the order the flash image holds it in (plan/weight_order.py)
    # op index -> (offset, multipliers, shifts) of its requantisation table in the flash image
    # (plan/requant_tables.py); the model's emitter only (a subgraph's operators declare theirs)
    rq_tables: dict = {}
    weights_symbol = "bt_weights"  # the image's symbol (a multi-model firmware's <prefix>_weights)
    # op index -> (variant, own instance?) the code budget chose (code_budget.py), or None: each layer's fastest
    # (the table's first variant, its instance when it has one), the layers' candidates recorded in `offers`
    code_choice: dict | None = None

    def __init__(self, g: Graph, plan: ArenaPlan, weight_offsets: dict):
        self.g, self.plan, self.w = g, plan, weight_offsets
        self.decls: list = []
        self.body: list = []
        self.used_variants: dict = {}  # variant called -> its dispatcher
        self.tables: set = set()  # the shared lookup tables already declared (sigmoid, softmax int16)
        # weights staged in SRAM (plan/staging.py): tensor -> its entry; the layer reads the copy
        self.staged = {d["tensor"]: d for d in getattr(plan, "staged", None) or []}
        # model.c's text before model_init (which copies the layers staged once), so before any parameter struct
        # that points at a copy; bt_staging is static, so firmware linking several models holds one for each
        self.staging = ""
        if self.staged:
            spare = plan.staging_bytes
            self.staging = (("" if not spare else f"static int8_t bt_staging[{spare}] __attribute__((aligned(16)));\n")
                            + STAGE_COPY + "\n")
        self.offers: dict = {}  # op index -> (kind, the variants that may run it, the variant it may instance)
        self.layers: dict = {}  # op index -> its layer (kernel_variants' dict) where offered
        self.shapes: dict = {}  # op index -> (outputs, K, C) of an offering layer (code_budget.work: its modelled cycles)
        # op index -> kernel_variants.instance_identity of the layer's own instance (own_instance): layers of one identity
        # share one function (instance) and the code budget counts it once (code_budget.plan's identities)
        self.identities: dict = {}
        self.shared: dict = {}  # identity and form -> (its function's name, its declaration's index in decls, its layers)
        self.dw_rows: dict = {}  # op index -> (variant, layer) of a depthwise layer on bt_dw_rows_q4_RL (model_c)
        # op index -> (pixels, steps a pixel, table bytes) of a rows-live layer whose spread may run from a table
        # (model_c._spread_rows; code_budget.spread_candidates)
        self.spreads: dict = {}
        self.fixed_cycles = 0  # modelled cycles of the layers the code budget does not choose for (fused_c block_cycles)

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
        if i in self.staged:  # copied before its layer runs (stage_copies)
            return f"((const {ctype} *)({self.staged_at(self.staged[i])}))"
        if self.ext_offset and off >= self.ext_offset:  # placed in an external region (regions.py)
            return f"((const {ctype} *)(bt_weights_ext + {off - self.ext_offset}))"
        return f"((const {ctype} *)(bt_weights + {off}))"

    def staged_at(self, d: dict) -> str:
        """C expression of a staged copy's first byte: in bt_staging, or in the arena."""
        return f"bt_staging + {d['offset']}" if d["spare"] else self.at(d["offset"])

    def weight_in_flash(self, i: int) -> str:
        """Tensor i's bytes in the flash image, staged or not."""
        off = self.w[i]
        if self.ext_offset and off >= self.ext_offset:
            return f"(bt_weights_ext + {off - self.ext_offset})"
        return f"(bt_weights + {off})"

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
                         f"  BT_PROFILE_BEGIN({op.index});\n{self.stage_copies(op)}  {text}\n"
                         f"  BT_PROFILE_END({op.index});")

    def stage_copies(self, op) -> str:
        """The copies into SRAM of op's staged weights (plan/staging.py), before its kernel runs: in its
        profile region, so the layer's cycles include them."""
        return self.copies([d for d in self.staged.values() if d["op"] == op.index and not d.get("once")])

    def stage_once(self) -> str:
        """model_init()'s copies of the weights staged once (bt_staging bytes of their own: plan/staging.py)."""
        return self.copies([d for d in self.staged.values() if d.get("once")])

    def copies(self, entries: list) -> str:
        """bt_stage_copy lines of staged entries, by tensor."""
        return "".join(f"  bt_stage_copy({self.staged_at(d)}, {self.weight_in_flash(d['tensor'])}, {d['size']});\n"
                       for d in sorted(entries, key=lambda d: d["tensor"]))

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
    def cortex_m_set(self) -> bool:
        """Does the board run the cortex-m kernel set (its bt_variants.h: kernel_variants.TABLES["cortex-m"])?"""
        return self.variants is not None and self.variants[0] == kernel_variants.TABLES["cortex-m"][0]

    def riscv_set(self) -> bool:
        """Does the board run the riscv kernel set (kernel_variants.TABLES["riscv"]: rv32imac scalar)?"""
        return self.variants is not None and self.variants[0] == kernel_variants.TABLES["riscv"][0]

    def kernel(self, kind: str, layer: dict, op=None) -> str:
        """The function model.c calls for a layer of kind "conv", "depthwise", "fully_connected" or
        "fully_connected_il" (interleaved weights): the variant the board's table picks
        (kernel_variants.py), else the set's dispatcher. op: a layer model.c calls once, whose variant the
        code budget chooses among those that may run it (code_choice; recorded in offers)."""
        dispatcher = kernel_variants.DISPATCHERS[kind]
        if self.variants is None:
            return dispatcher
        name = kernel_variants.choose_codegen(self.variants[1], kind, layer)
        if op is not None and name != dispatcher:
            names = (kernel_variants.depthwise_candidates(layer) if kind == "depthwise_m1"
                     else kernel_variants.all_codegen(self.variants[1], kind, layer))
            self.offer(op, kind, names, None, layer)
            if self.code_choice is not None and op.index in self.code_choice:
                name = self.code_choice[op.index][0]
        if name != dispatcher:
            self.used_variants[name] = dispatcher
        return name

    def offer(self, op, kind: str, names: tuple, inst, layer: dict) -> None:
        """Record what layer op might call for the code budget (offers: the variants `names` that may run it, the
        variant `inst` it may instance), its shape (code_budget.work) and its kernel_variants layer."""
        self.offers[op.index] = (kind, names, inst)
        self.shapes[op.index] = code_budget.work(kind, layer, self.g, op)
        self.layers[op.index] = layer

    def chosen_form(self, op, variant: str):
        """The code budget's form for op's own instance of `variant` (code_choice's second item: False the variant,
        True the full instance, COMPACT, MEDIUM); True before the budget has chosen."""
        return True if self.code_choice is None else self.code_choice.get(op.index, (variant, True))[1]

    def conv_layer(self, op, fields: dict, rows=None) -> dict:
        """A conv or depthwise layer for kernel_variants: its struct fields with its requantisation (of the
        live rows when the filter is rows-live, rows: weight_order.RowOrder) and a bound on its biases'
        magnitudes (kernel_variants.doubled_ok; model/weight_facts.py: None when not known)."""
        p = prepare.conv(self.g, op)
        b = prepare.bias_input(self.g, op)
        keep = list(rows.rows[:rows.live]) if rows else list(range(len(p.multipliers)))
        dead = rows.rows[rows.live:] if rows else ()
        top = weight_facts.abs_bound(self.g.tensors[b], dead) if b >= 0 else 0
        return dict(fields, multipliers=[p.multipliers[r] for r in keep], shifts=[p.shifts[r] for r in keep],
                    bias_bound=top)

    def own_instance(self, op, variant: str):
        """Whether model.c gives op (a layer kernel() was asked for with op) an instance of its own of
        `variant`: one of the INSTANCES variants on a layer kernel_variants.instanced takes, unless the code
        budget chose otherwise (False; True: its instance; "compact": its compact instance, code_budget.COMPACT)."""
        if variant not in kernel_variants.INSTANCES or not kernel_variants.instances() or op.index not in self.instanced():
            return False
        if op.index in self.offers:
            kind, names, _ = self.offers[op.index]
            self.offers[op.index] = (kind, names, variant)
            self.identities[op.index] = kernel_variants.instance_identity(variant, self.layers[op.index])
        return self.chosen_form(op, variant)

    def instanced(self) -> frozenset:
        """The layers that may have an instance of their own (kernel_variants.instanced's share of the MACs), once
        per model; whether each has one is the code budget's choice (code_choice)."""
        if getattr(self, "_instanced", None) is None:
            self._instanced = kernel_variants.instanced(self.g)
        return self._instanced

    def compact_ops(self) -> frozenset:
        """The offering layers whose own instance has a compact or a medium form of other code
        (kernel_variants.compact_form, medium_form: a stem's has a medium one only)."""
        return frozenset(i for i, (_, _, inst) in self.offers.items()
                         if inst and (kernel_variants.compact_form(inst, self.layers[i])
                                      or kernel_variants.medium_form(inst, self.layers[i])))

    def instance(self, op, variant: str, h: int, form, fields: dict) -> str:
        """The function running op's own instance of `variant`'s loops (the set's macro, kernel_variants.INSTANCES, in
        the form own_instance gave: code_budget.instance_macro; its own stack frame), called as fn(&op<i>_p, in, out):
        one per instance identity and form (kernel_variants.instance_identity), declared by the first of its layers and
        named after it (op<first>_conv). A layer alone in its identity runs the macro on its own static const struct (as
        before identities: op<i>_p's pointers folded too, which spares kws' stem 150 est. cycles); a shared one on a
        local struct set field by field (a struct copy would be a memcpy) to the constants its layers agree on (GCC
        folds them into the loops as it did each layer's struct: kws' four 1x1 layers 236 est. cycles a call fewer
        than their own copies), the pointers (filter, bias, multiplier, shift) the calling layer's, read from q, and
        where its layers differ in an offset or a bound, all four (ResNet-8's two 3x3 16->16 layers, output offsets
        -128 and 4: 181 est. cycles a call fewer; the output offset alone read so, 1,574 more; all four so in kws, 409
        more): the declaration is rewritten as layers join; returns its name."""
        macro, extra = kernel_variants.INSTANCES[variant]
        macro = code_budget.instance_macro(macro, form)
        self.used_variants.pop(variant, None)
        self.use_macro(macro)
        key = (kernel_variants.instance_identity(variant, fields), form)
        name, at, users = self.shared.get(key) or (f"op{op.index}_conv", len(self.decls), [])
        users.append((op.index, dict(kernel_variants.flat_fields(fields))))
        self.shared[key] = name, at, users
        ops = [i for i, _ in users]
        args = "".join(f", {a}" for a in extra)
        head = f"static __attribute__((noinline)) void {name}(const bt_conv_params *q, const int8_t *in, int8_t *out) {{"
        if len(ops) == 1:  # the layer's own: its static const struct, pointers and all (the call's q unused)
            text = f"{head}\n  (void)q;\n  {macro}(&op{op.index}_p, in, 0, out, 0, {h}{args});\n}}"
        else:
            # the pointers are the calling layer's, and the offsets and bounds (RUNTIME_FIELDS) where its layers differ
            # in any of them; the others folded
            differ = any(f[k] != v for _, f in users for k, v in users[0][1].items()
                         if k in kernel_variants.RUNTIME_FIELDS and k not in kernel_variants.POINTER_FIELDS)
            own = {k for k, v in users[0][1].items() if k in kernel_variants.RUNTIME_FIELDS and v != "0"
                   and (differ or k in kernel_variants.POINTER_FIELDS)}
            sets = "".join(f"\n  p.{k} = {'q->' + k if k in own else v};" for k, v in users[0][1].items())
            text = (f"/* the instance of ops {', '.join(map(str, ops))} */\n{head}\n"
                    f"  bt_conv_params p;{sets}\n  {macro}(&p, in, 0, out, 0, {h}{args});\n}}")
        if at == len(self.decls):
            self.declare(text)
        else:
            self.decls[at] = text
        return name

    def after_rows(self) -> None:
        """What the generator does once model_c has settled the depthwise layers' row entries (model_c._dw_rows_calls):
        nothing here; fused_c's resolve_columns."""

    def drop_variant(self, name: str) -> None:
        """model.c no longer calls variant `name` where it did: out of used_variants unless a declaration or step
        still calls it (a subgraph's function may)."""
        if not any(f"{name}(" in t for t in self.body + self.decls):
            self.used_variants.pop(name, None)

    def use_macro(self, macro: str) -> None:
        """model.c calls a kernel set's INSTANCES macro: its fallback (another set linked) is bt_conv_s8."""
        params = ", ".join(("p", "in", "in_y0", "out", "y0", "y1") + kernel_variants.INSTANCE_PARAMS[macro])
        self.used_variants[f"{macro}({params})"] = "bt_conv_s8(p, in, in_y0, out, y0, y1)"

    # -- parameter structs shared by several emitters ---------------------------------------
    def requant_arrays(self, op, p, rows=None) -> tuple:
        """The per-channel requantisation of prepared p (of rows only, in their order, when given): C expressions
        of its multipliers and shifts. The flash image's table of op (plan/requant_tables.py) when it starts with
        them, else op<i>_mult and op<i>_shift declared in model.c (a fused block's tile kernel of a rows-live
        conv reads the model's order)."""
        n = f"op{op.index}"
        keep = list(rows) if rows is not None else list(range(len(p.multipliers)))
        mult, shift = [p.multipliers[r] for r in keep], [p.shifts[r] for r in keep]
        at = self.rq_tables.get(op.index)
        if at is not None and at[1] == mult and at[2] == shift:
            return self.image_words(f"{n}_mult", at[0]), self.image_words(f"{n}_shift", at[0] + 4 * len(mult))
        self.declare(f"static const int32_t {n}_mult[{len(keep)}] = {c_ints(mult)};")
        self.declare(f"static const int32_t {n}_shift[{len(keep)}] = {c_ints(shift)};")
        return f"{n}_mult", f"{n}_shift"

    def image_words(self, name: str, off: int) -> str:
        """C expression of the int32 words from byte off of the flash image (a requantisation table), through
        name: the image's symbol declared as int32_t under a name of its own, so the compiler keeps each
        table's address apart from the other tables' and the weights', as it did model.c's own tables (one
        base for them all left a conv_pm instance's asm without registers: ResNet-8 op 5)."""
        if "BT_WEIGHTS_ASM" not in self.tables:
            self.tables.add("BT_WEIGHTS_ASM")
            self.declare(f"/* The layers' requantisation tables are in the flash image (buildtool/plan/"
                         f"requant_tables.py), each array\n   read through a name of its own for {self.weights_symbol} */\n"
                         f"#define BT_ASM_NAME2(p, s) #p s\n#define BT_ASM_NAME(p, s) BT_ASM_NAME2(p, s)\n"
                         f"#define BT_WEIGHTS_ASM BT_ASM_NAME(__USER_LABEL_PREFIX__, \"{self.weights_symbol}\")")
        self.declare(f"extern const int32_t {name}[] __asm__(BT_WEIGHTS_ASM);  /* {self.weights_symbol}: "
                     f"its words from byte {off} */")
        return f"({name} + {off // 4})"

    def conv_fields(self, op, rows=None) -> dict:
        """bt_conv_params of CONV_2D / DEPTHWISE_CONV_2D (refops.prepare.conv; also fused tile loops). rows (a
        weight_order.RowOrder, model.c's own call of a rows-live conv): the live rows only, the outputs packed
        at the start of each pixel; a rows-live conv without it (a fused block's tile kernels) reads plain
        copies of its filter and bias in model.c (the image holds them reordered)."""
        p = prepare.conv(self.g, op)
        win = p.window
        mult, shift = self.requant_arrays(op, p, rows.rows[:rows.live] if rows else None)
        out = self.bt_shape(op.outputs[0])
        flt, bias = self.weight(op.inputs[1], "int8_t"), self.bias(op)
        if rows:
            out["c"] = rows.live
        elif self.row_order(op):
            flt = self.plain_copy(op.inputs[1], f"op{op.index}_wplain", "int8_t")
            b = prepare.bias_input(self.g, op)
            bias = self.plain_copy(b, f"op{op.index}_bplain", "int32_t") if b >= 0 else "0"
        return param16(op, dict(
            **{"in": self.bt_shape(op.inputs[0]), "out": out},
            kh=win.kh, kw=win.kw, stride_h=win.sh, stride_w=win.sw, dil_h=win.dh, dil_w=win.dw,
            pad_top=win.pad_top, pad_left=win.pad_left, input_offset=p.input_offset, output_offset=p.output_offset,
            act_min=p.act_min, act_max=p.act_max, filter=flt, bias=bias, multiplier=mult, shift=shift))

    def row_order(self, op):
        """The weight_order.RowOrder the image holds op's filter in (a rows-live conv), else None."""
        o = self.orders.get(op.inputs[1]) if len(op.inputs) > 1 else None
        return o if isinstance(o, weight_order.RowOrder) else None

    def plain_copy(self, i: int, name: str, ctype: str) -> str:
        """Declare name, a copy in model.c of constant i in the model's order (the image holds it reordered:
        plan/weight_order.py); needs its values (the model file, not its skeleton)."""
        t = self.g.tensors[i]
        if t.facts is not None:
            raise UsageError(f"operator code for tensor '{t.name}' needs its weight values: give gen code the "
                             f"model file, not the skeleton")
        self.declare(f"static const {ctype} {name}[{t.data.size}] __attribute__((aligned(4))) = "
                     f"{c_ints(t.data.reshape(-1).tolist())};")
        return name

    def wide_conv(self, op, fields: dict) -> str:
        """Declare bt_conv_wide_params {n}_p (16x8 kernels, transpose conv): an int64 bias in bias64."""
        n = f"op{op.index}"
        wide = dict(conv=param16(op, fields), bias64=self.bias(op, 64))
        self.declare(f"static const bt_conv_wide_params {n}_p = {c_struct(wide)};")
        return n

    def pool_fields(self, op) -> dict:
        """bt_pool_params of MAX_POOL_2D / AVERAGE_POOL_2D (also used by fused tile loops)."""
        win = prepare.window(self.g, op)
        lo, hi = prepare.act_range(self.g, op)
        return param16(op, {"in": self.bt_shape(op.inputs[0]), "out": self.bt_shape(op.outputs[0]),
                            "filter_h": win.kh, "filter_w": win.kw, "stride_h": win.sh, "stride_w": win.sw,
                            "pad_top": win.pad_top, "pad_left": win.pad_left, "act_min": lo, "act_max": hi})

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
            weights = self.plain_copy(w, f"op{op.index}_wplain", "int8_t")
        else:
            weights = self.weight(w, "int8_t")
        return param16(op, dict(f, per_channel=per_ch, weights=weights, bias=self.bias(op), multiplier=mult,
                                shift=shift))

    def bcast(self, op) -> dict:
        """bt_bcast4 of a binary operator: the output's 4-D dims and each operand's strides in it."""
        out = self.g.tensors[op.outputs[0]]
        if len(out.shape) > 4:
            return self.bcast_folded(op)
        dims = (1,) * (4 - len(out.shape)) + tuple(int(d) for d in out.shape)
        return dict(dims=list(dims), a_stride=self.operand_strides(op.inputs[0], dims),
                    b_stride=self.operand_strides(op.inputs[1], dims), out_stride=self.strides4(op.outputs[0], dims))

    def bcast_folded(self, op) -> dict:
        """bt_bcast4 of a binary operator above 4-D: its dense operands' broadcast folded to at most 4 axes
        (model.ops.folded_broadcast; the check refuses one that does not fold)."""
        out = self.g.tensors[op.outputs[0]]
        for i in (*op.inputs[:2], op.outputs[0]):
            self.dense(op, i)
        dims, ost, ast, bst = folded_broadcast(out.shape, [self.g.tensors[i].shape for i in op.inputs[:2]])
        if len(dims) > 4:
            raise ModelError(f"operator {op.index} ({op.opcode}): a {len(out.shape)}-D broadcast that does not "
                             f"fold to 4 dimensions is not supported")
        lead = [1] * (4 - len(dims))  # size-1 axes in front, strided as a dense tensor's (strides4)
        return dict(dims=lead + dims, **{f"{n}_stride": [s[0] * dims[0]] * len(lead) + s
                                         for n, s in (("a", ast), ("b", bst), ("out", ost))})

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
        if axes != list(range(axes[0], axes[-1] + 1)):  # adjacent once size-1 axes are set aside, as checked
            split = reduce_split(ti.shape, axes)
            if split is None:
                raise ModelError(f"operator {op.index} ({op.opcode}) over non-adjacent axes {axes} is not supported")
            outer, reduce, inner = split
        else:
            outer, reduce = prod(ti.shape[:axes[0]]), prod(ti.shape[axes[0]:axes[-1] + 1])
            inner = prod(ti.shape[axes[-1] + 1:])
        self.dense(op, op.outputs[0])
        ps = self.pixel_stride(op.inputs[0])
        if ps != (ti.shape[-1] if ti.shape else 1) and not (rank == 4 and axes == [1, 2]):
            raise PlanError(f"operator {op.index} ({op.opcode}) reads a strided view over axes {axes}; not supported")
        rstride = ps if rank == 4 and axes == [1, 2] else inner
        return dict(outer=outer, reduce=reduce, inner=inner, outer_stride=reduce * rstride, reduce_stride=rstride)

    def unary(self, op, ctype: str, fields: dict, fn: str) -> None:
        """Declare a one-input element-wise kernel's struct ({n = elements} + fields) and call fn on dense
        tensors, or once per pixel ({n = channels}) when an int8 NHWC input or output is a view into a concat
        (pixel stride above its channels: a QUANTIZE that requantises a concat's input, say)."""
        n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
        tx, ty = self.g.tensors[x], self.g.tensors[y]
        sx, sy = self.pixel_stride(x), self.pixel_stride(y)
        if (len(tx.shape) == 4 and tuple(tx.shape) == tuple(ty.shape) and tx.dtype == ty.dtype == "int8"
                and (sx, sy) != (tx.shape[3], ty.shape[3])):
            self.declare(f"static const {ctype} {n}_p = {c_struct(dict(n=tx.shape[3], **fields))};")
            self.call(op, f"for (int32_t i = 0; i < {tx.shape[1] * tx.shape[2]}; i++) "
                          f"{fn}(&{n}_p, {self.act(x)} + i * {sx}, {self.act(y)} + i * {sy});")
            return
        self.dense(op, x)
        self.dense(op, y)
        fields = dict(n=tx.num_elements, **fields)
        self.declare(f"static const {ctype} {n}_p = {c_struct(fields)};")
        self.call(op, f"{fn}(&{n}_p, {self.act(x)}, {self.act(y)});")


__all__ = ["Emitter"]
