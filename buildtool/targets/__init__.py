"""Boards: what a firmware build needs to know about a target, and the registry.

A board is a `Target`. Boards come from entry points of group
"buildtool.targets": each entry point names a callable returning Targets, so
a third-party package adds a board by declaring such an entry point. The
built-in boards live in buildtool.boards (host, cortex_m, riscv, xcore) and are
always loaded from there first; an entry point naming a board that already
exists, or failing to load, is skipped. A board's platform (platform.py) owns
its start-up code, how it runs and how its RAM is read.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from pathlib import Path

from ..errors import UsageError, did_you_mean
from .platform import QEMU_SEMIHOSTING, Platform, lookup

GROUP = "buildtool.targets"
BUILTIN_PLUGINS = ("buildtool.boards.host", "buildtool.boards.cortex_m", "buildtool.boards.riscv",
                   "buildtool.boards.xcore")  # cortex_m and riscv hold the QEMU machines and the real parts
FIRMWARE = Path(__file__).resolve().parents[1] / "firmware_src"  # start-up code, linker scripts


@dataclass(frozen=True)
class Region:
    """One memory region of a board: where it is, how big, how dear a byte read there is (cost 1 is
    the fastest), and what may live there ("code", "weights", "arena"). reserve: bytes kept back from
    weights for what else the region holds (code, .data); memory: the linker script's name of it;
    emulated: False when the board's emulator does not map it (QEMU's netduinoplus2 has no CCM), so
    firmware with something placed there builds but cannot run under that emulator."""

    name: str
    origin: int
    size: int
    cost: int = 1
    holds: tuple = ()
    reserve: int = 0
    memory: str = ""
    emulated: bool = True

    @property
    def end(self) -> int:
        return self.origin + self.size


@dataclass(frozen=True)
class Target:
    """One board.

    platform is a Platform or the name of a registered one ("host", "arm", "riscv"): it
    selects the start-up code under buildtool/firmware_src/, how the image runs and how its RAM is read.
    kernel_sets is the search order of buildtool/kernels/<set>/ directories for each kernel
    file; "reference" is always searched last. run is the emulator command before
    the ELF path (empty: run the executable natively).
    """

    name: str
    cpu: str
    description: str
    platform: str | Platform
    cc: str
    cflags: tuple = ()
    ldflags: tuple = ()
    kernel_sets: tuple = ()
    ram_origin: int = 0
    ram_bytes: int = 0
    flash_origin: int = 0
    flash_bytes: int = 0
    stack_bytes: int = 8192
    linker_template: str = ""  # path under firmware_src/, "" = the toolchain's default
    run: tuple = ()
    weights_align: int = 16
    tool_prefix: str = ""  # binutils prefix, e.g. "arm-none-eabi-"
    extra_sources: tuple = ()  # more files under firmware_src/ for this board
    defines: tuple = ()
    tools: tuple = field(default=())  # programs that must be on PATH to build and run
    regions: tuple = ()  # Regions, when the board has more than its flash and RAM (memory_regions())
    clock_hz: int = 0  # the CPU clock a datasheet (or the emulated machine's source) gives; 0: unknown
    source: str = ""  # the documents (and sections) the memories, core and clock were taken from
    # Board options a user picks as BOARD:value (get()): (key, value, overrides) each, overrides being
    # (field, value) pairs applied to the Target; a key's first entry is its default.
    options: tuple = ()
    images: tuple = ()  # more outputs made from firmware.elf by objcopy: "bin", "hex"
    # True: a build whose layer-by-layer plan does not fit takes the first plan of `buildtool fit`'s ladder
    # that does (optimize=ram, then at any MAC cost), saying so in one line (firmware/fits.py: fitting_plan);
    # False: it is refused in one line naming the option that would fit it
    auto_fit: bool = False
    # where a programmer writes the flash image when FLASH is linked at an alias of the flash (nucleo-l4r5zi: its
    # boot alias 0x00000000, the flash itself at 0x08000000): firmware.hex's addresses; None: flash_origin
    flash_load: int | None = None

    def __post_init__(self):  # regions given as maps (dataclasses.asdict of a board) become Regions
        object.__setattr__(self, "regions", tuple(Region(**r) if isinstance(r, dict) else r for r in self.regions))

    @property
    def port(self) -> Platform:
        """The board's Platform object."""
        return lookup(self.platform, self.name)

    @property
    def emulated(self) -> bool:
        return not self.port.native

    @property
    def runs_here(self) -> bool:
        """An image of this board can run on the build machine (natively or under its emulator command);
        False for a part that is only built and link-checked (flash it with a probe)."""
        return self.port.native or bool(self.run)

    def unemulated_regions(self) -> tuple:
        """Names of the regions its emulator does not map (Region.emulated False)."""
        return tuple(r.name for r in self.regions if not r.emulated) if self.run else ()

    def option_values(self) -> dict:
        """key -> its values, the default first."""
        out: dict = {}
        for key, value, _ in self.options:
            out.setdefault(key, []).append(value)
        return out

    def with_options(self, spec: str) -> "Target":
        """This board with the option values of spec ("value[,value]", e.g. "semihosting": each value names
        its option, values are unique across a board's options) applied; its name becomes NAME:spec, which
        get() reads back (firmware.json records the name a build was made for). No "=" in the syntax: a
        board name ends up in folder names, and QEMU's -plugin option reads "=" in a path as a key."""
        values = self.option_values()
        if not values:
            raise UsageError(f"board {self.name} takes no options (got '{spec}')")
        t, seen = self, set()
        for value in spec.split(","):
            keys = [k for k, vs in values.items() if value in vs]
            if len(keys) != 1 or keys[0] in seen:
                known = "; ".join(f"{k}: {' | '.join(vs)} (default {vs[0]})" for k, vs in values.items())
                raise UsageError(f"board {self.name}: bad option '{value}' in '{self.name}:{spec}' (options, one "
                                 f"value each: {known})")
            seen.add(keys[0])
            over = next(o for k, v, o in self.options if k == keys[0] and v == value)
            t = replace(t, **dict(over))
        return replace(t, name=f"{self.name}:{spec}")

    def kernel_search(self) -> tuple:
        return tuple(s for s in self.kernel_sets if s != "reference") + ("reference",)

    def with_kernels(self, sets: tuple) -> "Target":
        """The same board using another kernel search order (e.g. reference only)."""
        return replace(self, kernel_sets=tuple(sets))

    def configured(self, kernels: tuple | None = None, stack_bytes: int | None = None) -> "Target":
        """The same board with another kernel search order or stack size when asked."""
        t = self if kernels is None else self.with_kernels(kernels)
        if stack_bytes is not None:
            if stack_bytes <= 0 or stack_bytes % 16:
                raise UsageError(f"stack size {stack_bytes} must be a positive multiple of 16 bytes")
            t = replace(t, stack_bytes=stack_bytes)
        return t

    def memory_regions(self) -> tuple:
        """The board's Regions: its own list, else its flash (code and weights) and RAM (the arena). The
        regions whose linker name is FLASH or RAM take their origin and size from the board's
        flash_* and ram_* fields, so those stay the one statement of them."""
        if self.regions:
            own = {"FLASH": (self.flash_origin, self.flash_bytes), "RAM": (self.ram_origin, self.ram_bytes)}
            return tuple(replace(r, origin=own[r.memory][0], size=own[r.memory][1]) if r.memory in own else r
                         for r in self.regions)
        return (Region("flash", self.flash_origin, self.flash_bytes, 1, ("code", "weights"), 0, "FLASH"),
                Region("ram", self.ram_origin, self.ram_bytes, 1, ("arena",), 0, "RAM"))

    @property
    def code_in_ram(self) -> int:
        """Bytes of RAM kept back for code and static data when the board runs its code from RAM (the RAM
        region holds "code": its reserve), so the arena and stack have ram_bytes less this."""
        ram = next((r for r in self.regions if r.memory == "RAM"), None)
        return ram.reserve if ram is not None and "code" in ram.holds else 0

    def with_code(self, code_bytes: int) -> "Target":
        """The board as one model's build on it is planned when it runs its code from RAM (code_in_ram): the
        RAM region keeps back code_bytes (> 0: that build's code, constants and static data, measured by a
        trial link: steps.code.measured_code) in place of the board's reserve. Any other board: itself."""
        if not self.code_in_ram:
            return self
        return replace(self, regions=tuple(replace(r, reserve=max(1, code_bytes))
                                           if r.memory == "RAM" and "code" in r.holds else r for r in self.regions))

    @property
    def data_ram_bytes(self) -> int:
        """RAM for the arena and the stack: ram_bytes less code_in_ram (0: the board declares no RAM)."""
        return self.ram_bytes - self.code_in_ram if self.ram_bytes else 0

    def external_regions(self) -> tuple:
        """Regions beyond the board's flash and RAM that may hold weights (their own linker sections)."""
        return tuple(r for r in self.regions if "weights" in r.holds and r.memory not in ("FLASH", "RAM"))

    def extra_memories(self) -> tuple:
        """Regions beyond the board's flash and RAM that may hold weights or arena buffers (a MEMORY line
        each)."""
        return tuple(r for r in self.regions
                     if {"weights", "arena"} & set(r.holds) and r.memory not in ("FLASH", "RAM"))

    def linker_script(self) -> str:
        """The board's linker script text ("" for native builds)."""
        if not self.linker_template:
            return ""
        text = _with_regions((FIRMWARE / self.linker_template).read_text(), self.extra_memories())
        for key, val in (("FLASH", self.flash_origin), ("FLASHLEN", self.flash_bytes), ("RAM", self.ram_origin),
                         ("RAMLEN", self.ram_bytes), ("STACK", self.stack_bytes)):
            text = text.replace(f"@{key}@", f"0x{val:x}")
        return text

    def firmware_sources(self) -> list:
        """Start-up and harness sources (paths under firmware_src/)."""
        return self.port.firmware_sources(self)

    def missing_tools(self) -> list:
        return [t for t in (self.cc,) + tuple(self.tools) if shutil.which(t) is None]

    def binutil(self, tool: str) -> str:
        return f"{self.tool_prefix}{tool}"


def _with_regions(text: str, extra: tuple) -> str:
    """Fill a linker template's @EXT_MEMORY@, @EXT_PHDRS@ and @EXT_SECTIONS@ lines: one MEMORY line
    per extra region; one load segment and one weights section (.bt_weights_<name>) per region that
    may hold weights; one NOLOAD arena section (.bt_arena_<name>, arena buffers placed there by
    arena/regional.py; ld drops it when empty) per region that may hold arena buffers. With none,
    the lines go and the rest of the template is as it was."""
    weights = [r for r in extra if "weights" in r.holds]
    mem = "".join(f"  {r.memory} (r{'w' if 'weights' not in r.holds else ''}) : ORIGIN = 0x{r.origin:x}, "
                  f"LENGTH = 0x{r.size:x}\n" for r in extra)
    phdrs = "".join(f"  {r.name} PT_LOAD;\n" for r in weights)
    secs = "".join(f"  .bt_weights_{r.name} : {{ . = ALIGN(64); KEEP(*(.bt_weights_{r.name})) }} "
                   f"> {r.memory} :{r.name}\n" for r in weights)
    secs += "".join(f"  .bt_arena_{r.name} (NOLOAD) : {{ *(.bt_arena_{r.name}) }} > {r.memory} :NONE\n"
                    for r in extra if "arena" in r.holds)
    return text.replace("@EXT_MEMORY@\n", mem).replace("@EXT_PHDRS@\n", phdrs).replace("@EXT_SECTIONS@\n", secs)


def _load_plugin(obj) -> list:
    items = obj() if callable(obj) else obj
    items = [items] if isinstance(items, Target) else list(items)
    for t in items:
        if not isinstance(t, Target):
            raise UsageError(f"board plugin returned {type(t).__name__}, not buildtool.targets.Target")
    return items


_CACHE: dict = {}


def _entry_point_boards() -> tuple:
    """(boards, problems) from the entry points of other distributions (buildtool's own name the
    built-ins, already loaded; a stale install names their old modules). A plugin that fails to
    load is a problem, not an error."""
    found, problems = [], []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if getattr(getattr(ep, "dist", None), "name", None) == "buildtool":
            continue
        try:
            found += _load_plugin(ep.load())
        except Exception as e:  # noqa: BLE001 - another distribution's broken plugin must not stop ours
            problems.append(f"{ep.name} = {ep.value} ({type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]})")
    return found, problems


def boards() -> dict:
    """name -> Target for every board: the built-ins, then entry points' boards of other names.

    A stale or broken entry point is skipped with one warning line on stderr."""
    if _CACHE:
        return dict(_CACHE)
    found = {}
    for mod in BUILTIN_PLUGINS:
        for t in _load_plugin(importlib.import_module(mod).targets):
            found.setdefault(t.name, t)
    extra, problems = _entry_point_boards()
    for t in extra:
        found.setdefault(t.name, t)
    if problems:
        print(f"buildtool: warning: skipped board plugins that fail to load: {'; '.join(problems)}", file=sys.stderr)
    _CACHE.update(found)
    return dict(found)


def names() -> list:
    return sorted(boards())


def get(name: str) -> Target:
    """The board called name; NAME:value[,value] is that board with those option values (e.g.
    netduinoplus2:semihosting, its console on semihosting: Target.with_options)."""
    b = boards()
    base, colon, opts = name.partition(":")
    if base not in b:
        raise UsageError(f"unknown board '{base}'{did_you_mean(base, b)} (known: {', '.join(sorted(b))})")
    return b[base].with_options(opts) if colon else b[base]


__all__ = ["Target", "Region", "Platform", "QEMU_SEMIHOSTING", "boards", "names", "get", "GROUP"]
