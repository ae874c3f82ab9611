"""Kernel variants chosen at code generation (buildtool/codegen/kernel_variants.py) against the run-time
dispatchers: per shared model and board, model.c in each of kernel_variants.MODES (dispatchers: as
before the tables; variants: the chosen variant called; instances: also a per-layer instance of the
cortex-m patch-matrix loops with the layer's parameters as constants; each at optimize_code=speed, the code
budget's fastest set), executed instructions (QEMU
plugin: the operators' regions), the conv/depthwise/FC part, code size (.text) and whether the
outputs are byte-identical across the modes.

    python benchmarks/kernel_variants.py                       # cortex-m4 and riscv32, shared models
    python benchmarks/kernel_variants.py --boards cortex-m4 --models mbv2_w035_144

Models come from ../shared/models (BUILDTOOL_SHARED overrides ../shared).
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

from buildtool import pipeline, targets
from buildtool.codegen import kernel_variants
from buildtool.firmware import runner, toolchain
from buildtool.model import reader as tflite_reader  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
MODELS = ["tiny_cnn_32", "dscnn_kws", "resnet_concat_64", "mbv2_w035_144", "mobilenetv2_160_a1"]
KERNEL_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def measure(g, board: str, work: Path, x) -> dict | None:
    """One build and run: instructions (ops, kernels, whole run), .text bytes, output bytes."""
    try:
        pipeline.build(g, board, work, pipeline.PlanOptions(optimize_code="speed"))  # every layer its fastest
    except toolchain.FirmwareError as e:
        if "does not fit" in str(e):
            return None
        raise
    y, prof, _ = runner.run(board, work, x)
    ys = y if isinstance(y, list) else [y]
    text = runner._section_bytes(targets.get(board), work / "firmware.elf", (".text",))
    return {"ops": sum(o["count"] for o in prof["ops"]), "total": prof.get("total", 0),
            "kernels": sum(o["count"] for o in prof["ops"] if o["opcode"] in KERNEL_OPS),
            "text": text, "out": b"".join(np.asarray(v).tobytes() for v in ys)}


def compare(name: str, board: str, work: Path) -> dict | None:
    """mode -> measure() for one model and board (None: the model does not fit)."""
    g = tflite_reader.parse((SHARED / f"{name}.tflite").read_bytes())
    x = np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
    out = {}
    for mode in ("dispatchers", "variants", "instances"):
        with kernel_variants.mode(mode):
            out[mode] = measure(g, board, work / mode, x)
        if out[mode] is None:
            return None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", default="cortex-m4,riscv32")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    print("| model | board | instructions: dispatchers | variants | instances | instances / dispatchers "
          "| conv+dw+FC ratio | .text bytes: dispatchers | variants | instances | identical |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="bt-variants-") as tmp:
        for name in a.models.split(","):
            if not (SHARED / f"{name}.tflite").exists():
                continue
            for board in a.boards.split(","):
                r = compare(name, board, Path(tmp) / name / board)
                if r is None:
                    print(f"| {name} | {board} | does not fit |||||||||")
                    continue
                d, v, i = r["dispatchers"], r["variants"], r["instances"]
                same = d["out"] == v["out"] == i["out"]
                print(f"| {name} | {board} | {d['ops']:,} | {v['ops']:,} | {i['ops']:,} | {i['ops'] / d['ops']:.4f} "
                      f"| {i['kernels'] / d['kernels']:.4f} | {d['text']:,} | {v['text']:,} | {i['text']:,} "
                      f"| {'yes' if same else 'NO'} |", flush=True)

if __name__ == "__main__":
    main()
