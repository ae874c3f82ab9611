"""Reading models: buildtool's reader next to TFLite Micro's interpreter construction, medians of several runs.

    python benchmarks/reader.py [--runs N]

Prints a Markdown table for docs/arena.md ("Reading models"). Rows: every .tflite of ../shared/models
and ../shared/models/real, and the zoo MobileNetV2 (serialized in memory). Columns:
  read       tflite_reader.read: flatbuffer -> Graph, every offset, count and size checked
  parse      tflite_reader.parse: read + the operator and graph checks (what `buildtool plan` runs
             before planning; the file is already in memory)
  TFLM       tflite_micro's Interpreter.from_file (reads the file, allocates and prepares its arena),
             with the arena size the tests give it (10x the file, at least 1 MiB)
Run it on an idle machine: the medians move with the load.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"

from buildtool.model import reader as tflite_reader
from buildtool import zoo  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402
from docs_tables import median_ms  # noqa: E402 (beside this script)


def models() -> list:
    """(label, bytes): the shared and published models, then the zoo MobileNetV2."""
    out = [(p.name, p.read_bytes()) for p in sorted(SHARED.glob("*.tflite"))]
    out += [(f"real/{p.name}", p.read_bytes()) for p in sorted((SHARED / "real").glob("*.tflite"))]
    out.append(("mobilenetv2 (zoo)", serialize(zoo.build("mobilenetv2"))))
    return out


def tflm_ms(path: str, size: int, runs: int):
    try:
        from tflite_micro import runtime
    except ImportError:
        return None
    arena = max(10 * size, 1 << 20)
    try:
        return median_ms(lambda: runtime.Interpreter.from_file(path, arena_size=arena), runs, warm=True)
    except Exception:  # a model TFLM's Python interpreter cannot prepare
        return None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args(argv)
    print("| model | bytes | tensors | operators | read ms | parse ms | TFLM from_file ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, data in models():
            g, _ = tflite_reader.read(data)
            read = median_ms(lambda: tflite_reader.read(data), args.runs, warm=True)
            try:
                tflite_reader.parse(data)
                parse = f"{median_ms(lambda: tflite_reader.parse(data), args.runs, warm=True):.2f}"
            except tflite_reader.ModelError:
                parse = "refused"  # does not plan (e.g. float32 tensors): read is what inspect costs
            path = os.path.join(tmp, "m.tflite")
            with open(path, "wb") as f:
                f.write(data)
            t = tflm_ms(path, len(data), args.runs)
            print(f"| {label} | {len(data):,} | {len(g.tensors)} | {len(g.operators)} | {read:.2f} | {parse} | "
                  f"{'-' if t is None else f'{t:.2f}'} |", flush=True)


if __name__ == "__main__":
    main()
