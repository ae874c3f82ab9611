"""Whole-process times of the everyday commands, for a checkout: is a refactor slower?

    python3 benchmarks/house_times.py                       # this checkout
    python3 benchmarks/house_times.py --repo ../old-clone   # another checkout (e.g. before a change)

Each command runs in a fresh process with that checkout first on PYTHONPATH, without the planner
daemon (BUILDTOOL_NO_DAEMON=1), best of --repeat runs; then a cold `scons` firmware build
(cortex-m4, mbv2-w0.35) and the import of the thin daemon client (what every `buildtool plan`
pays before the daemon answers). Prints one table row per command, in seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["plan", "mbv2-w0.35"], ["plan", "mbv2-w0.35", "--optimize", "ram"],
            ["plan", "mcunet-in3", "--optimize", "ram"], ["plan", "mobilenetv2", "--split", "auto"],
            ["inspect", "mobilenetv2"], ["--version"])
# (checkouts from before issue 27's move have the client at buildtool.daemon.thin)
THIN = "try:\n import buildtool.serve.daemon.thin\nexcept ImportError:\n import buildtool.daemon.thin"


def best(cmd: list, env: dict, cwd: Path, repeat: int, before=None) -> float:
    times = []
    for _ in range(repeat):
        if before:
            before()
        t = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=str(ROOT), help="the checkout to time (default: this one)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    repo = Path(a.repo).resolve()
    env = dict(os.environ, PYTHONPATH=str(repo), BUILDTOOL_NO_DAEMON="1", BUILDTOOL_QUIET="1")
    rows = []
    for c in COMMANDS:
        rows.append(("buildtool " + " ".join(c), best([sys.executable, "-m", "buildtool.cli", *c], env, repo, a.repeat)))
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "fw"
        rows.append(("scons board=cortex-m4 model=mbv2-w0.35 (cold)",
                     best(["scons", "-Q", "-C", str(repo), "board=cortex-m4", "model=mbv2-w0.35", f"out={out}"], env,
                          repo, max(1, a.repeat - 1), before=lambda: shutil.rmtree(out, ignore_errors=True))))
    rows.append(("import the thin daemon client",
                 best([sys.executable, "-c", THIN], env, repo, a.repeat)))
    print(f"checkout: {repo}")
    print(f"| command | seconds (best of {a.repeat}) |\n|---|---:|")
    for name, s in rows:
        print(f"| `{name}` | {s:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
