"""The planner at scale, timed as users run it: CPU seconds of whole `buildtool plan` processes (the
interpreter's start-up and our imports included, as xcore-opt's start-up is in its own), side by side
with XMOS xcore-opt converting the same model in the same run.

    python3 benchmarks/scaling.py                    # the default rows
    python3 benchmarks/scaling.py --chains 10,50,200,500,1000 --depths 12,24,48 --repeat 3
    python3 benchmarks/scaling.py --startup --chains "" --depths "" --depths-only   # start-up alone
    python3 benchmarks/scaling.py --phases --chains 500 --depths "" --depths-only  # where a process's CPU goes

Each case is first written as a .tflite by the project's own writer (chains: `buildtool.zoo.synthetic.
conv_chain(N)`, N 3x3 convolutions, 32x32x16; `nasnet-like-C`: `nasnet_like(C)`; zoo names: the zoo's
model; the shared models are read as they are), untimed; then `buildtool plan FILE --json --no-daemon`
plus the row's options runs in its own process, and its CPU seconds (user + system of the process, from
getrusage) are the figure, best of --repeat. `--no-daemon`: the plan is made in that process, not by a
planner daemon from its cache (a warm daemon answers a repeated request in milliseconds, which would
time nothing). Every timed run is the cold run a user's first `buildtool plan --no-daemon` is: the
process reads and parses the .tflite itself and plans from nothing (no plan, model or search cache is
read or written; only Python's bytecode is cached, see below). The row prints the case, operators, CPU
seconds, arena bytes and the fusion search's block cap when --time-budget cut it (both read from the
--json output). The growth exponent of the chain
rows is fitted on the last two chain sizes, and the plain (layer-by-layer) planner's growth with depth on
nasnet-like graphs of --depths cells, pair by pair; whole processes include a fixed start-up (about 0.2
CPU s), which lowers the exponents between small cases.

The processes run with bytecode cached, as an installed package has it (pip compiles it): the script
unsets PYTHONDONTWRITEBYTECODE for them, keeps the bytecode under build/pycache (PYTHONPYCACHEPREFIX)
and runs one untimed `buildtool plan tiny --optimize ram` first. Without cached bytecode each process
compiles the ~130 modules it imports again (about 0.2-0.25 CPU s more).

Where xmos-ai-tools' `xcore-opt` is installed (beside this Python, else on the PATH), two more columns:
its CPU seconds (user + system of the process) converting the same .tflite, best of --repeat, each of its
runs right after one of ours (so both see the same load), and our CPU seconds over it. xmos-ai-tools
1.4.2 requires numpy < 2 and OR-Tools (a dependency) numpy >= 2.0.2, so it is no extra of pyproject.toml:
install the converter alone with `pip install --no-deps xmos-ai-tools==1.4.2` (xcore-opt is a
self-contained binary).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"

# Writes a case as a .tflite (untimed) and prints its operator count.
SAVE = r"""
import json, sys
from buildtool.steps.models import read_model
from buildtool.zoo import synthetic
spec, out = sys.argv[1], sys.argv[2]
if spec.startswith("chain-"):
    g = synthetic.conv_chain(int(spec[6:]))
elif spec.startswith("nasnet-like-"):
    g = synthetic.nasnet_like(int(spec[12:]))
else:
    g = read_model(spec).graph
if out:
    from buildtool.model.writer import save
    save(g, out)
print(len(g.operators))
"""


# Where one `buildtool plan FILE --optimize ram --no-daemon` process's CPU goes, phase by phase, in one process
# doing what the command does (CPU seconds of this process at each point; start-up: before the first line).
PHASES = r"""
import json, resource, sys, time
ru = resource.getrusage(resource.RUSAGE_SELF)
marks = [("start-up", ru.ru_utime + ru.ru_stime)]
def mark(name):
    marks.append((name, time.process_time()))
mark("start-up")
import numpy
mark("numpy")
from buildtool.cli import plan as _, common as _c
from buildtool.serve import service as _s
from buildtool.steps.models import read_model
from buildtool.options import PlanOptions
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.fusion import planner
mark("modules")
g = read_model(sys.argv[1]).graph
mark("read")
opts = PlanOptions.from_map({"optimize": "ram"})
plan_arena(g, **opts.arena_kwargs())
mark("plain plan")
search = planner.search_front
def timed(*a, **k):
    front = search(*a, **k)
    mark("fusion search")
    return front
planner.search_front = timed
plan = planner.plan_fused(g, **opts.fused_kwargs())
mark("packing")
json.dumps(plan.to_json(g), indent=1)
mark("JSON")
t = dict((n, b - a) for (_, a), (n, b) in zip(marks, marks[1:]))
t["start-up"] = marks[0][1]
print(json.dumps(t))
"""


def env() -> dict:
    """The processes' environment: this checkout's package, bytecode cached under build/pycache, no
    daemon, no progress line."""
    e = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=str(ROOT / "build" / "pycache"),
             BUILDTOOL_QUIET="1", BUILDTOOL_NO_DAEMON="1")
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    return e


def tool(name: str) -> str | None:
    """An installed command: the one beside this Python first (not a version manager's shim, whose own
    start-up would be timed), else the PATH's."""
    here = Path(sys.executable).parent / name
    return str(here) if here.is_file() and os.access(here, os.X_OK) else shutil.which(name)


def cpu(cmd: list) -> tuple:
    """(user + system CPU seconds of running cmd, its CompletedProcess)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=3600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r


def flags(opts: dict) -> list:
    """A row's options as `buildtool plan` flags."""
    out = []
    for k, v in opts.items():
        if k == "splits":
            out += ["--split", v]
        elif v is True:
            out.append("--" + k.replace("_", "-"))
        else:
            out += ["--" + k.replace("_", "-"), str(v)]
    return out


def case(spec: str, tmp: str) -> tuple:
    """(the .tflite both tools read, operators) for a case, or (None, error)."""
    path = spec if spec.endswith(".tflite") else str(Path(tmp) / f"{spec}.tflite")
    r = subprocess.run([sys.executable, "-c", SAVE, spec, "" if path == spec else path], capture_output=True,
                       text=True, env=env(), timeout=3600)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["?"])[-1][:80]
    return path, int(r.stdout)


def measure(path: str, opts: dict, repeat: int, buildtool: list, xcore: str | None, tmp: str) -> dict:
    """Best of repeat CPU seconds of our plan process and (xcore: right after each) xcore-opt's."""
    ours, theirs, d = None, None, None
    for _ in range(repeat):
        t, r = cpu(buildtool + ["plan", path, "--json", "--no-daemon"] + flags(opts))
        if r.returncode != 0:
            return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:80]}
        d = json.loads(r.stdout)
        ours = t if ours is None or t < ours else ours
        if xcore:
            t, r = cpu([xcore, path, "-o", str(Path(tmp) / "xcore-out.tflite")])
            if r.returncode != 0:
                xcore = None
                theirs = None
            else:
                theirs = t if theirs is None or t < theirs else theirs
    return {"cpu_s": ours, "xcore_s": theirs, "arena": d["arena_bytes"], "cut": d.get("search_cut_to_block_ops", 0)}


def exponent(a: tuple, b: tuple) -> float:
    """Growth exponent between two (operators, seconds) points."""
    return math.log(b[1] / a[1]) / math.log(b[0] / a[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", default="10,50,200,500", help="chain lengths (comma-separated)")
    ap.add_argument("--depths", default="12,24,48", help="nasnet-like cells planned plain (comma-separated)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row (best CPU time kept)")
    ap.add_argument("--depths-only", action="store_true", help="only the chains and the --depths rows")
    ap.add_argument("--no-xcore", action="store_true", help="no xcore-opt columns even where it is installed")
    ap.add_argument("--startup", action="store_true",
                    help="first the CPU seconds of `buildtool -h`, `plan --help`, `plan tiny` (best of 5 or --repeat)")
    ap.add_argument("--phases", action="store_true",
                    help="first where the CPU of a --optimize ram plan of mobilenetv2_160_a1 and of the --chains' last "
                         "goes, phase by phase (each phase's best of --repeat, in-process)")
    a = ap.parse_args()
    ram = {"optimize": "ram"}
    ints = lambda text: [int(x) for x in text.split(",") if x.strip()]  # noqa: E731
    rows = [(f"chain-{n}", ram) for n in ints(a.chains)]
    rows += [(f"nasnet-like-{c}", {}) for c in ints(a.depths)]
    if not a.depths_only:
        rows += [("nasnet-like-12", ram), ("mbv2-w0.35", ram), ("mcunet-in3", ram)]
        for name, opts in (("mobilenetv2_160_a1", ram), ("mobilenetv2_160_a1", {"splits": "auto"}),
                           ("mbv2_w035_144", dict(ram, input_streamed=True))):
            if (SHARED / f"{name}.tflite").is_file():
                rows.append((str(SHARED / f"{name}.tflite"), opts))
    script = tool("buildtool")
    buildtool = [script] if script else [sys.executable, "-m", "buildtool.cli"]
    xcore = None if a.no_xcore else tool("xcore-opt")
    extra = " xcore-opt CPU s | ours / xcore-opt |" if xcore else ""
    chain, depth = [], []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(buildtool + ["plan", "tiny", "--optimize", "ram", "--no-daemon"], capture_output=True,
                       env=env(), timeout=600)  # (untimed: writes the bytecode the timed processes read)
        if a.startup:
            for args in (["-h"], ["plan", "--help"], ["plan", "tiny", "--no-daemon"]):
                t = min(cpu(buildtool + args)[0] for _ in range(max(a.repeat, 5)))
                print(f"start-up: buildtool {' '.join(args)}: {t:.2f} CPU s")
            print()
        if a.phases:
            named = [f"chain-{n}" for n in ints(a.chains)[-1:]] + [str(SHARED / "mobilenetv2_160_a1.tflite")]
            for spec in named:
                path, _ = case(spec, tmp)
                if path is None:
                    continue
                runs = [json.loads(subprocess.run([sys.executable, "-c", PHASES, path], capture_output=True,
                                                  text=True, env=env(), timeout=3600, check=True).stdout)
                        for _ in range(max(a.repeat, 1))]
                best = {k: min(r[k] for r in runs) for k in runs[0]}
                print(f"phases: {Path(spec).stem} --optimize ram: " + ", ".join(f"{k} {v:.2f}" for k, v in best.items())
                      + " CPU s")
            print()
        if rows:
            print("| case | options | operators | CPU s | arena B | search cut to |" + extra)
            print("|---|---|---:|---:|---:|---:|" + ("---:|---:|" if xcore else ""))
        files = {}
        for spec, opts in rows:
            label = Path(spec).stem if spec.endswith(".tflite") else spec
            o = " ".join(f"{k}={v}" for k, v in opts.items()) or "plain"
            if spec not in files:
                files[spec] = case(spec, tmp)
            path, ops = files[spec]
            d = {"error": ops} if path is None else measure(path, opts, a.repeat, buildtool, xcore, tmp)
            if "error" in d:
                print(f"| {label} | {o} | | | | {d['error']} |" + (" | |" if xcore else ""))
                continue
            line = f"| {label} | {o} | {ops} | {d['cpu_s']:.2f} | {d['arena']:,} | {d['cut'] or '-'} |"
            if xcore:
                x = d["xcore_s"]
                line += f" {x:.2f} | {d['cpu_s'] / x:.2f} |" if x else " failed | |"
            print(line, flush=True)
            if spec.startswith("chain-"):
                chain.append((ops, d["cpu_s"]))
            elif spec.startswith("nasnet-like-") and not opts:
                depth.append((ops, d["cpu_s"]))
    if len(chain) >= 2 and chain[-2][1] > 0:
        print(f"\nchain growth from {chain[-2][0]} to {chain[-1][0]} operators: exponent "
              f"{exponent(chain[-2], chain[-1]):.2f}")
    for p, q in zip(depth, depth[1:]):
        if p[1] > 0:
            print(f"plain planning growth (nasnet-like) from {p[0]} to {q[0]} operators: exponent {exponent(p, q):.2f}")
    if not xcore and not a.no_xcore:
        print("\n(xcore-opt not found: pip install --no-deps xmos-ai-tools==1.4.2 for its columns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
