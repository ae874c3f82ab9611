"""Pipelined blocks: two consecutive fusion blocks whose tile rows run interleaved.

Block A = operators [p, q) makes tensor Y row by row; block B = [q, r) reads it. Run one after
the other, Y is whole at A's last tile row. Pipelined, B runs each of its tile rows as soon as A
has made the rows of Y it reads (`schedule.pull_order`), so Y lives as a ring of the rows B still needs:
row bands born when A writes them and freed after B's last read, as between any two blocks,
but B's reads now follow A's writes closely. The windows of a recompute or hcache block hold
nothing from one tile row to the next, so each tile row has its own window pool, live at that
step alone; A's and B's pools never coexist. (linebuf keeps rows across tile rows: not pipelined.)

`pair_cost` is the pair's peak in the arena as the packer will see it (aligned bands and
pools); `pipelined_edges` adds such pairs to the search where they can lower the least peak.
"""

from __future__ import annotations

import numpy as np

from .. import align_up
from .costs import accumulator_bytes
from .dag import main_tensor
from .lifetimes import window_pool
from .schedule import block_from_tile, pull_order

TRANSIENT = ("recompute", "hcache")  # schemes whose windows are rebuilt every tile row
PAIR_OPTIONS = 4  # each side's least-RAM tilings tried per pipelined pair


def row_bytes(g, t: int, align: int) -> int:
    """Aligned bytes of one row band of t (as the packer holds it)."""
    return align_up(g.tensors[t].nbytes // g.tensors[t].shape[1], align)


def pair_cost(g, a, b, pools: tuple, acc_b: int, x_banded: int | None, z_banded: int | None,
              align: int) -> int:
    """Peak bytes (beyond whole tensors) of pipelined blocks a, b: per step the running block's
    window pool, the rows of a's banded input x still to be read, the ring of Y = a's output, the
    rows of b's banded output z written so far and b's accumulator."""
    order = pull_order([a, b])
    n = len(order)
    pos = [[0] * a.n_steps, [0] * b.n_steps]
    for s, (j, i) in enumerate(order):
        pos[j][i] = s
    pa, pb = np.array(pos[0]), np.array(pos[1])
    live = np.zeros(n + 1, np.int64)
    for s, (j, _) in enumerate(order):
        live[s] += pools[j]
    if acc_b:
        live[pb[0]:n] += acc_b
    y = a.geo.tile_tensor
    ny = g.tensors[y].shape[1]
    born = pa[a.written_step(ny)]
    dies = pb[b.last_read_step(y, ny)]
    _add_rows(live, born, np.maximum(dies, born), row_bytes(g, y, align))
    if x_banded is not None:
        nx = g.tensors[x_banded].shape[1]
        _add_rows(live, np.zeros(nx, np.int64), pa[a.last_read_step(x_banded, nx)], row_bytes(g, x_banded, align))
    if z_banded is not None:
        nz = g.tensors[z_banded].shape[1]
        _add_rows(live, pb[b.written_step(nz)], np.full(nz, n - 1), row_bytes(g, z_banded, align))
    return int(live[:n].max())


def _add_rows(live: np.ndarray, born: np.ndarray, dies: np.ndarray, size: int) -> None:
    """Add `size` bytes to live[s] for every step s in [born, dies] of each row."""
    delta = np.zeros(len(live) + 1, np.int64)
    np.add.at(delta, born, size)
    np.add.at(delta, dies + 1, -size)
    live += np.cumsum(delta)[:len(live)]


def min_peaks(n: int, edges, start: list) -> tuple:
    """(forward, backward): int64 arrays over node codes 2 cut + banded -> least peak of a path from a
    start node to it / from it to cut n (int64 max: none). edges: search.EdgeTable (every edge goes
    forward, so taking the cuts in order, each node is final before an edge leaves it)."""
    big = np.iinfo(np.int64).max
    fwd, bwd = np.full(2 * (n + 1), big, np.int64), np.full(2 * (n + 1), big, np.int64)
    for c, b in start:
        fwd[2 * c + b] = 0
    bwd[2 * n] = 0
    src, ram, _ = edges.arrays()
    dst = 2 * np.array(edges.q, np.int64) + np.array(edges.bq, np.int64)
    by_q = np.argsort(dst // 2, kind="stable")
    bounds = np.searchsorted(dst[by_q] // 2, np.arange(n + 2))
    for q in range(1, n + 1):
        k = by_q[bounds[q]:bounds[q + 1]]
        k = k[fwd[src[k]] < big]
        np.minimum.at(fwd, dst[k], np.maximum(fwd[src[k]], ram[k]))
    for q in range(n, 0, -1):
        k = by_q[bounds[q]:bounds[q + 1]]
        k = k[bwd[dst[k]] < big]
        np.minimum.at(bwd, src[k], np.maximum(bwd[dst[k]], ram[k]))
    return fwd, bwd


def pipelined_edges(g, net, blocks: dict, edges, edge_type, start: list) -> list:
    """[(start node, edge)] of pipelined pairs [p, q) + [q, r) that can lower the least peak of the
    sequential paths (edges: search.EdgeTable; start: the start nodes): both ends reachable below it
    and a lower bound below it. The pairs' Pareto (ram, MACs) become edges p -> r
    (edge_type(..., pipe=(q, scheme, th, tw)) names the second block)."""
    fwd, bwd = min_peaks(net.n, edges, start)
    pairs = _Pairs(g, net, blocks, int(fwd[2 * net.n]))
    ends = {}
    for (q, r) in blocks:
        ends.setdefault(q, []).append(r)
    out = []
    for (p, q), combos in sorted(blocks.items()):
        for bp in (0, 1):
            if fwd[2 * p + bp] >= pairs.best or f"{bp}1" not in combos:
                continue
            for r in sorted(ends.get(q, [])):
                for br in (0, 1):
                    if (r == net.n and br) or bwd[2 * r + br] >= pairs.best or f"1{br}" not in blocks[(q, r)]:
                        continue
                    for ram, macs, oa, ob in pairs.options(p, q, r, bp, br):
                        out.append(((p, bp), edge_type(p, r, *oa[2:], ram, macs, bool(bp), bool(br),
                                                       pipe=(q, *ob[2:]))))
    return out


class _Pairs:
    """Costs of pipelined pairs below `best`, each block's BlockRun and window pool made once."""

    def __init__(self, g, net, blocks: dict, best: int):
        self.g, self.net, self.blocks, self.best = g, net, blocks, best
        self.runs = {}

    def run(self, p: int, q: int, scheme: str, th: int, tw: int) -> tuple:
        """(BlockRun, aligned window pool bytes) of [p, q) tiled th x tw."""
        key = (p, q, scheme, th, tw)
        if key not in self.runs:
            streamed = tuple(self.g.inputs) if self.net.streamed and p == 0 else ()
            blk = block_from_tile(self.g, p, q, scheme, th, tw, streamed)
            self.runs[key] = blk, window_pool(self.g, blk, self.net.align)[1]
        return self.runs[key]

    def tilings(self, p: int, q: int, combo: str) -> list:
        """The block's PAIR_OPTIONS least-RAM recompute / hcache options for that banding combo."""
        ok = [o for o in self.blocks[(p, q)].get(combo, []) if o[2] in TRANSIENT]
        return sorted(ok, key=lambda o: (o[0], o[1]))[:PAIR_OPTIONS]

    def least(self, p: int, q: int) -> int:
        """A lower bound of the block's window pool: its least RAM with whole input and output."""
        return min((o[0] for o in self.blocks[(p, q)].get("00", [])), default=0)

    def options(self, p: int, q: int, r: int, bp: int, br: int) -> list:
        """Pareto [(ram, macs, A option, B option)] of the pair with ram below best."""
        g, net = self.g, self.net
        mp, mr = main_tensor(net, p), main_tensor(net, r)
        whole = net.edge_whole(p, r) - (net.held(mp) if bp else 0) - (net.held(mr) if br else 0)
        # at the first step every row of a banded x and a first row of Y are live, at the last
        # every row of a banded z and the last row of Y
        lb = row_bytes(g, main_tensor(net, q), net.align) + max(
            self.least(p, q) + (_rows_bytes(g, mp, net.align) if bp else 0),
            self.least(q, r) + (_rows_bytes(g, mr, net.align) if br else 0))
        if whole + lb >= self.best:
            return []
        found = []
        for oa in self.tilings(p, q, f"{bp}1"):
            a, pool_a = self.run(p, q, *oa[2:])
            for ob in self.tilings(q, r, f"1{br}"):
                b, pool_b = self.run(q, r, *ob[2:])
                acc = align_up(accumulator_bytes(g, b.geo), net.align)
                ram = whole + pair_cost(g, a, b, (pool_a, pool_b), acc, mp if bp else None, mr if br else None,
                                        net.align)
                if ram < self.best:
                    found.append((ram, oa[1] + ob[1], oa, ob))
        return _pareto(found)


def _rows_bytes(g, t: int, align: int) -> int:
    """Bytes of all of t's row bands."""
    return row_bytes(g, t, align) * g.tensors[t].shape[1]


def _pareto(found: list) -> list:
    """The (ram, macs) non-dominated entries of found, by ram."""
    keep, low = [], None
    for f in sorted(found, key=lambda f: (f[0], f[1], f[2][2:], f[3][2:])):
        if low is None or f[1] < low:
            keep.append(f)
            low = f[1]
    return keep
