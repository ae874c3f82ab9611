"""The toolchain side of a firmware build: flags, the cached kernel library, compile and link,
and whether the image fits the board (RAM, flash, load segments)."""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import re
import shlex
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from .. import targets
from ..codegen.c_text import c_string
from ..errors import BuildtoolError
from ..fsutil import write_atomic, write_error, write_if_changed
from ..plan.flash import ext_defines, split_defines
from ..units import exact
from . import build_cache

if TYPE_CHECKING:  # numpy-free at import: the SCons tool reads flags and sources at configure time
    from ..model.ir import Graph

PACKAGE = Path(__file__).resolve().parents[1]  # the C sources ship inside the package (pyproject package-data)
ROOT = PACKAGE  # compat name: the folder holding kernels/, firmware_src/ and tools/
FIRMWARE = PACKAGE / "firmware_src"
KERNELS = PACKAGE / "kernels"
SCONS_DIR = PACKAGE / "scons"  # toolpath=[SCONS_DIR] loads the btfirmware SCons tool


class FirmwareError(BuildtoolError):
    """The toolchain, the emulator or the firmware itself failed."""


def kernel_sources(t: targets.Target, kernel_root=KERNELS) -> list:
    """One file per reference kernel name: the board's optimised file when it exists; a set's NAME.c split by
    path (issue 50 item 3) is followed by the set's NAME_PART.c files that name no reference kernel, sorted (each
    compiles on its own; library.model_sources picks those a model calls)."""
    kernel_root = Path(kernel_root)
    ref = kernel_root / "reference"
    if not ref.is_dir():
        raise FirmwareError(f"kernel library not found at {ref}")
    out, names = [], {f.stem for f in ref.glob("*.c")}
    for f in sorted(ref.glob("*.c")):
        for kset in t.kernel_search():
            cand = kernel_root / kset / f.name
            if cand.exists():
                out.append(cand)
                if kset != "reference":
                    out += kernel_parts(cand, names)
                break
    return out


def kernel_parts(own: Path, ref_names) -> list:
    """The NAME_PART.c files beside a set's own NAME.c (own) that name no reference kernel (ref_names: the reference
    set's stems; reference/conv_s16.c is no part of conv), sorted: a kernel the set splits into files by path."""
    return sorted(c for c in Path(own).parent.glob(f"{Path(own).stem}_*.c") if c.stem not in ref_names)


def include_dirs(t: targets.Target, gen_dir, kernel_root=KERNELS) -> list:
    """Generated code, harness and kernel headers; gen_dir None: the kernels' own (library build)."""
    kernel_root = Path(kernel_root)
    dirs = ([Path(gen_dir), FIRMWARE / "common"] if gen_dir is not None else []) + [kernel_root / "include"]
    dirs += [kernel_root / k for k in t.kernel_search() if (kernel_root / k).is_dir()]
    return dirs


def compile_flags(t: targets.Target, gen_dir, kernel_root=KERNELS) -> list:
    """Compiler flags shared by every source of a board build."""
    return (list(t.cflags) + ["-Wall"] + [f"-D{d}" for d in t.defines]
            + [f"-I{d}" for d in include_dirs(t, gen_dir, kernel_root)])


HARNESS_MAIN = FIRMWARE / "common" / "main.c"  # the built-in harness (a user's app brings its own main.c)
WEIGHTS_S = FIRMWARE / "common" / "weights.S"  # .incbin of weights.bin (its path: weights_define)


def source_parts(t: targets.Target, kernel_root=KERNELS, kernels: list | None = None) -> dict:
    """The firmware's fixed sources by role: "startup" (the board's start-up and I/O code), "main"
    (the harness), "kernels" (kernels: a model's, library.model_sources; None: all) and "weights"
    (weights.S); model.c is generated apart."""
    fw = [FIRMWARE / s for s in t.firmware_sources()]
    return {"startup": [s for s in fw if s != HARNESS_MAIN], "main": HARNESS_MAIN,
            "kernels": kernel_sources(t, kernel_root) if kernels is None else list(kernels), "weights": WEIGHTS_S}


def sources(t: targets.Target, gen_dir, kernel_root=KERNELS, kernels: list | None = None) -> list:
    """Every C/assembler source of the firmware, in a fixed order (kernels: as source_parts')."""
    return ([FIRMWARE / s for s in t.firmware_sources()] + source_parts(t, kernel_root, kernels)["kernels"]
            + [Path(gen_dir) / "model.c", WEIGHTS_S])


def weights_define(weights_path) -> str:
    """The -D flag naming weights.bin for firmware_src/common/weights.S (any path: quotes, backslashes)."""
    return f"-DBT_WEIGHTS_FILE={c_string(Path(weights_path).as_posix())}"


def weights_split_defines(t: targets.Target, weights_path) -> list:
    """The -D flags that split weights.bin at its external part (none when the image has none)."""
    with open(weights_path, "rb") as f:
        return split_defines(t, f.read(64))


def link_flags(t: targets.Target, ld_script) -> list:
    return ([f"-T{ld_script}"] if ld_script else []) + list(t.ldflags)


_CPU_FLAGS = ("-mcpu", "-mthumb", "-mfloat-abi", "-mfpu", "-march", "-mabi", "-mtune")


def cpu_flags(t: targets.Target) -> list:
    """The board's flags that name its CPU and float ABI: what every object linked with the model
    needs (a project's own sources in CMake LIBRARY mode, an export's README and model.mk)."""
    return [f for f in t.cflags if f.split("=")[0] in _CPU_FLAGS]


def check_tools(t: targets.Target) -> None:
    missing = t.missing_tools()
    if missing:
        raise FirmwareError(f"board {t.name} needs {', '.join(missing)} on PATH; install the toolchain "
                            f"(see docs/firmware.md)")
    problems = t.port.problems(t)
    if problems:
        raise FirmwareError(f"board {t.name}: {'; '.join(problems)}")


C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
C_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# what c_text and include_closure read, kept while the files are unchanged (their stat: mtime, size, inode): every
# build's kernel choice (library.needed_files) and object keys (kernel_library) read the same few hundred files, once
# a process now (test_kernel_sources' every-operator check, 12 operators on 5 boards: 15.5 -> 8.3 s). A file modified
# in the last RACY_NS is read again every time (its stat None: git's "racily clean" rule; a file's mtime has the
# clock's tick, not its nanoseconds, so two writes within a tick keep one mtime)
_TEXTS: dict = {}  # path -> (stat, text without comments)
_CLOSURES: dict = {}  # (path, include folders) -> (the closure, each file's stat)
RACY_NS = 2_000_000_000


def _stat(path: Path) -> tuple | None:
    """path's (mtime, size, inode), None while it may still change within its mtime (RACY_NS)."""
    st = path.stat()
    return None if time.time_ns() - st.st_mtime_ns < RACY_NS else (st.st_mtime_ns, st.st_size, st.st_ino)


def _unchanged(stats: dict) -> bool:
    """Are the files of {path: stat} (kept's) all as they were?"""
    try:
        return all(sig is not None and _stat(f) == sig for f, sig in stats.items())
    except OSError:
        return False


# the stat of each file c_text read for the compute of kept() running in this thread: .log {path: stat}. Not _TEXTS's
# stat after the compute: under threads (SCons' -j, the daemon's requests) another thread may have read the file
# again meanwhile, edited, and a value made from the old text would be kept at the new stat
_reads = threading.local()


def kept(cache: dict, key, compute):
    """compute()'s value, kept in cache[key] while the files it read are unchanged: compute returns (value, the files
    it read through c_text), each kept at the stat c_text read it at in this compute (include_closure,
    library.needed_files'); a file it names but did not read (in a kept() of its own, say) is never taken as
    unchanged."""
    hit = cache.get(key)
    if hit is not None and _unchanged(hit[1]):
        return hit[0]
    outer = getattr(_reads, "log", None)
    _reads.log = log = {}
    try:
        value, files = compute()
    finally:
        _reads.log = outer
    cache[key] = (value, {f: log.get(Path(f)) for f in files})
    return value


def c_text(path: Path) -> str:
    """A C file's text without its comments."""
    path = Path(path)
    sig = _stat(path)
    log = getattr(_reads, "log", None)
    if log is not None:
        log.setdefault(path, sig)  # (the first read's: a file edited between two reads is found changed)
    hit = _TEXTS.get(path)
    if hit is not None and hit[0] is not None and hit[0] == sig:
        return hit[1]
    text = C_COMMENT.sub(" ", path.read_text(encoding="utf-8"))
    _TEXTS[path] = (sig, text)  # (stat before the read: a file changed since is read again)
    return text


def resolve(name: str, including: Path, dirs: list) -> Path | None:
    """Where `#include "name"` in file `including` leads: its own folder first, then the include
    folders in order (the compiler's search for quoted includes); None when in none of them."""
    for d in [including.parent] + list(dirs):
        cand = Path(d) / name
        if cand.is_file():
            return cand.resolve()
    return None


def include_closure(path: Path, dirs: list) -> list:
    """path and every file it includes (quoted, found in its folder or dirs), transitively; sorted. Kept while every
    file of it is unchanged (a header added to an earlier include folder later is not seen: none is, in a kernel
    tree)."""
    def walk() -> tuple:
        seen, todo = set(), [Path(path).resolve()]
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            todo += [r for r in (resolve(n, f, dirs) for n in C_INCLUDE.findall(c_text(f))) if r is not None]
        return tuple(sorted(seen)), seen

    return list(kept(_CLOSURES, (str(path), tuple(str(d) for d in dirs)), walk))


def _cache_root() -> Path:
    return build_cache.root() / "kernels"


def kernel_library(t: targets.Target, kernel_root=KERNELS, srcs: list | None = None) -> Path:
    """The board's kernels (srcs: those of them a model compiles, library.model_sources; None: all)
    archived into a static library, cached by content.

    Each source is compiled once per compiler and flags (cached_object: keyed by the compiler, the flags
    and the text of the source and of every file it includes), so a model calling another set of kernel
    files, or a board with the same flags, compiles only the objects no build made before; the archive
    is keyed by its objects. The link then only adds what the model calls, so a library of more sources
    links the same image.
    """
    kernel_root = Path(kernel_root)
    srcs = kernel_sources(t, kernel_root) if srcs is None else list(srcs)
    flags = compile_flags(t, None, kernel_root)
    dirs = include_dirs(t, None, kernel_root)
    key = repr((t.cc, flags))

    def compiled(src: Path) -> Path:
        return cached_object(key, [(str(f), f) for f in include_closure(src, dirs)], [t.cc] + flags + ["-c", str(src)],
                             Path(src).stem, f"compiling kernel {src} for {t.name}")

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        objs = list(pool.map(compiled, srcs))
    h = hashlib.sha256(repr((t.binutil("ar"), [o.name for o in objs])).encode())
    lib = _cache_root() / f"{t.name}-{h.hexdigest()[:16]}" / "libbt_kernels.a"
    if lib.exists():
        build_cache.used(lib.parent)
        return lib
    try:
        lib.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(lib.parent, e, "create the kernel cache directory") from None
    with tempfile.TemporaryDirectory(prefix="bt-kernels-") as tmp:  # the system's: a killed build leaves none here
        r = subprocess.run([t.binutil("ar"), "rcs", str(Path(tmp) / "lib.a")] + [str(o) for o in objs],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise FirmwareError(f"archiving the kernels for {t.name} failed: {r.stderr.strip()[:200]}")
        write_atomic(lib, (Path(tmp) / "lib.a").read_bytes())
    build_cache.added()
    return lib


def cached_object(key: str, files: list, cmd: list, prefix: str, what: str) -> Path:
    """The object the compile command cmd (without its -o) makes, cached by content in the object cache
    (objects/prefix-HASH.o): key (the compiler and flags as a string) and files ([(name, path)]: the source
    and every file it includes, under the names that identify them) make the hash, so a cached object is
    reused only for the same compile. A failed compile is one line naming what was compiled (what)."""
    h = hashlib.sha256(key.encode())
    for name, f in files:
        h.update(name.encode() + b"\0" + Path(f).read_bytes())
    cache = _cache_root().parent / "objects"
    obj = cache / f"{prefix}-{h.hexdigest()[:24]}.o"
    if obj.exists():
        build_cache.used(obj)
        return obj
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(cache, e, "create the object cache") from None
    compiled_into(obj, cmd, what)
    build_cache.added()
    return obj


def _link_command(t: targets.Target, out: Path, weights, defines: list, ld, elf: Path, kernels: list) -> list:
    """The link command of the firmware in out (model.o: model_object) with the board's start-up code and
    the cached library of `kernels`, weights.S assembled from `weights` with `defines` (its split), into elf."""
    own = [s for s in sources(t, out) if s.parent.parent != KERNELS and s.name != "model.c"]
    return ([t.cc] + compile_flags(t, out) + [weights_define(weights)] + list(defines) + [str(s) for s in own]
            + [str(model_object(t, out))] + [str(kernel_library(t, KERNELS, kernels))] + link_flags(t, ld)
            + ["-o", str(elf)])


def model_object(t: targets.Target, out: Path) -> Path:
    """out/model.c compiled once (cached by content: its text, model.h's, the flags and the kernel
    headers), so the code step's trial links (code_bytes) and the link compile the same model.c once.
    Compiled in its cache folder (a copy of model.c and model.h), so the object does not depend on
    which folder asked for it."""
    out = Path(out)
    flags = compile_flags(t, None)
    h = hashlib.sha256(repr((t.cc, flags)).encode())
    for f in [out / "model.c", out / "model.h"] + sorted(p for d in include_dirs(t, None) + [FIRMWARE / "common"]
                                                         for p in Path(d).glob("*.h")):
        h.update(str(f.name if f.parent == out else f).encode() + b"\0" + f.read_bytes())
    d = _cache_root().parent / "models" / f"{t.name}-{h.hexdigest()[:20]}"
    obj = d / "model.o"
    if obj.exists():
        build_cache.used(d)
        return obj
    try:
        d.mkdir(parents=True, exist_ok=True)
        for name in ("model.c", "model.h"):
            write_if_changed(d / name, (out / name).read_text())
    except OSError as e:
        raise write_error(d, e, "create the model object cache") from None
    compiled_into(obj, [t.cc] + compile_flags(t, d) + ["-c", str(d / "model.c")],
                  f"compiling {out / 'model.c'} for {t.name}")
    build_cache.added()
    return obj


def compiled_into(obj: Path, cmd: list, what: str) -> Path:
    """obj made by the compile command cmd (without its -o) under a temporary name renamed into place, so a
    cached object is whole or absent; a failed compile is one line (tool_failed: what)."""
    tmp = obj.with_name(f"{obj.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    cmd = cmd + ["-o", str(tmp)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise tool_failed(what, r, cmd)
    os.replace(tmp, obj)
    return obj


def link(t: targets.Target, out_dir, paths: dict, g: Graph, plan, kernels: list | None = None) -> dict:
    """Compile the generated sources in out_dir (paths: generate_sources') with the board's
    start-up code and the library of `kernels` (library.model_sources; None: all) and link
    out_dir/firmware.elf atomically (a failed link or a misplaced load segment leaves no image);
    return paths with "elf" (and "ld") added."""
    out = Path(out_dir)
    elf = out / "firmware.elf"
    ld = None
    if t.linker_template:
        ld = out / "board.ld"
        write_if_changed(ld, t.linker_script())
    tmp = Path(str(elf) + ".tmp")
    cmd = _link_command(t, out, paths["weights"], weights_split_defines(t, paths["weights"]), ld, tmp, kernels)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise _link_error(g, plan, t, elf, r, cmd)
    install_elf(t, tmp, elf)
    paths = dict(paths, elf=elf, **images(t, elf))
    if ld:
        paths["ld"] = ld
    return paths


def trial_elf(t: targets.Target, model_c: str, model_h: str, out: Path, kernels: list | None = None) -> Path:
    """out/size.elf: model.c linked with the board's start-up code and kernel library (kernels: the kernel
    sources to link, None: all; the image is the same, the archive gives only what model.c calls), the
    flash and RAM made large enough for anything, the weights image empty: the firmware's code, constants
    and static data as the build links them (code_bytes; `buildtool fit` reads the build's RAM/flash
    line's figures from it, runner.memory_figures)."""
    big = dataclasses.replace(t, flash_bytes=t.flash_bytes + (64 << 20), ram_bytes=t.ram_bytes + (64 << 20))
    out = Path(out)
    (out / "model.c").write_text(model_c)
    (out / "model.h").write_text(model_h)
    (out / "weights.bin").write_bytes(b"")
    (out / "board.ld").write_text(big.linker_script())
    ext = t.external_regions()[:1]  # an empty external part: bt_weights_ext, when model.c reads it
    cmd = _link_command(t, out, out / "weights.bin", ext_defines(ext[0], 0) if ext else [],
                        out / "board.ld" if t.linker_template else None, out / "size.elf", kernels)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise tool_failed(f"measuring the code of {t.name} firmware", r, cmd)
    return out / "size.elf"


@dataclasses.dataclass(frozen=True)
class Code:
    """A build's code as a trial link of its model.c measured it (`buildtool fit`): code (code, constants,
    .data's initial values: toolchain.CODE_SECTIONS, the build's RAM/flash line's "code"), static (.data
    and .bss besides the arena: the line's "static") and placed (the code step's flash_code_bytes, which
    the weights were placed around; None: the board's reserve stood for the code, as in the build)."""

    code: int
    static: int
    placed: int | None = None

    @property
    def ram(self) -> int:
        """What a board running its code from RAM keeps back of it for this build: code, constants, static data."""
        return self.code + self.static


def code_bytes(t: targets.Target, model_c: str, model_h: str, kernels: list | None = None) -> int:
    """The flash bytes everything but the weights takes in the region holding the code (code, constants,
    .ARM.exidx, the initial values of .data, the alignment before the weights), measured by a trial link
    (trial_elf). steps/code.py places the weights with it (regions.place)."""
    with tempfile.TemporaryDirectory(prefix="bt-code-size-") as tmp:
        return elf_code_bytes(t, trial_elf(t, model_c, model_h, Path(tmp), kernels))


def elf_code_bytes(t: targets.Target, elf: Path) -> int:
    """code_bytes of a trial link's ELF (trial_elf)."""
    big_flash = t.flash_bytes + (64 << 20)
    r = subprocess.run([t.binutil("readelf"), "-SW", str(elf)], capture_output=True, text=True)
    end, data = t.flash_origin, 0
    for line in r.stdout.splitlines():  # [Nr] Name Type Addr Off Size ES Flg ...: allocated sections only
        f = line.replace("[ ", "[").split()
        if len(f) < 8 or not f[0].startswith("[") or f[2] not in ("PROGBITS", "ARM_EXIDX") or "A" not in f[7]:
            continue
        addr, size = int(f[3], 16), int(f[5], 16)
        if f[1] == ".data":  # its initial values follow the weights in flash
            data = size
        elif size and not f[1].startswith(".bt_weights") and t.flash_origin <= addr < t.flash_origin + big_flash:
            end = max(end, addr + size)
    return -(-(end - t.flash_origin) // 64) * 64 + -(-data // 4) * 4 + 4


# The sections the build's RAM/flash line counts as code (runner.memory_figures; an export's
# MODEL_CODE_BYTES): code, constants and the initial values of .data, all in flash.
CODE_SECTIONS = (".text", ".rodata", ".data", ".init", ".fini", ".init_array", ".fini_array", ".data.rel.ro",
                 ".ARM.exidx", ".srodata", ".sdata")


def section_bytes(t: targets.Target, elf, names: tuple) -> int:
    """The bytes of the named sections of elf (`size -A`)."""
    r = subprocess.run([t.binutil("size"), "-A", str(elf)], capture_output=True, text=True)
    if r.returncode != 0:
        raise tool_failed(f"reading the section sizes of {elf}", r, [t.binutil("size"), "-A", str(elf)])
    total = 0
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in names:
            total += int(parts[1])
    return total


LIBRARY_ROOTS = ("model_init", "model_invoke", "model_input", "model_output", "model_input_bytes",
                 "model_output_bytes")  # an export's API: what its code is kept for


def library_link_flags(t: targets.Target) -> list:
    """How library_code_bytes links an export's objects alone: the board's CPU flags, no start-up code
    or C library, --gc-sections kept to the API (LIBRARY_ROOTS; model_invoke the entry), libgcc's helpers
    linked, the symbols the application provides (memcpy, memset, bt_weights) left unresolved."""
    native = ["-static"] if t.port.native else []
    return (cpu_flags(t) + native + ["-nostdlib", "-nostartfiles", "-Wl,--gc-sections",
                                     "-Wl,--unresolved-symbols=ignore-all", "-Wl,-e,model_invoke"]
            + [f"-Wl,-u,{s}" for s in LIBRARY_ROOTS])


def library_code_bytes(t: targets.Target, folder, sources: list, includes: list) -> int:
    """An export's code (MODEL_CODE_BYTES): its sources (relative to folder; the weights array left out)
    compiled with the board's flags (compile_flags: its -O level, -ffunction-sections -fdata-sections),
    linked alone (library_link_flags) and counted as the build's RAM/flash line counts code
    (CODE_SECTIONS: code, constants, .data's initial values). Each object is cached by content (the
    compiler, the flags, the source and every file it includes, named relative to folder), so an export
    compiles only what an earlier one did not (its kernels, for one board, once)."""
    folder = Path(folder).resolve()
    dirs = [folder / d for d in includes]
    flags = list(t.cflags) + [f"-D{d}" for d in t.defines] + [f"-I{d}" for d in dirs]

    key = repr((t.cc, list(t.cflags), list(t.defines), includes))

    def compiled(src: str) -> Path:
        files = [(str(f.relative_to(folder) if f.is_relative_to(folder) else f), f)
                 for f in include_closure(folder / src, dirs)]
        return cached_object(key, files, [t.cc] + flags + ["-c", str(folder / src)], t.name,
                             f"compiling {src} of the export for {t.name}")

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        objs = [str(o) for o in pool.map(compiled, sources)]
    with tempfile.TemporaryDirectory(prefix="bt-lib-size-") as tmp:
        cmd = [t.cc] + library_link_flags(t) + objs + ["-lgcc", "-o", str(Path(tmp) / "lib.elf")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise tool_failed(f"linking the export's code for {t.name}", r, cmd)
        return section_bytes(t, Path(tmp) / "lib.elf", CODE_SECTIONS)


def images(t: targets.Target, elf: Path) -> dict:
    """The board's flashable outputs beside the ELF (objcopy): firmware.bin, the raw bytes of its
    internal flash from the first loaded address, and firmware.hex (Intel HEX, every loaded byte at its
    address, external regions included; where FLASH is linked at an alias, at the flash's own address,
    Target.flash_load); a weights part placed in an external region gets its own
    firmware.<region>.bin. {"bin": path, ...} for those made."""
    out = {}
    ext = [f".bt_weights_{r.name}" for r in t.external_regions()]
    for kind in t.images:
        if kind == "bin":
            jobs = [("bin", elf.with_suffix(".bin"), ["-O", "binary"] + [f"--remove-section={s}" for s in ext])]
            jobs += [(f"bin_{s[12:]}", elf.with_name(f"firmware.{s[12:]}.bin"), ["-O", "binary", "-j", s])
                     for s in ext if section_bytes(t, elf, (s,)) > 0]
        elif kind == "hex":
            moved = (t.flash_load - t.flash_origin) if t.flash_load is not None else 0  # FLASH linked at an alias
            jobs = [("hex", elf.with_suffix(".hex"), ["-O", "ihex"] + ([f"--change-addresses={moved:#x}"] if moved
                                                                         else []))]
        else:
            raise FirmwareError(f"board {t.name}: unknown image kind '{kind}' (bin, hex)")
        for key, path, flags in jobs:
            tmp = Path(str(path) + ".tmp")
            r = subprocess.run([t.binutil("objcopy")] + flags + [str(elf), str(tmp)], capture_output=True, text=True)
            if r.returncode != 0:
                raise FirmwareError(f"objcopy failed on {elf}: {r.stderr.strip()[:200]}")
            os.replace(tmp, path)
            out[key] = path
    return out


def install_elf(t: targets.Target, tmp: Path, elf: Path) -> None:
    """Move a freshly linked ELF into place once its load segments lie where the board has memory
    (check_segments); one that does not is removed, so no build is left that a loader would misplace."""
    try:
        if t.linker_template:
            check_segments(t, tmp)
    except FirmwareError:
        tmp.unlink()
        raise
    os.replace(tmp, elf)


def _link_error(g: Graph, plan, t: targets.Target, elf: Path, r, cmd: list) -> BuildtoolError:
    """The one-line error for a failed compile or link: a region overflow as check_fits says it,
    a full or read-only disk as a write error, else the compiler's last line."""
    err = r.stderr.strip().splitlines()
    overflow = [m for m in map(OVERFLOW.search, err) if m]
    if overflow:
        return FirmwareError(overflow_message(g, plan, t, overflow[0].group(1), int(overflow[0].group(2))))
    for code in _WRITE_ERRNOS:  # the linker could not write the image: say so, not "ld returned 1"
        if any(os.strerror(code) in line for line in err):
            return write_error(elf, OSError(code, os.strerror(code)))
    return tool_failed(f"compiling for {t.name}", r, cmd)


def tool_failed(what: str, r, cmd: list) -> FirmwareError:
    """The one line of a compile or link that failed: the compiler's or linker's own words (ld: "undefined
    reference to `memcpy'"), not collect2's summary, and the command quoted so it can be pasted."""
    err = r.stderr.strip().splitlines()
    said = [line.strip() for line in err if line.strip() and not line.startswith("collect2:")]
    own = next((line for line in said if any(k in line for k in _OWN_WORDS)), said[-1] if said else None)
    e = FirmwareError(f"{what} failed: {own or (err[-1] if err else r.returncode)} (command: {shlex.join(str(c) for c in cmd)})")
    e.about_model = True  # the CLI starts the line with the model path as typed
    return e


_OWN_WORDS = ("undefined reference", "multiple definition", "cannot find", "error:", "will not fit", "overflowed")


# -- does it fit the board ------------------------------------------------------------------
OVERFLOW = re.compile(r"region [`'\"]?(\w+)[`'\"]? overflowed by (\d+) bytes")
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES)


def ram_size(t: targets.Target) -> str:
    """The board's RAM for people: bytes, KiB, and what code kept back when it runs from RAM."""
    kib = f" ({t.ram_bytes // 1024} KiB" if t.ram_bytes % 1024 == 0 else ""
    code = f"{'; ' if kib else ' ('}{exact(t.code_in_ram)} of it kept for code and constants" if t.code_in_ram else ""
    return f"{exact(t.ram_bytes)} of RAM" + kib + code + (")" if kib or code else "")


def overflow_message(g: Graph, plan, t: targets.Target, region: str, over: int) -> str:
    """The linker's 'region X overflowed by N bytes' as the same one line as check_fits'."""
    if region.upper() == "RAM":
        return (f"{g.name} does not fit board {t.name}: it needs {exact(t.ram_bytes + over)} of RAM (arena "
                f"{exact(plan.arena_bytes)} + stack {exact(t.stack_bytes)} + other static data), the board has "
                f"{ram_size(t)}")
    if region.upper() == "FLASH":
        return (f"{g.name} does not fit board {t.name}: code, weights and data need "
                f"{exact(t.flash_bytes + over)} of flash, the board has {exact(t.flash_bytes)}")
    return f"{g.name} does not fit board {t.name}: the linker's region {region} overflows by {exact(over)}"


def load_segments(t: targets.Target, elf) -> list:
    """The ELF's PT_LOAD program headers (readelf -lW) as dicts: offset, vaddr, paddr, filesz, memsz."""
    r = subprocess.run([t.binutil("readelf"), "-lW", str(elf)], capture_output=True, text=True)
    if r.returncode != 0:
        raise FirmwareError(f"readelf failed on {elf}: {r.stderr.strip()[:200]}")
    keys = ("offset", "vaddr", "paddr", "filesz", "memsz")
    return [dict(zip(keys, (int(v, 16) for v in line.split()[1:6])))
            for line in r.stdout.splitlines() if line.split()[:1] == ["LOAD"]]


def check_segments(t: targets.Target, elf) -> None:
    """What an ELF loader writes must land where the board has it: QEMU's -kernel (like a flash
    programmer) writes every PT_LOAD segment at its physical address and zero-fills MemSiz past
    FileSiz there. A segment must lie wholly in the board's flash with nothing to zero-fill
    (a zero-fill at a flash address overwrites what follows it, and past the end of flash QEMU's
    mirror of it: the vector table and code), or wholly in its RAM; no two may overlap."""
    flash_end, ram_end = t.flash_origin + t.flash_bytes, t.ram_origin + t.ram_bytes
    spans = []
    for s in load_segments(t, elf):
        lo, hi = s["paddr"], s["paddr"] + s["memsz"]
        if s["memsz"] == 0:
            continue
        in_flash = (t.flash_origin <= lo and hi <= flash_end) or any(
            r.origin <= lo and hi <= r.end for r in t.external_regions())
        if not ((in_flash and s["filesz"] == s["memsz"]) or (t.ram_origin <= lo and hi <= ram_end)):
            what = (f"zero-fills {exact(s['memsz'] - s['filesz'])} in flash" if in_flash else
                    f"spans 0x{lo:x}..0x{hi:x}, outside flash 0x{t.flash_origin:x}..0x{flash_end:x} "
                    f"and RAM 0x{t.ram_origin:x}..0x{ram_end:x}")
            raise FirmwareError(f"firmware for board {t.name}: the load segment at physical address 0x{lo:x} "
                                f"({exact(s['memsz'])}) {what}; the board's linker script must keep .bss and the stack "
                                f"NOLOAD and out of every PT_LOAD segment (see buildtool/firmware_src/arm/cortexm.ld.in)")
        spans.append((lo, hi))
    spans.sort()
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        if b0 < a1:
            raise FirmwareError(f"firmware for board {t.name}: load segments 0x{a0:x}..0x{a1:x} and "
                                f"0x{b0:x}..0x{b1:x} overlap; fix the board's linker script")



__all__ = ["FirmwareError", "code_bytes", "trial_elf", "CODE_SECTIONS", "section_bytes", "library_code_bytes",
           "library_link_flags", "LIBRARY_ROOTS", "kernel_sources", "include_dirs", "compile_flags", "sources",
           "weights_define", "link_flags", "cpu_flags", "kernel_library", "model_object", "link", "images",
           "load_segments",
           "check_segments", "KERNELS", "FIRMWARE", "PACKAGE"]
