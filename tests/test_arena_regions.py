"""Arena buffers placed across memory regions (arena/regional.py, docs/regions.md): the placement is
the optimum on a small case, sound by an independent check, round-trips through plan.json, keeps
a plan that fits RAM untouched, and a board whose RAM cannot hold mbv2-w0.35's arena runs it
bit-exact in QEMU with the rest of the arena in PSRAM."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import fixed_input, run_app, tflm_run

from buildtool import pipeline, targets
from buildtool.plan import regions
from buildtool.report import regions as report_regions
from buildtool.firmware import runner
from buildtool.plan.arena.regional import ArenaRegion, buffer_traffic, spread
from buildtool.cli import main
from buildtool.errors import PlanError
from buildtool.plan import align_up
from buildtool.plan.kinds import execute, plan_from_json, problems
from buildtool.model.writer import serialize

SMALL = "cortex-m4-256k"  # mps2-an386 with 256 KiB of data SRAM declared, PSRAM behind it
DEMO = "mbv2-w0.35"  # its layer-by-layer arena is larger than that SRAM


def _independent(plan, caps: dict) -> None:
    """Each region its own address space: every buffer in exactly one region, inside it; two buffers of
    one region live at a common step share no byte; each region within its capacity."""
    a = plan.align
    seen = sorted(k for r in plan.arena_regions for k in r["buffers"])
    assert seen == [b.id for b in plan.buffers]
    for r in plan.arena_regions:
        assert r["bytes"] <= caps[r["name"]]
        bufs = [plan.buffers[k] for k in r["buffers"]]
        for b in bufs:
            assert 0 <= b.offset - r["base"] and b.offset - r["base"] + align_up(b.size, a) <= r["bytes"]
        for x, y in itertools.combinations(bufs, 2):
            if x.first_step <= y.last_step and y.first_step <= x.last_step:
                assert x.offset + align_up(x.size, a) <= y.offset or y.offset + align_up(y.size, a) <= x.offset


def _brute_force(plan, traffic, regions_) -> int:
    """The least cost x traffic over every buffer -> region map whose live bytes fit each region at every step."""
    a, best = plan.align, None
    for choice in itertools.product(range(len(regions_)), repeat=len(plan.buffers)):
        live = [[0] * len(plan.order) for _ in regions_]
        for b, c in zip(plan.buffers, choice):
            for s in range(b.first_step, b.last_step + 1):
                live[c][s] += align_up(b.size, a)
        if all(max(v) <= r.capacity for v, r in zip(live, regions_)):
            cost = sum(regions_[c].cost * t for c, t in zip(choice, traffic))
            best = cost if best is None else min(best, cost)
    return best


def test_small_placement_is_the_optimum_sound_and_round_trips():
    g = pipeline.read_model("tiny").graph
    plan = pipeline.plan_memory(g)
    assert len(plan.buffers) <= 10  # brute force stays cheap
    regs = [ArenaRegion("fast", plan.arena_bytes // 2, 1), ArenaRegion("slow", plan.arena_bytes, 4)]
    out = spread(g, plan, regs)
    _independent(out, {r.name: r.capacity for r in regs})
    traffic = buffer_traffic(g, plan)
    where = {k: r["name"] for r in out.arena_regions for k in r["buffers"]}
    cost = sum({"fast": 1, "slow": 4}[where[b.id]] * t for b, t in zip(plan.buffers, traffic))
    assert cost == _brute_force(plan, traffic, regs)
    assert problems(out, g) == []
    x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
    assert np.array_equal(execute(out, g, [x])[0], tflm_run(serialize(g), [x])[0])
    d = json.loads(json.dumps(out.to_json(g)))
    assert [r["name"] for r in d["arena_regions"]] == ["fast", "slow"]
    assert plan_from_json(d, g) == out and "arena_regions" not in plan.to_json(g)
    assert spread(g, plan, regs) == out  # deterministic
    # the checker sees a buffer moved out of its region
    bad = plan_from_json(d, g)
    bad.arena_regions[0]["buffers"].append(bad.arena_regions[1]["buffers"].pop())
    assert any("not inside region" in p for p in problems(bad, g))


def test_a_plan_that_fits_ram_stays_as_it_is_and_nothing_fits_is_one_line():
    g = pipeline.read_model("tiny").graph
    plan = pipeline.plan_memory(g)
    assert regions.place_arena(g, plan, targets.get(SMALL)) is plan
    assert regions.place_arena(g, plan, targets.get("cortex-m4")) is plan
    with pytest.raises(PlanError) as e:
        spread(g, plan, [ArenaRegion("fast", 16, 1), ArenaRegion("slow", 32, 4)])
    assert "\n" not in str(e.value) and "does not fit fast (16 B free), slow (32 B free)" in str(e.value)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """mbv2-w0.35 built for the small-RAM board once: (graph, plan, spread plan, paths)."""
    t = targets.get(SMALL)
    if t.missing_tools():
        pytest.skip(f"{SMALL} needs {', '.join(t.missing_tools())}")
    model = pipeline.read_model(DEMO)
    plan = pipeline.plan_memory(model.graph)
    out = tmp_path_factory.mktemp("demo")
    return model.graph, plan, regions.place_arena(model.graph, plan, t), pipeline.build(model, SMALL, out, plan=plan)


@pytest.mark.slow
def test_arena_larger_than_ram_runs_bit_exact_with_buffers_in_psram(demo, capsys, tmp_path):
    g, plan, spread_plan, paths = demo
    t = targets.get(SMALL)
    caps = {r.name: r.capacity for r in regions.arena_regions(t)}
    assert plan.arena_bytes + t.stack_bytes > t.ram_bytes  # the whole arena cannot be in RAM
    assert [r["name"] for r in spread_plan.arena_regions] == ["sram", "psram"]
    _independent(spread_plan, caps)
    assert json.loads(paths["plan"].read_text()) == spread_plan.to_json(g)
    # the ELF (readelf's symbols, not the plan): each region's arena where the board has that memory
    sym = runner.symbols(t, paths["elf"])
    fast, slow = spread_plan.arena_regions
    ram, ps = sym["bt_arena"], sym["bt_arena_psram"]
    assert t.ram_origin <= ram[0] and ram[0] + ram[1] <= t.ram_origin + t.ram_bytes and ram[1] == fast["bytes"]
    psram = next(r for r in t.memory_regions() if r.name == "psram")
    assert psram.origin <= ps[0] and ps[0] + ps[1] <= psram.end and ps[1] == slow["bytes"]
    text = paths["model_c"].read_text()
    for k in slow["buffers"]:
        for i in spread_plan.buffers[k].tensors:
            assert f"bt_arena_psram + {spread_plan.tensors[i].offset - slow['base']}" in text
    x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
    y, _, ram_rep = runner.run(SMALL, paths["elf"].parent, x)
    ref = tflm_run(serialize(g), [x])[0]
    assert np.array_equal(y, ref) and np.array_equal(execute(spread_plan, g, [x])[0], ref)
    assert ram_rep["arena_bytes"] == fast["bytes"]
    summary = runner.memory_summary(t, paths["elf"], fast["bytes"])
    assert f"psram {slow['bytes'] / 1024:,.1f} KiB of 16,384.0 KiB (0 %) = arena" in summary
    # the placement, as `plan --board` and the report show it
    p = regions.place(g, spread_plan, t)
    assert p.arena_parts == {"sram": fast["bytes"], "psram": slow["bytes"]}
    svg = report_regions.placement_svg(p)
    assert f"<title>arena: {slow['bytes']:,} B</title>" in svg and f"<title>arena: {fast['bytes']:,} B</title>" in svg
    panels = report_regions.arena_svg(p)  # every buffer drawn in its region's own offsets
    assert panels.count("<title>") == len(spread_plan.buffers)
    for r in spread_plan.arena_regions:
        for k in r["buffers"]:
            b = spread_plan.buffers[k]
            lo = b.offset - r["base"]
            assert f"<title>{r['name']}: [{lo:,}, {lo + b.size:,}) steps {b.first_step}..{b.last_step}</title>" in panels
    assert report_regions.arena_svg(regions.place(g, plan, targets.get("cortex-m4"))) == ""
    assert main(["plan", DEMO, "--board", SMALL]) == 0
    assert f"psram: {slow['bytes']:,} / 16,777,216 B (arena buffers ({slow['bytes']:,} B))" in capsys.readouterr().out


@pytest.mark.slow
def test_scons_user_app_spreads_the_arena_the_same_way(demo, tmp_path):
    """examples/scons (the user's main.c; its plan step knows no board): the code step spreads the arena
    as the build did, the board's linker script has the PSRAM arena section, the app runs bit-exact."""
    g, _, spread_plan, paths = demo
    root = Path(__file__).resolve().parents[1]
    top = tmp_path / "app"
    shutil.copytree(root / "examples" / "scons", top, ignore=shutil.ignore_patterns("build", ".sconsign*"))
    (top / f"{DEMO}.tflite").write_bytes(serialize(g))  # the same name: the same model.c
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={root / 'buildtool' / 'scons'}",
                        f"board={SMALL}", f"model={DEMO}.tflite"], cwd=top, capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, PYTHONPATH=str(root)))
    assert r.returncode == 0, r.stdout + r.stderr
    slow = spread_plan.arena_regions[1]["bytes"]
    assert f"arena {spread_plan.arena_regions[0]['bytes'] / 1024:,.1f} KiB" in r.stdout
    assert f"; psram {slow / 1024:,.1f} KiB of 16,384.0 KiB (0 %) = arena" in r.stdout
    built = next((top / "build").rglob("model.c")).read_text()
    assert built == paths["model_c"].read_text()
    elf = top / "build" / SMALL / "app.elf"
    assert runner.symbols(targets.get(SMALL), elf)["bt_arena_psram"][1] == slow
    x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
    out, _ = run_app(SMALL, elf, x, tmp_path)
    assert out == np.ascontiguousarray(tflm_run(serialize(g), [x])[0]).tobytes()


@pytest.mark.slow
def test_cmake_user_app_spreads_the_arena_the_same_way(demo, tmp_path):
    """examples/cmake for the same board (the cortex-m4 toolchain file, BOARD cortex-m4-256k): its gen
    steps spread the arena as the build did (the same model.c), the board step's linker script places
    the PSRAM arena, the user's app runs bit-exact in QEMU."""
    g, _, spread_plan, paths = demo
    root = Path(__file__).resolve().parents[1]
    top = tmp_path / "app"
    shutil.copytree(root / "examples" / "cmake", top, ignore=shutil.ignore_patterns("build"))
    model = top / f"{DEMO}.tflite"  # the same name: the same model.c
    model.write_bytes(serialize(g))
    env = dict(os.environ, PYTHONPATH=str(root), BUILDTOOL_DAEMON_WATCH="0")
    cmake_dir = root / "buildtool" / "cmake"
    r = subprocess.run(["cmake", "-G", "Ninja", "-S", str(top), "-B", str(top / "build"),
                        f"-DCMAKE_PREFIX_PATH={cmake_dir}", f"-DCMAKE_TOOLCHAIN_FILE={cmake_dir}/toolchains/cortex-m4.cmake",
                        f"-DBOARD={SMALL}", f"-DMODEL={model}"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["ninja", "-C", str(top / "build")], capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    slow = spread_plan.arena_regions[1]["bytes"]
    assert f"; psram {slow / 1024:,.1f} KiB of 16,384.0 KiB (0 %) = arena" in r.stdout
    built = next((top / "build").rglob("model.c")).read_text()
    assert built == paths["model_c"].read_text()
    elf = top / "build" / "app.elf"
    assert runner.symbols(targets.get(SMALL), elf)["bt_arena_psram"][1] == slow
    x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
    out, _ = run_app(SMALL, elf, x, tmp_path)
    assert out == np.ascontiguousarray(tflm_run(serialize(g), [x])[0]).tobytes()


@pytest.mark.slow
def test_state_in_psram_persists_across_invocations_bit_exact(monkeypatch, tmp_path):
    """The keyword model's SVDF state buffers (persistent) spread too, on a board whose RAM holds half
    its arena: model_init sets the state in each region, every invocation equals TFLM's."""
    from test_stateful import KWS, random_inputs, real_model, tflm_sequence

    path = real_model(KWS)
    model = pipeline.read_model(str(path))
    g = model.graph
    plan = pipeline.plan_memory(g)
    base = targets.get(SMALL)
    t = dataclasses.replace(base, name="m4-half-ram", ram_bytes=base.stack_bytes + plan.arena_bytes // 2)
    monkeypatch.setattr(targets, "_CACHE", {**targets.boards(), t.name: t})
    spread_plan = regions.place_arena(g, plan, t)
    kinds = {r["name"]: {spread_plan.buffers[k].kind for k in r["buffers"]} for r in spread_plan.arena_regions}
    assert "persistent" in kinds["psram"]
    paths = pipeline.build(model, t.name, tmp_path, plan=plan)
    assert "(bt_arena_psram + " in paths["model_c"].read_text()
    sets = random_inputs(g, np.random.default_rng(0), 3)
    got, _, _ = runner.run(t.name, tmp_path, sets, sequence=True, profile=False)
    want, _ = tflm_sequence(path.read_bytes(), sets, 1)
    assert len(got) == len(want) == 3
    for y, w in zip(got, want):
        assert np.array_equal(np.asarray(y).reshape(-1), np.asarray(w[0]).reshape(-1))
