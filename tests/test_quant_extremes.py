"""`run` (the numpy executor) against TFLite Micro on quantisation far from what converters write: weight zero
points anywhere in -128..127 and scales from 1e-30 to 1e38 on FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D
weights and their activations (issue 52: a FULLY_CONNECTED weight zero point of -5 gave -128 92 84 99 against
TFLite Micro's -128 127 127 127; a weight scale of 1e38 gave 8 of 40 values wrong). Each drawn model is either
refused by the planner's checks in one line (a ModelError) or gives TFLite Micro's bytes exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from buildtool.errors import ModelError
from buildtool.model.ir import Quant
from buildtool.model.reader import parse
from buildtool.model.writer import serialize
from buildtool.plan.arena.execute import run_unplanned
from buildtool.zoo.builder import GraphBuilder
from conftest import SHARED, tflm_run

# scales converters write, and the extremes: the smallest the checks allow (1e-30) up to float32's largest
SCALES = st.one_of(st.floats(1e-4, 1.0), st.sampled_from([1e-30, 1e-12, 1e-6, 10.0, 1e6, 1e20, 1e38]))


def _model(kind: str, seed: int):
    b = GraphBuilder(kind, seed=seed, calib_batch=1)
    if kind == "fc":
        b.fully_connected(b.input((1, 12), scale=0.05, zp=3), 5, activation="RELU")
    elif kind == "conv":
        b.conv2d(b.input((1, 5, 5, 3), scale=0.05, zp=-7), 4, 3, 1, "SAME", activation="NONE")
    else:
        b.depthwise(b.input((1, 5, 5, 3), scale=0.05, zp=-7), 3, 1, "VALID", activation="RELU6", multiplier=2)
    return b.finish()


def _set(t, scales, zps, per_channel: bool):
    n = len(t.quant.scale) if per_channel else 1
    t.quant = Quant(np.resize(np.array(scales, np.float32), n), np.resize(np.array(zps, np.int64), n), t.quant.axis)


def check(kind, seed, w_scales, w_zp, per_channel, in_scale, out_scale, data):
    g = _model(kind, seed)
    op = g.operators[0]
    w, x, y = (g.tensors[i] for i in (op.inputs[1], op.inputs[0], op.outputs[0]))
    # converters write 0; TFLite Micro's convolutions and per-channel FULLY_CONNECTED ignore any other, its
    # per-tensor FULLY_CONNECTED subtracts it
    _set(w, w_scales, [w_zp], per_channel)
    _set(x, [in_scale], x.quant.zero_point, False)
    _set(y, [out_scale], y.quant.zero_point, False)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:  # the bias scale a converter writes: input x weight scale
        bq = g.tensors[op.inputs[2]].quant
        with np.errstate(over="ignore", under="ignore"):
            bs = np.float32(in_scale) * w.quant.scale
        g.tensors[op.inputs[2]].quant = Quant(np.resize(bs, len(bq.scale)), bq.zero_point, bq.axis)
    blob = serialize(g)
    try:
        g = parse(blob, name=kind)
    except ModelError as e:  # refused: one line naming the operator
        assert "\n" not in str(e) and ("operator 0" in str(e) or "tensor " in str(e)), str(e)
        return "refused"
    xin = np.random.default_rng(data).integers(-128, 128, size=g.tensors[g.inputs[0]].shape, dtype=np.int8)
    got = run_unplanned(g, [xin])[0]
    want = np.asarray(tflm_run(blob, [xin])[0]).reshape(got.shape)
    assert np.array_equal(got, want), (kind, w_scales, w_zp, in_scale, out_scale, got.ravel()[:8], want.ravel()[:8])
    return "ran"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.generate], database=None)
@given(kind=st.sampled_from(["fc", "fc", "conv", "depthwise"]), seed=st.integers(0, 1000),
       w_scales=st.lists(SCALES, min_size=1, max_size=8), w_zp=st.integers(-128, 127), per_channel=st.booleans(),
       in_scale=SCALES, out_scale=SCALES, data=st.integers(0, 1000))
def test_extreme_quantisation_runs_as_tflite_micro_or_is_refused(kind, seed, w_scales, w_zp, per_channel, in_scale,
                                                                 out_scale, data):
    check(kind, seed, w_scales, w_zp, per_channel, in_scale, out_scale, data)


def test_both_outcomes_occur():
    """The property test's draws reach both sides: models that run (and match) and models refused."""
    seen = {check("fc", 1, [0.01], -5, False, 0.05, 0.1, 0), check("fc", 1, [1e38], 0, True, 0.05, 0.1, 0),
            check("fc", 2, [0.02], 127, True, 0.05, 0.2, 1), check("conv", 3, [1e-30], 0, True, 1e-30, 1.0, 0)}
    assert seen == {"ran", "refused"}


@pytest.mark.parametrize("name", ["micro_speech_fc_weight_zp-5", "computed_ops_seed4000709"])
def test_reported_models(name):
    """The two models of the report: the first runs as TFLite Micro does, the second (a weight scale of
    1e38) is refused in one line."""
    path = SHARED / "reliability" / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is not there")
    blob = path.read_bytes()
    try:
        g = parse(blob, name=name)
    except ModelError as e:
        assert name == "computed_ops_seed4000709" and "requantisation limit" in str(e), str(e)
        return
    assert name == "micro_speech_fc_weight_zp-5"
    for seed in range(3):
        xin = np.random.default_rng(seed).integers(-128, 128, size=g.tensors[g.inputs[0]].shape, dtype=np.int8)
        got = run_unplanned(g, [xin])[0]
        assert np.array_equal(got, np.asarray(tflm_run(blob, [xin])[0]).reshape(got.shape))


def _act_model(kind: str, seed: int):
    b = GraphBuilder(kind, seed=seed, calib_batch=1)
    x = b.input((1, 4, 4, 3), scale=0.05, zp=2)
    if kind == "quantize":
        b.quantize(x, scale=0.1, zp=-3)
    elif kind == "mul":
        b.mul(x, b.input((1, 4, 4, 3), scale=0.05, zp=1, name="in2"))
    elif kind == "add":
        b.add(x, b.input((1, 4, 4, 3), scale=0.05, zp=1, name="in2"))
    elif kind == "mean":
        b.mean(x)
    elif kind == "avg_pool":
        b.avg_pool(x, 2, 1, "SAME")
    elif kind == "hard_swish":
        b.hard_swish(x)
    else:
        b.leaky_relu(x)
    return b.finish()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.generate], database=None)
@given(kind=st.sampled_from(["quantize", "mul", "add", "mean", "avg_pool", "hard_swish", "leaky_relu"]),
       in_scale=SCALES, in2_scale=SCALES, out_scale=SCALES, data=st.integers(0, 1000))
def test_activation_rescaling_runs_as_tflite_micro_or_is_refused(kind, in_scale, in2_scale, out_scale, data):
    """Operators that only rescale activations (no weights) under the same draws: TFLite Micro's bytes or a
    refusal in one line (a ratio of scales of 2**31 or more shifted left by 32+ in TFLite Micro)."""
    g = _act_model(kind, data)
    for i, s in zip(g.inputs, (in_scale, in2_scale)):
        _set(g.tensors[i], [s], g.tensors[i].quant.zero_point, False)
    _set(g.tensors[g.outputs[0]], [out_scale], g.tensors[g.outputs[0]].quant.zero_point, False)
    blob = serialize(g)
    try:
        g = parse(blob, name=kind)
    except ModelError as e:
        assert "\n" not in str(e) and "operator 0" in str(e), str(e)
        return
    rng = np.random.default_rng(data)
    xs = [rng.integers(-128, 128, size=g.tensors[i].shape, dtype=np.int8) for i in g.inputs]
    got = run_unplanned(g, xs)[0]
    want = np.asarray(tflm_run(blob, xs)[0]).reshape(got.shape)
    assert np.array_equal(got, want), (kind, in_scale, in2_scale, out_scale, got.ravel()[:8], want.ravel()[:8])
