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
    # high: the same with the pipelined loads 2, STR imm 2, SDIV 12, IT 1, P = 3
    assert cycles.estimate(mix) == (31, 49)
    assert cycles.instructions(mix) == 16
    assert cycles.key_cycles("+str [reg]") == (1, 2) and cycles.key_cycles("str.w [reg]") == (2, 2)
    assert cycles.key_cycles("iteet") == (0, 1) and cycles.key_cycles("udiv") == (2, 12)
    assert cycles.key_cycles("tbb") == (2, 2) and cycles.key_cycles("vdiv.f32") == (14, 14)
    assert cycles.estimate({"(refill)": 5}, p=(2, 2)) == (10, 10)


def test_mixes_read_and_folded_per_operator():
    """The plugin's mix lines per region; with several invocations, summed per operator."""
    text = "insns_total=9\nmix\t0\t2\tldr\nmix\t1\t3\tadd\nmix\t2\t4\tldr\nmix\t3\t1\tpop {r4, pc}\n"
    mixes = op_cost.read_mixes(text, 4)
    assert mixes == [{"ldr": 2}, {"add": 3}, {"ldr": 4}, {"pop {r4, pc}": 1}]
    assert op_cost.fold(mixes, 2) == [{"ldr": 6}, {"add": 3, "pop {r4, pc}": 1}]


def _loop(tmp_path, options: str) -> tuple:
    """LOOP_S built and run under the plugin with start/end at begin/end plus `options`: (symbol
    addresses, the plugin's out= text)."""
    (tmp_path / "loop.S").write_text(LOOP_S)
    elf = tmp_path / "loop.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-nostartfiles",
                    "-Wl,-Ttext=0", "-Wl,-ereset", "-o", str(elf), str(tmp_path / "loop.S")], check=True)
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    sym = {p[2]: int(p[0], 16) for p in (line.split() for line in nm.splitlines()) if len(p) == 3}
    so = runner._plugin(tmp_path)
    out = tmp_path / "count.txt"
    subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                    "enable=on,target=native", "-kernel", str(elf), "-plugin",
                    f"{so},start={sym['begin']:x},end={sym['end']:x},out={out}{options}"],
                   check=True, capture_output=True, timeout=60)
    return sym, out.read_text()


def test_plugin_counts_the_mix_of_a_known_loop(tmp_path):
    """A hand-written loop whose executed mix is known: 10 iterations of ldr, ldr, str, smlad, subs,
    bne (the first ldr of the first iteration follows the literal load in the same block)."""
    _, text = _loop(tmp_path, ",mix=on")
    (mix,) = op_cost.read_mixes(text, 1)
    assert mix == {"movs": 1, "ldr": 10, "+ldr": 11, "+str": 10, "smlad": 10, "subs": 10, "bne": 10, "bl": 1,
                   "bx": 1, "(refill)": 11}  # refills: the return from begin, 9 back edges, the call of end
    assert runner._key_values(text)["region_counts"] == str(cycles.instructions(mix)) == "64"
    assert cycles.estimate(mix) == (85, 128)  # high: the 21 pipelined loads and stores at 2, 11 refills at 3


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
    assert max(names, key=names.get).startswith("bt_depthwise") and names.get("model_invoke", 0) < 50
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
