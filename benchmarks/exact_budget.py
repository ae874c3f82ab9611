"""What a cheaper exact packing pass would change (issue 32): the fusion planner's CP-SAT passes on
every zoo and shared model, run again with a smaller deterministic budget or other CP-SAT
parameters, each answer compared with the planner's.

    python3 benchmarks/exact_budget.py                 # the default variants
    BUILDTOOL_SHARED=/work/shared python3 benchmarks/exact_budget.py

Plans every zoo model (efficientnet-lite0 too) and shared model (with the MLPerf Tiny models under
shared/models/mlperf-tiny: 27 models) with the fused option sets of scripts/golden_outputs.py,
recording each exact pass the fusion planner runs (packers._pack -> exact.solve: its problem and answer; one process, so a problem packed again
is remembered, not solved again). Each variant then solves every recorded problem again and keeps
its answer the way the planner does (only a top below the heuristics' is used): "same" (the same
offsets and optimal flag: the plan would not change), "smaller" (the plan's arena or trade-off
would shrink), "larger", or "moved" (the same top, other offsets or another optimal flag: other
plan.json bytes). CPU s is the variant's CP-SAT time summed over the passes, and for comparison
the planner's own passes solved again the same way ("as planned").
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"

# (name, deterministic budget as a fraction of the planner's, extra CP-SAT parameters)
VARIANTS = [("as planned", 1.0, {}), ("budget / 2", 0.5, {}), ("budget / 5", 0.2, {}),
            ("no LP", 1.0, {"linearization_level": 0}), ("no LP, budget / 5", 0.2, {"linearization_level": 0})]


def record() -> list:
    """[(case, bufs, hint, lower, upper, time_budget, answer)] of every fused exact pass."""
    import importlib.util

    from buildtool import pipeline
    from buildtool.errors import BuildtoolError
    from buildtool.plan.arena import exact, packers

    spec = importlib.util.spec_from_file_location("golden_outputs", ROOT / "scripts" / "golden_outputs.py")
    golden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(golden)
    from buildtool import zoo

    models = dict(golden.models(), **{n: n for n in zoo.LARGE})  # and efficientnet-lite0
    for p in sorted((SHARED / "mlperf-tiny").glob("*.tflite")) if (SHARED / "mlperf-tiny").is_dir() else ():
        models["mlperf-" + p.stem] = str(p)
    sets = {k: v for k, v in golden.OPTION_SETS.items()
            if any(x in v for x in ("optimize", "splits", "input_streamed"))}
    calls, case = [], [""]

    def spy(bufs, hint, lower, upper, time_budget, wall_cap=True, params=None):
        r = exact.solve(bufs, hint, lower, upper, time_budget, wall_cap, params)
        calls.append((case[0], list(bufs), list(hint), lower, upper, time_budget, r))
        return r

    packers.exact = type("exact", (), {"solve": staticmethod(spy)})  # the fusion planner's passes only
    try:
        for name, path in models.items():
            for opt, o in sets.items():
                o = dict(o)
                try:
                    m = pipeline.read_model(path)
                    pipeline.check(m)
                    if o.get("ram_limit") == "plain":
                        o["ram_limit"] = pipeline.plan_memory(m.graph, pipeline.PlanOptions.from_map({})).arena_bytes
                    case[0] = f"{name}/{opt}"
                    pipeline.plan_memory(m.graph, pipeline.PlanOptions.from_map(o))
                except BuildtoolError:
                    pass
    finally:
        packers.exact = exact
    return calls


def kept(answer, hint: list, lower: int, upper: int) -> tuple:
    """(offsets, top, optimal) as packers._pack keeps an exact answer."""
    offs, top, proven = answer[0], answer[1], answer[2]
    if top < upper:
        return list(offs), top, bool(proven) or top == lower
    return list(hint), upper, bool(proven) or upper == lower


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true", help="every pass that a variant changes")
    a = ap.parse_args()
    from buildtool.plan.arena import exact

    calls = record()
    print(f"{len(calls)} exact passes recorded\n")
    print("| variant | same | smaller | larger | moved | CP-SAT CPU s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, frac, params in VARIANTS:
        counts = {"same": 0, "smaller": 0, "larger": 0, "moved": 0}
        cpu, changed = 0.0, []
        for case, bufs, hint, lower, upper, budget, answer in calls:
            t0 = time.process_time()
            r = exact.solve(bufs, hint, lower, upper, budget * frac, False, params)
            cpu += time.process_time() - t0
            old, new = kept(answer, hint, lower, upper), kept(r, hint, lower, upper)
            verdict = ("same" if old == new else "smaller" if new[1] < old[1] else "larger" if new[1] > old[1]
                       else "moved")
            counts[verdict] += 1
            if verdict != "same":
                changed.append(f"  {case}: {old[1]} -> {new[1]} units ({verdict})")
        print(f"| {name} | {counts['same']} | {counts['smaller']} | {counts['larger']} | {counts['moved']} | "
              f"{cpu:.2f} |", flush=True)
        if a.show:
            print("\n".join(changed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
