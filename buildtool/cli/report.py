"""`buildtool report`: memory over the execution order (and the placement in a board's memories)
drawn as HTML + SVG, the layer-by-layer plan against the optimised one, and the arena map of each."""

from __future__ import annotations

import dataclasses
import json

from .. import targets
from ..firmware import staging
from ..plan import regions
from ..report import write_report
from ..steps import code as code_step
from ..steps.models import read_model
from .common import MODEL_HELP, add_plan_options, load_model, make_plan, plan_options, say_wrote


def _placed(g, plan, board, opts):
    """(plan as the board holds it: its buffers spread over the board's regions when they are, the weights its
    part stages in SRAM; the placement) when a board is given, else (plan, None)."""
    if board is None:
        return plan, None
    placed = regions.place_arena(g, plan, board)
    return staging.staged_plan(g, placed, board, cap=opts.staging_ram), regions.place(g, placed, board)


def _note(opts, stateful: bool) -> str:
    """Which options made the plans the page shows."""
    if opts.fused:
        return (f"Optimised plan: planning options {opts.describe()}. The layer-by-layer plan is the one "
                f"buildtool plan makes without the optimiser options.")
    if stateful:
        return "No optimiser option given and the model keeps state: the layer-by-layer plan alone."
    return ("No optimiser option given (--optimize, --split, --input-streamed): the optimised curve and row "
            "are the --optimize ram plan, for comparison; the arena map shows the layer-by-layer plan alone. "
            "Give an optimiser option to map both.")


def cmd_report(a) -> int:
    """Layer by layer (the plan `buildtool plan` prints for the same flags) against the optimised
    plan (--optimize ram unless another optimiser is named); a stateful model has only the first.
    The arena map: the layer-by-layer plan, and the optimised one when an optimiser option is given
    (without one the comparison is the default's, and the page says so)."""
    board = targets.get(a.board) if a.board else None  # an unknown board is refused before planning
    g = load_model(a.model)
    opts = plan_options(a)
    plain = dataclasses.replace(opts, optimize=None, max_mac_overhead=None, ram_limit=None, splits=None,
                                input_streamed=False, band_input=True)
    before = make_plan(g, a, plain)
    after = before
    stateful = bool(g.variable_tensors())
    if not stateful or opts.fused:
        after = make_plan(g, a, opts if opts.fused else dataclasses.replace(opts, optimize="ram"))
    placed_after, placement = _placed(g, after, board, opts)
    placed_before, spread = _placed(g, before, board, opts) if after is not before else (placed_after, None)
    if spread is not None and spread.arena_parts:  # the layer-by-layer plan's too when its buffers spread
        placement = (placement, spread)
    maps = [("plain", "Layer by layer", placed_before)]
    if opts.fused:
        maps.append(("optimised", "Optimised", placed_after))
    label = "optimised" if opts.fused or after is before else "optimised (--optimize ram)"
    code = None
    if board is not None:  # the code plan of the plan a build with these flags makes (firmware.json's)
        made = code_step.run(read_model(g), after if opts.fused else before, board.name, options=opts)
        code = (board.name, json.loads(made.files["firmware.json"]).get("code_plan"))
    written = write_report(g, before, after, a.output, placement=placement, maps=maps,
                           note=_note(opts, stateful), after_label=label, code=code)
    say_wrote(written)
    return 0


def add_report(sub) -> None:
    s = sub.add_parser("report",
                       description="An HTML page: activation memory over the execution order (layer by layer "
                                   "against the optimised plan); the arena map (every buffer at its offset over its "
                                   "steps, the peak step and the buffers live there) of the layer-by-layer plan, and "
                                   "of the optimised plan when an optimiser option (--optimize, --split, "
                                   "--input-streamed) is given; the fusion blocks; with --board the placement in the "
                                   "board's memory regions and the code plan (each layer's kernel variant, its "
                                   "bytes and modelled cycles). Without an optimiser option the figure compares with "
                                   "--optimize ram (a model that keeps state: the layer-by-layer plan alone).")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("-o", "--output", default="report.html",
                   help="HTML file to write (default report.html; its directory must exist); the figure goes "
                        "beside it as .svg. A name ending in .svg writes the figure alone")
    s.add_argument("--board", help="also draw the placement in this board's memory regions (and map the arena "
                                   "per region when its buffers spread over several) and show the code plan")
    add_plan_options(s)
    s.set_defaults(fn=cmd_report)
