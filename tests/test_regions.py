"""Memory regions (docs/regions.md): cortex-m4's regions are QEMU's real map, the placement is exact
(brute force) and respects every region (an independent check), and a model with more weights
than the 4 MiB flash runs bit-exact in QEMU with the rest of its weights in PSRAM."""

import dataclasses
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import fixed_input, run_app, tflm_run

from buildtool.plan import flash, regions
from buildtool import pipeline, report, targets, zoo
from buildtool.firmware import runner
from buildtool.cli import main
from buildtool.errors import PlanError
from buildtool.targets import Region
from buildtool.model.writer import serialize

BIG = "efficientnet-lite0"


def _need(board: str):
    t = targets.get(board)
    if t.missing_tools():
        pytest.skip(f"{board} needs {', '.join(t.missing_tools())}")
    return t


def _mtree(machine: str) -> list:
    """(start, end inclusive, name) of every RAM in QEMU's own memory map of the machine."""
    r = subprocess.run(["qemu-system-arm", "-M", machine, "-S", "-monitor", "stdio", "-nographic",
                        "-serial", "null"], input="info mtree\nquit\n", capture_output=True, text=True, timeout=30)
    pat = re.compile(r"^\s*([0-9a-f]+)-([0-9a-f]+) \(prio 0, ram\): (mps\.\w+)$")
    return [(int(m[1], 16), int(m[2], 16), m[3]) for m in map(pat.match, r.stdout.splitlines()) if m]


def test_cortex_m4_regions_are_qemus_memory_map():
    _need("cortex-m4")
    rams = _mtree("mps2-an386")
    regs = targets.get("cortex-m4").memory_regions()
    assert [r.name for r in regs] == ["flash", "blockram", "sram", "psram"]
    for r in regs:  # each region is one whole RAM of the machine, nothing more
        assert (r.origin, r.end - 1) in {(a, b) for a, b, _ in rams}, r
    by = {r.name: r for r in regs}
    assert by["psram"].size == 16 << 20 and by["psram"].cost > by["flash"].cost == by["sram"].cost
    assert by["flash"].holds == ("code", "weights") and "arena" in by["sram"].holds
    assert "weights" in by["psram"].holds and "weights" not in by["sram"].holds
    # a board without regions of its own: its flash and RAM, and a linker script without extra memory
    m7 = targets.get("cortex-m7")
    assert [(r.name, r.origin, r.size) for r in m7.memory_regions()] == [
        ("flash", m7.flash_origin, m7.flash_bytes), ("ram", m7.ram_origin, m7.ram_bytes)]
    assert "PSRAM" not in m7.linker_script() and "@" not in m7.linker_script()
    assert "PSRAM (r) : ORIGIN = 0x21000000, LENGTH = 0x1000000" in targets.get("cortex-m4").linker_script()


# -- the placement, checked independently ---------------------------------------------------
def _tables(g, align: int) -> int:
    """The requantisation tables the primary part holds (a multiplier and a shift word per output channel of
    each conv and depthwise, per filter scale of a dense layer), back to back, rounded up to align."""
    out = 0
    for op in g.operators:
        if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            n = (np.size(g.tensors[op.inputs[1]].quant.scale) if op.opcode == "FULLY_CONNECTED"
                 else g.tensors[op.outputs[0]].shape[-1])
            out += 8 * n
    return -(-out // align) * align


def _check(g, plan, board, p) -> None:
    """Each image tensor exactly once, in a region that may hold weights, no region over its room."""
    align = board.weights_align
    regs = {r.name: r for r in board.memory_regions()}
    tensors = flash.flash_tensors(g)
    assert sorted(p.weights) == sorted(tensors) and len(set(tensors)) == len(tensors)
    for name, r in regs.items():
        mine = [i for i in tensors if p.weights[i] == name]
        assert not mine or "weights" in r.holds, f"{name} may not hold weights"
        need = sum(-(-g.tensors[i].nbytes // align) * align for i in mine)
        head = flash.HEADER_BYTES + flash.EXT_ALIGN + _tables(g, align)
        room = r.size - r.reserve - (head if name == p.primary else 0)
        assert need <= room, f"{name}: {need} B in {room} B"
    assert p.arena in regs and "arena" in regs[p.arena].holds and plan.arena_bytes <= regs[p.arena].size


def _brute_force(g, plan, board) -> int:
    """The least cost over every assignment of tensors to weight regions that fits."""
    align = board.weights_align
    wregs = [r for r in board.memory_regions() if "weights" in r.holds]
    prim = next(r for r in wregs if r.memory == "FLASH")
    tensors = flash.flash_tensors(g)
    size = [-(-g.tensors[i].nbytes // align) * align for i in tensors]
    reads = {i: sum(g.tensors[i].nbytes for op in g.operators if i in op.inputs) for i in tensors}
    best = None
    for choice in itertools.product(range(len(wregs)), repeat=len(tensors)):
        used = [0] * len(wregs)
        for s, c in zip(size, choice):
            used[c] += s
        room = [r.size - r.reserve - (64 + 64 + _tables(g, align) if r is prim else 0) for r in wregs]
        if all(u <= m for u, m in zip(used, room)):
            cost = sum(wregs[c].cost * reads[i] for i, c in zip(tensors, choice))
            best = cost if best is None else min(best, cost)
    return best


def _small_board(flash_room: int, *extra) -> targets.Target:
    base = targets.get("cortex-m4")
    return dataclasses.replace(base, name="m4-small", flash_bytes=flash_room + 128, regions=(
        Region("flash", 0, 0, 1, ("code", "weights"), 0, "FLASH"), Region("sram", 0, 0, 1, ("arena",), 0, "RAM"),
        *extra))


@pytest.mark.parametrize("rooms", [(1024, (2, 4096)), (600, (3, 512), (7, 4096)), (1200, (2, 700), (5, 4096))])
def test_placement_is_the_exact_optimum(rooms):
    """tiny's 10 weight tensors over two regions (the knapsack) and three (CP-SAT): the cost of
    the placement is the brute-force least cost, and the placement passes the independent check."""
    g = zoo.build("tiny")
    plan = pipeline.plan_memory(g)
    extra = [Region(f"ext{k}", 0x60000000 + k * 0x1000000, size, cost, ("weights",), 0, f"EXT{k}")
             for k, (cost, size) in enumerate(rooms[1:])]
    board = _small_board(rooms[0], *extra)
    p = regions.place(g, plan, board)
    _check(g, plan, board, p)
    assert p.cost == _brute_force(g, plan, board)
    assert p.cost == sum(next(r.cost for r in board.memory_regions() if r.name == p.weights[i]) * p.traffic[i]
                         for i in p.weights)
    assert len({p.weights[i] for i in p.weights}) > 1  # the room forces a real choice
    assert regions.place(g, plan, board) == p  # deterministic


def test_nothing_fits_is_one_plan_error():
    g = zoo.build("tiny")
    board = _small_board(256, Region("ext", 0x60000000, 512, 2, ("weights",), 0, "EXT"))
    with pytest.raises(PlanError) as e:
        regions.place(g, pipeline.plan_memory(g), board)
    need = sum(-(-g.tensors[i].nbytes // 16) * 16 for i in flash.flash_tensors(g)) + _tables(g, 16)
    assert str(e.value) == (f"tiny: its {need:,} B of weights and requantisation tables do not fit board m4-small's weight regions "
                            f"flash (256 B free), ext (512 B free): {need - 768:,} B short")


@pytest.mark.parametrize("options,key,count", [
    ({"optimize": "ram"}, ("first_op", "last_op"), ("row_tiles", "col_tiles")),
    ({"splits": "auto"}, ("top", "bottom"), ("slices",))])
def test_fused_plan_traffic_counts_tiles(options, key, count):
    """A fused block's weights are read once per tile, a split region's once per slice: the traffic
    is the plan's count x bytes (layer by layer: the bytes once)."""
    g = zoo.build("tiny")
    plan = pipeline.plan_memory(g, pipeline.PlanOptions.from_map(options))
    t = regions.traffic(g, plan)
    seen = 0
    for b in plan.regions(g):
        n = int(np.prod([b[c] for c in count]))
        for k in range(b[key[0]], b[key[1]] + 1):
            for i in set(g.operators[k].inputs):
                if i in t:
                    assert t[i] == g.tensors[i].nbytes * n
                    seen += n > 1
    assert seen >= 5
    assert regions.traffic(g) == {i: g.tensors[i].nbytes for i in flash.flash_tensors(g)}


# -- a model with more weights than flash, in QEMU ---------------------------------------------
@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """efficientnet-lite0 built for cortex-m4 once: (graph, plan, placement, paths)."""
    t = _need("cortex-m4")
    out = tmp_path_factory.mktemp("big")
    model = pipeline.read_model(BIG)
    plan = pipeline.plan_memory(model.graph)
    return model.graph, plan, regions.place(model.graph, plan, t), pipeline.build(model, "cortex-m4", out, plan=plan)


@pytest.mark.slow
def test_big_model_runs_bit_exact_with_weights_in_psram(big, tmp_path):
    g, plan, p, paths = big
    t = targets.get("cortex-m4")
    assert g.params_bytes() > t.flash_bytes  # it cannot be linked all in flash
    _check(g, plan, t, p)
    image = paths["weights"].read_bytes()
    info = flash.verify(str(paths["weights"]))  # `flash verify` still works
    assert info.ext_offset == p.used["flash"] and len(image) - info.ext_offset == p.used["psram"] > 0
    # the ELF: the image's two parts at their regions, byte for byte (readelf + the file, not the placement)
    sym = runner.symbols(t, paths["elf"])
    ext = sym["bt_weights_ext"][0]
    assert 0x21000000 <= ext and ext + p.used["psram"] <= 0x22000000
    assert sym["bt_weights"][0] < sym["bt_weights_end"][0] <= t.flash_bytes
    assert sym["bt_weights_end"][0] - sym["bt_weights"][0] == info.ext_offset
    psram = [s for s in toolchain_segments(t, paths["elf"]) if s[0] >= 0x21000000]
    assert psram == [(ext, len(image) - info.ext_offset, len(image) - info.ext_offset)]
    assert "bt_weights_ext + " in paths["model_c"].read_text()
    x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
    y, _, ram = runner.run("cortex-m4", paths["elf"].parent, x)
    ref = tflm_run(serialize(g), [x])[0]
    assert np.array_equal(y, ref), f"firmware {y.reshape(-1)[:12]} != tflm {ref.reshape(-1)[:12]}"
    assert ram["arena_bytes"] == plan.arena_bytes
    summary = runner.memory_summary(t, paths["elf"], plan.arena_bytes)
    assert f"; psram {p.used['psram'] / 1024:,.1f} KiB of 16,384.0 KiB" in summary


@pytest.mark.slow
def test_scons_user_app_links_the_psram_part(big, tmp_path):
    """examples/scons (the user's main.c, BtModel) builds the same model: the weights object takes the
    image's split from weights.bin when it is assembled; the app runs bit-exact in QEMU."""
    g, plan, p, paths = big
    root = Path(__file__).resolve().parents[1]
    top = tmp_path / "app"
    shutil.copytree(root / "examples" / "scons", top, ignore=shutil.ignore_patterns("build", ".sconsign*"))
    (top / "big.tflite").write_bytes(serialize(g))
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={root / 'buildtool' / 'scons'}",
                        "board=cortex-m4", "model=big.tflite"], cwd=top, capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, PYTHONPATH=str(root)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"; psram {p.used['psram'] / 1024:,.1f} KiB of 16,384.0 KiB" in r.stdout
    elf = top / "build" / "cortex-m4" / "app.elf"
    ext = [s for s in toolchain_segments(targets.get("cortex-m4"), elf) if s[0] >= 0x21000000]
    assert ext == [(0x21000000, p.used["psram"], p.used["psram"])]
    x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
    out, _ = run_app("cortex-m4", elf, x, tmp_path)
    assert out == np.ascontiguousarray(tflm_run(serialize(g), [x])[0]).tobytes()


def toolchain_segments(t, elf) -> list:
    out = subprocess.run([t.binutil("readelf"), "-lW", str(elf)], capture_output=True, text=True, check=True).stdout
    return [(int(p[3], 16), int(p[4], 16), int(p[5], 16)) for p in map(str.split, out.splitlines())
            if p[:1] == ["LOAD"]]


@pytest.mark.slow
def test_flash_step_and_cli_agree_with_the_build(big, tmp_path, capsys):
    """`gen flash` (no plan: a layer-by-layer plan's traffic) writes the build's image; `plan --board`
    prints the placement per region, the report draws it."""
    g, plan, p, paths = big
    model_file = tmp_path / f"{BIG}.tflite"
    model_file.write_bytes(serialize(g))
    assert main(["gen", "flash", str(model_file), "--board", "cortex-m4", "-o", str(tmp_path / "w.bin"),
                 "--split-header", str(tmp_path / "w.h")]) == 0
    assert (tmp_path / "w.bin").read_bytes() == paths["weights"].read_bytes()
    ext = flash.verify(str(tmp_path / "w.bin")).ext_offset  # the header CMake and Bazel assemble with
    assert (tmp_path / "w.h").read_text().splitlines()[1:] == [
        f"#define BT_WEIGHTS_EXT_OFFSET {ext}", "#define BT_WEIGHTS_EXT_SECTION .bt_weights_psram"]
    (tmp_path / "tiny.tflite").write_bytes(serialize(zoo.build("tiny")))
    assert main(["gen", "flash", str(tmp_path / "tiny.tflite"), "--board", "cortex-m4", "-o", str(tmp_path / "t.bin"),
                 "--split-header", str(tmp_path / "t.h")]) == 0
    assert "#define" not in (tmp_path / "t.h").read_text()  # all in flash: no split
    assert main(["plan", BIG, "--board", "cortex-m4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [f"  {line}" for line in regions.describe(p)]
    assert out[3] == f"  psram: {p.used['psram']:,} / 16,777,216 B ({sum(v == 'psram' for v in p.weights.values())} " \
                     f"weight tensors)"
    html, svg = report.write_report(g, plan, plan, str(tmp_path / "r.html"), placement=p)
    page = (tmp_path / "r.html").read_text()
    for r, size in (("flash", 4 << 20), ("sram", 4 << 20), ("psram", 16 << 20)):
        assert f"{p.used[r]:,} / {size:,} B" in page
    assert main(["report", "tiny", "--board", "cortex-m4", "-o", str(tmp_path / "t.html")]) == 0
    assert "Memory regions of cortex-m4" in (tmp_path / "t.html").read_text()


def test_unknown_board_and_board_without_room_are_one_line(capsys, monkeypatch):
    assert main(["plan", "tiny", "--board", "nope"]) == 2
    err = capsys.readouterr()
    assert err.out == "" and err.err.startswith("buildtool: error: unknown board 'nope'")
    small = _small_board(256, Region("ext", 0x60000000, 512, 2, ("weights",), 0, "EXT"))
    monkeypatch.setattr(targets, "_CACHE", {**targets.boards(), small.name: small})
    assert main(["plan", "tiny", "--board", "m4-small"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "do not fit board m4-small's weight regions" in err[0]


@pytest.fixture
def m4_512(monkeypatch):
    """cortex-m4 with 512 B of its flash left for weights beside tiny's requantisation tables (tiny's weights
    must split), under its own name (the cached kernel library is the board's)."""
    base = _need("cortex-m4")
    room = 512 + 128 + _tables(zoo.build("tiny"), base.weights_align)
    regs = tuple(dataclasses.replace(r, reserve=r.size - room) if r.name == "flash" else r for r in base.regions)
    t = dataclasses.replace(base, regions=regs)
    monkeypatch.setattr(targets, "_CACHE", {**targets.boards(), t.name: t})
    return t


def test_fused_plan_split_runs_bit_exact_and_a_foreign_split_is_refused(m4_512, tmp_path):
    """A fused plan's placement (weights re-read per tile kept in flash) differs from a
    layer-by-layer one's; firmware built with it is bit-exact, and an image split for the other
    placement is refused at start-up (header offset and tensor signature checked)."""
    model = pipeline.read_model("tiny")
    g = model.graph
    fused = pipeline.plan_memory(g, pipeline.PlanOptions.from_map({"optimize": "ram"}))
    p, plain = regions.place(g, fused, m4_512), regions.place(g, None, m4_512)
    _check(g, fused, m4_512, p)
    assert p.weights != plain.weights and "psram" in p.weights.values()
    paths = pipeline.build(model, "cortex-m4", tmp_path, plan=fused)
    x = fixed_input(g.tensors[g.inputs[0]].shape, 1)
    y, _, _ = runner.run("cortex-m4", tmp_path, x)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])
    # gen flash given the fused plan (as the build systems give it) writes the build's image; without
    # it, the layer-by-layer placement's, which the firmware refuses below
    (tmp_path / "tiny.tflite").write_bytes(serialize(g))
    (tmp_path / "fused.json").write_text(json.dumps(fused.to_json(g)))
    for extra, name in (([str(tmp_path / "fused.json")], "w_fused.bin"), ([], "w_plain.bin")):
        assert main(["gen", "flash", str(tmp_path / "tiny.tflite"), *extra, "--board", "cortex-m4", "--no-daemon",
                     "-o", str(tmp_path / name)]) == 0
    assert (tmp_path / "w_fused.bin").read_bytes() == paths["weights"].read_bytes()
    assert (tmp_path / "w_plain.bin").read_bytes() == pipeline.flash_image(model, "cortex-m4")
    paths["weights"].write_bytes(pipeline.flash_image(model, "cortex-m4"))  # no plan: another placement
    pipeline.link(model, fused, m4_512, tmp_path, paths)
    with pytest.raises(runner.FirmwareError, match="exited with 3 \\(weights image does not match the firmware\\)"):
        runner.run("cortex-m4", tmp_path, x)


# -- the code counted before the weights are placed (issue 33, item 5) ----------------------------
@pytest.fixture
def m4_code_tight(monkeypatch):
    """cortex-m4 whose flash, like a real part's, declares no reserve for code and holds mbv2-w0.35's
    least-RAM weights image and 16 KiB more: less than its code, so the weights must spill to PSRAM once
    the code is counted (before: the linker's 'FLASH overflowed' and no firmware)."""
    base = _need("cortex-m4")
    model = pipeline.read_model("mbv2-w0.35")
    fused = pipeline.plan_memory(model.graph, pipeline.PlanOptions.from_map({"optimize": "ram"}))
    size = -(-len(pipeline.flash_image(model, "cortex-m4", fused)) // 64) * 64 + 16 * 1024
    regs = tuple(dataclasses.replace(r, size=size, reserve=0) if r.name == "flash" else r for r in base.regions)
    t = dataclasses.replace(base, regions=regs, flash_bytes=size)
    monkeypatch.setattr(targets, "_CACHE", {**targets.boards(), t.name: t})
    return t, model, fused


def _flash_segments_end(t, elf) -> int:
    return max(lo + filesz for lo, filesz, _ in toolchain_segments(t, elf) if t.flash_origin <= lo < t.flash_origin + t.flash_bytes)


@pytest.mark.slow
def test_weights_spill_past_the_code_and_run_bit_exact(m4_code_tight, tmp_path):
    """The code step measures the code's flash bytes (a trial link) and places the weights around them:
    what no longer fits the flash goes to PSRAM, firmware.json says how many bytes were counted, the
    linked image's flash part is within them (readelf: its load segments, less the weights part), the
    firmware runs bit-exact in QEMU, and `gen flash --code-size firmware.json` lays out the same image
    (without it, the placement that ignores the code: all in flash, which would not link)."""
    t, model, fused = m4_code_tight
    g = model.graph
    paths = pipeline.build(model, "cortex-m4", tmp_path / "b", plan=fused)
    code = json.loads(paths["manifest"].read_text())["flash_code_bytes"]
    info = flash.verify(str(paths["weights"]))
    assert 0 < info.ext_offset < len(paths["weights"].read_bytes())  # split: part of it in PSRAM
    sym = runner.symbols(t, paths["elf"])
    primary = sym["bt_weights_end"][0] - sym["bt_weights"][0]
    assert primary == info.ext_offset and primary + code <= t.flash_bytes
    non_weights = _flash_segments_end(t, paths["elf"]) - t.flash_origin - primary  # code, constants, .data
    assert code - 72 <= non_weights <= code, (code, non_weights)  # measured before placing: exact but alignment
    assert code > 16 * 1024  # more than the flash the weights leave: counting it is what made this link
    assert not regions.image_groups(g, fused, t)  # not counted: every weight in flash (the old overflow)
    x = fixed_input(g.tensors[g.inputs[0]].shape, 3)
    y, _, _ = runner.run("cortex-m4", paths["elf"].parent, x)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])
    (tmp_path / "m.tflite").write_bytes(serialize(g))
    (tmp_path / "fused.json").write_text(json.dumps(fused.to_json(g)))
    for extra, name in ((["--code-size", str(paths["manifest"])], "w_code.bin"), ([], "w_nocode.bin")):
        assert main(["gen", "flash", str(tmp_path / "m.tflite"), str(tmp_path / "fused.json"), "--board", "cortex-m4",
                     "--no-daemon", "-o", str(tmp_path / name), *extra]) == 0
    assert (tmp_path / "w_code.bin").read_bytes() == paths["weights"].read_bytes()
    assert flash.verify(str(tmp_path / "w_nocode.bin")).ext_offset == 0


def test_gen_flash_code_size_of_a_bad_file_is_one_line(tmp_path, capsys):
    (tmp_path / "tiny.tflite").write_bytes(serialize(zoo.build("tiny")))
    (tmp_path / "firmware.json").write_text('{"flash_code_bytes": "lots"}')
    for arg in (str(tmp_path / "nope.json"), str(tmp_path / "firmware.json")):
        assert main(["gen", "flash", str(tmp_path / "tiny.tflite"), "--board", "cortex-m4", "--no-daemon",
                     "-o", str(tmp_path / "w.bin"), "--code-size", arg]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and ("cannot read the code step's firmware.json" in err[0]
                                  or "flash_code_bytes must be a byte count" in err[0]), err
    assert not (tmp_path / "w.bin").exists()
