"""Model zoo: the published shapes, MAC counts and memory figures of zoo.md, and models that really compute."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from buildtool.model import ops
from buildtool import zoo
from buildtool.errors import UsageError
from buildtool.model.reader import load, parse
from buildtool.model.writer import serialize
from conftest import ROOT, fixed_input, shared_model, tflm_run

BIG = ["mobilenetv2", "mbv2-w0.35", "mcunet-vww1", "mcunet-in3"]


@pytest.fixture(scope="module")
def built():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = zoo.build(name)
        return cache[name]
    return get


def lower_bound_model_order(g) -> int:
    """Max over operator steps of the bytes of tensors live at that step (input counted, no in-place)."""
    first = {i: -1 for i in g.inputs}
    last = {}
    for op in g.operators:
        for o in op.outputs:
            first[o] = op.index
        for i in op.inputs:
            if i >= 0 and not g.tensors[i].is_const:
                last[i] = op.index
    for o in g.outputs:
        last[o] = len(g.operators)
    return max(sum(g.tensors[t].nbytes for t in first if first[t] <= step <= last.get(t, first[t]))
               for step in range(len(g.operators)))


def test_names_and_descriptions():
    assert zoo.names() == ["tiny"] + BIG
    d = zoo.describe()
    assert list(d) == zoo.names() and all(isinstance(v, str) and v and "\n" not in v for v in d.values())
    with pytest.raises(UsageError):
        zoo.build("resnet-9000")


@pytest.mark.parametrize("name,bound", [("mobilenetv2", 768_000), ("mbv2-w0.35", 311_040),
                                        ("mcunet-vww1", 96_000), ("mcunet-in3", 340_736)])
def test_activation_lower_bound_matches_zoo_md(built, name, bound):
    assert lower_bound_model_order(built(name)) == bound


def test_mobilenetv2_bound_is_at_first_stride2_depthwise(built):
    g = built("mobilenetv2")
    dw = next(op for op in g.operators if op.opcode == "DEPTHWISE_CONV_2D" and op.options["stride_h"] == 2)
    assert g.tensors[dw.inputs[0]].nbytes + g.tensors[dw.outputs[0]].nbytes == 768_000


@pytest.mark.parametrize("name,macs,params", [("mcunet-vww1", 11.6e6, 0.43e6), ("mcunet-in3", 81.6e6, 0.74e6)])
def test_macs_and_parameters(built, name, macs, params):
    g = built(name)
    assert ops.graph_macs(g) == pytest.approx(macs, rel=0.01)
    n_params = sum(t.num_elements for t in g.tensors if t.is_const)
    assert n_params == pytest.approx(params, rel=0.02)


def test_make_divisible_matches_keras():
    assert [zoo.make_divisible(int(c * 0.35)) for c in (16, 24, 32, 64, 96, 160, 320)] == [8, 8, 16, 24, 32, 56, 112]
    assert zoo.make_divisible(32 * 0.35) == 16 and zoo.make_divisible(32) == 32


@pytest.mark.parametrize("zoo_name,shared", [("mobilenetv2", "mobilenetv2_160_a1"), ("mbv2-w0.35", "mbv2_w035_144")])
def test_mobilenets_have_the_keras_converter_structure(built, zoo_name, shared):
    """Operator for operator the same opcodes, activation shapes, filter shapes and options as the converter's."""
    def sig(g):
        return [(op.opcode, [g.tensors[i].shape for i in g.act_inputs(op)],
                 [g.tensors[i].shape for i in op.outputs],
                 g.tensors[op.inputs[1]].shape if "CONV" in op.opcode else None, op.options) for op in g.operators]
    assert sig(built(zoo_name)) == sig(load(str(shared_model(shared))))


@pytest.mark.parametrize("name", ["tiny"] + BIG)
def test_structure_rules(built, name):
    g = built(name)
    assert "PAD" not in {op.opcode for op in g.operators}
    prod = g.producers()
    for op in g.operators:
        if op.opcode == "DEPTHWISE_CONV_2D":
            assert op.options["activation"] == "RELU6" and op.options["padding"] == "SAME"
        if op.opcode == "CONV_2D":
            src = prod.get(op.inputs[0])
            projection = src is not None and g.operators[src].opcode == "DEPTHWISE_CONV_2D"
            assert op.options["activation"] == ("NONE" if projection else "RELU6"), op.index
        if op.opcode == "ADD":
            a, b = (g.tensors[i] for i in op.inputs)
            assert a.shape == b.shape


def test_tiny_fits_small_devices(built):
    g = built("tiny")
    assert lower_bound_model_order(g) <= 16 * 1024
    assert sum(t.nbytes for t in g.activation_tensors()) <= 16 * 1024
    assert g.params_bytes() <= 4096
    assert {op.opcode for op in g.operators} >= {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MEAN", "FULLY_CONNECTED"}


@pytest.mark.parametrize("name", ["tiny"] + BIG)
def test_runs_in_tflm_without_degenerate_tensors(built, name):
    """Serialise, reload, run in TFLite Micro; output and evenly spaced intermediates must vary."""
    g = built(name)
    data = serialize(g)
    assert data == serialize(zoo.build(name)), "zoo builds must be deterministic"
    assert parse(data).structure_hash() == g.structure_hash()
    probe = g.copy()
    acts = [t.index for t in g.activation_tensors() if t.index not in g.inputs]
    picks = acts[:: max(1, len(acts) // 10)]
    probe.outputs = list(g.outputs) + picks
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    outs = tflm_run(serialize(probe), [x], n_outputs=len(probe.outputs))
    out = outs[0]
    assert out.shape == g.tensors[g.outputs[0]].shape and out.dtype == np.int8
    assert len(np.unique(out)) >= min(out.size, 5)
    for t, v in zip(picks, outs[1:]):
        assert len(np.unique(v)) >= min(16, v.size // 2), f"{name}: tensor {t} '{g.tensors[t].name}' is nearly constant"
    other = tflm_run(data, [fixed_input(x.shape, seed=1)])[0]
    assert not np.array_equal(other, out), "output must depend on the input"


def test_builder_simulation_predicts_tflm():
    """The calibration pass simulates the int8 model: through all of tiny it is within 1 LSB of TFLite Micro,
    and on the first layers of a deep model almost every value is exact (random deep nets amplify the
    last-bit rounding differences further down)."""
    for name, n_ops, max_diff, exact in (("tiny", 7, 1, 0.7), ("mcunet-vww1", 4, 8, 0.95)):
        g0 = zoo.build(name)
        x = fixed_input(g0.tensors[g0.inputs[0]].shape)
        b = zoo.builder(name, calib=x)
        g = b.finish()
        probe = g.copy()
        probe.outputs = [g.operators[i].outputs[0] for i in range(n_ops)]
        for t, got in zip(probe.outputs, tflm_run(serialize(probe), [x], n_outputs=n_ops)):
            diff = np.abs(got.astype(int) - b.simulate(t).astype(int))
            assert diff.max() <= max_diff and (diff == 0).mean() >= exact, (name, g.tensors[t].name)


_ZOO_HASH = """
import hashlib, sys
from buildtool import pipeline, zoo
print(hashlib.sha256(b"".join(pipeline.zoo_model(n) for n in zoo.names())).hexdigest())
"""


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="OpenBLAS core types named here are x86-64's")
def test_zoo_models_are_the_same_whichever_blas_kernel_the_cpu_gets():
    """The zoo's models are byte-identical whatever kernel OpenBLAS picks for this CPU (it picks per CPU:
    an AVX-512 machine got other float32 sums, hence other quantisation ranges and another
    mbv2-w0.35 than CI's). Forced here to the machine's own choice and to two that run on any x86-64."""
    outs = set()
    for core in (None, "Prescott", "Nehalem"):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
        if core:
            env["OPENBLAS_CORETYPE"] = core
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
        r = subprocess.run([sys.executable, "-c", _ZOO_HASH], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout.strip())
    assert len(outs) == 1, outs
