"""`buildtool inspect`, `ops` and `zoo`: what a model is made of, what is supported, the model zoo."""

from __future__ import annotations

import json

from .. import zoo
from ..errors import UsageError, did_you_mean
from ..model.files import read_model_file
from ..model.inspect import describe, format_text, offline_plan_of
from ..model.ops import supported_table
from ..model.reader import load_any
from ..model.writer import serialize
from ..steps.models import is_model_file
from .common import MODEL_HELP, load_model, say_wrote, write_atomic


def cmd_inspect(a) -> int:
    """Any well-formed model, including ones the planner refuses: the last line says what would stop it."""
    offline = None
    if is_model_file(a.model):
        g, problem = load_any(a.model)
        offline = offline_plan_of(read_model_file(a.model))
    else:
        g, problem = load_model(a.model), None
    info = describe(g, problem, offline)

    print(json.dumps(info, indent=1) if a.json else format_text(info))
    return 0


def cmd_ops(a) -> int:
    """The supported operators, their activation types and whether they run int16 (16x8), from the table the
    checks use."""
    rows = supported_table()
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'operator':40} {'input types':40} {'output types':40} int16")
    for r in rows:
        print(f"{r['op']:40} {', '.join(r['inputs']):40} {', '.join(r['outputs']):40} {r['int16']}")
    return 0


def cmd_zoo(a) -> int:
    if a.list or not a.name:
        for name, desc in zoo.describe(large=True).items():
            print(f"{name:14s} {desc}")
        return 0
    if a.name not in zoo.names(large=True):
        raise UsageError(f"unknown zoo model '{a.name}'{did_you_mean(a.name, zoo.names(large=True))} "
                         f"(known: {', '.join(zoo.names(large=True))})")
    out = a.output or f"{a.name}.tflite"
    write_atomic(out, serialize(zoo.build(a.name)))
    say_wrote([out])
    return 0


def add_inspect(sub) -> None:
    s = sub.add_parser("inspect")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("--json", action="store_true", help="the same as JSON")
    s.set_defaults(fn=cmd_inspect)


def add_ops(sub) -> None:
    s = sub.add_parser("ops")
    s.add_argument("--json", action="store_true", help="the same as JSON")
    s.set_defaults(fn=cmd_ops)


def add_zoo(sub) -> None:
    s = sub.add_parser("zoo",
                       description="Write a model of the built-in zoo (graphs built in code, calibrated int8) as a "
                                   ".tflite file. Every command also takes a zoo name wherever it takes a model "
                                   "file, so writing one out is only needed to use it elsewhere.")
    s.add_argument("name", nargs="?", help="the zoo model to write (--list names them)")
    s.add_argument("-o", "--output", help=".tflite file to write (default NAME.tflite; its directory must exist)")
    s.add_argument("--list", action="store_true", help="list the zoo's models with a line on each, and write nothing")
    s.set_defaults(fn=cmd_zoo)
