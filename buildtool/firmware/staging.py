"""Which layers' weights a part's firmware copies into SRAM before the layer runs (plan/staging.py places them).

On a part whose memory model (memory_model.py) code generation builds for (`MemoryModel.tuned`: nucleo-l4r5zi),
a KxK int8 CONV_2D re-reads its whole filter from flash for every few output pixels (the cortex-m kernels pass
over it once per group of up to PIXELS_PER_PASS pixels); with a filter larger than the flash data cache every
read of every pass misses and waits the flash's wait states (ResNet-8's 3x3 layers: 2.75 M cycles of load
stalls on nucleo-l4r5zi, docs/memory-model.md); a stem of 1-3 input channels is not (conv_stem.h widens its
weights once a call: kernel_variants.stem). Such a layer's filter and bias are staged, one copy before its
kernel call, where the model says it pays (MemoryModel.staging_gain: the stalls of every pass after the first
against the copy). They go into arena bytes no buffer uses at that step, else into bt_staging in the part's
spare SRAM (at most what the part has left over the arena, the stack and STATIC_RESERVE), else stay in flash.
Every other board's plan is returned without staging.
"""

from __future__ import annotations

from dataclasses import replace

from .. import targets
from ..codegen import kernel_variants
from ..model.ops import conv_groups
from ..plan import ArenaPlan
from ..plan.flash import flash_tensors
from ..plan.staging import packed, stage
from ..refops import prepare
from . import memory_model

PIXELS_PER_PASS = 4  # output pixels a conv kernel computes per pass over its filter (cortex-m: at most 3)
STATIC_RESERVE = 16 << 10  # SRAM kept for .data/.bss besides the arena and the stack when sizing bt_staging


def model_for(t: targets.Target):
    """The memory model code generation builds for on this board, else None."""
    mm = memory_model.get(t.name)
    return mm if mm is not None and mm.tuned else None


def spare_ram(t: targets.Target, plan: ArenaPlan) -> int:
    """SRAM bt_staging may take: the part's RAM (never more: an emulator that maps more does not count) over the
    arena, the stack and STATIC_RESERVE."""
    return max(0, t.data_ram_bytes - plan.arena_bytes - t.stack_bytes - STATIC_RESERVE)


def _own_flash_inputs(g):
    """op -> its weights and bias (the bias where it has one) when the flash image holds them and op alone reads
    them, else None: what a layer may stage."""
    image = set(flash_tensors(g))
    readers = {}
    for op in g.operators:
        for i in set(op.inputs):
            readers.setdefault(i, set()).add(op.index)

    def own(op):
        b = prepare.bias_input(g, op)
        tensors = [op.inputs[1]] + ([b] if b >= 0 else [])
        return tensors if all(i >= 0 and i in image and readers.get(i) == {op.index} for i in tensors) else None
    return own


def candidates(g, plan: ArenaPlan, mm, by_gain: bool = False) -> list:
    """[(op, step, [tensor], [bytes])] of the layers whose staging pays, in execution order (by_gain: the
    cycles it saves, most first)."""
    own = _own_flash_inputs(g)
    out = []
    for step, oi in enumerate(plan.order):
        op = g.operators[oi]
        if op.opcode != "CONV_2D" or g.tensors[op.outputs[0]].dtype != "int8" or conv_groups(g, op) != 1:
            continue
        if kernel_variants.stem_op(g, op):  # a stem's kernel widens its weights once a call
            continue
        y = g.tensors[op.outputs[0]]
        tensors = own(op)
        if tensors is None:
            continue
        passes = -(-y.shape[1] * y.shape[2] // PIXELS_PER_PASS)
        sizes = [g.tensors[i].nbytes for i in tensors]
        gain = mm.staging_gain(sum(sizes), passes)
        if gain > 0:
            out.append((gain, oi, step, tensors, sizes))
    if by_gain:
        out.sort(key=lambda c: -c[0])  # stable: equal gains in execution order
    return [c[1:] for c in out]


def staged_plan(g, plan, t: targets.Target, spare: bool = True, cap: int | None = None):
    """The plan with the weights the board's part stages in SRAM (none on another board, or for a plan that is
    not one arena of layers); spare=False: in the arena's free bytes only (a library for a project of its own,
    buildtool export, whose spare SRAM is the project's); cap: at most that many bytes of spare SRAM
    (the staging_ram option; the arena's free bytes cost no RAM and stay open)."""
    mm = model_for(t)
    if not isinstance(plan, ArenaPlan):
        return plan
    if plan.staged:
        plan = replace(plan, staged=[], staging_bytes=0)
    if mm is None or plan.arena_regions or plan.subplans:
        return plan
    room = spare_ram(t, plan) if spare else 0
    limit = room if cap is None else min(cap, room)
    plan = stage(plan, candidates(g, plan, mm, by_gain=spare), limit, once=spare)
    return stage_once(plan, once_candidates(g, plan, mm), limit) if spare else plan


def once_gain(mm, nbytes: int, passes: int) -> int:
    """Stall cycles an inference saves when nbytes of weights a layer reads `passes` times in order sit in SRAM
    from model_init on (copied once: no copy an inference): every flash read's wait states (no data prefetch), on
    every pass when they are larger than the data cache (a stream longer than the cache evicts itself), else on
    the first (other layers' data evicts them between calls)."""
    return (passes if nbytes > mm.data_cache_bytes() else 1) * -(-nbytes // mm.read_bytes) * mm.wait_states


def once_candidates(g, plan: ArenaPlan, mm) -> list:
    """[(op, step, [tensor], [bytes])] of the int8 FULLY_CONNECTED, CONV_2D (not grouped) and DEPTHWISE_CONV_2D
    layers not staged yet whose weights (and bias) the flash image holds and no other operator reads, most stall
    cycles saved first (once_gain; equal gains in execution order): what stage_once copies once into the
    bt_staging bytes left. A dense layer reads its weights once per batch row, so a copy per inference would cost
    the reads it saves; a convolution whose copy per inference does not pay (candidates) still saves its reads
    when copied once. Passes: a dense layer's batch rows; a convolution's groups of PIXELS_PER_PASS output pixels
    (a stem's kernel, kernel_variants.stem, widens its weights once a call: one); a depthwise layer's output rows
    (its kernels walk a plane a row at a time)."""
    own = _own_flash_inputs(g)
    staged = {d["tensor"] for d in plan.staged}
    out = []
    for step, oi in enumerate(plan.order):
        op = g.operators[oi]
        if op.opcode not in ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D") or len(op.inputs) < 2 \
                or g.tensors[op.outputs[0]].dtype != "int8":
            continue
        if op.opcode == "CONV_2D" and conv_groups(g, op) != 1:
            continue
        tensors = own(op)
        if tensors is None or any(i in staged for i in tensors):
            continue
        y = g.tensors[op.outputs[0]]
        if op.opcode == "FULLY_CONNECTED":
            passes = prepare.fully_connected(g, op).batches
        elif op.opcode == "DEPTHWISE_CONV_2D":
            passes = y.shape[1]
        else:
            passes = 1 if kernel_variants.stem_op(g, op) else -(-y.shape[1] * y.shape[2] // PIXELS_PER_PASS)
        sizes = [g.tensors[i].nbytes for i in tensors]
        out.append((once_gain(mm, sum(sizes), passes), oi, step, tensors, sizes))
    out.sort(key=lambda c: -c[0])
    return [c[1:] for c in out]


def stage_once(plan: ArenaPlan, wanted: list, limit: int) -> ArenaPlan:
    """The plan with wanted (once_candidates) staged once, each layer's tensors at bytes of their own in bt_staging
    after those already there, in the order given while they stay within limit bytes (a layer that does not fit
    is passed over for the next)."""
    staged, end = list(plan.staged), plan.staging_bytes
    for op, step, tensors, sizes in wanted:
        offsets, need = packed(sizes, plan.align, end)
        if need > limit:
            continue
        end = need
        staged += [dict(op=op, step=step, tensor=t, offset=o, size=n, spare=True, once=True)
                   for t, o, n in zip(tensors, offsets, sizes)]
    return replace(plan, staged=staged, staging_bytes=end if staged else 0)


def summary(plan) -> dict:
    """firmware.json's "staged": the layers (all, those staged in the arena), the tensors, bytes staged in the arena
    (the most at one step) and bt_staging's."""
    staged = getattr(plan, "staged", None) or []
    if not staged:
        return {}
    per_step = {}
    for d in staged:
        if not d["spare"]:
            per_step[d["step"]] = per_step.get(d["step"], 0) + d["size"]
    return {"staged": {"layers": sorted({d["op"] for d in staged}), "tensors": len(staged),
                       "arena_layers": sorted({d["op"] for d in staged if not d["spare"]}),
                       "arena_bytes": max(per_step.values(), default=0), "spare_bytes": plan.staging_bytes}}


__all__ = ["PIXELS_PER_PASS", "STATIC_RESERVE", "model_for", "spare_ram", "candidates", "staged_plan", "once_gain",
           "once_candidates", "stage_once", "summary"]
