"""`buildtool multi A B --board BOARD [--input a.npy --input b.npy]`: several models in one firmware
and one shared arena (plan/joint.py, pipeline/multi.py). Prints the joint plan; with inputs, runs A, B, ...,
then A again, and prints each invocation's outputs."""

from __future__ import annotations

import json
import os
import sys

from .. import pipeline
from ..errors import UsageError
from ..firmware.runner import format_report
from ..model.inputs import load_inputs
from ..plan.joint import model_options
from ..serve.service import plan_json
from .common import add_plan_options, plan_options


def add_parser(sub) -> None:
    s = sub.add_parser("multi")
    s.add_argument("models", nargs="+", metavar="model", help=".tflite files or zoo names (two or more)")
    s.add_argument("--board", required=True, help="the board to build the firmware for")
    s.add_argument("--build-dir", help="where to build (default build/BOARD/multi-A-B...)")
    s.add_argument("--input", action="append", default=[],
                   help="one per model, in order: a .npy (or a .npz holding every input of that model); runs "
                        "each model once, then the first again")
    s.add_argument("--json", action="store_true", help="print the joint plan (and outputs) as JSON")
    add_plan_options(s)
    s.set_defaults(fn=cmd_multi)


def _say(rep: dict) -> None:
    print(f"joint arena {rep['arena_bytes']:,} B = state {rep['persistent_bytes']:,} B + largest need "
          f"{rep['arena_bytes'] - rep['persistent_bytes']:,} B "
          f"(largest own arena {rep['largest_own_arena_bytes']:,} B)")
    for m in rep["models"]:
        at = f"at {m['state_at']:,}" if m["persistent_bytes"] else ""
        print(f"  {m['name'][:32]:32s} {m['kind'] + ' plan':10s} own arena {m['own_arena_bytes']:>9,} B  state "
              f"{m['persistent_bytes']:>7,} B {at:10s} need {m['need_bytes']:>9,} B")


def cmd_multi(a) -> int:
    if len(a.models) < 2:
        raise UsageError("multi needs at least two models; build one model with `buildtool run MODEL --board`")
    if a.input and len(a.input) != len(a.models):
        raise UsageError(f"give --input once per model ({len(a.models)}), {len(a.input)} given")
    opts = plan_options(a)
    models = [pipeline.read_model(m) for m in a.models]
    xs = [load_inputs(m.graph, [p], how="pass one --input per model (a .npz for a model with several inputs)")
          for m, p in zip(models, a.input)]
    plans = [pipeline.load_plan(plan_json(spec, model_options(m.graph, opts), a.no_daemon)["plan"], m.graph)
             for spec, m in zip(a.models, models)]
    name = pipeline.build_dir_name("multi-" + "-".join(m.name for m in models))
    out = a.build_dir or os.path.join("build", a.board, name)
    _, joint = pipeline.build_multi(models, a.board, out, plans=plans)
    rep = joint.report()
    runs = []
    if xs:
        runs, ram = pipeline.run_multi(a.board, out, xs)
        print(format_report({"unit": "", "ops": []}, ram), file=sys.stderr)
    if a.json:
        rep = dict(rep, runs=[{"model": models[k].name, "outputs": [y.reshape(-1).tolist() for y in ys]}
                              for k, ys in runs])
        print(json.dumps(rep, indent=1))
        return 0
    _say(rep)
    for n, (k, ys) in enumerate(runs):
        for y in ys:
            print(f"run {n + 1} {models[k].name}: {' '.join(map(str, y.reshape(-1).tolist()))}")
    return 0
