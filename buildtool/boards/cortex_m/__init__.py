"""Cortex-M boards: QEMU's MPS2 machines (arm-none-eabi-gcc, semihosting) and real parts (parts.py)."""

from dataclasses import replace

from buildtool.targets import QEMU_SEMIHOSTING, Region, Target

from . import m55, parts
from .flags import COMMON as _COMMON, LD as _LD

_SH = QEMU_SEMIHOSTING
_M4 = ("-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")


# QEMU's MPS2 machines (hw/arm/mps2.c: mps2-an385, -an386, -an500, -an511) clock the FPGA image's
# SYSCLK, which drives the CPU, SysTick and the timers, at SYSCLK_FRQ = 25 MHz; mps2-an505
# (hw/arm/mps2-tz.c) is not given one here.
MPS2_CLOCK_HZ = 25_000_000


def _board(name, cpu, machine, cpu_flags, flash, flash_len, ram, ram_len, regions=(), clock_hz=0):
    return Target(
        name=name, cpu=cpu, description=f"{cpu} on qemu-system-arm -M {machine}", platform="arm",
        cc="arm-none-eabi-gcc", cflags=cpu_flags + _COMMON, ldflags=cpu_flags + _LD,
        kernel_sets=("cortex-m",), ram_origin=ram, ram_bytes=ram_len, flash_origin=flash, flash_bytes=flash_len,
        stack_bytes=0x2000, linker_template="arm/cortexm.ld.in", run=("qemu-system-arm", "-M", machine) + _SH,
        tool_prefix="arm-none-eabi-", tools=("qemu-system-arm",), regions=regions,
        clock_hz=clock_hz)


def an386_regions() -> tuple:
    """mps2-an386's memories as QEMU 7.2 maps them (`info mtree`): SSRAM1 (4 MiB at 0, the code
    memory: our flash, 512 KiB of it kept for code and .data), block RAM (16 KiB at 0x01000000),
    SSRAM2&3 (4 MiB at 0x20000000: data, the arena) and PSRAM (16 MiB at 0x21000000, external).
    Costs are relative per byte read: the ZBT SRAMs and block RAM are single-cycle on the FPGA,
    PSRAM is the slow external memory (QEMU itself runs every region at the same speed)."""
    m = 1 << 20
    return (Region("flash", 0x00000000, 4 * m, 1, ("code", "weights"), 512 * 1024, "FLASH"),
            Region("blockram", 0x01000000, 16 * 1024, 1, (), 0, "BLOCKRAM"),
            Region("sram", 0x20000000, 4 * m, 1, ("arena",), 0, "RAM"),
            Region("psram", 0x21000000, 16 * m, 4, ("weights", "arena"), 0, "PSRAM"))


def cortex_m0plus() -> Target:
    """ARMv6-M (Cortex-M0+: no DSP instructions, no unaligned loads, no FPU): the reference kernel set,
    compiled -mcpu=cortex-m0plus and run on QEMU 7.2's microbit (an nRF51822, whose Cortex-M0 has the same
    ARMv6-M instruction set; `info mtree`: 256 KiB flash at 0, 16 KiB SRAM at 0x20000000). For
    `buildtool export --cpu cortex-m0plus` (STM32G0/L0/C0, RP2040, SAMD21, nRF51 class parts)."""
    t = _board("cortex-m0plus", "cortex-m0plus", "microbit", ("-mcpu=cortex-m0plus", "-mfloat-abi=soft"),
               0x00000000, 256 * 1024, 0x20000000, 16 * 1024)
    return replace(t, kernel_sets=(), stack_bytes=0x800,
                   description="cortex-m0plus code (reference kernels) on qemu-system-arm -M microbit (Cortex-M0)")


def targets():
    """QEMU 7.2's memory maps (`info mtree`): an386 and an500 have ZBT SSRAM1, 4 MiB at 0x0 (our
    flash; 0x400000 is its mirror, which a load past the end of flash overwrites: the vector
    table) and SSRAM2&3, 4 MiB at 0x20000000 (our RAM). an505 boots Secure: SSRAM1's secure alias
    is 4 MiB at 0x10000000 (mirror at 0x10400000), SSRAM2 2 MiB at 0x38000000 (SSRAM3, behind
    another MPC at 0x38200000, is not used)."""
    m = 1 << 20
    return [
        _board("cortex-m4", "cortex-m4", "mps2-an386", _M4, 0x00000000, 4 * m, 0x20000000, 4 * m, an386_regions(),
               MPS2_CLOCK_HZ),
        # a part with 256 KiB of on-chip SRAM and external PSRAM (docs/regions.md): mps2-an386 with only
        # the first 256 KiB of SSRAM2&3 declared (the RAM region takes the board's ram_* fields); an
        # arena larger than that spreads its buffers into the PSRAM
        _board("cortex-m4-256k", "cortex-m4", "mps2-an386", _M4, 0x00000000, 4 * m, 0x20000000, 256 * 1024,
               an386_regions(), MPS2_CLOCK_HZ),
        _board("cortex-m7", "cortex-m7", "mps2-an500", ("-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"),
               0x00000000, 4 * m, 0x20000000, 4 * m, clock_hz=MPS2_CLOCK_HZ),
        _board("cortex-m33", "cortex-m33", "mps2-an505",
               ("-mcpu=cortex-m33", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"), 0x10000000, 4 * m, 0x38000000, 2 * m),
        cortex_m0plus(),
    ] + m55.targets() + parts.targets()
