"""Bazel (Debian bazel-bootstrap 4.2) on examples/bazel: what each kind of edit costs and which
actions it reran.

    python benchmarks/bazel_bench.py [--board host] [--runs 3]

`Bazel` is the driver benchmarks/integrations.py takes (integrations_more.MORE_SYSTEMS["bazel"]):
Bazel(top, pkg_root, board) copies the example to `top`, points its @buildtool at the buildtool
package under pkg_root; build() returns the steps the build ran (from --execution_log_json_file);
close() shuts its Bazel server down. Run alone, this file prints the same table for Bazel only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
from buildtool.bazel_support import executed  # noqa: E402

STEPS = {"BtModel": "model", "BtSkeleton": "skeleton", "BtPlan": "plan", "BtCode": "code", "BtFlash": "flash",
         "CppLink": "link"}


class Bazel:
    """examples/bazel with its own output root (one Bazel server, shut down by close())."""
    name = "bazel"

    def __init__(self, top: Path, pkg_root: Path, board: str):
        self.top, self.n = top, 0
        shutil.copytree(ROOT / "examples" / "bazel", top)
        ws = top / "WORKSPACE"
        ws.write_text(re.sub(r'path = "[^"]*"', f'path = "{pkg_root / "buildtool" / "bazel"}"', ws.read_text()))
        self.startup = ["bazel", f"--output_user_root={top.parent / 'bazel-root'}", "--max_idle_secs=300"]
        self.flags = [] if board == "host" else [f"--platforms=@buildtool//platforms:{board}"]
        self.env = dict(os.environ, PYTHONPATH=str(pkg_root))

    def build(self) -> list:
        self.n += 1
        log = self.top.parent / f"exec{self.n}.json"
        r = subprocess.run(self.startup + ["build", f"--execution_log_json_file={log}", *self.flags, "//:app"],
                           cwd=self.top, env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"bazel_bench: bazel failed:\n{r.stderr[-3000:]}")
        return [step_name(m, out) for m, out, _ in executed(log)]

    def close(self) -> None:
        subprocess.run(self.startup + ["shutdown"], cwd=self.top, env=self.env, capture_output=True)


def step_name(mnemonic: str, output: str) -> str:
    """An action as the integrations table names steps (model.c, main.c, link; CC <file> for the rest)."""
    if mnemonic in STEPS:
        return STEPS[mnemonic]
    stem = Path(output).name.split(".")[0]
    if mnemonic == "CppCompile":
        return {"model": "model.c", "main": "main.c", "weights": "weights.S"}.get(stem, f"CC {stem}.c")
    return f"{mnemonic} {stem}"


def _edits():
    """tiny.tflite as a user edits it: (original, one weight byte changed, a structural change)."""
    from buildtool import zoo
    from buildtool.tflite_writer import serialize

    g = zoo.build("tiny")
    base = serialize(g)
    t = next(t for t in g.tensors if t.is_const and t.dtype == "int8")
    t.data = t.data.copy()
    t.data.flat[0] = (int(t.data.flat[0]) + 1) % 127
    return base, serialize(g), serialize(zoo.build("mcunet-vww1"))


def measure(system: Bazel, runs: int, planner: Path) -> list:
    """[(row, seconds, steps)]: cold, no-op, same bytes, weight-only, structural, planner edit."""
    base, weights, structural = _edits()
    model, rows = system.top / "tiny.tflite", []

    def timed(label, edit=None, undo=None, n=runs):
        times = []
        for _ in range(n):
            if edit:
                edit()
            t0 = time.perf_counter()
            steps = system.build()
            times.append(time.perf_counter() - t0)
            if undo:
                undo()
                system.build()
        rows.append((label, statistics.median(times), summary(steps)))

    model.write_bytes(base)
    timed("cold", n=1)
    timed("no-op")
    timed("same bytes", edit=lambda: (time.sleep(0.01), model.write_bytes(base)))
    timed("weight-only", edit=lambda: model.write_bytes(weights), undo=lambda: model.write_bytes(base))
    timed("structural", edit=lambda: model.write_bytes(structural), undo=lambda: model.write_bytes(base))
    original, stamp = planner.read_text(), iter(range(1, 1000))
    timed("planner edit", edit=lambda: planner.write_text(original + f"# edit {next(stamp)}\n"))
    planner.write_text(original)
    return rows


def summary(steps: list) -> str:
    others = [s for s in steps if s.startswith("CC ")]
    text = ", ".join(dict.fromkeys(s for s in steps if s not in others))
    return (text + (", " if text else "") + f"{len(others)} other compiles" if others else text) or "nothing"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="host")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bt-bench-bazel-") as tmp:
        pkg = Path(tmp) / "pkg"
        shutil.copytree(ROOT / "buildtool", pkg / "buildtool", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        system = Bazel(Path(tmp) / "app", pkg, a.board)
        try:
            print(f"\n### bazel ({a.board}, tiny, median of {a.runs})\n")
            print("| edit | time | steps that ran |\n| --- | ---: | --- |")
            for label, secs, steps in measure(system, a.runs, pkg / "buildtool" / "arena" / "planner.py"):
                print(f"| {label} | {secs:.2f} s | {steps} |", flush=True)
        finally:
            system.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
