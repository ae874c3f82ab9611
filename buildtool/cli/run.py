"""`buildtool run`: the model on the numpy reference executor inside its planned arena, or built as
firmware for a board and run there (QEMU or natively); inputs and outputs as .npy/.npz files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from .. import pipeline
from ..codegen import code_budget
from ..errors import UsageError
from ..firmware import runner
from ..model.inputs import load_inputs, output_file_bytes
from ..model.reader import short
from ..plan.arena.execute import run_sequence
from ..plan.kinds import execute
from ..progress import Progress, stage
from ..model.control import DEFAULT_MAX_ITERATIONS, FIRMWARE_MAX_ITERATIONS, IterationLimit, iteration_bound
from ..steps.models import model_name
from .common import (MODEL_HELP, add_plan_options, load_model, make_plan, number_arg, plan_options,
                     write_atomic)


def _board_run(g, xs, a):
    out = a.build_dir or os.path.join("build", a.board, pipeline.build_dir_name(g.name))
    opts = plan_options(a)
    plan = make_plan(g, a, opts)
    with Progress(f"{model_name(a.model)} on {a.board}"):
        stage("building the firmware")
        pipeline.build(g, a.board, out, opts, plan)
        stage("running it")
        if a.sequence:
            ys, prof, ram = runner.run(a.board, out, _steps(xs), sequence=True, flash_wait_states=a.flash_wait_states)
        else:
            y, prof, ram = runner.run(a.board, out, xs, flash_wait_states=a.flash_wait_states)
    print(runner.format_report(prof, ram), file=sys.stderr)
    cp = json.loads((Path(out) / "firmware.json").read_text()).get("code_plan")
    if cp:
        print("\n".join(code_budget.lines(cp)), file=sys.stderr)
    if a.sequence:
        return _stack_steps(ys)
    return y if isinstance(y, list) else [y]


def _steps(xs: list) -> list:
    """Per-input arrays of N stacked invocations -> N input sets."""
    return [[x[n] for x in xs] for n in range(len(xs[0]))]


def _stack_steps(ys: list) -> list:
    """N invocations' outputs -> one array per model output, stacking the N on a new first axis."""
    ys = [y if isinstance(y, list) else [y] for y in ys]
    return [np.stack([y[k] for y in ys]) for k in range(len(ys[0]))]


def _output_keys(g) -> list:
    """The keys of `run --output y.npz`: the output tensors' names when they are distinct and not
    empty, else arr_0, arr_1, ... (np.savez's); in both cases np.load(...).files lists them in order."""
    names = [g.tensors[i].name for i in g.outputs]
    if all(names) and len(set(names)) == len(names):
        return names
    return [f"arr_{k}" for k in range(len(names))]


def _check_output_path(g, path: str | None) -> None:
    if path and not path.endswith(".npz") and len(g.outputs) > 1:
        raise UsageError(f"the model has {len(g.outputs)} outputs and a .npy holds one array; "
                         f"save them all with --output {os.path.splitext(path)[0]}.npz")


def _save_outputs(g, outs: list, path: str) -> None:
    write_atomic(path, output_file_bytes(path, outs, _output_keys(g)))


def _print_outputs(g, outs: list) -> None:
    """One line of values per output; with several outputs each line starts with the output's name."""
    for k, y in zip(_output_keys(g), outs):
        values = " ".join(map(str, y.reshape(-1).tolist()))
        print(f"{short(k, 32)}: {values}" if len(outs) > 1 else values)


def cmd_run(a) -> int:
    g = load_model(a.model)

    xs = load_inputs(g, a.input, a.sequence)
    _check_output_path(g, a.output)
    opts = plan_options(a)
    if a.sequence and opts.fused:
        raise UsageError("--sequence runs the plain plan; drop --split/--optimize/--input-streamed")
    if a.flash_wait_states is not None:
        if not a.board:
            raise UsageError("--flash-wait-states is for the cycle estimate of a firmware run; give --board")
        runner.check_flash_wait_states(a.board, a.flash_wait_states)
    if a.board and a.max_iterations is not None:
        raise UsageError(f"--max-iterations bounds the numpy executor; the firmware's WHILE stops at BT_MAX_ITERATIONS "
                         f"(default {FIRMWARE_MAX_ITERATIONS:,}: compile model.c with -DBT_MAX_ITERATIONS=N)")
    if a.board:
        outs = _board_run(g, xs, a)
    else:
        plan = make_plan(g, a, opts)
        try:
            with iteration_bound(a.max_iterations or DEFAULT_MAX_ITERATIONS):
                outs = (_stack_steps(run_sequence(g, plan, _steps(xs))) if a.sequence else execute(plan, g, xs))
        except IterationLimit as e:
            raise IterationLimit(f"{a.model}: {e}") from None
    if a.output:
        _save_outputs(g, outs, a.output)
    else:
        _print_outputs(g, outs)
    return 0


def add_run(sub) -> None:
    s = sub.add_parser("run")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("--input", required=True, action="append",
                   help=".npy input tensor; repeat once per model input in order, or one .npz holding them all")
    s.add_argument("--output", help=".npy file for the output, or .npz for every output keyed by output name "
                                    "in order (default: print them)")
    s.add_argument("--sequence", action="store_true",
                   help="the .npy stacks N inputs on a new first axis: invoke N times, the model's state "
                        "(SVDF/LSTM) carrying over; the output stacks the N outputs")
    s.add_argument("--board", help="build firmware for this board and run it (QEMU or natively)")
    s.add_argument("--build-dir", help="where to build firmware (default build/BOARD/MODEL)")
    s.add_argument("--flash-wait-states", type=int, metavar="N",
                   help="with --board on a Cortex-M4: the estimated cycles with N wait states on every read of "
                        "code and data from the board's flash (docs/kernels.md: what the model leaves out)")
    s.add_argument("--max-iterations", type=number_arg(_positive, "a positive number of iterations"), metavar="N",
                   help=f"without --board: stop a WHILE whose condition still holds after N iterations, in one line "
                        f"(default {DEFAULT_MAX_ITERATIONS:,}; the firmware's bound: BT_MAX_ITERATIONS, default "
                        f"{FIRMWARE_MAX_ITERATIONS:,})")
    add_plan_options(s)
    s.set_defaults(fn=cmd_run)


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise ValueError(text)
    return n
