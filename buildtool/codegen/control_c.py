"""Code generation for IF and WHILE (model/control.py): each subgraph they run becomes a static C function
over its own arena, which lies in the operator's scratch buffer (its plan: plan.subplans); the
operator's step copies values into the subgraph's inputs, calls it and copies its outputs out, as
TFLite Micro does. The emitters fn(e, op) are named in the operator table (model/opdefs.py, column emit).

A WHILE runs its body at most BT_MAX_ITERATIONS times (model/control.py: FIRMWARE_MAX_ITERATIONS unless the
build defines it): a condition that still holds then sets bt_cf_overrun, every enclosing loop stops, and
model_invoke returns ITERATION_LIMIT_STATUS (the firmware harness says so in one line).
"""

from __future__ import annotations

import re

from ..errors import PlanError
from ..model.control import FIRMWARE_MAX_ITERATIONS, ITERATION_LIMIT_STATUS, subgraph_indices
from .c_text import c_comment
from .emitter import Emitter
from .model_c import emit_op

_NAME = re.compile(r"\bop(\d+)_")  # the names emitters give an operator's declarations (op<index>_...)
COPY = ("static void bt_cf_copy(void *dst, const void *src, uint32_t n) {\n"
        "  uint8_t *d = (uint8_t *)dst;\n  const uint8_t *s = (const uint8_t *)src;\n"
        "  while (n--) *d++ = *s++;\n}")


class SubgraphEmitter(Emitter):
    """The emitter of one subgraph: its tensors at `sg` (the scratch buffer) + their offsets in its own
    plan; declarations and lookup tables shared with the model's emitter, no profiling hooks."""

    def __init__(self, parent: Emitter, k: int):
        plan = parent.plan.subplans.get(k)
        if plan is None:
            raise PlanError(f"subgraph {k} has no plan; re-plan the model")
        super().__init__(parent.g.subgraph(k), plan, parent.w)
        self.k, self.parent = k, parent
        self.ext_offset, self.ext_signature, self.variants = parent.ext_offset, parent.ext_signature, parent.variants
        self.tables, self.used_variants = parent.tables, parent.used_variants

    def at(self, off: int) -> str:
        return f"sg + {off}"

    def call(self, op, text: str) -> None:
        name = c_comment(self.g.tensors[op.outputs[0] if op.outputs else op.inputs[0]].name)
        self.body.append(f"  /* subgraph {self.k}, op {op.index}: {op.opcode} -> {name} */\n  {text}")


def _function(e: Emitter, k: int) -> str:
    """Declare subgraph k's function (once per model.c, nested subgraphs first); its name."""
    name = f"bt_subgraph{k}"
    done = e.tables
    if name in done:
        return name
    done.add(name)
    s = SubgraphEmitter(e, k)
    for oi in s.plan.order:
        emit_op(s, oi)
    rename = (lambda text: _NAME.sub(f"sg{k}_op\\1_", text))
    for d in s.decls:
        e.declare(rename(d))
    body = "\n".join(rename(b) for b in s.body)
    e.declare(f"/* subgraph {k}: {len(s.g.operators)} operators in a {s.plan.arena_bytes}-byte arena at sg */\n"
              f"static void {name}(int8_t *sg) {{\n{body}\n  (void)sg;\n}}")
    return name


def _copy_decl(e: Emitter) -> None:
    if "bt_cf_copy" not in e.tables:
        e.tables.add("bt_cf_copy")
        e.declare(COPY)


def _bound_decl(e: Emitter) -> None:
    if "bt_cf_overrun" not in e.tables:
        e.tables.add("bt_cf_overrun")
        e.declare(f"#ifndef BT_MAX_ITERATIONS\n#define BT_MAX_ITERATIONS {FIRMWARE_MAX_ITERATIONS}u\n#endif\n"
                  "static uint8_t bt_cf_overrun;  /* a WHILE ran BT_MAX_ITERATIONS times and its condition held */")


def _dense_io(e: Emitter, op) -> None:
    for i in list(op.inputs) + list(op.outputs):
        if not e.g.tensors[i].is_const:
            e.dense(op, i)


def _src(e: Emitter, i: int) -> str:
    """A value the operator copies, as bytes: its activation or flash constant."""
    return e.weight(i, "uint8_t") if e.g.tensors[i].is_const else e.act(i, "uint8_t")


def _copies(pairs: list) -> list:
    return [f"bt_cf_copy({d}, {s}, {n}u);" for d, s, n in pairs]


def _sub_places(e: Emitter, k: int, tensors: list) -> list:
    sp = e.plan.subplans[k]
    for i in tensors:
        if sp.tensors[i].pixel_stride:
            raise PlanError(f"subgraph {k} input/output tensor {i} is a strided view; re-plan the model")
    return [f"sub + {sp.tensors[i].offset}" for i in tensors]


def _scratch(e: Emitter, op) -> str:
    sb = e.plan.scratch.get(op.index)
    if sb is None:
        raise PlanError(f"operator {op.index} ({op.opcode}) has no scratch buffer for its subgraphs; re-plan")
    return e.at(sb.offset)


def if_(e: Emitter, op) -> None:
    _copy_decl(e)
    _dense_io(e, op)
    lines = [f"{{ int8_t *sub = {_scratch(e, op)};  /* the subgraphs' arena */"]
    for word, k in zip(("if", "} else"), subgraph_indices(op)):
        fn, s = _function(e, k), e.g.subgraph(k)
        ins = list(zip(_sub_places(e, k, s.inputs), [_src(e, i) for i in op.inputs[1:]],
                       [e.g.tensors[i].nbytes for i in s.inputs]))
        outs = list(zip([_src(e, o) for o in op.outputs], _sub_places(e, k, s.outputs),
                        [e.g.tensors[o].nbytes for o in op.outputs]))
        cond = f" (*(const uint8_t *)({_src(e, op.inputs[0])}))" if word == "if" else ""
        lines += [f"  {word}{cond} {{"] + [f"    {c}" for c in _copies(ins) + [f"{fn}(sub);"] + _copies(outs)]
    e.call(op, "\n  ".join(lines + ["  }", "}"]))


def while_(e: Emitter, op) -> None:
    _copy_decl(e)
    _dense_io(e, op)
    kc, kb = subgraph_indices(op)
    fc, fb = _function(e, kc), _function(e, kb)
    c, b = e.g.subgraph(kc), e.g.subgraph(kb)
    vals = [_src(e, o) for o in op.outputs]
    n = [e.g.tensors[o].nbytes for o in op.outputs]
    start = _copies(list(zip(vals, [_src(e, i) for i in op.inputs], n)))
    to_cond = _copies(list(zip(_sub_places(e, kc, c.inputs), vals, n)))
    to_body = _copies(list(zip(_sub_places(e, kb, b.inputs), vals, n)))
    back = _copies(list(zip(vals, _sub_places(e, kb, b.outputs), n)))
    cond = _sub_places(e, kc, c.outputs)[0]
    _bound_decl(e)
    top = not isinstance(e, SubgraphEmitter)  # the model's own step: it resets the flag and returns on it
    lines = [f"{{ int8_t *sub = {_scratch(e, op)};  /* the subgraphs' arena */"] + [f"  {x}" for x in start]
    lines += ["  bt_cf_overrun = 0;"] * top + ["  for (uint32_t it = 0;; it++) {"]
    lines += [f"    {x}" for x in to_cond + [f"{fc}(sub);", "if (bt_cf_overrun) break;",
                                         f"if (!*(const uint8_t *)({cond})) break;",
                                         "if (it == BT_MAX_ITERATIONS) { bt_cf_overrun = 1; break; }"]
              + to_body + [f"{fb}(sub);", "if (bt_cf_overrun) break;"] + back]
    lines += ["  }"] + [f"  if (bt_cf_overrun) return {ITERATION_LIMIT_STATUS};"] * top
    e.call(op, "\n  ".join(lines + ["}"]))


__all__ = ["SubgraphEmitter", "if_", "while_"]
