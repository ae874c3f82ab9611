"""The joint plan of several models that share one arena and never run at the same time.

Layout: the persistent buffers (SVDF/LSTM state) of every model sit at the bottom of the arena,
model after model; above them each model's other buffers overlap one another, so the arena is
    persistent bytes (all models) + the largest need of one model.
A model's need is its own plan with its persistent buffers taken out: a persistent buffer
lives at every step, so no other buffer of its plan shares its bytes, and sliding the buffers above
it down by its (aligned) size keeps the packing sound. An arena plan is relocated into the joint
arena; any other plan (fused: it has no state) runs unchanged from the base of the shared part.
The independent check (arena/checker.py: joint_problems, problems on each relocated plan) proves
no model writes another's state.
"""

from __future__ import annotations

import dataclasses
import re

from .arena.checker import footprint, joint_problems, problems
from ..errors import InternalError, UsageError
from ..options import PlanOptions
from . import ArenaPlan, Buffer, align_up


@dataclasses.dataclass
class Part:
    """One model of a joint plan."""

    name: str
    prefix: str  # its C names: <prefix>_init, <prefix>_invoke, ...
    graph: object
    own: object  # its own plan (what it needs alone)
    plan: object  # the plan its code runs: relocated into the joint arena (arena plans) or `own`
    base: int  # the joint-arena byte its plan's offsets count from
    state_at: int  # where its persistent buffers start in the joint arena
    persistent_bytes: int
    need_bytes: int  # its arena without its state: what it uses of the shared part


@dataclasses.dataclass
class JointPlan:
    parts: list
    arena_bytes: int
    persistent_bytes: int
    align: int

    def problems(self) -> list:
        """The independent checks: each relocated plan sound, no model writing another's state."""
        err = []
        for p in self.parts:
            if p.plan is not p.own:
                err += [f"{p.name}: {e}" for e in problems(p.graph, p.plan)]
        return err + joint_problems([(p.prefix, footprint(p.plan, p.base)) for p in self.parts], self.arena_bytes)

    def report(self) -> dict:
        """The figures: joint arena, persistent bytes, and each model's own arena and place."""
        return {"arena_bytes": self.arena_bytes, "persistent_bytes": self.persistent_bytes,
                "largest_own_arena_bytes": max(p.own.arena_bytes for p in self.parts),
                "models": [{"name": p.name, "prefix": p.prefix, "kind": p.own.kind,
                            "own_arena_bytes": p.own.arena_bytes,
                            "persistent_bytes": p.persistent_bytes, "state_at": p.state_at,
                            "need_bytes": p.need_bytes, "base": p.base} for p in self.parts]}


def prefixes(names: list) -> list:
    """A distinct C prefix per model name: lower case, [a-z0-9_], a letter first, not bt_/fx_."""
    out = []
    for name in names:
        p = re.sub(r"[^a-z0-9_]", "_", name.lower()).strip("_") or "m"
        if not p[0].isalpha() or p in ("bt", "fx", "model") or p.startswith(("bt_", "fx_")):
            p = "m_" + p
        base, k = p, 2
        while p in out:
            p, k = f"{base}_{k}", k + 1
        out.append(p)
    return out


def model_options(graph, options: PlanOptions) -> PlanOptions:
    """The options a model of a joint plan is planned with: a model with state (SVDF/LSTM) keeps the
    layer-by-layer plan when the others are fused (fusion refuses state)."""
    options = PlanOptions.from_map(options)
    if not (options.fused and graph.variable_tensors()):
        return options
    return PlanOptions(align=options.align, time_budget=options.time_budget, order_search=options.order_search,
                       inplace=options.inplace)


def _persistent(plan) -> list:
    return sorted((b for b in plan.buffers if b.kind == "persistent"), key=lambda b: b.offset) \
        if plan.kind == "arena" else []


def _compact(plan: ArenaPlan, b: Buffer) -> int:
    """b's offset with the plan's persistent buffers below it taken out."""
    return b.offset - sum(align_up(p.size, plan.align) for p in _persistent(plan) if p.offset < b.offset)


def need_bytes(plan) -> int:
    """What a model needs above the shared state: its arena without its persistent buffers."""
    if plan.kind != "arena":
        return plan.arena_bytes
    tops = [_compact(plan, b) + align_up(b.size, plan.align) for b in plan.buffers if b.kind != "persistent"]
    return align_up(max(tops, default=0), plan.align)


def relocate(plan: ArenaPlan, state_at: int, shared_at: int, arena_bytes: int) -> ArenaPlan:
    """The arena plan in joint-arena offsets: persistent buffers from state_at on, the others compacted
    from shared_at on."""
    moved, at = {}, state_at
    for b in _persistent(plan):
        moved[b.id] = at
        at += align_up(b.size, plan.align)
    for b in plan.buffers:
        moved.setdefault(b.id, shared_at + _compact(plan, b))
    buffers = [dataclasses.replace(b, offset=moved[b.id], tensors=list(b.tensors)) for b in plan.buffers]
    by_id = {b.id: b for b in buffers}
    old = {b.id: b.offset for b in plan.buffers}
    tensors = {t: dataclasses.replace(p, offset=p.offset - old[p.buffer] + moved[p.buffer])
               for t, p in plan.tensors.items()}
    scratch = {op: by_id[b.id] for op, b in plan.scratch.items()}
    return dataclasses.replace(plan, arena_bytes=arena_bytes, buffers=buffers, tensors=tensors, scratch=scratch,
                               inplace_ops=list(plan.inplace_ops), order=list(plan.order))


def plan_joint(models: list, plans: list) -> JointPlan:
    """The joint plan of models (pipeline.Model) with their own plans, in that order."""
    if len(models) < 2:
        raise UsageError("a multi-model firmware needs at least two models")
    for m, p in zip(models, plans):
        if getattr(getattr(p, "schedule", None), "streamed", False):
            raise UsageError(f"{m.shown}: an input-streamed plan cannot share a firmware; drop --input-streamed")
    align = max(max(16, p.align) for p in plans)
    pers = [sum(align_up(b.size, p.align) for b in _persistent(p)) for p in plans]
    starts = [sum(align_up(x, align) for x in pers[:k]) for k in range(len(plans))]
    shared_at = align_up(sum(align_up(x, align) for x in pers), align)
    need = [need_bytes(p) for p in plans]
    arena = align_up(shared_at + max(need), align)
    parts = []
    for m, p, pre, s, ps, sb in zip(models, plans, prefixes([m.name for m in models]), starts, pers, need):
        if p.kind == "arena":
            parts.append(Part(m.name, pre, m.graph, p, relocate(p, s, shared_at, arena), 0, s, ps, sb))
        else:
            parts.append(Part(m.name, pre, m.graph, p, p, shared_at, s, ps, sb))
    joint = JointPlan(parts, arena, shared_at, align)
    err = joint.problems()
    if err:
        raise InternalError(f"joint plan failed verification: {err[0]} ({len(err)} problem(s))")
    return joint
