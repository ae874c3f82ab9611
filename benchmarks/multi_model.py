"""Several models in one firmware and one arena: the joint arena against separate arenas.

    python benchmarks/multi_model.py [--board cortex-m4] [--time-budget S] [--write-docs]

For each product pair (wake word then command, person detection then classification, ...) and
each plan (plain, --optimize ram): every model's own arena and state (persistent) bytes, the joint
arena of one firmware running both (state side by side, the rest shared), what two separate arenas
would take, and, built for --board and run in its emulator (A, B, then A again), the measured RAM
(arena + stack high-water mark + other static data) and whether every output is byte-identical to
TFLite Micro's. --write-docs puts the table between the markers of docs/multi-model.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool import pipeline  # noqa: E402
from buildtool.plan.joint import model_options  # noqa: E402
from buildtool.options import PlanOptions  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
PAIRS = [("wake word -> command", "real/tflm_keyword_scrambled_8bit", "dscnn_kws"),
         ("keyword -> image", "dscnn_kws", "tiny_cnn_32"),
         ("person -> class", "mcunet-vww1", "mbv2-w0.35")]


def spec(name: str) -> str:
    """A shared model's path, or a zoo name as it is."""
    p = SHARED / f"{name}.tflite"
    return str(p) if p.exists() else name


def tflm(model, sets: list) -> list:
    """TFLite Micro's outputs of one interpreter invoked once per input set."""
    from tflite_micro import runtime

    data = serialize(model.graph) if not os.path.exists(model.shown) else Path(model.shown).read_bytes()
    ip = runtime.Interpreter.from_bytes(data, arena_size=max(10 * len(data), 1 << 20))
    outs = []
    for xs in sets:
        for k, x in enumerate(xs):
            ip.set_input(x, k)
        ip.invoke()
        outs.append([np.array(ip.get_output(k)) for k in range(len(model.graph.outputs))])
    return outs


def inputs(model, seed: int) -> list:
    g, rng = model.graph, np.random.default_rng(seed)
    return [rng.integers(-3000 if g.tensors[i].dtype == "int16" else -128,
                         3000 if g.tensors[i].dtype == "int16" else 128, size=g.tensors[i].shape)
            .astype(g.tensors[i].dtype) for i in g.inputs]


def measure(models: list, plans: list, board: str) -> tuple:
    """(joint plan, RAM report, bit-exact) of the pair built for board and run A, B, A."""
    with tempfile.TemporaryDirectory(prefix="bt-multi-") as out:
        _, joint = pipeline.build_multi(models, board, out, plans=plans)
        xs = [inputs(m, k) for k, m in enumerate(models)]
        runs, ram = pipeline.run_multi(board, out, xs)
    refs = [tflm(m, [x, x]) for m, x in zip(models, xs)]
    seen, exact = set(), True
    for k, ys in runs:
        ref = refs[k][1 if k in seen else 0]
        seen.add(k)
        exact &= all(np.array_equal(y, r) for y, r in zip(ys, ref))
    return joint, ram, exact


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="cortex-m4")
    ap.add_argument("--time-budget", type=float, default=2.0)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    out = Out()
    out(f"Board {a.board}; {environment()}.")
    out()
    out("| pair (A -> B) | plan | A own arena | B own arena | state | joint arena | separate arenas | saved | "
        "RAM measured | bit-exact (A, B, A) |")
    out("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for label, a_name, b_name in PAIRS:
        models = [pipeline.read_model(spec(n)) for n in (a_name, b_name)]
        for how, opts in (("plain", PlanOptions(time_budget=a.time_budget)),
                          ("--optimize ram", PlanOptions(optimize="ram", time_budget=a.time_budget))):
            plans = [pipeline.plan_memory(m.graph, model_options(m.graph, opts)) for m in models]
            joint, ram, exact = measure(models, plans, a.board)
            own = [p.arena_bytes for p in plans]
            out(f"| {label}: {models[0].name} -> {models[1].name} | {how} | {own[0]:,} | {own[1]:,} | "
                f"{joint.persistent_bytes:,} | {joint.arena_bytes:,} | {sum(own):,} | "
                f"{sum(own) - joint.arena_bytes:,} | "
                f"{ram['total_bytes']:,} | {'yes' if exact else 'NO'} |")
    out()
    out("A model with state (SVDF) keeps its plain plan: fused plans refuse stateful operators.")
    if a.write_docs:
        write_docs("docs/multi-model.md", "multi_model.py", out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
