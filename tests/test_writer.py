"""TFLite writer and graph builder: round trips through the reader and TFLite Micro, quantisation sanity."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tflite

from buildtool.model import opdefs, ops
from buildtool.model.control import CONTROL_SUBGRAPHS
from buildtool.zoo.builder import GraphBuilder, range_quant
from buildtool.errors import ModelError
from buildtool.model.reader import load, parse
from buildtool.model.writer import save, serialize
from conftest import SHARED_MODEL_NAMES, fixed_input, reference_outputs, shared_model, tflm_run


def assert_graphs_equal(a, b):
    assert len(a.tensors) == len(b.tensors)
    for x, y in zip(a.tensors, b.tensors):
        assert (x.index, x.name, tuple(x.shape), x.dtype) == (y.index, y.name, tuple(y.shape), y.dtype)
        assert x.quant == y.quant, x.name
        assert (x.data is None) == (y.data is None), x.name
        if x.data is not None:
            assert x.data.dtype == y.data.dtype and np.array_equal(x.data, y.data), x.name
    assert [(o.opcode, tuple(o.inputs), tuple(o.outputs), o.options) for o in a.operators] == \
           [(o.opcode, tuple(o.inputs), tuple(o.outputs), o.options) for o in b.operators]
    assert (list(a.inputs), list(a.outputs), a.description) == (list(b.inputs), list(b.outputs), b.description)


def all_ops_graph(seed=1, calib=None, tflm_only=False):
    """Every supported operator at least once, with a few non-default options; tflm_only leaves out GELU (TFLite
    Micro does not register it, and TFLite's interpreter lacks others here, e.g. BROADCAST_TO)."""
    b = GraphBuilder("all_ops", seed=seed, calib_batch=2)
    x = b.input((1, 16, 16, 3), calib=calib)
    a = b.conv2d(x, 8, 3, 2)
    d = b.depthwise(a, 3, 1)
    r = b.add(a, d)
    p = b.conv2d(r, 8, 1, activation="NONE")
    m = b.max_pool(p, 2)
    v = b.avg_pool(b.avg_pool(p, 3, 2, "SAME"), 1, 1)
    c = b.concat([m, v])
    h = b.hard_swish(c)
    h = b.leaky_relu(b.sub(b.mul(h, h), h), 0.1)
    h = b.pad(h, [[0, 0], [1, 1], [1, 1], [0, 0]])
    h = b.logistic(h)
    s1, s2 = b.split(h, 2, axis=3)
    t = b.strided_slice(s2, [0, 1, 0, 0], [1, 5, 6, 8], [1, 2, 1, 1])
    t = b.reshape(t, (1, 2 * 6 * 8))
    k = b.conv2d(s1, 4, 3, 1, "VALID", dilation=2, activation="RELU")
    k = b.transpose_conv(k, 4, 2, 2, "SAME")
    k = extra_ops_chain(b, k)
    par = parity_ops_branch(b, k)
    k = b.depthwise(k, 3, 2, multiplier=2, activation="RELU_N1_TO_1")
    n = b.fully_connected(b.mean(k), 10)
    o = b.softmax(n)
    sv = b.svdf(n, 4, rank=2, memory=3)
    ls = b.lstm(b.reshape(n, (1, 2, 5)), 3, cell_clip=2.0)
    dl = b.delay(sv, init=np.arange(4) - 2)  # READ_VARIABLE, ASSIGN_VARIABLE: a resource variable
    q = b.quantize(t, 0.05, 3)
    f = b.dequantize(q)
    gelu = [] if tflm_only else [b.gelu(b.gelu(n, approximate=True), out_quant=(0.02, -100))]
    return b, b.finish([o, t, f, sv, ls, par[0], *par[1], dl, *gelu])


def extra_ops_chain(b, k):
    """The activation, layout and resize operators (ops_extra.py), shape in = shape out."""
    _, h, w, _ = b.shape(k)
    e = b.space_to_depth(b.resize_nearest(k, (2 * h, 2 * w), align_corners=True), 2)
    e = b.resize_bilinear(b.depth_to_space(e, 2), (h, w), half_pixel_centers=True)
    e = b.transpose(b.transpose(e, (0, 2, 1, 3)), (0, 2, 1, 3))
    e = b.squeeze(b.expand_dims(e, 0), [0])
    return b.minimum(b.maximum(b.relu(b.tanh(e)), b.prelu(e)), b.relu6(e))


def parity_ops_branch(b, k):
    """ABS, RSQRT, the comparisons, the logical operators, SELECT_V2, REDUCE_MIN/MAX and SUM (issue 33): a side
    branch."""
    from buildtool.model.ir import Quant

    a = b.abs(k, out_quant=(0.03, -128))
    r = b.rsqrt(a, out_quant=(0.05, -120))
    q = b.quant_of(r)
    lim = b.const("lim", np.full((1,), -100, np.int8), "int8", Quant(np.array([q[0]], np.float32),
                                                                      np.array([q[1]], np.int64), 0))
    c = [b.compare(op, r, lim) for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")]
    c = b.logical("LOGICAL_OR", b.logical("LOGICAL_AND", c[0], b.logical("LOGICAL_NOT", c[1])),
                  b.logical("LOGICAL_OR", b.logical("LOGICAL_AND", c[2], c[3]), b.logical("LOGICAL_AND", c[4], c[5])))
    s = b.select_v2(c, r, b.rsqrt(a, out_quant=q))
    s = b.reduce("SUM", b.reduce("REDUCE_MAX", b.reduce("REDUCE_MIN", s, (3,), keep_dims=True), (2,)), (1,))
    return s, layout_ops_branch(b, k) + arith_ops_branch(b, k)


def layout_ops_branch(b, k):
    """SLICE, PADV2, SPLIT_V, PACK and UNPACK (issue 33): a side branch of byte moves."""
    _, h, w, c = b.shape(k)
    s = b.slice(k, [0, 1, 0, 0], [1, h - 1, -1, c])
    s = b.padv2(s, [[0, 0], [1, 0], [0, 1], [0, 0]], 17)
    parts = b.split_v(s, [1, -1], axis=3)
    p = b.pack([parts[0], parts[0]], axis=1)
    return [*b.unpack(p, axis=1), parts[1]]


def arith_ops_branch(b, k):
    """SQUARED_DIFFERENCE, ZEROS_LIKE, ADD_N and CUMSUM (issue 33): a side branch."""
    d = b.squared_difference(k, b.relu(k))
    return [b.cumsum(b.add_n([d, b.zeros_like(d), d]), 2, reverse=True), *index_ops_branch(b, k)]


def index_ops_branch(b, k):
    """ARG_MAX, ARG_MIN, GATHER, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, REVERSE_V2, BROADCAST_TO,
    BATCH_MATMUL, ELU, L2_NORMALIZATION, GATHER_ND, CAST, SHAPE, LOG_SOFTMAX, DIV, NEG (float32),
    EMBEDDING_LOOKUP and FILL (issue 33): a side branch."""
    _, h, w, c = b.shape(k)
    m = b.mirror_pad(b.gather(k, [c - 1, 0], axis=3), [[0, 0], [1, 1], [0, 1], [1, 0]], "SYMMETRIC")
    s = b.batch_to_space(b.space_to_batch(b.slice(m, [0, 0, 0, 0], [1, 2, -1, -1]), [2, 1], [[0, 0], [0, 0]]),
                         [2, 1], [[1, 0], [0, 1]])
    r = b.broadcast_to(b.reverse(b.gather(s, [0], axis=1), [2, 3]), (1, 2) + b.shape(s)[2:])
    att = b.batch_matmul(b.reshape(k, (1, h * w, c)), b.reshape(k, (1, h * w, c)), adj_y=True)
    nd = b.gather_nd(b.l2_normalization(b.elu(k)), [[0, 1], [0, 0]])
    return [b.argminmax("ARG_MAX", r, 2), b.argminmax("ARG_MIN", s, -1),
            b.batch_matmul(att, b.reshape(k, (1, h * w, c))),
            b.cast(nd), b.shape_of(nd), b.div(b.log_softmax(nd), nd, "RELU"), b.quantize(b.neg(b.dequantize(nd))),
            b.embedding_lookup(b.argminmax("ARG_MAX", b.mean(k), 1), np.arange(3 * c + 6).reshape(c + 2, 3) - 40,
                               0.02, -3),
            b.fill((1, 2, 3), b.squeeze(b.reduce("REDUCE_MAX", k, (1, 2, 3))))]


def first_buffer_offsets(data: bytes):
    m = tflite.Model.GetRootAs(data, 0)
    out = []
    for i in range(m.BuffersLength()):
        buf = m.Buffers(i)
        if buf.DataLength():
            out.append(buf._tab.Vector(buf._tab.Offset(4)))
    return m, out


# -- writer: real converter models -------------------------------------------

@pytest.mark.parametrize("name", SHARED_MODEL_NAMES)
def test_shared_model_round_trip_runs_identically(name):
    path = shared_model(name)
    ref = reference_outputs()[f"{name}.tflite"]
    g = load(str(path))
    data = serialize(g)
    assert data == serialize(g), "serialize must be deterministic"
    assert_graphs_equal(g, parse(data, name=g.name))
    x = fixed_input(ref["input_shape"])
    ours = tflm_run(data, [x])[0]
    assert np.array_equal(ours.reshape(-1), np.array(ref["tflm_output"], dtype=np.int8))
    assert np.array_equal(ours, tflm_run(path.read_bytes(), [x])[0])


def test_file_layout():
    _, g = all_ops_graph()
    data = serialize(g)
    assert data[4:8] == b"TFL3"
    m, offsets = first_buffer_offsets(data)
    # subgraph 1: the CALL_ONCE init subgraph of the resource variable, its start value in the last buffer
    assert m.Version() == 3 and m.SubgraphsLength() == 2 and m.MetadataLength() == 0
    assert m.Subgraphs(1).OperatorsLength() == 2 and m.Buffers(m.BuffersLength() - 1).DataLength() == 4
    assert m.Buffers(0).DataLength() == 0
    assert m.BuffersLength() == 1 + sum(t.is_const for t in g.tensors) + 1
    assert offsets and all(o % 16 == 0 for o in offsets)
    used = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        assert oc.DeprecatedBuiltinCode() == min(oc.BuiltinCode(), 127)
        used.append(oc.BuiltinCode())
    builtin = [op for op in ops.SUPPORTED if not opdefs.BY_NAME[op].custom  # the signal library: test_signal.py
               and op not in CONTROL_SUBGRAPHS]  # IF, WHILE (other subgraphs): test_control_flow.py
    assert len(set(used)) == len(used) == len(builtin) + 2  # and CALL_ONCE, VAR_HANDLE
    assert {op.opcode for op in g.operators} == set(builtin)


def test_all_ops_round_trip_and_tflm_matches_builder_simulation():
    x = fixed_input((1, 16, 16, 3))
    b, g = all_ops_graph(calib=x, tflm_only=True)
    data = serialize(g)
    assert_graphs_equal(g, parse(data, name=g.name))
    outs = tflm_run(data, [x], n_outputs=3)
    for t, got in zip(g.outputs[:2], outs):
        want = b.simulate(t)
        assert got.shape == want.shape and got.dtype == np.int8
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 3
        assert len(np.unique(got)) >= 5
    s, zp = b.quant_of(g.operators[-1].inputs[0])
    assert outs[2].dtype == np.float32
    assert np.allclose(outs[2], (b.simulate(g.operators[-1].inputs[0]).astype(np.float32) - zp) * s, atol=4 * s)


def test_save_is_atomic(tmp_path):
    _, g = all_ops_graph()
    path = tmp_path / "m.tflite"
    save(g, str(path))
    assert path.read_bytes() == serialize(g)
    assert os.listdir(tmp_path) == ["m.tflite"]
    bad = g.copy()
    bad.tensors[0] = type(bad.tensors[0])(0, "x", (1, 16, 16, 3), "complex64")
    with pytest.raises(ModelError):
        save(bad, str(tmp_path / "bad.tflite"))
    assert os.listdir(tmp_path) == ["m.tflite"]


# -- builder ------------------------------------------------------------------

def test_builder_is_deterministic_and_seeded():
    assert serialize(all_ops_graph(seed=5)[1]) == serialize(all_ops_graph(seed=5)[1])
    assert serialize(all_ops_graph(seed=5)[1]) != serialize(all_ops_graph(seed=6)[1])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_shapes_follow_conv_out_size(padding):
    rng = np.random.default_rng(0)
    for _ in range(12):
        h, w = (int(v) for v in rng.integers(7, 20, size=2))
        k, s, d = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
        b = GraphBuilder(seed=int(rng.integers(1000)), calib_batch=1)
        x = b.input((1, h, w, 3))
        c = b.conv2d(x, 5, k, s, padding, dilation=d)
        dw = b.depthwise(x, k, s, padding, dilation=d, multiplier=2)
        g = b.finish([c, dw])
        want = (1, ops.conv_out_size(h, k, s, d, padding), ops.conv_out_size(w, k, s, d, padding))
        assert g.tensors[c].shape == want + (5,) and g.tensors[dw].shape == want + (6,)
        outs = tflm_run(serialize(g), [fixed_input((1, h, w, 3))], n_outputs=2)
        assert [o.shape for o in outs] == [want + (5,), want + (6,)]


def test_deep_network_does_not_collapse():
    """Forty layers deep, activations still span most of the int8 range on the test input."""
    b = GraphBuilder("deep", seed=3, calib_batch=2)
    x = b.input((1, 12, 12, 4))
    for i in range(20):
        x = b.conv2d(x, 12, 3, activation="RELU6" if i % 2 else "NONE")
        x = b.depthwise(x, 3)
    out = tflm_run(serialize(b.finish()), [fixed_input((1, 12, 12, 4))])[0]
    assert len(np.unique(out)) > 64


def test_quantisation_rules():
    b = GraphBuilder(seed=0, calib_batch=2)
    x = b.input((1, 8, 8, 3), scale=0.02, zp=5)
    assert b.quant_of(x) == (pytest.approx(0.02), 5)
    c = b.conv2d(x, 4, 3, out_quant=(0.05, -10))
    assert b.quant_of(c) == (pytest.approx(0.05), -10)
    r6 = b.conv2d(c, 4, 1)
    assert b.quant_of(r6)[1] == -128 and b.quant_of(r6)[0] <= 6 / 255 + 1e-7
    g = b.finish([r6])
    conv = g.operators[0]
    w, bias = g.tensors[conv.inputs[1]], g.tensors[conv.inputs[2]]
    assert w.quant.per_channel and w.quant.axis == 0 and not w.quant.zero_point.any()
    assert np.abs(w.data).max(axis=(1, 2, 3)).tolist() == [127] * 4  # symmetric, full range per channel
    assert bias.dtype == "int32" and np.allclose(bias.quant.scale, 0.02 * w.quant.scale, rtol=1e-6)
    p = b.concat([c, r6])  # different quantisations: requantised first, one scale for all
    sm = b.softmax(b.fully_connected(b.mean(p), 3))
    g = b.finish([sm])
    cat = next(op for op in g.operators if op.opcode == "CONCATENATION")
    assert {b.quant_of(i) for i in list(cat.inputs) + list(cat.outputs)} == {b.quant_of(p)}
    assert sum(op.opcode == "QUANTIZE" for op in g.operators) >= 1
    assert b.quant_of(sm) == (1 / 256, -128)


def test_op_seed_gives_its_own_weights():
    def weights(extra_first):
        b = GraphBuilder(seed=9, calib_batch=1)
        x = b.input((1, 6, 6, 3))
        if extra_first:
            b.conv2d(x, 4, 3)
        c = b.conv2d(x, 4, 3, seed=42)
        g = b.finish([c])
        return g.tensors[g.operators[-1].inputs[1]].data
    assert np.array_equal(weights(False), weights(True))


def test_concat_with_matching_explicit_quant_needs_no_requantisation():
    b = GraphBuilder(seed=0, calib_batch=1)
    x = b.input((1, 4, 4, 2))
    y = b.conv2d(x, 3, 1, out_quant=(0.05, -10))
    z = b.conv2d(x, 5, 1, out_quant=(0.05, -10))
    c = b.concat([y, z], out_quant=(0.05, -10))
    g = b.finish([c])
    assert [op.opcode for op in g.operators] == ["CONV_2D", "CONV_2D", "CONCATENATION"]
    assert g.tensors[c].shape == (1, 4, 4, 8)


def test_range_quant_represents_zero():
    for lo, hi in [(-1.0, 3.0), (0.0, 6.0), (-5.0, -1.0), (2.0, 9.0), (0.0, 0.0)]:
        s, zp = range_quant(lo, hi)
        assert -128 <= zp <= 127 and s > 0
        assert (min(lo, 0) - s) <= (-128 - zp) * s and (127 - zp) * s >= max(hi, 0) - s


# -- options: data in the operator table, read and written by tflite_options ----------------------------
def test_every_option_field_names_the_generated_schema():
    """A typo in a row's table or field name would only show on the first model that uses it."""
    from buildtool.model.opdefs import OPDEFS
    from buildtool.model.tflite_options import vtable_offset

    for d in (d for d in OPDEFS if d.options):
        cls = getattr(tflite, d.options)
        assert callable(getattr(tflite, f"{d.options}Start")) and callable(getattr(tflite, f"{d.options}End"))
        for f in d.option_fields:
            assert callable(getattr(tflite, f"{d.options}Add{f.schema}")), (d.name, f)
            if f.kind in ("ints", "output_shape"):
                assert callable(getattr(tflite, f"{d.options}Start{f.schema}Vector")), (d.name, f)
                assert vtable_offset(d.options, f.schema) >= 4
            elif f.kind != "output_shape":
                assert callable(getattr(cls, f.schema)), (d.name, f)
            assert f.kind in ("int", "bool", "float", "padding", "activation", "ints", "output_shape", "refuse")
        if not d.options_required:  # a missing optional table reads as the defaults
            assert all(f.default is not ... for f in d.option_fields if f.kind not in ("output_shape", "refuse"))


def test_a_refused_option_value_is_one_line(monkeypatch):
    """FULLY_CONNECTED with shuffled weights (WeightsFormat != 0) is refused by its row's 'refuse' field."""
    import dataclasses

    from buildtool.model import opdefs
    from buildtool.model.opdefs import Field

    b = GraphBuilder("fc_shuffled", seed=3)
    g = b.finish([b.fully_connected(b.input((1, 8), scale=0.05, zp=0), 4)])
    real = opdefs.BY_NAME["FULLY_CONNECTED"]
    assert parse(serialize(g)).operators[0].options == {"activation": "NONE", "keep_num_dims": False}
    monkeypatch.setitem(opdefs.BY_NAME, "FULLY_CONNECTED", dataclasses.replace(
        real, option_fields=real.option_fields + (Field("weights_format", "WeightsFormat"),)))
    g.operators[0].options["weights_format"] = 1
    data = serialize(g)
    monkeypatch.setitem(opdefs.BY_NAME, "FULLY_CONNECTED", real)
    with pytest.raises(ModelError, match=r"^<bytes>: operator 0 \(FULLY_CONNECTED\) uses shuffled weights, which are not "
                                         r"supported$"):
        parse(data)
