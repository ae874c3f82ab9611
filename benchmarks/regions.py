"""Memory regions benchmark: models placed in cortex-m4's (mps2-an386) regions, built and run in QEMU.

    python benchmarks/regions.py [--model NAME ...] [--optimize ram]
    python benchmarks/regions.py --arena [BOARD] [--model NAME ...]

Prints a markdown table (the one in docs/regions.md): per model its weight bytes, the placement
(bytes in flash, bytes in PSRAM, tensors in PSRAM, PSRAM bytes read per inference), the same read
for the naive placement that fills flash in first-use order and puts the rest in PSRAM, the
placement time, the build time (plan, generate, compile, link), the QEMU run
time of one inference (wall, including QEMU's start-up), and whether the output is byte-identical
to TFLite Micro's reference kernels. --arena: per model its layer-by-layer arena, the room in
the board's SRAM (less the stack), the bytes of arena placed in SRAM and in PSRAM
(arena/regional.py), the buffers in PSRAM, the bytes written + read there per inference, the
same for the naive split that keeps the plan's offsets and puts every buffer reaching past the
SRAM's room in PSRAM, the placement, build and QEMU run times, and bit-exactness.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from buildtool import pipeline, targets
from buildtool.plan import regions
from buildtool.firmware import runner  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402

BOARD = "cortex-m4"


def row(name: str, options: dict) -> str:
    """One table row: build and run name on the board, compare with TFLM."""
    from conftest import fixed_input, tflm_run

    t = targets.get(BOARD)
    model = pipeline.read_model(name)
    plan = pipeline.plan_memory(model.graph, pipeline.PlanOptions.from_map(options))
    t0 = time.perf_counter()
    p = regions.place(model.graph, plan, t)
    place_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = pipeline.build(model, BOARD, tmp, plan=plan)
        build_s = time.perf_counter() - t0
        x = fixed_input(model.graph.tensors[model.graph.inputs[0]].shape, 0)
        t0 = time.perf_counter()
        y, _, _ = runner.run(BOARD, Path(paths["elf"]).parent, x)
        run_s = time.perf_counter() - t0
    exact = bool((y == tflm_run(serialize(model.graph), [x])[0]).all())
    ext = sum(1 for v in p.weights.values() if v == "psram")
    slow = sum(n for i, n in p.traffic.items() if p.weights[i] == "psram")
    return (f"| {name} | {model.graph.params_bytes():,} | {p.used['flash']:,} | {p.used['psram']:,} | {ext} | "
            f"{slow:,} | {in_order(model.graph, p, t):,} | {place_s:.2f} | {build_s:.1f} | {run_s:.1f} | "
            f"{'yes' if exact else 'NO'} |")


def arena_row(name: str, board: str) -> str:
    """One row of the --arena table: name's layer-by-layer arena spread over board's regions
    (arena/regional.py), built, run in QEMU and compared with TFLM."""
    from conftest import fixed_input, tflm_run

    from buildtool.plan.arena.regional import buffer_traffic

    t = targets.get(board)
    model = pipeline.read_model(name)
    g = model.graph
    plan = pipeline.plan_memory(g)
    t0 = time.perf_counter()
    spread = regions.place_arena(g, plan, t)
    place_s = time.perf_counter() - t0
    traffic = buffer_traffic(g, plan)
    parts = {r["name"]: r for r in getattr(spread, "arena_regions", [])}
    slow = parts.get("psram", {"bytes": 0, "buffers": []})
    moved = sum(traffic[k] for k in slow["buffers"])
    cap = regions.arena_regions(t)[0].capacity
    naive = sum(n for b, n in zip(plan.buffers, traffic) if b.offset + b.size > cap)  # the arena's top in PSRAM
    total = sum(traffic)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = pipeline.build(model, board, tmp, plan=plan)
        build_s = time.perf_counter() - t0
        x = fixed_input(g.tensors[g.inputs[0]].shape, 0)
        t0 = time.perf_counter()
        y, _, _ = runner.run(board, Path(paths["elf"]).parent, x)
        run_s = time.perf_counter() - t0
    exact = bool((y == tflm_run(serialize(g), [x])[0]).all())
    fast = parts["sram"]["bytes"] if parts else plan.arena_bytes
    return (f"| {name} | {plan.arena_bytes:,} | {cap:,} | {fast:,} | {slow['bytes']:,} | {len(slow['buffers'])} of "
            f"{len(plan.buffers)} | {moved:,} of {total:,} | {naive:,} | {place_s:.2f} | {build_s:.1f} | {run_s:.1f} | "
            f"{'yes' if exact else 'NO'} |")


def in_order(g, p, t) -> int:
    """PSRAM bytes read per inference when flash is filled in first-use order, the rest in PSRAM."""
    room = regions.weight_capacity(next(r for r in t.memory_regions() if r.name == "flash"), True)
    slow = 0
    for i in p.traffic:  # first-use order
        size = -(-g.tensors[i].nbytes // t.weights_align) * t.weights_align
        if size <= room:
            room -= size
        else:
            room, slow = 0, slow + p.traffic[i]
    return slow


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", help="zoo name or .tflite (default: tiny, mbv2-w0.35, "
                                                     "efficientnet-lite0)")
    ap.add_argument("--optimize", choices=("ram",), help="plan with --optimize ram (weights re-read per tile)")
    ap.add_argument("--arena", metavar="BOARD", nargs="?", const="cortex-m4-256k",
                    help="the arena's buffers spread over BOARD's regions (default cortex-m4-256k) instead")
    a = ap.parse_args()
    os.environ.setdefault("BUILDTOOL_NO_DAEMON", "1")
    if a.arena:
        return arena_table(a.arena, a.model or ["mcunet-in3", "mbv2-w0.35", "mobilenetv2"])
    options = {"optimize": a.optimize} if a.optimize else {}
    print(f"board {BOARD} ({targets.get(BOARD).description}); plan {options or 'layer by layer'}")
    print("| model | weights B | flash B | PSRAM B | tensors in PSRAM | PSRAM B read / inference | "
          "same, flash filled in order | place s | build s | QEMU run s | bit-exact |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in a.model or ["tiny", "mbv2-w0.35", "efficientnet-lite0"]:
        print(row(name, options), flush=True)
    return 0


def arena_table(board: str, names: list) -> int:
    """The --arena table (docs/regions.md, "Arena buffers in several regions")."""
    print(f"board {board} ({targets.get(board).description}); plan layer by layer; arena buffers over its regions")
    print("| model | arena B | SRAM room B | SRAM arena B | PSRAM arena B | buffers in PSRAM | PSRAM B moved / "
          "inference (of all) | same, arena's top in PSRAM | place s | build s | QEMU run s | bit-exact |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        print(arena_row(name, board), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
