"""Our code against CMSIS-NN's kernels for the same layers (issue 50 item 2).

    python3 benchmarks/code_size.py                       # cortex-m4, cortex-m55, riscv32
    python3 benchmarks/code_size.py --boards cortex-m4,cortex-m55,riscv32   # the same, named
    python3 benchmarks/code_size.py --presets             # ours at optimize_code size / balanced / speed
    python3 benchmarks/code_size.py --fused               # ours, plain plan against --optimize ram
    python3 benchmarks/code_size.py --write-docs          # + the table into docs/code-size.md (its own region
                                                          #   per mode: --presets, --fused)

Per model and board: "ours" is the firmware's code as the build's RAM/flash line counts it (flash
without the weights and the requantisation tables the image holds with them: code, constants, .data's
initial values; toolchain.code_bytes, a trial link of the generated model.c with the board's start-up code
and the kernels the model's operators call, at the board's own flags: -O2); "tables" is the requantisation
tables' bytes in the weights image (each layer's multipliers and shifts, plan/requant_tables.py: model data,
which TFLite Micro computes from the model's scales into its arena at Prepare; model.c declared them, so
"ours" counted them, until e5daf87); "CMSIS-NN" is the code of the CMSIS-NN functions TFLite Micro calls
for the model's layer classes (CMSIS_CALLS), every integer source of ../shared/peers/cmsis-nn compiled here with
the board's CPU flags at -Os -ffunction-sections and linked with --gc-sections keeping only those
functions (newlib's memcpy/memset and libgcc as needed): .text + .rodata + .data of the link. CMSIS-NN is
compiled from ../shared, never copied into the project. Operators without a CMSIS-NN kernel (MEAN,
RESHAPE, QUANTIZE ...) are listed: their code is ours alone. CMSIS-NN is Arm's: on a board of another
architecture (riscv32) its column says n/a. Without ../shared it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool import pipeline, targets  # noqa: E402
from buildtool.errors import BuildtoolError  # noqa: E402
from buildtool.firmware import toolchain  # noqa: E402
from buildtool.firmware.library import model_opcodes, model_sources  # noqa: E402
from buildtool.options import PlanOptions  # noqa: E402
from buildtool.plan import requant_tables  # noqa: E402
from buildtool.units import kib  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared"))
CMSIS = SHARED / "peers" / "cmsis-nn"
MLPERF = SHARED / "models" / "mlperf-tiny"
MODELS = {"vww": MLPERF / "vww_96_int8.tflite", "ResNet-8": MLPERF / "pretrainedResnet_quant.tflite",
          "kws": MLPERF / "kws_ref_model.tflite", "ad01": MLPERF / "ad01_int8.tflite", "tiny": "tiny"}
# operator -> the CMSIS-NN entry points TFLite Micro's CMSIS-NN kernels call for it (int8)
CMSIS_CALLS = {"CONV_2D": ("arm_convolve_wrapper_s8",), "DEPTHWISE_CONV_2D": ("arm_depthwise_conv_wrapper_s8",),
               "FULLY_CONNECTED": ("arm_fully_connected_s8",), "SOFTMAX": ("arm_softmax_s8",),
               "AVERAGE_POOL_2D": ("arm_avgpool_s8",), "MAX_POOL_2D": ("arm_max_pool_s8",),
               "ADD": ("arm_elementwise_add_s8",), "MUL": ("arm_elementwise_mul_s8",)}


def cmsis_code(t: targets.Target, calls: list, work: Path) -> int | None:
    """Bytes of CMSIS-NN's functions `calls` linked alone for board t's CPU at -Os (None: does not build)."""
    if not calls:
        return 0
    flags = [f for f in t.cflags if f.startswith("-m")] + ["-Os", "-ffunction-sections", "-fdata-sections",
                                                            "-std=gnu11", f"-I{CMSIS / 'Include'}"]
    srcs = sorted(f for f in (CMSIS / "Source").rglob("*.c") if not any(k in f.name for k in ("f16", "f32", "flt")))
    elf = work / f"cmsis-{t.name}-{len(calls)}.elf"
    cmd = ([t.cc] + flags + [str(s) for s in srcs] + ["-nostartfiles", "-Wl,--gc-sections", "-Wl,-e,0"]
           + [f"-Wl,-u,{c}" for c in calls] + ["-lc", "-lgcc", "-o", str(elf)])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return _size(t, elf)


def _size(t: targets.Target, elf: Path) -> int:
    r = subprocess.run([t.binutil("size"), "-A", str(elf)], capture_output=True, text=True, check=True)
    keep = (".text", ".rodata", ".data", ".ARM.exidx", ".srodata", ".sdata")
    return sum(int(line.split()[1]) for line in r.stdout.splitlines()
               if line.split()[:1] and line.split()[0].startswith(keep))


def ours(t: targets.Target, spec, preset: str = "balanced", cycles: bool = False, fused: bool = False,
         harness: bool = False):
    """(code bytes as the build counts them, the model's operator codes) at optimize_code=preset; cycles: also
    the code plan's modelled cycles of the layers it chooses (None: no choice on the board); fused: of the
    --optimize ram plan; harness: also the harness's bytes in that firmware (harness_bytes)."""
    m = pipeline.read_model(str(spec))
    plan = pipeline.plan_memory(m.graph, PlanOptions(optimize="ram" if fused else None))
    files = pipeline.code(m, plan, t.name, PlanOptions(optimize_code=preset))
    ops = model_opcodes(m.graph)
    kernels = model_sources(t, ops, fused)
    if harness:  # one trial link for both
        with tempfile.TemporaryDirectory(prefix="bt-code-size-") as tmp:
            elf = toolchain.trial_elf(t, files["model.c"], files["model.h"], Path(tmp), kernels)
            return toolchain.elf_code_bytes(t, elf), ops, harness_bytes(t, elf, kernels, Path(tmp))
    code = toolchain.code_bytes(t, files["model.c"], files["model.h"], kernels)
    if not cycles:
        return code, ops
    cp = json.loads(files["firmware.json"]).get("code_plan")
    return code, ops, (cp["cycles"] if cp else None)


def _nm(t: targets.Target, path: Path, *flags) -> list:
    """`nm flags path` as rows of fields."""
    r = subprocess.run([t.binutil("nm"), *flags, str(path)], capture_output=True, text=True, check=True)
    return [line.split() for line in r.stdout.splitlines()]


def harness_bytes(t: targets.Target, elf: Path, kernels: list, work: Path) -> int:
    """The bytes the board's harness (its firmware_src sources: start-up, vector table, bt_main, the I/O and the
    profile markers) takes in trial link elf's code (toolchain.trial_elf into work, with kernel sources
    kernels): each harness source compiled alone with the build's flags
    names the symbols it defines (nm); their sizes in the trial link (nm -S: code, constants, .data's initial
    values; not .bss) plus the string literals those objects hold (unnamed: `size -A` of each object's
    .rodata.str sections). A local symbol whose name model.c or a kernel also defines is not counted (its owner is
    not told apart by name)."""
    others = {f[-1] for lib in (toolchain.model_object(t, work), toolchain.kernel_library(t, toolchain.KERNELS, kernels))
              for f in _nm(t, lib, "--defined-only") if len(f) >= 3}
    names, strings = set(), 0
    for i, src in enumerate(toolchain.FIRMWARE / s for s in t.firmware_sources()):
        obj = work / f"harness{i}.o"
        subprocess.run([t.cc] + toolchain.compile_flags(t, work) + ["-c", str(src), "-o", str(obj)], check=True,
                       capture_output=True)
        names |= {f[-1] for f in _nm(t, obj, "--defined-only") if f[-2] not in "bBnN"}
        r = subprocess.run([t.binutil("size"), "-A", str(obj)], capture_output=True, text=True, check=True)
        strings += sum(int(f[1]) for f in (line.split() for line in r.stdout.splitlines())
                       if f and f[0].startswith(".rodata") and ".str" in f[0])
    return strings + sum(int(f[1], 16) for f in _nm(t, elf, "-S", "--defined-only")
                         if len(f) == 4 and f[3] in names and f[2] not in "bBnN"
                         and not (f[2].islower() and f[3] in others))


def is_arm(t: targets.Target) -> bool:
    """Whether CMSIS-NN (Arm's kernels) is for board t's CPU."""
    return (t.tool_prefix or t.cc).startswith("arm-")


def fused(boards: list, out=print) -> None:
    """Per board and model: the code of the plain plan and of the --optimize ram plan at the default preset
    (issue 50 item 2: fused plans' code <= 1.3x the plain plan's)."""
    out("| board | model | plain | --optimize ram | ratio |")
    out("|---|---|---:|---:|---:|")
    for board in boards:
        t = targets.get(board)
        for name, spec in MODELS.items():
            plain, f = ours(t, spec)[0], ours(t, spec, fused=True)[0]
            out(f"| {board} | {name} | {kib(plain)} | {kib(f)} | {f / plain:.2f} |")


def presets(boards: list, out=print) -> None:
    """Per board and model: the code and the modelled cycles of the layers the code budget chooses for, at each
    optimize_code preset (docs/code-size.md "The code budget")."""
    out("| board | model | code: size | balanced | speed | modelled cycles: size | balanced | speed | balanced / speed |")
    out("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for board in boards:
        t = targets.get(board)
        for name, spec in MODELS.items():
            r = {p: ours(t, spec, p, cycles=True) for p in ("size", "balanced", "speed")}
            cy = [r[p][2] for p in ("size", "balanced", "speed")]
            shown = [f"{c:,}" if c is not None else "-" for c in cy]
            ratio = f"{cy[1] / cy[2]:.3f}" if cy[2] else "-"
            out(f"| {board} | {name} | {kib(r['size'][0])} | {kib(r['balanced'][0])} | {kib(r['speed'][0])} "
                f"| {' | '.join(shown)} | {ratio} |")


def against_cmsis(boards: list, out=print) -> None:
    """Per board and model: ours against the CMSIS-NN kernels the same layers call (n/a off Arm)."""
    out("| board | model | ours | of which harness / model | tables (with the weights) "
        "| CMSIS-NN kernels (-Os, --gc-sections) | ours / CMSIS-NN | model / CMSIS-NN "
        "| operators CMSIS-NN has no kernel for |")
    out("|---|---|---:|---:|---:|---:|---:|---:|---|")
    tables = {name: sum(n for _, n in requant_tables.sizes(pipeline.read_model(str(spec)).graph))
              for name, spec in MODELS.items()}  # the image's, whatever the board
    with tempfile.TemporaryDirectory(prefix="bt-code-size-") as tmp:
        for board in boards:
            t = targets.get(board)
            for name, spec in MODELS.items():
                code, ops, harness = ours(t, spec, harness=True)
                calls = sorted({c for op in ops for c in CMSIS_CALLS.get(op, ())})
                cm = cmsis_code(t, calls, Path(tmp)) if is_arm(t) else None
                shown = kib(cm) if cm is not None else "does not build" if is_arm(t) else "n/a (CMSIS-NN is for Arm)"
                ratio = f"{code / cm:.2f}" if cm else "-"
                model_ratio = f"{(code - harness) / cm:.2f}" if cm else "-"
                alone = ", ".join(op for op in ops if op not in CMSIS_CALLS) or "-"
                out(f"| {board} | {name} | {kib(code)} | {kib(harness)} / {kib(code - harness)} | {kib(tables[name])} "
                    f"| {shown} | {ratio} | {model_ratio} | {alone} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", default="cortex-m4,cortex-m55,riscv32", help="comma-separated board names")
    ap.add_argument("--presets", action="store_true",
                    help="our code and modelled cycles at each --optimize-code preset instead (no CMSIS-NN)")
    ap.add_argument("--fused", action="store_true", help="our code, plain plan against --optimize ram (no CMSIS-NN)")
    ap.add_argument("--write-docs", action="store_true",
                    help="also put the table in docs/code-size.md (the region of this mode: --presets, --fused)")
    a = ap.parse_args(argv)
    if a.presets and a.fused:
        print("code_size: give --presets or --fused, not both", file=sys.stderr)
        return 2
    boards = [b for b in a.boards.split(",") if b]
    try:
        for b in boards:
            targets.get(b)
    except BuildtoolError as e:
        print(f"code_size: {e}", file=sys.stderr)
        return 2
    if not CMSIS.is_dir() or not MLPERF.is_dir():
        print(f"code_size: {CMSIS} or {MLPERF} not found; nothing to compare")
        return 0
    os.environ.setdefault("BUILDTOOL_NO_DAEMON", "1")
    out = Out()
    mode = " --presets" if a.presets else " --fused" if a.fused else ""
    if a.write_docs:
        command = " ".join(["python3 benchmarks/code_size.py"] + [x for x in (argv or sys.argv[1:]) if x != "--write-docs"])
        out(f"Measured {environment()}; `{command}`, as printed:\n")
    (presets if a.presets else fused if a.fused else against_cmsis)(boards, out)
    if a.write_docs:
        write_docs("docs/code-size.md", "code_size.py" + mode, out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
