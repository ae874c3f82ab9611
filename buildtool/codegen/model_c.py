"""Generate model.c / model.h: the planned model as straight-line C calls into bt_kernels.h.

One static arena of exactly plan.arena_bytes; each operator (in plan order) is one kernel
call on tensors at their planned offsets, bracketed by profiling hooks with the operator
index. Every quantisation parameter is a const struct computed here from the prepare step.
Weights are read in place from the flash image (symbol bt_weights) at offsets that depend
only on shapes, so model.c does not change when weight values change.

This module holds the emitters of the convolution, fully connected, arithmetic, pooling,
quantisation and shape operators (the others: extra_c.py, stateful_c.py); the operator table
names each opcode's emitter (model/opdefs.py, column emit) and emit_op calls it. model.c and
model.h around the calls are the files in templates/, filled by generate.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import numpy as np

from .. import targets
from ..errors import ModelError, PlanError, UsageError
from ..model import opdefs, weight_facts
from ..model.control import ITERATION_LIMIT_STATUS
from ..model.ir import Graph
from ..model.ops import conv_groups, fold_pad, slice_bounds
from ..plan import ArenaPlan, arena_symbol, first_bytes, flash, requant_tables, weight_order
from ..plan.arena.liveness import pointwise_group
from ..plan.regions import image_groups
from ..refops import prepare
from ..refops.quant_math import mbqm
from ..refops.shape_ops import slice_bounds_v1
from . import code_budget, kernel_variants, qparams
from .c_text import c_comment, c_float, c_ints, c_local_array, c_string, c_struct, prod
from .emitter import Emitter
from .extra_c import lut16, softmax16
from .stateful_c import state_reset

HEADER_GUARD = "BT_MODEL_H"
PREFIX_RE = re.compile(r"[a-z][a-z0-9_]*")
TEMPLATES = Path(__file__).with_name("templates")  # package data (pyproject.toml)


# -- the operators' emitters (opdefs column emit) ------------------------------------------
def transpose_conv(e, op) -> None:
    g, o, n = e.g, op.options, f"op{op.index}"
    x, y = op.inputs[2], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    flt = g.tensors[op.inputs[1]]
    p = prepare.transpose_conv(g, op)
    mult, shift = e.requant_arrays(op, p)
    fields = {"in": e.bt_shape(x), "out": e.bt_shape(y), "kh": flt.shape[1], "kw": flt.shape[2],
              "stride_h": o["stride_h"], "stride_w": o["stride_w"], "dil_h": 1, "dil_w": 1,
              "pad_top": p.pad_top, "pad_left": p.pad_left, "input_offset": p.input_offset,
              "output_offset": p.output_offset, "act_min": p.act_min, "act_max": p.act_max,
              "filter": e.weight(op.inputs[1], "int8_t"), "bias": e.bias(op), "multiplier": mult, "shift": shift}
    e.wide_conv(op, fields)
    e.call(op, f"bt_transpose_conv_{e.sfx(y)}(&{n}_p, {e.cact(x)}, {e.cact(y)});")


def conv_2d(e, op) -> None:
    n = f"op{op.index}"
    groups = conv_groups(e.g, op)
    if groups > 1:
        _grouped_conv(e, op, groups)
        return
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        e.wide_conv(op, e.conv_fields(op))
        h = e.g.tensors[op.outputs[0]].shape[1]
        e.call(op, f"bt_conv_s16(&{n}_p, {e.cact(op.inputs[0])}, 0, {e.cact(op.outputs[0])}, 0, {h});")
        return
    rows = e.row_order(op)
    fields = e.conv_fields(op, rows)
    e.declare(f"static const bt_conv_params {n}_p = {c_struct(fields)};")
    h = e.g.tensors[op.outputs[0]].shape[1]
    fn = e.kernel("conv", e.conv_layer(op, fields, rows), op)
    if op.index in e.plan.inplace_ops and not _pointwise_whole(e, op, fn, rows):
        e.call(op, _pointwise_bands(e, op, fn, h))
        return
    spread = f"\n  {_spread_rows(e, op, rows)}" if rows else ""
    if rows and rows.live == 0:
        e.call(op, spread.strip())
    elif form := e.own_instance(op, fn):
        e.call(op, f"{e.instance(op, fn, h, form, fields)}(&{n}_p, {e.act(op.inputs[0])}, "
                   f"{e.act(op.outputs[0])});{spread}")
    else:
        e.call(op, f"{fn}(&{n}_p, {e.act(op.inputs[0])}, 0, {e.act(op.outputs[0])}, 0, {h});{spread}")


# A 1x1 convolution the plan runs over its own dying input (PlanOptions.inplace_pointwise, plan/arena/liveness.py):
# its kernel must go forward over the pixels in groups of at most G (liveness.pointwise_group), reading each group's
# inputs before writing its outputs, in and out not restrict. The cortex-m set's patch-matrix variants (conv_pm.h:
# a pass's triples widened into its int16 columns first), its lean 1x1 (conv_1x1.h, the same) and
# bt_conv_s8_direct (a pixel's channels after its input), and the dispatcher bt_conv_s8 that runs them, do so over a
# whole map: called once. Every other kernel (cortex-m55 conv.c and riscv conv_pw.h go channel group by channel
# group over every pixel of a call; xcore and host likewise) is called on bands of G // W rows, in order: each call
# reads only its band's input rows (1x1, stride 1, no padding) and writes only its output rows, a group of at most
# G pixels.
POINTWISE_WHOLE = ("bt_conv_s8", "bt_conv_s8_direct")
POINTWISE_WHOLE_PREFIXES = ("bt_conv_s8_pm", "bt_conv_s8_1x1_")


def _pointwise_whole(e, op, fn: str, rows) -> bool:
    """May the in-place 1x1 layer op run in one call of fn (else model.c calls fn on bands of rows)?"""
    if rows is not None:
        raise PlanError(f"operator {op.index} (CONV_2D) is planned over its own input (inplace_pointwise) but its "
                        f"weights are in row order; plan without --inplace-pointwise")
    return e.cortex_m_set() and (fn in POINTWISE_WHOLE or fn.startswith(POINTWISE_WHOLE_PREFIXES))


def _pointwise_bands(e, op, fn: str, h: int) -> str:
    """The calls of fn on bands of G // W output rows, first to last (liveness.pointwise_group)."""
    x, y = e.g.tensors[op.inputs[0]], e.g.tensors[op.outputs[0]]
    w, row = int(y.shape[2]), int(y.shape[2] * y.shape[3])
    k = max(pointwise_group(int(x.shape[3]), w) // w, 1)
    if k >= h:
        return f"{fn}(&op{op.index}_p, {e.act(op.inputs[0])}, 0, {e.act(op.outputs[0])}, 0, {h});"
    return (f"for (int32_t y = 0; y < {h}; y += {k})  /* over its own input: bands of {k} row(s) in order */\n"
            f"    {fn}(&op{op.index}_p, {e.act(op.inputs[0])}, 0, {e.act(op.outputs[0])} + y * {row}, y, "
            f"y + {k} < {h} ? y + {k} : {h});")


def _grouped_conv(e, op, groups: int) -> None:
    """A grouped CONV_2D (model.ops.conv_groups) as one call of the set's conv per group, in a loop: the group's
    input and output channels are views into the whole tensors (their pixel strides), its filter rows, biases,
    multipliers and shifts slices of the layer's, stepped from group 0's struct (set field by field in a function
    of the layer's: the compiler keeps its geometry constant, and no struct copy calls memcpy). Every kernel set runs each group on its own conv paths and none needs a
    grouped kernel; int8 takes the variant its table picks for the group's geometry and the layer's
    requantisation (which holds for every group), in one instance of the layer when the variant has one."""
    x, y = op.inputs[0], op.outputs[0]
    flt = e.g.tensors[op.inputs[1]]
    per, depth = flt.shape[0] // groups, flt.shape[3]
    whole = e.conv_fields(op)
    f = dict(whole, **{"in": dict(whole["in"], c=depth), "out": dict(whole["out"], c=per)})
    n, h, wide = f"op{op.index}", e.g.tensors[y].shape[1], e.g.tensors[y].dtype == "int16"
    conv = "p.conv" if wide else "p"
    steps = [f"{conv}.filter += {per * flt.shape[1] * flt.shape[2] * depth}", f"{conv}.multiplier += {per}",
             f"{conv}.shift += {per}"] + [f"{conv}.bias += {per}"] * (whole["bias"] != "0")
    if wide:
        bias64 = e.bias(op, 64)
        steps += [f"p.bias64 += {per}"] * (bias64 != "0")
        struct, fn, args = "bt_conv_wide_params", "bt_conv_s16", "in + k * {d}, 0, out + k * {c}, 0, {h}"
    else:
        struct, args = "bt_conv_params", "in + k * {d}, 0, out + k * {c}, 0, {h}"
        fn = e.kernel("conv", e.conv_layer(op, f))
        if fn in kernel_variants.INSTANCES and kernel_variants.instances():
            macro, extra = kernel_variants.INSTANCES[fn]
            e.used_variants.pop(fn, None)
            e.use_macro(macro)
            fn, args = macro, args + "".join(f", {a}" for a in extra)
    ctype = "int16_t" if wide else "int8_t"
    fields = dict(conv=f, bias64=bias64) if wide else f
    sets = "".join(f"\n  p.{k} = {v};" for k, v in kernel_variants.flat_fields(fields))  # field by field: a struct copy is a memcpy
    loop = (f"{struct} p;{sets}\n  for (int32_t k = 0; k < {groups}; k++, {', '.join(steps)})\n"
            f"    {fn}(&p, {args.format(d=depth, c=per, h=h)});")
    e.declare(f"/* op {op.index}: {groups} groups of {depth} input and {per} output channels */\n"
              f"static __attribute__((noinline)) void {n}_groups(const {ctype} *in, {ctype} *out) {{\n"
              f"  {loop}\n}}")
    e.call(op, f"{n}_groups({e.cact(x)}, {e.cact(y)});")


def _spread_rows(e, op, rows) -> str:
    """The call that spreads a rows-live conv's packed outputs (plan/weight_order.py) to their channels and
    writes its zero rows' outputs, each the bias alone requantised (refops, as TFLite Micro computes it): the steps of
    _spread_form, either as a function of straight code per pixel (_straight_spread; gcc inlines it into
    model_invoke) or as a table the shared loop of templates/spread_rows.c.in runs (_spread_table; at most 256
    channels). The code budget chooses (code_budget.spread_candidates: the layer's ("spread", op) entry, its bytes and
    cycles measured, spread_costs.json); straight code where it has not (its first pass, a board without measured
    costs, a part built for a small instruction cache: e.spread_tables)."""
    p = prepare.conv(e.g, op)
    b = prepare.bias_input(e.g, op)
    live = list(rows.rows[:rows.live])
    consts = []
    for r in rows.rows[rows.live:]:
        acc = weight_facts.value_at(e.g.tensors[b], r) if b >= 0 else 0
        consts.append((r, int(np.clip(p.output_offset + int(mbqm(np.int64(acc), p.multipliers[r], p.shifts[r])),
                                      p.act_min, p.act_max))))
    n, t = f"op{op.index}", e.g.tensors[op.outputs[0]]
    pixels, stride = t.shape[1] * t.shape[2], e.pixel_stride(op.outputs[0])
    values = [v for _, v in consts]
    fill = max(sorted(set(values)), key=values.count) if values else 0   # the commonest, the lowest of a tie
    channels = len(rows.rows)
    form = _spread_form(live, consts, channels, fill)
    straight = _straight_spread(form, channels, fill)
    table, counts = _spread_table(form, fill)
    if channels <= 256 and e.spread_tables:
        e.spreads[op.index] = (pixels, straight.count(";"), len(table))
    if op.index in e.spreads and _spread_table_chosen(e, op.index):
        if "spread_rows" not in e.tables:
            e.tables.add("spread_rows")
            e.declare(_template("spread_rows.c.in"))
        e.declare(f"/* op {op.index}: its spread's steps (templates/spread_rows.c.in): {counts[0]} runs of live "
                  f"outputs, {counts[1]} + {counts[2]} word and {counts[3]} + {counts[4]} byte stores of zero rows' "
                  f"constants ({fill} first) */\n"
                  + (f"static const uint8_t {n}_spread[{len(table)}] = {c_ints(table)};" if table else ""))
        return (f"bt_spread_rows({e.act(op.outputs[0])}, {pixels}, {stride}, {channels}, {form[0]}, {fill}, "
                f"{n + '_spread' if table else '0'}, {', '.join(map(str, counts))});")
    if "spread_words" not in e.tables:
        e.tables.add("spread_words")
        e.declare(SPREAD_WORDS)
    e.declare(f"/* op {op.index}: its {rows.live} live rows' outputs to their channels, its "
              f"{len(rows.rows) - rows.live} zero rows' constants */\n"
              f"static void {n}_spread(int8_t *o) {{\n"
              f"  for (int32_t i = 0; i < {pixels}; i++, o += {stride}) {{\n{straight}\n  }}\n}}")
    return f"{n}_spread({e.act(op.outputs[0])});"


# the straight spread's word moves and stores (unaligned: a pixel's channels start anywhere; gcc makes them one LDR and
# one STR where the CPU has unaligned access, bytes where not)
SPREAD_WORDS = ("static inline void bt_mv4(int8_t *d, const int8_t *s) { uint32_t t; __builtin_memcpy(&t, s, 4); "
                "__builtin_memcpy(d, &t, 4); }\n"
                "static inline void bt_st4(int8_t *d, uint32_t v) { __builtin_memcpy(d, &v, 4); }")


def _spread_form(live: list, consts: list, channels: int, fill: int) -> tuple:
    """A pixel's spread, the steps of its straight code and of its table (templates/spread_rows.c.in):
    (fill_from, runs, stores). runs [(lo, hi, d)]: the live outputs lo..hi moved d channels up, from the last run
    (the outputs consecutive and moved by the same distance, four bytes a move from the run's end, the bytes left one
    by one: each to a channel at or after its own, so no byte is overwritten before it is read); stores [(channel,
    bytes)]: the zero rows' constants after the moves (four consecutive channels a store, else one). fill_from ==
    channels: nothing filled first; else, when that takes fewer steps, the channels from len(live) on are filled with
    `fill` first (four a store, the last ending at the last channel; no live output is read there) and stores holds
    the constants of another value or among the first len(live) channels."""
    runs: list = []  # [first j, last j, distance], from the last live output down
    for j, r in reversed(list(enumerate(live))):
        if r == j:
            continue
        if runs and runs[-1][0] == j + 1 and runs[-1][2] == r - j:
            runs[-1][0] = j
        else:
            runs.append([j, j, r - j])
    runs = [tuple(r) for r in runs]
    moves = sum((hi + 1 - lo) // 4 + (hi + 1 - lo) % 4 for lo, hi, _ in runs)
    plain = _const_stores(consts)
    n = len(live)
    fills = -(-(channels - n) // 4) if channels - n >= 4 else channels - n
    first = _const_stores([(r, v) for r, v in consts if v != fill or r < n])
    if fills + moves + len(first) < moves + len(plain):
        return n, runs, first
    return channels, runs, plain


def _straight_spread(form: tuple, channels: int, fill: int) -> str:
    """A pixel's spread (_spread_form's steps) as straight code."""
    start, runs, stores = form
    out = ([f"    bt_st4(o + {min(r, channels - 4)}, {(fill & 255) * 0x01010101:#010x}u);"
            for r in range(start, channels, 4)] if channels - start >= 4
           else [f"    o[{r}] = {fill};" for r in range(start, channels)])
    for lo, hi, d in runs:
        top = hi + 1
        while top - lo >= 4:
            top -= 4
            out.append(f"    bt_mv4(o + {top + d}, o + {top});")
        out += [f"    o[{j + d}] = o[{j}];" for j in range(top - 1, lo - 1, -1)]
    for r, v in stores:
        out.append(f"    bt_st4(o + {r}, {int.from_bytes(bytes(v), 'little'):#010x}u);" if len(v) == 4
                   else f"    o[{r}] = {v[0] - 256 if v[0] > 127 else v[0]};")
    return "\n".join(out)


def _spread_table(form: tuple, fill: int) -> tuple:
    """_spread_form's runs and stores as templates/spread_rows.c.in's table and its counts (runs, fwords, words,
    fbytes, bytes): (lo, hi, d) a run, then the channel of a word store of `fill`, (channel, four bytes) of another
    word, the channel of a byte store of `fill`, (channel, byte) of another byte."""
    _, runs, stores = form
    f = fill & 255
    sections = [[(r,) for r, v in stores if len(v) == 4 and set(v) == {f}],
                [(r, *v) for r, v in stores if len(v) == 4 and set(v) != {f}],
                [(r,) for r, v in stores if v == (f,)], [(r, *v) for r, v in stores if len(v) == 1 and v != (f,)]]
    return ([x for run in runs for x in run] + [x for sec in sections for s in sec for x in s],
            (len(runs), *map(len, sections)))


def _const_stores(consts: list) -> list:
    """Stores of constants [(channel, value)]: [(channel, bytes)], four consecutive channels a store, else one."""
    at = dict(consts)
    out, done = [], set()
    for r, v in sorted(consts):
        if r in done:
            continue
        if all(r + k in at for k in range(4)):
            out.append((r, tuple(at[r + k] & 255 for k in range(4))))
            done.update(range(r, r + 4))
        else:
            out.append((r, (v & 255,)))
            done.add(r)
    return out


SPREAD_FORCED = None   # "table" or "straight": every rows-live layer's spread so (benchmarks/spread_costs.py)


def _spread_table_chosen(e, i: int) -> bool:
    """Does layer i's spread run from its table (the code budget's choice, e.code_choice; SPREAD_FORCED)?"""
    if SPREAD_FORCED:
        return SPREAD_FORCED == "table"
    chosen = (e.code_choice or {}).get(code_budget.spread_key(i))
    return chosen is not None and chosen[0] == code_budget.SPREAD_LOOP


def depthwise_conv_2d(e, op) -> None:
    n = f"op{op.index}"
    fields = dict(conv=e.conv_fields(op), depth_multiplier=op.options.get("depth_multiplier", 1))
    e.declare(f"static const bt_depthwise_params {n}_p = {c_struct(fields)};")
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        h = e.g.tensors[op.outputs[0]].shape[1]
        e.call(op, f"bt_depthwise_s16(&{n}_p, {e.bias(op, 64)}, {e.cact(op.inputs[0])}, 0, "
                   f"{e.cact(op.outputs[0])}, 0, {h});")
        return
    if op.index in e.plan.inplace_ops:
        sc = e.plan.scratch.get(op.index)
        if sc is None or e.place(op.inputs[0]).offset != e.place(op.outputs[0]).offset:
            raise PlanError(f"in-place depthwise operator {op.index} needs a scratch buffer and its output "
                            f"at its input's offset; re-plan the model")
        e.call(op, f"bt_depthwise_s8_inplace(&{n}_p, {e.act(op.inputs[0])}, {e.at(sc.offset)});")
        return
    h = e.g.tensors[op.outputs[0]].shape[1]
    layer = dict(e.conv_layer(op, fields["conv"]), depth_multiplier=fields["depth_multiplier"])
    # the path the variant would run for the whole map (kernel_variants.py), or the shared path the code budget chose
    # (kernel_variants.depthwise_candidates)
    fn = e.kernel("depthwise_m1", layer, op)
    if fn.startswith("bt_dw_rows_q4_"):
        e.dw_rows[op.index] = (fn, layer)
    if fn == "bt_dw_s2g":  # its loop of rows of out.w % 6 outputs alone
        e.drop_variant(fn)
        fn = kernel_variants.dw_s2g_entry(layer)
        e.used_variants[fn] = kernel_variants.DISPATCHERS["depthwise_m1"]
    e.call(op, f"{fn}(&{n}_p, {e.act(op.inputs[0])}, 0, {e.act(op.outputs[0])}, 0, {h});")


def _recall(body: list, i: int, old: str, new: str) -> list:
    """model_invoke's steps with layer i's call of `old` a call of `new`."""
    return [b.replace(f"{old}(&op{i}_p,", f"{new}(&op{i}_p,") for b in body]


def _dw_rows_calls(e) -> None:
    """The depthwise layers' bt_dw_rows_q4 functions: row lengths shared (_share_dw_rows), then whole-quad entries
    (_dw_rows_entries)."""
    _share_dw_rows(e)
    _dw_rows_entries(e)


def _dw_rows_entries(e) -> None:
    """Each row length's bt_dw_rows_q4_RL calls on bt_dw_rows_q4e_RL where every such layer's strips are whole quads
    (kernel_variants.dw_rows_entry) and nothing else names the function: no firmware links both."""
    by_rl: dict = {}
    for i, (old, layer) in sorted(e.dw_rows.items()):  # (its function as _share_dw_rows left it)
        by_rl.setdefault(old, []).append((i, layer))
    for old, group in by_rl.items():
        rl = int(old.rsplit("_", 1)[1])
        if any(kernel_variants.dw_rows_entry(layer, rl) == old for _, layer in group):
            continue
        new = f"bt_dw_rows_q4e_{rl}"
        body = e.body
        for i, _ in group:
            body = _recall(body, i, old, new)
        if any(old in t for t in body + e.decls):  # another call (a subgraph's, a tile's) still names it
            continue
        e.body = body
        e.used_variants[new] = kernel_variants.DISPATCHERS["depthwise_m1"]
        e.drop_variant(old)


def _share_dw_rows(e) -> None:
    """Depthwise layers on bt_dw_rows_q4_RL moved onto a longer row length another of them calls, shortest first, where
    the bt_dw_q4_RL the firmware no longer links (DW_Q4_BYTES) buys the cycles the move costs (its layers' input rows
    widened again: shorter chunks of rows, DW_ROW_CYCLES each row and group of four channels) at the board's rate
    (e.instance_rate: not at optimize_code=speed, nor on a part built for a small instruction cache). dw_rows runs
    a strip in planes of any row length at least its own (the cells past the strip's are never read)."""
    if e.instance_rate is None:
        return
    by_rl: dict = {}
    for i, (v, layer) in sorted(e.dw_rows.items()):
        by_rl.setdefault(int(v.rsplit("_", 1)[1]), []).append((i, layer))
    rls = sorted(by_rl)
    for rl, longer in zip(rls, rls[1:]):
        group = by_rl.pop(rl)
        cost = DW_ROW_CYCLES * sum(_dw_rows_widened(layer, longer) - _dw_rows_widened(layer, rl) for _, layer in group)
        by_rl.setdefault(rl if cost > e.instance_rate * DW_Q4_BYTES else longer, []).extend(group)
    # then the longest onto the next shorter row length still called, its rows in more strips (depthwise.c dw_rows:
    # at most RL - 2 outputs a strip), where the bt_dw_q4_RL dropped buys the strips' cycles
    for rl in sorted(by_rl, reverse=True)[:1]:
        shorter = [r for r in by_rl if r < rl]
        if not shorter:
            break
        to = max(shorter)
        split = [_dw_rows_strips(layer, to) for _, layer in by_rl[rl]]
        cost = DW_STRIP_CYCLES * sum((n - _dw_rows_strips(layer, rl)[0]) * rows for (_, layer), (n, rows, least)
                                     in zip(by_rl[rl], split))
        if min(least for _, _, least in split) >= 4 and cost <= e.instance_rate * DW_Q4_BYTES:
            by_rl[to].extend(by_rl.pop(rl))
    for rl, group in by_rl.items():
        for i, _ in group:
            old, new = e.dw_rows[i][0], f"bt_dw_rows_q4_{rl}"
            if old != new:
                e.used_variants[new] = kernel_variants.DISPATCHERS["depthwise_m1"]
                if i in e.offers:  # the code budget's candidates: the row length it runs on
                    kind, names, inst = e.offers[i]
                    e.offers[i] = (kind, tuple(dict.fromkeys((new, *names[1:]))), inst)
                e.body = _recall(e.body, i, old, new)
                e.dw_rows[i] = (new, e.dw_rows[i][1])
                e.drop_variant(old)


# _share_dw_rows' figures, cortex-m4: a bt_dw_q4_RL's code (`nm -S`) and the estimated cycles of an input row widened
# again per group of four channels (vww's 24x24x64 and 12x12x128 layers on rows of 56 cells instead of 32 and 16:
# 4 and 2 more rows a group, +18 K and +23 K est. cycles, `buildtool run vww_96_int8.tflite --board cortex-m4`)
DW_Q4_BYTES, DW_ROW_CYCLES = 1272, 320
# and the estimated cycles of a strip more, per output row and channel (vww's 48x48x8 layer in two strips of 24 on
# rows of 32 cells instead of one on 56: +10.4 K est. cycles, its rows' and channels' set-up in bt_dw_q4 and
# dw_widen4 twice, fewer input rows widened again; `python3 benchmarks/mlperf_tiny.py --boards cortex-m4 --models vww
# --profile`, op 1)
DW_STRIP_CYCLES = 27


def _dw_rows_strips(layer: dict, rl: int) -> tuple:
    """(strips, output rows times channels, the fewest outputs of a strip) of a whole-map dw_rows call of the layer
    in planes of rl cells (depthwise.c dw_rows with a row length built in: strips of at most DW_NS1 and rl - 2
    outputs, balanced; dw_rows_geo's transposed map)."""
    o = layer["out"]
    ns = kernel_variants.dw_rows_strip_outputs(layer, rl)
    return len(ns), (o["w"] if kernel_variants.dw_rows_transposed(layer) else o["h"]) * o["c"], min(ns)


def _dw_rows_widened(layer: dict, rl: int) -> int:
    """Input rows a whole-map dw_rows call of the layer widens, times its groups of four channels, in planes of rl
    cells (depthwise.c dw_rows with bt_dw_q4 running every group: its chunks of rows, balanced; dw_rows_geo's
    transposed map)."""
    o = layer["out"]
    oh, ow, sh = ((o["w"], o["h"], layer["stride_w"]) if kernel_variants.dw_rows_transposed(layer)
                  else (o["h"], o["w"], layer["stride_h"]))
    rc = ((DW_PLANE_CELLS // (4 * rl)) - 3) // sh + 1
    if rc < oh:
        chunks = -(-oh // rc)
        rc = -(-oh // chunks)
    chunks = [min(rc, oh - y) for y in range(0, oh, rc)]
    return sum((r - 1) * sh + 3 for r in chunks) * -(-ow // kernel_variants.DW_NS1) * (o["c"] // 4)


DW_PLANE_CELLS = 1344 + 2 * 256  # depthwise.c DW_CELLS + 2 DW_ACC: bt_dw_q4's planes


def fully_connected(e, op) -> None:
    n = f"op{op.index}"
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
    fields = e.fc_fields(op, reordered=op.inputs[1] in e.orders)
    e.declare(f"static const bt_fc_params {n}_p = {c_struct(fields)};")
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        e.call(op, f"bt_fully_connected_s16(&{n}_p, {e.bias(op, 64)}, {e.cact(op.inputs[0])}, "
                   f"{e.cact(op.outputs[0])});")
        return
    p = prepare.fully_connected(e.g, op)
    layer = dict(fields, multipliers=list(p.multipliers), shifts=list(p.shifts))
    if op.inputs[1] in e.orders:  # the image holds the weights interleaved (plan/weight_order.py)
        fn = e.kernel("fully_connected_il", layer, op)
        _fc_il_fallback(e)
    else:
        fn = e.kernel("fully_connected", layer, op)
    e.call(op, f"{fn}(&{n}_p, {e.act(op.inputs[0])}, {e.act(op.outputs[0])});")


def _fc_il_fallback(e) -> None:
    """Once per model.c: bt_fully_connected_s8_il* when another kernel set than cortex-m is linked (--kernels
    reference, a user's folder): each row of the interleaved weights (kernels/cortex-m/fully_connected.c)
    put back in order on the stack and run by that set's bt_fully_connected_s8."""
    if "fc_il" in e.tables:
        return
    e.tables.add("fc_il")
    e.declare(_template("fc_il_fallback.c.in"))


def _binary(e, op, params: dict, struct: str, fn: str, variant: str = ""):
    n = f"op{op.index}"
    e.declare(f"static const {struct} {n}_p = {c_struct(dict(params, b=e.bcast(op)))};")
    e.call(op, f"{fn}_{e.sfx(op.outputs[0])}{variant}(&{n}_p, {e.operand(op.inputs[0])}, "
               f"{e.operand(op.inputs[1])}, {e.cact(op.outputs[0])});")


def add(e, op) -> None:
    if e.g.tensors[op.outputs[0]].dtype == "int32":  # TFLM's int32 path, no activation (reference/int32_ops.c)
        n = f"op{op.index}"
        params = dict(act_min="INT32_MIN", act_max="INT32_MAX", b=e.bcast(op))
        e.declare(f"static const bt_add_params {n}_p = {c_struct(params)};")
        e.call(op, f"bt_add_s32(&{n}_p, {e.operand(op.inputs[0])}, {e.operand(op.inputs[1])}, "
                   f"{e.cact(op.outputs[0])});")
        return
    params = qparams.add_params(e.g, op)
    tab = e.cortex_m_set() and e.sfx(op.outputs[0]) == "s8" and kernel_variants.add_tab_variant(dict(params, b=e.bcast(op)))
    if tab:
        e.used_variants[tab] = "bt_add_s8"  # add_tab's loop without add_dense.h's or its checks (cortex-m/add.c)
        return _binary(e, op, params, "bt_add_params", "bt_add", tab[len("bt_add_s8"):])
    _binary(e, op, params, "bt_add_params", "bt_add")


def sub(e, op) -> None:
    _binary(e, op, qparams.sub_params(e.g, op), "bt_add_params", "bt_sub")


def mul(e, op) -> None:
    _binary(e, op, qparams.mul_params(e.g, op), "bt_mul_params", "bt_mul")


def _pool(e, op, fn: str):
    n = f"op{op.index}"
    e.declare(f"static const bt_pool_params {n}_p = {c_struct(e.pool_fields(op))};")
    h = e.g.tensors[op.outputs[0]].shape[1]
    e.call(op, f"{fn}(&{n}_p, {e.cact(op.inputs[0])}, 0, {e.cact(op.outputs[0])}, 0, {h});")


def average_pool_2d(e, op) -> None:
    fn = f"bt_avg_pool_{e.sfx(op.outputs[0])}"
    win = prepare.window(e.g, op)
    if e.cortex_m_set() and fn == "bt_avg_pool_s8" and win.kh * win.kw <= kernel_variants.AVG_SXT_TAPS:
        e.used_variants["bt_avg_pool_s8_sxt"] = fn  # its SXTAB16 loop without the reference's (cortex-m/pooling.c)
        fn = "bt_avg_pool_s8_sxt"
    _pool(e, op, fn)


def max_pool_2d(e, op) -> None:
    _pool(e, op, f"bt_max_pool_{e.sfx(op.outputs[0])}")


def mean(e, op) -> None:
    """MEAN and SUM (SUM: the multiplier without 1/n, refops.prepare.sum_)."""
    g, n = e.g, f"op{op.index}"
    fields = dict(e.reduce_geometry(op), **prepare.fields(prepare.PREPARE[op.opcode](g, op)))
    e.declare(f"static const bt_mean_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_mean_{e.sfx(op.outputs[0])}(&{n}_p, {e.cact(op.inputs[0])}, "
               f"{e.cact(op.outputs[0])});")


def softmax(e, op) -> None:
    n, t = f"op{op.index}", e.g.tensors[op.inputs[0]]
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
    depth = t.shape[-1]
    if t.dtype == "int16":
        softmax16(e, op)
        return
    fields = dict(rows=t.num_elements // depth, depth=depth, **qparams.softmax_quant(e.g, op))
    e.declare(f"static const bt_softmax_params {n}_p = {c_struct(fields)};")
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        e.call(op, f"bt_softmax_s8_s16(&{n}_p, {e.act(op.inputs[0])}, "
                   f"{e.act(op.outputs[0], 'int16_t')});")
        return
    e.call(op, f"bt_softmax_s8(&{n}_p, {e.act(op.inputs[0])}, {e.act(op.outputs[0])});")


def leaky_relu(e, op) -> None:
    n, x, y = f"op{op.index}", op.inputs[0], op.outputs[0]
    e.dense(op, x)
    e.dense(op, y)
    fields = dict(n=e.g.tensors[x].num_elements, **qparams.leaky_relu_params(e.g, op))
    e.declare(f"static const bt_leaky_relu_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_leaky_relu_{e.sfx(y)}(&{n}_p, {e.cact(x)}, {e.cact(y)});")


def logistic(e, op) -> None:
    if e.g.tensors[op.outputs[0]].dtype == "int16":
        lut16(e, op, "bt_logistic_s16")
        return
    e.unary(op, "bt_logistic_params", qparams.logistic_params(e.g, op), "bt_logistic_s8")


def hard_swish(e, op) -> None:
    e.unary(op, "bt_hard_swish_params", qparams.hard_swish_params(e.g, op), "bt_hard_swish_s8")


def quantize(e, op) -> None:
    ti, to = e.g.tensors[op.inputs[0]], e.g.tensors[op.outputs[0]]
    if ti.dtype == "float32":
        e.dense(op, op.outputs[0])
        e.call(op, f"bt_quantize_f32_{e.sfx(op.outputs[0])}({ti.num_elements}, {c_float(to.scale)}, "
                   f"{to.zero_point}, {e.act(op.inputs[0], 'float')}, {e.cact(op.outputs[0])});")
        return
    if ti.dtype == to.dtype == "int8":
        e.unary(op, "bt_requant_params", qparams.requant_params(ti, to), "bt_requantize_s8")
        return
    n = f"op{op.index}"
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
    fields = dict(n=ti.num_elements, **qparams.requant_params(ti, to))
    e.declare(f"static const bt_requant_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_requantize(&{n}_p, {e.act(op.inputs[0])}, {ti.nbytes // ti.num_elements}, "
               f"{e.act(op.outputs[0])}, {to.nbytes // to.num_elements});")


def dequantize(e, op) -> None:
    ti = e.g.tensors[op.inputs[0]]
    e.dense(op, op.inputs[0])
    e.call(op, f"bt_dequantize_{e.sfx(op.inputs[0])}_f32({ti.num_elements}, {c_float(ti.scale)}, "
               f"{ti.zero_point}, {e.cact(op.inputs[0])}, {e.act(op.outputs[0], 'float')});")


def pad(e, op) -> None:
    g, n = e.g, f"op{op.index}"
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    e.dense(op, op.inputs[0])
    pads = g.tensors[op.inputs[1]].data.reshape(-1, 2)
    in_dims = [int(d) for d in ti.shape]
    if len(in_dims) > 4:  # above 4-D: unpadded axes merged into the ones before (model.ops.fold_pad)
        e.dense(op, op.outputs[0])
        in_dims, before, after = fold_pad(in_dims, pads.tolist())
        if len(in_dims) > 4:
            raise ModelError(f"operator {op.index} ({op.opcode}): padding that does not fold to 4 dimensions "
                             f"is not supported")
        pads = np.array([before, after]).T
    k = 4 - len(in_dims)
    out_dims = [1] * k + [int(d + b + a) for d, (b, a) in zip(in_dims, pads)]
    view = e.place(op.outputs[0]).pixel_stride not in (0, to.shape[-1])
    fields = dict(in_dims=[1] * k + in_dims, out_dims=out_dims,
                  before=[0] * k + [int(p) for p in pads[:, 0]],
                  out_stride=e.strides4(op.outputs[0], tuple(out_dims)) if view else [0, 0, 0, 0],
                  pad_value=_pad_value(g, op))
    e.declare(f"static const bt_pad_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_pad_{e.sfx(op.outputs[0])}(&{n}_p, {e.cact(op.inputs[0])}, "
               f"{e.cact(op.outputs[0])});")


def _pad_value(g, op) -> int:
    """PADV2's constant (raw code), else the output zero point (PAD)."""
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        return int(g.tensors[op.inputs[2]].data.reshape(-1)[0])
    to = g.tensors[op.outputs[0]]
    return to.zero_point if to.quant is not None else 0


def _strided_copy(e, op, src: int, dst_expr: str, dims: list, out_stride: list, tag: str):
    """Copy dense tensor src into a strided destination (PAD with no padding)."""
    n = f"op{op.index}_{tag}"
    fields = dict(in_dims=dims, out_dims=dims, before=[0, 0, 0, 0], out_stride=out_stride, pad_value=0)
    e.declare(f"static const bt_pad_params {n} = {c_struct(fields)};")
    return f"bt_pad_s8(&{n}, {e.operand(src)}, {dst_expr});"


def concatenation(e, op) -> None:
    g, n = e.g, f"op{op.index}"
    to = g.tensors[op.outputs[0]]
    rank = len(to.shape)
    axis = op.options.get("axis", 0) % rank
    out_place = e.place(op.outputs[0])
    views = [i for i in op.inputs if not g.tensors[i].is_const and e.place(i).buffer == out_place.buffer]
    if not views and e.place(op.outputs[0]).pixel_stride in (0, to.shape[-1]) and all(
            g.tensors[i].is_const or e.place(i).pixel_stride in (0, g.tensors[i].shape[-1])
            for i in op.inputs):
        sizes = [g.tensors[i].nbytes // prod(g.tensors[i].shape[:axis]) for i in op.inputs]
        _concat_params(e, n, sizes, prod(to.shape[:axis]))
        srcs = [e.weight(i, "int8_t") if g.tensors[i].is_const else e.act(i) for i in op.inputs]
        e.call(op, f"{{\n    {c_local_array('const int8_t *', 'in', srcs)}"
                   f"    bt_concat_s8(&{n}_p, in, {e.act(op.outputs[0])});\n  }}")
        return
    if rank > 4 or to.dtype != "int8":
        raise ModelError(f"operator {op.index} (CONCATENATION): strided int16 or more than 4-D concatenation "
                         f"is not supported")
    dims_out = (1,) * (4 - rank) + tuple(int(d) for d in to.shape)
    ax4 = axis + 4 - rank
    ost = e.strides4(op.outputs[0], dims_out)
    copies, pos = [], 0
    for k, i in enumerate(op.inputs):
        t = g.tensors[i]
        if i not in views:
            e.dense(op, i)
            dims = [1] * (4 - rank) + [int(d) for d in t.shape]
            copies.append(_strided_copy(e, op, i, f"{e.act(op.outputs[0])} + {pos * ost[ax4]}", dims, ost,
                                        f"in{k}"))
        pos += t.shape[axis]
    text = "\n  ".join(copies) if copies else "/* every input was written in place into its slice */"
    e.call(op, text)


def _concat_params(e, n: str, sizes: list, outer: int) -> None:
    """bt_concat_params {n}_p: `outer` rows of the given byte sizes (concat, split, reshape copy)."""
    e.declare(f"static const int32_t {n}_sizes[{len(sizes)}] = {c_ints(sizes)};")
    e.declare(f"static const bt_concat_params {n}_p = {{.n = {len(sizes)}, .outer = {outer}, "
              f".size = {n}_sizes}};")


def reshape(e, op) -> None:
    src, dst = op.inputs[0], op.outputs[0]
    e.dense(op, src)
    e.dense(op, dst)
    if e.place(src).offset == e.place(dst).offset:
        e.call(op, "/* reshape: output shares the input's bytes */")
        return
    n = f"op{op.index}"
    size = e.g.tensors[src].nbytes
    _concat_params(e, n, [size], 1)
    e.call(op, f"{{\n    {c_local_array('const int8_t *', 'in', [e.act(src)])}"
               f"    bt_concat_s8(&{n}_p, in, {e.act(dst)});\n  }}")


def split(e, op) -> None:
    g, n = e.g, f"op{op.index}"
    ti = g.tensors[op.inputs[1]]
    axis = int(g.tensors[op.inputs[0]].data.reshape(-1)[0]) % len(ti.shape)
    e.dense(op, op.inputs[1])
    for o in op.outputs:
        e.dense(op, o)
    sizes = [g.tensors[o].nbytes // prod(g.tensors[o].shape[:axis]) for o in op.outputs]
    _concat_params(e, n, sizes, prod(ti.shape[:axis]))
    outs = [e.act(o) for o in op.outputs]
    e.call(op, f"{{\n    {c_local_array('int8_t *', 'out', outs)}"
               f"    bt_split_s8(&{n}_p, {e.act(op.inputs[1])}, out);\n  }}")


def _split_bytes(e, op, src: int, axis: int) -> None:
    """SPLIT_V, UNPACK: the outputs are consecutive runs along axis of the dense input (bt_split_s8 on bytes)."""
    g, n = e.g, f"op{op.index}"
    ti = g.tensors[src]
    e.dense(op, src)
    for o in op.outputs:
        e.dense(op, o)
    sizes = [g.tensors[o].nbytes // prod(ti.shape[:axis]) for o in op.outputs]
    _concat_params(e, n, sizes, prod(ti.shape[:axis]))
    outs = [e.act(o) for o in op.outputs]
    e.call(op, f"{{\n    {c_local_array('int8_t *', 'out', outs)}"
               f"    bt_split_s8(&{n}_p, {e.act(src)}, out);\n  }}")


def split_v(e, op) -> None:
    ti = e.g.tensors[op.inputs[0]]
    _split_bytes(e, op, op.inputs[0], int(e.g.tensors[op.inputs[2]].data.reshape(-1)[0]) % len(ti.shape))


def unpack(e, op) -> None:
    ti = e.g.tensors[op.inputs[0]]
    _split_bytes(e, op, op.inputs[0], op.options.get("axis", 0) % len(ti.shape))


def pack(e, op) -> None:
    """PACK: the inputs are consecutive runs along the new axis of the output (bt_concat_s8 on bytes)."""
    g, n = e.g, f"op{op.index}"
    to = g.tensors[op.outputs[0]]
    axis = op.options.get("axis", 0) % len(to.shape)
    e.dense(op, op.outputs[0])
    for i in op.inputs:
        if not g.tensors[i].is_const:
            e.dense(op, i)
    outer = prod(to.shape[:axis])
    _concat_params(e, n, [g.tensors[i].nbytes // outer for i in op.inputs], outer)
    srcs = [e.weight(i, "int8_t") if g.tensors[i].is_const else e.act(i) for i in op.inputs]
    e.call(op, f"{{\n    {c_local_array('const int8_t *', 'in', srcs)}"
               f"    bt_concat_s8(&{n}_p, in, {e.act(op.outputs[0])});\n  }}")


def slice_(e, op) -> None:
    """SLICE: STRIDED_SLICE's kernel with unit strides."""
    g, n = e.g, f"op{op.index}"
    ti = g.tensors[op.inputs[0]]
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
    bounds = slice_bounds_v1(g, op)
    k = 4 - len(ti.shape)
    fields = dict(in_dims=[1] * k + [int(d) for d in ti.shape], out_dims=[1] * k + [hi - lo for lo, hi in bounds],
                  begin=[0] * k + [lo for lo, _ in bounds], stride=[1, 1, 1, 1])
    e.declare(f"static const bt_slice_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_strided_slice_{e.sfx(op.outputs[0])}(&{n}_p, {e.cact(op.inputs[0])}, "
               f"{e.cact(op.outputs[0])});")


def strided_slice(e, op) -> None:
    g, n, o = e.g, f"op{op.index}", op.options
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if o.get("ellipsis_mask", 0) or o.get("new_axis_mask", 0) or len(ti.shape) > 4:
        raise ModelError(f"operator {op.index} (STRIDED_SLICE): ellipsis/new-axis masks and more than "
                         f"4 dimensions are not supported")
    e.dense(op, op.inputs[0])
    e.dense(op, op.outputs[0])
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
    if prod(o4) != to.num_elements:
        raise ModelError(f"operator {op.index} (STRIDED_SLICE): resolved slice {o4} does not match the output "
                         f"shape {list(to.shape)}")
    fields = dict(in_dims=[1] * k + [int(d) for d in ti.shape], out_dims=o4, begin=b4, stride=s4)
    e.declare(f"static const bt_slice_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_strided_slice_{e.sfx(op.outputs[0])}(&{n}_p, {e.cact(op.inputs[0])}, "
               f"{e.cact(op.outputs[0])});")


# -- model.c / model.h ------------------------------------------------------------------------
def emit_op(e: Emitter, oi: int) -> None:
    """Emit operator oi: the function its row of the operator table names (column emit)."""
    op = e.g.operators[oi]
    d = opdefs.BY_NAME.get(op.opcode)
    if d is None or d.emit is None:
        raise ModelError(f"operator {op.index} is {op.opcode}, which firmware generation does not support")
    opdefs.resolve(d.emit)(e, op)


def _template(name: str, /, **fields) -> str:
    """templates/<name> filled with fields (string.Template: ${field}); read on every call, so a
    long-lived planner daemon never serves an edited template's old text."""
    return Template((TEMPLATES / name).read_text(encoding="utf-8")).substitute(fields)


def io_macros(g, P: str, kind: str, idx: list, streamed: tuple = ()) -> str:
    """model.h's #defines of each input or output: dims, shape, bytes, C type, scale and zero point (a
    streamed input's note: pulled through bt_read_input_rows, its model_input_bytes 0)."""
    lines = []
    for k, i in enumerate(idx):
        t = g.tensors[i]
        shape = [int(d) for d in t.shape]
        name = f"{P}_{kind.upper()}{k}"
        lines.append(f"/* {kind} {k} '{c_comment(t.name)}': {t.dtype} {shape}"
                     + (", pulled through bt_read_input_rows (streamed: model_input_bytes is 0)" if i in streamed else "")
                     + " */")
        lines.append(f"#define {name}_DIMS {len(shape)}")
        lines.append(f"#define {name}_SHAPE {{{', '.join(map(str, shape))}}}")
        lines.append(f"#define {name}_BYTES {t.nbytes}u")
        lines.append(f"#define {name}_TYPE {'uint8' if t.dtype == 'bool' else t.dtype}_t")
        if t.quant is not None and not t.quant.per_channel:
            lines.append(f"#define {name}_SCALE {c_float(t.scale)}  /* {float(t.scale):.9g} */")
            lines.append(f"#define {name}_ZERO_POINT ({t.zero_point})")
    return "\n".join(lines)


def _io_table(e: Emitter, name: str, idx: list, streamed: tuple = (), prefix: str = "model") -> str:
    """Pointer and size of each model input/output (tables of them when there are several); a streamed input has 0
    bytes (it is pulled a region at a time by the generated code, never held whole)."""
    ptrs = ", ".join("bt_arena" if i in streamed else e.at(e.place(i).offset) for i in idx) or "0"
    sizes = ", ".join("0" if i in streamed else str(e.g.tensors[i].nbytes) for i in idx) or "0"
    for i in idx:
        if i not in streamed:
            e.dense(None, i)
    if len(idx) == 1:  # one: its pointer and size in the functions, no tables
        return "\n".join([
            f"void *{prefix}_{name}(int i) {{ return i == 0 ? (void *)({ptrs}) : 0; }}",
            f"uint32_t {prefix}_{name}_bytes(int i) {{ return i == 0 ? {sizes}u : 0; }}"])
    return "\n".join([
        f"static void *const bt_{name}s[] = {{{ptrs}}};",
        f"static const uint32_t bt_{name}_bytes[] = {{{sizes}}};",
        f"void *{prefix}_{name}(int i) {{ return (i >= 0 && i < {len(idx)}) ? bt_{name}s[i] : 0; }}",
        f"uint32_t {prefix}_{name}_bytes(int i) {{ return (i >= 0 && i < {len(idx)}) ? bt_{name}_bytes[i] : 0; }}"])


def check_prefix(prefix: str) -> None:
    """A name prefix must make C identifiers of its own (not the runtime's bt_/fx_ names)."""
    if not PREFIX_RE.fullmatch(prefix) or prefix in ("bt", "fx") or prefix.startswith(("bt_", "fx_")):
        raise PlanError(f"model name prefix '{c_comment(prefix)}' must be a lower-case C identifier "
                        f"([a-z][a-z0-9_]*) not starting with bt_ or fx_")


def _shared_arena(prefix: str, arena_base, align: int, plan=None, arena_section: str | None = None) -> str:
    """model.c's arena line(s): its own static arena (and one per further region the plan places
    buffers in, in the linker section .bt_arena_<region>), or (arena_base given) its part of the
    shared bt_arena that the multi-model firmware defines (offsets from byte arena_base of it).
    arena_section (buildtool export): the arena's own linker section on ELF targets, through the macro
    BT_ARENA_SECTION (a user's -D replaces it)."""
    p = prefix.upper()
    if arena_base is None:
        more = (getattr(plan, "arena_regions", None) or [])[1:]
        section = _template("arena_section.c.in", section=arena_section) if arena_section else ""
        attr = "BT_ARENA_SECTION " if arena_section else ""
        return "\n".join([f"{section}int8_t bt_arena[{p}_ARENA_BYTES] {attr}__attribute__((aligned({align})));"]
                         + [f"int8_t {arena_symbol(plan, r)}[{r['bytes']}] "
                            f"__attribute__((section(\".bt_arena_{r['name']}\"), aligned({align})));" for r in more])
    lines = [f"/* bt_arena is shared with other models (defined by the multi-model firmware); this model's\n"
             f"   offsets start at its byte {arena_base}. */"]
    if arena_base:
        lines.append(f"#define bt_arena (bt_arena + {arena_base})")
    return "\n".join(lines)


def _placement_groups(g: Graph, plan, target: str, weights_align: int, code_bytes: int | None = None):
    """The flash image's [primary, external] tensor groups on a board with memory regions (regions.py),
    None when every weight stays in the primary region or the board is not a registered one.
    code_bytes: the code's measured flash bytes (regions.place)."""
    try:
        board = targets.get(target)
    except UsageError:
        return None
    return image_groups(g, plan, board, weights_align, code_bytes)


def _ext_decl(e) -> str:
    """model.h's declaration of the external part of the flash image (none when it has none)."""
    return _template("ext_decl.h.in", ext_offset=e.ext_offset) if e.ext_offset else ""


def _ext_check(e) -> str:
    """model_init's check that the linked image splits where this code reads it, the same tensors
    external (none when unsplit)."""
    if not e.ext_offset:
        return ""
    return _template("ext_check.c.in", ext_offset=e.ext_offset, ext_signature=e.ext_signature)


def _variant_block(e) -> str:
    """model.c's include of the kernel set's bt_variants.h when it calls variants, and the fallback
    to the dispatchers when another set is linked (--kernels reference, a user's kernel folder)."""
    if not e.used_variants:
        return ""
    fallback = "".join(f"#define {v} {d}\n" for v, d in sorted(e.used_variants.items()))
    return _template("variants.c.in", guard=e.variants[0], fallback=fallback)


# one layer's step of model_invoke as Emitter.call writes it when the kernel takes its parameters, arena pointers and
# integer constants only: op, the kernel, its arguments after &opN_p
_PLAIN_CALL = re.compile(r"  /\* op (\d+): [^\n]*\*/\n  BT_PROFILE_BEGIN\(\1\);\n"
                         r"  (\w+)\(&op\1_p((?:, (?:\(\(\w+ \*\)\(bt_arena \+ \d+\)\)|-?\d+))+)\);\n"
                         r"  BT_PROFILE_END\(\1\);")
_CALL_ARG = re.compile(r", (?:\(\((\w+) \*\)\(bt_arena \+ (\d+)\)\)|(-?\d+))")
_PARAMS_DECL = re.compile(r"static const (\w+) op(\d+)_p = (\{.*\});", re.S)
CALL_RUN = 3  # consecutive layers calling one kernel that a loop over a table calls (ad01's ten, `nm -S` model_invoke)
# consecutive layers calling kernels of one C type (their parameter structs of one type) that a loop over a
# table of function pointers calls: each row's pointer costs 4 bytes more than a run of one kernel's
FN_RUN = 4


def _call_sig(m) -> tuple:
    """A plain call's signature: per argument after the parameters, its arena pointer's C type, or None (an int)."""
    return tuple(a[0] or None for a in _CALL_ARG.findall(m[3]))


def _call_runs(body: list, decls: list | None = None) -> list:
    """model_invoke's steps with each run of consecutive operators calling kernels of one signature on their
    parameters, arena pointers and integer constants alone (ad01's dense layers) made one loop over a table
    (_run_loop): at least CALL_RUN layers calling one kernel, FN_RUN calling several of one C type (their parameter
    structs of one type: _params_types; vww's convolutions and depthwise layers alternate two). A call and its two
    profile calls once, ~8-16 bytes a layer instead of ~28-40, a few cycles a layer more (the loop and, with several kernels, an indirect call). decls (model.c's declarations): a run
    whose layers' parameter structs are of one type and read nowhere else holds them (_own_params), each row's
    pointer gone."""
    out, run = [], []  # run: the current run's (step, its match, its signature)

    def flush():
        fns = {m[2] for _, m, _ in run}
        if len(run) < (CALL_RUN if len(fns) == 1 else FN_RUN) or (
                len(fns) > 1 and len(_params_types([int(m[1]) for _, m, _ in run], decls)) != 1):
            out.extend(step for step, _, _ in run)
        else:
            out.append(_run_loop([step for step, _, _ in run], [m for _, m, _ in run], decls, body))
        run.clear()

    for step in body:
        m = _PLAIN_CALL.fullmatch(step)
        sig = m and _call_sig(m)
        if run and not (m and sig == run[-1][2] and int(m[1]) == int(run[-1][1][1]) + 1):
            flush()
        if m:
            run.append((step, m, sig))
        else:
            out.append(step)
    flush()
    return out


def _params_types(ops: list, decls: list | None) -> set:
    """The C types of ops' parameter structs opN_p as decls declare them (None for one it does not): kernels of one
    call signature whose structs are of one type have one C type, which a run's function-pointer column calls them
    through (a call through a pointer of another function type is undefined behaviour)."""
    found = {int(m[2]): m[1] for m in (_PARAMS_DECL.fullmatch(d) for d in decls or ()) if m}
    return {found.get(o) for o in ops}


def _own_params(ops: list, decls: list, body: list):
    """(C type, {op: initializer}, their indices in decls) of the parameter structs opN_p of ops when they are of one
    type and nothing but their calls reads them (a run's table may hold them, each row's pointer gone), else None."""
    at = {}
    for k, d in enumerate(decls):
        m = _PARAMS_DECL.fullmatch(d)
        if m and int(m[2]) in ops:
            at[int(m[2])] = (k, m)
    if len(at) != len(ops) or len({m[1] for _, m in at.values()}) != 1:
        return None
    text = "\n".join(decls) + "\n".join(body)
    if any(len(re.findall(rf"\bop{o}_p\b", text)) != 2 for o in ops):  # its declaration and its call
        return None
    return at[ops[0]][1][1], {o: m[3] for o, (_, m) in at.items()}, sorted(k for k, _ in at.values())


def _run_loop(steps: list, calls: list, decls: list | None = None, body: list | None = None) -> str:
    """One loop over the table of a run of calls (_call_runs); each layer keeps its comment and profile region. A
    column per argument that differs between the layers (arena offsets 16 bits when they fit, integers 16 bits when
    they fit), the others written in the call; the kernel's pointer a column when the layers call several (_call_runs:
    only kernels of one C type, their parameter structs of one type). The layers' parameter structs are
    the table's first column when they are of one type and read nowhere else (_own_params; decls given): the table
    is declared where the last of them was, instead of them."""
    first, n = int(calls[0][1]), len(calls)
    ops = [int(m[1]) for m in calls]
    name = f"bt_run{first}"
    fns = [m[2] for m in calls]
    args = [_CALL_ARG.findall(m[3]) for m in calls]
    own = _own_params(ops, decls, body or []) if decls is not None else None
    fields, rows, call = [], [[] for _ in calls], []  # call: the kernel's arguments
    if own:
        fields.append(f"{own[0]} p;")
        for r, o in zip(rows, ops):
            r.append(f"/* op {o} */ {own[1][o]}")
        call.append("&r->p")
    else:
        fields.append("const void *p;")
        for r, o in zip(rows, ops):
            r.append(f"&op{o}_p")
        call.append("r->p")
    several = len(set(fns)) > 1
    if several:
        fields.append(f"{name}_fn *fn;")
        for r, f in zip(rows, fns):
            r.append(f)
        fn = "r->fn"
    else:
        fn = fns[0]
    cols = {}  # "at" / "a": [(argument's position, its values)]
    for k, (ctype, _, _) in enumerate(args[0]):
        vals = [int(a[k][1] if ctype else a[k][2]) for a in args]
        if len(set(vals)) == 1:
            call.append(f"({ctype} *)(bt_arena + {vals[0]})" if ctype else str(vals[0]))
            continue
        kind = "at" if ctype else "a"
        cols.setdefault(kind, []).append((k, vals))
        call.append(f"({ctype} *)(bt_arena + r->at[{len(cols[kind]) - 1}])" if ctype
                    else f"r->a[{len(cols[kind]) - 1}]")
    for kind in ("at", "a"):
        if kind in cols:
            vals = [v for _, vs in cols[kind] for v in vs]
            if kind == "at":
                ctype = "uint16_t" if max(vals) < 1 << 16 else "uint32_t"
            else:
                ctype = "int16_t" if -(1 << 15) <= min(vals) and max(vals) < 1 << 15 else "int32_t"
            fields.append(f"{ctype} {kind}[{len(cols[kind])}];")
            for i, r in enumerate(rows):
                r.append("{" + ", ".join(str(vs[i]) for _, vs in cols[kind]) + "}")
    fn_type = f"typedef __typeof__({fns[0]}) {name}_fn;  /* the kernels' one C type */\n" if several else ""
    table = (f"static const struct {name} {{ {' '.join(fields)} }} {name}[{n}] = {{\n"
             + ",\n".join("  {" + ", ".join(r) + "}" for r in rows) + "\n};")
    head = "\n".join(step.split("\n", 1)[0] for step in steps) + "\n"
    if own:  # the table where the last of the structs was, at file scope
        *gone, last = own[2]
        decls[last] = fn_type + table
        for k in reversed(gone):
            del decls[k]
    else:
        head += "".join(f"  {line}\n" for line in (fn_type + table).split("\n"))
    return (head + f"  for (int i = 0; i < {n}; i++) {{\n    const struct {name} *r = &{name}[i];\n"
            f"    BT_PROFILE_BEGIN({first} + i);\n    {fn}({', '.join(call)});\n    BT_PROFILE_END({first} + i);\n  }}")


def generate(g: Graph, plan: ArenaPlan, target: str, weights_align: int = 16, emit=None,
             emitter=Emitter, streamed: tuple = (), prefix: str = "model", arena_base=None,
             arena_section: str | None = None, code_bytes: int | None = None, code=None) -> tuple:
    """(model_c, model_h) source text for graph g run with `plan`; deterministic.

    emit(e), when given, fills the emitter's declarations and body instead of one call per
    operator of plan.order (fused plans: buildtool/codegen/fused_c.py, with its own emitter
    class); streamed: graph inputs the generated code pulls itself. prefix names the public
    symbols (<prefix>_init, _invoke, _input, ...; weights <prefix>_weights unless "model");
    arena_base (multi-model firmware): no arena of its own, plan offsets are from that byte of
    a shared bt_arena; arena_section: the arena's linker section (buildtool export); code_bytes: the
    code's flash bytes as a trial link measured them, which the weights placement leaves free
    (steps/code.py; None: the board's reserve); code: the code budget's preset and budget
    (code_budget.CodeGoal; None: the default preset, no budget). Returns Sources: (model_c, model_h) with .code_plan."""
    check_prefix(prefix)
    placed = getattr(emit, "plan", plan)  # a fused plan's emit carries it: its tile counts place weights
    split = _placement_groups(g, placed, target, weights_align, code_bytes) if prefix == "model" else None
    groups = split[0] if split else None
    offsets = flash.layout(g, weights_align, groups)
    at = flash.table_offsets(g, weights_align, groups)
    rq_tables = {op.index: (at[op.index], m, s) for op, m, s in requant_tables.tables(g)}
    weights = "bt_weights" if prefix == "model" else f"{prefix}_weights"

    def filled(choice):
        e = emitter(g, plan, offsets)
        e.variants = kernel_variants.for_board(target)
        # a rows-live layer's shared depthwise loop where the code it saves buys its cycles (_share_dw_rows),
        # except at optimize_code=speed
        e.instance_rate = (None if code is not None and code.preset == "speed"
                           else kernel_variants.instance_rate(target))
        e.code_speed = code is not None and code.preset == "speed"
        e.spread_tables = not kernel_variants.icache_part(target)  # _spread_rows
        e.orders = weight_order.orders(g, target)
        e.rq_tables, e.weights_symbol = rq_tables, weights
        e.ext_offset = flash.ext_offset(g, weights_align, groups)
        e.ext_signature = flash.ext_signature(groups)
        e.code_choice = choice
        if emit is None:
            for oi in plan.order:
                emit_op(e, oi)
        else:
            emit(e)
        return e

    e = filled(None)  # every layer on its fastest variant, their candidates recorded
    _dw_rows_calls(e)
    e.after_rows()
    offers = e.offers
    icache = kernel_variants.icache_part(target)
    if icache:  # instanced layers keep their instance, compact by the part's define (icache_part)
        offers = {i: (k, () if inst else names, inst) for i, (k, names, inst) in offers.items()}
    chosen = code_budget.plan(g, offers, e.variants, code, e.shapes, e.fixed_cycles,
                              compact=frozenset() if icache else e.compact_ops(), identities=e.identities,
                              spreads=e.spreads)
    if chosen.choice != chosen.fastest:
        e = filled(chosen.choice)
        _dw_rows_calls(e)
        e.after_rows()
    e.code_plan = chosen
    for i in list(g.inputs) + list(g.outputs):
        if i in streamed:
            continue
        if g.tensors[i].is_const or i not in plan.tensors:
            raise ModelError(f"model input/output tensor {i} is constant or unplanned; firmware needs activations")
    p = prefix
    names = dict(label=c_comment(g.name), target=target, p=p, num_steps=len(plan.order))
    h = _template(
        "model.h.in", **names, guard=HEADER_GUARD if p == "model" else f"BT_{p.upper()}_H", P=p.upper(),
        model_name=c_string(g.name), arena_bytes=first_bytes(plan), num_ops=len(g.operators), num_inputs=len(g.inputs),
        num_outputs=len(g.outputs), weights=weights, ext_decl=_ext_decl(e),
        io=io_macros(g, p.upper(), "input", list(g.inputs), streamed) + "\n"
        + io_macros(g, p.upper(), "output", list(g.outputs)),
        weights_bytes=flash.image_bytes(g, weights_align, groups),
        status=(f"/* {p}_invoke's status when a WHILE ran BT_MAX_ITERATIONS times and its condition still held */\n"
                f"#define {p.upper()}_ITERATION_LIMIT_STATUS {ITERATION_LIMIT_STATUS}\n"
                if "bt_cf_overrun" in e.tables else ""))
    steps = e.body if emit is not None else _call_runs(e.body, e.decls)  # may make runs' parameters arrays in decls
    c = _template(
        "model.c.in", **names, planner=plan.planner, plan_arena_bytes=plan.arena_bytes, variants=_variant_block(e),
        arena=_shared_arena(p, arena_base, max(16, plan.align, weights_align), plan, arena_section),
        weights_define="" if p == "model" else "\n#define bt_weights " + weights,
        model_hash=c_ints(list(flash.model_hash(g)), 16), format_version=flash.FORMAT_VERSION,
        ext_check=_ext_check(e), state_reset="".join(line + "\n" for line in state_reset(e)),
        staging=e.staging, stage_once=e.stage_once(),
        inputs=_io_table(e, "input", list(g.inputs), streamed, p),
        outputs=_io_table(e, "output", list(g.outputs), (), p),
        decls="\n".join(e.decls), steps="\n".join(steps))
    return code_budget.Sources(c, h, e.code_plan)
