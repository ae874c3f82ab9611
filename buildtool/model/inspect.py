"""`buildtool inspect`: what a model is made of, for any well-formed model; a model the planner refuses
gets a last "would not plan: ..." line naming the first problem."""

from __future__ import annotations

from ..units import count, size_exact
from .ir import Graph
from .ops import op_macs


def _macs(g: Graph, op) -> int:
    """MACs of an operator; 0 when its tensors are too odd to count (inspect reads unplannable models)."""
    try:
        return op_macs(g, op)
    except (IndexError, ValueError, TypeError, KeyError):
        return 0


def _quant(t) -> dict | None:
    if t.quant is None:
        return None
    q = t.quant
    if len(q.scale) == 1:
        return {"scale": float(q.scale[0]), "zero_point": int(q.zero_point[0])}
    return {"per_channel": len(q.scale), "axis": q.axis, "scale_min": float(q.scale.min()),
            "scale_max": float(q.scale.max())}


def describe(g: Graph, problem: str | None = None) -> dict:
    acts = g.activation_tensors()
    macs = [_macs(g, op) for op in g.operators]
    return {
        "name": g.name,
        "inputs": [{"name": g.tensors[i].name, "shape": list(g.tensors[i].shape), "dtype": g.tensors[i].dtype,
                    "quant": _quant(g.tensors[i])} for i in g.inputs],
        "outputs": [{"name": g.tensors[i].name, "shape": list(g.tensors[i].shape), "dtype": g.tensors[i].dtype,
                     "quant": _quant(g.tensors[i])} for i in g.outputs],
        "num_operators": len(g.operators),
        "num_tensors": len(g.tensors),
        "macs": sum(macs),
        "would_not_plan": problem,
        "params_bytes": g.params_bytes(),
        "activation_bytes": sum(t.nbytes for t in acts),
        "largest_activation_bytes": max((t.nbytes for t in acts), default=0),
        "operators": [{
            "index": op.index, "opcode": op.opcode,
            "inputs": [{"index": i, "shape": list(g.tensors[i].shape), "const": g.tensors[i].is_const}
                       for i in op.inputs if i >= 0],
            "outputs": [{"index": o, "shape": list(g.tensors[o].shape), "quant": _quant(g.tensors[o])}
                        for o in op.outputs],
            "options": op.options, "macs": m} for op, m in zip(g.operators, macs)],
        "tensors": [{"index": t.index, "name": t.name, "shape": list(t.shape), "dtype": t.dtype,
                     "bytes": t.nbytes, "const": t.is_const, "quant": _quant(t)} for t in g.tensors],
    }


def _fmt_shape(s) -> str:
    return "x".join(str(d) for d in s)


def format_text(info: dict) -> str:
    lines = [f"model {info['name']}: {info['num_operators']} operators, {info['num_tensors']} tensors",
             f"  MACs {count(info['macs'])}   params {size_exact(info['params_bytes'])}   activations "
             f"{size_exact(info['activation_bytes'])}, the largest {size_exact(info['largest_activation_bytes'])}"]
    for io in ("inputs", "outputs"):
        for t in info[io]:
            q = t["quant"] or {}
            lines.append(f"  {io[:-1]:6s} {t['name']}: {t['dtype']} {_fmt_shape(t['shape'])} "
                         f"scale {q.get('scale', '-')} zp {q.get('zero_point', '-')}")
    lines.append(f"  {'#':>3} {'op':23} {'output':16} {'MACs':>12}  options")
    for op in info["operators"]:
        out = _fmt_shape(op["outputs"][0]["shape"]) if op["outputs"] else "-"
        opts = " ".join(f"{k}={v}" for k, v in op["options"].items())
        lines.append(f"  {op['index']:>3} {op['opcode']:23} {out:16} {op['macs']:>12,}  {opts}")
    if info.get("would_not_plan"):
        lines.append(f"would not plan: {info['would_not_plan']}")
    return "\n".join(lines)
