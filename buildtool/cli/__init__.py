"""The `buildtool` command line: a thin shell over the library.

Every failure a user can cause ends in one line on stderr and exit status 2.
"""

from __future__ import annotations

import os
import sys
import warnings

from .. import __version__
from ..errors import BuildtoolError, ModelError, PlanError, UsageError, internal, one_line

MAX_ERROR_CHARS = 200  # the longest error line we aim for (model path included)


def is_model_path(spec: str) -> bool:
    from ..pipeline import is_model_file

    return is_model_file(spec)


def _model_name(spec: str) -> str:
    """A file's name without its extension; a zoo name whole (mbv2-w0.35 keeps its dot)."""
    from ..pipeline import model_name

    return model_name(spec)


def load_model(spec: str):
    """A path to a .tflite file, or the name of a zoo architecture."""
    from ..pipeline import read_model

    return read_model(spec).graph


def _write_atomic(path: str, data: bytes) -> None:
    from ..fsutil import write_atomic

    write_atomic(path, data)


def cmd_inspect(a) -> int:
    """Any well-formed model, including ones the planner refuses: the last line says what would stop it."""
    from ..model.inspect import describe, format_text

    if is_model_path(a.model):
        from ..model.reader import load_any

        g, problem = load_any(a.model)
    else:
        g, problem = load_model(a.model), None
    info = describe(g, problem)
    import json

    print(json.dumps(info, indent=1) if a.json else format_text(info))
    return 0


def cmd_ops(a) -> int:
    """The supported operators and their activation types, from the table the checks use."""
    from ..model.ops import supported_table

    rows = supported_table()
    if a.json:
        import json

        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'operator':20} {'input types':40} output types")
    for r in rows:
        print(f"{r['op']:20} {', '.join(r['inputs']):40} {', '.join(r['outputs'])}")
    return 0


def number_arg(conv, what: str):
    """An argparse type: conv(text), refusing garbage in one short line (a 5000-digit value is not echoed)."""
    def parse(text: str):
        try:
            return conv(text)
        except ValueError:
            import argparse

            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"'{shown}' is not {what}") from None

    parse.__name__ = conv.__name__
    return parse


def _cap_arg(text: str):
    return "none" if text.strip().lower() == "none" else float(text)


def add_plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--align", type=number_arg(int, "a whole number"), default=16,
                   help="buffer alignment in bytes (default 16)")
    p.add_argument("--time-budget", type=number_arg(float, "a number"), default=2.0, metavar="S",
                   help="seconds the exact solver may spend (default 2)")
    p.add_argument("--no-order-search", action="store_true", help="keep the model's operator order")
    p.add_argument("--no-inplace", action="store_true", help="never run operators in place")
    p.add_argument("--no-daemon", action="store_true", help="plan in this process, without the planner daemon")
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
    from ..options import PlanOptions

    return PlanOptions.from_args(a)


def request_plan(a, options=None) -> dict:
    """The plan as JSON (plus cache statistics): through the planner daemon unless --no-daemon
    (inside the daemon, serving a client's command line: its own planner, a.planner)."""
    options = options or plan_options(a)
    if getattr(a, "planner", None) is not None:
        return dict(a.planner(a.model, options.to_map()), via_daemon=True)
    from ..pipeline import plan_json
    from ..progress import Progress

    with Progress(f"planning {_model_name(a.model)}"):
        return plan_json(a.model, options, a.no_daemon)


def make_plan(g, a, options=None):
    """The plan object for g (the model a.model names), from the daemon's cache when it has it."""
    from ..pipeline import load_plan

    return load_plan(request_plan(a, options)["plan"], g)


def cmd_report(a) -> int:
    """Layer by layer (the plan `buildtool plan` prints for the same flags) against the optimised
    plan (--optimize ram unless another optimiser is named); a stateful model has only the first."""
    import dataclasses

    from ..report import write_report

    g = load_model(a.model)
    opts = plan_options(a)
    plain = dataclasses.replace(opts, optimize=None, max_mac_overhead=None, ram_limit=None, splits=None,
                                input_streamed=False, band_input=True)
    before = make_plan(g, a, plain)
    after = before
    if not g.variable_tensors() or opts.fused:
        after = make_plan(g, a, opts if opts.fused else dataclasses.replace(opts, optimize="ram"))
    placement = _placement(g, after, a)
    if placement is not None and after is not before:  # the layer-by-layer plan's too when its buffers spread
        spread = _placement(g, before, a)
        placement = (placement, spread) if spread.arena_parts else placement
    html, svg = write_report(g, before, after, a.output, placement=placement)
    print(f"wrote {html} and {svg}")
    return 0


def _placement(g, plan, a):
    """The board's placement of the plan (regions.py) when --board is given, else None."""
    if not getattr(a, "board", None):
        return None
    from ..plan import regions
    from .. import targets

    t = targets.get(a.board)
    return regions.place(g, regions.place_arena(g, plan, t), t)


def _say_placement(a, plan_json: dict) -> None:
    """`plan --board B`: one line per memory region the placement uses (bytes used / size)."""
    from ..plan.kinds import plan_from_json
    from ..plan.regions import describe

    g = load_model(a.model)
    for line in describe(_placement(g, plan_from_json(plan_json, g), a)):
        print(f"  {line}")


def _print(text: str, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout)


def cmd_plan(a, say=_print) -> int:
    """say(text, err): where the lines go (the daemon collects them for a client's command line)."""
    if a.board:
        from .. import targets

        targets.get(a.board)  # an unknown board is refused before planning
    r = request_plan(a)
    plan = r["plan"]
    name = _model_name(a.model)  # a zoo name whole: mbv2-w0.35
    _say_tradeoff(name, plan, say)
    if a.json:
        out = dict(plan)
        if r["via_daemon"]:
            out["cache"], out["plan_ms"] = r["cache"], r["plan_ms"]
        import json

        say(json.dumps(out, indent=1))
        return 0
    from ..units import count, exact, size, size_exact

    bound = exact(plan["lower_bound_bytes"])
    if "mac_overhead" in plan:  # printed from the plan's JSON alone: no fusion or numpy import
        acc = "input streamed" if plan.get("input_accounting") == "streamed" else "input in the arena"
        arena = size_exact(plan["arena_bytes"], f"{acc}, residuals counted", f"search bound {bound}")
        say(f"{name}: arena {arena}; {count(plan['macs'])} MACs = {plan['mac_overhead']:.3f} x unfused; "
            f"{len(plan.get('fusion_blocks', []))} fusion blocks, {len(plan.get('splits', []))} split regions")
    else:
        arena = size_exact(plan["arena_bytes"], f"lower bound {bound}, "
                           f"{'optimal' if plan['optimal'] else 'not proven optimal'}, planner {plan['planner']}")
        say(f"{name}: arena {arena}; activations total {size(plan['total_activation_bytes'])}; "
            f"{count(plan['macs'])} MACs; params {size(plan['params_bytes'])}")
    if a.board:
        _say_placement(a, plan)
    return 0


def _say_tradeoff(name: str, plan: dict, say=_print) -> None:
    """One line on stderr when the MAC cap made a difference (the plan JSON holds the figures)."""
    t = plan.get("tradeoff")  # (formatted here: a warm daemon hit imports no planner)
    if not t:
        return
    a, o = plan["arena_bytes"], t["arena_bytes"]
    pct = f"{(o - a) / a * 100:+.1f} %"
    if t["max_mac_overhead"] == "none":
        line = (f"at most {plan['max_mac_overhead']:g}x MACs gives {a:,} B ({plan['mac_overhead']:.2f}x); "
                f"least RAM {o:,} B ({pct}) costs {t['mac_overhead']:.2f}x MACs: --max-mac-overhead none")
    else:
        line = (f"least RAM {a:,} B costs {plan['mac_overhead']:.2f}x MACs; at most {t['max_mac_overhead']:g}x "
                f"MACs gives {o:,} B ({pct}): --max-mac-overhead {t['max_mac_overhead']:g}")
    say(f"{name}: {line}", True)


def cmd_zoo(a) -> int:
    from .. import zoo
    from ..model.writer import serialize

    if a.list or not a.name:
        for name, desc in zoo.describe(large=True).items():
            print(f"{name:14s} {desc}")
        return 0
    if a.name not in zoo.names(large=True):
        raise UsageError(f"unknown zoo model '{a.name}' (known: {', '.join(zoo.names(large=True))})")
    out = a.output or f"{a.name}.tflite"
    _write_atomic(out, serialize(zoo.build(a.name)))
    print(f"wrote {out}")
    return 0


def _board_run(g, xs, a):
    from .. import pipeline
    from ..firmware import runner

    from ..progress import Progress, stage

    out = a.build_dir or os.path.join("build", a.board, pipeline.build_dir_name(g.name))
    opts = plan_options(a)
    plan = make_plan(g, a, opts)
    with Progress(f"{_model_name(a.model)} on {a.board}"):
        stage("building the firmware")
        pipeline.build(g, a.board, out, opts, plan)
        stage("running it")
        if a.sequence:
            ys, prof, ram = runner.run(a.board, out, _steps(xs), sequence=True)
        else:
            y, prof, ram = runner.run(a.board, out, xs)
    print(runner.format_report(prof, ram), file=sys.stderr)
    if a.sequence:
        return _stack_steps(ys)
    return y if isinstance(y, list) else [y]


def _steps(xs: list) -> list:
    """Per-input arrays of N stacked invocations -> N input sets."""
    return [[x[n] for x in xs] for n in range(len(xs[0]))]


def _stack_steps(ys: list) -> list:
    """N invocations' outputs -> one array per model output, stacking the N on a new first axis."""
    import numpy as np

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
    from ..model.inputs import output_file_bytes

    _write_atomic(path, output_file_bytes(path, outs, _output_keys(g)))


def _print_outputs(g, outs: list) -> None:
    """One line of values per output; with several outputs each line starts with the output's name."""
    from ..model.reader import short

    for k, y in zip(_output_keys(g), outs):
        values = " ".join(map(str, y.reshape(-1).tolist()))
        print(f"{short(k, 32)}: {values}" if len(outs) > 1 else values)


def cmd_run(a) -> int:
    g = load_model(a.model)
    from ..model.inputs import load_inputs

    xs = load_inputs(g, a.input, a.sequence)
    _check_output_path(g, a.output)
    opts = plan_options(a)
    if a.sequence and opts.fused:
        raise UsageError("--sequence runs the plain plan; drop --split/--optimize/--input-streamed")
    if a.board:
        outs = _board_run(g, xs, a)
    elif a.sequence:
        from ..plan.arena.execute import run_sequence

        outs = _stack_steps(run_sequence(g, make_plan(g, a, opts), _steps(xs)))
    else:
        from ..plan import kinds

        outs = kinds.execute(make_plan(g, a, opts), g, xs)
    if a.output:
        _save_outputs(g, outs, a.output)
    else:
        _print_outputs(g, outs)
    return 0


def cmd_flash(a) -> int:
    from ..plan import flash

    if not os.path.exists(a.image):
        raise UsageError(f"flash image not found: {a.image}")
    info = flash.verify(a.image)
    print(flash.describe(a.image, info))
    return 0


def cmd_boards(a) -> int:
    from .. import targets

    for name, t in sorted(targets.boards().items()):
        print(f"{name:12s} {t.description}")
    return 0


def cmd_scons_dir(a) -> int:
    from ..firmware.toolchain import SCONS_DIR

    print(SCONS_DIR)
    return 0


def cmd_cmake_dir(a) -> int:
    from ..cmake import CMAKE_DIR

    print(CMAKE_DIR)
    return 0


def cmd_bazel_dir(a) -> int:
    from ..firmware.toolchain import PACKAGE

    print(PACKAGE / "bazel")
    return 0


# Commands whose parsers live in their own modules: imported only when the command line names them
# (or asks for the command list), so a warm `buildtool plan` loads none of them.
_MODULE_COMMANDS = ("daemon", "gen", "multi", "watch", "netsplit")
_COMMANDS = ("inspect", "ops", "plan", "zoo", "run", "report", "flash", "boards", "scons-dir", "cmake-dir",
             "bazel-dir") + _MODULE_COMMANDS


class _Skipped:
    """The parser of a command the command line does not name: every call does nothing."""

    def __getattr__(self, name):
        return lambda *args, **kw: self


class _OnlyOne:
    """argparse's subparsers, building only the named command's parser (all of them when only is None)."""

    def __init__(self, sub, only: str | None):
        self.sub, self.only = sub, only

    def add_parser(self, name: str, **kw):
        return self.sub.add_parser(name, **kw) if self.only in (None, name) else _Skipped()


def _add_module_commands(sub, only: str | None) -> None:
    """The five module commands, each module imported only when its command is built."""
    def wanted(name: str) -> bool:
        return only in (None, name)

    if wanted("daemon"):
        from . import daemon as daemon_cli

        s = sub.add_parser("daemon", help="the background planner daemon: start, stop, status, clear")
        daemon_cli.build_parser(s)
        s.set_defaults(fn=daemon_cli.run)
    if wanted("gen"):
        from .gen import add_parser as add_gen

        add_gen(sub)
    if wanted("multi"):
        from .multi import add_parser as add_multi

        add_multi(sub)
    if wanted("watch"):
        from ..integrations.watch import add_parser as add_watch

        add_watch(sub)
    if wanted("netsplit"):
        from ..netsplit.cli import add_parser as add_netsplit

        add_netsplit(sub)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; `only` (a command's name): that command's parser alone, and no other
    command's module imported (the command list is printed only when no command was named)."""
    import argparse

    p = argparse.ArgumentParser(prog="buildtool", description="int8 TFLite CNN -> memory-planned MCU firmware")
    p.add_argument("--version", action="version", version=f"buildtool {__version__}")
    sub = _OnlyOne(p.add_subparsers(dest="cmd", metavar="COMMAND"), only)

    s = sub.add_parser("inspect", help="ops, tensors, shapes, quantisation, MACs, params, activation bytes")
    s.add_argument("model", help=".tflite file or zoo name")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_inspect)

    s = sub.add_parser("ops", help="the supported operators and their activation types")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_ops)

    s = sub.add_parser("plan", help="plan the tensor arena")
    s.add_argument("model")
    s.add_argument("--json", action="store_true")
    s.add_argument("--board", help="also print the placement in this board's memory regions")
    add_plan_options(s)
    s.set_defaults(fn=cmd_plan)

    s = sub.add_parser("zoo", help="write a well-known architecture as an int8 .tflite")
    s.add_argument("name", nargs="?")
    s.add_argument("-o", "--output", help=".tflite file to write (default NAME.tflite; its directory must exist)")
    s.add_argument("--list", action="store_true")
    s.set_defaults(fn=cmd_zoo)

    s = sub.add_parser("run", help="run the model on the reference executor inside the planned arena")
    s.add_argument("model")
    s.add_argument("--input", required=True, action="append",
                   help=".npy input tensor; repeat once per model input in order, or one .npz holding them all")
    s.add_argument("--output", help=".npy file for the output, or .npz for every output keyed by output name "
                                    "in order (default: print them)")
    s.add_argument("--sequence", action="store_true",
                   help="the .npy stacks N inputs on a new first axis: invoke N times, the model's state "
                        "(SVDF/LSTM) carrying over; the output stacks the N outputs")
    s.add_argument("--board", help="build firmware for this board and run it (QEMU or natively)")
    s.add_argument("--build-dir", help="where to build firmware (default build/BOARD/MODEL)")
    add_plan_options(s)
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("report", help="HTML + SVG report: memory over the execution order, fusion blocks")
    s.add_argument("model")
    s.add_argument("-o", "--output", default="report.html",
                   help="HTML file to write (default report.html; its directory must exist); the figure goes "
                        "beside it as .svg")
    s.add_argument("--board", help="also draw the placement in this board's memory regions")
    add_plan_options(s)
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("flash", help="flash images: `flash verify weights.bin`")
    s.add_argument("action", choices=["verify"])
    s.add_argument("image")
    s.set_defaults(fn=cmd_flash)

    s = sub.add_parser("boards", help="list the boards (target plugins) that are installed")
    s.set_defaults(fn=cmd_boards)

    s = sub.add_parser("scons-dir", help="the folder for SCons' toolpath=[...] (tools=[\"default\", \"btfirmware\"])")
    s.set_defaults(fn=cmd_scons_dir)
    s = sub.add_parser("cmake-dir", help="the folder for CMAKE_PREFIX_PATH or Buildtool_DIR (find_package(Buildtool))")
    s.set_defaults(fn=cmd_cmake_dir)

    s = sub.add_parser("bazel-dir", help="the path for local_repository(name = \"buildtool\", path = ...)")
    s.set_defaults(fn=cmd_bazel_dir)

    _add_module_commands(sub, only)
    return p


def error_message(e: BuildtoolError, spec: str | None, sent: str | None = None) -> str:
    """One line; a problem with the model starts with the model path as the user typed it (the planner
    daemon reports the absolute path it was sent, `sent` when not this process's abspath; the library
    may say nothing of the path)."""
    msg = one_line(str(e))
    if not spec or not isinstance(e, (ModelError, PlanError)):
        return msg
    for known in (spec, sent or os.path.abspath(spec), "<bytes>"):
        if msg.startswith(known + ": "):
            msg = msg[len(known) + 2:]
            break
    return f"{spec}: {msg}"


# Commands a running planner daemon may run for this process (the fast path: daemon/thin.py).
DAEMON_COMMANDS = ("plan", "gen")


def serve(argv: list, cwd: str, planner, gen_planner=None) -> dict | None:
    """The daemon's side of the fast path: run `buildtool ARGV` for a client whose working
    directory is cwd, planning with planner(model, options map) (gen steps: gen_planner(graph,
    PlanOptions), as gen.run_step takes it). Returns {"lines": [[err, text]...], "exit": status}, or
    None when the client must run the command itself (not a daemon command, a usage error or --help
    for argparse to print there, --no-daemon, `plan --board`: boards may come from plug-ins installed
    after the daemon started; `gen board`: the caller's toolchain set-up)."""
    if not argv or argv[0] not in DAEMON_COMMANDS or "-h" in argv or "--help" in argv:
        return None
    try:
        a = build_parser(argv[0]).parse_args(argv)  # (a usage message lands in the daemon's log)
    except SystemExit:
        return None
    if a.no_daemon:
        return None
    if argv[0] == "gen":
        return _serve_gen(a, cwd, gen_planner)
    if a.board:
        return None
    from ..pipeline import is_model_file

    typed = a.model
    if is_model_file(typed, cwd):
        a.model = os.path.join(cwd, typed)
    a.planner = lambda model, options: planner(model, options, typed)
    lines = []
    try:
        code = a.fn(a, lambda text, err=False: lines.append([err, text]))
    except BuildtoolError as e:
        lines.append([True, f"buildtool: error: {error_message(e, typed, a.model)}"])
        code = e.exit_code
    return {"lines": lines, "exit": code}


def _serve_gen(a, cwd: str, planner) -> dict | None:
    """serve's `gen STEP` (a step the daemon runs for gen.run too): paths from the client's cwd, errors
    naming them as typed, as that path and --no-daemon print them."""
    from . import gen

    if a.step not in gen.DAEMON_STEPS or planner is None:
        return None
    typed = gen.absolute_paths(vars(a), cwd)  # (a's own attributes, made absolute in place)
    try:
        gen.run_step(a, planner)
    except BuildtoolError as e:
        return {"lines": [[True, f"buildtool: error: {gen.as_typed(one_line(str(e)), typed)}"]], "exit": e.exit_code}
    return {"lines": [], "exit": 0}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in DAEMON_COMMANDS:
        from ..serve.daemon.thin import run_in_daemon

        code = run_in_daemon(argv)
        if code is not None:
            return code
    p = build_parser(argv[0] if argv[:1] and argv[0] in _COMMANDS else None)
    a = p.parse_args(argv)
    if not getattr(a, "fn", None):
        p.print_help()
        return 2
    from ..fsutil import guarded_stdout

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
        print(f"buildtool: error: {e}", file=sys.stderr)
        return e.exit_code


if __name__ == "__main__":
    sys.exit(main())
