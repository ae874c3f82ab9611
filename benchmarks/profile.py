"""Where a firmware's instructions go, function by function (QEMU, deterministic).

    python benchmarks/profile.py MODEL [--board cortex-m4] [--optimize ram] [--input-streamed]
                                 [--max-mac-overhead F|none] [--top 25] [--inlined] [--region NAME]

Builds MODEL's firmware (a zoo name or a .tflite file) for the board (the plan `buildtool plan` makes with those options),
runs it once on a random input under the instruction-count plugin with its per-address
profile, and prints the functions that executed the most instructions: what to look at when a
per-operator count (`buildtool run --board`) says an operator or fused block is slow but not
which code is. --inlined: by the innermost function inlined at each address (from the
firmware's debug lines), so a kernel's helpers show apart from the function they were inlined into.
--region: only inside one operator or fused block, named as `buildtool run --board` names it
(FUSED_0_5, CONV_2D...: the first of that name) or by its position in execution order.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from buildtool import pipeline, targets
from buildtool.errors import UsageError
from buildtool.steps.models import read_model
from buildtool.firmware import runner  # noqa: E402
from buildtool.plan.fusion.planner import plan_fused  # noqa: E402


def inlined(board: str, elf: str, addresses: list) -> list:
    """[(innermost function at the address, instructions)], most first, from addr2line -i."""
    tool = targets.get(board).binutil("addr2line")
    r = subprocess.run([tool, "-a", "-f", "-i", "-e", elf], input="\n".join(f"{a:x}" for a, _ in addresses),
                       capture_output=True, text=True, check=True)
    names, lines = [], r.stdout.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("0x"):
            names.append(lines[k + 1] if k + 1 < len(lines) else "?")
    out = {}
    for name, (_, n) in zip(names, addresses):
        out[name] = out.get(name, 0) + n
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


def region_index(manifest: dict, region: str) -> int:
    """Position in execution order of the profile region named `region` (or given as a number)."""
    if region.isdigit() and int(region) < len(manifest["opcodes"]):
        return int(region)
    if region in manifest["opcodes"]:
        return manifest["opcodes"].index(region)
    raise SystemExit(f"profile.py: no region {region!r}; this firmware's: {', '.join(manifest['opcodes'])}")


def profile(name: str, board: str, optimize: str | None, streamed: bool, cap, by_inlined: bool = False,
            region: str | None = None) -> tuple:
    """(instructions of the whole run or of the region, [(function, instructions)] most first) of the
    model's firmware."""
    g = read_model(name).graph
    if optimize or streamed:
        plan = plan_fused(g, optimize=optimize or "ram", input_streamed=streamed, max_mac_overhead=cap,
                          time_budget=0.0)
    else:
        plan = None  # the plain plan pipeline.build makes
    x = np.random.default_rng(0).integers(-128, 128, g.tensors[g.inputs[0]].shape, dtype=np.int8)
    with tempfile.TemporaryDirectory(prefix="bt-profile-") as d:
        pipeline.build(g, board, d, {"time_budget": 0.0}) if plan is None else pipeline.build(g, board, d, plan=plan)
        k = None if region is None else region_index(json.loads(open(os.path.join(d, "firmware.json")).read()), region)
        _, prof, _ = runner.run(board, d, x, functions=True, region=k)
        fns = inlined(board, os.path.join(d, "firmware.elf"), prof["addresses"]) if by_inlined else prof["functions"]
    return (prof["total"] if k is None else prof["ops"][k]["count"]), fns


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--board", default="cortex-m4")
    ap.add_argument("--optimize", choices=("ram", "macs"))
    ap.add_argument("--input-streamed", action="store_true")
    ap.add_argument("--max-mac-overhead", default=None)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--inlined", action="store_true", help="by the innermost inlined function")
    ap.add_argument("--region", help="only this operator or fused block (FUSED_0_5, or its position)")
    a = ap.parse_args(argv)
    cap = None if a.max_mac_overhead is None else a.max_mac_overhead if a.max_mac_overhead == "none" \
        else float(a.max_mac_overhead)
    try:
        total, fns = profile(a.model, a.board, a.optimize, a.input_streamed, cap, a.inlined, a.region)
    except UsageError as e:   # an unknown model name, a file that is no model: one line
        print(f"profile.py: {e}", file=sys.stderr)
        return 2
    print("| function | instructions | share |\n|---|---|---|")
    for name, n in fns[:a.top]:
        print(f"| {name} | {n:,} | {100 * n / total:.1f} % |")
    rest = sum(n for _, n in fns[a.top:])
    print(f"| (the other {max(len(fns) - a.top, 0)}) | {rest:,} | {100 * rest / total:.1f} % |")
    print(f"| {'whole run' if a.region is None else a.region} | {total:,} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
