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

import math
import time
from dataclasses import dataclass

import numpy as np

from ...errors import PlanError
from ...model.ops import graph_macs, op_macs
from ...progress import counting, stage
from .. import canonical
from .costs import SCHEMES, AxisMemo, Sweep
from .dag import MAX_BLOCK_OPS, Network, block_ok, block_starts, build_network, dies_in, main_tensor, plain_ok
from .geometry import geometry
from .pipeline import pipelined_edges

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
    band_in: bool = False  # the block frees its input row by row (the input was made row by row)
    band_out: bool = False  # the block's output is made row by row into bands
    pipe: tuple = ()  # pipelined pair: (q, scheme, th, tw) of the second block [q, self.q); first is [p, q)


@dataclass
class Solution:
    peak: int  # the largest edge cost: the lower bound of the arena plan of this schedule
    macs: int
    edges: list


class EdgeTable:
    """The DAG's edges as columns, in the order they were added (an edge's id is its index); the Edge
    of an id is made only for the edges on the front's paths (a deep network has ~10^6 edges)."""

    def __init__(self):
        self.p, self.bp, self.q, self.bq, self.ram, self.macs, self.spec = [], [], [], [], [], [], []
        self.incoming = {}  # (q, banded) -> edge ids

    def add(self, p: int, bp: int, q: int, bq: int, rams: list, macs: list, specs: list) -> None:
        """Edges from node (p, bp) to (q, bq), one per (ram, macs, spec); spec: None (one operator as
        usual), a block option [ram, macs, scheme, th, tw], or the Edge itself (a pipelined pair)."""
        k, m = len(self.p), len(rams)
        self.incoming.setdefault((q, bq), []).extend(range(k, k + m))
        self.p += [p] * m
        self.bp += [bp] * m
        self.q += [q] * m
        self.bq += [bq] * m
        self.ram += rams
        self.macs += macs
        self.spec += specs

    def __len__(self) -> int:
        return len(self.p)

    def source(self, k: int) -> tuple:
        return self.p[k], self.bp[k]

    def arrays(self) -> tuple:
        """(start node code 2 p + bp, ram, macs) of every edge, as int64 arrays."""
        return (2 * np.array(self.p, np.int64) + np.array(self.bp, np.int64), np.array(self.ram, np.int64),
                np.array(self.macs, np.int64))

    def edge(self, k: int) -> Edge:
        spec = self.spec[k]
        if isinstance(spec, Edge):
            return spec
        scheme, th, tw = (None, 0, 0) if spec is None else spec[2:5]
        return Edge(self.p[k], self.q[k], scheme, th, tw, self.ram[k], self.macs[k], bool(self.bp[k]), bool(self.bq[k]))


def within_macs(macs: int, factor: float, vanilla: int) -> bool:
    """macs <= factor x vanilla, where factor may be inf (no bound; inf x 0 MACs would be NaN)."""
    return factor == float("inf") or macs <= factor * vanilla


@dataclass
class Front:
    solutions: list  # Solution, by increasing peak and decreasing MACs
    vanilla_macs: int
    vanilla_peak: int
    streamed: bool
    seconds: float
    cut: int = 0  # the shortest block cap the work budget imposed (0: every block up to MAX_BLOCK_OPS)

    def p1(self, factor: float) -> Solution:
        """Least peak with MACs <= factor x vanilla (factor may be inf)."""
        ok = [s for s in self.solutions if within_macs(s.macs, factor, self.vanilla_macs)]
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


def block_caps(net: Network, work: int) -> tuple:
    """(caps, cut): caps[q] is the longest block ending at q the search analyses, within `work` units for the whole
    graph. The analysis of the blocks ending at q costs about L^2 units for L candidate starts; the
    units left are shared evenly over the cuts still to come, so a shallow network (every zoo and
    shared model) gets every block up to MAX_BLOCK_OPS and a deep one shorter blocks, spread evenly
    instead of spent on its first operators. Deterministic: a count, not a clock. cut: the smallest cap
    that shortened some block end's candidates (0: none did)."""
    caps, left, cut = [MAX_BLOCK_OPS] * (net.n + 1), work, 0
    for q in range(1, net.n + 1):
        length = len(block_starts(net, q))
        caps[q] = min(max(2, math.isqrt(max(left // (net.n - q + 1), 0))), MAX_BLOCK_OPS)
        if caps[q] < length:
            cut = min(cut or caps[q], caps[q])
        left -= min(length, caps[q]) ** 2
    return caps, cut


def block_edges(net: Network, memo=None, split_only: bool = False, banding: bool = True,
                caps: list | None = None) -> dict:
    """(p, q) -> {combo: Pareto options [[ram, macs, scheme, th, tw]]} of every valid block.

    combo "bp bq" says whether the block's input dies row by row (bp) and its output is
    born row by row (bq); ram excludes whole tensors (see Network.edge_whole). caps: block_caps'.
    """
    g = net.g
    out = {}
    schemes = ("hcache",) if split_only else SCHEMES
    if memo is not None:
        forms = canonical.SubgraphForms(g)  # every block's key from one pass over the graph
    # the analysis of the blocks ending at q costs about L^2 for L candidate starts (block_caps): the
    # progress line's estimate of the time left counts in those units, only when a line is drawn
    work = [0] + [min(len(block_starts(net, q)), caps[q] if caps is not None else MAX_BLOCK_OPS) ** 2
                  for q in range(1, net.n + 1)] if counting() else [0] * (net.n + 1)
    done, total = 0, sum(work)
    axes = AxisMemo()  # the blocks' per-axis analyses, shared by equal structures (a chain of equal layers)
    for q in range(1, net.n + 1):
        stage(f"fusion blocks ending at operator {q}/{net.n}", done, total)
        done += work[q]
        cap = caps[q] if caps is not None else MAX_BLOCK_OPS
        starts = [p for p in block_starts(net, q, cap) if block_ok(net, p, q) and _has_steps(g, p, q)]
        if not starts:
            continue
        p0 = starts[0]  # the analysis of the longest block serves every shorter one
        state = {}

        def compute(p, q=q, p0=p0, starts=starts, state=state):
            streamed = tuple(g.inputs) if net.streamed and p == 0 else ()
            if streamed not in state:
                if "sweep" not in state:
                    state["sweep"] = Sweep(g, geometry(g, range(p0, q)), net.align, axes)
                band_x = {s: main_tensor(net, s) for s in starts
                          if banding and dies_in(net, main_tensor(net, s), s, q)}
                state[streamed] = state["sweep"].options([s for s in starts if (s == 0) == bool(streamed)] if net.streamed
                                             else starts, streamed, schemes, split_only, band_x)
            return state[streamed].get(p, [])

        for p in starts:
            if memo is None:
                opts = compute(p)
            else:
                options = {"streamed": bool(net.streamed and p == 0), "align": net.align, "split_only": split_only,
                           "banding": banding}
                opts = memo.get_or_compute(KIND, canonical.subgraph_key(KIND, g, list(range(p, q)), options, forms),
                                           lambda p=p: compute(p))
            if opts:
                out[(p, q)] = opts
    return out


def _has_steps(g, p: int, q: int) -> bool:
    return q - p >= 2 or geometry(g, range(p, q)).reduce_op < 0


_BIG = np.iinfo(np.int64).max


def _prune(peak, macs, src):
    hi_m = int(macs.max()) + 1 if macs.size else 1
    if macs.size and int(peak.min()) >= 0 and int(macs.min()) >= 0 and (int(peak.max()) + 1) * hi_m < _BIG:
        order = np.argsort(peak * hi_m + macs, kind="stable")  # lexsort's order, one sort instead of two
    else:
        order = np.lexsort((macs, peak))
    m = macs[order]
    prev = np.concatenate([[_BIG], np.minimum.accumulate(m)[:-1]])
    keep = order[m < prev]
    return peak[keep], macs[keep], src[keep]


# Work units (block_caps) per second of --time-budget, plus a base every budget gets: the zoo's and
# shared models' deepest tileable runs cost under 52,000 units, inside the base.
WORK_BASE, WORK_PER_SECOND = 60_000, 20_000


def work_budget(time_budget: float) -> int:
    return WORK_BASE + int(WORK_PER_SECOND * max(time_budget, 0.0))


def search_front(g, streamed: bool = False, align: int = 16, memo=None, split_only: bool = False,
                 banding: bool = True, band_input: bool = True, pipelined: bool = True,
                 time_budget: float = 2.0) -> Front:
    """The Pareto front of (peak RAM, MACs) over all plans of g.

    split_only restricts blocks to full-width row slices (operator splitting). banding lets
    a tensor between two blocks live in row bands, freed / made as the tiles pass;
    band_input lets the graph input (held in the arena) be such a tensor. pipelined adds
    pairs of blocks run with interleaved tile rows (pipeline.py) where they can lower the least peak.
    time_budget bounds the blocks analysed (work_budget, block_caps): a deep network gets shorter
    blocks, and Front.cut says so.
    Nodes are (cut, banded) pairs: a banded cut tensor was made by a block and must be
    consumed by the next block.
    """
    t0 = time.perf_counter()
    net = build_network(g, streamed, align)
    caps, cut = block_caps(net, work_budget(time_budget))
    blocks = block_edges(net, memo, split_only, banding, caps)
    n = net.n
    edges = EdgeTable()
    for p in range(n):
        if plain_ok(net, p):
            edges.add(p, 0, p + 1, 0, [net.edge_whole(p, p + 1)], [op_macs(g, g.operators[p])], [None])
    for (p, q), combos in sorted(blocks.items()):
        whole = net.edge_whole(p, q)
        mp, mq = main_tensor(net, p), main_tensor(net, q)
        for combo, opts in sorted(combos.items()):
            bp, bq = int(combo[0]), int(combo[1])
            if q == n and bq:
                continue
            w = whole - (net.held(mp) if bp else 0) - (net.held(mq) if bq else 0)
            edges.add(p, bp, q, bq, [w + o[0] for o in opts], [o[1] for o in opts], opts)
    # labels[node] = (peak, macs, src) with src[k] = (edge id, label index at the edge's start)
    start = np.zeros(1, np.int64), np.zeros(1, np.int64), np.full((1, 2), -1, np.int64)
    labels = {(0, 0): start}
    x0 = main_tensor(net, 0)
    if banding and band_input and x0 is not None and len(g.tensors[x0].shape) == 4 \
            and (g.tensors[x0].nbytes // g.tensors[x0].shape[1]) % align == 0:
        # the input's row bands are laid out back to back, so it stays one contiguous tensor
        labels[(0, 1)] = start
    if pipelined and banding and not split_only:
        for (p, bp), e in pipelined_edges(g, net, blocks, edges, Edge, list(labels)):
            edges.add(p, bp, e.q, int(e.band_out), [e.ram], [e.macs], [e])
    src_node, ram, macs = edges.arrays()
    has = np.zeros(2 * (n + 1), bool)  # node code 2 cut + banded -> has labels
    count = np.zeros(2 * (n + 1), np.int64)  # -> how many
    for (c, b), lab in labels.items():
        has[2 * c + b], count[2 * c + b] = True, len(lab[0])
    for q in range(1, n + 1):
        for bq in (0, 1):
            ids = edges.incoming.get((q, bq))
            if not ids:
                continue
            ids = np.array(ids, np.int64)
            sc = src_node[ids]
            keep = has[sc]
            ids, sc = ids[keep], sc[keep]
            if not ids.size:
                continue
            # every label of each edge's start node, edge by edge in the order the edges were added
            lens = count[sc]
            uniq = np.unique(sc)
            pool_p = np.concatenate([labels[(int(c) // 2, int(c) % 2)][0] for c in uniq])
            pool_m = np.concatenate([labels[(int(c) // 2, int(c) % 2)][1] for c in uniq])
            base = np.concatenate([[0], np.cumsum(count[uniq])[:-1]])[np.searchsorted(uniq, sc)]
            rep = np.repeat(np.arange(len(ids)), lens)
            within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
            at = base[rep] + within
            src = np.stack([ids[rep], within], axis=1)
            labels[(q, bq)] = lab = _prune(np.maximum(pool_p[at], ram[ids][rep]), pool_m[at] + macs[ids][rep], src)
            has[2 * q + bq], count[2 * q + bq] = True, len(lab[0])
    if (n, 0) not in labels:
        raise PlanError("no execution plan exists for this model with these options")
    sols = []
    fp, fm, _ = labels[(n, 0)]
    for k in range(len(fp)):
        path, node, i = [], (n, 0), k
        while node[0] > 0:
            eid, j = labels[node][2][i]
            path.append(edges.edge(int(eid)))
            node, i = edges.source(int(eid)), int(j)
        sols.append(Solution(int(fp[k]), int(fm[k]), path[::-1]))
    vanilla = max((net.edge_whole(p, p + 1) for p in range(n)), default=0)
    return Front(sols, graph_macs(g), vanilla, streamed, time.perf_counter() - t0, cut)
