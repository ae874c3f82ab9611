"""Our cortex-m kernel set against CMSIS-NN, layer by layer, on the shared models (Cortex-M4, QEMU).

    python benchmarks/kernels_vs_cmsis.py                    # the four shared models
    python benchmarks/kernels_vs_cmsis.py --models dscnn_kws --layers
    python benchmarks/kernels_vs_cmsis.py --board cortex-m55 # Helium: our cortex-m55 set vs CMSIS-NN (MVEI)
    python benchmarks/kernels_vs_cmsis.py --mem nucleo-l4r5zi  # modelled cycles under a part's memory model
    python benchmarks/kernels_vs_cmsis.py --mem nucleo-l4r5zi --models mobilenetv2_160_a1 --ops 9,16 --layers
                                                             # only those operators (their indices)

With --mem PART (a part of buildtool/firmware/memory_model.py whose core is --board's: nucleo-l4r5zi,
netduinoplus2) each side is measured as it runs on that part, under the part's memory model (the plugin
simulates its flash wait states, read width, caches and prefetch on every fetch and load in flash; SRAM at zero
wait states), in modelled cycles (the Cortex-M4 TRM estimate's high of each call's instruction mix plus its
memory stalls, memory_model.modelled_cycles). CMSIS-NN as TFLite Micro runs it: its calls in the bench image,
code, weights and biases in flash, the multipliers and shifts (TFLite Micro's Prepare computes them into the
arena) and the buffers in SRAM. Ours is the product: the model's firmware built by buildtool for PART (model.c's
own kernel instances, the part's kernel defines, the weights the part's plan stages in SRAM) run on the part's
QEMU machine, each layer's region; where that firmware does not fit the part or the machine, each layer built
alone; a 1x1 convolution that does not fit alone is built with its output over its own dying input
(PlanOptions.inplace_pointwise: mobilenetv2_160_a1's 16 -> 96 at 80x80 in 616,496 B instead of 716,800); a layer
that does not fit alone even so keeps the bench image's run-time variants (built with the part's defines, weights
in flash), marked '*'. Beside: ours / CMSIS-NN at zero wait states, the run-time variants'
ratio, our flash floor (the weights and biases our firmware reads from flash, read once at the flash's pace) and
our floor (our zero-wait cycles plus the stalls of that single pass: where ours / CMSIS-NN sits on it, only fewer
instructions move it).

With --board cortex-m55 the image (QEMU mps3-an547) is linked with the board's own memory map
(buildtool/boards/cortex_m/m55.py): code in the 512 KiB ITCM, the weights, biases, multipliers and
shifts in the 8 MiB QSPI flash at 0x38000000, the buffers in the SSE-300 SRAM (in the DDR when they do
not fit), so all five shared models run (mobilenetv2_160_a1: 3.5 MB of weights).

For every int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED layer of each model, one firmware image
(mps2-an386, cortex-m4, -O2) holds the layer's real weights, bias and quantisation and runs it on a
pseudo-random input three times: CMSIS-NN (built from ../shared/peers/cmsis-nn, its s8 wrappers as
TFLite Micro calls them), our cortex-m set, and our reference set. The project's QEMU plugin counts
the instructions of each call (one marker region per call) and the image checks that the three
outputs are byte-identical. Prints, per model, a table per layer class and in total (with
--layers also per layer): instructions of CMSIS-NN, ours, the reference, ours / CMSIS-NN, identical.
CMSIS-NN needs newlib's string.h (Debian: libnewlib-arm-none-eabi). Without ../shared it says so and
exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "buildtool" / "kernels" / "tests"))

import kbuild  # noqa: E402
from buildtool.firmware import cycles, memory_model, op_cost  # noqa: E402
from buildtool.model import ops, reader as tflite_reader  # noqa: E402
from buildtool.plan import weight_order  # noqa: E402
from buildtool.refops import prepare  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared"))
CMSIS = SHARED / "peers" / "cmsis-nn"
MODELS = ["mbv2_w035_144", "tiny_cnn_32", "dscnn_kws", "resnet_concat_64", "mobilenetv2_160_a1"]
CPU = "cortex-m4"
# --board: (our kernel set, CMSIS-NN's defines). cortex-m55: the Helium set against CMSIS-NN's MVE paths
# (ARM_MATH_MVEI), on QEMU mps3-an547 (kernels/tests/kbuild.py ARM_BOARDS)
BOARDS = {"cortex-m4": ("cortex-m", ()), "cortex-m55": ("cortex-m55", ("ARM_MATH_MVEI",))}
KSET, CMSIS_DEFINES = BOARDS[CPU]
MEM = None  # --mem: the part's MemoryModel (memory_model.MODELS), None: instructions at zero wait states
MEM_DEFINES: tuple = ()  # the part's kernel defines (its board's: BT_ICACHE_BYTES), for our set only
OPS: frozenset | None = None  # --ops: the operator indices measured (None: every conv, depthwise and FC layer)


def use_board(board: str) -> None:
    """Measure on board (a key of BOARDS) from now on."""
    global CPU, KSET, CMSIS_DEFINES
    CPU = board
    KSET, CMSIS_DEFINES = BOARDS[board]


# Where the image's constant data (weights, biases) goes, per board: the board's flash (.rodata), or for
# cortex-m55 the QSPI flash of the board's own memory map (buildtool/boards/cortex_m/m55.py: 8 MiB at
# 0x38000000; the ITCM's 512 KiB holds code only), so every shared model's weights fit
BLOB_SECTION = {"cortex-m55": ".bt_weights_qspi"}
CLASSES = ("stem conv (c_in % 4 != 0)", "pointwise 1x1", "other conv", "depthwise", "fully connected")
CMSIS_DIRS = ("ConvolutionFunctions", "FullyConnectedFunctions", "NNSupportFunctions", "TransposeFunctions")


def _core(part: str) -> str:
    from buildtool.targets import boards
    return boards()[part].cpu


def use_memory_model(part: str | None) -> None:
    """Measure modelled cycles under part's memory model from now on (None: instructions)."""
    global MEM, MEM_DEFINES
    from buildtool.targets import boards
    MEM = memory_model.get(part) if part else None
    MEM_DEFINES = tuple(boards()[part].defines) if part else ()


def _machine(part: str) -> str:
    """The QEMU machine a buildtool board's firmware runs on."""
    from buildtool.targets import boards
    run = boards()[part].run
    return run[run.index("-M") + 1] if "-M" in run else "?"


def _board():
    """The buildtool board of CPU (its memory map: buildtool.targets)."""
    from buildtool.targets import boards
    return boards()[CPU]


def cmsis_sources() -> list:
    """CMSIS-NN's integer sources of the three folders the wrappers need (float files left out)."""
    out = []
    for d in CMSIS_DIRS:
        for f in sorted((CMSIS / "Source" / d).glob("*.c")):
            if not re.search(r"f16|f32|flt", f.name):
                out.append(f)
    return out


def layer_class(g, op) -> str:
    if op.opcode == "FULLY_CONNECTED":
        return CLASSES[4]
    if op.opcode == "DEPTHWISE_CONV_2D":
        return CLASSES[3]
    _, kh, kw, cin = g.tensors[op.inputs[1]].shape
    if cin % 4:
        return CLASSES[0]
    return CLASSES[1] if kh == kw == 1 else CLASSES[2]


class Blob:
    """The image's constant data: one byte string, 16-byte aligned pieces."""

    def __init__(self):
        self.data = bytearray()

    def add(self, arr) -> int:
        while len(self.data) % 16:
            self.data.append(0)
        off = len(self.data)
        self.data += np.ascontiguousarray(arr).tobytes()
        return off


def _ints(vals) -> str:
    return "{" + ", ".join(str(int(v)) for v in vals) + "}"


def _bias(g, op, blob: Blob) -> str:
    b = op.inputs[2] if len(op.inputs) > 2 else -1
    if b < 0:
        return "0"
    return f"(const int32_t *)(bench_blob + {blob.add(g.tensors[b].data.astype('<i4'))})"


def _quant_decl(k: int, p) -> str:
    """Layer k's multipliers and shifts: ours (m, s) constants, where model.c has them; CMSIS-NN's (cm, cs) in
    SRAM, where TFLite Micro's Prepare writes them (its op data in the arena), not in flash."""
    m, sh = _ints(p.multipliers), _ints(p.shifts)
    return (f"static const int32_t m{k}[] BENCH_CONST = {m};\nstatic const int32_t s{k}[] BENCH_CONST = {sh};\n"
            f"static int32_t cm{k}[] = {m};\nstatic int32_t cs{k}[] = {sh};\n")


def conv_layer(g, op, k: int, blob: Blob) -> tuple:
    """(declarations, body) of one CONV_2D / DEPTHWISE_CONV_2D layer."""
    p = prepare.conv(g, op)
    w, ti, to = g.tensors[op.inputs[1]], g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    win, dw = p.window, op.opcode == "DEPTHWISE_CONV_2D"
    filt = f"(const int8_t *)(bench_blob + {blob.add(w.data.astype(np.int8))})"
    bias = _bias(g, op, blob)
    _, h, wd, c = ti.shape
    _, oh, ow, oc = to.shape
    decl = _quant_decl(k, p)
    conv = (f"{{{{{h}, {wd}, {c}, {c}}}, {{{oh}, {ow}, {oc}, {oc}}}, {win.kh}, {win.kw}, {win.sh}, {win.sw}, "
            f"{win.dh}, {win.dw}, {win.pad_top}, {win.pad_left}, {p.input_offset}, {p.output_offset}, "
            f"{p.act_min}, {p.act_max}, {filt}, {bias}, m{k}, s{k}}}")
    cp_tail = (f"{{{win.sw}, {win.sh}}}, {{{win.pad_left}, {win.pad_top}}}, {{{win.dw}, {win.dh}}}, "
               f"{{{p.act_min}, {p.act_max}}}}}")
    common = (f"  cmsis_nn_per_channel_quant_params q = {{cm{k}, cs{k}}};\n"
              f"  cmsis_nn_dims id = {{1, {h}, {wd}, {c}}}, od = {{1, {oh}, {ow}, {oc}}}, bd = {{1, 1, 1, {oc}}};\n")
    n_in, n_out = h * wd * c, oh * ow * oc
    if dw:
        mult = oc // c
        decl += f"static const bt_depthwise_params p{k} = {{{conv}, {mult}}};\n"
        body = (common + f"  cmsis_nn_dims fd = {{1, {win.kh}, {win.kw}, {oc}}};\n"
                f"  cmsis_nn_dw_conv_params cp = {{{p.input_offset}, {p.output_offset}, {mult}, {cp_tail};\n"
                f"  cmsis_nn_context ctx = {{g_scratch, arm_depthwise_conv_wrapper_s8_get_buffer_size(&cp, &id, &fd, &od)}};\n"
                f"  run_begin({k}, {n_in});\n"
                f"  bench_begin(); arm_depthwise_conv_wrapper_s8(&ctx, &cp, &q, &id, g_in, &fd, {filt}, &bd, {bias}, &od, g_cmsis); bench_end();\n"
                f"  bench_begin(); bt_depthwise_s8(&p{k}, g_in, 0, g_opt, 0, {oh}); bench_end();\n"
                f"  bench_begin(); ref_bt_depthwise_s8(&p{k}, g_in, 0, g_ref, 0, {oh}); bench_end();\n")
    else:
        decl += f"static const bt_conv_params p{k} = {conv};\n"
        body = (common + f"  cmsis_nn_dims fd = {{{oc}, {win.kh}, {win.kw}, {c}}};\n"
                f"  cmsis_nn_conv_params cp = {{{p.input_offset}, {p.output_offset}, {cp_tail};\n"
                f"  cmsis_nn_context ctx = {{g_scratch, arm_convolve_wrapper_s8_get_buffer_size(&cp, &id, &fd, &od)}};\n"
                f"  run_begin({k}, {n_in});\n"
                f"  bench_begin(); arm_convolve_wrapper_s8(&ctx, &cp, &q, &id, g_in, &fd, {filt}, &bd, {bias}, &od, g_cmsis); bench_end();\n"
                f"  bench_begin(); bt_conv_s8(&p{k}, g_in, 0, g_opt, 0, {oh}); bench_end();\n"
                f"  bench_begin(); ref_bt_conv_s8(&p{k}, g_in, 0, g_ref, 0, {oh}); bench_end();\n")
    return decl, body + f"  run_end({k}, {n_out});\n", n_in, n_out


# an FC layer's interleaved copy sits beside the plain weights CMSIS-NN and the reference read, while the image's
# constants stay within this (the 4 MB image less its code); past it (mobilenetv2_160_a1's 1280x1000 after its
# 3.5 MB of weights) the layer is timed through the dispatcher
FC_IL_BENCH_MAX = 3 << 20


def fc_layer(g, op, k: int, blob: Blob) -> tuple:
    """(declarations, body) of one FULLY_CONNECTED layer (per-tensor or per-channel)."""
    p = prepare.fully_connected(g, op)
    w = g.tensors[op.inputs[1]]
    filt = f"(const int8_t *)(bench_blob + {blob.add(w.data.astype(np.int8))})"
    bias = _bias(g, op, blob)
    decl = (_quant_decl(k, p) +
            f"static const bt_fc_params p{k} = {{{p.n_in}, {p.n_out}, {p.batches}, {p.input_offset}, "
            f"{p.filter_offset}, {p.output_offset}, {p.act_min}, {p.act_max}, {p.per_channel}, {filt}, {bias}, "
            f"m{k}, s{k}}};\n")
    ours = f"bt_fully_connected_s8(&p{k}, g_in, g_opt)"
    if (KSET == weight_order.FC_IL_SET and weight_order.fc_il_ok(g, op)
            and len(blob.data) + w.data.size <= FC_IL_BENCH_MAX):
        # what model.c calls on this set: the weights the image holds interleaved (plan/weight_order.py "fc-il")
        wil = f"(const int8_t *)(bench_blob + {blob.add(weight_order.fc_interleave(w.data.astype(np.int8)))})"
        decl += (f"static const bt_fc_params q{k} = {{{p.n_in}, {p.n_out}, {p.batches}, {p.input_offset}, "
                 f"{p.filter_offset}, {p.output_offset}, {p.act_min}, {p.act_max}, {p.per_channel}, {wil}, {bias}, "
                 f"m{k}, s{k}}};\n")
        ours = f"bt_fully_connected_s8_il(&q{k}, g_in, g_opt)"
    n_in, n_out = p.n_in * p.batches, p.n_out * p.batches
    call = (f"arm_fully_connected_per_channel_s8(&ctx, &fp, &qc, &id, g_in, &fd, {filt}, &bd, {bias}, &od, g_cmsis)"
            if p.per_channel else
            f"arm_fully_connected_s8(&ctx, &fp, &qt, &id, g_in, &fd, {filt}, &bd, {bias}, &od, g_cmsis)")
    body = (f"  cmsis_nn_per_channel_quant_params qc = {{cm{k}, cs{k}}};\n"
            f"  cmsis_nn_per_tensor_quant_params qt = {{cm{k}[0], cs{k}[0]}};\n"
            f"  (void)qc; (void)qt;\n"
            f"  cmsis_nn_dims id = {{{p.batches}, 1, 1, {p.n_in}}}, fd = {{{p.n_in}, 1, 1, {p.n_out}}};\n"
            f"  cmsis_nn_dims od = {{{p.batches}, 1, 1, {p.n_out}}}, bd = {{1, 1, 1, {p.n_out}}};\n"
            f"  cmsis_nn_fc_params fp = {{{p.input_offset}, {p.filter_offset}, {p.output_offset}, "
            f"{{{p.act_min}, {p.act_max}}}}};\n"
            f"  cmsis_nn_context ctx = {{g_scratch, arm_fully_connected_s8_get_buffer_size(&fd)}};\n"
            f"  /* MVE: the kernel sums TFLite Micro makes once at Prepare (not counted) */\n"
            f"  if (ctx.size > 0) arm_vector_sum_s8((int32_t *)ctx.buf, {p.n_in}, {p.n_out}, {filt}, "
            f"{p.input_offset}, {p.filter_offset}, {bias});\n"
            f"  run_begin({k}, {n_in});\n"
            f"  bench_begin(); {call}; bench_end();\n"
            f"  bench_begin(); {ours}; bench_end();\n"
            f"  bench_begin(); ref_bt_fully_connected_s8(&p{k}, g_in, g_ref); bench_end();\n"
            f"  run_end({k}, {n_out});\n")
    return decl, body, n_in, n_out


PRELUDE = r"""
#include <stdint.h>
#include "bt_kernels.h"
#include "arm_nnfunctions.h"
#include "bt_platform.h"
void ref_bt_conv_s8(const bt_conv_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_depthwise_s8(const bt_depthwise_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
void ref_bt_fully_connected_s8(const bt_fc_params *, const int8_t *, int8_t *);
extern const int8_t bench_blob[];
__attribute__((noinline, used)) void bench_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline, used)) void bench_end(void) { __asm__ volatile("" ::: "memory"); }
#ifndef BENCH_BUF
#define BENCH_BUF
#endif
#ifndef BENCH_CONST
#define BENCH_CONST
#endif
static int8_t g_in[IN_MAX] __attribute__((aligned(16))) BENCH_BUF;
static int8_t g_cmsis[OUT_MAX] __attribute__((aligned(16))) BENCH_BUF;
static int8_t g_opt[OUT_MAX] __attribute__((aligned(16))) BENCH_BUF;
static int8_t g_ref[OUT_MAX] __attribute__((aligned(16))) BENCH_BUF;
static int8_t g_scratch[SCRATCH_MAX] __attribute__((aligned(16))) BENCH_BUF;
static void run_begin(int k, int32_t n) {
  uint32_t s = 0x9E3779B9u * (uint32_t)(k + 1);
  for (int32_t i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; g_in[i] = (int8_t)(s >> 24); }
  for (int32_t i = 0; i < OUT_MAX; i++) { g_cmsis[i] = 0x55; g_opt[i] = 0x66; g_ref[i] = 0x77; }
}
static void run_end(int k, int32_t n) {
  uint32_t bad_c = 0, bad_o = 0;
  for (int32_t i = 0; i < n; i++) { bad_c += g_cmsis[i] != g_ref[i]; bad_o += g_opt[i] != g_ref[i]; }
  bt_puts("layer "); bt_putu((uint32_t)k); bt_puts(" cmsis_diff "); bt_putu(bad_c);
  bt_puts(" ours_diff "); bt_putu(bad_o); bt_puts("\n");
}
"""


def generate(g, work: Path) -> tuple:
    """Write bench.c and blob.S for graph g; returns (layers [(k, op)], c file, asm file)."""
    blob, decls, bodies, layers = Blob(), [], [], []
    in_max = out_max = 16
    for op in g.operators:
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            continue
        if g.tensors[op.outputs[0]].dtype != "int8" or (OPS is not None and op.index not in OPS):
            continue
        k = len(layers)
        fn = fc_layer if op.opcode == "FULLY_CONNECTED" else conv_layer
        d, b, n_in, n_out = fn(g, op, k, blob)
        decls.append(d)
        bodies.append(f"static void layer{k}(void) {{\n{b}}}\n")
        in_max, out_max = max(in_max, n_in), max(out_max, n_out)
        layers.append((k, op))
    scratch = 65536 * 4
    head = f"#define IN_MAX {in_max}\n#define OUT_MAX {out_max}\n#define SCRATCH_MAX {scratch}\n"
    section = BLOB_SECTION.get(CPU, ".rodata.bench_blob")
    if CPU in BLOB_SECTION:  # the multipliers and shifts with the weights; the buffers in RAM, else the DDR
        head += f'#define BENCH_CONST __attribute__((section("{section}")))\n'
        if in_max + 3 * out_max + scratch > _board().ram_bytes - (256 << 10):  # (less the stack, .data, ...)
            head += '#define BENCH_BUF __attribute__((section(".bt_arena_ddr")))\n'
    main = ("int bt_main(void) {\n" + "".join(f"  layer{k}();\n" for k, _ in layers) + "  return 0;\n}\n")
    c = work / "bench.c"
    c.write_text(head + PRELUDE + "".join(decls) + "".join(bodies) + main)
    (work / "blob.bin").write_bytes(bytes(blob.data))
    s = work / "blob.S"
    s.write_text(f'  .section {section}, "a"\n  .balign 16\n  .global bench_blob\nbench_blob:\n'
                 f'  .incbin "{work / "blob.bin"}"\n')
    return layers, c, s


def build(work: Path, c: Path, s: Path) -> Path:
    """Link the layers, CMSIS-NN, our kernel set and the renamed reference set for the board's QEMU machine."""
    flags, _, flash, ram, ram_len = kbuild.ARM_BOARDS[CPU]
    cc = ["arm-none-eabi-gcc", "-mthumb", *flags.split(), "-std=c99", "-O2", "-g", "-ffunction-sections",
          "-fdata-sections", *[f"-D{d}" for d in CMSIS_DEFINES]]
    k = kbuild.KERNELS
    inc = [f"-I{k / 'include'}", f"-I{k / 'reference'}", f"-I{k / KSET}", f"-I{kbuild.FIRMWARE / 'common'}",
           f"-I{CMSIS / 'Include'}"]
    digest = kbuild._headers_digest()
    objs = [kbuild._object(cc + inc, src, MEM_DEFINES, work.parent, digest) for src in kbuild.set_sources(KSET)]
    objs.append(kbuild._object(cc + inc, k / "tests" / "ref_all.c", (), work.parent, digest))
    objs += [kbuild._object(cc + inc, src, (), work.parent, digest) for src in cmsis_sources()]
    objs += [kbuild._object(cc + inc, src, (), work.parent, digest)
             for src in (kbuild.FIRMWARE / "arm" / "startup.c", kbuild.FIRMWARE / "common" / "semihost_io.c")]
    for src in (c, s):
        obj = work / (src.name + ".o")
        r = subprocess.run([*cc, *inc, "-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"compile failed: {src}\n{r.stderr[-3000:]}")
        objs.append(obj)
    ld = work / "bench.ld"
    if CPU in BLOB_SECTION:  # the board's own memory map, its external regions (QSPI, DDR) included
        ld.write_text(_board().configured(stack_bytes=0x4000).linker_script())
    else:
        kbuild._ld(kbuild.FIRMWARE / "arm" / "cortexm.ld.in", ld, flash, kbuild.FLASH_LEN.get(CPU, "4M"), ram,
                   ram_len, "0x4000")
    elf = work / "bench.elf"
    r = subprocess.run([*cc, "-nostartfiles", "-T", str(ld), "-Wl,--gc-sections", *map(str, objs), "-o", str(elf),
                        "-lc", "-lgcc"], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"link failed:\n{r.stderr[-3000:]}")
    return elf


def run(elf: Path, work: Path) -> tuple:
    """(region counts, per-layer (cmsis_diff, ours_diff)) from one QEMU run."""
    plugin = kbuild.build_plugin(work)
    s = kbuild.symbol(elf, "bench_begin", "arm-none-eabi-nm")
    e = kbuild.symbol(elf, "bench_end", "arm-none-eabi-nm")
    cnt = work / "counts.txt"
    mem = ""
    if MEM:  # the image's flash (code and the blob): kbuild's map of the board, FLASH_LEN at its origin
        size = kbuild.FLASH_LEN.get(CPU, "4M")
        flash_len = int(size[:-1]) << {"K": 10, "M": 20}[size[-1]]
        mem = f",mix=on,flash={int(kbuild.ARM_BOARDS[CPU][2], 16):x}:{flash_len:x},{MEM.plugin_option()}"
    cmd = ["qemu-system-arm", "-M", kbuild.ARM_BOARDS[CPU][1], "-nographic", *kbuild.SEMIHOST,
           "-plugin", f"{plugin},start={int(s, 16) & ~1:x},end={int(e, 16) & ~1:x},out={cnt}{mem}",
           "-kernel", str(elf)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if r.returncode:
        raise RuntimeError(f"QEMU run failed (rc={r.returncode}):\n{(r.stdout + r.stderr)[-2000:]}")
    text = cnt.read_text()
    m = re.search(r"region_counts=([\d,]*)", text)
    counts = [int(v) for v in m.group(1).split(",") if v]
    if MEM:  # per region: (modelled cycles, zero-wait high)
        mixes, stalls = op_cost.read_mixes(text, len(counts)), memory_model.read_stalls(text, len(counts))
        counts = [(memory_model.modelled_cycles(mx, st, CPU), cycles.estimate(mx, cpu=CPU)[1])
                  for mx, st in zip(mixes, stalls)]
    diffs = [(int(a), int(b)) for a, b in re.findall(r"layer \d+ cmsis_diff (\d+) ours_diff (\d+)", r.stdout + r.stderr)]
    return counts, diffs


def inplace_ops(g) -> set:
    """The operators whose output the whole model's plan lays over their input (product() plans a layer alone
    the same way: alone, any depthwise would be, with a slower kernel)."""
    from buildtool import pipeline
    return set(getattr(pipeline.plan_memory(g, pipeline.PlanOptions()), "inplace_ops", ()))


def _firmware(g, out: Path, seed: int, options=None) -> dict | None:
    """g built by buildtool for MEM.part and run in QEMU on a pseudo-random input: {op index: {"cycles" (its
    region's modelled cycles), "zw" (zero-wait high), "staged", "identical" (the model's output against the
    reference executor's, which is TFLite Micro's)}}, or None when the firmware does not fit the part or the
    machine QEMU runs the part's code on."""
    from buildtool import pipeline
    from buildtool.errors import BuildtoolError
    from buildtool.firmware import runner
    from buildtool.plan.arena.execute import run_unplanned
    x = np.random.default_rng(seed).integers(-128, 128, g.tensors[g.inputs[0]].shape).astype(np.int8)
    try:
        pipeline.build(g, MEM.part, out, options=options, say=lambda line: None)
        y, prof, _ = runner.run(MEM.part, out, x)
    except BuildtoolError:  # more RAM or flash than the part has, or than the emulator maps
        return None
    same = np.asarray(y).tobytes() == np.asarray(run_unplanned(g, [x])[0]).tobytes()
    staged = set(json.loads((out / "firmware.json").read_text()).get("staged", {}).get("layers", []))
    return {o["op"]: {"cycles": o["modelled_cycles"], "zw": cycles.estimate(o["mix"], cpu=CPU)[1],
                      "staged": o["op"] in staged, "identical": same} for o in prof["ops"]}


def product(g, op, k: int, work: Path, inplace: bool) -> dict | None:
    """Layer op as the part's own firmware runs it when the whole model's does not fit (--mem): the layer alone
    as a one-operator model, built by buildtool for MEM.part (model.c's own instance of its kernel, the part's
    kernel defines, the weights the part's plan stages in SRAM, firmware/staging.py) and run in QEMU under the
    same plugin and memory model; _firmware's figures of the layer, or None. A 1x1 convolution that does not fit
    the part is built again with its output over its own dying input (inplace_pointwise: the pair takes HW*c_out +
    G*c_in bytes, not HW*(c_out + c_in)); its figures then say so ("pointwise": True)."""
    from buildtool.model.ir import sub_graph
    from buildtool.plan.arena.liveness import pointwise_geometry
    one, _, _ = sub_graph(g, [op], f"layer{k}")
    res = _firmware(one, work / f"product{k}", k, {"inplace": inplace})
    if res is None and pointwise_geometry(one, one.operators[0]) is not None:
        res = _firmware(one, work / f"product{k}", k, {"inplace": True, "inplace_pointwise": True})
        if res is not None:
            res[0]["pointwise"] = True
    return res and res[0]


def measure(name: str, work: Path) -> list:
    """One row per layer: dict(k, op, cls, macs, cmsis, ours, ref, identical); with --mem cmsis, ours and ref
    are modelled cycles, cmsis_zw, ours_zw, ref_zw the zero-wait estimates' highs, floor our flash floor and
    stalls the wait states of its single pass (both 0 where the part's firmware stages the layer's weights)."""
    g = tflite_reader.parse((SHARED / "models" / f"{name}.tflite").read_bytes())
    work.mkdir(parents=True, exist_ok=True)
    layers, c, s = generate(g, work)
    if not layers:  # (--ops named none of its conv, depthwise or FC layers)
        return []
    counts, diffs = run(build(work, c, s), work)
    if len(counts) != 3 * len(layers) or len(diffs) != len(layers):
        raise RuntimeError(f"{name}: {len(counts)} regions and {len(diffs)} checks for {len(layers)} layers")
    # --mem: ours from the whole model's firmware for the part where it fits, else each layer's alone
    whole = _firmware(g, work / "product", 0) if MEM else None
    rows, in_place = [], inplace_ops(g) if MEM and whole is None else set()
    for (k, op), d in zip(layers, diffs):
        cm, ours, ref = counts[3 * k: 3 * k + 3]
        row = dict(k=k, op=op, cls=layer_class(g, op), macs=ops.op_macs(g, op), identical=d == (0, 0),
                   label=_label(g, op))
        if MEM:  # ours: the part's firmware (product()); the bench image's run-time variants beside
            row.update(cmsis=cm[0], ref=ref[0], cmsis_zw=cm[1], ref_zw=ref[1], runtime=ours[0], ours=ours[0],
                       ours_zw=ours[1], fallback=True, floor=0, stalls=0)
            pr = whole[op.index] if whole else product(g, op, k, work, op.index in in_place)
            if pr is not None:
                row.update(ours=pr["cycles"], ours_zw=pr["zw"], fallback=False, pointwise=pr.get("pointwise", False),
                           identical=row["identical"] and pr["identical"])
            if pr is None or not pr["staged"]:  # our weights read from flash: at least once each
                nbytes = sum(g.tensors[i].nbytes for i in op.inputs[1:] if i >= 0)
                row["floor"] = MEM.stream_floor(nbytes)
                row["stalls"] = single_pass_stalls(nbytes)
        else:
            row.update(cmsis=cm, ours=ours, ref=ref)
        rows.append(row)
    return rows


def single_pass_stalls(nbytes: int) -> int:
    """The cycles MEM's flash makes a core wait reading nbytes once in order: each read the caches cannot hold
    yet (a stream read once misses every read) waits the wait states; the read's own cycle is the load's, in the
    zero-wait estimate. MemoryModel.stream_floor less one cycle a read."""
    return -(-nbytes // MEM.read_bytes) * MEM.wait_states


def _label(g, op) -> str:
    w, to = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if op.opcode == "FULLY_CONNECTED":
        return f"op {op.index} FC {w.shape[1]} -> {w.shape[0]}"
    o = op.options
    kind = "dw" if op.opcode == "DEPTHWISE_CONV_2D" else "conv"
    cin = g.tensors[op.inputs[0]].shape[3]
    return (f"op {op.index} {kind} {w.shape[1]}x{w.shape[2]} s{o.get('stride_h', 1)} "
            f"{cin} -> {to.shape[1]}x{to.shape[2]}x{to.shape[3]}")


def _row(label: str, rows: list) -> str:
    """One table row: the rows' sums (with --mem: ours the part's firmware, ours / CMSIS-NN at zero wait states,
    the run-time variants' ratio, the flash floor and its ratio, our floor's ratio: our zero-wait cycles plus the
    single pass's stalls, instead of the reference set)."""
    macs_, cm, ours, ref = (sum(r[f] for r in rows) for f in ("macs", "cmsis", "ours", "ref"))
    same = "yes" if all(r["identical"] for r in rows) else "NO"
    head = f"| {label} | {len(rows)} | {macs_ / 1e6:.2f} M | {cm / 1e6:.3f} M | {ours / 1e6:.3f} M |"
    if not MEM:
        return f"{head} {ref / 1e6:.3f} M | {ours / cm:.3f} | {same} |"
    fallback = "*" if any(r["fallback"] for r in rows) else ""
    zw, rt, floor, stalls = (sum(r[f] for r in rows) for f in ("ours_zw", "runtime", "floor", "stalls"))
    return (f"{head} {ours / cm:.3f}{fallback} | {zw / sum(r['cmsis_zw'] for r in rows):.3f} | {rt / cm:.3f} | "
            f"{floor / 1e6:.3f} M | {floor / cm:.3f} | {(zw + stalls) / cm:.3f} | {same} |")


def table(name: str, rows: list, per_layer: bool) -> None:
    print(f"\n### {name}\n")
    if MEM:
        print("| layers | n | MACs | CMSIS-NN | ours (the part's firmware) | ours / CMSIS-NN | at 0 WS | "
              "run-time variants / CMSIS-NN | our flash floor | floor / CMSIS-NN | our floor / CMSIS-NN | identical |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    else:
        print("| layers | n | MACs | CMSIS-NN | ours | reference | ours / CMSIS-NN | identical |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
    if per_layer:
        for r in rows:
            print(_row(r["label"], [r]))
    for cls in CLASSES:
        sel = [r for r in rows if r["cls"] == cls]
        if sel:
            print(_row(cls, sel))
    print(_row("**total**", rows))
    n = sum(r.get("fallback", False) for r in rows)
    pw = [r["label"] for r in rows if r.get("pointwise")]
    if MEM and pw:
        print(f"\n{len(pw)} 1x1 layer{'s' * (len(pw) != 1)} built alone with its output over its own dying input "
              f"(inplace_pointwise), not fitting {MEM.part} otherwise: {', '.join(pw)}")
    if MEM and n:
        print(f"\n\\* {n} layer{'s' * (n != 1)} whose firmware for {MEM.part} needs more RAM or flash than the "
              "part has or QEMU's machine maps: the bench image's run-time variants' figure instead")


def has_newlib() -> bool:
    """True when arm-none-eabi-gcc compiles an #include <string.h> (CMSIS-NN needs it)."""
    r = subprocess.run(["arm-none-eabi-gcc", "-fsyntax-only", "-x", "c", "-"], input="#include <string.h>\n",
                       capture_output=True, text=True)
    return r.returncode == 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help=f"comma-separated (default {','.join(MODELS)})")
    ap.add_argument("--layers", action="store_true", help="also one row per layer")
    ap.add_argument("--board", choices=sorted(BOARDS), default="cortex-m4",
                    help="cortex-m4 (cortex-m set, mps2-an386) or cortex-m55 (Helium set against CMSIS-NN's "
                         "ARM_MATH_MVEI paths, mps3-an547)")
    parts = sorted(p for p in memory_model.MODELS if _core(p) in BOARDS)
    ap.add_argument("--mem", metavar="PART", choices=parts,
                    help=f"modelled cycles under PART's memory model ({', '.join(parts)}: flash wait states, caches, "
                         "prefetch; docs/memory-model.md) for both CMSIS-NN and ours, instead of instructions")
    ap.add_argument("--ops", metavar="I,J,...",
                    help="measure only these operators (their indices in the model; with one model): a layer's row in "
                         "minutes instead of the whole model's")
    a = ap.parse_args(argv)
    global OPS
    try:
        OPS = frozenset(int(v) for v in a.ops.split(",")) if a.ops else None
    except ValueError:
        ap.error(f"--ops takes operator indices separated by commas, not {a.ops!r}")
    use_board(a.board)
    if a.mem and _core(a.mem) != CPU:
        ap.error(f"--mem {a.mem} is a {_core(a.mem)} part; measure it with --board {_core(a.mem)}")
    use_memory_model(a.mem)
    a.models = a.models or ",".join(MODELS)
    if not (CMSIS / "Source").is_dir() or not (SHARED / "models").is_dir():
        print(f"CMSIS-NN comparison skipped: {CMSIS} or {SHARED / 'models'} is absent")
        return 0
    if not kbuild.tools_present("arm-none-eabi-gcc", "qemu-system-arm"):
        print("CMSIS-NN comparison skipped: arm-none-eabi-gcc or qemu-system-arm is not installed")
        return 0
    if not has_newlib():
        print("CMSIS-NN comparison skipped: arm-none-eabi-gcc finds no string.h (Debian: libnewlib-arm-none-eabi)")
        return 0
    if MEM:
        print(f"Modelled cycles per layer under {MEM.part}'s memory model ({MEM.summary()}): the Cortex-M4 TRM "
              f"estimate's high plus the memory stalls (QEMU, {CPU}, -O2, plugin). CMSIS-NN as TFLite Micro runs "
              "it: code, weights and biases in flash, the multipliers and shifts its Prepare computes and the "
              f"buffers in SRAM (QEMU {kbuild.ARM_BOARDS[CPU][1]}). Ours as the part's firmware runs it: the model "
              f"built by buildtool for {MEM.part} (model.c's own kernel instances, the part's kernel defines, the "
              f"weights its plan stages in SRAM; QEMU {_machine(MEM.part)}), each layer's region of one run, or where "
              "that firmware does not fit the part or QEMU's machine each layer built alone (in place where the "
              "whole model's plan has it; a 1x1 convolution that does not fit alone over its own dying input, "
              "inplace_pointwise), the output compared byte for byte with the reference executor's; beside, our run-time variants in CMSIS-NN's image "
              f"(built with {', '.join(MEM_DEFINES) or 'no define'}, weights in flash). Our flash floor: the "
              "weights and biases our firmware reads from flash, each read once at the flash's pace "
              "(MemoryModel.stream_floor): no kernel reading them from flash runs in fewer cycles. Our floor: our "
              "zero-wait cycles plus the wait states of that single pass (each read waits them once, its own cycle "
              "being the load's): what ours would be with no other memory stall; where ours / CMSIS-NN is at it, only "
              "fewer instructions lower it")
    else:
        print(f"Instructions executed per layer (QEMU {kbuild.ARM_BOARDS[CPU][1]}, {CPU}, -O2, plugin count), "
              "outputs compared byte for byte with our reference set")
    bad = 0
    with tempfile.TemporaryDirectory(prefix="bt-cmsis-") as tmp:
        for name in a.models.split(","):
            if not (SHARED / "models" / f"{name}.tflite").is_file():
                print(f"\n{name}: no {SHARED / 'models' / name}.tflite, skipped")
                continue
            rows = measure(name, Path(tmp) / name)
            if not rows:
                print(f"\n{name}: --ops {a.ops} names none of its conv, depthwise or fully connected layers")
                bad += 1
                continue
            table(name, rows, a.layers)
            bad += sum(not r["identical"] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
