"""`buildtool run` with several model inputs: --input once per input, or one .npz; on the reference
executor and as firmware (the harness feeds every input), byte-identical with TFLite Micro."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tflm_run

from buildtool import targets
from buildtool.zoo.builder import GraphBuilder
from buildtool.cli import main
from buildtool.model.writer import serialize


def two_input_model():
    """ADD of a conv of one input and the other input (different quantisation): swapping the
    inputs changes the output."""
    b = GraphBuilder("two_inputs", seed=7)
    a = b.input((1, 8, 8, 4), name="image")
    c = b.input((1, 8, 8, 6), scale=1.0 / 64, zp=5, name="bias_map")
    return b.finish([b.add(b.conv2d(a, 6, 3, activation="NONE"), c)])


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(model path, the two inputs, TFLM's output)."""
    d = tmp_path_factory.mktemp("two_inputs")
    data = serialize(two_input_model())
    path = d / "two_inputs.tflite"
    path.write_bytes(data)
    rng = np.random.default_rng(3)
    xs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in ((1, 8, 8, 4), (1, 8, 8, 6))]
    return path, xs, tflm_run(data, xs)[0]


def run_cli(argv, capsys):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _available(board):
    if board and targets.get(board).missing_tools():
        pytest.skip(f"{board} needs {', '.join(targets.get(board).missing_tools())}")
    return ["--board", board] if board else []


@pytest.mark.parametrize("board", [None, "host", "cortex-m4", "riscv32"])
def test_one_npy_per_input(model, board, tmp_path, capsys):
    path, xs, ref = model
    for k, x in enumerate(xs):
        np.save(tmp_path / f"x{k}.npy", x)
    rc, _, err = run_cli(["run", path, "--input", tmp_path / "x0.npy", "--input", tmp_path / "x1.npy", "--no-daemon",
                          "--output", tmp_path / "y.npy", "--build-dir", tmp_path / "b"] + _available(board), capsys)
    assert rc == 0, err
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == ref.dtype and np.array_equal(y, ref)


@pytest.mark.parametrize("board", [None, "cortex-m4"])
@pytest.mark.parametrize("keys", ["names", "positional"])
def test_one_npz_holding_every_input(model, board, keys, tmp_path, capsys):
    """Keyed by the inputs' names (stored in the other order, to show the names decide) or
    arr_0, arr_1 as np.savez writes positional arrays."""
    path, xs, ref = model
    if keys == "names":
        np.savez(tmp_path / "x.npz", bias_map=xs[1], image=xs[0])
    else:
        np.savez(tmp_path / "x.npz", *xs)
    rc, _, err = run_cli(["run", path, "--input", tmp_path / "x.npz", "--no-daemon", "--output", tmp_path / "y.npy",
                          "--build-dir", tmp_path / "b"] + _available(board), capsys)
    assert rc == 0, err
    assert np.array_equal(np.load(tmp_path / "y.npy"), ref)


def test_input_mistakes_are_one_line_errors(model, tmp_path, capsys):
    path, xs, _ = model
    np.save(tmp_path / "x0.npy", xs[0])
    np.save(tmp_path / "x1.npy", xs[1])
    np.savez(tmp_path / "bad.npz", foo=xs[0], bar=xs[1])
    np.savez(tmp_path / "ok.npz", *xs)
    cases = [
        (["--input", tmp_path / "x0.npy"],
         "the model has 2 inputs, 1 given; pass --input once per input in order (image, bias_map), or one .npz"),
        (["--input", tmp_path / "x1.npy", "--input", tmp_path / "x0.npy"],
         f"input {tmp_path / 'x1.npy'} is int8[1, 8, 8, 6], the model wants int8[1, 8, 8, 4] for its input image"),
        (["--input", tmp_path / "bad.npz"],
         "holds foo, bar; name its arrays after the model's inputs (image, bias_map) or arr_0, arr_1, ... in order"),
        (["--input", tmp_path / "ok.npz", "--input", tmp_path / "x0.npy"],
         "give one .npz holding every input, or one .npy per input; not both"),
    ]
    for args, needle in cases:
        rc, out, err = run_cli(["run", path, "--no-daemon"] + args, capsys)
        lines = err.strip().splitlines()
        assert rc == 2 and out == "" and len(lines) == 1 and needle in lines[0], (args, err)


# -- several outputs -------------------------------------------------------------------------
def two_output_model():
    """A conv feature map and the dense classifier behind it: two outputs of different shapes."""
    b = GraphBuilder("two_outputs", seed=9)
    f = b.conv2d(b.input((1, 6, 6, 3), name="image"), 4, 3, 2)
    y = b.fully_connected(b.reshape(f, (1, 36)), 5)
    return b.finish([f, y])


@pytest.mark.parametrize("board", [None, "host"])
def test_every_output_is_saved_and_printed(board, tmp_path, capsys):
    g = two_output_model()
    data = serialize(g)
    (tmp_path / "m.tflite").write_bytes(data)
    x = np.random.default_rng(4).integers(-128, 128, size=(1, 6, 6, 3), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    ref = tflm_run(data, [x], 2)
    names = [g.tensors[i].name for i in g.outputs]
    args = ["run", tmp_path / "m.tflite", "--input", tmp_path / "x.npy", "--no-daemon",
            "--build-dir", tmp_path / "b"] + _available(board)
    rc, _, err = run_cli(args + ["--output", tmp_path / "y.npz"], capsys)
    assert rc == 0, err
    with np.load(tmp_path / "y.npz") as y:
        assert y.files == names  # keyed by output name, in the model's order
        for k, r in zip(names, ref):
            assert y[k].dtype == r.dtype and np.array_equal(y[k], r)
    first = (tmp_path / "y.npz").read_bytes()
    assert run_cli(args + ["--output", tmp_path / "y.npz"], capsys)[0] == 0
    assert (tmp_path / "y.npz").read_bytes() == first  # no time stamps: the same run, the same bytes
    rc, out, _ = run_cli(args, capsys)
    assert rc == 0 and out.splitlines() == [f"{n}: {' '.join(map(str, r.reshape(-1).tolist()))}"
                                            for n, r in zip(names, ref)]
    rc, out, err = run_cli(args + ["--output", tmp_path / "y.npy"], capsys)
    assert rc == 2 and out == "" and not (tmp_path / "y.npy").exists()
    assert err == ("buildtool: error: the model has 2 outputs and a .npy holds one array; save them all with "
                   f"--output {tmp_path / 'y'}.npz\n")
