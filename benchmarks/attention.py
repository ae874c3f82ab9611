"""The attention models' arenas next to TFLite Micro's (issue 33 item 2).

    python3 benchmarks/attention.py [--write-docs]

For tests/data/kws_transformer.tflite and tests/data/tiny_vit.tflite (scripts/attention_models.py): operators,
MACs, all activation bytes, our lower bound and arena (`plan_arena`'s defaults: what `buildtool plan` gives),
and TFLite Micro's planned arena. TFLite Micro cannot allocate either model as written (it does not register
GELU), so its figure is measured on the same graph with each GELU replaced by a TANH over the same int8
tensors (same shapes, same producers and consumers, no scratch buffer either way): the same planning problem.
It is the non-persistent arena head its RecordingMicroAllocator reports (benchmarks/arena.py: tflm_arena).
--write-docs puts the table between the markers of docs/attention.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from arena import tflm_arena  # noqa: E402
from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool.model.ir import Graph  # noqa: E402
from buildtool.model.reader import load  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402
from buildtool.plan.arena.planner import plan_arena  # noqa: E402

MODELS = ["kws_transformer", "tiny_vit"]
__all__ = ["gelu_as_tanh", "tflm_arena", "main"]


def gelu_as_tanh(g: Graph) -> Graph:
    """g with every GELU a TANH on the same tensors: a graph TFLite Micro allocates, with g's planning problem."""
    return dataclasses.replace(g, operators=[dataclasses.replace(op, opcode="TANH", options={})
                                             if op.opcode == "GELU" else op for op in g.operators])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-docs", action="store_true", help="rewrite the generated table of docs/attention.md")
    a = ap.parse_args(argv)
    out = Out()
    out(f"Measured {environment()}; `python3 benchmarks/attention.py`.\n")
    out("| model | operators | MACs | activations total | our bound | our arena | TFLM arena (GELU as TANH) "
        "| ours vs TFLM |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in MODELS:
        g = load(ROOT / "tests" / "data" / f"{name}.tflite")
        p = plan_arena(g)
        tflm = tflm_arena(serialize(gelu_as_tanh(g)))
        out(f"| {name} | {len(g.operators)} | {p.macs:,} | {p.total_activation_bytes:,} | {p.lower_bound_bytes:,} "
            f"| {p.arena_bytes:,} | {tflm:,} | {100.0 * (p.arena_bytes - tflm) / tflm:+.1f}% |")
    if a.write_docs:
        write_docs("docs/attention.md", "attention.py", out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
