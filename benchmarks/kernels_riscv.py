"""RISC-V kernels per layer: executed instructions and instructions per MAC of our riscv kernel set
against our reference set on rv32imac (qemu-system-riscv32 -M virt, QEMU instruction-count plugin),
and of the same set with RVV 1.0 (board riscv32-rvv: -DBT_RVV, QEMU -cpu rv32,v=true, VLEN=128), for
every CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED layer of the shared models, with totals per layer
class and whether the firmwares' outputs are byte-identical to the reference set's.

    python benchmarks/kernels_riscv.py                     # the four shared models, Markdown tables
    python benchmarks/kernels_riscv.py --models tiny_cnn_32 --board hifive1 --rvv-board none

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

from buildtool import pipeline
from buildtool.model import ops, reader as tflite_reader
from buildtool.firmware import runner  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
MODELS = ("mbv2_w035_144", "tiny_cnn_32", "dscnn_kws", "resnet_concat_64", "mobilenetv2_160_a1")
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
    pipeline.build(g, board, work, kernels=kernels)
    y, prof, _ = runner.run(board, work, x)
    return y, {o["op"]: o["count"] for o in prof["ops"]}


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def rows(models=MODELS, board: str = "riscv32", work: Path | None = None, rvv_board: str | None = None) -> list:
    """One dict per conv/depthwise/FC layer: model, op, class, label, macs, ref, opt (instructions),
    ref_per_mac, opt_per_mac, ratio (opt / ref) and identical (the whole model's outputs); with
    rvv_board also rvv (the riscv set's instructions on that board, None without it), rvv_per_mac,
    rvv_ratio (rvv / ref) and identical covering its outputs too."""
    out = []
    with tempfile.TemporaryDirectory(prefix="bt-kriscv-") as tmp:
        base = Path(work or tmp)
        for name in models:
            g = tflite_reader.parse((SHARED / f"{name}.tflite").read_bytes())
            x = np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
            y_ref, ref = _profile(g, board, ("reference",), base / name / "ref", x)
            y_opt, opt = _profile(g, board, None, base / name / "opt", x)
            same = _same(y_ref, y_opt)
            rvv = {}
            if rvv_board:
                y_rvv, rvv = _profile(g, rvv_board, None, base / name / "rvv", x)
                same = same and _same(y_ref, y_rvv)
            for op in g.operators:
                if op.opcode not in KERNEL_OPS:
                    continue
                macs = ops.op_macs(g, op)
                r, o = ref[op.index], opt[op.index]
                v = rvv.get(op.index)
                out.append(dict(model=name, op=op.index, cls=layer_class(g, op), label=layer_label(g, op), macs=macs,
                                ref=r, opt=o, ref_per_mac=r / macs, opt_per_mac=o / macs, ratio=o / r, identical=same,
                                rvv=v, rvv_per_mac=v / macs if v else None, rvv_ratio=v / r if v else None))
    return out


CLASSES = ("conv 1x1", "conv KxK", "depthwise", "FC", "all")


def class_totals(rs: list) -> list:
    """(model, class, macs, ref, opt, rvv) per model and layer class (CLASSES order, 'all' last); rvv is
    None when the rows have no RVV counts."""
    acc = {}
    for r in rs:
        for key in ((r["model"], r["cls"]), (r["model"], "all")):
            m, a, b, v = acc.get(key, (0, 0, 0, 0))
            acc[key] = (m + r["macs"], a + r["ref"], b + r["opt"], None if v is None or r.get("rvv") is None
                        else v + r["rvv"])
    models = list(dict.fromkeys(r["model"] for r in rs))
    return [(mdl, cls, *acc[mdl, cls]) for mdl in models for cls in CLASSES if (mdl, cls) in acc]


def _rvv_cells(rvv, ref: int, macs: int) -> str:
    """' | rvv insns | rvv insns/MAC | rvv / ref' (empty without RVV counts)."""
    return "" if rvv is None else f" | {rvv} | {rvv / macs:.2f} | {rvv / ref:.3f}"


def markdown(rs: list, board: str, rvv_board: str | None = None) -> str:
    has_rvv = bool(rs) and rs[0].get("rvv") is not None
    rh = f" | {rvv_board} insns | {rvv_board} insns/MAC | {rvv_board} / ref" if has_rvv else ""
    rs_ = "---:|" * 3 if has_rvv else ""
    title = f"riscv set vs reference set{f', and the riscv set with RVV on {rvv_board}' if has_rvv else ''}"
    lines = [f"### Per layer, {board}: {title} (instructions, QEMU plugin)\n",
             "| model | op | class | layer | MACs | reference insns | riscv insns | ref insns/MAC | riscv insns/MAC "
             f"| riscv / ref{rh} | outputs identical |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|" + rs_ + "---|"]
    for r in rs:
        lines.append(f"| {r['model']} | {r['op']} | {r['cls']} | {r['label']} | {r['macs']} | {r['ref']} | {r['opt']} "
                     f"| {r['ref_per_mac']:.2f} | {r['opt_per_mac']:.2f} | {r['ratio']:.3f}"
                     f"{_rvv_cells(r.get('rvv'), r['ref'], r['macs'])} | {'yes' if r['identical'] else 'NO'} |")
    lines += ["", f"### Totals per layer class, {board}{f' and {rvv_board}' if has_rvv else ''}\n",
              "| model | class | MACs | reference insns | riscv insns | ref insns/MAC | riscv insns/MAC "
              f"| riscv / ref{rh} |",
              "|---|---|---:|---:|---:|---:|---:|---:|" + rs_]
    for mdl, cls, macs, ref, opt, rvv in class_totals(rs):
        lines.append(f"| {mdl} | {cls} | {macs} | {ref} | {opt} | {ref / macs:.2f} | {opt / macs:.2f} | {opt / ref:.3f}"
                     f"{_rvv_cells(rvv, ref, macs)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--board", default="riscv32", help="riscv32 or hifive1 (scalar rv32imac boards)")
    ap.add_argument("--rvv-board", default="riscv32-rvv", help="the RVV board for the RVV columns, or none")
    a = ap.parse_args(argv)
    names = [n for n in a.models.split(",") if (SHARED / f"{n}.tflite").exists()]
    rvv = None if a.rvv_board == "none" else a.rvv_board
    print(markdown(rows(names, a.board, rvv_board=rvv), a.board, rvv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
