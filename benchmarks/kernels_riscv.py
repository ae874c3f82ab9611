"""RISC-V scalar kernels per layer: executed instructions and instructions per MAC of our riscv kernel
set against our reference set on rv32imac (qemu-system-riscv32 -M virt, QEMU instruction-count
plugin), for every CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED layer of the shared models, with
totals per layer class and whether the two firmwares' outputs are byte-identical.

    python benchmarks/kernels_riscv.py                     # the four shared models, Markdown tables
    python benchmarks/kernels_riscv.py --models tiny_cnn_32 --board hifive1

`rows(models, board)` returns the per-layer rows (for other benchmarks, e.g. kernels_vs_cmsis.py);
`class_totals(rows)` sums them per layer class. Models come from ../shared/models (BUILDTOOL_SHARED).
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

from buildtool import firmware, ops, runner, tflite_reader  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
MODELS = ("mbv2_w035_144", "tiny_cnn_32", "dscnn_kws", "resnet_concat_64")
KERNEL_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


def layer_class(g, op) -> str:
    """conv 1x1, conv KxK, depthwise or FC."""
    if op.opcode == "CONV_2D":
        kh, kw = g.tensors[op.inputs[1]].shape[1:3]
        return "conv 1x1" if (kh, kw) == (1, 1) else "conv KxK"
    return {"DEPTHWISE_CONV_2D": "depthwise", "FULLY_CONNECTED": "FC"}[op.opcode]


def layer_label(g, op) -> str:
    """Filter shape, output shape and stride of one layer, e.g. 'k3x3 s2 3->16 @72x72'."""
    f = g.tensors[op.inputs[1]].shape
    out = g.tensors[op.outputs[0]].shape
    if op.opcode == "FULLY_CONNECTED":
        return f"{f[1]}->{f[0]}"
    cin = g.tensors[op.inputs[0]].shape[-1]
    return f"k{f[1]}x{f[2]} s{op.options.get('stride_h', 1)} {cin}->{out[-1]} @{out[1]}x{out[2]}"


def _profile(g, board: str, kernels, work: Path, x) -> tuple:
    """(outputs, per-operator instruction counts in operator index order)."""
    firmware.build(g, board, work, kernels=kernels)
    y, prof, _ = runner.run(board, work, x)
    return y, {o["op"]: o["count"] for o in prof["ops"]}


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def rows(models=MODELS, board: str = "riscv32", work: Path | None = None) -> list:
    """One dict per conv/depthwise/FC layer: model, op, class, label, macs, ref, opt (instructions),
    ref_per_mac, opt_per_mac, ratio (opt / ref) and identical (the whole model's outputs)."""
    out = []
    with tempfile.TemporaryDirectory(prefix="bt-kriscv-") as tmp:
        base = Path(work or tmp)
        for name in models:
            g = tflite_reader.parse((SHARED / f"{name}.tflite").read_bytes())
            x = np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
            y_ref, ref = _profile(g, board, ("reference",), base / name / "ref", x)
            y_opt, opt = _profile(g, board, None, base / name / "opt", x)
            same = _same(y_ref, y_opt)
            for op in g.operators:
                if op.opcode not in KERNEL_OPS:
                    continue
                macs = ops.op_macs(g, op)
                r, o = ref[op.index], opt[op.index]
                out.append(dict(model=name, op=op.index, cls=layer_class(g, op), label=layer_label(g, op), macs=macs,
                                ref=r, opt=o, ref_per_mac=r / macs, opt_per_mac=o / macs, ratio=o / r, identical=same))
    return out


CLASSES = ("conv 1x1", "conv KxK", "depthwise", "FC", "all")


def class_totals(rs: list) -> list:
    """(model, class, macs, ref, opt) per model and layer class (CLASSES order, 'all' last)."""
    acc = {}
    for r in rs:
        for key in ((r["model"], r["cls"]), (r["model"], "all")):
            m, a, b = acc.get(key, (0, 0, 0))
            acc[key] = (m + r["macs"], a + r["ref"], b + r["opt"])
    models = list(dict.fromkeys(r["model"] for r in rs))
    return [(mdl, cls, *acc[mdl, cls]) for mdl in models for cls in CLASSES if (mdl, cls) in acc]


def markdown(rs: list, board: str) -> str:
    lines = [f"### Per layer, {board}: riscv set vs reference set (instructions, QEMU plugin)\n",
             "| model | op | class | layer | MACs | reference insns | riscv insns | ref insns/MAC | riscv insns/MAC "
             "| riscv / ref | outputs identical |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rs:
        lines.append(f"| {r['model']} | {r['op']} | {r['cls']} | {r['label']} | {r['macs']} | {r['ref']} | {r['opt']} "
                     f"| {r['ref_per_mac']:.2f} | {r['opt_per_mac']:.2f} | {r['ratio']:.2f} "
                     f"| {'yes' if r['identical'] else 'NO'} |")
    lines += ["", f"### Totals per layer class, {board}\n",
              "| model | class | MACs | reference insns | riscv insns | ref insns/MAC | riscv insns/MAC | riscv / ref |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for mdl, cls, macs, ref, opt in class_totals(rs):
        lines.append(f"| {mdl} | {cls} | {macs} | {ref} | {opt} | {ref / macs:.2f} | {opt / macs:.2f} | {opt / ref:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--board", default="riscv32", help="riscv32 or hifive1 (scalar rv32imac boards)")
    a = ap.parse_args(argv)
    names = [n for n in a.models.split(",") if (SHARED / f"{n}.tflite").exists()]
    print(markdown(rows(names, a.board), a.board))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
