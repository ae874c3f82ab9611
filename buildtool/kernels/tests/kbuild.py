"""Build and run kernels/tests/kernel_test.c for one kernel set on the host or in QEMU.

A kernel set's sources: for every reference file name, the set folder's file of that name when it
exists, else the reference file (TFLite Micro's optimised-kernel layout). The reference set is
linked next to it under the ref_bt_ prefix (kernels/tests/ref_all.c).
Used by tests/test_kernels.py and benchmarks/kernels_micro.py.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

from buildtool.firmware.toolchain import kernel_parts
from buildtool.targets import _with_regions

KERNELS = Path(__file__).resolve().parents[1]
PACKAGE = KERNELS.parent
FIRMWARE = PACKAGE / "firmware_src"
PLUGIN_SRC = PACKAGE / "tools" / "qemu-insncount" / "insncount.c"
SETS = ("reference", "cortex-m", "riscv", "xcore", "host")

ARM_BOARDS = {  # cpu flags, qemu machine, FLASH, RAM
    "cortex-m4": ("-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16", "mps2-an386", "0x00000000", "0x20000000", "4M"),
    "cortex-m7": ("-mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-d16", "mps2-an500", "0x00000000", "0x20000000", "4M"),
    "cortex-m33": ("-mcpu=cortex-m33 -mfloat-abi=hard -mfpu=fpv5-sp-d16", "mps2-an505", "0x10000000", "0x38000000", "2M"),
    "cortex-m3": ("-mcpu=cortex-m3", "mps2-an385", "0x00000000", "0x20000000", "4M"),
    # Helium (MVE): the cortex-m55 set; mps3-an547's ITCM (512 KiB, Secure alias) and SSE-300 SRAM
    "cortex-m55": ("-mcpu=cortex-m55 -mfloat-abi=hard", "mps3-an547", "0x10000000", "0x31000000", "4M"),
}
FLASH_LEN = {"cortex-m55": "512K"}  # (the others: 4M)
SEMIHOST = ["-semihosting-config", "enable=on,target=native"]
RVV_CPU = "rv32,v=true,vext_spec=v1.0,vlen=128,elen=64"


def set_sources(name: str, set_root: Path = KERNELS) -> list:
    """The C files of kernel set `name` (target file where one exists, else the reference one, a set's own
    followed by its NAME_PART.c files: toolchain.kernel_sources' rule); set_root is where the set folder lives
    (kernels/ itself, or elsewhere for a test's own set)."""
    out, names = [], {f.stem for f in (KERNELS / "reference").glob("*.c")}
    for ref in sorted((KERNELS / "reference").glob("*.c")):
        own = Path(set_root) / name / ref.name
        out.append(own if own.exists() else ref)
        if own.exists() and name != "reference":
            out += kernel_parts(own, names)
    return out


def _run(cmd: list, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _headers_digest() -> str:
    """Every header, the reference kernels a set's file may include and the per-kernel test files."""
    h = hashlib.sha1()
    for d in (KERNELS, FIRMWARE):
        for f in sorted(d.rglob("*.h")):
            h.update(str(f).encode() + f.read_bytes())
    for f in sorted((KERNELS / "reference").glob("*.c")) + sorted((KERNELS / "tests").glob("*.c")):
        h.update(str(f).encode() + f.read_bytes())  # (kernel_test.c includes the *_test.c files)
    return h.hexdigest()


def _object(cc: list, src: Path, defines: tuple, out_dir: Path, digest: str) -> Path:
    """src compiled once per (compiler flags, defines, contents): builds share the reference objects."""
    key = hashlib.sha1(repr((cc, str(src), sorted(defines), digest)).encode() + Path(src).read_bytes()).hexdigest()[:20]
    obj = Path(out_dir) / "obj" / f"{Path(src).stem}-{key}.o"
    if not obj.exists():
        obj.parent.mkdir(parents=True, exist_ok=True)
        tmp = obj.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        cmd = [*cc, *[f"-D{d}" for d in defines], "-c", str(src), "-o", str(tmp)]
        r = _run(cmd)
        if r.returncode != 0:
            raise RuntimeError(f"compile failed: {' '.join(cmd)}\n{r.stderr}")
        os.replace(tmp, obj)
    return obj


def _build(cc: list, link: list, name: str, out: Path, set_root: Path = KERNELS, set_defines=(),
           test_defines=(), platform=()) -> Path:
    """Link the set, the renamed reference set, the test program and platform sources into out."""
    out_dir = out.parent
    digest = _headers_digest()
    flags = [*cc, f"-I{KERNELS / 'include'}", f"-I{KERNELS / 'reference'}", f"-I{Path(set_root) / name}",
             f"-I{FIRMWARE / 'common'}"]
    xdefs = ("BT_SET_XCORE",) if name == "xcore" else ()
    objs = [_object(flags, src, tuple(set_defines), out_dir, digest) for src in set_sources(name, set_root)]
    objs.append(_object(flags, KERNELS / "tests" / "ref_all.c", (), out_dir, digest))
    objs.append(_object(flags, KERNELS / "tests" / "kernel_test.c", tuple(test_defines) + xdefs, out_dir, digest))
    objs += [_object(flags, src, tuple(set_defines), out_dir, digest) for src in platform]
    r = _run([*cc, *link, *map(str, objs), "-o", str(out)] + (["-lgcc"] if link else []))
    if r.returncode != 0:
        raise RuntimeError(f"link failed for {out.name}:\n{r.stderr}")
    return out


def build_host(name: str, out_dir: Path, defines=(), set_root: Path = KERNELS, sanitize: str = "") -> Path:
    """sanitize: gcc's -fsanitize= list (e.g. "shift-exponent,signed-integer-overflow"); the program then
    stops at the first undefined operation it meets."""
    tag = ("_" + "_".join(defines) if defines else "") + ("_san_" + sanitize.replace(",", "_") if sanitize else "")
    exe = Path(out_dir) / f"kt_host_{name}{tag}"
    cc = ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]
    link = []
    if sanitize:   # (the instrumentation makes gcc's maybe-uninitialized analysis see false cases)
        cc += [f"-fsanitize={sanitize}", "-fno-sanitize-recover=all", "-Wno-maybe-uninitialized"]
        link = [f"-fsanitize={sanitize}"]
    return _build(cc, link, name, exe, set_root, test_defines=("BT_HOST", *defines))


def run_host(exe: Path) -> tuple:
    r = _run([str(exe)], timeout=60)
    return r.returncode, r.stdout + r.stderr


def _ld(template: Path, out: Path, flash: str, flash_len: str, ram: str, ram_len: str, stack: str) -> Path:
    text = _with_regions(template.read_text(), ())  # no external regions: those lines go
    for k, v in (("@FLASH@", flash), ("@FLASHLEN@", flash_len), ("@RAM@", ram), ("@RAMLEN@", ram_len), ("@STACK@", stack)):
        text = text.replace(k, v)
    tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
    return out


def build_arm(name: str, out_dir: Path, cpu: str = "cortex-m4", bench: bool = False, opt: str = "-O2") -> Path:
    flags, _, flash, ram, ram_len = ARM_BOARDS[cpu]
    out_dir = Path(out_dir)
    ld = _ld(FIRMWARE / "arm" / "cortexm.ld.in", out_dir / f"{cpu}.ld", flash, FLASH_LEN.get(cpu, "4M"), ram, ram_len,
             "0x4000")
    elf = out_dir / f"kt_{cpu}_{name}{'_bench' if bench else ''}{opt}.elf"
    # a function a section (as firmware builds): --gc-sections drops what no test calls, such as the static helpers -O0
    # emits in each file of a kernel split by path (cortex-m's depthwise_*.c) that the file does not call
    cc = ["arm-none-eabi-gcc", "-mthumb", *flags.split(), "-std=c99", opt, "-ffreestanding", "-ffunction-sections",
          "-fdata-sections", "-Wall", "-Wextra", "-Werror"]
    link = ["-nostdlib", "-nostartfiles", "-T", str(ld), "-Wl,--gc-sections"]
    return _build(cc, link, name, elf, test_defines=("BT_BENCH",) if bench else (),
                  platform=(FIRMWARE / "arm" / "startup.c", FIRMWARE / "common" / "semihost_io.c"))


def arm_cmd(elf: Path, cpu: str = "cortex-m4", plugin: list = ()) -> list:
    return ["timeout", "60", "qemu-system-arm", "-M", ARM_BOARDS[cpu][1], "-nographic", *SEMIHOST, *plugin,
            "-kernel", str(elf)]


def build_riscv(name: str, out_dir: Path, rvv: bool = False, bench: bool = False, opt: str = "-O2") -> Path:
    out_dir = Path(out_dir)
    ld = _ld(FIRMWARE / "riscv" / "rv32.ld.in", out_dir / "virt.ld", "0x80000000", "1M", "0x80100000", "8M", "0x4000")
    elf = out_dir / f"kt_rv32_{name}{'_rvv' if rvv else ''}{'_bench' if bench else ''}{opt}.elf"
    cc = ["riscv64-unknown-elf-gcc", "-march=rv32imac", "-mabi=ilp32", "-std=c99", opt, "-ffreestanding",
          "-Wall", "-Wextra", "-Werror"]
    link = ["-nostdlib", "-nostartfiles", "-T", str(ld)]
    rv = ("BT_RVV",) if rvv else ()
    return _build(cc, link, name, elf, set_defines=rv, test_defines=rv + (("BT_BENCH",) if bench else ()),
                  platform=(FIRMWARE / "riscv" / "start.S", FIRMWARE / "riscv" / "sys.c",
                            FIRMWARE / "common" / "semihost_io.c"))


def riscv_cmd(elf: Path, rvv: bool = False, plugin: list = ()) -> list:
    return ["timeout", "60", "qemu-system-riscv32", "-M", "virt", "-bios", "none", *(["-cpu", RVV_CPU] if rvv else []),
            "-nographic", *SEMIHOST, *plugin, "-kernel", str(elf)]


def run_cmd(cmd: list) -> tuple:
    r = _run(cmd, timeout=90)
    return r.returncode, r.stdout + r.stderr


def summary(output: str) -> tuple:
    """(passed, failed) from the program's last summary line."""
    m = re.findall(r"(\d+) passed, (\d+) failed", output)
    if not m:
        raise AssertionError(f"no summary line in output:\n{output[-2000:]}")
    return int(m[-1][0]), int(m[-1][1])


def tools_present(*tools: str) -> bool:
    return all(shutil.which(t) for t in tools)


def build_plugin(out_dir: Path) -> Path:
    so = Path(out_dir) / "libinsncount.so"
    r = _run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(so), str(PLUGIN_SRC)])
    if r.returncode != 0:
        raise RuntimeError(f"plugin build failed:\n{r.stderr}")
    return so


def symbol(elf: Path, sym: str, nm: str) -> str:
    out = _run([nm, str(elf)]).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == sym:
            return parts[0]
    raise KeyError(sym)


def count_region(cmd_fn, elf: Path, plugin: Path, begin: str, end: str, nm: str, out_dir: Path, **kw) -> int:
    """Guest instructions executed between the marker functions `begin` and `end` (QEMU TCG plugin)."""
    s, e = symbol(elf, begin, nm), symbol(elf, end, nm)
    cnt = Path(out_dir) / f"{elf.stem}_{begin}.cnt"
    if cnt.exists():
        os.unlink(cnt)
    rc, out = run_cmd(cmd_fn(elf, plugin=["-plugin", f"{plugin},start={s},end={e},out={cnt}"], **kw))
    if rc != 0:
        raise RuntimeError(f"benchmark run failed (rc={rc}):\n{out[-2000:]}")
    m = re.search(r"insns_region=(\d+)", cnt.read_text())
    return int(m.group(1))
