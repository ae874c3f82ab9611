"""Cortex-M4 estimated cycles per layer class: the run report's figures (executed instructions from the
QEMU plugin, instructions per MAC, and the cycle range buildtool/firmware/cycles.py estimates from each
operator's executed instruction mix with the Cortex-M4 TRM timings) for the cortex-m kernel set on
the shared models (qemu-system-arm -M mps2-an386, -O2). The cycles are an estimate, not a
measurement: low = pipeline refill 1 cycle, divide 2, IT folded, loads and stores after a load
pipelined; high = refill 3, divide 12, nothing folded or pipelined.

    python benchmarks/kernels_m4_cycles.py                  # the four shared models, Markdown tables
    python benchmarks/kernels_m4_cycles.py --models tiny_cnn_32
    python benchmarks/kernels_m4_cycles.py --flash-wait-states 5   # + 5 cycles on each read of flash,
        # and a column of the flash accesses per MAC (op_cost.FLASH_ACCESSES_PER_MAC comes from it)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from buildtool import pipeline
from buildtool.firmware import cycles, runner
from buildtool.model import reader as tflite_reader  # noqa: E402
from kernels_riscv import KERNEL_OPS, MODELS, SHARED, layer_class  # noqa: E402


def _class(g, op) -> str:
    return layer_class(g, op) if op.opcode in KERNEL_OPS else "other operators"


def rows(name: str, work: Path, flash_wait_states: int | None = None) -> list:
    """Per layer class of one model: (class, n, MACs, instructions, low, high cycles, low, high flash
    accesses), then the total; with flash_wait_states the cycles with them on every read of flash and
    the accesses the wait states are charged on (cycles.wait_cycles: low, the fetches after a branch and
    the loads; high, every fetched word and the loads), else 0 accesses."""
    g = tflite_reader.parse((SHARED / f"{name}.tflite").read_bytes())
    x = np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
    pipeline.build(g, "cortex-m4", work)
    _, prof, _ = runner.run("cortex-m4", work, x, flash_wait_states=flash_wait_states)
    sums: dict = {}
    for o in prof["ops"]:
        s = sums.setdefault(_class(g, g.operators[o["op"]]), [0] * 7)
        fa = cycles.wait_cycles(o["flash_accesses"], 1) if "flash_accesses" in o else (0, 0)
        for k, v in enumerate((1, o.get("macs", 0), o["count"], *o["cycles_estimate"], *fa)):
            s[k] += v
    out = [(c, *v) for c, v in sorted(sums.items())]
    return out + [("**all operators**", *[sum(r[k] for r in out) for k in range(1, 8)])]


def _per_mac(lo: int, hi: int, macs: int) -> str:
    return f"{lo / macs:.2f}-{hi / macs:.2f}" if macs else "-"


def table(name: str, rs: list, flash: bool = False) -> str:
    """flash: also the flash accesses the wait states are charged on, per MAC (low-high)."""
    lines = [f"### {name}", "",
             "| layers | n | MACs | instructions | insns/MAC | est. cycles (low-high) | est. cycles/MAC | "
             "est. cycles/insn |" + (" flash accesses/MAC |" if flash else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if flash else "")]
    for c, n, macs, insns, lo, hi, fa_lo, fa_hi in rs:
        lines.append(f"| {c} | {n} | {macs:,} | {insns:,} | {f'{insns / macs:.2f}' if macs else '-'} | "
                     f"{lo:,}-{hi:,} | {_per_mac(lo, hi, macs)} | {lo / insns:.2f}-{hi / insns:.2f} |"
                     + (f" {_per_mac(fa_lo, fa_hi, macs)} |" if flash else ""))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--flash-wait-states", type=int, metavar="N",
                    help="the estimate with N wait states on every read of code and weights from flash")
    a = ap.parse_args()
    ws = a.flash_wait_states
    if ws is not None and ws < 0:
        print(f"kernels_m4_cycles: --flash-wait-states must be 0 or more, not {ws}", file=sys.stderr)
        return 2
    waits = (f"{ws} flash wait states on every read of code and weights from flash" if ws else "zero wait states")
    print("Estimated Cortex-M4 cycles (buildtool/firmware/cycles.py: TRM timings over the executed instruction mix; "
          f"an estimate, {waits}), cortex-m kernel set, QEMU mps2-an386, -O2\n")
    with tempfile.TemporaryDirectory(prefix="bt-m4cyc-") as tmp:
        for name in a.models.split(","):
            print(table(name, rows(name, Path(tmp) / name, ws), ws is not None) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
