"""The code budget (issue 50 item 1): which kernel variant each layer calls, the exact optimum of bytes of code
against modelled cycles within a budget of flash bytes.

Pure: no toolchain, no file. Each layer offers candidates (a variant, the code it needs, that code's
bytes, the layer's modelled cycles with it). Code several layers call (a shared variant) is counted
once (at the most bytes a chosen candidate naming it gives it: a variant measured per layer class); a layer's own
instance is code of its own, or of every layer of its identity (kernel_variants.instance_identity: model.c defines one
function for them, so its candidates name one code); a depthwise path names each symbol its entry links
(_dw_codes: a helper several paths call, dw_q4s, bt_dw_widen4, dw_chan4_q4, is one code, counted once, so the plan's
bytes are the link's: test_report_bytes_are_the_linked_symbols). The choice is an integer program solved by OR-Tools CP-SAT
(optimum, _Exact): booleans x[layer, candidate], exactly one a layer; per code y >= x of each candidate naming it
(y set only when one is chosen); bytes = sum of the codes' bytes by y, cycles = sum of the candidates' cycles by x;
bytes <= budget when there is one; a code another code beats on every layer naming it (_undominated) is left out
first. Each preset is a lexicographic optimum, one solve a stage, each stage's optimum a constraint of the stages
after:

    size       the least code, then the fewest cycles
    speed      the fewest modelled cycles within the budget, then the least code; with no budget, every layer on a
               fastest candidate
    balanced   the least code whose modelled cycles are within BALANCED_SLACK (5 %) of speed's less MODEL_MARGIN
               (1 %: the model's error against the firmware, so that the firmware's ratio stays within the 5 %;
               balanced_ok; issue 50 item 2's goal: code near the shared kernels, cycles within 5 % of the fastest
               set's), then the fewest cycles; so size <= balanced <= speed in bytes

then the tie-break: the least vector of candidate indices, layers in _order (_Exact.canonical). The greedy ladder this
replaced (moves by cycles saved per byte) missed optima: vww's balanced 26,537 B where 26,069 B meet the same bound,
and under a budget it stopped at the first rung no move within the budget followed (test_code_budget's
test_exact_where_the_greedy_ladder_was_not, test_a_budget_the_greedy_ratio_got_wrong).

This is the one place a layer's variant is chosen, its own instance included (kernel_variants.instanced only
says which layers may have one), in any of its forms: the full instance (straight runs of its loops), the medium one
or the compact one (kernel_variants.MEDIUM, COMPACT: the same loops rolled, a third to a fifth of the bytes, some
cycles more). A rows-live layer's spread (model_c._spread_rows) is an entry of its own (spread_candidates,
key spread_key(op)): straight code or its table in one shared loop. The modelled cycles are the firmware's: each
candidate's per output value a + b K measured on the board's cycle estimate (variant_costs.json), so the choice's
ratio to the fastest set is the one the firmware runs (test_modelled_cycles_agree_with_the_firmware_on_vww).

Same inputs, same choice: the model is built in the layers' canonical order and the codes' names, the solver runs on
one worker with a fixed seed (SOLVE_SEED) and a deterministic time limit a stage (SOLVE_LIMIT: its own work units, the
same cut-off on every machine), and ties are broken by the last stage, not by the search. Each stage starts from a
feasible hint (the stage before's choice); one that hits the limit unproven keeps the best choice it found (never
worse than the hint), else the hint: the plan is always feasible and deterministic, optimal when proven (every stage
of the zoo's and the MLPerf models' plans is; test_real_plans_are_proven_optimal).
"""

from __future__ import annotations

import dataclasses
import json
import math
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from ..options import CODE_PRESETS, PlanOptions
from ..plan import cpsat
from . import kernel_variants

PRESETS = CODE_PRESETS
DEFAULT_PRESET = PlanOptions().optimize_code
BALANCED_SLACK = 0.05  # balanced: cycles at most 5 % above the fastest set's (issue 50 item 2)
# what balanced leaves of the slack for the model's error: test_modelled_cycles_agree_with_the_firmware_on_vww found
# ResNet-8's firmware 0.004 above its modelled ratio (1.0465 modelled, 1.0504 run) when balanced planned to 5 %
MODEL_MARGIN = 0.01
COMPACT = "compact"  # a CodePlan choice's form of a layer's compact instance (kernel_variants.COMPACT)
MEDIUM = "medium"  # a CodePlan choice's form of a layer's medium instance (kernel_variants.MEDIUM)
ROLLED = (COMPACT, MEDIUM)  # the instance forms modelled against the full one (each its table of variant_costs.json)
# The line of an instance variant_costs.py's SHAPES do not run (bt_rq2's: their K <= 2 C takes the doubled sums'),
# measured on the shapes that do ("own_line"), one per bytes class where measured (bytes_class: the pixels a row of the
# row buffer leaves after its triples, each count its own code; variant_costs.py OWN_SHAPES): ResNet-8's bt_rq2
# instances (ops 1-2, 4, 5, 8, 9) modelled within 0.1 % of their run (with one line for every tail op 5 was 1.020x, op 9
# 1.034x). Off, the doubled instance's gain over its variant (ops 4, 5, 8, 9 1.02-1.06x their run, ops 1-2's medium
# 3.30 M for 2.91 M): ResNet-8's balanced / speed 1.0246 modelled, 1.0453 run. On, 1.0394 modelled, 1.0393 run, but
# the fastest set takes ops 1-2's instance (modelled fastest 15.98 M -> 15.40 M) and balanced, 3.9 % from it, buys ops
# 1-2's medium instance, op 9's compact one and op 0's medium: layer kernels 12,056 -> 20,428 B, ResNet-8's code on
# cortex-m4 19.0 -> 27.0 KiB, 1.45x -> 2.07x CMSIS-NN (benchmarks/code_size.py), past issue 50's 1.5x: the shared KxK
# runs ops 1-2 at 1.05x their instance, which no cheaper code recovers. Off until the KxK closes that gap
# (docs/code-size.md). With the KxK's strips widened from a stepped source and its lone pixel in asm (ops 1-2 run
# 2.978 -> 2.932 M, 1.02x their instance): off, the default (every 3x3 on the KxK) models 16,069,334 cycles, 1.043x
# the instances' fastest set (1.053x before), but on, balanced plans to 4 % of it (16,019,479: MODEL_MARGIN), ~50 K
# short, so it still buys op 9's compact instance (2,640 B; 15,993,654, 1.038x): ResNet-8 22.0 KiB, 1.68x CMSIS-NN.
INSTANCE_OWN_LINES = False
SOLVE_SEED = 0  # CP-SAT's random seed (one worker): the same search every time
SOLVE_LIMIT = 10.0  # CP-SAT's deterministic time per solve (its own work units, not seconds: the same cut-off every run)


def instance_macro(macro: str, form) -> str:
    """The INSTANCES macro of a layer's own instance in `form` (a CodePlan choice's second item: True the full one,
    COMPACT, MEDIUM its kernel_variants.COMPACT, MEDIUM macro; model.c's layers and fused tile kernels)."""
    return {COMPACT: kernel_variants.COMPACT, MEDIUM: kernel_variants.MEDIUM}.get(form, {}).get(macro, macro)


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One way to run a layer: `variant` (the function model.c calls, or its instance), `code` the name of
    the code it needs (layers naming the same code share it), `bytes` that code's size, `cycles` the
    layer's modelled cycles with it; compact: the layer's compact instance of variant (kernel_variants.COMPACT), medium
    its medium one (kernel_variants.MEDIUM); own: bytes the candidate adds of its own beside its code, counted for each
    layer that takes it (a rows-live spread's table beside the shared loop, spread_candidates); shares: ((code, bytes),
    ...) the other codes it links, each counted once however many chosen candidates name it (a depthwise path's helpers
    another path calls too: dw_q4s, bt_dw_widen4, dw_chan4_q4; _dw_codes)."""

    variant: str
    code: str
    bytes: int
    cycles: int
    compact: bool = False
    medium: bool = False
    own: int = 0
    shares: tuple = ()

    @property
    def codes(self) -> tuple:
        """((code, bytes), ...): its code and every code it shares."""
        return ((self.code, self.bytes),) + tuple(self.shares)

    @property
    def links(self) -> int:
        """The bytes it links: its code's, its own and those of the codes it shares."""
        return self.bytes + self.own + sum(b for _, b in self.shares)

    @property
    def form(self):
        """A CodePlan choice's second item: False (the variant), True (its own instance), COMPACT or MEDIUM."""
        return COMPACT if self.compact else MEDIUM if self.medium else self.code != self.variant


class OverBudget(ValueError):
    """Even the least code is over the budget: args (least bytes, budget)."""


def _total(choice: dict, layers: dict) -> tuple:
    """(bytes of the distinct codes chosen, cycles) of a choice {layer: candidate index}: a code counted once, at the
    most bytes any chosen candidate naming it gives it (a shared variant measured per layer class: riscv's
    bt_conv_s8_general, 4,704 B on a 1x1, 4,160 B on a KxK)."""
    codes: dict = {}
    cycles = own = 0
    for k, i in choice.items():
        c = layers[k][i]
        for code, b in c.codes:
            codes[code] = max(codes.get(code, 0), b)
        cycles += c.cycles
        own += c.own
    return sum(codes.values()) + own, cycles


def _order(k) -> tuple:
    """The canonical order of layer keys (op indices; any keys a test gives): the model is built in it, whatever the
    dict's order."""
    return (type(k).__name__, k)


class _Exact:
    """The CP-SAT model of one choice (the module doc): x[layer][i] (exactly one a layer), per code a boolean per
    distinct byte count its candidates give it (set when a chosen candidate naming the code has at least that many
    bytes, clear otherwise: bytes the most any chosen candidate gives it), bytes and cycles their sums. minimize()
    solves for one objective from a feasible hint and bounds it by what it found, so that stages in a row are
    lexicographic; canonical() the last stages: the least vector of candidate indices, layers in _order."""

    def __init__(self, layers: dict):
        self.keys = sorted(layers, key=_order)
        cp_model = self.cp = cpsat.load()  # OR-Tools, loaded on first use (plan/cpsat.py: without pandas)
        m = self.m = cp_model.CpModel()
        self.x = {k: [m.new_bool_var(f"x{n}_{i}") for i in range(len(layers[k]))] for n, k in enumerate(self.keys)}
        naming: dict = {}
        for k in self.keys:
            m.add_exactly_one(self.x[k])
            for i, c in enumerate(layers[k]):
                for code, b in c.codes:
                    naming.setdefault(code, []).append((b, self.x[k][i]))
        weights, ys = [], []
        for code in sorted(naming):
            below = 0
            for level in sorted({b for b, _ in naming[code]}):
                users = [v for b, v in naming[code] if b >= level]
                y = m.new_bool_var(f"y{len(ys)}")
                for v in users:
                    m.add_implication(v, y)
                m.add_bool_or(users).only_enforce_if(y)
                weights.append(level - below)
                ys.append(y)
                below = level
        xs = [v for k in self.keys for v in self.x[k]]
        ys += xs
        weights += [c.own for k in self.keys for c in layers[k]]  # each chosen candidate's own bytes
        self.exprs = {"bytes": (cp_model.LinearExpr.weighted_sum(ys, weights), lambda ch: _total(ch, layers)[0]),
                      "cycles": (cp_model.LinearExpr.weighted_sum(xs, [c.cycles for k in self.keys for c in layers[k]]),
                                 lambda ch: _total(ch, layers)[1])}
        self.solves = []  # (objective, status name, wall seconds) of each solve

    def bound(self, what: str, most: int) -> None:
        self.m.add(self.exprs[what][0] <= most)

    def minimize(self, what: str, hint: dict, keep: bool = True) -> tuple:
        """(choice, its value) of the least `what`: the solver's, proven optimal within SOLVE_LIMIT, else the better of
        its best and the hint (feasible by construction: every stage's hint is the stage before's choice); then (keep)
        bounded by it for the stages after."""
        m = self.m
        m.clear_hints()
        for k in self.keys:
            for i, v in enumerate(self.x[k]):
                m.add_hint(v, hint[k] == i)
        m.minimize(self.exprs[what][0])
        cp_model = self.cp
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = SOLVE_SEED
        solver.parameters.max_deterministic_time = SOLVE_LIMIT
        solver.parameters.linearization_level = 2  # the LP of every constraint: mbv2-w0.35's balanced 21 s -> 0.2 s
        status = solver.solve(m)
        self.solves.append((what, solver.status_name(status), solver.wall_time))
        value = self.exprs[what][1]
        choice = dict(hint)  # UNKNOWN within the limit: the hint (INFEASIBLE cannot be: it meets every bound so far)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            found = {k: next(i for i, v in enumerate(self.x[k]) if solver.boolean_value(v)) for k in self.keys}
            if status == cp_model.OPTIMAL or value(found) < value(choice):
                choice = found
        got = value(choice)
        if keep:
            self.bound(what, got)
        return choice, got

    def canonical(self, choice: dict) -> dict:
        """Among the choices the bounds so far allow, the least vector of candidate indices (layers in _order): the
        tie-break, whatever the solver's search. Solved a chunk of layers at a time, each chunk's vector one integer
        (index digits in base the most candidates a layer has, below 2^48: int64 and exact in a double)."""
        base = 1 + max(len(self.x[k]) for k in self.keys)
        per = max(1, int(48 / math.log2(base)))
        for n in range(0, len(self.keys), per):
            chunk = self.keys[n:n + per]
            place = {k: base ** (len(chunk) - 1 - j) for j, k in enumerate(chunk)}
            expr = self.cp.LinearExpr.weighted_sum([v for k in chunk for v in self.x[k]],
                                                    [place[k] * i for k in chunk for i in range(len(self.x[k]))])
            name = f"tie {n // per}"
            self.exprs[name] = (expr, lambda ch, chunk=chunk, place=place: sum(place[k] * ch[k] for k in chunk))
            choice, _ = self.minimize(name, choice)
        return choice


def _undominated(layers: dict) -> dict:
    """{layer: the indices of its candidates that may be in an optimum}: a code X is dropped where another code Y takes
    no more bytes (Y's most against X's least) and every layer naming X offers Y at no more cycles, one of the two
    strictly fewer: moving X's layers onto Y then takes fewer bytes or fewer cycles and no more of the other, so
    under every preset, budget and bound no choice calling X is optimal (nor one of the ties the last stage breaks).
    Until none is dropped (a strict order: what dominates a dropped code stays or is dropped for a third that stays).
    A code with a candidate of own bytes (Candidate.own: they count per layer) neither drops nor is dropped. A candidate
    that shares codes (Candidate.shares: a depthwise path's symbols) gives its code as most bytes all it names (what
    moving onto it may add) and as least its code's and those of the shared codes no other code's candidate names
    (what moving off it frees for sure)."""
    keep = {k: list(range(len(cs))) for k, cs in layers.items()}
    while True:
        users: dict = {}  # code -> {layer: its candidates' fewest cycles naming the code}
        lo: dict = {}
        hi: dict = {}
        namers: dict = {}  # shared code -> the codes whose candidates name it
        for k, idx in keep.items():
            for i in idx:
                for n, _ in layers[k][i].shares:
                    namers.setdefault(n, set()).add(layers[k][i].code)
        for k, idx in keep.items():
            for i in idx:
                c = layers[k][i]
                u = users.setdefault(c.code, {})
                u[k] = min(u.get(k, c.cycles), c.cycles)
                most = c.bytes + sum(b for _, b in c.shares)
                least = c.bytes + sum(b for n, b in c.shares if namers[n] == {c.code})
                lo[c.code], hi[c.code] = min(lo.get(c.code, least), least), max(hi.get(c.code, most), most)
        offered = {k: {layers[k][i].code for i in idx} for k, idx in keep.items()}
        owning = {layers[k][i].code for k, idx in keep.items() for i in idx if layers[k][i].own}
        gone = set()
        for x in sorted(set(users) - owning):
            ys = set.intersection(*(offered[k] for k in users[x])) - {x} - owning
            for y in sorted(ys):
                if hi[y] > lo[x] or any(users[y][k] > cy for k, cy in users[x].items()):
                    continue
                if hi[y] < lo[x] or any(users[y][k] < cy for k, cy in users[x].items()):
                    gone.add(x)
                    break
        if not gone:
            return keep
        keep = {k: [i for i in idx if layers[k][i].code not in gone] for k, idx in keep.items()}


def _least(layers: dict, key) -> dict:
    """Each layer on its candidate least by key(candidate) (ties: the first): a stage's first hint."""
    return {k: min(range(len(cs)), key=lambda i, cs=cs: (key(cs[i]), i)) for k, cs in layers.items()}


def balanced_bound(fastest: int, fixed: int = 0) -> int:
    """The most cycles balanced_ok allows against the fastest set's `fastest` (fixed: balanced_ok's)."""
    most = int((fastest + fixed) * (1 + BALANCED_SLACK - MODEL_MARGIN)) - fixed
    while not balanced_ok(most, fastest, fixed):
        most -= 1
    while balanced_ok(most + 1, fastest, fixed):
        most += 1
    return most


def optimum(layers: dict, preset: str = DEFAULT_PRESET, budget: int | None = None, fixed: int = 0) -> tuple:
    """(choice {layer: candidate index}, bytes, cycles) of the preset (the module doc) within budget (None: none),
    exact: lexicographic CP-SAT solves, each bounding the next (_Exact). layers: {layer key: [Candidate, ...]} (every
    list non-empty); fixed: balanced_ok's. OverBudget when even the least code is over the budget."""
    if preset not in PRESETS:
        raise ValueError(f"unknown code preset {preset!r} (known: {', '.join(PRESETS)})")
    if not layers:
        return {}, 0, 0
    full = layers
    kept = _undominated(full)
    layers = {k: [full[k][i] for i in kept[k]] for k in full}
    ex = _Exact(layers)
    choice = _least(layers, lambda c: (c.bytes, c.cycles))
    if preset == "size" or budget is not None:
        choice, size = ex.minimize("bytes", choice, keep=preset == "size")
        if budget is not None and size > budget:
            raise OverBudget(size, budget)
        if budget is not None:
            ex.bound("bytes", budget)
    if preset != "size":
        hint = choice if budget is not None else _least(layers, lambda c: (c.cycles, c.bytes))
        choice, fastest = ex.minimize("cycles", hint, keep=preset == "speed")
        if preset == "balanced":
            ex.bound("cycles", balanced_bound(fastest, fixed))
        choice, _ = ex.minimize("bytes", choice)
    if preset != "speed":
        choice, _ = ex.minimize("cycles", choice)
    choice = {k: kept[k][i] for k, i in ex.canonical(choice).items()}
    return (choice, *_total(choice, full))


def choose(layers: dict, preset: str = DEFAULT_PRESET, budget: int | None = None, fixed: int = 0) -> tuple:
    """(choice {layer: Candidate}, bytes, cycles) of the preset (PRESETS) within budget (None: no budget): optimum's."""
    choice, size, cycles = optimum(layers, preset, budget, fixed)
    return {k: layers[k][i] for k, i in choice.items()}, size, cycles


def _measured(variants) -> dict | None:
    """variant_costs.json's figures for kernel set `variants` (kernel_variants.for_board), None without any."""
    return costs().get(KERNEL_SETS.get(variants[0]) if variants else None)


def balanced_ok(cycles: int, fastest: int, fixed: int = 0) -> bool:
    """Is a choice of `cycles` within balanced's slack of the fastest choice's? Counted over the whole model: fixed is the
    modelled cycles of the layers whose code the budget does not choose (a fused plan's blocks, fused_c
    block_cycles), the same under every choice. Planned to BALANCED_SLACK less MODEL_MARGIN."""
    return cycles + fixed <= (fastest + fixed) * (1 + BALANCED_SLACK - MODEL_MARGIN)


def layer_cycles(g, op, kind: str, layer: dict, variant: str, instance: bool, variants) -> int | None:
    """Modelled cycles of layer op run whole by `variant` (its own instance: instance) on kernel set `variants`
    (kernel_variants.for_board), as a candidate's (work() by the measured a + b K); None when not measured."""
    measured = _measured(variants)
    if measured is None:
        return None
    outputs, k, ch = work(kind, layer, g, op)
    table = instance if instance in ROLLED else "instances" if instance else "variants"
    depthwise = kind == "depthwise_m1"  # of its fastest path's class, on its family's measured row (_candidates)
    cls = budget_class(g, op, measured, kernel_variants.depthwise_candidates(layer)[0] if depthwise else None)
    row = _dw_row(measured, variant) if depthwise else variant
    cost = _cost(measured, table, row, cls, k, ch, bytes_class(g, op, cls, ch), not depthwise and strided(op))
    return None if cost is None else round(outputs * cost[1])


# -- the layers of a model.c -------------------------------------------------------------------------
# What a variant costs, measured (never typed): variant_costs.json, written by
# `python3 benchmarks/variant_costs.py` (its "command" and "toolchain" entries say how): per kernel set, per
# variant its code bytes (the function's symbol in a linked firmware.elf at the board's flags) and its modelled
# cycles per MAC by layer class (the run report's cycle estimate, firmware/cycles.py, of a one-layer model per
# class in QEMU), and the same for a layer's own instance of an INSTANCES variant.
COSTS = Path(__file__).with_name("variant_costs.json")
KERNEL_SETS = {"BT_VARIANTS_CORTEX_M": "cortex-m", "BT_VARIANTS_RISCV": "riscv"}  # kernel_variants.TABLES' guards


@dataclasses.dataclass(frozen=True)
class CodeGoal:
    """What the code step is asked for: optimize_code (PRESETS) and code_budget (bytes of the layers' kernel
    code, None: none)."""

    preset: str = DEFAULT_PRESET
    budget: int | None = None
    from_part: bool = False  # the budget is the part's flash less the weights and a reserve (steps/code.py)


@dataclasses.dataclass(frozen=True)
class CodePlan:
    """The choice model.c is generated with: choice and fastest {op index: (variant, own instance: False, True or
    COMPACT)}, rows
    (per layer: op, variant, code, bytes, cycles; the report's), bytes (the distinct codes') and cycles, and
    the fastest set's and the smallest's bytes and cycles (the report's context)."""

    choice: dict
    fastest: dict
    rows: tuple = ()
    preset: str = DEFAULT_PRESET
    budget: int | None = None
    bytes: int = 0
    cycles: int = 0
    fastest_cycles: int = 0
    fastest_bytes: int = 0
    offers: dict = dataclasses.field(default_factory=dict)  # Emitter.offers: what each layer might call
    compact_ops: frozenset = frozenset()  # the layers offered their compact or medium instance too (plan's compact)

    def to_json(self) -> dict:
        return {"preset": self.preset, "budget": self.budget, "bytes": self.bytes, "cycles": self.cycles,
                "fastest_bytes": self.fastest_bytes, "fastest_cycles": self.fastest_cycles,
                "layers": [dict(r) for r in self.rows],
                "costs": "buildtool/codegen/variant_costs.json (python3 benchmarks/variant_costs.py)"}

    def lines(self) -> list:
        return lines(self.to_json()) if self.rows else []


def lines(cp: dict) -> list:
    """The text form of a code plan (CodePlan.to_json, firmware.json's "code_plan"): its total, then one line
    per layer: variant, bytes (shared: counted once however many layers call it), modelled cycles."""
    budget = "" if cp["budget"] is None else f", budget {cp['budget']:,} B"
    out = [f"code plan ({cp['preset']}{budget}): layer kernels {cp['bytes']:,} B, modelled {cp['cycles']:,} cycles "
           f"(fastest set: {cp['fastest_bytes']:,} B, {cp['fastest_cycles']:,} cycles)"]
    for r in cp["layers"]:
        kind = (" (compact instance)" if r.get("compact") else " (medium instance)" if r.get("medium")
                else " (own instance)" if r["instance"] else "")
        name = r["variant"] + kind
        out.append(f"  op {r['op']:3d} {r['opcode']:18s} {name:44s} {r['bytes']:>7,} B"
                   f"{' shared' if r['shared'] else '       '} {r['cycles']:>12,} cycles")
    return out


class Sources(tuple):
    """(model_c, model_h) as model_c.generate returns them, with the code plan they were generated with."""

    def __new__(cls, model_c: str, model_h: str, code_plan: CodePlan | None = None):
        s = super().__new__(cls, (model_c, model_h))
        s.code_plan = code_plan
        return s


_costs_cache: dict = {}


def costs() -> dict:
    """variant_costs.json's kernel sets ({} when absent)."""
    if "sets" not in _costs_cache:
        _costs_cache["sets"] = json.loads(COSTS.read_text())["sets"] if COSTS.exists() else {}
    return _costs_cache["sets"]


# What a rows-live layer's spread costs (model_c._spread_rows), measured: spread_costs.json, written by
# `python3 benchmarks/spread_costs.py`: per kernel set the shared loop's bytes, the straight code's bytes a step, and
# the cycles the table adds over the straight code, a pixel-step and a step.
SPREAD_COSTS = Path(__file__).with_name("spread_costs.json")
SPREAD_LOOP = "bt_spread_rows"  # the shared loop's function (templates/spread_rows.c.in), a spread candidate's code


def spread_key(op: int) -> tuple:
    """The layers dict's key (and a CodePlan choice's) of layer op's spread."""
    return ("spread", op)


def spread_costs() -> dict:
    """spread_costs.json's kernel sets ({} when absent)."""
    if "spreads" not in _costs_cache:
        _costs_cache["spreads"] = json.loads(SPREAD_COSTS.read_text())["sets"] if SPREAD_COSTS.exists() else {}
    return _costs_cache["spreads"]


def spread_candidates(spreads: dict, variants) -> dict:
    """The layers dict's entries of the rows-live layers' spreads (Emitter.spreads: op -> (pixels, steps a pixel,
    table bytes)) on kernel set `variants`, {spread_key(op): [straight, table]}, none without measured costs:
    straight its function of its own (model_c._straight_spread: steps x the straight bytes a step, 0 cycles: the
    candidates' cycles are what each adds over the straight code), table the shared loop (SPREAD_LOOP, counted once)
    with the layer's table its own bytes (Candidate.own) and the measured cycles a pixel-step and a step."""
    m = spread_costs().get(KERNEL_SETS.get(variants[0]) if variants else None)
    if not m or not spreads:
        return {}
    return {spread_key(i): [Candidate(f"op{i}_spread", f"op{i}_spread", round(steps * m["straight_bytes"]), 0),
                            Candidate(SPREAD_LOOP, SPREAD_LOOP, m["loop_bytes"],
                                      round(steps * (pixels * m["pixel_step"] + m["step"])), own=table)]
            for i, (pixels, steps, table) in sorted(spreads.items())}


def layer_class(g, op) -> str:
    """conv 1x1, conv KxK, depthwise or FC (firmware/op_cost.py's classes)."""
    if op.opcode == "CONV_2D":
        kh, kw = g.tensors[op.inputs[1]].shape[1:3]
        return "conv 1x1" if (kh, kw) == (1, 1) else "conv KxK"
    return {"DEPTHWISE_CONV_2D": "depthwise"}.get(op.opcode, "FC")


def budget_class(g, op, measured: dict | None, path: str | None = None) -> str:
    """layer_class, except that a convolution conv_stem.h's path may run as the layer's own instance
    (kernel_variants.stem: 1-3 input channels, a KxK filter) is "conv stem": its instance widens the weights once a
    call, so its cycles are not a KxK layer's (ResNet-8's stem: 0.75 M est. cycles as its instance, 1.7 M on a
    shared variant, which the KxK line modelled at 1.1 M); "conv KxK" where the set `measured` has no stem figures.
    A depthwise layer whose fastest path is `path` (kernel_variants "depthwise_m1") is of that path's class,
    "depthwise " + kernel_variants.dw_family(path) ("depthwise rows_q4"): each path's cycles a value are their own (a
    6x6 map's planes, a 48x48's rows), and so are the shared paths' on the maps each fastest path takes; a layer whose
    bt_dw_rows_q4_RL path calls its full row entry (dw_entry: strips not whole quads, or the map transposed) is of that
    class + DW_FULL where the set measured it (variant_costs.py SHAPES: kws's 25x5 map, transposed, strips of 25 outputs,
    ran 1.08x the line of bt_dw_rows_q4e_32's 24x24 map, and the shared paths on it their own figures). A 1x1 over more
    than BT_COL_MAX input channels is WIDE where the set measured that class."""
    cls = layer_class(g, op)
    if cls == "conv 1x1" and kernel_variants._patch(kernel_variants.op_fields(g, op)) > kernel_variants.BT_COL_MAX:
        # over a column's values (kernel_variants.wide_1x1's K): bt_conv_s8_1x1_wide or bt_conv_s8_direct, measured
        # on such layers where the set has them (variant_costs.py SHAPES), not on the 1x1 line of K 32 and 256
        has = measured is not None and any(WIDE in _fits(r) for r in measured.get("variants", {}).values())
        return WIDE if has else cls
    if cls == "depthwise" and path:
        cls = f"{cls} {kernel_variants.dw_family(path)}"
        full = cls + DW_FULL  # on the full row entry: a class of its own where measured
        if path.startswith("bt_dw_rows_q4_") and dw_entry(g, op, path) == path and measured is not None and any(
                full in _fits(r) for r in measured.get("variants", {}).values()):
            return full
        return cls
    if cls != "conv KxK" or not kernel_variants.stem_op(g, op):
        return cls
    has_stem = measured is not None and any("conv stem" in _fits(r) for t in ("variants", "instances")
                                            for r in measured.get(t, {}).values())
    return "conv stem" if has_stem else cls


WIDE = "conv 1x1 wide"  # budget_class's class of a 1x1 over more than BT_COL_MAX input channels
DW_FULL = " full"  # budget_class's mark of a depthwise layer on its rows_q4 path's full row entry (dw_entry)
ODD_S = ", odd S"  # bytes_class's mark of a stem whose window rows start an odd count of values apart
ODD_C = ", odd C"  # bytes_class's mark of a 1x1 of an odd count of (live) output channels
PM3_T = 8  # cortex-m/conv_pm.h BT_PM3_T: triples of pixels widened at once on the 3-pixel path (a block)
TAIL = ", tail "  # bytes_class's mark of the pixels a row leaves after its triples (out.w % 3)


def strided(op) -> bool:
    """Does conv op step over input pixels (a stride over 1)? A strided 1x1 runs its pixels an output row at a time,
    not the whole map as one row: its cycles are its line's times the measured "strided" factor (_cost)."""
    return op.options.get("stride_h", 1) > 1 or op.options.get("stride_w", 1) > 1


def bytes_class(g, op, cls: str, ch: int | None = None) -> str:
    """The class a layer's own code's bytes are measured under (variant_costs.json "points"; benchmarks/variant_costs.py
    BYTES_SHAPES): the code folds the layer's geometry, so its bytes follow the path conv_pm.h takes and the pixels a
    row leaves after its triples, not K alone. cls, and:
      conv stem  ODD_S where its pixels' window rows start stride_w c_in values apart, an odd count (ResNet-8's 3x3 of
                 stride 1: a second set of buffer rows and two triples' asm a row, conv_stem.h, 1.4x the bytes of an
                 even one's, vww's and tiny's stride 2); then TAIL + out.w % 3
      conv KxK   ", rows" on the row buffer (kernel_variants._pmr) then TAIL + out.w % 3 (each count of pixels left
                 after a row's triples its own code: ResNet-8's op 4, 32x32x16 -> 16x16x32, K 144, linked 11,424 B,
                 charged 7,896, the K 144 point of a 15-wide map's); ", loop3" on bt_pm_loop3 (K below BT_PM_L3_KMAX:
                 kws's stem of 10x4 over one channel, 3,472 B linked in its compact form, charged 2,332, a row
                 buffer's at K 72)
      conv 1x1   ", strided" where strided(op) (its pixels an output row at a time); else ", one block" where its map
                 is one block of triples (at most PM3_T: gcc folds the blocks' loop; vww's 3x3x128 -> 256 layer links
                 6,002 B, its 6x6x128 -> 128 ones 7.5-8.2 KB, on the same K); else ODD_C where its (live) output
                 channels ch (the tensor's where not given: work()'s C) are odd (conv_pm.h's odd last channel, its
                 triples in C: vww's rows-live 6x6 layers of 107, 57, 19 and 27 live channels link their compact form
                 in 3,476-3,712 B, charged 2,880-2,888 as 128 channels, 0.78-0.83x)
    _bytes falls back to the points of the nearest tail measured on the same path (_near_tail), then of every class
    of cls."""
    if cls == "conv 1x1":
        if strided(op):
            return cls + ", strided"
        n, h, w, c = (int(d) for d in g.tensors[op.outputs[0]].shape)
        if h * w <= 3 * PM3_T:
            return cls + ", one block"
        return cls + ODD_C if (c if ch is None else ch) % 2 else cls
    if cls not in ("conv stem", "conv KxK"):
        return cls
    tail = f"{TAIL}{int(g.tensors[op.outputs[0]].shape[2]) % 3}"
    if cls == "conv stem":
        odd = op.options.get("stride_w", 1) * int(g.tensors[op.inputs[0]].shape[3]) % 2
        return (cls + ODD_S if odd else cls) + tail
    f = kernel_variants.op_fields(g, op)
    if kernel_variants._pmr(f):
        return cls + ", rows" + tail
    return cls + ", loop3" if kernel_variants._patch(f) < kernel_variants.BT_PM_L3_KMAX else cls


def work(kind: str, layer: dict, g, op) -> tuple:
    """(outputs, K, C) of a layer model.c calls a variant for: the output values it computes (pixels by live
    channels: a rows-live layer's dead rows cost no MAC), the values each reads (its patch; an FC's inputs) and the
    (live) channels of a pixel (an FC's outputs); a depthwise layer's K is its filter's taps (an output reads its
    channel's window alone). The candidates' modelled cycles are outputs x (a + b K), + c K / C
    where measured (a pixel's patch widened once for its C channels), a, b, c measured per variant
    (variant_costs.json)."""
    if kind.startswith("fully_connected"):
        out = 1
        for d in g.tensors[op.outputs[0]].shape:
            out *= int(d)
        return out, int(layer["n_in"]), out
    o, ch = layer["out"], len(layer["multipliers"])
    taps = layer["kh"] * layer["kw"]
    return o["h"] * o["w"] * ch, taps if kind.startswith("depthwise") else taps * layer["in"]["c"], ch


def _candidates(g, op, offer, shape: tuple, measured: dict, compact: bool = False,
                identity: str | None = None, full: frozenset = frozenset()) -> list | None:
    """The layer's candidates (the INSTANCES variant's own instance first when it may have one, then, where compact
    (Emitter.compact_ops) and measured, its compact instance (not a stem's: kernel_variants.compact_form) and its
    medium one where it is other code (kernel_variants.medium_form)), None when a variant has no measured figures for
    the layer's class (measured None: no figures, every cost 0). shape: work(): (outputs, K, C). identity: its own
    instance's kernel_variants.instance_identity where model.c shares one function among the layers of an identity
    (Emitter.instance), the instances' code name (one code for them all, counted once), else op<i>_conv. full: the
    bt_dw_rows_q4_RL paths whose layers all call the full row entry (_full_rows)."""
    kind, names, inst = offer
    depthwise = kind == "depthwise_m1"
    cls = budget_class(g, op, measured, names[0] if depthwise else None)
    forms = [] if not (compact and inst) else [f for f, other in (
        (COMPACT, not kernel_variants.stem_op(g, op)), (MEDIUM, kernel_variants.medium_op(inst, g, op))) if other]
    out = []
    own = identity or f"op{op.index}_conv"
    for name, table, code in ([(inst, "instances", own)] if inst else []) + \
            [(inst, f, f"{own} {f}") for f in forms] + \
            [(n, "variants", n) for n in names]:
        row = _dw_row(measured, name) if depthwise and measured is not None else name
        cost = (0, 0) if measured is None else _cost(measured, table, row, cls, shape[1], shape[2],
                                                      bytes_class(g, op, cls, shape[2]), not depthwise and strided(op))
        if cost is None and table == "variants" and out and name in kernel_variants.CODEGEN_ONLY:
            if not want_forced(name):  # a code-generation-only variant not measured on the class: not offered
                continue
            cost = (0, 0)  # (forced: offered to be measured)
        if cost is None and (table in ROLLED or depthwise):  # not measured: offered only to be measured (forcing)
            if not _forced:
                if table in ROLLED or out:  # (a depthwise layer's shared path not measured on its class)
                    continue
                return None
            cost = (0, 0)
        if cost is None:
            return None
        links = _dw_codes(measured, g, op, name, name in full) if depthwise and measured is not None else None
        size, shares = (0, links) if links else (cost[0], ())
        out.append(Candidate(name, code, size, round(shape[0] * cost[1]), table == "compact", table == "medium",
                             shares=shares))
    return out


SYMBOL = "sym "  # the prefix of a code that is one linked symbol (_dw_codes)


def dw_entry(g, op, name: str) -> str:
    """The function model.c calls for depthwise layer op on path `name` (model_c.depthwise): bt_dw_s2g's
    bt_dw_s2g_N (kernel_variants.dw_s2g_entry), bt_dw_rows_q4_RL's bt_dw_rows_q4e_RL where its strips are whole quads
    (kernel_variants.dw_rows_entry; model_c._dw_rows_entries keeps the full entry for every layer of a row length when
    one needs it: _full_rows), else name."""
    n, h, w, c = (int(d) for d in g.tensors[op.outputs[0]].shape)
    p = {"out": {"h": h, "w": w, "c": c}, "stride_h": op.options.get("stride_h", 1),
         "stride_w": op.options.get("stride_w", 1)}
    if name == "bt_dw_s2g":
        return kernel_variants.dw_s2g_entry(p)
    if name.startswith("bt_dw_rows_q4_"):
        return kernel_variants.dw_rows_entry(p, int(name.rsplit("_", 1)[1]))
    return name


def _full_rows(g, ops: dict, offers: dict) -> frozenset:
    """The bt_dw_rows_q4_RL paths some layer offering it first calls the full row entry of (dw_entry: its strips not
    whole quads): model_c._dw_rows_entries then keeps the full entry for every layer of that row length, no firmware
    links both."""
    return frozenset(names[0] for i, (kind, names, _) in offers.items() if kind == "depthwise_m1" and names
                     and names[0].startswith("bt_dw_rows_q4_") and dw_entry(g, ops[i], names[0]) == names[0])


def _dw_codes(measured: dict, g, op, name: str, full: bool = False) -> tuple:
    """((code, bytes), ...) of the symbols the firmware links for depthwise layer op on path `name`: the measured
    symbols of the function model.c calls (dw_entry; variant_costs.json "entries", variant_costs.py: the symbols of its
    firmware no other path's holds), each a code of its own (SYMBOL + its name), so that a helper several paths call
    (dw_q4s, bt_dw_widen4, dw_chan4_q4) counts once; () where none is measured. An entry not measured takes the
    measured one of its family and form (bt_dw_rows_q4e_16: bt_dw_rows_q4e_32's), its symbols' row length or N renamed
    to its own. full: the layer calls the full row entry whatever its own strips (_full_rows)."""
    entries = measured.get("entries", {})
    entry = name if full else dw_entry(g, op, name)
    syms = entries.get(entry, {}).get("symbols")
    if syms is None:
        stem, _, tail = entry.rpartition("_")
        like = [e for e in sorted(entries) if tail.isdigit() and e.rpartition("_")[0] == stem]
        if not like:
            return ()
        old = like[0].rpartition("_")[2]
        syms = {(k[:-len(old)] + tail if k.endswith("_" + old) else k): v
                for k, v in entries[like[0]]["symbols"].items()}
    return tuple((SYMBOL + k, v) for k, v in sorted(syms.items()))


def _dw_row(measured: dict, name: str) -> str:
    """The measured row of depthwise path `name`: its own, else (a row length not measured: bt_dw_rows_q4_16 where
    variant_costs.py measured bt_dw_rows_q4_32) the first by name of its family (kernel_variants.dw_family) and bt_rq2
    form; its own name where none is measured."""
    rows = measured.get("variants", {})
    if name in rows:
        return name
    same = [n for n in sorted(rows) if kernel_variants.dw_family(n) == kernel_variants.dw_family(name)
            and n.endswith("_rq2") == name.endswith("_rq2") and n.startswith("bt_dw")]
    return same[0] if same else name


def _per_output(fit: list, k: int, ch: int) -> float:
    """A fit's cycles per output value at K k, C ch: a + b K, + c K / C where measured (variant_costs.py FIT_SHAPES)."""
    return fit[0] + fit[1] * k + (fit[2] * k / ch if len(fit) > 2 and ch > 0 else 0.0)


def _fits(row: dict | None) -> dict:
    """A measured row's {class: [a, b]} (a file of cycles per MAC alone, before the fits: [0, per MAC])."""
    if row is None:
        return {}
    return row.get("fit") or {c: [0.0, v] for c, v in row.get("per_mac", {}).items()}


def _points(measured: dict, table: str, cls: str, key: str, like: bool = False) -> list:
    """The [K, value] points under `key` ("points": bytes, "ratio") of every row of `table` measured on class cls (like:
    on cls or any of its bytes classes, bytes_class), sorted: a layer's own instances of the variants are the same loops
    (kernel_variants.INSTANCES' one macro), measured on the shapes each variant runs (ResNet-8's and tiny's 3x3 layers
    take bt_conv_s8_pm_rq2_ssat's, vww's stem bt_conv_s8_pm_rq2m_ssat's)."""
    return sorted(pt for _, r in sorted(measured.get(table, {}).items()) for c, pts in sorted(r.get(key, {}).items())
                  if c == cls or (like and c.startswith(cls + ",")) for pt in pts)


def _bytes(measured: dict, table: str, row: dict, cls: str, k: int, pk: str | None = None) -> int:
    """The code bytes of a layer of class cls whose outputs read k values each on `table`'s measured `row`: a layer's own
    code (its bytes measured at several K, "points": its straight runs grow with K), linear in k between the points,
    the nearest's beyond, not the class's largest; else the row's class's (its largest of any class where not measured
    per class); pk: the layer's bytes_class, whose points where measured, else cls's."""
    points = [] if table == "variants" else (_points(measured, table, pk, "points") if pk else []) or \
        _points(measured, table, _near_tail(measured, table, pk), "points") or \
        _points(measured, table, cls, "points", True)
    if points:
        return round(_between(points, k))
    return row.get("class_bytes", {}).get(cls, row["bytes"])


def _near_tail(measured: dict, table: str, pk: str | None) -> str:
    """The measured bytes class of `table` nearest to pk (bytes_class) where pk has none: the same path (and parity),
    the nearest tail, the longer on a tie (a tail of 2 pixels after a row's triples is more code than one of 1: a stem
    of even S with 2 pixels left is charged one with 1 left, 3,974 B at K 27, linked 3,966); "" where none."""
    if not pk or TAIL not in pk:
        return ""
    head, tail = pk.split(TAIL)
    have = {c for r in measured.get(table, {}).values() for c in r.get("points", {}) if c.split(TAIL)[0] == head
            and TAIL in c}
    return min(have, key=lambda c: (abs(int(c.split(TAIL)[1]) - int(tail)), -int(c.split(TAIL)[1])), default="")


def _cost(measured: dict, table: str, name: str, cls: str, k: int, ch: int = 0, pk: str | None = None,
          stride: bool = False) -> tuple | None:
    """(bytes, cycles per output value) of a variant ("variants"), a layer's own instance of it ("instances") or its
    compact or medium instance ("compact", "medium") on a layer of class cls whose outputs (of ch output channels)
    read k values each (bytes:
    _bytes at k). An instance of a variant not measured as one: the measured instance's bytes, and its variant's cycles
    scaled by what the measured instance saves over its own variant on the class at k (the same loops, the same
    constants folded), None when nothing was measured for the class; where INSTANCE_OWN_LINES, an instance's own line
    instead where measured (variant_costs.json "own_line": its bytes class pk's, else cls's). A compact or medium instance: its instance's
    cycles times the ratio measured between the two forms on the same layers (the "ratio" points of its table's rows,
    _points: [K, form / instance], linear between them, the nearest's beyond; at least 1). stride: the layer is strided
    (strided()): the cycles times the row's measured "strided" factor on the class, where measured (_stride)."""
    m = measured.get(table, {}).get(name)
    if table in ROLLED:
        ratio = _points(measured, table, cls, "ratio")
        full = _cost(measured, "instances", name, cls, k, ch, pk, stride)
        if not ratio or full is None:
            return None
        row = m or next(r for _, r in sorted(measured[table].items()) if cls in r.get("ratio", {}))
        return _bytes(measured, table, row, cls, k, pk), full[1] * max(1.0, _between(ratio, k))
    sk = stride_class(cls, pk)
    if cls in _fits(m):
        return _bytes(measured, table, m, cls, k, pk), _per_output(_fits(m)[cls], k, ch) * _stride(m, sk, k, stride)
    lines = (m or {}).get("own_line", {}) if INSTANCE_OWN_LINES and table == "instances" else {}
    line = lines.get(pk) or lines.get(cls)
    if line:  # its own line, measured on the shapes that run it (variant_costs.py "own_line"), its bytes class's
        # where measured (OWN_SHAPES: the pixels a row leaves after its triples, each count its own code)
        return _bytes(measured, table, m, cls, k, pk), _per_output(line, k, ch) * _stride(m, sk, k, stride)
    own = _fits(measured["variants"].get(name)).get(cls)
    if table != "instances" or own is None:
        return None
    for ref, r in sorted(measured.get("instances", {}).items()):
        base = _fits(measured["variants"].get(ref)).get(cls)
        if cls in _fits(r) and base and _per_output(base, k, ch) > 0:
            gain = _per_output(_fits(r)[cls], k, ch) / _per_output(base, k, ch)
            return (_bytes(measured, table, r, cls, k, pk),
                    _per_output(own, k, ch) * gain * _stride(measured["variants"].get(name), sk, k, stride))
    return None


def stride_class(cls: str, pk: str | None) -> str:
    """The key of a layer's strided factor (variant_costs.json "strided"): its class, a KxK's path (bytes_class pk less
    its tail: ", rows", ", loop3"), the path STRIDE_SHAPES measured it on: ResNet-8's strided 3x3 layers on the row
    buffer, where kws's stem of 10x4 over one channel, strided too, runs bt_pm_loop3 (no factor measured there)."""
    return pk.split(TAIL)[0] if cls == "conv KxK" and pk else cls


def _stride(row: dict | None, cls: str, k: int, stride: bool) -> float:
    """A measured row's factor on a strided layer of stride class cls (stride_class) at K k (variant_costs.py
    STRIDE_SHAPES, OWN_SHAPES: its run over its line, [[K, factor], ...], linear between, the nearest's beyond): a strided
    1x1 measured at K 16, 32 and 64 (ResNet-8's ops 6 and 10: the shared bt_conv_s8_pm_rq2_ssat 1.213x and 1.112x its
    line, the lean 1x1 1.041x and 1.036x; op 10 on that shared pm was modelled 1.091x its run from the K 16 factor
    alone); ResNet-8's strided
    3x3 ones on the row buffer (ops 4, 8) 1.022x and 1.013x their bt_rq2 instance's own line of their bytes class; 1
    where not strided or not measured."""
    pts = (row or {}).get("strided", {}).get(cls) if stride else None
    return _between(pts, k) if pts else 1.0


def _between(points: list, k: int) -> float:
    """The value at k of the [K, value] points (sorted by K): linear between two, the nearest's beyond them."""
    if k <= points[0][0]:
        return points[0][1]
    for (k1, v1), (k2, v2) in zip(points, points[1:]):
        if k <= k2:
            return v1 + (v2 - v1) * (k - k1) / (k2 - k1)
    return points[-1][1]


_forced: list = []


def want_forced(name: str) -> bool:
    """Is variant `name` the code forcing() forces (a variant not measured yet is offered to be measured)?"""
    return bool(_forced) and _forced[-1] == name


@contextmanager
def forcing(code: str):
    """Within this block every layer that may call `code` (a variant, "instance" for the layers' own instances,
    COMPACT, MEDIUM for their compact, medium ones) calls it: benchmarks/variant_costs.py measures each variant so."""
    _forced.append(code)
    try:
        yield
    finally:
        _forced.pop()


def plan(g, offers: dict, variants, goal: CodeGoal | None, shapes: dict | None = None, fixed: int = 0,
         compact: frozenset = frozenset(), identities: dict | None = None, spreads: dict | None = None) -> CodePlan:
    """The code plan of a model.c whose layers offered `offers` (Emitter.offers: each layer on its fastest
    variant, its own instance when it may have one) on a kernel set `variants` (kernel_variants.for_board); shapes:
    Emitter.shapes, each offering layer's (outputs, K, C) (work()); fixed: the modelled cycles of the model's other layers
    (balanced_ok); compact: the layers offered their compact or medium instance too (Emitter.compact_ops; none on a part whose
    instances are compact by its define, kernel_variants.icache_part); identities: Emitter.identities, the layers whose
    own instance model.c shares with the other layers of its identity (_candidates); spreads: Emitter.spreads, the
    rows-live layers whose spread may run from a table (spread_candidates: their own entries, keys spread_key(op))."""
    goal = goal or CodeGoal()
    fastest = {i: (names[0] if inst is None else inst, inst is not None) for i, (_, names, inst) in offers.items()}
    measured = _measured(variants)
    if not offers or (measured is None and not _forced):
        return CodePlan(fastest, fastest, preset=goal.preset, budget=goal.budget, offers=offers, compact_ops=compact)
    ops = {op.index: op for op in g.operators}
    shapes = shapes or {}
    identities = identities or {}
    full = _full_rows(g, ops, offers)
    layers = {i: _candidates(g, ops[i], offers[i], shapes.get(i, (0, 0, 0)), measured, i in compact, identities.get(i),
                             full)
              for i in sorted(offers)}
    layers = {i: cs for i, cs in layers.items() if cs}
    layers.update(spread_candidates(spreads or {}, variants))
    fastest.update({k: (cs[0].variant, False) for k, cs in layers.items() if not isinstance(k, int)})
    if _forced:
        want = _forced[-1]
        match = {"instance": lambda c: c.form is True, COMPACT: lambda c: c.compact,
                 MEDIUM: lambda c: c.medium}.get(want, lambda c: c.code == want)
        layers = {i: [next((c for c in cs if match(c)), cs[0])] for i, cs in layers.items()}
    try:
        picked = optimum(layers, goal.preset, goal.budget, fixed)
    except OverBudget as e:
        if not goal.from_part:
            raise UsageError(f"{g.name}: the code budget (code_budget) is {goal.budget:,} bytes, and the smallest code of "
                             f"its layers' kernels (optimize_code=size) takes {e.args[0]:,} bytes; give a larger "
                             f"code_budget or a part with more flash") from None
        # the part is too small, not the budget: the least code, and the link's fit check says so
        picked = optimum(layers, "size")
    choice, size, cycles = picked
    # the fastest set (no budget): speed's own choice when the budget left it every layer's fewest cycles (then its
    # least bytes at those cycles are the free set's too)
    free = sum(min(c.cycles for c in cs) for cs in layers.values())
    speed = picked if goal.preset == "speed" and cycles == free else optimum(layers, "speed")
    return _code_plan(ops, layers, fastest, {k: layers[k][i] for k, i in choice.items()}, size, cycles,
                      speed, goal, offers, compact)


def _op_of(key) -> int:
    """The layer of a layers dict key (an op index, or spread_key's)."""
    return key if isinstance(key, int) else key[1]


def _code_plan(ops: dict, layers: dict, fastest: dict, picked: dict, size: int, cycles: int, speed: tuple,
               goal: CodeGoal, offers: dict, compact: frozenset) -> CodePlan:
    """The CodePlan of the choice `picked` (its bytes size and modelled cycles), with the fastest set's figures
    (speed: optimum's speed without a budget)."""
    _, fast_bytes, fast_cycles = speed
    users: dict = {}
    for c in picked.values():
        for code in {code for code, _ in c.codes}:
            users[code] = users.get(code, 0) + 1
    choice = {**fastest, **{i: (c.variant, c.form) for i, c in picked.items()}}
    def row(k, c):
        i = _op_of(k)
        return {"op": i, "opcode": ops[i].opcode if isinstance(k, int) else "spread", "variant": c.variant, "instance": c.code != c.variant,
                "compact": c.compact, "medium": c.medium, "bytes": c.links,
                "shared": any(users[code] > 1 for code, _ in c.codes), "codes": dict(c.codes),
                "cycles": c.cycles}
    rows = tuple(row(k, c) for k, c in sorted(picked.items(), key=lambda kc: (_op_of(kc[0]), not isinstance(kc[0], int))))
    return CodePlan(choice, fastest, rows, goal.preset, goal.budget, size, cycles, fast_cycles, fast_bytes, offers,
                    compact)
