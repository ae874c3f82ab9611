"""Exact packing with OR-Tools CP-SAT: offsets are variables, buffers live at a common step may
not overlap (NoOverlap2D over fixed time intervals), minimise the arena top.

Seeded with the best heuristic packing (hint and upper bound) and the lower bound, so it only
ever improves on the heuristics and stops as soon as it reaches the bound. One worker, a fixed
seed and a deterministic-time limit keep the answer independent of machine load: the wall clock
only bounds a run gone wrong (wall_safety_seconds, far above any normal run), and a run it stops
is not used (the heuristics' packing is kept, not proven optimal, and a warning says so), so a
loaded machine can make a plan slower but never silently different.
"""

from __future__ import annotations

import logging

from .. import cpsat

DETERMINISTIC_PER_SECOND = 20.0
# Past this many buffers building the model alone takes seconds (10,000: 4 s and 300 MB here)
# and the budget runs out before the search improves on the heuristics: they are kept as they are.
MAX_BUFFERS = 2000
# The wall-clock safety net: budget/DETERMINISTIC_PER_SECOND units take about 0.75 x the budget on
# an idle machine, so this needs a machine more than 25 times slower than that to be reached.
WALL_SAFETY_FACTOR = 20.0
WALL_SAFETY_MIN_SECONDS = 60.0


def wall_safety_seconds(time_budget: float) -> float:
    """The wall-clock seconds after which a CP-SAT run is stopped and its answer not used."""
    return max(WALL_SAFETY_MIN_SECONDS, WALL_SAFETY_FACTOR * time_budget)


def solve(bufs: list, hint: list, lower: int, upper: int, time_budget: float, wall_cap: bool = True,
          params: dict | None = None) -> tuple:
    """bufs = [(units, first, last)] -> (offsets, top, proven_optimal, deterministic seconds used).

    Only deterministic time decides the answer. wall_cap: stop a run that passes
    wall_safety_seconds(time_budget) and return the hint instead (not proven optimal), with a
    warning; wall_cap=False: no wall clock at all. params: more CP-SAT parameters (the planner
    passes none; benchmarks/exact_budget.py tries others on the planner's own problems)."""
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
    # budget. The wall-clock cap is only a safety net (see the module docstring).
    p.max_deterministic_time = time_budget / DETERMINISTIC_PER_SECOND
    if wall_cap:
        p.max_time_in_seconds = wall_safety_seconds(time_budget)
    for k, v in (params or {}).items():
        setattr(p, k, v)
    st = s.Solve(m)
    used = s.deterministic_time
    if (wall_cap and st != cp_model.OPTIMAL and used < p.max_deterministic_time
            and s.wall_time >= p.max_time_in_seconds):
        logging.getLogger("buildtool.plan").warning(
            "the exact packer was stopped by its wall-clock safety net (%.0f s, the machine is overloaded); "
            "the heuristic packing is kept, not proven optimal", p.max_time_in_seconds)
        return list(hint), upper, False, used
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return list(hint), upper, False, used
    offs = [int(s.Value(x)) for x in xs]
    top = max((o + b[0] for o, b in zip(offs, bufs)), default=0)
    if top > upper:
        return list(hint), upper, False, used
    return offs, top, st == cp_model.OPTIMAL, used
