"""Generate model.c / model.h for a FusedPlan: fused blocks and split regions as tile loops.

The generated code does what buildtool.fusion_exec.run_fused does, in the same order and
at the same arena offsets: the static arena is exactly plan.arena_bytes. Per block, tables
(computed here) give every tensor's interval at each row/column tile and every window's
origin and ring shift; the C loop walks the tiles, shifts cached windows, pulls streamed
input regions through a source callback, and calls the bt_ kernels on bands.

Column bands: a kernel's row stride is in.w * pixel_stride, so a call sees a window (or a
whole tensor) at its physical width, with the input pointer shifted to column X0 and
pad_left moved so that exactly the taps outside the image are skipped; an output narrower
than its buffer is written one row per call. Rows of a row-banded tensor live at their own
offsets: a 1-row window reads them one call per output row, a taller window goes through
fx_rows (the same arithmetic over a table of row pointers).
"""

from __future__ import annotations

from .. import targets
from ..errors import ModelError, PlanError
from ..fusion.costs import accumulator_bytes, accumulator_len, is_dense
from ..fusion.receptive import MINMAX, POINTWISE, UNARY, WINDOWED, op_axes
from ..fusion.schedule import BlockRun, FusedPlan
from ..fusion_exec import _interval
from ..ir import Graph
from ..plan import ArenaPlan, TensorPlace
from ..refops.activation import prelu_params, relu6_bounds, relu_params, tanh_params
from . import qparams
from .model_c import _Emitter, _ints, _struct, emit_op, generate as generate_model


def axis_table(ap, t: int, n: int, window: bool) -> list:
    """[(a, b, origin, shift)] per tile along one axis: t's interval, its window's first
    position and the positions a cached window moves down before the tile (0: none)."""
    rows, org = [], None
    ext = ap.ext.get(t, 0)
    for i in range(n):
        a, b = _interval(ap, t, i)
        shift = 0
        if not window:
            org = 0
        elif ap.mode == "rec":
            org = int(ap.lo[t][i])
        else:
            if i == 0:
                org = -ext
            m = b - (org + ext)
            if m > 0:
                shift = m if m < ext else 0
                org = b - ext
        rows.append((a, b, org, shift))
    return rows


class _FusedEmitter(_Emitter):
    """Whole tensors have places; window tensors are dense at their own channel count."""

    def pixel_stride(self, i: int) -> int:
        if i not in self.plan.tensors:
            t = self.g.tensors[i]
            return t.shape[-1] if t.shape else 1
        return super().pixel_stride(i)


def pseudo_plan(g: Graph, plan: FusedPlan) -> ArenaPlan:
    """The whole (one-band) tensors of plan as an ArenaPlan, for the plain operators' emitter."""
    places = {}
    for t, bands in plan.bands.items():
        if len(bands) == 1:
            r0, r1, off = bands[0]
            places[t] = TensorPlace(t, g.tensors[t].name, t, off, g.tensors[t].nbytes, 0, 0)
    order = [it if not isinstance(it, BlockRun) else it.p for it in plan.schedule.items]
    return ArenaPlan(plan.arena_bytes, plan.lower_bound_bytes, 0, order, [], places,
                     planner=f"fused:{plan.planner}", align=plan.align)


class _Emit:
    """Fills the emitter with the runtime helpers, block tables and the model_invoke body."""

    def __init__(self, g: Graph, plan: FusedPlan, platform: str):
        self.g, self.plan, self.platform = g, plan, platform

    def __call__(self, e: _Emitter) -> None:
        g, plan = self.g, self.plan
        inplace = [g.tensors[g.operators[s.op].inputs[0]].shape[3] for it in plan.schedule.blocks()
                   for s in it.geo.steps if _inplace_source(g, it, s.out) is not None]
        e.declare(f"#define FX_INPLACE_MAX_C {max(inplace, default=1)}")
        e.declare(RUNTIME)
        if plan.schedule.streamed:
            e.declare(source_code(g, self.platform))
        banded = sorted(t for t, b in plan.bands.items() if len(b) > 1)
        for t in banded:
            rows = {}
            row_bytes = g.tensors[t].nbytes // g.tensors[t].shape[1]
            for r0, r1, off in plan.bands[t]:
                for r in range(r0, r1):
                    rows[r] = off + (r - r0) * row_bytes
            addrs = ", ".join(f"bt_arena + {rows[r]}" for r in range(len(rows)))
            e.declare(f"static int8_t *const fx_t{t}_rows[{len(rows)}] = {{{addrs}}};")
        self.banded = set(banded)
        self.declared = set()
        for k, it in enumerate(plan.schedule.items):
            if isinstance(it, BlockRun):
                self.block(e, k, it)
            else:
                op = g.operators[it]
                for i in list(g.act_inputs(op)) + list(op.outputs):
                    if i in self.banded:
                        raise PlanError(f"operator {it} ({op.opcode}) runs whole on row-banded tensor {i}; "
                                        f"firmware needs it in one piece: plan without banding it")
                emit_op(e, it)

    # -- tensors ------------------------------------------------------------------------
    def buf(self, k: int, blk: BlockRun, t: int) -> str:
        """C initialiser of the fx_buf of tensor t at the current tile (variables r, c)."""
        g = self.g
        sh = g.tensors[t].shape
        if t in blk.windows:
            er, ec, cw = blk.window_shape(g, t)
            off = self.plan.window_offset[(k, t)]
            return (f"{{bt_arena + {off}, fx{k}_t{t}_r[r][2], fx{k}_t{t}_c[c][2], {ec}, {cw}, 0}}")
        if t in self.banded:
            return f"{{0, 0, 0, {sh[2]}, {sh[3]}, fx_t{t}_rows}}"
        if t not in self.plan.bands:
            raise PlanError(f"tensor {t} of block {blk.p}-{blk.q - 1} has no place in the fused plan")
        off = self.plan.bands[t][0][2]
        return f"{{bt_arena + {off}, 0, 0, {sh[2]}, {sh[3]}, 0}}"

    def params(self, e: _Emitter, op) -> str:
        """Declare op's constant kernel parameters once; return the struct's name."""
        n = f"op{op.index}_p"
        if op.index in self.declared:
            return n
        self.declared.add(op.index)
        g, o = self.g, op.options
        if op.opcode == "CONV_2D":
            e.declare(f"static const bt_conv_params {n} = {_struct(e.conv_fields(op))};")
        elif op.opcode == "DEPTHWISE_CONV_2D":
            fields = dict(conv=e.conv_fields(op), depth_multiplier=o.get("depth_multiplier", 1))
            e.declare(f"static const bt_depthwise_params {n} = {_struct(fields)};")
        elif op.opcode in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
            e.declare(f"static const bt_pool_params {n} = {_struct(e.pool_fields(op))};")
        elif op.opcode in UNARY + MINMAX:
            self.elementwise_params(e, op, n)
        elif op.opcode in POINTWISE:
            z = [0, 0, 0, 0]
            q = {"ADD": qparams.add_params, "SUB": qparams.sub_params, "MUL": qparams.mul_params}[op.opcode](g, op)
            fields = dict(q, b=dict(dims=z, a_stride=z, b_stride=z, out_stride=z))
            ctype = "bt_mul_params" if op.opcode == "MUL" else "bt_add_params"
            e.declare(f"static const {ctype} {n} = {_struct(fields)};")
        elif op.opcode == "FULLY_CONNECTED":  # the kernel's parameters (model_c), used by fx_dense_*
            ti, to, tw = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]], g.tensors[op.inputs[1]]
            mult, shift, per_ch = qparams.fc_multipliers(g, op)
            e.declare(f"static const int32_t op{op.index}_mult[{len(mult)}] = {_ints(mult)};")
            e.declare(f"static const int32_t op{op.index}_shift[{len(shift)}] = {_ints(shift)};")
            lo, hi = qparams.act_range(g, op)
            has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
            fields = dict(n_in=tw.shape[1], n_out=tw.shape[0], batches=1, input_offset=-ti.zero_point,
                          filter_offset=-tw.zero_point, output_offset=to.zero_point, act_min=lo, act_max=hi,
                          weights=e.weight(op.inputs[1], "int8_t"),
                          bias=e.weight(op.inputs[2], "int32_t") if has_bias else "0",
                          multiplier=f"op{op.index}_mult", shift=f"op{op.index}_shift", per_channel=per_ch)
            e.declare(f"static const bt_fc_params {n} = {_struct(fields)};")
        else:
            raise ModelError(f"operator {op.index} ({op.opcode}) cannot run inside a fused block")
        return n

    def elementwise_params(self, e: _Emitter, op, n: str) -> None:
        """Parameters of a tiled RELU, RELU6, TANH, PRELU, LEAKY_RELU (fx_unary) or MAXIMUM / MINIMUM (fx_pw); the
        runtime fills in the element count and the tile's strides."""
        g, z = self.g, [0, 0, 0, 0]
        if op.opcode == "RELU":
            e.declare(f"static const bt_relu_params {n} = {_struct(dict(n=0, **relu_params(g, op)))};")
        elif op.opcode == "RELU6":
            e.declare(f"static const int32_t {n}[2] = {_ints(relu6_bounds(g, op))};")
        elif op.opcode == "TANH":
            e.declare(f"static const bt_tanh_params {n} = {_struct(dict(n=0, **tanh_params(g, op)))};")
        elif op.opcode == "LEAKY_RELU":
            fields = dict(n=0, **qparams.leaky_relu_params(g, op))
            e.declare(f"static const bt_leaky_relu_params {n} = {_struct(fields)};")
        elif op.opcode == "PRELU":  # alpha: one value per channel, or one for all
            per_c = int(g.tensors[op.inputs[1]].shape[-1] > 1) if g.tensors[op.inputs[1]].shape else 0
            b = dict(dims=z, a_stride=z, b_stride=[0, 0, 0, per_c], out_stride=z)
            e.declare(f"static const bt_prelu_params {n} = {_struct(dict(prelu_params(g, op), b=b))};")
        else:
            e.declare(f"static const bt_bcast4 {n} = {_struct(dict(dims=z, a_stride=z, b_stride=z, out_stride=z))};")

    def dw_by_channel(self, e: _Emitter, op) -> str:
        """A depthwise filter [kh][kw][C] regrouped per channel [C][kh*kw] (in flash), so one
        channel's taps are contiguous for a one-channel call."""
        n = f"op{op.index}_fch"
        f = self.g.tensors[op.inputs[1]].data
        kk = f.shape[1] * f.shape[2]
        e.declare(f"static const int8_t {n}[{f.size}] = {_ints(f.reshape(kk, -1).T.reshape(-1))};")
        return n

    # -- blocks -------------------------------------------------------------------------
    def block(self, e: _Emitter, k: int, blk: BlockRun) -> None:
        g, plan = self.g, self.plan
        n_r, n_c = len(blk.rows.bounds) - 1, len(blk.cols.bounds) - 1
        made = [(s, g.operators[s.op]) for s in blk.geo.steps]
        chw = {t for t in blk.windows if blk.channelwise(g, t)}
        maker = {s.out: (s, op) for s, op in made}
        tensors = sorted({s.out for s, _ in made} | set(blk.windows))
        for t in tensors:
            win = t in blk.windows
            rt = axis_table(blk.rows, t, n_r, win)
            ct = axis_table(blk.cols, t, n_c, win)
            e.declare(f"static const int16_t fx{k}_t{t}_r[{n_r}][4] = {_rows(rt)};")
            e.declare(f"static const int16_t fx{k}_t{t}_c[{n_c}][4] = {_rows(ct)};")
        lines = [f"FX_FN void fx_block{k}(void) {{"]
        red = g.operators[blk.geo.reduce_op] if blk.geo.reduce_op >= 0 else None
        y = blk.geo.tile_tensor
        acc_bits = 0
        dense = is_dense(g, blk.geo)
        if dense:
            fp = self.params(e, red)
            lines.append(f"  int32_t *acc = (int32_t *)(bt_arena + {plan.acc_offset[k]});")
            lines.append(f"  for (int i = 0; i < {accumulator_len(g, blk.geo)}; i++) acc[i] = 0;")
        elif red is not None:
            acc_bits = 8 * accumulator_bytes(g, blk.geo) // g.tensors[y].shape[3]
            lines.append(f"  int{acc_bits}_t *acc = (int{acc_bits}_t *)(bt_arena + {plan.acc_offset[k]});")
            lines.append(f"  for (int i = 0; i < {g.tensors[y].shape[3]}; i++) acc[i] = 0;")
        lines.append(f"  for (int r = 0; r < {n_r}; r++)\n  for (int c = 0; c < {n_c}; c++) {{")
        pulled = {t for t in blk.streamed if _pulled_rows(g, blk, t)}
        for t in blk.streamed:
            if t in pulled:
                continue  # its reader pulls the rows it needs, one output row at a time
            lines.append(self.shifts(k, blk, t, "    "))
            er, ec, cw = blk.window_shape(g, t)
            lines.append(f"    {{ const int16_t *R = fx{k}_t{t}_r[r], *C = fx{k}_t{t}_c[c];\n"
                         f"      const fx_buf w = {self.buf(k, blk, t)};\n"
                         f"      if (R[1] > R[0] && C[1] > C[0]) fx_source(R[0], R[1], C[0], C[1], "
                         f"fx_at(&w, R[0], C[0]), {ec * cw}); }}")
        for s, op in made:
            if s.out in chw:
                continue
            t = s.out
            body = []
            if t in blk.windows:
                body.append(self.shifts(k, blk, t, "    "))
            body.append(f"    {{ const int16_t *R = fx{k}_t{t}_r[r], *C = fx{k}_t{t}_c[c];\n"
                        f"      if (R[1] > R[0] && C[1] > C[0]) {{")
            body.append(f"      const fx_buf o = {self.buf(k, blk, t)};")
            box = "R[0], R[1], C[0], C[1]"
            if op.inputs[0] in chw:
                conv = maker[op.inputs[0]][1]
                w = op.inputs[0]
                make = self.windowed(e, k, blk, conv, "&ci", "&wv", "WR[0], WR[1], WC[0], WC[1]", "ch", "0", pulled)
                dp, fch = self.params(e, op), self.dw_by_channel(e, op)
                body.append(f"      const fx_buf ci = {self.buf(k, blk, conv.inputs[0])}, "
                            f"wv = {self.buf(k, blk, w)};\n"
                            f"      const int16_t *WR = fx{k}_t{w}_r[r], *WC = fx{k}_t{w}_c[c];\n"
                            f"      for (int ch = 0; ch < {g.tensors[w].shape[3]}; ch++) {{\n"
                            f"        {make}\n"
                            f"        fx_win(FX_DW, &{dp}, &wv, &o, {box}, ch, {fch});\n      }}")
            elif op.opcode in WINDOWED:
                body.append(f"      const fx_buf i0 = {self.buf(k, blk, op.inputs[0])};\n"
                            f"      {self.windowed(e, k, blk, op, '&i0', '&o', box, '-1', '0', pulled)}")
            elif op.opcode in UNARY:
                alpha = e.weight(op.inputs[1], "int8_t") if op.opcode == "PRELU" else "0"
                body.append(f"      const fx_buf a = {self.buf(k, blk, op.inputs[0])};\n"
                            f"      fx_unary(FX_{op.opcode}, &{self.params(e, op)}, {alpha}, &a, &o, {box}, "
                            f"{g.tensors[t].shape[3]});")
            else:
                p = self.params(e, op)
                kind = {"ADD": "FX_ADD", "SUB": "FX_SUB", "MUL": "FX_MUL", "MAXIMUM": "FX_MAX",
                        "MINIMUM": "FX_MIN"}[op.opcode]
                body.append(f"      const fx_buf a = {self.buf(k, blk, op.inputs[0])}, "
                            f"b = {self.buf(k, blk, op.inputs[1])};\n"
                            f"      fx_pw({kind}, &{p}, &a, &b, &o, {box}, {g.tensors[t].shape[3]});")
            if dense and t == y:
                w, ch = g.tensors[y].shape[2:]
                body.append(f"      fx_dense_acc(acc, &{fp}, &o, {box}, {w}, {ch});")
            elif red is not None and t == y:
                body.append(f"      fx_accumulate{acc_bits}(acc, &o, {box}, {g.tensors[y].shape[3]});")
            body.append("    } }")
            lines.append(f"    /* op {op.index}: {op.opcode} */\n" + "\n".join(b for b in body if b))
        lines.append("  }")
        if dense:
            lines.append(f"  fx_dense_done(acc, &{fp}, bt_arena + {plan.bands[red.outputs[0]][0][2]});")
        elif red is not None:
            ti, to = g.tensors[y], g.tensors[red.outputs[0]]
            num = ti.shape[1] * ti.shape[2]
            mp = qparams.mean_params(ti, to, num)
            out = plan.bands[red.outputs[0]][0][2]
            lines.append(f"  fx_mean_done{acc_bits}(acc, bt_arena + {out}, {ti.shape[3]}, {mp['input_zp'] * num}, "
                         f"{mp['multiplier']}, {mp['shift']}, {mp['output_zp']});")
        lines.append("}")
        e.declare("\n".join(lines))
        ops = f"{blk.p}..{blk.q - 1}"
        e.body.append(f"  /* block ops {ops}: {blk.scheme}, {n_r}x{n_c} tiles */\n"
                      f"  BT_PROFILE_BEGIN({blk.p});\n  fx_block{k}();\n  BT_PROFILE_END({blk.p});")

    def windowed(self, e: _Emitter, k: int, blk: BlockRun, op, src: str, dst: str, box: str, ch: str,
                 fch: str, pulled: set) -> str:
        """The C call computing box of sliding-window op from buffer src into dst."""
        kind = {"CONV_2D": "FX_CONV", "DEPTHWISE_CONV_2D": "FX_DW", "MAX_POOL_2D": "FX_MAXP",
                "AVERAGE_POOL_2D": "FX_AVGP"}[op.opcode]
        p = self.params(e, op)
        t = op.inputs[0]
        if t in pulled:
            ax = op_axes(self.g, op)[0]
            return (f"fx_pulled({kind}, &{p}, {src}, {dst}, {box}, {ch}, fx{k}_t{t}_c[c][0], fx{k}_t{t}_c[c][1], "
                    f"{ax.s}, {ax.pad}, {ax.k}, {ax.n_in});")
        if _inplace_source(self.g, blk, op.outputs[0]) is not None:
            if ch != "-1":
                raise PlanError(f"operator {op.index}: an in-place convolution cannot run channel by channel")
            return f"fx_conv_inplace(&{p}, {src}, {dst}, {box});"
        return f"fx_win({kind}, &{p}, {src}, {dst}, {box}, {ch}, {fch});"

    def shifts(self, k: int, blk: BlockRun, t: int, ind: str) -> str:
        """Ring moves of a cached window before the tile (fusion_exec._shift)."""
        er, ec, cw = blk.window_shape(self.g, t)
        off = self.plan.window_offset[(k, t)]
        out = []
        if blk.rows.mode == "cache":
            out.append(f"{ind}if (c == 0 && fx{k}_t{t}_r[r][3]) "
                       f"fx_shift_rows(bt_arena + {off}, {er}, {ec * cw}, fx{k}_t{t}_r[r][3]);")
        if blk.cols.mode == "cache":
            out.append(f"{ind}if (fx{k}_t{t}_c[c][3]) "
                       f"fx_shift_cols(bt_arena + {off}, {er}, {ec}, {cw}, fx{k}_t{t}_c[c][3]);")
        return "\n".join(out)


def _pulled_rows(g: Graph, blk: BlockRun, t: int) -> int:
    """Rows of streamed input t its reader pulls per output row (0: the tile's whole interval)."""
    fn = getattr(blk, "pulled_rows", None)
    return fn(g, t) if fn is not None else 0


def _inplace_source(g: Graph, blk: BlockRun, t: int):
    """The window t's 1x1 convolution overwrites in place, or None."""
    fn = getattr(blk, "inplace_source", None)
    return fn(g, t) if fn is not None else None


def _rows(table: list) -> str:
    if any(not -32768 <= v < 32768 for row in table for v in row):
        raise PlanError("a tensor has more than 32767 rows or columns; firmware tile tables hold int16")
    return "{" + ", ".join("{" + ", ".join(str(int(v)) for v in row) + "}" for row in table) + "}"


def source_code(g: Graph, platform: str) -> str:
    """fx_source(): rows [r0, r1) x cols [c0, c1) of the streamed input into dst (row stride bytes).

    Boards read input.bin through semihosting (seek + read per row); the host reads stdin
    once into a buffer outside the arena (the host has no RAM limit to prove)."""
    t = g.tensors[g.inputs[0]]
    if t.dtype != "int8" or len(t.shape) != 4:
        raise ModelError(f"a streamed input must be int8 [1,H,W,C], '{t.name}' is {t.dtype}{list(t.shape)}")
    w, ch = t.shape[2], t.shape[3]
    if platform == "host":
        return f"""int bt_read_input(void *buf, size_t n);
static int8_t fx_input_image[{t.nbytes}];
FX_FN void fx_source(int32_t r0, int32_t r1, int32_t c0, int32_t c1, int8_t *dst, int32_t stride) {{
  static int loaded;
  if (!loaded) {{ loaded = 1; bt_read_input(fx_input_image, {t.nbytes}); }}
  for (int32_t y = r0; y < r1; y++)
    fx_copy(dst + (y - r0) * stride, fx_input_image + (y * {w} + c0) * {ch}, (c1 - c0) * {ch});
}}
""" + PULLED
    return f"""int sh_call(int op, void *arg);
FX_FN void fx_source(int32_t r0, int32_t r1, int32_t c0, int32_t c1, int8_t *dst, int32_t stride) {{
  static int h = -1;
  if (h < 0) {{
    static const char name[] = "input.bin";
    uintptr_t blk[3] = {{(uintptr_t)name, 1, sizeof name - 1}};
    h = sh_call(0x01, blk);
  }}
  for (int32_t y = r0; y < r1; y++) {{
    uintptr_t sk[2] = {{(uintptr_t)h, (uintptr_t)((y * {w} + c0) * {ch})}};
    uintptr_t rd[3] = {{(uintptr_t)h, (uintptr_t)(dst + (y - r0) * stride), (uintptr_t)((c1 - c0) * {ch})}};
    sh_call(0x0A, sk);
    sh_call(0x06, rd);
  }}
}}
""" + PULLED


def generate(g: Graph, plan: FusedPlan, target: str, weights_align: int = 16) -> tuple:
    """(model_c, model_h) for g run with the fused plan on board `target`; deterministic."""
    if plan.schedule.streamed and len(g.inputs) != 1:
        raise ModelError("an input-streamed plan needs a model with exactly one input")
    ap = pseudo_plan(g, plan)
    streamed = tuple(g.inputs) if plan.schedule.streamed else ()
    for i in g.inputs:
        if i not in streamed and len(plan.bands[i]) > 1:
            b = sorted(plan.bands[i])
            row = g.tensors[i].nbytes // g.tensors[i].shape[1]
            if any(x[2] + (x[1] - x[0]) * row != y[2] for x, y in zip(b, b[1:])):
                raise PlanError("the input's row bands are not one contiguous tensor; plan with band_input=False")
            ap.tensors[i] = TensorPlace(i, g.tensors[i].name, i, b[0][2], g.tensors[i].nbytes, 0, 0)
    plat = targets.get(target).platform
    return generate_model(g, ap, target, weights_align, emit=_Emit(g, plan, plat), emitter=_FusedEmitter,
                          streamed=streamed)


def manifest_order(g: Graph, plan: FusedPlan) -> tuple:
    """(profile region ids, their names): one per plain operator or block, in execution order."""
    order, names = [], []
    for it in plan.schedule.items:
        if isinstance(it, BlockRun):
            order.append(it.p)
            names.append(f"FUSED_{it.p}_{it.q - 1}")
        else:
            order.append(it)
            names.append(g.operators[it].opcode)
    return order, names


RUNTIME = r"""/* ---- fused-plan runtime: tile loops over the bt_ kernels (see buildtool/codegen/fused_c.py) */
#include "requant.h"
#define FX_FN static __attribute__((unused))

typedef struct {
  int8_t *base;            /* physical position 0 (window) or row 0 (whole tensor) */
  int32_t r0, c0;          /* image row/column held at physical position 0 */
  int32_t wp, ps;          /* physical width (pixels), bytes per pixel */
  int8_t *const *rows;     /* row-banded tensor: address of each row, else 0 */
} fx_buf;

enum { FX_CONV, FX_DW, FX_MAXP, FX_AVGP, FX_ADD, FX_MUL, FX_MAX, FX_MIN, FX_RELU, FX_RELU6, FX_TANH, FX_PRELU,
       FX_SUB, FX_LEAKY_RELU };

FX_FN int8_t *fx_at(const fx_buf *b, int32_t y, int32_t x) {
  if (b->rows) return b->rows[y] + x * b->ps;
  return (int8_t *)((uintptr_t)b->base + (uintptr_t)(intptr_t)(((y - b->r0) * b->wp + (x - b->c0)) * b->ps));
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
FX_FN void fx_copy(int8_t *dst, const int8_t *src, int32_t n) {
  for (int32_t i = 0; i < n; i++) dst[i] = src[i];
}
/* Struct copies without libc (the boards link no memcpy): word by word (the structs are word
   aligned; may_alias: they are read as structs), then any tail bytes. */
typedef uint32_t __attribute__((may_alias)) fx_word;
FX_FN void fx_get(void *dst, const void *src, int32_t n) {
  fx_word *d = dst;
  const fx_word *s = src;
  for (int32_t i = 0; i < n / 4; i++) d[i] = s[i];
  fx_copy((int8_t *)dst + (n & ~3), (const int8_t *)src + (n & ~3), n & 3);
}

/* A cached window's ring moves n positions down (oldest out) along rows / columns. */
FX_FN void fx_shift_rows(int8_t *w, int32_t ext, int32_t row_bytes, int32_t n) {
  fx_copy(w, w + n * row_bytes, (ext - n) * row_bytes);
}
FX_FN void fx_shift_cols(int8_t *w, int32_t rows, int32_t ext, int32_t ch, int32_t n) {
  for (int32_t y = 0; y < rows; y++) fx_copy(w + y * ext * ch, w + (y * ext + n) * ch, (ext - n) * ch);
}

/* One output row y of a sliding-window operator whose input rows are at rows[iy] (row bands). */
FX_FN void fx_rows(int kind, const void *prm, int8_t *const *rows, int32_t x0, int8_t *out, int32_t y) {
  if (kind == FX_CONV || kind == FX_DW) {
    const bt_conv_params *p = kind == FX_DW ? &((const bt_depthwise_params *)prm)->conv : prm;
    const int32_t iy0 = y * p->stride_h - p->pad_top, c = p->in.c, ps = p->in.pixel_stride;
    int32_t ky0 = 0, ky1 = p->kh;  /* valid tap rows and, per pixel, columns: no per-tap checks */
    while (ky0 < ky1 && iy0 + ky0 * p->dil_h < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * p->dil_h >= p->in.h) ky1--;
    for (int32_t x = 0; x < p->out.w; x++) {
      int8_t *o = out + x * p->out.pixel_stride;
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0 = 0, kx1 = p->kw;
      while (kx0 < kx1 && ix0 + kx0 * p->dil_w < 0) kx0++;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dil_w >= p->in.w) kx1--;
      /* conv taps kx0..kx1 of one row are one run of bytes when pixels are dense and undilated */
      const int32_t run = kind == FX_CONV && p->dil_w == 1 && ps == c ? (kx1 - kx0) * c : 0;
      for (int32_t oc = 0; oc < p->out.c; oc++) {
        int32_t acc = 0;
        for (int32_t ky = ky0; ky < ky1; ky++) {
          const int8_t *irow = rows[iy0 + ky * p->dil_h] + (x0 + ix0) * ps;
          if (run) {
            const int8_t *ip = irow + kx0 * c, *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx0) * c;
            for (int32_t i = 0; i < run; i++) acc += (int32_t)fp[i] * ((int32_t)ip[i] + p->input_offset);
            continue;
          }
          for (int32_t kx = kx0; kx < kx1; kx++) {
            const int8_t *ip = irow + kx * p->dil_w * ps;
            if (kind == FX_DW) {
              acc += (int32_t)p->filter[(ky * p->kw + kx) * p->out.c + oc] * ((int32_t)ip[oc] + p->input_offset);
            } else {
              const int8_t *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx) * c;
              for (int32_t ic = 0; ic < c; ic++) acc += (int32_t)fp[ic] * ((int32_t)ip[ic] + p->input_offset);
            }
          }
        }
        if (p->bias) acc += p->bias[oc];
        acc = bt_mbqm(acc, p->multiplier[oc], p->shift[oc]) + p->output_offset;
        o[oc] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
      }
    }
    return;
  }
  const bt_pool_params *p = prm;
  const int32_t oy = y * p->stride_h - p->pad_top;
  const int32_t fy0 = BT_MAX(0, -oy), fy1 = BT_MIN(p->filter_h, p->in.h - oy);
  for (int32_t x = 0; x < p->out.w; x++) {
    const int32_t ox = x * p->stride_w - p->pad_left;
    const int32_t fx0 = BT_MAX(0, -ox), fx1 = BT_MIN(p->filter_w, p->in.w - ox);
    int8_t *o = out + x * p->out.pixel_stride;
    for (int32_t c = 0; c < p->in.c; c++) {
      int32_t acc = kind == FX_MAXP ? -128 : 0, n = 0;
      for (int32_t fy = fy0; fy < fy1; fy++) {
        const int8_t *row = rows[oy + fy] + x0 * p->in.pixel_stride + c;
        for (int32_t fx = fx0; fx < fx1; fx++) {
          const int32_t v = row[(ox + fx) * p->in.pixel_stride];
          if (kind == FX_MAXP) acc = BT_MAX(acc, v); else acc += v;
          n++;
        }
      }
      if (kind == FX_AVGP) acc = n == 0 ? 0 : acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
      o[c] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
    }
  }
}

/* Output rows [ra, rb) x cols [ca, cb) of a sliding-window operator, from buffer in into out.
   ch >= 0: only channel ch (a conv's filter ch into a one-channel window; a depthwise on a
   one-channel window into channel ch of out, with the regrouped filter fch). */
FX_FN void fx_win(int kind, const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                   int32_t ca, int32_t cb, int32_t ch, const int8_t *fch) {
  union { bt_conv_params c; bt_depthwise_params d; bt_pool_params p; } q;
  bt_shape *is, *os;
  int32_t *pad_left, s, k, kh;
  if (kind == FX_CONV || kind == FX_DW) {
    bt_conv_params *c = &q.c;
    if (kind == FX_DW) { fx_get(&q.d, prm, sizeof q.d); c = &q.d.conv; }
    else fx_get(&q.c, prm, sizeof q.c);
    is = &c->in; os = &c->out; pad_left = &c->pad_left;
    s = c->stride_w; k = (c->kw - 1) * c->dil_w + 1; kh = c->kh;
    if (ch >= 0) {
      if (kind == FX_CONV) c->filter += ch * c->kh * c->kw * c->in.c;
      else { c->filter = fch + ch * c->kh * c->kw; is->c = 1; }
      if (c->bias) c->bias += ch;
      c->multiplier += ch;
      c->shift += ch;
      os->c = 1;
    }
  } else {
    fx_get(&q.p, prm, sizeof q.p);
    is = &q.p.in; os = &q.p.out; pad_left = &q.p.pad_left;
    s = q.p.stride_w; k = q.p.filter_w; kh = q.p.filter_h;
  }
  const int32_t w = is->w, nlo = ca * s - *pad_left, nhi = (cb - 1) * s - *pad_left + k;
  const int32_t x0 = in->rows ? 0 : nlo < 0 ? 0 : nhi > w ? w - in->wp : in->c0;
  *pad_left += x0 - ca * s;
  is->w = in->wp; is->pixel_stride = in->ps;
  os->w = cb - ca; os->pixel_stride = out->ps;
  const int32_t oc = ch >= 0 && kind == FX_DW ? ch : 0;
  if (in->rows) {  /* row bands: a 1-row conv reads one band per output row, else fx_rows */
    for (int32_t y = ra; y < rb; y++) {
      int8_t *o = fx_at(out, y, ca) + oc;
      const int32_t iy = kind == FX_CONV || kind == FX_DW ? y * q.c.stride_h - q.c.pad_top : -1;
      if (kh == 1 && kind == FX_CONV && iy >= 0 && iy < is->h) bt_conv_s8(&q.c, in->rows[iy], iy, o, y, y + 1);
      else if (kh == 1 && kind == FX_DW && iy >= 0 && iy < is->h)
        bt_depthwise_s8(&q.d, in->rows[iy], iy, o, y, y + 1);
      else fx_rows(kind, &q, in->rows, x0, o, y);
    }
    return;
  }
  const int8_t *ip = fx_at(in, in->r0, x0);
  const int whole = !out->rows && ca == out->c0 && cb - ca == out->wp;
  for (int32_t y = ra; y < rb; y = whole ? rb : y + 1) {
    int8_t *o = fx_at(out, y, ca) + oc;
    const int32_t y1 = whole ? rb : y + 1;
    switch (kind) {
      case FX_CONV: bt_conv_s8(&q.c, ip, in->r0, o, y, y1); break;
      case FX_DW: bt_depthwise_s8(&q.d, ip, in->r0, o, y, y1); break;
      case FX_MAXP: bt_max_pool_s8(&q.p, ip, in->r0, o, y, y1); break;
      default: bt_avg_pool_s8(&q.p, ip, in->r0, o, y, y1); break;
    }
  }
}

/* An element-wise ADD/SUB/MUL/MAXIMUM/MINIMUM over rows [ra, rb) x cols [ca, cb), one row per call. */
FX_FN void fx_pw(int kind, const void *prm, const fx_buf *a, const fx_buf *b, const fx_buf *o, int32_t ra,
                  int32_t rb, int32_t ca, int32_t cb, int32_t ch) {
  union { bt_add_params a; bt_mul_params m; bt_bcast4 x; } q;
  bt_bcast4 *s;
  if (kind == FX_ADD || kind == FX_SUB) { fx_get(&q.a, prm, sizeof q.a); s = &q.a.b; }
  else if (kind == FX_MUL) { fx_get(&q.m, prm, sizeof q.m); s = &q.m.b; }
  else { fx_get(&q.x, prm, sizeof q.x); s = &q.x; }
  const int32_t dims[4] = {1, 1, cb - ca, ch};
  for (int i = 0; i < 4; i++) {
    s->dims[i] = dims[i];
    s->a_stride[i] = i == 3 ? 1 : i == 2 ? a->ps : 0;
    s->b_stride[i] = i == 3 ? 1 : i == 2 ? b->ps : 0;
    s->out_stride[i] = i == 3 ? 1 : i == 2 ? o->ps : 0;
  }
  for (int32_t y = ra; y < rb; y++) {
    if (kind == FX_ADD) bt_add_s8(&q.a, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_SUB) bt_sub_s8(&q.a, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_MUL) bt_mul_s8(&q.m, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_MAX) bt_maximum_s8(&q.x, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else bt_minimum_s8(&q.x, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
  }
}

/* An element-wise RELU/RELU6/TANH/PRELU/LEAKY_RELU over rows [ra, rb) x cols [ca, cb): one call per row when the
   row's pixels are contiguous in both buffers, else one per pixel. PRELU's alpha stride comes with prm. */
FX_FN void fx_unary(int kind, const void *prm, const int8_t *alpha, const fx_buf *a, const fx_buf *o, int32_t ra,
                     int32_t rb, int32_t ca, int32_t cb, int32_t ch) {
  union { bt_relu_params r; bt_tanh_params t; bt_prelu_params p; bt_leaky_relu_params l; int32_t b[2]; } q;
  const int32_t step = a->ps == ch && o->ps == ch ? cb - ca : 1, n = step * ch;
  if (kind == FX_RELU) { fx_get(&q.r, prm, sizeof q.r); q.r.n = n; }
  else if (kind == FX_TANH) { fx_get(&q.t, prm, sizeof q.t); q.t.n = n; }
  else if (kind == FX_LEAKY_RELU) { fx_get(&q.l, prm, sizeof q.l); q.l.n = n; }
  else if (kind == FX_RELU6) fx_get(q.b, prm, sizeof q.b);
  else {
    fx_get(&q.p, prm, sizeof q.p);
    const int32_t dims[4] = {1, 1, step, ch};
    for (int i = 0; i < 4; i++) {
      q.p.b.dims[i] = dims[i];
      q.p.b.a_stride[i] = q.p.b.out_stride[i] = i == 3 ? 1 : i == 2 ? ch : 0;
    }
  }
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x += step) {
      const int8_t *in = fx_at(a, y, x);
      int8_t *out = fx_at(o, y, x);
      if (kind == FX_RELU) bt_relu_s8(&q.r, in, out);
      else if (kind == FX_TANH) bt_tanh_s8(&q.t, in, out);
      else if (kind == FX_LEAKY_RELU) bt_leaky_relu_s8(&q.l, in, out);
      else if (kind == FX_RELU6) bt_relu6_s8(n, q.b[0], q.b[1], in, out);
      else bt_prelu_s8(&q.p, in, alpha, out);
    }
}

/* MEAN over H and W, one tile at a time: running sums per channel (int16 when the map has at most
   256 pixels, which cannot overflow; else int32, wrapping as int32 does), then TFLM's MEAN step. */
#define FX_MEAN(bits, ubits) \
FX_FN void fx_accumulate##bits(int##bits##_t *acc, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca, \
                                int32_t cb, int32_t ch) { \
  for (int32_t y = ra; y < rb; y++) \
    for (int32_t x = ca; x < cb; x++) { \
      const int8_t *p = fx_at(t, y, x); \
      for (int32_t i = 0; i < ch; i++) acc[i] = (int##bits##_t)((ubits)acc[i] + (ubits)(int32_t)p[i]); \
    } \
} \
FX_FN void fx_mean_done##bits(const int##bits##_t *acc, int8_t *out, int32_t ch, int32_t zp_times_n, \
                               int32_t mult, int32_t shift, int32_t out_zp) { \
  for (int32_t i = 0; i < ch; i++) { \
    const int32_t v = (int32_t)((uint32_t)(int32_t)acc[i] - (uint32_t)zp_times_n); \
    out[i] = (int8_t)bt_clamp(bt_mbqm(v, mult, shift) + out_zp, -128, 127); \
  } \
}
FX_MEAN(16, uint16_t)
FX_MEAN(32, uint32_t)

/* Iterative dense: a FULLY_CONNECTED over the flattened block output (w pixels wide, ch channels)
   adds each finished tile's partial dot products to its int32 sums (pixel (y, x) channel c is input
   element ((y*w + x)*ch + c); offsets per element, as bt_fully_connected_s8), then finishes once. */
FX_FN void fx_dense_acc(int32_t *acc, const bt_fc_params *p, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca,
                         int32_t cb, int32_t w, int32_t ch) {
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x++) {
      const int8_t *px = fx_at(t, y, x);
      for (int32_t o = 0; o < p->n_out; o++) {
        const int8_t *wt = p->weights + o * p->n_in + (y * w + x) * ch;
        uint32_t s = (uint32_t)acc[o];
        for (int32_t i = 0; i < ch; i++)
          s += (uint32_t)(((int32_t)wt[i] + p->filter_offset) * ((int32_t)px[i] + p->input_offset));
        acc[o] = (int32_t)s;
      }
    }
}
FX_FN void fx_dense_done(const int32_t *acc, const bt_fc_params *p, int8_t *out) {
  for (int32_t o = 0; o < p->n_out; o++) {
    int32_t a = acc[o];
    if (p->bias) a = (int32_t)((uint32_t)a + (uint32_t)p->bias[o]);
    const int32_t k = p->per_channel ? o : 0;
    a = bt_mbqm(a, p->multiplier[k], p->shift[k]) + p->output_offset;
    out[o] = (int8_t)bt_clamp(a, p->act_min, p->act_max);
  }
}

/* A 1x1 stride-1 convolution whose output window starts at its input window's bytes: pixel by
   pixel in raster order, each input pixel copied aside before its output overwrites it. */
FX_FN void fx_conv_inplace(const bt_conv_params *prm, const fx_buf *in, const fx_buf *out, int32_t ra,
                            int32_t rb, int32_t ca, int32_t cb) {
  int8_t px[FX_INPLACE_MAX_C];
  bt_conv_params q;
  fx_get(&q, prm, sizeof q);
  q.in.h = q.in.w = q.out.h = q.out.w = 1;
  q.in.pixel_stride = q.in.c;
  q.out.pixel_stride = q.out.c;
  q.pad_top = q.pad_left = 0;
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x++) {
      fx_copy(px, fx_at(in, y, x), q.in.c);
      bt_conv_s8(&q, px, 0, fx_at(out, y, x), 0, 1);
    }
}
/* ---- end of the fused-plan runtime */"""

PULLED = r"""/* A sliding-window operator on a streamed input it pulls itself: one output row at a time, after
   reading the input rows that row needs (image columns [ta, tb)) into the window. */
FX_FN void fx_pulled(int kind, const void *prm, const fx_buf *win, const fx_buf *out, int32_t ra, int32_t rb,
                      int32_t ca, int32_t cb, int32_t ch, int32_t ta, int32_t tb, int32_t s, int32_t pad,
                      int32_t k, int32_t n_in) {
  for (int32_t y = ra; y < rb; y++) {
    const int32_t r0 = BT_MAX(y * s - pad, 0), r1 = BT_MIN(y * s - pad + k, n_in);
    fx_buf w;
    fx_get(&w, win, sizeof w);
    w.r0 = r0;
    if (r1 > r0 && tb > ta) fx_source(r0, r1, ta, tb, fx_at(&w, r0, ta), w.wp * w.ps);
    fx_win(kind, prm, &w, out, y, y + 1, ca, cb, ch, 0);
  }
}"""
