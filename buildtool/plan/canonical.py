"""Canonical form and content hash of a graph or subgraph, for the planning cache.

A cache key must change exactly when the answer of a planner could change:
op types, options, shapes, dtypes, the parts of quantisation that change sizes
(per-channel or not, and how many channels), operator order and wiring, the
values of small integer constants that define shapes (PAD paddings, MEAN axes,
SPLIT axis, STRIDED_SLICE bounds, RESHAPE shape), the planning options and the
planner's version. Weight values, bias values, scales and zero points never
enter a key, so retraining a model (new weights, same structure) hits the cache.

Subgraph forms renumber tensors by first use inside the subgraph, so a region's
key does not depend on where it sits in the model or on any layer outside it:
after a change to one layer, only regions that touch that layer miss.

Nothing heavy is imported here: the gen steps' seals and the daemon's handshake use it.
"""

from __future__ import annotations

import functools
import hashlib
import os

import msgpack

from .. import __version__, sources
from ..errors import InternalError
from ..imports import closure_files
from ..model.opdefs import OPDEFS

FORM_VERSION = 1
# Constant inputs whose values define output shapes or slicing (op -> input positions).
STRUCTURAL_INPUTS = {d.name: d.structural for d in OPDEFS if d.structural}
# The planners, the choice between them (and this module, which keys their answers): what they import
# decides what a planner returns for a canonical graph (imports.closure reads it from the source).
_PLANNER_ROOTS = ("plan.planner", "plan.arena", "plan.fusion", "plan.canonical")


def _plain(v):
    """Options as msgpack-stable plain values (numpy scalars and tuples included)."""
    if isinstance(v, dict):
        return [[str(k), _plain(v[k])] for k in sorted(v, key=str)]
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, str, type(None))):
        return v
    if hasattr(v, "item"):  # numpy scalar
        return _plain(v.item())
    if isinstance(v, (int, float)):
        return v
    raise InternalError(f"cannot put a {type(v).__name__} in a canonical form")


def _tensor_form(t, with_values: bool) -> list:
    q = t.quant
    quant = None if q is None else [len(q.scale), int(q.axis) if len(q.scale) > 1 else 0]
    values = None
    if with_values and t.data is not None:
        values = [int(x) for x in t.data.reshape(-1).tolist()]
    form = [[int(d) for d in t.shape], t.dtype, t.data is not None, quant, values]
    return form + ["variable"] if t.variable else form  # persistent buffers: a different plan


def _structural_tensors(g, ops) -> set:
    out = set()
    for op in ops:
        for pos in STRUCTURAL_INPUTS.get(op.opcode, ()):
            if pos < len(op.inputs) and op.inputs[pos] >= 0:
                t = g.tensors[op.inputs[pos]]
                if t.data is not None and t.dtype in ("int32", "int64") and t.num_elements <= 64:
                    out.add(t.index)
    return out


def graph_form(g) -> list:
    """The whole graph. Tensor names are included because the arena plan reports them."""
    structural = _structural_tensors(g, g.operators)
    return ["graph", FORM_VERSION,
            [_tensor_form(t, t.index in structural) + [t.name] for t in g.tensors],
            [[op.opcode, [int(i) for i in op.inputs], [int(o) for o in op.outputs], _plain(op.options)]
             for op in g.operators],
            [int(i) for i in g.inputs], [int(o) for o in g.outputs]]


def subgraph_form(g, op_indices, forms: SubgraphForms | None = None) -> list:
    """Operators op_indices (in the order given) with the tensors they touch, renumbered.

    Each tensor also records whether it comes from outside the subgraph and whether
    something outside reads it (graph output or a consumer not in the subgraph): both
    change what a region planner may do with it. Names are not part of the form.
    forms: SubgraphForms(g), for many subgraphs of one graph (each then costs its own size).
    """
    return (forms or SubgraphForms(g)).form(op_indices)


_NONE = frozenset()


class SubgraphForms:
    """What every subgraph form of one graph needs, worked out once: each tensor's readers, each
    tensor's and each operator's options' own form. The graph must not change while this is in use."""

    def __init__(self, g):
        self.g = g
        self.readers: dict = {}
        for op in g.operators:
            for i in op.inputs:
                if i >= 0:
                    self.readers.setdefault(i, set()).add(op.index)
        self.outputs = set(g.outputs)
        self._tensors: dict = {}
        self._options = [_plain(op.options) for op in g.operators]

    def _tensor(self, i: int, structural: bool) -> list:
        key = (i, structural)
        if key not in self._tensors:
            self._tensors[key] = _tensor_form(self.g.tensors[i], structural)
        return self._tensors[key]

    def form(self, op_indices) -> list:
        g = self.g
        ops = [g.operators[i] for i in op_indices]
        inside = set(op_indices)
        produced = {o for op in ops for o in op.outputs}
        structural = _structural_tensors(g, ops)
        local: dict = {}
        tensors = []

        def ref(i: int) -> int:
            if i < 0:
                return -1
            if i not in local:
                local[i] = len(local)
                read_outside = i in self.outputs or not self.readers.get(i, _NONE) <= inside
                tensors.append(self._tensor(i, i in structural) + [i not in produced, read_outside])
            return local[i]

        op_forms = [[op.opcode, [ref(i) for i in op.inputs], [ref(o) for o in op.outputs], self._options[op.index]]
                    for op in ops]
        return ["subgraph", FORM_VERSION, tensors, op_forms]


def digest(obj) -> str:
    """SHA-256 (hex) of a form; msgpack of plain lists is byte-stable."""
    return hashlib.sha256(msgpack.packb(obj, use_bin_type=True)).hexdigest()


def graph_digest(g) -> str:
    return digest(graph_form(g))


def plan_key(kind: str, form_digest: str, options: dict | None = None) -> str:
    """Key of one planning problem: what is solved (kind), on what, with which options, by which code."""
    return digest(["key", FORM_VERSION, kind, planner_version(), form_digest, _plain(options or {})])


def subgraph_key(kind: str, g, op_indices, options: dict | None = None, forms: SubgraphForms | None = None) -> str:
    """Key for a region planner (operator splitting, fusion block): see subgraph_form."""
    return plan_key(kind, digest(subgraph_form(g, op_indices, forms)), options)


def _source_digest(paths) -> str:
    h = hashlib.sha256()
    for f in paths:
        with open(f, "rb") as fh:
            h.update(os.path.relpath(f, sources.PKG).encode() + b"\0" + hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def planner_version() -> str:
    """buildtool version + hash of the planner's source: any planner edit invalidates old entries.

    Nobody has to remember to bump a number, and a daemon running old code is detected.
    """
    return f"{__version__}+{_source_digest(closure_files(_PLANNER_ROOTS))[:16]}"


@functools.lru_cache(maxsize=None)
def zoo_version() -> str:
    """The zoo's graphs are a pure function of this code (and the planner sources in every key)."""
    return _source_digest(sources.files(("zoo/__init__.py", "zoo/builder.py")))[:16]
