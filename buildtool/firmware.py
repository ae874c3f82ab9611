"""Build and run firmware images from Python (used by `buildtool run --board`, tests and benchmarks).

build():    model -> plan.json, model.c, model.h, weights.bin, firmware.json, firmware.elf in out_dir.
run():      firmware.elf + an input array -> (output, per-operator profile, RAM report).

The same steps back the SCons tool (site_scons/site_tools/btfirmware): generate_sources()
writes the generated files. Compiling and linking live in buildtool.toolchain, running in
buildtool.runner; their names are re-exported here for one release.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import replace
from pathlib import Path

from . import flash, targets
from .errors import UsageError
from .fsutil import write_atomic, write_error
from .ir import Graph
from .toolchain import FirmwareError, _check_tools, check_fits, link

# Moved to buildtool.toolchain and buildtool.runner; re-exported here for one release.
from .runner import EXIT_MEANING, PLUGIN_SRC, RUN_TIMEOUT, format_report, ram_report, run, symbols  # noqa: F401, E402
from .toolchain import (FIRMWARE, KERNELS, ROOT, c_string, check_segments, compile_flags,  # noqa: F401, E402
                        include_dirs, kernel_library, kernel_sources, link_flags, load_segments, sources,
                        weights_define)


# -- model and plan -------------------------------------------------------------------
def load_graph(model) -> Graph:
    """A Graph, a .tflite path or a zoo name."""
    if isinstance(model, Graph):
        return model
    from . import tflite_reader

    spec = str(model)
    if is_model_file(spec):
        return tflite_reader.load(spec)
    from . import zoo

    check_zoo_name(spec)
    return zoo.build(spec)


def is_model_file(spec: str) -> bool:
    """A model argument names a .tflite file (else it must be a zoo name)."""
    return os.path.exists(spec) or spec.endswith(".tflite") or os.sep in spec


def check_zoo_name(spec: str) -> None:
    from . import zoo

    if spec not in zoo.names():
        raise UsageError(f"'{spec}' is neither a model file nor a zoo name (zoo: {', '.join(zoo.names())})")


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def build_dir_name(name: str) -> str:
    """The build folder named after a model: a name of letters, digits and . _ - (e.g. mbv2-w0.35,
    tiny_cnn_32) is kept as it is; any other is mapped onto those characters plus a short hash
    of the original, so it reaches a shell or a build tool only as a plain word and two
    different names never share a folder."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:64] or "model"
    return f"{plain}-{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


FUSION_OPTIONS = ("optimize", "max_mac_overhead", "ram_limit", "splits", "input_streamed", "band_input")
ARENA_ONLY_OPTIONS = ("order_search", "inplace")  # the layer-by-layer planner's; a fused plan has its own order


def _fusion_requested(plan_options: dict) -> bool:
    return any(plan_options.get(k) not in (None, False) for k in FUSION_OPTIONS)


def make_plan(g: Graph, **plan_options):
    """An ArenaPlan (buildtool.arena.plan_arena), or a FusedPlan when any fusion option is given
    (optimize, max_mac_overhead, ram_limit, splits, input_streamed, band_input: plan_fused's;
    align and time_budget go to either planner)."""
    if _fusion_requested(plan_options):
        from .fusion import plan_fused

        return plan_fused(g, **{k: v for k, v in plan_options.items() if k not in ARENA_ONLY_OPTIONS})
    plan_options = {k: v for k, v in plan_options.items() if k not in FUSION_OPTIONS}
    from .arena import plan_arena

    return plan_arena(g, **plan_options)


def _is_fused(plan) -> bool:
    from .fusion import FusedPlan

    return isinstance(plan, FusedPlan)


def _write(path: Path, data) -> None:
    """Atomic write that leaves an unchanged file untouched (keeps mtimes for make-like tools)."""
    data = data.encode() if isinstance(data, str) else data
    try:
        if path.is_file() and path.read_bytes() == data:
            return
    except OSError:
        pass  # unreadable: write it
    write_atomic(path, data)


def manifest(g: Graph, plan, board: str) -> dict:
    """What run() needs to know about a build: I/O tensors, operator order, arena size."""
    def io(idx):
        return [{"name": g.tensors[i].name, "shape": [int(d) for d in g.tensors[i].shape],
                 "dtype": g.tensors[i].dtype} for i in idx]

    if _is_fused(plan):
        from .codegen.fused_c import manifest_order

        order, opcodes = manifest_order(g, plan)
    else:
        order, opcodes = list(plan.order), [g.operators[i].opcode for i in plan.order]
    return {"model": g.name, "board": board, "arena_bytes": plan.arena_bytes, "inputs": io(g.inputs),
            "outputs": io(g.outputs), "order": order, "opcodes": opcodes}


def generate_sources(g: Graph, plan, board: str, out_dir) -> dict:
    """Write plan.json, model.c, model.h, weights.bin and firmware.json into out_dir; return their paths."""
    from .codegen import generate

    t = targets.get(board)
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(out, e, "create the build directory") from None
    if _is_fused(plan):
        from .codegen.fused_c import generate as generate_fused

        model_c, model_h = generate_fused(g, plan, board, t.weights_align)
        plan_json = plan.to_json(g)
    else:
        model_c, model_h = generate(g, plan, board, t.weights_align)
        plan_json = plan.to_json()
    paths = {"plan": out / "plan.json", "model_c": out / "model.c", "model_h": out / "model.h",
             "weights": out / "weights.bin", "manifest": out / "firmware.json"}
    _write(paths["plan"], json.dumps(plan_json, indent=1) + "\n")
    _write(paths["model_c"], model_c)
    _write(paths["model_h"], model_h)
    _write(paths["weights"], flash.build_image(g, board, t.weights_align))
    _write(paths["manifest"], json.dumps(manifest(g, plan, board), indent=1) + "\n")
    return paths


def build(model, board: str, out_dir, kernels: tuple | None = None, stack_bytes: int | None = None,
          plan=None, **plan_options) -> dict:
    """Generate and compile the firmware for `model` on `board` into out_dir; return the paths.

    kernels overrides the board's kernel search order, e.g. ("reference",); stack_bytes the
    board's reserved stack. plan_options go to buildtool.arena.plan_arena (align,
    time_budget, order_search, inplace), or with any fusion option (optimize, splits,
    input_streamed, ...) to buildtool.fusion.plan_fused; or pass a ready ArenaPlan or
    FusedPlan as plan (fused blocks then run as generated tile loops, see codegen/fused_c.py).
    """
    t = targets.get(board)
    if kernels is not None:
        t = t.with_kernels(tuple(kernels))
    if stack_bytes is not None:
        if stack_bytes <= 0 or stack_bytes % 16:
            raise UsageError(f"stack size {stack_bytes} must be a positive multiple of 16 bytes")
        t = replace(t, stack_bytes=stack_bytes)
    _check_tools(t)
    g = load_graph(model)
    from .ops import check_graph

    check_graph(g)
    if plan is None:
        plan = make_plan(g, **plan_options)
    check_fits(g, plan, t, **plan_options)
    out = Path(out_dir).resolve()
    elf = out / "firmware.elf"
    if elf.exists():
        elf.unlink()  # a refused or failed build leaves no firmware of other sources behind
    paths = generate_sources(g, plan, board, out)
    return link(t, out, paths, g, plan)


__all__ = ["build", "run", "format_report", "kernel_library", "generate_sources", "kernel_sources", "sources",
           "compile_flags", "link_flags", "FirmwareError", "ram_report", "load_graph", "make_plan", "check_fits",
           "check_segments", "load_segments"]
