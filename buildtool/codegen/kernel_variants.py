"""Kernel variants chosen per layer at code generation (issue 13 item 1).

The cortex-m and riscv (scalar) kernel sets export, next to their dispatchers (bt_conv_s8, ...),
the variants those dispatchers choose between (kernels/<set>/bt_variants.h). For a board whose
set is listed in TABLES, model.c calls the variant each layer needs directly: no choice at run
time, and --gc-sections drops the variants (and dispatchers) no layer calls. Each table states the
C dispatcher's exact conditions, in the dispatcher's order (the first matching variant wins), except
rows for model.c's own calls only (doubled_ok: the dispatcher never takes them);
tests/test_kernel_variants.py checks them against the C on random layers.

A layer is described by a dict of the kernel's parameter struct fields as model.c writes them
("in"/"out" dicts with h, w, c), plus "multipliers" and "shifts" as integer lists and (conv, depthwise)
"bias_bound", a bound on the biases' magnitudes.
"""

from __future__ import annotations

from contextlib import contextmanager

from .. import targets
from ..errors import BuildtoolError
from ..model.ops import conv_macs

BT_COL_MAX = 640  # cortex-m/im2col.h: largest patch of the patch-matrix path
BT_FC_COL_MAX = 2 * BT_COL_MAX  # cortex-m/fully_connected.c: largest widened input row
BT_FC_SMALL_IN, BT_FC_SMALL_OUT = 64, 16  # cortex-m/fully_connected.c: bt_fully_connected_s8_il_small's bounds
INT32_MIN = -(1 << 31)


def rq2_ok(mult, shift) -> bool:
    """requant.h bt_rq2_ok: every multiplier 0 or in [2^30, 2^31), every shift in [-31, -2]."""
    return all((m == 0 or m >= 1 << 30) and -31 <= s <= -2 for m, s in zip(mult, shift))


def _patch(p) -> int:
    return p["kh"] * p["kw"] * p["in"]["c"]


def _cm_patch_matrix(p) -> bool:
    return _patch(p) <= BT_COL_MAX and p["out"]["c"] >= 4


def _cm_rq2(p) -> bool:
    return rq2_ok(p["multipliers"], p["shifts"])


def _pm_rq2(p) -> bool:
    """cortex-m/conv_pm.h bt_pm_rq2_ok: rq2_ok, except a channel of multiplier 0 takes any shift in [-31, 31]."""
    return all((-31 <= s <= 31) if m == 0 else (m >= 1 << 30 and -31 <= s <= -2)
               for m, s in zip(p["multipliers"], p["shifts"]))


def _fc_rq2(p) -> bool:
    n = p["n_out"] if p["per_channel"] else 1
    return rq2_ok(p["multipliers"][:n], p["shifts"][:n])


def _fc_widened(p) -> bool:
    """cortex-m/fully_connected.c's widened path: no filter offset, the input row within BT_FC_COL_MAX."""
    return p["filter_offset"] == 0 and p["n_in"] <= BT_FC_COL_MAX


def _fc_widened_rq2(p) -> bool:
    return _fc_widened(p) and _fc_rq2(p)


def _fc_ssat(p) -> bool:
    """The whole int8 range: the requantised value clamped by SSAT alone."""
    return p["act_min"] == -128 and p["act_max"] == 127


def _fc_zp_ok(p) -> bool:
    """cortex-m/fully_connected.c fc_zp_ok: per-tensor, requant.h bt_rq2_zp_ok (bt_rq2's e1 = -shift - 1 at
    most 21: the output zero point folded in)."""
    return not p["per_channel"] and -p["shifts"][0] - 1 <= 21


BT_COL3 = 512  # cortex-m/im2col.h: largest patch of the 3-pixel path (conv_pm.h's asm requantisation)


def doubled_ok(p) -> bool:
    """cortex-m/conv_pm.h's doubled sums (fast 2, bt_rq2m): only for model.c's own calls (choose_codegen marks
    the layer "codegen"; the dispatcher, and so the fused tile runtime, never takes them), when 2a stays in
    int32 on every channel: |bias| plus the largest |sum| of the patch (255 * 128 per value) below 2^30.
    Only the 3-pixel path (at most BT_COL3 values) gains from them, and only with at most 2 patch values per
    output channel: the doubling costs an SADD16 per 2 values of a pixel's patch, saves 2 instructions per
    output (ResNet-8's 3x3 layers of 144 and 288 values into 16 and 32 channels ran 70 k instructions more).
    |bias| is at most the layer's "bias_bound" (model/weight_facts.py abs_bound: a skeleton records it, so code
    generation from a skeleton chooses as from the model file; None, not known: never)."""
    k = _patch(p)
    top = p.get("bias_bound")
    return (p.get("codegen", False) and top is not None and k <= BT_COL3
            and (k <= 2 * p["out"]["c"] or (stem(p) and not p.get("tile", False)))
            and top + k * 255 * 128 < 1 << 30)


def stem(p) -> bool:
    """Could cortex-m/conv_stem.h's path take the layer (bt_stem_ok's conditions on the layer's fields, the rest
    it checks at compile time)? Its weights are widened per call, so doubled sums cost it nothing: doubled_ok
    takes any patch (vww's stem, 27 values into 8 channels: ADD, SMMLAR, ASR per output instead of AND, ORR, ADD,
    SMLAL, ASR). Not for a fused block's tile kernel (choose_codegen's tile): its out.w and pad_left are the
    tile's, not constants, so bt_conv_pm runs it, where doubled sums of a stem's patch into few channels cost
    more SADD16 than they save."""
    return (1 <= p["in"]["c"] <= 3 and p["kw"] * p["in"]["c"] % 4 != 0 and p["kh"] * p["kw"] > 1
            and p["out"]["c"] % 2 == 0 and p["out"]["w"] >= 3 and p["dil_h"] == 1 and p["dil_w"] == 1)


def op_fields(g, op) -> dict:
    """The fields stem() and medium_form() read of graph g's CONV_2D op, from its tensors and options (as model.c fills
    them)."""
    w, x, y, o = (g.tensors[op.inputs[1]].shape, g.tensors[op.inputs[0]].shape, g.tensors[op.outputs[0]].shape,
                  op.options)
    return {"in": {"c": int(x[3])}, "kh": int(w[1]), "kw": int(w[2]), "out": {"c": int(y[3]), "w": int(y[2])},
            "dil_h": o.get("dilation_h", 1), "dil_w": o.get("dilation_w", 1)}


def stem_op(g, op) -> bool:
    """stem() of graph g's CONV_2D op."""
    return stem(op_fields(g, op))


# the shortest patch the shared KxK is offered for: below it the per-output work (requantising, a pass's set-up, the
# widening) outweighs its cost line's (variant_costs.json), fitted on longer patches and wider maps: tiny's op 4
# (16x16x8 -> 8x8x16, stride 2, K 72) ran 125.8 k est. cycles on it, modelled 104.7 k, its own instance 111.9 k
# (`buildtool run tiny --board cortex-m4 --optimize-code speed`), and the fastest set took it
KXK_MIN_PATCH = 144


def kxk_ok(p) -> bool:
    """cortex-m/conv_kxk.h's conditions (bt_conv_s8_kxk_rq2_ssat, the shared KxK: model.c's calls only): a KxK filter
    without dilation over c_in % 4 == 0 channels read in place (in.pixel_stride c_in), a patch of KXK_MIN_PATCH to
    BT_COL_MAX values, an even count of output channels, bt_pm_rq2_ok with the output zero point folded into every
    channel's rounding word (requant.h bt_rq2_zp_ok: bt_pm_shift(shift) >= -22), the whole int8 range."""
    return (p["kh"] * p["kw"] > 1 and p["in"]["c"] % 4 == 0 and p["in"].get("pixel_stride", p["in"]["c"]) == p["in"]["c"]
            and p["dil_h"] == 1 and p["dil_w"] == 1 and KXK_MIN_PATCH <= _patch(p) <= BT_COL_MAX
            and p["out"]["c"] % 2 == 0
            and _pm_rq2(p) and min(p["shifts"][:p["out"]["c"]]) >= -22 and p["act_min"] == -128 and p["act_max"] == 127)


def lean_1x1(p) -> bool:
    """cortex-m/conv_1x1.h bt_conv_s8_1x1_rq2_ssat's conditions (the lean shared 1x1, issue 50): a 1x1 of any stride
    without padding (a stride over 1, ResNet's shortcuts: one output row a segment of triples), c_in % 4 == 0 in [8, BT_COL_MAX], c_out >= 4 (_cm_patch_matrix's too), every channel's shift at
    least -22 (with _pm_rq2: bt_pm_k6 folds the output zero point into every pair's rounding words; it has no other
    path). Its row follows
    bt_conv_s8_pm_rq2_ssat's and holds only where that one does: choose() never picks it, the code budget offers it
    (all_codegen)."""
    return (p["kh"] == 1 and p["kw"] == 1 and p["pad_top"] == 0
            and p["pad_left"] == 0 and p["in"]["c"] % 4 == 0 and 8 <= p["in"]["c"] <= BT_COL_MAX
            and p["out"]["c"] >= 4 and all(s >= -22 for s in p["shifts"]))


def lean_1x1_doubled(p) -> bool:
    """cortex-m/conv_1x1.h bt_conv_s8_1x1_rq2m_ssat's conditions: lean_1x1's, and doubled sums (bt_rq2m) in int32 on
    every channel (doubled_ok's bound: |bias| + K 255 128 below 2^30, the layer's "bias_bound" known) where they pay:
    one SADD16 a pixel's 2 values against 2 instructions an output saved, so K at most 4 C (its pixels' patch widened
    once for all their channels; doubled_ok's K <= 2 C is a patch per channel's). ResNet-8's shortcuts (K 16 into 32
    channels, 32 into 64: bt_rq2 ran them at 1.15x and 1.03x their compact instances with bt_rq2m)."""
    top = p.get("bias_bound")
    return (p.get("codegen", False) and lean_1x1(p) and top is not None and _patch(p) <= 4 * p["out"]["c"]
            and top + _patch(p) * 255 * 128 < 1 << 30)


def wide_1x1(p) -> bool:
    """cortex-m/conv_1x1w.h bt_conv_s8_1x1_wide's conditions (conv.c bt_1x1w_ok, which bt_conv_s8 takes where the patch
    matrix does not): a 1x1 without padding over c_in % 4 == 0 channels, BT_COL_MAX < c_in <= 3 BT_COL_MAX, c_out >= 4."""
    return (p["kh"] == 1 and p["kw"] == 1 and p["pad_top"] == 0 and p["pad_left"] == 0 and p["in"]["c"] % 4 == 0
            and BT_COL_MAX < p["in"]["c"] <= 3 * BT_COL_MAX and p["out"]["c"] >= 4)


# the table rows no dispatcher takes (model.c's own calls only): doubled_ok's, kxk_ok's, lean_1x1's, lean_1x1_doubled's
CODEGEN_ONLY = frozenset({"bt_conv_s8_pm_rq2m_ssat", "bt_conv_s8_kxk_rq2_ssat", "bt_conv_s8_1x1_rq2_ssat",
                          "bt_conv_s8_1x1_rq2m_ssat"})


def _pm_ssat(p) -> bool:
    """The patch-matrix path with bt_rq2 and the whole int8 range (bt_conv_s8_pm_rq2_ssat's row; the rows before and
    after it that narrow it)."""
    return _cm_patch_matrix(p) and _pm_rq2(p) and p["act_max"] == 127 and p["act_min"] == -128


def _always(p) -> bool:
    return True


# cortex-m/depthwise.c: the depth-multiplier-1 paths (dw_path) of model.c's whole-map calls (rows [0, out.h), in_y0 0)
DW_CELLS_ROWS = (8, 16, 32, 56)  # dw_rls: the row lengths (cells) of dw_rows' planes and dw_small's buffer rows
DWK_MIN_PIXELS = 16  # dw_kxk.h
DW_MIN_PIXELS, DW_MIN_WIDTH, DW_T_MAX, DW_SMALL_PIXELS, DW_NS1, DW_S2_WORDS = 16, 4, 8, 64, 54, 576


def _dw_mm_ok(p) -> bool:
    """depthwise.c dw_mm_ok (every bias in [-2^29, 2^29)) from the layer's "bias_bound" (2^b - 1 for b the bit length
    of the largest |bias|, so below 2^29 exactly when every |bias| is; a bias of exactly -2^29, which the C takes, and
    a bound not known (None) read as not: the paths chosen then are the general ones, as correct, slower)."""
    top = p.get("bias_bound")
    return top is not None and top < 1 << 29


def _dw_q4_terms(p) -> bool:
    """bt_dw_q4's terms (dw_small_planes_ok, dw_s2_ok, dw_rows_q4_li): bt_rq2, the whole int8 range, every bias
    dw_mm_ok and every shift bt_rq2_zp_ok (-shift - 1 <= 21)."""
    return (_cm_rq2(p) and p["act_min"] == -128 and p["act_max"] == 127 and _dw_mm_ok(p)
            and all(-s - 1 <= 21 for s in p["shifts"]))


def _dw3(p) -> bool:
    return p["kh"] == 3 and p["kw"] == 3 and p["dil_h"] == 1 and p["dil_w"] == 1


def _dwk(p) -> bool:
    """dw_kxk.h dwk_ok with its DWK_MIN_PIXELS (the whole map's)."""
    return (p["kh"] in (5, 7) and p["kw"] == p["kh"] and p["dil_h"] == 1 and p["dil_w"] == 1
            and p["stride_w"] in (1, 2) and p["stride_h"] >= 1 and p["out"]["w"] > 0
            and p["out"]["h"] * p["out"]["w"] >= DWK_MIN_PIXELS)


def _dw_s2(p) -> bool:
    """depthwise.c dw_s2_ok (stride_w 2 first) on the whole map."""
    o, i = p["out"], p["in"]
    pb, pr = (o["h"] - 1) * 2 + 3 - p["pad_top"] - i["h"], (o["w"] - 1) * 2 + 3 - p["pad_left"] - i["w"]
    return (_dw_q4_terms(p) and _dw3(p) and p["stride_w"] == 2 and p["stride_h"] == 2 and o["c"] % 4 == 0
            and o["c"] > 0 and o["w"] >= 3 and o["h"] >= 2 and 12 * (o["w"] + 1) <= DW_S2_WORDS
            and 0 <= p["pad_left"] <= 1 and 0 <= p["pad_top"] <= 1 and pb <= 1 and pr <= 1)


def _dw_small_ok(p) -> bool:
    """depthwise.c dw_small_ok on the whole map (bt_dw_small, bt_dw_small_rq2 run any layer it takes)."""
    o = p["out"]
    return ((p["stride_w"] == 2 or o["h"] * o["w"] <= DW_SMALL_PIXELS) and o["w"] >= 3 and _dw3(p)
            and p["stride_h"] >= 1 and p["stride_w"] >= 1 and o["c"] % 4 == 0 and o["c"] > 0 and o["h"] > 0
            and (o["w"] - 1) * p["stride_w"] + 3 <= 56)


def _dw_small(p) -> bool:
    """depthwise.c dw_small_ok on the whole map (and not dwk's or dw_s2's)."""
    return not _dwk(p) and not (p["stride_w"] == 2 and _dw_s2(p)) and _dw_small_ok(p)


def _dw_li(cells: int) -> int:
    return next(k for k, rl in enumerate(DW_CELLS_ROWS) if rl >= cells) if cells <= DW_CELLS_ROWS[-1] else -1


def dw_planes_cells(ow: int) -> int:
    """depthwise.c dw_planes_li: the row length of dw_small_planes' rows of ow outputs (8 cells for six or three
    outputs, bt_dwp_8's own loops; 16 for four or five, bt_dwp_16's general loop; else the shortest that holds them)."""
    return 8 if ow in (3, 6) else DW_CELLS_ROWS[_dw_li(max(ow + 2, 9))]


def dw_planes_rl(p) -> int:
    """The row length of the dw_small_planes path the layer takes, 0 for none (dw_small_planes_ok after dw_small_ok)."""
    if not (_dw_small(p) and p["stride_w"] == 1 and p["out"]["h"] >= 2 and _dw_q4_terms(p)):
        return 0
    return dw_planes_cells(p["out"]["w"])


def _dw_rows_take(p) -> bool:
    """depthwise.c dw_rows_take on the whole map (bt_dw_rows, bt_dw_rows_rq2 run any layer it takes)."""
    o = p["out"]
    return (_dw3(p) and p["stride_w"] in (1, 2) and p["stride_h"] >= 1 and o["h"] * o["w"] >= DW_MIN_PIXELS
            and o["h"] >= 2 and o["w"] >= DW_MIN_WIDTH)


def _dw_rows(p) -> bool:
    """depthwise.c dw_rows_take on the whole map (and no path before it)."""
    return not _dwk(p) and not (p["stride_w"] == 2 and _dw_s2(p)) and not _dw_small(p) and _dw_rows_take(p)


def dw_rows_transposed(p) -> bool:
    """Does depthwise.c dw_rows_geo run the layer's map transposed (a narrow, tall map at equal strides)?"""
    o = p["out"]
    return p["stride_h"] == p["stride_w"] and o["w"] < DW_T_MAX and o["h"] >= 2 * o["w"]


def dw_rows_rl(p) -> int:
    """The row length every strip of the layer's dw_rows call shares when bt_dw_q4 runs all of it (depthwise.c
    dw_rows_q4_li on dw_rows_geo: a narrow, tall map transposed), 0 for none."""
    o = p["out"]
    ow, s = (o["h"], p["stride_h"]) if dw_rows_transposed(p) else (o["w"], p["stride_w"])
    if not (_dw_rows(p) and _dw_q4_terms(p) and s == 1 and o["c"] % 4 == 0):
        return 0
    ns = strip_outputs(ow, DW_NS1)
    lis = {_dw_li(((n + 1) & ~1) + 2) for n in ns}
    return DW_CELLS_ROWS[lis.pop()] if min(ns) >= 4 and len(lis) == 1 else 0


def strip_outputs(ow: int, most: int) -> list:
    """The outputs of each strip depthwise.c dw_rows cuts a row of ow outputs into: as few as hold at most `most`
    each, balanced."""
    strips = -(-ow // most)
    return [ow * (st + 1) // strips - ow * st // strips for st in range(strips)]


def _dw_m1(p) -> bool:
    return p["depth_multiplier"] == 1


def _dw_path(path, rq2=None, rl=None):
    """A "depthwise_m1" row's condition: depth multiplier 1, the path, bt_rq2 (rq2 True) or not (False)."""
    def pred(p) -> bool:
        if not _dw_m1(p) or (rq2 is not None and _cm_rq2(p) != rq2):
            return False
        return path(p) == rl if rl is not None else path(p)
    return pred


CORTEX_M = {
    "conv": (
        ("bt_conv_s8_pm_rq2m_ssat", lambda p: _pm_ssat(p) and doubled_ok(p)),
        ("bt_conv_s8_pm_rq2_ssat", _pm_ssat),
        ("bt_conv_s8_kxk_rq2_ssat", lambda p: kxk_ok(p) and p.get("codegen", False)),
        ("bt_conv_s8_1x1_rq2_ssat", lambda p: _pm_ssat(p) and lean_1x1(p)),
        ("bt_conv_s8_1x1_rq2m_ssat", lambda p: _pm_ssat(p) and lean_1x1_doubled(p)),
        ("bt_conv_s8_pm_rq2_ssat_lo", lambda p: _cm_patch_matrix(p) and _pm_rq2(p) and p["act_max"] == 127),
        ("bt_conv_s8_pm_rq2", lambda p: _cm_patch_matrix(p) and _pm_rq2(p)),
        ("bt_conv_s8_pm", _cm_patch_matrix),
        ("bt_conv_s8_1x1_wide", wide_1x1),
        ("bt_conv_s8_direct", _always),
    ),
    "depthwise": (
        ("bt_depthwise_s8_m1_rq2", lambda p: p["depth_multiplier"] == 1 and _cm_rq2(p)),
        ("bt_depthwise_s8_m1", lambda p: p["depth_multiplier"] == 1),
        ("bt_ref_depthwise_generic_s8", _always),
    ),
    # model.c's whole-map call of a depthwise layer: the path the variant above runs for it (depthwise.c dw_path, in its
    # order), called directly; DW_KINDS says which are specialised and which shared
    "depthwise_m1": (
        ("bt_dw_kxk_rq2", _dw_path(_dwk, True)),
        ("bt_dw_kxk", _dw_path(_dwk, False)),
        ("bt_dw_s2g", _dw_path(lambda p: p["stride_w"] == 2 and _dw_s2(p))),
        *((f"bt_dw_planes_{rl}", _dw_path(dw_planes_rl, rl=rl)) for rl in DW_CELLS_ROWS),
        ("bt_dw_small_rq2", _dw_path(_dw_small, True)),
        ("bt_dw_small", _dw_path(_dw_small, False)),
        *((f"bt_dw_rows_q4_{rl}", _dw_path(dw_rows_rl, rl=rl)) for rl in DW_CELLS_ROWS),
        ("bt_dw_rows_rq2", _dw_path(_dw_rows, True)),
        ("bt_dw_rows", _dw_path(_dw_rows, False)),
        ("bt_dw_box_rq2", _dw_path(_always, True)),
        ("bt_dw_box", _dw_path(_always, False)),
        ("bt_ref_depthwise_generic_s8", _always),
    ),
    "fully_connected": (
        ("bt_fully_connected_s8_widened_rq2_few", lambda p: _fc_widened_rq2(p) and p["n_out"] < 4),
        ("bt_fully_connected_s8_widened_rq2_pc", lambda p: _fc_widened_rq2(p) and p["per_channel"]),
        ("bt_fully_connected_s8_widened_rq2_ssat32", lambda p: _fc_widened_rq2(p) and not p["per_channel"]
         and _fc_ssat(p) and p["n_in"] % 32 == 0),
        ("bt_fully_connected_s8_widened_rq2_ssat", lambda p: _fc_widened_rq2(p) and not p["per_channel"]
         and _fc_ssat(p)),
        ("bt_fully_connected_s8_widened_rq2", lambda p: _fc_widened_rq2(p) and not p["per_channel"]),
        ("bt_fully_connected_s8_widened", _fc_widened),
        ("bt_fully_connected_s8_direct", _always),
    ),
    # weights the image holds interleaved (plan/weight_order.py "fc-il"): model.c calls these instead
    "fully_connected_il": (
        ("bt_fully_connected_s8_il_small", lambda p: _fc_rq2(p) and p["per_channel"] and p["batches"] == 1
         and p["n_in"] <= BT_FC_SMALL_IN and p["n_in"] % 4 == 0 and p["n_out"] <= BT_FC_SMALL_OUT),
        ("bt_fully_connected_s8_il_rq2z_ssat", lambda p: _fc_rq2(p) and _fc_zp_ok(p) and p["act_max"] == 127
         and p["act_min"] == -128),
        ("bt_fully_connected_s8_il_rq2z_lo", lambda p: _fc_rq2(p) and _fc_zp_ok(p) and p["act_max"] == 127),
        ("bt_fully_connected_s8_il_rq2z", lambda p: _fc_rq2(p) and _fc_zp_ok(p)),
        ("bt_fully_connected_s8_il_rq2_pc_ssat", lambda p: _fc_rq2(p) and p["per_channel"] and _fc_ssat(p)),
        ("bt_fully_connected_s8_il_rq2", _fc_rq2),
        ("bt_fully_connected_s8_il_mbqm", _always),
    ),
}

# The "depthwise_m1" paths by kind, for the code budget's per-layer choice (issue 50 item 1): "specialised" paths build
# a row length, filter size, stride or requantisation mode into their loops (some in asm; the fastest where they apply,
# each its own code: a few KB), "shared" ones read the row length and the rest from the layer's struct, one function for
# every layer they take: bt_dw_small (a 3x3's small maps or stride 2), bt_dw_rows (a 3x3's rows), the box path (any
# layer) and bt_ref_depthwise_generic_s8 (any depthwise layer, the smallest and the slowest).
DW_SHARED = ("bt_dw_small_rq2", "bt_dw_small", "bt_dw_rows_rq2", "bt_dw_rows", "bt_dw_box_rq2", "bt_dw_box",
             "bt_ref_depthwise_generic_s8")
DW_KINDS = {name: "shared" if name in DW_SHARED else "specialised" for name, _ in CORTEX_M["depthwise_m1"]}


def depthwise_candidates(p) -> tuple:
    """The cortex-m functions that could run depthwise layer p's whole-map call as model.c makes it, each byte-exact:
    the path the "depthwise_m1" table picks (the fastest), then, for depth multiplier 1, the shared paths that take it
    (DW_SHARED, each in its bt_rq2 form where the layer's requantisation is: bt_dw_small where depthwise.c dw_small_ok
    holds, bt_dw_rows where dw_rows_take does, the box path: any filter, stride and dilation) and the shared
    bt_ref_depthwise_generic_s8. Their code bytes and modelled cycles are measured (code_budget._candidates)."""
    first = choose(CORTEX_M, "depthwise_m1", p)
    shared = []
    if _dw_m1(p):
        rq2 = "_rq2" if _cm_rq2(p) else ""
        shared = [f"bt_dw_{path}{rq2}" for path, ok in (("small", _dw_small_ok), ("rows", _dw_rows_take),
                                                         ("box", _always)) if ok(p)]
    return tuple(dict.fromkeys([first, *shared, "bt_ref_depthwise_generic_s8"]))


def dw_s2g_entry(p) -> str:
    """The function model.c calls for a layer on bt_dw_s2g: bt_dw_s2g_N, N = out.w % 6 (depthwise.c: bt_dws2g's loop of
    rows of N outputs alone, where bt_dw_s2g links the five, 1,214 bytes)."""
    return f"bt_dw_s2g_{p['out']['w'] % 6}"


def dw_rows_strip_outputs(p, rl: int) -> list:
    """The outputs of each strip of the layer's whole-map dw_rows call in planes of rl cells (depthwise.c dw_rows with
    a row length built in: at stride 1 strips of at most DW_NS1 and rl - 2 outputs, balanced; dw_rows_geo's narrow,
    tall map transposed)."""
    o = p["out"]
    return strip_outputs(o["h"] if dw_rows_transposed(p) else o["w"], min(DW_NS1, rl - 2))


def dw_rows_entry(p, rl: int) -> str:
    """The function model.c calls for a layer on bt_dw_rows_q4_RL: bt_dw_rows_q4e_RL where the map runs as it is (not
    dw_rows_geo's transposed) and every strip's outputs are whole quads (depthwise.c: dw_q4s, the planes' driver, with
    bt_dw_q4e_RL: no last column, no dw_sums_q_1_rl, not dw_rows' copy), else bt_dw_rows_q4_RL."""
    whole = not dw_rows_transposed(p) and all(n % 4 == 0 for n in dw_rows_strip_outputs(p, rl))
    return f"bt_dw_rows_q4{'e' if whole else ''}_{rl}"


def dw_family(name: str) -> str:
    """The "depthwise_m1" path a variant's name runs, its row length and bt_rq2 form aside (bt_dw_rows_q4_32:
    "rows_q4"): the code budget's depthwise classes are the table's paths (code_budget.budget_class)."""
    for rl in DW_CELLS_ROWS:
        name = name.removesuffix(f"_{rl}")
    return name.removeprefix("bt_").removeprefix("dw_").removesuffix("_rq2")


AVG_SXT_TAPS = 256  # cortex-m/pooling.c: bt_avg_pool_s8_sxt's largest window (its int16 halves' sums stay exact)
ADD_TAB_MIN = 256  # cortex-m/add.c: elements below which add_tab declines


def _mbqm_fast(x: int, m: int, s: int) -> int:
    """requant.h bt_mbqm_fast (TFLM's MultiplyByQuantizedMultiplier) on Python ints, shift s <= 0."""
    h = (x * m + (1 << 30)) >> 31
    mask = (1 << -s) - 1
    q = h >> -s
    return q + (1 if (h & mask) > (mask >> 1) + (1 if q < 0 else 0) else 0)


# cortex-m/add.c's variants of add_tab, in bt_add_s8_tab_taken's order (its answer less 1): the table's fill
# (add_dense.h ad_kind of the other input: AD_SMALL, else the generic form), the activation (the int8 range, else _act)
ADD_TAB_VARIANTS = ("bt_add_s8_tab_gen", "bt_add_s8_tab_small", "bt_add_s8_tab_gen_act", "bt_add_s8_tab_small_act")


def ad_kind(m: int, s: int, ls: int, off: int) -> str:
    """reference/add_dense.h ad_kind of one input of an int8 ADD (its multiplier, shift, the ADD's left shift, its
    offset): "half", "small" or "generic"."""
    if ls != 20:  # AD_LS
        return "generic"
    if m == 1 << 30 and s == 0:
        return "half"
    return "small" if m >= 1 << 30 and -31 <= s <= -1 and -128 <= off <= 128 else "generic"


def add_tab_variant(p) -> str:
    """The add_tab variant model.c calls for an int8 ADD's bt_add_params p (ADD_TAB_VARIANTS; "" when add_tab_ok
    fails): it links none of add_dense.h's loops and checks nothing at run time."""
    if not add_tab_ok(p):
        return ""
    first = (p["input1_multiplier"], p["input1_shift"]) != (1 << 30, 0)
    m, s, off = (p[f"input{1 if first else 2}_{k}"] for k in ("multiplier", "shift", "offset"))
    small = ad_kind(m, s, 20, off) == "small"  # add.c bt_add_s8_tab_taken's
    return ADD_TAB_VARIANTS[small + 2 * ((p["act_min"], p["act_max"]) != (-128, 127))]


def add_tab_ok(p) -> bool:
    """cortex-m/add.c add_tab's conditions for an int8 ADD's bt_add_params p (with its bt_bcast4 "b"): model.c then
    calls add_tab_variant's function (bt_add_s8 runs add_tab's test at run time)."""
    q = p["b"]
    run = 1
    for k in (3, 2, 1, 0):  # add_dense.h ad_one_run: one dense run
        if q["dims"][k] > 1 and not q["a_stride"][k] == q["b_stride"][k] == q["out_stride"][k] == run:
            return False
        run *= q["dims"][k]
    so, mo = p["output_shift"], p["output_multiplier"]
    if p["left_shift"] != 20 or run < ADD_TAB_MIN or not -31 <= so <= -1 or mo < 0:
        return False
    if (p["input1_multiplier"], p["input1_shift"]) == (1 << 30, 0):
        first = 0
    elif (p["input2_multiplier"], p["input2_shift"]) == (1 << 30, 0):
        first = 1
    else:
        return False
    off_a, off_b = (p["input2_offset"], p["input1_offset"]) if first else (p["input1_offset"], p["input2_offset"])
    m_b, s_b = (p["input1_multiplier"], p["input1_shift"]) if first else (p["input2_multiplier"], p["input2_shift"])
    if not (-256 <= off_a <= 256 and -256 <= off_b <= 256 and s_b <= 0 and m_b >= 0):
        return False
    bmax = max(abs(_mbqm_fast((v + off_b) << 20, m_b, s_b)) for v in (-128, 127))
    smax = (max(abs(-128 + off_a), abs(127 + off_a)) << 19) + bmax
    e = -so
    c = (1 << (e - 1)) + p["output_offset"] * (1 << e)
    return smax < 1 << 30 and abs(c) + ((smax * mo) >> 31) + 2 < 1 << 31


RISCV = {
    "conv": (
        ("bt_conv_s8_pointwise", lambda p: p["kh"] == 1 and p["kw"] == 1 and p["pad_top"] == 0
         and p["pad_left"] == 0 and INT32_MIN not in p["multipliers"][:p["out"]["c"]]),
        ("bt_conv_s8_general", _always),
    ),
}

# Variants model.c instantiates per layer instead, in a function of its own calling the set's macro
# (bt_variants.h) on the layer's constant parameters, so gcc folds them into the loops (measured by
# benchmarks/kernel_variants.py): variant -> (macro, its arguments after the dispatcher's)
INSTANCES = {"bt_conv_s8_pm_rq2m_ssat": ("BT_CONV_PM", (2, 2)), "bt_conv_s8_pm_rq2_ssat": ("BT_CONV_PM", (1, 2)), "bt_conv_s8_pm_rq2_ssat_lo": ("BT_CONV_PM", (1, 1)),
             "bt_conv_s8_pm_rq2": ("BT_CONV_PM", (1, 0)), "bt_conv_s8_pm": ("BT_CONV_PM", (0, 0)),
             "bt_conv_s8_pointwise": ("BT_CONV_PW", ())}
# macro -> the names of its arguments after the dispatcher's (cortex-m/conv_pm.h, riscv/conv_pw.h)
INSTANCE_PARAMS = {"BT_CONV_PM": ("fast", "act"), "BT_CONV_PMC": ("fast", "act"), "BT_CONV_PMM": ("fast", "act"),
                   "BT_CONV_PW": ()}
# bt_conv_params' pointer fields: a layer's own data, which a shared instance reads from the layer's struct at run time
# (Emitter.instance); and the fields a shared instance reads so where its layers differ in them (their values cost
# an instance a register, not a copy of its loops: measured in Emitter.instance)
POINTER_FIELDS = ("filter", "bias", "multiplier", "shift")
RUNTIME_FIELDS = POINTER_FIELDS + ("input_offset", "output_offset", "act_min", "act_max")


def instance_identity(variant: str, p: dict) -> str:
    """What makes two conv layers' own instances of `variant` the same code, so that model.c defines one function for
    them and the code budget counts it once (code_budget._candidates): the variant (its INSTANCES macro and their
    constant arguments), every field of layer p's bt_conv_params GCC folds into the loops' shape (the geometry: not
    RUNTIME_FIELDS) and whether it has a bias (a NULL one folds away its loads)."""
    macro, args = INSTANCES[variant]
    folded = ",".join(f"{k}={v}" for k, v in flat_fields({k: p[k] for k in CONV_FIELDS if k not in RUNTIME_FIELDS}))
    return f"{macro}{tuple(args)} {folded},bias={int(p['bias'] != '0')}"


# bt_conv_params' fields in bt_kernels.h's order (emitter.conv_fields: the layer dict's struct fields)
CONV_FIELDS = ("in", "out", "kh", "kw", "stride_h", "stride_w", "dil_h", "dil_w", "pad_top", "pad_left",
               "input_offset", "output_offset", "act_min", "act_max") + POINTER_FIELDS


def flat_fields(fields: dict, at: str = ""):
    """(C member path, value) of a parameter struct's fields, nested structs flattened (a.b.c)."""
    for k, v in fields.items():
        if isinstance(v, dict):
            yield from flat_fields(v, f"{at}{k}.")
        else:
            yield f"{at}{k}", v


# A layer's compact instance (issue 50: the code budget's third kind of candidate): the INSTANCES macro's loops in
# their compact form (cortex-m/bt_variants.h BT_CONV_PMC: conv_pm.h's asm runs as a loop of a few groups, not
# straight runs of up to 24; ResNet-8's instances 5-16 KB, compact 2-3 KB), macro -> its compact macro. The form
# differs only on the asm paths (bt_rq2 or bt_rq2m requantisation, the whole int8 range: fast > 0, act 2), and
# not for a layer conv_stem.h's path takes (stem(): that path has no compact form).
COMPACT = {"BT_CONV_PM": "BT_CONV_PMC"}


BT_PM_L3_KMAX = 132  # cortex-m/conv_pm.h BT_PM_L3_KSTRAIGHT: bt_pm_loop3's patches (K below it; on a BT_ICACHE_BYTES part
# its compact form takes K up to 624, BT_PM_L3_KLIM, which the budget's bytes classes do not model)


def compact_form(variant: str, p: dict) -> bool:
    """Is conv layer p's own instance of `variant` other code in its compact form (COMPACT)? An asm requantisation
    (fast > 0, act 2), not the stem path, and a path whose loops have a compact form: bt_pm_loop3 (K below
    BT_PM_L3_KMAX) or the row buffer of a KxK (bt_pmr_ok's conditions on the layer's fields: c_in % 4 == 0, kh at
    most 3, 3 K < 4096); elsewhere the two forms compile to the same code."""
    if not _asm_forms(variant) or stem(p):
        return False
    return 4 <= _patch(p) < BT_PM_L3_KMAX or _pmr(p)


def _asm_forms(variant: str) -> bool:
    """Does `variant`'s own instance run the asm paths whose loops have other forms (an INSTANCES macro with a compact
    and a medium one, the asm requantisation: fast > 0, act 2)?"""
    macro, args = INSTANCES.get(variant, (None, ()))
    return macro in COMPACT and macro in MEDIUM and args[0] > 0 and args[1] == 2


def _pmr(p) -> bool:
    """cortex-m/conv_pm.h bt_pmr_ok's conditions on a layer's fields (the row buffer of a KxK: c_in % 4 == 0, kh at
    most 3, 3 K < 4096)."""
    return (p["in"]["c"] % 4 == 0 and p["kh"] * p["kw"] > 1 and p["kh"] <= 3 and p["dil_h"] == 1 and p["dil_w"] == 1
            and p["out"]["w"] >= 3 and 3 * _patch(p) < 4096)


# A layer's medium instance (the code budget's fourth kind of candidate, between its instance and its compact one): its
# loops straight, as the instance's, but one copy of them where the instance has one per case of the requantisation's
# zero-point fold (a pair of channels folds it or not: known at run time), and the pixels a row leaves after its
# triples rolled: on the row-buffer path (bt_conv_pmr) one loop of triples reading the fold per pair (the instance's two
# up to 16 groups a run) and bt_pmr2x3, bt_pmr1x4 in their compact form; on bt_pm_loop3 (K below BT_PM_L3_KMAX) the
# zero point never folded, an ADD an output (the instance's two asm bodies); on the stem path (conv_stem.h) the zero
# point always added, one copy of a row's and its tail's asm (the instance's two). cortex-m/bt_variants.h BT_CONV_PMM,
# macro -> its medium macro.
MEDIUM = {"BT_CONV_PM": "BT_CONV_PMM"}
BT_PMR_ONE_COPY = 16  # cortex-m/conv_pm.h bt_conv_pmr: over 16 groups a run, one loop of triples in every form


def medium_form(variant: str, p: dict) -> bool:
    """Is conv layer p's own instance of `variant` other code in its medium form (MEDIUM)? The asm paths (_asm_forms):
    the stem's, bt_pm_loop3's (compact_form, not the row buffer's), and the row buffer's with two copies of the triples'
    runs (G = kw c_in / 4 at most BT_PMR_ONE_COPY) or pixels left after a row's triples (out.w not a multiple of 3)."""
    if not _asm_forms(variant):
        return False
    if stem(p):
        return True
    return compact_form(variant, p) and (not _pmr(p) or p["kw"] * p["in"]["c"] // 4 <= BT_PMR_ONE_COPY
                                          or p["out"]["w"] % 3 != 0)


def medium_op(variant: str, g, op) -> bool:
    """medium_form() of graph g's CONV_2D op."""
    return medium_form(variant, op_fields(g, op))

# kernel set -> (the macro its bt_variants.h defines, its table)
TABLES = {"cortex-m": ("BT_VARIANTS_CORTEX_M", CORTEX_M), "riscv": ("BT_VARIANTS_RISCV", RISCV),
          # no variants (model.c calls the dispatchers); the guard of its bt_variants.h, for the fused
          # runtime's tile kernels with filter sums made at code generation (tile_kernels.define_kb)
          "cortex-m55": ("BT_VARIANTS_CORTEX_M55", {})}

DISPATCHERS = {"conv": "bt_conv_s8", "depthwise": "bt_depthwise_s8", "depthwise_m1": "bt_depthwise_s8", "fully_connected": "bt_fully_connected_s8",
               "fully_connected_il": "bt_fully_connected_s8_il"}


def choose(table: dict, op: str, p: dict) -> str:
    """The variant of `op` ("conv", "depthwise", "fully_connected") the table picks for layer p;
    the dispatcher's own name when the table has no entry for op."""
    for name, pred in table.get(op, ()):
        if pred(p):
            return name
    return DISPATCHERS[op]


def choose_codegen(table: dict, op: str, p: dict, tile: bool = False) -> str:
    """choose() for a layer model.c calls itself: variants whose conditions read the layer's constants
    (doubled_ok) may be picked too; tile: for a fused block's tile kernel (tile_kernels.py: its shape partly
    the tile's, which conv_stem.h's path does not take)."""
    return choose(table, op, dict(p, codegen=True, tile=tile))


def all_codegen(table: dict, op: str, p: dict) -> tuple:
    """Every variant of `op` the table has whose conditions layer p meets, in the table's order (the first
    is choose_codegen's): the code budget's candidates (code_budget.py). Each row's conditions are the
    earlier rows' relaxed, so every one of them computes the layer."""
    q = dict(p, codegen=True, tile=False)
    return tuple(name for name, pred in table.get(op, ()) if pred(q))


def for_board(board: str):
    """(guard macro, table) of the board's kernel set, or None: unknown board, a set without a table,
    or a build with extra defines (the riscv32-rvv board's BT_RVV kernels keep their dispatchers)."""
    try:
        t = targets.get(board)
    except (BuildtoolError, KeyError):
        return None
    first = t.kernel_search()[0]
    if _mode == "dispatchers" or first not in TABLES or any("BT_RVV" in d for d in (*t.defines, *t.cflags)):
        return None
    return TABLES[first]



# what generated model.c does on boards with a table: "instances" (the default: variants, and its own
# instance of the INSTANCES variants' loops per such layer), "variants" (variant calls only) or "dispatchers"
# (the dispatchers, as before the tables); benchmarks compare the three
MODES = ("instances", "variants", "dispatchers")
_mode = "instances"


@contextmanager
def mode(name: str):
    """Generate model.c in another of MODES within this block."""
    global _mode
    if name not in MODES:
        raise ValueError(f"unknown kernel variant mode {name!r} (known: {', '.join(MODES)})")
    old, _mode = _mode, name
    try:
        yield
    finally:
        _mode = old


def instances() -> bool:
    """model.c instantiates the INSTANCES variants' loops per layer."""
    return _mode == "instances"


# A layer's own instance costs 2-8 KB of code and seconds of compile time each (issue 50: a 500-layer
# model's instances were 3.5 MB of code and most of its build time) for a gain that grows with its MACs:
# model.c instantiates only the layers carrying at least 1/INSTANCE_SHARE of the model's convolution MACs
# (at most INSTANCE_SHARE instances), the others call the shared variant. Every instanced layer of tiny,
# the MLPerf vww, ResNet-8 and kws, mbv2-w0.35 and mcunet-vww1 carries at least 1/117.
INSTANCE_SHARE = 128


def instanced(g) -> frozenset:
    """The CONV_2D operators (their indices) of graph g worth an instance of their own (INSTANCE_SHARE)."""
    macs = {o.index: conv_macs(g, o) for o in g.operators if o.opcode == "CONV_2D"}
    total = sum(macs.values())
    return frozenset(i for i, m in macs.items() if m * INSTANCE_SHARE >= total)


# Of those, which have one is the code budget's choice (codegen/code_budget.py: a layer's own instance and its shared
# variant are two of its candidates, their bytes and modelled cycles measured, variant_costs.json).
# The rate at which a byte of code buys cycles where a layer's code is chosen without the budget (model_c._share_dw_rows:
# depthwise layers moved onto a longer row length)
CYCLES_PER_BYTE = 12


def icache_part(board: str) -> bool:
    """Whether board is a part built for a small instruction cache (BT_ICACHE_BYTES, nucleo-l4r5zi): its layers'
    own instances are compact for it and the shared variants' loops are not (vww's ops 16-26 on the shared
    variant there: 448 K more modelled cycles, 310 K of them fetch stalls, `python3 benchmarks/mlperf_tiny.py
    --boards nucleo-l4r5zi --models vww --profile`), a cost the budget's zero-wait figures do not hold: there the
    budget offers an instanced layer its instance only."""
    try:
        t = targets.get(board)
    except (BuildtoolError, KeyError):
        return False
    return any(d.startswith("BT_ICACHE_BYTES") for d in t.defines)


def instance_rate(board: str):
    """The cycles a byte of code buys on board (CYCLES_PER_BYTE; model_c._share_dw_rows), or None on a part built for
    a small instruction cache (icache_part): each layer's own code there."""
    try:
        targets.get(board)
    except (BuildtoolError, KeyError):
        return None
    return None if icache_part(board) else CYCLES_PER_BYTE
