"""Heuristic packers: give every buffer an aligned offset so that buffers live at a common step
never share bytes. Each returns offsets in units of `align` for buffers given as
(units, first, last); the planner keeps the best. Several orderings are tried because each
wins on different graphs.

pack() is the whole packing pass the fusion planner runs on a schedule's buffers (the packers,
orders that keep pinned buffers first, iterated greedy, the exact solver); pack_varying() lays
out buffers whose size changes from step to step (a fusion block's window pool).
"""

from __future__ import annotations

import functools
from operator import itemgetter
import random
import threading
from collections import OrderedDict
from bisect import bisect_right
from heapq import heappop, heappush

import numpy as np

from . import exact

# Buffer pairs the quadratic packers may compare in one best_of (each places a buffer against
# every buffer placed before it: n (n - 1) / 2 pairs each). Packers that would go past it are
# skipped; the sweep (model_order, about linear) always runs, so a plan of any size is cheap.
PACK_WORK = 3_000_000


_NO_GAP = np.iinfo(np.int64).max
_PAIRS_AT_ONCE = 2048  # buffers up to which _make_neighbours compares all pairs at once (4 MB of booleans)
_SCAN_BELOW = 96  # placed neighbours below which a Python scan beats numpy's per-call overhead


def _first_fit(units: int, start, before, top: int) -> int:
    """Lowest offset where `units` fit between the placed ranges: start (sorted), before[k] the
    highest end of the ranges sorted before k (0 for the first), top the highest end of all."""
    ok = start - before >= units
    k = int(ok.argmax())
    return int(before[k]) if ok[k] else top


def _best_fit(units: int, start, before, top: int) -> int:
    """Offset of the smallest gap that holds `units` (lowest offset on ties), else the top."""
    gap = start - before
    k = int(np.where(gap >= units, gap, _NO_GAP).argmin())
    return int(before[k]) if gap[k] >= units else top


class _Memo:
    """Values remembered by key, least recently used dropped first past max_bytes of numpy arrays
    (a packing problem's neighbour lists take up to n^2 x 4 bytes: a count alone would not bound them)."""

    def __init__(self, max_bytes: int):
        self.values, self.max_bytes, self.nbytes = OrderedDict(), max_bytes, 0
        self.lock = threading.Lock()  # the planner daemon plans in a thread per client

    def get(self, key, make):
        with self.lock:
            if key in self.values:
                self.values.move_to_end(key)
                return self.values[key][0]
        value = make()  # outside the lock: a pure function, at worst made twice
        size = _array_bytes(value)
        with self.lock:
            if key not in self.values:
                self.values[key] = (value, size)
                self.nbytes += size
            while self.nbytes > self.max_bytes and len(self.values) > 1:
                self.nbytes -= self.values.popitem(last=False)[1][1]
        return value


def _array_bytes(value) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        if value and isinstance(value[0], int):  # a list of ints (neighbour lists): about 36 bytes each
            return 36 * len(value) + 56
        return sum(_array_bytes(v) for v in value)
    return 0


# a plan packs about ten schedules, each first with the packers then polished: their neighbour lists
# and pinned prefixes are kept across those passes
_NEIGHBOURS, _NEIGHBOUR_LISTS, _PREFIXES = _Memo(64 << 20), _Memo(64 << 20), _Memo(64 << 20)


def _neighbours(bufs: tuple) -> tuple:
    """For each buffer, the others that live at a common step (int32 arrays, in index order: at most
    n^2 x 4 bytes, and the quadratic packers only run while n^2 / 2 <= PACK_WORK)."""
    return _NEIGHBOURS.get(bufs, lambda: _make_neighbours(bufs))


def _make_neighbours(bufs: tuple) -> tuple:
    first = np.fromiter((b[1] for b in bufs), dtype=np.int64, count=len(bufs))
    last = np.fromiter((b[2] for b in bufs), dtype=np.int64, count=len(bufs))
    if 0 < len(bufs) <= _PAIRS_AT_ONCE:  # every pair in one n x n comparison (n^2 bytes), split by buffer
        both = (first[None, :] <= last[:, None]) & (first[:, None] <= last[None, :])
        np.fill_diagonal(both, False)
        cols = np.nonzero(both)[1].astype(np.int32)  # row by row, each row's in index order
        return tuple(np.split(cols, np.cumsum(both.sum(axis=1))[:-1]))
    out = []
    for i in range(len(bufs)):
        both = np.flatnonzero((first <= last[i]) & (first[i] <= last)).astype(np.int32)
        out.append(both[both != i])
    return tuple(out)


def _place(bufs: list, sequence: list, fit, prefix: tuple = (), limit: int | None = None) -> list | None:
    """Offsets from placing the buffers in `sequence` one by one with `fit`, each clear of those
    placed before it that live at a common step (their ranges sorted by start, then end).

    limit: None as soon as a buffer would end above it (the caller keeps a packing only when its
    top is at most limit: the rest of the placement cannot change that answer).

    prefix: the sequence starts with these buffers (the pinned ones, the same in every order a
    packing tries): their offsets, and the ranges they leave each other buffer, are computed once.

    Plain Python lists throughout (a buffer has a few dozen placed neighbours at most on most
    schedules, where numpy's per-call overhead would cost more than the work); numpy only for a
    buffer with _SCAN_BELOW or more placed neighbours. Each placed range is one int, start << bits
    | (end + 1) (bits: enough for any end + 1, an end being at most the sum of the units; never 0,
    which marks a buffer not placed yet), so sorting them sorts the (start, end) pairs, several times
    faster than sorting tuples; the scans below count in end + 1 (o1 = offset + 1, u1 = units - 1)."""
    n = len(bufs)
    key = bufs if isinstance(bufs, tuple) and (not bufs or isinstance(bufs[0], tuple)) else tuple(map(tuple, bufs))
    bits = _bits(key)
    mask = (1 << bits) - 1
    first = fit is _first_fit
    fixed = None
    if prefix:
        assert tuple(sequence[:len(prefix)]) == prefix
        offs0, nbl, fixed, enc0, prefix_top = _prefix(key, prefix, fit)
        offsets, enc = list(offs0), list(enc0)
        if limit is not None and prefix_top > limit:
            return None
        sequence = sequence[len(prefix):]
    else:
        nbl = _neighbour_lists(key)  # the same for every order a packer tries: computed once
        offsets = [0] * n
        enc = [0] * n  # placed buffers' ranges, start << bits | (end + 1); 0: not placed
    for i in sequence:
        busy = list(filter(None, map(enc.__getitem__, nbl[i])))  # the placed neighbours' ranges
        u = key[i][0]
        fx = fixed[i] if fixed is not None else None
        if len(busy) + (len(fx[0]) if fx else 0) < _SCAN_BELOW:
            if fx:
                busy += fx[0]
            busy.sort()
            o1, u1 = 1, u - 1
            if first:  # _first_fit: the lowest gap that holds u (the top when none does)
                for r in busy:
                    if (r >> bits) - o1 >= u1:
                        break
                    e1 = r & mask
                    if e1 > o1:
                        o1 = e1
            else:  # _best_fit: the smallest such gap, the lowest of equal ones
                best, at = None, 1
                for r in busy:
                    gap = (r >> bits) - o1  # the gap's units - 1
                    if gap >= u1 and (best is None or gap < best):
                        best, at = gap, o1
                    e1 = r & mask
                    if e1 > o1:
                        o1 = e1
                if best is not None:
                    o1 = at
            o = o1 - 1
        else:
            nb = [j for j in nbl[i] if enc[j]]
            start = np.fromiter((offsets[j] for j in nb), dtype=np.int64, count=len(nb))
            end = np.fromiter((offsets[j] + key[j][0] for j in nb), dtype=np.int64, count=len(nb))
            if fx:
                start, end = np.concatenate((fx[1], start)), np.concatenate((fx[2], end))
            order = np.lexsort((end, start))
            start, top = start[order], np.maximum.accumulate(end[order])
            before = np.empty_like(top)
            before[0] = 0
            before[1:] = top[:-1]
            o = fit(u, start, before, int(top[-1]))
        if limit is not None and o + u > limit:
            return None
        offsets[i] = o
        enc[i] = (o << bits) | (o + u + 1)
    return offsets


def _neighbour_lists(bufs: tuple) -> tuple:
    """_neighbours(bufs) as Python lists (what _place iterates)."""
    return _NEIGHBOUR_LISTS.get(bufs, lambda: tuple(nb.tolist() for nb in _neighbours(bufs)))


def _bits(bufs: tuple) -> int:
    """Bits enough for any end + 1 of a packing of bufs (_place's encoding of a range)."""
    return (sum(map(itemgetter(0), bufs)) + 1).bit_length()


_LAST_PREFIX = (None, None, None, None)  # (bufs, prefix, fit, _prefix's value): improve() asks for it every round


def _prefix(bufs: tuple, prefix: tuple, fit) -> tuple:
    """_make_prefix's value, remembered (the last one by identity: a tuple of a few hundred buffers is
    hashed again on every lookup)."""
    global _LAST_PREFIX
    last = _LAST_PREFIX  # one read: a daemon's threads may replace it meanwhile
    if last[0] is bufs and last[1] is prefix and last[2] is fit:
        return last[3]
    value = _PREFIXES.get((bufs, prefix, fit), lambda: _make_prefix(bufs, prefix, fit))
    _LAST_PREFIX = (bufs, prefix, fit, value)
    return value


def _make_prefix(bufs: tuple, prefix: tuple, fit) -> tuple:
    """(offsets, neighbours, fixed, encoded, top) after placing `prefix` (from nothing) with fit: offsets
    of the prefix (0 elsewhere); each other buffer's neighbours outside the prefix; fixed[i], the
    prefix neighbours' ranges merged into the union of their bytes, as (the ranges encoded as _place
    encodes them, starts, ends);
    the prefix's ranges as _place encodes them (0 elsewhere); the prefix's highest end.

    A fit of u >= 1 units depends only on the union of the placed ranges (the gaps of the sorted
    ranges that can hold a unit are exactly the holes of the union, the top its highest end), so
    the prefix's ranges may be given merged. A buffer of 0 units keeps every range among its
    neighbours (fixed: None)."""
    # placing the prefix reads only the prefix's own buffers: their packing (the same on the schedules
    # whose input bands are the same) is remembered as a problem of its own
    sub = tuple(bufs[p] for p in prefix)
    n = len(bufs)
    offsets = np.zeros(n, dtype=np.int64)
    if min(b[0] for b in sub) >= 1 and max(b[1] for b in sub) <= min(b[2] for b in sub):
        # all live at one step (an input's row bands): each goes on top of those before it, by either fit
        # (no hole in their union, the sum of their units), so their offsets are the running sums
        offsets[list(prefix)] = np.cumsum([0] + [b[0] for b in sub[:-1]])
    else:
        offsets[list(prefix)] = _PREFIXES.get((sub, fit), lambda: tuple(_place(sub, list(range(len(sub))), fit)))
    nbrs = _neighbours(bufs)
    inside = np.zeros(n, dtype=bool)
    inside[list(prefix)] = True
    units = np.fromiter((b[0] for b in bufs), dtype=np.int64, count=n)
    out_nbrs, fixed = list(nbrs), [None] * n
    bits = _bits(bufs)
    # the prefix's ranges sorted by (start, end) once; a buffer's are those of its prefix neighbours
    rank = np.zeros(n, dtype=np.int64)
    pre_all = np.array(prefix, dtype=np.int64)
    by = np.lexsort((offsets[pre_all] + units[pre_all], offsets[pre_all]))
    rank[pre_all[by]] = np.arange(len(prefix))
    for i in np.flatnonzero(~inside & (units != 0)).tolist():
        nb = nbrs[i]
        here = inside[nb]
        pre = nb[here]
        out_nbrs[i] = nb[~here]
        if pre.size:
            pre = pre[np.argsort(rank[pre])]  # sorted by (start, end), as sorted() orders the pairs
            o, e = offsets[pre], offsets[pre] + units[pre]
            top = np.maximum.accumulate(e)
            # a range starting at or below the highest end before it joins that union (touching included)
            cut = np.flatnonzero(o[1:] > top[:-1])  # the last range of each union but the highest
            starts, ends = np.concatenate(([o[0]], o[cut + 1])), np.concatenate((top[cut], top[-1:]))
            fixed[i] = ([(a << bits) | (e + 1) for a, e in zip(starts.tolist(), ends.tolist())], starts, ends)
    offs = offsets.tolist()
    enc = [0] * n  # as _place encodes the placed prefix
    for p in prefix:
        enc[p] = (offs[p] << bits) | (offs[p] + bufs[p][0] + 1)
    return (tuple(offs), tuple(nb.tolist() for nb in out_nbrs), tuple(fixed), tuple(enc),
            max(offs[p] + bufs[p][0] for p in prefix))


def profile(bufs: list, nsteps: int | None = None) -> list:
    """The units live at each step 0 .. nsteps - 1 of [(units, first, last)] buffers (None: up to
    one step past the last buffer's, where nothing is live)."""
    n = max((b[2] for b in bufs), default=-1) + 2 if nsteps is None else nsteps
    diff = [0] * (n + 1)
    for u, f, l in bufs:
        diff[f] += u
        diff[l + 1] -= u
    prof, run = [], 0
    for d in diff[:n]:
        run += d
        prof.append(run)
    return prof


def pressure(bufs: list, prof: list | None = None) -> list:
    """For each buffer, the most units live at any of its steps (prof: profile(bufs), or any profile over their steps)."""
    prof = profile(bufs) if prof is None else prof
    return [max(prof[b[1]:b[2] + 1]) for b in bufs]


# Orders in which the quadratic packers place buffers: each maps buffers to a sort key of a buffer index.
def size_order(bufs: list):
    """Largest first, then born first."""
    return lambda i: (-bufs[i][0], bufs[i][1], i)


def conflict_order(bufs: list, prof: list | None = None):
    """Most units live beside it first (the tightest to place), then largest."""
    press = pressure(bufs, prof)
    return lambda i: (-press[i], -bufs[i][0], bufs[i][1], i)


def birth_order(bufs: list):
    """In the order buffers are born (model order)."""
    return lambda i: (bufs[i][1], i)


def longest_order(bufs: list):
    """Longest-lived first (they constrain the most steps), then largest."""
    return lambda i: (-(bufs[i][2] - bufs[i][1]), -bufs[i][0], bufs[i][1], i)


def greedy_size(bufs, limit=None):
    """Largest first, lowest offset that fits (TFLite Micro's GreedyMemoryPlanner ordering)."""
    return _place(bufs, sorted(range(len(bufs)), key=size_order(bufs)), _first_fit, limit=limit)


def model_order(bufs, limit=None):
    """In the order buffers appear, lowest offset that fits: the naive baseline.

    A sweep over the steps with the free gaps between the live buffers (the same offsets as
    first fit against every buffer placed before, at a cost linear in buffers x gaps). limit: unused
    (the sweep is cheap), for the packers' common signature."""
    offsets = [0] * len(bufs)
    starts, ends = [0], [None]  # free gaps [start, end), sorted; the last one is unbounded
    live = []  # (last step, offset, end) of placed buffers
    for i in sorted(range(len(bufs)), key=birth_order(bufs)):
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


def best_fit(bufs, limit=None):
    """Largest first, into the tightest gap that holds it (less fragmentation)."""
    return _place(bufs, sorted(range(len(bufs)), key=size_order(bufs)), _best_fit, limit=limit)


def greedy_breadth(bufs, limit=None):
    """Busiest step first; its buffers largest first (Pisarchyk & Lee's greedy by breadth)."""
    prof = profile(bufs)
    steps = sorted(range(len(prof)), key=lambda s: (-prof[s], s))
    seq, seen = [], set()
    for s in steps:
        here = sorted((i for i in range(len(bufs)) if bufs[i][1] <= s <= bufs[i][2] and i not in seen),
                      key=lambda i: (-bufs[i][0], i))
        seq += here
        seen.update(here)
    seq += [i for i in range(len(bufs)) if i not in seen]
    return _place(bufs, seq, _first_fit, limit=limit)


def greedy_conflict(bufs, limit=None):
    """Buffers with the most bytes live beside them first (the tightest to place)."""
    return _place(bufs, sorted(range(len(bufs)), key=conflict_order(bufs)), _first_fit, limit=limit)


def longest_first(bufs, limit=None):
    """Longest-lived first (they constrain the most steps), then largest."""
    return _place(bufs, sorted(range(len(bufs)), key=longest_order(bufs)), _first_fit, limit=limit)


PACKERS = {
    "greedy_size": greedy_size,
    "greedy_breadth": greedy_breadth,
    "greedy_conflict": greedy_conflict,
    "best_fit": best_fit,
    "longest_first": longest_first,
    "model_order": model_order,
}


def top(bufs: list, offsets: list) -> int:
    """The arena's top: the highest buffer end."""
    return max((o + b[0] for o, b in zip(offsets, bufs)), default=0)


def best_of(bufs: list, packers, lower: int, work: int = PACK_WORK) -> tuple:
    """(top, name, offsets) of the best of (name, packer) pairs, in order; stops at `lower`.
    Each packer is called as fn(bufs, limit): it may return None once it cannot end below the best
    top so far (limit = that top - 1; only a strictly lower top replaces the best).

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
        offs = fn(bufs, None if best is None else best[0] - 1)
        if offs is None:
            continue
        t = top(bufs, offs)
        if best is None or t < best[0]:
            best = (t, name, offs)
        if t == lower:
            break
    return best


def pack(bufs: list, nsteps: int, time_budget: float, rounds: int = 0, pinned: tuple = (),
         bands: tuple = ()) -> tuple:
    """_pack, remembered: the fusion planner packs the same schedules again for every option set
    (a pure, deterministic function of its arguments; callers get their own lists)."""
    offs, t, lower, name, optimal, prof = _pack(tuple(tuple(b) for b in bufs), nsteps, time_budget, rounds,
                                                tuple(pinned), tuple(bands))
    return list(offs), t, lower, name, optimal, list(prof)


@functools.lru_cache(maxsize=512)
def _pack(bufs: tuple, nsteps: int, time_budget: float, rounds: int, pinned: tuple, bands: tuple) -> tuple:
    """(offsets, top, lower bound, planner name, optimal, units live at each step) for
    [(units, first, last)] buffers over nsteps steps: the packers, `rounds` of improve(), then
    the exact solver for time_budget seconds of deterministic time while above the bound.

    Each stage is remembered on its own (_heuristics, _improved): the fusion planner packs a
    schedule with the heuristics, polishes it, then gives the best one the exact solver, and
    each of those repeated the stages before it.
    """
    offs, t, lower, name, prof = _improved(bufs, nsteps, rounds, pinned, bands)
    optimal = t == lower
    if not optimal and time_budget > 0 and not pinned:
        res = exact.solve(bufs, list(offs), lower, t, time_budget, wall_cap=False)  # load-independent
        if res[1] < t:
            offs, t, name = tuple(res[0]), res[1], "exact"
        optimal = bool(res[2]) or t == lower
    return tuple(offs), t, lower, name, optimal, prof


@functools.lru_cache(maxsize=64)
def _improved(bufs: tuple, nsteps: int, rounds: int, pinned: tuple, bands: tuple) -> tuple:
    """(offsets, top, lower, name, profile): _heuristics' packing after `rounds` of improve()."""
    offs, t, lower, name, prof = _heuristics(bufs, nsteps, pinned, bands)
    pairs = len(bufs) * (len(bufs) - 1) // 2
    # each round is one quadratic placement: at most 2 x PACK_WORK pairs (30 rounds up to 700 buffers)
    rounds = min(rounds, 2 * PACK_WORK // max(pairs, 1))
    if t > lower and rounds:
        offs2, t2 = improve(bufs, list(offs), lower, rounds, pinned)
        if t2 < t:
            offs, t, name = tuple(offs2), t2, name + "+improve"
    return offs, t, lower, name, prof


@functools.lru_cache(maxsize=64)
def _heuristics(bufs: tuple, nsteps: int, pinned: tuple, bands: tuple) -> tuple:
    """(offsets, top, lower, name, profile): the best of the packers' placements.

    bands: indices of row bands; two more orders place the other buffers first (largest, or most
    pressed, first), then the bands in birth order, so they flow through the holes left behind.
    pinned: indices laid out first, one after another from offset 0 (the row bands of an input
    held in the arena, which then stays one contiguous tensor); the others are placed around
    them by first and best fit in the packers' orders, and the exact solver does not run.
    """
    prof = profile(bufs, max(nsteps, 1))
    lower = max(prof)
    press = pressure(bufs, prof)
    banded = set(bands)
    band = [i in banded for i in range(len(bufs))]
    flow = {"pools+size,bands": (lambda i: (band[i], bufs[i][1] if band[i] else -bufs[i][0], i)),
            "pools+conflict,bands": (lambda i: (band[i], bufs[i][1] if band[i] else -press[i], i))}
    pairs = len(bufs) * (len(bufs) - 1) // 2
    if pinned:
        best = None
        first = set(pinned)
        rest = [i for i in range(len(bufs)) if i not in first]
        orders = {"pinned+size": size_order(bufs), "pinned+conflict": conflict_order(bufs, prof),
                  "pinned+order": birth_order(bufs), "pinned+longest": longest_order(bufs),
                  **{"pinned+" + k: v for k, v in flow.items()}}
        for k, (name, key) in enumerate(orders.items()):
            if k and 2 * (k + 1) * pairs > PACK_WORK:  # each order is two quadratic placements
                break
            for fit in (_first_fit, _best_fit):
                offs = _place(bufs, list(pinned) + sorted(rest, key=key), fit, tuple(pinned),
                              None if best is None else best[0] - 1)
                if offs is None:  # cannot end below the best so far, which only a lower top replaces
                    continue
                t = top(bufs, offs)
                if best is None or t < best[0]:
                    best = (t, name, offs)
    else:
        cands = list(PACKERS.items()) + [
            (f"{k}+{fit.__name__.strip('_')}",
             lambda u, limit, k=k, fit=fit: _place(u, sorted(range(len(u)), key=flow[k]), fit, limit=limit))
            for k in flow for fit in (_first_fit, _best_fit)]
        best = best_of(bufs, cands, lower)
    t, name, offs = best
    return tuple(offs), t, lower, name, tuple(prof)


def improve(bufs: list, offsets: list, lower: int, rounds: int, pinned: tuple = (), seed: int = 0) -> tuple:
    """(offsets, top) after `rounds` of iterated greedy from `offsets`: re-place with first fit, the
    buffers at the top and a random tenth first, the rest in their current offset order (which
    never raises the top). Pinned buffers stay first, in order. Deterministic."""
    rng = random.Random(seed)
    first = set(pinned)
    best, bt = list(offsets), top(bufs, offsets)
    n = len(bufs)
    at_top = by_offset = None  # of the current best: remade only when it changes
    for _ in range(rounds):
        if bt <= lower:
            break
        if at_top is None:
            at_top = [i for i in range(n) if best[i] + bufs[i][0] == bt]
            # the others by offset, ties by index (sorted() is stable): a round keeps this order minus its front
            by_offset = sorted((i for i in range(n) if i not in first), key=best.__getitem__)
        front = set(at_top)
        front.update(rng.sample(range(n), k=max(1, n // 10)))
        front -= first
        # the front largest first, then the rest by offset, ties by index
        seq = (list(pinned) + sorted(sorted(front), key=lambda i: -bufs[i][0])
               + [i for i in by_offset if i not in front])
        new = _place(bufs, seq, _first_fit, tuple(pinned), bt)
        if new is None:  # a round that would end above the best is not kept (the rng is drawn above)
            continue
        t = top(bufs, new)
        if t <= bt:
            best, bt = new, t
            at_top = None
    return best, bt


def pack_varying(need: dict) -> tuple:
    """(offsets, top) for buffers whose size changes by step ({key: {step: size}}): first fit in a
    few orders (each buffer at the lowest offset clear of those placed, at every step it lives),
    keeping the lowest top. Deterministic."""
    keys = sorted(need)
    orders = (lambda k: (-max(need[k].values()), min(need[k]), k), lambda k: (min(need[k]), k),
              lambda k: (-sum(need[k].values()), k))
    best = None
    for order in orders:
        at = {}
        for k in sorted(keys, key=order):
            cands = sorted({0} | {at[j] + sz for j in at for sz in need[j].values()})
            for o in cands:
                if all(not (at[j] < o + need[k][st] and o < at[j] + need[j][st])
                       for j in at for st in need[k] if st in need[j]):
                    at[k] = o
                    break
        t = max((at[k] + sz for k in at for sz in need[k].values()), default=0)
        if best is None or t < best[1]:
            best = (at, t)
    return best
