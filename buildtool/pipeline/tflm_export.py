"""`buildtool export --format tflm`: the model file itself, with buildtool's arena plan in the
`OfflineMemoryAllocation` metadata TFLite Micro reads and its operators in the planned order (docs/tflm.md).

    data, info = planned_model("vww_96_int8.tflite", PlanOptions())
    write_atomic("planned.tflite", data)

Nothing else changes in the file (model/offline_plan.py). The plan is plan/tflm.py's: only what TFLite Micro's
own kernels run safely. TFLite Micro keeps its scratch buffers and fits them around the plan, so when the
`tflite_micro` package is installed the head it reports is measured for the original and the planned model,
and a plan that would make it grow is not written: the next of PLAN_VARIANTS is tried, and when none keeps the
head at most the original's the export is refused in one line.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import re
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, UsageError
from ..model import offline_plan
from ..model.fold_pad import unfold_pads
from ..model.ir import Graph, Operator
from ..model.reader import parse
from ..model.writer import serialize
from ..options import PlanOptions
from ..plan import align_up
from ..plan.tflm import plan_tflm
from ..steps.models import locate
from .. import zoo

# (order search, in place) tried in turn while TFLite Micro's measured head would grow: a plan that keeps the
# model's order or no in-place leaves other gaps for TFLite Micro's scratch buffers.
PLAN_VARIANTS = ((True, True), (False, True), (True, False), (False, False))
ARENA_FOR_MEASURING = 64 << 20  # the arena the measuring interpreter gets: far above any model's need


@dataclass
class Export:
    name: str
    offsets: list  # per tensor: head offset or -1
    order: list  # the file's operator indices, in the written order
    inplace_ops: list
    arena_bytes: int  # the offline-planned tensors' extent
    head_before: int | None  # TFLite Micro's measured head (None: tflite_micro not installed)
    head_after: int | None
    replaced: dict | None  # the OfflineMemoryAllocation the model carried, when replaced


def source_bytes(spec: str) -> tuple:
    """(name, shown, .tflite bytes) of a model argument; a zoo model as the writer serialises it."""
    src = locate(spec)
    if src.data is not None:
        return src.name, src.shown, src.data
    return src.name, src.shown, serialize(zoo.build(src.zoo))


def planned_model(spec: str, options: PlanOptions | None = None, replace: bool = False,
                  measure: bool = True) -> tuple:
    """(bytes of the planned model, Export) for a model argument. measure: check TFLite Micro's head when
    the tflite_micro package is installed (the plan is written only if the head does not grow)."""
    options = PlanOptions.from_map(options)
    if options.fused:
        raise UsageError("--format tflm writes a layer-by-layer plan (TFLite Micro runs whole operators); "
                         "drop --split / --optimize / --input-streamed")
    name, shown, data = source_bytes(spec)
    g = parse(data, name=name, source=shown)  # the reader checks the file whole first
    n_tensors = offline_plan.tensor_count(data, shown)  # one subgraph, or refused here
    try:
        existing = offline_plan.read(data, shown)
    except ModelError as e:  # a malformed plan: replaced when asked, like any other
        if not replace:
            raise ModelError(f"{e}; pass --replace to write buildtool's plan over it") from None
        existing = {"problem": str(e)}
    if existing is not None and not replace:
        raise ModelError(f"{shown}: already carries an OfflineMemoryAllocation plan ({existing['planned']} of "
                         f"{existing['tensors']} tensors placed); pass --replace to write buildtool's over it")
    outputs = offline_plan.operator_outputs(data, shown)
    head = tflm_head if measure and tflm_available() else None
    before = None
    if head and existing is not None and "problem" in existing:  # TFLite Micro refuses it: its own plan is the bar
        before = head(offline_plan.write(data, list(range(len(outputs))), [offline_plan.ONLINE] * n_tensors,
                                         replace=True, source=shown))
    elif head:
        before = head(data)
    scratch = tflm_scratch(unfold_pads(g)) if head else {}  # the operators' own scratch, planned as room
    variants = PLAN_VARIANTS if head else PLAN_VARIANTS[:1]
    tried = []
    for order_search, inplace in variants:
        order_search, inplace = order_search and options.order_search, inplace and options.inplace
        if (order_search, inplace) in tried:
            continue
        tried.append((order_search, inplace))
        tp = plan_tflm(g, outputs, n_tensors, options.align, options.time_budget, order_search, inplace,
                       scratch)
        out = offline_plan.write(data, tp.order, tp.offsets, replace=True, source=shown)
        after = head(out) if head else None
        if head is None or after <= before:
            return out, Export(name, tp.offsets, tp.order, tp.inplace_ops, tp.arena_bytes, before, after,
                               existing)
    raise ModelError(f"{shown}: every plan buildtool tried raises TFLite Micro's arena head above its own "
                     f"{before:,} B (its scratch buffers do not fit around the planned tensors); keep the model "
                     f"as it is")


def operator_model(g: Graph, op) -> Graph:
    """A model of one operator of g: its tensors renumbered from 0, its non-constant inputs the model's inputs
    (a variable input stays variable), its outputs the model's outputs."""
    used = [i for i in dict.fromkeys(tuple(op.inputs) + tuple(op.outputs)) if i >= 0]
    new = {t: k for k, t in enumerate(used)}
    tensors = [dataclasses.replace(g.tensors[t], index=new[t]) for t in used]
    inputs = [new[i] for i in dict.fromkeys(op.inputs) if i >= 0 and not g.tensors[i].is_const
              and not g.tensors[i].variable]
    one = Operator(0, op.opcode, tuple(new[i] if i >= 0 else i for i in op.inputs),
                   tuple(new[o] for o in op.outputs), dict(op.options))
    return Graph(tensors, [one], inputs, [new[o] for o in op.outputs], name=f"{g.name}_op{op.index}")


def tflm_scratch(g: Graph) -> dict:
    """{operator index: bytes of head TFLite Micro's kernel asks for (scratch buffers)}, measured: each operator
    alone as a model (operator_model), whose head is its tensors (all live at its one step, each aligned to 16
    bytes) plus its scratch buffers. An operator that cannot be measured so is left out (the head check of
    planned_model still guards the plan)."""
    found = {}
    for op in g.operators:
        one = operator_model(g, op)
        tensors = sum(align_up(t.nbytes, 16) for t in one.tensors if not t.is_const and not t.variable)
        try:
            extra = tflm_head(serialize(one)) - tensors
        except (ModelError, ValueError, KeyError):
            continue
        if extra > 0:
            found[op.index] = extra
    return found


def tflm_available() -> bool:
    try:
        import tflite_micro  # noqa: F401  (optional: the test extra installs it; the export runs without it)
    except ImportError:
        return False
    return True


def tflm_head(data: bytes) -> int:
    """TFLite Micro's arena head for a model (bytes of its non-persistent section: the planned tensors and
    the scratch buffers), as its RecordingMicroAllocator reports it ("Arena allocation head N bytes", printed
    by print_allocations() on file descriptor 2 after the interpreter allocated its tensors)."""
    from tflite_micro import runtime  # (optional dependency: only when measuring)

    try:
        ip = runtime.Interpreter.from_bytes(bytes(data), arena_size=ARENA_FOR_MEASURING)
    except RuntimeError as e:
        raise ModelError(f"TFLite Micro cannot load the model ({e})") from None
    with tempfile.TemporaryFile() as f:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            ip.print_allocations()
        finally:
            ctypes.CDLL(None).fflush(None)  # the C++ side prints through C stdio
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode(errors="replace")
    m = re.search(r"Arena allocation head (\d+) bytes", text)
    if not m:
        raise ModelError("TFLite Micro printed no arena head figure")
    return int(m.group(1))


# -- checking a planned file against TFLite Micro (the tests and benchmarks/tflm_plan.py) ----------------------

def sample_inputs(data: bytes, n: int, seed: int) -> list:
    """n sets of inputs of a model file: integers over each type's whole range, floats in [-1, 1); a graph input
    a TRANSPOSE_CONV reads as its output shape gets that shape (random values would be no shape: TensorFlow
    Lite refuses them, TFLite Micro ignores them)."""
    g = parse(data)
    shapes = {op.inputs[0]: g.tensors[op.outputs[0]].shape for op in g.operators if op.opcode == "TRANSPOSE_CONV"}
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(n):
        xs = []
        for i in g.inputs:
            t = g.tensors[i]
            dt = np.dtype(t.dtype)
            if i in shapes:
                xs.append(np.asarray(shapes[i], dt))
            elif dt.kind in "iu":
                info = np.iinfo(dt)
                xs.append(rng.integers(info.min, int(info.max) + 1, size=t.shape, dtype=dt))
            else:
                xs.append(rng.uniform(-1, 1, size=t.shape).astype(dt))
        sets.append(xs)
    return sets


def tflm_outputs(data: bytes, sets: list) -> list:
    """Every output's bytes after each invocation of one TFLite Micro interpreter, in sequence (a stateful
    model carries its state as a user's would)."""
    from tflite_micro import runtime  # (optional dependency: only when checking)

    n = len(parse(data).outputs)
    ip = runtime.Interpreter.from_bytes(bytes(data), arena_size=ARENA_FOR_MEASURING)
    outs = []
    for xs in sets:
        for i, x in enumerate(xs):
            ip.set_input(x, i)
        ip.invoke()
        outs.append([np.array(ip.get_output(k)).tobytes() for k in range(n)])
    return outs
