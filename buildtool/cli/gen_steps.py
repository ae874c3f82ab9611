"""`buildtool gen STEP` run: the step of buildtool/steps a command line names, its outputs stored
with their seals, and its depfile (the step's inputs and steps.sources(step), the import closure of
the step's code). Run by cli/gen.py in this process, or by the planner daemon for a client."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import steps, targets
from ..errors import UsageError
from ..fsutil import make_dirs, write_if_changed
from ..options import PlanOptions
from ..serve.daemon.protocol import CODE_FILES, GEN_ARGS, GEN_STEPS, gen_path_args
from ..steps import board as board_step
from ..steps import code as code_step
from ..steps import flash as flash_step
from ..steps import model as model_step
from ..steps import plan as plan_step
from ..steps import skeleton as skeleton_step

def step_args(args: dict):
    """A step's arguments (a daemon request's map) as run_step takes them; ValueError when malformed."""
    if not isinstance(args, dict) or args.get("step") not in GEN_STEPS or set(args) - set(GEN_ARGS):
        raise ValueError("a gen request needs a step and only the keys " + ", ".join(GEN_ARGS))
    a = argparse.Namespace(**{k: args.get(k) for k in GEN_ARGS}, no_daemon=True)
    for k in GEN_ARGS:
        v = getattr(a, k)
        if k == "opt":
            if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                raise ValueError("gen opt must be a list of strings")
        elif k == "depfile_outputs":
            if v is not None and not isinstance(v, bool):
                raise ValueError("gen depfile_outputs must be true or false")
        elif v is not None and not isinstance(v, str):
            raise ValueError(f"gen {k} must be a string")
        elif k in gen_path_args(a.step) and v and not os.path.isabs(v):
            raise ValueError(f"gen {k} must be an absolute path")
    return a


def run_step(a, planner=None, say=print) -> int:
    """The step itself. planner(graph, PlanOptions) -> {"plan": ...}: how the plan step plans
    (the daemon passes its memo's; default: in this process); say(line): the step's notes to the user
    (the plan a board picked for itself), printed by default, the daemon's client prints them."""
    step, out = a.step, Path(a.output)
    if getattr(a, "depfile_target", None) and not a.depfile:
        raise UsageError("gen --depfile-target names the target of the depfile --depfile FILE writes: give both")
    if getattr(a, "depfile_outputs", None) and not getattr(a, "depfile_target", None):
        raise UsageError("gen --depfile-outputs names the outputs as prerequisites of --depfile-target's stamp: "
                         "give --depfile FILE --depfile-target STAMP too")
    if step == "model":
        _need(a, "input", "a zoo name")
        written = steps.store(model_step.run(a.input), {"model.tflite": out})
        inputs = []
    elif step == "skeleton":
        _need(a, "input", "a .tflite file")
        written = steps.store(skeleton_step.run(a.input), {"skeleton.json": out})
        inputs = [a.input]
    elif step == "plan":
        _need(a, "input", "skeleton.json")
        plan_with = (lambda g, o: planner(g, o)["plan"]) if planner else plan_step.in_process
        made = plan_step.run_file(a.input, options_of(a.opt), plan_with, _board(a) if a.board else None, a.name,
                                  code_step.measurer)
        for note in made.notes:
            say(f"buildtool: {note}")
        written = steps.store(made, {"plan.json": out})
        inputs = [a.input]
    elif step == "code":
        _need(a, "input", "skeleton.json or the model")
        if not a.plan:
            raise UsageError("gen code needs the plan: buildtool gen code skeleton.json plan.json --board B -o DIR")
        made = code_step.run_files(a.input, a.plan, _board(a), a.name, options_of(a.opt))
        make_dirs(out)
        written = steps.store(made, {n: out / n for n in CODE_FILES})
        inputs = [a.input, a.plan]
    elif step == "flash":
        _need(a, "input", "a .tflite file")
        made = flash_step.run_files(a.input, _board(a), a.plan, a.code_size)
        # --split-header: for build systems that assemble weights.S without reading weights.bin
        written = steps.store(made, {"weights.bin": out, **({"weights_split.h": a.split_header} if a.split_header else {})})
        inputs = [a.input] + ([a.plan] if a.plan else []) + ([a.code_size] if a.code_size else [])
    else:  # board
        made = board_step.run(_board(a), out)
        make_dirs(out)
        written = steps.store(made, {n: out / n for n in made.files})
        inputs = []
    if a.depfile:  # (its target: the outputs, or --depfile-target's stamp, which the build system touches; with
        # --depfile-outputs the outputs among the stamp's prerequisites: Make remakes a deleted one)
        target = getattr(a, "depfile_target", None)
        extra = written if target and getattr(a, "depfile_outputs", None) else []
        write_if_changed(Path(a.depfile), depfile([target] if target else written, inputs + extra, steps.sources(step)))
    return 0


def depfile(outputs: list, inputs: list, code: list) -> str:
    """A Makefile-style depfile: the outputs (or a stamp standing for them) depend on the inputs and the code that
    made them (a step's: steps.sources(step))."""
    deps = [str(Path(p).resolve()) for p in inputs] + code

    def esc(p: str) -> str:
        return p.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")

    return " ".join(esc(str(Path(o).resolve())) for o in outputs) + ": " + " \\\n  ".join(esc(d) for d in deps) + "\n"


def options_of(pairs: list) -> PlanOptions:
    """--opt key=value pairs as PlanOptions (checked: a bad one is one line)."""
    given = {}
    for p in pairs or ():
        if "=" not in p:
            raise UsageError(f"--opt '{p[:40]}' must be key=value (e.g. --opt optimize=ram)")
        k, v = p.split("=", 1)
        given[k.strip()] = v
    return PlanOptions.from_strings(given)


def _need(a, attr: str, what: str) -> None:
    if not getattr(a, attr):
        raise UsageError(f"gen {a.step} needs {what}")


def _board(a) -> str:
    if not a.board:
        raise UsageError(f"gen {a.step} needs --board (`buildtool boards` lists them)")
    targets.get(a.board)  # one line listing the boards when unknown
    return a.board
