"""Explicit PADs folded into their convolutions (model/fold_pad.py, docs/fusion.md "Explicit PADs").

    python benchmarks/fold_pad.py [--model NAME ...]

Each zoo network is written as an NCHW framework's converter writes it (zoo/nchw.explicit_pads: every
padded conv a PAD of the zero point + a VALID conv), serialised and read back, then planned as the
file reads (the PADs kept) and folded (what every buildtool command plans): the layer-by-layer arena,
and --optimize ram's arena and fusion blocks (plan_memory: the optimiser never returns more than the
plain plan). The last column is the same network with SAME convs, as the zoo builds it (its windows sit
one row and column later at stride 2, so its values differ; its RAM is the yardstick). Prints a markdown
table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from buildtool import zoo  # noqa: E402
from buildtool.model.fold_pad import fold_pads  # noqa: E402
from buildtool.model.reader import parse  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402
from buildtool.options import PlanOptions  # noqa: E402
from buildtool.steps.plan import plan_memory  # noqa: E402
from buildtool.zoo.nchw import explicit_pads  # noqa: E402

MODELS = ("mbv2-w0.35", "mcunet-vww1", "mobilenetv2")
RAM = PlanOptions.from_map({"optimize": "ram"})


def row(name: str) -> str:
    same = zoo.build(name)
    raw = parse(serialize(explicit_pads(same)), name=name)
    folded = fold_pads(raw)
    cells = [name, str(sum(op.opcode == "PAD" for op in raw.operators))]
    for g in (raw, folded):
        plain, ram = plan_memory(g), plan_memory(g, RAM)
        cells += [f"{plain.arena_bytes:,}", f"{ram.arena_bytes:,} ({len(ram.regions(g))})"]
    cells.append(f"{plan_memory(same, RAM).arena_bytes:,}")
    return "| " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", choices=zoo.names(True), help="zoo network (default: three)")
    a = ap.parse_args(argv)
    print("| network | PADs | plain, as read | --optimize ram (blocks), as read | plain, folded "
          "| --optimize ram (blocks), folded | --optimize ram, SAME convs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in a.model or MODELS:
        print(row(name), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
