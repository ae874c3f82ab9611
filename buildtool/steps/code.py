"""Step `code`: plan -> model.c, model.h, firmware.json (what runner.run needs to know of a build,
sealed) and the plan the code runs (its arena spread over the board's memories when it needs that).

On a board whose weights may go to external memory, the code's own flash bytes decide how many
weights the internal flash keeps (a fused plan's code holds weight copies and tile tables: hundreds
of KiB). Where the board's reserve for code might not cover them, a trial link measures them
(toolchain.code_bytes), the weights are placed around them (regions.place) and firmware.json records
the figure (flash_code_bytes), from which the flash step lays out the same image."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from .. import targets
from ..codegen.emit import emit_c
from ..firmware.op_cost import region_macs
from ..plan import first_bytes
from ..firmware import staging, toolchain
from ..firmware.library import model_opcodes, model_sources
from ..plan import ArenaPlan
from ..plan.flash import padded_bytes
from ..plan.regions import arena_regions, image_groups, place_arena
from . import Outputs
from ..errors import BuildtoolError, UsageError
from ..codegen.code_budget import CodeGoal
from ..firmware import runner
from ..firmware.toolchain import Code
from ..options import PlanOptions
from .models import Model
from .readback import read_plan
from .skeleton import read_input


def manifest(model: Model, plan, board: str) -> dict:
    """firmware.json: I/O tensors, operator order, arena size."""
    g = model.graph

    def io(idx):
        return [{"name": g.tensors[i].name, "shape": [int(d) for d in g.tensors[i].shape],
                 "dtype": g.tensors[i].dtype} for i in idx]

    order, opcodes = plan.manifest_order(g)
    return {"model": g.name, "board": board, "arena_bytes": first_bytes(plan), "inputs": io(g.inputs),
            "outputs": io(g.outputs), "order": order, "opcodes": opcodes, "macs": region_macs(g, plan)} \
        | staging.summary(plan)


def measures_code(t: targets.Target) -> bool:
    """Whether the board's weights may go to external memory, so the code step may measure the code
    (and the flash step then reads firmware.json): build rules wire their steps by this."""
    return bool(t.external_regions())


def _needs_measuring(t: targets.Target, g, model_c: str) -> bool:
    """The board's reserve for code (0 on a part that declares none) might not hold the code: the
    internal flash left after every weight is under the reserve plus model.c's source length (the
    start-up code and kernels within the reserve; model.c's object, in practice, below its source)."""
    primary = next((r for r in t.memory_regions() if "code" in r.holds), None)
    if primary is None or not measures_code(t):
        return False
    return primary.reserve == 0 or primary.size - padded_bytes(g, t.weights_align) < primary.reserve + len(model_c)


# What the automatic code budget keeps back of the part's flash for the code beside the layers' kernels (start-up,
# model_invoke, the other operators' kernels): a policy, not a measurement (docs/code-size.md)
CODE_RESERVE = 32 << 10


def code_goal(g, t: targets.Target, options: PlanOptions | None) -> CodeGoal:
    """The code budget's preset and budget: code_budget when given, else (a part declaring its flash) the flash
    that holds the code less the weights and CODE_RESERVE; on a part whose weights may go to external memory and
    do not fit beside the reserve anyway, that flash less CODE_RESERVE (the weights go out)."""
    options = PlanOptions.from_map(options)
    budget = options.code_budget
    if budget is None:
        primary = next((r.size for r in t.memory_regions() if "code" in r.holds), t.flash_bytes)
        room = primary - padded_bytes(g, t.weights_align) - CODE_RESERVE
        if room <= 0 and t.external_regions():
            room = primary - CODE_RESERVE
        budget = max(1, room) if primary else None
    return CodeGoal(options.optimize_code, budget, options.code_budget is None)


def _placed_code(plan, g, board: str, t: targets.Target, names: dict) -> tuple:
    """(model.c, model.h, the measured code bytes or None, the code plan): the weights placed around the code's
    measured flash bytes when the board's reserve might not hold it; re-measured until the code the
    placement gives fits the bytes it was placed around (a split adds a few bytes of checks)."""
    src = emit_c(plan, g, board, t.weights_align, **names)
    model_c, model_h = src
    if not _needs_measuring(t, g, model_c):
        return model_c, model_h, None, src.code_plan
    kernels = model_sources(t, model_opcodes(g), not isinstance(plan, ArenaPlan), model_c=model_c)  # what the link compiles
    code, groups = toolchain.code_bytes(t, model_c, model_h, kernels), image_groups(g, plan, t)
    for _ in range(4):
        placed = image_groups(g, plan, t, code_bytes=code)
        if placed == groups:  # the code the placement gives is the code measured (model.c reads the groups)
            return model_c, model_h, code, src.code_plan
        src = emit_c(plan, g, board, t.weights_align, code_bytes=code, **names)
        model_c, model_h = src
        groups, again = placed, toolchain.code_bytes(t, model_c, model_h, kernels)
        if again <= code:
            return model_c, model_h, code, src.code_plan
        code = again
    return model_c, model_h, code, src.code_plan


def _arena_board(model: Model, plan, t: targets.Target, options) -> targets.Target | None:
    """The board the arena is placed on (regions.place_arena): t; on a board running its code from RAM, None
    (the plan as it is) when RAM is its only region for the arena (a plan that does not fit beside its code is
    refused by check_fits, in one line), else t with this plan's code measured in place of its reserve
    (Target.with_code; the code of the plan unplaced: the spread moves buffers, not code)."""
    if not t.code_in_ram or plan is None or plan.kind != "arena" or plan.arena_regions:
        return t
    if len(arena_regions(t)) == 1:
        return None
    code = measured_code(model, plan, t, options, _outputs(model, plan, t.name, t, None, options))
    return t if code is None else t.with_code(code.ram)


def run(model: Model, plan, board: str, arena_section: str | None = None, options: PlanOptions | None = None) -> Outputs:
    """plan.json (the plan as placed), model.c, model.h, firmware.json; arena_section: the arena's own
    linker section (buildtool export's library); options: the code step's (optimize_code, code_budget: the
    kernel variant of each layer, codegen/code_budget.py; the other options are the plan's)."""
    t = targets.get(board)
    at = _arena_board(model, plan, t, options)  # arena/regional.py; the plan itself when it fits RAM
    return _outputs(model, plan if at is None else place_arena(model.graph, plan, at), board, t, arena_section,
                    options)


def _outputs(model: Model, plan, board: str, t: targets.Target, arena_section: str | None, options) -> Outputs:
    """run's outputs of plan as placed."""
    # weights a layer re-reads, copied into SRAM (the part's); a library's (export) into its arena only
    options = PlanOptions.from_map(options)
    plan = staging.staged_plan(model.graph, plan, t, spare=arena_section is None, cap=options.staging_ram)
    names = ({"arena_section": arena_section} if arena_section else {}) | {"code": code_goal(model.graph, t, options)}
    model_c, model_h, code, cp = _placed_code(plan, model.graph, board, t, names)
    man = manifest(model, plan, board) | ({"flash_code_bytes": code} if code is not None else {})
    man |= {"code_plan": cp.to_json()} if cp is not None and cp.rows else {}
    man = json.dumps(man, indent=1) + "\n"
    return Outputs({"plan.json": json.dumps(plan.to_json(model.graph), indent=1) + "\n", "model.c": model_c,
                    "model.h": model_h, "firmware.json": man},
                   {"firmware.json": {"model": model.name, "board": board, "code": options.code()}})


def measured_code(model: Model, plan, t: targets.Target, options: PlanOptions | None = None,
                  made: Outputs | None = None, once=None) -> Code | None:
    """The code the build of plan on board t links, measured as the build measures it: this step's model.c
    (made: its outputs when the caller already ran it; the weights placed around its measured code where the
    build does so: flash_code_bytes), linked by a trial link (toolchain.trial_elf) and read as the build's
    RAM/flash line reads an image (runner.memory_figures). None when this machine lacks the board's toolchain.
    once(key, make): the caller's cache of trial links (buildtool fit: one per link_key over every board)."""
    try:
        toolchain.check_tools(t)
    except BuildtoolError:
        return None
    made = made or run(model, plan, t.name, options=options)
    man = json.loads(made.files["firmware.json"])
    kernels = model_sources(t, model_opcodes(model.graph), not isinstance(plan, ArenaPlan),
                            model_c=made.files["model.c"])  # what the link takes

    def link() -> tuple:
        with tempfile.TemporaryDirectory(prefix="bt-code-") as tmp:
            elf = toolchain.trial_elf(t, made.files["model.c"], made.files["model.h"], Path(tmp), kernels)
            m = runner.memory_figures(t, elf, man["arena_bytes"])
        return m["code"], m["static"] - man["arena_bytes"]

    code, static = once(link_key(t, made, kernels), link) if once else link()
    return Code(code, static, man.get("flash_code_bytes"))


def measurer(graph, t: targets.Target, options=None):
    """On a board running its code from RAM (xcore's tile), plan -> the Code its build links (measured_code; a
    skeleton's code is its model's: weights apart), measured once per plan; else None (steps.plan.run's)."""
    if not t.code_in_ram:
        return None
    codes = {}

    def measure(p):
        if id(p) not in codes:
            codes[id(p)] = (p, measured_code(Model(graph.name, graph.name, graph), p, t, options))
        return codes[id(p)][1]
    return measure


# the first line of model.c and model.h, less the board it names (link_key)
_BOARD_LINE = re.compile(r"^(/\* Generated by buildtool for model .*) on board '[^']*'", re.M)


def link_key(t: targets.Target, made: Outputs, kernels) -> tuple:
    """What a trial link's code and static bytes are a function of: the board's compiler, flags, kernel sets,
    start-up sources and linker template, and the sources linked (the first line of model.c and model.h, naming the board, aside),
    so boards of one toolchain and CPU given the same model.c share one link."""
    return (t.cc, t.cflags, t.ldflags, t.defines, t.kernel_sets, t.port.name, t.linker_template, t.extra_sources,
            tuple(t.firmware_sources()), tuple(str(k) for k in kernels),
            *(_BOARD_LINE.sub(r"\1", made.files[f], count=1) for f in ("model.c", "model.h")))


def run_files(source: str, plan_path: str, board: str, name: str | None = None,
              options: PlanOptions | None = None) -> Outputs:
    """The step as build rules run it: source is skeleton.json, or the model for a fused plan (its code
    holds weight copies); name: the model's name in model.h (default: the source's); options: the code
    step's (run)."""
    model = read_input(source, name)
    plan = read_plan(plan_path, model.graph)
    if plan.regions(model.graph) and not str(source).endswith(".tflite"):
        raise UsageError("a fused plan's code holds weights: give gen code the model file, not the skeleton")
    return run(model, plan, board, options=options)
