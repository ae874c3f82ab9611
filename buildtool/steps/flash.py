"""Step `flash`: weights.bin, every constant tensor aligned for the board with its header; on a board
with memory regions, those placed in an external region last (plan/regions.py), and the header that
splits the image for weights.S (CMake, Bazel: plan/flash.py's split_header)."""

from __future__ import annotations

from .. import targets
from ..plan import flash
from ..plan.regions import image_groups
from . import Outputs
from .models import Model, read_model
from .readback import read_plan


def image(model: Model, board: str, plan=None, split: bool = True) -> bytes:
    """plan: a fused plan's tile counts decide which weights go external; split=False: never (a
    multi-model firmware's code reads every image whole from flash)."""
    t = targets.get(board)
    placed = image_groups(model.graph, plan, t) if split else None
    return flash.build_image(model.graph, board, t.weights_align, placed[0] if placed else None)


def run(model: Model, board: str, plan=None) -> Outputs:
    data = image(model, board, plan)
    return Outputs({"weights.bin": data, "weights_split.h": flash.split_header(targets.get(board), data)})


def run_files(model_path: str, board: str, plan_path: str | None = None) -> Outputs:
    """The step as build rules run it. plan_path: a fused plan re-reads weights per tile, so which go to
    external memory follows its counts, as its code step's do (a layer-by-layer plan needs none)."""
    model = read_model(model_path)
    return run(model, board, read_plan(plan_path, model.graph) if plan_path else None)
