"""Platforms: what boards of one family share (start-up code, how an image runs, where its RAM is).

A Target names its platform ("host", "arm", "riscv", or a registered third-party name) or
carries a Platform object; the core asks the platform instead of comparing names.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

# The RTT reader (stdlib only, run as a script: no import of the firmware layer from here).
RTT_READER = Path(__file__).resolve().parents[1] / "firmware" / "rtt.py"


@dataclass(frozen=True)
class Platform:
    """A family of boards.

    sources: start-up and harness files under buildtool/firmware_src/ (after common/main.c).
    native: the image is an executable run directly (stdin/stdout, per-operator ns on stderr);
    else it runs under the board's emulator command with semihosting (input.bin/output.bin)
    and is profiled by the QEMU instruction-count plugin.
    code_mask: applied to code symbol addresses given to that plugin (~1 drops Arm's Thumb bit).
    """

    name: str
    sources: tuple = ()
    native: bool = False
    code_mask: int = ~0

    def firmware_sources(self, t) -> list:
        """Start-up and harness sources of board t (paths under firmware_src/)."""
        return ["common/main.c"] + list(self.sources) + list(t.extra_sources)

    def problems(self, t) -> list:
        """What keeps board t from building or running here beyond a missing program (missing_tools):
        one line each, naming what to install (e.g. a compiler without the CPU's vector extension)."""
        return []

    def run_prefix(self, t) -> list:
        """What runs an image of board t before the emulator's own arguments (-plugin ..., -kernel ELF):
        its emulator command (board.json's "run"); [] for a native or link-only board."""
        return list(t.run)

    def run_command(self, t, elf, plugin: tuple = ()) -> list:
        """The command that runs elf on board t (plugin: emulator plugin arguments)."""
        if self.native:
            return [str(elf)]
        if not t.run:
            raise UsageError(f"board {t.name} has no emulator here: it is built and link-checked only; flash "
                             f"firmware.elf (or .bin/.hex) with a probe (docs/boards.md)")
        return self.run_prefix(t) + list(plugin) + ["-kernel", str(elf)]

    def static_ram(self, sym: dict, section_bytes) -> tuple:
        """(static bytes other than the stack, reserved stack bytes) of a linked image from its
        symbols (name -> (address, size)); section_bytes(names) sums the named sections."""
        if self.native:
            stack = sym.get("host_stack", (0, 0))[1]
            return section_bytes((".data", ".bss", ".tdata", ".tbss")) - stack, stack
        return (sym["__bss_end"][0] - sym["__data_start"][0],
                sym["__stack_top"][0] - sym["__stack_bottom"][0])


# How a QEMU board is started: no display, monitor or UART; the semihosting console (bt_puts) on
# QEMU's standard output, so `qemu-system-arm ... -kernel app.elf > log.txt` captures it (without a
# chardev QEMU 7.2 writes it on stderr). Ctrl-C still ends QEMU.
QEMU_SEMIHOSTING = ("-display", "none", "-monitor", "none", "-serial", "none", "-chardev", "stdio,id=bt_console",
                    "-semihosting-config", "enable=on,target=native,chardev=bt_console")

@dataclass(frozen=True)
class RttPlatform(Platform):
    """A real part's family: bt_puts writes a SEGGER RTT up-buffer (common/rtt_io.c, which keeps
    semihosting for the harness's input.bin/output.bin). Under an emulator the image runs through
    the RTT reader (firmware/rtt.py), which starts the board's emulator command with a GDB stub, reads
    the up-buffer from the emulated RAM as a probe would (the ELF after -kernel gives the block's
    address), prints it and exits with the code the firmware reports there (bt_exit=N)."""

    def run_prefix(self, t) -> list:
        return [sys.executable, str(RTT_READER), "--"] + list(t.run) if t.run else []


HOST = Platform("host", ("host/platform.c",), native=True)
ARM = Platform("arm", ("arm/startup.c", "common/semihost_io.c", "common/markers.c"), code_mask=~1)
RISCV = Platform("riscv", ("riscv/start.S", "riscv/sys.c", "common/semihost_io.c", "common/markers.c"))
ARM_RTT = RttPlatform("arm-rtt", ("arm/startup.c", "common/rtt_io.c", "common/markers.c"), code_mask=~1)
RISCV_RTT = RttPlatform("riscv-rtt", ("riscv/start.S", "riscv/sys.c", "common/rtt_io.c", "common/markers.c"))

_REGISTRY = {p.name: p for p in (HOST, ARM, RISCV, ARM_RTT, RISCV_RTT)}


def register(p: Platform) -> Platform:
    """Make p known by its name (a third-party board may then say platform="<name>")."""
    _REGISTRY[p.name] = p
    return p


def lookup(spec, board: str = "?") -> Platform:
    """The Platform for a Target's platform field (a Platform or a registered name)."""
    if isinstance(spec, Platform):
        return spec
    if spec not in _REGISTRY:
        raise UsageError(f"board {board}: unknown platform '{spec}' ({', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[spec]


def names() -> list:
    return sorted(_REGISTRY)


__all__ = ["Platform", "RttPlatform", "HOST", "ARM", "RISCV", "ARM_RTT", "RISCV_RTT", "register", "lookup",
           "names"]
