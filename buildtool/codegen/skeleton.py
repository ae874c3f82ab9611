"""The model without its weight values: everything planning and code generation read.

skeleton.json is what the build system hashes to decide whether model.c must be
regenerated: changing weight values changes weights.bin but leaves this file (and
so plan.json and model.c) byte-identical; a resource variable's start value, which model.c holds, is in it. Weight tensors come back as zeros of the
right shape, with the facts of their values code generation reads (model/weight_facts.py: a filter's zero rows,
a bias's range and its values at those rows); structural constants (paddings, axes, slice bounds) keep their
values.
"""

from __future__ import annotations

import numpy as np

from ..plan import flash
from ..model import weight_facts
from ..model.ir import NUMPY_DTYPE, Graph, Operator, Quant, Tensor
from ..refops import prepare


def _bias_rows(g: Graph) -> dict:
    """{bias tensor: the zero rows of the filters of the CONV_2Ds it is the bias of}."""
    rows: dict = {}
    for op in g.operators:
        b = prepare.bias_input(g, op) if op.opcode == "CONV_2D" else -1
        if b >= 0 and g.tensors[op.inputs[1]].is_const:
            rows.setdefault(b, set()).update(weight_facts.zero_rows(g.tensors[op.inputs[1]]))
    return rows


def to_json(g: Graph) -> dict:
    weights = set(flash.flash_tensors(g))
    at = _bias_rows(g)
    tensors = []
    for t in g.tensors:
        d = {"index": t.index, "name": t.name, "shape": [int(x) for x in t.shape], "dtype": t.dtype,
             "const": t.is_const}
        if t.quant is not None:
            d["quant"] = {"scale": [float(s) for s in t.quant.scale.astype(np.float32)],
                          "zero_point": [int(z) for z in t.quant.zero_point], "axis": int(t.quant.axis)}
        if t.is_const and t.index not in weights:
            d["data"] = t.data.reshape(-1).tolist()
        elif t.is_const:
            facts = weight_facts.record(t, at.get(t.index, ()))
            if facts:
                d["facts"] = facts
        if t.variable:
            d["variable"] = True
        if t.init is not None:  # a resource variable's start value: model.c holds it, so the skeleton does
            d["init"] = np.asarray(t.init).reshape(-1).tolist()
        tensors.append(d)
    return {"name": g.name, "description": g.description, "inputs": list(g.inputs), "outputs": list(g.outputs),
            "tensors": tensors, "operators": _ops_json(g)} | (
        {"subgraphs": [{"subgraph": k, "inputs": list(s.inputs), "outputs": list(s.outputs), "operators": _ops_json(s)}
                       for k, s in sorted(g.subgraphs.items())]} if g.subgraphs else {})  # control flow's


def _ops_json(g: Graph) -> list:
    return [{"index": op.index, "opcode": op.opcode, "inputs": list(op.inputs), "outputs": list(op.outputs),
             "options": dict(sorted(op.options.items()))} for op in g.operators]


def _ops(d: dict) -> list:
    return [Operator(o["index"], o["opcode"], tuple(o["inputs"]), tuple(o["outputs"]), dict(o["options"]))
            for o in d["operators"]]


def from_json(d: dict) -> Graph:
    tensors = []
    for t in d["tensors"]:
        q = t.get("quant")
        quant = None if q is None else Quant(np.array(q["scale"], dtype=np.float32),
                                             np.array(q["zero_point"], dtype=np.int64), q["axis"])
        data = facts = None
        if t["const"]:
            dt = NUMPY_DTYPE[t["dtype"]]
            data = (np.array(t["data"], dtype=dt) if "data" in t else np.zeros(int(np.prod(t["shape"])), dtype=dt))
            data = data.reshape(t["shape"])
            facts = None if "data" in t else dict(t.get("facts", {}))
        init = (np.array(t["init"], dtype=NUMPY_DTYPE[t["dtype"]]).reshape(t["shape"]) if "init" in t else None)
        tensors.append(Tensor(t["index"], t["name"], tuple(t["shape"]), t["dtype"], quant, data,
                              variable=bool(t.get("variable", False)), init=init, facts=facts))
    subs = {s["subgraph"]: Graph(tensors, _ops(s), list(s["inputs"]), list(s["outputs"]), f"subgraph {s['subgraph']}")
            for s in d.get("subgraphs", [])}
    return Graph(tensors, _ops(d), list(d["inputs"]), list(d["outputs"]), d["name"], d.get("description", ""), subs)
