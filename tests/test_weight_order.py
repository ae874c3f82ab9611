"""Weights the flash image holds reordered for a board's kernels (buildtool/plan/weight_order.py): the
cortex-m set's interleaved fully connected order ("fc-il", kernels/cortex-m/fully_connected.c) is the
layout the kernel and kernel_test.c's fc_interleave read, only cortex-m boards take it, and a firmware
with it gives the bytes the host (TFLite Micro's arithmetic) gives, with the cortex-m kernels, with the
reference set linked instead (model.c's fallback puts each row back in order) and in a fused plan whose
dense tail reads a plain copy."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from conftest import model_calls

from buildtool import pipeline, zoo
from buildtool.plan import weight_order
from buildtool.zoo.builder import GraphBuilder


def _fc_calls_of(src: str) -> list:
    """The interleaved FC kernel each dense layer of model.c calls, in order (conftest.model_calls)."""
    return [f for f, _ in model_calls(src, r"bt_fully_connected_s8_il_\w+")]


def _by_the_letter(w: np.ndarray) -> bytes:
    """The fc-il layout as fully_connected.c's comment states it, one byte at a time."""
    m, n = w.shape
    m4, n4 = m & ~3, n & ~3

    def u(v):
        return (int(v) + 128) & 0xFF

    out = []
    for g in range(0, m4, 4):
        r = w[g:g + 4].astype(int)
        for k in range(0, n4, 4):
            for a, b in ((0, 1), (2, 3)):
                for s in (0, 1):
                    out += [u(r[a, k + s]), r[b, k + s] & 0xFF, u(r[a, k + s + 2]), r[b, k + s + 2] & 0xFF]
        for q in range(4):
            out += [int(v) & 0xFF for v in r[q, n4:]]
    out += [int(v) & 0xFF for v in w[m4:].reshape(-1)]
    return bytes(out)


@pytest.mark.parametrize("m,n", [(4, 4), (5, 7), (13, 70), (8, 640), (3, 9), (128, 8), (6, 3)])
def test_interleave_is_the_stated_layout(m, n):
    w = np.random.default_rng(m * 1000 + n).integers(-128, 128, size=(m, n)).astype(np.int8)
    got = weight_order.fc_interleave(w)
    assert got.dtype == np.int8 and got.size == w.size
    assert got.tobytes() == _by_the_letter(w)


def _dense_model():
    """Two batch rows through dense layers of 37 -> 10 (RELU) -> 6 -> 3 inputs/outputs: n % 4 and n_out % 4
    tails, per-channel weights, and a last layer of 3 outputs (too few: it keeps the model's order)."""
    b = GraphBuilder("dense_tails", seed=3)
    x = b.input((2, 37))
    h = b.fully_connected(x, 10, activation="RELU")
    h = b.fully_connected(h, 6)
    return b.finish([b.fully_connected(h, 3)])


def test_orders_only_on_cortex_m_boards():
    g = _dense_model()
    fc = [op for op in g.operators if op.opcode == "FULLY_CONNECTED"]
    want = {fc[0].inputs[1]: weight_order.FC_IL, fc[1].inputs[1]: weight_order.FC_IL}
    for board in ("cortex-m4", "cortex-m7", "cortex-m33", "nucleo-l4r5zi"):
        assert weight_order.orders(g, board) == want
    for board in ("host", "riscv32", "cortex-m55", "cortex-m0plus", "no-such-board"):
        assert weight_order.orders(g, board) == {}
    assert weight_order.orders(zoo.build("tiny"), "cortex-m4")  # the zoo's dense layer too


needs_arm = pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                               reason="arm-none-eabi-gcc / qemu-system-arm not installed")


@needs_arm
def test_interleaved_firmware_matches_the_host(tmp_path):
    from buildtool.firmware import runner

    g = _dense_model()
    x = np.random.default_rng(5).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
    pipeline.build(g, "host", tmp_path / "h")
    want = np.asarray(runner.run("host", tmp_path / "h", x)[0]).tobytes()
    pipeline.build(g, "cortex-m4", tmp_path / "m")
    src = (tmp_path / "m" / "model.c").read_text()
    assert len(_fc_calls_of(src)) == 2
    assert "  bt_fully_connected_s8_widened" in src
    assert np.asarray(runner.run("cortex-m4", tmp_path / "m", x)[0]).tobytes() == want
    pipeline.build(g, "cortex-m4", tmp_path / "r", kernels=("reference",))
    assert np.asarray(runner.run("cortex-m4", tmp_path / "r", x)[0]).tobytes() == want


@needs_arm
def test_fused_dense_tail_reads_a_plain_copy(tmp_path):
    """A fused block ending in the dense layer (fx_dense_*, which reads weight rows) gets the weights in
    their own order in model.c while the image holds them interleaved; the firmware gives the host's bytes."""
    from buildtool.firmware import runner
    from buildtool.plan.fusion.geometry import is_dense
    from buildtool.plan.fusion.planner import plan_fused

    b = GraphBuilder("dense-head-1024", seed=3)
    y = b.conv2d(b.input((1, 16, 16, 4)), 16, k=3, stride=2)
    y = b.conv2d(b.depthwise(y, k=3), 16, k=1)
    g = b.finish([b.fully_connected(b.reshape(y, (1, 8 * 8 * 16)), 10)])
    plan = plan_fused(g, time_budget=0.3, optimize="ram")
    assert is_dense(g, plan.schedule.items[-1].geo) and weight_order.orders(g, "cortex-m4")
    x = np.random.default_rng(7).integers(-128, 128, size=(1, 16, 16, 4), dtype=np.int8)
    pipeline.build(g, "host", tmp_path / "h")
    want = np.asarray(runner.run("host", tmp_path / "h", x)[0]).tobytes()
    pipeline.build(g, "cortex-m4", tmp_path / "m", plan=plan)
    src = (tmp_path / "m" / "model.c").read_text()
    assert "static const int8_t op4_wplain[10240]" in src and "fx_dense_acc(acc" in src
    assert np.asarray(runner.run("cortex-m4", tmp_path / "m", x)[0]).tobytes() == want



def _part_with_and_without_define(g, tmp_path, monkeypatch) -> dict:
    """g built for nucleo-l4r5zi with its BT_ICACHE_BYTES (True) and without (False), each run byte-identical
    to TFLite Micro, every dense layer on the interleaved kernels: {True/False: modelled cycles per operator}."""
    import dataclasses

    from conftest import fixed_input, tflm_run

    from buildtool import targets
    from buildtool.firmware import runner
    from buildtool.model.writer import serialize

    x = fixed_input(g.tensors[g.inputs[0]].shape)
    want = tflm_run(serialize(g), [x])[0]
    part = targets.get("nucleo-l4r5zi")
    assert part.defines == ("BT_ICACHE_BYTES=1024",)
    cycles = {}
    for define in (True, False):
        if not define:   # the same part without the define (targets' cache holds every board)
            monkeypatch.setitem(targets._CACHE, part.name, dataclasses.replace(part, defines=()))
        out = tmp_path / str(define)
        pipeline.build(g, part.name, out)
        n_fc = sum(op.opcode == "FULLY_CONNECTED" for op in g.operators)
        assert len(_fc_calls_of((out / "model.c").read_text())) == n_fc
        y, prof, _ = runner.run(part.name, out, x, timeout=600)
        assert np.array_equal(y, want), define
        cycles[define] = [o["modelled_cycles"] for o in prof["ops"]]
    return cycles


@needs_arm
@pytest.mark.slow
def test_interleaved_loop_on_the_memory_model_part(tmp_path, monkeypatch):
    """nucleo-l4r5zi's interleaved kernels (fully_connected.c under its BT_ICACHE_BYTES: the per-tensor variants'
    single-load steps) give TFLite Micro's bytes: per-channel layers of 71 inputs (two passes of 32, one quad in
    the tail loop, 3 values after), 128 and 10 (the tail loop, 2 after); and ad01 (ten per-tensor layers of 640,
    128 and 8 inputs) in fewer modelled cycles than the same part built without the define (LDRD + LDM, the
    other boards' steps)."""
    from conftest import SHARED

    from buildtool.model import reader as tflite_reader

    b = GraphBuilder("dense_part", seed=4)
    h = b.fully_connected(b.input((1, 71)), 128, activation="RELU")
    h = b.fully_connected(h, 10)
    _part_with_and_without_define(b.finish([b.fully_connected(h, 12, activation="RELU")]), tmp_path / "pc",
                                  monkeypatch)
    ad01 = SHARED / "models" / "mlperf-tiny" / "ad01_int8.tflite"
    if not ad01.is_file():
        pytest.skip(f"no {ad01}")
    monkeypatch.undo()
    cycles = _part_with_and_without_define(tflite_reader.parse(ad01.read_bytes()), tmp_path / "ad01", monkeypatch)
    assert sum(cycles[True]) < sum(cycles[False]), cycles


@needs_arm
@pytest.mark.parametrize("board", ["cortex-m4", "nucleo-l4r5zi"])
def test_small_dense_layers_take_the_compact_variant(tmp_path, board):
    """Dense layers of at most 64 inputs (a multiple of 4) and 16 outputs run bt_fully_connected_s8_il_small
    (kernel_variants.py's first "fully_connected_il" row; the rows after the groups of four, one requantising
    loop): 64 -> 12 RELU (three groups of 16 quads), 12 -> 4 without a bias (one group, 3 quads: the widening and
    the two-quad loops entered at their second half), 4 -> 6 (one group, two rows after it), 4 -> 5 and 4 -> 7 (one
    and three rows after the group: the last row run as a pair's both rows), and 128 -> 8 keeps its variant;
    TFLite Micro's bytes, on the plain core and on the part with its BT_ICACHE_BYTES single loads."""
    from conftest import fixed_input, tflm_run

    from buildtool.firmware import runner
    from buildtool.model.writer import serialize

    b = GraphBuilder("dense_small", seed=9)
    h = b.fully_connected(b.input((1, 128)), 8)
    h = b.fully_connected(b.concat([h] * 8, axis=1), 12, activation="RELU")   # 64 inputs
    h = b.fully_connected(h, 4, bias=False)
    g = b.finish([b.fully_connected(h, 6), b.fully_connected(h, 5), b.fully_connected(h, 7)])
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    pipeline.build(g, board, tmp_path)
    calls = _fc_calls_of((tmp_path / "model.c").read_text())
    assert calls[0] != "bt_fully_connected_s8_il_small" and calls[1:] == ["bt_fully_connected_s8_il_small"] * 5
    got, want = runner.run(board, tmp_path, x)[0], tflm_run(serialize(g), [x], 3)
    assert len(got) == len(want) == 3 and all(np.array_equal(a, b) for a, b in zip(got, want))
