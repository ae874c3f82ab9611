"""Exact search over the network DAG: the whole (peak RAM, MACs) Pareto front at once.

Every path from cut 0 to cut n is an execution plan; its peak is the largest edge
cost and its MACs the sum. Labels (peak, MACs) are propagated cut by cut and pruned
to the non-dominated ones (a resource-constrained shortest path with Pareto labels),
so the front at cut n answers every question at once:
- P1: least peak RAM with MACs <= F x vanilla;
- P2: least MACs with peak RAM <= a limit.
Block costs come from costs.py, one Sweep per block end, each block's options through
the planning memo (key: the block's canonical structure and the options, never weights).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import PlanError
from ..ops import graph_macs, op_macs
from .costs import Geometry, Sweep, block_options, geometry
from .dag import Network, block_ok, build_network, plain_ok

KIND = "fusion-block"


@dataclass(frozen=True)
class Edge:
    """Operators [p, q): plain (scheme None) or a fusion block tiled th x tw."""

    p: int
    q: int
    scheme: str | None
    th: int = 0
    tw: int = 0
    ram: int = 0  # bytes in the arena while it runs (whole tensors + windows), aligned
    macs: int = 0


@dataclass
class Solution:
    peak: int  # the largest edge cost: the lower bound of the arena plan of this schedule
    macs: int
    edges: list


@dataclass
class Front:
    solutions: list  # Solution, by increasing peak and decreasing MACs
    vanilla_macs: int
    vanilla_peak: int
    streamed: bool
    seconds: float

    def p1(self, factor: float) -> Solution:
        """Least peak with MACs <= factor x vanilla (factor may be inf)."""
        ok = [s for s in self.solutions if s.macs <= factor * self.vanilla_macs]
        if not ok:
            raise PlanError(f"no plan keeps MACs within {factor} x vanilla; use a larger --max-mac-overhead")
        return min(ok, key=lambda s: (s.peak, s.macs))

    def p2(self, limit: int) -> Solution:
        """Least MACs with peak <= limit."""
        ok = [s for s in self.solutions if s.peak <= limit]
        if not ok:
            best = min(s.peak for s in self.solutions)
            raise PlanError(f"no plan fits {limit} B of RAM: the smallest reachable peak is {best} B; "
                            f"raise --ram-limit to at least that")
        return min(ok, key=lambda s: (s.macs, s.peak))


def block_edges(net: Network, memo=None, split_only: bool = False) -> dict:
    """(p, q) -> Pareto options [[window ram, macs, scheme, th, tw]] of every valid block."""
    g = net.g
    out = {}
    for q in range(1, net.n + 1):
        p0 = net.first_start[q]
        if p0 < 0:
            continue
        starts = [p for p in range(p0, q) if block_ok(net, p, q)]
        if not starts:
            continue
        longest = geometry(g, range(p0, q))
        state = {}

        def suffix(p, longest=longest, p0=p0) -> Geometry:
            k = p - p0
            return Geometry(longest.ops[k:], longest.steps[k:], longest.tile_tensor, longest.reduce_op)

        for p in starts:
            geo = suffix(p)
            if not geo.steps:
                continue
            streamed = tuple(g.inputs) if net.streamed and p == 0 else ()
            options = {"streamed": bool(streamed), "align": net.align, "split_only": split_only}

            def compute(geo=geo, streamed=streamed, state=state, longest=longest):
                if "sweep" not in state:
                    state["sweep"] = Sweep(g, longest)
                schemes = ("hcache",) if split_only else ("hcache", "linebuf", "recompute")
                return block_options(g, geo, state["sweep"], streamed, net.align, schemes, split_only)

            if memo is None:
                opts = compute()
            else:
                from ..canonical import subgraph_key

                opts = memo.get_or_compute(KIND, subgraph_key(KIND, g, list(geo.ops), options), compute)
            out[(p, q)] = opts
    return out


def _prune(peak, macs, src):
    order = np.lexsort((macs, peak))
    m = macs[order]
    prev = np.concatenate([[np.iinfo(np.int64).max], np.minimum.accumulate(m)[:-1]])
    keep = order[m < prev]
    return peak[keep], macs[keep], src[keep]


def search_front(g, streamed: bool = False, align: int = 16, memo=None, split_only: bool = False,
                 max_block_ops: int | None = None) -> Front:
    """The Pareto front of (peak RAM, MACs) over all plans of g.

    split_only restricts blocks to full-width row slices (operator splitting);
    max_block_ops bounds the length of a block (None: any).
    """
    t0 = time.perf_counter()
    net = build_network(g, streamed, align)
    blocks = block_edges(net, memo, split_only)
    if max_block_ops is not None:
        blocks = {k: v for k, v in blocks.items() if k[1] - k[0] <= max_block_ops}
    n = net.n
    edges = []  # edge id -> Edge
    incoming = {q: [] for q in range(1, n + 1)}
    for p in range(n):
        if plain_ok(net, p):
            e = Edge(p, p + 1, None, 0, 0, net.edge_whole(p, p + 1), op_macs(g, g.operators[p]))
            incoming[p + 1].append(len(edges))
            edges.append(e)
    for (p, q), opts in sorted(blocks.items()):
        whole = net.edge_whole(p, q)
        for ram, macs, scheme, th, tw in opts:
            incoming[q].append(len(edges))
            edges.append(Edge(p, q, scheme, th, tw, whole + ram, macs))
    # labels[c] = (peak, macs, src) with src[k] = (edge id, label index at the edge's start)
    labels = {0: (np.zeros(1, np.int64), np.zeros(1, np.int64), np.full((1, 2), -1, np.int64))}
    for q in range(1, n + 1):
        ps, ms, ss = [], [], []
        for eid in incoming[q]:
            e = edges[eid]
            if e.p not in labels:
                continue
            lp, lm, _ = labels[e.p]
            ps.append(np.maximum(lp, e.ram))
            ms.append(lm + e.macs)
            ss.append(np.stack([np.full(len(lp), eid), np.arange(len(lp))], axis=1))
        if ps:
            labels[q] = _prune(np.concatenate(ps), np.concatenate(ms), np.concatenate(ss))
    if n not in labels:
        raise PlanError("no execution plan exists for this model with these options")
    sols = []
    fp, fm, _ = labels[n]
    for k in range(len(fp)):
        path, c, i = [], n, k
        while c > 0:
            eid, j = labels[c][2][i]
            e = edges[int(eid)]
            path.append(e)
            c, i = e.p, int(j)
        sols.append(Solution(int(fp[k]), int(fm[k]), path[::-1]))
    vanilla = max((net.edge_whole(p, p + 1) for p in range(n)), default=0)
    return Front(sols, graph_macs(g), vanilla, streamed, time.perf_counter() - t0)
