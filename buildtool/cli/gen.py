"""`buildtool gen STEP`: the pipeline's steps with fixed, declared outputs, for build systems.

    buildtool gen model    ZOO_NAME            -o model.tflite
    buildtool gen skeleton MODEL.tflite        -o skeleton.json
    buildtool gen plan     skeleton.json       -o plan.json  [--opt key=value ...]
    buildtool gen code     skeleton.json plan.json --board B -o DIR   (DIR/model.c, model.h, firmware.json;
                           a fused plan: MODEL.tflite instead of skeleton.json)
    buildtool gen flash    MODEL.tflite [plan.json] --board B -o weights.bin  [--split-header FILE]
                           (plan.json: a fused plan's, for the weights' placement in memory regions;
                           FILE: weights.bin's split as defines for weights.S)
    buildtool gen board    --board B           -o DIR   (DIR/board.json [+ DIR/board.ld])
    (every step: [--depfile FILE] [--no-daemon])

Each step rewrites an output only when its bytes change (a build system that compares
timestamps, e.g. Ninja with restat, stops there) and with --depfile FILE writes a Makefile-style
depfile naming its inputs and the Python sources of the code that ran. The plan step's
depfile lists the planner's sources even when the daemon computed the plan (this process never
imported them). Weights are their own step: a weight-only edit changes model.tflite and
weights.bin, never skeleton.json, so the plan and model.c are not remade.

Every step but `board` runs in the planner daemon when one may be used (the same rule as
planning: not with --no-daemon or BUILDTOOL_NO_DAEMON=1): this process then imports neither
numpy nor the model reader, which is most of a cold step's time. Paths travel absolute and
errors come back naming them as typed; a daemon that cannot be used means one warning line
and the step run here, with the same bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import UsageError
from ..plan import kinds

STEPS = ("model", "skeleton", "plan", "code", "flash", "board")
DAEMON_STEPS = ("model", "skeleton", "plan", "code", "flash")  # board needs the caller's toolchain set-up
ARGS = ("step", "input", "plan", "output", "board", "name", "opt", "depfile",
        "split_header")  # what a step reads of its command
PATHS = ("input", "plan", "output", "depfile", "split_header")


def _depfile(path: str | None, outputs: list, inputs: list, step: str) -> None:
    from .. import pipeline

    if not path:
        return
    deps = [str(Path(p).resolve()) for p in inputs] + pipeline.step_sources(step)

    def esc(p: str) -> str:
        return p.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")

    text = " ".join(esc(str(Path(o).resolve())) for o in outputs) + ": " + " \\\n  ".join(esc(d) for d in deps) + "\n"
    pipeline._write(Path(path), text)


def _options(pairs: list):
    from ..options import PlanOptions

    given = {}
    for p in pairs or ():
        if "=" not in p:
            raise UsageError(f"--opt '{p[:40]}' must be key=value (e.g. --opt optimize=ram)")
        k, v = p.split("=", 1)
        given[k.strip()] = v
    return PlanOptions.from_strings(given)


def run(a) -> int:
    """One step: in the planner daemon when one may be used, else here."""
    if a.step in DAEMON_STEPS:
        from ..serve.daemon.client import daemon_wanted

        if daemon_wanted(a.no_daemon) and _via_daemon(a):
            return 0
    return run_step(a)


def _paths(step: str) -> tuple:
    """The arguments that name files (gen model's input is a zoo name)."""
    return tuple(k for k in PATHS if not (k == "input" and step == "model"))


def _via_daemon(a) -> bool:
    """Ask the daemon to run the step; False (after one warning) when no daemon can be used."""
    from ..serve.daemon import protocol
    from ..serve.daemon.client import DaemonClient, warn_once
    from ..errors import BuildtoolError

    args = {k: getattr(a, k) for k in ARGS}
    typed = absolute_paths(args, os.getcwd())
    wire = {k: protocol.to_wire(v) for k, v in args.items() if v is not None}
    try:
        with DaemonClient() as c:
            c.request({"type": "gen", "args": wire, "umask": protocol.umask_now()})
    except protocol.DaemonUnavailable as e:
        warn_once(f"{e}; running the step in this process")
        return False
    except BuildtoolError as e:  # the daemon names the absolute paths it was sent: name them as typed
        e.args = (as_typed(str(e), typed),)
        raise
    return True


def absolute_paths(args: dict, cwd: str) -> dict:
    """Make a step's path arguments (args: ARGS -> value, changed in place) absolute from cwd, for a
    process in another directory (the daemon); returns {absolute: as typed} for as_typed."""
    typed = {}
    for k in _paths(args["step"]):
        if args.get(k):
            full = os.path.normpath(os.path.join(cwd, args[k]))
            typed[full] = args[k]
            args[k] = full
    return typed


def as_typed(msg: str, typed: dict) -> str:
    """msg with the absolute paths of absolute_paths named as the user typed them (their directories
    too: "directory D does not exist" names D as typed)."""
    names = dict(typed)
    for full, as_given in typed.items():
        if os.path.dirname(as_given):
            names.setdefault(os.path.dirname(full), os.path.dirname(as_given))
    for full in sorted(names, key=len, reverse=True):
        msg = msg.replace(full, names[full])
    return msg


def step_args(args: dict):
    """A step's arguments (a daemon request's map) as run_step takes them; ValueError when malformed."""
    import argparse

    if not isinstance(args, dict) or args.get("step") not in DAEMON_STEPS or set(args) - set(ARGS):
        raise ValueError("a gen request needs a step and only the keys " + ", ".join(ARGS))
    a = argparse.Namespace(**{k: args.get(k) for k in ARGS}, no_daemon=True)
    for k in ARGS:
        v = getattr(a, k)
        if k == "opt":
            if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                raise ValueError("gen opt must be a list of strings")
        elif v is not None and not isinstance(v, str):
            raise ValueError(f"gen {k} must be a string")
        elif k in _paths(a.step) and v and not os.path.isabs(v):
            raise ValueError(f"gen {k} must be an absolute path")
    return a


def run_step(a, planner=None) -> int:
    """The step itself. planner(graph, PlanOptions) -> {"plan": ...}: how the plan step plans
    (the daemon passes its memo's; default: in this process)."""
    from .. import pipeline
    from ..fsutil import make_dirs

    step = a.step
    if step == "model":
        _need(a, "input", "a zoo name")
        pipeline._write(Path(a.output), pipeline.zoo_model(a.input))
        _depfile(a.depfile, [a.output], [], step)
    elif step == "skeleton":
        _need(a, "input", "a .tflite file")
        model = pipeline.read_model(a.input)
        pipeline.check(model)
        pipeline._write(Path(a.output), json.dumps(pipeline.skeleton(model), indent=0, sort_keys=True) + "\n")
        _depfile(a.depfile, [a.output], [a.input], step)
    elif step == "plan":
        _need(a, "input", "skeleton.json")
        model = _from_skeleton(a.input)
        options = _options(a.opt)
        r = planner(model.graph, options) if planner else pipeline.plan_json(model.graph, options, True)
        pipeline._write(Path(a.output), json.dumps(r["plan"], indent=1) + "\n")
        _depfile(a.depfile, [a.output], [a.input], step)
    elif step == "code":
        _need(a, "input", "skeleton.json or the model")
        board = _board(a)
        if not a.plan:
            raise UsageError("gen code needs the plan: buildtool gen code skeleton.json plan.json --board B -o DIR")
        # a fused plan's code holds weight copies: give it the model; a layer-by-layer plan's the skeleton
        model = (pipeline.read_model(a.input, a.name) if a.input.endswith(".tflite")
                 else _from_skeleton(a.input, a.name))
        plan = _plan(a, model.graph)
        if plan.regions(model.graph) and not a.input.endswith(".tflite"):
            raise UsageError("a fused plan's code holds weights: give gen code the model file, not the skeleton")
        files = pipeline.code(model, plan, board)
        out = Path(a.output)
        make_dirs(out)
        names = ("model.c", "model.h", "firmware.json")
        for n in names:
            pipeline._write(out / n, files[n])
        _depfile(a.depfile, [out / n for n in names], [a.input, a.plan], step)
    elif step == "flash":
        _need(a, "input", "a .tflite file")
        board = _board(a)
        model = pipeline.read_model(a.input)
        # a fused plan re-reads weights per tile: which go to external memory follows its counts, as
        # its code step's do (a layer-by-layer plan's placement needs no plan)
        plan = _plan(a, model.graph) if a.plan else None
        pipeline._write(Path(a.output), pipeline.flash_image(model, board, plan))
        outputs = [a.output]
        if a.split_header:  # for build systems that assemble weights.S without reading weights.bin
            from .. import targets
            from ..firmware import toolchain

            pipeline._write(Path(a.split_header), toolchain.weights_split_header(targets.get(board), a.output))
            outputs.append(a.split_header)
        _depfile(a.depfile, outputs, [a.input] + ([a.plan] if a.plan else []), step)
    elif step == "board":
        from .. import targets
        from ..firmware import toolchain

        t = targets.get(_board(a))
        out = Path(a.output)
        make_dirs(out)
        ld = out / "board.ld" if t.linker_template else None
        if ld:
            pipeline._write(ld, t.linker_script())
        info = {"board": t.name, "cc": t.cc, "cflags": list(t.cflags) + ["-Wall"] + [f"-D{d}" for d in t.defines],
                "include_dirs": [str(d) for d in toolchain.include_dirs(t, out)],
                "sources": [str(s) for s in toolchain.sources(t, out) if s.name != "model.c"],
                "ldflags": toolchain.link_flags(t, ld), "run": list(t.run), "weights_align": t.weights_align}
        pipeline._write(out / "board.json", json.dumps(info, indent=1) + "\n")
        _depfile(a.depfile, [out / "board.json"] + ([ld] if ld else []), [], step)
    return 0


def _plan(a, graph):
    """The plan file a.plan read back for graph, refused in one line when it is not a sound plan of it."""
    from .. import pipeline

    plan = pipeline.load_plan(_json(a.plan), graph, a.plan)
    problems = kinds.problems(plan, graph)
    if problems:
        raise UsageError(f"{a.plan} fails the plan checker ({problems[0]}); make it again with buildtool gen plan")
    return plan


def _need(a, attr: str, what: str) -> None:
    if not getattr(a, attr):
        raise UsageError(f"gen {a.step} needs {what}")


def _board(a) -> str:
    from .. import targets

    if not a.board:
        raise UsageError(f"gen {a.step} needs --board (`buildtool boards` lists them)")
    targets.get(a.board)  # one line listing the boards when unknown
    return a.board


def _json(path: str) -> dict:
    from ..model.reader import read_model_file

    try:
        return json.loads(read_model_file(path, path))  # the bounded reader: regular files only
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"{path} is not JSON ({type(e).__name__}); make it again with buildtool gen") from None


def _from_skeleton(path: str, name: str | None = None):
    from .. import pipeline

    try:
        return pipeline.from_skeleton(_json(path), name)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise UsageError(f"{path} is not a skeleton ({type(e).__name__}); make it with buildtool gen skeleton") from None


def add_parser(sub) -> None:
    s = sub.add_parser("gen", help="one pipeline step with declared outputs (for build systems)",
                       description=__doc__.split("\n\n")[1] if __doc__ else None)
    s.add_argument("step", choices=STEPS)
    s.add_argument("input", nargs="?", help="the step's input: zoo name, model file or skeleton.json")
    s.add_argument("plan", nargs="?", help="gen code: plan.json; gen flash: a fused plan's plan.json (its weights' "
                                           "placement in memory regions)")
    s.add_argument("-o", "--output", required=True, help="output file (model, skeleton, plan, flash) or directory")
    s.add_argument("--board", help="board (code, flash, board)")
    s.add_argument("--name", help="gen code: the model's name in model.h (default: the skeleton's)")
    s.add_argument("--opt", action="append", metavar="KEY=VALUE",
                   help="plan option, e.g. optimize=ram (the build variables' vocabulary; repeatable)")
    s.add_argument("--no-daemon", action="store_true", help="run the step (and plan) in this process")
    s.add_argument("--depfile", help="write a Makefile-style depfile of the inputs and the code that ran")
    s.add_argument("--split-header", metavar="FILE",
                   help="gen flash: also write the C header that splits weights.bin for weights.S (the "
                        "defines of its part in external memory; none when it has none)")
    s.set_defaults(fn=run)


__all__ = ["run", "run_step", "step_args", "add_parser", "absolute_paths", "as_typed", "STEPS"]
