"""Network-structure splitting benchmark: the searched split against the baseline and the paper's
naive and shared splits, on scikit-learn's digits (upsampled), for a VGG-style and a ResNet-style
network: accuracy, parameters, MACs and the peak activation RAM our planner gives the int8 models.

    python benchmarks/netsplit.py [--size 16] [--candidates 2,4,8] [--epochs 3] [--baseline-epochs 10] [--threshold 0.5] [--write-docs]

Needs TensorFlow (pip install 'buildtool[netsplit]'). Accuracy depends on TensorFlow's kernels (it
is not byte-identical across machines); the arenas of a given .tflite are. Prints, per network, the
summary (baseline, naive, shared, searched) and every search step; --write-docs puts the output
between the markers of docs/netsplit.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool.netsplit import report, run  # noqa: E402

NETWORKS = ("vgg-small", "resnet-small")
SUMMARY = ("baseline", "naive", "shared", "searched")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16, help="digits upsampled to SIZE x SIZE (16)")
    ap.add_argument("--candidates", default="2,4,8")
    ap.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs per step (3)")
    ap.add_argument("--baseline-epochs", type=int, default=10, help="epochs training the baseline (10)")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--k", type=int, default=4, help="split factor of the naive and shared baselines (4)")
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args()
    out = Out()
    candidates = tuple(int(k) for k in a.candidates.split(","))
    import tensorflow as tf

    out(f"digits:{a.size}, candidates {a.candidates}, threshold {a.threshold:g} points, {a.epochs} epochs per step "
        f"(baseline {a.baseline_epochs}), naive/shared k={a.k} (shared: block 1 whole); TensorFlow {tf.__version__}; "
        f"{environment()}")
    out()
    for net in NETWORKS:
        t0 = time.time()
        r = run(net, f"digits:{a.size}", candidates, a.threshold, a.epochs, a.baseline_epochs, naive=a.k, shared=a.k)
        picked = [s for name in SUMMARY for s in r.steps if s.label == name]
        out(report.table(picked, f"{net}: summary").rstrip())
        out()
        out(report.table([s for s in r.steps if s.label not in ("naive", "shared")], f"{net}: search steps").rstrip())
        out()
        out(f"{net}: searched factors {','.join(map(str, r.spec.factors))}; {time.time() - t0:.0f} s")
        out()
    if a.write_docs:
        write_docs("docs/netsplit.md", "netsplit.py", out.text)


if __name__ == "__main__":
    main()
