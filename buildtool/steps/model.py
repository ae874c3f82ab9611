"""Step `model`: a zoo architecture as .tflite bytes (sealed: the skeleton step reads it back)."""

from __future__ import annotations

from .. import zoo
from ..model.writer import serialize
from ..plan.canonical import zoo_version
from . import Outputs
from .models import locate


def run(name: str) -> Outputs:
    locate(name)  # one line listing the zoo when it is not a zoo name
    return Outputs({"model.tflite": serialize(zoo.build(name))},
                   {"model.tflite": {"zoo": name, "zoo_version": zoo_version()}})


def zoo_model(name: str) -> bytes:
    """A zoo architecture as .tflite bytes."""
    return run(name)["model.tflite"]
