"""Real Cortex-M parts (arm-none-eabi-gcc), their memories as the vendors' manuals give them.

Every part boots without a vendor HAL (arm/startup.c: vector table, .data/.bss, VTOR, FPU; the clocks,
caches and flash wait states stay as the part leaves reset, i.e. on its internal RC oscillator, which
every part here runs flash code at). bt_puts writes a SEGGER RTT up-buffer (common/rtt_io.c) by
default; BOARD:semihosting puts it on semihosting instead. The harness's model input and
output are semihosting files either way (a probe with semihosting, or the emulator; an application
of your own brings its own input). Outputs: firmware.elf, .bin and .hex.

Memory cost classes (Region.cost, per byte read, relative): 1 single-cycle SRAM / TCM at the CPU
clock; 2 on-chip flash (wait states at full clock, partly hidden by the prefetch / ART accelerator)
and on-chip SRAM behind a wider bus or another clock domain; 3 on-chip SRAM on a slower bus; 4
external memory (QSPI flash read in place, SDRAM). External memories (QSPI, SDRAM) need their
controller (QUADSPI, FMC) set up before use, which this start-up code does not do: the placer puts
something there only when the on-chip memories are too small, and such firmware needs your own set-up
code first (docs/boards.md).

Each `source` names the documents and sections the figures come from; docs/boards.md says which
were checked and how, and which figure could not be verified. Only netduinoplus2 has an emulated
twin (QEMU's netduinoplus2 machine); nucleo-l4r5zi's own image runs on QEMU's mps2-an386 (the same core; its
flash linked at the part's boot alias 0x00000000, its 640 KiB of SRAM at 0x20000000, both inside what that
machine maps); the others are built and link-checked (tests/test_parts.py) and
their code is run on the QEMU machine with the same core (mps2-an386 / an500 / an505). Nothing here
has run on hardware.
"""

from buildtool.targets import QEMU_SEMIHOSTING, Region, Target

from .flags import COMMON as _COMMON, LD as _LD

K, M = 1 << 10, 1 << 20
M4F = ("-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
M7_SP = ("-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16")  # STM32F74x/F75x: single-precision FPU
M7_DP = ("-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16")  # STM32H7: double-precision FPU
M33F = ("-mcpu=cortex-m33", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16")

# the console: rtt (the default: platform arm-rtt) or semihosting (BOARD:semihosting: the QEMU boards' platform, arm)
CONSOLE = (("console", "rtt", ()), ("console", "semihosting", (("platform", "arm"),)))


def flash(origin, size, cost=2):
    return Region("flash", origin, size, cost, ("code", "weights"), 0, "FLASH")


def ram(origin, size, name="sram"):
    return Region(name, origin, size, 1, ("arena",), 0, "RAM")


_FPU = {"-mfpu=fpv4-sp-d16": "FPv4-SP", "-mfpu=fpv5-sp-d16": "FPv5-SP", "-mfpu=fpv5-d16": "FPv5-DP"}


def part(name, chip, cpu, cpu_flags, regions, clock_hz, source, run=(), stack=0x2000, extra_sources=(),
         ram_note="", defines=(), flash_load=None, cflags=()):
    """A real part: FLASH and RAM are the regions named so; run: the emulator command of its twin (or of the
    machine that maps its memories); defines: the kernels' (BT_ICACHE_BYTES: the part's instruction cache, from
    its memory model, firmware/memory_model.py: the kernels' compact loops, kernels/cortex-m/conv_pm.h);
    flash_load: the flash's own address where FLASH is linked at an alias of it (Target.flash_load); cflags: the
    part's own compiler flags after the core's and the common ones."""
    fl = next(r for r in regions if r.memory == "FLASH")
    rm = next(r for r in regions if r.memory == "RAM")
    where = (f"runs in {' '.join(run[:3])}" if run else "built and link-checked only (no emulator)")
    return Target(
        name=name, cpu=cpu, description=f"{chip}: {cpu} ({_FPU[cpu_flags[2]]} FPU) at {clock_hz / 1e6:g} MHz{ram_note}; {where}",
        platform="arm-rtt", cc="arm-none-eabi-gcc", cflags=cpu_flags + _COMMON + tuple(cflags), ldflags=cpu_flags + _LD,
        kernel_sets=("cortex-m",), ram_origin=rm.origin, ram_bytes=rm.size, flash_origin=fl.origin,
        flash_bytes=fl.size, stack_bytes=stack, linker_template="arm/cortexm.ld.in", run=run,
        tool_prefix="arm-none-eabi-", tools=("qemu-system-arm",) if run else (), regions=tuple(regions),
        clock_hz=clock_hz, source=source, options=CONSOLE, images=("bin", "hex"), extra_sources=extra_sources,
        defines=tuple(defines), flash_load=flash_load)


def targets():
    return [
        part("netduinoplus2", "STM32F405RG (Netduino Plus 2)", "cortex-m4", M4F,
             # RM0090 §2.1: SRAM1 112 KB + SRAM2 16 KB on the bus matrix, contiguous from 0x20000000 (SRAM2 at
             # 0x2001C000); the 64 KB CCM data RAM (0x10000000) is reached only by the CPU's D-bus: data and
             # stack, no DMA, no code. QEMU 7.2's netduinoplus2 maps one 192 KiB SRAM at 0x20000000 and no
             # CCM (`info mtree`): firmware whose arena spills into CCM cannot run there.
             (flash(0x08000000, 1 * M), ram(0x20000000, 128 * K, "sram1_2"),
              Region("ccm", 0x10000000, 64 * K, 1, ("arena",), 0, "CCM", emulated=False)),
             168_000_000,
             "ST RM0090 rev 19 §2.1 System architecture (SRAM1 112 KB, SRAM2 16 KB, 64 KB CCM data RAM off the "
             "bus matrix), §2.3 Memory map (flash 0x08000000, SRAM 0x20000000, CCM 0x10000000); DS8626 "
             "(STM32F405xx) §1: 168 MHz, 1 MB flash, 192 KB SRAM incl. 64 KB CCM",
             run=("qemu-system-arm", "-M", "netduinoplus2") + QEMU_SEMIHOSTING),
        part("nucleo-l4r5zi", "STM32L4R5ZI (NUCLEO-L4R5ZI)", "cortex-m4", M4F,
             # SRAM1 192 KB at 0x20000000, SRAM2 64 KB at 0x10000000 and aliased at 0x20030000, SRAM3 384 KB at
             # 0x20040000: the three are one contiguous 640 KB from 0x20000000 (SRAM2 is not declared twice).
             # The 2 MB flash (0x08000000) is linked at its boot alias 0x00000000: booted from main flash the
             # part maps it there and fetches through the alias on the same I-Code/D-Code buses and ART
             # (RM0432 §2.6 Boot configuration), so the one image runs on the part and on QEMU's mps2-an386,
             # which maps 4 MiB at 0 and 4 MiB of SRAM at 0x20000000 (`info mtree`): the part's whole map. The
             # .hex writes it at 0x08000000 (flash_load), where a programmer writes flash.
             (flash(0x00000000, 2 * M), ram(0x20000000, 640 * K, "sram1_2_3")),
             120_000_000,
             "ST RM0432 (STM32L4+) §2.2 Memory organization / §2.4 Embedded SRAM (SRAM1 192 KB at 0x20000000, "
             "SRAM2 64 KB at 0x10000000 aliased at 0x20030000, SRAM3 384 KB at 0x20040000), §2.6 Boot "
             "configuration (booted from main flash, the flash at 0x08000000 is aliased at 0x00000000); DS12023 "
             "(STM32L4R5xx) §1-3: 120 MHz, 2 MB flash, 640 KB SRAM",
             run=("qemu-system-arm", "-M", "mps2-an386") + QEMU_SEMIHOSTING, flash_load=0x08000000,
             ram_note="; flash linked at its boot alias 0x00000000 (.hex at 0x08000000)",
             # the ART's 1 KiB instruction cache (RM0432 §3.3.4; memory_model.py): loops that fit it, and every
             # function on a 32-byte line of it, so a kernel's hot loop takes the same lines whatever model.c's
             # size before it (docs/memory-model.md, "Functions on the cache's lines")
             defines=("BT_ICACHE_BYTES=1024",), cflags=("-falign-functions=32",)),
        part("stm32f746g-disco", "STM32F746NG (32F746GDISCOVERY)", "cortex-m7", M7_SP,
             # DTCM 64 KB at 0x20000000, SRAM1 240 KB at 0x20010000, SRAM2 16 KB at 0x2004C000: contiguous,
             # 320 KB; the stack and .data/.bss start in DTCM. ITCM RAM 16 KB at 0 (instructions; not used).
             # The board's 128-Mbit QSPI NOR (memory-mapped at 0x90000000) and its SDRAM (128 Mbit, 64 Mbit
             # wired: 8 MB at FMC SDRAM bank 1, 0xC0000000) need QUADSPI / FMC set up first.
             (flash(0x08000000, 1 * M), ram(0x20000000, 320 * K, "dtcm_sram1_2"),
              Region("itcm", 0x00000000, 16 * K, 1, (), 0, "ITCM"),
              Region("qspi", 0x90000000, 16 * M, 4, ("weights",), 0, "QSPI"),
              Region("sdram", 0xC0000000, 8 * M, 4, ("arena",), 0, "SDRAM")),
             216_000_000,
             "ST RM0385 (STM32F75x/74x) §2.1 System architecture (DTCM 64 KB, ITCM RAM 16 KB, SRAM1 240 KB, "
             "SRAM2 16 KB, flash up to 1 MB), §2.2 Memory organization (addresses); DS10916 (STM32F745/746): "
             "216 MHz, single-precision FPU; UM1907 (32F746G-DISCO) : 128-Mbit QSPI flash, 128-Mbit SDRAM "
             "with 64 Mbit accessible"),
        part("nucleo-h7a3zi", "STM32H7A3ZI-Q (NUCLEO-H7A3ZI-Q)", "cortex-m7", M7_DP,
             # DTCM first (the RAM: stack, .data/.bss, the arena's first part); then the AXI SRAM (1 MB at
             # 0x24000000, CPU domain), the AHB SRAMs (2 x 64 KB at 0x30000000) and the SmartRun-domain SRAM
             # (32 KB at 0x38000000) take what the DTCM cannot. ITCM 64 KB at 0: instructions, not used.
             (flash(0x08000000, 2 * M), ram(0x20000000, 128 * K, "dtcm"),
              Region("itcm", 0x00000000, 64 * K, 1, (), 0, "ITCM"),
              Region("axisram", 0x24000000, 1 * M, 2, ("arena",), 0, "AXISRAM"),
              Region("ahbsram", 0x30000000, 128 * K, 3, ("arena",), 0, "AHBSRAM"),
              Region("srdsram", 0x38000000, 32 * K, 3, ("arena",), 0, "SRDSRAM")),
             280_000_000,
             "ST RM0455 (STM32H7A3/7B3/7B0) §2.1 System architecture and §2.3 Memory organization (DTCM "
             "128 KB at 0x20000000, ITCM 64 KB at 0, AXI SRAM1-3 1 MB at 0x24000000, AHB SRAM1/2 2 x 64 KB at "
             "0x30000000, SRD SRAM 32 KB at 0x38000000); DS13195 (STM32H7A3xI/G): 280 MHz, 2 MB flash, "
             "double-precision FPU"),
        part("nucleo-u575zi", "STM32U575ZI-Q (NUCLEO-U575ZI-Q)", "cortex-m33", M33F,
             # SRAM1 192 KB, SRAM2 64 KB, SRAM3 512 KB: contiguous from 0x20000000 (768 KB); SRAM4 16 KB at
             # 0x28000000 (SmartRun domain). TrustZone off (TZEN = 0, as shipped): the non-secure addresses.
             (flash(0x08000000, 2 * M), ram(0x20000000, 768 * K, "sram1_2_3"),
              Region("sram4", 0x28000000, 16 * K, 2, ("arena",), 0, "SRAM4")),
             160_000_000,
             "ST RM0456 (STM32U5) §2.3 Memory organization (SRAM1 192 KB at 0x20000000, SRAM2 64 KB at "
             "0x20030000, SRAM3 512 KB at 0x20040000, SRAM4 16 KB at 0x28000000; flash 0x08000000); DS13737 "
             "(STM32U575xx): 160 MHz, 2 MB flash, 786 KB SRAM, FPU and DSP"),
        part("nrf52840dk", "nRF52840 (nRF52840 DK)", "cortex-m4", M4F,
             # flash 1 MB at 0, RAM 256 KB at 0x20000000; the DK's 64-Mbit QSPI NOR (MX25R6435F) is read in
             # place through the QSPI peripheral's XIP window at 0x12000000 once QSPI is set up.
             (flash(0x00000000, 1 * M), ram(0x20000000, 256 * K),
              Region("qspi", 0x12000000, 8 * M, 4, ("weights",), 0, "QSPI")),
             64_000_000,
             "Nordic nRF52840 Product Specification v1.x §4.2 Memory (flash 1 MB at 0x00000000, RAM 256 KB at "
             "0x20000000), §6.x QSPI (XIP at 0x12000000), CPU 64 MHz Cortex-M4 with FPU; nRF52840 DK user guide "
             "(MX25R6435F 64 Mbit QSPI flash)"),
        part("pico2", "RP2350A (Raspberry Pi Pico 2)", "cortex-m33", M33F,
             # SRAM0-7 (8 x 64 KB, striped) at 0x20000000, SRAM8-9 (2 x 4 KB) at 0x20080000: contiguous 520 KB;
             # code and weights run in place from the board's 4 MB QSPI flash (XIP at 0x10000000, 16 KB cache).
             (flash(0x10000000, 4 * M, cost=4), ram(0x20000000, 520 * K, "sram0_9")),
             150_000_000,
             "Raspberry Pi RP2350 datasheet §2.2 Address map (XIP 0x10000000, SRAM 0x20000000-0x20081fff), "
             "§4.2 SRAM (520 KB: SRAM0-7 striped 64 KB banks, SRAM8-9 4 KB), §5.9 boot image metadata "
             "(IMAGE_DEF within the first 4 KB), 150 MHz; Pico 2 datasheet (4 MB QSPI flash)",
             extra_sources=("arm/rp2350_image_def.c",)),
    ]
