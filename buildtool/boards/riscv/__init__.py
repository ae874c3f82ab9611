"""RV32 boards on qemu-system-riscv32 (riscv64-unknown-elf-gcc, freestanding, semihosting), and real
RV32 parts (parts.py)."""

from buildtool.targets import QEMU_SEMIHOSTING, Target

from . import parts

_ARCH = ("-march=rv32imac", "-mabi=ilp32")
_COMMON = ("-O2", "-g", "-std=gnu11", "-ffreestanding", "-ffunction-sections", "-fdata-sections")
_LD = ("-nostdlib", "-nostartfiles", "-Wl,--gc-sections", "-lgcc")
_SH = QEMU_SEMIHOSTING


def targets():
    m = 1 << 20
    common = dict(platform="riscv", cc="riscv64-unknown-elf-gcc", cflags=_ARCH + _COMMON, ldflags=_ARCH + _LD,
                  kernel_sets=("riscv",), linker_template="riscv/rv32.ld.in", tool_prefix="riscv64-unknown-elf-",
                  tools=("qemu-system-riscv32",))
    return [
        # -bios none starts at 0x80000000, so code ("flash") sits at the bottom of DRAM (128 MiB at
        # 0x80000000); "RAM" is the 4 MiB after the first 8.
        Target(name="riscv32", cpu="rv32imac", description="rv32imac on qemu-system-riscv32 -M virt",
               flash_origin=0x80000000, flash_bytes=8 * m, ram_origin=0x80800000, ram_bytes=4 * m,
               stack_bytes=0x2000, run=("qemu-system-riscv32", "-M", "virt", "-bios", "none") + _SH, **common),
        # The same machine with the vector extension (RVV 1.0, VLEN 128): the riscv kernel set's RVV paths.
        Target(name="riscv32-rvv", cpu="rv32imac + V (VLEN 128)",
               description="rv32imac+V on qemu-system-riscv32 -M virt -cpu rv32,v=true,vlen=128",
               flash_origin=0x80000000, flash_bytes=8 * m, ram_origin=0x80800000, ram_bytes=4 * m,
               stack_bytes=0x2000, defines=("BT_RVV=1",),
               run=("qemu-system-riscv32", "-M", "virt", "-bios", "none", "-cpu",
                    "rv32,v=true,vext_spec=v1.0,vlen=128,elen=64") + _SH, **common),
        # HiFive1 (rev A, FE310-G000) as QEMU's sifive_e models it: the E31 core (rv32imac); the board's
        # 16 MiB QSPI flash is read in place at 0x20000000 and programs start 4 MiB in, after the board's
        # bootloader (QEMU's reset ROM jumps to 0x20400000), so 12 MiB of it is ours; 16 KiB DTIM RAM at
        # 0x80000000 (QEMU maps exactly that; an overflow below RAM traps). QEMU maps the whole 512 MiB XIP
        # window, not 16 MiB, and its semihosting console stands in for the board's UART. The clock is left
        # unset: the FE310 starts on a ~13.8 MHz ring oscillator and software raises it (the datasheet
        # rates the core to 320 MHz); no cycle model for RV32 uses it.
        Target(name="hifive1", cpu="rv32imac (sifive-e31)",
               description="HiFive1 rev A (FE310-G000: 16 KiB DTIM, 16 MiB QSPI flash) on qemu-system-riscv32 -M "
                           "sifive_e",
               flash_origin=0x20400000, flash_bytes=12 * m, ram_origin=0x80000000, ram_bytes=16 * 1024,
               stack_bytes=0x800, run=("qemu-system-riscv32", "-M", "sifive_e") + _SH,
               source="SiFive FE310-G000 manual §4 memory map (DTIM 16 KiB at 0x80000000, QSPI flash XIP from "
                      "0x20000000); HiFive1 getting-started guide (16 MiB flash, programs at 0x20400000 after the "
                      "bootloader); QEMU 7.2 hw/riscv/sifive_e.c (`info mtree`: DTIM 16 KiB at 0x80000000, XIP "
                      "0x20000000-0x3fffffff)",
               **common),
    ] + parts.targets()
