"""Step `flash`: weights.bin, every constant tensor aligned for the board with its header; on a board
with memory regions, those placed in an external region last (plan/regions.py), and the header that
splits the image for weights.S (CMake, Bazel: plan/flash.py's split_header)."""

from __future__ import annotations

import json

from .. import targets
from ..errors import UsageError
from ..plan import flash
from ..plan.regions import image_groups
from . import Outputs
from .models import Model, read_model
from .readback import read_plan


def image(model: Model, board: str, plan=None, split: bool = True, code_bytes: int | None = None) -> bytes:
    """plan: a fused plan's tile counts decide which weights go external; split=False: never (a
    multi-model firmware's code reads every image whole from flash); code_bytes: the code's measured
    flash bytes the code step placed the weights around (firmware.json's flash_code_bytes)."""
    t = targets.get(board)
    placed = image_groups(model.graph, plan, t, code_bytes=code_bytes) if split else None
    return flash.build_image(model.graph, board, t.weights_align, placed[0] if placed else None)


def run(model: Model, board: str, plan=None, code_bytes: int | None = None) -> Outputs:
    data = image(model, board, plan, code_bytes=code_bytes)
    return Outputs({"weights.bin": data, "weights_split.h": flash.split_header(targets.get(board), data)})


def code_bytes_of(manifest_path: str) -> int | None:
    """firmware.json's flash_code_bytes (None when the code step did not measure the code)."""
    try:
        with open(manifest_path, encoding="utf-8") as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"gen flash --code-size: cannot read the code step's firmware.json {manifest_path!r} "
                         f"({getattr(e, 'strerror', None) or e}); run the code step first") from None
    v = man.get("flash_code_bytes") if isinstance(man, dict) else None
    if v is not None and (not isinstance(v, int) or v < 0):
        raise UsageError(f"{manifest_path}: flash_code_bytes must be a byte count; regenerate it with gen code")
    return v


def run_files(model_path: str, board: str, plan_path: str | None = None, code_path: str | None = None) -> Outputs:
    """The step as build rules run it. plan_path: a fused plan re-reads weights per tile, so which go to
    external memory follows its counts, as its code step's do (a layer-by-layer plan needs none);
    code_path: the code step's firmware.json, whose measured code bytes the weights were placed around
    (boards whose weights may go external: steps.code.measures_code)."""
    model = read_model(model_path)
    return run(model, board, read_plan(plan_path, model.graph) if plan_path else None,
               code_bytes_of(code_path) if code_path else None)
