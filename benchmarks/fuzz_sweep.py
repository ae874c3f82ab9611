"""A long sweep of hostile models through the command line (issue 52's round): fresh mutants of the shared
models and of the operator classes (tests/test_reader_fuzz.py: cli_mutants, class_sources), each through
inspect, plan (in process and in the planner daemon), plan --optimize ram and run, under the suite's limits.
Prints the count of mutants and commands, the exit statuses, and every command that misbehaved (exit 3, a
traceback, a hang, more than one line); those lines also go to --out.

    python3 benchmarks/fuzz_sweep.py --count 9000 [--seed 100] [--chunk 300] [--workers 2] [--out FILE]

Chunks of --chunk mutants run one after another (seed, seed+1, ...), half of the shared models and half of
the operator classes, so an interrupted sweep has still reported what it ran.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_reader_fuzz import class_sources, cli_mutants, misbehaved, run_commands  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=600, help="mutants in all (default 600)")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--chunk", type=int, default=300, help="mutants a chunk")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None, help="append the misbehaving commands to this file")
    a = ap.parse_args(argv)
    classes = class_sources()
    rcs, bad, done, commands = collections.Counter(), [], 0, 0
    start = time.perf_counter()
    k = 0
    while done < a.count:
        n = min(a.chunk, a.count - done)
        with tempfile.TemporaryDirectory(prefix="bt-fuzz-sweep-") as tmp:
            tmp = Path(tmp)
            (tmp / "shared").mkdir()
            (tmp / "classes").mkdir()
            files = (cli_mutants(n - n // 2, a.seed + k, tmp / "shared")
                     + cli_mutants(n // 2, a.seed + k, tmp / "classes", classes))
            results, status = run_commands(files, tmp, a.workers)
            lines = misbehaved(results)
            if status.returncode != 0:
                lines.append(f"the planner daemon died during chunk {k}: {status.stderr.strip()}")
        for r in results:
            rcs[(r["args"][0] + (" --optimize ram" if "--optimize" in r["args"] else ""), r["rc"])] += 1
        bad += lines
        if lines and a.out:
            with open(a.out, "a") as f:
                f.write("\n".join(lines) + "\n")
        done, commands, k = done + n, commands + len(results), k + 1
        print(f"chunk {k}: {done} mutants, {commands} commands, {len(bad)} misbehaved, "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    print(f"{done} mutants, {commands} commands in {time.perf_counter() - start:.0f} s")
    for (cmd, rc), n in sorted(rcs.items(), key=lambda x: (x[0][0], str(x[0][1]))):
        print(f"  {cmd:22s} exit {rc}: {n}")
    exit3 = sum(1 for line in bad if ": rc 3," in line)
    print(f"misbehaved: {len(bad)} (exit 3: {exit3})")
    for line in bad[:20]:
        print("  " + line[:400])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
