"""Arena planning benchmark: our arena against the lower bound and TFLite Micro's planner.

    python benchmarks/arena.py [--time-budget S] [--align N] [--repeats N] [--write-docs]

Prints a markdown table (the one in docs/arena.md): for every shared model (../shared/models,
when present) and every zoo model: total activation bytes, the lower bound in the model's order
without in-place (what any liveness planner can at best reach), our lower bound and arena
(order search and in-place on), the winning packer, whether it is proven optimal, TFLite Micro's
planned arena (measured: the non-persistent "head" its RecordingMicroAllocator reports), the
planning time of one plan_arena call, the model's MACs and the wall time of the whole
`buildtool plan MODEL --no-daemon` process (start-up, parsing, planning; best of --repeats).
--write-docs puts the table between the markers of docs/arena.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
from docs_tables import Out, cli_plan, environment, write_docs  # noqa: E402

from buildtool import zoo  # noqa: E402
from buildtool.plan.arena.planner import plan_arena  # noqa: E402
from buildtool.model.reader import load  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402
from buildtool.pipeline.tflm_export import tflm_head  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
SHARED_NAMES = ["tiny_cnn_32", "dscnn_kws", "resnet_concat_64", "mbv2_w035_144", "mobilenetv2_160_a1"]


def tflm_arena(model: bytes) -> int:
    """Bytes TFLite Micro's planner gives the activations (the arena head): pipeline/tflm_export.tflm_head."""
    return tflm_head(model)


def models():
    for name in SHARED_NAMES:
        p = SHARED / f"{name}.tflite"
        if p.exists():
            yield name, load(p), p.read_bytes(), str(p)
    for name in zoo.names():
        g = zoo.build(name)
        yield f"zoo:{name}", g, serialize(g), name


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-budget", type=float, default=2.0)
    ap.add_argument("--align", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=1, help="best of N runs of each `buildtool plan` (default 1)")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the generated table of docs/arena.md")
    a = ap.parse_args(argv)
    importlib.import_module("ortools.sat.python.cp_model")  # one-off import, kept out of the planning times
    out = Out()
    out(f"Measured {environment()}; `python benchmarks/arena.py --time-budget {a.time_budget:g} --align {a.align} "
        f"--repeats {a.repeats}`.\n")
    out("| model | activations total | bound, model order | our bound | our arena | planner | optimal "
        "| TFLM arena | ours vs TFLM | in-place ops | MACs | planning time | plan wall s |")
    out("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for name, g, data, model in models():
        plain = plan_arena(g, align=a.align, time_budget=0, order_search=False, inplace=False)
        t0 = time.perf_counter()
        p = plan_arena(g, align=a.align, time_budget=a.time_budget)
        dt = time.perf_counter() - t0
        tflm = tflm_arena(data)
        j, wall = cli_plan(model, ["--align", str(a.align), "--time-budget", f"{a.time_budget:g}"], a.repeats)
        if j["arena_bytes"] != p.arena_bytes:
            raise RuntimeError(f"{name}: buildtool plan gave {j['arena_bytes']} B, plan_arena {p.arena_bytes} B")
        out(f"| {name} | {p.total_activation_bytes:,} | {plain.lower_bound_bytes:,} | {p.lower_bound_bytes:,} "
            f"| {p.arena_bytes:,} | {p.planner} | {'yes' if p.optimal else 'no'} | {tflm:,} "
            f"| {100.0 * (p.arena_bytes - tflm) / tflm:+.1f}% | {len(p.inplace_ops)} | {j['macs']:,} | {dt:.2f} s "
            f"| {wall:.2f} |")
    if a.write_docs:
        write_docs("docs/arena.md", "arena.py", out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
