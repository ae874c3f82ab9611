"""The planner at scale (issue 32): CPU seconds of one plan, in its own process, for deep chains, the
zoo and the shared models, beside the arena bytes each plan gives and whether the search was cut.

    python3 benchmarks/scaling.py                    # the default rows
    python3 benchmarks/scaling.py --chains 10,50,200,500,1000 --repeat 1

Each row runs `plan_memory` in a fresh Python process (CPU time of that process after the imports,
so a loaded machine stretches it less than wall time would) and prints: the case, operators, CPU
seconds, arena bytes, and the search's block cap when --time-budget cut it. Chains are
`buildtool.zoo.synthetic.conv_chain(N)` (N 3x3 convolutions, 32x32x16, made by the project's own
builder); `nasnet-like-C` is `nasnet_like(C)`. The growth exponent of the chain rows is fitted on the
last two chain sizes. xmos-ai-tools' xcore-opt is not installed here, so there is no xcore-opt column.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
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
if spec.startswith("chain-"):
    g = synthetic.conv_chain(int(spec[6:]))
elif spec.startswith("nasnet-like-"):
    g = synthetic.nasnet_like(int(spec[12:]))
else:
    g = read_model(spec).graph
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", default="10,50,200,500", help="chain lengths (comma-separated)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row (best CPU time kept)")
    a = ap.parse_args()
    ram = {"optimize": "ram"}
    rows = [(f"chain-{n}", ram) for n in map(int, a.chains.split(","))]
    rows += [("nasnet-like-12", ram), ("nasnet-like-12", {}), ("mbv2-w0.35", ram), ("mcunet-in3", ram)]
    for name, opts in (("mobilenetv2_160_a1", ram), ("mobilenetv2_160_a1", {"splits": "auto"}),
                       ("mbv2_w035_144", dict(ram, input_streamed=True))):
        if (SHARED / f"{name}.tflite").is_file():
            rows.append((str(SHARED / f"{name}.tflite"), opts))
    print("| case | options | operators | CPU s | arena B | search cut to |")
    print("|---|---|---:|---:|---:|---:|")
    chain = []
    for spec, opts in rows:
        d = run(spec, opts, a.repeat)
        label = Path(spec).stem if spec.endswith(".tflite") else spec
        o = " ".join(f"{k}={v}" for k, v in opts.items()) or "plain"
        if "error" in d:
            print(f"| {label} | {o} | | | | {d['error']} |")
            continue
        print(f"| {label} | {o} | {d['ops']} | {d['cpu_s']:.2f} | {d['arena']:,} | {d['cut'] or '-'} |", flush=True)
        if spec.startswith("chain-"):
            chain.append((d["ops"], d["cpu_s"]))
    if len(chain) >= 2 and chain[-2][1] > 0:
        (n1, t1), (n2, t2) = chain[-2:]
        print(f"\nchain growth from {n1} to {n2} operators: exponent {math.log(t2 / t1) / math.log(n2 / n1):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
