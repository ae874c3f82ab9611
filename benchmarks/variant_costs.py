"""Measure what each kernel variant costs, for the code budget (buildtool/codegen/code_budget.py), and write
buildtool/codegen/variant_costs.json.

    python3 benchmarks/variant_costs.py            # cortex-m (on cortex-m4) and riscv (on riscv32)
    python3 benchmarks/variant_costs.py --print    # the table only, nothing written
    python3 benchmarks/variant_costs.py --sets riscv   # one set measured again, the others' figures kept
    python3 benchmarks/variant_costs.py --sets cortex-m --classes depthwise   # those classes' rows alone again
    python3 benchmarks/variant_costs.py --sets cortex-m --classes 'conv KxK own'   # the bt_rq2 own lines alone (OWN_SHAPES)
    python3 benchmarks/variant_costs.py --table [--write-docs]   # docs/code-size.md's table of the file, nothing measured

Per kernel set, two one-layer models per layer class (conv KxK, conv stem (code_budget.budget_class), conv 1x1,
FC; a depthwise class per fastest path, one each; buildtool.zoo's
builder, shapes whose layers every variant of the class may run: a short patch and a long one, each within
kernel_variants.doubled_ok's bounds), built once per
candidate variant (forced with code_budget.forcing) with the board's toolchain at its flags and run in QEMU:
  bytes      the variant's code: the sizes (nm -S) of its own function and of the firmware's function symbols
             that are not in every other candidate's firmware of the same layer (the harness and the code all of
             them share apart)
  fit        [a, b]: the layer's modelled cycles per output value (pixel x output channel) are a + b K, K the
             values of its patch (an FC: its inputs), the line through the two shapes' figures: the run
             report's cycle estimate (firmware/cycles.py, the midpoint of its low-high) on a CPU with a timing
             table, else executed instructions. A per-MAC figure alone misses the per-output work (requantising,
             the patch's set-up), which decides the cycles of the short patches (vww's 1x1 layers of 8-64
             values run at 2-3 cycles per MAC, those of 256 at 0.4: `buildtool run --board cortex-m4`).
             [a, b, c] where a class has a third shape (FIT_SHAPES: few output channels): a + b K + c K / C, C the
             layer's (live) output channels, through the three: the work per pixel (widening its patch once for
             all its channels), which decides a rows-live layer's (vww's ops 16-26: a shared variant there ran
             1.08-1.21x the two-term line, its own instance 1.03-1.12x; the dead rows' spread is in both).
  entries    (the depthwise classes) per function model.c calls for a path (code_budget.dw_entry: bt_dw_s2g_N,
             bt_dw_rows_q4e_RL or bt_dw_rows_q4_RL, the others their path's name), "symbols": {symbol: bytes} of its
             firmware's symbols no other path's firmware of the layer holds (a symbol's .constprop/.isra suffix
             dropped); the budget counts each symbol once as a code of its own (code_budget._dw_codes: dw_q4s,
             bt_dw_widen4, dw_chan4_q4 are several paths' helpers), so a path's bytes above hold its helpers and are
             the table's alone; ENTRY_SHAPES add the entries SHAPES do not call (built, not run, against the reference)
A variant measured on several classes keeps its largest bytes, and per class its largest there (class_bytes); a
layer's own instance folds the layer's constants, so its bytes grow with its patch's straight runs (a 1x1 layer's
4-5 KB, a 3x3 of 432 values' 16.6 KB, of 72 values' 7 KB), and each of its forms keeps
  points     per class [[K, bytes], ...], one a shape (the budget charges a layer its bytes at its K, linear between
             the shapes, the nearest's beyond: not the class's largest)
A layer's compact instance (code_budget.COMPACT, kernel_variants.COMPACT: the same loops rolled) and its medium one
(code_budget.MEDIUM, kernel_variants.MEDIUM: the row buffer's triples straight, one copy, the pixels left after them
rolled) are measured as its instance is, under "compact" and "medium", on the shapes where they are other code
(kernel_variants.compact_form, medium_form; FORM_SHAPES more shapes for them and their instance's bytes alone), and
  strided    (every candidate of the 1x1 class and of the KxK's row buffer, STRIDE_SHAPES) {stride class: [[K, f],
             ...]}: its run on a layer of stride 2 over its line there (an instance's own line where it has one), the
             factor of a strided layer's cycles (code_budget._cost, _stride, stride_class)
  own_line   (an instance SHAPES' layers do not run: bt_rq2's on a KxK) its line through the FORM_SHAPES and FIT_SHAPES
             that run it, and one per bytes class of the row buffer ("conv KxK, rows, tail N") through OWN_SHAPES' (with
             the instance's strided factor there against it), read where code_budget.INSTANCE_OWN_LINES
and each own code's bytes are keyed by code_budget.bytes_class (the path conv_pm.h takes, the pixels a row leaves after
its triples; BYTES_SHAPES built for those bytes alone). The rolled forms keep
  ratio      [[K, r], ...]: its cycles over its instance's on the same layer, per shape (the budget models it as its
             instance times r, linear in K between the shapes, the nearest's beyond: the two forms share their
             per-layer error; vww's compact 1x1 layers measured 1.054-1.061x their instance, a + b K said 1.038)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from buildtool import pipeline, targets  # noqa: E402
from buildtool.codegen import code_budget, kernel_variants  # noqa: E402
from buildtool.codegen.emit import emit_c  # noqa: E402
from buildtool.firmware import runner  # noqa: E402
from buildtool.zoo.builder import GraphBuilder  # noqa: E402
from docs_tables import Out, write_docs  # noqa: E402

BOARDS = {"cortex-m": "cortex-m4", "riscv": "riscv32"}


SHAPES = (("conv KxK", (1, 16, 16, 8), lambda b, x: b.conv2d(x, 64, 3, activation="NONE")),      # K 72
          ("conv KxK", (1, 8, 8, 48), lambda b, x: b.conv2d(x, 256, 3, activation="NONE")),       # K 432
          ("conv stem", (1, 32, 32, 3), lambda b, x: b.conv2d(x, 16, 3, activation="NONE")),      # K 27
          ("conv stem", (1, 24, 24, 3), lambda b, x: b.conv2d(x, 16, 5, activation="NONE")),      # K 75
          ("conv 1x1", (1, 16, 16, 32), lambda b, x: b.conv2d(x, 64, 1, activation="NONE")),      # K 32
          ("conv 1x1", (1, 8, 8, 256), lambda b, x: b.conv2d(x, 128, 1, activation="NONE")),      # K 256
          # a 1x1 over more than BT_COL_MAX input channels (code_budget.WIDE: bt_conv_s8_1x1_wide or the direct
          # convolution): MobileNetV2's 960 -> 160 at 5x5, and K 704
          (code_budget.WIDE, (1, 5, 5, 960), lambda b, x: b.conv2d(x, 160, 1, activation="NONE")),  # K 960
          (code_budget.WIDE, (1, 6, 6, 704), lambda b, x: b.conv2d(x, 64, 1, activation="NONE")),   # K 704
          # depthwise: a class per fastest path (code_budget.budget_class), one shape each (K is a 3x3's 9 taps
          # alone), every path that may run it measured on it (kernel_variants.depthwise_candidates): vww's rows of
          # 24-48 and kws' 25x5 (bt_dw_rows_q4_32), its stride 2 layers (bt_dw_s2g), its 6x6 and 3x3 maps (planes)
          ("depthwise rows_q4", (1, 24, 24, 32), lambda b, x: b.depthwise(x, 3, activation="NONE")),
          ("depthwise s2g", (1, 24, 24, 32), lambda b, x: b.depthwise(x, 3, 2, activation="NONE")),
          ("depthwise planes", (1, 6, 6, 64), lambda b, x: b.depthwise(x, 3, activation="NONE")),
          # kws' 25x5 map (transposed, strips of 25 outputs): bt_dw_rows_q4_32's full row entry, not the 24x24 map's
          # bt_dw_rows_q4e_32 (code_budget.budget_class: a class of its own, DW_FULL; on the 24x24 map's line kws'
          # layers were modelled 0.93x their run)
          ("depthwise rows_q4" + code_budget.DW_FULL, (1, 25, 5, 64), lambda b, x: b.depthwise(x, 3, activation="NONE")),
          ("FC", (1, 64), lambda b, x: b.fully_connected(x, 64)),                                # K 64
          ("FC", (1, 512), lambda b, x: b.fully_connected(x, 64)))                               # K 512
# A layer's compact and medium instances differ from its instance only where their loops have another form
# (kernel_variants.compact_form: a 1x1 of K < 132, not the 256 above; medium_form): more shapes, measured for the
# instance's forms alone, for their bytes points and ratios (the other candidates' figures and the instance's fit stay
# the shapes' above): a 1x1 of K 96 and one of K 8 (vww's op 2 ran its medium form at 1.051x its instance, the nearest
# ratio, K 32's, said 1.018x); KxK layers whose triples' runs are one copy (G 24) and two (G 12), their rows leaving 2
# pixels (out.w 8, as tiny's and ResNet-8's 8x8 layers) and none (out.w 15); the stems above of stride 2 (S even: vww's
# and tiny's; code_budget.bytes_class, SHAPES' stems of stride 1 an odd S)
FORM_SHAPES = (("conv 1x1", (1, 12, 12, 96), lambda b, x: b.conv2d(x, 64, 1, activation="NONE")),  # K 96
               ("conv 1x1", (1, 24, 24, 8), lambda b, x: b.conv2d(x, 16, 1, activation="NONE")),  # K 8 (vww's op 2)
               ("conv KxK", (1, 15, 15, 16), lambda b, x: b.conv2d(x, 32, 3, activation="NONE")),  # K 144
               ("conv KxK", (1, 8, 8, 32), lambda b, x: b.conv2d(x, 32, 3, activation="NONE")),  # K 288
               ("conv stem", (1, 32, 32, 3), lambda b, x: b.conv2d(x, 16, 3, 2, activation="NONE")),  # K 27, S 6
               ("conv stem", (1, 24, 24, 3), lambda b, x: b.conv2d(x, 16, 5, 2, activation="NONE")))  # K 75, S 6


# A third shape for the fit's per-pixel term (fit [a, b, c]): the first 1x1's with a quarter of its output channels
# (still within doubled_ok's K <= 2 C: the same candidates), and a 3x3 as ResNet-8's 32x32 layers (K 144 into 16
# channels: the shared variants widen each pixel's patch for all its channels, the instances each input value once;
# past doubled_ok, so the doubled sums' variant keeps its two-term line), every candidate but the rolled forms
# measured on them (their ratio and every bytes point stay the shapes' above)
FIT_SHAPES = (("conv 1x1", (1, 16, 16, 32), lambda b, x: b.conv2d(x, 16, 1, activation="NONE")),  # K 32, C 16
              ("conv KxK", (1, 32, 32, 16), lambda b, x: b.conv2d(x, 16, 3, activation="NONE")))  # K 144, C 16


# A 1x1 of stride 2 (ResNet-8's op 6: 32x32x16 -> 16x16x32): a strided 1x1 runs its pixels an output row at a time (the
# unstrided one the whole map as one row), more work a pixel than the 1x1 line through SHAPES' says (ResNet-8's ops 6
# and 10 ran 1.04x and 1.036x it on the lean 1x1, 1.05x and 1.045x on their instances). Every candidate is run on it;
# each row keeps "strided": {class: [[K, run / its line at the shape]]}, which the budget multiplies a strided layer's
# line by (code_budget._cost); the instance's forms keep their bytes point (code_budget.bytes_class "conv 1x1, strided")
# A 3x3 of stride 2 as ResNet-8's ops 4 and 8 (32x32x16 -> 16x16x32, K 144; 16x16x32 -> 8x8x64, K 288): a strided KxK's
# patch rows step over input pixels, which the KxK lines through SHAPES' unstrided layers do not see (op 4 on its
# bt_rq2 instance ran 1.05x its own line, op 8 1.00x); its factor linear in K between the two
STRIDE_SHAPES = (("conv 1x1", (1, 32, 32, 16), lambda b, x: b.conv2d(x, 32, 1, 2, activation="NONE")),  # K 16, C 32
                 # ResNet-8's op 10 (16x16x32 -> 8x8x64), and one of K 64: on the shared bt_conv_s8_pm_rq2_ssat op 10
                 # was modelled 1.091x its run from the K 16 factor (1.213 there, 1.112 at K 32: the strided rows'
                 # overhead a pixel is not the same share of every K)
                 ("conv 1x1", (1, 16, 16, 32), lambda b, x: b.conv2d(x, 64, 1, 2, activation="NONE")),  # K 32, C 64
                 ("conv 1x1", (1, 8, 8, 64), lambda b, x: b.conv2d(x, 128, 1, 2, activation="NONE")),  # K 64, C 128
                 ("conv KxK", (1, 32, 32, 16), lambda b, x: b.conv2d(x, 32, 3, 2, activation="NONE")),  # K 144, C 32
                 ("conv KxK", (1, 16, 16, 32), lambda b, x: b.conv2d(x, 64, 3, 2, activation="NONE")))  # K 288, C 64


# A layer's own code folds its geometry: its bytes follow the path conv_pm.h takes (the row buffer of a KxK, rows;
# bt_pm_loop3, loop3; the stem) and, on the rows and the stem, the pixels a row leaves after its triples (out.w % 3:
# each count its own tail code), not K alone (code_budget.bytes_class). Built (not run) for the bytes of the instance
# and its forms alone, beside SHAPES' and FORM_SHAPES': the rows with tails of 1 (ResNet-8's ops 4, 5), 2 (tiny's op 4,
# ResNet-8's op 9) and 0 at K 72-576; bt_pm_loop3 on a KxK (c_in % 4 != 0 past the stem: kws's stem of 10x4 over one channel, K 40;
# K 90); stems of tails 0 (vww's: 96x96x3 -> 48x48x8) and 1 (a stride-1 one, odd S)
BYTES_SHAPES = (("conv KxK", (1, 32, 32, 16), lambda b, x: b.conv2d(x, 32, 3, 2, activation="NONE")),  # K 144, tail 1
                ("conv KxK", (1, 16, 16, 32), lambda b, x: b.conv2d(x, 32, 3, activation="NONE")),  # K 288, tail 1
                ("conv KxK", (1, 16, 16, 8), lambda b, x: b.conv2d(x, 16, 3, 2, activation="NONE")),  # K 72, tail 2
                ("conv KxK", (1, 8, 8, 64), lambda b, x: b.conv2d(x, 64, 3, activation="NONE")),  # K 576, tail 2
                ("conv KxK", (1, 15, 15, 8), lambda b, x: b.conv2d(x, 16, 3, activation="NONE")),  # K 72, tail 0
                ("conv KxK", (1, 9, 9, 32), lambda b, x: b.conv2d(x, 32, 3, activation="NONE")),  # K 288, tail 0
                ("conv KxK", (1, 9, 9, 64), lambda b, x: b.conv2d(x, 64, 3, activation="NONE")),  # K 576, tail 0
                ("conv KxK", (1, 49, 10, 1), lambda b, x: b.conv2d(x, 64, (10, 4), 2, activation="NONE")),  # loop3 K 40
                ("conv KxK", (1, 12, 12, 10), lambda b, x: b.conv2d(x, 32, 3, activation="NONE")),  # loop3 K 90
                ("conv stem", (1, 96, 96, 3), lambda b, x: b.conv2d(x, 8, 3, 2, activation="NONE")),  # K 27, tail 0
                ("conv stem", (1, 16, 16, 3), lambda b, x: b.conv2d(x, 16, 3, activation="NONE")),  # K 27 odd S, tail 1
                # 1x1: the patch's straight runs of up to 24 groups of 4 values (K 64: 16, K 128: a run of 24 and one of
                # 8), so not monotone in K (vww's 6x6x128 -> 128 layers link 7.5-8.2 KB, its K 256 one 3.6 KB); maps of
                # one block of triples (code_budget.bytes_class: vww's 3x3 ones, 1.5-6.0 KB at K 128); the strided
                # ones' bytes are STRIDE_SHAPES' (K 32: ResNet-8's op 10, 5,368 B, once charged 4,036, the K 16 one's)
                ("conv 1x1", (1, 12, 12, 64), lambda b, x: b.conv2d(x, 64, 1, activation="NONE")),  # K 64
                ("conv 1x1", (1, 6, 6, 128), lambda b, x: b.conv2d(x, 128, 1, activation="NONE")),  # K 128
                ("conv 1x1", (1, 3, 3, 128), lambda b, x: b.conv2d(x, 256, 1, activation="NONE")),  # K 128, one block
                ("conv 1x1", (1, 3, 3, 256), lambda b, x: b.conv2d(x, 256, 1, activation="NONE")),  # K 256, one block
                # an odd count of output channels (code_budget.ODD_C: conv_pm.h's odd last channel): vww's rows-live 6x6
                # layers, ops 12 (K 64, 107 live channels) and 18 (K 128, 19 live)
                ("conv 1x1", (1, 6, 6, 64), lambda b, x: b.conv2d(x, 107, 1, activation="NONE")),  # K 64, odd C
                ("conv 1x1", (1, 6, 6, 128), lambda b, x: b.conv2d(x, 19, 1, activation="NONE")))  # K 128, odd C


# Depthwise entries (code_budget.dw_entry: the function model.c calls for a path) the SHAPES above do not call, built (not
# run) for their symbols alone, the layer's fastest path against the reference: bt_dw_s2g_N for
# every N = out.w % 6 (the 24x24 map above N 0), the planes of 16 and 32 cells (out.w 5, 15)
ENTRY_SHAPES = (*(("depthwise s2g", (1, 6, 2 * w, 32), lambda b, x: b.depthwise(x, 3, 2, activation="NONE"))
                  for w in (7, 8, 3, 4, 5)),
                ("depthwise planes", (1, 5, 5, 32), lambda b, x: b.depthwise(x, 3, activation="NONE")),
                ("depthwise planes", (1, 3, 15, 32), lambda b, x: b.depthwise(x, 3, activation="NONE")))


# The bt_rq2 instance's own line on the KxK's row buffer (the instance SHAPES' layers do not run: code_budget
# INSTANCE_OWN_LINES) per bytes class (code_budget.bytes_class: the pixels a row leaves after its triples, out.w % 3,
# each count its own code): the one line through FORM_SHAPES' and FIT_SHAPES' layers (tails 0, 2 and 2) modelled
# ResNet-8's op 5 (16x16, tail 1) 1.020x its run and op 9 (8x8x64, K 576) 1.034x. Three layers a tail, their K / C
# not all equal (the line a + b K + c K / C through them), ResNet-8's among them (ops 1-2, 5, 9 and ops 4, 8 unstrided),
# then its two strided 3x3 layers: their run over their tail's line, the "strided" factor of the instance on the row
# buffer (replacing STRIDE_SHAPES' against the one line). Their class label is "conv KxK" + OWN (`--classes 'conv KxK
# own'` measures them alone; `--classes 'conv KxK'` with the rest of the class); run on the instance alone.
OWN = " own"
OWN_SHAPES = tuple(("conv KxK" + OWN, shape, lambda b, x, c=c, s=s: b.conv2d(x, c, 3, s, activation="NONE"))
                   for shape, c, s in (((1, 15, 15, 16), 32, 1), ((1, 9, 9, 32), 32, 1), ((1, 9, 9, 64), 64, 1),  # tail 0
                                       ((1, 16, 16, 16), 32, 1), ((1, 16, 16, 32), 32, 1), ((1, 16, 16, 32), 64, 1),  # 1
                                       ((1, 32, 32, 16), 16, 1), ((1, 8, 8, 32), 64, 1), ((1, 8, 8, 64), 64, 1),  # 2
                                       ((1, 32, 32, 16), 32, 2), ((1, 16, 16, 32), 64, 2)))  # strided: tails 1, 2


ALL_SHAPES = SHAPES + FORM_SHAPES + FIT_SHAPES + STRIDE_SHAPES + BYTES_SHAPES + ENTRY_SHAPES + OWN_SHAPES


def layers() -> list:
    """(class, one-layer graph every variant of the class may run, its role) of each of SHAPES ("all"), FORM_SHAPES
    ("forms": the instance's forms alone), FIT_SHAPES ("fit": the fits alone), STRIDE_SHAPES ("stride": the strided
    ratios), BYTES_SHAPES ("bytes": the instance's bytes alone, built, not run), ENTRY_SHAPES ("entry": the symbols
    alone) and OWN_SHAPES ("own": the instance's own lines per bytes class alone) (activation NONE: the full int8
    range)."""
    out = []
    roles = (["all"] * len(SHAPES) + ["forms"] * len(FORM_SHAPES) + ["fit"] * len(FIT_SHAPES)
             + ["stride"] * len(STRIDE_SHAPES) + ["bytes"] * len(BYTES_SHAPES) + ["entry"] * len(ENTRY_SHAPES)
             + ["own"] * len(OWN_SHAPES))
    for n, ((cls, shape, make), role) in enumerate(zip(ALL_SHAPES, roles)):
        b = GraphBuilder(f"cost-{cls.replace(' ', '-')}-{n}", seed=1)
        make(b, b.input(shape))
        out.append((cls, b.finish(), role))
    return out


def patch(g, op) -> int:
    """K: the values one output of the layer reads (its filter's row; a depthwise layer's its taps: code_budget.work)."""
    w = g.tensors[op.inputs[1]].shape
    if op.opcode == "DEPTHWISE_CONV_2D":
        return int(w[1] * w[2])
    return int(w[1] * w[2] * w[3]) if len(w) == 4 else int(w[-1])


def fit(points: list) -> list:
    """[a, b] of cycles per output = a + b K through the (K, C, cycles per output) points of SHAPES (one point: a 0), or
    [a, b, c] of a + b K + c K / C through three (a class with a FIT_SHAPES shape)."""
    pts = sorted(set(points))
    if len(pts) == 1:
        return [0.0, round(pts[0][2] / pts[0][0], 5)]
    if len(pts) == 3:
        a, b, c = np.linalg.solve(np.array([[1.0, k, k / n] for k, n, _ in pts]), np.array([y for _, _, y in pts]))
        return [round(float(a), 3), round(float(b), 5), round(float(c), 4)]
    (k1, _, y1), (k2, _, y2) = pts[0], pts[-1]
    b = (y2 - y1) / (k2 - k1)
    return [round(y1 - b * k1, 3), round(b, 5)]


def symbols(t, elf: Path) -> dict:
    r = subprocess.run([t.binutil("nm"), "-S", "--defined-only", str(elf)], capture_output=True, text=True, check=True)
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTwW":
            out[f[3]] = int(f[1], 16)
    return out


def measure(board: str, work: Path, classes: tuple = ()) -> dict:
    """The set's figures (the module doc); classes: only the layer classes starting with one of them (all: ())."""
    t = targets.get(board)
    found: dict = {"variants": {}, "instances": {}, "compact": {}, "medium": {}, "entries": {}}
    points: dict = {}
    ratios: dict = {}
    own_fit: dict = {}  # (name, cls) -> (K, C, cycles) of an instance SHAPES' layers do not run (fit_instance_alone)
    for cls, g, role in layers():
        if classes and not cls.startswith(classes):
            continue
        # (a depthwise layer not in place: model.c calls its path then, as in a model's layers between others)
        plan = pipeline.plan_memory(g, pipeline.PlanOptions(inplace=not cls.startswith("depthwise")))
        made = emit_c(plan, g, board, t.weights_align).code_plan
        offers = made.offers
        if not offers:  # model.c runs the layer on a path of its own (no variant table row)
            print(f"{board} {cls:9s} no variants to choose from", flush=True)
            continue
        (op, (_, names, inst)), = offers.items()
        x = np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
        runs = {}
        small = inst and op in made.compact_ops  # its compact instance other code (kernel_variants.compact_form)
        o_ = g.operators[op]
        forms = [f for f in code_budget.ROLLED if small and (
            kernel_variants.medium_op(inst, g, o_) if f == code_budget.MEDIUM else not kernel_variants.stem_op(g, o_))]
        inst_codes = (["instance"] if inst else []) + forms
        if role in ("forms", "bytes"):  # forms alone: the bytes' common theirs
            codes = inst_codes
        elif role == "entry":  # an entry against the reference
            codes = [names[0], names[-1]]
        elif role == "own":  # an own line: the instance alone
            codes = ["instance"] if inst else []
        else:
            codes = inst_codes + list(names)
        entries = {}
        for code in codes:
            with code_budget.forcing(code):
                out = work / board / cls.replace(" ", "-") / code
                pipeline.build(g, board, out, plan=plan)
                entries[code] = re.search(rf"\b(\w+)\(&op{op}_p,", (out / "model.c").read_text())
                if role in ("entry", "bytes"):
                    runs[code] = (symbols(t, out / "firmware.elf"), None)
                    continue
                _, prof, _ = runner.run(board, out, x)
            o = next(o for o in prof["ops"] if o["op"] == op)
            k = patch(g, g.operators[op])
            per = (sum(o["cycles_estimate"]) / 2 if "cycles_estimate" in o else o["count"]) / (o["macs"] / k)
            runs[code] = (symbols(t, out / "firmware.elf"), (k, per))
        if not runs:  # a forms shape where the layer has no instance (riscv's KxK)
            continue
        common = set.intersection(*(set(s) for s, _ in runs.values()))
        if cls.startswith("depthwise"):  # each path's entry: its symbols no other path's firmware holds
            for code, (syms, _) in runs.items():
                entry = entries[code].group(1) if entries[code] else code
                mine = found["entries"].setdefault(entry, {"symbols": {}})["symbols"]
                for sym, v in syms.items():
                    if sym not in common:
                        base = sym.split(".")[0]  # dw_rows_q4.constprop.0
                        mine[base] = max(mine.get(base, 0), v)
                print(f"{board} {cls:9s} {entry:44s} {sum(mine.values()):>6,} B  "
                      f"({', '.join(f'{k} {v}' for k, v in sorted(mine.items()))})", flush=True)
        if role == "entry":
            continue
        c_out = int(g.tensors[g.operators[op].outputs[0]].shape[-1])
        if role == "own":
            own_lines(found["instances"].setdefault(inst, {"bytes": 0, "fit": {}, "class_bytes": {}}), g.operators[op],
                      g, cls.removesuffix(OWN), runs["instance"][1], c_out, own_fit)
            continue
        for code, (syms, run) in runs.items():
            k, per = run or (patch(g, g.operators[op]), None)
            table, name = {"instance": ("instances", inst), **{f: (f, inst) for f in code_budget.ROLLED}}.get(
                code, ("variants", code))
            own = f"op{op}_conv" if table != "variants" else code  # its own symbol, even when it is the only candidate
            size = sum(v for s, v in syms.items() if s not in common or s.split(".")[0] == own)  # op1_conv.constprop.0
            row = found[table].setdefault(name, {"bytes": 0, "fit": {}, "class_bytes": {}})
            if role not in ("fit", "stride", "bytes"):
                row["bytes"] = max(row["bytes"], size)
                row["class_bytes"][cls] = max(row["class_bytes"].get(cls, 0), size)
            pk = code_budget.bytes_class(g, g.operators[op], cls)
            if table != "variants" and (role != "stride" or "strided" in pk):
                # a layer's own code: its bytes at each K and its bytes class (code_budget._bytes; a strided KxK's
                # are an unstrided one's class, BYTES_SHAPES')
                row.setdefault("points", {})[pk] = sorted(row.get("points", {}).get(pk, []) + [[k, size]])
            if per is None:  # built for its bytes alone
                print(f"{board} {cls:9s} {name + _LABEL.get(table, ''):44s} {size:>6,} B K {k:4d} ({pk})", flush=True)
                continue
            own_line = row.get("own_line", {}).get(cls) if table == "instances" else None
            if role == "stride" and table in ("instances", "variants") and (cls in row["fit"] or own_line):
                # its run over its line at the shape (an instance SHAPES' layers do not run: its own line): the
                # strided layers' factor (code_budget._cost)
                line = code_budget._per_output(row["fit"].get(cls) or own_line, k, c_out)
                sk = code_budget.stride_class(cls, pk)  # a KxK's path: the row buffer
                row.setdefault("strided", {})[sk] = sorted(row.get("strided", {}).get(sk, []) +
                                                           [[k, round(per / line, 5)]])
            if role in ("forms", "fit") and table == "instances" and (table, name, cls) not in points:
                # an instance SHAPES' layers do not run (bt_rq2's: their K <= 2 C takes the doubled sums'): its own line
                # through the shapes that run it (FORM_SHAPES', FIT_SHAPES'), where the budget took the doubled one's
                # gain over its variant (ResNet-8's 3x3 16 -> 16 layers modelled 3.30 M on their medium instance,
                # run 2.91 M)
                own_fit.setdefault((name, cls), []).append((k, c_out, per))
                row.setdefault("own_line", {})[cls] = fit(own_fit[(name, cls)])
            if role == "all" or (role == "fit" and table in ("instances", "variants") and (table, name, cls) in points):
                # fits: SHAPES', FIT_SHAPES' (a candidate the shapes' layers had not, as the KxK's own instance without
                # doubled sums, none: a one-point line; the rolled forms' unused by the budget: their ratio)
                points.setdefault((table, name, cls), []).append((k, c_out, per))
                row["fit"][cls] = fit(points[(table, name, cls)])
            if table in code_budget.ROLLED and role in ("all", "forms"):  # against its instance on the same layer
                ratios.setdefault((table, name, cls), []).append([k, round(per / runs["instance"][1][1], 5)])
                row.setdefault("ratio", {})[cls] = sorted(ratios[(table, name, cls)])
            print(f"{board} {cls:9s} {name + _LABEL.get(table, ''):44s} {size:>6,} B "
                  f"K {k:4d} {per:8.2f} cycles/output", flush=True)
    return found


def own_lines(row: dict, op, g, cls: str, run: tuple, c_out: int, own_fit: dict) -> None:
    """An OWN_SHAPES layer's run (K, cycles per output) on its instance (row, on class cls): an unstrided one's a point
    of the own line of its bytes class (code_budget.bytes_class: "conv KxK, rows, tail 1"), the line through its
    points (fit); a strided one's its run over that line at its K, the row's "strided" factor on its stride class at
    that K (replacing one STRIDE_SHAPES measured against the one own line: code_budget._cost reads the tail's line
    where it has one)."""
    k, per = run
    pk = code_budget.bytes_class(g, op, cls)
    if code_budget.strided(op):
        sk = code_budget.stride_class(cls, pk)
        f = round(per / code_budget._per_output(row["own_line"][pk], k, c_out), 5)
        row.setdefault("strided", {})[sk] = sorted([p for p in row.get("strided", {}).get(sk, []) if p[0] != k] +
                                                   [[k, f]])
        print(f"{cls:9s} {pk:28s} own instance K {k:4d} {per:8.2f} cycles/output: strided x{f:g}", flush=True)
        return
    own_fit.setdefault((id(row), pk), []).append((k, c_out, per))
    row.setdefault("own_line", {})[pk] = fit(own_fit[(id(row), pk)])
    print(f"{cls:9s} {pk:28s} own instance K {k:4d} {per:8.2f} cycles/output", flush=True)


_LABEL = {"instances": " (own instance)", "compact": " (compact instance)", "medium": " (medium instance)"}


def merge_classes(old: dict, new: dict, classes: tuple) -> dict:
    """A set's figures `old` with those of the classes starting with `classes` replaced by `new`'s (each row's fit,
    class_bytes, points and ratio per class; a row's bytes its largest class_bytes, a row left with no class dropped)."""
    out = json.loads(json.dumps(old))
    if new.get("entries") or any("depthwise".startswith(c) or c.startswith("depthwise") for c in classes):
        out["entries"] = {**(out.get("entries", {}) if not any("depthwise".startswith(c) for c in classes) else {}),
                          **new.get("entries", {})}
    for table in ("variants", "instances", "compact", "medium"):
        rows = out.setdefault(table, {})
        for name in list(rows):
            for key in ("fit", "class_bytes", "points", "ratio", "strided", "own_line"):
                for cls in [c for c in rows[name].get(key, {}) if c.startswith(classes)]:
                    del rows[name][key][cls]
        for name, row in new.get(table, {}).items():
            mine = rows.setdefault(name, {"bytes": 0, "fit": {}, "class_bytes": {}})
            for key in ("fit", "class_bytes", "points", "ratio", "strided", "own_line"):
                if key in row:
                    mine.setdefault(key, {}).update(row[key])
        for name in list(rows):
            if not rows[name].get("fit") and not rows[name].get("class_bytes") and table != "entries":
                del rows[name]
            elif rows[name].get("class_bytes"):
                rows[name]["bytes"] = max(rows[name]["class_bytes"].values())
    return out


def measure_sets(path: Path, doc: str, measure, boards: dict = BOARDS, classes: list | None = None) -> None:
    """The command line of a script measuring per kernel set (`boards`: set -> the board measured on) and writing
    path: --sets, --print; measure(board, work folder) -> the set's figures; path keeps the sets not measured.
    classes: the layer classes a --classes option may name (measure then takes the classes given as a third
    argument, and their figures replace those of the set's file, merge_classes); None: no such option."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--sets", default=",".join(boards))
    ap.add_argument("--print", action="store_true", help="print the figures, write nothing")
    if classes is not None:
        ap.add_argument("--classes", default="", help="comma-separated layer classes (prefixes: depthwise) measured "
                        "again, the other classes' figures kept")
    a = ap.parse_args()
    chosen = tuple(c for c in getattr(a, "classes", "").split(",") if c)
    unknown = [c for c in chosen if not any(k.startswith(c) for k in classes)]
    if unknown:
        ap.error(f"no layer class starts with {', '.join(unknown)}; give one of: {', '.join(classes)}")
    cc = {s: subprocess.run([targets.get(boards[s]).cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
          for s in a.sets.split(",")}
    with tempfile.TemporaryDirectory(prefix=f"bt-{path.stem.replace('_', '-')}-") as tmp:
        sets = {s: measure(boards[s], Path(tmp), *((chosen,) if classes is not None else ())) for s in a.sets.split(",")}
    if not a.print:  # a --sets subset replaces those sets' figures, the others' stay
        old = json.loads(path.read_text()) if path.exists() else {}
        if chosen:  # and a --classes subset those classes' figures in them
            sets = {s: merge_classes(old.get("sets", {}).get(s, {}), new, chosen) for s, new in sets.items()}
        sets = {**old.get("sets", {}), **sets}
        cc = {**old.get("toolchain", {}), **cc}
        out = {"command": f"python3 benchmarks/{Path(sys.argv[0]).name}", "toolchain": cc, "sets": sets}
        path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
        print(f"wrote {path.relative_to(ROOT)}")


def _line(fit: list) -> str:
    """a + b K [+ c K / C] of a fit."""
    return f"{fit[0]:g} + {fit[1]:g} K" + (f" + {fit[2]:g} K / C" if len(fit) > 2 else "")


def _strided(r: dict) -> str:
    """A row's strided factors (STRIDE_SHAPES), as the table prints them."""
    return "".join(f"; strided {c} x{_at(pts, lambda v: f'{v:g}')}" for c, pts in sorted(r.get("strided", {}).items()))


def _at(points: list, fmt) -> str:
    return ", ".join(f"{fmt(v)} at K {k}" for k, v in points)


def table(costs: dict) -> list:
    """docs/code-size.md's table of variant_costs.json: per set (on its board) the variants (bytes, cycles per output
    value by class), then each instance form (bytes at each measured K; its own line, or how the budget models it)."""
    rows = ["| board | candidate | bytes | cycles per output value (K: values read) |", "|---|---|---:|---|"]
    label = {"instances": "own instance", "medium": "medium instance", "compact": "compact instance"}
    for s, figures in sorted(costs["sets"].items()):
        board = figures.get("board", BOARDS.get(s, s))
        for name, r in sorted(figures.get("variants", {}).items()):
            sizes = sorted(set(r.get("class_bytes", {}).values()) or {r["bytes"]})
            size = f"{r['bytes']:,}" if len(sizes) == 1 else ", ".join(
                f"{c} {b:,}" for c, b in sorted(r["class_bytes"].items()))
            rows.append(f"| {board} | {name} | {size} | "
                        f"{', '.join(f'{c} {_line(f)}' for c, f in sorted(r.get('fit', {}).items()))}{_strided(r)} |")
        for table_ in ("instances", "medium", "compact"):
            for name, r in sorted(figures.get(table_, {}).items()):
                size = "; ".join(f"{c} {_at(pts, lambda b: f'{b:,}')}" for c, pts in sorted(r.get("points", {}).items()))
                if table_ in code_budget.ROLLED:
                    cyc = "its instance's times the measured ratio: " + "; ".join(
                        f"{c} {_at(pts, lambda v: f'{v:g}')}" for c, pts in sorted(r.get("ratio", {}).items()))
                elif r.get("fit"):
                    cyc = ", ".join(f"{c} {_line(f)}" for c, f in sorted(r["fit"].items()))
                else:
                    own = "; ".join(f"{c} {_line(f)}" for c, f in sorted(r.get("own_line", {}).items()))
                    cyc = "its variant's, times the measured instance's gain over its own variant" + (
                        f" (its own lines measured, unused: code_budget.INSTANCE_OWN_LINES; {own})" if own else "")
                cyc += _strided(r)
                size = size or f"{r['bytes']:,}"
                rows.append(f"| {board} | {name} ({label[table_]}) | {size} | {cyc} |")
        for name, r in sorted(figures.get("entries", {}).items()):
            syms = r["symbols"]
            rows.append(f"| {board} | {name} (entry: its symbols, each counted once) | {sum(syms.values()):,} | "
                        + (", ".join(f"{k} {v:,}" for k, v in sorted(syms.items())) if len(syms) <= 8
                           else f"{len(syms)} symbols") + " |")
    return rows


def main() -> None:
    if "--table" in sys.argv[1:]:
        ap = argparse.ArgumentParser(description="docs/code-size.md's table of variant_costs.json (nothing measured)")
        ap.add_argument("--table", action="store_true")
        ap.add_argument("--write-docs", action="store_true", help="also put it in docs/code-size.md")
        a = ap.parse_args()
        out = Out()
        for line in table(json.loads(code_budget.COSTS.read_text())):
            out(line)
        if a.write_docs:
            write_docs("docs/code-size.md", "variant_costs.py --table", out.text)
        return
    measure_sets(code_budget.COSTS, __doc__, lambda board, work, classes: dict(board=board, **measure(board, work, classes)),
                 classes=sorted({cls for cls, _, _ in ALL_SHAPES}))


if __name__ == "__main__":
    main()
