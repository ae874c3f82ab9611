"""Heuristic packers: give every buffer an aligned offset so that buffers live at a common step
never share bytes. Each returns offsets in units of `align` for buffers given as
(units, first, last); the planner keeps the best. Several orderings are tried because each
wins on different graphs.
"""

from __future__ import annotations


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
    """In the order buffers appear, lowest offset that fits: the naive baseline."""
    seq = sorted(range(len(bufs)), key=lambda i: (bufs[i][1], i))
    return _place(bufs, seq, _first_fit)


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


def best_of(bufs: list, packers, lower: int) -> tuple:
    """(top, name, offsets) of the best of (name, packer) pairs, in order; stops at `lower`."""
    best = None
    for name, fn in packers:
        offs = fn(bufs)
        t = top(bufs, offs)
        if best is None or t < best[0]:
            best = (t, name, offs)
        if t == lower:
            break
    return best
