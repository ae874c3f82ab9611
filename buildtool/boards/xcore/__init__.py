"""xcore.ai: the xcore kernel set built for the host against the VPU C model, planned for the XU316's
real memories.

No xcore toolchain is needed: the kernels' VPU operations are modelled in C, so the same code runs
natively and is checked bit-exact. (A real xcc/xsim board would be a separate Target with its own run
command.) What the build is planned and checked against is one tile of an XU316-1024: 512 KiB of SRAM
holding code, stack and arena, the weights in the boot QSPI flash, read through the flash server.
A model whose layer-by-layer plan does not fit the tile takes the least-RAM plan that does (auto_fit:
what XMOS's AN02008 does by hand), saying so in one line. Board option `lpddr`: the XK-EVK-XU316's
LPDDR1, mapped at 0x10000000, may hold weights and arena buffers too (docs/boards.md).
"""

from buildtool.targets import Region, Target

KIB, MIB = 1024, 1024 * 1024
TILE_SRAM = (0x00080000, 512 * KIB)  # per tile of an XU316-1024 (1024 KiB in two tiles)
# Kept back from the tile's SRAM for code and constants only where no model's code is measured (a plan
# placed on its own: `buildtool plan --board xcore`, `buildtool report`, fit_table without a model). Every
# build and `buildtool fit` measure the model's code and constants (steps/code.py: measured_code; a host
# build, as no xcc is here) and give the arena the tile less that code and the stack (Target.with_code).
CODE_RESERVE = 256 * KIB
BOOT_FLASH = 16 * MIB  # QSPI boot flash: the board's part; 16 MiB is the most a 24-bit-address read reaches
LPDDR = (0x10000000, 64 * MIB)  # XK-EVK-XU316's LPDDR1 (board option lpddr)

SRAM = Region("sram", TILE_SRAM[0], TILE_SRAM[1], 1, ("code", "arena"), CODE_RESERVE, "RAM")
FLASH = Region("flash", 0, BOOT_FLASH, 8, ("weights",), 0, "FLASH")
EXT = Region("lpddr", LPDDR[0], LPDDR[1], 4, ("weights", "arena"), 0, "LPDDR")


def targets():
    return [Target(
        name="xcore", cpu="xcore.ai VPU (C model)",
        description="xcore kernel set on the host, VPU C model; planned for one XU316 tile (512 KiB SRAM)",
        platform="host", cc="gcc", cflags=("-O2", "-std=gnu11", "-g"), ldflags=("-pthread",),
        kernel_sets=("xcore",), defines=("BT_SET_XCORE",), stack_bytes=8 * KIB, weights_align=32,
        ram_origin=TILE_SRAM[0], ram_bytes=TILE_SRAM[1], flash_origin=0, flash_bytes=BOOT_FLASH,
        regions=(SRAM, FLASH), auto_fit=True,
        options=(("memory", "tile", ()), ("memory", "lpddr", (("regions", (SRAM, FLASH, EXT)),))),
        source="XU316-1024: 512 KiB SRAM per tile, two tiles; LPDDR1 of the XK-EVK-XU316 (docs/boards.md)")]
