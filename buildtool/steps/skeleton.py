"""Step `skeleton`: the model minus its weight values, what planning and code generation depend on.
A weight edit leaves it byte-identical, so nothing downstream of it reruns."""

from __future__ import annotations

import dataclasses
import json

from .. import __version__
from ..codegen.skeleton import from_json, to_json
from ..errors import UsageError
from ..model.files import read_model_file
from . import Outputs, sha256
from .models import Model, check, read_model


def skeleton(model: Model) -> dict:
    """The skeleton of a model as a JSON-ready map."""
    return to_json(model.graph)


def from_skeleton(d: dict, name: str | None = None) -> Model:
    """The Model a skeleton describes (weights absent: enough to plan and generate code)."""
    g = from_json(d)
    if name is not None:
        g = dataclasses.replace(g, name=name)
    return Model(g.name, g.name, g)


def run(model_path, model_bytes: bytes | None = None) -> Outputs:
    """model_path: the .tflite file (read, checked); its bytes go into the seal."""
    model = read_model(str(model_path))
    check(model)
    if model_bytes is None:
        with open(model_path, "rb") as f:
            model_bytes = f.read()
    text = json.dumps(skeleton(model), indent=0, sort_keys=True) + "\n"
    return Outputs({"skeleton.json": text},
                   {"skeleton.json": {"model_sha256": sha256(model_bytes), "buildtool": __version__}})


def read_json(path: str) -> dict:
    """A JSON file a step reads back (skeleton.json, plan.json), through the bounded reader (regular
    files only); one line when it is not JSON."""
    try:
        return json.loads(read_model_file(path, path))
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"{path} is not JSON ({type(e).__name__}); make it again with buildtool gen") from None


def read_skeleton(path: str, name: str | None = None) -> Model:
    """The Model skeleton.json describes; one line when it is not a skeleton."""
    try:
        return from_skeleton(read_json(path), name)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise UsageError(f"{path} is not a skeleton ({type(e).__name__}); make it with buildtool gen skeleton") from None


def read_input(path: str, name: str | None = None) -> Model:
    """What the code step reads: a .tflite model (a fused plan's code holds weight copies) or skeleton.json."""
    return read_model(path, name) if str(path).endswith(".tflite") else read_skeleton(path, name)
