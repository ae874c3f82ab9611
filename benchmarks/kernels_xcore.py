"""xcore kernels per layer: vector-unit instructions of the xcore kernel set (board xcore: the set built
for the host against the C model of the XS3 VPU, kernels/xcore/vpu.h) for every CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED layer of the shared models, per MAC, with totals per layer class
and whether the firmware's outputs are byte-identical to the reference kernel set's (built for the
host too).

    python benchmarks/kernels_xcore.py                       # the four shared models, Markdown tables
    python benchmarks/kernels_xcore.py --models tiny_cnn_32 --fused

No xcore toolchain (xcc, xsim) is installed here: the counts are those of the VPU model (bt_vpu_ops,
one per modelled VPU instruction), read per operator under gdb at the firmware's profiling calls
(bt_profile_begin / bt_profile_end). The scalar instructions around them (staging copies, the
requantisation) run on the host CPU and are not xcore instructions, so they are not counted. With
--fused, each model's default plan and its --optimize ram (fused) plan are compared in VPU
instructions per inference.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from buildtool import pipeline
from buildtool.model import ops, reader as tflite_reader
from buildtool.firmware import runner  # noqa: E402
from kernels_riscv import CLASSES, KERNEL_OPS, MODELS, SHARED, _same, layer_class, layer_label  # noqa: E402

_GDB = """set pagination off
set confirm off
break bt_profile_begin
commands
silent
printf "B %d %u\\n", op, bt_vpu_ops
continue
end
break bt_profile_end
commands
silent
printf "E %d %u\\n", op, bt_vpu_ops
continue
end
run < {inp} > {out}
"""


def vpu_ops(work: Path, x) -> dict:
    """Profiling region (operator or fused block index) -> VPU instructions of the xcore firmware in work."""
    man = json.loads((work / "firmware.json").read_text())
    (work / "input.bin").write_bytes(runner._inputs(man, x))
    (work / "prof.gdb").write_text(_GDB.format(inp=work / "input.bin", out=work / "gdb_output.bin"))
    r = subprocess.run(["gdb", "-q", "-batch", "-x", str(work / "prof.gdb"), str(work / "firmware.elf")],
                       capture_output=True, text=True, errors="replace", timeout=900)
    out, begin = {}, {}
    for kind, op, n in re.findall(r"^([BE]) (-?\d+) (\d+)$", r.stdout, re.M):
        if kind == "B":
            begin[int(op)] = int(n)
        else:
            out[int(op)] = out.get(int(op), 0) + int(n) - begin.pop(int(op))
    if not out:
        raise SystemExit(f"no profiling regions read from gdb: {r.stderr.strip()[-300:]}")
    return out


def _example(g):
    return np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)


def _models(models, work: Path | None):
    """(name, graph, example input, its work directory) per model, under work or a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="bt-kxcore-") as tmp:
        for name in models:
            g = tflite_reader.parse((SHARED / f"{name}.tflite").read_bytes())
            yield name, g, _example(g), Path(work or tmp) / name


def rows(models=MODELS, work: Path | None = None) -> list:
    """One dict per conv/depthwise/FC layer: model, op, class, label, macs, vpu (VPU instructions),
    identical (the whole model's outputs, xcore set vs reference set on the host)."""
    out = []
    for name, g, x, d in _models(models, work):
        pipeline.build(g, "xcore", d / "xcore")
        pipeline.build(g, "host", d / "ref", kernels=("reference",))
        same = _same(runner.run("xcore", d / "xcore", x)[0], runner.run("host", d / "ref", x)[0])
        counts = vpu_ops(d / "xcore", x)
        for op in g.operators:
            if op.opcode in KERNEL_OPS:
                out.append(dict(model=name, op=op.index, cls=layer_class(g, op), label=layer_label(g, op),
                                macs=ops.op_macs(g, op), vpu=counts.get(op.index, 0), identical=same))
    return out


def fused_totals(models=MODELS, work: Path | None = None) -> list:
    """(model, MACs of the default plan, VPU instructions of the default plan, of the --optimize ram plan,
    outputs identical) per model."""
    out = []
    for name, g, x, d in _models(models, work):
        pipeline.build(g, "xcore", d / "plain")
        pipeline.build(g, "xcore", d / "fused", {"optimize": "ram"})
        same = _same(runner.run("xcore", d / "plain", x)[0], runner.run("xcore", d / "fused", x)[0])
        macs = sum(ops.op_macs(g, op) for op in g.operators)
        out.append((name, macs, sum(vpu_ops(d / "plain", x).values()), sum(vpu_ops(d / "fused", x).values()), same))
    return out


def class_totals(rs: list) -> list:
    """(model, class, macs, vpu) per model and layer class (CLASSES order, 'all' last)."""
    acc = {}
    for r in rs:
        for key in ((r["model"], r["cls"]), (r["model"], "all")):
            m, v = acc.get(key, (0, 0))
            acc[key] = (m + r["macs"], v + r["vpu"])
    models = list(dict.fromkeys(r["model"] for r in rs))
    return [(mdl, cls, *acc[mdl, cls]) for mdl in models for cls in CLASSES if (mdl, cls) in acc]


def _per_mac(vpu: int, macs: int) -> str:
    """' | VPU insns/MAC | MACs/VPU insn' ('-' for a layer without VPU instructions)."""
    return f" | {vpu / macs:.3f} | {macs / vpu:.1f}" if vpu else " | - | -"


def markdown(rs: list) -> str:
    lines = ["### Per layer, xcore set on the VPU model (VPU instructions)\n",
             "| model | op | class | layer | MACs | VPU insns | VPU insns/MAC | MACs/VPU insn | outputs identical |",
             "|---|---:|---|---|---:|---:|---:|---:|---|"]
    for r in rs:
        lines.append(f"| {r['model']} | {r['op']} | {r['cls']} | {r['label']} | {r['macs']} | {r['vpu']}"
                     f"{_per_mac(r['vpu'], r['macs'])} | {'yes' if r['identical'] else 'NO'} |")
    if any(r["vpu"] == 0 for r in rs):
        lines.append("\nA layer with 0 VPU instructions runs scalar code only (the in-place depthwise, which the xcore "
                     "set takes from the reference set).")
    lines += ["", "### Totals per layer class, xcore set on the VPU model\n",
              "| model | class | MACs | VPU insns | VPU insns/MAC | MACs/VPU insn |", "|---|---|---:|---:|---:|---:|"]
    for mdl, cls, macs, vpu in class_totals(rs):
        lines.append(f"| {mdl} | {cls} | {macs} | {vpu}{_per_mac(vpu, macs)} |")
    return "\n".join(lines)


def fused_markdown(ts: list) -> str:
    lines = ["### VPU instructions per inference: default plan vs --optimize ram (fused) plan, xcore set\n",
             "| model | MACs (default plan) | default plan VPU insns | fused plan VPU insns | fused / default "
             "| outputs identical |", "|---|---:|---:|---:|---:|---|"]
    for name, macs, plain, fused, same in ts:
        lines.append(f"| {name} | {macs} | {plain} | {fused} | {fused / plain:.2f} | {'yes' if same else 'NO'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--fused", action="store_true", help="also compare the default and the fused (optimize=ram) plan")
    a = ap.parse_args(argv)
    names = [n for n in a.models.split(",") if (SHARED / f"{n}.tflite").exists()]
    print(markdown(rows(names)))
    if a.fused:
        print()
        print(fused_markdown(fused_totals(names)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
