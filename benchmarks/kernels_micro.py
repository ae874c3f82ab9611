"""Kernel micro-benchmark: guest instructions of representative kernels, reference vs optimised set.

    python benchmarks/kernels_micro.py

Builds kernels/tests/kernel_test.c with -DBT_BENCH (each benchmark kernel runs once between marker
functions, reference and optimised set in the same image, then the full test suite checks the
results) and counts the instructions between the markers with the QEMU TCG plugin
(tools/qemu-insncount). Targets: Cortex-M4 (mps2-an386, cortex-m set), RV32IMAC and RV32 + RVV 1.0
(virt, VLEN=128, riscv set). For the xcore set (C model of the XS3 VPU on the host) it reports the
number of VPU instructions issued. Counts are instructions, not cycles: one RVV instruction on 16
lanes counts as one. Prints a Markdown table.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # kbuild imports buildtool: this checkout's, installed or not
sys.path.insert(0, str(ROOT / "buildtool" / "kernels" / "tests"))

import kbuild  # noqa: E402

CASES = [  # (index in kernel_test.c bench(), label, MACs)
    (0, "conv 1x1 16x16x32 -> 64", 16 * 16 * 32 * 64),
    (1, "depthwise 3x3 40x40x96 s1 SAME", 40 * 40 * 96 * 9),
    (2, "conv 3x3 16x16x16 -> 32 SAME", 16 * 16 * 32 * 9 * 16),
    (3, "fully connected 512 -> 64", 512 * 64),
]


def counts(cmd_fn, elf: Path, nm: str, plugin: Path, out: Path, **kw) -> list:
    rows = []
    for k, _, _ in CASES:
        ref = kbuild.count_region(cmd_fn, elf, plugin, f"bench_{k}_ref_begin", f"bench_{k}_ref_end", nm, out, **kw)
        opt = kbuild.count_region(cmd_fn, elf, plugin, f"bench_{k}_opt_begin", f"bench_{k}_opt_end", nm, out, **kw)
        rows.append((ref, opt))
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        plugin = kbuild.build_plugin(out)
        results = {}
        elf = kbuild.build_arm("cortex-m", out, cpu="cortex-m4", bench=True)
        results["Cortex-M4 (cortex-m set)"] = counts(kbuild.arm_cmd, elf, "arm-none-eabi-nm", plugin, out)
        elf = kbuild.build_riscv("riscv", out, bench=True)
        results["RV32IMAC (riscv set)"] = counts(kbuild.riscv_cmd, elf, "riscv64-unknown-elf-nm", plugin, out)
        elf = kbuild.build_riscv("riscv", out, rvv=True, bench=True)
        results["RV32 + RVV VLEN=128 (riscv set, BT_RVV)"] = counts(
            kbuild.riscv_cmd, elf, "riscv64-unknown-elf-nm", plugin, out, rvv=True)
        exe = kbuild.build_host("xcore", out, defines=("BT_BENCH",))
        rc, text = kbuild.run_host(exe)
        vpu = {int(line.split()[1]): int(line.split("vpu_ops=")[1]) for line in text.splitlines()
               if line.startswith("bench ") and "vpu_ops=" in line and not line.startswith("bench -1")}
    print("| target | kernel | MACs | reference insns | optimised insns | speed-up | insns/MAC opt |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for target, rows in results.items():
        for (k, label, macs), (ref, opt) in zip(CASES, rows):
            print(f"| {target} | {label} | {macs} | {ref} | {opt} | {ref / opt:.2f}x | {opt / macs:.2f} |")
    print()
    print("| xcore set (XS3 VPU model) | kernel | MACs | VPU instructions | MACs per VPU instruction |")
    print("|---|---|---:|---:|---:|")
    for k, label, macs in CASES:
        print(f"| xcore.ai | {label} | {macs} | {vpu[k]} | {macs / vpu[k]:.1f} |")


if __name__ == "__main__":
    main()
