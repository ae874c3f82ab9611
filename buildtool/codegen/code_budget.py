"""The code budget (issue 50 item 1): which kernel variant each layer calls, chosen by modelled cycles
saved per byte of code, within a budget of flash bytes.

Pure: no toolchain, no file. Each layer offers candidates (a variant, the code it needs, that code's
bytes, the layer's modelled cycles with it). Code several layers call (a shared variant) is counted
once; a layer's own instance is code of its own, or of every layer of its identity (kernel_variants.instance_identity:
model.c defines one function for them, so its candidates name one code, which a move gives them all at once). The choice climbs one ladder, the same for every
preset: from the smallest code (every layer on the candidate of least bytes, layers then moved onto
code already chosen when that is faster at no cost) it takes, one step at a time, the move that saves
the most modelled cycles per byte it adds (a move: every layer a code makes faster switched to it,
codes no longer called dropped; each rung then rid of a code it calls where its layers' other candidates take fewer
bytes and no more cycles or fewer cycles and no more bytes: _improved), ties broken by the code's name, until no move within the budget saves
cycles. Presets pick a rung of that ladder (the first of equals):

    size       the least code (ties: the fewest cycles)
    speed      the fewest modelled cycles (ties: the least code); with no budget, every layer on its
               fastest candidate
    balanced   the least code among the rungs whose modelled cycles are within BALANCED_SLACK (5 %) of
               speed's less MODEL_MARGIN (1 %: the model's error against the firmware, so that the firmware's
               ratio stays within the 5 %; issue 50 item 2's goal: code near the shared kernels, cycles within
               5 % of the fastest set's); so size <= balanced <= speed in bytes

This is the one place a layer's variant is chosen, its own instance included (kernel_variants.instanced only
says which layers may have one), in either of its forms: the full instance (straight runs of its loops) or the
compact one (kernel_variants.COMPACT: the same loops rolled, a third to a fifth of the bytes, some cycles more).
The modelled cycles are the firmware's: each candidate's per output value a + b K measured on the board's cycle
estimate (variant_costs.json), so the choice's ratio to the fastest set is the one the firmware runs
(test_modelled_cycles_agree_with_the_firmware_on_vww).

Same inputs, same choice: the ladder reads layers and candidates in their given order, and every tie
is broken by name and layer index.
"""

from __future__ import annotations

import dataclasses
import json
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from ..options import CODE_PRESETS, PlanOptions
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


def instance_macro(macro: str, form) -> str:
    """The INSTANCES macro of a layer's own instance in `form` (a CodePlan choice's second item: True the full one,
    COMPACT, MEDIUM its kernel_variants.COMPACT, MEDIUM macro; model.c's layers and fused tile kernels)."""
    return {COMPACT: kernel_variants.COMPACT, MEDIUM: kernel_variants.MEDIUM}.get(form, {}).get(macro, macro)


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One way to run a layer: `variant` (the function model.c calls, or its instance), `code` the name of
    the code it needs (layers naming the same code share it), `bytes` that code's size, `cycles` the
    layer's modelled cycles with it; compact: the layer's compact instance of variant (kernel_variants.COMPACT), medium
    its medium one (kernel_variants.MEDIUM)."""

    variant: str
    code: str
    bytes: int
    cycles: int
    compact: bool = False
    medium: bool = False

    @property
    def form(self):
        """A CodePlan choice's second item: False (the variant), True (its own instance), COMPACT or MEDIUM."""
        return COMPACT if self.compact else MEDIUM if self.medium else self.code != self.variant


class OverBudget(ValueError):
    """Even the least code is over the budget: args (least bytes, budget)."""


def _total(choice: dict, layers: dict) -> tuple:
    """(bytes of the distinct codes chosen, cycles) of a choice {layer: candidate index}."""
    codes = {}
    cycles = 0
    for k, i in choice.items():
        c = layers[k][i]
        codes[c.code] = c.bytes
        cycles += c.cycles
    return sum(codes.values()), cycles


def _smallest(layers: dict) -> dict:
    """The least code: each layer on its candidate of least bytes (ties: fewer cycles, then the first); then, until
    nothing changes, layer by layer a layer moved onto code another layer calls when that frees more bytes than it
    adds (ties: fewer cycles), and code by code (by name) every layer that may call it moved onto it when that takes
    fewer bytes (ties: fewer cycles): one shared variant for all where each layer's own smallest instance is smaller
    than it but all of them together are not (tiny: 2.6 KB against three instances' 6.6 KB)."""
    choice = {k: min(range(len(cs)), key=lambda i, cs=cs: (cs[i].bytes, cs[i].cycles, i)) for k, cs in layers.items()}
    codes = sorted({c.code for cs in layers.values() for c in cs})
    changed = True
    while changed:
        changed = False
        for k, cs in layers.items():
            others = {layers[j][i].code for j, i in choice.items() if j != k}
            options = [i for i, c in enumerate(cs) if c.code in others] + [choice[k]]
            best = min(options, key=lambda i: (_total({**choice, k: i}, layers), i))
            if best != choice[k]:
                choice[k], changed = best, True
        for code in codes:
            trial = {k: next((i for i, c in enumerate(cs) if c.code == code), choice[k]) for k, cs in layers.items()}
            if _total(trial, layers) < _total(choice, layers):
                choice, changed = trial, True
    return choice


def _moves(choice: dict, layers: dict) -> list:
    """Each code a layer could call, by name: the layers it makes faster and their candidate index."""
    by_code: dict = {}
    for k, cs in layers.items():
        now = cs[choice[k]].cycles
        for i, c in enumerate(cs):
            if c.cycles < now:
                cur = by_code.setdefault(c.code, {})
                if k not in cur or c.cycles < cs[cur[k]].cycles:
                    cur[k] = i
    return [moved for _, moved in sorted(by_code.items())]


def _evictions(choice: dict, layers: dict):
    """Each code the choice calls, left: every layer calling it moved to its fastest other candidate (ties the fewer
    bytes, then the first), then to its candidate of least bytes among those no slower than it runs now (when each
    has one): {layer: candidate index} each."""
    users: dict = {}
    for k, i in choice.items():
        users.setdefault(layers[k][i].code, []).append(k)
    for code, ks in sorted(users.items()):
        for least in (False, True):
            moved = {}
            for k in ks:
                cs, now = layers[k], layers[k][choice[k]].cycles
                others = [i for i, c in enumerate(cs) if c.code != code and (not least or c.cycles <= now)]
                if not others:
                    break
                moved[k] = min(others, key=lambda i, cs=cs: (cs[i].bytes, cs[i].cycles, i) if least
                               else (cs[i].cycles, cs[i].bytes, i))
            else:
                yield moved


def _improved(choice: dict, layers: dict) -> dict:
    """choice with, until none does, a code it calls left (_evictions) where that takes no more bytes and no more
    cycles, and fewer of one. A move onto code only ever adds code, so the climb alone keeps a shared variant its last
    layers are left on when their own instances together are smaller and faster (ResNet-8's ops 8 and 10 on the
    9,088 B bt_conv_s8_pm_rq2_ssat, their compact instances 5.7 KB)."""
    now = _total(choice, layers)
    while True:
        for moved in _evictions(choice, layers):
            trial = {**choice, **moved}
            t = _total(trial, layers)
            if t[0] <= now[0] and t[1] <= now[1] and t != now:
                choice, now = trial, t
                break
        else:
            return choice


def _leaving(choice: dict, layers: dict):
    """_moves, then each code the choice calls left (_evictions)."""
    yield from _moves(choice, layers)
    yield from _evictions(choice, layers)


def ladder(layers: dict, budget: int | None = None) -> list:
    """The rungs: [(choice {layer: candidate index}, bytes, cycles)] of two climbs from the least code up (see the
    module doc): moves onto code (_moves), then those and a code's layers all moved off it (_leaving: a climb that
    may drop a shared variant for instances before it has moved every layer off it one by one), the second's rungs
    the first lacks after the first's; a rung past `budget` bytes is never taken. layers: {layer key: [Candidate,
    ...]} (every list non-empty). OverBudget when even the least code is over the budget."""
    first = _climb(layers, budget, _moves)
    return first + [r for r in _climb(layers, budget, _leaving) if r not in first]


def _climb(layers: dict, budget: int | None, moves) -> list:
    """One climb of ladder: from the least code, the move of moves(choice, layers) that saves the most cycles per
    byte it adds, each rung _improved."""
    choice = _improved(_smallest(layers), layers)
    size, cycles = _total(choice, layers)
    if budget is not None and size > budget:
        raise OverBudget(size, budget)
    rungs = [(dict(choice), size, cycles)]
    while True:
        best = None
        for moved in moves(choice, layers):
            trial = {**choice, **moved}
            b, cy = _total(trial, layers)
            saved, added = cycles - cy, b - size
            if saved <= 0 or (budget is not None and b > budget):
                continue
            # most cycles saved per byte added (a move adding no byte first, the most saved among them)
            rank = (0, -saved) if added <= 0 else (1, -saved / added)
            if best is None or rank < best[0]:
                best = (rank, trial, b, cy)
        if best is None:
            return rungs
        choice = _improved(best[1], layers)
        size, cycles = _total(choice, layers)
        rungs.append((dict(choice), size, cycles))


def pick(rungs: list, preset: str, fixed: int = 0) -> tuple:
    """The rung (choice, bytes, cycles) of the ladder `rungs` the preset takes (the module doc); fixed: balanced_ok's."""
    if preset not in PRESETS:
        raise ValueError(f"unknown code preset {preset!r} (known: {', '.join(PRESETS)})")
    fast = min(rungs, key=lambda r: (r[2], r[1]))
    if preset == "speed":
        return fast
    if preset == "size":
        return min(rungs, key=lambda r: (r[1], r[2]))
    return min((r for r in rungs if balanced_ok(r[2], fast[2], fixed)), key=lambda r: (r[1], r[2]))


def _measured(variants) -> dict | None:
    """variant_costs.json's figures for kernel set `variants` (kernel_variants.for_board), None without any."""
    return costs().get(KERNEL_SETS.get(variants[0]) if variants else None)


def balanced_ok(cycles: int, fastest: int, fixed: int = 0) -> bool:
    """Is a rung of `cycles` within balanced's slack of the fastest rung's? Counted over the whole model: fixed is the
    modelled cycles of the layers whose code the budget does not choose (a fused plan's blocks, fused_c
    block_cycles), the same under every rung. Planned to BALANCED_SLACK less MODEL_MARGIN."""
    return cycles + fixed <= (fastest + fixed) * (1 + BALANCED_SLACK - MODEL_MARGIN)


def layer_cycles(g, op, kind: str, layer: dict, variant: str, instance: bool, variants) -> int | None:
    """Modelled cycles of layer op run whole by `variant` (its own instance: instance) on kernel set `variants`
    (kernel_variants.for_board), as a candidate's (work() by the measured a + b K); None when not measured."""
    measured = _measured(variants)
    if measured is None:
        return None
    outputs, k, ch = work(kind, layer, g, op)
    table = instance if instance in ROLLED else "instances" if instance else "variants"
    cls = budget_class(g, op, measured)
    cost = _cost(measured, table, variant, cls, k, ch, bytes_class(g, op, cls))
    return None if cost is None else round(outputs * cost[1])


def ladders(layers: dict, budget: int | None = None) -> tuple:
    """(the ladder within budget, the ladder with none): one climb when the budget never binds (every rung of the
    free ladder within it: each move the free climb took was the best within the budget too)."""
    free = ladder(layers)
    if budget is None or max(r[1] for r in free) <= budget:
        return free, free
    return ladder(layers, budget), free


def choose(layers: dict, preset: str = DEFAULT_PRESET, budget: int | None = None) -> tuple:
    """(choice {layer: Candidate}, bytes, cycles) of the preset (PRESETS) within budget (None: no budget)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown code preset {preset!r} (known: {', '.join(PRESETS)})")
    choice, size, cycles = pick(ladder(layers, budget), preset)
    return {k: layers[k][i] for k, i in choice.items()}, size, cycles


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
    6x6 map's planes, a 48x48's rows), and so are the shared paths' on the maps each fastest path takes."""
    cls = layer_class(g, op)
    if cls == "depthwise" and path:
        return f"{cls} {kernel_variants.dw_family(path)}"
    if cls != "conv KxK" or not kernel_variants.stem_op(g, op):
        return cls
    has_stem = measured is not None and any("conv stem" in _fits(r) for t in ("variants", "instances")
                                            for r in measured.get(t, {}).values())
    return "conv stem" if has_stem else cls


ODD_S = ", odd S"  # bytes_class's mark of a stem whose window rows start an odd count of values apart


def bytes_class(g, op, cls: str) -> str:
    """The class a layer's own code's bytes are measured under (variant_costs.json "points"): cls, except a stem whose
    pixels' window rows start stride_w c_in values apart, an odd count (ResNet-8's 3x3 of stride 1), cls + ODD_S: its
    instance keeps a second set of buffer rows and two triples' asm a row (conv_stem.h), 1.4x the bytes of an even
    one's (vww's and tiny's stride 2)."""
    if cls != "conv stem":
        return cls
    return cls + ODD_S if op.options.get("stride_w", 1) * int(g.tensors[op.inputs[0]].shape[3]) % 2 else cls


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
                identity: str | None = None) -> list | None:
    """The layer's candidates (the INSTANCES variant's own instance first when it may have one, then, where compact
    (Emitter.compact_ops) and measured, its compact instance (not a stem's: kernel_variants.compact_form) and its
    medium one where it is other code (kernel_variants.medium_form)), None when a variant has no measured figures for
    the layer's class (measured None: no figures, every cost 0). shape: work(): (outputs, K, C). identity: its own
    instance's kernel_variants.instance_identity where model.c shares one function among the layers of an identity
    (Emitter.instance), the instances' code name (one code for them all, counted once), else op<i>_conv."""
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
                                                      bytes_class(g, op, cls))
        if cost is None and (table in ROLLED or depthwise):  # not measured: offered only to be measured (forcing)
            if not _forced:
                if table in ROLLED or out:  # (a depthwise layer's shared path not measured on its class)
                    continue
                return None
            cost = (0, 0)
        if cost is None:
            return None
        out.append(Candidate(name, code, cost[0], round(shape[0] * cost[1]), table == "compact", table == "medium"))
    return out


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


def _points(measured: dict, table: str, cls: str, key: str) -> list:
    """The [K, value] points under `key` ("points": bytes, "ratio") of every row of `table` measured on class cls,
    sorted: a layer's own instances of the variants are the same loops (kernel_variants.INSTANCES' one macro), measured
    on the shapes each variant runs (ResNet-8's and tiny's 3x3 layers take bt_conv_s8_pm_rq2_ssat's, vww's stem
    bt_conv_s8_pm_rq2m_ssat's)."""
    return sorted(pt for _, r in sorted(measured.get(table, {}).items()) for pt in r.get(key, {}).get(cls, ()))


def _bytes(measured: dict, table: str, row: dict, cls: str, k: int, pk: str | None = None) -> int:
    """The code bytes of a layer of class cls whose outputs read k values each on `table`'s measured `row`: a layer's own
    code (its bytes measured at several K, "points": its straight runs grow with K), linear in k between the points,
    the nearest's beyond, not the class's largest; else the row's class's (its largest of any class where not measured
    per class); pk: the layer's bytes_class, whose points where measured, else cls's."""
    points = [] if table == "variants" else _points(measured, table, pk or cls, "points") or _points(
        measured, table, cls, "points")
    if points:
        return round(_between(points, k))
    return row.get("class_bytes", {}).get(cls, row["bytes"])


def _cost(measured: dict, table: str, name: str, cls: str, k: int, ch: int = 0, pk: str | None = None) -> tuple | None:
    """(bytes, cycles per output value) of a variant ("variants"), a layer's own instance of it ("instances") or its
    compact or medium instance ("compact", "medium") on a layer of class cls whose outputs (of ch output channels)
    read k values each (bytes:
    _bytes at k). An instance of a variant not measured as one: the measured instance's bytes, and its variant's cycles
    scaled by what the measured instance saves over its own variant on the class at k (the same loops, the same
    constants folded), None when nothing was measured for the class. A compact or medium instance: its instance's
    cycles times the ratio measured between the two forms on the same layers (the "ratio" points of its table's rows,
    _points: [K, form / instance], linear between them, the nearest's beyond; at least 1)."""
    m = measured.get(table, {}).get(name)
    if table in ROLLED:
        ratio = _points(measured, table, cls, "ratio")
        full = _cost(measured, "instances", name, cls, k, ch, pk)
        if not ratio or full is None:
            return None
        row = m or next(r for _, r in sorted(measured[table].items()) if cls in r.get("ratio", {}))
        return _bytes(measured, table, row, cls, k, pk), full[1] * max(1.0, _between(ratio, k))
    if cls in _fits(m):
        return _bytes(measured, table, m, cls, k, pk), _per_output(_fits(m)[cls], k, ch)
    own = _fits(measured["variants"].get(name)).get(cls)
    if table != "instances" or own is None:
        return None
    for ref, r in sorted(measured.get("instances", {}).items()):
        base = _fits(measured["variants"].get(ref)).get(cls)
        if cls in _fits(r) and base and _per_output(base, k, ch) > 0:
            gain = _per_output(_fits(r)[cls], k, ch) / _per_output(base, k, ch)
            return _bytes(measured, table, r, cls, k, pk), _per_output(own, k, ch) * gain
    return None


def _between(points: list, k: int) -> float:
    """The value at k of the [K, value] points (sorted by K): linear between two, the nearest's beyond them."""
    if k <= points[0][0]:
        return points[0][1]
    for (k1, v1), (k2, v2) in zip(points, points[1:]):
        if k <= k2:
            return v1 + (v2 - v1) * (k - k1) / (k2 - k1)
    return points[-1][1]


_forced: list = []


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
         compact: frozenset = frozenset(), identities: dict | None = None) -> CodePlan:
    """The code plan of a model.c whose layers offered `offers` (Emitter.offers: each layer on its fastest
    variant, its own instance when it may have one) on a kernel set `variants` (kernel_variants.for_board); shapes:
    Emitter.shapes, each offering layer's (outputs, K, C) (work()); fixed: the modelled cycles of the model's other layers
    (balanced_ok); compact: the layers offered their compact or medium instance too (Emitter.compact_ops; none on a part whose
    instances are compact by its define, kernel_variants.icache_part); identities: Emitter.identities, the layers whose
    own instance model.c shares with the other layers of its identity (_candidates)."""
    goal = goal or CodeGoal()
    fastest = {i: (names[0] if inst is None else inst, inst is not None) for i, (_, names, inst) in offers.items()}
    measured = _measured(variants)
    if not offers or (measured is None and not _forced):
        return CodePlan(fastest, fastest, preset=goal.preset, budget=goal.budget, offers=offers, compact_ops=compact)
    ops = {op.index: op for op in g.operators}
    shapes = shapes or {}
    identities = identities or {}
    layers = {i: _candidates(g, ops[i], offers[i], shapes.get(i, (0, 0, 0)), measured, i in compact, identities.get(i))
              for i in sorted(offers)}
    layers = {i: cs for i, cs in layers.items() if cs}
    if _forced:
        want = _forced[-1]
        match = {"instance": lambda c: c.form is True, COMPACT: lambda c: c.compact,
                 MEDIUM: lambda c: c.medium}.get(want, lambda c: c.code == want)
        layers = {i: [next((c for c in cs if match(c)), cs[0])] for i, cs in layers.items()}
    try:
        rungs, free = ladders(layers, goal.budget)
        picked = pick(rungs, goal.preset, fixed)
    except OverBudget as e:
        if not goal.from_part:
            raise UsageError(f"{g.name}: the code budget (code_budget) is {goal.budget:,} bytes, and the smallest code of "
                             f"its layers' kernels (optimize_code=size) takes {e.args[0]:,} bytes; give a larger "
                             f"code_budget or a part with more flash") from None
        # the part is too small, not the budget: the least code, and the link's fit check says so
        free = ladder(layers)
        picked = pick(free, "size")
    choice, size, cycles = picked
    return _code_plan(ops, layers, fastest, {k: layers[k][i] for k, i in choice.items()}, size, cycles,
                      pick(free, "speed"), goal, offers, compact)


def _code_plan(ops: dict, layers: dict, fastest: dict, picked: dict, size: int, cycles: int, speed: tuple,
               goal: CodeGoal, offers: dict, compact: frozenset) -> CodePlan:
    """The CodePlan of the choice `picked` (its bytes size and modelled cycles), with the fastest set's figures
    (speed: the free ladder's speed rung)."""
    _, fast_bytes, fast_cycles = speed
    users: dict = {}
    for c in picked.values():
        users[c.code] = users.get(c.code, 0) + 1
    choice = {**fastest, **{i: (c.variant, c.form) for i, c in picked.items()}}
    rows = tuple({"op": i, "opcode": ops[i].opcode, "variant": c.variant, "instance": c.code != c.variant,
                  "compact": c.compact, "medium": c.medium, "bytes": c.bytes, "shared": users[c.code] > 1,
                  "cycles": c.cycles}
                 for i, c in sorted(picked.items()))
    return CodePlan(choice, fastest, rows, goal.preset, goal.budget, size, cycles, fast_cycles, fast_bytes, offers,
                    compact)
