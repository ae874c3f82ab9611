"""Cold firmware build time of a 500-operator model (issue 54 item 5): `buildtool run --board cortex-m4`
of `buildtool.zoo.synthetic.nasnet_like(38)` (502 operators), written by the project's own writer, with
an empty kernel cache (BUILDTOOL_CACHE in a fresh folder) and a fresh build folder: plan, code, the
kernel library, model.c, link and the QEMU run. Prints wall seconds and how many times the compiler
was handed model.c (a logging wrapper on PATH around the board's compiler).

    python3 benchmarks/build_time.py                   # this checkout
    python3 benchmarks/build_time.py --ref e079ab2     # also the same build at that commit
    python3 benchmarks/build_time.py --chain 500 --ref e079ab2   # 500 convolutions (e079ab2 plans it too)

--ref extracts the commit with `git archive` into a temporary folder (the repository is not changed)
and runs its `buildtool.cli` there on the same model file. The machine is shared: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _wrapper(folder: Path, cc: str, log: Path) -> None:
    real = shutil.which(cc)
    w = folder / cc
    w.write_text(f'#!/bin/sh\nfor a in "$@"; do case "$a" in *model.c) echo "$a" >> "{log}";; esac; done\n'
                 f'exec "{real}" "$@"\n')
    w.chmod(w.stat().st_mode | stat.S_IEXEC)


def build(code_root: Path, model: Path, x: Path, work: Path) -> tuple:
    """(wall seconds, CPU seconds of the build's processes, model.c compiles) of one cold `buildtool run --board cortex-m4` with code_root's buildtool."""
    bin_dir, log = work / "bin", work / "cc.log"
    bin_dir.mkdir(parents=True)
    _wrapper(bin_dir, "arm-none-eabi-gcc", log)
    env = dict(os.environ, PYTHONPATH=str(code_root), BUILDTOOL_CACHE=str(work / "cache"),
               BUILDTOOL_NO_DAEMON="1", PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    t0, c0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "run", str(model), "--board", "cortex-m4",
                        "--input", str(x), "--build-dir", str(work / "out")], env=env, cwd=work,
                       capture_output=True, text=True)
    wall, c1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
    if r.returncode != 0:
        raise SystemExit(f"build at {code_root} failed: {r.stderr.strip().splitlines()[-1:]}")
    return wall, cpu, len(log.read_text().splitlines()) if log.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", type=int, default=38, help="nasnet_like cells (38: 502 operators)")
    ap.add_argument("--chain", type=int, default=0,
                    help="conv_chain(N, channels=8, size=8) instead (N operators; a model e079ab2 also plans)")
    ap.add_argument("--ref", help="a commit to time the same build at (git archive into a temporary folder)")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from buildtool.model import writer
    from buildtool.zoo.synthetic import conv_chain, nasnet_like

    with tempfile.TemporaryDirectory(prefix="bt-build-time-") as tmp:
        tmp = Path(tmp)
        g = conv_chain(a.chain, channels=8, size=8) if a.chain else nasnet_like(a.cells)
        model, x = tmp / f"{g.name}.tflite", tmp / "x.npy"
        writer.save(g, str(model))
        np.save(x, np.zeros(g.tensors[g.inputs[0]].shape, np.int8))
        rows = [("this checkout", ROOT)]
        if a.ref:
            ref = tmp / "ref"
            ref.mkdir()
            arch = subprocess.run(["git", "-C", str(ROOT), "archive", a.ref], capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(ref)], input=arch, check=True)
            rows.append((a.ref, ref))
        print(f"cold `buildtool run --board cortex-m4` of {g.name}, {len(g.operators)} operators")
        print(f"{'code':<16}{'wall s':>8}{'CPU s':>8}{'model.c compiles':>18}")
        for k, (name, root) in enumerate(rows):
            wall, cpu, n = build(root, model, x, tmp / f"w{k}")
            print(f"{name:<16}{wall:>8.1f}{cpu:>8.1f}{n:>18}")


if __name__ == "__main__":
    main()
