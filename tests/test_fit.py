"""`buildtool fit MODEL`: one row per installed board (fits, the plan that makes it fit, memory use,
estimated latency), the same as JSON, and the exit status (docs/fit.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_stateful import svdf_model

from buildtool import cli, targets
from buildtool.errors import UsageError
from buildtool.firmware.op_cost import static_cycles
from buildtool.options import PlanOptions
from buildtool.pipeline.fit import fit_table
from buildtool.steps.models import read_model
from buildtool.steps.plan import plan_memory
from buildtool.units import size


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")


def run_cli(args, capsys) -> tuple:
    try:
        rc = cli.main(args)
    except SystemExit as e:  # argparse's refusals
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def fit_json(model, capsys, *flags) -> dict:
    rc, out, err = run_cli(["fit", model, "--json", *flags], capsys)
    assert rc == 0, err
    return json.loads(out)


def ram(row: dict) -> dict:
    return next(m for m in row["memories"] if m["memory"] == "RAM")


def test_tiny_fits_every_board_plain_and_the_table_matches_the_json(capsys):
    data = fit_json("tiny", capsys)
    rows = {r["board"]: r for r in data["boards"]}
    assert sorted(rows) == targets.names()
    assert all(r["fits"] and r["plan"] == "plain" and not r["short"] for r in rows.values())
    arena = plan_memory(read_model("tiny").graph, PlanOptions()).arena_bytes
    for name, r in rows.items():
        t = targets.get(name)
        # the RAM holds the arena, the stack and the measured static data, and on a board running its code
        # from RAM (xcore: the tile's SRAM) the measured code instead of the board's reserve
        assert (ram(r)["arena"], ram(r)["stack"]) == (arena, t.stack_bytes) and ram(r)["size"] == t.ram_bytes
        in_ram = ram(r)["code"] if t.code_in_ram else 0
        assert r["ram_bytes"] == ram(r)["used"] == arena + t.stack_bytes + ram(r)["static"] + in_ram
        assert (in_ram > 0) == bool(t.code_in_ram) and ram(r)["code_reserve"] == t.code_in_ram
        flash = next(m for m in r["memories"] if m["memory"] == "FLASH")
        if not t.code_in_ram:  # flash = the measured code + the weights
            assert flash["code"] > 0 and flash["used"] == flash["code"] + flash["weights"]
    rc, out, err = run_cli(["fit", "tiny"], capsys)
    assert rc == 0 and err == ""
    head, *lines = out.strip().splitlines()
    assert head.split()[:3] == ["board", "fits", "plan"] and len(lines) == len(rows)  # no closing line
    for line in lines:
        name, fits, plan = line.split()[:3]
        r = rows[name]
        assert (fits, plan) == ("yes", r["plan"])
        limit = f" / {size(ram(r)['size'])}" if ram(r)["size"] else " (no limit)"
        code = f" (code {size(ram(r)['code'])})" if ram(r)["code"] else ""  # xcore: the code the tile holds
        assert f"  {size(ram(r)['used'])}{limit}{code}  " in line
        latency = r["latency"]
        if latency is None:
            assert line.endswith("n/a")
        elif latency["seconds"] is None:  # cycles but no clock (the generic cortex-m33: QEMU's, not a part's)
            lo, hi = latency["cycles"]
            assert not targets.get(name).clock_hz and latency["clock_hz"] == 0
            assert line.endswith(f"{lo / 1e6:,.1f}-{hi / 1e6:,.1f} M cycles")
        else:  # only boards with cycles per MAC and a clock: the cortex-m4 ones (an386 at 25 MHz, the M4F parts)
            t = targets.get(name)  # and the M33 parts (the M4 figures as their proxy, op_cost.CYCLES_PER_MAC)
            assert t.cpu in ("cortex-m4", "cortex-m33") and latency["clock_hz"] == t.clock_hz > 0
            assert t.clock_hz == 25_000_000 or t.source  # a part's clock comes from its datasheet
            tail = ", memory model" if latency.get("memory_model") else ""  # a part's (docs/memory-model.md)
            assert latency["estimate"] is True and line.endswith(f"ms @ {t.clock_hz // 1_000_000} MHz{tail}")
            lo, hi = latency["cycles"]
            assert 0 < lo < hi and latency["seconds"] == [round(lo / t.clock_hz, 6), round(hi / t.clock_hz, 6)]


def test_the_least_ram_fused_plan_is_named_where_only_it_fits(capsys):
    """mbv2-w0.35: the plain arena (283.5 KiB) + stack exceeds cortex-m4-256k's 256 KiB of RAM, the
    least-RAM fused plan (61.5 KiB) fits it; the RAM figure is its arena + the board's stack."""
    g = read_model("mbv2-w0.35").graph
    t = targets.get("cortex-m4-256k")
    plain = plan_memory(g, PlanOptions()).arena_bytes
    fused = plan_memory(g, PlanOptions(optimize="ram")).arena_bytes
    assert plain + t.stack_bytes > t.ram_bytes >= fused + t.stack_bytes
    boards = "cortex-m4-256k,cortex-m4,hifive1"
    rows = {r["board"]: r for r in fit_json("mbv2-w0.35", capsys, "--boards", boards)["boards"]}
    r = rows["cortex-m4-256k"]
    assert r["fits"] and r["plan"] == "optimize=ram"
    assert r["ram_bytes"] == ram(r)["used"] == fused + t.stack_bytes + ram(r)["static"] and r["arena_bytes"] == fused
    m4 = rows["cortex-m4"]
    assert m4["plan"] == "plain" and m4["ram_bytes"] == plain + 8192 + ram(m4)["static"]
    h = rows["hifive1"]  # 16 KiB: neither plan fits; the row says by how much the least-RAM one misses
    assert not h["fits"] and h["plan"] is None and h["latency"] is None
    assert h["short"] == {"ram": h["ram_bytes"] - 16 * 1024} and h["ram_bytes"] <= fused + 2048


def test_mobilenetv2_fits_cortex_m4_plain_and_not_hifive1():
    g = read_model("mobilenetv2").graph
    rows = {r.board: r for r in fit_table(g, boards=["cortex-m4", "hifive1"])}
    m4, hf = rows["cortex-m4"], rows["hifive1"]
    plain = plan_memory(g, PlanOptions()).arena_bytes
    assert m4.fits and m4.plan == "plain" and m4.use.ram_bytes == plain + targets.get("cortex-m4").stack_bytes
    assert plain > 700 * 1024 - 1 and m4.seconds is not None and m4.seconds[0] > 1  # 154 M MACs at 25 MHz
    assert not hf.fits and hf.use.short["ram"] > 0 and hf.seconds is None


def test_spread_over_regions_when_no_fused_plan_is_allowed():
    """A board with regions of its own takes the plain arena spread over them when no fused plan fits
    (here: the planner refuses fusion, as it does for stateful models)."""
    g = read_model("mbv2-w0.35").graph

    def planner(graph, options):
        if options.fused:
            raise UsageError("no fusion here")
        return plan_memory(graph, options)

    r, = fit_table(g, planner=planner, boards=["cortex-m4-256k"])
    assert r.plan == "spread over regions"
    parts = {m.name: m.arena for m in r.use.memories}
    assert parts["psram"] > 0 and parts["sram"] + parts["psram"] == r.arena_bytes
    assert r.use.ram_bytes == parts["sram"] + 8192 <= 256 * 1024


def test_a_model_that_fits_no_board_prints_the_table_and_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(targets, "names", lambda: ["hifive1"])
    rc, out, err = run_cli(["fit", "mbv2-w0.35"], capsys)
    lines = out.strip().splitlines()
    assert rc == 1 and err == ""
    assert lines[1].startswith("hifive1") and "does not fit: RAM" in lines[1]
    assert lines[-1] == "mbv2-w0.35 fits no board that declares its memory sizes"
    rc, out, _ = run_cli(["fit", "mbv2-w0.35", "--json"], capsys)
    assert rc == 1 and json.loads(out)["fits_any"] is False


def test_fused_options_given_are_the_only_plan_tried(capsys):
    """--optimize ram: every row's plan is that one (a 16 KiB board included), on the boards --boards names alone."""
    boards = ["cortex-m0plus", "cortex-m4", "riscv32"]
    rows = fit_json("tiny", capsys, "--optimize", "ram", "--boards", "riscv32,cortex-m0plus, cortex-m4")["boards"]
    arena = plan_memory(read_model("tiny").graph, PlanOptions(optimize="ram")).arena_bytes
    assert [r["board"] for r in rows] == boards
    assert {r["plan"] for r in rows} == {"optimize=ram"} and {r["arena_bytes"] for r in rows} == {arena}


def test_boards_gives_the_full_tables_rows_and_refuses_an_unknown_name(capsys):
    """--boards A,B: the rows of those boards, the same as the whole table's; an unknown name is one line, exit 2."""
    whole = {r["board"]: r for r in fit_json("tiny", capsys)["boards"]}
    some = fit_json("tiny", capsys, "--boards", "xcore,hifive1")["boards"]
    assert some == [whole["hifive1"], whole["xcore"]]
    rc, out, err = run_cli(["fit", "tiny", "--boards", "cortex-m4,cortex-m5"], capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "unknown board 'cortex-m5'" in err


def test_operators_without_a_cycle_figure_give_no_latency():
    g = svdf_model(np.random.default_rng(0), 0)
    plan = plan_memory(g, PlanOptions())
    assert static_cycles(g, plan, "cortex-m4") is None and static_cycles(g, plan, "rv32imac") is None
    tiny = read_model("tiny").graph
    lo, hi = static_cycles(tiny, plan_memory(tiny, PlanOptions()), "cortex-m4")
    assert 0 < lo < hi


def test_flash_wait_states_add_the_measured_flash_accesses_per_mac(capsys):
    """--flash-wait-states N: each cortex-m4 board's latency plus N x FLASH_ACCESSES_PER_MAC on the
    layers' MACs; boards without a cycle model unchanged, the M33 ones (no flash-access figures) n/a; the JSON
    says N; the table's header too."""
    from buildtool.firmware.op_cost import FLASH_ACCESSES_PER_MAC, layer_class
    from buildtool.model.ops import op_macs

    g = read_model("tiny").graph
    plan = plan_memory(g, PlanOptions())
    lo0, hi0 = static_cycles(g, plan, "cortex-m4")
    fa = FLASH_ACCESSES_PER_MAC["cortex-m4"]
    macs = [(op_macs(g, op), layer_class(g, op)) for op in g.operators]
    lo, hi = static_cycles(g, plan, "cortex-m4", 3)
    # lo0 and hi0 are rounded, so the sums may differ from the direct ones by the rounding's 1
    assert abs(lo - (lo0 + 3 * sum(m * fa[c][0] for m, c in macs if m))) <= 1
    assert abs(hi - (hi0 + 3 * sum(m * fa[c][1] for m, c in macs if m))) <= 1
    assert static_cycles(g, plan, "cortex-m4", 0) == (lo0, hi0)
    base = {r["board"]: r for r in fit_json("tiny", capsys)["boards"]}
    rows = {r["board"]: r for r in fit_json("tiny", capsys, "--flash-wait-states", "3")["boards"]}
    for name, r in rows.items():
        if targets.get(name).cpu == "cortex-m4" and r["latency"]:
            assert r["latency"]["cycles"] == [lo, hi] and r["latency"]["flash_wait_states"] == 3
            assert "flash_wait_states" not in base[name]["latency"]
        elif targets.get(name).cpu == "cortex-m33":  # no wait-state figures: n/a rather than a zero-wait figure
            assert r["latency"] is None
        else:
            assert r["latency"] == base[name]["latency"]
    rc, out, _ = run_cli(["fit", "tiny", "--flash-wait-states", "3"], capsys)
    assert rc == 0 and "latency (estimate, 3 flash wait states)" in out.splitlines()[0]


@pytest.mark.parametrize("args, needle", [
    (["fit", "tiny", "--flash-wait-states", "-1"], "--flash-wait-states must be 0 or more, not -1"),
    (["fit", "tiny", "--flash-wait-states", "x"], "invalid int value"),
    (["fit", "tiny", "--bogus"], "unrecognized arguments: --bogus"),
    (["fit", "no-such-model"], "neither a model file nor a zoo name"),
    (["fit", "tiny", "--align", "3"], "power of two"),
    (["fit", "tiny", "--max-mac-overhead", "2"], "--optimize"),
])
def test_bad_input_is_one_line_exit_2(args, needle, capsys):
    rc, out, err = run_cli(args, capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("buildtool: error:"), err
    assert needle in lines[0]


def test_a_board_that_picks_its_plan_wires_the_model_to_the_code_step(tmp_path):
    """xcore may pick a fused plan (whose code holds weight copies): SCons (may_fuse), CMake (BT_FUSED)
    and Bazel (BOARDS' auto_fit) then give the code step the model and the flash step the plan; a board
    that does not pick keeps the skeleton. The choice itself: the plain plan where it fits, else the
    least-RAM plan, and nothing on a board that refuses instead."""
    from buildtool.cmake import configure
    from buildtool.firmware.fits import fitting_plan, may_fuse
    from buildtool.integrations.bazel import board_entry

    for board, fused in (("xcore", True), ("host", False)):
        assert may_fuse({}, targets.get(board)) is fused and may_fuse({"optimize": "ram"}, targets.get(board))
        configure(board, "", "tiny", [], "", str(tmp_path / board))
        assert f'set(BT_FUSED "{"ON" if fused else "OFF"}")' in (tmp_path / board / "buildtool.cmake").read_text()
        assert board_entry(board, tmp_path)["auto_fit"] is fused
    xcore, m4 = targets.get("xcore"), targets.get("cortex-m4-256k")
    g = read_model("mbv2-w0.35").graph
    plain = plan_memory(g, PlanOptions())
    # without a measure (no model's code measured), the board's stand-in reserve: 283.5 KiB is past it
    assert plain.arena_bytes + xcore.stack_bytes > xcore.data_ram_bytes
    fitted, note = fitting_plan(g, plain, xcore, PlanOptions(), plan_memory)
    assert fitted.to_json(g) == plan_memory(g, PlanOptions(optimize="ram")).to_json(g)
    assert note.startswith(f"mbv2-w0.35: the layer-by-layer plan needs {plain.arena_bytes + 8192:,} B of xcore's RAM")
    assert fitting_plan(g, plain, m4, PlanOptions(), plan_memory) == (plain, None)  # refused by check_fits instead
    tiny = read_model("tiny").graph
    small = plan_memory(tiny, PlanOptions())
    assert fitting_plan(tiny, small, xcore, PlanOptions(), plan_memory) == (small, None)


# -- issue 53 item 2 / issue 54 item 4: fit says what the build does ---------------------------------
def wide_model(side: int = 64):
    """A small-weights, large-activation net (issue 54 item 4's shape: a board with one arena region that
    cannot hold it): side x side x 16 input, two convs, a residual ADD, a strided conv, mean, dense."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder(f"wide{side}")
    x = b.input((1, side, side, 16))
    y = b.conv2d(b.conv2d(x, 16, k=3), 16, k=3)
    y = b.conv2d(b.max_pool(b.add(x, y), 2), 32, k=3, stride=2)
    return b.finish([b.fully_connected(b.mean(y), 10)])


def test_a_board_that_cannot_hold_the_model_is_a_marked_row_not_an_abort(tmp_path, capsys):
    """Issue 54 item 4: longan-nano's one arena region (30 KiB free) cannot hold the arena spread, which
    fit used to raise (exit 2, 'its arena ... does not fit sram'); now its row says by how much RAM is
    short and the table prints with exit 0."""
    from buildtool.model.writer import serialize

    path = tmp_path / "wide64.tflite"
    path.write_bytes(serialize(wide_model()))
    rc, out, err = run_cli(["fit", str(path)], capsys)
    assert rc == 0 and err == "", err
    rows = {line.split()[0]: line for line in out.strip().splitlines()[1:]}
    assert sorted(rows) == targets.names()
    assert rows["longan-nano"].split()[1:5] == ["no", "does", "not", "fit:"] and "RAM" in rows["longan-nano"]
    data = fit_json(str(path), capsys, "--boards", "longan-nano,cortex-m4")  # exit 1 where no board fits
    r = next(r for r in data["boards"] if r["board"] == "longan-nano")
    assert not r["fits"] and r["short"]["ram"] == r["ram_bytes"] - targets.get("longan-nano").data_ram_bytes > 0


def test_a_row_short_of_weights_shows_the_least_ram_plan():
    """Issue 53: mobilenetv2's weights do not fit nucleo-l4r5zi's 2 MiB of flash under any plan, but its
    RAM (640 KiB) holds the least-RAM plan: the row is short of weights only and shows that plan's RAM (as
    the build's refusal suggests --optimize ram), not the plain plan's; likewise nucleo-h7a3zi."""
    g = read_model("mobilenetv2").graph
    fused = plan_memory(g, PlanOptions(optimize="ram")).arena_bytes
    rows = {r.board: r for r in fit_table(g, boards=["nucleo-l4r5zi", "nucleo-h7a3zi"])}
    for r in rows.values():
        t = targets.get(r.board)
        assert not r.fits and set(r.use.short) == {"weights"}, r.use.short
        assert r.arena_bytes == fused and r.use.ram_bytes == fused + t.stack_bytes <= t.data_ram_bytes


def test_the_arena_regions_the_board_lists_count():
    """Issue 53: nucleo-h7a3zi keeps the arena in DTCM (128 KiB) and AXI SRAM (1 MiB), as `buildtool boards`
    lists: a plain arena DTCM cannot hold, with no fused plan allowed, fits spread over both (the build's
    check_fits places it so) instead of being RAM short."""
    g = wide_model(96)

    def planner(graph, options):
        if options.fused:
            raise UsageError("no fusion here")
        return plan_memory(graph, options)

    t = targets.get("nucleo-h7a3zi")
    r, = fit_table(g, planner=planner, boards=[t.name])
    assert r.arena_bytes + t.stack_bytes > t.data_ram_bytes  # DTCM alone does not hold it
    assert r.fits and r.plan == "spread over regions", r.use.short
    parts = {m.name: m.arena for m in r.use.memories}
    assert parts["dtcm"] + sum(parts.get(n, 0) for n in ("axisram", "ahbsram", "srdsram")) == r.arena_bytes
    assert parts.get("axisram", 0) > 0


def _plan_options(label: str) -> dict:
    if label in ("plain", "spread over regions"):  # the build spreads the plain plan itself (check_fits)
        return {}
    return dict(kv.split("=") for kv in label.split())


def _kib_after(line: str, word: str) -> list:
    return re.findall(rf"{word} ([\d,]+\.\d KiB)", line)


def _build_line_says_the_same(r, spec, tmp_path) -> str:
    """Build row r's board with its plan's options and check the build's RAM/flash line
    (runner.memory_summary: what SCons, CMake, Bazel and watch print) states fit's figures: RAM, flash,
    code, arena, stack and each external region's use; the line."""
    from buildtool import pipeline
    from buildtool.firmware import runner
    from buildtool.units import kib

    t = targets.get(r.board)
    paths = pipeline.build(spec, r.board, tmp_path / r.board, _plan_options(r.plan), say=lambda line: None)
    line = runner.memory_summary(t, paths["elf"], r.arena_bytes)
    by = {m.memory: m for m in r.use.memories}
    ram, flash = by["RAM"], by.get("FLASH")
    assert _kib_after(line, "arena")[0] == kib(r.arena_bytes), (r.board, r.plan, line)
    assert _kib_after(line, "stack")[0] == kib(r.stack_bytes), line
    assert _kib_after(line, "RAM")[0] == kib(ram.used), (r.board, r.plan, line)
    held = ram if t.code_in_ram else flash  # the memory holding the code: its figure as the line says it
    assert held.measured, r.board
    assert _kib_after(line, "code and constants" if t.code_in_ram else "code")[0] == kib(held.code), (r.board, line)
    assert _kib_after(line, "flash")[0] == kib(flash.used), (r.board, r.plan, line)
    for m in r.use.memories:
        if m.memory not in ("RAM", "FLASH") and (m.weights or m.arena):
            assert _kib_after(line, f"; {m.name}")[0] == kib(m.used), (r.board, line)
    assert {m.name for m in t.extra_memories() if f"; {m.name} " in line} <= {m.name for m in r.use.memories}, line
    for pct in re.findall(r"\((\d+) %\)", line):
        assert int(pct) <= 100, line
    return line


@pytest.mark.slow
@pytest.mark.parametrize("model", ["tiny", "wide64"])
def test_every_yes_row_builds_and_the_build_line_says_the_same(model, tmp_path):
    """Issues 50 and 53: build every board fit says 'yes' to (its plan's options; the cross toolchains of
    this machine) and read the build's RAM/flash line: the same RAM, flash, code (measured by fit as the
    build links it), arena, stack and external regions, to the 0.1 KiB the line prints."""
    from buildtool.firmware import toolchain
    from buildtool.model.writer import serialize

    spec = model
    if model == "wide64":
        spec = str(tmp_path / "wide64.tflite")
        Path(spec).write_bytes(serialize(wide_model()))
    m = read_model(spec)
    built = 0
    for r in fit_table(m.graph, model=m):
        if not (r.fits and r.limited):
            continue
        try:
            toolchain.check_tools(targets.get(r.board))
        except Exception:  # a board whose compiler this machine lacks
            continue
        _build_line_says_the_same(r, spec, tmp_path)
        built += 1
    assert built >= 10


@pytest.mark.slow
def test_nrf52840dk_splits_the_weights_as_its_build_places_them(tmp_path):
    """Issue 53: mobilenetv2 on nrf52840dk (optimize=ram): fit counts the code in internal flash and puts
    the weights that do not fit beside it in QSPI, as the build places them (the code step's measured
    code, regions.place): the build's line states the same code, internal weights and QSPI figures."""
    m = read_model("mobilenetv2")
    r, = fit_table(m.graph, model=m, boards=["nrf52840dk"])
    assert r.fits and r.plan == "optimize=ram"
    by = {x.name: x for x in r.use.memories}
    assert 0 < by["flash"].code and by["flash"].code + by["flash"].weights <= by["flash"].size
    assert by["qspi"].weights > 2 * 1024 * 1024
    line = _build_line_says_the_same(r, "mobilenetv2", tmp_path)
    assert "; qspi " in line


def test_measured_code_counts_in_the_verdict():
    """Issue 50 item 4: with the code measured (fits.Code), a board running its code from RAM (xcore's tile)
    counts that code, not its fixed reserve, with the arena, stack and static data against the tile's
    512 KiB, in fit (board_use) and in the build's check (check_fits: one line naming the measured code);
    on a flash part the code and the weights together must fit the flash ("flash N short")."""
    from buildtool.firmware.fits import Code, board_use, check_fits
    from buildtool.firmware.toolchain import FirmwareError

    g = read_model("tiny").graph
    plan = plan_memory(g, PlanOptions())
    t = targets.get("xcore")
    room = t.ram_bytes - plan.arena_bytes - t.stack_bytes - 500
    use = board_use(g, plan, t, Code(room, 500))
    ram_use = next(m for m in use.memories if m.memory == "RAM")
    assert use.fits and use.ram_bytes == t.ram_bytes and ram_use.used == t.ram_bytes and ram_use.code == room
    assert room > t.ram_bytes - t.code_in_ram  # more code than the fixed reserve: the measured figure decides
    check_fits(g, plan, t, code=Code(room, 500))
    assert board_use(g, plan, t, Code(room + 1, 500)).short == {"ram": 1}
    with pytest.raises(FirmwareError, match=r"code and constants 259,000 B, measured as built here"):
        check_fits(g, plan, t, code=Code(259_000, t.ram_bytes))
    m0 = targets.get("cortex-m0plus")  # 256 KiB of flash, no reserve: code + weights
    flash = next(m for m in board_use(g, plan, m0).memories if m.memory == "FLASH")
    assert board_use(g, plan, m0, Code(m0.flash_bytes - flash.weights, 0)).fits
    assert board_use(g, plan, m0, Code(m0.flash_bytes - flash.weights + 3, 0)).short == {"flash": 3}


# -- issue 50 item 4: xcore's tile gives the arena what the model's measured code leaves ------------------------
def test_xcore_arena_limit_is_the_tile_less_the_measured_code(tmp_path):
    """wide80's layer-by-layer arena (300 KiB) is past the 248 KiB a fixed 256 KiB code reserve left, but
    its code and constants are ~18 KiB: the arena's limit is the tile less that measured code, static data
    and stack, exactly, and every path keeps the plain plan (the plan step, the build, fit); the firmware
    runs bit-exact with TFLite Micro."""
    from conftest import tflm_run
    from buildtool import pipeline
    from buildtool.firmware import runner
    from buildtool.firmware.fits import check_fits, fitting_plan
    from buildtool.model.writer import serialize
    from buildtool.steps import plan as plan_step
    from buildtool.steps import code as code_step
    from buildtool.steps.code import measured_code
    from buildtool.steps.models import Model

    t = targets.get("xcore")
    g = wide_model(80)
    plain = plan_memory(g, PlanOptions())
    code = measured_code(Model(g.name, g.name, g), plain, t)
    limit = t.ram_bytes - code.code - code.static - t.stack_bytes  # what the tile leaves the arena
    assert t.with_code(code.ram).data_ram_bytes - t.stack_bytes == limit
    assert t.ram_bytes - t.code_in_ram - t.stack_bytes < plain.arena_bytes <= limit  # the fixed reserve refused it
    measure = (lambda p: measured_code(Model(g.name, g.name, g), p, t))
    assert fitting_plan(g, plain, t, PlanOptions(), plan_memory, measure) == (plain, None)
    check_fits(g, plain, t, code=code)
    # the plan step as SCons and gen plan run it keeps it too
    assert plan_step.run(g, {}, board="xcore", measurer=code_step.measurer).notes == ()
    row = fit_table(g, PlanOptions(), boards=["xcore"], model=Model(g.name, g.name, g))[0]
    assert row.plan == "plain" and row.arena_bytes == plain.arena_bytes and row.use.code == code

    path = tmp_path / "wide80.tflite"
    path.write_bytes(serialize(g))
    said = []
    pipeline.build(str(path), "xcore", tmp_path / "out", say=said.append)
    assert said == [] and json.loads((tmp_path / "out" / "firmware.json").read_text())["arena_bytes"] == plain.arena_bytes
    x = np.random.default_rng(0).integers(-128, 128, g.tensors[g.inputs[0]].shape, dtype=np.int8)
    y, _, _ = runner.run("xcore", tmp_path / "out", x)
    assert np.array_equal(y.reshape(-1), tflm_run(path.read_bytes(), [x])[0].reshape(-1))


def test_xcore_code_and_arena_past_the_tile_are_refused_in_one_line():
    """wide102's arena and stack (495.7 KiB) fit the tile's 512 KiB, its measured code and constants beside them
    do not: the build's check refuses it in one line naming both; fit's row takes the least-RAM plan instead."""
    from buildtool.firmware.fits import check_fits
    from buildtool.firmware.toolchain import FirmwareError
    from buildtool.steps.code import measured_code
    from buildtool.steps.models import Model

    t = targets.get("xcore")
    g = wide_model(102)
    plain = plan_memory(g, PlanOptions())
    code = measured_code(Model(g.name, g.name, g), plain, t)
    need = plain.arena_bytes + t.stack_bytes + code.ram
    assert plain.arena_bytes + t.stack_bytes <= t.ram_bytes < need
    with pytest.raises(FirmwareError) as e:
        check_fits(g, plain, t, code=code)
    line = str(e.value)
    assert "\n" not in line and "; with --optimize ram it fits (arena " in line
    assert line.startswith(f"wide102 does not fit board xcore: it needs {need:,} B of RAM (code and constants "
                            f"{code.code:,} B, measured as built here, + arena {plain.arena_bytes:,} B + stack "
                            f"{t.stack_bytes:,} B + static {code.static:,} B), the board has {t.ram_bytes:,} B;")
    row = fit_table(g, PlanOptions(), boards=["xcore"], model=Model(g.name, g.name, g))[0]
    assert row.plan == "optimize=ram" and row.use.ram_bytes <= t.ram_bytes  # the plain plan's code pushed it out
