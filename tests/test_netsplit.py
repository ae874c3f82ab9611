"""buildtool netsplit: the split formulas against Keras' own counts and the converted models' MACs,
the search's stopping rule (a stub evaluator) and two real tiny searches on scikit-learn's digits,
and the int8 split models: they plan (the order search finds the branch-at-a-time order), run in
the reference executor and in cortex-m4 firmware byte-identical to TFLite Micro.

The tests that need the job are marked slow (about a minute of training and conversion on 2 cores;
CI runs them). TensorFlow runs only in a child process (tests/netsplit_job.py, once for the module): OR-Tools'
CP-SAT crashes in a process where TensorFlow's converter has run. Without TensorFlow the tests
that need it skip (on CI, where nothing may skip, they fail)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, fixed_input, tflm_run

from buildtool import cli, targets
from buildtool.model import ops, reader as tflite_reader
from buildtool.firmware import runner
from buildtool.errors import UsageError
from buildtool.netsplit import MISSING, formulas, memory, search
from buildtool.netsplit import spec as specs
from buildtool.options import PlanOptions
from buildtool.pipeline import plan_memory
from buildtool.plan import kinds

DIGITS = ((16, 16, 1), 10)  # digits:16 as the job loads it


# -- formulas --------------------------------------------------------------------------------
def test_two_layer_formula_matches_the_layers():
    """The method's formula for VGG16's first two layers, and the layer list of the same block."""
    assert formulas.two_layer_params(3, 64, 64) == (3 * 64 + 64 * 64) * 9 == 38592
    assert formulas.two_layer_params(3, 64, 64, 2, 2) == (96 + 32 * 32 * 2) * 9
    for l0, k in ((4, 2), (8, 4), (8, 8)):
        net = specs.NetSpec((8, 8, l0), 10, (specs.Block((16, 32), k=k),))
        convs = [x for x in formulas.layers(net) if x.kind == "conv3x3"]
        assert sum(x.copies * 9 * x.cin * x.cout for x in convs) == formulas.two_layer_params(l0, 16, 32, k, k)


def test_spec_refusals():
    base = specs.architecture("vgg-small", *DIGITS)
    for bad in (lambda: specs.split(base, 0, 3), lambda: specs.split(base, 5, 2),
                lambda: specs.with_factors(base, (2, 2)), lambda: specs.architecture("vgg16", (8, 8, 1), 10),
                lambda: specs.architecture("nope", (16, 16, 1), 10)):
        with pytest.raises(UsageError):
            bad()


# -- the search's stopping rule ----------------------------------------------------------------
DROPS = {(0, 2): 0.1, (0, 4): 0.3, (0, 8): 0.6, (1, 2): 0.5, (2, 2): 0.0, (2, 4): 0.2, (2, 8): 0.4}


def test_search_stops_at_the_first_drop_over_the_threshold():
    """Block 1: 2 and 4 pass, 6 does not divide 16 (skipped), 8 drops 0.6 -> keeps 4. Block 2: 2
    drops exactly 0.5 (not < 0.5) -> stays whole, 4 is never tried. Block 3: 2, 4, 8 pass (6 skipped).
    Every candidate is derived from the last network that passed."""
    calls = []

    def evaluate(spec, parent):
        calls.append((spec.factors, parent))
        if parent is None:
            return 90.0, spec.factors
        i, k = next((i, b.k) for i, b in enumerate(spec.blocks) if b.k != parent[i])
        return 90.0 - DROPS[i, k], spec.factors

    base = specs.architecture("vgg-small", *DIGITS)
    final, handle, steps = search.search(base, (2, 4, 6, 8), 0.5, evaluate)
    assert final.factors == handle == (4, 1, 8)
    assert calls == [((1, 1, 1), None), ((2, 1, 1), (1, 1, 1)), ((4, 1, 1), (2, 1, 1)), ((8, 1, 1), (4, 1, 1)),
                     ((4, 2, 1), (4, 1, 1)), ((4, 1, 2), (4, 1, 1)), ((4, 1, 4), (4, 1, 2)), ((4, 1, 8), (4, 1, 4))]
    assert [(s.block, s.k, s.kept) for s in steps[1:]] == [
        (0, 2, True), (0, 4, True), (0, 6, False), (0, 8, False), (1, 2, False),
        (2, 2, True), (2, 4, True), (2, 6, False), (2, 8, True)]
    assert "does not divide" in steps[3].note and steps[3].accuracy is None


# -- the TensorFlow half, once ----------------------------------------------------------------
@pytest.fixture(scope="module")
def job(tmp_path_factory):
    if importlib.util.find_spec("tensorflow") is None or importlib.util.find_spec("sklearn") is None:
        pytest.skip(MISSING)
    out = tmp_path_factory.mktemp("netsplit")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "netsplit_job.py"), str(out)], capture_output=True,
                       text=True, env=env, timeout=900, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    return out, json.loads((out / "job.json").read_text())


def _variant(arch: str, name: str) -> specs.NetSpec:
    base = specs.architecture(arch, *DIGITS)
    if name == "split_block(1,4)":
        return specs.split(base, 1, 4)
    return {"base": base, "split0x2": specs.split(base, 0, 2), "factors422": specs.with_factors(base, (4, 2, 2)),
            "naive4": specs.naive(base, 4), "shared1x4": specs.shared(base, 1, 4)}[name]


@pytest.mark.slow
def test_formulas_match_keras_count_params(job):
    counts = job[1]["params"]
    assert len(counts) == 12
    for key, n in counts.items():
        arch, name = key.split("/")
        assert formulas.params(_variant(arch, name)) == n, key
    assert counts["vgg-small/naive4"] < counts["vgg-small/factors422"] < counts["vgg-small/base"]


@pytest.mark.slow
def test_a_plain_keras_chain_is_read_and_split(job):
    r = job[1]["from_keras"]
    spec = specs.NetSpec((16, 16, 1), 10, (specs.Block((8,)), specs.Block((16,))))
    assert r["filters"] == [[8], [16]] and r["same_output"]
    assert r["params"] == formulas.params(spec) and r["split_block(0,2)"] == formulas.params(specs.split(spec, 0, 2))


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["vgg-small", "resnet-small"])
def test_real_search_follows_the_rule(job, arch):
    """Each step is kept exactly when its drop is under the threshold, a block stops at its first
    failure, the result is the last kept split of each block, and its int8 model was planned."""
    r = job[1][arch]
    threshold = 0.5 if arch == "vgg-small" else 100.0
    steps = r["steps"]
    base = steps[0]["accuracy"]
    assert steps[0]["step"] == "baseline" and steps[-1]["step"] == "searched"
    factors = [1, 1, 1]
    for s in steps[1:-1]:
        assert s["kept"] == (base - s["accuracy"] < threshold)
        if s["kept"]:
            factors[s["block"]] = s["k"]
        assert s["factors"][s["block"]] == s["k"]
    assert r["factors"] == factors == steps[-1]["factors"]
    if arch == "resnet-small":  # the command line's run: exit 0, and split.keras loads back
        assert factors == [2, 2, 2] and r["rc"] == 0
        assert r["keras_reloaded_params"] == steps[-1]["params"]
    assert steps[-1]["params"] == formulas.params(specs.with_factors(specs.architecture(arch, *DIGITS), factors))
    assert steps[-1]["ram"]["plain"] > 0 and "| searched |" in r["table"]


def _model(job, arch: str):
    data = (job[0] / f"{arch.split('-')[0]}_search.tflite").read_bytes()
    factors = job[1][arch]["factors"]
    return data, tflite_reader.parse(data), specs.with_factors(specs.architecture(arch, *DIGITS), factors)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["vgg-small", "resnet-small"])
def test_int8_split_model_plans_and_the_order_search_runs_branches_one_at_a_time(job, arch):
    data, g, spec = _model(job, arch)
    ops.check_graph(g)
    assert ops.graph_macs(g) == formulas.macs(spec)
    codes = [op.opcode for op in g.operators]
    if arch == "resnet-small":  # 16- and 32-channel blocks split by 2: one SPLIT, K branches, one CONCATENATION
        assert codes.count("SPLIT") == 2 and codes.count("CONCATENATION") == 3 and codes.count("ADD") == 6
    peaks = memory.peaks(data)
    assert peaks == job[1][arch]["steps"][-1]["ram"]  # the same bytes plan the same in any process
    # the order search finds an order at least as good as one branch at a time, and fusion goes lower
    assert peaks["plain"] <= min(peaks["branch"], peaks["converter"]) and peaks["optimized"] <= peaks["plain"]
    if spec.blocks[0].k > 1:  # the first block's branches interleaved keep every branch's maps alive
        assert peaks["branch"] < peaks["layer"]


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["vgg-small", "resnet-small"])
def test_int8_split_model_runs_bit_exact_in_the_executor(job, arch):
    data, g, _ = _model(job, arch)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = tflm_run(data, [x])[0]
    for options in ({}, {"optimize": "ram"}):
        y = kinds.execute(plan_memory(g, PlanOptions.from_map(options)), g, [x])[0]
        assert np.array_equal(y, ref), options


@pytest.mark.slow
def test_int8_split_model_runs_bit_exact_on_cortex_m4(job, tmp_path):
    from buildtool import pipeline

    t = targets.get("cortex-m4")
    if t.missing_tools():
        pytest.skip(f"cortex-m4 needs {', '.join(t.missing_tools())}")
    data, g, _ = _model(job, "resnet-small")
    pipeline.build(g, "cortex-m4", tmp_path)
    for seed in (0, 1):
        x = fixed_input(g.tensors[g.inputs[0]].shape, seed)
        y, _, _ = runner.run("cortex-m4", tmp_path, x)
        assert np.array_equal(y, tflm_run(data, [x])[0])


# -- the optional extra -------------------------------------------------------------------------
def test_missing_tensorflow_is_one_line(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "tensorflow" else real(n, *a))
    assert cli.main(["netsplit", "vgg-small", "--data", "digits"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"buildtool: error: {MISSING}"]


@pytest.mark.parametrize("args, says", [
    (["vgg-small", "--candidates", "2,x"], "comma-separated integers"),
    (["vgg-small", "--candidates", "1"], "at least 2"),
    (["vgg-small", "--epochs", "-1"], "non-negative integer"),
    (["nope"], "neither a .keras file nor an architecture"),
    (["vgg-small", "--data", "missing.npz"], "does not exist"),
])
def test_bad_arguments_are_one_line_before_tensorflow(args, says):
    """In a fresh process (another test of this worker may have imported TensorFlow, e.g. a GELU oracle)."""
    argv = ["netsplit", *args] + ([] if "--data" in args else ["--data", "digits"])
    code = ("import sys; from buildtool import cli; rc = cli.main(sys.argv[1:]); "
            "print('tensorflow' in sys.modules); sys.exit(rc)")
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and says in err[0]
    assert p.stdout.strip() == "False"  # refused before TensorFlow was imported


def test_build_path_never_imports_tensorflow():
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "buildtool.cli", "plan", "tiny", "--no-daemon"],
                       capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in p.stderr.splitlines() if "|" in line}
    assert "buildtool" in imported and not imported & {"tensorflow", "keras", "sklearn"}
