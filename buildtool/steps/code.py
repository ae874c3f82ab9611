"""Step `code`: plan -> model.c, model.h, firmware.json (what runner.run needs to know of a build,
sealed) and the plan the code runs (its arena spread over the board's memories when it needs that)."""

from __future__ import annotations

import json

from .. import targets
from ..codegen.emit import emit_c
from ..firmware.op_cost import region_macs
from ..plan import first_bytes
from ..plan.regions import place_arena
from . import Outputs
from ..errors import UsageError
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
            "outputs": io(g.outputs), "order": order, "opcodes": opcodes, "macs": region_macs(g, plan)}


def run(model: Model, plan, board: str, arena_section: str | None = None) -> Outputs:
    """plan.json (the plan as placed), model.c, model.h, firmware.json; arena_section: the arena's own
    linker section (buildtool export's library)."""
    t = targets.get(board)
    plan = place_arena(model.graph, plan, t)  # arena/regional.py; the plan itself when it fits RAM
    names = {"arena_section": arena_section} if arena_section else {}
    model_c, model_h = emit_c(plan, model.graph, board, t.weights_align, **names)
    man = json.dumps(manifest(model, plan, board), indent=1) + "\n"
    return Outputs({"plan.json": json.dumps(plan.to_json(model.graph), indent=1) + "\n", "model.c": model_c,
                    "model.h": model_h, "firmware.json": man},
                   {"firmware.json": {"model": model.name, "board": board}})


def run_files(source: str, plan_path: str, board: str, name: str | None = None) -> Outputs:
    """The step as build rules run it: source is skeleton.json, or the model for a fused plan (its code
    holds weight copies); name: the model's name in model.h (default: the source's)."""
    model = read_input(source, name)
    plan = read_plan(plan_path, model.graph)
    if plan.regions(model.graph) and not str(source).endswith(".tflite"):
        raise UsageError("a fused plan's code holds weights: give gen code the model file, not the skeleton")
    return run(model, plan, board)
