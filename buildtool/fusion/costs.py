"""RAM and MAC cost of a fusion block for a tile size and cache scheme.

A block is a run of consecutive tileable operators whose only tensor used after it is
the output of its last operator (or, for a block that ends in a MEAN over height and
width, the MEAN's small output: the mean then accumulates one tile at a time).
The block's last spatial tensor Y is cut into tiles; every other tensor made inside
the block lives in a window buffer that holds just what the tiles need.

Along each axis a tensor is handled in one of two modes:
- recompute: for tile i the producer computes the whole interval the consumers need;
  overlapping intervals of neighbouring tiles are computed again.
- cache: tiles are visited in order along the axis; the producer computes only the
  positions past those it already has, and the window keeps the last ones the
  consumers still read (a ring of `window` positions), so nothing is recomputed.
Schemes: "hcache" (rows recompute, columns cached: msf-CNN's H-cache; with a single
column tile it is XMOS-style operator splitting) and "linebuf" (rows cached in line
buffers, one tile over the whole width: nothing is recomputed).

The two axes are independent, so a block's cost for all tile sizes is computed from
1-D analyses of rows and of columns (all candidates at once, as numpy arrays).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan import align_up
from .receptive import Axis, macs_per_pixel, op_axes, reduces_tiles

BIG = np.int64(1) << 40


@dataclass(frozen=True)
class Step:
    """One operator of a block: output tensor, its (row, column) axes, spatial inputs."""

    op: int
    out: int
    axes: tuple  # (row Axis, column Axis)
    ins: tuple  # spatial activation inputs


@dataclass(frozen=True)
class Geometry:
    """The shape of a block: its steps in order, the tiled tensor, an optional reducing MEAN."""

    ops: tuple  # every operator index of the block, in order
    steps: tuple  # Step for each tileable operator (all but a final MEAN)
    tile_tensor: int  # Y: the last spatial tensor, cut into tiles
    reduce_op: int  # the MEAN operator that accumulates Y, or -1


def geometry(g, ops) -> Geometry:
    ops = tuple(ops)
    reduce_op = ops[-1] if reduces_tiles(g, g.operators[ops[-1]]) else -1
    body = ops[:-1] if reduce_op >= 0 else ops
    steps = []
    for oi in body:
        op = g.operators[oi]
        steps.append(Step(oi, op.outputs[0], op_axes(g, op), tuple(g.act_inputs(op))))
    y = steps[-1].out if steps else g.operators[reduce_op].inputs[0]
    return Geometry(ops, tuple(steps), y, reduce_op)


def uniform_bounds(n: int, t: int) -> tuple:
    return tuple(list(range(0, n, t)) + [n])


def even_bounds(n: int, parts: int) -> tuple:
    """n positions in `parts` near-equal slices, the larger first (as numpy.array_split)."""
    parts = max(1, min(parts, n))
    q, r = divmod(n, parts)
    b, out = 0, [0]
    for i in range(parts):
        b += q + (i < r)
        out.append(b)
    return tuple(out)


def _bounds_matrix(bounds_list) -> np.ndarray:
    """Stack boundary tuples into [cand, tiles + 1], padding by repeating the last boundary."""
    m = max(len(b) for b in bounds_list)
    arr = np.empty((len(bounds_list), m), dtype=np.int64)
    for i, b in enumerate(bounds_list):
        arr[i, :len(b)] = b
        arr[i, len(b):] = b[-1]
    return arr


def _hull(cur, new) -> tuple:
    if cur is None:
        return new
    (a0, b0), (a1, b1) = cur, new
    e0, e1 = b0 <= a0, b1 <= a1
    lo = np.where(e0, a1, np.where(e1, a0, np.minimum(a0, a1)))
    hi = np.where(e0, b1, np.where(e1, b0, np.maximum(b0, b1)))
    return lo, hi


def recompute_1d(steps, axis: int, y: int, bounds_list) -> dict:
    """Recompute mode: tensor -> (lo, hi) arrays [cand, tile] of the interval each tile needs.

    Padding tiles (beyond a candidate's last) are empty intervals.
    """
    b = _bounds_matrix(bounds_list)
    need = {y: (b[:, :-1], b[:, 1:])}
    for st in reversed(steps):
        if st.out not in need:
            continue
        lo, hi = need[st.out]
        ax: Axis = st.axes[axis]
        a, e = ax.need(lo, hi)
        for t in st.ins:
            need[t] = _hull(need.get(t), (a, e))
    return need


def cached_1d(steps, axis: int, y: int, bounds_list) -> dict:
    """Cache mode: tensor -> (hi, lo_need) arrays [cand, step].

    hi[i] = positions computed after step i; lo_need[i] = lowest position any consumer
    reads at step i (BIG when none reads).
    """
    b = _bounds_matrix(bounds_list)
    hi = {y: b[:, 1:]}
    lo_need = {y: np.full_like(b[:, 1:], BIG)}
    for st in reversed(steps):
        if st.out not in hi:
            continue
        h = hi[st.out]
        prev = np.concatenate([np.zeros_like(h[:, :1]), h[:, :-1]], axis=1)
        ax: Axis = st.axes[axis]
        end = ax.need_end(h)
        a, e = ax.need(prev, h)
        a = np.where(e > a, a, BIG)
        for t in st.ins:
            hi[t] = np.maximum(hi[t], end) if t in hi else end
            lo_need[t] = np.minimum(lo_need[t], a) if t in lo_need else a
    return {t: (hi[t], lo_need[t]) for t in hi}


def recompute_extent(iv) -> tuple:
    """(buffer extent, positions computed) per candidate from recompute intervals."""
    lo, hi = iv
    w = hi - lo
    return w.max(axis=1), w.sum(axis=1)


def cached_extent(iv) -> tuple:
    """(ring window, positions computed) per candidate from cache-mode arrays."""
    hi, lo_need = iv
    prev = np.concatenate([np.zeros_like(hi[:, :1]), hi[:, :-1]], axis=1)
    win = (hi - np.minimum(prev, lo_need)).max(axis=1)
    return win, hi[:, -1]


def tile_candidates(n: int) -> tuple:
    """Tile sizes tried along an axis of n positions: small ones densely, then even splits."""
    c = {t for t in (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128) if t <= n}
    c.update(-(-n // k) for k in range(1, 9))
    return tuple(sorted(c))


@dataclass
class BlockTables:
    """Costs of one block for every candidate tiling (excluding whole tensors held in the arena).

    hcache_ram/macs: [row tile, col tile]; linebuf_ram/macs: [row tile].
    """

    rows: tuple  # row tile sizes
    cols: tuple  # column tile sizes
    hcache_ram: np.ndarray
    hcache_macs: np.ndarray
    linebuf_ram: np.ndarray
    linebuf_macs: np.ndarray
    recompute_ram: np.ndarray
    recompute_macs: np.ndarray


def window_tensors(g, geo: Geometry, streamed: tuple = ()) -> list:
    """Tensors that get a window buffer: made inside the block (not its output), or streamed in."""
    made = [st.out for st in geo.steps]
    inner = made if geo.reduce_op >= 0 else made[:-1]
    ext = [t for st in geo.steps for t in st.ins if t in streamed and t not in made]
    return list(dict.fromkeys(inner + ext))


def window_lifetimes(g, geo: Geometry, streamed: tuple = ()) -> dict:
    """Window tensor -> (first op, last op) of the block that touch it within one tile pass."""
    out = {}
    for t in window_tensors(g, geo, streamed):
        users = [s.op for s in geo.steps if t in s.ins]
        if geo.reduce_op >= 0 and t == geo.tile_tensor:
            users.append(geo.reduce_op)
        made = [s.op for s in geo.steps if s.out == t]
        out[t] = (made[0] if made else min(users), max(users))
    return out


def accumulator_bytes(g, geo: Geometry) -> int:
    """int32 per channel of the MEAN that accumulates the block's tiles."""
    if geo.reduce_op < 0:
        return 0
    return 4 * g.tensors[geo.tile_tensor].shape[3]


class Sweep:
    """1-D analyses of all blocks ending at one operator, shared by every block start.

    A tensor's window depends only on its consumers, which all come after it, so the
    analysis from the last operator backwards serves every start at once.
    """

    def __init__(self, g, geo: Geometry):
        y = g.tensors[geo.tile_tensor].shape
        self.rows, self.cols = tile_candidates(y[1]), tile_candidates(y[2])
        rb = [uniform_bounds(y[1], t) for t in self.rows]
        cb = [uniform_bounds(y[2], t) for t in self.cols]
        st, yt = geo.steps, geo.tile_tensor
        self.r_rec = {t: recompute_extent(v) for t, v in recompute_1d(st, 0, yt, rb).items()}
        self.r_cache = {t: cached_extent(v) for t, v in cached_1d(st, 0, yt, rb).items()}
        self.c_cache = {t: cached_extent(v) for t, v in cached_1d(st, 1, yt, cb).items()}
        self.c_rec = {t: recompute_extent(v) for t, v in recompute_1d(st, 1, yt, cb).items()}
        self.full_col = len(self.cols) - 1  # the last candidate is the whole width

    def tables(self, g, geo: Geometry, streamed: tuple, align: int) -> BlockTables:
        """Costs of the block geo (a suffix of the swept operators)."""
        nr, nc = len(self.rows), len(self.cols)
        h_ram = np.zeros((nr, nc), dtype=np.int64)
        l_ram = np.zeros(nr, dtype=np.int64)
        for t in window_tensors(g, geo, streamed):
            c = g.tensors[t].shape[3]
            er, ec, wr = self.r_rec[t][0], self.c_cache[t][0], self.r_cache[t][0]
            h_ram += _align(er[:, None] * ec[None, :] * c, align)
            l_ram += _align(wr * ec[self.full_col] * c, align)
        acc = align_up(accumulator_bytes(g, geo), align) if geo.reduce_op >= 0 else 0
        # recompute: a tile buffer lives only from its producer to its last reader in the block
        first = geo.ops[0]
        live = np.zeros((len(geo.ops), nr, nc), dtype=np.int64)
        for t, (a, b) in window_lifetimes(g, geo, streamed).items():
            c = g.tensors[t].shape[3]
            live[a - first:b - first + 1] += _align(self.r_rec[t][0][:, None] * self.c_rec[t][0][None, :] * c, align)
        r_ram = live.max(axis=0)
        h_mac = np.zeros((nr, nc), dtype=np.int64)
        l_mac = np.zeros(nr, dtype=np.int64)
        r_mac = np.zeros((nr, nc), dtype=np.int64)
        for s in geo.steps:
            mpp = macs_per_pixel(g, g.operators[s.op])
            if mpp:
                h_mac += mpp * self.r_rec[s.out][1][:, None] * self.c_cache[s.out][1][None, :]
                l_mac += mpp * self.r_cache[s.out][1] * self.c_cache[s.out][1][self.full_col]
                r_mac += mpp * self.r_rec[s.out][1][:, None] * self.c_rec[s.out][1][None, :]
        return BlockTables(self.rows, self.cols, h_ram + acc, h_mac, l_ram + acc, l_mac, r_ram + acc, r_mac)


def _align(x, a: int):
    return (x + a - 1) // a * a


def pareto(ram, macs, tags) -> list:
    """Non-dominated (ram, macs, tag) triples, by increasing ram."""
    ram = np.asarray(ram).reshape(-1)
    macs = np.asarray(macs).reshape(-1)
    order = np.lexsort((macs, ram))
    out, best = [], None
    for i in order:
        if best is None or macs[i] < best:
            best = macs[i]
            out.append((int(ram[i]), int(macs[i]), tags[i]))
    return out


def block_options(g, geo: Geometry, sweep: Sweep, streamed: tuple, align: int,
                  schemes=("hcache", "linebuf", "recompute"),
                  full_width_only: bool = False) -> list:
    """Pareto-optimal [ram, macs, scheme, th, tw] of one block over all candidate tilings.

    full_width_only keeps only single-column-tile tilings (XMOS-style splitting).
    """
    tb = sweep.tables(g, geo, streamed, align)
    rams, macs, tags = [], [], []
    if "hcache" in schemes:
        cols = range(len(tb.cols)) if not full_width_only else [len(tb.cols) - 1]
        for j in cols:
            for i in range(len(tb.rows)):
                rams.append(tb.hcache_ram[i, j])
                macs.append(tb.hcache_macs[i, j])
                tags.append(("hcache", tb.rows[i], tb.cols[j]))
    if "linebuf" in schemes:
        for i in range(len(tb.rows)):
            rams.append(tb.linebuf_ram[i])
            macs.append(tb.linebuf_macs[i])
            tags.append(("linebuf", tb.rows[i], tb.cols[-1]))
    if "recompute" in schemes:
        for j in range(len(tb.cols)):
            for i in range(len(tb.rows)):
                rams.append(tb.recompute_ram[i, j])
                macs.append(tb.recompute_macs[i, j])
                tags.append(("recompute", tb.rows[i], tb.cols[j]))
    return [[r, m, s, th, tw] for r, m, (s, th, tw) in pareto(rams, macs, tags)]
