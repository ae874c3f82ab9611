"""The front door: reading model files (special files, the size limit, vectors claiming more than the file
holds), operator checks before tensor details, output-shape checks, `inspect` on any well-formed model,
`buildtool ops`, one-line errors that start with the model path as typed, and the published models of
../shared/models/real (as found: shape_signature with a -1 batch, a bias with quantized_dimension 3)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import numpy as np
import pytest
import tflite
from conftest import ROOT, SHARED_MODELS

from buildtool import cli, zoo
from buildtool.model import opdefs
from buildtool.model import reader as tflite_reader
from buildtool.zoo.builder import GraphBuilder
from buildtool.errors import ModelError, UsageError
from buildtool.model.ir import Quant
from buildtool.model.ops import SUPPORTED
from buildtool.model.files import max_model_bytes, read_model_file
from buildtool.model.reader import parse
from buildtool.model.writer import _Writer, serialize

REAL = SHARED_MODELS / "real"
REAL_MODELS = sorted(p.stem for p in REAL.glob("*.tflite")) if REAL.exists() else []
MEMORY_LIMIT = 2 << 30  # address space of a CLI child: reading /dev/zero used to grow without bound


def real_model(name: str):
    p = REAL / f"{name}.tflite"
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is only on CI and developer machines)")
    return p


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def cli_proc(args, env=None, cwd=ROOT, timeout=60) -> subprocess.CompletedProcess:
    """The CLI in a child with bounded memory and time; a hang is a TimeoutExpired failure."""
    e = dict(os.environ, **(env or {}))
    e["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "buildtool.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=e, preexec_fn=limited)


def one_error_line(r) -> str:
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("buildtool: error: "), r.stderr
    return lines[0]


@pytest.fixture
def own_daemon(tmp_path):
    """A daemon of this test's own, started from a memory-limited CLI child (it inherits the limit)."""
    env = {"BUILDTOOL_RUNTIME_DIR": str(tmp_path / "run"), "BUILDTOOL_CACHE_DIR": str(tmp_path / "cache"),
           "BUILDTOOL_NO_DAEMON": "0"}
    yield env
    cli_proc(["daemon", "stop"], env=env)


def run_cli(args, capsys) -> tuple:
    rc = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


# -- reading files ------------------------------------------------------------------

def test_special_files_are_refused_in_one_line_without_hanging(tmp_path, own_daemon):
    fifo = tmp_path / "model.tflite"
    os.mkfifo(fifo)
    cases = {fifo: "is a FIFO, not a regular file", "/dev/zero": "is a device, not a regular file",
             tmp_path: "is a directory"}
    for path, needle in cases.items():
        for args, env in ((["plan", path, "--no-daemon"], None), (["inspect", path], None),
                          (["plan", path], own_daemon)):
            line = one_error_line(cli_proc(args, env=env))
            assert line == f"buildtool: error: {path}: {needle}" + line.split(needle, 1)[1], (args, line)


def test_a_fifo_as_run_input_is_refused(tmp_path):
    fifo = tmp_path / "x.npy"
    os.mkfifo(fifo)
    line = one_error_line(cli_proc(["run", "tiny", "--no-daemon", "--input", fifo]))
    assert line == f"buildtool: error: input {fifo} is not a regular file; give a .npy or .npz file"


def test_long_lists_of_values_are_cut_in_error_lines(tmp_path):
    """Found by the CLI fuzz: a mutated TRANSPOSE perm of 96 values was printed whole (a 500-character line)."""
    b = GraphBuilder(seed=0, calib_batch=1)
    b.transpose(b.input((1, 4, 4, 8)), (0, 2, 1, 3))
    g = b.finish()
    perm = g.tensors[g.operators[0].inputs[1]]
    perm.data = np.arange(96, dtype=np.int32)[::-1].copy()
    perm.shape = (96,)
    path = tmp_path / "m.tflite"
    path.write_bytes(serialize(g))
    line = one_error_line(cli_proc(["plan", path, "--no-daemon"]))
    assert "[95, 94, 93, 92, 91, 90, ... (96 values)]" in line and len(line) <= cli.MAX_ERROR_CHARS + len(str(path))


def test_files_over_the_size_limit_are_refused(monkeypatch, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(serialize(zoo.build("tiny")))
    size = path.stat().st_size
    monkeypatch.setenv("BUILDTOOL_MAX_MODEL_BYTES", str(size - 1))
    with pytest.raises(ModelError, match=f"larger than the {size - 1} byte model size limit; "
                                         f"set BUILDTOOL_MAX_MODEL_BYTES to raise it"):
        read_model_file(str(path))
    monkeypatch.setenv("BUILDTOOL_MAX_MODEL_BYTES", str(size))
    assert read_model_file(str(path)) == path.read_bytes()
    monkeypatch.setenv("BUILDTOOL_MAX_MODEL_BYTES", "lots")
    with pytest.raises(UsageError, match="BUILDTOOL_MAX_MODEL_BYTES"):
        read_model_file(str(path))
    monkeypatch.delenv("BUILDTOOL_MAX_MODEL_BYTES")
    assert max_model_bytes() == 256 << 20


class _SharedEntries(_Writer):
    """Writes one subgraph vector (operators or tensors) as n entries that all name one table."""

    def __init__(self, g, start_fn, n):
        super().__init__(g)
        self.start_fn, self.n = start_fn, n

    def _offsets(self, start_fn, offs):
        return super()._offsets(start_fn, [offs[0]] * self.n if start_fn is self.start_fn else offs)


@pytest.mark.parametrize("kind, start_fn, cap", [
    ("operator", tflite.SubGraphStartOperatorsVector, tflite_reader.MAX_OPERATORS),
    ("tensor", tflite.SubGraphStartTensorsVector, tflite_reader.MAX_TENSORS)])
def test_vectors_claiming_many_entries_are_refused_before_reading_them(kind, start_fn, cap):
    """A 400 kB file naming one table 100,000 times used to be read entry by entry (minutes at 2 M)."""
    g = zoo.build("tiny")
    with pytest.raises(ModelError, match=f"{kind} list has 100000 entries, more than the {cap} buildtool reads"):
        parse(_SharedEntries(g, start_fn, 100_000).build())
    with pytest.raises(ModelError, match=f"{kind} 1 and {kind} 0 are the same table"):
        parse(_SharedEntries(g, start_fn, len(g.tensors)).build())


# -- operator checks ------------------------------------------------------------------

def _refused(g, needle):
    with pytest.raises(ModelError) as e:
        parse(serialize(g))
    assert needle in str(e.value), str(e.value)
    return str(e.value)


def test_fully_connected_output_shape_must_follow_from_its_input():
    """Found by the red team: 10 inputs, output [16777216, 10]; run crashed reshaping, firmware printed 160 MB."""
    b = GraphBuilder(seed=0, calib_batch=1)
    b.fully_connected(b.input((1, 10)), 10)
    g = b.finish()
    g.tensors[g.outputs[0]].shape = (1 << 24, 10)
    _refused(g, "operator 0 (FULLY_CONNECTED): output shape [16777216, 10] != 1 rows of 10")


def test_mean_output_shape_must_follow_from_its_axes():
    b = GraphBuilder(seed=0, calib_batch=1)
    b.mean(b.input((1, 4, 4, 8)), axes=(1, 2))
    g = b.finish()
    assert g.tensors[g.outputs[0]].shape == (1, 8)
    g.tensors[g.outputs[0]].shape = (1, 4, 8)
    _refused(g, "operator 0 (MEAN): output shape [1, 4, 8] != [1, 8]")


def test_split_and_strided_slice_output_shapes_are_checked():
    b = GraphBuilder(seed=0, calib_batch=1)
    x = b.input((1, 4, 4, 8))
    s1, s2 = b.split(x, 2, axis=3)
    y = b.strided_slice(s1, [0, 0, 0, 0], [1, 2, 4, 4], [1, 1, 1, 1])
    g = b.finish(outputs=[s2, y])
    ss = next(op for op in g.operators if op.opcode == "STRIDED_SLICE")
    sp = next(op for op in g.operators if op.opcode == "SPLIT")
    bad = g.copy()
    bad.tensors[ss.outputs[0]].shape = (1, 4, 4, 4)
    _refused(bad, f"operator {ss.index} (STRIDED_SLICE): output shape [1, 4, 4, 4] does not hold the 32 sliced")
    bad = g.copy()
    bad.tensors[sp.outputs[1]].shape = (1, 4, 8, 2)
    _refused(bad, f"operator {sp.index} (SPLIT): output shape [1, 4, 8, 2] != [1, 4, 4, 4]")


def test_a_graph_without_outputs_is_refused():
    g = zoo.build("tiny")
    g.outputs = []
    _refused(g, "the graph has no outputs")


def test_a_constant_graph_input_is_refused():
    """Found by the CLI fuzz: a weight tensor listed as a graph input crashed the order search (KeyError)."""
    g = zoo.build("tiny")
    w = g.operators[0].inputs[1]
    g.inputs = list(g.inputs) + [w]
    _refused(g, f"graph input/output tensor {w} is a constant; inputs and outputs must be activations")


def test_int8_zero_point_outside_int8_is_refused():
    """Found by the CLI fuzz: zero point 65536 on an int8 input crashed `run` (OverflowError in conv)."""
    g = zoo.build("tiny")
    t = g.tensors[g.inputs[0]]
    t.quant = Quant(t.quant.scale, np.array([65536]), t.quant.axis)
    _refused(g, f"operator 0 (CONV_2D): int8 tensor {t.index} has zero point 65536, outside -128..127")


def test_denormal_activation_scale_is_refused():
    """A scale of 1e-40 made `run` die with OverflowError (6.0 / scale is infinite in float32)."""
    g = zoo.build("tiny")
    t = g.tensors[g.operators[0].outputs[0]]
    t.quant = Quant(np.full(1, 1e-40, np.float32), t.quant.zero_point, t.quant.axis)
    _refused(g, f"operator 0 (CONV_2D): int8 tensor {t.index} has scale 1e-40, too small to compute with")


def test_numpy_warnings_do_not_precede_the_error_line():
    code = ("import sys\nimport numpy as np\nfrom buildtool import cli\nfrom buildtool.errors import ModelError\n"
            "def noisy(a):\n    np.float32(1) / np.float32(0)\n    raise ModelError('the one line')\n"
            "from buildtool.cli import info\ninfo.cmd_boards = noisy\nsys.exit(cli.main(['boards']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (r.returncode, r.stderr) == (2, "buildtool: error: the one line\n")


def test_unsupported_operator_is_named_before_its_odd_tensors():
    """An LSTM used to be refused as 'tensor 18 ... has invalid shape [0]' (its intermediate tensors); LSTM is
    supported now, so an operator we still lack stands in for it."""
    g = zoo.build("tiny")
    last = g.operators[-1]
    last.opcode, last.options = "HASHTABLE_LOOKUP", {}
    g.tensors[last.outputs[0]].shape = (0,)
    msg = _refused(g, f"operator {last.index} is HASHTABLE_LOOKUP, which is not supported; "
                      "run 'buildtool ops' to see what is")
    assert "(supported:" not in msg and len(msg) < 130


@pytest.mark.parametrize("opcode", ["EXP", "SIN", "FLOOR", "SQRT", "L2_POOL_2D"])
def test_a_tflite_micro_operator_not_built_says_why(opcode):
    """An operator TFLite Micro has but we deliberately do not build (opdefs.NOT_BUILT, docs/operators.md) is
    refused with the reason, not only 'not supported'."""
    g = zoo.build("tiny")
    last = g.operators[-1]
    last.opcode, last.options = opcode, {}
    msg = _refused(g, f"operator {last.index} is {opcode}, which is not supported: ")
    assert msg.endswith(opdefs.NOT_BUILT[opcode]) and "\n" not in msg


def test_quantized_dimension_is_ignored_where_it_means_nothing():
    """A converter left quantized_dimension 3 on a 1-D bias; TFLite Micro never reads it."""
    b = GraphBuilder(seed=0, calib_batch=1)
    b.conv2d(b.input((1, 6, 6, 3)), 8, k=3)
    g = b.finish()
    bias = g.tensors[g.operators[0].inputs[2]]
    bias.quant = Quant(np.full(8, 0.01, np.float32), np.zeros(8, np.int64), axis=3)
    h = parse(serialize(g))
    assert h.tensors[bias.index].quant.axis == 0


def test_shape_signature_batch_is_ignored():
    """A -1 batch in shape_signature with a static stored shape: TFLite Micro runs the stored shape."""
    class _Signature(_Writer):
        def _tensor(self, t, buffer_index):
            real_start = tflite.TensorStart

            def start(b):
                sig = self._ints(tflite.TensorStartShapeSignatureVector, [-1] + list(t.shape[1:]))
                real_start(b)
                tflite.TensorAddShapeSignature(b, sig)
            tflite.TensorStart = start
            try:
                return super()._tensor(t, buffer_index)
            finally:
                tflite.TensorStart = real_start

    g = zoo.build("tiny")
    assert serialize(parse(_Signature(g).build())) == serialize(g)


def test_subgraphs_after_the_first_are_ignored():
    """TFLite Micro runs subgraph 0; the others only run under control-flow operators."""
    class _TwoSubgraphs(_Writer):
        def _offsets(self, start_fn, offs):
            return super()._offsets(start_fn, offs * 2 if start_fn is tflite.ModelStartSubgraphsVector else offs)

    g = zoo.build("tiny")
    assert serialize(parse(_TwoSubgraphs(g).build())) == serialize(g)


# -- inspect, ops, messages -----------------------------------------------------------------

def test_ops_lists_the_table_the_checks_use(capsys):
    rc, out, _ = run_cli(["ops", "--json"], capsys)
    assert rc == 0
    rows = json.loads(out)
    assert [r["op"] for r in rows] == list(SUPPORTED)
    assert {"op": "QUANTIZE", "inputs": ["int8", "int16", "int32", "float32"], "outputs": ["int8", "int16", "int32"],
            "int16": "yes"} in rows
    assert {"op": "CONV_2D", "inputs": ["int8", "int16"], "outputs": ["int8", "int16"], "int16": "yes"} in rows
    assert {"op": "RESIZE_BILINEAR", "inputs": ["int8"], "outputs": ["int8"],
            "int16": "no: TFLite Micro refuses it in int16 too"} in rows
    rc, out, _ = run_cli(["ops"], capsys)
    assert rc == 0 and [line.split()[0] for line in out.splitlines()[1:]] == list(SUPPORTED)


@pytest.mark.parametrize("name", REAL_MODELS or ["none"])
def test_every_real_model_inspects_and_plan_names_what_stops_it(name, capsys):
    path = real_model(name)
    rc, out, err = run_cli(["inspect", path], capsys)
    assert rc == 0 and err == "", err
    last = out.strip().splitlines()[-1]
    rc, out, err = run_cli(["plan", path], capsys)
    if rc == 0:
        assert not last.startswith("would not plan"), (last, err)
        return
    assert rc == 2 and last.startswith("would not plan: operator "), last
    line = err.strip()
    assert line == f"buildtool: error: {path}: {last[len('would not plan: '):]}"
    assert len(line) <= cli.MAX_ERROR_CHARS, line


def test_errors_start_with_the_path_as_typed_with_and_without_daemon(own_daemon, tmp_path):
    (tmp_path / "sub").mkdir()
    data = real_model("tflm_hello_world_int8").read_bytes()
    (tmp_path / "sub" / "cut.tflite").write_bytes(data[: len(data) // 2])  # truncated: the reader refuses it
    rel = os.path.join("sub", "cut.tflite")
    lines = {cli_proc(["plan", rel, *extra], env=own_daemon, cwd=tmp_path).stderr
             for extra in ([], ["--no-daemon"])}
    assert len(lines) == 1, lines
    line = one_error_line(cli_proc(["plan", rel], env=own_daemon, cwd=tmp_path))
    assert line.startswith(f"buildtool: error: {rel}: ") and len(line) <= cli.MAX_ERROR_CHARS, line
