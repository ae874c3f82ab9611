"""Heuristic packers: give every buffer an aligned offset so that buffers live at a common step
never share bytes. Each returns offsets in units of `align` for buffers given as
(units, first, last); the planner keeps the best. Several orderings are tried because each
wins on different graphs.
"""

from __future__ import annotations

from bisect import bisect_right
from heapq import heappop, heappush

# Buffer pairs the quadratic packers may compare in one best_of (each places a buffer against
# every buffer placed before it: n (n - 1) / 2 pairs each). Packers that would go past it are
# skipped; the sweep (model_order, about linear) always runs, so a plan of any size is cheap.
PACK_WORK = 3_000_000


def _first_fit(units: int, busy: list) -> int:
    """Lowest offset where `units` fit between the (start, end) ranges in busy."""
    off = 0
    for o, e in sorted(busy):
        if o - off >= units:
            break
        off = max(off, e)
    return off


def _best_fit(units: int, busy: list) -> int:
    """Offset of the smallest gap that holds `units` (lowest offset on ties), else the top."""
    off, best = 0, None
    for o, e in sorted(busy):
        gap = o - off
        if gap >= units and (best is None or gap < best[0]):
            best = (gap, off)
        off = max(off, e)
    return best[1] if best else off


def _place(bufs: list, sequence: list, fit) -> list:
    offsets = [0] * len(bufs)
    placed = []
    for i in sequence:
        u, f, l = bufs[i]
        busy = [(offsets[j], offsets[j] + bufs[j][0]) for j in placed if bufs[j][1] <= l and f <= bufs[j][2]]
        offsets[i] = fit(u, busy)
        placed.append(i)
    return offsets


def _profile(bufs: list) -> list:
    n = max((b[2] for b in bufs), default=-1) + 2
    diff = [0] * n
    for u, f, l in bufs:
        diff[f] += u
        diff[l + 1] -= u
    prof, run = [], 0
    for d in diff:
        run += d
        prof.append(run)
    return prof


def greedy_size(bufs):
    """Largest first, lowest offset that fits (TFLite Micro's GreedyMemoryPlanner ordering)."""
    seq = sorted(range(len(bufs)), key=lambda i: (-bufs[i][0], bufs[i][1], i))
    return _place(bufs, seq, _first_fit)


def model_order(bufs):
    """In the order buffers appear, lowest offset that fits: the naive baseline.

    A sweep over the steps with the free gaps between the live buffers (the same offsets as
    first fit against every buffer placed before, at a cost linear in buffers x gaps)."""
    offsets = [0] * len(bufs)
    starts, ends = [0], [None]  # free gaps [start, end), sorted; the last one is unbounded
    live = []  # (last step, offset, end) of placed buffers
    for i in sorted(range(len(bufs)), key=lambda i: (bufs[i][1], i)):
        u, f, l = bufs[i]
        while live and live[0][0] < f:
            _, o, e = heappop(live)
            k = bisect_right(starts, o)
            if k and ends[k - 1] == o:  # joins the gap below
                k -= 1
                ends[k] = e
            else:
                starts.insert(k, o)
                ends.insert(k, e)
            if k + 1 < len(starts) and starts[k + 1] == ends[k]:  # and the gap above
                ends[k] = ends[k + 1]
                del starts[k + 1], ends[k + 1]
        if u == 0:
            continue
        k = next(k for k, (a, b) in enumerate(zip(starts, ends)) if b is None or b - a >= u)
        offsets[i] = o = starts[k]
        if ends[k] is not None and ends[k] - o == u:
            del starts[k], ends[k]
        else:
            starts[k] = o + u
        heappush(live, (l, o, o + u))
    return offsets


def best_fit(bufs):
    """Largest first, into the tightest gap that holds it (less fragmentation)."""
    seq = sorted(range(len(bufs)), key=lambda i: (-bufs[i][0], bufs[i][1], i))
    return _place(bufs, seq, _best_fit)


def greedy_breadth(bufs):
    """Busiest step first; its buffers largest first (Pisarchyk & Lee's greedy by breadth)."""
    prof = _profile(bufs)
    steps = sorted(range(len(prof)), key=lambda s: (-prof[s], s))
    seq, seen = [], set()
    for s in steps:
        here = sorted((i for i in range(len(bufs)) if bufs[i][1] <= s <= bufs[i][2] and i not in seen),
                      key=lambda i: (-bufs[i][0], i))
        seq += here
        seen.update(here)
    seq += [i for i in range(len(bufs)) if i not in seen]
    return _place(bufs, seq, _first_fit)


def greedy_conflict(bufs):
    """Buffers with the most bytes live beside them first (the tightest to place)."""
    prof = _profile(bufs)
    pressure = [max(prof[b[1]:b[2] + 1]) for b in bufs]
    seq = sorted(range(len(bufs)), key=lambda i: (-pressure[i], -bufs[i][0], bufs[i][1], i))
    return _place(bufs, seq, _first_fit)


def longest_first(bufs):
    """Longest-lived first (they constrain the most steps), then largest."""
    seq = sorted(range(len(bufs)), key=lambda i: (-(bufs[i][2] - bufs[i][1]), -bufs[i][0], bufs[i][1], i))
    return _place(bufs, seq, _first_fit)


PACKERS = {
    "greedy_size": greedy_size,
    "greedy_breadth": greedy_breadth,
    "greedy_conflict": greedy_conflict,
    "best_fit": best_fit,
    "longest_first": longest_first,
    "model_order": model_order,
}


def top(bufs: list, offsets: list) -> int:
    return max((o + b[0] for o, b in zip(offsets, bufs)), default=0)


def best_of(bufs: list, packers, lower: int, work: int = PACK_WORK) -> tuple:
    """(top, name, offsets) of the best of (name, packer) pairs, in order; stops at `lower`.

    The quadratic packers run only while their buffer pairs fit in `work` (see PACK_WORK); the
    model_order sweep always runs (also when it is not among them and nothing else could)."""
    best = None
    pairs, spent = len(bufs) * (len(bufs) - 1) // 2, 0
    packers = list(packers)
    if not any(fn is model_order for _, fn in packers) and pairs > work:
        packers.append(("model_order", model_order))
    for name, fn in packers:
        if fn is not model_order:
            if spent + pairs > work:
                continue
            spent += pairs
        offs = fn(bufs)
        t = top(bufs, offs)
        if best is None or t < best[0]:
            best = (t, name, offs)
        if t == lower:
            break
    return best
