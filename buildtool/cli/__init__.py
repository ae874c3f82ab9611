"""The `buildtool` command line: a thin shell over the library.

Every failure a user can cause ends in one line on stderr and exit status 2. Each command lives in its
own module (COMMANDS); only the module of the command on the command line is imported, so a warm
`buildtool plan` answered by the planner daemon (serve.daemon.thin) loads none of them.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import warnings

from .. import __version__
from ..errors import BuildtoolError, InternalError, ModelError, PlanError, internal, one_line
from ..fsutil import guarded_stdout
from ..serve.daemon.thin import run_in_daemon

MAX_ERROR_CHARS = 200  # the longest error line we aim for (model path included)
# Every command, in the order `buildtool -h` lists them: the module (relative to this package) whose
# function adds its parser (which names the function that runs it), and the line `buildtool -h` shows
# for it (kept here so that the list imports no command's module).
COMMANDS = {
    "inspect": (".models", "add_inspect", "ops, tensors, shapes, quantisation, MACs, params, activation bytes"),
    "ops": (".models", "add_ops", "the supported operators, their activation types and int16 support"),
    "plan": (".plan", "add_plan", "plan the tensor arena"),
    "zoo": (".models", "add_zoo", "write a well-known architecture as an int8 .tflite"),
    "run": (".run", "add_run", "run the model on the reference executor inside the planned arena"),
    "report": (".report", "add_report",
               "HTML + SVG report: memory over the execution order, arena map, fusion blocks"),
    "flash": (".info", "add_flash", "flash images: `flash verify weights.bin`"),
    "boards": (".info", "add_boards", "list the boards (target plugins) that are installed; with a board, "
               "its compiler, memories and the command that runs an image on it"),
    "scons-dir": (".info", "add_scons_dir",
                  'the folder for SCons\' toolpath=[...] (tools=["default", "btfirmware"])'),
    "cmake-dir": (".info", "add_cmake_dir",
                  "the folder for CMAKE_PREFIX_PATH or Buildtool_DIR (find_package(Buildtool))"),
    "bazel-dir": (".info", "add_bazel_dir", 'the path for local_repository(name = "buildtool", path = ...)'),
    "daemon": (".daemon", "add_parser", "the background planner daemon: start, stop, status, clear"),
    "gen": (".gen", "add_parser", "one pipeline step with declared outputs (for build systems)"),
    "multi": (".multi", "add_parser", "several models (never running at once) in one firmware sharing one arena"),
    "export": (".export", "add_parser", "write the model as a C library folder, or as a .tflite file with "
               "buildtool's plan for TFLite Micro"),
    "fit": (".fit", "add_fit", "which boards the model fits, with which plan, and its estimated latency"),
    "watch": ("..integrations.watch", "add_parser",
              "rebuild (and optionally run) on save: a model's firmware, or your build command"),
    "netsplit": ("..netsplit.cli", "add_parser",
                 "split a CNN into slim branches (accuracy-guided search; needs TensorFlow)"),
}
# Commands a running planner daemon may run for this process (the fast path: serve/daemon/thin.py).
DAEMON_COMMANDS = ("plan", "gen")


class _Commands:
    """The subparsers as a command's adder sees them: each parser it adds gets its line of COMMANDS."""

    def __init__(self, sub):
        self.sub = sub

    def add_parser(self, name: str, **kw):
        return self.sub.add_parser(name, help=COMMANDS[name][2], **kw)


def build_parser(only: str | None = None, listing: bool = False):
    """The whole command line; `only` (a command's name): that command's parser alone, and no other
    command's module imported; `listing`: the command list alone (`buildtool -h`, a mistyped command),
    no command's module imported."""
    import argparse  # (a warm `plan` answered by the daemon never parses here: the thin client's start-up)

    p = argparse.ArgumentParser(prog="buildtool", description="int8 TFLite CNN -> memory-planned MCU firmware")
    p.add_argument("--version", action="version", version=f"buildtool {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    for name, (module, adder, line) in COMMANDS.items():
        if listing:
            sub.add_parser(name, help=line)
        elif only in (None, name):  # the module by name: a command's imports are paid only when it runs
            getattr(importlib.import_module(module, __name__), adder)(_Commands(sub))
    return p


def error_message(e: BuildtoolError, spec: str | None, sent: str | None = None) -> str:
    """One line; a problem with the model starts with the model path as the user typed it (the planner
    daemon reports the absolute path it was sent, `sent` when not this process's abspath; the library
    may say nothing of the path)."""
    msg = one_line(str(e))
    about = isinstance(e, (ModelError, PlanError)) or getattr(e, "about_model", False) \
        or e.exit_code == InternalError.exit_code  # a bug met on this model (here or in the planner daemon)
    if not spec or not about:
        return msg
    for known in (spec, sent or os.path.abspath(spec), "<bytes>"):
        if msg.startswith(known + ": "):
            msg = msg[len(known) + 2:]
            break
    else:  # a library line that names the model by its name (the firmware runner's "model 'NAME': ")
        msg = re.sub(r"^model '[^']*': ", "", msg)
    return f"{spec}: {msg}"

def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # before the parser
        print(f"buildtool {__version__}")
        return 0
    if argv[:1] and argv[0] in DAEMON_COMMANDS:
        code = run_in_daemon(argv)
        if code is not None:
            return code
    named = argv[0] if argv[:1] and argv[0] in COMMANDS else None
    p = build_parser(named, listing=named is None)
    a = p.parse_args(argv)
    if not getattr(a, "fn", None):
        p.print_help()
        return 2
    try:
        with warnings.catch_warnings(), guarded_stdout():  # a full disk under stdout: one line too
            # numpy's overflow/invalid warnings on odd models are noise before the one error line.
            warnings.simplefilter("ignore", RuntimeWarning)
            return a.fn(a)
    except BuildtoolError as e:
        print(f"buildtool: error: {error_message(e, getattr(a, 'model', None))}", file=sys.stderr)
        return e.exit_code
    except MemoryError:
        e = ModelError("ran out of memory; the model needs more memory than this process may use")
        print(f"buildtool: error: {error_message(e, getattr(a, 'model', None))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("buildtool: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: one line and exit 3, the traceback only when asked for
        if os.environ.get("BUILDTOOL_DEBUG"):
            raise
        e = internal(e)
        print(f"buildtool: error: {error_message(e, getattr(a, 'model', None))}", file=sys.stderr)
        return e.exit_code


if __name__ == "__main__":
    sys.exit(main())
