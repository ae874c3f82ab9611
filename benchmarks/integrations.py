"""Build-system integrations: what each kind of edit costs and which steps it reran.

    python benchmarks/integrations.py [--systems scons,cmake,bazel] [--board host] [--runs 3]

(The CMake and Bazel drivers are benchmarks/cmake_bench.py and benchmarks/bazel_bench.py.)
Each system builds its example project (examples/<system>: the user's own main.c + the `tiny`
model) in a temporary copy, with a private copy of the buildtool package on PYTHONPATH so the
"planner source edit" row can edit the planner without touching this checkout. Rows:
  cold            first build (kernels, model, weights, link)
  no-op           nothing changed (Bazel also: the no-op of an empty workspace, its own floor)
  same bytes      the model file rewritten with identical bytes (newer mtime)
  weight-only     one weight byte changed: skeleton and plan unchanged
  structural      a layer wider: everything model-dependent reruns
  planner edit    a comment added to the planner's source: the plan step reruns, its output is
                  unchanged, and the build stops there
Times are medians of --runs repetitions (cold: one run), wall clock on this machine; the steps
column lists what the build system reports it ran. Prints one Markdown table per system.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from edits import tiny_bytes  # noqa: E402


class SCons:
    """examples/scons with the tool's quiet output: one line per step that ran."""
    name = "scons"

    def __init__(self, top: Path, pkg_root: Path, board: str):
        self.top, self.board = top, board
        shutil.copytree(ROOT / "examples" / "scons", top)
        self.env = dict(os.environ, PYTHONPATH=str(pkg_root), BUILDTOOL_NO_DAEMON="1")
        self.argv = [sys.executable, "-m", "SCons", "-Q", f"toolpath={pkg_root / 'buildtool' / 'scons'}",
                     f"board={board}", "model=tiny.tflite"]

    def build(self) -> list:
        r = subprocess.run(self.argv, cwd=self.top, env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"integrations: scons failed:\n{r.stdout}{r.stderr}")
        return [step for line in r.stdout.splitlines() if (step := _scons_step(line))]


def _scons_step(line: str) -> str | None:
    word = line.split(" ", 1)[0]
    if word in ("CC", "AS"):
        name = Path(line.split(" ", 1)[1]).name
        return "model.c" if name == "model.c" else "main.c" if name == "main.c" else f"{word} {name}"
    return {"skeleton": "skeleton", "plan": "plan", "codegen": "code", "flash": "flash", "LD": "link"}.get(word)


def _bazel(top: Path, pkg_root: Path, board: str):
    sys.path.insert(0, str(Path(__file__).parent))
    from bazel_bench import Bazel

    return Bazel(top, pkg_root, board)


def _cmake(top: Path, pkg_root: Path, board: str):
    sys.path.insert(0, str(Path(__file__).parent))
    from cmake_bench import CMake

    return CMake(top, pkg_root, board)


SYSTEMS = {"scons": SCons, "cmake": _cmake, "bazel": _bazel}


def _summary(steps: list) -> str:
    kernels = [s for s in steps if s.startswith(("CC ", "AS "))]
    rest = [s for s in steps if s not in kernels]
    text = ", ".join(dict.fromkeys(rest))
    if kernels:
        text += (", " if text else "") + f"{len(kernels)} other compiles"
    return text or "nothing"


def measure(system, runs: int, planner_file: Path) -> list:
    """[(row, seconds, steps)] for one system, in the order of the module docstring."""
    model = system.top / "tiny.tflite"
    rows = []

    def timed(label: str, edit=None, n: int = runs, undo=None):
        times, steps = [], []
        for _ in range(n):
            if edit:
                edit()
            t0 = time.perf_counter()
            steps = system.build()
            times.append(time.perf_counter() - t0)
            if undo:
                undo()
                system.build()
        rows.append((label, statistics.median(times), _summary(steps)))

    model.write_bytes(tiny_bytes())
    timed("cold", n=1)
    timed("no-op")
    if hasattr(system, "floors"):  # Bazel: no-ops to compare with (its own floor, the prototype), measured now
        rows += [(label, statistics.median(times), ran) for label, times, ran in system.floors(runs)]
    timed("same bytes", edit=lambda: (time.sleep(0.01), model.write_bytes(model.read_bytes())))
    timed("weight-only", edit=lambda: model.write_bytes(tiny_bytes(1)), undo=lambda: model.write_bytes(tiny_bytes()))
    timed("structural", edit=lambda: model.write_bytes(tiny_bytes(wide=True)),
          undo=lambda: model.write_bytes(tiny_bytes()))
    original = planner_file.read_text()
    stamp = iter(range(1, 1000))
    timed("planner edit", edit=lambda: planner_file.write_text(original + f"# edit {next(stamp)}\n"))
    planner_file.write_text(original)
    system.build()
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default="scons,cmake,bazel")
    ap.add_argument("--board", default="host")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    for name in a.systems.split(","):
        if name not in SYSTEMS:
            raise SystemExit(f"integrations: unknown system {name} (known: {', '.join(SYSTEMS)})")
        with tempfile.TemporaryDirectory(prefix=f"bt-bench-{name}-") as tmp:
            pkg = Path(tmp) / "pkg"
            shutil.copytree(ROOT / "buildtool", pkg / "buildtool",
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            system = SYSTEMS[name](Path(tmp) / "app", pkg, a.board)
            print(f"\n### {name} ({a.board}, tiny, median of {a.runs})\n")
            print("| edit | time | steps that ran |\n| --- | ---: | --- |")
            try:
                for label, secs, steps in measure(system, a.runs, pkg / "buildtool" / "arena" / "planner.py"):
                    print(f"| {label} | {secs:.2f} s | {steps} |", flush=True)
            finally:
                if hasattr(system, "close"):
                    system.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
