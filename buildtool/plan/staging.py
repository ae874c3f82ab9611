"""Weights staged in SRAM: a layer's constant inputs copied from flash into RAM once, before the layer runs,
where the layer re-reads them for every output pixel from a flash that costs wait states (the choice of
layers is the part's: firmware/staging.py, by its memory model).

A staged tensor goes into arena bytes no buffer uses at the layer's step (the plan's arena does not grow),
else, when the caller allows it, into `bt_staging`, an array of its own in the part's spare SRAM that every
staged layer shares (each at its own step). The plan records each as {"op", "step", "tensor", "offset",
"size", "spare"} (ArenaPlan.staged, plan.json "staged"); the independent checker (arena/checker.py) holds
them to the same rule as buffers: no byte shared with a buffer live at that step.

With `once` (a firmware whose spare SRAM is its own), a layer goes into bt_staging first, each at bytes of its
own ("once": true), copied a single time by model_init() rather than before every inference; the arena's free
bytes (a copy per inference) take the layers bt_staging no longer holds.
"""

from __future__ import annotations

from dataclasses import replace

from . import ArenaPlan, align_up


def free_spans(plan: ArenaPlan, step: int, taken: tuple = ()) -> list:
    """[(start, end)] arena bytes no buffer live at `step` (aligned sizes) nor a span of `taken` uses, in
    address order; starts are multiples of the plan's alignment."""
    a = plan.align
    used = sorted([(b.offset, b.offset + align_up(b.size, a)) for b in plan.buffers
                   if b.first_step <= step <= b.last_step] + list(taken))
    out, at = [], 0
    for lo, hi in used:
        if lo > at:
            out.append((at, lo))
        at = max(at, hi)
    if plan.arena_bytes > at:
        out.append((at, plan.arena_bytes))
    return out


def best_fit(spans: list, size: int) -> int | None:
    """The start of the smallest span that holds size bytes (the lowest of equals), None when none does."""
    fits = [(hi - lo, lo) for lo, hi in spans if hi - lo >= size]
    return min(fits)[1] if fits else None


def packed(sizes: list, align: int, base: int = 0) -> tuple:
    """([offset], end) of sizes laid one after the other from base, each aligned."""
    offsets, at = [], base
    for n in sizes:
        offsets.append(at)
        at += align_up(n, align)
    return offsets, at


def stage(plan: ArenaPlan, wanted: list, spare_limit: int = 0, once: bool = False) -> ArenaPlan:
    """The plan with wanted staged: [(op, step, [tensor], [bytes])] in priority order, each layer's tensors
    all or none. A layer's tensors go into the arena's free bytes at its step when they all fit there, else
    into bt_staging when its size stays within spare_limit bytes (0: never), else the layer is not staged.
    once: bt_staging first, each layer at bytes of its own there (copied once, by model_init), while they
    stay within spare_limit; then the arena's free bytes. Deterministic: best fit, layers in the order given."""
    a = plan.align
    staged, spare = [], 0
    for op, step, tensors, sizes in wanted:
        if once:
            offsets, end = packed(sizes, a, spare)
            if end <= spare_limit:
                spare = end
                staged += [dict(op=op, step=step, tensor=t, offset=o, size=n, spare=True, once=True)
                           for t, o, n in zip(tensors, offsets, sizes)]
                continue
        taken, places = [], []
        for size in sizes:
            at = best_fit(free_spans(plan, step, tuple(taken)), size)
            if at is None:
                break
            taken.append((at, at + align_up(size, a)))
            places.append(at)
        if len(places) == len(sizes):
            staged += [dict(op=op, step=step, tensor=t, offset=o, size=n, spare=False)
                       for t, o, n in zip(tensors, places, sizes)]
            continue
        offsets, need = packed(sizes, a)
        if need <= spare_limit and not once:
            spare = max(spare, need)
            staged += [dict(op=op, step=step, tensor=t, offset=o, size=n, spare=True)
                       for t, o, n in zip(tensors, offsets, sizes)]
    return replace(plan, staged=staged, staging_bytes=spare if staged else 0)


def staged_by_op(plan) -> dict:
    """op -> its staged entries (none for a plan without staging or of another kind)."""
    out = {}
    for d in getattr(plan, "staged", None) or []:
        out.setdefault(d["op"], []).append(d)
    return out


__all__ = ["free_spans", "best_fit", "packed", "stage", "staged_by_op"]
