"""Issue 10's proof: every published model of ../shared/models/real (found by a glob, so a new file is
covered without touching this module) plans and runs byte-identical to TFLite Micro with every input
set, on the numpy executor (the CLI once per model, the Python API), in host firmware and in Cortex-M4
firmware under QEMU. Every model input is fed (int8/int16 over their whole range and over a narrower
one); every output of every invocation is compared. All models go through one TFLM interpreter
invoked once per input set, so the SVDF/LSTM state carries over as it does in TFLM; for a stateless
model that is the same as separate runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import SHARED_MODELS
from test_firmware import need
from test_int16 import random_inputs
from test_stateful import KWS, LSTM, LSTM_OUTPUT, SVDF_OUTPUTS, check_sequence, tflm_sequence

from buildtool import cli, pipeline
from buildtool.firmware import runner
from buildtool.model import reader as tflite_reader
from buildtool.model.writer import serialize

REAL = SHARED_MODELS / "real"
MODELS = sorted(p.stem for p in REAL.glob("*.tflite")) if REAL.exists() else []
N_SETS = 6
# Internal tensors compared as outputs too: the keyword model's softmax saturates and the LSTM's
# classifier hides most of its state, so their final outputs alone would prove little.
INTERNAL_OUTPUTS = {KWS: SVDF_OUTPUTS, LSTM: [LSTM_OUTPUT]}


@dataclasses.dataclass
class Case:
    name: str
    path: object
    g: object  # the model as found
    gx: object  # the same model with INTERNAL_OUTPUTS as outputs too
    sets: list  # N_SETS input sets, one array per model input
    want: list  # TFLM's outputs of gx, per invocation


def input_sets(g, n: int) -> list:
    """Full-range inputs (test_int16.random_inputs: TRANSPOSE_CONV's output_shape input gets the
    output's shape) and, every other set, int8/int16 inputs 1/8 as wide, away from saturation."""
    sets = []
    for k in range(n):
        xs = random_inputs(g, 1000 + k)
        if k % 2:
            xs = [x >> 3 if x.dtype in (np.int8, np.int16) else x for x in xs]
        sets.append(xs)
    return sets


@pytest.fixture(scope="module", params=MODELS or ["none"])
def case(request) -> Case:
    path = REAL / f"{request.param}.tflite"
    if not path.exists():
        pytest.skip(f"{REAL} not present (../shared is only on CI and developer machines)")
    g = tflite_reader.load(str(path))
    gx = g.copy()
    gx.outputs = list(g.outputs) + INTERNAL_OUTPUTS.get(request.param, [])
    gx = tflite_reader.parse(serialize(gx), name=g.name)
    sets = input_sets(g, N_SETS)
    want, _ = tflm_sequence(serialize(gx), sets, len(gx.outputs))
    # the file as found gives TFLM the same outputs as our rewrite of it with more outputs
    found, _ = tflm_sequence(path.read_bytes(), sets, len(g.outputs))
    for w, f in zip(want, found):
        for a, b in zip(w, f):
            assert np.array_equal(a, b)
    return Case(request.param, path, g, gx, sets, want)


def same(got: list, want: list, where: str) -> None:
    """Every output of every invocation: same type, same bytes."""
    assert len(got) == len(want), where
    for k, (ys, ws) in enumerate(zip(got, want)):
        assert len(ys) == len(ws), where
        for j, (y, w) in enumerate(zip(ys, ws)):
            w = np.asarray(w)
            assert y.dtype == w.dtype and np.array_equal(y, w.reshape(y.shape)), f"{where}: set {k}, output {j}"


def test_cli_runs_the_file_as_found(case, tmp_path, capsys):
    """`buildtool run --sequence` on the file itself: every input from one .npz, every output into one."""
    np.savez(tmp_path / "x.npz", *[np.stack([xs[i] for xs in case.sets]) for i in range(len(case.g.inputs))])
    rc = cli.main(["run", str(case.path), "--input", str(tmp_path / "x.npz"), "--sequence", "--no-daemon",
                   "--output", str(tmp_path / "y.npz")])
    assert rc == 0, capsys.readouterr().err
    with np.load(tmp_path / "y.npz") as y:
        outs = [y[k] for k in y.files]
    assert len(outs) == len(case.g.outputs)
    same([[o[n] for o in outs] for n in range(N_SETS)], [w[:len(case.g.outputs)] for w in case.want], "cli")


def test_executor_in_the_planned_arena(case):
    """The Python API: one Session invoked once per set; the state tensors equal TFLM's after the last."""
    check_sequence(case.gx, case.sets)


@pytest.fixture(scope="module", params=["host", "cortex-m4"])
def built(case, request, tmp_path_factory):
    """(board, build dir) of case.gx, built once per model and board."""
    need(request.param)
    out = tmp_path_factory.mktemp(f"{case.name}-{request.param}")
    pipeline.build(case.gx, request.param, out)
    return request.param, out


def test_firmware(case, built):
    """Every input set through one run of the firmware (sequence mode: one arena kept across them)."""
    board, out = built
    got, prof, _ = runner.run(board, out, case.sets, sequence=True)
    assert [o["op"] for o in prof["ops"]] and len(prof["ops"]) == len(case.gx.operators)
    same([y if isinstance(y, list) else [y] for y in got], case.want, board)
