"""What a fused tile kernel's calls cost over its kernel's cost line (fused_c.offer prices the code budget's
candidates for a tile kernel with it).

The variants' cost lines (code_budget.layer_cycles) are measured on whole layers, where every pixel is in a triple and
a pass over the channel pairs runs many pixels. A fused block calls a conv's kernel once a tile, band, row or column
(call_pixels: the output pixels of each call), and every call pays the pass's set-up again and, on the lean variants,
the tail of one or two pixels widened (call_slots). calls_factor turns the pixels of the calls into the factor by which
a candidate's line is multiplied; offer keeps the candidates within SHARED_TILE_SLACK / LEAN_TILE_SLACK of the
instance's line times its own factor.
"""

from __future__ import annotations

from . import tile_kernels


# Each shared variant offered a tile kernel (fused_c.shared_tile) has modelled cycles on the layer run whole within
# this of its own instance's (fused_c.offer; vww's op 6: bt_conv_s8_pm_rq2_ssat 969,667 against 879,140, +10.3 %, its
# block run faster): the budget's balanced slack otherwise spends itself on tiles whose measured cost follows the
# model's (mbv2-w0.35's streamed least-RAM ops 24, 28, 32: 441 k -> 680 k cycles each on bt_conv_s8_pm_rq2_ssat_lo,
# +54 % of their own instance's, run +153 k each)
SHARED_TILE_SLACK = 0.11


# the lean shared conv variants (kernel_variants.kxk_ok's, lean_1x1's, lean_1x1_doubled's: the plain plans' code budget
# picks them) offered to the tile kernels fused_c.shared_tile does not offer the shared variants (box tiles; row-band tiles of
# lean_entry's), within SHARED_TILE_SLACK as there. A box tile calls them through fx_lean_k (LEAN_HELPER): a column a
# call where fx_win_kb called them an output row of 1-2 pixels (each call setting up every channel pair: ResNet-8's ops 4,
# 5, 8 on bt_conv_s8_kxk_rq2_ssat so, 33,631,653 -> 35,426,826 est. cycles). ResNet-8's least-RAM plan on cortex-m4
# (`buildtool run ... --optimize ram`; benchmarks/code_size.py --fused): ops 1, 2, 4, 5, 8, 9 on the KxK, 6 and 10 on
# bt_conv_s8_1x1_rq2m_ssat, code 40,596 -> 26,260 B (plain 17,940), est. cycles 33,631,653 -> 33,165,438.
LEAN_KXK = "bt_conv_s8_kxk_rq2_ssat"
LEAN_TILE = frozenset({LEAN_KXK, "bt_conv_s8_1x1_rq2_ssat", "bt_conv_s8_1x1_rq2m_ssat"})


# What a tile's kernel calls cost over the kernel's cost line, measured on whole layers where every pixel is in a
# triple and a pass runs many (calls_factor): fused_c.tile_kernel offers a lean variant (LEAN_TILE) where its line is within
# SHARED_TILE_SLACK of the instance's and its line times its factor on its calls within SHARED_TILE_SLACK (column
# tiles, shared_tile's) or LEAN_TILE_SLACK (the others) of the instance's line times the instance's factor on the
# instance's calls (fx_lean_k calls the lean ones on a box tile a column a call, fx_win_kb the instance a row a call).
# A call costs its pixels' work (call_slots: the lean variants have no tail of one or two pixels) and, for each pass
# over its triples, every channel pair's set-up: LEAN_PASS instructions a pair (bt_pm_k6, the pair loop's entry)
# against a triple's LEAN_TRIPLE + LEAN_GROUP K / 4 a pair (its requantisation and stores; a group of 24 MACs a 4 of
# K), counted in the cortex-m4 build's bt_conv_s8_1x1_rq2_ssat (arm-none-eabi-objdump -d; an instance's loops taken
# alike). Calls of few pixels cost the lean variants several times their line: mbv2-w0.35's streamed least-RAM op 61
# (1x1 into 1,280 channels, a pixel a call) ran 6.33 -> 13.98 M instructions on bt_conv_s8_1x1_rq2m_ssat (`buildtool
# run mbv2-w0.35.tflite --optimize ram --input-streamed`); mcunet-in3's streamed op 16 (a 1x1's column tiles, calls of
# 2 pixels, offered it as shared_tile's) its block 14-17 47.44 M on bt_conv_s8_1x1_rq2_ssat, 42.49 M on
# bt_conv_s8_pm_rq2_ssat (benchmarks/fusion.py --instructions --blocks). fx_lean_k never writes a row-banded output a
# column a call (it calls those a row at a time: mbv2-w0.35's ops 41 and 45 +6 %): not offered there (tile_kernel).
LEAN_PASS, LEAN_TRIPLE, LEAN_GROUP = 80, 55, 19
# A shared patch-matrix variant's pass (bt_conv_s8_pm*, run-time K and zero point: bt_pm_k6, bt_pm_loop3r's entry)
# sets every pair up in more instructions than an instance's (K, the fold constant: bt_pm_loop3): counted by QEMU
# (runner.run(functions=True, region=0): each instruction address's executions) on mobilenetv2's least-RAM plan in the
# arena, cortex-m4, op 3 (a 1x1 16 -> 96 channels, 3,120 column calls of ~3 pixels): on bt_conv_s8_pm_rq2m_ssat a pair
# costs 152 instructions a triple and 109 a pass (146,064 passes), on its instance op3_tk 156 and 55; the block 0-5
# 125.36 M -> 117.31 M instructions on the instance. An instance's pass is priced LEAN_PASS (as the lean ones'
# are measured against it); a shared pm variant's that and SHARED_SETUP (109 - 55) more.
SHARED_SETUP = 54
# ... within this on the tiles a lean variant alone is offered to (box tiles, row bands: lean_entry), where it is the
# code budget's small candidate (ResNet-8's least-RAM plan on cortex-m4: code 40.7 -> 25.6 KiB): ResNet-8's op 8
# (row-band calls of 1-2 pixels on the KxK, est. cycles +0.48 M for 2.1 KB less: lean_entry) modelled 1.48x, its op
# 10 (the doubled 1x1, calls of 8 pixels on row bands) 1.31x; with SHARED_TILE_SLACK there only ops 1, 2 and 4 take
# them: 36.9 KiB (benchmarks/code_size.py --fused), 7-8 % fewer instructions. Not the lean 1x1 on calls of one pixel
# (2.7x: mbv2-w0.35's op 61 above).
LEAN_TILE_SLACK = 0.5


def call_slots(variant: str, n: int) -> tuple:
    """(the pixels' work, passes) of variant's call of n output pixels: conv_1x1.h's (a call of 1-2 pixels widened
    thrice a pixel, a triple's work and a pass each; two left after the triples the last triple again in a pass of its
    own, one left bt_mv1x4's four channels at a time, no pair's set-up), conv_kxk.h's (one pass; a short triple of two
    a triple's work, of one bt_kxk_one: 12 instructions a group of the pair against the triple's 25), an instance's
    (its tail of 1-2 pixels their share)."""
    if variant == LEAN_KXK:
        return n + (n % 3 == 2) + (11 / 25 if n % 3 == 1 else 0), 1
    if variant not in LEAN_TILE:
        return n, 1
    if n < 3:
        return 3 * n, n
    return n + (n % 3 == 2), 1 + (n % 3 == 2)


def calls_factor(variant: str, layer: dict, pixels: list | None, shared: bool = False) -> float:
    """Modelled cost of variant's calls of `pixels` output pixels each (call_pixels) over its cost line's, which
    holds on pixels in whole triples, passes of many: 1 without calls. shared: the shared variant itself, not an
    instance of it (a pass's pair set-up SHARED_SETUP more, but on the lean ones: their LEAN_PASS is theirs)."""
    if not pixels:
        return 1.0
    setup = LEAN_PASS + (SHARED_SETUP if shared and variant not in LEAN_TILE else 0)
    pass_px = 3 * setup / (LEAN_TRIPLE + LEAN_GROUP * layer["kh"] * layer["kw"] * layer["in"]["c"] / 4)
    return sum(w + p * pass_px for w, p in (call_slots(variant, n) for n in pixels)) / sum(pixels)


def call_pixels(fields: dict, boxes, ct: list, wp: int, in_rows: bool, out_rows: bool, lean: bool,
                cols: int) -> list:
    """The output pixels of each kernel call a conv's all-channel tiles make (boxes: fused_c out_boxes' (r, c, ra, rb,
    ca, cb) of its output; ct: the output's column axis table; wp: its buffer's width; in_rows, out_rows: its input,
    output row-banded): fx_lean_k's (lean: a column a call where the box is narrower than the window and taller than
    wide, else fx_win_kb's), else reference/fused_ref.h win_kind_o's: a 1x1's column calls (a column of rb - ra pixels;
    cols: the set's FX_COL_CALLS, tile_kernels.col_pixels), row bands a row a call (a 1x1's runs of rows one after
    another: the box, taken as one run), a box as wide as its output buffer one call, else a row a call (calls_factor
    prices them)."""
    f = fields
    pw = tile_kernels.pointwise(f) and f["stride_h"] == 1 and f["stride_w"] == 1
    calls = []
    for _, c, ra, rb, ca, cb in boxes:
        h, w = rb - ra, cb - ca
        whole = not out_rows and ca == ct[c][2] and w == wp
        if lean and not (out_rows or w == wp or h <= w):  # fx_lean_k: a column a call
            calls += [h] * w
        elif not lean and pw and h > 1 and not out_rows and (w == 1 or (w != wp and w <= cols and h > w)):
            calls += [h] * w  # a 1x1's column calls
        elif not lean and in_rows:
            calls += [h * w] if f["kh"] == 1 and (out_rows or w == wp) else [w] * h
        else:  # fx_win_kb's: a whole box one call, else a row a call
            calls += [h * w] if whole else [w] * h
    return calls
