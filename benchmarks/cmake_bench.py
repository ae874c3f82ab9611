"""CMake + Ninja incremental-build benchmark on examples/cmake (docs/cmake.md).

    python benchmarks/cmake_bench.py [--board host] [--model tiny] [--structural mcunet-vww1] [--report]

Copies examples/cmake and the buildtool package to a scratch folder (the planner-source edit
touches the copy, never this checkout), configures with Ninja (-DREPORT=OFF unless --report), and prints a markdown table: cold
build, no-op, touch with the same bytes, weight-only edit, structural edit, planner-source edit;
the wall time of each `ninja` and the steps that ran. `cmake_table()` returns the same rows for
benchmarks/integrations.py; `steps_ran` is shared with tests/test_cmake.py.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from edits import perturb_weights  # noqa: E402

_STEP = re.compile(r"^\[\d+/\d+\] (.*)$", re.M)


def step_name(line: str) -> str:
    """A Ninja status line as a short step name: plan, weights.o, model.o, main.o, kernel:conv.o, ar, link."""
    m = re.match(r"buildtool (\w+) ", line)
    if m:
        return m.group(1)
    if line.startswith("Linking C static library"):
        return "ar"
    if line.startswith("Linking"):
        return "link"
    obj = re.search(r"([\w.-]+)\.(?:c|S)\.(?:o|obj)$", line)
    if obj:
        name = obj.group(1)
        stem = "weights" if name == "weights_blob" else name
        return f"kernel:{stem}.o" if "/kernels/" in line else f"{stem}.o"
    return line


def steps_ran(log: str) -> list:
    """The steps a `ninja` run's output says ran, in order."""
    return [step_name(s) for s in _STEP.findall(log)]


def _ninja(build: Path, env: dict) -> tuple:
    t0 = time.perf_counter()
    r = subprocess.run(["ninja", "-C", str(build)], capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if r.returncode:
        raise RuntimeError(f"ninja failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return dt, steps_ran(r.stdout)


def _setup(work: Path, model: str) -> tuple:
    """A copy of the package and of examples/cmake with model.tflite; (project, env)."""
    from buildtool import pipeline

    pkg = work / "pkg"
    shutil.copytree(ROOT / "buildtool", pkg / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    top = work / "app"
    shutil.copytree(ROOT / "examples" / "cmake", top, ignore=shutil.ignore_patterns("build"))
    (top / "tiny.tflite").write_bytes(pipeline.zoo_model(model))
    env = dict(os.environ, PYTHONPATH=str(pkg), BUILDTOOL_RUNTIME_DIR=str(work / "run"),
               BUILDTOOL_CACHE_DIR=str(work / "cache"), BUILDTOOL_DAEMON_WATCH="0")
    return pkg, top, env


def _configure(top: Path, pkg: Path, board: str, env: dict, report: bool) -> Path:
    build = top / "build" / board
    cmake_dir = pkg / "buildtool" / "cmake"
    args = ["cmake", "-G", "Ninja", "-S", str(top), "-B", str(build), f"-DCMAKE_PREFIX_PATH={cmake_dir}",
            f"-DREPORT={'ON' if report else 'OFF'}"]
    if board != "host":
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={cmake_dir}/toolchains/{board}.cmake")
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return build


def cmake_table(board: str = "host", model: str = "tiny", structural: str = "mcunet-vww1", noops: int = 10,
                report: bool = False) -> list:
    """[(row, seconds, steps that ran)] for each kind of edit, measured in a scratch folder; report: with
    the example's post-link RAM/flash line (one more Python start per link)."""
    from buildtool import pipeline

    with tempfile.TemporaryDirectory(prefix="bt-cmake-bench-") as tmp:
        work = Path(tmp)
        pkg, top, env = _setup(work, model)
        try:
            build = _configure(top, pkg, board, env, report)
            rows = [("cold build",) + _ninja(build, env)]
            times = sorted(_ninja(build, env)[0] for _ in range(noops))
            rows.append((f"no-op (median of {noops})", times[noops // 2], []))
            m = top / "tiny.tflite"
            original = m.read_bytes()
            m.write_bytes(original)
            rows.append(("touch model, same bytes",) + _ninja(build, env))
            m.write_bytes(perturb_weights(m.read_bytes()))
            rows.append(("weight-only edit (1 byte)",) + _ninja(build, env))
            m.write_bytes(pipeline.zoo_model(structural))
            rows.append((f"structural edit ({model} -> {structural})",) + _ninja(build, env))
            os.utime(pkg / "buildtool" / "arena" / "__init__.py")
            rows.append(("planner source edited (touched)",) + _ninja(build, env))
        finally:
            subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], capture_output=True, env=env)
    return rows


def format_table(rows: list, board: str) -> str:
    out = [f"CMake + Ninja, examples/cmake, board {board}", "", "| build | time | steps that ran |", "|---|---:|---|"]
    for what, dt, steps in rows:
        shown = ", ".join(_squash(steps)) or "none"
        out.append(f"| {what} | {dt * 1000:.0f} ms | {shown} |")
    return "\n".join(out)


def _squash(steps: list) -> list:
    """kernel:*.o steps counted in one entry."""
    kernels = [s for s in steps if s.startswith("kernel:")]
    rest = [s for s in steps if not s.startswith("kernel:")]
    return rest + ([f"{len(kernels)} kernels"] if kernels else [])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="host")
    p.add_argument("--model", default="tiny")
    p.add_argument("--structural", default="mcunet-vww1")
    p.add_argument("--report", action="store_true", help="keep the example's post-link RAM/flash report")
    a = p.parse_args()
    sys.path.insert(0, str(ROOT))
    print(format_table(cmake_table(a.board, a.model, a.structural, report=a.report), a.board))


if __name__ == "__main__":
    main()
