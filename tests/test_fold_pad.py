"""Explicit PADs folded into their convolutions (issue 33 item 4, model/fold_pad.py): a network written as
an NCHW framework's converter writes it (every padded conv a PAD of the zero point + a VALID conv, with
symmetric PyTorch-style pads, also at stride 2) plans without the padded copies, lets fusion blocks run
through them, writes back as the file it was, and runs byte-identical to TFLite Micro on the file as
written: numpy executor, and firmware plain and --optimize ram."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need

from buildtool import pipeline, zoo
from buildtool.firmware import runner
from buildtool.model.fold_pad import fold_pads
from buildtool.model.reader import parse
from buildtool.model.writer import serialize
from buildtool.options import PlanOptions
from buildtool.plan.arena.execute import run
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.fusion.planner import plan_fused
from buildtool.zoo.builder import GraphBuilder
from buildtool.zoo.nchw import explicit_pads


@pytest.fixture(scope="module")
def mbv2():
    """mbv2-w0.35 as an NCHW converter writes it, read back from its .tflite bytes."""
    raw = explicit_pads(zoo.build("mbv2-w0.35"))
    return parse(serialize(raw), name=raw.name)


def inputs_of(g, seed=0):
    return [np.random.default_rng(seed).integers(-128, 128, g.tensors[i].shape).astype(np.int8) for i in g.inputs]


def test_every_pad_folds_and_the_file_comes_back_byte_for_byte(mbv2):
    folded = fold_pads(mbv2)
    n_pad = sum(op.opcode == "PAD" for op in mbv2.operators)
    assert n_pad >= 17 and not any(op.opcode == "PAD" for op in folded.operators)
    assert len(folded.operators) == len(mbv2.operators) - n_pad
    assert serialize(folded) == serialize(mbv2)
    again = fold_pads(parse(serialize(folded), name=mbv2.name))
    assert [(op.opcode, op.inputs, op.outputs, op.options) for op in again.operators] == \
           [(op.opcode, op.inputs, op.outputs, op.options) for op in folded.operators]
    assert fold_pads(folded) is folded


def test_folded_network_plans_smaller_and_fuses(mbv2):
    folded = fold_pads(mbv2)
    raw_plan, plan = plan_arena(mbv2), plan_arena(folded)
    assert plan.arena_bytes < raw_plan.arena_bytes
    raw_fused = plan_fused(mbv2, optimize="ram")
    fused = plan_fused(folded, optimize="ram")
    assert not raw_fused.regions(mbv2)  # a PAD stops every block: nothing to fuse
    assert fused.regions(folded) and fused.arena_bytes < plan.arena_bytes
    # the numpy executor in the folded plan gives TFLite Micro's bytes on the file as written
    xs = inputs_of(mbv2)
    want = tflm_run(serialize(mbv2), xs, 1)[0]
    assert np.array_equal(np.asarray(run(folded, plan, xs)).reshape(-1), want.reshape(-1))


# plain layer-by-layer code on host and cortex-m4; fused code on every kernel family
@pytest.mark.parametrize("board,optimize", [("host", None), ("cortex-m4", None), ("host", "ram"), ("cortex-m4", "ram"),
                                            ("riscv32", "ram"), ("cortex-m55", "ram")])
def test_folded_firmware_matches_tflm_on_the_file_as_written(mbv2, board, optimize, tmp_path):
    need(board)
    options = PlanOptions.from_map({"optimize": optimize} if optimize else {})
    pipeline.build(fold_pads(mbv2), board, tmp_path, options)  # a Graph is built as given: fold it here
    xs = inputs_of(mbv2, 3)
    y = runner.run(board, tmp_path, xs)[0]
    want = tflm_run(serialize(mbv2), xs, 1)[0]
    assert np.array_equal(np.asarray(y).reshape(-1), want.reshape(-1))


def small(kind: str):
    """x -> [RELU] -> PAD -> reader; kind picks a PAD that must not fold."""
    b = GraphBuilder(f"pad_{kind}", seed=5)
    x = b.input((1, 8, 8, 4), scale=0.05, zp=3)
    if kind == "channel":
        p = b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 2]])
        return b.finish([b.conv2d(p, 4, 3, 1, "VALID")])
    if kind == "value":
        p = b.padv2(x, [[0, 0], [1, 1], [1, 1], [0, 0]], 7)
        return b.finish([b.conv2d(p, 4, 3, 1, "VALID")])
    if kind == "add":
        p = b.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
        return b.finish([b.conv2d(p, 4, 3, 1, "VALID"), b.relu(p)])
    if kind == "wide":  # 3 rows of padding on a 3x3: more than SAME ever gives
        p = b.pad(x, [[0, 0], [3, 0], [0, 0], [0, 0]])
        return b.finish([b.depthwise(p, 3, 1, "VALID")])
    p = b.padv2(x, [[0, 0], [1, 1], [2, 0], [0, 0]], 3)  # PADV2 of the zero point, uneven, then SAME on top
    return b.finish([b.depthwise(b.depthwise(p, 3, 2, "SAME"), 3, 1)])


@pytest.mark.parametrize("kind,folds", [("channel", False), ("value", False), ("add", False), ("wide", False),
                                        ("same", True)])
def test_only_pads_of_the_zero_point_read_by_convs_fold(kind, folds):
    g = small(kind)
    f = fold_pads(g)
    assert (f is not g) == folds
    xs = inputs_of(g, 1)
    want = tflm_run(serialize(g), xs, len(g.outputs))
    got = run(f, plan_arena(f), xs)
    got = got if isinstance(got, list) else [got]
    for y, w in zip(got, want):
        assert np.array_equal(np.asarray(y).reshape(-1), w.reshape(-1))


def test_pipeline_reads_a_file_folded(mbv2, tmp_path):
    """read_model of a file (every CLI command, build rule and the daemon) folds; a Graph is taken as given."""
    path = tmp_path / "m.tflite"
    path.write_bytes(serialize(mbv2))
    assert not any(op.opcode == "PAD" for op in pipeline.read_model(str(path)).graph.operators)
    assert pipeline.read_model(mbv2).graph is mbv2
