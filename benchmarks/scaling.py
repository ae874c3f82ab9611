"""The planner at scale (issue 32): CPU seconds of one plan, in its own process, for deep chains, the
zoo and the shared models, beside the arena bytes each plan gives and whether the search was cut.

    python3 benchmarks/scaling.py                    # the default rows
    python3 benchmarks/scaling.py --chains 10,50,200,500,1000 --depths 12,24,48 --repeat 2

Each row runs `plan_memory` in a fresh Python process (CPU time of that process after the imports,
so a loaded machine stretches it less than wall time would) and prints: the case, operators, CPU
seconds, arena bytes, and the search's block cap when --time-budget cut it. Chains are
`buildtool.zoo.synthetic.conv_chain(N)` (N 3x3 convolutions, 32x32x16, made by the project's own
builder); `nasnet-like-C` is `nasnet_like(C)`. The growth exponent of the chain rows is fitted on the
last two chain sizes; the plain (layer-by-layer) planner's growth with depth on nasnet-like graphs of
--depths cells (the order search, in-place search and packers on many live branches), pair by pair.
The exact packer loads OR-Tools on first use (about 0.05 CPU s since buildtool.plan.cpsat imports it
without pandas, 0.2-0.6 s before; once per process, only when a plan needs it: here from 48 cells on),
which would show as growth: the --depths rows load it before the clock starts; every other row counts it.

Where xmos-ai-tools' `xcore-opt` is on the PATH, two more columns: its CPU seconds (user + system of
the process) converting the same model (a zoo or generated graph written by the project's own
writer), best of --repeat, and our CPU seconds over it. xmos-ai-tools 1.4.2 requires numpy < 2 and
OR-Tools (a dependency) numpy >= 2.0.2, so it is no extra of pyproject.toml: install the converter
alone with `pip install --no-deps xmos-ai-tools==1.4.2` (xcore-opt is a self-contained binary).
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

CHILD = r"""
import json, sys, time
from buildtool.options import PlanOptions
from buildtool.steps.models import read_model
from buildtool.steps.plan import plan_memory
from buildtool.zoo import synthetic
spec, opts = sys.argv[1], json.loads(sys.argv[2])
if opts.pop("preload", False):  # OR-Tools loaded before the clock starts (see --depths)
    from buildtool.plan import cpsat
    cpsat.load()
if spec.startswith("chain-"):
    g = synthetic.conv_chain(int(spec[6:]))
elif spec.startswith("nasnet-like-"):
    g = synthetic.nasnet_like(int(spec[12:]))
else:
    g = read_model(spec).graph
if "save" in opts:  # the graph as a .tflite for xcore-opt, by the project's writer
    from buildtool.model.writer import save
    save(g, opts["save"])
    sys.exit(0)
t0 = time.process_time()
p = plan_memory(g, PlanOptions.from_map(opts))
d = p.to_json(g)
print(json.dumps({"ops": len(g.operators), "cpu_s": time.process_time() - t0, "arena": p.arena_bytes,
                  "cut": d.get("search_cut_to_block_ops", 0)}))
"""


def run(spec: str, opts: dict, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        env = dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_QUIET="1")
        r = subprocess.run([sys.executable, "-c", CHILD, spec, json.dumps(opts)], capture_output=True, text=True,
                           env=env, timeout=3600)
        if r.returncode != 0:
            return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:80]}
        d = json.loads(r.stdout)
        best = d if best is None or d["cpu_s"] < best["cpu_s"] else best
    return best


def xcore_opt(spec: str, repeat: int, tool: str, memo: dict) -> float | None:
    """CPU seconds (user + system, best of repeat) of xcore-opt converting the model spec, or None if it failed."""
    if spec in memo:
        return memo[spec]
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        src = spec
        if not spec.endswith(".tflite"):
            src = str(Path(tmp) / "model.tflite")
            env = dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_QUIET="1")
            r = subprocess.run([sys.executable, "-c", CHILD, spec, json.dumps({"save": src})], env=env,
                               capture_output=True, timeout=3600)
            if r.returncode != 0:
                memo[spec] = None
                return None
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run([tool, src, "-o", str(Path(tmp) / "out.tflite")], capture_output=True, timeout=3600)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r.returncode != 0:
                best = None
                break
            t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best = t if best is None or t < best else best
    memo[spec] = best
    return best


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
    a = ap.parse_args()
    ram = {"optimize": "ram"}
    ints = lambda text: [int(x) for x in text.split(",") if x.strip()]  # noqa: E731
    rows = [(f"chain-{n}", ram) for n in ints(a.chains)]
    rows += [(f"nasnet-like-{c}", {"preload": True}) for c in ints(a.depths)]
    if not a.depths_only:
        rows += [("nasnet-like-12", ram), ("mbv2-w0.35", ram), ("mcunet-in3", ram)]
        for name, opts in (("mobilenetv2_160_a1", ram), ("mobilenetv2_160_a1", {"splits": "auto"}),
                           ("mbv2_w035_144", dict(ram, input_streamed=True))):
            if (SHARED / f"{name}.tflite").is_file():
                rows.append((str(SHARED / f"{name}.tflite"), opts))
    tool = None if a.no_xcore else shutil.which("xcore-opt")
    extra = " xcore-opt CPU s | ours / xcore-opt |" if tool else ""
    print("| case | options | operators | CPU s | arena B | search cut to |" + extra)
    print("|---|---|---:|---:|---:|---:|" + ("---:|---:|" if tool else ""))
    chain, depth, xmemo = [], [], {}
    for spec, opts in rows:
        d = run(spec, opts, a.repeat)
        label = Path(spec).stem if spec.endswith(".tflite") else spec
        o = " ".join(f"{k}={v}" for k, v in opts.items() if k != "preload") or "plain"
        if "error" in d:
            print(f"| {label} | {o} | | | | {d['error']} |" + (" | |" if tool else ""))
            continue
        line = f"| {label} | {o} | {d['ops']} | {d['cpu_s']:.2f} | {d['arena']:,} | {d['cut'] or '-'} |"
        if tool:
            x = xcore_opt(spec, a.repeat, tool, xmemo)
            line += f" {x:.2f} | {d['cpu_s'] / x:.2f} |" if x else " failed | |"
        print(line, flush=True)
        if spec.startswith("chain-"):
            chain.append((d["ops"], d["cpu_s"]))
        elif opts.get("preload"):
            depth.append((d["ops"], d["cpu_s"]))
    if len(chain) >= 2 and chain[-2][1] > 0:
        print(f"\nchain growth from {chain[-2][0]} to {chain[-1][0]} operators: exponent "
              f"{exponent(chain[-2], chain[-1]):.2f}")
    for p, q in zip(depth, depth[1:]):
        if p[1] > 0:
            print(f"plain planning growth (nasnet-like) from {p[0]} to {q[0]} operators: exponent {exponent(p, q):.2f}")
    if not tool and not a.no_xcore:
        print("\n(xcore-opt not found: pip install --no-deps xmos-ai-tools==1.4.2 for its columns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
