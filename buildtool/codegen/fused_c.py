"""Generate model.c / model.h for a FusedPlan: fused blocks and split regions as tile loops.

The generated code does what buildtool.plan.fusion.execute.run_fused does, in the same order and
at the same arena offsets: the static arena is exactly plan.arena_bytes. Per block, tables
(computed here) give every tensor's interval at each row/column tile and every window's
origin and ring shift; the C loop walks the tiles and calls the tile runtime
(kernels/include/bt_fused.h, kernels/reference/fused.c), which shifts cached windows, pulls
streamed input rows through the platform (bt_read_input_rows) and calls the bt_ kernels on bands.

Column bands: a kernel's row stride is in.w * pixel_stride, so a call sees a window (or a
whole tensor) at its physical width, with the input pointer shifted to column X0 and
pad_left moved so that exactly the taps outside the image are skipped; an output narrower
than its buffer is written one row per call. Rows of a row-banded tensor live at their own
offsets: a 1-row window reads them one call per output row, a taller window goes through
fx_rows (the same arithmetic over a table of row pointers).
"""

from __future__ import annotations

import re

from ..errors import ModelError, PlanError
from ..plan.fusion.costs import accumulator_bytes, accumulator_len
from ..plan.fusion.geometry import MINMAX, POINTWISE, UNARY, WINDOWED, interval, is_dense, op_axes
from ..plan.fusion.schedule import BlockRun, FusedPlan
from ..model.ir import Graph
from ..model.ops import conv_groups
from ..plan import ArenaPlan, TensorPlace
from ..refops import prepare
from ..refops.activation import prelu_params, relu6_bounds, relu_params, tanh_params
from . import call_cost, code_budget, kernel_variants, pipeline_c, qparams, tile_kernels
from .c_text import c_ints as _ints, c_struct as _struct
from .emitter import Emitter as _Emitter
from .model_c import emit_op, generate as generate_model


def axis_table(ap, t: int, n: int, window: bool) -> list:
    """[(a, b, origin, shift)] per tile along one axis: t's interval, its window's first
    position and the positions a cached window moves down before the tile (0: none)."""
    rows, org = [], None
    ext = ap.ext.get(t, 0)
    for i in range(n):
        a, b = interval(ap, t, i)
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
    """Fills the emitter with the runtime include, block tables, block functions and the model_invoke body."""

    def __init__(self, g: Graph, plan: FusedPlan):
        self.g, self.plan = g, plan

    def __call__(self, e: _Emitter) -> None:
        g, plan = self.g, self.plan
        e.declare('#include "bt_fused.h"')
        self.image = streamed_geometry(g) if plan.schedule.streamed else None
        banded = sorted(t for t, b in plan.bands.items() if len(b) > 1)
        self.row_at = {}  # a row-banded tensor's row -> its arena offset
        for t in banded:
            rows = {}
            row_bytes = g.tensors[t].nbytes // g.tensors[t].shape[1]
            for r0, r1, off in plan.bands[t]:
                for r in range(r0, r1):
                    rows[r] = off + (r - r0) * row_bytes
            self.row_at[t] = rows
        if banded:
            packed, at = pack_rows({t: [self.row_at[t][r] for r in range(len(self.row_at[t]))] for t in banded})
            addrs = ", ".join(f"bt_arena + {a}" for a in packed)
            e.declare(f"static int8_t *const fx_row_ptrs[{len(packed)}] = {{{addrs}}};")
            e.declare("\n".join(f"#define fx_t{t}_rows (fx_row_ptrs + {at[t]})" for t in banded))
        self.banded = set(banded)
        self.declared = set()
        self.conv_fields = {}  # a CONV_2D's bt_conv_params fields (params), for its tile kernel
        self.dw_fields = {}  # a DEPTHWISE_CONV_2D's bt_depthwise_params fields (params), for its variant
        self.dw_tile_path = {}  # a DEPTHWISE_CONV_2D's path (tile_kernels.dw_call_path) when every tile call takes one
        self.dw_shared = {}  # a DEPTHWISE_CONV_2D whose tiles the plain plan's entries may run: (their options, else)
        self.grouped = {}  # a CONV_2D's fx_chw_k tile kernel (chw_conv_kernel), None when it has none
        self.tile_shares = {}  # the tile kernels declared so far (tile_kernels.define's shared)
        self.units = set()  # the axis tables of one tile a row or column (axis): FX_UNIT(i)
        self.axes = {}  # (rows, their text) -> the first axis table declared with them (axis)
        self.blk_of = {}  # a CONV_2D into a channelwise window -> its block (kg_conv_calls)
        self.piped = {k for grp in plan.schedule.pipelined for k in grp}
        self.deferred = []  # (token, column text, its entry, fallback text, its entry): resolve_columns
        self.pw1_calls = {}  # a conv's fx_rv_pw1 call -> the fx_win_k entry's call it replaces (rv_pw1_keep)
        for k, it in enumerate(plan.schedule.items):
            if isinstance(it, BlockRun):
                self.block(e, k, it)
                if k in self.piped:
                    pipeline_c.invoke_group(e, plan, k)
            else:
                op = g.operators[it]
                for i in list(g.act_inputs(op)) + list(op.outputs):
                    if i in self.banded:
                        raise PlanError(f"operator {it} ({op.opcode}) runs whole on row-banded tensor {i}; "
                                        f"firmware needs it in one piece: plan without banding it")
                emit_op(e, it)
        deferred = self.deferred
        e.after_rows = lambda: self.resolve_columns(e, deferred)  # once the plain layers' row entries are settled
        self.shared_entries(e)
        self.rv_pw1_keep(e)
        self.entries(e)
        self.rv_runs(e)
        e.fixed_cycles = self.block_cycles(e)

    def rv_runs(self, e: _Emitter) -> None:
        """On the riscv set, declare the table of the unrolled one-channel conv entries (kernels/riscv/fused.c
        bt_fx_rv_runs) with the dense tap-row lengths of up to 16 values (kw * in.c, dil_w 1) the plan's convs may
        take, so the firmware links no other (kws' least-RAM plan on riscv32: conv1_row_k 41.6 KB -> its run of 4;
        benchmarks/code_size.py --fused); a length not in it runs rolled, with the same results. Not in a multi-model
        firmware (its model.c files each prefixed, weights_symbol not bt_weights): one global table would be defined
        twice; fused.c's weak table of every length links there."""
        if not e.riscv_set() or e.weights_symbol != "bt_weights":
            return
        runs = sorted({f["kw"] * f["in"]["c"] for f in self.conv_fields.values()
                       if f["dil_w"] == 1 and f["kw"] * f["in"]["c"] <= 16})
        # [0], a 1x1's longer runs (bt_fx_rv_run_long, 0.7 KB): where a conv of kh 1 with one may take the one-channel
        # paths, its parameters passed to a call other than the entries that take none of them (model.c's tile
        # kernels' and variants' entries, fx_chw_kg); without it such a run goes rolled, with the same results
        text = "\n".join(e.decls + e.body)
        direct = {"fx_win_kr", "fx_win_kb", "fx_win_k", "fx_win_conv_all", "fx_chw_kg", "fx_chw_kgb", "fx_chw_kgr",
                  "fx_rv_pw1"}
        reach = {int(n) for fn, n in re.findall(r"(\w+)\(&op(\d+)_pg?\b", text) if fn not in direct}
        if any(f["kh"] == 1 and f["dil_w"] == 1 and f["kw"] * f["in"]["c"] > 16
               for i, f in self.conv_fields.items() if i in reach):
            runs = [0] + runs
        # (the entries and the table declared by kernels/riscv/bt_variants.h, which model.c includes where it calls a
        # variant (model_c._variant_block); a plan calling none includes it here: ad01's least-RAM plan on riscv32 did
        # not compile, bt_fx_rv_run_fn unknown)
        if not e.used_variants:
            e.declare('#if defined __has_include\n#if __has_include("bt_variants.h")\n#include "bt_variants.h"\n'
                      '#endif\n#endif')
        # a length no conv of kh 1 takes: its entry without the 1x1 pass (bt_fx_rv_rowsK; kws's stem, 0.1 KB)
        one = {f["kw"] * f["in"]["c"] for f in self.conv_fields.values() if f["kh"] == 1}
        names = {k: "_long" if k == 0 else f"{k}" if k in one else f"s{k}" for k in runs}
        e.declare("bt_fx_rv_run_fn *const bt_fx_rv_runs[17] = {" + ", ".join(
            f"[{k}] = bt_fx_rv_run{names[k]}".replace("runs", "rows") for k in runs) + ("" if runs else "0") + "};")

    def rv_chw_only(self, e: _Emitter, blk: BlockRun, conv, op, w: int) -> bool:
        """On the riscv set, do its one-channel paths (kernels/riscv/fused.c: conv1_prep_ch, dw1_ch under fx_k_chw1)
        take every channel of every tile of fx_chw's channelwise window w (conv into it, depthwise op from it)? Then
        model.c calls fx_chw_rv, fx_k_chw1 without the fallbacks those paths never take (fx_chw_k's channel groups,
        fx_win's box and row loops, the dispatcher bt_conv_s8 and its variants: kws's least-RAM plan on riscv32,
        5.6 KB). Their conditions: a one-channel window (not row-banded), int8 throughout, the conv's kh <= 16 (RV_KH),
        the depthwise's multiplier 1, no requantisation multiplier INT32_MIN (rv_rq_ok)."""
        if not e.riscv_set():
            return False
        g = self.g
        if (conv.opcode != "CONV_2D" or op.opcode != "DEPTHWISE_CONV_2D" or w not in blk.windows or w in self.banded
                or self.pixels(blk, w)[1] != 1):
            return False
        if any(g.tensors[t].dtype != "int8" for t in (conv.inputs[0], w, op.outputs[0])):
            return False
        if self.conv_fields[conv.index]["kh"] > 16 or self.dw_fields[op.index]["depth_multiplier"] != 1:
            return False
        return _rv_rq_ok(g, conv, op)

    def block_cycles(self, e: _Emitter) -> int:
        """An estimate of the blocks' modelled cycles, for the code budget's balanced slack over the whole model
        (code_budget.balanced_ok): each conv and depthwise of a block run whole by the variant the board's table
        picks for the layer (its own instance's cost for an INSTANCES variant), the candidates' a + b K
        (code_budget.layer_cycles), except the convs whose tile kernels the budget chooses a form of (offer); the tiles'
        recomputation and the runtime's own work are not counted."""
        if e.variants is None:
            return 0
        total = 0
        for op in self.g.operators:
            if op.index in e.offers:  # a tile kernel the code budget chooses the form of (offer): its own cycles
                continue
            if op.index in self.conv_fields:
                kind, layer = "conv", e.conv_layer(op, self.conv_fields[op.index])
            elif op.index in self.dw_fields:
                f = self.dw_fields[op.index]
                kind = "depthwise"
                layer = dict(e.conv_layer(op, f["conv"]), depth_multiplier=f["depth_multiplier"])
            else:
                continue
            if self.g.tensors[op.outputs[0]].dtype != "int8":
                continue
            name = kernel_variants.choose_codegen(e.variants[1], kind, layer)
            if name in tile_kernels.DW_M1:  # a dispatcher by path: the fastest path's cycles, as the plain plan's
                total += self.dw_path_cycles(e, op, layer)
                continue
            cycles = code_budget.layer_cycles(self.g, op, kind, layer, name, name in kernel_variants.INSTANCES,
                                              e.variants)
            total += cycles or 0
        return total

    def dw_path_cycles(self, e: _Emitter, op, layer: dict) -> int:
        """Modelled cycles of depthwise op run whole by its fastest path (kernel_variants.depthwise_candidates' first,
        the plain plan's fastest candidate: code_budget's "depthwise_m1" offer), 0 where not measured. Before this
        block_cycles counted the cortex-m set's depthwise layers 0 (bt_depthwise_s8_m1_rq2 has no figures): vww's
        least-RAM plan on cortex-m4 gave the balanced slack 1.3 M cycles of blocks less."""
        def cycles(path: str):
            return code_budget.layer_cycles(self.g, op, "depthwise_m1", layer, path, False, e.variants)

        path = kernel_variants.depthwise_candidates(layer)[0]
        fastest = cycles(path)
        if fastest is None:
            return 0
        tile = self.dw_tile_path.get(op.index, path)
        on_tile = cycles(tile) if tile != path else None  # the shared path every tile call takes, where measured
        return fastest if on_tile is None else on_tile

    # -- tensors ------------------------------------------------------------------------
    def buf(self, k: int, blk: BlockRun, t: int) -> str:
        """C initialiser of the fx_buf of tensor t at the current tile (variables r, c)."""
        wp, ps = self.pixels(blk, t)
        if t in blk.windows:
            return (f"{{{self.window_addr(k, t)}, fx{k}_t{t}_r[r][2], fx{k}_t{t}_c[c][2], {wp}, {ps}, 0}}")
        if t in self.banded:
            return f"{{0, 0, 0, {wp}, {ps}, fx_t{t}_rows}}"
        if t not in self.plan.bands:
            raise PlanError(f"tensor {t} of block {blk.p}-{blk.q - 1} has no place in the fused plan")
        off = self.plan.bands[t][0][2]
        return f"{{bt_arena + {off}, 0, 0, {wp}, {ps}, 0}}"

    def pixels(self, blk: BlockRun, t: int) -> tuple:
        """(physical width, pixel stride) of tensor t's fx_buf in block blk: a window's, else the tensor's."""
        if t in blk.windows:
            return blk.window_shape(self.g, t)[1:]
        sh = self.g.tensors[t].shape
        return sh[2], sh[3]

    def window_addr(self, k: int, t: int) -> str:
        """C address of window t of item k: a pipelined block's pool moves per tile row (pipeline_c)."""
        off = self.plan.window_offset[(k, t)]
        return f"bt_arena + fx{k}_base[r] + {off}" if k in self.plan.window_base else f"bt_arena + {off}"

    def params(self, e: _Emitter, op) -> str:
        """Declare op's constant kernel parameters once; return the struct's name."""
        n = f"op{op.index}_p"
        if op.index in self.declared:
            return n
        self.declared.add(op.index)
        g, o = self.g, op.options
        if op.opcode == "CONV_2D":
            self.conv_fields[op.index] = fields = e.conv_fields(op)
            e.declare(f"static const bt_conv_params {n} = {_struct(fields)};")
        elif op.opcode == "DEPTHWISE_CONV_2D":
            fields = dict(conv=e.conv_fields(op), depth_multiplier=o.get("depth_multiplier", 1))
            self.dw_fields[op.index] = fields
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
        elif op.opcode == "FULLY_CONNECTED":  # the kernel's parameters (as model_c's), used by fx_dense_*
            e.declare(f"static const bt_fc_params {n} = {_struct(e.fc_fields(op))};")
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

    def add_kind(self, e: _Emitter, blk: BlockRun, op) -> str:
        """fx_pw's kind for ADD op: FX_ADD_DENSE on the cortex-m set when every row a tile's call adds is shorter than
        add.c's table path takes (kernel_variants.ADD_TAB_MIN values: it would decline each; ResNet-8's one-column
        tiles), so the plan links the dense loops alone (FX_ADD_HS: the one loop half_small's parameters take), else
        FX_ADD (bt_add_s8)."""
        t = op.outputs[0]
        if not e.cortex_m_set() or self.g.tensors[t].dtype != "int8":
            return "FX_ADD"
        ch = self.g.tensors[t].shape[3]
        short = all((cb - ca) * ch < kernel_variants.ADD_TAB_MIN for _, _, _, _, ca, cb in self.out_boxes(blk, t))
        if not short:
            return "FX_ADD"
        return "FX_ADD_HS" if half_small(qparams.add_params(self.g, op)) else "FX_ADD_DENSE"

    def dw_by_channel(self, e: _Emitter, op, group: int) -> str:
        """A depthwise filter [kh][kw][C] regrouped per group of `group` channels [C/group][kh*kw][group]
        (in flash), so one group's taps are contiguous for a call on a group-channel window."""
        n = f"op{op.index}_fch"
        f = self.g.tensors[op.inputs[1]].data
        kk = f.shape[1] * f.shape[2]
        by = f.reshape(kk, -1, group).transpose(1, 0, 2).reshape(-1)
        e.declare(f"static const int8_t {n}[{f.size}] = {_ints(by)};")
        return n

    # -- blocks -------------------------------------------------------------------------
    def unit(self, lines: list) -> str:
        """A block function's text with its unit axis tables' rows FX_UNIT(r), FX_UNIT(c) (axis)."""
        text = "\n".join(lines)
        for name in sorted(self.units):
            text = re.sub(rf"\b{name}\[([rc])\]", r"FX_UNIT(\1)", text)
        return text

    def axis(self, e: _Emitter, name: str, n: int, table: list) -> None:
        """Declare a tile axis table (axis_table's rows) as `name`: a #define of the first one of the same rows where
        one is declared already (kws' blocks 1-7: one 25-row table, not seven, 1,200 bytes)."""
        if [tuple(x) for x in table] == [(i, i + 1, 0, 0) for i in range(n)]:
            # one tile a row or column, no window moves: FX_UNIT(i), a compound literal gcc folds (unit; vww's least-RAM
            # plan: op 0's 48 one-pixel tiles, 384 bytes of table, and the loads of their bounds)
            if not self.units:
                e.declare("#define FX_UNIT(i) ((const int16_t[4]){(int16_t)(i), (int16_t)((i) + 1), 0, 0})")
            self.units.add(name)
            return
        rows = _rows(table)
        first = self.axes.setdefault((n, rows), name)
        e.declare(f"static const int16_t {name}[{n}][4] = {rows};" if first == name else f"#define {name} {first}")

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
            self.axis(e, f"fx{k}_t{t}_r", n_r, rt)
            self.axis(e, f"fx{k}_t{t}_c", n_c, ct)
        row_fn = k in self.piped  # a pipelined block runs one tile row per call (pipeline_c)
        zero = "if (r == 0) " if row_fn else ""  # its accumulator starts at the first row
        lines = [pipeline_c.row_header(plan, k, n_r) if row_fn else f"static void fx_block{k}(void) {{"]
        red = g.operators[blk.geo.reduce_op] if blk.geo.reduce_op >= 0 else None
        y = blk.geo.tile_tensor
        acc_bits = 0
        dense = is_dense(g, blk.geo)
        if dense:
            fp = self.params(e, red)
            lines.append(f"  int32_t *acc = (int32_t *)(bt_arena + {plan.acc_offset[k]});")
            lines.append(f"  {zero}for (int i = 0; i < {accumulator_len(g, blk.geo)}; i++) acc[i] = 0;")
        elif red is not None:
            acc_bits = 8 * accumulator_bytes(g, blk.geo) // g.tensors[y].shape[3]
            lines.append(f"  int{acc_bits}_t *acc = (int{acc_bits}_t *)(bt_arena + {plan.acc_offset[k]});")
            lines.append(f"  {zero}for (int i = 0; i < {g.tensors[y].shape[3]}; i++) acc[i] = 0;")
        lines.append(f"  for (int c = 0; c < {n_c}; c++) {{" if row_fn else
                     f"  for (int r = 0; r < {n_r}; r++)\n  for (int c = 0; c < {n_c}; c++) {{")
        pulled = {t for t in blk.streamed if _pulled_rows(g, blk, t)}
        for t in blk.streamed:
            if t in pulled:
                continue  # its reader pulls the rows it needs, one output row at a time
            lines.append(self.shifts(k, blk, t, "    "))
            er, ec, cw = blk.window_shape(g, t)
            lines.append(f"    {{ const int16_t *R = fx{k}_t{t}_r[r], *C = fx{k}_t{t}_c[c];\n"
                         f"      const fx_buf w = {self.buf(k, blk, t)};\n"
                         f"      if (R[1] > R[0] && C[1] > C[0]) fx_source(R[0], R[1], C[0], C[1], "
                         f"fx_at(&w, R[0], C[0]), {ec * cw}, {self.image[0]}, {self.image[1]}); }}")
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
                wbox = "WR[0], WR[1], WC[0], WC[1]"
                make = self.windowed(e, k, blk, conv, "&ci", "&wv", wbox, "ch", "0", pulled)
                dp, fch = self.params(e, op), self.dw_by_channel(e, op, blk.group(w))
                body.append(f"      const fx_buf ci = {self.buf(k, blk, conv.inputs[0])}, "
                            f"wv = {self.buf(k, blk, w)};\n"
                            f"      const int16_t *WR = fx{k}_t{w}_r[r], *WC = fx{k}_t{w}_c[c];")
                if make.startswith("fx_win("):  # the runtime walks the channels (fx_chw, fx_chw_k)
                    kg = tile_kernels.chw_groups(e) and self.chw_groups_only(blk, conv, op, w)
                    ck, dk = self.chw_kernels(e, conv, op, self.kg_conv_calls(k, blk, conv, w) if kg else None)
                    fn = "fx_chw" if not ck else "fx_chw_kg" if kg else "fx_chw_k"
                    if fn == "fx_chw" and self.rv_chw_only(e, blk, conv, op, w):
                        fn = "fx_chw_rv"
                        e.used_variants[fn] = "fx_chw"  # another kernel set: its entry
                    if fn == "fx_chw_kg":
                        dk = self.dw_path(e, op, dk, self.kg_dw_calls(k, blk, op, w))
                        ck += ", " + self.kg_few(e, k, blk, w, ck)
                        entry = self.win_entry(blk, conv, w)  # its conv calls' fx_win_k entry
                        fn = {"fx_win_kb": "fx_chw_kgb", "fx_win_kr": "fx_chw_kgr"}.get(entry, fn)
                    call = f"{fn}(&{self.params(e, conv)}, {ck + ', ' if ck else ''}"
                    body.append(f"      {call}&ci, &wv, {wbox}, &{dp}, {dk + ', ' if ck else ''}{fch}, &o, {box}, "
                                f"{g.tensors[w].shape[3]});")
                elif (conv.opcode == "CONV_2D" and conv.inputs[0] in pulled
                      and self.pixels(blk, w)[1] == blk.group(w)):  # the same, pulling its input (fx_pulled_chw)
                    ax, t0 = op_axes(self.g, conv)[0], conv.inputs[0]
                    body.append(f"      fx_pulled_chw(&{self.params(e, conv)}, &ci, &wv, {wbox}, fx{k}_t{t0}_c[c][0], "
                                f"fx{k}_t{t0}_c[c][1], {ax.s}, {ax.pad}, {ax.k}, {ax.n_in}, {self.image[0]}, "
                                f"{self.image[1]}, &{dp}, {fch}, &o, {box}, {g.tensors[w].shape[3]});")
                else:
                    dw = self.depthwise(e, op, "&wv", "&o", box, "ch", fch)
                    body.append(f"      for (int ch = 0; ch < {g.tensors[w].shape[3]}; {_step('ch', blk.group(w))}) "
                                f"{{\n        {make}\n        {dw}\n      }}")
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
                kind = {"ADD": self.add_kind(e, blk, op), "SUB": "FX_SUB", "MUL": "FX_MUL", "MAXIMUM": "FX_MAX",
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
        if row_fn and red is not None:
            lines.append(f"  if (r < {n_r - 1}) return;")
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
        e.declare(self.unit(lines))
        if row_fn:
            return
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
        if conv_groups(self.g, op) > 1:
            return self.grouped_conv(e, k, blk, op, box)
        if t in pulled:
            ax = op_axes(self.g, op)[0]
            return (f"fx_pulled({kind}, &{p}, {src}, {dst}, {box}, {ch}, fx{k}_t{t}_c[c][0], fx{k}_t{t}_c[c][1], "
                    f"{ax.s}, {ax.pad}, {ax.k}, {ax.n_in}, {self.image[0]}, {self.image[1]});")
        if _inplace_source(self.g, blk, op.outputs[0]) is not None:
            if ch != "-1":
                raise PlanError(f"operator {op.index}: an in-place convolution cannot run channel by channel")
            kernel = self.tile_kernel(e, blk, op, ch, inplace=True)
            if kernel:
                return f"fx_conv_inplace_k(&{p}, {kernel}, {src}, {dst}, {box});"
            return f"fx_conv_inplace(&{p}, {src}, {dst}, {box});"
        kernel = self.tile_kernel(e, blk, op, ch) if kind == "FX_CONV" else None
        if kernel:
            entry = self.win_entry(blk, op) if (src, ch) == ("&i0", "-1") else "fx_win_k"
            if (kernel in call_cost.LEAN_TILE and entry == "fx_win_kb"
                    and (dst, box) == ("&o", "R[0], R[1], C[0], C[1]") and op.outputs[0] not in self.banded):
                if LEAN_HELPER not in e.decls:
                    e.decls.append(LEAN_HELPER)
                return f"fx_lean_k(&{p}, {kernel}, &i0, &o, R, C);"
            return f"{entry}(&{p}, {kernel}, {src}, {dst}, {box}, {ch});"
        if kind == "FX_DW":
            return self.depthwise(e, op, src, dst, box, ch, fch, (k, blk))
        if kind == "FX_CONV" and ch == "-1" and self.g.tensors[op.outputs[0]].shape[3] > 1:
            one = self.box_variant(e, blk, op) if src == "&i0" else None
            if self.rv_pw1(e, blk, op, one):
                call = f"fx_rv_pw1(&{p}, {src}, {dst}, {box});"
                self.pw1_calls[call] = f"{self.win_entry(blk, op)}(&{p}, {one}, {src}, {dst}, {box}, -1);"
                return call
            if one:  # fx_win_k on the variant every call takes: the plan links no other (box_variant)
                e.used_variants[one] = kernel_variants.DISPATCHERS["conv"]
                return f"{self.win_entry(blk, op)}(&{p}, {one}, {src}, {dst}, {box}, -1);"
            # every set's box paths take one output channel only (fused_ref.h fx_win_conv_all): not linked
            return f"fx_win_conv_all(&{p}, {src}, {dst}, {box});"
        i = op.inputs[0]
        if kind in ("FX_AVGP", "FX_MAXP") and (src, ch) == ("&i0", "-1") and i not in blk.windows and i in self.banded:
            # every call reads row bands (fused_ref.h fx_win_avgpr): no box path, no pool dispatcher linked
            return f"fx_win_{kind[3:].lower()}r(&{p}, {src}, {dst}, {box});"
        return f"fx_win({kind}, &{p}, {src}, {dst}, {box}, {ch}, {fch});"

    def box_variant(self, e: _Emitter, blk: BlockRun, op) -> str | None:
        """The variant the board's table picks (kernel_variants.choose_codegen, tile) for every kernel call conv op's
        all-channel tiles make, each box's fields as tile_kernels.win_geom gives them (its calls worked out:
        tile_kernels.call_classes); where they differ or are not worked out, the table's last row when it holds on any
        call, except on cortex-m; else None (no table, the variants-only mode: kernel_variants.instances, an output not
        int8). fx_win_k then calls it, not the set's dispatcher, so the plan links no variant it never calls
        (ResNet-8's least-RAM plan on riscv32: bt_conv_s8_pointwise, 1.8 KB, for its two 1x1 layers of stride 2 on the tiles whose pad_left is 0, which the
        plain plan's code budget gives bt_conv_s8_general too; benchmarks/code_size.py --fused)."""
        if e.variants is None or not kernel_variants.instances() or self.g.tensors[op.outputs[0]].dtype != "int8":
            return None
        f = self.conv_fields[op.index]
        t, i = op.outputs[0], op.inputs[0]
        layer, ib, out_wp = e.conv_layer(op, f), self.tile_bufs(0, blk, i), self.pixels(blk, t)[0]
        ct = axis_table(blk.cols, t, len(blk.cols.bounds) - 1, t in blk.windows)
        names, boxes = set(), []
        for r, c, ra, rb, ca, cb in self.out_boxes(blk, t):
            q = tile_kernels.win_geom(f, ib[r][c], {"ps": f["out"]["pixel_stride"]}, ca, cb, -1)[1]
            names.add(kernel_variants.choose_codegen(e.variants[1], "conv", dict(layer, **q), tile=True))
            boxes.append((ra, rb, ca, cb, i in self.banded, t not in self.banded and ca == ct[c][2] and cb - ca == out_wp,
                          q["pad_left"]))
        if len(names) == 1 and tile_kernels.call_classes(f, boxes) is not None:
            return names.pop()
        last, cond = e.variants[1]["conv"][-1]
        # calls of several variants, or not all worked out: the table's last row where it holds on any call (its
        # conditions the others' relaxed), on a set whose variants differ little on a tile (not cortex-m's: its
        # instances' loops, fx_win_k's tile kernels, are the fast ones)
        return last if cond is kernel_variants._always and not e.cortex_m_set() else None

    def rv_pw1(self, e: _Emitter, blk: BlockRun, op, one: str | None) -> bool:
        """On the riscv set, does model.c call kernels/riscv/fused.c's fx_rv_pw1 for conv op's all-channel tiles, in
        place of fx_win_k's entry on box_variant's choice `one`? Where that is bt_conv_s8_general on an unpadded 1x1
        layer without multiplier INT32_MIN whose every tile is one column wide: bt_conv_s8_general runs such a call
        pixel by pixel in its border loop (an interior needs two columns), fx_rv_pw1 the same loop on the layer's
        parameters in 0.9 KB of the 4.7 KB of the entry and bt_conv_s8_general (kws's least-RAM plan on riscv32: its
        four 1x1 layers, 125 one-pixel tiles each)."""
        if one != "bt_conv_s8_general" or not e.riscv_set():
            return False
        f = self.conv_fields[op.index]
        if (f["kh"], f["kw"], f["pad_top"], f["pad_left"]) != (1, 1, 0, 0):
            return False
        if any(cb - ca != 1 for _, _, _, _, ca, cb in self.out_boxes(blk, op.outputs[0])):
            return False
        return _rv_rq_ok(self.g, op)

    # calls that link bt_conv_s8_general (through the dispatcher bt_conv_s8 or by name) whatever fx_rv_pw1 takes
    RV_GENERAL = re.compile(r"\bbt_conv_s8(_general)?\b|\b(fx_win|fx_pulled)\(FX_CONV,|"
                            r"\b(fx_win_conv|fx_win_conv_all|fx_chw|fx_chw_k|fx_pulled_chw|fx_conv_inplace)\(")

    def rv_pw1_keep(self, e: _Emitter) -> None:
        """Keep the fx_rv_pw1 calls (rv_pw1) where the plan then links no bt_conv_s8_general, else give them back their
        fx_win_k entry's calls on it: with the general kernel linked for other convs fx_rv_pw1 is 0.9 KB more (ResNet-8's
        least-RAM plan on riscv32, whose 1x1 layers of stride 2 have one-column tiles beside its 3x3 layers: 25.6 ->
        26.6 KiB, 1.29x -> 1.34x its plain plan's)."""
        if not self.pw1_calls:
            return
        text = "\n".join(e.decls + e.body)
        if "bt_conv_s8_general" in e.used_variants or self.RV_GENERAL.search(text):
            for lines in (e.decls, e.body):
                for new, old in self.pw1_calls.items():
                    lines[:] = [t.replace(new, old) for t in lines]
            e.used_variants["bt_conv_s8_general"] = kernel_variants.DISPATCHERS["conv"]
        else:
            e.used_variants["fx_rv_pw1"] = "fx_win_conv_all"  # another kernel set: its entry

    def win_entry(self, blk: BlockRun, op, t: int | None = None) -> str:
        """The fx_win_k entry of conv op's tiles (fused_ref.h win_kind_o; its output boxes, of tensor t (default its
        output; fx_chw_kg's: the window), from its input's fx_buf):
        fx_win_kb where no call reads row bands or makes column calls (a 1x1 stride-1 conv without padding over a box
        of several rows into an unbanded buffer), fx_win_kr where every call reads row bands and none makes column
        calls, else fx_win_k (every path; the others are its code less the paths no call takes: 0.4 and 0.7 KB of its
        1.9 KB). entries() makes them one entry where a call needs fx_win_k."""
        f = self.conv_fields[op.index]
        t, i = op.outputs[0] if t is None else t, op.inputs[0]
        pw = tile_kernels.pointwise(f) and f["stride_h"] == 1 and f["stride_w"] == 1
        if pw and not (t not in blk.windows and t in self.banded) and any(
                rb - ra > 1 for _, _, ra, rb, _, _ in self.out_boxes(blk, t)):
            return "fx_win_k"
        return "fx_win_kr" if i not in blk.windows and i in self.banded else "fx_win_kb"

    def shared_entries(self, e: _Emitter) -> None:
        """The depthwise tiles dw_path found the plain plan's shared entries take (tile_kernels.dw_shared_entries) on
        the entry of those the model's plain layers link anyway: bt_dw_rows_q4e_RL of the least row length RL a plain
        layer's bt_dw_rows_q4_RL widens its rows in (model_c: e.dw_rows; its bt_dw_q4e_RL, the driver dw_q4s), bt_dw_s2g_N
        where a plain layer calls a bt_dw_s2g entry (dw_s2, bt_dws2g; bt_dws2_tN, N = out.w % 6, a few hundred bytes
        at most); else the path dw_path_of_calls found (vww's least-RAM plan on cortex-m4: its ops 1 and 3 on
        bt_dw_rows_q4e_16 and bt_dw_s2g_0, op 9's and op 11's, not dw_small's one-row bands, 4.6 KB)."""
        rls = {int(v.rsplit("_", 1)[1]) for v, _ in e.dw_rows.values()}
        s2g = any(v.startswith("bt_dw_s2g") for v in e.used_variants)
        for i, ((kind, options), other) in sorted(self.dw_shared.items()):
            name = other
            if kind == "rows" and rls & set(options):
                rl = min(rls & set(options))
                name, self.dw_tile_path[i] = f"bt_dw_rows_q4e_{rl}", f"bt_dw_rows_q4_{rl}"
            elif kind == "s2g" and s2g:
                name, self.dw_tile_path[i] = f"bt_dw_s2g_{options[0]}", "bt_dw_s2g"
            if name != kernel_variants.DISPATCHERS["depthwise"]:
                e.used_variants[name] = kernel_variants.DISPATCHERS["depthwise"]
            e.decls[:] = [d.replace(f"@dw{i}@", name) for d in e.decls]
            e.body[:] = [b.replace(f"@dw{i}@", name) for b in e.body]

    @staticmethod
    def entries(e: _Emitter) -> None:
        """The fx_win_k entries (win_entry; fx_chw_kgb, fx_chw_kgr: fx_chw_kg on them) as the model's calls need them,
        its text rewritten: fx_win_k (fx_chw_kg) for every call where one calls it (or fx_chw_kg, which calls it): its
        code holds the others'."""
        text = "\n".join(e.decls + e.body)
        if "fx_chw_kg" in text:  # it links fused_ref.h win_dk_ch0: the all-channel depthwise calls share it
            for lines in (e.decls, e.body):
                lines[:] = [re.sub(r"fx_win_dk\(([^;]*), -1, ([^,;]+)\);", r"fx_win_dk_allg(\1, \2);", b) for b in lines]
        if any(f"{fn}(" in text for fn in ("fx_win_k", "fx_chw_kg")):
            for old in ("fx_win_kb(", "fx_win_kr(", "fx_chw_kgb(", "fx_chw_kgr("):
                new = old[:-2] + "("
                e.decls[:] = [d.replace(old, new) for d in e.decls]
                e.body[:] = [b.replace(old, new) for b in e.body]

    def grouped_conv(self, e: _Emitter, k: int, blk: BlockRun, op, box: str) -> str:
        """The C loop computing box of grouped CONV_2D op (model.ops.conv_groups), one fx_win call per group as
        model_c's layer loop: group gk's parameters (its filter rows, biases, multipliers and shifts; in.c its
        filter depth, out.c its output channels) in op{N}_pg[gk], its input and output channel views the tile's
        buffers moved gk * depth / gk * outputs bytes on (a row-banded tensor: a table of its rows moved so).
        The geometry keeps such a conv off channelwise, in-place and pulled windows (plan/fusion/geometry.py)."""
        g, n = self.g, f"op{op.index}"
        groups, (x, y) = conv_groups(g, op), (op.inputs[0], op.outputs[0])
        flt = g.tensors[op.inputs[1]].shape
        per, depth = flt[0] // groups, flt[3]
        if f"{n}_pg" not in self.declared:
            self.declared.add(f"{n}_pg")
            whole = self.conv_fields[op.index]
            step = dict(filter=per * flt[1] * flt[2] * depth, bias=per, multiplier=per, shift=per)
            per_group = [dict(whole, **{"in": dict(whole["in"], c=depth), "out": dict(whole["out"], c=per)},
                              **{f: whole[f] if whole[f] == "0" else f"{whole[f]} + {gk * d}"
                                 for f, d in step.items()}) for gk in range(groups)]
            e.declare(f"/* op {op.index}: {groups} groups of {depth} input and {per} output channels */\n"
                      f"static const bt_conv_params {n}_pg[{groups}] = {{{', '.join(map(_struct, per_group))}}};")
        views = [self.group_buf(e, k, blk, t, d, groups) for t, d in ((x, depth), (y, per))]
        return (f"for (int32_t gk = 0; gk < {groups}; gk++) {{\n"
                f"        const fx_buf gi = {views[0]}, go = {views[1]};\n"
                f"        fx_win(FX_CONV, &{n}_pg[gk], &gi, &go, {box}, -1, 0);\n      }}")

    def group_buf(self, e: _Emitter, k: int, blk: BlockRun, t: int, step: int, groups: int) -> str:
        """buf(k, blk, t) moved gk * step bytes on (a grouped conv's channel view of group gk); a row-banded
        tensor's view reads a table of its rows moved so, per group (declared once)."""
        wp, ps = self.pixels(blk, t)
        if t in blk.windows:
            return f"{{{self.window_addr(k, t)} + gk * {step}, fx{k}_t{t}_r[r][2], fx{k}_t{t}_c[c][2], {wp}, {ps}, 0}}"
        if t in self.banded:
            name = f"fx_t{t}_grows{step}"
            if name not in self.declared:
                self.declared.add(name)
                rows = self.row_at[t]
                tables = ", ".join("{" + ", ".join(f"bt_arena + {rows[r] + gk * step}" for r in range(len(rows)))
                                   + "}" for gk in range(groups))
                e.declare(f"static int8_t *const {name}[{groups}][{len(rows)}] = {{{tables}}};")
            return f"{{0, 0, 0, {wp}, {ps}, {name}[gk]}}"
        return self.buf(k, blk, t).replace(", 0, 0, ", f" + gk * {step}, 0, 0, ", 1)

    def chw_conv_kernel(self, e: _Emitter, conv, calls=None):
        """fx_chw_k's conv kernel for conv: its tile kernel of shape "grp" (declared once; tile_kernels.grouped; calls:
        what its calls share, kg_conv_calls), or None (no such variant, or the set's fx_chw takes no kernels)."""
        if not tile_kernels.chw_groups(e) or self.g.tensors[conv.outputs[0]].dtype != "int8":
            return None
        if conv.index not in self.grouped:
            self.params(e, conv)
            fields = self.conv_fields[conv.index]
            name = tile_kernels.grouped(e, e.conv_layer(conv, fields))
            src = self.pixels(self.blk_of[conv.index], conv.inputs[0]) if calls else ()
            self.grouped[conv.index] = name and tile_kernels.define(e, conv, fields, name, 0, src, (), "grp", calls,
                                                                    self.offer(e, conv, name))
        return self.grouped[conv.index]

    def chw_kernels(self, e: _Emitter, conv, op, calls=None) -> tuple:
        """(conv kernel, depthwise kernel) fx_chw_k takes for conv and depthwise op: the conv's "grp" tile kernel
        (chw_conv_kernel) or the variant the board's table picks for the layer, the depthwise's variant (each
        valid on any group of at least FX_CHW_K_MIN of the conv's channels, and on any group of the
        depthwise's), or (None, None) when both are the dispatchers or the set's fx_chw takes no kernels
        (tile_kernels.chw_groups): fx_chw."""
        names = [kernel_variants.DISPATCHERS["conv"], kernel_variants.DISPATCHERS["depthwise"]]
        if not tile_kernels.chw_groups(e):
            return None, None
        if self.g.tensors[conv.outputs[0]].dtype == "int8":
            names[0] = (self.chw_conv_kernel(e, conv, calls)
                        or e.kernel("conv", e.conv_layer(conv, self.conv_fields[conv.index])))
        if self.g.tensors[op.outputs[0]].dtype == "int8":
            fields = self.dw_fields[op.index]
            names[1] = e.kernel("depthwise", dict(e.conv_layer(op, fields["conv"]),
                                                  depth_multiplier=fields["depth_multiplier"]))
        return (None, None) if names == [kernel_variants.DISPATCHERS["conv"],
                                         kernel_variants.DISPATCHERS["depthwise"]] else tuple(names)

    def chw_groups_only(self, blk: BlockRun, conv, op, w: int) -> bool:
        """Does no tile of fx_chw_k's channelwise window w (conv into it, depthwise op from it) reach the set's
        one-channel paths (so model.c calls fx_chw_kg, which links none of them)? A window of more than one channel
        never does; a one-channel window when cortex-m/fused.c's cm_chw_pm takes every tile (its checks, worked out
        here on the block's tables) in groups of more than one channel."""
        g = self.g
        ps, channels = self.pixels(blk, w)[1], g.tensors[w].shape[3]
        if ps > 1:
            return True
        f = g.tensors[conv.inputs[1]].shape  # [out, kh, kw, in]
        taps = g.tensors[op.inputs[1]].shape[1] * g.tensors[op.inputs[1]].shape[2]
        if op.options.get("depth_multiplier", 1) != 1 or (f[1] == 3 and f[2] * f[3] == 9) or taps > 9:
            return False
        n_r, n_c = len(blk.rows.bounds) - 1, len(blk.cols.bounds) - 1
        t = op.outputs[0]
        orows, ocols = axis_table(blk.rows, t, n_r, t in blk.windows), axis_table(blk.cols, t, n_c, t in blk.windows)
        wrows, wcols = axis_table(blk.rows, w, n_r, True), axis_table(blk.cols, w, n_c, True)
        for r in range(n_r):
            for c in range(n_c):
                if orows[r][1] <= orows[r][0] or ocols[c][1] <= ocols[c][0]:
                    continue  # model.c skips an empty box
                (ra, rb, r0, _), (ca, cb, c0, _) = wrows[r], wcols[c]
                if ra != r0 or ca != c0 or rb <= ra or cb <= ca:
                    return False
                n = (CM_GRP_BUF - 4) // ((rb - ra) * (cb - ca) + taps)
                n = channels if n >= channels else n & ~3
                if n < CM_GRP_MIN or channels % n == 1:
                    return False
        return True

    def depthwise(self, e: _Emitter, op, src: str, dst: str, box: str, ch: str, fch: str, at=None) -> str:
        """The C call computing box of depthwise op: through the variant the board's table picks for the layer
        (fx_win_dk; the variant's conditions hold on any group of the layer's channels), or the one path of it every
        call takes (at: (item, block) of an all-channel call, dw_path), else fx_win (the set's dispatcher
        bt_depthwise_s8)."""
        p = self.params(e, op)
        fields = self.dw_fields[op.index]
        layer = dict(e.conv_layer(op, fields["conv"]), depth_multiplier=fields["depth_multiplier"])
        if self.g.tensors[op.outputs[0]].dtype == "int8":
            fn = e.kernel("depthwise", layer)
            if at is not None and ch == "-1" and fn in tile_kernels.DW_M1:
                calls = self.box_dw_calls(*at, op)
                cols = self.dw_cols(e, op, fn, *at, calls)
                fn = self.dw_path(e, op, fn, calls, shared=True)
                if cols is not None:
                    return self.defer(f"fx_win_dk_cols(&{p}, @entry@, {src}, {dst}, {box});", cols,
                                      f"fx_win_dk(&{p}, {fn}, {src}, {dst}, {box}, {ch}, {fch});", fn)
            # on all of several channels a set whose box paths take one channel (riscv: fx_hooks.h's) never takes them:
            # fx_win_dk on its dispatcher does not link them (tiny's least-RAM plan on riscv32: dw1_ch, 2.7 KB)
            one = (ch == "-1" and e.variants is not None and kernel_variants.instances() and not e.cortex_m_set()
                   and self.g.tensors[op.outputs[0]].shape[3] > 1)
            if fn != kernel_variants.DISPATCHERS["depthwise"] or one:
                return f"fx_win_dk(&{p}, {fn}, {src}, {dst}, {box}, {ch}, {fch});"
        return f"fx_win(FX_DW, &{p}, {src}, {dst}, {box}, {ch}, {fch});"

    def dw_cols(self, e: _Emitter, op, fn: str, k: int, blk: BlockRun, rows) -> list | None:
        """The entries (tile_kernels.dw_column_entries: its own first) model.c may pass to fx_win_dk_cols for depthwise
        op's all-channel tiles (a call per output column: tile_kernels.dw_cols_entry) where some box is narrower than
        its output buffer, so that fx_win_dk would make a call per output row of it (rows: those calls, box_dw_calls'),
        and those calls would take the box path or its general pixels; else None."""
        ob = self.tile_bufs(k, blk, op.outputs[0])
        if not any(cb - ca != ob[r][c]["wp"] or ca != ob[r][c]["c0"] for r, c, _, _, ca, cb in
                   self.out_boxes(blk, op.outputs[0])):
            return None
        values = self.dw_values(e, op)
        fast = tile_kernels.DW_M1[fn]
        if rows is None or tile_kernels.dw_path_of_calls(rows, values, fast) not in (
                "bt_dw_box_rq2", "bt_dw_pix_rq2", "bt_dw_pix4_rq2"):
            return None
        calls = self.box_dw_calls(k, blk, op, columns=True)
        return (tile_kernels.dw_column_entries(calls, values, fast) or None) if calls is not None else None

    def dw_values(self, e: _Emitter, op) -> dict:
        """Depthwise op's per-channel "bias", "multipliers", "shifts" (tile_kernels' values)."""
        conv = e.conv_layer(op, self.dw_fields[op.index]["conv"])
        b = prepare.bias_input(self.g, op)
        bias = [int(v) for v in self.g.tensors[b].data] if b >= 0 else [0] * len(conv["multipliers"])
        return dict(bias=bias, multipliers=conv["multipliers"], shifts=conv["shifts"])

    def dw_path(self, e: _Emitter, op, fn: str, calls, shared: bool = False) -> str:
        """fn, or when it is a variant dispatching by path (tile_kernels.DW_M1) and every one of calls (the depthwise
        calls op's tiles make: tile_kernels.dw_box_calls) takes the same path, that path (declared as a variant);
        shared (an all-channel fx_win_dk call) on the cortex-m set: a placeholder for the plain plan's shared entry
        shared_entries puts there where every call may take it (tile_kernels.dw_shared_entries)."""
        if fn not in tile_kernels.DW_M1 or calls is None:
            return fn
        values = self.dw_values(e, op)
        fast = tile_kernels.DW_M1[fn]
        paths = tile_kernels.dw_call_paths(calls, values, fast)
        raw = {path for path, _ in paths}
        if len(raw) == 1:  # the shared path every tile call takes, for block_cycles
            self.dw_tile_path[op.index] = raw.pop()
        name = tile_kernels.dw_path_of_calls(calls, values, fast, paths, columns=False)
        shared = tile_kernels.dw_shared_entries(calls, values, fast) if shared and e.cortex_m_set() else None
        if shared is not None:  # the plain plan's entry where its layers link it (shared_entries), else name
            self.dw_shared[op.index] = (shared, name or fn)
            return f"@dw{op.index}@"
        if name is None:
            return fn
        column = tile_kernels.dw_path_of_calls(calls, values, fast, paths)
        if column != name:  # whole-height columns on the rows path (tile_kernels.dw_column_entry): resolve_columns
            return self.defer("@entry@", tile_kernels.dw_column_entries(calls, values, fast), name, name)
        e.used_variants[name] = kernel_variants.DISPATCHERS["depthwise"]
        return name

    def defer(self, text: str, entries: list, fallback: str, fallback_entry: str) -> str:
        """A token in model.c's text for a depthwise's column calls (text, @entry@ in it one of entries, the rows path's
        entries that run them, its own first: dw_path's whole columns, depthwise's fx_win_dk_cols) or, where each
        would link code the firmware does not link anyway, the calls it makes else (fallback, on fallback_entry):
        resolve_columns puts one there."""
        token = f"@dwc{len(self.deferred)}@"
        self.deferred.append((token, text, entries, fallback, fallback_entry))
        return token

    def resolve_columns(self, e: _Emitter, deferred: list) -> None:
        """Each deferred depthwise's column calls (defer) on the first of their entries the firmware links anyway
        (another layer's call of it, a plain layer's as model_c._dw_rows_calls settled it, or a tile's), at
        optimize_code=speed on their own, else its other calls: a column entry is
        up to 12 KB of code (bt_dw_rows_rq2, the general rows path; a bt_dw_rows_q4_RL ~4 KB) where the calls it
        replaces run on the box path's code (MLPerf vww's least-RAM plan on cortex-m4: 10,992,646 -> 9,997,529
        instructions for 16.5 KiB more code, benchmarks/code_size.py --fused 30.5 -> 47.0 KiB)."""
        made = "\n".join(e.decls + e.body)
        linked = {x for _, _, entries, _, _ in deferred for x in entries if re.search(rf"\b{x}\b", made)}
        for token, text, entries, fallback, fallback_entry in reversed(deferred):  # (a later one's text may hold
            # an earlier one's token)
            entry = next((x for x in entries if x in linked), entries[0] if e.code_speed else None)
            use = entry is not None
            text = text.replace("@entry@", entry) if use else text
            for lines in (e.decls, e.body):
                lines[:] = [x.replace(token, text if use else fallback) for x in lines]
            dispatcher = kernel_variants.DISPATCHERS["depthwise"]
            if use:
                e.used_variants[entry] = dispatcher
                if not any(re.search(rf"\b{fallback_entry}\b", x) for x in e.decls + e.body):
                    e.used_variants.pop(fallback_entry, None)  # (dw_path's, passed by no other call)
            elif fallback_entry != dispatcher:
                e.used_variants[fallback_entry] = dispatcher
        if deferred:
            self.entries(e)  # a fallback's fx_win_dk on fx_win_dk_allg where the plan calls fx_chw_kg

    def tile_bufs(self, k: int, blk: BlockRun, t: int) -> list:
        """[r][c]: tensor t's fx_buf at each tile as tile_kernels.win_geom reads it (wp, ps, r0, c0, rows)."""
        n_r, n_c = len(blk.rows.bounds) - 1, len(blk.cols.bounds) - 1
        wp, ps = self.pixels(blk, t)
        win = t in blk.windows
        rt, ct = axis_table(blk.rows, t, n_r, win), axis_table(blk.cols, t, n_c, win)
        rows = None
        if t in self.banded:
            rows = [self.row_at[t][r] for r in range(len(self.row_at[t]))]
        return [[dict(wp=wp, ps=ps, r0=rt[r][2] if win else 0, c0=ct[c][2] if win else 0, rows=rows)
                 for c in range(n_c)] for r in range(n_r)]

    def out_boxes(self, blk: BlockRun, t: int):
        """(r, c, ra, rb, ca, cb) of every tile whose box of tensor t is not empty (model.c skips the others)."""
        n_r, n_c = len(blk.rows.bounds) - 1, len(blk.cols.bounds) - 1
        rt, ct = axis_table(blk.rows, t, n_r, t in blk.windows), axis_table(blk.cols, t, n_c, t in blk.windows)
        for r in range(n_r):
            for c in range(n_c):
                if rt[r][1] > rt[r][0] and ct[c][1] > ct[c][0]:
                    yield r, c, rt[r][0], rt[r][1], ct[c][0], ct[c][1]

    def call_pixels(self, blk: BlockRun, op, lean: bool, cols: int) -> list:
        """The output pixels of each kernel call conv op's all-channel tiles make (call_cost.call_pixels)."""
        t, i = op.outputs[0], op.inputs[0]
        ct = axis_table(blk.cols, t, len(blk.cols.bounds) - 1, t in blk.windows)
        return call_cost.call_pixels(self.conv_fields[op.index], self.out_boxes(blk, t), ct, self.pixels(blk, t)[0],
                                     i in self.banded, t in self.banded, lean, cols)

    def box_dw_calls(self, k: int, blk: BlockRun, op, columns: bool = False):
        """The kernel calls of depthwise op's all-channel tiles (fx_win_dk with ch -1; columns: fx_win_dk_cols'), or
        None."""
        f = self.dw_fields[op.index]["conv"]
        t, i = op.outputs[0], op.inputs[0]
        ib, ob = self.tile_bufs(k, blk, i), self.tile_bufs(k, blk, t)
        calls = []
        for r, c, ra, rb, ca, cb in self.out_boxes(blk, t):
            more = (tile_kernels.dw_col_calls(f, ib[r][c], ob[r][c], ra, rb, ca, cb) if columns
                    else tile_kernels.dw_box_calls(f, ib[r][c], ob[r][c], ra, rb, ca, cb, -1))
            if more is None:
                return None
            calls += more
        return calls

    def kg_groups(self, blk: BlockRun, w: int, r: int, c: int) -> list:
        """[(first channel, channels)] of fx_chw_kg's groups at tile (r, c) on channelwise window w (cortex-m/fused.c
        cm_chw_pm's on a one-channel window, as chw_groups_only found them; the window's channels else)."""
        ps, channels = self.pixels(blk, w)[1], self.g.tensors[w].shape[3]
        if ps > 1:
            return [(ch, ps) for ch in range(0, channels, ps)]
        op = next(o for o in self.g.operators if o.inputs and o.inputs[0] == w and o.opcode == "DEPTHWISE_CONV_2D")
        taps = self.g.tensors[op.inputs[1]].shape[1] * self.g.tensors[op.inputs[1]].shape[2]
        wr = axis_table(blk.rows, w, len(blk.rows.bounds) - 1, True)[r]
        wc = axis_table(blk.cols, w, len(blk.cols.bounds) - 1, True)[c]
        n = (CM_GRP_BUF - 4) // ((wr[1] - wr[0]) * (wc[1] - wc[0]) + taps)
        n = channels if n >= channels else n & ~3
        return [(ch, min(n, channels - ch)) for ch in range(0, channels, n)]

    def kg_few(self, e: _Emitter, k: int, blk: BlockRun, w: int, ck: str) -> str:
        """fx_chw_kg's kernel for a group of fewer than FX_CHW_K_MIN channels on channelwise window w: ck where no tile
        has such a group (never called: the plan links no other), else cortex-m/fused.c FX_CONV_FEW's."""
        if all(n >= FX_CHW_K_MIN for r, c, *_ in self.out_boxes(blk, op_after(self.g, w))
               for _, n in self.kg_groups(blk, w, r, c)):
            return ck
        e.used_variants[FX_CONV_FEW] = kernel_variants.DISPATCHERS["conv"]
        return FX_CONV_FEW

    def kg_conv_calls(self, k: int, blk: BlockRun, conv, w: int) -> dict:
        """What fx_chw_kg's calls of conv's kernel (its groups of at least FX_CHW_K_MIN channels) share: "shape"
        (tile_kernels.call_shape) and "channels" (None: they differ)."""
        self.blk_of[conv.index] = blk
        n_r, n_c = len(blk.rows.bounds) - 1, len(blk.cols.bounds) - 1
        wr, wc = axis_table(blk.rows, w, n_r, True), axis_table(blk.cols, w, n_c, True)
        wp = self.pixels(blk, w)[0]
        ib, f = self.tile_bufs(k, blk, conv.inputs[0]), self.conv_fields[conv.index]
        boxes, ns = [], set()
        for r, c, *_ in self.out_boxes(blk, op_after(self.g, w)):
            groups = [n for _, n in self.kg_groups(blk, w, r, c) if n >= FX_CHW_K_MIN]
            ns |= set(groups)
            ra, rb, r0, _ = wr[r]
            ca, cb, c0, _ = wc[c]
            whole = self.pixels(blk, w)[1] == 1 or (ca == c0 and cb - ca == wp)
            pad_left = tile_kernels.win_geom(f, ib[r][c], {"ps": 0}, ca, cb, -1)[1]["pad_left"]
            boxes += [(ra, rb, ca, cb, conv.inputs[0] in self.banded, whole, pad_left)] if groups else []
        return dict(shape=tile_kernels.call_shape(self.conv_fields[conv.index], boxes),
                    channels=ns.pop() if len(ns) == 1 else None)

    def kg_dw_calls(self, k: int, blk: BlockRun, op, w: int):
        """The depthwise kernel calls fx_chw_kg makes for depthwise op on channelwise window w (its groups as
        chw_groups_only found them: cortex-m/fused.c cm_chw_pm's, a row a call, on a one-channel window; the window's
        channels a group else), or None."""
        f = self.dw_fields[op.index]["conv"]
        t = op.outputs[0]
        ps = self.pixels(blk, w)[1]
        wb, ob = self.tile_bufs(k, blk, w), self.tile_bufs(k, blk, t)
        calls = []
        for r, c, ra, rb, ca, cb in self.out_boxes(blk, t):
            win = wb[r][c]
            if ps > 1:
                groups = [(ch, win, ra, rb) for ch, _ in self.kg_groups(blk, w, r, c)]
            else:
                wr = axis_table(blk.rows, w, len(blk.rows.bounds) - 1, True)[r]
                wc = axis_table(blk.cols, w, len(blk.cols.bounds) - 1, True)[c]
                groups = []
                for ch, n in self.kg_groups(blk, w, r, c):
                    gw = dict(wp=wc[1] - wc[0], ps=n, r0=wr[0], c0=wc[0], rows=None)
                    groups += [(ch, gw, y, y + 1) for y in range(ra, rb)]
            for ch, ib, ya, yb in groups:
                more = tile_kernels.dw_box_calls(f, ib, ob[r][c], ya, yb, ca, cb, ch)
                if more is None:
                    return None
                calls += more
        return calls

    def tile_kernel(self, e: _Emitter, blk: BlockRun, op, ch: str, inplace: bool = False):
        """Declare conv op's tile kernel (tile_kernels.py) when its calls have more than one output channel
        and the board instantiates its variant (inplace: for fx_conv_inplace_k); its name, else None (the
        runtime calls bt_conv_s8)."""
        group = blk.group(op.outputs[0]) if ch != "-1" else 0
        fields = self.conv_fields[op.index]
        if tile_kernels.helium(e) and group != 1 and self.g.tensors[op.outputs[0]].dtype == "int8":
            return tile_kernels.define_kb(e, self.g, op, f"op{op.index}_p", fields["input_offset"])
        name = tile_kernels.variant(e, e.conv_layer(op, fields), group) if group != 1 else None
        t, i = op.outputs[0], op.inputs[0]
        if name is None or self.g.tensors[t].dtype != "int8":
            return None
        n_r, n_c = len(blk.rows.bounds) - 1, len(blk.cols.bounds) - 1
        rows = [r[:2] for r in axis_table(blk.rows, t, n_r, t in blk.windows)]
        cols = [c[:2] for c in axis_table(blk.cols, t, n_c, t in blk.windows)]
        col = tile_kernels.one_column(fields, cols, rows, bool({t, i} & self.banded), tile_kernels.col_pixels(e),
                                      self.pixels(blk, t)[0], t in self.banded)
        shape = "inplace" if inplace else "col" if col else "box"
        if not tile_kernels.worth(name, cols, rows, shape, fields["in"]["c"]):
            return None
        calls = None
        if shape == "box" and not group:
            out_wp = self.pixels(blk, t)[0]
            ct = axis_table(blk.cols, t, n_c, t in blk.windows)
            ib = self.tile_bufs(0, blk, i)
            boxes = [(ra, rb, ca, cb, i in self.banded, t not in self.banded and ca == ct[c][2] and cb - ca == out_wp,
                      tile_kernels.win_geom(fields, ib[r][c], {"ps": 0}, ca, cb, -1)[1]["pad_left"])
                     for r, c, ra, rb, ca, cb in self.out_boxes(blk, t)]
            calls = dict(shape=tile_kernels.call_shape(fields, boxes, row_loop=True),
                         classes=tile_kernels.dispatched(tile_kernels.call_classes(fields, boxes)),
                         paired=e.instance_rate is not None and tile_kernels.paired(fields, boxes))
        src, dst = self.pixels(blk, i), self.pixels(blk, t)
        # the shared variants' per-call work (the channel pairs' set-up, bt_pm_loop3r's entry) is paid a tile call, which
        # their cost lines (measured on whole layers) do not hold: offered to every box and column tile, balanced put
        # mbv2-w0.35's least-RAM ops 5, 6 and 12-15 on them, modelled +4 % and run +13 % (streamed, 79.9 -> 90.2 M
        # instructions against `--optimize-code speed`). Offered only where measured no slower (shared_tile), the
        # calls priced by their pixels (call_cost.calls_factor: a pass's pair set-up, a shared pm variant's
        # SHARED_SETUP more than the instance's): the instance's, the lean ones' (fx_lean_k's on fx_win_kb's tiles)
        shared, entry = shared_tile(shape, group, i in self.banded), self.win_entry(blk, op)
        lean = lean_tile(group) and not inplace and t not in self.banded and lean_entry(entry, fields)
        pixels = tuple(self.call_pixels(blk, op, k, tile_kernels.col_pixels(e))
                       for k in (False, not shared and entry == "fx_win_kb")) if shared or lean else None
        form = self.offer(e, op, name, shared, tile_kernels.identity(name, fields, group, src, dst, shape, calls), lean,
                          pixels)
        if form is False:  # the variant itself, code it shares with the other layers calling it
            name = e.code_choice.get(op.index, (name,))[0] if e.code_choice is not None else name
            e.used_variants[name] = kernel_variants.DISPATCHERS["conv"]
            return name
        return tile_kernels.define(e, op, fields, name, group, src, dst, shape, calls, form, self.tile_shares)

    def offer(self, e: _Emitter, op, name: str, shared: bool = False, identity: str | None = None,
              lean: bool = False, pixels: list | None = None):
        """Offer conv op's tile kernel (its own instance of variant `name`) to the code budget as a plain layer's own
        instance is offered (Emitter.kernel, own_instance): its full, medium and compact forms and, shared, the
        variant itself and the table's later rows that hold on the layer (each relaxes its conditions; vww's 1x1 op 6:
        the shared bt_conv_s8_pm_rq2_ssat its plain plan calls) (fx_win_k calls it on the tile's bt_conv_params as it calls the tile kernel: valid on every
        call, tile_kernels.variant), their bytes and the layer's modelled cycles run whole (code_budget.work; the
        tiles' recomputation not counted, as block_cycles), the shared ones only within SHARED_TILE_SLACK of the instance's
        modelled cycles (on the tiles' calls: call_cost.calls_factor); returns the form the budget chose (False: the variant,
        True: the full instance, before the budget's choice). pixels: call_pixels' of the tiles (the instance's, the
        lean variants'). identity: tile_kernels.identity, the code name the budget
        gives the tile kernel (Emitter.identities), one for the layers whose tile kernels define shares (counted
        once)."""
        layer = e.conv_layer(op, self.conv_fields[op.index])
        names = ()
        if shared:  # name and the table's rows after it that hold on the layer: each relaxes name's conditions
            rows = [n for n, _ in e.variants[1]["conv"]]
            later = set(rows[rows.index(name):]) if name in rows else {name}
            names = (name,) + tuple(n for n in kernel_variants.all_codegen(e.variants[1], "conv", layer)
                                    if n in later and n != name)
        elif lean:  # the lean shared variants alone (call_cost.LEAN_TILE), those that hold on the layer
            names = tuple(n for n in kernel_variants.all_codegen(e.variants[1], "conv", layer)
                          if n in call_cost.LEAN_TILE)
        if names:
            own = code_budget.layer_cycles(self.g, op, "conv", layer, name, True, e.variants)
            if own is None:
                names = ()
            else:
                lines = {n: code_budget.layer_cycles(self.g, op, "conv", layer, n, False, e.variants) for n in names}
                # the instance on its own calls, within the slack of the tiles' kind
                slack = call_cost.SHARED_TILE_SLACK if shared else call_cost.LEAN_TILE_SLACK
                bound = own * call_cost.calls_factor(name, layer, pixels[0]) * (1 + slack) if pixels else None
                names = tuple(n for n in names if lines[n] is not None
                              and lines[n] <= own * (1 + call_cost.SHARED_TILE_SLACK)
                              and (not pixels or lines[n] * call_cost.calls_factor(
                                  n, layer, pixels[n in call_cost.LEAN_TILE], True) <= bound))
        e.offer(op, "conv", names, name, layer)
        if identity is not None:
            e.identities[op.index] = identity
        form = e.chosen_form(op, name)
        return form if shared or names or form is not False else True

    def shifts(self, k: int, blk: BlockRun, t: int, ind: str) -> str:
        """Ring moves of a cached window before the tile (fusion_exec._shift)."""
        er, ec, cw = blk.window_shape(self.g, t)
        at = self.window_addr(k, t)
        out = []
        if blk.rows.mode == "cache":
            out.append(f"{ind}if (c == 0 && fx{k}_t{t}_r[r][3]) "
                       f"fx_shift_rows({at}, {er}, {ec * cw}, fx{k}_t{t}_r[r][3]);")
        if blk.cols.mode == "cache":
            out.append(f"{ind}if (fx{k}_t{t}_c[c][3]) "
                       f"fx_shift_cols({at}, {er}, {ec}, {cw}, fx{k}_t{t}_c[c][3]);")
        return "\n".join(out)


SHARED_TILES = True  # tile kernels offered the shared variants too, where shared_tile holds (priced: call_cost)
LEAN_TILES = True  # ... and the lean shared variants (call_cost.LEAN_TILE), where lean_tile holds


def _rv_rq_ok(g, *ops) -> bool:
    """No requantisation multiplier of ops is INT32_MIN (riscv/fused.c's one-channel paths and fx_rv_pw1 take the
    others: rv_rq_ok)."""
    return all(m != -2 ** 31 for o in ops for m in prepare.conv(g, o).multipliers)


def lean_entry(entry: str, fields: dict) -> bool:
    """Are a conv's tiles, calling fx_win_k entry `entry`, offered the lean shared variants (lean_tile)? fx_win_kb's (box
    tiles: fx_lean_k calls them a column a call), and fx_win_kr's (row bands: an output row a call) of a KxK or a 1x1 of
    stride over 1: ResNet-8's least-RAM ops 8 and 10 on cortex-m4, est. cycles 32,676,471 -> 33,152,903 for 2.1 KB
    less with op 8 (`buildtool run ... --optimize ram`). Not a 1x1 of stride 1 on row bands: kws' least-RAM plan's
    pointwise layers there, calls of a pixel each (conv_1x1.h widens it thrice): 9,636,812 -> 14,535,812."""
    return entry == "fx_win_kb" or (entry == "fx_win_kr" and not (
        tile_kernels.pointwise(fields) and fields["stride_h"] == 1 and fields["stride_w"] == 1))


def lean_tile(group: int) -> bool:
    """Is a conv's tile kernel that shared_tile does not offer the shared variants offered the lean ones (LEAN_TILE)?
    (tile_kernel: only on fx_win_kb's calls, which lean_calls makes a column a call)"""
    return LEAN_TILES and not group


# The calls of a lean shared variant (LEAN_TILE) on a box tile R x C of output window o from i0 (fused_c's fx_win_kb
# calls of them): one call where the box is as wide as the window (fused_ref.h win_kind_o's whole box) or no taller than
# wide, else one a column, its pixels one output row pitch apart (o as a window one pixel wide of that pixel stride: the
# kernel's out.w 1, out.pixel_stride the pitch), where fx_win_kb would call it an output row of a few pixels at a time
# (each call's channel pairs set up again: ResNet-8's box tiles, 1-2 columns of 4-10 rows). Never into a row-banded
# output (its rows are not one pitch apart; mcunet-vww1's streamed least-RAM ops 5 and 16 gave wrong bytes): windowed
# calls fx_win_kb there, so o->rows is 0 and a column's first pixel is o->base's. One function a model.c.
LEAN_HELPER = """\
static void __attribute__((noinline)) fx_lean_k(const void *p, fx_conv_kernel k, const fx_buf *in, const fx_buf *o,
                                                const int16_t *R, const int16_t *C) {
  if (C[1] - C[0] == o->wp || R[1] - R[0] <= C[1] - C[0]) {
    fx_win_kb(p, k, in, o, R[0], R[1], C[0], C[1], -1);
    return;
  }
  for (int32_t x = C[0]; x < C[1]; x++) {
    const fx_buf oc = {o->base + (x - o->c0) * o->ps, o->r0, x, 1, o->wp * o->ps, 0};
    fx_win_kb(p, k, in, &oc, R[0], R[1], x, x + 1, -1);
  }
}"""


def shared_tile(shape: str, group: int, in_rows: bool) -> bool:
    """Is a conv's tile kernel offered the shared variants (the code budget prices them by the layer run whole)? On
    column tiles (tile_kernels.one_column: a call an output row of a 1-3 column box) of all channels whose input is not
    row-banded: there the shared variant's calls measured faster than the instance forms' (cortex-m4 least-RAM,
    `buildtool run ... --optimize ram`, est. cycles low: vww op 6 on bt_conv_s8_pm_rq2_ssat, its block 4,281,671 ->
    4,175,023 and 3.4 KB of code less; mbv2-w0.35 op 8, block 6-11 13,043,439 -> 12,903,929, with op 10 12,561,565). Not on a box tile
    (mbv2-w0.35 op 5, 324 calls of 1x4 pixels: its block 0-5 +395 k), a column tile reading row bands (vww op 4: its
    block +235 k) nor a channel group's (mbv2-w0.35 ops 13 and 17: +34 k each), where the per-call work the whole-layer
    cost lines do not hold costs more than the model says."""
    return SHARED_TILES and shape == "col" and not group and not in_rows


def pack_rows(tables: dict) -> tuple:
    """(one array, {key: its first index}) holding every table of tables ({key: [row offset, ...]}) as a run of it:
    greedy shortest common superstring (a table inside another is that run; else the two whose end and start overlap
    most joined, ties by key), so the banded tensors' row pointers overlap where their rows follow the same arena
    order (kws' least-RAM plan on cortex-m4: 8 tables of 25 -> 0.8 KB less their overlaps)."""
    runs = {k: list(v) for k, v in tables.items()}
    place = {k: (k, 0) for k in runs}  # key -> (the run holding it, its index there)

    def inside(a: list, b: list) -> int:
        return next((i for i in range(len(b) - len(a) + 1) if b[i:i + len(a)] == a), -1)

    def overlap(a: list, b: list) -> int:
        return next((n for n in range(min(len(a), len(b)) - 1, 0, -1) if a[-n:] == b[:n]), 0)

    def move(src, dst, shift: int) -> None:
        for k, (r, i) in place.items():
            if r == src:
                place[k] = (dst, i + shift)

    while len(runs) > 1:
        keys = sorted(runs)
        pair = next(((a, b) for a in keys for b in keys if a != b and inside(runs[a], runs[b]) >= 0), None)
        if pair:
            a, b = pair
            move(a, b, inside(runs[a], runs[b]))
            del runs[a]
            continue
        n, a, b = max(((overlap(runs[a], runs[b]), a, b) for a in keys for b in keys if a != b),
                      key=lambda x: (x[0], [-k for k in x[1:]]))
        if n == 0:
            break
        move(b, a, len(runs[a]) - n)
        runs[a] = runs[a] + runs[b][n:]
        del runs[b]
    out, base = [], {}
    for r in sorted(runs):
        base[r] = len(out)
        out += runs[r]
    return out, {k: base[r] + i for k, (r, i) in place.items()}


def half_small(q: dict) -> bool:
    """Does add_dense.h's ad_s8 run ADD parameters q (qparams.add_params) through ad_half_small_sat on every row (one
    input's multiplier 0.5, the other's AD_SMALL, the output's bt_rq2_ok, the activation all of int8)? Then
    cortex-m/fused.c's FX_ADD_HS runs that loop alone."""
    kinds = sorted(kernel_variants.ad_kind(q[f"input{i}_multiplier"], q[f"input{i}_shift"], q["left_shift"],
                                           q[f"input{i}_offset"]) for i in (1, 2))
    return (kinds == ["half", "small"] and kernel_variants.rq2_ok([q["output_multiplier"]], [q["output_shift"]])
            and q["act_min"] == -128 and q["act_max"] == 127)


# cortex-m/fused.c cm_chw_pm: the bytes of its frame holding a group's window copy and taps, the fewest channels a
# group takes (fused_c.chw_groups_only works its choice out); bt_fused.h FX_CHW_K_MIN: the fewest channels a group
# calls the layer's conv kernel with
CM_GRP_BUF, CM_GRP_MIN, FX_CHW_K_MIN = 1280, 8, 4
FX_CONV_FEW = "bt_conv_s8_direct"  # cortex-m/fused.c: the variant bt_conv_s8 picks for fewer than 4 output channels


def op_after(g: Graph, w: int) -> int:
    """The output of the depthwise that reads channelwise window w."""
    return next(o.outputs[0] for o in g.operators if o.inputs and o.inputs[0] == w and o.opcode == "DEPTHWISE_CONV_2D")


def _pulled_rows(g: Graph, blk: BlockRun, t: int) -> int:
    """Rows of streamed input t its reader pulls per output row (0: the tile's whole interval)."""
    fn = getattr(blk, "pulled_rows", None)
    return fn(g, t) if fn is not None else 0


def _inplace_source(g: Graph, blk: BlockRun, t: int):
    """The window t's 1x1 convolution overwrites in place, or None."""
    fn = getattr(blk, "inplace_source", None)
    return fn(g, t) if fn is not None else None


def _step(v: str, n: int) -> str:
    """C increment of loop variable v by n."""
    return f"{v}++" if n == 1 else f"{v} += {n}"


def _rows(table: list) -> str:
    if any(not -32768 <= v < 32768 for row in table for v in row):
        raise PlanError("a tensor has more than 32767 rows or columns; firmware tile tables hold int16")
    return "{" + ", ".join("{" + ", ".join(str(int(v)) for v in row) + "}" for row in table) + "}"


def streamed_geometry(g: Graph) -> tuple:
    """(width, channels) of the streamed input, which fx_source reads row by row."""
    t = g.tensors[g.inputs[0]]
    if t.dtype != "int8" or len(t.shape) != 4:
        raise ModelError(f"a streamed input must be int8 [1,H,W,C], '{t.name}' is {t.dtype}{list(t.shape)}")
    return t.shape[2], t.shape[3]


def generate(g: Graph, plan: FusedPlan, target: str, weights_align: int = 16, **names) -> tuple:
    """(model_c, model_h) for g run with the fused plan on board `target`; deterministic
    (names: model_c.generate's prefix / arena_base)."""
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
    return generate_model(g, ap, target, weights_align, emit=_Emit(g, plan), emitter=_FusedEmitter,
                          streamed=streamed, **names)
