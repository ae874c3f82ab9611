"""`buildtool report`: memory over the execution order (and the placement in a board's memories)
drawn as HTML + SVG, the layer-by-layer plan against the optimised one."""

from __future__ import annotations

import dataclasses

from ..report import write_report
from .common import MODEL_HELP, add_plan_options, load_model, make_plan, plan_options
from .plan import placement_of


def cmd_report(a) -> int:
    """Layer by layer (the plan `buildtool plan` prints for the same flags) against the optimised
    plan (--optimize ram unless another optimiser is named); a stateful model has only the first."""
    g = load_model(a.model)
    opts = plan_options(a)
    plain = dataclasses.replace(opts, optimize=None, max_mac_overhead=None, ram_limit=None, splits=None,
                                input_streamed=False, band_input=True)
    before = make_plan(g, a, plain)
    after = before
    if not g.variable_tensors() or opts.fused:
        after = make_plan(g, a, opts if opts.fused else dataclasses.replace(opts, optimize="ram"))
    placement = placement_of(g, after, a)
    if placement is not None and after is not before:  # the layer-by-layer plan's too when its buffers spread
        spread = placement_of(g, before, a)
        placement = (placement, spread) if spread.arena_parts else placement
    html, svg = write_report(g, before, after, a.output, placement=placement)
    print(f"wrote {html} and {svg}")
    return 0


def add_report(sub) -> None:
    s = sub.add_parser("report", help="HTML + SVG report: memory over the execution order, fusion blocks")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("-o", "--output", default="report.html",
                   help="HTML file to write (default report.html; its directory must exist); the figure goes "
                        "beside it as .svg")
    s.add_argument("--board", help="also draw the placement in this board's memory regions")
    add_plan_options(s)
    s.set_defaults(fn=cmd_report)
