"""Run a fused / split schedule tile by tile inside ONE bytearray arena at the planned offsets.

Whole tensors, window buffers and accumulators are numpy views onto the arena at their
FusedPlan offsets (each view is checked to lie inside arena_bytes), so an unsound plan or
a wrong window shows up as wrong output bytes. Each operator of a block computes its
output tile from its inputs' windows through the refops kernels; the kernels' own
temporaries (their padded input block) are the only memory outside the arena, as in the
kernels themselves.

A window along a recompute axis holds, for tile i, the interval the tile needs (buffer
index 0 = the interval's first position); along a cache axis it is a ring of the last
`extent` positions computed, kept in order by shifting it when new positions arrive.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import PlanError, UsageError
from ...model.ir import NUMPY_DTYPE, Quant
from ...model.ops import op_macs
from ...refops import KERNELS, kernel_inputs
from ...refops.requant import bias_of, channel_multipliers, requantize
from .costs import accumulator_dtype, accumulator_len, macs_per_pixel
from .geometry import WINDOWED, interval, is_dense, op_axes
from .schedule import BlockRun, FusedPlan, pull_order


class _Arena:
    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.buf = np.frombuffer(bytearray(nbytes), dtype=np.uint8)

    def view(self, offset: int, shape: tuple, dtype) -> np.ndarray:
        dt = np.dtype(dtype)
        size = int(np.prod(shape)) * dt.itemsize
        if offset < 0 or offset + size > self.nbytes:
            raise PlanError(f"buffer [{offset}, {offset + size}) lies outside the {self.nbytes}-byte arena")
        return np.ndarray(shape, dtype=dt, buffer=self.buf, offset=offset)


class _Tile:
    """A window buffer holding image rows/cols starting at (r0, c0)."""

    def __init__(self, arr: np.ndarray):
        self.arr = arr  # [rows, cols, C]
        self.r0 = 0
        self.c0 = 0

    def region(self, r0, r1, c0, c1) -> np.ndarray:
        a, b, c, d = r0 - self.r0, r1 - self.r0, c0 - self.c0, c1 - self.c0
        if a < 0 or c < 0 or b > self.arr.shape[0] or d > self.arr.shape[1]:
            raise PlanError(f"tile rows [{r0}, {r1}) cols [{c0}, {c1}) are not in the window "
                            f"(holds rows {self.r0}+{self.arr.shape[0]}, cols {self.c0}+{self.arr.shape[1]})")
        return self.arr[a:b, c:d]


class _Whole:
    """A whole tensor in the arena: one contiguous view, or full-width row bands at their own offsets."""

    def __init__(self, arena: _Arena, t, bands: list):
        self.t = t
        shape = tuple(int(d) for d in t.shape)
        dt = NUMPY_DTYPE[t.dtype]
        if len(bands) == 1:
            self.full = arena.view(bands[0][2], shape, dt)
        else:
            self.full = None
        self.bands = []
        if len(shape) == 4:
            for r0, r1, off in sorted(bands):
                self.bands.append((r0, r1, arena.view(off, (r1 - r0,) + shape[2:], dt)))

    def _parts(self, r0, r1):
        if not (0 <= r0 <= r1 <= self.t.shape[1]):
            raise PlanError(f"rows [{r0}, {r1}) outside tensor {self.t.index}")
        for b0, b1, arr in self.bands:
            a, b = max(r0, b0), min(r1, b1)
            if a < b:
                yield a, b, arr[a - b0:b - b0]

    def region(self, r0, r1, c0, c1) -> np.ndarray:
        parts = [arr[:, c0:c1] for _, _, arr in self._parts(r0, r1)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    def write(self, r0, r1, c0, c1, data) -> None:
        for a, b, arr in self._parts(r0, r1):
            arr[:, c0:c1] = data[a - r0:b - r0]


class _TileGraph:
    """The graph as a kernel sees it when it runs VALID over a pre-padded block (and, for one
    output channel of a convolution, with that channel's filter, bias and scale)."""

    def __init__(self, g, shapes: dict, memo: dict, swap: dict | None = None):
        self._g = g
        self.tensors = _Tensors(g.tensors, shapes, swap or {}, memo)


class _Tensors:
    def __init__(self, ts, shapes, swap, memo):
        self._ts, self._shapes, self._swap, self._memo = ts, shapes, swap, memo

    def __getitem__(self, i):
        if i in self._swap:
            return self._swap[i]
        if i not in self._shapes:
            return self._ts[i]
        key = ("tensor", i, self._shapes[i])  # a tile's shape: the same few recur tile after tile
        t = self._memo.get(key)
        if t is None:
            t = self._memo[key] = dataclasses.replace(self._ts[i], shape=self._shapes[i])
        return t


def _memo(memo: dict, key, make):
    """memo[key], made on first use (one run's cache of per-operator values that tiles repeat)."""
    v = memo.get(key)
    if v is None:
        v = memo[key] = make()
    return v


def _channel_group(g, op, c: int, n: int) -> dict:
    """Filter and bias tensors of a CONV_2D cut down to output channels [c, c + n)."""
    f = g.tensors[op.inputs[1]]
    q = f.quant
    if q.per_channel:
        q = Quant(q.scale[c:c + n], q.zero_point[c:c + n] if len(q.zero_point) > 1 else q.zero_point, q.axis)
    swap = {op.inputs[1]: dataclasses.replace(f, data=f.data[c:c + n], shape=(n,) + tuple(f.shape[1:]), quant=q)}
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        b = g.tensors[op.inputs[2]]
        swap[op.inputs[2]] = dataclasses.replace(b, data=b.data.reshape(-1)[c:c + n], shape=(n,))
    return swap


def _window_geometry(g, op):
    return op_axes(g, op)


def _run_windowed(g, op, src: _Tile, out: np.ndarray, r0, r1, c0, c1, memo: dict,
                  channel: int | None = None, n: int = 1) -> None:
    """Output rows [r0, r1) cols [c0, c1) of a sliding-window op from the tile src.

    channel: compute only output channels [channel, channel + n) (a CONV_2D: those filters; a depthwise
    convolution: src holds just those input channels). memo: the run's cache (_memo)."""
    ax_r, ax_c = _memo(memo, ("axes", op.index), lambda: _window_geometry(g, op))
    xin = g.tensors[op.inputs[0]]
    lo_r, hi_r = r0 * ax_r.s - ax_r.pad, (r1 - 1) * ax_r.s - ax_r.pad + ax_r.k
    lo_c, hi_c = c0 * ax_c.s - ax_c.pad, (c1 - 1) * ax_c.s - ax_c.pad + ax_c.k
    fill = xin.zero_point if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D") else -128
    n_in = n if channel is not None and op.opcode == "DEPTHWISE_CONV_2D" else xin.shape[3]
    block = np.full((1, hi_r - lo_r, hi_c - lo_c, n_in), fill, dtype=np.int8)
    vr0, vr1 = max(lo_r, 0), min(hi_r, ax_r.n_in)
    vc0, vc1 = max(lo_c, 0), min(hi_c, ax_c.n_in)
    if vr1 > vr0 and vc1 > vc0:
        block[0, vr0 - lo_r:vr1 - lo_r, vc0 - lo_c:vc1 - lo_c] = src.region(vr0, vr1, vc0, vc1)
    vop = _memo(memo, ("valid", op.index), lambda: dataclasses.replace(op, options={**op.options, "padding": "VALID"}))
    shapes = {op.inputs[0]: block.shape, op.outputs[0]: (1, r1 - r0, c1 - c0, out.shape[-1])}
    if channel is None:
        KERNELS[op.opcode](_TileGraph(g, shapes, memo), vop, [block], [out[None]])
    elif op.opcode == "CONV_2D":
        swap = _memo(memo, ("channel", op.index, channel, n), lambda: _channel_group(g, op, channel, n))
        KERNELS[op.opcode](_TileGraph(g, shapes, memo, swap), vop, [block], [out[None]])
    else:
        shapes[op.inputs[0]] = block.shape[:3] + (xin.shape[3],)
        KERNELS[op.opcode](_TileGraph(g, shapes, memo), vop, [block], [out[None]],
                           channels=slice(channel, channel + n))


def _shift(tile: _Tile, axis: int, new_hi: int, ext: int) -> None:
    """Advance a ring window along axis so that it ends at new_hi (older positions move down)."""
    old_hi = (tile.r0 if axis == 0 else tile.c0) + ext
    n = new_hi - old_hi
    if n <= 0:
        return
    a = tile.arr
    if n < ext:
        if axis == 0:
            a[:ext - n] = a[n:].copy()
        else:
            a[:, :ext - n] = a[:, n:].copy()
    if axis == 0:
        tile.r0 = new_hi - ext
    else:
        tile.c0 = new_hi - ext


def _run_block(g, bi: int, blk: BlockRun, plan: FusedPlan, arena: _Arena, whole: dict, source, count: list,
               memo: dict) -> None:
    for _ in _block_rows(g, bi, blk, plan, arena, whole, source, count, memo):
        pass


def _place_windows(g, bi: int, blk: BlockRun, plan: FusedPlan, arena: _Arena, tiles: dict, r: int) -> None:
    """Views of the block's windows for tile row r: at their planned offsets, which for a pipelined
    block are within its pool at that row (plan.window_base)."""
    base = plan.window_base[bi][r] if bi in plan.window_base else 0
    for t in blk.windows:
        tiles[t] = _Tile(arena.view(base + plan.window_offset[(bi, t)], blk.window_shape(g, t), np.int8))


def _block_rows(g, bi: int, blk: BlockRun, plan: FusedPlan, arena: _Arena, whole: dict, source, count: list,
                memo: dict):
    """Run the block one tile row per step: a generator that yields after each row (a pipelined
    group interleaves the rows of its blocks) and finishes the accumulating tail after the last."""
    tiles = {}  # window tensors
    _place_windows(g, bi, blk, plan, arena, tiles, 0)

    def tile_of(t):
        return tiles[t] if t in tiles else whole[t]

    acc = None
    red = g.operators[blk.geo.reduce_op] if blk.geo.reduce_op >= 0 else None
    dense = is_dense(g, blk.geo)
    if red is not None:
        acc = arena.view(plan.acc_offset[bi], (accumulator_len(g, blk.geo),), accumulator_dtype(g, blk.geo))
        acc[...] = 0
    rows, cols = blk.rows, blk.cols
    n_r, n_c = len(rows.bounds) - 1, len(cols.bounds) - 1
    made = [(s, g.operators[s.op]) for s in blk.geo.steps]
    chw = {t for t in blk.windows if blk.channelwise(g, t)}  # made channel by channel inside their reader
    maker = {s.out: (s, op) for s, op in made}
    pulled = {t for t in blk.streamed if blk.pulled_rows(g, t)}
    for r in range(n_r):
        if bi in plan.window_base and r:
            _place_windows(g, bi, blk, plan, arena, tiles, r)
        for c in range(n_c):
            def windowed(op, out, ra, rb, ca, cb, channel=None, n=1, r=r, c=c):
                """Output tile [ra, rb) x [ca, cb) of a sliding-window op; from a pulled input one
                output row at a time, each after pulling the input rows it reads into the window."""
                t = op.inputs[0]
                if t not in pulled:
                    _run_windowed(g, op, tile_of(t), out, ra, rb, ca, cb, memo, channel, n)
                    return
                ax = _memo(memo, ("axes", op.index), lambda: _window_geometry(g, op))[0]
                tl = tiles[t]
                ta, tb = interval(cols, t, c)
                for rr in range(ra, rb):
                    r0, r1 = max(rr * ax.s - ax.pad, 0), min(rr * ax.s - ax.pad + ax.k, ax.n_in)
                    tl.r0 = r0
                    if r1 > r0 and tb > ta:
                        tl.region(r0, r1, ta, tb)[...] = source(r0, r1, ta, tb)
                    _run_windowed(g, op, tl, out[rr - ra:rr - ra + 1], rr, rr + 1, ca, cb, memo, channel, n)

            for t in blk.windows:  # place the windows for this tile
                tl = tiles[t]
                if rows.mode == "rec":
                    tl.r0 = int(rows.lo[t][r])
                if cols.mode == "rec":
                    tl.c0 = int(cols.lo[t][c])
                elif c == 0:
                    tl.c0 = -cols.ext[t]
                if rows.mode == "cache" and r == 0 and c == 0:
                    tl.r0 = -rows.ext[t]
            for t in blk.streamed:
                if t in pulled:
                    continue  # its reader pulls the rows it needs, one output row at a time
                ra, rb = interval(rows, t, r)
                ca, cb = interval(cols, t, c)
                tl = tiles[t]
                if rows.mode == "cache" and c == 0:
                    _shift(tl, 0, rb, rows.ext[t])
                if cols.mode == "cache":
                    _shift(tl, 1, cb, cols.ext[t])
                if rb > ra and cb > ca:
                    tl.region(ra, rb, ca, cb)[...] = source(ra, rb, ca, cb)
            for s, op in made:
                if s.out in chw:
                    continue
                ra, rb = interval(rows, s.out, r)
                ca, cb = interval(cols, s.out, c)
                dst = tile_of(s.out)
                if s.out in tiles:
                    if rows.mode == "cache" and c == 0:
                        _shift(dst, 0, rb, rows.ext[s.out])
                    if cols.mode == "cache":
                        _shift(dst, 1, cb, cols.ext[s.out])
                if rb <= ra or cb <= ca:
                    continue
                if s.out in tiles:
                    out = dst.region(ra, rb, ca, cb)
                else:
                    out = np.empty((rb - ra, cb - ca, g.tensors[s.out].shape[3]), np.int8)
                count[0] += macs_per_pixel(g, op) * (rb - ra) * (cb - ca)
                _computed(count, op.index, out.size)
                if op.inputs[0] in chw:
                    _channel_by_channel(g, maker[op.inputs[0]], op, tiles, windowed, rows, cols, r, c, out,
                                        (ra, rb, ca, cb), count, memo, blk.group(op.inputs[0]))
                elif op.opcode in WINDOWED:
                    windowed(op, out, ra, rb, ca, cb)
                else:
                    ins = [tile_of(i).region(ra, rb, ca, cb)[None] for i in op.inputs[:2]
                           if not g.tensors[i].is_const]  # PRELU's alpha: read by the kernel
                    KERNELS[op.opcode](g, op, ins, [out[None]])
                if s.out not in tiles:
                    dst.write(ra, rb, ca, cb, out)
                if dense and s.out == blk.geo.tile_tensor:
                    _dense_accumulate(g, red, acc, out, ra, ca, g.tensors[blk.geo.tile_tensor].shape[2])
                elif red is not None and s.out == blk.geo.tile_tensor:
                    acc += out.sum(axis=(0, 1), dtype=acc.dtype)
        if r < n_r - 1:
            yield r
    if red is not None:
        _computed(count, red.index, _elements(g, red.outputs[0]))
    if dense:
        count[0] += op_macs(g, red)
        _dense_done(g, red, acc, whole[red.outputs[0]].full)
    elif red is not None:
        o = red.outputs[0]
        KERNELS["MEAN"](g, red, [acc.astype(np.int32).reshape(1, 1, 1, -1)], [whole[o].full])


def _elements(g, t: int) -> int:
    return int(np.prod(g.tensors[t].shape))


def _computed(count: list, op: int, n: int) -> None:
    """Count n output elements computed for operator op (run_fused's stats["computed"])."""
    count[1][op] = count[1].get(op, 0) + int(n)


def _dense_accumulate(g, fc, acc: np.ndarray, tile: np.ndarray, r0: int, c0: int, width: int) -> None:
    """Add a finished output tile's partial dot products to a dense layer's int32 sums.

    Pixel (y, x) channel c of the block's output (width pixels wide) is element
    ((y*W + x)*C + c) of the dense layer's input row; the input offset is applied per
    element, as the kernel does, so the sums over all tiles equal the kernel's dot products
    (int32 wraps alike in any order)."""
    w = g.tensors[fc.inputs[1]].data
    h, wd, ch = tile.shape
    ys, xs = np.meshgrid(np.arange(r0, r0 + h), np.arange(c0, c0 + wd), indexing="ij")
    idx = (((ys * width + xs) * ch)[..., None] + np.arange(ch)).reshape(-1)
    part = w[:, idx].astype(np.int64) @ (tile.reshape(-1).astype(np.int64) - g.tensors[fc.inputs[0]].zero_point)
    acc[...] = (acc.astype(np.int64) + part).astype(np.int32)


def _dense_done(g, fc, acc: np.ndarray, out: np.ndarray) -> None:
    """The dense layer's bias, requantisation and activation, once, on the accumulated sums."""
    n_out = acc.shape[0]
    total = acc.astype(np.int64) + bias_of(g, fc, n_out)
    mult, shift = channel_multipliers(g, fc)
    out[...] = requantize(total.reshape(1, n_out), mult, shift, g, fc).reshape(out.shape)


def _channel_by_channel(g, made, dw, tiles, windowed, rows, cols, r, c, out, box, count, memo, n: int) -> None:
    """An expansion conv and its depthwise reader, n channels at a time: the conv's output
    channels [k, k + n) fill the n-channel window, then the depthwise makes those output channels."""
    s, conv = made
    t = s.out
    ra, rb = interval(rows, t, r)
    ca, cb = interval(cols, t, c)
    win = tiles[t]
    count[0] += macs_per_pixel(g, conv) * (rb - ra) * (cb - ca)
    _computed(count, conv.index, (rb - ra) * (cb - ca) * g.tensors[t].shape[3])
    for k in range(0, g.tensors[t].shape[3], n):
        windowed(conv, win.region(ra, rb, ca, cb), ra, rb, ca, cb, channel=k, n=n)
        _run_windowed(g, dw, win, out[..., k:k + n], *box, memo, channel=k, n=n)


def _run_group(g, grp: tuple, plan: FusedPlan, arena: _Arena, whole: dict, source, count: list, memo: dict) -> None:
    """A pipelined group: its blocks' tile rows in pull order (fusion.schedule.pull_order); each
    step runs one row (the last one also the block's accumulating tail)."""
    blocks = [plan.schedule.items[k] for k in grp]
    rows = [_block_rows(g, k, b, plan, arena, whole, source, count, memo) for k, b in zip(grp, blocks)]
    for j, _ in pull_order(blocks):
        next(rows[j], None)


def run_fused(g, plan: FusedPlan, inputs: list, stats: dict | None = None) -> list:
    """Execute plan.schedule inside one arena of plan.arena_bytes; returns copies of the graph outputs.

    stats, when given, receives "macs": the multiply-accumulates actually executed, and "computed":
    operator index -> output elements computed for it (a tile's overlap with its neighbours counted
    again; what instructions.recompute_factors predicts).

    With an input-streamed plan the graph input is read through a source callback
    source(r0, r1, c0, c1) -> rows [r0, r1) x cols [c0, c1) (here: slices of inputs[0]).
    """
    if len(inputs) != len(g.inputs):
        raise UsageError(f"model has {len(g.inputs)} inputs, {len(inputs)} given")
    arena = _Arena(plan.arena_bytes)
    whole = {t: _Whole(arena, g.tensors[t], bands) for t, bands in plan.bands.items()}
    streamed = []
    for i, x in zip(g.inputs, inputs):
        x = np.asarray(x, dtype=NUMPY_DTYPE[g.tensors[i].dtype])
        if tuple(x.shape) != tuple(g.tensors[i].shape):
            raise UsageError(f"input has shape {list(x.shape)}, the model expects {list(g.tensors[i].shape)}")
        if i in whole and whole[i].full is not None:
            whole[i].full[...] = x
        elif i in whole:  # a banded input: the application writes each band's rows
            whole[i].write(0, x.shape[1], 0, x.shape[2], x[0])
        else:
            streamed.append(x)

    def source(r0, r1, c0, c1):
        """The sensor: rows [r0, r1) x cols [c0, c1) of the (single) streamed input."""
        return streamed[0][0, r0:r1, c0:c1]
    count, memo = [0, {}], {}
    groups = {grp[0]: grp for grp in plan.schedule.pipelined}
    done = set()
    for bi, it in enumerate(plan.schedule.items):
        if bi in done:
            continue
        if bi in groups:
            _run_group(g, groups[bi], plan, arena, whole, source, count, memo)
            done.update(groups[bi])
        elif isinstance(it, BlockRun):
            _run_block(g, bi, it, plan, arena, whole, source, count, memo)
        else:
            op = g.operators[it]
            count[0] += op_macs(g, op)
            _computed(count, it, sum(_elements(g, o) for o in op.outputs))
            ins = [g.tensors[i].data if g.tensors[i].is_const else whole[i].full for i in kernel_inputs(g, op)]
            KERNELS[op.opcode](g, op, ins, [whole[o].full for o in op.outputs])
    if stats is not None:
        stats["macs"] = count[0]
        stats["computed"] = count[1]
    return [np.array(whole[o].full) for o in g.outputs]
