"""The part memory model (buildtool/firmware/memory_model.py, the insncount plugin's mem= option): hand-made
sequences run in QEMU under the plugin, their stalls worked out by hand; a part's modelled cycles in the run
report."""

import dataclasses
import json
import subprocess

import numpy as np
import pytest
from conftest import fixed_input, tflm_run
from test_cycles import LOOP_S, _loop

from buildtool import pipeline, targets, zoo
from buildtool.firmware import memory_model, op_cost, runner
from buildtool.model.ops import op_macs
from buildtool.model.writer import serialize
from buildtool.options import PlanOptions
from buildtool.pipeline.fit import fit_table
from buildtool.plan.arena.planner import plan_arena

# test_cycles' LOOP_S around its loop: the vector table and the call of begin; the call of end, the exit, begin, end
HEAD = LOOP_S[:LOOP_S.index("    bl begin\n") + len("    bl begin\n")]
EXIT = LOOP_S[LOOP_S.index("    bl end\n"):]

# a loop of 28 bytes at 0x40 (12 adds, subs, bne: 14 halfword instructions), run 10 times: with 8-byte flash
# reads it occupies the reads at 0x40, 0x48, 0x50 (4 instructions each) and 0x58 (subs, bne); "bl end"
# (0x5c) shares 0x58
LOOP = HEAD + """    movs r0, #10
    b loop
    .balign 64
loop:
""" + "    adds r1, #1\n" * 12 + """    subs r0, #1
    bne loop
""" + EXIT

# a weight stream: two passes over a 256-byte table in flash, 64 word loads each (post-indexed, in order)
STREAM = HEAD + """    movs r5, #2
pass:
    adr r4, table
    movs r0, #64
word:
    ldr r1, [r4], #4
    subs r0, #1
    bne word
    subs r5, #1
    bne pass
""" + EXIT + """
    .balign 64
table:
    .space 256
"""


def _stalls(tmp_path, source: str, mem: str, name: str) -> dict:
    sym, text = _loop(tmp_path, f",mix=on,flash=0:400000,{mem}", source, name)
    (st,) = memory_model.read_stalls(text, 1)
    return sym, st


def test_a_loop_that_fits_the_instruction_cache(tmp_path):
    """5 wait states, 8-byte reads, an 8-line instruction cache of 8-byte lines, no prefetch. begin (0x66) and end
    (0x68) sit in the reads at 0x60 and 0x68. Before the region "bl begin" (read 0x08) and begin's read 0x60 were
    fetched and cached. In it: the return to 0x0c is read 0x08 (a hit); the first pass misses on 0x40, 0x48,
    0x50, 0x58 (4 x 5 cycles); the 9 passes after hit (6 lines cached of 8); "bl end" is in the read the fetch
    unit holds; end's read 0x68 misses. 5 misses, 25 cycles."""
    sym, st = _stalls(tmp_path, LOOP, "mem=5:8:8:8:8:0:0:0:0", "fits")
    assert (sym["loop"], sym["begin"], sym["end"]) == (0x40, 0x66, 0x68)  # the addresses the counts assume
    assert st == {"fetch_stalls": 25, "load_stalls": 0, "fetch_misses": 5, "load_misses": 0}


def test_a_loop_that_does_not_fit_the_instruction_cache(tmp_path):
    """The same loop with 2 lines (LRU): every pass misses on its 4 reads (each evicts the one read two before),
    10 x 4, and end's read 0x68: 41 misses, 205 cycles. With sequential prefetch, a read after the one
    executing waits 5 + 1 less the 4 instructions executed from that one: 2 cycles for 0x48, 0x50 and 0x58,
    5 for 0x40 (a taken branch), a pass 11 cycles; 10 passes and end's 5: 115."""
    _, st = _stalls(tmp_path, LOOP, "mem=5:8:2:8:2:0:0:0:0", "overflows")
    assert st == {"fetch_stalls": 205, "load_stalls": 0, "fetch_misses": 41, "load_misses": 0}
    _, st = _stalls(tmp_path, LOOP, "mem=5:8:2:8:2:0:0:0:1", "prefetch")
    assert st == {"fetch_stalls": 115, "load_stalls": 0, "fetch_misses": 41, "load_misses": 0}
    # one line of 16 bytes (two 8-byte reads, filled a read at a time): each read misses once a pass as before,
    # end's 0x68 too (its line 0x60 holds begin's read only), and the return's read 0x08 (begin's line took the
    # one line): 42
    _, st = _stalls(tmp_path, LOOP, "mem=5:8:1:16:1:0:0:0:0", "halves")
    assert st["fetch_misses"] == 42


def test_a_weight_stream_through_the_data_cache(tmp_path):
    """Two passes of 64 word loads over a 256-byte table: 32 reads of 8 bytes a pass. A data cache of two
    16-byte lines holds 32 bytes: each read misses in both passes, 64 x 5 = 320 cycles (the instruction side
    cached: no load stall from code). A 256-byte data cache (16 lines of 16 bytes) keeps the table: only the
    first pass misses, 32 x 5 = 160. The table is the weights' floor: 32 reads of 5 + 1 cycles = 192."""
    sym, st = _stalls(tmp_path, STREAM, "mem=5:8:64:8:64:2:16:2:0", "stream")
    assert sym["table"] % 64 == 0
    assert (st["load_stalls"], st["load_misses"]) == (320, 64)
    _, st = _stalls(tmp_path, STREAM, "mem=5:8:64:8:64:16:16:16:0", "reuse")
    assert (st["load_stalls"], st["load_misses"]) == (160, 32)
    # one cache for both sides (unified): the loads go through the 64-line instruction cache, which keeps them
    _, st = _stalls(tmp_path, STREAM, "mem=5:8:64:8:64:0:0:0:2", "unified")
    assert (st["load_stalls"], st["load_misses"]) == (160, 32)
    model = memory_model.get("nucleo-l4r5zi")
    assert dataclasses.replace(model, read_bytes=8, wait_states=5).stream_floor(256) == 192


def test_mem_needs_flash_and_reads_no_stalls_elsewhere(tmp_path):
    """Without flash= the plugin keeps no memory model (no mem lines); code and data in RAM never stall."""
    _, text = _loop(tmp_path, ",mix=on,mem=5:8:2:8:2:0:0:0:0", LOOP, "noflash")
    assert "mem\t" not in text
    _, text = _loop(tmp_path, ",mix=on,flash=20000000:400000,mem=5:8:2:8:2:0:0:0:0", LOOP, "ram")
    assert memory_model.read_stalls(text, 1) == [dict(fetch_stalls=0, load_stalls=0, fetch_misses=0, load_misses=0)]


# code run from SRAM on the System bus: a loop at 0x40 of two 32-bit instructions (ldr.w of a word in the same
# range, smlad), each alone in its word, then adds, adds and subs, bne (two a word), run 10 times
SBUS_LOOP = HEAD + """    movs r0, #10
    adr r4, table
    b loop
    .balign 64
loop:
    ldr.w r1, [r4]
    smlad r2, r1, r1, r2
    adds r3, #1
    adds r3, #1
    subs r0, #1
    bne loop
""" + EXIT + """
    .balign 64
table:
    .word 0
"""


def test_code_from_sram_on_the_system_bus(tmp_path):
    """sbus=0:400000 makes the code (at 0) System-bus SRAM, flash= elsewhere. Word by word (the Cortex-M4 TRM's
    System interface: a fetch every other cycle, data first): begin's word 0x58 is fetched before the region. The
    return to 0x0c (movs, adr) is a taken branch, 1; 0x10 (b) follows a word of two instructions, 0. A pass: 0x40
    (ldr.w) reached by a branch, 1, its load of table (0x80, in the range) holding off a fetch, 1; 0x44 (smlad)
    after a word of one instruction, 1; 0x48 (adds, adds) after one, 1; 0x4c (subs, bne) after two, 0: 4 a pass,
    40. The fall-through to 0x50 (bl end) after two, 0; end's 0x5c a branch, 1. In all 42, no flash misses. The
    same run without sbus=: no stall (SRAM at zero wait states for data and code alike, as before)."""
    sym, st = _loop(tmp_path, ",mix=on,flash=20000000:400000,mem=5:8:32:32:32:8:32:8:1,sbus=0:400000",
                    SBUS_LOOP, "sbus")
    assert (sym["loop"], sym["begin"], sym["end"], sym["table"]) == (0x40, 0x5a, 0x5c, 0x80)
    assert memory_model.read_stalls(st, 1) == [dict(fetch_stalls=42, load_stalls=0, fetch_misses=0, load_misses=0)]
    _, st = _loop(tmp_path, ",mix=on,flash=20000000:400000,mem=5:8:32:32:32:8:32:8:1", SBUS_LOOP, "nosbus")
    assert memory_model.read_stalls(st, 1) == [dict(fetch_stalls=0, load_stalls=0, fetch_misses=0, load_misses=0)]
    # the data access counts only while executing from the range: the same loop with its table outside it
    # (sbus=0:80, table at 0x80) waits 10 cycles less
    _, st = _loop(tmp_path, ",mix=on,flash=20000000:400000,mem=5:8:32:32:32:8:32:8:1,sbus=0:80", SBUS_LOOP, "out")
    assert memory_model.read_stalls(st, 1)[0]["fetch_stalls"] == 32


def test_every_part_model_names_its_sources():
    """The four parts of issue 49, each with its manual's sections and the choices it makes; the plugin option
    carries the figures the summary names."""
    assert set(memory_model.MODELS) == {"nucleo-l4r5zi", "netduinoplus2", "stm32f746g-disco", "nucleo-u575zi"}
    for name, m in memory_model.MODELS.items():
        t = targets.get(name)
        assert m.clock_hz == t.clock_hz and "§" in m.source and m.choices
        ws, rb = m.plugin_option().removeprefix("mem=").split(":")[:2]
        assert f"{ws} flash wait states" in m.summary() and f"{8 * int(rb)}-bit" in m.summary()
    l4 = memory_model.get("nucleo-l4r5zi")
    # RM0432: 5 WS at 120 MHz, 1 KB I, 256 B D, 64-bit; SRAM1-3 (640 KB at 0x20000000) on the System bus
    assert l4.plugin_option() == "mem=5:8:32:32:32:8:32:8:1,sbus=20000000:a0000"
    assert memory_model.get("cortex-m4") is None


@pytest.mark.slow
def test_part_run_prints_modelled_cycles(tmp_path):
    """nucleo-l4r5zi's own firmware on QEMU's mps2-an386 (its flash linked at the part's boot alias 0): bit-exact,
    every operator's modelled cycles its zero-wait high plus its stalls, the code at the alias fetched as flash
    (misses), the report's line naming the model."""
    g = zoo.build("tiny")
    pipeline.build(g, "nucleo-l4r5zi", tmp_path)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, prof, ram = runner.run("nucleo-l4r5zi", tmp_path, x, timeout=600)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])
    for o in prof["ops"]:
        s = o["memory_stalls"]
        assert o["modelled_cycles"] == o["cycles_estimate"][1] + s["fetch_stalls"] + s["load_stalls"]
        assert s["fetch_misses"] > 0
    report = runner.format_report(prof, ram)
    total = sum(o["modelled_cycles"] for o in prof["ops"])
    assert f"modelled cycles (nucleo-l4r5zi, 120 MHz, 5 flash wait states, 64-bit flash reads, ART accelerator " \
           in report and f"): {total:,}   zero-wait estimate: " in report
    assert targets.get("nucleo-l4r5zi").flash_origin == 0 and "mps2-an386" in targets.get("nucleo-l4r5zi").run


def test_fit_latency_on_a_part_adds_its_stalls_per_mac():
    """static_cycles(board=) adds the part's MEMORY_STALLS_PER_MAC to each layer's cycles per MAC; `buildtool
    fit` prices nucleo-l4r5zi so and says so (its JSON's latency "memory_model"); another board is unchanged."""
    g = zoo.build("tiny")
    plan = plan_arena(g)
    base = op_cost.static_cycles(g, plan, "cortex-m4")
    part = op_cost.static_cycles(g, plan, "cortex-m4", board="nucleo-l4r5zi")
    st = op_cost.MEMORY_STALLS_PER_MAC["nucleo-l4r5zi"]
    extra = [0.0, 0.0]
    for op in g.operators:
        cls = op_cost.layer_class(g, op)
        if cls and op_macs(g, op):
            extra = [extra[0] + op_macs(g, op) * st[cls][0], extra[1] + op_macs(g, op) * st[cls][1]]
    # each side rounded once: the sums agree to the cycle
    assert all(abs(p - (b + e)) <= 1 for p, b, e in zip(part, base, extra)) and part[1] > base[1] + 1000
    assert op_cost.static_cycles(g, plan, "cortex-m4", board="cortex-m4") == base
    rows = {r.board: r for r in fit_table(g, boards=["nucleo-l4r5zi", "cortex-m4"])}
    assert rows["nucleo-l4r5zi"].cycles == part and rows["nucleo-l4r5zi"].to_json()["latency"]["memory_model"]
    assert "memory_model" not in rows["cortex-m4"].to_json()["latency"]


@pytest.mark.slow
def test_mlperf_ad01_on_the_record_board_and_its_weight_floor(tmp_path):
    """mlperf_tiny.measure on nucleo-l4r5zi: ad01 byte-identical to TFLite Micro, its modelled cycles the
    operators' sum, its weight floor the weights image in 64-bit reads of 5 + 1 cycles, its load stalls at least
    5 per 64-bit read of the weights left in flash (each read once, the 256-byte data cache holds none of them
    twice) and fewer than 5 per read of the whole image (the dense layers staged once in SRAM, firmware/staging.py:
    plan.json "staged", copied by model_init, read at zero wait states), the 128-bit reading faster; the table
    prints the modelled / record ratio it computes."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import mlperf_tiny as mt

    if not (mt.MLPERF / "records.json").is_file():
        pytest.skip(f"no MLPerf Tiny models in {mt.MLPERF}")
    r = mt.measure("ad", "nucleo-l4r5zi", tmp_path, {})
    m = r["modelled"]
    assert r["identical"] and m["cycles"] == sum(o["modelled_cycles"] for o in r["ops"])
    assert m["weights"] == (tmp_path / "weights.bin").stat().st_size
    reads = -(-m["weights"] // 8)
    staged = json.loads((tmp_path / "plan.json").read_text())["staged"]
    assert staged and all(d["once"] for d in staged)
    in_flash = m["weights"] - sum(d["size"] for d in staged)
    assert m["floor"] == reads * 6 and in_flash // 8 * 5 <= m["load_stalls"] < reads * 5
    assert r["cycles"][1] < m["other"] < m["cycles"]
    rec = mt.records()["records"]["cortex-m4"]
    text = mt.table("nucleo-l4r5zi", {"ad": r})
    assert f"| {m['cycles'] / (rec['ad']['mcycles'] * 1e6):.3f} |" in text and "| FC |" in text
    # the copy model_init makes once (bt_staging's bytes: 64-bit reads of 5 + 1 cycles, 4 cycles a word), beside
    once = json.loads((tmp_path / "plan.json").read_text())["staging_bytes"]
    assert m["once"] == once > 0 and m["copy"] == -(-once // 8) * 6 + -(-once // 4) * 4
    assert f"| {once:,} B | {mt._m(m['copy'])} |" in text


def _rowbuffer_net():
    """3x3 convolutions the row-buffer path takes (c_in % 4 == 0, the whole int8 range): output rows of 10
    pixels (a pixel left after the triples: bt_pmr1x4) and 5 (two left: bt_pmr2x3), an odd channel count (the
    last channel's triples in C), runs of G = 6 groups (two loops of 3) and 12 (three of 4), stride 2; then 1x1 layers
    of 24 values (bt_pm_loop3: 6 groups, two loops of 3) and 22 (5 groups, loops of 1, and a tail of 2)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("rowbuf", seed=3, calib_batch=2)
    x = b.input((1, 10, 10, 8))
    h = b.conv2d(x, 16, 3, activation="RELU")
    h = b.conv2d(h, 7, 3, activation="RELU")
    h = b.conv2d(h, 8, 1, activation="RELU")
    h = b.conv2d(h, 16, 3, 2, activation="RELU")
    h = b.conv2d(h, 24, 3, activation="RELU")
    h = b.conv2d(h, 22, 1, activation="RELU")
    h = b.conv2d(h, 16, 1, activation="RELU")
    b.fully_connected(b.mean(h), 10)
    return b.finish()


@pytest.mark.slow
def test_compact_loops_on_a_part_with_a_small_instruction_cache(tmp_path, monkeypatch):
    """nucleo-l4r5zi's kernels are built for its 1 KiB instruction cache (the part's BT_ICACHE_BYTES, its memory
    model's figure): the row-buffer path's one loop per patch (conv_pm.h BT_PMR_COMPACT) and bt_pm_loop3's
    looped groups (BT_PM_L3_COMPACT), byte-identical to TFLite Micro; against the same part built without the
    define, each 3x3 layer and the 1x1 layers of 24 and 22 values stall less on fetches and take fewer modelled
    cycles, and the 1x1 layers' instances are smaller (the 3x3 layers' column form, bt_pmr3x2c, has a loop per ring
    row of the window's first input row and per folded case: more code, of which one loop runs an output row)."""
    l4 = memory_model.get("nucleo-l4r5zi")
    part = targets.get("nucleo-l4r5zi")
    assert f"BT_ICACHE_BYTES={l4.icache.lines * l4.icache.line_bytes}" in part.defines
    assert not any(d.startswith("BT_ICACHE") for t in targets.boards().values() if t.name != part.name
                   for d in t.defines)
    sizes, stalls, _, cycles = _with_and_without_icache(_rowbuffer_net(), tmp_path, monkeypatch)
    for i in (0, 1, 3, 4, 5, 6):   # the 3x3 layers, the 1x1 layers of 24 and 22 values
        assert stalls[True][i] < stalls[False][i], i
        assert cycles[True][i] < cycles[False][i], i
    for i in (5, 6):
        assert sizes[True][f"op{i}_conv"] < sizes[False][f"op{i}_conv"], i


@pytest.mark.slow
def test_column_form_shapes_on_a_part_with_a_small_instruction_cache(tmp_path):
    """The 3x3 column form's other cases on nucleo-l4r5zi, byte-identical to TFLite Micro: runs of G = 3 groups (c_in
    4: one column a pass), a window of 2 rows (kh 2: ring rows 0 and 1), a 3x2 window, stride 2 with an odd output
    width, and a layer of more output channels than its table holds (BT_PMRC_TMAX: the run form)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("colform", seed=7, calib_batch=2)
    h = b.conv2d(b.input((1, 11, 11, 4)), 8, 3, activation="RELU")
    h = b.conv2d(h, 12, (2, 3), activation="RELU")
    h = b.conv2d(h, 8, (3, 2), 2, activation="RELU")
    h = b.conv2d(h, 66, 3, activation="RELU")
    b.fully_connected(b.mean(h), 10)
    g = b.finish()
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    pipeline.build(g, "nucleo-l4r5zi", tmp_path, PlanOptions(optimize_code="speed"))
    y, _, _ = runner.run("nucleo-l4r5zi", tmp_path, x, timeout=600)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])
    nm = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "firmware.elf")], capture_output=True, text=True,
                        check=True).stdout
    assert " bt_pmrc_kt" in nm   # the column form's table: some layer took it


def _with_and_without_icache(g, tmp_path, monkeypatch) -> tuple:
    """g built for nucleo-l4r5zi with its BT_ICACHE_BYTES (True) and without (False), each run byte-identical to
    TFLite Micro: ({True/False: function -> bytes}, {True/False: fetch stalls per operator}, the build folders,
    {True/False: modelled cycles per operator}).
    At --optimize-code speed, so each layer has its own instance in both (without the define the part is no
    instruction-cache part, and balanced may call a shared variant instead)."""
    part = targets.get("nucleo-l4r5zi")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    want = tflm_run(serialize(g), [x])[0]
    sizes, stalls, outs, cycles = {}, {}, {}, {}
    for compact in (True, False):
        if not compact:   # the same part without the define (targets.boards' cache holds every board)
            monkeypatch.setitem(targets._CACHE, part.name, dataclasses.replace(part, defines=()))
        out = outs[compact] = tmp_path / str(compact)
        pipeline.build(g, part.name, out, PlanOptions(optimize_code="speed"))
        y, prof, _ = runner.run(part.name, out, x, timeout=600)
        assert np.array_equal(y, want), compact
        sizes[compact] = _symbol_sizes(out / "firmware.elf")
        stalls[compact] = [o["memory_stalls"]["fetch_stalls"] for o in prof["ops"]]
        cycles[compact] = [o["modelled_cycles"] for o in prof["ops"]]
    return sizes, stalls, outs, cycles


def _symbol_sizes(elf) -> dict:
    """Function name (gcc's .constprop suffixes dropped) -> bytes, from the ELF's symbol table."""
    import subprocess

    text = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    sizes = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            sizes[f[3].split(".")[0]] = int(f[1], 16)
    return sizes


def _stem_net(cin: int):
    """A network's stem (cortex-m conv_stem.h: a window row of 3 cin values, not a multiple of 4), 3x3 of stride 1,
    13 pixels a row: S = cin odd (bt_stem_rowc's triples of every other pixel, rows A and B; 13 pixels = two
    groups of 6 and one through the scratch outputs); then a 1x1 layer and a dense one."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder(f"stem{cin}", seed=5, calib_batch=2)
    h = b.conv2d(b.input((1, 13, 13, cin)), 16, 3, 1, activation="RELU")
    h = b.conv2d(h, 8, 1, activation="RELU")
    b.fully_connected(b.mean(h), 10)
    return b.finish()


@pytest.mark.slow
@pytest.mark.parametrize("cin", [3, 1])
def test_compact_stem_on_a_part_with_a_small_instruction_cache(cin, tmp_path, monkeypatch):
    """nucleo-l4r5zi's stem of an odd S (conv_stem.h bt_stem_rowc under BT_ICACHE_BYTES: one triple's asm serves a
    row and its last pixels) is byte-identical to TFLite Micro, and against the same part built without the define
    its instance is smaller and stalls less on fetches; there every weight load of the triple's asm is a 16-bit
    LDR (bt_stem_blk's weights in r0, r1 from r2: BT_STEM_LOW), none a 32-bit one."""
    import re
    import subprocess

    sizes, stalls, outs, _ = _with_and_without_icache(_stem_net(cin), tmp_path, monkeypatch)
    assert all("BT_CONV_PM(&op0_p" in (o / "model.c").read_text() for o in outs.values())   # the stem's instance
    assert sizes[True]["op0_conv"] < sizes[False]["op0_conv"]
    assert stalls[True][0] < stalls[False][0]
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(outs[True] / "firmware.elf")],
                         capture_output=True, text=True, check=True).stdout
    body = dis.split("<op0_conv", 1)[1].split("\n\n", 1)[0]
    ns = 3 * ((3 * cin + 1) & ~1) // 2   # BT_STEM_NS: window rows of 3 cin values, even, in words
    narrow = re.findall(r"\tldr\tr[01], \[r2, #(\d+)\]", body)
    assert sorted({int(v) for v in narrow}) == list(range(0, 8 * ns, 4))   # both rows' words, every offset
    # no weight word by a 32-bit LDR (offsets 0 to 8 ns from r2; the set-up code outside the triple may read other
    # words from r2, e.g. a bias from the weights image at 144)
    wide = re.findall(r"\tldr\.w\tr[01], \[r2, #(\d+)\]", body)
    assert not [v for v in wide if int(v) < 8 * ns], wide


@pytest.mark.slow
def test_compact_1x1_with_its_zero_point_not_folded(tmp_path, monkeypatch):
    """A 1x1 layer of 64 values whose output scale leaves some channel pairs' zero point out of their rounding
    words (shifts -20 to -23: bt_rq2_zp_ok fails below -22) runs bt_pm_loop3's compact loop on nucleo-l4r5zi for
    those pairs too (the zero point an immediate, BT_PM_L3_ZO): byte-identical to TFLite Micro, its instance
    smaller than the same part's without the define (the straight form for those pairs)."""
    from buildtool.refops import prepare
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("zp1x1", seed=4, calib_batch=2)
    h = b.conv2d(b.input((1, 9, 9, 64)), 64, 1, activation="RELU")
    g = b.finish([b.conv2d(h, 32, 1, activation="NONE", out_quant=(300.0, 3))])
    shifts = set(prepare.conv(g, g.operators[1]).shifts)
    assert min(shifts) < -22 <= max(shifts)
    sizes, _, outs, _ = _with_and_without_icache(g, tmp_path, monkeypatch)
    # no straight triple (16 groups of 12 SMLAD) left: every pair's loop is the compact one
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(outs[True] / "firmware.elf")],
                         capture_output=True, text=True, check=True).stdout
    body = dis.split("<op1_conv", 1)[1].split("\n\n", 1)[0]
    assert 0 < body.count("\tsmlad\t") < 16 * 12
    assert sizes[True]["op1_conv"] < sizes[False]["op1_conv"]


@pytest.mark.slow
def test_compact_1x1_of_more_values_than_the_straight_form_takes(tmp_path, monkeypatch):
    """1x1 layers of 144 and 150 values (past bt_pm_loop3's straight form, K below 132) run its compact loop of groups
    on nucleo-l4r5zi (conv_pm.h BT_PM_L3_KLIM: K up to 624 there), the 150's K % 4 tail too: byte-identical to TFLite
    Micro, each fewer fetch stalls and modelled cycles than the same part's without the define, and its fetch stalls
    under 2 % of its modelled cycles (before, bt_mm3x2's loop and the requantisation were 1.2 KB a triple through the
    1 KiB cache: mobilenetv2_160_a1's 144 -> 24 at 40x40 took 11.42 M modelled cycles, 3.95 M of them stalls)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("k144", seed=3, calib_batch=2)
    h = b.conv2d(b.input((1, 12, 12, 144)), 150, 1, activation="RELU")
    g = b.finish([b.conv2d(h, 24, 1, activation="RELU")])
    _, stalls, outs, cycles = _with_and_without_icache(g, tmp_path, monkeypatch)
    for i in (0, 1):
        assert f"BT_CONV_PM(&op{i}_p" in (outs[True] / "model.c").read_text(), i   # the layer's own instance
        assert stalls[True][i] < stalls[False][i], i
        assert cycles[True][i] < cycles[False][i], i
        assert stalls[True][i] < 0.02 * cycles[True][i], (i, stalls[True][i], cycles[True][i])
