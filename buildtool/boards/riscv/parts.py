"""Real RV32 parts (riscv64-unknown-elf-gcc, freestanding), their memories as the vendors' manuals give
them; built and link-checked only (QEMU 7.2 has no model of either part). Their code is run on QEMU's
sifive_e / virt machines, the nearest with the same base ISA (tests/test_parts.py). bt_puts writes a
SEGGER RTT up-buffer by default (common/rtt_io.c); BOARD:semihosting puts it on semihosting.
The RV32 start-up code ends on the console's bt_exit (RTT: report the code and wait; riscv/sys.c). The
ESP32-C3 image boots by the ROM's direct boot (riscv/esp32c3.ld.in). Nothing here has run on hardware. See boards/cortex_m/parts.py for the cost classes; docs/boards.md for what was verified."""

from buildtool.targets import Region, Target

K, M = 1 << 10, 1 << 20
_COMMON = ("-O2", "-g", "-std=gnu11", "-ffreestanding", "-ffunction-sections", "-fdata-sections")
_LD = ("-nostdlib", "-nostartfiles", "-Wl,--gc-sections", "-lgcc")
CONSOLE = (("console", "rtt", ()), ("console", "semihosting", (("platform", "riscv"),)))


def part(name, chip, march, regions, clock_hz, source, stack=0x2000, defines=(), linker="riscv/rv32.ld.in"):
    arch = (f"-march={march}", "-mabi=ilp32")
    fl = next(r for r in regions if r.memory == "FLASH")
    rm = next(r for r in regions if r.memory == "RAM")
    return Target(
        name=name, cpu=march, description=f"{chip}: {march} at {clock_hz / 1e6:g} MHz; built and link-checked only "
                                          f"(no emulator)",
        platform="riscv-rtt", cc="riscv64-unknown-elf-gcc", cflags=arch + _COMMON, ldflags=arch + _LD,
        kernel_sets=("riscv",), ram_origin=rm.origin, ram_bytes=rm.size, flash_origin=fl.origin, flash_bytes=fl.size,
        stack_bytes=stack, linker_template=linker, tool_prefix="riscv64-unknown-elf-",
        regions=tuple(regions), clock_hz=clock_hz, source=source, options=CONSOLE, images=("bin", "hex"),
        defines=defines)


def targets():
    return [
        part("longan-nano", "GD32VF103CBT6 (Sipeed Longan Nano)", "rv32imac",
             # 128 KB flash at 0x08000000 (mapped at 0 when BOOT0 is low: the core starts there and start.S jumps
             # to the link address), 32 KB SRAM at 0x20000000
             (Region("flash", 0x08000000, 128 * K, 2, ("code", "weights"), 0, "FLASH"),
              Region("sram", 0x20000000, 32 * K, 1, ("arena",), 0, "RAM")),
             108_000_000,
             "GigaDevice GD32VF103 datasheet §2 (GD32VF103CBT6: 128 KB flash, 32 KB SRAM, RISC-V core at up to "
             "108 MHz) and §2.4 memory map; GD32VF103 user manual §2.3 boot configuration (BOOT0 = 0: main "
             "flash aliased at 0x00000000)",
             stack=0x800, defines=("BT_JUMP_TO_LINK_ADDRESS",)),
        part("esp32c3-devkitm", "ESP32-C3 (ESP32-C3-DevKitM-1, 4 MB flash)", "rv32imc",
             # The external flash is read through the cache: instructions in the IBUS window at 0x42000000,
             # data in the DBUS window at 0x3C000000. The image boots directly (riscv/esp32c3.ld.in: the ROM's
             # direct boot maps both windows and jumps to 0x42000008); code runs from the IBUS window, constants
             # and weights are read through the DBUS window; the stack, .data and .bss in SRAM1's data view
             # (0x3FC80000, 384 KB; the other 16 KB of the 400 KB SRAM is the instruction cache).
             (Region("flash", 0x42000000, 4 * M, 4, ("code", "weights"), 0, "FLASH"),
              Region("sram", 0x3FC80000, 384 * K, 1, ("arena",), 0, "RAM")),
             160_000_000,
             "Espressif ESP32-C3 Technical Reference Manual §3 System and Memory (internal SRAM 400 KB of which "
             "16 KB cache; SRAM1 data bus 0x3FC80000-0x3FCDFFFF; external memory IBUS 0x42000000, DBUS "
             "0x3C000000, through the cache and MMU); ESP32-C3 datasheet §1: 32-bit RISC-V (RV32IMC) at up to "
             "160 MHz; esptool's ESP32-C3 memory map (DROM 0x3C000000, DRAM 0x3FC80000-0x3FCE0000, IROM "
             "0x42000000); ESP32-C3-DevKitM-1 user guide (ESP32-C3-MINI-1, 4 MB flash); Espressif's "
             "esp32c3-direct-boot-example (direct boot: magic 0xaedb041d twice at flash offset 0, entry 0x42000008, "
             "silicon revision 3 and later)",
             linker="riscv/esp32c3.ld.in"),
    ]
