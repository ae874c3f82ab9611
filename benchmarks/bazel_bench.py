"""Bazel (Debian bazel-bootstrap 4.2) on examples/bazel: what each kind of edit costs and which
actions it reran.

    python benchmarks/bazel_bench.py [--board host] [--runs 3]

`Bazel` is the driver benchmarks/integrations.py measures (the same edits as for SCons):
Bazel(top, pkg_root, board) copies the example to `top`, points its @buildtool at the buildtool
package under pkg_root; build() returns the steps the build ran (from --execution_log_json_file);
close() shuts its Bazel server down. Run alone, this file prints the Bazel table only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIT = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "integration-kit" / "bazel"
sys.path[:0] = [str(ROOT)]
from buildtool.integrations.bazel import executed  # noqa: E402

STEPS = {"BtModel": "model", "BtSkeleton": "skeleton", "BtPlan": "plan", "BtCode": "code", "BtFlash": "flash",
         "BtKernels": "kernel list", "CppLink": "link"}


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

    def floors(self, runs: int) -> list:
        """[(row, times, what ran)]: this workspace's no-op without the execution log the other rows
        write, then the no-op of an empty workspace (one genrule: what Bazel itself costs here,
        whatever the rules do) and, when ../shared is present, of the integration kit's prototype
        workspace (its stub repositories and a plain cc_binary), on the same Bazel and startup flags."""
        rows = [("no-op, no execution log", self._noops(self.top, "//:app", runs, self.flags), "nothing")]
        empty = self.top.parent / "empty-workspace"
        empty.mkdir(exist_ok=True)
        (empty / "WORKSPACE").write_text('workspace(name = "empty")\n')
        (empty / "BUILD").write_text('genrule(name = "g", outs = ["g.txt"], cmd = "echo hi > $@")\n')
        rows.append(("no-op, empty workspace", self._noops(empty, "//:g", runs), "nothing (Bazel's floor)"))
        if KIT.is_dir():
            kit = self.top.parent / "kit-workspace"
            shutil.copytree(KIT, kit, symlinks=True)
            (kit / "hello_plain.c").write_text("int main(void) { return 0; }\n")
            with open(kit / "BUILD", "a") as f:
                f.write('\ncc_binary(name = "hello_plain", srcs = ["hello_plain.c"])\n')
            rows.append(("no-op, integration kit prototype", self._noops(kit, "//:hello_plain", runs),
                         "nothing (the prototype's own no-op, measured now)"))
        return rows

    def _noops(self, ws: Path, target: str, runs: int, flags=()) -> list:
        """No-op build times of target in ws (its first build, untimed, starts that workspace's server)."""
        times = []
        for _ in range(runs + 1):
            t0 = time.perf_counter()
            subprocess.run(self.startup + ["build", *flags, target], cwd=ws, env=self.env, capture_output=True,
                           check=True)
            times.append(time.perf_counter() - t0)
        if ws != self.top:
            subprocess.run(self.startup + ["shutdown"], cwd=ws, env=self.env, capture_output=True)
        return times[1:]

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


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from integrations import main

    sys.exit(main(["--systems", "bazel", *sys.argv[1:]]))
