"""`buildtool export --format tflm`: buildtool's arena plan as TFLite Micro's OfflineMemoryAllocation metadata
(model/offline_plan.py, plan/tflm.py, pipeline/tflm_export.py; docs/tflm.md).

The written file is checked with the `tflite` package's own accessors (an independent reader): the metadata's
exact words, the operators in the planned order, every other table as it was. The planned models give TFLite
Micro's and TensorFlow Lite's outputs byte for byte on several random inputs, TFLite Micro's measured head never
grows (and is our plan's extent where no scratch buffer needs more), in place only where TFLite Micro's kernel
allows, and what cannot be planned is refused in one line with nothing written."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import tflite

from buildtool import cli
from buildtool.model import offline_plan
from buildtool.model.reader import parse
from buildtool.model.writer import serialize
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.arena.inplace import candidates, reshape_decisions
from buildtool.plan.tflm import TFLM_INPLACE, allow, plan_tflm
from buildtool.model.fold_pad import unfold_pads
from buildtool.pipeline.tflm_export import planned_model, sample_inputs, tflm_head, tflm_outputs, tflm_scratch
from conftest import SHARED_MODELS, tflite_ref_run

DATA = Path(__file__).parent / "data"
RELIABILITY = SHARED_MODELS.parent / "reliability"

# shared models with a saving, with in-place operators, with variable tensors, with scratch buffers
MODELS = ["tiny_cnn_32", "mlperf-tiny/vww_96_int8", "mlperf-tiny/pretrainedResnet_quant",
          "real/seanet_add-add0", "real/seanet_sub-sub0", "real/seanet_leaky_relu-leaky_relu0",
          "real/tflm_trained_lstm_int8", "real/seanet_transpose_conv-transpose_conv0",
          pytest.param("mbv2_w035_144", marks=pytest.mark.slow)]


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "1")


def shared(name: str) -> Path:
    p = SHARED_MODELS / f"{name}.tflite"
    if not p.exists():
        pytest.skip(f"{p} not present")
    return p


def run_cli(args, capsys) -> tuple:
    capsys.readouterr()
    rc = cli.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


# -- the file: exact metadata words, the operator order, nothing else changed --------------------------------

def _ops(m) -> list:
    sg = m.Subgraphs(0)
    return [(sg.Operators(i).OpcodeIndex(), tuple(sg.Operators(i).InputsAsNumpy()),
             tuple(sg.Operators(i).OutputsAsNumpy())) for i in range(sg.OperatorsLength())]


def test_written_file_read_by_the_tflite_package():
    data = shared("mlperf-tiny/vww_96_int8").read_bytes()
    n_ops = tflite.Model.GetRootAs(data, 0).Subgraphs(0).OperatorsLength()
    n_t = offline_plan.tensor_count(data)
    order = list(reversed(range(n_ops)))  # any permutation: the writer does not judge it
    offsets = [(-1 if t % 3 else 16 * t) for t in range(n_t)]
    out = offline_plan.write(data, order, offsets)
    assert len(out) % 16 == len(data) % 16  # every old buffer keeps its alignment
    a, b = tflite.Model.GetRootAs(data, 0), tflite.Model.GetRootAs(out, 0)
    names = [b.Metadata(i).Name() for i in range(b.MetadataLength())]
    assert names == [a.Metadata(i).Name() for i in range(a.MetadataLength())] + [b"OfflineMemoryAllocation"]
    md = b.Metadata(b.MetadataLength() - 1)
    assert md.Buffer() == a.BuffersLength() == b.BuffersLength() - 1
    words = b.Buffers(md.Buffer()).DataAsNumpy().tobytes()
    assert words == struct.pack(f"<{3 + n_t}i", 0, 1, n_t, *offsets)
    view = b.Buffers(md.Buffer()).DataAsNumpy()  # a view into `out`: its words start 16-aligned in the file
    base = np.frombuffer(out, np.uint8).ctypes.data
    assert (view.ctypes.data - base) % 16 == 0
    assert _ops(b) == [_ops(a)[k] for k in order]
    for i in range(a.BuffersLength()):  # weights byte for byte
        x, y = a.Buffers(i).DataAsNumpy(), b.Buffers(i).DataAsNumpy()
        assert (isinstance(x, int) and isinstance(y, int)) or x.tobytes() == y.tobytes()
    sa, sb = a.Subgraphs(0), b.Subgraphs(0)
    assert [sa.Tensors(t).Name() for t in range(sa.TensorsLength())] == \
           [sb.Tensors(t).Name() for t in range(sb.TensorsLength())]
    assert (a.Version(), a.OperatorCodesLength(), a.Description()) == (b.Version(), b.OperatorCodesLength(),
                                                                       b.Description())
    got = offline_plan.read(out)
    assert got["offsets"] == offsets and got["planned"] == sum(o != -1 for o in offsets)
    assert offline_plan.read(data) is None


def test_replace_keeps_other_metadata_and_drops_the_old_plan():
    data = shared("tiny_cnn_32").read_bytes()
    n_t, n_ops = offline_plan.tensor_count(data), len(offline_plan.operator_outputs(data))
    one = offline_plan.write(data, list(range(n_ops)), [-1] * n_t)
    with pytest.raises(Exception, match="already carries"):
        offline_plan.write(one, list(range(n_ops)), [-1] * n_t)
    two = offline_plan.write(one, list(range(n_ops)), [0] * n_t, replace=True)
    m = tflite.Model.GetRootAs(two, 0)
    names = [m.Metadata(i).Name() for i in range(m.MetadataLength())]
    assert names.count(b"OfflineMemoryAllocation") == 1 and b"min_runtime_version" in names
    assert offline_plan.read(two)["offsets"] == [0] * n_t


# -- the planned models: outputs, heads ------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_planned_model_same_outputs_and_head_never_grows(name):
    path = shared(name)
    data = path.read_bytes()
    out, info = planned_model(str(path))
    assert info.head_before == tflm_head(data) and info.head_after == tflm_head(out)
    assert info.head_after <= info.head_before
    # our arena (tensors and, as gaps, the scratch TFLite Micro's kernels ask for) is TFLite Micro's head
    assert info.head_after == info.arena_bytes
    sets = sample_inputs(data, 3, seed=7)
    assert tflm_outputs(out, sets) == tflm_outputs(data, sets)
    want = [tflite_ref_run(data, xs, 8) for xs in sets]
    got = [tflite_ref_run(out, xs, 8) for xs in sets]
    assert [[y.tobytes() for y in w] for w in want] == [[y.tobytes() for y in g] for g in got]


def test_a_wrong_plan_changes_the_outputs():
    """The comparison above can fail: every tensor of seanet_conv at offset 0 (input and output overlapping)
    gives other outputs under TFLite Micro, which follows the offsets it is given."""
    data = shared("real/seanet_conv-conv0").read_bytes()
    n_t, n_ops = offline_plan.tensor_count(data), len(offline_plan.operator_outputs(data))
    g = parse(data)
    bad = offline_plan.write(data, list(range(n_ops)), [0 if not g.tensors[t].is_const else -1 for t in range(n_t)])
    sets = sample_inputs(data, 2, seed=3)
    assert tflm_outputs(bad, sets) != tflm_outputs(data, sets)


def test_vww_head_is_the_plan_and_smaller_than_tflm_own():
    """TFLite Micro's head is exactly our plan's extent (no scratch buffer in vww's kernels needs more) and
    below the head its own planner gives the original file."""
    path = shared("mlperf-tiny/vww_96_int8")
    out, info = planned_model(str(path))
    assert info.head_after == info.arena_bytes < info.head_before


def test_in_place_outputs_share_the_input_bytes():
    """seanet_add: the ADD's output offset is one of its inputs' (the saving is in place, not a repacking)."""
    path = shared("real/seanet_add-add0")
    data = path.read_bytes()
    out, info = planned_model(str(path))
    assert info.inplace_ops == [0]
    (ins, outs) = [(tflite.Model.GetRootAs(data, 0).Subgraphs(0).Operators(0).InputsAsNumpy(),
                    tflite.Model.GetRootAs(data, 0).Subgraphs(0).Operators(0).OutputsAsNumpy())][0]
    offs = offline_plan.read(out)["offsets"]
    assert offs[outs[0]] in {offs[i] for i in ins} and offs[ins[0]] != offs[ins[1]]


def test_deterministic_bytes():
    path = str(shared("mlperf-tiny/vww_96_int8"))
    assert planned_model(path)[0] == planned_model(path)[0]


# -- what TFLite Micro's kernels allow in place -----------------------------------------------------------------

def test_only_tflm_safe_aliasing_is_planned():
    from buildtool import zoo

    g = zoo.build("mbv2-w0.35")  # depthwise in place, ADD, PAD and RESHAPE candidates
    order = [op.index for op in g.operators]
    ds = reshape_decisions(g, order) + candidates(g, order)
    kinds = {d.kind for d in ds}
    assert {"depthwise", "elementwise"} <= kinds
    for d in ds:
        op = g.operators[d.op]
        want = (d.kind == "reshape" and op.opcode == "RESHAPE") or \
               (d.kind == "elementwise" and op.opcode in TFLM_INPLACE)
        assert allow(g, d) == want, (d, op.opcode)
    data = serialize(g)
    tp = plan_tflm(parse(data), offline_plan.operator_outputs(data), offline_plan.tensor_count(data))
    m = tflite.Model.GetRootAs(data, 0)
    codes = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    written = [codes[m.OperatorCodes(m.Subgraphs(0).Operators(k).OpcodeIndex()).BuiltinCode()]
               for k in tp.inplace_ops]
    assert all(op in TFLM_INPLACE for op in written)
    # buildtool's own plan of the same graph runs depthwise convolutions in place; the TFLM plan never does
    own = plan_arena(g)
    assert any(g.operators[k].opcode == "DEPTHWISE_CONV_2D" for k in own.inplace_ops)


def test_lstm_state_left_to_tflm_in_the_written_file():
    """tflm_trained_lstm_int8's LSTM state tensors (variables) get -1 in the file: TFLite Micro keeps them in
    its tail and carries them between invocations (its outputs over a sequence: the test above)."""
    path = shared("real/tflm_trained_lstm_int8")
    g = parse(path.read_bytes())
    out, info = planned_model(str(path))
    offs = offline_plan.read(out)["offsets"]
    assert g.variable_tensors() and all(offs[v] == -1 for v in g.variable_tensors())
    assert all(offs[t.index] != -1 for t in g.activation_tensors() if not t.variable and t.nbytes)


def test_variable_tensors_left_to_tflm():
    """SVDF state tensors: -1 (TFLite Micro keeps variables in its tail), and no head room reserved for them."""
    path = shared("real/tflm_keyword_scrambled_8bit")
    data = path.read_bytes()
    g = parse(data)
    variables = g.variable_tensors()
    assert variables
    tp = plan_tflm(g, offline_plan.operator_outputs(data), offline_plan.tensor_count(data))
    assert all(tp.offsets[v] == -1 for v in variables)
    placed = [t for t, o in enumerate(tp.offsets) if o != -1]
    assert placed and tp.arena_bytes < sum(g.tensors[v].nbytes for v in variables) + \
        sum(g.tensors[t].nbytes for t in placed)


# -- the command: one-line refusals, nothing written, inspect ---------------------------------------------------

def test_cli_export_inspect_and_replace(tmp_path, capsys):
    src = str(shared("mlperf-tiny/vww_96_int8"))
    out = tmp_path / "planned.tflite"
    rc, o, e = run_cli(["export", "--format", "tflm", src, "-o", str(out)], capsys)
    assert rc == 0 and o.strip() == str(out) and e == ""
    rc, o, _ = run_cli(["inspect", str(out)], capsys)
    line = [x for x in o.splitlines() if "OfflineMemoryAllocation" in x]
    assert rc == 0 and len(line) == 1 and f"of {offline_plan.tensor_count(out.read_bytes())} tensors" in line[0]
    rc, o, _ = run_cli(["inspect", src], capsys)
    assert "OfflineMemoryAllocation" not in o
    again = tmp_path / "again.tflite"
    rc, o, e = run_cli(["export", "--format", "tflm", str(out), "-o", str(again)], capsys)
    assert rc == 2 and len(e.strip().splitlines()) == 1 and "--replace" in e and not again.exists()
    rc, o, e = run_cli(["export", "--format", "tflm", str(out), "-o", str(again), "--replace"], capsys)
    assert rc == 0 and offline_plan.read(again.read_bytes())["offsets"] == offline_plan.read(out.read_bytes())["offsets"]


@pytest.mark.parametrize("model,words", [
    (str(DATA / "var_accumulator_int8.tflite"), "subgraphs"),
    (str(DATA / "cf_while_int8.tflite"), "subgraphs"),
    (str(RELIABILITY / "cf_while_seed4000896.tflite"), "constant"),  # damaged: refused by the model check first
])
def test_multi_subgraph_models_refused_in_one_line(model, words, tmp_path, capsys):
    if not Path(model).exists():
        pytest.skip(f"{model} not present")
    out = tmp_path / "x.tflite"
    rc, o, e = run_cli(["export", "--format", "tflm", model, "-o", str(out)], capsys)
    assert rc == 2 and len(e.strip().splitlines()) == 1 and words in e and "Traceback" not in e
    assert not out.exists()


@pytest.mark.parametrize("args,words", [
    (["--format", "c"], "--cpu"),
    (["--format", "tflm", "--cpu", "cortex-m4"], "drop --cpu"),
    (["--format", "tflm", "--optimize", "ram"], "layer-by-layer"),
    (["--format", "tflm", "--align", "8"], "16-byte"),
    (["--format", "c", "--cpu", "host", "--replace"], "--replace"),
])
def test_cli_usage_refusals(args, words, tmp_path, capsys):
    out = tmp_path / "x.tflite"
    rc, o, e = run_cli(["export", str(shared("tiny_cnn_32"))] + args + ["-o", str(out)], capsys)
    assert rc == 2 and len(e.strip().splitlines()) == 1 and words in e and not out.exists()


def test_scratch_buffers_are_planned_as_gaps():
    """tflm_keyword_scrambled_8bit: each SVDF's scratch (measured from the operator alone) is a gap of the plan at
    its step; TFLite Micro puts its scratch buffers there and its head is the plan's arena, never above its own."""
    path = shared("real/tflm_keyword_scrambled_8bit")
    data = path.read_bytes()
    g = unfold_pads(parse(data))
    scratch = tflm_scratch(g)
    svdf = [op.index for op in g.operators if op.opcode == "SVDF"]
    assert sorted(scratch) == svdf  # TFLM's SVDF asks for scratch (its int32 activations), nothing else here
    out, info = planned_model(str(path))
    assert info.head_after == info.arena_bytes <= info.head_before
    plan = plan_tflm(g, offline_plan.operator_outputs(data), offline_plan.tensor_count(data), scratch=scratch).plan
    assert {k for k in plan.scratch} == set(scratch) and all(plan.scratch[k].size == v for k, v in scratch.items())


def test_a_plan_that_grows_the_head_is_not_written(tmp_path, capsys, monkeypatch):
    """Without the scratch measurements, every plan of tflm_keyword_scrambled_8bit leaves TFLite Micro's SVDF
    scratch buffers no gap: the export measures that and refuses in one line, writing nothing."""
    from buildtool.pipeline import tflm_export

    monkeypatch.setattr(tflm_export, "tflm_scratch", lambda g: {})
    path = shared("real/tflm_keyword_scrambled_8bit")
    out = tmp_path / "k.tflite"
    rc, o, e = run_cli(["export", "--format", "tflm", str(path), "-o", str(out)], capsys)
    assert rc == 2 and len(e.strip().splitlines()) == 1 and f"{tflm_head(path.read_bytes()):,} B" in e
    assert "scratch" in e and not out.exists()


def test_without_tflite_micro_the_plan_is_written_with_a_note(tmp_path, capsys, monkeypatch):
    from buildtool.pipeline import tflm_export

    src = str(shared("mlperf-tiny/vww_96_int8"))
    measured, info = planned_model(src)
    assert info.head_before is not None
    monkeypatch.setattr(tflm_export, "tflm_available", lambda: False)
    out = tmp_path / "p.tflite"
    rc, o, e = run_cli(["export", "--format", "tflm", src, "-o", str(out)], capsys)
    assert rc == 0 and "not measured" in e and len(e.strip().splitlines()) == 1
    assert out.read_bytes() == measured  # the first variant, which the measured export kept for vww


def test_a_malformed_plan_is_reported_and_replaced_only_when_asked(tmp_path, capsys):
    data = shared("tiny_cnn_32").read_bytes()
    n_t, n_ops = offline_plan.tensor_count(data), len(offline_plan.operator_outputs(data))
    good = offline_plan.write(data, list(range(n_ops)), [-1] * n_t)
    head = struct.pack("<3i", 0, 1, n_t)
    assert good.count(head) == 1
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(good.replace(head, struct.pack("<3i", 0, 1, n_t + 1)))  # says one offset more than it holds
    rc, o, e = run_cli(["inspect", str(bad)], capsys)
    line = [x for x in o.splitlines() if "OfflineMemoryAllocation" in x]
    assert rc == 0 and len(line) == 1 and f"says {n_t + 1} offsets but holds {n_t}" in line[0]
    out = tmp_path / "p.tflite"
    rc, o, e = run_cli(["export", "--format", "tflm", str(bad), "-o", str(out)], capsys)
    assert rc == 2 and len(e.strip().splitlines()) == 1 and "--replace" in e and not out.exists()
    rc, o, e = run_cli(["export", "--format", "tflm", str(bad), "-o", str(out), "--replace"], capsys)
    assert rc == 0 and offline_plan.read(out.read_bytes())["tensors"] == n_t


def branches_model() -> bytes:
    """A 16 KiB tensor the file computes first but reads last, beside a chain of 8 KiB ones: run later it
    need not live through the chain (the planned order differs from the file's)."""
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("branches", seed=1)
    x = b.input((1, 16, 16, 8))
    a = b.conv2d(x, 64, 1)
    c = b.conv2d(b.conv2d(b.conv2d(x, 32, 3), 32, 3), 8, 3)
    return serialize(b.finish([b.add(b.conv2d(a, 8, 1), c)]))


def test_the_planned_order_is_written_and_run(tmp_path):
    path = tmp_path / "branches.tflite"
    path.write_bytes(branches_model())
    data = path.read_bytes()
    out, info = planned_model(str(path))
    assert info.order != sorted(info.order) and info.head_after < info.head_before
    m = tflite.Model.GetRootAs(out, 0)
    sg = m.Subgraphs(0)
    made = set(sg.InputsAsNumpy())
    for k in range(sg.OperatorsLength()):  # every operator after what it reads
        op = sg.Operators(k)
        for i in op.InputsAsNumpy():
            assert i < 0 or i in made or sg.Tensors(int(i)).Buffer() and m.Buffers(sg.Tensors(int(i)).Buffer()).DataLength()
        made.update(op.OutputsAsNumpy())
    assert _ops(m) == [_ops(tflite.Model.GetRootAs(data, 0))[k] for k in info.order]
    sets = sample_inputs(data, 3, seed=5)
    assert tflm_outputs(out, sets) == tflm_outputs(data, sets)
    assert [[y.tobytes() for y in tflite_ref_run(out, xs)] for xs in sets] == \
           [[y.tobytes() for y in tflite_ref_run(data, xs)] for xs in sets]
