"""CMake + Ninja on examples/cmake (docs/cmake.md): what each kind of edit costs and which steps ran.

    python benchmarks/cmake_bench.py [--board host] [--runs 3]

`CMake` is the driver benchmarks/integrations.py measures (the same edits as for SCons and Bazel);
run alone, this file prints the CMake table only. `steps_ran` (a ninja log's steps) is shared with
tests/test_cmake.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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


class CMake:
    """examples/cmake configured for Ninja (-DBUILDTOOL_FIRMWARE_REPORT=OFF: no post-link report), the driver
    benchmarks/integrations.py measures. CMake(top, pkg_root, board) copies the example to `top` and
    runs buildtool from the package under pkg_root; build() configures once, runs `ninja` and returns
    the steps it ran in the integrations' names; close() stops the planner daemon it used."""
    name = "cmake"
    NAMES = {"weights.o": "weights.S", "model.o": "model.c", "main.o": "main.c"}

    def __init__(self, top: Path, pkg_root: Path, board: str):
        shutil.copytree(ROOT / "examples" / "cmake", top, ignore=shutil.ignore_patterns("build"))
        self.top, self.pkg_root, self.board, self.build_dir = top, pkg_root, board, None
        self.env = dict(os.environ, PYTHONPATH=str(pkg_root), BUILDTOOL_RUNTIME_DIR=str(top.parent / "run"),
                        BUILDTOOL_CACHE_DIR=str(top.parent / "cache"), BUILDTOOL_DAEMON_WATCH="0")

    def _configure(self) -> Path:
        build = self.top / "build" / self.board
        cmake_dir = self.pkg_root / "buildtool" / "cmake"
        args = ["cmake", "-G", "Ninja", "-S", str(self.top), "-B", str(build), f"-DCMAKE_PREFIX_PATH={cmake_dir}",
                "-DBUILDTOOL_FIRMWARE_REPORT=OFF"]
        if self.board != "host":
            args.append(f"-DCMAKE_TOOLCHAIN_FILE={cmake_dir}/toolchains/{self.board}.cmake")
        r = subprocess.run(args, capture_output=True, text=True, env=self.env)
        if r.returncode:
            raise SystemExit(f"cmake_bench: cmake failed:\n{r.stderr[-2000:]}")
        return build

    def build(self) -> list:
        if self.build_dir is None:
            self.build_dir = self._configure()
        r = subprocess.run(["ninja", "-C", str(self.build_dir)], capture_output=True, text=True, env=self.env)
        if r.returncode:
            raise SystemExit(f"cmake_bench: ninja failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return [self.NAMES.get(s, f"CC {s[len('kernel:'):]}" if s.startswith("kernel:") else s)
                for s in steps_ran(r.stdout) if s != "ar"]

    def close(self) -> None:
        subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], capture_output=True, env=self.env)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from integrations import main

    sys.exit(main(["--systems", "cmake", *sys.argv[1:]]))
