"""The whole flow, model -> graph -> plan -> code -> image -> run, one step function each.

    model = read_model("mbv2-w0.35")                 # a .tflite path or a zoo name
    check(model)                                      # every operator supported, every shape sound
    plan = plan_memory(model.graph, PlanOptions())   # the ONLY place that picks arena or fused
    paths = generate(model, plan, "cortex-m4", out)  # plan.json, model.c, model.h, weights.bin, firmware.json
    elf = link(model, plan, "cortex-m4", out, paths) # the board's toolchain
    y, profile, ram = run("cortex-m4", out, x)       # natively or in the board's emulator

`build` is these steps in order. The CLI, the planner daemon (service.py), the SCons tool
and `firmware.build` call these functions and nothing below them. Each step is a pure
function of its inputs: the same model, options and board give byte-identical files.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from ..errors import UsageError
from ..options import PlanOptions

__all__ = ["Model", "PlanOptions", "locate", "read_model", "check", "plan_memory", "plan_json", "load_plan",
           "generate", "code", "skeleton", "from_skeleton", "zoo_model", "flash_image", "link", "run", "build", "is_model_file",
           "build_multi", "run_multi"]


# The Python sources each step's output is computed by (a change reruns the step; its output is
# compared by content, so an unchanged result stops the rebuild there). Build rules declare them.
# what reading a fused plan back (plan_from_json) imports: the code step's, and the flash step's when
# given a fused plan (its weights' placement follows the plan's tile counts)
_FUSED_PLAN_LOADER = ("codegen", "codegen/kernel_variants.py", "refops", "plan/fusion/__init__.py", "plan/fusion/costs.py", "plan/fusion/dag.py", "plan/fusion/pipeline.py",
                      "plan/fusion/lifetimes.py", "plan/fusion/receptive.py", "plan/fusion/schedule.py", "plan/fusion/execute.py",
                      "plan/arena/__init__.py", "plan/arena/checker.py", "plan/arena/exact.py", "plan/arena/packers.py",
                      "plan/arena/regional.py")
STEP_SOURCES = {  # a superset of what the step imports (tests/test_gen.py checks it); "__init__.py": the version
    "model": ("__init__.py", "zoo/__init__.py", "zoo/builder.py", "model/writer.py", "model/tflite_options.py", "model/ir.py", "refops",
              "pipeline/__init__.py", "options.py", "model/opdefs.py", "model/ops.py", "model/ops_extra.py", "model/stateful.py"),
    "skeleton": ("__init__.py", "model/reader.py", "model/tflite_options.py", "model/ir.py", "model/ops.py", "model/ops_extra.py",
                 "model/stateful.py", "model/opdefs.py", "plan/flash.py", "codegen", "codegen/kernel_variants.py", "refops", "pipeline/__init__.py", "options.py",
                 "plan/__init__.py"),
    "plan": ("__init__.py", "plan/arena", "plan/fusion", "plan/__init__.py", "options.py", "pipeline/__init__.py", "plan/canonical.py", "sources.py",
             "serve/cache.py", "serve/service.py", "serve/daemon", "model/ops.py", "model/ops_extra.py", "model/stateful.py", "model/opdefs.py", "model/ir.py", "codegen",
             "codegen/kernel_variants.py", "refops",
             "plan/flash.py", "model/reader.py", "model/tflite_options.py"),
    "code": _FUSED_PLAN_LOADER + ("codegen/templates/model.c.in", "codegen/templates/model.h.in", "codegen/templates/variants.c.in",
                                  "codegen/templates/ext_check.c.in", "codegen/templates/ext_decl.h.in", "__init__.py", "plan/flash.py", "pipeline/__init__.py", "plan/__init__.py", "options.py", "model/ops.py",
                                  "model/ops_extra.py", "model/stateful.py", "model/opdefs.py", "model/ir.py", "targets", "boards",
                                  "firmware/toolchain.py", "units.py", "plan/regions.py", "model/reader.py", "model/tflite_options.py",
                                  "firmware/op_cost.py", "firmware/cycles.py"),
    "flash": _FUSED_PLAN_LOADER + ("__init__.py", "plan/flash.py", "plan/regions.py", "model/reader.py", "model/tflite_options.py",
                                   "model/ir.py", "pipeline/__init__.py", "options.py", "plan/__init__.py", "model/opdefs.py", "model/ops.py",
                                   "model/ops_extra.py", "model/stateful.py", "targets", "boards",
                                   "firmware/toolchain.py", "units.py"),  # --split-header
    "board": ("__init__.py", "targets", "boards", "codegen/__init__.py", "codegen/c_text.py", "firmware/toolchain.py", "units.py", "pipeline/__init__.py", "options.py", "model/ir.py"),
}
# the command-line shell around the steps: what it imports does not shape a step's output
SHELL_SOURCES = ("cli/__init__.py", "cli/gen.py", "integrations/watch.py", "cli/multi.py", "errors.py", "fsutil.py", "sources.py", "progress.py",
                 "serve/daemon/__init__.py", "cli/daemon.py", "serve/daemon/client.py", "serve/daemon/protocol.py", "serve/daemon/thin.py",
                 "netsplit/__init__.py", "netsplit/cli.py")
PACKAGE = Path(__file__).resolve().parents[1]


def step_sources(step: str) -> list:
    """The Python files a step's output depends on (absolute paths, sorted)."""
    from ..sources import files

    return [str(Path(f).resolve()) for f in files(STEP_SOURCES[step])]


# -- read -----------------------------------------------------------------------------------
def is_model_file(spec: str, cwd: str = "") -> bool:
    """A model argument names a .tflite file (else it must be a zoo name); cwd: the directory a relative
    path is taken from (the daemon, for a client's command line), else this process's."""
    return os.path.exists(os.path.join(cwd, spec)) or spec.endswith(".tflite") or os.sep in spec


def model_name(spec: str) -> str:
    """How outputs name a model: a file's name without its extension, a zoo name whole (mbv2-w0.35)."""
    return os.path.splitext(os.path.basename(spec))[0] if is_model_file(spec) else spec


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def build_dir_name(name: str) -> str:
    """The build folder named after a model: a name of letters, digits and . _ - (e.g. mbv2-w0.35,
    tiny_cnn_32) is kept as it is; any other is mapped onto those characters plus a short hash
    of the original, so it reaches a shell or a build tool only as a plain word and two
    different names never share a folder."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:64] or "model"
    import hashlib  # (here and below: a warm daemon hit imports neither hashlib nor json)

    return f"{plain}-{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


@dataclasses.dataclass(frozen=True)
class Source:
    """What a model argument names, read but not parsed (the daemon's warm path stops here)."""

    name: str  # a zoo name whole (mbv2-w0.35); a file's name without .tflite
    shown: str  # how messages name it: the path as the user typed it, or the zoo name
    data: bytes | None = None  # the file's bytes (None for a zoo name)
    zoo: str | None = None

    def digest_key(self) -> tuple:
        """(cache kind, key parts) that identify the model without parsing it."""
        if self.zoo is not None:
            return "zoo", self.zoo
        import hashlib

        return "model", hashlib.sha256(self.data).hexdigest()


def locate(spec: str, shown: str | None = None) -> Source:
    """Resolve a path or zoo name (the one resolver): a file is read (bounded, regular files only);
    a name must be a zoo model. Imports nothing heavy."""
    if is_model_file(spec):
        from ..model.reader import read_model_file

        shown = shown or spec
        return Source(model_name(shown), shown, read_model_file(spec, shown))
    from .. import zoo

    if spec not in zoo.names(large=True):
        raise UsageError(f"'{spec}' is neither a model file nor a zoo name (zoo: {', '.join(zoo.names(True))})")
    return Source(spec, spec, zoo=spec)


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    shown: str
    graph: object  # ir.Graph


def parse(src: Source):
    """The Graph of a located model."""
    if src.zoo is not None:
        from .. import zoo

        return zoo.build(src.zoo)
    from ..model import reader as tflite_reader

    return tflite_reader.parse(src.data, name=src.name, source=src.shown)


def read_model(spec, shown: str | None = None) -> Model:
    """A .tflite path, a zoo name or a ready Graph -> Model (named as the user named it)."""
    from ..model.ir import Graph

    if isinstance(spec, Model):
        return spec
    if isinstance(spec, Graph):
        return Model(spec.name, spec.name, spec)
    src = locate(str(spec), shown)
    return Model(src.name, src.shown, parse(src))


def zoo_model(name: str) -> bytes:
    """A zoo architecture as .tflite bytes."""
    from .. import zoo
    from ..model.writer import serialize

    locate(name)  # one line listing the zoo when it is not a zoo name
    return serialize(zoo.build(name))


def skeleton(model: Model) -> dict:
    """The model minus its weight values (what planning and code generation depend on): a weight
    edit leaves it byte-identical, so nothing downstream of it reruns."""
    from ..codegen.skeleton import to_json

    return to_json(model.graph)


def from_skeleton(d: dict, name: str | None = None) -> Model:
    """The Model a skeleton describes (weights absent: enough to plan and generate code)."""
    from ..codegen.skeleton import from_json

    g = from_json(d)
    if name is not None:
        g = dataclasses.replace(g, name=name)
    return Model(g.name, g.name, g)


def check(model: Model) -> None:
    """Every operator supported and sound (one ModelError naming the first problem)."""
    from ..model.ops import check_graph

    check_graph(model.graph)


# -- plan -----------------------------------------------------------------------------------
def plan_memory(graph, options: PlanOptions | None = None, memo=None):
    """The plan of graph under options: the layer-by-layer arena plan, or with optimize / splits /
    input_streamed the operator-splitting / fusion plan. The only place that chooses."""
    options = PlanOptions.from_map(options)
    if options.fused:
        from ..plan.fusion import plan_fused

        return plan_fused(graph, memo=memo, **options.fused_kwargs())
    from ..plan.arena import plan_arena

    return plan_arena(graph, **options.arena_kwargs())


def plan_json(model, options: PlanOptions | None = None, no_daemon: bool = False) -> dict:
    """The plan's JSON through the planner daemon and its cache (started on demand), or in this
    process with no_daemon / BUILDTOOL_NO_DAEMON=1 / no daemon available: byte-identical either way.
    model: a path, a zoo name, .tflite bytes or a Graph. Returns {"plan", "cache", "plan_ms", "via_daemon"}."""
    from ..serve.daemon.client import daemon_wanted, plan

    options = PlanOptions.from_map(options)
    use = daemon_wanted(no_daemon)
    r = plan(model, options.to_map(), no_daemon=not use)
    r["via_daemon"] = use
    return r


def load_plan(d: dict, graph, source: str | None = None):
    """A plan object from its JSON (either kind). source: the file it was read from, named in the one
    line a malformed plan gets (a hand-edited file, another tool's JSON, a plan of another model)."""
    from ..plan.kinds import plan_from_json

    try:
        return plan_from_json(d, graph)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise UsageError(f"{source or 'the plan'} is not a buildtool plan for this model ({type(e).__name__}); "
                         f"make it again with buildtool gen plan") from None


# -- generate -------------------------------------------------------------------------------
def _write(path: Path, data) -> None:
    """Atomic write that leaves an unchanged file untouched (keeps mtimes for make-like tools)."""
    from ..fsutil import write_if_changed

    write_if_changed(path, data)


def manifest(model: Model, plan, board: str) -> dict:
    """What run() needs to know about a build: I/O tensors, operator order, arena size."""
    g = model.graph

    def io(idx):
        return [{"name": g.tensors[i].name, "shape": [int(d) for d in g.tensors[i].shape],
                 "dtype": g.tensors[i].dtype} for i in idx]

    from ..firmware.op_cost import region_macs

    order, opcodes = plan.manifest_order(g)
    from ..plan import first_bytes

    return {"model": g.name, "board": board, "arena_bytes": first_bytes(plan), "inputs": io(g.inputs),
            "outputs": io(g.outputs), "order": order, "opcodes": opcodes, "macs": region_macs(g, plan)}


def flash_image(model: Model, board: str, plan=None, split: bool = True) -> bytes:
    """weights.bin: every constant tensor, aligned for the board, with its header; on a board with
    memory regions, those placed in an external region last (regions.py; plan: its traffic counts;
    split=False: never, as a multi-model firmware's code reads every image whole from flash)."""
    from ..plan import flash
    from .. import targets
    from ..plan.regions import image_groups

    t = targets.get(board)
    placed = image_groups(model.graph, plan, t) if split else None
    return flash.build_image(model.graph, board, t.weights_align, placed[0] if placed else None)


def code(model: Model, plan, board: str) -> dict:
    """The generated text files: plan.json, model.c, model.h, firmware.json (weights apart: flash_image)."""
    import json

    from .. import targets
    from ..codegen.emit import emit_c
    from ..plan.regions import place_arena

    plan = place_arena(model.graph, plan, targets.get(board))  # arena/regional.py; the plan itself when it fits RAM
    model_c, model_h = emit_c(plan, model.graph, board, targets.get(board).weights_align)
    return {"plan.json": json.dumps(plan.to_json(model.graph), indent=1) + "\n", "model.c": model_c,
            "model.h": model_h, "firmware.json": json.dumps(manifest(model, plan, board), indent=1) + "\n"}


def generate(model: Model, plan, board: str, out_dir) -> dict:
    """Write plan.json, model.c, model.h, weights.bin and firmware.json into out_dir; return their paths."""
    from ..fsutil import make_dirs

    model = read_model(model)
    out = Path(out_dir)
    make_dirs(out)
    files = code(model, plan, board)
    paths = {"plan": out / "plan.json", "model_c": out / "model.c", "model_h": out / "model.h",
             "weights": out / "weights.bin", "manifest": out / "firmware.json"}
    for key, name in (("plan", "plan.json"), ("model_c", "model.c"), ("model_h", "model.h")):
        _write(paths[key], files[name])
    _write(paths["weights"], flash_image(model, board, plan))
    _write(paths["manifest"], files["firmware.json"])
    return paths


# -- build and run --------------------------------------------------------------------------
def board(name: str, kernels: tuple | None = None, stack_bytes: int | None = None):
    """The board's Target, with another kernel search order or stack size when asked."""
    from .. import targets

    t = targets.get(name)
    if kernels is not None:
        t = t.with_kernels(tuple(kernels))
    if stack_bytes is not None:
        if stack_bytes <= 0 or stack_bytes % 16:
            raise UsageError(f"stack size {stack_bytes} must be a positive multiple of 16 bytes")
        t = dataclasses.replace(t, stack_bytes=stack_bytes)
    return t


def link(model: Model, plan, target, out_dir, paths: dict) -> dict:
    """Compile the generated sources with the board's toolchain and link firmware.elf (atomically);
    paths plus "elf" (and "ld")."""
    from ..firmware.toolchain import link as link_firmware

    return link_firmware(target, Path(out_dir), paths, model.graph, plan)


def run(board_name: str, out_dir, x, **kw) -> tuple:
    """Run a built firmware on input(s) x: (outputs, per-op profile, RAM report)."""
    from ..firmware.runner import run as run_firmware

    return run_firmware(board_name, out_dir, x, **kw)


def build(spec, board_name: str, out_dir, options: PlanOptions | None = None, plan=None,
          kernels: tuple | None = None, stack_bytes: int | None = None, fit_hint: str = "--optimize ram") -> dict:
    """The whole flow: read, check, plan, check it fits, generate, link. Returns the paths written."""
    from ..firmware.toolchain import check_fits, check_tools

    options = PlanOptions.from_map(options)
    t = board(board_name, kernels, stack_bytes)
    check_tools(t)
    model = read_model(spec)
    check(model)
    plan = plan if plan is not None else plan_memory(model.graph, options)
    check_fits(model.graph, plan, t, fit_hint, options)
    out = Path(out_dir).resolve()
    elf = out / "firmware.elf"
    if elf.exists():
        elf.unlink()  # a refused or failed build leaves no firmware of other sources behind
    return link(model, plan, t, out, generate(model, plan, board_name, out))


def build_multi(specs: list, board_name: str, out_dir, options: PlanOptions | None = None, plans=None,
                kernels: tuple | None = None, stack_bytes: int | None = None) -> tuple:
    """Several models (never running at once) in one firmware and one shared arena: each one's
    state kept apart, the rest overlapping (joint.py). Returns (paths written, the joint plan)."""
    from .multi import build as build_firmware

    return build_firmware(specs, board_name, out_dir, options, plans, kernels, stack_bytes)


def run_multi(board_name: str, out_dir, xs: list, **kw) -> tuple:
    """Run a multi-model firmware: xs the inputs of each model; each model runs once, then the first
    again. Returns ([(model index, outputs)] in run order, RAM report)."""
    from .multi import run as run_firmware

    return run_firmware(board_name, out_dir, xs, **kw)
