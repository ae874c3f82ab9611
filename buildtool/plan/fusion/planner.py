"""plan_fused: the least-RAM (or fewest-MAC) plan of a network transformed by operator splitting
and patch-based fusion.

The search gives a front of paths, each with a lower bound of its peak (search.py). The best
few become schedules (schedule.py) -> buffer lifetimes (lifetimes.py) -> the arena packers
(arena.packers.pack); the best packed plan is polished (iterated greedy, then the exact solver)
and must beat running every operator as usual. Ties go to fewer MACs. Run the result with
buildtool.plan.fusion.execute.run_fused().
"""

from __future__ import annotations

import dataclasses

from ..arena.packers import pack
from ...errors import PlanError, UsageError
from ...model.ops import graph_macs, op_macs
from ...options import DEFAULT_MAX_MAC_OVERHEAD, NO_CAP
from ...progress import stage
from .. import align_up
from .groups import choose_groups
from .lifetimes import buffer_specs, layout
from .schedule import BlockRun, FusedPlan, Schedule, schedule_from_edges
from .search import Front, search_front, within_macs
from .split import split_schedule

# Solutions of the front tried, best first, when packing turns out above the search's bound.
_TRIES = 10
_POLISH = 10  # of those, how many get the iterated-greedy pass before the best gets the exact solver
# --optimize ram keeps MACs within DEFAULT_MAX_MAC_OVERHEAD x the unfused network unless told otherwise: past
# it the least-RAM plans buy a few hundred bytes with several times the MACs (resnet8blocks: 7.87x for 1 %).


def plan_fused(g, *, optimize: str | None = None, max_mac_overhead: float | str | None = None,
               ram_limit: int | None = None, splits=None, input_streamed: bool = False, align: int = 16,
               time_budget: float = 2.0, memo=None, band_input: bool = True) -> FusedPlan:
    """Plan g with operator splitting and/or fusion.

    optimize="ram": least peak RAM with MACs <= max_mac_overhead x vanilla (None: the default
    DEFAULT_MAX_MAC_OVERHEAD; "none" or inf: no bound). The plan's tradeoff names the other side:
    the least-RAM plan when a cap cost RAM, the default cap's plan when no cap cost MACs.
    optimize="macs": least MACs with peak RAM <= ram_limit bytes (PlanError naming the
    smallest reachable peak when impossible).
    splits: a list of (top, bottom, n) regions, or "auto" (the least-RAM set of regions).
    input_streamed: the network input is pulled a band at a time and never held whole.
    band_input (input in the arena): the input may be held in row bands that are freed as
    the first block passes them (False: one contiguous input tensor, as TFLite Micro has).
    The plan's arena_bytes is the packed arena of the transformed network.
    """
    if optimize not in (None, "ram", "macs"):
        raise UsageError(f"--optimize {optimize}: use 'ram' or 'macs'")
    plain = "plan without --split/--optimize/--input-streamed"
    if g.variable_tensors():  # fused schedules have no persistent buffers for state (SVDF/LSTM)
        stateful = sorted({op.opcode for op in g.operators  # state read (an input) or kept (a signal op's output)
                           if any(g.tensors[i].variable for i in op.inputs + op.outputs if i >= 0)})
        ops = ", ".join(stateful[:2]) + (f" and {len(stateful) - 2} more" if len(stateful) > 2 else "")
        raise PlanError(f"the model keeps state between invocations ({ops}); splitting and fusion cannot: {plain}")
    if g.subgraphs:  # control flow: its subgraphs are planned layer by layer, in the operator's scratch buffer
        cf = sorted({op.opcode for op in g.operators if op.opcode in ("IF", "WHILE")})
        raise PlanError(f"the model has control flow ({', '.join(cf)}); splitting and fusion cannot: {plain}")
    if any(op.opcode == "ADD" and g.tensors[op.outputs[0]].dtype == "int32" for op in g.operators):
        raise PlanError(f"the model adds int32 values (ADD); splitting and fusion run int8/int16 only: {plain}")
    if splits is not None and optimize is not None:
        raise UsageError("--split and --optimize are alternatives; give one of them")
    if splits is not None and splits != "auto":
        return _within(plan_schedule(g, split_schedule(g, splits, input_streamed), align, time_budget), ram_limit)
    if optimize == "macs" and ram_limit is None:
        raise UsageError("--optimize macs needs --ram-limit")
    factor = mac_cap(max_mac_overhead)
    front = search_front(g, input_streamed, align, memo, split_only=splits == "auto", band_input=band_input,
                         time_budget=time_budget)
    mode = "split" if splits == "auto" else "fusion"
    if optimize == "macs":
        return _cut(choose_groups(g, plan_from_front(g, front, optimize="macs", ram_limit=ram_limit, mode=mode,
                                                     align=align, time_budget=time_budget), align), front)
    least = min(s.macs for s in front.solutions)
    if max_mac_overhead is None and not within_macs(least, factor, front.vanilla_macs):
        factor = least / front.vanilla_macs  # nothing within the default cap (streamed input): the fewest MACs
    packs = _Packs(g, align)
    plan = plan_from_front(g, front, factor=factor, mode=mode, align=align, time_budget=time_budget, packs=packs)
    tradeoff = _tradeoff(g, front, plan, factor, mode, align, time_budget, packs)
    plan = choose_groups(g, plan, align)  # channel-group windows where the layout has room (groups.py)
    plan = dataclasses.replace(plan, mac_cap=factor, tradeoff=tradeoff)  # a copy: packs may share plans
    return _within(_cut(plan, front), ram_limit)


def _cut(plan: FusedPlan, front: Front) -> FusedPlan:
    """A plan whose search --time-budget cut short (shorter blocks on a deep network) says so: not
    optimal, and the longest block the search analysed where it was cut."""
    return dataclasses.replace(plan, optimal=False, search_cap=front.cut) if front.cut else plan


def _within(plan: FusedPlan, ram_limit: int | None) -> FusedPlan:
    """The plan, when it meets ram_limit (a limit on every path, not only optimize=macs); else the one
    line naming the least RAM reached and, when lifting the MAC cap reaches the limit, that option."""
    if ram_limit is None or plan.arena_bytes <= ram_limit:
        return plan
    cap = f" within {plan.mac_cap:g} x the MACs" if plan.mac_cap not in (None, float("inf")) else ""
    other = plan.tradeoff if plan.tradeoff and plan.tradeoff["arena_bytes"] < plan.arena_bytes else None
    hint = (f"; --max-mac-overhead {other['max_mac_overhead']} reaches {other['arena_bytes']} B"
            + (" (fits)" if other["arena_bytes"] <= ram_limit else "") if other else "")
    raise PlanError(f"no plan fits {ram_limit} B of RAM: the least RAM reached{cap} is {plan.arena_bytes} B"
                    f"{hint}; raise --ram-limit to at least that or give the board more RAM")


def _tradeoff(g, front: Front, plan: FusedPlan, factor: float, mode: str, align: int,
              time_budget: float, packs: _Packs) -> dict | None:
    """The plan on the other side of the MAC cap, when it differs: with a cap, the least-RAM plan
    if it packs smaller; without one, the default cap's plan if the least-RAM plan is above it."""
    inf = float("inf")
    if factor != inf:
        if all(within_macs(s.macs, factor, front.vanilla_macs) for s in front.solutions if s.peak < plan.arena_bytes):
            return None  # no plan above the cap has a bound below this arena: lifting the cap cannot help
        other = plan_from_front(g, front, factor=inf, mode=mode, align=align, time_budget=time_budget, packs=packs)
        cap = NO_CAP
        if other.arena_bytes >= plan.arena_bytes:
            return None
    else:
        cap = DEFAULT_MAX_MAC_OVERHEAD
        if within_macs(plan.macs, cap, front.vanilla_macs):
            return None
        if not any(within_macs(s.macs, cap, front.vanilla_macs) for s in front.solutions):
            return None
        other = plan_from_front(g, front, factor=cap, mode=mode, align=align, time_budget=time_budget, packs=packs)
    return {"max_mac_overhead": cap, "arena_bytes": other.arena_bytes, "macs": other.macs,
            "mac_overhead": round(other.mac_overhead, 6)}


class _Packs:
    """Packed plans of one front, kept so that planning both sides of the MAC cap packs each
    schedule once (plan_schedule is deterministic: the same schedule and budget give the same plan)."""

    def __init__(self, g, align: int):
        self.g, self.align, self.scheds, self.plans, self.specs = g, align, {}, {}, {}

    def schedule(self, key, make) -> Schedule:
        if key not in self.scheds:
            self.scheds[key] = make()
        return self.scheds[key]

    def pack(self, sched: Schedule, time_budget: float, rounds: int = 30) -> FusedPlan:
        key = (id(sched), time_budget, rounds)  # every schedule stays alive in scheds or in a plan here
        if key not in self.plans:
            if id(sched) not in self.specs:  # the heuristics, the polish and the exact pass pack the same buffers
                self.specs[id(sched)] = buffer_specs(self.g, sched, self.align)
            self.plans[key] = (sched, plan_schedule(self.g, sched, self.align, time_budget, rounds=rounds,
                                                    specs=self.specs[id(sched)]))
        return self.plans[key][1]


def plan_from_front(g, front: Front, *, optimize: str = "ram", factor: float = float("inf"),
                    ram_limit: int | None = None, mode: str = "fusion", align: int = 16,
                    time_budget: float = 2.0, packs: _Packs | None = None) -> FusedPlan:
    """Pack the best solutions of the front and keep the best real arena.

    The search's peak is a lower bound of each packed arena; the first few solutions in
    order of that bound (P1) or of MACs (P2) are packed with the heuristics, the best one
    is polished (iterated greedy, then the exact solver for time_budget seconds).
    """
    streamed = front.streamed
    packs = packs if packs is not None and packs.align == align else _Packs(g, align)
    plain = _plain(g, front, mode, packs)
    if optimize == "macs":
        sols = sorted((s for s in front.solutions if s.peak <= ram_limit), key=lambda s: (s.macs, s.peak))
        if not sols:
            if plain is not None and plain.arena_bytes <= ram_limit:
                return plain
            _unreachable(g, front, ram_limit, mode, align, time_budget)
    else:
        front.p1(factor)
        sols = sorted((s for s in front.solutions if within_macs(s.macs, factor, front.vanilla_macs)),
                      key=lambda s: (s.peak, s.macs))
    tried = []
    for k, s in enumerate(sols[:_TRIES]):
        stage(f"packing candidate plan {k + 1}/{min(len(sols), _TRIES)}")
        sched = packs.schedule((tuple(s.edges), streamed, mode),
                               lambda s=s: schedule_from_edges(g, s.edges, streamed, mode))
        plan = packs.pack(sched, 0.0, rounds=0)
        if optimize == "macs":
            if plain is not None and plain.arena_bytes <= ram_limit and plain.macs < s.macs:
                return plain  # the fewest MACs there are, and it fits
            if plan.arena_bytes > ram_limit:
                plan = packs.pack(sched, time_budget)
            if plan.arena_bytes <= ram_limit:
                return plan
            continue
        tried.append(plan)
        if plan.arena_bytes == s.peak:  # every later solution has a bound >= this one's
            break
    if not tried:
        if plain is not None and optimize == "macs" and plain.arena_bytes <= ram_limit:
            return plain
        _unreachable(g, front, ram_limit, mode, align, time_budget)
    tried.sort(key=lambda p: (p.arena_bytes, p.macs))
    if tried[0].optimal:
        best = tried[0]
    else:
        stage("polishing the best packings")
        polished = [packs.pack(p.schedule, 0.0) for p in tried[:_POLISH]]
        best = min(polished + tried, key=lambda p: (p.arena_bytes, p.macs))
        if not best.optimal and time_budget > 0:
            stage(f"exact arena solver (at most {time_budget:g} s)")
            exact = packs.pack(best.schedule, time_budget)
            best = exact if exact.arena_bytes <= best.arena_bytes else best
    # an optimiser that cannot beat running every operator as usual returns that plan
    if plain is not None and plain.lower_bound_bytes < best.arena_bytes and not plain.optimal and time_budget > 0:
        plain = packs.pack(plain.schedule, time_budget)
    return plain if plain is not None and plain.arena_bytes < best.arena_bytes else best


def _plain(g, front: Front, mode: str, packs: _Packs) -> FusedPlan | None:
    """Every operator as usual, element-wise ones in place, packed by the heuristics: the plan an
    optimiser must not lose to (None when the input is streamed: no operator may read it whole)."""
    if front.streamed:
        return None
    sched = packs.schedule(("plain", mode), lambda: Schedule(list(range(len(g.operators))), False, mode, inplace=True))
    return packs.pack(sched, 0.0, rounds=0)


def _unreachable(g, front: Front, ram_limit: int, mode: str, align: int, time_budget: float) -> None:
    """Raise the PlanError of an impossible --ram-limit, naming the smallest peak we can pack."""
    best = plan_from_front(g, front, optimize="ram", mode=mode, align=align, time_budget=time_budget)
    raise PlanError(f"no plan fits {ram_limit} B of RAM: the smallest reachable peak is {best.arena_bytes} B "
                    f"({best.mac_overhead:.2f} x the MACs); raise --ram-limit to at least that")


def plan_schedule(g, sched: Schedule, align: int = 16, time_budget: float = 2.0, rounds: int = 30,
                  specs: tuple | None = None) -> FusedPlan:
    """Pack the schedule's buffers: the planner's packers, `rounds` of iterated greedy, then
    the exact solver for time_budget seconds (deterministic time) if still above the bound.
    specs: buffer_specs(g, sched, align) when the caller has it (read, never changed here)."""
    specs, pools, steps, alias = buffer_specs(g, sched, align) if specs is None else specs
    n_steps = steps[-1][1] + 1 if steps else 1
    pinned = tuple(sorted((k for k, sp in enumerate(specs) if sp[0][0] == "t" and sp[0][1] in g.inputs
                           and sp[4] == "band"), key=lambda k: specs[k][0][2]))
    units = [(align_up(max(sp[1], 1), align) // align, sp[2], sp[3]) for sp in specs]
    banded = tuple(k for k, sp in enumerate(specs) if sp[4] == "band")
    offs, top, lower, name, optimal, prof = pack(units, n_steps, time_budget, rounds, pinned, banded)
    buffers, bands, woff, aoff, base = layout(specs, pools, alias, [o * align for o in offs])
    macs = sum(it.macs(g) if isinstance(it, BlockRun) else op_macs(g, g.operators[it]) for it in sched.items)
    return FusedPlan(sched, top * align, lower * align, align, buffers, bands, woff, aoff, list(steps), macs,
                     graph_macs(g), optimal, name, [p * align for p in prof], window_base=base)


def mac_cap(max_mac_overhead) -> float:
    """The factor an option value means: None -> the default cap, "none" (or inf) -> no cap."""
    if max_mac_overhead is None:
        return DEFAULT_MAX_MAC_OVERHEAD
    if max_mac_overhead == NO_CAP:
        return float("inf")
    if isinstance(max_mac_overhead, str) or not max_mac_overhead >= 1.0:
        raise UsageError(f"--max-mac-overhead {max_mac_overhead} must be a number of at least 1.0, "
                         f"or '{NO_CAP}' for no cap")
    return float(max_mac_overhead)
