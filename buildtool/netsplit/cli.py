"""The `buildtool netsplit` command (its parser imports nothing heavy; TensorFlow only when run)."""

from __future__ import annotations

import json
import os
import sys

from ..errors import UsageError
from ..fsutil import write_atomic
from . import require_tensorflow
from .report import to_json
from .spec import ARCHITECTURES


def _factors(text: str) -> tuple:
    try:
        out = tuple(int(k) for k in text.split(","))
    except ValueError:
        raise UsageError(f"split factors '{text}' must be comma-separated integers, e.g. 2,4,6,8") from None
    if not out or any(k < 2 for k in out):
        raise UsageError(f"split factors '{text}' must each be at least 2")
    return out


def _count(text: str, what: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise UsageError(f"{what} '{text}' must be a non-negative integer") from None
    if n < 0:
        raise UsageError(f"{what} '{text}' must be a non-negative integer")
    return n


def _settings(a) -> dict:
    """The command's arguments checked (one line each) before TensorFlow is imported."""
    if a.model not in ARCHITECTURES and not os.path.isfile(a.model):
        raise UsageError(f"'{a.model}' is neither a .keras file nor an architecture ({', '.join(ARCHITECTURES)})")
    if a.data.endswith(".npz") and not os.path.isfile(a.data):
        raise UsageError(f"dataset '{a.data}' does not exist")
    if os.path.exists(a.output) and not os.path.isdir(a.output):
        raise UsageError(f"output '{a.output}' exists and is not a directory")
    try:
        threshold = float(a.threshold)
    except ValueError:
        raise UsageError(f"threshold '{a.threshold}' must be a number of percentage points") from None
    return dict(candidates=_factors(a.candidates), threshold=threshold, epochs=_count(a.epochs, "epochs"),
                baseline_epochs=None if a.baseline_epochs is None else _count(a.baseline_epochs, "baseline epochs"),
                naive=_factors(a.naive)[0] if a.naive else None, shared=_factors(a.shared)[0] if a.shared else None,
                shared_blocks=_count(a.shared_blocks, "shared blocks"), measure="final" if a.measure_final else "all",
                seed=a.seed)


def cmd_netsplit(a) -> int:
    settings = _settings(a)
    require_tensorflow()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from .api import run  # (TensorFlow: imported only when the command runs, after its arguments are checked)

    out = a.output
    r = run(a.model, a.data, **settings)
    os.makedirs(out, exist_ok=True)
    r.model.save(os.path.join(out, "split.keras"))
    write_atomic(os.path.join(out, "split.tflite"), r.tflite)
    write_atomic(os.path.join(out, "table.md"), r.table.encode())
    write_atomic(os.path.join(out, "steps.json"), (json.dumps(to_json(r.steps), indent=1) + "\n").encode())
    print(r.table)
    print(f"split factors {','.join(map(str, r.spec.factors))}; wrote {out}/split.keras, split.tflite, "
          f"table.md, steps.json", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    s = sub.add_parser("netsplit")
    s.add_argument("model", help="a .keras file or an architecture: vgg-small, resnet-small, vgg16, resnet18")
    s.add_argument("--data", required=True,
                   help="digits[:SIZE] (scikit-learn, upsampled), an .npz with x_train/y_train/x_val/y_val, "
                        "or MODULE:FUNCTION returning those arrays or (train, val) tf.data datasets")
    s.add_argument("--candidates", default="2,4,6,8", help="split factors tried per block, in order (2,4,6,8)")
    s.add_argument("--threshold", default="0.5", help="largest accuracy drop kept, in points (0.5)")
    s.add_argument("--epochs", default="2", help="fine-tuning epochs per search step (2)")
    s.add_argument("--baseline-epochs", help="epochs training the baseline (2 x --epochs; 0 for a trained .keras)")
    s.add_argument("--naive", metavar="K", help="also train the naive baseline: K slim networks joined at the end")
    s.add_argument("--shared", metavar="K", help="also train the shared baseline: first blocks whole, the rest by K")
    s.add_argument("--shared-blocks", default="1", help="blocks the shared baseline keeps whole (1)")
    s.add_argument("--measure-final", action="store_true", help="plan only the searched network's int8 model")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("-o", "--output", default="netsplit-out",
                   help="directory for split.keras, split.tflite, table.md, steps.json (netsplit-out)")
    s.set_defaults(fn=cmd_netsplit)
