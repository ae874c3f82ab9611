"""The TensorFlow half of tests/test_netsplit.py, run in its own process (OR-Tools' CP-SAT crashes in
a process where TensorFlow's converter has run, and pytest's process plans later):

    python tests/netsplit_job.py OUT_DIR

writes OUT_DIR/job.json (Keras' count_params of built networks, both searches' tables) and the int8
models of the searched networks: vgg_search.tflite (threshold 0.5: its factors depend on TensorFlow's
arithmetic, through the Python API) and resnet_search.tflite (threshold 100: every candidate passes, so
its factors are 2,2,2; through `buildtool netsplit`, whose output directory is OUT_DIR/resnet)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402

from buildtool import cli  # noqa: E402
from buildtool.netsplit import api, report, transform  # noqa: E402
from buildtool.netsplit import data as datasets  # noqa: E402
from buildtool.netsplit import spec as specs  # noqa: E402

# (architecture, how the test names it, the NetSpec rewrite)
VARIANTS = {
    "base": lambda s: s,
    "split0x2": lambda s: specs.split(s, 0, 2),
    "factors422": lambda s: specs.with_factors(s, (4, 2, 2)),
    "naive4": lambda s: specs.naive(s, 4),
    "shared1x4": lambda s: specs.shared(s, 1, 4),
}


def count_params(data) -> dict:
    """Keras' own parameter count of every variant of both architectures, and of split_block's rewrite."""
    out = {}
    for arch in ("vgg-small", "resnet-small"):
        base = specs.architecture(arch, data.input_shape, data.classes)
        for name, make in VARIANTS.items():
            out[f"{arch}/{name}"] = transform.build(make(base)).count_params()
        out[f"{arch}/split_block(1,4)"] = transform.split_block(transform.build(base), 1, 4).count_params()
    return out


def from_keras(data) -> dict:
    """A user's plain Keras chain read back as a NetSpec: the rebuilt network computes the same, and
    split_block rewrites it."""
    import numpy as np

    L = keras.layers
    keras.utils.set_random_seed(1)
    user = keras.Sequential([keras.Input((16, 16, 1)), L.Conv2D(8, 3, padding="same", activation="relu"),
                             L.MaxPooling2D(2), L.Conv2D(16, 3, padding="same"), L.ReLU(), L.MaxPooling2D(2),
                             L.GlobalAveragePooling2D(), L.Dense(10)])
    spec = transform.spec_of(user)
    x = data.calibration[:8]
    same = np.allclose(user(x).numpy(), transform.with_spec(user, spec)(x).numpy(), atol=1e-5)
    return {"filters": [list(b.filters) for b in spec.blocks], "params": user.count_params(), "same_output": bool(same),
            "split_block(0,2)": transform.split_block(user, 0, 2).count_params()}


def main(out: Path) -> None:
    data = datasets.load("digits:16")
    result = {"params": count_params(data), "from_keras": from_keras(data)}
    r = api.run("vgg-small", data, candidates=(2,), threshold=0.5, epochs=1, baseline_epochs=1, measure="final",
                progress=None)
    (out / "vgg_search.tflite").write_bytes(r.tflite)
    result["vgg-small"] = {"steps": report.to_json(r.steps), "factors": list(r.spec.factors), "table": r.table}
    # the ResNet search through the command line, as a user runs it
    rc = cli.main(["netsplit", "resnet-small", "--data", "digits:16", "--candidates", "2", "--threshold", "100",
                   "--epochs", "1", "--baseline-epochs", "1", "--measure-final", "-o", str(out / "resnet")])
    steps = json.loads((out / "resnet" / "steps.json").read_text())
    (out / "resnet_search.tflite").write_bytes((out / "resnet" / "split.tflite").read_bytes())
    result["resnet-small"] = {"rc": rc, "steps": steps, "factors": steps[-1]["factors"],
                              "table": (out / "resnet" / "table.md").read_text(),
                              "keras_reloaded_params": keras.saving.load_model(out / "resnet" / "split.keras").count_params()}
    (out / "job.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
