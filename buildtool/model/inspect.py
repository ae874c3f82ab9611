"""`buildtool inspect`: what a model is made of, for any well-formed model; a model the planner refuses
gets a last "would not plan: ..." line naming the first problem."""

from __future__ import annotations

from ..errors import ModelError
from ..units import count, size_exact
from . import offline_plan
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


def offline_plan_of(data: bytes) -> dict | None:
    """The model's TFLite Micro OfflineMemoryAllocation (model/offline_plan.read), {"problem": ...} when it is
    malformed, or None when it has none."""
    try:
        return offline_plan.read(data)
    except ModelError as e:
        return {"problem": str(e).split(": ", 1)[-1]}


def _offline(g: Graph, plan: dict | None) -> dict | None:
    """The report of an OfflineMemoryAllocation: its header, how many tensors it places and where its placed
    tensors end (the least head TFLite Micro can give them)."""
    if plan is None or "problem" in plan:
        return plan
    placed = [(t, o) for t, o in enumerate(plan["offsets"]) if o != offline_plan.ONLINE]
    end = max((o + g.tensors[t].nbytes for t, o in placed if t < len(g.tensors)), default=0)
    return {"version": plan["version"], "subgraphs": plan["subgraphs"], "tensors": plan["tensors"],
            "offsets": len(plan["offsets"]), "planned": len(placed), "extent_bytes": end,
            "matches_model": len(plan["offsets"]) == plan["tensors"]}


def describe(g: Graph, problem: str | None = None, offline: dict | None = None) -> dict:
    """The model's report; offline: its OfflineMemoryAllocation as offline_plan_of reads it."""
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
        "offline_memory_allocation": _offline(g, offline),
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
    om = info.get("offline_memory_allocation")
    if om is not None:
        if "problem" in om:
            lines.append(f"  TFLite Micro offline plan (OfflineMemoryAllocation): unreadable: {om['problem']}")
        else:
            lines.append(f"  TFLite Micro offline plan (OfflineMemoryAllocation): {om['planned']} of {om['offsets']} "
                         f"tensors at fixed head offsets, ending at {size_exact(om['extent_bytes'])}"
                         + ("" if om["matches_model"] else f"; the model has {om['tensors']} tensors, so TFLite "
                                                           f"Micro refuses it"))
    if info.get("would_not_plan"):
        lines.append(f"would not plan: {info['would_not_plan']}")
    return "\n".join(lines)
