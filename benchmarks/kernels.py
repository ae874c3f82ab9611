"""Kernel benchmarks: executed instructions per model and board (optimised vs reference kernel
set, QEMU instruction-count plugin, deterministic) and host wall time of our host firmware vs the
TFLite Micro interpreter on the same model.

    python benchmarks/kernels.py                 # markdown tables on stdout
    python benchmarks/kernels.py --big           # also mbv2_w035_144 (slower)
    python benchmarks/kernels.py --runs 20       # host timing repetitions (min is reported)
    python benchmarks/kernels.py --boards none   # host tables only
    python benchmarks/kernels.py --boards none --big --models mbv2_w035_144 --optimize ram
                                                 # the fused plan's firmware (host tile runtime)

The host tables compare our host firmware (host kernel set) with the same firmware built on the
reference kernel set, in wall time (min over --runs, interleaved) and, when valgrind is installed,
in executed instructions (callgrind: deterministic on a busy machine).

Instruction counts are the sum of the per-operator regions (model_invoke's work, without
start-up and I/O). Models come from ../shared/models when present, else from the zoo.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from buildtool import pipeline, targets, zoo
from buildtool.firmware import runner, toolchain
from buildtool.model import reader as tflite_reader  # noqa: E402
from buildtool.errors import BuildtoolError  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
BOARDS = ["cortex-m4", "cortex-m7", "cortex-m33", "riscv32", "riscv32-rvv", "hifive1"]


def models(big: bool) -> dict:
    """name -> .tflite bytes."""
    names = ["tiny_cnn_32", "dscnn_kws", "resnet_concat_64"] + (["mbv2_w035_144"] if big else [])
    out = {n: (SHARED / f"{n}.tflite").read_bytes() for n in names if (SHARED / f"{n}.tflite").exists()}
    out["zoo:tiny"] = serialize(zoo.build("tiny"))
    return out


def example_input(g) -> np.ndarray:
    return np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)


def instructions(data: bytes, board: str, kernels, work: Path) -> int | None:
    """Executed instructions of one inference, or None when the model does not fit the board."""
    g = tflite_reader.parse(data)
    try:
        pipeline.build(g, board, work, kernels=kernels)
    except toolchain.FirmwareError as e:
        if "does not fit" in str(e):
            return None
        raise
    _, prof, _ = runner.run(board, work, example_input(g))
    return sum(o["count"] for o in prof["ops"])


def _bytes(y) -> bytes:
    """All output bytes of one run (one array or a list of them)."""
    return b"".join(np.asarray(v).tobytes() for v in (y if isinstance(y, (list, tuple)) else [y]))


def host_times(data: bytes, runs: int, work: Path, plan: dict | None = None) -> tuple:
    """(our host firmware ns, the same with the reference kernel set, TFLM interpreter ns): the minimum
    over `runs` inferences; the two firmwares' outputs must be byte-identical. plan: planning options
    (e.g. {"optimize": "ram"}: a fused plan)."""
    from tflite_micro import runtime

    g = tflite_reader.parse(data)
    x = example_input(g)
    pipeline.build(g, "host", work, plan or {})
    pipeline.build(g, "host", work / "ref", plan or {}, kernels=("reference",))
    ours = refs = None
    for _ in range(runs):  # interleaved, so a busy machine slows both alike
        y, prof, _ = runner.run("host", work, x)
        y_ref, prof_ref, _ = runner.run("host", work / "ref", x)
        if _bytes(y) != _bytes(y_ref):
            raise SystemExit("host firmware outputs differ between the host and the reference kernel set")
        t, t_ref = (sum(o["count"] for o in p["ops"]) for p in (prof, prof_ref))
        ours, refs = min(ours or t, t), min(refs or t_ref, t_ref)
    ip = runtime.Interpreter.from_bytes(data)
    ip.set_input(x, 0)
    best = None
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        ip.invoke()
        dt = time.perf_counter_ns() - t0
        best = dt if best is None else min(best, dt)
    return ours, refs, best


def host_instructions(work: Path, x) -> int | None:
    """Instructions of one run of the host firmware in work (valgrind's callgrind, whole process:
    deterministic where wall time is not), or None without valgrind."""
    import shutil
    import subprocess

    if not shutil.which("valgrind"):
        return None
    out = work / "callgrind.out"
    data = runner._inputs(json.loads((work / "firmware.json").read_text()), x)
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(work / "firmware.elf")],
                       input=data, capture_output=True, timeout=600)
    m = re.search(rb"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if r.returncode == 0 and m else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="include mbv2_w035_144")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--boards", default=",".join(BOARDS))
    ap.add_argument("--models", help="only these models (comma-separated names)")
    ap.add_argument("--optimize", choices=("ram", "macs"), help="host tables: a fused plan (planning option)")
    a = ap.parse_args(argv)
    ms = {k: v for k, v in models(a.big).items() if not a.models or k in a.models.split(",")}
    plan = {"optimize": a.optimize} if a.optimize else {}
    boards = [b for b in a.boards.split(",") if b != "none" and not targets.get(b).missing_tools()]
    with tempfile.TemporaryDirectory(prefix="bt-bench-") as tmp:
        work = Path(tmp)
        if boards:
            print("### Executed instructions per inference (optimised / reference kernel set)\n")
            print("| model | " + " | ".join(boards) + " |")
            print("|---|" + "---:|" * len(boards))
            for name, data in ms.items():
                cells = []
                for b in boards:
                    try:
                        opt = instructions(data, b, None, work / b / "opt")
                        ref = instructions(data, b, ("reference",), work / b / "ref")
                    except BuildtoolError as e:
                        cells.append(f"error: {e}")
                        continue
                    cells.append("does not fit" if opt is None else
                                 f"{opt / 1e6:.2f} M / {ref / 1e6:.2f} M (x{ref / opt:.2f})")
                print(f"| {name} | " + " | ".join(cells) + " |")
        print(f"\n### Host wall time per inference (min of {a.runs} runs)\n")
        print("| model | our host firmware | same, reference kernel set | reference / ours | TFLM interpreter "
              "| TFLM / ours |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, data in ms.items():
            ours, ref, tflm = host_times(data, a.runs, work / "host" / name.replace(":", "_"), plan)
            print(f"| {name} | {ours / 1e3:.0f} us | {ref / 1e3:.0f} us | x{ref / ours:.2f} | {tflm / 1e3:.0f} us "
                  f"| x{tflm / ours:.2f} |")
        print("\n### Host firmware instructions per run (valgrind callgrind; whole process, deterministic)\n")
        print("| model | host kernel set | reference kernel set | reference / host |")
        print("|---|---:|---:|---:|")
        for name, data in ms.items():
            w = work / "host" / name.replace(":", "_")
            x = example_input(tflite_reader.parse(data))
            ours, ref = host_instructions(w, x), host_instructions(w / "ref", x)
            if ours and ref:
                print(f"| {name} | {ours / 1e6:.2f} M | {ref / 1e6:.2f} M | x{ref / ours:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
