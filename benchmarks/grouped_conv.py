"""Grouped convolutions (issue 54 item 1): instructions per layer of tests/data/grouped_conv_int8.tflite (groups
4, 8, 2, 8, then an ordinary 1x1; scripts/grouped_conv_model.py) on each board given, the board's own kernel set
(each group a call of its conv paths) against the reference set, counted in QEMU by the run report.

    python benchmarks/grouped_conv.py [BOARD ...]     (default: cortex-m4 riscv32)

Prints a Markdown table: per layer and in total, instructions with the reference set and the board's set.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from buildtool import pipeline  # noqa: E402
from buildtool.firmware import runner  # noqa: E402
from buildtool.model.ops import conv_groups  # noqa: E402
from buildtool.model.reader import load  # noqa: E402

MODEL = ROOT / "tests" / "data" / "grouped_conv_int8.tflite"


def counts(board: str, kernels, tmp: Path) -> list:
    g = load(str(MODEL))
    x = [np.random.default_rng(0).integers(-128, 128, size=g.tensors[g.inputs[0]].shape, dtype=np.int8)]
    out = tmp / f"{board}-{kernels[0] if kernels else 'own'}"
    pipeline.build(g, board, out, kernels=kernels)
    _, prof, _ = runner.run(board, out, x)
    return [o["count"] for o in prof["ops"]]


def main(boards: list) -> int:
    g = load(str(MODEL))
    with tempfile.TemporaryDirectory() as tmp:
        for board in boards:
            ref, own = counts(board, ("reference",), Path(tmp)), counts(board, None, Path(tmp))
            print(f"\n{board}: instructions per layer, reference set vs the board's set\n")
            print("| op | groups | reference | board's set | ratio |\n|---|---:|---:|---:|---:|")
            for op, r, o in zip(g.operators, ref, own):
                print(f"| {op.index} | {conv_groups(g, op)} | {r:,} | {o:,} | {r / o:.2f} |")
            print(f"| total | | {sum(ref):,} | {sum(own):,} | {sum(ref) / sum(own):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["cortex-m4", "riscv32"]))
