"""Estimated Cortex-M4 cycles from an executed-instruction mix: a table lookup, not a measurement.

The mix is what the QEMU plugin (`tools/qemu-insncount`, `mix=on`) reports per profiled region:
{key: executions}, a key being an instruction's mnemonic ("smlad", "ldr.w"), its whole text when it
writes pc or moves a register list ("pop {r4, pc}"), "+" in front of a single load or store that
directly follows a single load, " [reg]" after one with a register-offset address, and
"(refill)" counting pipeline refills (blocks entered elsewhere than after the previous block).

Timings are the Arm Cortex-M4 Technical Reference Manual's (DDI 0439, "Instruction set summary"
and "Load/store timings"), with P, the pipeline refill, 1..3 cycles:

| instructions | cycles |
|---|---|
| data processing, multiply and multiply-accumulate (MUL, MLA, SMLAL, SMLAD ...), SIMD, saturate, extend | 1 |
| IT | 0 (folded onto the instruction before) .. 1 |
| SDIV, UDIV | 2 .. 12 |
| LDR (any size) | 2; right after a single load 1 (pipelined) .. 2 (a base update, a dependent address) |
| STR with an immediate offset | 1 .. 2; right after a single load 1 .. 2 |
| STR with a register offset | 2; right after a single load 1 .. 2 |
| LDRD, STRD | 1 + N = 3 |
| LDM, STM, PUSH, POP (and VLDM, VSTM, VPUSH, VPOP) | 1 + N (N registers, words for VFP) |
| branches, CBZ/CBNZ | 1, + P when taken |
| TBB, TBH | 2 + P |
| writing pc (POP {..., pc}, LDR pc, MOV pc, BX) | the above, + P |
| MRS, MSR | 1 .. 2 |
| VDIV, VSQRT | 14 |
| VMLA, VMLS, VNMLA, VNMLS | 3 |
| other VFP | 1; VLDR, VSTR 2 |

Every taken branch, call, return or exception entry is one "(refill)": + P each, P = 1 (low) ..
3 (high). Not modelled: wait states (the estimate assumes zero-wait-state memory, as the MPS2
SSRAM), stalls on an address computed by the instruction before, bus contention. So the figures
bound nothing; they are an estimate, labelled so wherever they are printed.
"""

from __future__ import annotations

import re

CPUS = ("cortex-m4",)  # the CPUs this table describes
REFILL = "(refill)"
P = (1, 3)  # pipeline refill cycles, low and high

_CONDS = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
_IT = re.compile(r"it[te]{0,3}$")
_FP_SLOW = {"vdiv": (14, 14), "vsqrt": (14, 14), "vmla": (3, 3), "vmls": (3, 3), "vnmla": (3, 3),
            "vnmls": (3, 3)}


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


def _memory(m: str, pipelined: bool, reg_offset: bool) -> tuple | None:
    """Cycles (low, high) of a single load or store, None if m is not one."""
    if m.startswith(("ldrd", "strd")):
        return 3, 3
    if pipelined and m.startswith(("ldr", "str")):
        return 1, 2
    if m.startswith("ldr"):
        return 2, 2
    if m.startswith("str"):
        return (2, 2) if reg_offset else (1, 2)
    return None


def key_cycles(key: str, p: tuple = P) -> tuple:
    """(low, high) cycles of one execution of the instruction a mix key names."""
    if key == REFILL:
        return p
    pipelined = key.startswith("+")
    text = key.lstrip("+")
    reg_offset = text.endswith(" [reg]")
    text = text.removesuffix(" [reg]")
    m = _base(text.split(" ")[0])  # writing pc pays its P through "(refill)"
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
        return 2, 2
    if m.startswith(("mrs", "msr")):
        return 1, 2
    if m.startswith("v"):
        if m.startswith(("vldr", "vstr")):
            return 2, 2
        for name, c in _FP_SLOW.items():
            if m.startswith(name):
                return c
    return 1, 1


def estimate(mix: dict, p: tuple = P) -> tuple:
    """(low, high) estimated cycles of an instruction mix {key: executions}."""
    lo = hi = 0
    for key, n in mix.items():
        a, b = key_cycles(key, p)
        lo += a * n
        hi += b * n
    return lo, hi


def instructions(mix: dict) -> int:
    """Executed instructions in a mix (every key but the refill count)."""
    return sum(n for k, n in mix.items() if k != REFILL)


__all__ = ["CPUS", "REFILL", "P", "key_cycles", "estimate", "instructions"]
