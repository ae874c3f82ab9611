"""`buildtool daemon start|stop|status|clear`: main(argv) -> exit status.

status exits 0 when a daemon runs and 1 when none does ("running": false in --json).
clear works without a daemon too: it then empties the on-disk cache directly.
The daemon process itself is cli.served.server_main.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import BuildtoolError, UsageError
from ..serve.cache import DiskStore
from ..serve.daemon.client import DaemonClient
from ..serve.daemon.protocol import DaemonUnavailable
from ..units import size
from .common import number_arg

DEFAULT_IDLE_H = 3  # serve/daemon/server.py: DEFAULT_IDLE_S
MAX_IDLE_S = 366 * 24 * 3600  # a year: --idle larger than that is a typo


def build_parser(p: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    p = p or argparse.ArgumentParser(prog="buildtool daemon")
    p.description = ("The background planner daemon: plan, gen and the build integrations send it their work,\n"
                     "which it runs warm (numpy and the planner loaded) with a cache of plans. It starts on\n"
                     "demand: these commands only control it (docs/daemon.md). BUILDTOOL_NO_DAEMON=1 or\n"
                     "--no-daemon plans in the command's own process instead.")
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = ("actions:\n"
                "  start   start it now (else the first planning command does); --idle S sets its idle exit\n"
                "  stop    stop it (its cache stays on disk)\n"
                "  status  pid, uptime, cache entries and size, hits/misses, watched models; exit 1 when none runs\n"
                "  clear   empty the plan cache (on disk directly when no daemon runs)")
    p.add_argument("action", choices=("start", "stop", "status", "clear"), help="what to do (below)")
    p.add_argument("--json", action="store_true", help="status and the other actions' result as JSON")
    p.add_argument("--idle", type=number_arg(float, "a number of seconds"), metavar="S",
                   help=f"start: exit after S seconds without requests (default {DEFAULT_IDLE_H} h)")
    return p


def add_parser(sub) -> None:
    s = sub.add_parser("daemon")
    build_parser(s)
    s.set_defaults(fn=run)


def _status_text(s: dict) -> str:
    return (f"planner daemon pid {s['pid']}, up {s['uptime_s']:.0f} s, {s['entries']:,} cache entries "
            f"({size(s['cache_bytes'])} in {s['cache_dir']}), {s['hits']:,} hits, {s['misses']:,} misses, "
            f"{s['watched']} models watched, memory {size(s['memory'])}\n"
            f"socket {s['socket']}\nlog {s['log']}" + _remote_text(s.get("remote")))


def _remote_text(r) -> str:
    if not r:
        return ""
    c = {k: r.get(k, 0) for k in ("hits", "misses", "corrupt", "errors", "puts")}
    return (f"\nteam cache {r['url']} ({'read-write' if r.get('write') else 'read-only'}"
            f"{', down' if r.get('down') else ''}): {c['hits']} hits, {c['misses']} misses, "
            f"{c['corrupt']} corrupt, {c['errors']} errors, {c['puts']} stored")


def run(a) -> int:
    if a.idle is not None and not 0 < a.idle <= MAX_IDLE_S:  # NaN fails too
        raise UsageError(f"--idle {a.idle:g} must be a number of seconds above 0 and at most {MAX_IDLE_S}")
    if a.action == "start":
        with DaemonClient(idle_s=a.idle) as c:
            s = c.status()
        print(json.dumps({"running": True, **s}, indent=1, sort_keys=True) if a.json
              else f"planner daemon running, pid {s['pid']}, log {s['log']}")
        return 0
    if a.action == "clear":
        try:
            with DaemonClient(start=False) as c:
                n = c.clear() if c.connect() else None
        except DaemonUnavailable:  # no usable runtime directory: no daemon, the cache is still ours
            n = None
        if n is None:
            n = DiskStore().clear()
        print(json.dumps({"removed": n}) if a.json else f"removed {n} cache entries")
        return 0
    with DaemonClient(start=False) as c:
        running = c.connect()
        if a.action == "status":
            s = {"running": True, **c.status()} if running else {"running": False, "socket": c.paths["socket"],
                                                                  "log": c.paths["log"]}
            print(json.dumps(s, indent=1, sort_keys=True) if a.json
                  else (_status_text(s) if running else f"no planner daemon running (log {s['log']})"))
            return 0 if running else 1
        if a.action == "stop":
            if running:
                pid = c.daemon_pid
                c.stop()
                print(json.dumps({"stopped": pid}) if a.json else f"stopped planner daemon pid {pid}")
            else:
                print(json.dumps({"stopped": None}) if a.json else "no planner daemon running")
            return 0


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    try:
        return run(a)
    except BuildtoolError as e:
        print(f"buildtool: error: {e}", file=sys.stderr)
        return e.exit_code


if __name__ == "__main__":
    sys.exit(main())
