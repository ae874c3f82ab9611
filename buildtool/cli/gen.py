"""`buildtool gen STEP`: the pipeline's steps with fixed, declared outputs, for build systems.

    buildtool gen model    ZOO_NAME            -o model.tflite
    buildtool gen skeleton MODEL.tflite        -o skeleton.json
    buildtool gen plan     skeleton.json       -o plan.json  [--opt key=value ...]
    buildtool gen code     skeleton.json plan.json --board B -o DIR   (DIR/model.c, model.h, firmware.json;
                           a fused plan: MODEL.tflite instead of skeleton.json) [--opt optimize_code=size ...]
    buildtool gen flash    MODEL.tflite [plan.json] --board B -o weights.bin  [--split-header FILE]
                           [--code-size firmware.json]
                           (plan.json: a fused plan's, for the weights' placement in memory regions;
                           FILE: weights.bin's split as defines for weights.S)
    buildtool gen board    --board B           -o DIR   (DIR/board.json [+ DIR/board.ld])
    (every step: [--depfile FILE [--depfile-target STAMP [--depfile-outputs]]] [--no-daemon])

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

import argparse
import os
import textwrap

from ..errors import BuildtoolError
from ..fsutil import writes_through
from ..serve.daemon import protocol
from ..serve.daemon.client import DaemonClient, daemon_wanted, warn_once

STEPS = ("model", "skeleton", "plan", "code", "flash", "board")


def run(a) -> int:
    """One step: in the planner daemon when one may be used, else here."""
    if a.step in protocol.GEN_STEPS and daemon_wanted(a.no_daemon) and _via_daemon(a):
        return 0
    from .gen_steps import run_step  # (here only: a step the daemon ran costs this process no numpy)

    return run_step(a)


def _via_daemon(a) -> bool:
    """Ask the daemon to run the step; False (after one warning) when no daemon can be used or this
    process does not see the files it wrote (_unseen). An output written through (a FIFO, a device,
    /dev/stdout: the daemon's would be another) is written here."""
    args = {k: getattr(a, k) for k in protocol.GEN_ARGS}
    typed = protocol.absolute_paths(args, os.getcwd())
    if any(writes_through(p) for p in protocol.gen_outputs(args)):
        return False
    wire = {k: protocol.to_wire(v) for k, v in args.items() if v is not None}
    try:
        with DaemonClient() as c:
            reply = c.request({"type": "gen", "args": wire, "umask": protocol.umask_now(),
                               "package": protocol.package_now()})
    except protocol.DaemonUnavailable as e:
        warn_once(f"{e}; running the step in this process")
        return False
    except BuildtoolError as e:  # the daemon names the absolute paths it was sent: name them as typed
        e.args = (protocol.as_typed(str(e), typed),)
        raise
    unseen = protocol.unseen_output((reply or {}).get("outputs"), protocol.gen_outputs(args))
    if unseen:
        warn_once(f"the planner daemon's output {protocol.as_typed(unseen, typed)} is not here (a daemon in another "
                  f"mount namespace?); running the step in this process")
        return False
    for note in (reply or {}).get("notes") or []:  # (a daemon of an older install sends none)
        print(note)
    return True


def add_parser(sub) -> None:
    s = sub.add_parser("gen", formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=textwrap.fill(
                           "Run one step of the build with fixed, declared outputs, as CMake and Bazel do: each "
                           "output is rewritten only when its bytes change, and --depfile names the step's inputs "
                           "and the Python sources of its code.", 78) + "\n\n" + textwrap.dedent(__doc__.split("\n\n")[1]))
    s.add_argument("step", choices=STEPS)
    s.add_argument("input", nargs="?", help="the step's input: zoo name, model file or skeleton.json")
    s.add_argument("plan", nargs="?", help="gen code: plan.json; gen flash: a fused plan's plan.json (its weights' "
                                           "placement in memory regions)")
    s.add_argument("-o", "--output", required=True, help="output file (model, skeleton, plan, flash) or directory")
    s.add_argument("--board", help="board (code, flash, board)")
    s.add_argument("--name", help="gen code: the model's name in model.h (default: the skeleton's)")
    s.add_argument("--opt", action="append", metavar="KEY=VALUE",
                   help="plan option, e.g. optimize=ram (the build variables' vocabulary; repeatable); gen code "
                        "takes the code step's: optimize_code=size|balanced|speed, code_budget=SIZE, staging_ram=SIZE")
    s.add_argument("--no-daemon", action="store_true", help="run the step (and plan) in this process")
    s.add_argument("--depfile", help="write a Makefile-style depfile of the inputs and the code that ran")
    s.add_argument("--depfile-target", metavar="FILE",
                   help="the depfile's target instead of the outputs: a stamp file the build system touches after "
                        "the step (an output is rewritten only when its bytes change, so it may stay older than "
                        "its inputs; CMake's steps do this)")
    s.add_argument("--depfile-outputs", action="store_true",
                   help="with --depfile-target: also name the step's outputs among the stamp's prerequisites, so "
                        "that Make remakes an output someone deleted (CMake gives a depfile's prerequisites empty "
                        "rules: a missing one is new); not for Ninja, which reads its own output as a cycle")
    s.add_argument("--split-header", metavar="FILE",
                   help="gen flash: also write the C header that splits weights.bin for weights.S (the "
                        "defines of its part in external memory; none when it has none)")
    s.add_argument("--code-size", metavar="FIRMWARE_JSON",
                   help="gen flash: the code step's firmware.json, whose measured code bytes the weights were "
                        "placed around (boards whose weights may go to external memory)")
    s.set_defaults(fn=run)


__all__ = ["run", "add_parser", "STEPS"]
