"""RAM and MAC cost of a fusion block for a tile size and cache scheme (its shape and per-axis
intervals: geometry.py).

A block is a run of consecutive tileable operators whose only tensor used after it is
the output of its last operator (or, for a block that ends in a MEAN over height and
width or in a FULLY_CONNECTED over the flattened last output, directly or through a
RESHAPE, that operator's small output: it then accumulates one tile at a time).
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

import functools
from collections import OrderedDict

import numpy as np

from ...model.ops import op_macs
from .geometry import (Geometry, bounds_matrix, cached_1d, channelwise, inplace_source, is_dense, pulled_rows,
                       recompute_1d, uniform_bounds, window_tensors)


def macs_per_pixel(g, op) -> int:
    """MACs per output pixel (all channels): op_macs / (H_out * W_out)."""
    sh = g.tensors[op.outputs[0]].shape
    return op_macs(g, op) // (sh[1] * sh[2]) if len(sh) == 4 else 0


def tail_macs(g, geo: Geometry) -> int:
    """MACs of the accumulating tail: a dense layer does all of its own, one tile at a time."""
    return op_macs(g, g.operators[geo.reduce_op]) if is_dense(g, geo) else 0


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


@functools.lru_cache(maxsize=256)
def _candidate_bounds(n: int) -> tuple:
    """(tile_candidates(n), their uniform bounds as one bounds_matrix): the same for every block whose tiled
    tensor has n positions along the axis, so made once (read-only: shared)."""
    cands = tile_candidates(n)
    b = bounds_matrix([uniform_bounds(n, t) for t in cands])
    b.setflags(write=False)
    return cands, b


def run_step(g, geo: Geometry) -> dict:
    """op -> the operator step at which it runs in a recompute tile pass: a conv whose output is
    made channel by channel runs inside its depthwise reader's step."""
    step = {s.op: s.op for s in geo.steps}
    for s in geo.steps:
        if channelwise(g, geo, s.out):
            step[s.op] = next(u.op for u in geo.steps if s.out in u.ins)
    return step


def window_lifetimes(g, geo: Geometry, streamed: tuple = ()) -> dict:
    """Window tensor -> (first op, last op) of the block that touch it within one recompute tile pass."""
    step = run_step(g, geo)
    out = {}
    for t in window_tensors(g, geo, streamed):
        users = [step[s.op] for s in geo.steps if t in s.ins]
        if geo.reduce_op >= 0 and t == geo.tile_tensor:
            users.append(geo.reduce_op)
        made = [step[s.op] for s in geo.steps if s.out == t]
        out[t] = (made[0] if made else min(users), max(users))
    return out


def accumulator_dtype(g, geo: Geometry) -> str:
    """Element type of the running sums. A MEAN's per-channel sum: int16 holds the sum of up to
    256 int8 values exactly (|sum| <= 128 * 256), so a small final feature map needs half the
    bytes. A dense layer's per-neuron dot products: int32, as its kernel accumulates."""
    if is_dense(g, geo):
        return "int32"
    sh = g.tensors[geo.tile_tensor].shape
    return "int16" if sh[1] * sh[2] <= 256 else "int32"


def accumulator_len(g, geo: Geometry) -> int:
    """Running sums of the accumulating tail: one per channel (MEAN) or per output neuron (dense)."""
    if is_dense(g, geo):
        return g.tensors[g.operators[geo.reduce_op].inputs[1]].shape[0]
    return g.tensors[geo.tile_tensor].shape[3]


def accumulator_bytes(g, geo: Geometry) -> int:
    """Bytes of the running sums of the MEAN or dense layer that accumulates the block's tiles
    (instead of holding the whole tensor it reads)."""
    if geo.reduce_op < 0:
        return 0
    return {"int16": 2, "int32": 4}[accumulator_dtype(g, geo)] * accumulator_len(g, geo)


SCHEMES = ("hcache", "linebuf", "recompute")


def axis_analysis(steps, axis: int, y: int, n: int) -> tuple:
    """Every tile candidate of one axis (y has n positions along it): tensor -> recompute intervals,
    cache-mode arrays, (extent, positions computed) in recompute mode and in cache mode."""
    b = _candidate_bounds(n)[1]
    rec_iv, cache_iv = recompute_1d(steps, axis, y, b), cached_1d(steps, axis, y, b)
    return (rec_iv, cache_iv, {t: recompute_extent(v) for t, v in rec_iv.items()},
            {t: cached_extent(v) for t, v in cache_iv.items()})


class AxisMemo:
    """axis_analysis of the blocks one search analyses, remembered by structure: the analysis depends only
    on the steps' windows along the axis (Axis), which tensor each step makes and reads, and n, so it is
    keyed by those with the tensors numbered in order of appearance (a chain of equal layers, or a block
    repeated in a stage, is analysed once). The `size` most recent analyses are kept (0: none); their
    arrays are shared, so read-only."""

    def __init__(self, size: int = 64):
        self.size, self.values = size, OrderedDict()

    def analysis(self, geo: Geometry, axis: int, n: int) -> tuple:
        if not self.size:
            return axis_analysis(geo.steps, axis, geo.tile_tensor, n)
        label = {geo.tile_tensor: 0}
        key = [n]  # not the axis: the rows and the columns of a square block with square windows are one analysis
        for st in reversed(geo.steps):
            key.append((st.axes[axis], label.setdefault(st.out, len(label)),
                        tuple(label.setdefault(t, len(label)) for t in st.ins)))
        key = tuple(key)
        found = self.values.get(key)
        if found is None:
            steps = [type(st)(st.op, label[st.out], st.axes, tuple(label[t] for t in st.ins)) for st in geo.steps]
            found = axis_analysis(steps, axis, 0, n)
            for part in found:
                for v in part.values():
                    for a in v:
                        a.setflags(write=False)
            self.values[key] = found
            if len(self.values) > self.size:
                self.values.popitem(last=False)
        else:
            self.values.move_to_end(key)
        tensor = list(label)  # label -> tensor
        return tuple({tensor[k]: v for k, v in part.items()} for part in found)


class Sweep:
    """Costs of every block that ends at one operator, for every start and tiling at once.

    A tensor's window depends only on its consumers, which all come after it, so one
    analysis from the last operator backwards serves every start: a block's costs are
    running sums over the operators from its start on.
    """

    def __init__(self, g, longest: Geometry, align: int, memo: AxisMemo | None = None):
        self.g, self.geo, self.align = g, longest, align
        y = g.tensors[longest.tile_tensor].shape
        self.rows, rb = _candidate_bounds(y[1])
        self.cols = _candidate_bounds(y[2])[0]
        self.r_written = rb[:, 1:]
        memo = AxisMemo(0) if memo is None else memo
        self.r_rec_iv, self.r_cache_iv, self.r_rec, self.r_cache = memo.analysis(longest, 0, y[1])
        _, _, self.c_rec, self.c_cache = memo.analysis(longest, 1, y[2])

    def _sizes(self, t: int, streamed: bool = False) -> tuple:
        """Aligned window bytes of t: hcache [r, c], linebuf [r], recompute [r, c].

        A streamed input read by one sliding-window operator is pulled a few rows at a time
        in the recompute scheme (see pulled_rows)."""
        c, a = self.g.tensors[t].shape[3], self.align
        ec = self.c_cache[t][0]
        cr = 1 if channelwise(self.g, self.geo, t) else c
        rr = self.r_rec[t][0]
        k = pulled_rows(self.g, self.geo, t) if streamed else 0
        if k:
            rr = np.minimum(rr, k)
        return (_align(self.r_rec[t][0][:, None] * ec[None, :] * c, a),
                _align(self.r_cache[t][0] * ec[-1] * c, a),
                _align(rr[:, None] * self.c_rec[t][0][None, :] * cr, a))

    def bands(self, x: int | None) -> dict:
        """Bytes of banded whole tensors per row candidate, for recompute rows and cached rows.

        combo "bp bq": bp = the input x dies row by row as tiles pass it; bq = the output Y is
        born row by row. The value is max over tile rows of (x rows still needed + Y rows written).
        """
        g, y = self.g, self.geo.tile_tensor
        out = {"00": (np.zeros(len(self.rows), np.int64),) * 2}
        wy = None
        if self.geo.reduce_op < 0:
            sh = g.tensors[y].shape
            wy = self.r_written * (sh[2] * sh[3])
            out["01"] = (wy[:, -1], wy[:, -1])
        if x is not None and x in self.r_rec_iv:
            sh = g.tensors[x].shape
            n, row = sh[1], sh[2] * sh[3]
            lo, hi = self.r_rec_iv[x]
            a_rec = _alive(np.where(hi > lo, lo, n), n) * row
            a_cache = _alive(np.minimum(self.r_cache_iv[x][1], n), n) * row
            out["10"] = (a_rec.max(axis=1), a_cache.max(axis=1))
            if wy is not None:
                out["11"] = ((a_rec + wy).max(axis=1), (a_cache + wy).max(axis=1))
        return out

    def options(self, starts: list, streamed: tuple, schemes=SCHEMES, full_width_only: bool = False,
                band_x: dict | None = None) -> dict:
        """start -> {combo: Pareto options [[ram, macs, scheme, th, tw]]} of the block [start, end).

        ram = window buffers + accumulator + banded tensors (see bands); band_x maps a start
        to the tensor that may die row by row in the block (absent: none).
        """
        g, geo = self.g, self.geo
        nr, nc = len(self.rows), len(self.cols)
        k0 = geo.ops[0]
        n_ops = len(geo.ops)
        h_ram = np.zeros((nr, nc), np.int64)
        l_ram = np.zeros(nr, np.int64)
        live = np.zeros((n_ops, nr, nc), np.int64)
        h_mac = np.zeros((nr, nc), np.int64)
        l_mac = np.zeros(nr, np.int64)
        r_mac = np.zeros((nr, nc), np.int64)
        acc = _align(accumulator_bytes(g, geo), self.align) if geo.reduce_op >= 0 else 0
        users = {}
        step = run_step(g, geo)
        for s in geo.steps:
            for t in s.ins:
                users[t] = max(users.get(t, -1), step[s.op])
        if geo.reduce_op >= 0:
            users[geo.tile_tensor] = geo.reduce_op
        out, found = {}, []
        wanted = set(starts)
        layout = _layout(self.rows, self.cols, tuple(schemes), full_width_only)
        for s in reversed(geo.steps):
            inplace = False
            if s.out not in self.r_rec:
                break  # the tiles never read this output: no block starting at or before it
            mpp = macs_per_pixel(g, g.operators[s.op])
            if mpp:
                h_mac += mpp * self.r_rec[s.out][1][:, None] * self.c_cache[s.out][1][None, :]
                l_mac += mpp * self.r_cache[s.out][1] * self.c_cache[s.out][1][-1]
                r_mac += mpp * self.r_rec[s.out][1][:, None] * self.c_rec[s.out][1][None, :]
            if s.out != geo.tile_tensor or geo.reduce_op >= 0:
                hs, ls, rs = self._sizes(s.out)
                h_ram += hs
                l_ram += ls
                inplace = inplace_source(g, geo, s.out) is not None  # shares its input's bytes at its step
                live[step[s.op] - k0 + inplace:users[s.out] - k0 + 1] += rs
            if s.op not in wanted:
                continue
            eh, el, er = h_ram, l_ram, live[s.op - k0:].max(axis=0)
            if inplace and (s.out != geo.tile_tensor or geo.reduce_op >= 0):
                er = np.maximum(er, live[s.op - k0] + rs)  # starting here, its input is not a window
            for t in streamed:
                if t in users and t not in [x.out for x in geo.steps]:
                    hs, ls, rs = self._sizes(t, streamed=True)
                    eh, el = eh + hs, el + ls
                    extra = live[s.op - k0:].copy()
                    extra[:users[t] - s.op + 1] += rs
                    er = extra.max(axis=0)
            mac = _flat(layout[0], layout[1], h_mac, l_mac, r_mac) + tail_macs(g, geo)
            base = _flat(layout[0], layout[1], eh, el, er) + acc
            bands = self.bands((band_x or {}).get(s.op))
            rams = base + _flat_rows(layout[0], np.stack([b[0] for b in bands.values()]),
                                     np.stack([b[1] for b in bands.values()]))
            found.append((s.op, list(bands), rams, mac))
        # every start's combos' fronts at once (one numpy call each for all)
        fronts = iter(_pareto(layout, np.concatenate([f[2] for f in found]),
                              np.repeat(np.stack([f[3] for f in found]), [len(f[1]) for f in found], axis=0))
                      if found else ())
        for op, combos, _, _ in found:
            out[op] = {combo: next(fronts) for combo in combos}
        return out


@functools.lru_cache(maxsize=256)
def _layout(rows: tuple, cols_: tuple, schemes: tuple, full_width_only: bool) -> tuple:
    """Which (scheme, th, tw) each flattened candidate is: index arrays shared by every block with these
    row and column candidates (read-only), and the scheme, th and tw of each as lists."""
    nr, nc = len(rows), len(cols_)
    rr, cc = np.meshgrid(np.array(rows), np.array(cols_), indexing="ij")
    cols = slice(nc - 1, nc) if full_width_only else slice(None)
    parts = []
    for k, name in enumerate(SCHEMES):
        if name not in schemes or (full_width_only and name != "hcache"):
            continue
        if name == "linebuf":
            parts.append((k, name, np.array(rows), np.full(nr, cols_[-1])))
        else:
            parts.append((k, name, rr[:, cols].reshape(-1), cc[:, cols].reshape(-1)))
    kind = np.concatenate([np.full(len(th), k) for k, _, th, _ in parts])
    out = parts, cols, kind, np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts])
    for a in (*out[2:], *(x for p in parts for x in p[2:])):
        a.setflags(write=False)
    return out + ([SCHEMES[k] for k in kind.tolist()], out[3].tolist(), out[4].tolist())


def _flat(parts, cols, h, l, r) -> np.ndarray:
    by = {"hcache": lambda: h[:, cols].reshape(-1), "linebuf": lambda: l,
          "recompute": lambda: r[:, cols].reshape(-1)}
    return np.concatenate([by[name]() for _, name, _, _ in parts])


_BIG = np.iinfo(np.int64).max


def _flat_rows(parts, rec, cache) -> np.ndarray:
    """_flat of per-row values, one row of them per combo: rec[:, r] for every column of row r (hcache,
    recompute), cache (linebuf)."""
    return np.concatenate([cache if name == "linebuf" else np.repeat(rec, len(th) // rec.shape[1], axis=1)
                           for _, name, th, _ in parts], axis=1)


def _pareto(layout, rams, macs) -> list:
    """For each row of rams and of macs (one per start and combo): [[ram, mac, scheme, th, tw]] of the
    candidates no other beats on both (ram first, then MACs, then the scheme's and the candidate's index
    break ties), by increasing ram. Every row is sorted and scanned at once (one numpy call each)."""
    rows, n = macs.shape
    if not n:
        return [[] for _ in range(rows)]
    lo_r, hi_r = int(rams.min()), int(rams.max())
    hi_m = int(macs.max()) + 1
    radix = hi_m * len(SCHEMES) * n
    if int(macs.min()) >= 0 and max(hi_r + 1, -lo_r) * radix < _BIG:
        # (ram, mac, kind, index) order as lexsort gives it: one sort of a key holding all four (unique, so
        # any sort gives that order; the index is the key's last digit)
        order = np.sort(rams * radix + (macs * len(SCHEMES) + layout[2]) * n + np.arange(n), axis=1) % n
    else:
        order = np.stack([np.lexsort((layout[2], mac, ram)) for ram, mac in zip(rams, macs)])
    m = np.take_along_axis(macs, order, axis=1)
    prev = np.empty_like(m)
    prev[:, 0] = _BIG
    np.minimum.accumulate(m[:, :-1], axis=1, out=prev[:, 1:])
    keep = m < prev
    names, th, tw = layout[5:]
    out = []
    for ram, o, mk, k in zip(rams, order, m, keep):
        o = o[k]
        out.append([[r, c, names[i], th[i], tw[i]] for r, c, i in zip(ram[o].tolist(), mk[k].tolist(), o.tolist())])
    return out


def _alive(lo, n: int) -> np.ndarray:
    """Rows of a tensor of n rows still needed at each tile: n - (lowest row read from then on)."""
    return n - np.minimum.accumulate(lo[:, ::-1], axis=1)[:, ::-1]


def _align(x, a: int):
    return (x + a - 1) // a * a
