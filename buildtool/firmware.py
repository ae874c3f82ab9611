"""Build and run firmware images from Python (used by `buildtool run --board`, tests and benchmarks).

build():    model -> plan.json, model.c, model.h, weights.bin, firmware.json, firmware.elf in out_dir.
run():      firmware.elf + an input array -> (output, per-operator profile, RAM report).

The same steps back the SCons tool (site_scons/site_tools/buildtool): generate_sources()
writes the generated files, compile_command() is the one compiler invocation per board.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from . import targets
from .errors import BuildtoolError, UsageError
from .fsutil import write_atomic, write_error
from .ir import NUMPY_DTYPE, Graph
from .options import PlanOptions

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
KERNELS = ROOT / "kernels"
PLUGIN_SRC = ROOT / "tools" / "qemu-insncount" / "insncount.c"
RUN_TIMEOUT = 120.0
EXIT_MEANING = {1: "failure", 2: "input/output error", 3: "weights image does not match the firmware",
                4: "model_invoke failed", 97: "RISC-V trap", 98: "Arm HardFault", 99: "unexpected exception",
                124: "timeout"}


class FirmwareError(BuildtoolError):
    """The toolchain, the emulator or the firmware itself failed."""


# -- model and plan (compatibility: these are buildtool.pipeline's steps) -------------------
def load_graph(model) -> Graph:
    """A Graph, a .tflite path or a zoo name."""
    from . import pipeline

    return pipeline.read_model(model).graph


def is_model_file(spec: str) -> bool:
    """A model argument names a .tflite file (else it must be a zoo name)."""
    from .pipeline import is_model_file as named_file

    return named_file(spec)


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def build_dir_name(name: str) -> str:
    """The build folder named after a model: a name of letters, digits and . _ - (e.g. mbv2-w0.35,
    tiny_cnn_32) is kept as it is; any other is mapped onto those characters plus a short hash
    of the original, so it reaches a shell or a build tool only as a plain word and two
    different names never share a folder."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:64] or "model"
    return f"{plain}-{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def make_plan(g: Graph, **plan_options):
    """pipeline.plan_memory(g, PlanOptions.from_map(plan_options))."""
    from . import pipeline

    return pipeline.plan_memory(g, pipeline.PlanOptions.from_map(plan_options))


def _write(path: Path, data) -> None:
    from .pipeline import _write as write

    write(Path(path), data)


def manifest(g: Graph, plan, board: str) -> dict:
    from . import pipeline

    return pipeline.manifest(pipeline.read_model(g), plan, board)


def generate_sources(g: Graph, plan, board: str, out_dir) -> dict:
    """pipeline.generate: plan.json, model.c, model.h, weights.bin and firmware.json into out_dir."""
    from . import pipeline

    return pipeline.generate(pipeline.read_model(g), plan, board, out_dir)


# -- compilation ------------------------------------------------------------------------
def kernel_sources(t: targets.Target, kernel_root=KERNELS) -> list:
    """One file per reference kernel name: the board's optimised file when it exists."""
    kernel_root = Path(kernel_root)
    ref = kernel_root / "reference"
    if not ref.is_dir():
        raise FirmwareError(f"kernel library not found at {ref}")
    out = []
    for f in sorted(ref.glob("*.c")):
        for kset in t.kernel_search():
            cand = kernel_root / kset / f.name
            if cand.exists():
                out.append(cand)
                break
    return out


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


def sources(t: targets.Target, gen_dir, kernel_root=KERNELS) -> list:
    """Every C/assembler source of the firmware, in a fixed order."""
    gen = Path(gen_dir)
    return ([FIRMWARE / s for s in t.firmware_sources()] + kernel_sources(t, kernel_root)
            + [gen / "model.c", FIRMWARE / "common" / "weights.S"])


def c_string(text: str) -> str:
    """text (a path) as a C string literal that the assembler's .incbin reads back byte for byte:
    \\ and \" escaped, every byte outside printable ASCII (and '?', against trigraphs) as a
    three-digit octal escape, which both the C preprocessor and the GNU assembler take."""
    out = []
    for b in os.fsencode(text):
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= b < 127 and c != "?":
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def weights_define(weights_path) -> str:
    """The -D flag naming weights.bin for firmware/common/weights.S (any path: quotes, backslashes)."""
    return f"-DBT_WEIGHTS_FILE={c_string(Path(weights_path).as_posix())}"


def link_flags(t: targets.Target, ld_script) -> list:
    return ([f"-T{ld_script}"] if ld_script else []) + list(t.ldflags)


def check_tools(t: targets.Target) -> None:
    missing = t.missing_tools()
    if missing:
        raise FirmwareError(f"board {t.name} needs {', '.join(missing)} on PATH; install the toolchain "
                            f"(see docs/firmware.md)")


def _cache_root() -> Path:
    base = os.environ.get("BUILDTOOL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "buildtool")
    return Path(base) / "kernels"


def kernel_library(t: targets.Target, kernel_root=KERNELS) -> Path:
    """The board's kernels compiled once into a static library, cached by content.

    The key covers the compiler, the flags and every kernel source and header, so any
    change gives a new library; the link then only adds what the model calls.
    """
    kernel_root = Path(kernel_root)
    srcs = kernel_sources(t, kernel_root)
    flags = compile_flags(t, None, kernel_root)
    h = hashlib.sha256(repr((t.cc, flags)).encode())
    for f in srcs + sorted(p for d in include_dirs(t, None, kernel_root) for p in d.glob("*.h")):
        h.update(str(f).encode() + b"\0" + f.read_bytes())
    lib = _cache_root() / f"{t.name}-{h.hexdigest()[:16]}" / "libbt_kernels.a"
    if lib.exists():
        return lib
    try:
        lib.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(lib.parent, e, "create the kernel cache directory") from None
    with tempfile.TemporaryDirectory(prefix="bt-kernels-") as tmp:  # the system's: a killed build leaves none here
        objs = [str(Path(tmp) / f"{f.stem}.o") for f in srcs]
        cmds = [[t.cc] + flags + ["-c", str(f), "-o", o] for f, o in zip(srcs, objs)]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            results = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), cmds))
        for f, r in zip(srcs, results):
            if r.returncode != 0:
                err = r.stderr.strip().splitlines()
                raise FirmwareError(f"compiling kernel {f} for {t.name} failed: {err[-1] if err else r.returncode}")
        r = subprocess.run([t.binutil("ar"), "rcs", str(Path(tmp) / "lib.a")] + objs, capture_output=True, text=True)
        if r.returncode != 0:
            raise FirmwareError(f"archiving the kernels for {t.name} failed: {r.stderr.strip()[:200]}")
        write_atomic(lib, (Path(tmp) / "lib.a").read_bytes())
    return lib


def build(model, board: str, out_dir, kernels: tuple | None = None, stack_bytes: int | None = None,
          plan=None, **plan_options) -> dict:
    """pipeline.build with plan options as keywords (PlanOptions' vocabulary); plan: a ready plan."""
    from . import pipeline

    return pipeline.build(model, board, out_dir, pipeline.PlanOptions.from_map(plan_options), plan, kernels,
                          stack_bytes)


def link_firmware(t: targets.Target, out: Path, paths: dict, g: Graph, plan) -> Path:
    """Compile the generated sources and the board's start-up code, link with the cached kernel
    library; firmware.elf appears only when the link and the segment check succeeded."""
    elf = out / "firmware.elf"
    ld = None
    if t.linker_template:
        ld = out / "board.ld"
        _write(ld, t.linker_script())
    lib = kernel_library(t)
    own = [s for s in sources(t, out) if s.parent.parent != KERNELS]
    tmp = Path(str(elf) + ".tmp")
    cmd = ([t.cc] + compile_flags(t, out) + [weights_define(paths["weights"])]
           + [str(s) for s in own] + [str(lib)] + link_flags(t, ld) + ["-o", str(tmp)])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        err = r.stderr.strip().splitlines()
        overflow = [m for m in map(_OVERFLOW.search, err) if m]
        if overflow:
            raise FirmwareError(_overflow_message(g, plan, t, overflow[0].group(1), int(overflow[0].group(2))))
        for code in _WRITE_ERRNOS:  # the linker could not write the image: say so, not "ld returned 1"
            if any(os.strerror(code) in line for line in err):
                raise write_error(elf, OSError(code, os.strerror(code)))
        raise FirmwareError(f"compiling for {t.name} failed: {err[-1] if err else r.returncode} "
                            f"(full command: {' '.join(cmd)})")
    try:
        if t.linker_template:
            check_segments(t, tmp)
    except FirmwareError:
        tmp.unlink()
        raise
    os.replace(tmp, elf)
    return elf


# -- does it fit the board ------------------------------------------------------------------
_OVERFLOW = re.compile(r"region [`'\"]?(\w+)[`'\"]? overflowed by (\d+) bytes")
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES)


def _b(n: int) -> str:
    return f"{n:,} B"


def _ram_size(t: targets.Target) -> str:
    return f"{_b(t.ram_bytes)} of RAM" + (f" ({t.ram_bytes // 1024} KiB)" if t.ram_bytes % 1024 == 0 else "")


def _optimize_ram_hint(g: Graph, plan, t: targets.Target, options, how: str = "--optimize ram") -> str:
    """'; with --optimize ram it fits (...)' when the least-RAM fusion plan would fit the board, else ''
    (how: the option as the caller spells it).

    The fusion search's least peak is a lower bound of every packed fused arena, so the
    (slower) packing only runs when that bound leaves room for the stack.
    """
    if options.fused or plan.regions(g):  # already optimised (or asked to be): nothing to suggest
        return ""
    from .fusion import plan_fused, search_front

    align = options.align
    room = t.ram_bytes - t.stack_bytes
    try:
        front = search_front(g, False, align)
        if not front.solutions or min(s.peak for s in front.solutions) > room:
            return ""
        for cap, spelled in ((None, how), ("none", f"{how} --max-mac-overhead none")):
            fused = plan_fused(g, optimize="ram", align=align, time_budget=options.time_budget, max_mac_overhead=cap)
            if fused.arena_bytes <= room:
                return (f"; with {spelled} it fits (arena {_b(fused.arena_bytes)} + stack {_b(t.stack_bytes)} = "
                        f"{_b(fused.arena_bytes + t.stack_bytes)})")
    except BuildtoolError:  # a graph the fusion planner does not take: no hint
        return ""
    return ""


def check_fits(g: Graph, plan, t: targets.Target, hint: str = "--optimize ram", options=None) -> None:
    """Refuse, before anything is written or linked, a model whose arena and stack exceed the
    board's RAM or whose weights exceed its flash: one line naming the board's size and the
    need, suggesting --optimize ram (or hint: how the caller spells it) when the least-RAM
    fusion plan would fit."""
    if t.ram_bytes and plan.arena_bytes + t.stack_bytes > t.ram_bytes:
        need = plan.arena_bytes + t.stack_bytes
        raise FirmwareError(f"{g.name} does not fit board {t.name}: it needs {_b(need)} of RAM (arena "
                            f"{_b(plan.arena_bytes)} + stack {_b(t.stack_bytes)}), the board has {_ram_size(t)}"
                            + _optimize_ram_hint(g, plan, t, PlanOptions.from_map(options), hint))
    if t.flash_bytes and g.params_bytes() > t.flash_bytes:
        raise FirmwareError(f"{g.name} does not fit board {t.name}: its weights need {_b(g.params_bytes())} of "
                            f"flash, the board has {_b(t.flash_bytes)}")


def _overflow_message(g: Graph, plan, t: targets.Target, region: str, over: int) -> str:
    """The linker's 'region X overflowed by N bytes' as the same one line as check_fits'."""
    if region.upper() == "RAM":
        return (f"{g.name} does not fit board {t.name}: it needs {_b(t.ram_bytes + over)} of RAM (arena "
                f"{_b(plan.arena_bytes)} + stack {_b(t.stack_bytes)} + other static data), the board has "
                f"{_ram_size(t)}")
    if region.upper() == "FLASH":
        return (f"{g.name} does not fit board {t.name}: code, weights and data need "
                f"{_b(t.flash_bytes + over)} of flash, the board has {_b(t.flash_bytes)}")
    return f"{g.name} does not fit board {t.name}: the linker's region {region} overflows by {_b(over)}"


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
        in_flash = t.flash_origin <= lo and hi <= flash_end
        if not ((in_flash and s["filesz"] == s["memsz"]) or (t.ram_origin <= lo and hi <= ram_end)):
            what = (f"zero-fills {_b(s['memsz'] - s['filesz'])} in flash" if in_flash else
                    f"spans 0x{lo:x}..0x{hi:x}, outside flash 0x{t.flash_origin:x}..0x{flash_end:x} "
                    f"and RAM 0x{t.ram_origin:x}..0x{ram_end:x}")
            raise FirmwareError(f"firmware for board {t.name}: the load segment at physical address 0x{lo:x} "
                                f"({_b(s['memsz'])}) {what}; the board's linker script must keep .bss and the stack "
                                f"NOLOAD and out of every PT_LOAD segment (see firmware/arm/cortexm.ld.in)")
        spans.append((lo, hi))
    spans.sort()
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        if b0 < a1:
            raise FirmwareError(f"firmware for board {t.name}: load segments 0x{a0:x}..0x{a1:x} and "
                                f"0x{b0:x}..0x{b1:x} overlap; fix the board's linker script")


# -- running ---------------------------------------------------------------------------
def _plugin(work: Path) -> Path:
    so = work / "libinsncount.so"
    if not so.exists() or so.stat().st_mtime < PLUGIN_SRC.stat().st_mtime:
        r = subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(so) + ".tmp", str(PLUGIN_SRC)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise FirmwareError(f"cannot build the QEMU instruction-count plugin: {r.stderr.strip()[:200]}")
        os.replace(str(so) + ".tmp", so)
    return so


def symbols(t: targets.Target, elf) -> dict:
    """name -> (address, size) from nm -S."""
    r = subprocess.run([t.binutil("nm"), "-S", str(elf)], capture_output=True, text=True)
    if r.returncode != 0:
        raise FirmwareError(f"nm failed on {elf}: {r.stderr.strip()[:200]}")
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4:
            out[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
        elif len(parts) == 3:
            out[parts[2]] = (int(parts[0], 16), 0)
    return out


def _section_bytes(t: targets.Target, elf, names: tuple) -> int:
    r = subprocess.run([t.binutil("size"), "-A", str(elf)], capture_output=True, text=True)
    total = 0
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in names:
            total += int(parts[1])
    return total


def ram_report(t: targets.Target, elf, arena_bytes: int, kv: dict) -> dict:
    """RAM = arena + measured stack high-water mark + the rest of .data/.bss (from the ELF)."""
    sym = symbols(t, elf)
    arena_sym = sym.get("bt_arena", (0, 0))[1]
    if arena_sym != arena_bytes:
        raise FirmwareError(f"bt_arena in {elf} is {arena_sym} bytes, the plan says {arena_bytes}")
    stack = int(kv.get("stack_high_water_bytes", 0))
    if t.platform == "host":
        static = _section_bytes(t, elf, (".data", ".bss", ".tdata", ".tbss")) - sym.get("host_stack", (0, 0))[1]
        reserved = sym.get("host_stack", (0, 0))[1]
    else:
        static = sym["__bss_end"][0] - sym["__data_start"][0]
        reserved = sym["__stack_top"][0] - sym["__stack_bottom"][0]
    other = static - arena_bytes
    rep = {"arena_bytes": arena_bytes, "stack_bytes": stack, "static_other_bytes": other,
           "total_bytes": arena_bytes + stack + other, "stack_reserved_bytes": reserved}
    if "static_ram_bytes" in kv:
        rep["measured_bytes"] = int(kv["static_ram_bytes"]) + stack
    if stack >= reserved > 0:
        raise FirmwareError(f"stack overflow: high-water mark {stack} B reaches the reserved {reserved} B")
    return rep


def _inputs(man: dict, x) -> bytes:
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    if len(xs) != len(man["inputs"]):
        raise UsageError(f"the model has {len(man['inputs'])} inputs, {len(xs)} given")
    data = b""
    for a, spec in zip(xs, man["inputs"]):
        a = np.asarray(a)
        if list(a.shape) != spec["shape"] or a.dtype != np.dtype(NUMPY_DTYPE[spec["dtype"]]):
            raise UsageError(f"input is {a.dtype}{list(a.shape)}, the model wants {spec['dtype']}{spec['shape']}")
        data += a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return data


def _outputs(man: dict, data: bytes) -> list:
    outs, pos = [], 0
    for spec in man["outputs"]:
        dt = np.dtype(NUMPY_DTYPE[spec["dtype"]]).newbyteorder("<")
        n = int(np.prod(spec["shape"])) * dt.itemsize
        if len(data) < pos + n:
            raise FirmwareError(f"the firmware wrote {len(data)} output bytes, expected {pos + n}")
        outs.append(np.frombuffer(data[pos:pos + n], dtype=dt).astype(dt.newbyteorder("=")).reshape(spec["shape"]))
        pos += n
    return outs


def _key_values(text: str) -> dict:
    return dict(re.findall(r"^([a-z_]+)=([0-9,]*)$", text, flags=re.M))


def _fail(board: str, rc: int, log: str) -> FirmwareError:
    tail = " | ".join(line for line in log.strip().splitlines()[-3:])
    return FirmwareError(f"firmware on {board} exited with {rc} ({EXIT_MEANING.get(rc, 'error')}): {tail}")


def format_report(prof: dict, ram: dict) -> str:
    """The RAM report and per-operator profile as printed by `scons run` (and `buildtool run --board`)."""
    lines = [f"RAM: arena {ram['arena_bytes']} B + stack {ram['stack_bytes']} B + other static "
             f"{ram['static_other_bytes']} B = {ram['total_bytes']} B"]
    lines += [f"  op {o['op']:3d} {o['opcode']:20s} {o['count']:>12d} {prof['unit']}" for o in prof["ops"]]
    if "total" in prof:
        lines.append(f"  total (whole run) {prof['total']} {prof['unit']}")
    return "\n".join(lines)


def run(board: str, out_dir, x, timeout: float = RUN_TIMEOUT, profile: bool = True, sequence: bool = False) -> tuple:
    """Run out_dir/firmware.elf on `board` with input x (array or list of arrays).

    Returns (output, profile, ram): output is an ndarray (a list when the model has several
    outputs); profile maps "ops" to per-operator counts in execution order; ram is ram_report().
    sequence=True: x is a list of input sets, invoked one after the other in the same run (the
    model's state persists between them, as in TFLite Micro); output is then a list with one
    entry per invocation, and the profile counts cover every invocation.
    """
    t = targets.get(board)
    out = Path(out_dir).resolve()
    elf = out / "firmware.elf"
    man_path = out / "firmware.json"
    if not elf.exists() or not man_path.exists():
        raise UsageError(f"no firmware in {out}; build it first (buildtool.firmware.build)")
    man = json.loads(man_path.read_text())
    if man["board"] != board:
        raise UsageError(f"the firmware in {out} was built for board {man['board']}, not {board}")
    check_tools(t)
    if sequence and not len(x):
        raise UsageError("an input sequence needs at least one input set")
    data = b"".join(_inputs(man, xi) for xi in x) if sequence else _inputs(man, x)
    counts, unit, total = [], "", None
    if not t.emulated:
        try:
            r = subprocess.run([str(elf)], input=data, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise _fail(board, 124, "") from None
        log = r.stderr.decode(errors="replace")
        if r.returncode != 0:
            raise _fail(board, r.returncode, log)
        result = r.stdout
        kv = _key_values(log)
        if kv.get("op_ns"):
            ns = [int(v) for v in kv["op_ns"].split(",")]
            counts, unit = [ns[i] for i in man["order"]], "ns"
    else:
        with tempfile.TemporaryDirectory(prefix="bt-run-") as tmp:
            work = Path(tmp)
            (work / "input.bin").write_bytes(data)
            cmd = list(t.run)
            if profile:
                sym = symbols(t, elf)
                mask = ~1 if t.platform == "arm" else ~0
                so = _plugin(out)  # its path goes into QEMU's option syntax, where ',,' is one comma
                cmd += ["-plugin", f"{str(so).replace(',', ',,')},start={sym['bt_profile_begin'][0] & mask:x},"
                                   f"end={sym['bt_profile_end'][0] & mask:x},out={work / 'count.txt'}"]
            cmd += ["-kernel", str(elf)]
            try:
                r = subprocess.run(cmd, cwd=work, capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise _fail(board, 124, "") from None
            log = (r.stdout + r.stderr).decode(errors="replace")
            if r.returncode != 0:
                raise _fail(board, r.returncode, log)
            kv = _key_values(log)
            result = (work / "output.bin").read_bytes() if (work / "output.bin").exists() else b""
            if profile:
                ck = _key_values((work / "count.txt").read_text())
                counts = [int(v) for v in ck.get("region_counts", "").split(",") if v]
                n = len(man["order"])
                if sequence and n and len(counts) == n * len(x):  # one region per operator and invocation
                    counts = [sum(counts[k::n]) for k in range(n)]
                total, unit = int(ck["insns_total"]), "instructions"
    if sequence:
        per = sum(int(np.prod(o["shape"])) * np.dtype(NUMPY_DTYPE[o["dtype"]]).itemsize for o in man["outputs"])
        if len(result) != per * len(x):
            raise FirmwareError(f"the firmware wrote {len(result)} output bytes, expected {per} for each of "
                                f"{len(x)} invocations")
        runs = [_outputs(man, result[k * per:(k + 1) * per]) for k in range(len(x))]
    else:
        outs = _outputs(man, result)
    prof = {"unit": unit, "ops": [{"op": op, "opcode": code, "count": c}
                                  for op, code, c in zip(man["order"], man["opcodes"], counts)]}
    if counts and len(counts) != len(man["order"]):
        raise FirmwareError(f"profile has {len(counts)} regions for {len(man['order'])} operators")
    if total is not None:
        prof["total"] = total
    ram = ram_report(t, elf, man["arena_bytes"], kv)
    if sequence:
        return [(o[0] if len(o) == 1 else o) for o in runs], prof, ram
    return (outs[0] if len(outs) == 1 else outs), prof, ram


__all__ = ["build", "run", "format_report", "kernel_library", "generate_sources", "kernel_sources", "sources",
           "compile_flags", "link_flags", "FirmwareError", "ram_report", "load_graph", "make_plan", "check_fits",
           "check_segments", "load_segments"]
