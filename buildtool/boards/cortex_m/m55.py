"""Cortex-M55 with Helium (MVE): QEMU 7.2's mps3-an547 (Arm's AN547 FPGA image, SSE-300 + Cortex-M55).

QEMU 7.2's map of the machine (hw/arm/mps2-tz.c, an547_raminfo; checked with `info mtree`), each memory
at its Non-secure address and, with bit 28 set, its Secure alias. The CPU boots Secure (init_svtor 0:
the vector table is read at 0, the ITCM, and the reset handler runs at its Secure alias), so every
region below is given at its Secure address, as the cortex-m33 board (mps2-an505) does:

| memory | Non-secure | Secure (used) | size | here |
|---|---|---|---|---|
| ITCM | 0x00000000 | 0x10000000 | 512 KiB | FLASH: vector table, code, .data's initial values, weights |
| FPGA SRAM (behind an MPC) | 0x01000000 | 0x11000000 | 2 MiB | not used |
| DTCM | 0x20000000 | 0x30000000 | 512 KiB | not used (cost 1, kept free for a user's own data) |
| SSE-300 SRAM ("sram 2") | 0x21000000 | 0x31000000 | 4 MiB | RAM: stack, .data, .bss (the arena) |
| QSPI flash (a ROM in QEMU, MPC) | 0x28000000 | 0x38000000 | 8 MiB | weights that do not fit the ITCM |
| DDR (MPC) | 0x60000000 | 0x70000000 | 2 GiB (256 MiB used) | arena buffers beyond the SRAM (weights: ITCM and QSPI only, so their placement stays the exact two-region knapsack) |

The clock: mps3-an547's SYSCLK is 32 MHz (mmc->sysclk_frq). Costs are relative per byte read: the TCMs
and the SSE-300 SRAM run at the CPU clock, QSPI and DDR are external.

-mcpu=cortex-m55 with -mfloat-abi=hard selects MVE with floating point (+mve.fp) and the FPU; the
start-up code (arm/startup.c) enables CP10/CP11 in CPACR at reset, which both the FPU and MVE need.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from buildtool.targets import QEMU_SEMIHOSTING, Region, Target
from buildtool.targets.platform import ARM, Platform

from .flags import COMMON as _COMMON, LD as _LD

K, M = 1 << 10, 1 << 20
MACHINE = "mps3-an547"
CLOCK_HZ = 32_000_000  # hw/arm/mps2-tz.c: mps3-an547 sysclk_frq
M55 = ("-mcpu=cortex-m55", "-mfloat-abi=hard")
INSTALL = "install Debian's gcc-arm-none-eabi 12 or later (Arm GNU Toolchain 10.2+)"
QEMU_INSTALL = "install qemu-system-arm 7.2 or later (Debian: apt-get install qemu-system-arm)"


@functools.lru_cache(maxsize=None)
def gcc_problem(cc: str) -> str:
    """'' when cc compiles Helium code for the Cortex-M55 (-mcpu=cortex-m55 and arm_mve.h), else what is
    wrong and what to install, in one line."""
    if shutil.which(cc) is None:
        return ""  # missing_tools() names it
    src = "#include <arm_mve.h>\n#if !defined(__ARM_FEATURE_MVE) || __ARM_FEATURE_MVE < 3\n#error no MVE\n#endif\n"
    with tempfile.NamedTemporaryFile("w", suffix=".c") as f:
        f.write(src)
        f.flush()
        try:
            r = subprocess.run([cc, *M55, "-mthumb", "-fsyntax-only", f.name], capture_output=True, text=True,
                               timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"{cc} could not be run ({type(e).__name__}); {INSTALL}"
    if r.returncode != 0:
        return f"{cc} cannot compile Helium (MVE) code for -mcpu=cortex-m55 with arm_mve.h; {INSTALL}"
    return ""


@functools.lru_cache(maxsize=None)
def qemu_problem(qemu: str, machine: str = MACHINE) -> str:
    """'' when qemu emulates machine, else one line saying what to install."""
    if shutil.which(qemu) is None:
        return ""
    try:
        r = subprocess.run([qemu, "-machine", "help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{qemu} could not be run ({type(e).__name__}); {QEMU_INSTALL}"
    if not any(line.split()[:1] == [machine] for line in r.stdout.splitlines()):
        return f"{qemu} has no machine {machine} (the Cortex-M55 board); {QEMU_INSTALL}"
    return ""


@dataclass(frozen=True)
class HeliumPlatform(Platform):
    """The arm platform (same start-up code, semihosting, running), plus a check that the compiler
    builds Helium code and the emulator has the machine (Platform.problems)."""

    def problems(self, t) -> list:
        out = [gcc_problem(t.cc)]
        if t.run:
            out.append(qemu_problem(t.run[0], t.run[2] if len(t.run) > 2 else MACHINE))
        return [p for p in out if p]


HELIUM = HeliumPlatform(ARM.name, ARM.sources, ARM.native, ARM.code_mask)


def an547_regions() -> tuple:
    """mps3-an547's memories at their Secure addresses (see the module's table)."""
    # 256 KiB of the ITCM kept for code and .data: the Helium build of mobilenetv2_160_a1 has 169 KB of code
    return (Region("itcm", 0x10000000, 512 * K, 1, ("code", "weights"), 256 * K, "FLASH"),
            Region("fpga_sram", 0x11000000, 2 * M, 2, (), 0, "FPGA_SRAM"),
            Region("dtcm", 0x30000000, 512 * K, 1, (), 0, "DTCM"),
            Region("sram", 0x31000000, 4 * M, 1, ("arena",), 0, "RAM"),
            Region("qspi", 0x38000000, 8 * M, 4, ("weights",), 0, "QSPI"),
            Region("ddr", 0x70000000, 256 * M, 4, ("arena",), 0, "DDR"))


def targets():
    return [Target(
        name="cortex-m55", cpu="cortex-m55", description=f"cortex-m55 (Helium MVE) on qemu-system-arm -M {MACHINE}",
        platform=HELIUM, cc="arm-none-eabi-gcc", cflags=M55 + _COMMON, ldflags=M55 + _LD,
        kernel_sets=("cortex-m55",), ram_origin=0x31000000, ram_bytes=4 * M, flash_origin=0x10000000,
        flash_bytes=512 * K, stack_bytes=0x2000, linker_template="arm/cortexm.ld.in",
        run=("qemu-system-arm", "-M", MACHINE) + QEMU_SEMIHOSTING, tool_prefix="arm-none-eabi-",
        tools=("qemu-system-arm",), regions=an547_regions(), clock_hz=CLOCK_HZ,
        source="QEMU 7.2 hw/arm/mps2-tz.c (an547_raminfo, mps3tz_an547_class_init: init_svtor 0, sysclk 32 MHz), "
               "`info mtree` of qemu-system-arm -M mps3-an547; Arm AN547 (DAI0547B) memory map")]
