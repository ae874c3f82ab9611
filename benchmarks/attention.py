"""The attention models' arenas next to TFLite Micro's (issue 33 item 2).

    python3 benchmarks/attention.py [--write-docs]

For tests/data/kws_transformer.tflite and tests/data/tiny_vit.tflite (scripts/attention_models.py): operators,
MACs, all activation bytes, our lower bound and arena (`plan_arena`'s defaults: what `buildtool plan` gives),
and TFLite Micro's planned arena. TFLite Micro cannot allocate either model as written (it does not register
GELU), so its figure is measured on the same graph with each GELU replaced by a TANH over the same int8
tensors (same shapes, same producers and consumers, no scratch buffer either way): the same planning problem.
It is the non-persistent arena head its RecordingMicroAllocator reports (benchmarks/arena.py: tflm_arena).
Then each model's firmware on the emulated boards (cortex-m4, cortex-m55, riscv32): instructions (all, and the
shares of FULLY_CONNECTED, BATCH_MATMUL and SOFTMAX) and the RAM the firmware measured.
--write-docs puts the tables between the markers of docs/attention.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from arena import tflm_arena  # noqa: E402
from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool import pipeline  # noqa: E402
from buildtool.firmware import runner  # noqa: E402
from buildtool.model.ir import Graph  # noqa: E402
from buildtool.model.reader import load  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402
from buildtool.plan.arena.planner import plan_arena  # noqa: E402

MODELS = ["kws_transformer", "tiny_vit"]
BOARDS = ["cortex-m4", "cortex-m55", "riscv32"]  # the emulated ones (host and xcore run natively: time, not counts)
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
    out("\nFirmware in the emulators (input zeros; instructions counted by QEMU's plugin, RAM as the firmware "
        "measured it: arena, stack high-water mark and other static data):\n")
    out("| model | board | instructions | FULLY_CONNECTED | BATCH_MATMUL | SOFTMAX | RAM measured | of it arena |")
    out("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in MODELS:
        g = load(ROOT / "tests" / "data" / f"{name}.tflite")
        p = plan_arena(g)
        x = np.zeros(g.tensors[g.inputs[0]].shape, np.int8)
        for board in BOARDS:
            with tempfile.TemporaryDirectory() as d:
                pipeline.build(g, board, d, plan=p)
                _, prof, ram = runner.run(board, d, [x])
            by = {}
            for o in prof["ops"]:
                by[o["opcode"]] = by.get(o["opcode"], 0) + o["count"]
            total = sum(by.values())
            share = [f"{100.0 * by.get(k, 0) / total:.1f}%" for k in ("FULLY_CONNECTED", "BATCH_MATMUL", "SOFTMAX")]
            out(f"| {name} | {board} | {total:,} | {' | '.join(share)} | {ram['measured_bytes']:,} "
                f"| {ram['arena_bytes']:,} |")
    if a.write_docs:
        write_docs("docs/attention.md", "attention.py", out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
