"""Boards: what a firmware build needs to know about a target, and the registry.

A board is a `Target`. Boards come from entry points of group
"buildtool.targets": each entry point names a callable returning Targets, so
a third-party package adds a board by declaring such an entry point. The
built-in boards live in plugins/ (host, cortex_m, riscv, xcore); they are also
loaded directly when their entry points are not installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from pathlib import Path

from ..errors import UsageError

GROUP = "buildtool.targets"
BUILTIN_PLUGINS = ("plugins.host", "plugins.cortex_m", "plugins.riscv", "plugins.xcore")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Target:
    """One board.

    platform selects the start-up code under firmware/ ("host", "arm", "riscv").
    kernel_sets is the search order of kernels/<set>/ directories for each kernel
    file; "reference" is always searched last. run is the emulator command before
    the ELF path (empty: run the executable natively).
    """

    name: str
    cpu: str
    description: str
    platform: str
    cc: str
    cflags: tuple = ()
    ldflags: tuple = ()
    kernel_sets: tuple = ()
    ram_origin: int = 0
    ram_bytes: int = 0
    flash_origin: int = 0
    flash_bytes: int = 0
    stack_bytes: int = 8192
    linker_template: str = ""  # path under firmware/, "" = the toolchain's default
    run: tuple = ()
    weights_align: int = 16
    tool_prefix: str = ""  # binutils prefix, e.g. "arm-none-eabi-"
    extra_sources: tuple = ()  # more files under firmware/ for this board
    defines: tuple = ()
    tools: tuple = field(default=())  # programs that must be on PATH to build and run

    @property
    def emulated(self) -> bool:
        return bool(self.run)

    def kernel_search(self) -> tuple:
        return tuple(s for s in self.kernel_sets if s != "reference") + ("reference",)

    def with_kernels(self, sets: tuple) -> "Target":
        """The same board using another kernel search order (e.g. reference only)."""
        return replace(self, kernel_sets=tuple(sets))

    def linker_script(self) -> str:
        """The board's linker script text ("" for native builds)."""
        if not self.linker_template:
            return ""
        text = (ROOT / "firmware" / self.linker_template).read_text()
        for key, val in (("FLASH", self.flash_origin), ("FLASHLEN", self.flash_bytes), ("RAM", self.ram_origin),
                         ("RAMLEN", self.ram_bytes), ("STACK", self.stack_bytes)):
            text = text.replace(f"@{key}@", f"0x{val:x}")
        return text

    def firmware_sources(self) -> list:
        """Start-up and harness sources (paths under firmware/)."""
        common = ["common/main.c"]
        per = {"host": ["host/platform.c"],
               "arm": ["arm/startup.c", "common/semihost_io.c", "common/markers.c"],
               "riscv": ["riscv/start.S", "riscv/sys.c", "common/semihost_io.c", "common/markers.c"]}
        if self.platform not in per:
            raise UsageError(f"board {self.name}: unknown platform '{self.platform}' (host, arm, riscv)")
        return common + per[self.platform] + list(self.extra_sources)

    def missing_tools(self) -> list:
        return [t for t in (self.cc,) + tuple(self.tools) if shutil.which(t) is None]

    def binutil(self, tool: str) -> str:
        return f"{self.tool_prefix}{tool}"


def _load_plugin(obj) -> list:
    items = obj() if callable(obj) else obj
    items = [items] if isinstance(items, Target) else list(items)
    for t in items:
        if not isinstance(t, Target):
            raise UsageError(f"board plugin returned {type(t).__name__}, not buildtool.targets.Target")
    return items


def _import_builtin(mod: str):
    """Import a built-in plugin; from the source tree when the installed package predates it."""
    try:
        return importlib.import_module(mod)
    except ModuleNotFoundError:
        path = ROOT.joinpath(*mod.split(".")) / "__init__.py"
        spec = importlib.util.spec_from_file_location(mod, path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        return m


_CACHE: dict = {}


def boards() -> dict:
    """name -> Target for every registered board (entry points, then built-ins)."""
    if _CACHE:
        return dict(_CACHE)
    found, seen_modules = {}, set()
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        seen_modules.add(ep.value.split(":")[0])
        for t in _load_plugin(ep.load()):
            found.setdefault(t.name, t)
    for mod in BUILTIN_PLUGINS:
        if mod not in seen_modules:
            for t in _load_plugin(_import_builtin(mod).targets):
                found.setdefault(t.name, t)
    _CACHE.update(found)
    return dict(found)


def names() -> list:
    return sorted(boards())


def get(name: str) -> Target:
    b = boards()
    if name not in b:
        raise UsageError(f"unknown board '{name}' (known: {', '.join(sorted(b))})")
    return b[name]


__all__ = ["Target", "boards", "names", "get", "GROUP"]
