"""The command line's fast path: a command a running planner daemon can run (cli.DAEMON_COMMANDS)
is sent to it whole (arguments and working directory), and this process prints what it answers.

A warm `buildtool plan` then imports the daemon client (socket, msgpack) and nothing else of the
package: no argparse, options, pipeline or dataclasses (their import was most of a warm hit's time).
Anything unusual runs the ordinary way, in cli.main, with the same output: no daemon running (the
ordinary way starts one), --no-daemon or BUILDTOOL_NO_DAEMON=1, --help, a usage error, a daemon that
declines or fails. The daemon's side is cli.served.serve.

SIGINT or SIGTERM while the daemon works (client.interruptible) ends this process at once: one line,
`buildtool: interrupted (SIGTERM)`, exit 128 + the signal's number; the daemon cancels the request.
"""

from __future__ import annotations

import os
import sys

from ...errors import BuildtoolError
from ...fsutil import stdout_error
from ...progress import Progress
from . import protocol
from .client import DaemonClient, Interrupted, WaitInterrupted, daemon_wanted
from .protocol import from_wire


def run_in_daemon(argv: list) -> int | None:
    """Run `buildtool ARGV` in a running daemon: its exit status, or None to run it here."""
    if not daemon_wanted("--no-daemon" in argv):
        return None
    try:
        msg = {"type": "cli", "argv": protocol.to_wire(list(argv)), "cwd": protocol.to_wire(os.getcwd()),
               "umask": protocol.umask_now(), "package": protocol.package_now()}
        with DaemonClient(start=False) as c:
            if not c.connect():
                return None
            with Progress(f"{argv[0]} (in the planner daemon)"):
                reply = c.request(msg)
    except WaitInterrupted:  # (a host's own handler ran: its error, not a reason to run the command here)
        raise
    except (BuildtoolError, OSError):  # (an unusable runtime directory, a deleted working directory)
        return None
    except Interrupted as e:
        return interrupted(e)
    if reply.get("type") != "cli" or not isinstance(reply.get("lines"), list):
        return None
    if reply.get("outputs") and protocol.unseen_output(reply["outputs"]):
        return None  # a daemon in another mount namespace: the ordinary way checks again, then runs it here
    return _say(reply["lines"], reply.get("exit", 3))


def interrupted(e: Interrupted) -> int:
    """A wait for the daemon ended by SIGINT/SIGTERM: one line; the exit status for it."""
    try:
        print(f"buildtool: interrupted ({e.name})", file=sys.stderr)
    except OSError:
        pass
    return e.exit_code


def _say(lines: list, code: int) -> int:
    """Print the daemon's lines as the command would have (a full disk under stdout: one line, exit 2)."""
    try:
        for err, text in lines:
            print(from_wire(text), file=sys.stderr if err else sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        return 0
    except OSError as e:
        print(f"buildtool: error: {stdout_error(sys.stdout, e)}", file=sys.stderr)
        return 2
    return int(code)
