"""Exact packing with OR-Tools CP-SAT: offsets are variables, buffers live at a common step may
not overlap (NoOverlap2D over fixed time intervals), minimise the arena top.

Seeded with the best heuristic packing (hint and upper bound) and the lower bound, so it only
ever improves on the heuristics and stops as soon as it reaches the bound. One worker, a fixed
seed and a deterministic-time limit keep the answer independent of machine load.
"""

from __future__ import annotations

from .. import cpsat

DETERMINISTIC_PER_SECOND = 20.0
# Past this many buffers building the model alone takes seconds (10,000: 4 s and 300 MB here)
# and the budget runs out before the search improves on the heuristics: they are kept as they are.
MAX_BUFFERS = 2000


def solve(bufs: list, hint: list, lower: int, upper: int, time_budget: float, wall_cap: bool = True) -> tuple:
    """bufs = [(units, first, last)] -> (offsets, top, proven_optimal, deterministic seconds used).

    wall_cap=False drops the wall-clock safety net: only deterministic time stops the search,
    so the answer never depends on machine load (the run may take longer on a loaded machine)."""
    cp_model = cpsat.load()
    if len(bufs) > MAX_BUFFERS:
        return list(hint), upper, False, 0.0

    m = cp_model.CpModel()
    xs, xi, ti = [], [], []
    for k, (u, f, l) in enumerate(bufs):
        x = m.NewIntVar(0, max(upper - u, 0), f"x{k}")
        xs.append(x)
        xi.append(m.NewFixedSizeIntervalVar(x, u, f"xi{k}"))
        ti.append(m.NewFixedSizeIntervalVar(f, l - f + 1, f"ti{k}"))
    t = m.NewIntVar(lower, upper, "top")
    for x, (u, _, _) in zip(xs, bufs):
        m.Add(x + u <= t)
    m.AddNoOverlap2D(xi, ti)
    m.Minimize(t)
    for x, h in zip(xs, hint):
        m.AddHint(x, h)
    s = cp_model.CpSolver()
    p = s.parameters
    p.num_workers = 1
    p.random_seed = 0
    # CP-SAT's deterministic work units run about 15x faster than wall seconds on this model
    # (measured on the 2-core development machine), so budget/20 units take roughly 0.75 x the
    # budget. The wall-clock cap is only a safety net; a run stopped by it may differ.
    p.max_deterministic_time = time_budget / DETERMINISTIC_PER_SECOND
    if wall_cap:
        p.max_time_in_seconds = 2.0 * time_budget
    st = s.Solve(m)
    used = s.deterministic_time
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(hint), upper, False, used
    offs = [int(s.Value(x)) for x in xs]
    top = max((o + b[0] for o, b in zip(offs, bufs)), default=0)
    if top > upper:
        return list(hint), upper, False, used
    return offs, top, st == cp_model.OPTIMAL, used
