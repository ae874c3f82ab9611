"""The command lines the planner daemon runs for its clients (the thin client's fast path,
serve/daemon/thin.py): `buildtool plan ...` and `buildtool gen STEP ...`, with paths taken from the
client's working directory and errors naming them as the client typed them; and server_main, the
daemon process, which hands `serve` and the gen steps to the server (serve/ never imports cli/).
Imported by the daemon process only."""

from __future__ import annotations

import os

from ..errors import BuildtoolError, one_line
from ..fsutil import writes_through
from ..serve.daemon import protocol, server
from ..steps.models import is_model_file
from . import DAEMON_COMMANDS, build_parser, error_message, gen_steps


def serve(argv: list, cwd: str, planner, gen_planner=None) -> dict | None:
    """The daemon's side of the fast path: run `buildtool ARGV` for a client whose working
    directory is cwd, planning with planner(model, options map) (gen steps: gen_planner(graph,
    PlanOptions), as gen_steps.run_step takes it). Returns {"lines": [[err, text]...], "exit": status}, or
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
    if a.step not in protocol.GEN_STEPS or planner is None:
        return None
    typed = protocol.absolute_paths(vars(a), cwd)  # (a's own attributes, made absolute in place)
    outputs = protocol.gen_outputs(vars(a))
    if any(writes_through(p) for p in outputs):
        return None  # -o /dev/stdout, a FIFO: the client's own, written in its process
    lines = []  # the step's notes, printed by the client
    try:
        gen_steps.run_step(a, planner, lambda text: lines.append([False, text]))
    except BuildtoolError as e:
        return {"lines": lines + [[True, f"buildtool: error: {protocol.as_typed(one_line(str(e)), typed)}"]],
                "exit": e.exit_code}
    return {"lines": lines, "exit": 0, "outputs": protocol.output_digests(outputs)}


def server_main(argv=None) -> int:
    """The daemon process (serve.daemon.client spawns it): serve clients' plan requests, `gen` steps
    and command lines, through the shell handed in here (serve/ never imports cli/)."""
    return server.main(argv, shell=server.Shell(serve=serve, step_args=gen_steps.step_args,
                                                 run_step=gen_steps.run_step))
