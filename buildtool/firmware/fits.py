"""Does a model fit its board: the arena (its RAM part) and stack against the board's RAM, the weights
against its flash or memory regions, refused in one line before anything is written or linked, with
the option that would fit it when the least-RAM fusion plan would (the only firmware module that runs
the planner); and, for `buildtool fit`, what a given plan uses of each of a board's memories
(`board_use`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from .. import targets
from ..errors import BuildtoolError, PlanError, UsageError
from ..model.ir import Graph
from ..options import PlanOptions
from ..plan import first_bytes
from ..plan.flash import HEADER_BYTES, padded_bytes
from ..plan.fusion.planner import plan_fused
from ..plan.fusion.search import search_front
from ..plan.regions import place, place_arena, weight_capacity
from ..units import exact
from .toolchain import Code, FirmwareError, ram_size


def optimize_ram_hint(g: Graph, plan, t: targets.Target, options: PlanOptions, how: str = "--optimize ram") -> str:
    """'; with --optimize ram it fits (...)' when the least-RAM fusion plan would fit the board, else ''
    (how: the option as the caller spells it).

    The fusion search's least peak is a lower bound of every packed fused arena, so the
    (slower) packing only runs when that bound leaves room for the stack.
    """
    if options.fused or plan.regions(g):  # already optimised (or asked to be): nothing to suggest
        return ""

    align = options.align
    room = t.data_ram_bytes - t.stack_bytes
    try:
        front = search_front(g, False, align)
        if not front.solutions or min(s.peak for s in front.solutions) > room:
            return ""
        for cap, spelled in ((None, how), ("none", f"{how} --max-mac-overhead none")):
            fused = plan_fused(g, optimize="ram", align=align, time_budget=options.time_budget,
                               max_mac_overhead=cap)
            if fused.arena_bytes <= room:
                return (f"; with {spelled} it fits (arena {exact(fused.arena_bytes)} + stack {exact(t.stack_bytes)} = "
                        f"{exact(fused.arena_bytes + t.stack_bytes)})")
    except BuildtoolError:  # a graph the fusion planner does not take: no hint
        return ""
    return ""


def check_fits(g: Graph, plan, t: targets.Target, hint: str = "--optimize ram", options=None,
               code: Code | None = None) -> None:
    """Refuse, before anything is written or linked, a model whose arena (its RAM part, when the
    board's regions take the rest: regions.place_arena; the whole arena when even they cannot) and
    stack exceed the board's RAM or whose
    weights exceed its flash: one line naming the board's size and the
    need, suggesting --optimize ram (or hint: how the caller spells it) when the least-RAM
    fusion plan would fit. code: the build's code measured (steps.code.measured_code) on a board that runs
    its code from RAM (xcore's tile): the RAM then holds that code, the static data, arena and stack, the
    code measured for this model in place of the board's reserve."""

    if code is not None and t.code_in_ram:
        t = t.with_code(code.ram)  # the arena has the tile less this model's code (and the stack), not a fixed reserve
    if code is not None and t.code_in_ram and t.ram_bytes:
        need = first_bytes(plan) + t.stack_bytes + code.static + code.code
        if need > t.ram_bytes:
            raise FirmwareError(f"{g.name} does not fit board {t.name}: it needs {exact(need)} of RAM (code and "
                                f"constants {exact(code.code)}, measured as built here, + arena "
                                f"{exact(first_bytes(plan))} + stack {exact(t.stack_bytes)} + static "
                                f"{exact(code.static)}), the board has {exact(t.ram_bytes)}"
                                + optimize_ram_hint(g, plan, t, PlanOptions.from_map(options), hint))
    try:  # on a board with regions, arena buffers RAM cannot hold go elsewhere
        plan = place_arena(g, plan, t)
    except PlanError:  # not even spread over every memory that may hold arena buffers: the RAM line below
        pass
    if t.ram_bytes and first_bytes(plan) + t.stack_bytes > t.data_ram_bytes:
        need = first_bytes(plan) + t.stack_bytes
        raise FirmwareError(f"{g.name} does not fit board {t.name}: it needs {exact(need)} of RAM (arena "
                            f"{exact(first_bytes(plan))} + stack {exact(t.stack_bytes)}), the board has {ram_size(t)}"
                            + optimize_ram_hint(g, plan, t, PlanOptions.from_map(options), hint))
    if t.regions:  # the placement fits every weight in a region, or says by how much it cannot
        place(g, plan, t)
    elif t.flash_bytes and g.params_bytes() > t.flash_bytes:
        raise FirmwareError(f"{g.name} does not fit board {t.name}: its weights need {exact(g.params_bytes())} of "
                            f"flash, the board has {exact(t.flash_bytes)}")


# -- what a plan uses of each memory (buildtool fit) ----------------------------------------------
NO_LIMIT = 1 << 40  # the size given to a board that declares none (host, xcore) to place its weights


@dataclass(frozen=True)
class MemoryUse:
    """One memory of a board and what a plan puts there: arena (its part here), stack, other static data
    (measured), the weights image's part, the code (measured: Code) or, unmeasured, the bytes the board
    keeps back from weights for code and .data (Region.reserve). size 0: the board declares no limit."""

    name: str
    memory: str
    size: int
    arena: int = 0
    stack: int = 0
    weights: int = 0
    code_reserve: int = 0
    holds_code: bool = False  # the board's code may live here (counted only as code_reserve unless measured)
    code: int = 0  # measured code here (Code.code)
    static: int = 0  # measured static data besides the arena here (Code.static)

    @property
    def used(self) -> int:
        return self.arena + self.stack + self.static + self.weights + (self.code or self.code_reserve)

    @property
    def measured(self) -> bool:
        return bool(self.code)

    def to_json(self) -> dict:
        return {"name": self.name, "memory": self.memory, "size": self.size, "used": self.used, "arena": self.arena,
                "stack": self.stack, "static": self.static, "weights": self.weights, "code": self.code,
                "code_reserve": self.code_reserve, "holds_code": self.holds_code}


@dataclass(frozen=True)
class BoardUse:
    """What plan uses of board t's memories; short: bytes missing, {"ram": n, "weights": n, "flash": n}
    (empty: it fits; flash: the code and the weights placed with it exceed the region holding the code)."""

    memories: tuple
    ram_bytes: int  # the arena's part in RAM + the stack (+ measured static data, + code a board runs from RAM)
    short: dict = field(default_factory=dict)
    code: Code | None = None

    @property
    def fits(self) -> bool:
        return not self.short


def board_use(g: Graph, plan, t: targets.Target, code: Code | None = None) -> BoardUse:
    """What plan (as given: spread over regions only if it already is, regions.place_arena) uses of
    each memory of board t, and by how much it does not fit: the arena's RAM part and the stack
    against the RAM (check_fits' test), the weights placed as regions.place places them (less each
    region's reserve). A board without sizes (host, xcore) takes everything. code: the build's code
    measured (Code): the weights are placed around code.placed as the build places them, the RAM counts
    the static data (and, on a board running code from RAM, the code instead of the region's reserve)
    and the region holding the code counts it."""
    unlimited = not t.ram_bytes and not t.flash_bytes and not t.regions
    tt = replace(t, ram_bytes=NO_LIMIT, flash_bytes=NO_LIMIT) if unlimited else t
    in_ram = code is not None and bool(t.code_in_ram)  # code and constants measured where the board runs them
    ram_need = first_bytes(plan) + t.stack_bytes + (code.static + (code.code if in_ram else 0) if code else 0)
    room = t.ram_bytes if in_ram else t.data_ram_bytes
    short = {}
    if t.ram_bytes and ram_need > room:
        short["ram"] = ram_need - room
    weights = {}
    try:
        p = place(g, plan, tt, code_bytes=code.placed if code else None)
        spread = dict(p.arena_parts)
        for r, used in p.used.items():
            weights[r] = used - (spread.get(r, 0) if spread else (p.arena_bytes if r == p.arena else 0))
    except PlanError:  # the weights do not fit the regions that may hold them: by how much
        regs = [r for r in tt.memory_regions() if "weights" in r.holds]
        primary = next((r for r in regs if r.memory == "FLASH"), regs[0] if regs else None)
        need = padded_bytes(g, tt.weights_align)
        have = sum(weight_capacity(r, r is primary) for r in regs) + HEADER_BYTES
        short["weights"] = max(need - have, 1)
        if primary is not None:
            weights[primary.name] = need
        spread = {r["name"]: r["bytes"] for r in getattr(plan, "arena_regions", None) or []}
    out = []
    for r in tt.memory_regions():
        arena = spread.get(r.name, 0) if spread else (plan.arena_bytes if r.memory == "RAM" else 0)
        stack = t.stack_bytes if r.memory == "RAM" else 0
        reserve = r.reserve if "code" in r.holds else 0
        measured = code.code if code and "code" in r.holds else 0
        static = code.static if code and r.memory == "RAM" else 0
        if arena or stack or weights.get(r.name, 0) or reserve or r.memory in ("RAM", "FLASH"):
            out.append(MemoryUse(r.name, r.memory, 0 if unlimited else r.size, arena, stack, weights.get(r.name, 0),
                                 reserve, "code" in r.holds, measured, static))
    for m in out:  # the code and the weights placed beside it exceed the region holding the code
        if code and m.holds_code and m.memory != "RAM" and m.size and "weights" not in short and m.used > m.size:
            short["flash"] = m.used - m.size
    return BoardUse(tuple(out), ram_need, short, code)


# -- which plan fits (buildtool fit's ladder; a board that picks its own plan: Target.auto_fit) -------
PLAIN, RAM, RAM_NO_CAP, SPREAD = "plain", "optimize=ram", "optimize=ram max_mac_overhead=none", "spread over regions"


def ladder(options: PlanOptions) -> list:
    """(label, options) of the plans tried in order: the options' own fused plan alone, else plain and
    the two least-RAM fused plans (buildtool fit's spread rung reuses the plain plan)."""
    if options.fused:
        return [(options.describe(), options)]
    return [(PLAIN, options), (RAM, replace(options, optimize="ram")),
            (RAM_NO_CAP, replace(options, optimize="ram", max_mac_overhead="none"))]


def may_fuse(options, t: targets.Target) -> bool:
    """Whether a build's plan may be a fused one: asked for, or picked by a board that picks its own
    (Target.auto_fit). Its code step then reads the model (a fused plan's code holds weight copies) and
    its flash step the plan: build rules wire their steps by this."""
    return PlanOptions.from_map(options).fused or t.auto_fit


def measured_use(g: Graph, plan, t: targets.Target, measure: Callable | None = None) -> BoardUse:
    """board_use of plan on t; on a board running its code from RAM with measure(plan) -> Code | None given (the
    build's code measured: steps.code.measured_code), with that code in place of the board's reserve, measured
    only when the arena and stack alone leave the RAM room for code."""
    if measure is None or not t.code_in_ram:
        return board_use(g, plan, t)
    if t.ram_bytes and first_bytes(plan) + t.stack_bytes >= t.ram_bytes:  # no room for any code: not measured
        return board_use(g, plan, t.with_code(1))
    code = measure(plan)
    return board_use(g, plan, t, code) if code is not None else board_use(g, plan, t)


def fitting_plan(g: Graph, plan, t: targets.Target, options, planner: Callable, measure: Callable | None = None) -> tuple:
    """(plan, note) for a build on board t: plan itself (note None) when it fits, when the board does
    not pick its own plan (Target.auto_fit) or when the options ask for a fused plan; else the first
    fused plan of the ladder that fits (planner(g, PlanOptions) makes it), with the one line saying so.
    When none fits, plan itself: check_fits then refuses it in its one line. measure(plan) -> Code: each plan's
    code measured, counted on a board running its code from RAM (measured_use)."""
    options = PlanOptions.from_map(options)
    if not t.auto_fit or options.fused:
        return plan, None
    use = measured_use(g, plan, t, measure)
    if use.fits or "weights" in use.short:  # weights that do not fit fit no plan better
        return plan, None
    for label, opts in ladder(options)[1:]:
        try:
            p = planner(g, opts)
        except (PlanError, UsageError):  # a graph the fusion planner refuses (stateful)
            return plan, None
        if measured_use(g, p, t, measure).fits:
            code = (f"code and constants {exact(use.code.code)}, measured as built here, + static "
                    f"{exact(use.code.static)} + " if use.code is not None and t.code_in_ram else "")
            # the RAM as the measured build has it; the arena alone too big to measure: the tile whole
            room = ram_size(t if measure is None or not t.code_in_ram else
                            t.with_code(use.code.ram) if use.code is not None else replace(t, regions=()))
            return p, (f"{g.name}: the layer-by-layer plan needs {exact(use.ram_bytes)} of {t.name}'s RAM ({code}arena "
                       f"{exact(first_bytes(plan))} + stack {exact(t.stack_bytes)}), which has {room}; "
                       f"planned with {label} instead: arena {exact(first_bytes(p))}, "
                       f"{p.macs / max(plan.macs, 1):.2f} x the MACs")
    return plan, None
