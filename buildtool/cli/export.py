"""`buildtool export MODEL --cpu CPU -o DIR`: the model as a C library folder for a firmware project of
its own (pipeline/export.py; docs/export.md). `buildtool export --format tflm MODEL -o planned.tflite`: the
model file with buildtool's arena plan for TensorFlow Lite Micro (pipeline/tflm_export.py; docs/tflm.md)."""

from __future__ import annotations

import sys

from ..errors import UsageError
from ..fsutil import write_atomic
from ..pipeline import export as library
from ..pipeline import tflm_export
from ..steps.models import check, read_model
from .common import MODEL_HELP, add_plan_options, make_plan, one_line_usage_errors, plan_options


def cmd_export(a) -> int:
    if a.format == "tflm":
        return _export_tflm(a)
    if a.cpu is None:
        raise UsageError("export: required: --cpu CPU for the C library (or --format tflm for a .tflite file)")
    if a.replace:
        raise UsageError("export: --replace applies to --format tflm only")
    board = library.board_for(a.cpu)  # a bad CPU is refused before any planning
    options = plan_options(a)
    model = read_model(a.model)
    check(model)
    out = library.write_folder(library.library(model, make_plan(model.graph, a, options), board), a.output)
    print(out)
    return 0


def _export_tflm(a) -> int:
    if a.cpu is not None:
        raise UsageError("export: --format tflm writes a .tflite file for any CPU TFLite Micro runs on; "
                         "drop --cpu")
    data, info = tflm_export.planned_model(a.model, plan_options(a), replace=a.replace)
    write_atomic(a.output, data)
    if info.head_before is None:
        print("buildtool: note: the tflite_micro package is not installed, so TFLite Micro's arena head was not "
              "measured (pip install tflite-micro to have the export check that it does not grow)", file=sys.stderr)
    print(a.output)
    return 0


def add_parser(sub) -> None:
    s = sub.add_parser("export",
                       description="Write model.c/model.h, the weights, the kernels the model calls and "
                                   "CMakeLists.txt / model.mk into DIR: a library that builds with your own "
                                   "compiler, flags and linker script (docs/export.md). With --format tflm: "
                                   "write the .tflite file with buildtool's arena plan as TensorFlow Lite "
                                   "Micro's OfflineMemoryAllocation metadata and its operators in the planned "
                                   "order (docs/tflm.md).")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("--format", choices=("c", "tflm"), default="c",
                   help="c: a C library folder (default); tflm: a .tflite file planned for TFLite Micro")
    s.add_argument("--cpu", metavar="CPU",
                   help="(format c, required) cortex-m4, cortex-m7, cortex-m33, cortex-m55, cortex-m0plus, "
                        "riscv32 (rv32imac), rv32imc, host, or any board of `buildtool boards`")
    s.add_argument("-o", "--output", required=True, metavar="PATH",
                   help="format c: the folder to write (new, empty, or an earlier export, which is replaced "
                        "whole); format tflm: the .tflite file to write")
    s.add_argument("--replace", action="store_true",
                   help="(format tflm) replace an OfflineMemoryAllocation plan the model already carries")
    add_plan_options(s)
    one_line_usage_errors(s, "export")
    s.set_defaults(fn=cmd_export)
