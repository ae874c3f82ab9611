"""Platforms: what boards of one family share (start-up code, how an image runs, where its RAM is).

A Target names its platform ("host", "arm", "riscv", or a registered third-party name) or
carries a Platform object; the core asks the platform instead of comparing names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError


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

    def run_command(self, t, elf, plugin: tuple = ()) -> list:
        """The command that runs elf on board t (plugin: emulator plugin arguments)."""
        if self.native:
            return [str(elf)]
        return list(t.run) + list(plugin) + ["-kernel", str(elf)]

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

HOST = Platform("host", ("host/platform.c",), native=True)
ARM = Platform("arm", ("arm/startup.c", "common/semihost_io.c", "common/markers.c"), code_mask=~1)
RISCV = Platform("riscv", ("riscv/start.S", "riscv/sys.c", "common/semihost_io.c", "common/markers.c"))

_REGISTRY = {p.name: p for p in (HOST, ARM, RISCV)}


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


__all__ = ["Platform", "HOST", "ARM", "RISCV", "register", "lookup", "names"]
