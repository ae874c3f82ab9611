"""The planner's fast paths (issue 53: `buildtool plan` faster with the same plans) give exactly what the
plain computations they replace give: each is checked here against a reference written out in the test
(a sort of tuples, a loop over pairs, placing buffer by buffer), on random cases that reach the fast path
and the fallback alike."""

from __future__ import annotations

import random

import numpy as np
import pytest

from buildtool.plan.arena import packers
from buildtool.plan.fusion import costs
from buildtool.plan.fusion.geometry import geometry
from buildtool.plan.fusion.search import _prune
from buildtool.zoo.synthetic import conv_chain


def _random_bufs(rng: random.Random, n: int, zero: bool = True) -> tuple:
    return tuple((rng.randint(0 if zero else 1, 9), f, f + rng.randint(0, 12))
                 for f in (rng.randint(0, 40) for _ in range(n)))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 60, 300])
def test_neighbours_at_once_are_the_pairs_that_share_a_step(n):
    bufs = _random_bufs(random.Random(n), n)
    got = packers._make_neighbours(bufs)
    assert len(got) == n
    for i, nb in enumerate(got):
        want = [j for j in range(n) if j != i and bufs[j][1] <= bufs[i][2] and bufs[i][1] <= bufs[j][2]]
        assert nb.dtype == np.int32 and nb.tolist() == want


def _place_one_by_one(bufs: tuple, seq: list, first_fit: bool) -> list:
    """Each buffer at the lowest offset (first fit) or into the smallest gap (best fit, lowest of equal
    ones; the top when none holds it) clear of the placed buffers that share a step with it."""
    offs = {}
    for i in seq:
        u, f, l = bufs[i]
        ranges = sorted((offs[j], offs[j] + bufs[j][0]) for j in offs if bufs[j][1] <= l and f <= bufs[j][2])
        gaps, end = [], 0
        for a, e in ranges:
            if a - end >= u:
                gaps.append((a - end, end))
            end = max(end, e)
        if first_fit:
            offs[i] = gaps[0][1] if gaps else end
        else:
            offs[i] = min(gaps)[1] if gaps else end
    return [offs.get(i, 0) for i in range(len(bufs))]


@pytest.mark.parametrize("seed", range(40))
def test_pinned_prefix_offsets_are_those_of_placing_it_buffer_by_buffer(seed):
    """An input's row bands (all live at one step: running sums) and any other prefix (placed as a problem
    of its own), by both fits; the other buffers' placement around them is _place's own."""
    rng = random.Random(seed)
    k = rng.randint(1, 120)
    if seed % 2:  # all live at step t0: the running sums
        t0 = rng.randint(0, 5)
        pre = [(rng.randint(1, 9), rng.randint(0, t0), t0 + rng.randint(0, 30)) for _ in range(k)]
    else:
        pre = list(_random_bufs(rng, k))
    bufs = tuple(pre) + _random_bufs(rng, rng.randint(0, 50))
    prefix = tuple(range(k))
    for first_fit, fit in ((True, packers._first_fit), (False, packers._best_fit)):
        want = _place_one_by_one(bufs, list(prefix), first_fit)
        assert list(packers._make_prefix(bufs, prefix, fit)[0]) == want
        seq = list(prefix) + rng.sample(range(k, len(bufs)), len(bufs) - k)
        assert packers._place(bufs, seq, fit, prefix) == _place_one_by_one(bufs, seq, first_fit)


def _front_of(ram: list, mac: list, kind: list) -> list:
    """The candidates no earlier one (by ram, mac, kind, index) matches or beats on MACs, in that order."""
    out, best = [], None
    for i in sorted(range(len(ram)), key=lambda i: (ram[i], mac[i], kind[i], i)):
        if best is None or mac[i] < best:
            out.append(i)
            best = mac[i]
    return out


@pytest.mark.parametrize("big", [False, True])
def test_pareto_rows_sorted_at_once_are_each_rows_front(big):
    """Every row (a start's combo) at once, ties included; big: MACs so large that the one-key sort would
    overflow, so each row is lexsorted instead (the same fronts)."""
    rng = np.random.default_rng(5)
    sw = costs.Sweep(conv_chain(3), geometry(conv_chain(3), range(0, 3)), 16)
    layout = costs._layout(sw.rows, sw.cols, costs.SCHEMES, False)
    n = len(layout[2])
    rams = rng.integers(-3, 40, (6, n))  # few values: many ties
    macs = rng.integers(0, 30, (6, n)) * (1 << 58 if big else 1)
    got = costs._pareto(layout, rams, macs)
    names, th, tw = layout[5:]
    for r in range(6):
        want = [[int(rams[r, i]), int(macs[r, i]), names[i], th[i], tw[i]]
                for i in _front_of(rams[r].tolist(), macs[r].tolist(), layout[2].tolist())]
        assert got[r] == want


def test_label_prune_keeps_lexsorts_front():
    rng = np.random.default_rng(2)
    for big in (1, 1 << 50):
        peak, macs = rng.integers(0, 50, 400) * big, rng.integers(0, 50, 400) * big
        src = np.arange(400)
        want = _front_of(peak.tolist(), macs.tolist(), [0] * 400)
        p, m, s = _prune(peak, macs, src)
        assert s.tolist() == want and p.tolist() == peak[want].tolist() and m.tolist() == macs[want].tolist()


def test_axis_memo_gives_each_blocks_own_analysis_and_shares_equal_ones(monkeypatch):
    """On a chain of equal convolutions the blocks ending at different operators have one structure: the
    memo analyses it once and gives each block its own tensors; the values equal a fresh analysis."""
    g = conv_chain(12)
    made = []
    real = costs.axis_analysis
    monkeypatch.setattr(costs, "axis_analysis", lambda *a: made.append(a) or real(*a))
    memo = costs.AxisMemo()
    for q in (6, 9, 12):
        geo = geometry(g, range(q - 4, q))
        y = g.tensors[geo.tile_tensor].shape
        for axis in (0, 1):
            got = memo.analysis(geo, axis, y[1 + axis])
            want = real(geo.steps, axis, geo.tile_tensor, y[1 + axis])
            for part_got, part_want in zip(got, want):
                assert part_got.keys() == part_want.keys()
                for t in part_want:
                    assert all(np.array_equal(a, b) for a, b in zip(part_got[t], part_want[t]))
    assert len(made) == 1  # 3 ends x 2 axes, one structure (square: rows and columns alike)
