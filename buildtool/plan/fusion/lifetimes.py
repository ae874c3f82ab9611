"""Buffer lifetimes of a schedule: which buffer (whole tensor, row band, window pool,
accumulator) lives over which steps, for the arena packers.

Steps are the operators of the model order. A whole tensor lives from its producer to its
last reader; when either sits inside a block it lives over the whole block (a tile loop
revisits every operator of the block). Window buffers of cached schemes (hcache, linebuf)
keep data from tile to tile, so they live over the whole block; those of the recompute
scheme live from their producer to their last reader within the block (tile-steps), so
buffers of different layers share bytes. A MEAN or dense layer that accumulates tiles owns
an accumulator over the block (the flattened tensor a dense layer reads is never made).
layout() turns the specs, placed at the packers' offsets, into the plan's buffers and offsets.
"""

from __future__ import annotations

import numpy as np

from ..arena.packers import pack_varying
from ...model.ir import Graph, Operator, Quant, Tensor
from .. import ArenaPlan, Buffer, TensorPlace, align_up
from .costs import accumulator_bytes, window_lifetimes
from .dag import build_network, inplace_input
from .schedule import BlockRun, FusedPlan, Schedule, pull_order


def item_steps(sched: Schedule) -> list:
    """(first step, last step) of each item: one step per plain operator, one per row of tiles of a
    block (the items of a pipelined group share their steps)."""
    seq = _item_steps(sched)
    if not sched.pipelined:
        return seq
    pos = step_positions(sched)
    return [(min(pos[s] for s in range(s0, s1 + 1)), max(pos[s] for s in range(s0, s1 + 1))) for s0, s1 in seq]


def _item_steps(sched: Schedule) -> list:
    """(first step, last step) of each item when every item runs whole, in order."""
    out, s = [], 0
    for it in sched.items:
        k = it.n_steps if isinstance(it, BlockRun) else 1
        out.append((s, s + k - 1))
        s += k
    return out


def tile_order(sched: Schedule) -> list:
    """(item, row) of every step in execution order: items in order, a pipelined group's rows interleaved."""
    first = {grp[0]: grp for grp in sched.pipelined}
    out, k = [], 0
    while k < len(sched.items):
        grp = first.get(k, (k,))
        if len(grp) > 1:
            out += [(grp[j], i) for j, i in pull_order([sched.items[x] for x in grp])]
        else:
            it = sched.items[k]
            out += [(k, i) for i in range(it.n_steps if isinstance(it, BlockRun) else 1)]
        k = grp[-1] + 1
    return out


def step_positions(sched: Schedule) -> list:
    """For each step of the in-order numbering (_item_steps), its position in tile_order."""
    seq = _item_steps(sched)
    order = tile_order(sched) if sched.pipelined else [(k, i) for k, (s0, s1) in enumerate(seq)
                                                         for i in range(s1 - s0 + 1)]
    pos = [0] * len(order)
    for s, (k, i) in enumerate(order):
        pos[seq[k][0] + i] = s
    return pos


def _bands_of(born: np.ndarray, dies: np.ndarray, rows_per_band: int = 1) -> list:
    """Row bands [(r0, r1, first, last)] of `rows_per_band` rows (one row: every band of a
    tensor has the same size, so a band freed by the input fits any band of the output)."""
    n = len(born)
    return [(r0, min(r0 + rows_per_band, n), int(born[r0:r0 + rows_per_band].min()),
             int(max(dies[r0:r0 + rows_per_band].max(), born[r0:r0 + rows_per_band].max())))
            for r0 in range(0, n, rows_per_band)]


def window_pool(g, blk: BlockRun, align: int) -> tuple:
    """Offsets of a block's windows inside its pool, and the pool's size.

    Cached schemes keep every window for the whole block. Recompute windows live from
    their producer to their last reader within one tile pass, so the arena packers lay
    them out over those operator steps and they share bytes.
    """
    if not blk.windows:
        return {}, 0
    lifes = window_lifetimes(g, blk.geo, blk.streamed)
    root, need = {}, {}  # window -> the window whose bytes it occupies; root -> {step: bytes}
    for t in blk.windows:
        src = blk.inplace_source(g, t)
        root[t] = root[src] if src is not None else t
        f, l = lifes[t] if blk.scheme == "recompute" else (blk.p, blk.q - 1)
        size = align_up(int(np.prod(blk.window_shape(g, t))), align)
        steps = need.setdefault(root[t], {})
        for st in range(f + (src is not None), l + 1):  # at its step an in-place output is inside its input
            steps[st] = max(steps.get(st, 0), size)
    at, top = pack_varying(need)
    return {t: at[root[t]] for t in blk.windows}, top


def buffer_specs(g, sched: Schedule, align: int) -> tuple:
    """([(key, size, first, last, kind)], pools, steps, alias): key ("t", tensor, r0, r1) | ("p", item)
    | ("a", item) | ("r", item, row) (a pipelined block's window pool at one tile row); alias maps an
    in-place output to the tensor whose buffer holds it."""
    steps = _item_steps(sched)
    n_steps = steps[-1][1] + 1 if steps else 1
    item_of = {}
    for k, it in enumerate(sched.items):
        for oi in (it.geo.ops if isinstance(it, BlockRun) else [it]):
            item_of[oi] = k
    inner = {t for it in sched.blocks() for t in it.windows}
    inner |= {g.operators[it.geo.flat_op].outputs[0] for it in sched.blocks() if it.geo.flat_op >= 0}  # never made
    prod, users = {}, {}
    for op in g.operators:
        for o in op.outputs:
            prod[o] = item_of[op.index]
        for i in g.act_inputs(op):
            users.setdefault(i, set()).add(item_of[op.index])
    whole = [t for t in sorted(set(prod) | set(g.inputs))
             if t not in inner and not (sched.streamed and t in g.inputs)]
    # in place: a plain element-wise operator writes its output over the whole input it reads
    # last; the output is no buffer of its own, the input's lives on until the output dies
    net = build_network(g, sched.streamed, align) if sched.inplace else None
    alias = {}
    for it in sched.items if sched.inplace else ():
        x = inplace_input(net, it) if not isinstance(it, BlockRun) else None
        o = g.operators[it].outputs[0] if x is not None else None
        if x is not None and {x, o}.isdisjoint(inner | set(sched.banded)):
            alias[o] = alias.get(x, x)
    specs = []
    for t in whole:
        if t in alias:
            continue
        first = 0 if t in g.inputs else steps[prod[t]][0]
        members = [t] + [a for a, r in alias.items() if r == t]
        last = max((steps[k][1] for m in members for k in users.get(m, ())), default=first)
        if t in g.outputs or any(m in g.outputs for m in members):
            last = n_steps - 1
        sh = g.tensors[t].shape
        if t in sched.banded:
            n = sh[1]
            born = (np.zeros(n, np.int64) if t in g.inputs else
                    steps[prod[t]][0] + sched.items[prod[t]].written_step(n))
            dies = np.zeros(n, np.int64)
            for k in users[t]:
                dies = np.maximum(dies, steps[k][0] + sched.items[k].last_read_step(t, n))
            row = g.tensors[t].nbytes // n
            for r0, r1, f, l in _bands_of(born, dies):
                specs.append((("t", t, r0, r1), (r1 - r0) * row, f, l, "band"))
        else:
            rows = sh[1] if len(sh) == 4 else 1
            specs.append((("t", t, 0, rows), g.tensors[t].nbytes, first, last, "tensor"))
    for t in g.variable_tensors():  # state (SVDF/LSTM): live at every step, never shared
        specs.append((("t", t, 0, 1), g.tensors[t].nbytes, 0, n_steps - 1, "persistent"))
    pools = {}
    for k, it in enumerate(sched.items):
        if not isinstance(it, BlockRun):
            continue
        offs, size = window_pool(g, it, align)
        pools[k] = offs
        if size:
            specs.append((("p", k), size, steps[k][0], steps[k][1], "windows"))
        acc = accumulator_bytes(g, it.geo)
        if acc:
            specs.append((("a", k), acc, steps[k][0], steps[k][1], "accumulator"))
    if sched.pipelined:
        return _interleaved(sched, specs), pools, item_steps(sched), alias
    return specs, pools, steps, alias


def _interleaved(sched: Schedule, specs: list) -> list:
    """specs with steps moved to tile_order: a row band lives from the step that writes it to the
    one that last reads it; a pipelined block's pool is one buffer per tile row, live at that step
    alone (recompute and hcache windows keep nothing between tile rows); the rest span their steps."""
    pos = step_positions(sched)
    seq = _item_steps(sched)
    piped = {k for grp in sched.pipelined for k in grp}
    out = []
    for key, size, f, l, kind in specs:
        if kind == "windows" and key[1] in piped:
            s0 = seq[key[1]][0]
            out += [(("r", key[1], s - s0), size, pos[s], pos[s], kind) for s in range(f, l + 1)]
        elif kind == "band":  # a row no one reads (a pool's stride past its filter) may be written after the
            out.append((key, size, pos[f], max(pos[f], pos[l]), kind))  # reader's last row: live when written
        else:
            span = [pos[s] for s in range(f, l + 1)]
            out.append((key, size, min(span), max(span), kind))
    return out


def layout(specs: list, pools: dict, alias: dict, offs: list) -> tuple:
    """(buffers, bands, window offsets, accumulator offsets, window bases) of buffer_specs' specs
    placed at offs (bytes). A pipelined block's window offsets are within its pool, whose offset
    at each tile row is its window base."""
    buffers, bands, woff, aoff, base = [], {}, {}, {}, {}
    for k, ((key, size, f, l, kind), off) in enumerate(zip(specs, offs)):
        tensors = [key[1]] if key[0] == "t" else (sorted(pools[key[1]]) if key[0] in "pr" else [])
        buffers.append(Buffer(k, off, size, f, l, tensors, kind))
        if key[0] == "t":
            bands.setdefault(key[1], []).append((key[2], key[3], off))
        elif key[0] == "p":
            for t, o in pools[key[1]].items():
                woff[(key[1], t)] = off + o
        elif key[0] == "r":
            base.setdefault(key[1], {})[key[2]] = off
            for t, o in pools[key[1]].items():
                woff[(key[1], t)] = o
        else:
            aoff[key[1]] = off
    base = {k: [rows[i] for i in range(len(rows))] for k, rows in base.items()}
    for o, x in sorted(alias.items()):
        bands[o] = list(bands[x])
        buffers[next(b.id for b in buffers if b.kind == "tensor" and x in b.tensors)].tensors.append(o)
    return buffers, bands, woff, aoff, base


def checker_view(plan: FusedPlan) -> tuple:
    """(graph, ArenaPlan) of the buffer lifetimes alone, for the independent arena checker.

    Each buffer becomes an int8 tensor of its size; the operator at step s writes the buffers
    that start at s and reads every buffer that is live at s and started before.
    """
    bufs = plan.buffers
    n = max((b.last_step for b in bufs), default=0) + 1
    q = Quant(np.ones(1, np.float32), np.zeros(1, np.int64))
    tensors = [Tensor(b.id, f"buf{b.id}", (max(b.size, 1),), "int8", q) for b in bufs]
    ops = []
    for s in range(n):
        ins = tuple(b.id for b in bufs if b.first_step < s <= b.last_step)
        outs = tuple(b.id for b in bufs if b.first_step == s)
        ops.append(Operator(s, "CONV_2D", ins, outs, {}))
    sg = Graph(tensors, ops, [], [], name="fused-buffers")
    places = {b.id: TensorPlace(b.id, f"buf{b.id}", b.id, b.offset, max(b.size, 1), b.first_step, b.last_step)
              for b in bufs}
    ap = ArenaPlan(arena_bytes=plan.arena_bytes, lower_bound_bytes=plan.lower_bound_bytes,
                   total_activation_bytes=sum(align_up(max(b.size, 1), plan.align) for b in bufs),
                   order=list(range(n)),
                   buffers=[Buffer(b.id, b.offset, max(b.size, 1), b.first_step, b.last_step, [b.id], "tensor")
                            for b in bufs],
                   tensors=places, align=plan.align)
    return sg, ap
