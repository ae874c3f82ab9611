"""Estimated Cortex-M4 cycles from an executed-instruction mix: a table lookup, not a measurement.

The mix is what the QEMU plugin (`tools/qemu-insncount`, `mix=on`) reports per profiled region:
{key: executions}, a key being an instruction's mnemonic ("smlad", "ldr.w"), its whole text when it
writes pc or moves a register list ("pop {r4, pc}"), "+" in front of a single load or store that
directly follows a single load and whose address does not use that load's destination ("~" when it
uses only that load's written-back base), " [reg]" after one with a register-offset address, and
"(refill)" counting pipeline refills (blocks entered elsewhere than after the previous block), and
"(unaligned load +1)", "(unaligned load +2)", "(unaligned store +1)", "(unaligned store +2)" counting the
single loads and stores whose address is not a multiple of their size, by the extra cycles it costs.

Timings are the Arm Cortex-M4 Technical Reference Manual's, DDI 0439 (revision r0p1, issues C and D;
Arm 100166_0001_00 is the same manual converted, whose wording and numbering were the ones checked):
section 3.3 "Instruction set summary", Table 3-1 ("Processor instruction set summary" in 100166,
under 3.3.1 "Table of processor instructions"; cycle counts "based on a system with zero wait
states"; P, the pipeline refill, "ranges from 1 to 3 depending on the alignment and width of the
target instruction, and whether the processor manages to speculate the address early"; N, the
registers in the list), section 3.3.2 "Load/store timings" (how loads and stores pair), and the FPU
chapter's "FPU instruction set" table (its values checked in TI's reproduction of it, SWCU192 Table
3-27). Each line says where its numbers come from:

- data processing, multiply and multiply-accumulate (MUL, MLA, SMULL, SMLAL, SMLAD ...), SIMD, saturate,
  extend, bitfield: 1. Source: Table 3-1 (every one of these rows: 1).
- IT: 0 .. 1. Source: Table 3-1: 1; the low 0 (IT folded onto the instruction before) is this model's
  allowance, not a TRM figure.
- SDIV, UDIV: 2 .. 12. Source: Table 3-1 ("2 to 12": early termination).
- LDR (any size): 2; pipelined ("+": right after a single load, its address computed without that
  load's destination) 1. Source: Table 3-1: 2; 3.3.2: "if the next instruction is an LDR or STR, and the
  destination of the first LDR is not used to compute the address for the next instruction, then one
  cycle is removed". The plugin reads the registers from the disassembly; an LDR whose address uses
  the destination is not pipelined, 2; one whose address uses only the first load's written-back base
  ("~", "ldr r0, [r1], #4; ldr r2, [r1]": the TRM does not say whether that is a destination) 1 .. 2.
- STR with an immediate offset: 1 .. 2; pipelined 1 ("~" 1 .. 2). Source: Table 3-1: 2; 3.3.2: "STR Rx,[Ry,#imm] is
  always one cycle" (the low; the high 2 is Table 3-1's).
- STR with a register offset: 2; pipelined 1 ("~" 1 .. 2). Source: Table 3-1: 2; 3.3.2 (pipelined after an LDR:
  "LDR R0,[R1,R2]; STR R1,[R3,R2] - normally three cycles total").
- LDRD, STRD: 1 + N = 3. Source: Table 3-1 (1 + N); 3.3.2: not pipelined with the instructions around
  them.
- LDM, STM, PUSH, POP: 1 + N (N registers). Source: Table 3-1.
- VLDM, VSTM, VPUSH, VPOP: 1 + N (N words: 2 per d register). Source: FPU table (1 + N floats, 1 + 2N
  doubles).
- branches, CBZ/CBNZ: 1, + P when taken. Source: Table 3-1 (B, BL, BX, BLX: 1 + P; conditional B, CBZ,
  CBNZ: 1 or 1 + P).
- TBB, TBH: 2 .. 3, + P. Source: Table 3-1: 2 + P; 3.3.2: "at least two cycles for the load, one cycle
  for the add, and three cycles for the pipeline reload. This means at least six cycles" (the high: 3 +
  P = 6).
- writing pc (POP {..., pc}, LDR pc, MOV pc, BX): the above, + P. Source: Table 3-1 (MOV PC, ADD PC: 1 +
  P; POP with PC: 1 + N + P).
- MRS, MSR: 1 .. 2. Source: Table 3-1's special register rows (not confirmed against the table for this
  note).
- VDIV, VSQRT: 14. Source: FPU table.
- VMLA, VMLS, VNMLA, VNMLS, VFMA, VFMS, VFNMA, VFNMS: 3. Source: FPU table (multiply-accumulate, fused
  or not: 3).
- other VFP: 1; VLDR, VSTR 2. Source: FPU table (a single float loaded or stored: 2; a double: 3, which
  the mix's key "vldr" does not tell apart).

- an unaligned single load (LDR, LDRH, LDRSH; the only ones the Cortex-M4 executes unaligned, every other
  load faults): + 1 for a word at an address 2 mod 4 (done as two halfwords) or a halfword at an odd
  address (two bytes), + 2 for a word at 1 or 3 mod 4 (a byte, a halfword and a byte). An unaligned
  store (STR, STRH): the same, high only (0 low: the store buffer may hide it). Source: the TRM's
  load/store timing notes (3.3.2) on unaligned word and halfword accesses, as reproduced in
  rsaxvc.net's "Unaligned Access on Cortex-M" (2018); the wording was not checked against the PDF for
  this note. The plugin reads each access's address and size (QEMU's memory callback).

Every taken branch, call, return or exception entry is one "(refill)": + P each, P = 1 (low) ..
3 (high). tests/test_cycles.py runs sequences whose cycles the TRM states (3.3.2's pipelined pairs,
LDM, PUSH, LDRD, a taken B, TBB, SDIV) in QEMU under the plugin and checks low..high holds them.

Flash wait states (`wait_cycles`, the `--flash-wait-states N` options): the TRM's counts assume
zero wait states; code and weights in real flash add N cycles to each flash access. The plugin
(`flash=ORIGIN:SIZE`) counts per region the 32-bit words of code fetched from the board's flash, the
fetches that follow a taken branch into it, and the data loads from it (weights, literal pools,
constant tables). high = N x (every fetched word + every load): no prefetch, no cache, each access
waits; low = N x (the fetch after each taken branch + every load): sequential fetches fully hidden
behind execution (the processor fetches ahead; a flash accelerator's prefetch does the same). Left
out: caches and flash accelerators (ST's ART: a branch cache that hides the fetch after a branch,
and wide flash lines of 64 or 128 bits that serve several words with one wait), the prefetch buffer's
real depth, contention between instruction fetches and data loads on the same flash, stores to
flash (none in firmware), wait states of memories other than the flash (external PSRAM, QSPI). The real parts
with a memory model (memory_model.py: nucleo-l4r5zi, netduinoplus2, stm32f746g-disco, nucleo-u575zi) have
their caches, read width and prefetch simulated instead, on every fetch and load (docs/memory-model.md).

Not modelled at all: stalls on an address computed by the instruction before (3.3.2: "stalls the
pipeline for an additional cycle"), "LDR Rx,[PC,#imm] might add a cycle because of contention with
the fetch unit" (3.3.2), bus contention, interrupts. So the figures bound nothing; they are an
estimate, labelled so wherever they are printed.

Other cores (`estimate(..., cpu=)`; no TRM states their timings, so each model names what it rests on):
- cortex-m33: the Cortex-M4 table above as a proxy. LLVM does the same (llvm/lib/Target/ARM/
  ARMProcessors.td: `ProcessorModel<"cortex-m33", CortexM4Model, ...>`). Not modelled: the M33's
  limited dual issue of 16-bit instructions (so it errs high). No wait-state term.
- cortex-m7: LLVM's Cortex-M7 scheduling model (llvm/lib/Target/ARM/ARMScheduleM7.td): in order, two
  instructions issued a cycle, two load units, one store, MAC, branch, SIMD and VFP unit each, two ALUs;
  load/store multiple and double, TBB/TBH, divides and system instructions issue alone; the DSP/SIMD
  instructions (SXTB16, SADD16, SSAT, PKHBT, BFI, CLZ ...) only in the first slot; mispredicted branch 4
  cycles (its MispredictPenalty). A mix has no order, so the estimate is a range: low, every unit busy
  every cycle (the issue-alone instructions, then the most loaded of: half the other instructions, the
  first-slot ones, the MACs, half the loads, the stores, the branches, the VFP ones) and every branch
  predicted; high, one instruction a cycle, each load stalling its user one cycle (LLVM's LoadLatency 2),
  every taken branch mispredicted (4). Load/store multiple: N/2 (the 64-bit load path) .. 1 + N cycles,
  LDRD/STRD 1 .. 3, TBB/TBH 2 .. 3, divide 7 (LLVM's latency), system instructions 1 .. 3 (LLVM: 3);
  an unaligned load 1 more (two 64-bit accesses), a store 0 .. 1. Not modelled: caches and TCM wait
  states, operand latencies between dependent instructions beyond the load-use one, the branch
  predictor itself. No wait-state term (the record board runs from caches).
"""

from __future__ import annotations

import re

CPUS = ("cortex-m4", "cortex-m33", "cortex-m7")  # the CPUs with a cycle model (module docstring)
WAIT_STATE_CPUS = ("cortex-m4",)  # those whose estimate takes a flash wait-state term
# what each CPU's estimate rests on: a short label for reports, and the source in full
LABELS = {"cortex-m4": "cortex-m4 TRM timings", "cortex-m33": "cortex-m4 TRM timings as a proxy for cortex-m33",
          "cortex-m7": "LLVM's cortex-m7 scheduling model"}
SOURCES = {
    "cortex-m4": "Cortex-M4 TRM (DDI 0439) timings over the executed instruction mix, buildtool/firmware/cycles.py",
    "cortex-m33": "Cortex-M4 TRM (DDI 0439) timings as a proxy (as LLVM schedules cortex-m33 with its Cortex-M4 "
                  "model, ARMProcessors.td; the M33's limited dual issue not modelled), buildtool/firmware/cycles.py",
    "cortex-m7": "LLVM's Cortex-M7 scheduling model (ARMScheduleM7.td: dual issue, its units' throughputs) over the "
                 "executed instruction mix; low: perfect dual issue, high: single issue, load-use stalls, every "
                 "taken branch mispredicted; buildtool/firmware/cycles.py"}
# what the low-high range spans, per CPU (report headers)
RANGES = {"cortex-m4": "pipeline refill 1-3, divide 2-12 cycles, loads and stores pipelined or not",
          "cortex-m7": "perfect dual issue and predicted branches, or single issue, load-use stalls and "
                       "mispredicted branches"}
RANGES["cortex-m33"] = RANGES["cortex-m4"]  # the M4 table, so its ranges
REFILL = "(refill)"
UNALIGNED = {"(unaligned load +1)": (1, 1), "(unaligned load +2)": (2, 2), "(unaligned store +1)": (0, 1),
             "(unaligned store +2)": (0, 2)}  # the plugin's counts of unaligned accesses: extra cycles each
P = (1, 3)  # pipeline refill cycles, low and high

_CONDS = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
_IT = re.compile(r"it[te]{0,3}$")
_FP_SLOW = {"vdiv": (14, 14), "vsqrt": (14, 14), "vmla": (3, 3), "vmls": (3, 3), "vnmla": (3, 3),
            "vnmls": (3, 3), "vfma": (3, 3), "vfms": (3, 3), "vfnma": (3, 3), "vfnms": (3, 3)}


def _registers(text: str) -> int:
    """Words moved by a register list "{r4, r5, pc}" / "{d8-d15}" (a d register is two words)."""
    inner = text[text.index("{") + 1:text.index("}")]
    words = 0
    for item in inner.split(","):
        item = item.strip()
        lo, _, hi = item.partition("-")
        n = int(hi[1:]) - int(lo[1:]) + 1 if hi else 1
        words += n * (2 if lo.startswith("d") else 1)
    return words


def _base(mnemonic: str) -> str:
    """The mnemonic without width qualifier (.w, .n, .f32 ...)."""
    return mnemonic.split(".")[0]


def _memory(m: str, pipelined: str, reg_offset: bool) -> tuple | None:
    """Cycles (low, high) of a single load or store, None if m is not one; pipelined: the key's "+" (after
    a load, address independent of it), "~" (address uses only its written-back base) or ""."""
    if m.startswith(("ldrd", "strd")):
        return 3, 3
    if pipelined and m.startswith(("ldr", "str")):
        return (1, 1) if pipelined == "+" else (1, 2)
    if m.startswith("ldr"):
        return 2, 2
    if m.startswith("str"):
        return (2, 2) if reg_offset else (1, 2)
    return None


def _split(key: str) -> tuple:
    """A mix key's parts: its pipelining prefix ("+", "~" or ""), its text without prefix and " [reg]", whether it
    had " [reg]", and its mnemonic without width qualifier."""
    pipelined = key[:1] if key[:1] in "+~" else ""
    text = key[1:] if pipelined else key
    reg_offset = text.endswith(" [reg]")
    text = text.removesuffix(" [reg]")
    return pipelined, text, reg_offset, _base(text.split(" ")[0])


def key_cycles(key: str, p: tuple = P) -> tuple:
    """(low, high) cycles of one execution of the instruction a mix key names."""
    if key == REFILL:
        return p
    if key in UNALIGNED:
        return UNALIGNED[key]
    pipelined, text, reg_offset, m = _split(key)  # writing pc pays its P through "(refill)"
    mem = _memory(m, pipelined, reg_offset)
    if mem is not None:
        return mem
    if "{" in text:  # LDM, STM, PUSH, POP, VLDM, VSTM, VPUSH, VPOP
        n = 1 + _registers(text)
        return n, n
    if _IT.match(m):
        return 0, 1
    if re.match(rf"[su]div({_CONDS})?$", m):
        return 2, 12
    if re.match(rf"tb[bh]({_CONDS})?$", m):
        return 2, 3
    if m.startswith(("mrs", "msr")):
        return 1, 2
    if m.startswith("v"):
        if m.startswith(("vldr", "vstr")):
            return 2, 2
        for name, c in _FP_SLOW.items():
            if m.startswith(name):
                return c
    return 1, 1


_M7_MAC = re.compile(r"(mul|mla|mls|[su]mull|[su]mlal|umaal|sml|smm|smu)")
_M7_SLOT0 = re.compile(r"(sxt|uxt|[su]h?(add|sub|asx|sax)(8|16)?$|[su]h?(add|sub)(8|16)|u?qd?(add|sub|asx|sax)|"
                       r"sel|[su]sat|usada?8|pkh|rev|rbit|[su]bfx|bf[ci]|clz)")
_M7_BRANCH = re.compile(rf"(b(l|lx|x)?({_CONDS})?|cbn?z)$")
_M7_ALONE = re.compile(r"(mrs|msr|dmb|dsb|isb|svc|bkpt|nop|wf[ei]|yield|sev|cps)")
M7_MISPREDICT = 4  # LLVM ARMScheduleM7.td: MispredictPenalty
M7_UNITS = {"slot0": 1, "mac": 1, "load": 2, "store": 1, "branch": 1, "vfp": 1}  # instructions per cycle


def m7_class(key: str) -> tuple:
    """(kind, low, high) of one mix key on the Cortex-M7 model: kind "alone" (issues by itself: low, high its
    cycles), "extra" (cycles, no instruction), or the unit it issues to ("alu", "slot0", "mac", "load",
    "store", "branch", "vfp"; high its single-issue cycles)."""
    if key == REFILL:
        return "extra", 0, M7_MISPREDICT
    if key in UNALIGNED:
        return "extra", (1 if "load" in key else 0), 1
    _, text, _, m = _split(key)
    if "{" in text:  # LDM, STM, PUSH, POP, VLDM, VSTM, VPUSH, VPOP: 64 bits a cycle at best
        n = _registers(text)
        return "alone", max(1, (n + 1) // 2), 1 + n
    if m.startswith(("ldrd", "strd")):
        return "alone", 1, 3
    if re.match(rf"tb[bh]({_CONDS})?$", m):
        return "alone", 2, 3
    if re.match(rf"[su]div({_CONDS})?$", m):
        return "alone", 7, 7
    if _M7_ALONE.match(m):
        return "alone", 1, 3
    if m.startswith(("ldr", "vldr")):
        return "load", 1, 2
    if m.startswith(("str", "vstr")):
        return "store", 1, 1
    if _M7_BRANCH.match(m):
        return "branch", 1, 1
    if m.startswith("v"):
        for name, c in _FP_SLOW.items():
            if m.startswith(name):
                return "vfp", 1, c[1]
        return "vfp", 1, 1
    if _M7_MAC.match(m):
        return "mac", 1, 1
    if _M7_SLOT0.match(m):
        return "slot0", 1, 1
    return "alu", 1, 1


def _m7_estimate(mix: dict) -> tuple:
    """(low, high) Cortex-M7 cycles of a mix (the module docstring's model)."""
    alone_lo = extra_lo = hi = dual = 0
    units = dict.fromkeys(M7_UNITS, 0)
    for key, n in mix.items():
        kind, a, b = m7_class(key)
        hi += b * n
        if kind == "alone":
            alone_lo += a * n
        elif kind == "extra":
            extra_lo += a * n
        else:
            dual += n
            if kind in units:
                units[kind] += n
    busiest = max([-(-dual // 2)] + [-(-units[k] // M7_UNITS[k]) for k in units])
    return alone_lo + busiest + extra_lo, hi


def estimate(mix: dict, p: tuple = P, flash: dict | None = None, wait_states: int = 0,
             cpu: str = "cortex-m4") -> tuple:
    """(low, high) estimated cycles of an instruction mix {key: executions} on cpu (one of CPUS); with flash
    (the region's flash access counts) and wait_states (WAIT_STATE_CPUS), plus wait_cycles(flash, wait_states)."""
    if cpu not in CPUS:
        raise ValueError(f"no cycle model for {cpu}: one of {', '.join(CPUS)}")
    lo, hi = wait_cycles(flash, wait_states) if flash is not None and wait_states else (0, 0)
    if cpu == "cortex-m7":
        a, b = _m7_estimate(mix)
        return lo + a, hi + b
    for key, n in mix.items():
        a, b = key_cycles(key, p)
        lo += a * n
        hi += b * n
    return lo, hi


def wait_cycles(flash: dict, n: int) -> tuple:
    """(low, high) extra cycles of n wait states on the flash accesses a region made, flash being the
    plugin's counts {"fetches", "branch_fetches", "loads"} (see the module's docstring)."""
    if n < 0:
        raise ValueError(f"flash wait states must be 0 or more, not {n}")
    return n * (flash["branch_fetches"] + flash["loads"]), n * (flash["fetches"] + flash["loads"])


def instructions(mix: dict) -> int:
    """Executed instructions in a mix (every key but the refill and unaligned-access counts)."""
    return sum(n for k, n in mix.items() if k != REFILL and k not in UNALIGNED)


__all__ = ["CPUS", "WAIT_STATE_CPUS", "LABELS", "SOURCES", "RANGES", "REFILL", "UNALIGNED", "P", "m7_class", "key_cycles", "estimate", "wait_cycles", "instructions"]
