"""Build and run firmware from Python: the older entry points, kept for one release.

build(model, board, out_dir, **plan_options) is pipeline.build with the options as keywords;
generate_sources / make_plan / load_graph / manifest are pipeline steps. Compiling and linking
live in buildtool.toolchain, running in buildtool.runner; their names are re-exported here.
New code calls buildtool.pipeline (and toolchain / runner) directly.
"""

from __future__ import annotations

from pathlib import Path

from .ir import Graph

# Moved to buildtool.toolchain and buildtool.runner; re-exported here for one release.
from .runner import EXIT_MEANING, PLUGIN_SRC, RUN_TIMEOUT, format_report, ram_report, run, symbols  # noqa: F401
from .pipeline import build_dir_name  # noqa: F401  (moved: pipeline)
from .toolchain import (FIRMWARE, KERNELS, ROOT, FirmwareError, c_string, check_fits,  # noqa: F401
                        check_segments, check_tools, compile_flags, include_dirs, kernel_library, kernel_sources,
                        link, link_flags, load_segments, sources, weights_define)


def load_graph(model) -> Graph:
    """A Graph, a .tflite path or a zoo name."""
    from . import pipeline

    return pipeline.read_model(model).graph


def is_model_file(spec: str) -> bool:
    """A model argument names a .tflite file (else it must be a zoo name)."""
    from .pipeline import is_model_file as named_file

    return named_file(spec)


def make_plan(g: Graph, **plan_options):
    """pipeline.plan_memory(g, PlanOptions.from_map(plan_options))."""
    from . import pipeline

    return pipeline.plan_memory(g, pipeline.PlanOptions.from_map(plan_options))


def _write(path: Path, data) -> None:
    from .fsutil import write_if_changed

    write_if_changed(path, data)


def manifest(g: Graph, plan, board: str) -> dict:
    from . import pipeline

    return pipeline.manifest(pipeline.read_model(g), plan, board)


def generate_sources(g: Graph, plan, board: str, out_dir) -> dict:
    """pipeline.generate: plan.json, model.c, model.h, weights.bin and firmware.json into out_dir."""
    from . import pipeline

    return pipeline.generate(pipeline.read_model(g), plan, board, out_dir)


def build(model, board: str, out_dir, kernels: tuple | None = None, stack_bytes: int | None = None,
          plan=None, **plan_options) -> dict:
    """pipeline.build with plan options as keywords (PlanOptions' vocabulary); plan: a ready plan."""
    from . import pipeline

    return pipeline.build(model, board, out_dir, pipeline.PlanOptions.from_map(plan_options), plan, kernels,
                          stack_bytes)


__all__ = ["build", "run", "format_report", "kernel_library", "generate_sources", "kernel_sources", "sources",
           "compile_flags", "link_flags", "FirmwareError", "ram_report", "load_graph", "make_plan", "check_fits",
           "check_segments", "load_segments"]
