"""`buildtool export MODEL --cpu CPU -o DIR`: the model as a C library folder for a firmware project of
its own (pipeline/export.py; docs/export.md)."""

from __future__ import annotations

from ..pipeline import export as library
from ..steps.models import check, read_model
from .common import MODEL_HELP, add_plan_options, make_plan, one_line_usage_errors, plan_options


def cmd_export(a) -> int:
    board = library.board_for(a.cpu)  # a bad CPU is refused before any planning
    options = plan_options(a)
    model = read_model(a.model)
    check(model)
    out = library.write_folder(library.library(model, make_plan(model.graph, a, options), board), a.output)
    print(out)
    return 0


def add_parser(sub) -> None:
    s = sub.add_parser("export",
                       description="Write model.c/model.h, the weights, the kernels the model calls and "
                                   "CMakeLists.txt / model.mk into DIR: a library that builds with your own "
                                   "compiler, flags and linker script (docs/export.md).")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("--cpu", required=True, metavar="CPU",
                   help="cortex-m4, cortex-m7, cortex-m33, cortex-m55, cortex-m0plus, riscv32 (rv32imac), rv32imc, host, "
                        "or any board of `buildtool boards`")
    s.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the folder to write (new, empty, or an earlier export, which is replaced whole)")
    add_plan_options(s)
    one_line_usage_errors(s, "export")
    s.set_defaults(fn=cmd_export)
