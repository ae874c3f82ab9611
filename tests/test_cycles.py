"""Per-operator cost in the run report: the QEMU plugin's instruction mix, the Cortex-M4 cycle
estimate computed from it (buildtool/firmware/cycles.py), instructions per MAC."""

import json
import os
import re
import subprocess

import numpy as np
import pytest

from buildtool.firmware import cycles, op_cost, runner
from buildtool.model.ops import op_macs

MODEL = "/work/shared/models/tiny_cnn_32.tflite"

LOOP_S = """
    .syntax unified
    .thumb
    .text
    .word 0x20001000
    .word reset
    .thumb_func
reset:
    bl begin
    movs r0, #10
    ldr r4, =0x20000100
loop:
    ldr r1, [r4]
    ldr r2, [r4, #4]
    str r2, [r4, #8]
    smlad r3, r1, r2, r3
    subs r0, #1
    bne loop
    bl end
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
    .thumb_func
begin:
    bx lr
    .thumb_func
end:
    bx lr
"""


def test_estimate_of_a_hand_made_mix():
    mix = {"ldr": 3, "+ldr.w": 2, "str": 1, "strb [reg]": 1, "pop {r4, r5, pc}": 1, "sdiv": 1, "it": 1,
           "smlad": 4, "ldrd": 1, "vpush {d8-d9}": 1, "(refill)": 2}
    # low: 3*2 + 2*1 (pipelined) + 1 (STR imm) + 2 + (1+3) + 2 + 0 (IT folded) + 4 + 3 + (1+4) + 2*1 (P=1)
    # high: the same with STR imm 2, SDIV 12, IT 1, P = 3
    assert cycles.estimate(mix) == (31, 47)
    assert cycles.instructions(mix) == 16
    assert cycles.key_cycles("+str [reg]") == (1, 1) and cycles.key_cycles("str.w [reg]") == (2, 2)
    assert cycles.key_cycles("+ldr") == (1, 1) and cycles.key_cycles("ldr") == (2, 2)
    assert cycles.key_cycles("~ldr.w") == (1, 2) and cycles.key_cycles("~str [reg]") == (1, 2)
    assert cycles.key_cycles("iteet") == (0, 1) and cycles.key_cycles("udiv") == (2, 12)
    assert cycles.key_cycles("tbb") == (2, 3) and cycles.key_cycles("vdiv.f32") == (14, 14)
    assert cycles.key_cycles("vfma.f32") == (3, 3)
    # unaligned accesses: counts of extra cycles, not instructions; a store's high only
    extra = {"(unaligned load +1)": 3, "(unaligned load +2)": 1, "(unaligned store +1)": 2, "(unaligned store +2)": 1}
    assert cycles.estimate({**mix, **extra}) == (31 + 3 + 2, 47 + 3 + 2 + 2 + 2)
    assert cycles.instructions({**mix, **extra}) == 16
    assert cycles.estimate({"(refill)": 5}, p=(2, 2)) == (10, 10)


def test_m7_estimate_of_a_hand_made_mix():
    """The Cortex-M7 model (LLVM's ARMScheduleM7.td units): low, the issue-alone instructions plus the busiest
    of half the dual-issuable ones and each unit's count over its width; high, single issue with load-use
    stalls and mispredicted branches."""
    mix = {"smlad": 12, "sxtb16": 4, "ldr.w": 2, "+ldr": 2, "ldm.w r2!, {r8, sb, sl}": 2, "add.w": 2,
           "strb.w": 3, "bne": 1, "(refill)": 1, "sdiv": 1}
    # alone: LDM of 3 (2 .. 4) x 2, SDIV 7; dual-issuable 26 (13 a pair), the MAC unit 12, slot 0 4,
    # loads 4 (2 units: 2), stores 3, branches 1: the busiest 13; refill 0 .. 4
    assert cycles.estimate(mix, cpu="cortex-m7") == (2 * 2 + 7 + 13, 12 + 4 + 4 * 2 + 2 * 4 + 2 + 3 + 1 + 4 + 7)
    macs = {"smlad": 20, "add": 4}  # the MAC unit bounds it: 20, not 12
    assert cycles.estimate(macs, cpu="cortex-m7") == (20, 24)
    assert cycles.estimate({"sxtb16": 6, "add": 6}, cpu="cortex-m7")[0] == 6  # first slot only: 6, a pair each
    assert cycles.m7_class("(unaligned load +2)") == ("extra", 1, 1) and cycles.m7_class("bfi") == ("slot0", 1, 1)
    assert cycles.m7_class("pop {r4, r5, r6, pc}") == ("alone", 2, 5)
    # the M33 prices a mix as the M4 does; a CPU without a model is an error, not a guess
    assert cycles.estimate(mix, cpu="cortex-m33") == cycles.estimate(mix)
    with pytest.raises(ValueError, match="no cycle model for cortex-m55"):
        cycles.estimate(mix, cpu="cortex-m55")


def test_mixes_read_and_folded_per_operator():
    """The plugin's mix lines per region; with several invocations, summed per operator."""
    text = "insns_total=9\nmix\t0\t2\tldr\nmix\t1\t3\tadd\nmix\t2\t4\tldr\nmix\t3\t1\tpop {r4, pc}\n"
    mixes = op_cost.read_mixes(text, 4)
    assert mixes == [{"ldr": 2}, {"add": 3}, {"ldr": 4}, {"pop {r4, pc}": 1}]
    assert op_cost.fold(mixes, 2) == [{"ldr": 6}, {"add": 3, "pop {r4, pc}": 1}]


def _loop(tmp_path, options: str, source: str = LOOP_S, name: str = "loop") -> tuple:
    """LOOP_S (or source) built and run under the plugin with start/end at begin/end plus `options`:
    (symbol addresses, the plugin's out= text)."""
    (tmp_path / f"{name}.S").write_text(source)
    elf = tmp_path / f"{name}.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-mthumb",
                    "-nostdlib", "-nostartfiles", "-Wl,-Ttext=0", "-Wl,-ereset", "-o", str(elf),
                    str(tmp_path / f"{name}.S")], check=True, capture_output=True)
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    sym = {p[2]: int(p[0], 16) for p in (line.split() for line in nm.splitlines()) if len(p) == 3}
    so = runner._plugin(tmp_path)
    out = tmp_path / f"{name}.txt"
    subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                    "enable=on,target=native", "-kernel", str(elf), "-plugin",
                    f"{so},start={sym['begin']:x},end={sym['end']:x},out={out}{options}"],
                   check=True, capture_output=True, timeout=60)
    return sym, out.read_text()


def test_plugin_counts_the_mix_of_a_known_loop(tmp_path):
    """A hand-written loop whose executed mix is known: 10 iterations of ldr, ldr, str, smlad, subs,
    bne. Each ldr [r4, #4] and str [r4, #8] is pipelined (after a load whose destination its address does
    not use); the first ldr [r4] of the first iteration follows the literal load of r4 in the same block, so
    it is not."""
    _, text = _loop(tmp_path, ",mix=on")
    (mix,) = op_cost.read_mixes(text, 1)
    assert mix == {"movs": 1, "ldr": 11, "+ldr": 10, "+str": 10, "smlad": 10, "subs": 10, "bne": 10, "bl": 1,
                   "bx": 1, "(refill)": 11}  # refills: the return from begin, 9 back edges, the call of end
    assert runner._key_values(text)["region_counts"] == str(cycles.instructions(mix)) == "64"
    assert cycles.estimate(mix) == (86, 108)  # the 20 pipelined loads and stores at 1; high: 11 refills at 3


def test_plugin_mix_does_not_move_with_a_1k_page(tmp_path):
    """QEMU ends a translated block at each 1 KB page (M-profile), where nothing branches: the loop placed
    across 0x400 at every halfword offset has the mix it has inside a page (no refill where the page ends,
    the pair ldr/ldr or ldr/str across it still pipelined; 2026-11-27: the block ending before an instruction
    that starts 2 bytes before the page counted a refill after it each pass, a pair split by the page lost
    its "+")."""
    mixes = {}
    for at, wide in [(a, w) for a in (0x3f6, 0x3f8, 0x3fa, 0x3fc, 0x3fe, 0x400) for w in (0, 1)]:
        # the loop's ldr, ldr, str, smlad (32-bit), subs, bne; wide: its str 32-bit (str.w), so that at 0x3f6 a
        # 32-bit instruction ends where the smlad crossing the page starts
        source = LOOP_S.replace("loop:", f".org {at}\nloop:", 1)  # the gap is movs r0, r0 (zeros), run once
        if wide:
            source = source.replace("    str r2, [r4, #8]", "    str.w r2, [r4, #8]")
        (tmp_path / f"{at:x}{wide}").mkdir()
        sym, text = _loop(tmp_path / f"{at:x}{wide}", ",mix=on", source)
        assert sym["loop"] == at
        (mix,) = op_cost.read_mixes(text, 1)
        mix.pop("movs")
        mixes[at, wide] = mix
    for wide in (0, 1):
        assert all(m == mixes[0x400, wide] for (_, w), m in mixes.items() if w == wide), mixes
    assert {k: mixes[0x400, 0][k] for k in ("(refill)", "ldr", "+ldr", "+str")} == {"(refill)": 11, "ldr": 10,
                                                                                      "+ldr": 10, "+str": 10}
    assert {k: mixes[0x400, 1][k] for k in ("(refill)", "ldr", "+ldr", "+str.w")} == {"(refill)": 11, "ldr": 10,
                                                                                        "+ldr": 10, "+str.w": 10}


# Straight-line sequences whose cycles the Cortex-M4 TRM (DDI 0439 r0p1) states, each run between the
# profile markers: (setup, sequence, the TRM's cycles (low, high), where the TRM says so). The estimate
# of a sequence is that of the region minus that of the same region without it (the return from
# begin, the call of end).
TRM_SEQUENCES = [
    ("ldr r1, =0x20000100\n ldr r2, =0x20000104", "ldr r0, [r1]\n ldr r1, [r2]", (3, 3),
     "3.3.2: LDR R0,[R1]; LDR R1,[R2] - normally three cycles total"),
    ("ldr r1, =0x20000100\n movs r2, #8\n ldr r3, =0x20000200", "ldr r0, [r1, r2]\n str r0, [r3, #20]", (3, 3),
     "3.3.2: LDR R0,[R1,R2]; STR R0,[R3,#20] - normally three cycles total"),
    ("ldr r1, =0x20000100\n movs r2, #8\n ldr r3, =0x20000200", "ldr r0, [r1, r2]\n str r1, [r3, r2]", (3, 3),
     "3.3.2: LDR R0,[R1,R2]; STR R1,[R3,R2] - normally three cycles total"),
    ("ldr r1, =0x20000100\n movs r5, #8\n ldr r2, =0x20000104\n ldr r3, =0x20000200",
     "ldr r0, [r1, r5]\n ldr r1, [r2]\n ldr r2, [r3, #4]", (4, 4),
     "3.3.2: LDR R0,[R1,R5]; LDR R1,[R2]; LDR R2,[R3,#4] - normally four cycles total"),
    ("ldr r1, =0x20000100", "ldr r0, [r1]\n ldr r2, [r0]", (4, 4),
     "3.3.2: one cycle removed only if the destination of the first LDR is not used to compute the address "
     "for the next instruction: here it is (2 + 2)"),
    ("ldr r1, =0x20000100\n ldr r3, =0x20000200", "ldr r2, [r1]\n ldr r0, [r3, r2]", (4, 4),
     "3.3.2: the first LDR's destination is the next address's offset register: no cycle removed (2 + 2)"),
    ("ldr r1, =0x20000100", "ldr r0, [r1], #4\n ldr r2, [r1]", (3, 4),
     "3.3.2 and Table 3-1: a written-back base read by the next address: pipelined 3, or not 4 (the TRM "
     "names only the destination)"),
    ("ldr r1, =0x20000100", "str r0, [r1, #4]", (1, 1), "3.3.2: STR Rx,[Ry,#imm] is always one cycle"),
    ("ldr r0, =0x20000100", "ldm r0, {r1, r2, r3, r4}", (5, 5), "Table 3-1: LDM, 1 + N, N = 4"),
    ("", "push {r4, r5, r6, r7, lr}", (6, 6), "Table 3-1: PUSH, 1 + N, N = 5"),
    ("ldr r1, =0x20000100", "ldrd r2, r3, [r1]", (3, 3), "Table 3-1: LDRD, 1 + N, N = 2"),
    ("", "b 1f\n nop\n1:", (2, 4), "Table 3-1: B, 1 + P, P = 1 to 3"),
    ("movs r0, #0", "cmp r0, #0\n bne 1f\n nop\n1:", (3, 3),
     "Table 3-1: CMP 1, conditional branch not taken 1, NOP 1"),
    ("movs r0, #0", "tbb [pc, r0]\n.byte 1, 0\n1:", (3, 6),
     "Table 3-1: TBB 2 + P (3 to 5); 3.3.2: TBB at least six cycles"),
    ("movs r0, #100\n movs r1, #7", "sdiv r2, r0, r1", (2, 12), "Table 3-1: SDIV 2 to 12"),
    ("ldr r1, =0x20000102", "ldr r0, [r1]", (3, 3), "3.3.2: a halfword-aligned word load, two halfwords: 2 + 1"),
    ("ldr r1, =0x20000101", "ldr r0, [r1]", (4, 4),
     "3.3.2: a byte-aligned word load, a byte, a halfword and a byte: 2 + 2"),
    ("ldr r1, =0x20000103", "ldrsh r0, [r1]", (3, 3), "3.3.2: a byte-aligned halfword load, two bytes: 2 + 1"),
    ("ldr r1, =0x20000100", "ldr r0, [r1, #2]\n ldr r2, [r1, #5]", (6, 6),
     "3.3.2: a pipelined pair (3), its first word halfword-aligned (+ 1), its second byte-aligned (+ 2)"),
    ("ldr r1, =0x20000101", "str r0, [r1, #1]", (2, 2), "3.3.2: STR Rx,[Ry,#imm] one cycle, + 1 as two halfwords"),
]

SEQ_S = """
    .syntax unified
    .thumb
    .text
    .word 0x20001000
    .word reset
    .thumb_func
reset:
    {setup}
    bl begin
    {sequence}
    bl end
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
    .thumb_func
begin:
    bx lr
    .thumb_func
end:
    bx lr
    .ltorg
"""


def _sequence_estimate(tmp_path, setup: str, sequence: str, name: str) -> tuple:
    _, text = _loop(tmp_path, ",mix=on", SEQ_S.format(setup=setup, sequence=sequence), name)
    (mix,) = op_cost.read_mixes(text, 1)
    return cycles.estimate(mix), mix


@pytest.mark.parametrize("k", range(len(TRM_SEQUENCES)))
def test_estimate_contains_the_trm_cycles_of_a_sequence(tmp_path, k):
    """Each sequence assembled and run in QEMU under the plugin: the estimate's low..high holds the
    cycles the TRM states for it (a single count, or the TRM's own range with P = 1..3)."""
    setup, sequence, (trm_lo, trm_hi), where = TRM_SEQUENCES[k]
    (lo, hi), mix = _sequence_estimate(tmp_path, setup, sequence, "seq")
    (lo0, hi0), _ = _sequence_estimate(tmp_path, setup, "", "empty")
    assert lo - lo0 <= trm_lo and trm_hi <= hi - hi0, (where, mix, (lo - lo0, hi - hi0))


def test_plugin_counts_flash_accesses_of_a_known_loop(tmp_path):
    """flash=ORIGIN:SIZE: LOOP_S runs from 0 (the "flash"), its loads from RAM. Fetched words: the
    block after the return from begin (0xc..0x1e: 5 words), nine back edges (0x10..0x1e: 4 words),
    the block of "bl end" (0x1e..0x22, its first word already fetched: 1) and end's (1): 43; branch
    fetches: the 11 refills, every target in flash; loads from flash: the literal of "ldr r4, =...".
    The same run with RAM given as the range: no fetches, the 20 loads of the loop."""
    sym, text = _loop(tmp_path, ",mix=on,flash=0:400000")
    assert (sym["loop"], sym["begin"], sym["end"]) == (0x10, 0x28, 0x2a)  # the addresses the counts assume
    (mix,) = op_cost.read_mixes(text, 1)
    (fl,) = op_cost.read_flash(text, 1)
    assert fl == {"fetches": 43, "branch_fetches": 11, "loads": 1}
    assert cycles.estimate(mix, flash=fl, wait_states=0) == cycles.estimate(mix) == (86, 108)
    # low: + 2 x (11 branch fetches + 1 load); high: + 2 x (43 fetched words + 1 load)
    assert cycles.estimate(mix, flash=fl, wait_states=2) == (86 + 24, 108 + 88)
    assert cycles.wait_cycles(fl, 5) == (60, 220)
    with pytest.raises(ValueError):
        cycles.wait_cycles(fl, -1)
    _, text = _loop(tmp_path, ",mix=on,flash=20000000:400000")
    assert op_cost.read_flash(text, 1) == [{"fetches": 0, "branch_fetches": 0, "loads": 20}]
    _, text = _loop(tmp_path, ",mix=on")  # without flash=: no flash lines, the rest unchanged
    assert "flash\t" not in text and op_cost.read_mixes(text, 1) == [mix]


def test_plugin_counts_every_instruction_address_of_a_known_loop(tmp_path):
    """pcs=FILE: each instruction of the loop body executed 10 times at its own address (Thumb: the
    smlad is 4 bytes, the others 2), the counts adding up to the whole run, and the runner's fold
    into functions by symbol address and size."""
    pcs_file = tmp_path / "pcs.txt"
    sym, text = _loop(tmp_path, f",pcs={pcs_file}")
    pcs = [(int(a, 16), int(n)) for a, n in (line.split("\t") for line in pcs_file.read_text().splitlines())]
    assert [a for a, _ in pcs] == sorted({a for a, _ in pcs})  # one line per address, in order
    loop = sym["loop"]
    assert [(a - loop, n) for a, n in pcs if loop <= a < loop + 14] == [(0, 10), (2, 10), (4, 10), (6, 10),
                                                                         (10, 10), (12, 10)]
    assert sum(n for _, n in pcs) == int(runner._key_values(text)["insns_total"])
    table = {"reset": (sym["reset"], loop - sym["reset"]), "body": (loop, 14), "begin": (sym["begin"], 2)}
    fns = dict(runner._by_function(table, ~0, pcs))
    assert fns["body"] == 60 and fns["begin"] == 1  # the whole loop; begin's bx once
    assert fns["reset"] == 3  # bl begin, movs, the literal ldr
    assert sum(fns.values()) == sum(n for _, n in pcs)  # the rest under "?ADDR" names, none lost


@pytest.fixture(scope="module")
def m4_run(tmp_path_factory):
    """One cortex-m4 build and run of tiny_cnn_32 through the CLI: its report and profile."""
    from buildtool import pipeline

    tmp = tmp_path_factory.mktemp("m4")
    x = np.random.default_rng(13).integers(-128, 128, (1, 32, 32, 3)).astype(np.int8)
    np.save(tmp / "x.npy", x)
    proc = subprocess.run(["python3", "-c", "import sys; from buildtool.cli import main; sys.exit(main(sys.argv[1:]))",
                           "run", "--board", "cortex-m4", "--build-dir", str(tmp / "fw"), "--input", str(tmp / "x.npy"),
                           "--output", str(tmp / "y.npy"), MODEL],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    y, prof, _ = runner.run("cortex-m4", tmp / "fw", x, functions=True)
    assert np.array_equal(y, np.load(tmp / "y.npy"))
    return (proc.stderr, prof, pipeline.read_model(MODEL).graph, json.loads((tmp / "fw" / "firmware.json").read_text()),
            (tmp / "fw", x))


def test_m4_profile_has_mix_and_estimate(m4_run):
    _, prof, g, man, _ = m4_run
    assert man["macs"] == [op_macs(g, g.operators[i]) for i in man["order"]]
    assert prof["cycles_model"].startswith("cortex-m4")
    for o, macs in zip(prof["ops"], man["macs"]):
        assert o["macs"] == macs
        assert cycles.instructions(o["mix"]) == o["count"]  # the per-key counters against the block counter
        assert o["cycles_estimate"] == list(cycles.estimate(o["mix"]))
        lo, hi = o["cycles_estimate"]
        assert o["count"] - o["mix"].get("it", 0) <= lo < hi <= 4 * o["count"]
    conv = prof["ops"][0]
    assert conv["opcode"] == "CONV_2D" and conv["mix"].get("smlad", 0) > 0  # the patch-matrix kernel's MACs


def test_m4_profile_by_function(m4_run):
    """runner.run(functions=True): every instruction of the run in exactly one function, most first,
    the per-operator counts unchanged; the model's code among them by name."""
    _, prof, _, _, _ = m4_run
    fns = prof["functions"]
    assert sum(n for _, n in fns) == prof["total"] == sum(n for _, n in prof["addresses"])
    assert [n for _, n in fns] == sorted((n for _, n in fns), reverse=True)
    names = dict(fns)
    assert names.get("model_invoke", 0) > 0 and not any(k.startswith("?") for k, _ in fns[:5])
    assert sum(o["count"] for o in prof["ops"]) < prof["total"]  # the operators are part of the run


def test_m4_profile_of_one_region(m4_run):
    """runner.run(functions=True, region=k) (the plugin's pcs_region): the functions of the k-th operator
    only, adding up to exactly that operator's count; the whole run's profile is the sum over more."""
    _, whole, _, man, (fw, x) = m4_run
    k = man["opcodes"].index("DEPTHWISE_CONV_2D")
    _, prof, _ = runner.run("cortex-m4", fw, x, functions=True, region=k)
    assert [o["count"] for o in prof["ops"]] == [o["count"] for o in whole["ops"]]
    assert sum(n for _, n in prof["functions"]) == prof["ops"][k]["count"] < whole["total"]
    names = dict(prof["functions"])
    # the hottest function is the depthwise kernel's (bt_depthwise_*, its static dw_* helpers or its asm loops
    # bt_dw* in cortex-m/depthwise.c), and the model's own code around the call is a few instructions
    assert max(names, key=names.get).startswith(("bt_depthwise", "dw_", "bt_dw")) and names.get("model_invoke", 0) < 50
    assert not any(f.startswith(("bt_conv", "bt_fully")) for f in names)
    assert all(n <= dict(whole["functions"])[f] for f, n in names.items())


def test_m4_report_prints_per_mac_and_labelled_estimate(m4_run):
    report, prof, _, _, _ = m4_run
    assert "cycles are an ESTIMATE from the instruction mix (cortex-m4 TRM timings, zero wait states" in report
    for o in prof["ops"]:
        line = next(ln for ln in report.splitlines() if re.match(rf"\s+op\s+{o['op']}\s+{o['opcode']}\s", ln))
        lo, hi = o["cycles_estimate"]
        assert f"est. cycles {lo:,}-{hi:,}" in line
        if o["macs"]:
            assert f"{o['count'] / o['macs']:.2f} insns/MAC" in line
        else:
            assert "/MAC" not in line
    total = (sum(o["cycles_estimate"][0] for o in prof["ops"]), sum(o["cycles_estimate"][1] for o in prof["ops"]))
    assert f"estimated {total[0]:,}-{total[1]:,} cycles" in report


def test_m4_profile_with_flash_wait_states(m4_run):
    """runner.run(flash_wait_states=N): the same output and instruction mixes; per operator its flash
    accesses (code fetched from flash, weights and constants read there) and the estimate plus N
    cycles on each (cycles.wait_cycles); the report's label names the wait states."""
    _, whole, _, _, (fw, x) = m4_run
    y0, _, _ = runner.run("cortex-m4", fw, x)
    y, prof, ram = runner.run("cortex-m4", fw, x, flash_wait_states=3)
    assert np.array_equal(y, y0)
    assert prof["cycles_model"] == "cortex-m4 TRM timings, 3 flash wait states on code and data read from flash"
    for o, o0 in zip(prof["ops"], whole["ops"]):
        assert o["count"] == o0["count"] and o["mix"] == o0["mix"]
        fl = o["flash_accesses"]
        assert o["cycles_estimate"] == list(cycles.estimate(o["mix"], flash=fl, wait_states=3))
        assert 0 < fl["branch_fetches"] <= fl["fetches"] <= o["count"]  # code runs from flash; a word holds 1-2
        assert fl["fetches"] >= o["count"] // 2
        if o["macs"]:
            assert fl["loads"] > 0  # the weights are in flash
        lo0, hi0 = o0["cycles_estimate"]
        assert o["cycles_estimate"] == [lo0 + 3 * (fl["branch_fetches"] + fl["loads"]),
                                        hi0 + 3 * (fl["fetches"] + fl["loads"])]
    report = runner.format_report(prof, ram)
    assert "3 flash wait states on code and data read from flash" in report
    _, prof0, _ = runner.run("cortex-m4", fw, x, flash_wait_states=0)  # counted, nothing added
    assert [o["cycles_estimate"] for o in prof0["ops"]] == [o["cycles_estimate"] for o in whole["ops"]]
    assert "zero wait states" in prof0["cycles_model"]


@pytest.mark.parametrize("args, message", [
    (["--board", "cortex-m4", "--flash-wait-states", "-1"], "--flash-wait-states must be 0 or more, not -1"),
    (["--board", "cortex-m7", "--flash-wait-states", "2"], "cortex-m7 (cortex-m7) has no wait-state estimate"),
    (["--board", "host", "--flash-wait-states", "2"], "host"),
    (["--flash-wait-states", "2"], "give --board"),
    (["--board", "nosuch", "--flash-wait-states", "2"], "unknown board 'nosuch'"),
])
def test_flash_wait_states_bad_input_is_one_line(tmp_path, capsys, args, message):
    """Checked before anything is built: one line, exit 2."""
    from buildtool.cli import main

    np.save(tmp_path / "x.npy", np.zeros((1, 32, 32, 3), np.int8))
    rc = main(["run", "--input", str(tmp_path / "x.npy"), "--build-dir", str(tmp_path / "fw"), *args, MODEL])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and message in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "fw").exists()


def test_mlperf_benchmark_with_flash_wait_states(tmp_path):
    """benchmarks/mlperf_tiny.py --flash-wait-states N: the zero-wait estimate unchanged, a column
    with the estimate at N wait states beside it (boards with a cycle model); bad arguments one line."""
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    import mlperf_tiny as mt

    if not (mt.MLPERF / "records.json").is_file():
        pytest.skip(f"no MLPerf Tiny models in {mt.MLPERF}")
    r0 = mt.measure("ad", "cortex-m4", tmp_path / "a", {})
    r = mt.measure("ad", "cortex-m4", tmp_path / "b", {}, 4)
    assert r["identical"] and r["insns"] == r0["insns"] and r["cycles"] == r0["cycles"]
    assert r0["cycles_ws"] is None
    waits = [cycles.wait_cycles(o["flash_accesses"], 4) for o in r["ops"]]
    assert r["cycles_ws"] == (r0["cycles"][0] + sum(w[0] for w in waits), r0["cycles"][1] + sum(w[1] for w in waits))
    text = mt.table("cortex-m4", {"ad": r}, 4)
    assert "est. cycles, 4 flash wait states" in text and "4 flash wait states: N cycles more" in text
    row = next(x for x in text.splitlines() if x.startswith("| ad01_int8 |"))
    assert f"{r['cycles_ws'][0] / 1e6:.3f} M-{r['cycles_ws'][1] / 1e6:.3f} M" in row and row.endswith("| yes |")
    assert mt.table("cortex-m4", {"ad": r0}) == mt.table("cortex-m4", {"ad": r0}, None)  # no option: as before
    assert "wait states" not in mt.table("cortex-m4", {"ad": r0})

    class A:
        boards, models, flash_wait_states = "cortex-m4", "ad", -1
    assert mt.bad_arguments(A) == "--flash-wait-states must be 0 or more, not -1"
    A.flash_wait_states, A.boards = 2, "cortex-m9"
    assert mt.bad_arguments(A).startswith("unknown board 'cortex-m9'")
    A.boards, A.models = "cortex-m4", "zz"
    assert mt.bad_arguments(A).startswith("unknown model 'zz'")
    A.models = "ad"
    assert mt.bad_arguments(A) == ""
