"""PAD and PADV2 in place (issue 33 item 4): the dying input lies inside the larger output, shifted so
that the kernel's forward copy never overwrites an input byte before reading it
(plan/arena/liveness.pad_shifts). Checked on random pads of every axis, int8 and int16: the planner
takes it, the arena is the output alone (an independent count), the checker refuses a shift one element
too small, and the numpy executor, host and Cortex-M4 firmware give TFLite Micro's bytes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import SHARED_MODELS, tflm_run
from test_firmware import need
from test_ops_extra import merge

from buildtool import pipeline
from buildtool.firmware import runner
from buildtool.model import reader as tflite_reader
from buildtool.model.writer import serialize
from buildtool.plan import align_up
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder, as_int16x8


def chain(seed: int, int16: bool = False, v2: bool = False):
    """x -> RELU -> PAD(V2) -> RELU: the pad's input and output are both inner tensors (RELU runs in place),
    pads on random axes (the channel axis too) and ranks 2 to 4."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"pad_chain_{seed}", seed=seed)
    rank = int(rng.integers(2, 5))
    shape = (1,) + tuple(int(rng.integers(1, 7)) for _ in range(rank - 1))
    x = b.input(shape, scale=0.05, zp=int(rng.integers(-20, 20)))
    pads = [[0, 0]] + [[int(rng.integers(0, 3)), int(rng.integers(0, 3))] for _ in shape[1:]]
    if not any(sum(p) for p in pads):
        pads[-1][1] = 1
    r = b.relu(x)
    p = b.padv2(r, pads, int(rng.integers(-128, 128))) if v2 else b.pad(r, pads)
    g = b.finish([b.relu(p)])
    return as_int16x8(g) if int16 else g


CASES = [(s, s % 2 == 1, s % 3 == 0) for s in range(12)]


@pytest.mark.parametrize("seed,int16,v2", CASES)
def test_pad_runs_in_place_and_the_arena_is_its_output(seed, int16, v2):
    g = chain(seed, int16, v2)
    plan = plan_arena(g)
    pad = next(op for op in g.operators if op.opcode in ("PAD", "PADV2"))
    x, o = pad.inputs[0], pad.outputs[0]
    assert pad.index in plan.inplace_ops
    shift = plan.tensors[x].offset - plan.tensors[o].offset
    assert 0 <= shift and shift + g.tensors[x].nbytes <= g.tensors[o].nbytes
    # one buffer holds the whole chain (RELU in place on either side): the arena is the pad's output
    assert plan.arena_bytes == align_up(g.tensors[o].nbytes, plan.align)
    assert checker.problems(g, plan) == []
    xs = [np.random.default_rng(seed).integers(-128, 128, g.tensors[g.inputs[0]].shape).astype(
        np.int16 if int16 else np.int8)]
    y = run(g, plan, xs)
    want = tflm_run(serialize(g), xs, 1)[0]
    assert np.array_equal(np.asarray(y).reshape(-1), want.reshape(-1))


def least_shift(g, pad) -> int:
    """Independent of the planner and the checker: simulate the forward copy on element indices and find the
    least shift (in elements) at which no input element is overwritten before it is read."""
    ti, to = g.tensors[pad.inputs[0]], g.tensors[pad.outputs[0]]
    pads = g.tensors[pad.inputs[1]].data.reshape(-1, 2)
    n_in, n_out = int(np.prod(ti.shape)), int(np.prod(to.shape))
    src = np.full(n_out, -1)
    src[np.pad(np.ones(ti.shape, bool), [tuple(p) for p in pads]).reshape(-1)] = np.arange(n_in)
    for d in range(n_out - n_in + 1):
        mem = np.full(n_out, -2)
        mem[d:d + n_in] = np.arange(n_in)
        ok = True
        for pos in range(n_out):
            if src[pos] >= 0 and mem[d + src[pos]] != src[pos]:
                ok = False
                break
            mem[pos] = -3
        if ok:
            return d
    raise AssertionError("no shift works")


@pytest.mark.parametrize("seed", range(6))
def test_the_checker_refuses_a_shift_one_element_short(seed):
    g = chain(seed, int16=seed % 2 == 1)
    plan = plan_arena(g)
    pad = next(op for op in g.operators if op.opcode == "PAD")
    x, o = pad.inputs[0], pad.outputs[0]
    item = g.tensors[x].nbytes // int(np.prod(g.tensors[x].shape))
    least = least_shift(g, pad) * item
    assert plan.tensors[x].offset - plan.tensors[o].offset >= least
    at = plan.tensors[o].offset
    for shift, ok in ((least, True), (least - item, False)):
        if shift < 0:
            continue
        moved = dataclasses.replace(plan, tensors={**plan.tensors,
                                                   x: dataclasses.replace(plan.tensors[x], offset=at + shift)})
        found = [p for p in checker.problems(g, moved) if "forward copy" in p]
        assert bool(found) != ok, (shift, least, found)


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_pads_in_place_in_firmware_match_tflm(board, tmp_path):
    need(board)
    g = merge([chain(s, i16, v2) for s, i16, v2 in CASES if not i16], "pads_int8")
    plan = plan_arena(g)
    assert {op.index for op in g.operators if op.opcode in ("PAD", "PADV2")} <= set(plan.inplace_ops)
    pipeline.build(g, board, tmp_path, plan=plan)
    xs = [np.random.default_rng(k).integers(-128, 128, g.tensors[i].shape).astype(np.int8)
          for k, i in enumerate(g.inputs)]
    ys = runner.run(board, tmp_path, xs)[0]
    for y, w in zip(ys, tflm_run(serialize(g), xs, len(g.outputs))):
        assert np.array_equal(y.reshape(-1), w.reshape(-1))


def test_seanet_pad_layer_needs_only_its_output():
    """The SEANet PAD layer as published: arena = the output (1,328 B), not input + output (2,608 B)."""
    path = SHARED_MODELS / "real" / "seanet_pad-pad0.tflite"
    if not path.exists():
        pytest.skip(f"{path} not present (../shared is only on CI and developer machines)")
    g = tflite_reader.load(str(path))
    plan = plan_arena(g)
    assert plan.arena_bytes == align_up(g.tensors[g.outputs[0]].nbytes, plan.align)
