"""The whole flow, model -> graph -> plan -> code -> image -> run, as the steps run it.

    model = read_model("mbv2-w0.35")                 # a .tflite path or a zoo name
    check(model)                                      # every operator supported, every shape sound
    plan = plan_memory(model.graph, PlanOptions())   # the ONLY place that picks arena or fused
    paths = generate(model, plan, "cortex-m4", out)  # plan.json, model.c, model.h, weights.bin, firmware.json
    elf = link(model, plan, "cortex-m4", out, paths) # the board's toolchain
    y, profile, ram = run("cortex-m4", out, x)       # natively or in the board's emulator

`build` is these steps in order. Each is a step of buildtool/steps (one module a step, the same
functions and seals the SCons tool, `buildtool gen` for CMake and Bazel, and the multi-model build
run), so the same model, options and board give byte-identical files on every path.
"""

from __future__ import annotations

import json

import sys
from pathlib import Path

from .. import targets
from ..firmware.runner import run
from ..firmware.fits import check_fits, fitting_plan
from ..firmware.toolchain import check_tools
from ..firmware.library import model_opcodes, model_sources
from ..firmware.toolchain import link as link_firmware
from ..fsutil import make_dirs
from ..plan import ArenaPlan
from ..options import PlanOptions
from ..steps import code as code_step
from ..steps import flash as flash_step
from ..steps import store
from ..steps.code import manifest, measured_code
from ..steps.flash import image as flash_image
from ..steps.model import zoo_model
from ..steps.models import Model, Source, build_dir_name, check, is_model_file, locate, model_name, parse, read_model
from ..steps.plan import plan_memory
from ..steps.readback import load_plan
from ..steps.skeleton import from_skeleton, skeleton
from .multi import build_multi, run_multi

__all__ = ["Model", "Source", "PlanOptions", "locate", "parse", "read_model", "check", "plan_memory", "load_plan",
           "generate", "code", "manifest", "skeleton", "from_skeleton", "zoo_model", "flash_image", "board", "link",
           "run", "build", "is_model_file", "model_name", "build_dir_name", "build_multi", "run_multi"]


def code(model: Model, plan, board: str, options: PlanOptions | None = None) -> dict:
    """The generated text files: plan.json, model.c, model.h, firmware.json (weights apart: flash_image);
    options: the code step's (optimize_code, code_budget)."""
    return code_step.run(model, plan, board, options=options).files


def generate(model: Model, plan, board: str, out_dir, options: PlanOptions | None = None, made=None) -> dict:
    """Write plan.json, model.c, model.h, weights.bin and firmware.json (sealed) into out_dir; return
    their paths; options: the code step's (optimize_code, code_budget); made: its outputs when already run."""
    model = read_model(model)
    out = Path(out_dir)
    make_dirs(out)
    paths = {"plan": out / "plan.json", "model_c": out / "model.c", "model_h": out / "model.h",
             "weights": out / "weights.bin", "manifest": out / "firmware.json"}
    made = made or code_step.run(model, plan, board, options=options)
    store(made, {"plan.json": paths["plan"], "model.c": paths["model_c"], "model.h": paths["model_h"],
                 "firmware.json": paths["manifest"]})
    code = json.loads(made.files["firmware.json"]).get("flash_code_bytes")  # the weights placed around it
    store(flash_step.run(model, board, plan, code), {"weights.bin": paths["weights"]})
    return paths


def board(name: str, kernels: tuple | None = None, stack_bytes: int | None = None):
    """The board's Target, with another kernel search order or stack size when asked."""
    return targets.get(name).configured(kernels, stack_bytes)


def link(model: Model, plan, target, out_dir, paths: dict) -> dict:
    """Compile the generated sources with the board's toolchain and link firmware.elf (atomically);
    paths plus "elf" (and "ld")."""
    model_c = paths.get("model_c")  # its calls choose a split kernel's files (library.model_sources)
    kernels = model_sources(target, model_opcodes(model.graph), not isinstance(plan, ArenaPlan),
                            model_c=Path(model_c).read_text() if model_c else None,
                            gen_files=(str(paths["model_h"]),) if model_c and paths.get("model_h") else ())
    return link_firmware(target, Path(out_dir), paths, model.graph, plan, kernels)


def build(spec, board_name: str, out_dir, options: PlanOptions | None = None, plan=None,
          kernels: tuple | None = None, stack_bytes: int | None = None, fit_hint: str = "--optimize ram",
          say=None) -> dict:
    """The whole flow: read, check, plan, check it fits, generate, link. Returns the paths written.
    On a board that picks its own plan (Target.auto_fit) a plan that does not fit is replaced by the
    first of the fit ladder that does; say(line) tells the user so (default: on stderr)."""
    say = say or (lambda line: print(line, file=sys.stderr))
    options = PlanOptions.from_map(options)
    t = board(board_name, kernels, stack_bytes)
    check_tools(t)
    model = read_model(spec)
    check(model)
    plan = plan if plan is not None else plan_memory(model.graph, options)
    # a board running its code from RAM (xcore's tile): each plan's code measured (with the code step's options),
    # the RAM left to the arena the tile less that code, not a fixed reserve
    measure = (lambda p: measured_code(model, p, t, options)) if t.code_in_ram else None
    plan, note = fitting_plan(model.graph, plan, t, options, plan_memory, measure)  # a board that picks its own plan
    if note:
        say(f"buildtool: {note}")
    # the code step's outputs measured, then written as they are
    made = code_step.run(model, plan, board_name, options=options) if t.code_in_ram else None
    code = measured_code(model, plan, t, options, made) if made else None
    check_fits(model.graph, plan, t, fit_hint, options, code)
    out = Path(out_dir).resolve()
    if (out / "firmware.elf").exists():
        (out / "firmware.elf").unlink()  # a refused or failed build leaves no firmware of other sources behind
    return link(model, plan, t, out, generate(model, plan, board_name, out, options, made))
