"""Running a firmware image: natively or in the board's emulator, reading its output, the
per-operator profile and the RAM report."""

from __future__ import annotations

import bisect
import json
import os
import platform
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .. import targets
from ..errors import UsageError
from ..model.ir import NUMPY_DTYPE
from ..units import exact, kib, size_exact
from . import cycles, memory_model, op_cost
from .toolchain import CODE_SECTIONS, PACKAGE, FirmwareError, check_tools, section_bytes

PLUGIN_SRC = PACKAGE / "tools" / "qemu-insncount" / "insncount.c"
RUN_TIMEOUT = 120.0
EXIT_MEANING = {1: "failure", 2: "input/output error", 3: "weights image does not match the firmware",
                4: "model_invoke failed", 97: "RISC-V trap", 98: "Arm HardFault", 99: "unexpected exception",
                124: "timeout"}


def _plugin(work: Path) -> Path:
    so = work / "libinsncount.so"
    if not so.exists() or so.stat().st_mtime < PLUGIN_SRC.stat().st_mtime:
        r = subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(so) + ".tmp", str(PLUGIN_SRC)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise FirmwareError(f"cannot build the QEMU instruction-count plugin: {r.stderr.strip()[:200]}")
        os.replace(str(so) + ".tmp", so)
    return so


def check_flash_wait_states(board: str, n: int | None) -> None:
    """UsageError unless n is None or wait states the board's cycle estimate can take (n >= 0, a CPU
    with a timing table in cycles.py, run in QEMU)."""
    if n is None:
        return
    if n < 0:
        raise UsageError(f"--flash-wait-states must be 0 or more, not {n}")
    t = targets.get(board)
    if t.cpu not in cycles.WAIT_STATE_CPUS or t.port.native:
        raise UsageError(f"--flash-wait-states: {board} ({t.cpu}) has no wait-state estimate; it is made for "
                         f"{', '.join(cycles.WAIT_STATE_CPUS)} boards run in QEMU")


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


def ram_report(t: targets.Target, elf, arena_bytes: int, kv: dict) -> dict:
    """RAM = arena + measured stack high-water mark + the rest of .data/.bss (from the ELF)."""
    sym = symbols(t, elf)
    arena_sym = sym.get("bt_arena", (0, 0))[1]
    if arena_sym != arena_bytes:
        raise FirmwareError(f"bt_arena in {elf} is {arena_sym} bytes, the plan says {arena_bytes}")
    stack = int(kv.get("stack_high_water_bytes", 0))
    static, reserved = t.port.static_ram(sym, lambda names: section_bytes(t, elf, names))
    spare = sym.get("bt_staging", (0, 0))[1]  # weights staged in the part's spare SRAM (plan/staging.py)
    other = static - arena_bytes - spare
    rep = {"arena_bytes": arena_bytes, "stack_bytes": stack, "static_other_bytes": other,
           "total_bytes": arena_bytes + spare + stack + other, "stack_reserved_bytes": reserved} \
        | ({"staged_bytes": spare} if spare else {})
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


def _by_function(sym: dict, mask: int, pcs: list) -> list:
    """Fold the plugin's per-address counts [(address, n)] into the functions holding them:
    [(name, instructions)], most first (an address in no sized symbol: "?ADDR")."""

    funcs = sorted((a & mask, (a & mask) + max(n, 1), name) for name, (a, n) in sym.items() if n)
    starts = [f[0] for f in funcs]
    out = {}
    for a, n in pcs:
        k = bisect.bisect_right(starts, a) - 1
        name = funcs[k][2] if k >= 0 and a < funcs[k][1] else f"?{a:x}"
        out[name] = out.get(name, 0) + n
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


def _key_values(text: str) -> dict:
    return dict(re.findall(r"^([a-z_]+)=([0-9,]*)$", text, flags=re.M))


def _fail(board: str, rc: int, log: str, model: str) -> FirmwareError:
    """The one line of a firmware run that failed, naming the model (firmware.json's) and the board."""
    tail = " | ".join(line for line in log.strip().splitlines()[-3:])
    e = FirmwareError(f"model '{model}': firmware on {board} exited with {rc} ({EXIT_MEANING.get(rc, 'error')}): {tail}")
    e.about_model = True  # the CLI starts the line with the model path as typed, in place of "model 'NAME'"
    return e


def _timed_out(board: str, timeout: float, model: str) -> FirmwareError:
    return _fail(board, 124, f"stopped after {timeout:g} s", model)


def format_report(prof: dict, ram: dict) -> str:
    """The RAM report and per-operator profile as printed by `scons run` (and `buildtool run --board`)."""
    staged = f" + staged weights {exact(ram['staged_bytes'])}" if ram.get("staged_bytes") else ""
    lines = [f"RAM: arena {exact(ram['arena_bytes'])}{staged} + stack {exact(ram['stack_bytes'])} + other static "
             f"{exact(ram['static_other_bytes'])} = {size_exact(ram['total_bytes'])}"]
    lines += op_cost.header(prof)
    lines += [f"  {prof['unit_note']}"] if "unit_note" in prof else []
    lines += [f"  op {o['op']:3d} {o['opcode']:20s} {o['count']:>13,} {prof['unit']}{op_cost.columns(o, prof['unit'])}"
              for o in prof["ops"]]
    lines += op_cost.summary(prof)
    if "total" in prof:
        lines.append(f"  total (whole run) {prof['total']:,} {prof['unit']}")
    return "\n".join(lines)


def run(board: str, out_dir, x, timeout: float = RUN_TIMEOUT, profile: bool = True, sequence: bool = False,
        functions: bool = False, region: int | None = None, flash_wait_states: int | None = None,
        memory: memory_model.MemoryModel | None = None) -> tuple:
    """Run out_dir/firmware.elf on `board` with input x (array or list of arrays).

    Returns (output, profile, ram): output is an ndarray (a list when the model has several
    outputs); profile maps "ops" to per-operator counts in execution order; ram is ram_report().
    sequence=True: x is a list of input sets, invoked one after the other in the same run (the
    model's state persists between them, as in TFLite Micro); output is then a list with one
    entry per invocation, and the profile counts cover every invocation.
    functions=True (QEMU boards): profile["functions"] is also [(function, instructions)] of the
    whole run, most first (where a per-operator count cannot say which code the time goes to), and
    profile["addresses"] [(instruction address, its executions)]; region=k: both only inside the k-th
    profile region executed (an operator or fused block: the index of profile["ops"]).
    A board with a memory model (memory_model.py: a real part) also gets each operator's "memory_stalls" and
    "modelled_cycles" and profile["memory_model"], its one-line summary; memory: another MemoryModel for it
    (the same part read another way the manual allows: MemoryModel.other_reading).
    flash_wait_states=N (CPUs with a cycle model, cycles.py): the plugin also counts each region's
    accesses to the board's flash (ops' "flash_accesses") and the cycle estimate adds N cycles to each
    (cycles.wait_cycles); None: zero wait states, nothing counted.
    """
    check_flash_wait_states(board, flash_wait_states)
    t = targets.get(board)
    out = Path(out_dir).resolve()
    elf = out / "firmware.elf"
    man_path = out / "firmware.json"
    if not elf.exists() or not man_path.exists():
        raise UsageError(f"no firmware in {out}; build it first (buildtool.pipeline.build)")
    man = json.loads(man_path.read_text())
    if man["board"] != board:
        raise UsageError(f"the firmware in {out} was built for board {man['board']}, not {board}")
    check_tools(t)
    if sequence and not len(x):
        raise UsageError("an input sequence needs at least one input set")
    data = b"".join(_inputs(man, xi) for xi in x) if sequence else _inputs(man, x)
    counts, unit, total, mixes, fn_counts, flash, stalls = [], "", None, [], None, None, None
    mm = (memory or memory_model.get(board)) if profile and t.cpu in cycles.CPUS else None
    if t.port.native:
        try:
            r = subprocess.run(t.port.run_command(t, elf), input=data, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise _timed_out(board, timeout, man.get("model", "?")) from None
        log = r.stderr.decode(errors="replace")
        if r.returncode != 0:
            raise _fail(board, r.returncode, log, man.get("model", "?"))
        result = r.stdout
        kv = _key_values(log)
        if kv.get("op_ns"):
            ns = [int(v) for v in kv["op_ns"].split(",")]
            counts, unit = [ns[i] for i in man["order"]], "ns"
    else:
        with tempfile.TemporaryDirectory(prefix="bt-run-") as tmp:
            work = Path(tmp)
            (work / "input.bin").write_bytes(data)
            plugin = []
            if profile:
                sym = symbols(t, elf)
                mask = t.port.code_mask
                so = _plugin(out)  # its path goes into QEMU's option syntax, where ',,' is one comma
                plugin = ["-plugin", f"{str(so).replace(',', ',,')},start={sym['bt_profile_begin'][0] & mask:x},"
                                   f"end={sym['bt_profile_end'][0] & mask:x},out={work / 'count.txt'}"
                                   + (",mix=on" if t.cpu in cycles.CPUS else "")
                                   + (f",flash={t.flash_origin:x}:{t.flash_bytes:x}"
                                      if flash_wait_states is not None or mm else "")
                                   + (f",{mm.plugin_option()}" if mm else "")
                                   + (f",pcs={work / 'pcs.txt'}" if functions else "")
                                   + (f",pcs_region={region}" if functions and region is not None else "")]
            cmd = t.port.run_command(t, elf, plugin)
            try:
                r = subprocess.run(cmd, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise _timed_out(board, timeout, man.get("model", "?")) from None
            log = (r.stdout + r.stderr).decode(errors="replace")
            if r.returncode != 0:
                raise _fail(board, r.returncode, log, man.get("model", "?"))
            kv = _key_values(log)
            result = (work / "output.bin").read_bytes() if (work / "output.bin").exists() else b""
            if profile:
                text = (work / "count.txt").read_text()
                ck = _key_values(text)
                counts = [int(v) for v in ck.get("region_counts", "").split(",") if v]
                mixes = op_cost.read_mixes(text, len(counts)) if t.cpu in cycles.CPUS else []
                if flash_wait_states is not None:
                    flash = op_cost.read_flash(text, len(counts))
                if mm:
                    stalls = memory_model.read_stalls(text, len(counts))
                n = len(man["order"])
                if sequence and n and len(counts) == n * len(x):  # one region per operator and invocation
                    counts = [sum(counts[k::n]) for k in range(n)]
                    mixes = op_cost.fold(mixes, n) if mixes else []
                    flash = op_cost.fold(flash, n) if flash else flash
                    stalls = op_cost.fold(stalls, n) if stalls else stalls
                total, unit = int(ck["insns_total"]), "instructions"
                if functions:
                    pcs = [(int(a, 16) & mask, int(n)) for a, n in
                           (line.split("\t") for line in (work / "pcs.txt").read_text().splitlines())]
                    fn_counts = _by_function(sym, mask, pcs)
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
    if unit == "ns":  # a native run times this machine, not the board's chip
        prof["unit_note"] = (f"ns are wall-clock times on this host ({platform.machine() or 'host'}) of "
                             + ("the xcore.ai VPU's C model, not XU316 times" if t.cpu.startswith("xcore")
                                else f"{t.name}'s native build"))
    if counts and len(counts) != len(man["order"]):
        raise FirmwareError(f"profile has {len(counts)} regions for {len(man['order'])} operators")
    op_cost.annotate(prof, man.get("macs"), mixes, t.cpu, flash, flash_wait_states or 0, stalls, mm)
    if total is not None:
        prof["total"] = total
    if fn_counts is not None:
        prof["functions"], prof["addresses"] = fn_counts, pcs
    ram = ram_report(t, elf, man["arena_bytes"], kv)
    if sequence:
        return [(o[0] if len(o) == 1 else o) for o in runs], prof, ram
    return (outs[0] if len(outs) == 1 else outs), prof, ram



__all__ = ["run", "format_report", "ram_report", "symbols", "check_flash_wait_states", "EXIT_MEANING", "RUN_TIMEOUT"]


def staged_note(staged: dict | None, spare: int) -> tuple:
    """(after the arena, after it) in the RAM line: the weights staged in the arena's free bytes and in
    bt_staging (plan/staging.py; staged: firmware.json's "staged")."""
    staged = staged or {}
    n, at = len(staged.get("arena_layers", [])), staged.get("arena_bytes", 0)
    inside = f" (weights of {n} layer{'s' * (n != 1)} staged in it, at most {kib(at)} at a step)" if at else ""
    return inside, (f" + staged weights {kib(spare)}" if spare else "")


def memory_figures(t: targets.Target, elf, arena_bytes: int) -> dict:
    """What a linked image takes, as the RAM/flash line after a link states it: "static" (.data and .bss,
    the arena and bt_staging included), "stack" (reserved), "ram" (their sum), "code" (toolchain.CODE_SECTIONS:
    code, constants, .data's initial values), "weights" (.bt_weights), "staging" (bt_staging: weights staged in
    the part's spare SRAM, plan/staging.py) and "external" (region name -> (weights, arena buffers) placed there)."""
    sym = symbols(t, elf)
    static, stack = t.port.static_ram(sym, lambda names: section_bytes(t, elf, names))
    ext = {r.name: tuple(section_bytes(t, elf, (f".bt_{kind}_{r.name}",)) for kind in ("weights", "arena"))
           for r in t.extra_memories()}
    return {"static": static, "stack": stack, "ram": static + stack, "arena": arena_bytes,
            "code": section_bytes(t, elf, CODE_SECTIONS), "weights": section_bytes(t, elf, (".bt_weights",)),
            "staging": sym.get("bt_staging", (0, 0))[1], "external": ext}


# what the line calls the image's section: the weights and each layer's multipliers and shifts (plan/flash.py)
WEIGHTS = "weights (with requantisation tables)"


def memory_summary(t: targets.Target, elf, arena_bytes: int, staged: dict | None = None) -> str:
    """One line after a link: RAM (arena + reserved stack + other static data) and flash (code +
    weights, the requantisation tables with them: plan/requant_tables.py) against the board's, in KiB (a
    native build has no board limits); staged: firmware.json's "staged" (weights copied into SRAM before
    their layer: plan/staging.py)."""
    m = memory_figures(t, elf, arena_bytes)
    stack, weights, code, spare = m["stack"], m["weights"], m["code"], m["staging"]
    inside, beside = staged_note(staged, spare)
    static = m["static"] - spare
    ram = static + stack

    def of(n: int, total: int) -> str:
        return f"{kib(n)} of {kib(total)} ({100 * n / total:.0f} %)" if total else kib(n)

    ext = ""
    for r in t.extra_memories():  # weights and arena buffers placed in external regions
        w, a = m["external"][r.name]
        what = ([f"weights {kib(w)}" if a else "weights"] if w else []) + ([f"arena {kib(a)}"] if a else [])
        ext += f"; {r.name} {of(w + a, r.size)} = {' + '.join(what)}" if what else ""
    if t.code_in_ram and t.port.native:  # planned for a chip that runs code from RAM, built and run here
        ram = code + static + t.stack_bytes  # the chip's stack as planned, not this process's
        return (f"{t.name}: RAM {of(ram, t.ram_bytes)} = code and constants {kib(code)} (as built here: "
                f"{platform.machine() or 'host'}) + arena {kib(arena_bytes)} + stack {kib(t.stack_bytes)} + static "
                f"{kib(static - arena_bytes)}; flash {of(weights, t.flash_bytes)} = {WEIGHTS}{ext}")
    return (f"{t.name}: RAM {of(ram + spare, t.ram_bytes)} = arena {kib(arena_bytes)}{inside}{beside} + stack "
            f"{kib(stack)} + static {kib(static - arena_bytes)}; flash {of(code + weights, t.flash_bytes)} = code "
            f"{kib(code)} + {WEIGHTS} {kib(weights)}{ext}")
