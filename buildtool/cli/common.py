"""What the commands share: the model argument, the plan options' flags, and the plan a command
asks for (through the planner daemon unless --no-daemon, or the daemon's own planner when it runs a
client's command line).

Importing it loads no model, planner or numpy (`buildtool plan --help` stays light,
tests/test_cli_imports.py): what reads a model or a plan is imported by the function that needs it."""

from __future__ import annotations

import argparse
import sys

from ..fsutil import write_atomic, writes_through
from ..options import PlanOptions
from ..serve.daemon.client import Interrupted
from ..serve.daemon.thin import interrupted
from ..progress import Progress

__all__ = ["write_atomic", "say_wrote", "load_model", "number_arg", "add_plan_options",
           "plan_options", "request_plan", "make_plan", "MODEL_HELP", "one_line_usage_errors"]


MODEL_HELP = "a .tflite file, or a zoo name (`buildtool zoo --list`)"


def say_wrote(paths) -> None:
    """The 'wrote PATH' line: on stderr when an output went through to what stands there (-o /dev/stdout,
    a FIFO), so the bytes on standard output are the file's alone."""
    print(f"wrote {' and '.join(paths)}", file=sys.stderr if any(writes_through(p) for p in paths) else sys.stdout)


def load_model(spec: str):
    """A path to a .tflite file, or the name of a zoo architecture."""
    from ..steps.models import read_model  # (reading a model loads numpy and the zoo: not for `--help`)

    return read_model(spec).graph


def number_arg(conv, what: str):
    """An argparse type: conv(text), refusing garbage in one short line (a 5000-digit value is not echoed)."""
    def parse(text: str):
        try:
            return conv(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"'{shown}' is not {what}") from None

    parse.__name__ = conv.__name__
    return parse


def one_line_usage_errors(p: argparse.ArgumentParser, command: str) -> None:
    """A command's usage mistakes (an unknown option, a bad or missing value) as one line on stderr and
    exit 2, like its other errors, instead of argparse's usage text above the error."""
    parse = p.parse_known_args

    def error(message: str):
        print(f"buildtool: error: {command}: {message}", file=sys.stderr)
        sys.exit(2)

    def parse_known_args(args=None, namespace=None):
        a, extra = parse(args, namespace)
        if extra:
            error(f"unrecognized arguments: {' '.join(extra)}")
        return a, extra

    p.error = error
    p.parse_known_args = parse_known_args


def _cap_arg(text: str):
    return "none" if text.strip().lower() == "none" else float(text)


def add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--align", type=number_arg(int, "a whole number"), default=16,
                   help="buffer alignment in bytes (default 16)")
    p.add_argument("--time-budget", type=number_arg(float, "a number"), default=2.0, metavar="S",
                   help="seconds the exact solver may spend (default 2)")
    p.add_argument("--no-order-search", action="store_true", help="keep the model's operator order")
    p.add_argument("--no-inplace", action="store_true", help="never run operators in place")
    p.add_argument("--inplace-pointwise", action="store_true",
                   help="let a 1x1 convolution (stride 1, c_out >= c_in) write its output over its own dying input "
                        "(layer-by-layer plans)")
    p.add_argument("--no-daemon", action="store_true", help="plan in this process, without the planner daemon")
    c = p.add_argument_group("code (the kernel variant of each layer, docs/code-size.md)")
    c.add_argument("--optimize-code", metavar="size|balanced|speed",
                   help="size: the least code; speed: the fastest variants; balanced (default): the least code "
                        "within 5 %% of speed's modelled cycles")
    c.add_argument("--code-budget", metavar="SIZE",
                   help="bytes the layers' kernel code may take, e.g. 65536, 64KiB (default: none)")
    c.add_argument("--staging-ram", metavar="SIZE",
                   help="bytes of spare SRAM a part's firmware may copy weights into before they are read "
                        "(nucleo-l4r5zi, docs/memory-model.md), e.g. 0, 64KiB (default: all it has spare)")
    f = p.add_argument_group("memory optimisers (operator splitting, patch-based fusion)")
    f.add_argument("--split", action="append", metavar="TOP:BOTTOM:N|auto",
                   help="compute ops TOP..BOTTOM in N horizontal slices (repeatable), or 'auto'")
    f.add_argument("--optimize", choices=("ram", "macs"),
                   help="ram: least peak RAM under --max-mac-overhead; macs: least MACs under --ram-limit")
    f.add_argument("--max-mac-overhead", type=number_arg(_cap_arg, "a number or 'none'"), metavar="F|none",
                   help="MACs <= F x the unfused network (default 1.3; 'none': least RAM at any MAC cost)")
    f.add_argument("--ram-limit", metavar="SIZE", help="peak RAM limit, e.g. 65536, 64KiB, 64kB")
    f.add_argument("--input-streamed", action="store_true",
                   help="pull the network input a row band at a time instead of holding it in the arena")
    f.add_argument("--no-band-input", action="store_true",
                   help="hold the input as one tensor, never in row bands freed as the first block passes")


def plan_options(a):
    """The CLI's flags as PlanOptions (checked: a bad value is one line)."""
    return PlanOptions.from_args(a)


def request_plan(a, options=None) -> dict:
    """The plan as JSON (plus cache statistics): through the planner daemon unless --no-daemon
    (inside the daemon, serving a client's command line: its own planner, a.planner). SIGINT or SIGTERM
    while waiting for the daemon ends the command: one line, exit 128 + the signal's number (as the
    thin client's fast path does)."""
    options = options or plan_options(a)
    if getattr(a, "planner", None) is not None:
        return dict(a.planner(a.model, options.to_map()), via_daemon=True)
    from ..serve.service import plan_json  # (planning commands only: inspect, zoo, ops never load the planner)
    from ..steps.models import model_name  # (as in load_model)

    try:
        with Progress(f"planning {model_name(a.model)}"):
            return plan_json(a.model, options, a.no_daemon)
    except Interrupted as e:
        raise SystemExit(interrupted(e)) from None


def make_plan(g, a, options=None):
    """The plan object for g (the model a.model names), from the daemon's cache when it has it."""
    from ..steps.readback import load_plan  # (a plan object: the planner's modules and numpy)

    return load_plan(request_plan(a, options)["plan"], g)
