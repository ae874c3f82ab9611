"""Layers whose own instance would be the same code share one function (issue 50: kernel_variants.instance_identity,
Emitter.instance): model.c defines one per identity, the layers of another shape get their own, the code budget
counts a shared instance once, and the firmware's outputs stay the bytes TFLite Micro gives."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import fixed_input, shared_model, tflm_run

from buildtool import pipeline, targets
from buildtool.codegen import kernel_variants
from buildtool.firmware import runner
from buildtool.options import PlanOptions

DEFINED = re.compile(r"static __attribute__\(\(noinline\)\) void (op\d+_conv)\(const bt_conv_params \*q")
CALLED = re.compile(r"\n  (op\d+_conv)\(&op(\d+)_p, ")


def _code(name: str, board: str = "cortex-m4", preset: str = "speed") -> tuple:
    m = pipeline.read_model(str(shared_model(name)))
    files = pipeline.code(m, pipeline.plan_memory(m.graph, PlanOptions()), board, PlanOptions(optimize_code=preset))
    return m.graph, files["model.c"], json.loads(files["firmware.json"])["code_plan"]


def _geometry(g, op) -> tuple:
    """An independent account of what a conv layer's instance folds: its tensors' shapes, window and quantisation
    zero points (the graph's, not the emitter's fields)."""
    x, w, y = (g.tensors[i] for i in op.inputs[:2] + op.outputs[:1])
    o = op.options
    return (tuple(x.shape), tuple(w.shape), tuple(y.shape), o.get("stride_h"), o.get("stride_w"), o.get("padding"),
            o.get("dilation_h", 1), o.get("dilation_w", 1))


def _calls(src: str) -> dict:
    """{op index: the instance function model.c calls for it}."""
    return {int(i): fn for fn, i in CALLED.findall(src)}


@pytest.mark.parametrize("preset", ["speed", "balanced"])
def test_kws_identical_layers_call_one_instance(preset):
    """kws: the four 1x1 64->64 layers on 25x5 (ops 2, 4, 6, 8) call one function, defined once; the 10x4 stem (another
    shape) its own; each function named once in model.c and by the plan's rows as shared."""
    g, src, cp = _code("mlperf-tiny/kws_ref_model", preset=preset)
    calls = _calls(src)
    convs = [o for o in g.operators if o.opcode == "CONV_2D"]
    assert sorted(calls) == [o.index for o in convs]
    by_shape: dict = {}
    for o in convs:
        by_shape.setdefault(_geometry(g, o), []).append(o.index)
    assert sorted(by_shape.values()) == [[0], [2, 4, 6, 8]]
    assert {calls[i] for i in (2, 4, 6, 8)} == {"op2_conv"} and calls[0] == "op0_conv"
    assert sorted(DEFINED.findall(src)) == ["op0_conv", "op2_conv"]
    rows = {r["op"]: r for r in cp["layers"]}
    assert all(rows[i]["shared"] and rows[i]["instance"] for i in (2, 4, 6, 8)) and not rows[0]["shared"]
    # the budget counts the shared instance once: the plan's bytes are the distinct functions' (the depthwise layers'
    # path, bt_dw_rows_q4_32, once too)
    paths = {r["variant"]: r["bytes"] for r in cp["layers"] if r["opcode"] == "DEPTHWISE_CONV_2D"}
    assert len(paths) == 1 and all(rows[i]["shared"] for i in (1, 3, 5, 7))
    assert cp["bytes"] == rows[0]["bytes"] + rows[2]["bytes"] + sum(paths.values())
    # its layers agree on their offsets and bounds: folded, only the pointers read from the calling layer's struct
    body = src.split("void op2_conv(const bt_conv_params *q", 1)[1].split("\n}", 1)[0]
    assert sorted(re.findall(r"p\.(\w+) = q->", body)) == sorted(kernel_variants.POINTER_FIELDS)
    assert "p.output_offset = -128;" in body and "p.in.h = 25;" in body
    assert _code("mlperf-tiny/kws_ref_model", preset=preset)[1] == src  # deterministic: the same bytes again


def test_resnet8_layers_differing_in_offsets_share_and_read_them():
    """ResNet-8's block 1: two 3x3 16->16 layers on 32x32 whose output offsets differ (-128, 4) share one instance that
    reads the offsets and bounds from the calling layer's struct; the layers of other shapes keep their own. On
    nucleo-l4r5zi, whose memory model offers instances only (on cortex-m4 these layers take the shared KxK entry)."""
    g, src, _ = _code("mlperf-tiny/pretrainedResnet_quant", board="nucleo-l4r5zi")
    calls = _calls(src)
    assert calls[1] == calls[2] == "op1_conv"
    assert len(set(calls.values())) == len(calls) - 1
    body = src.split("void op1_conv(const bt_conv_params *q", 1)[1].split("\n}", 1)[0]
    assert sorted(re.findall(r"p\.(\w+) = q->", body)) == sorted(kernel_variants.RUNTIME_FIELDS)
    assert "p.kh = 3;" in body and "p.in.c = 16;" in body


def test_identity_ignores_pointers_and_offsets_only():
    """instance_identity: the same for layers that differ in their data pointers, offsets or bounds; another for a
    different variant, geometry field or a missing bias."""
    shape = {"h": 6, "w": 6, "c": 128, "pixel_stride": 128}
    p = dict({"in": shape, "out": shape}, kh=1, kw=1, stride_h=1, stride_w=1, dil_h=1, dil_w=1, pad_top=0, pad_left=0,
             input_offset=128, output_offset=-128, act_min=-128, act_max=127, filter="f1", bias="b1", multiplier="m1",
             shift="s1")
    v = "bt_conv_s8_pm_rq2_ssat"
    same = dict(p, filter="f2", bias="b2", multiplier="m2", shift="s2", input_offset=3, output_offset=4, act_min=0)
    assert kernel_variants.instance_identity(v, p) == kernel_variants.instance_identity(v, same)
    for other in (dict(p, out=dict(shape, c=64)), dict(p, kh=3), dict(p, bias="0"), dict(p, stride_w=2)):
        assert kernel_variants.instance_identity(v, p) != kernel_variants.instance_identity(v, other)
    assert kernel_variants.instance_identity(v, p) != kernel_variants.instance_identity("bt_conv_s8_pm_rq2m_ssat", p)


def test_riscv_pointwise_instances_shared_too():
    """riscv32: kws' four 1x1 layers call one BT_CONV_PW instance, as on cortex-m."""
    _, src, _ = _code("mlperf-tiny/kws_ref_model", board="riscv32")
    calls = _calls(src)
    assert {calls[i] for i in (2, 4, 6, 8)} == {"op2_conv"} and "BT_CONV_PW(&p, in" in src


@pytest.mark.slow
@pytest.mark.parametrize("name,preset,board", [("mlperf-tiny/kws_ref_model", "speed", "cortex-m4"),
                                               ("mlperf-tiny/kws_ref_model", "balanced", "cortex-m4"),
                                               ("mlperf-tiny/pretrainedResnet_quant", "speed", "nucleo-l4r5zi")])
def test_shared_instances_byte_exact_in_qemu(name, preset, board, tmp_path):
    """The firmware with shared instances gives TFLite Micro's bytes (in QEMU)."""
    t = targets.get(board)
    if t.missing_tools():
        pytest.skip(f"{board} needs {', '.join(t.missing_tools())}")
    path = shared_model(name)
    m = pipeline.read_model(str(path))
    pipeline.build(m.graph, board, tmp_path, PlanOptions(optimize_code=preset))
    assert len(set(_calls((tmp_path / "model.c").read_text()).values())) < len(_calls((tmp_path / "model.c").read_text()))
    g = m.graph
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, _, _ = runner.run(board, tmp_path, x)
    ref = tflm_run(path.read_bytes(), [x])[0]
    assert np.asarray(y).tobytes() == ref.tobytes()
