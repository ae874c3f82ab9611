"""Fusion and splitting figures in the layout of msf-CNN's Table 1, for docs/fusion.md.

    python benchmarks/fusion.py [--models mbv2-w0.35,mcunet-vww1,...] [--accounting streamed|arena|both]
                                [--repeats N] [--write-docs]
    python benchmarks/fusion.py --instructions [--blocks] [--board B] [--models ...]   # firmware cost (a model: a zoo
                                                                                      # name or a .tflite path)
    python benchmarks/fusion.py --instructions --write-docs --models mbv2-w0.35,mcunet-vww1

First, per model and mode, what `buildtool plan` gives with the CLI's defaults: arena bytes,
planned MACs and their overhead over the unfused network, and the wall time of the whole
`buildtool plan ... --no-daemon` process (start-up, parsing, search, packing; best of --repeats).
Then the msf-CNN tables: each figure the packed arena of the real plan (kB = 1000 B, as the
papers print) with its MAC overhead; "front s" is the time to get the whole Pareto front (every
P1 and P2 answer of the row comes from it). --write-docs puts all of it between the markers
of docs/fusion.md. --instructions --write-docs writes the firmware-cost tables into their own
region of docs/fusion.md: cortex-m4 with its per-block table, then riscv32.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from docs_tables import Out, cli_plan, environment, write_docs  # noqa: E402

from buildtool import zoo  # noqa: E402
from buildtool.errors import PlanError  # noqa: E402
from buildtool.plan.fusion.planner import plan_from_front, plan_fused  # noqa: E402
from buildtool.plan.fusion.search import search_front  # noqa: E402
from buildtool.plan.fusion.instructions import INSTRUCTION_MARGIN, predict_items  # noqa: E402
from buildtool.plan.fusion.schedule import BlockRun  # noqa: E402
from buildtool.report import plain_plan  # noqa: E402

BUDGET = 0.0  # no exact solving: the figures are deterministic (heuristics + iterated greedy)
FACTORS = (1.1, 1.2, 1.3, 1.4, 1.5, float("inf"))
LIMITS_KB = (16, 32, 64, 128, 256)
MODELS = ("mbv2-w0.35", "mcunet-vww1", "mcunet-in3", "mobilenetv2")
# (label, `buildtool plan` arguments): the modes a user picks
MODES = (("plain", []), ("--split auto", ["--split", "auto"]), ("--optimize ram", ["--optimize", "ram"]),
         ("--optimize ram, no cap", ["--optimize", "ram", "--max-mac-overhead", "none"]),
         ("--optimize ram --input-streamed", ["--optimize", "ram", "--input-streamed"]),
         ("--optimize ram --input-streamed, no cap", ["--optimize", "ram", "--input-streamed",
                                                      "--max-mac-overhead", "none"]))
SPLITS = {"no split": [], "single": [(0, 5, 12)], "dual": [(0, 5, 12), (6, 12, 8)],
          "triple (xformer's best)": [(0, 5, 12), (6, 12, 8), (13, 20, 2)], "auto": "auto"}


def _cell(plan) -> str:
    return f"{plan.arena_bytes / 1000:.1f} ({plan.mac_overhead:.2f}x)"


def table_rows(g, streamed: bool) -> tuple:
    t0 = time.perf_counter()
    front = search_front(g, streamed=streamed)
    t_search = time.perf_counter() - t0
    vanilla = plain_plan(g, streamed)
    cells, prev = [], None
    for f in FACTORS:
        p = plan_from_front(g, front, factor=f, time_budget=BUDGET)
        if prev is not None and prev.arena_bytes <= p.arena_bytes:
            p = prev  # the plan for a tighter budget is within this one too
        cells.append(_cell(p))
        prev = p
    for kb in LIMITS_KB:
        try:
            cells.append(_cell(plan_from_front(g, front, optimize="macs", ram_limit=kb * 1000, time_budget=BUDGET)))
        except PlanError:
            cells.append("infeasible")
    return vanilla, cells, t_search


def peak_item(g, plan) -> str:
    """The schedule item running at the plan's peak tile-step (where the bound sits)."""
    step = plan.profile.index(max(plan.profile))
    for k, (s0, s1) in enumerate(plan.item_steps):
        if s0 <= step <= s1:
            grp = next((grp for grp in plan.schedule.pipelined if k in grp), (k,))
            return " + ".join(_item(g, plan.schedule.items[j]) for j in grp) + (" pipelined" if len(grp) > 1 else "")
    return "-"


def _item(g, it) -> str:
    if isinstance(it, int):
        return f"op {it} {g.operators[it].opcode}"
    return f"ops {it.p}-{it.q - 1} {it.scheme} {it.tile[0]}x{it.tile[1]}"


def pipelined(out, names, accs) -> None:
    """Least-RAM plans (F = inf) with and without pipelined pairs in the search: where a pair of
    blocks running interleaved tile rows lowers the least peak, and what it costs in MACs."""
    out("\n#### Pipelined blocks: least-RAM plans (F = inf) searched without and with pipelined pairs, bytes\n")
    out("| model | input | sequential arena B | bound B | MAC overhead | pipelined arena B | bound B | MAC overhead | pair |")
    out("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for name in names:
        g = zoo.build(name)
        for streamed in accs:
            plans = [plan_from_front(g, search_front(g, streamed=streamed, pipelined=on), time_budget=BUDGET)
                     for on in (False, True)]
            grp = plans[1].schedule.pipelined
            pair = " + ".join(_item(g, plans[1].schedule.items[j]) for j in grp[0]) if grp else "none chosen"
            cells = " | ".join(f"{p.arena_bytes:,} | {p.lower_bound_bytes:,} | {p.mac_overhead:.2f}x" for p in plans)
            out(f"| {name} | {'streamed' if streamed else 'in arena'} | {cells} | {pair} |")


def modes(out, names, repeats: int) -> None:
    """What `buildtool plan` gives per mode with its defaults, and how long the whole command takes."""
    out("#### `buildtool plan MODEL MODE --no-daemon`: arena, planned MACs, wall time of the command\n")
    out("| model | mode | arena B | MACs | MAC overhead | plan wall s |")
    out("|---|---|---:|---:|---:|---:|")
    for name in names:
        for label, args in MODES:
            j, dt = cli_plan(name, args, repeats)
            out(f"| {name} | {label} | {j['arena_bytes']:,} | {j['macs']:,} | {j.get('mac_overhead', 1.0):.2f}x "
                f"| {dt:.2f} |")


def least_ram(out, names, accs) -> None:
    """F = inf plans in bytes: packed arena, the schedule's bound, and where the bound sits."""
    out("\n#### Least-RAM plans (F = inf), bytes\n")
    out("| model | input | arena B | bound B | MAC overhead | peak at | planner |")
    out("|---|---|---|---|---|---|---|")
    for name in names:
        g = zoo.build(name)
        for streamed in accs:
            p = plan_fused(g, optimize="ram", max_mac_overhead="none", input_streamed=streamed, time_budget=BUDGET)
            out(f"| {name} | {'streamed' if streamed else 'in arena'} | {p.arena_bytes} | {p.lower_bound_bytes} "
                f"| {p.mac_overhead:.2f}x | {peak_item(g, p)} | {p.planner} |")


def firmware_instructions(g, plan, board: str = "cortex-m4") -> tuple:
    """(whole-run instructions, [(profile region id, instructions)] in execution order) of plan's
    firmware on board (QEMU)."""
    import tempfile

    import numpy as np

    from buildtool import pipeline
    from buildtool.firmware import runner

    x = np.random.default_rng(0).integers(-128, 128, g.tensors[g.inputs[0]].shape, dtype=np.int8)
    with tempfile.TemporaryDirectory(prefix="bt-bench-") as d:
        pipeline.build(g, board, d, {"time_budget": BUDGET}) if plan is None else pipeline.build(g, board, d, plan=plan)
        _, prof, _ = runner.run(board, d, x)
    return prof["total"], [(o["op"], o["count"]) for o in prof["ops"]]


def _graph(name: str):
    """A zoo model's graph, or a .tflite file's (--instructions --models /path/model.tflite)."""
    if name.endswith(".tflite"):
        from buildtool import pipeline

        return pipeline.read_model(name).graph
    return zoo.build(name)


def instructions(out, names, accs, blocks: bool, board: str = "cortex-m4", per_op: bool = False) -> None:
    """Planned MACs against firmware instructions on board (least-RAM plans): the fused firmware
    over the prediction (plain per-op instructions x each block's MAC overhead); goal at most
    INSTRUCTION_MARGIN. blocks: then the same per fused block. per_op: predicted with each operator's
    own recompute factor (predict_instructions(per_op=True))."""
    out(f"\n#### Firmware cost, {board} (QEMU instructions), least-RAM plans; goal: ratio <= "
        f"{INSTRUCTION_MARGIN}{'; predicted per operator (--per-op)' if per_op else ''}\n")
    out("| model | input | MACs | MAC overhead | plain insns | fused insns | predicted | fused / predicted |")
    out("|---|---|---|---|---|---|---|---|")
    rows = []
    for name in names:
        g = _graph(name)
        plain_total, plain = firmware_instructions(g, None, board)  # the plain firmware
        plain = dict(plain)
        for streamed in accs:
            p = plan_fused(g, optimize="ram", input_streamed=streamed, time_budget=BUDGET)
            fused_total, fused = firmware_instructions(g, p, board)
            items = predict_items(g, p, plain, per_op)
            pred = sum(n for _, n in items) + (plain_total - sum(plain.values()))
            where = "streamed" if streamed else "in arena"
            out(f"| {name} | {where} | {p.macs} | {p.mac_overhead:.2f}x "
                f"| {plain_total} | {fused_total} | {pred} | {fused_total / pred:.3f} |")
            rows += [(name, where, it, sum(plain[i] for i in range(it.p, it.q)), n, pr)
                     for (it, pr), (_, n) in zip(items, fused) if isinstance(it, BlockRun)]
    if not blocks:
        return
    out(f"\nPer fused block, {board}:\n")
    out("| model | input | block (ops) | MAC overhead | plain insns | fused insns | predicted | fused / predicted |")
    out("|---|---|---|---|---|---|---|---|")
    for name, where, it, plain_n, n, pr in rows:
        out(f"| {name} | {where} | {it.p}-{it.q - 1} | {pr / plain_n:.2f}x | {plain_n} | {n} | {pr} "
            f"| {n / pr:.2f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--accounting", choices=("streamed", "arena", "both"), default="both")
    ap.add_argument("--no-splits", action="store_true")
    ap.add_argument("--repeats", type=int, default=1, help="best of N runs of each `buildtool plan` (default 1)")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the generated tables of docs/fusion.md")
    ap.add_argument("--instructions", action="store_true", help="only the firmware instruction table")
    ap.add_argument("--blocks", action="store_true", help="with --instructions: also per fused block")
    ap.add_argument("--board", default="cortex-m4", help="with --instructions: the board (default cortex-m4)")
    ap.add_argument("--per-op", action="store_true",
                    help="with --instructions: predict each operator with its own recompute factor")
    a = ap.parse_args(argv)
    accs = {"streamed": [True], "arena": [False], "both": [True, False]}[a.accounting]
    names = a.models.split(",")
    if a.instructions:
        out = Out()
        boards = ("cortex-m4", "riscv32") if a.write_docs else (a.board,)
        out(f"Measured {environment()}; `python benchmarks/fusion.py --instructions --write-docs --models "
            f"{a.models}{' --per-op' if a.per_op else ''}`.")
        for board in boards:
            instructions(out, names, accs, a.blocks or (a.write_docs and board == "cortex-m4"), board, a.per_op)
        if a.write_docs:
            write_docs("docs/fusion.md", "fusion.py --instructions", out.text)
        return 0
    out = Out()
    out(f"Measured {environment()}; `python benchmarks/fusion.py --repeats {a.repeats}`.\n")
    modes(out, names, a.repeats)
    head = (["model", "vanilla"] + [f"P1 F={'inf' if f == float('inf') else f}" for f in FACTORS]
            + [f"P2 {kb} kB" for kb in LIMITS_KB] + ["front s"])
    for streamed in accs:
        out(f"\n#### {'input streamed' if streamed else 'input in the arena'}, residuals counted: "
            f"peak kB (MAC overhead)\n")
        out("| " + " | ".join(head) + " |")
        out("|" + "---|" * len(head))
        for name in names:
            g = zoo.build(name)
            vanilla, cells, ts = table_rows(g, streamed)
            out(f"| {name} | {vanilla.lower_bound_bytes / 1000:.1f} | " + " | ".join(cells) + f" | {ts:.2f} |")
    least_ram(out, names, accs)
    pipelined(out, names, accs)
    if not a.no_splits:
        g = zoo.build("mobilenetv2")
        out("\n#### Operator splitting, mobilenetv2 160 alpha 1.0, input in the arena\n")
        out("| setting | regions (top:bottom:slices) | peak B | MAC overhead |")
        out("|---|---|---|---|")
        for label, sp in SPLITS.items():
            p = plain_plan(g) if sp == [] else plan_fused(g, splits=sp, time_budget=BUDGET)
            regs = " ".join(f"{r['top']}:{r['bottom']}:{r['slices']}" for r in p.to_json(g)["splits"]) or "-"
            out(f"| {label} | {regs} | {p.arena_bytes} | {p.mac_overhead:.3f} |")
    if a.write_docs:
        write_docs("docs/fusion.md", "fusion.py", out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
