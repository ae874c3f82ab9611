"""Which boards a model fits, and with which plan: `buildtool fit` as data (docs/fit.md).

fit_table(graph, options) -> [FitRow], one per installed board (targets.names()). Per board the
first plan of the ladder that fits it (firmware.fits.board_use: arena + stack in RAM, weights in its
flash or memory regions):

  plain                                   the layer-by-layer plan of the options given
  optimize=ram                            the least-RAM fused plan within the default MAC cap
  optimize=ram max_mac_overhead=none      the least-RAM fused plan at any MAC cost
  spread over regions                     the plain plan's buffers spread over the board's regions
                                          (regions.place_arena), on a board with regions of its own
  does not fit                            with the bytes short (the least-RAM plan tried)

With model given (the CLI), a plan that fits without its code is then measured as its build links it
(steps.code.measured_code: the code step's model.c, a trial link, the build's RAM/flash line's reading):
the row counts that code (flash = code + weights; RAM with the static data; the code itself on a board
running it from RAM) and the weights placed around it as the build places them, and goes on down the
ladder when the code does not fit. The rows are made once each, in parallel; boards of one toolchain
given the same model.c share one trial link (steps.code.link_key).

Options that ask for a fused plan (optimize, splits, input_streamed) make that plan the only rung.
Each plan is made once, when a board first needs it, and reused for every board (the uncapped one
not at all where the capped plan's tradeoff says it is no smaller or would not fit); `planner(graph,
PlanOptions)` makes it (steps.plan.plan_memory, or the CLI's through the planner daemon's cache).
The latency is an estimate (firmware.op_cost.static_cycles at the board's clock_hz; flash_wait_states:
with that many wait states on each board's flash; else, on a part with a memory model's figures
(op_cost.MEMORY_STALLS_PER_MAC), with its memory stalls), None where the board's CPU has no cycle figures or
the board no clock.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .. import targets
from ..errors import PlanError, UsageError
from ..firmware.fits import PLAIN, RAM, RAM_NO_CAP, SPREAD, BoardUse, board_use, ladder, measured_use
from ..firmware.op_cost import MEMORY_STALLS_PER_MAC, static_cycles
from ..options import PlanOptions
from ..plan.regions import place_arena
from ..progress import stage
from ..steps.code import measured_code
from ..steps.models import Model
from ..steps.plan import plan_memory

@dataclass(frozen=True)
class FitRow:
    """One board: fits or not, the plan that makes it fit (None: none does), what that plan (or, when
    none fits, the least-RAM plan tried) uses of each memory, the plan's MACs and the estimated latency."""

    board: str
    cpu: str
    plan: str | None
    use: BoardUse
    arena_bytes: int
    stack_bytes: int
    macs: int
    clock_hz: int
    cycles: tuple | None  # (low, high) estimated cycles, None: no cycle model for the board's CPU
    limited: bool  # the board declares memory sizes (host and xcore do not)
    flash_wait_states: int = 0  # in the cycles: wait states on every flash access
    memory_model: bool = False  # in the cycles: the part's memory stalls per MAC (op_cost.MEMORY_STALLS_PER_MAC)
    planned: object = field(default=None, repr=False, compare=False)  # the plan that fits (None: none does)

    @property
    def fits(self) -> bool:
        return self.plan is not None

    @property
    def seconds(self) -> tuple | None:
        """(low, high) estimated seconds per inference, None without cycles or clock."""
        if self.cycles is None or not self.clock_hz or not self.fits:
            return None
        return self.cycles[0] / self.clock_hz, self.cycles[1] / self.clock_hz

    def to_json(self) -> dict:
        s = self.seconds
        return {"board": self.board, "cpu": self.cpu, "fits": self.fits, "plan": self.plan,
                "limited": self.limited, "ram_bytes": self.use.ram_bytes, "arena_bytes": self.arena_bytes,
                "stack_bytes": self.stack_bytes, "short": dict(self.use.short), "macs": self.macs,
                "memories": [m.to_json() for m in self.use.memories],
                "latency": None if self.cycles is None or not self.fits else {
                    "estimate": True, "cycles": list(self.cycles), "clock_hz": self.clock_hz or 0,
                    "seconds": None if s is None else [round(s[0], 6), round(s[1], 6)],
                    **({"flash_wait_states": self.flash_wait_states} if self.flash_wait_states else {}),
                    **({"memory_model": True} if self.memory_model else {})}}


def fit_table(graph, options=None, planner=plan_memory, boards=None, flash_wait_states: int = 0,
              model: Model | None = None) -> list:
    """[FitRow] for every installed board (boards: the names to take instead), in name order; the
    latency with flash_wait_states on every access to the board's flash (op_cost.static_cycles).
    model (the Model of graph): measure the code of each row's plan as its build links it (steps.code.measured_code)
    and count it (flash = code + weights; RAM with the static data, and the code on a board running it
    from RAM); None: the code is not measured (the board's reserve for it counted, or nothing)."""
    if flash_wait_states < 0:
        raise UsageError(f"--flash-wait-states must be 0 or more, not {flash_wait_states}")
    options = PlanOptions.from_map(options)
    rungs = ladder(options)
    made: dict = {}

    def plan(label: str, opts: PlanOptions):
        if label not in made:
            stage(f"planning {label}")
            try:
                made[label] = planner(graph, opts)
            except (PlanError, UsageError):  # a graph the fusion planner refuses (stateful): no such rung
                if label == PLAIN or options.fused:
                    raise
                made[label] = None
        return made[label]

    names = boards or targets.names()
    if model is None:
        return [_row(graph, targets.get(name), rungs, plan, options.fused, flash_wait_states) for name in names]
    # each row once, the rows in parallel (links and compiles wait on the toolchain; a plan is made once, under
    # a lock); a row that fits without its code has its code measured, and goes on down the ladder when the code
    # pushes it out; boards of one toolchain given the same model.c share one trial link (steps.code.link_key)
    lock, once = threading.Lock(), _Once()

    def plan_locked(label: str, opts: PlanOptions):
        with lock:
            return plan(label, opts)

    def measure(label, p, t):
        return measured_code(model, p, t, options, once=once)

    stage("measuring the code")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda name: _row(graph, targets.get(name), rungs, plan_locked, options.fused,
                                               flash_wait_states, measure), names))


class _Once:
    """key -> make()'s value, made once however many threads ask for it at the same time."""

    def __init__(self):
        self.lock, self.made = threading.Lock(), {}

    def __call__(self, key, make):
        with self.lock:
            slot = self.made.setdefault(key, [threading.Lock(), None, False])
        with slot[0]:
            if not slot[2]:
                slot[1], slot[2] = make(), True
        return slot[1]


def _uncapped_may_fit(capped, t) -> bool:
    """Whether the least-RAM plan at any MAC cost may fit t where the capped one did not: the capped
    plan's tradeoff names the uncapped arena when lifting the cap makes it smaller (fusion.planner)."""
    other = (getattr(capped, "tradeoff", None) or {}).get("arena_bytes")  # (a layer plan has none)
    room = t.ram_bytes if t.code_in_ram else t.data_ram_bytes  # (code run from RAM: measured, counted later)
    return other is not None and (not t.ram_bytes or other + t.stack_bytes <= room)


def _row(g, t, rungs, plan, fused: bool, flash_wait_states: int = 0, measure=None) -> FitRow:
    def use_of(label, p):  # what p uses of t; once it fits without its code, with the code measured (measure)
        if measure is not None and t.code_in_ram:  # xcore's tile: its measured code, not the board's reserve
            return measured_use(g, p, t, lambda q: measure(label, q, t))
        use = board_use(g, p, t)
        code = measure(label, p, t) if use.fits and measure is not None else None
        return board_use(g, p, t, code) if code is not None else use

    tried = []  # (label, plan, use) of every plan tried, in ladder order
    for label, opts in rungs:
        if label == RAM_NO_CAP and tried and tried[-1][0] == RAM and not _uncapped_may_fit(tried[-1][1], t):
            continue
        p = plan(label, opts)
        if p is None:
            continue
        use = use_of(label, p)
        tried.append((label, p, use))
        if use.fits:
            break
        # weights that do not fit fit no plan better, but the row shows the least RAM a plan needs (as
        # the build's refusal suggests --optimize ram): go on while RAM is short too (or, with the code
        # measured, while the code and weights exceed the flash: another plan's code may be smaller)
        if "ram" not in use.short and "flash" not in use.short:
            break
    if not any(x[2].fits for x in tried) and not fused and "ram" in tried[0][2].short:
        plain = tried[0][1]
        try:  # the plain plan's buffers over the board's regions, as the build places them (check_fits)
            spread = place_arena(g, plain, t)
        except PlanError:  # not even spread over every region: the row says by how much RAM is short
            spread = plain
        if spread is not plain:
            tried.append((SPREAD, spread, use_of(SPREAD, spread)))
    ok = [x for x in tried if x[2].fits]
    # none fits: the plan that leaves least short, RAM first (weights short alike: no plan places them better)
    label, p, use = ok[0] if ok else min(tried, key=lambda x: (x[2].short.get("ram", 0), x[2].ram_bytes,
                                                               tried.index(x)))
    cycles = static_cycles(g, p, t.cpu, flash_wait_states, t.name) if ok else None
    modelled = bool(cycles) and not flash_wait_states and t.name in MEMORY_STALLS_PER_MAC
    return FitRow(t.name, t.cpu, label if ok else None, use, p.arena_bytes, t.stack_bytes, int(p.macs), t.clock_hz,
                  cycles, bool(t.ram_bytes or t.flash_bytes or t.regions), flash_wait_states, modelled, p if ok else None)


__all__ = ["FitRow", "fit_table", "ladder", "PLAIN", "RAM", "RAM_NO_CAP", "SPREAD"]
