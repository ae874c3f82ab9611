"""Reference executor: byte-exact against TFLite Micro, arena semantics, banded kernels."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from buildtool.model import ops
from buildtool.plan.arena.naive import naive_plan
from buildtool.zoo.builder import GraphBuilder
from buildtool.errors import PlanError, UsageError
from buildtool.plan.arena.execute import run, run_unplanned
from buildtool.plan import Buffer, align_up
from buildtool.refops import BANDED, KERNELS, band_input_rows, kernel_inputs
from buildtool.refops.quant_math import mbqm, quantize_multiplier, rdbpot, srdhm
from buildtool.model.reader import parse
from buildtool.model.writer import serialize
from conftest import SHARED_MODEL_NAMES, fixed_input, reference_outputs, shared_model, tflm_run
from opgen_control import CONTROL_GENERATORS
from opgen_extra import EXTRA_GENERATORS
from opgen_signal import SIGNAL_GENERATORS, signal_input

ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


# -- integer primitives ----------------------------------------------------------
def test_quantize_multiplier_matches_frexp_rounding():
    m, s = quantize_multiplier(np.array([0.5, 1.0, 0.75, 3.0, 1e-12, 0.0, 1 - 2 ** -40]))
    assert m.tolist() == [1 << 30, 1 << 30, 3 << 29, 3 << 29, 0, 0, 1 << 30]
    assert s.tolist() == [0, 1, 0, 2, 0, 0, 1]


def test_fixed_point_rounding_edges():
    assert srdhm(np.array([-(1 << 31)]), np.array([-(1 << 31)])).tolist() == [(1 << 31) - 1]
    # gemmlowp nudges negative products by 1 - 2**30, so -1.5 becomes -1 while 1.5 becomes 2
    assert srdhm(np.array([3, -3]), np.array([1 << 30, 1 << 30])).tolist() == [2, -1]
    assert rdbpot(np.array([5, -5, 6, -6, 7, -7]), 1).tolist() == [3, -3, 3, -3, 4, -4]
    # multiplier 0.5 with shift -1: x/4, rounded half away from zero
    assert mbqm(np.array([2, -2, 6, -6]), 1 << 30, -1).tolist() == [1, -1, 2, -2]


# -- real models ------------------------------------------------------------------
@pytest.mark.parametrize("name", SHARED_MODEL_NAMES)
def test_shared_model_matches_tflm(name):
    data = shared_model(name).read_bytes()
    ref = reference_outputs()[f"{name}.tflite"]
    g = parse(data, name=name)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    out = run(g, naive_plan(g), [x])[0]
    expected = np.array(ref["tflm_output"], dtype=np.int8).reshape(out.shape)
    assert out.dtype == np.int8 and np.array_equal(out, expected)
    assert np.array_equal(out, tflm_run(data, [x])[0].reshape(out.shape))
    assert np.array_equal(out, run_unplanned(g, [x])[0])


# -- one-op models against TFLite Micro ------------------------------------------------
def check_against_tflm(g, seed=0):
    """Serialize g, run TFLM and both executors on random inputs; all outputs byte-identical."""
    rng = np.random.default_rng(seed)
    xs = []
    for i in g.inputs:
        t = g.tensors[i]
        if t.dtype == "float32":
            xs.append(rng.uniform(-3, 3, size=t.shape).astype(np.float32))
        elif t.dtype in ("uint32", "uint64") or (t.dtype == "int16" and t.quant is None):  # the signal library
            xs.append(signal_input(rng, t))
        else:
            xs.append(rng.integers(-128, 128, size=t.shape, dtype=np.int8))
    expected = tflm_run(serialize(g), xs, len(g.outputs))
    got = run(g, naive_plan(g), xs)
    base = run_unplanned(g, xs)
    for k, (e, y, u) in enumerate(zip(expected, got, base)):
        e = np.asarray(e).reshape(y.shape)
        assert y.dtype == e.dtype, (k, y.dtype, e.dtype)
        assert np.array_equal(y, e), (k, g.operators, np.abs(y.astype(float) - e).max())
        assert np.array_equal(y, u)


def rquant(rng):
    return float(np.float32(rng.uniform(0.005, 0.2))), int(rng.integers(-128, 128))


def _in(b, rng, shape):
    s, zp = rquant(rng)
    return b.input(shape, scale=s, zp=zp)


def _valid_size(rng, k, d, lo=1, hi=12):
    return int(rng.integers(max(lo, (k - 1) * d + 1), max(lo, (k - 1) * d + 1) + hi))


def gen_conv(rng):
    b = GraphBuilder("conv", seed=int(rng.integers(1 << 30)))
    k, d = int(rng.choice([1, 2, 3, 5])), int(rng.choice([1, 1, 2]))
    h, w = _valid_size(rng, k, d), _valid_size(rng, k, d)
    x = _in(b, rng, (1, h, w, int(rng.integers(1, 9))))
    oq = rquant(rng) if rng.random() < 0.5 else None
    b.conv2d(x, int(rng.integers(1, 9)), k, int(rng.integers(1, 4)), str(rng.choice(["SAME", "VALID"])),
             str(rng.choice(ACTS)), dilation=d, bias=bool(rng.random() < 0.8), out_quant=oq)
    return per_tensor_weights(b.finish(), rng)


def gen_depthwise(rng):
    b = GraphBuilder("dw", seed=int(rng.integers(1 << 30)))
    k, d = int(rng.choice([1, 3, 5])), int(rng.choice([1, 1, 2]))
    h, w = _valid_size(rng, k, d), _valid_size(rng, k, d)
    x = _in(b, rng, (1, h, w, int(rng.integers(1, 9))))
    oq = rquant(rng) if rng.random() < 0.5 else None
    b.depthwise(x, k, int(rng.integers(1, 4)), str(rng.choice(["SAME", "VALID"])), str(rng.choice(ACTS)),
                multiplier=int(rng.choice([1, 1, 2, 3])), dilation=d, out_quant=oq)
    return per_tensor_weights(b.finish(), rng)


def per_tensor_weights(g, rng):
    """Half the time, collapse the weights' per-channel scales to one (per-tensor quantisation)."""
    if rng.random() < 0.5:
        w = g.tensors[g.operators[0].inputs[1]]
        w.quant = dataclasses.replace(w.quant, scale=w.quant.scale[:1].copy(), zero_point=w.quant.zero_point[:1])
    return g


def gen_fc(rng):
    b = GraphBuilder("fc", seed=int(rng.integers(1 << 30)))
    x = _in(b, rng, (int(rng.integers(1, 4)), int(rng.integers(1, 200))))
    b.fully_connected(x, int(rng.integers(1, 40)), str(rng.choice(ACTS)), bias=bool(rng.random() < 0.8),
                      out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return per_tensor_weights(b.finish(), rng)


def _binary(rng, opcode):
    b = GraphBuilder(opcode.lower(), seed=int(rng.integers(1 << 30)))
    shape = [1] + [int(rng.integers(1, 6)) for _ in range(3)]
    other = [d if rng.random() < 0.6 else 1 for d in shape]
    a = _in(b, rng, tuple(shape))
    c = _in(b, rng, tuple(other))
    if rng.random() < 0.5:
        a, c = c, a
    fn = {"ADD": b.add, "MUL": b.mul, "SUB": b.sub}[opcode]
    fn(a, c, str(rng.choice(ACTS)), out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


def gen_concat(rng):
    b = GraphBuilder("concat", seed=int(rng.integers(1 << 30)))
    axis = int(rng.integers(0, 4))
    base = [1] + [int(rng.integers(1, 5)) for _ in range(3)]
    q = rquant(rng)
    xs = []
    for _ in range(int(rng.integers(1, 4))):
        s = list(base)
        if axis:
            s[axis] = int(rng.integers(1, 5))
        xs.append(b.input(tuple(s), scale=q[0], zp=q[1]))
    b.concat(xs, axis=axis - 4 if rng.random() < 0.5 else axis, out_quant=q)
    return b.finish()


def _pool(rng, opcode):
    b = GraphBuilder("pool", seed=int(rng.integers(1 << 30)))
    k = int(rng.integers(1, 5))
    x = _in(b, rng, (1, _valid_size(rng, k, 1), _valid_size(rng, k, 1), int(rng.integers(1, 6))))
    fn = b.avg_pool if opcode == "AVERAGE_POOL_2D" else b.max_pool
    fn(x, (k, int(rng.integers(1, 5))), (int(rng.integers(1, 4)), int(rng.integers(1, 4))),
       str(rng.choice(["SAME", "VALID"])), str(rng.choice(ACTS)))
    return b.finish()


def gen_mean(rng):
    b = GraphBuilder("mean", seed=int(rng.integers(1 << 30)))
    x = _in(b, rng, (1, int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.integers(1, 9))))
    axes = [[1, 2], [2, 1], [1], [2], [3], [1, 2, 3], [-2, -3]][int(rng.integers(0, 7))]
    b.mean(x, axes, keep_dims=bool(rng.random() < 0.5), out_quant=rquant(rng) if rng.random() < 0.7 else None)
    return b.finish()


def gen_pad(rng):
    b = GraphBuilder("pad", seed=int(rng.integers(1 << 30)))
    x = _in(b, rng, (1, int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 5))))
    b.pad(x, [[0, 0]] + [[int(rng.integers(0, 3)), int(rng.integers(0, 3))] for _ in range(3)])
    return b.finish()


def gen_reshape(rng):
    b = GraphBuilder("reshape", seed=int(rng.integers(1 << 30)))
    h, w, c = (int(rng.integers(1, 6)) for _ in range(3))
    x = _in(b, rng, (1, h, w, c))
    b.reshape(x, [(1, h * w * c), (1, h * w, c), (1, c, w, h)][int(rng.integers(0, 3))])
    return b.finish()


def gen_softmax(rng):
    b = GraphBuilder("softmax", seed=int(rng.integers(1 << 30)))
    shape = [(1, int(rng.integers(1, 300))), (int(rng.integers(1, 4)), int(rng.integers(1, 30))),
             (1, 3, 4, int(rng.integers(1, 20)))][int(rng.integers(0, 3))]
    b.softmax(_in(b, rng, shape), beta=float(rng.choice([1.0, 0.5, 2.0])))
    return b.finish()


def gen_logistic(rng):
    b = GraphBuilder("logistic", seed=int(rng.integers(1 << 30)))
    s = float(np.float32(rng.uniform(0.01, 0.5)))
    b.logistic(b.input((1, 8, 8, 4), scale=s, zp=int(rng.integers(-128, 128))))
    return b.finish()


def gen_hard_swish(rng):
    b = GraphBuilder("hard_swish", seed=int(rng.integers(1 << 30)))
    s = float(np.float32(rng.uniform(0.005, 0.3)))
    b.hard_swish(b.input((1, 8, 8, 4), scale=s, zp=int(rng.integers(-128, 128))),
                 out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


def gen_quantize(rng):
    b = GraphBuilder("quantize", seed=int(rng.integers(1 << 30)))
    if rng.random() < 0.5:
        x = b.input((1, 5, 5, 3), dtype="float32")
    else:
        x = _in(b, rng, (1, 5, 5, 3))
    b.quantize(x, *rquant(rng))
    return b.finish()


def gen_dequantize(rng):
    b = GraphBuilder("dequantize", seed=int(rng.integers(1 << 30)))
    b.dequantize(_in(b, rng, (1, 4, 4, 3)))
    return b.finish()


def gen_split(rng):
    b = GraphBuilder("split", seed=int(rng.integers(1 << 30)))
    n = int(rng.integers(1, 4))
    axis = int(rng.integers(1, 4))
    shape = [1] + [int(rng.integers(1, 4)) for _ in range(3)]
    shape[axis] *= n
    outs = b.split(_in(b, rng, tuple(shape)), n, axis=axis if rng.random() < 0.5 else axis - 4)
    return b.finish(outs)


def gen_strided_slice(rng):
    b = GraphBuilder("slice", seed=int(rng.integers(1 << 30)))
    shape = (1,) + tuple(int(rng.integers(1, 8)) for _ in range(3))
    x = _in(b, rng, shape)
    begin, end, strides = [0], [1], [1]
    for n in shape[1:]:
        lo = int(rng.integers(0, n))
        begin.append(lo)
        end.append(int(rng.integers(lo + 1, n + 1)))
        strides.append(int(rng.integers(1, 4)))
    b.strided_slice(x, begin, end, strides, begin_mask=int(rng.integers(0, 16)), end_mask=int(rng.integers(0, 16)),
                    shrink_axis_mask=int(rng.choice([0, 0, 2, 8])))
    return b.finish()


def gen_leaky_relu(rng):
    b = GraphBuilder("leaky_relu", seed=int(rng.integers(1 << 30)))
    x = _in(b, rng, (1, int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9))))
    b.leaky_relu(x, float(rng.choice([0.01, 0.1, 0.3, 2.0, -0.25])),
                 out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b.finish()


def gen_transpose_conv(rng):
    b = GraphBuilder("tconv", seed=int(rng.integers(1 << 30)))
    x = _in(b, rng, (1, int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9))))
    b.transpose_conv(x, int(rng.integers(1, 9)), (int(rng.integers(1, 4)), int(rng.integers(1, 5))),
                     (int(rng.integers(1, 3)), int(rng.integers(1, 4))), str(rng.choice(["SAME", "VALID"])),
                     bias=bool(rng.random() < 0.8), out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return per_tensor_weights(b.finish(), rng)
def gen_svdf(rng):
    b = GraphBuilder("svdf", seed=int(rng.integers(1 << 30)))
    x = _in(b, rng, (1, int(rng.integers(1, 30))))
    b.svdf(x, int(rng.integers(1, 12)), int(rng.integers(1, 4)), int(rng.integers(1, 8)),
           str(rng.choice(["int8", "int16"])))
    return b.finish()


def gen_lstm(rng):
    b = GraphBuilder("lstm", seed=int(rng.integers(1 << 30)))
    tm = bool(rng.random() < 0.3)
    steps, batch = int(rng.integers(1, 6)), int(rng.integers(1, 3))
    x = _in(b, rng, (steps, batch, int(rng.integers(1, 12))) if tm else (batch, steps, int(rng.integers(1, 12))))
    b.lstm(x, int(rng.integers(1, 10)), time_major=tm, cell_clip=float(rng.choice([0.0, 3.0])),
           cell_scale_power=int(rng.integers(-13, -9)))
    return b.finish()


GENERATORS = {
    "CONV_2D": gen_conv, "DEPTHWISE_CONV_2D": gen_depthwise, "FULLY_CONNECTED": gen_fc,
    "ADD": lambda r: _binary(r, "ADD"), "MUL": lambda r: _binary(r, "MUL"), "CONCATENATION": gen_concat,
    "AVERAGE_POOL_2D": lambda r: _pool(r, "AVERAGE_POOL_2D"), "MAX_POOL_2D": lambda r: _pool(r, "MAX_POOL_2D"),
    "MEAN": gen_mean, "PAD": gen_pad, "RESHAPE": gen_reshape, "SOFTMAX": gen_softmax, "LOGISTIC": gen_logistic,
    "QUANTIZE": gen_quantize, "DEQUANTIZE": gen_dequantize, "HARD_SWISH": gen_hard_swish, "SPLIT": gen_split,
    "STRIDED_SLICE": gen_strided_slice, "SVDF": gen_svdf, "UNIDIRECTIONAL_SEQUENCE_LSTM": gen_lstm,
}
GENERATORS.update({"LEAKY_RELU": gen_leaky_relu, "SUB": lambda r: _binary(r, "SUB"),
                   "TRANSPOSE_CONV": gen_transpose_conv})
GENERATORS.update(EXTRA_GENERATORS)
GENERATORS.update(SIGNAL_GENERATORS)
GENERATORS.update(CONTROL_GENERATORS)


def test_every_supported_op_has_a_kernel_and_a_generator():
    assert set(KERNELS) == set(ops.SUPPORTED) == set(GENERATORS)


@pytest.mark.parametrize("opcode", ops.SUPPORTED)
def test_random_one_op_models_match_tflm(opcode):
    rng = np.random.default_rng(sum(map(ord, opcode)))
    for case in range(20):
        g = GENERATORS[opcode](rng)
        assert opcode in {op.opcode for op in g.operators}
        check_against_tflm(g, seed=case)


# -- banded execution (operator splitting, patch fusion) ----------------------------------
def _band_graphs():
    b = GraphBuilder("bands", seed=3)
    x = b.input((1, 13, 11, 4))
    outs = [b.conv2d(x, 5, 3, 2, "SAME", dilation=1), b.conv2d(x, 3, (5, 3), (1, 2), "VALID", dilation=(2, 1)),
            b.depthwise(x, 3, 1, "SAME", multiplier=2), b.depthwise(x, 5, 2, "SAME"),
            b.avg_pool(x, 3, 2, "SAME"), b.max_pool(x, (2, 3), (1, 2), "SAME", "RELU"), b.conv2d(x, 6, 1, 1)]
    return b.finish(outs)


def test_band_results_concatenate_to_whole_result():
    g = _band_graphs()
    x = np.random.default_rng(7).integers(-128, 128, size=(1, 13, 11, 4), dtype=np.int8)
    assert {op.opcode for op in g.operators} == set(BANDED)
    for op in g.operators:
        out_t = g.tensors[op.outputs[0]]
        whole = np.zeros(out_t.shape, np.int8)
        KERNELS[op.opcode](g, op, [x], [whole])
        oh = out_t.shape[1]
        for cuts in ([0, oh], [0, 1, oh], [0, oh // 2, oh], list(range(oh + 1))):
            parts = []
            for y0, y1 in zip(cuts, cuts[1:]):
                part = np.zeros((1, y1 - y0) + out_t.shape[2:], np.int8)
                # give the kernel only the input rows it needs (plus the image offset of the first)
                r0, r1 = band_input_rows(g, op, y0, y1)
                KERNELS[op.opcode](g, op, [x[:, r0:r1]], [part], y0=y0, y1=y1, in_row0=r0)
                parts.append(part)
                wider = np.zeros_like(part)  # a band with spare rows on both sides gives the same rows
                lo = max(r0 - 2, 0)
                KERNELS[op.opcode](g, op, [x[:, lo:r1 + 2]], [wider], y0=y0, y1=y1, in_row0=lo)
                assert np.array_equal(wider, part)
            assert np.array_equal(np.concatenate(parts, axis=1), whole), (op.opcode, cuts)


def test_band_missing_rows_is_an_error():
    g = _band_graphs()
    op = g.operators[0]
    x = np.zeros((1, 13, 11, 4), np.int8)
    from buildtool.errors import InternalError

    with pytest.raises(InternalError):
        KERNELS[op.opcode](g, op, [x[:, 4:6]], [np.zeros((1, 2, 6, 5), np.int8)], y0=2, y1=4, in_row0=4)


# -- arena semantics ---------------------------------------------------------------------
def _dw_chain():
    b = GraphBuilder("inplace", seed=5)
    x = b.input((1, 9, 7, 6))
    a = b.conv2d(x, 6, 1, 1)
    d = b.depthwise(a, 3, 1, "SAME")
    e = b.depthwise(d, 3, 2, "SAME")
    return b.finish(b.conv2d(e, 4, 1, 1))


def _inplace_plan(g, scratch_offset=None):
    """naive plan with both depthwise ops in place and a scratch buffer (default: a fresh region at the end)."""
    p = naive_plan(g)
    for op in g.operators:
        if op.opcode != "DEPTHWISE_CONV_2D":
            continue
        src, dst = p.tensors[op.inputs[0]], p.tensors[op.outputs[0]]
        dst.offset = src.offset
        p.inplace_ops.append(op.index)
        _, h, w, _ = g.tensors[op.inputs[0]].shape
        off = p.arena_bytes if scratch_offset is None else scratch_offset
        p.scratch[op.index] = Buffer(len(p.buffers), off, h * w, 0, 0, [], "scratch", op.index)
        p.arena_bytes = max(p.arena_bytes, align_up(off + h * w, 16))
    return p


def test_inplace_depthwise_with_scratch_matches():
    g = _dw_chain()
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    expected = run(g, naive_plan(g), [x])[0]
    assert np.array_equal(run(g, _inplace_plan(g), [x])[0], expected)
    assert np.array_equal(expected, tflm_run(serialize(g), [x])[0].reshape(expected.shape))


def test_misplaced_scratch_corrupts_result():
    g = _dw_chain()
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    expected = run(g, naive_plan(g), [x])[0]
    dw = next(op for op in g.operators if op.opcode == "DEPTHWISE_CONV_2D")
    bad = _inplace_plan(g, scratch_offset=_inplace_plan(g).tensors[dw.inputs[0]].offset)  # over its own input
    assert not np.array_equal(run(g, bad, [x])[0], expected)


def test_overlapping_output_without_inplace_is_rejected():
    g = _dw_chain()
    p = naive_plan(g)
    conv = g.operators[0]
    p.tensors[conv.outputs[0]].offset = p.tensors[conv.inputs[0]].offset + 16
    with pytest.raises(PlanError):
        run(g, p, [fixed_input(g.tensors[g.inputs[0]].shape)])


def test_live_tensor_overwritten_by_bad_plan_corrupts_result():
    b = GraphBuilder("residual", seed=9)
    x = b.input((1, 8, 8, 4))
    a = b.conv2d(x, 4, 1, 1)
    c = b.conv2d(b.conv2d(x, 4, 1, 1), 4, 3, 1)
    g = b.finish(b.add(a, c))
    xin = fixed_input((1, 8, 8, 4))
    good = run(g, naive_plan(g), [xin])[0]
    add = g.operators[-1]
    p = naive_plan(g)
    p.tensors[add.outputs[0]].offset = p.tensors[c].offset
    p.inplace_ops.append(add.index)  # ADD in place over c (its last reader): exact alias is fine
    assert np.array_equal(run(g, p, [xin])[0], good)
    p = naive_plan(g)
    p.tensors[c].offset = p.tensors[a].offset  # c written while a is still live: a is lost
    assert not np.array_equal(run(g, p, [xin])[0], good)


def test_concatenation_inputs_as_views_of_the_output():
    b = GraphBuilder("concat_views", seed=11)
    x = b.input((1, 6, 6, 3))
    q = (0.05, -10)
    parts = [b.conv2d(x, 4, 1, 1, out_quant=q), b.conv2d(x, 3, 3, 1, out_quant=q), b.max_pool(x, 3, 1, "SAME")]
    parts[2] = b.quantize(parts[2], *q)
    cat = b.concat(parts, axis=3, out_quant=q)
    g = b.finish(b.conv2d(cat, 5, 1, 1))
    xin = fixed_input((1, 6, 6, 3))
    expected = run(g, naive_plan(g), [xin])[0]
    assert np.array_equal(expected, tflm_run(serialize(g), [xin])[0].reshape(expected.shape))
    p = naive_plan(g)
    out_place = p.tensors[cat]
    ch = 0
    for t in parts:
        p.tensors[t].offset = out_place.offset + ch
        p.tensors[t].pixel_stride = 10
        ch += g.tensors[t].shape[3]
    assert np.array_equal(run(g, p, [xin])[0], expected)
    p.tensors[parts[1]].offset += 1  # shifted view: the concat copy now overwrites a neighbour's channel
    assert not np.array_equal(run(g, p, [xin])[0], expected)


def test_inplace_claim_for_a_non_elementwise_op_is_rejected():
    g = _dw_chain()
    p = naive_plan(g)
    conv = g.operators[0]
    p.tensors[conv.outputs[0]].offset = p.tensors[conv.inputs[0]].offset
    p.inplace_ops.append(conv.index)  # a convolution cannot run in place
    with pytest.raises(PlanError):
        run(g, p, [fixed_input(g.tensors[g.inputs[0]].shape)])


def test_strided_slice_negative_indices_and_strides():
    b = GraphBuilder("slice_neg", seed=4)
    x = b.input((1, 6, 5, 4))
    b.strided_slice(x, [0, 1, 0, 1], [1, 5, 4, 4], [1, 2, 1, 1])
    g = b.finish()
    begin, end, strides = (g.tensors[i] for i in g.operators[0].inputs[1:4])
    begin.data = np.array([0, -5, 0, -3], np.int32)  # same elements through negative indices
    end.data = np.array([1, -1, -1, 4], np.int32)
    check_against_tflm(g)
    begin.data = np.array([0, 5, 4, 3], np.int32)  # reversed walk on H and W
    end.data = np.array([1, 1, 0, 4], np.int32)
    strides.data = np.array([1, -2, -1, 1], np.int32)
    g.tensors[g.operators[0].outputs[0]].shape = (1, 2, 4, 1)
    check_against_tflm(g)


def test_concatenation_of_views_writes_nothing():
    b = GraphBuilder("cat", seed=1)
    q = (0.1, 0)
    xs = [b.input((1, 2, 3, c), scale=q[0], zp=q[1], name=f"in{c}") for c in (2, 3)]
    g = b.finish(b.concat(xs, axis=3, out_quant=q))
    cat = g.operators[-1]
    assert cat.opcode == "CONCATENATION"
    out = np.arange(30, dtype=np.int8).reshape(1, 2, 3, 5)
    out.flags.writeable = False  # any copy would raise
    KERNELS["CONCATENATION"](g, cat, [out[..., :2], out[..., 2:]], [out])
    with pytest.raises(ValueError):
        KERNELS["CONCATENATION"](g, cat, [out[..., :2].copy(), out[..., 2:]], [out])


def test_plan_order_is_followed():
    b = GraphBuilder("branches", seed=6)
    x = b.input((1, 6, 6, 3))
    left, right = b.conv2d(x, 4, 3, 1), b.max_pool(x, 2)
    g = b.finish([b.mean(left), right])
    xin = fixed_input((1, 6, 6, 3))
    expected = run_unplanned(g, [xin])
    p = naive_plan(g)
    p.order = [1, 0, 2]  # max pool first: same results
    got = run(g, p, [xin])
    assert len(got) == 2 and all(np.array_equal(a, e) for a, e in zip(got, expected))


def test_bad_inputs_and_plans_raise_one_line_errors():
    g = _dw_chain()
    with pytest.raises(UsageError):
        run(g, naive_plan(g), [])
    with pytest.raises(UsageError):
        run(g, naive_plan(g), [np.zeros((1, 2, 2, 2), np.int8)])
    p = naive_plan(g)
    p.arena_bytes -= 32
    with pytest.raises(PlanError):
        run(g, p, [fixed_input(g.tensors[g.inputs[0]].shape)])


def test_repeated_operand_is_passed_per_position():
    b = GraphBuilder("const_add", seed=2)
    x = b.input((1, 3, 3, 2))
    g = b.finish(b.add(x, x))
    assert kernel_inputs(g, g.operators[0]) == [x, x]
    check_against_tflm(g)
