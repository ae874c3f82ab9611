"""The `buildtool` command line: a thin shell over the library.

Every failure a user can cause ends in one line on stderr and exit status 2. Each command lives in its
own module (COMMANDS); only the module of the command on the command line is imported, so a warm
`buildtool plan` answered by the planner daemon (serve.daemon.thin) loads none of them.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings

from .. import __version__
from ..errors import BuildtoolError, InternalError, ModelError, PlanError, internal, one_line
from ..fsutil import guarded_stdout
from ..serve.daemon.thin import run_in_daemon

MAX_ERROR_CHARS = 200  # the longest error line we aim for (model path included)
# Every command, in the order `buildtool -h` lists them: the module (relative to this package) whose
# function adds its parser (which names the function that runs it).
COMMANDS = {
    "inspect": (".models", "add_inspect"), "ops": (".models", "add_ops"), "plan": (".plan", "add_plan"),
    "zoo": (".models", "add_zoo"), "run": (".run", "add_run"), "report": (".report", "add_report"),
    "flash": (".info", "add_flash"), "boards": (".info", "add_boards"), "scons-dir": (".info", "add_scons_dir"),
    "cmake-dir": (".info", "add_cmake_dir"), "bazel-dir": (".info", "add_bazel_dir"),
    "daemon": (".daemon", "add_parser"), "gen": (".gen", "add_parser"), "multi": (".multi", "add_parser"),
    "export": (".export", "add_parser"),
    "fit": (".fit", "add_fit"),
    "watch": ("..integrations.watch", "add_parser"), "netsplit": ("..netsplit.cli", "add_parser"),
}
# Commands a running planner daemon may run for this process (the fast path: serve/daemon/thin.py).
DAEMON_COMMANDS = ("plan", "gen")


def build_parser(only: str | None = None):
    """The whole command line; `only` (a command's name): that command's parser alone, and no other
    command's module imported (the command list is printed only when no command was named)."""
    import argparse  # (a warm `plan` answered by the daemon never parses here: the thin client's start-up)

    p = argparse.ArgumentParser(prog="buildtool", description="int8 TFLite CNN -> memory-planned MCU firmware")
    p.add_argument("--version", action="version", version=f"buildtool {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    for name, (module, adder) in COMMANDS.items():
        if only in (None, name):  # the module by name: a command's imports are paid only when it runs
            getattr(importlib.import_module(module, __name__), adder)(sub)
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
    return f"{spec}: {msg}"

def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # before the parser: building it imports every command's module
        print(f"buildtool {__version__}")
        return 0
    if argv[:1] and argv[0] in DAEMON_COMMANDS:
        code = run_in_daemon(argv)
        if code is not None:
            return code
    p = build_parser(argv[0] if argv[:1] and argv[0] in COMMANDS else None)
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
