"""16x8 quantisation (int16 activations, int8 weights, int64 bias) and the SEANet operators
(LEAKY_RELU, SUB, TRANSPOSE_CONV): byte-exact against TFLite Micro on the numpy executor, host and
Cortex-M4 firmware, on TFLM's own SEANet layer models and on random one-op models of every
INT16_OPS operator (the activation and layout ones TFLM runs on int16 included: EXTRA16)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, shared_model, tflm_run
from opgen_control import CONTROL_GENERATORS
from opgen_extra import EXTRA_GENERATORS, gen_batch_matmul, gen_cast_widen
from opgen_signal import SIGNAL_GENERATORS

from buildtool import pipeline, targets
from buildtool.model import ops, reader as tflite_reader
from buildtool.firmware import runner
from buildtool.plan.arena.naive import naive_plan
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder, as_int16x8
from buildtool.errors import ModelError
from buildtool.plan.arena.execute import run, run_unplanned
from buildtool.model.ir import NUMPY_DTYPE
from buildtool.model.writer import serialize

ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def random_inputs(g, seed: int) -> list:
    """Full-range integer inputs; TRANSPOSE_CONV's output_shape input gets the output's shape."""
    rng = np.random.default_rng(seed)
    shapes = {op.inputs[0]: g.tensors[op.outputs[0]].shape for op in g.operators if op.opcode == "TRANSPOSE_CONV"}
    xs = []
    for i in g.inputs:
        t = g.tensors[i]
        if i in shapes:
            xs.append(np.array(shapes[i], dtype=np.int32))
            continue
        if t.dtype == "float32":
            xs.append(rng.uniform(-3, 3, size=t.shape).astype(np.float32))
            continue
        info = np.iinfo(NUMPY_DTYPE[t.dtype])
        xs.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True).astype(NUMPY_DTYPE[t.dtype]))
    return xs


def seanet(name: str) -> bytes:
    return shared_model(f"real/seanet_{name}").read_bytes()


# -- TFLM's SEANet layers (the layers themselves: test_real_models.py) --------------------------
def test_constant_int16_operand_of_sub_in_firmware(tmp_path):
    """SEANet's SUB with its broadcast [64] operand made a constant (int16 weights in the flash image)."""
    g = tflite_reader.parse(seanet("sub-sub0"))
    g.tensors[1].data = np.random.default_rng(3).integers(-32768, 32768, size=(64,)).astype(np.int16)
    g.inputs = [0]
    data = serialize(g)
    pipeline.build(g, "host", tmp_path)
    x = random_inputs(g, 2)
    y, _, _ = runner.run("host", tmp_path, x[0])
    assert np.array_equal(y, tflm_run(data, x)[0]) and np.array_equal(run(g, plan_arena(g), x)[0], y)


def test_int16_tensors_take_two_bytes_in_the_arena():
    g = tflite_reader.parse(seanet("leaky_relu-leaky_relu0"))
    t = g.tensors[g.inputs[0]]
    plan = plan_arena(g)
    assert t.dtype == "int16" and t.nbytes == 2 * t.num_elements == 5120
    assert plan.arena_bytes == 5120 and plan.inplace_ops == [0]  # LEAKY_RELU in place, 2 bytes per element
    conv = tflite_reader.parse(seanet("conv-conv0"))
    assert plan_arena(conv).arena_bytes == sum(x.nbytes for x in conv.activation_tensors()) == 2 * (8 * 166 * 2 +
                                                                                                      2 * 160 * 8)


def test_cli_run_takes_one_input_per_model_input(tmp_path):
    data = seanet("sub-sub0")
    g = tflite_reader.parse(data)
    xs = random_inputs(g, 5)
    paths = []
    for k, x in enumerate(xs):
        paths += ["--input", str(tmp_path / f"x{k}.npy")]
        np.save(tmp_path / f"x{k}.npy", x)
    model = str(shared_model("real/seanet_sub-sub0"))
    cli = [sys.executable, "-m", "buildtool.cli", "run", model, "--no-daemon"]
    r = subprocess.run(cli + paths + ["--output", str(tmp_path / "y.npy")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "y.npy"), tflm_run(data, xs)[0])
    r = subprocess.run(cli + paths[:2], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "the model has 2 inputs, 1 given" in r.stderr and "Traceback" not in r.stderr


def test_optimisers_leave_int16_operators_unfused(tmp_path):
    """Fused and split code is int8: an int16 model plans unfused under --optimize and refuses streaming."""
    data = seanet("conv-conv0")
    g = tflite_reader.parse(data)
    x = random_inputs(g, 1)[0]
    np.save(tmp_path / "x.npy", x)
    model = str(shared_model("real/seanet_conv-conv0"))
    cli = [sys.executable, "-m", "buildtool.cli"]
    r = subprocess.run(cli + ["run", model, "--input", str(tmp_path / "x.npy"), "--optimize", "ram", "--no-daemon",
                              "--output", str(tmp_path / "y.npy")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "y.npy"), tflm_run(data, [x])[0])
    r = subprocess.run(cli + ["plan", model, "--input-streamed", "--no-daemon"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 2 and "--input-streamed needs" in r.stderr and "Traceback" not in r.stderr


# -- random one-op models -------------------------------------------------------------------
def rquant(rng):
    return float(np.float32(rng.uniform(0.005, 0.2))), int(rng.integers(-128, 128))


def _input(b, rng, shape):
    return b.input(shape, *rquant(rng))


def _shape(rng, lo=1):
    return (1, int(rng.integers(lo, 8)), int(rng.integers(lo, 8)), int(rng.integers(1, 9)))


def gen_add_sub(rng, opcode):
    b = GraphBuilder(opcode.lower(), seed=int(rng.integers(1 << 30)))
    shape = _shape(rng)
    other = tuple(d if rng.random() < 0.6 else 1 for d in shape)
    x, y = _input(b, rng, shape), _input(b, rng, other)
    if rng.random() < 0.5:
        x, y = y, x
    (b.add if opcode == "ADD" else b.sub)(x, y, str(rng.choice(ACTS)))
    return b


def gen_conv(rng):
    b = GraphBuilder("conv", seed=int(rng.integers(1 << 30)))
    k = int(rng.choice([1, 2, 3]))
    x = _input(b, rng, _shape(rng, k))
    b.conv2d(x, int(rng.integers(1, 9)), k, int(rng.integers(1, 3)), str(rng.choice(["SAME", "VALID"])),
             str(rng.choice(ACTS)), bias=bool(rng.random() < 0.75))
    return b


def gen_transpose_conv(rng):
    b = GraphBuilder("tconv", seed=int(rng.integers(1 << 30)))
    x = _input(b, rng, _shape(rng))
    b.transpose_conv(x, int(rng.integers(1, 9)), (int(rng.integers(1, 4)), int(rng.integers(1, 5))),
                     (int(rng.integers(1, 3)), int(rng.integers(1, 4))), str(rng.choice(["SAME", "VALID"])),
                     bias=bool(rng.random() < 0.75))
    return b


def gen_leaky_relu(rng):
    b = GraphBuilder("leaky", seed=int(rng.integers(1 << 30)))
    x = _input(b, rng, _shape(rng))
    b.leaky_relu(x, float(rng.choice([0.01, 0.2, 0.3, 1.5, -0.5])),
                 out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b


def gen_pad(rng):
    b = GraphBuilder("pad", seed=int(rng.integers(1 << 30)))
    x = _input(b, rng, _shape(rng))
    b.pad(x, [[0, 0]] + [[int(rng.integers(0, 3)), int(rng.integers(0, 3))] for _ in range(3)])
    return b


def gen_strided_slice(rng):
    b = GraphBuilder("slice", seed=int(rng.integers(1 << 30)))
    s = _shape(rng)
    x = _input(b, rng, s)
    b.strided_slice(x, [0, int(rng.integers(0, s[1])), int(rng.integers(0, s[2])), 0], list(s),
                    [1, int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))])
    return b


def gen_quantize(rng):
    b = GraphBuilder("quantize", seed=int(rng.integers(1 << 30)))
    b.quantize(_input(b, rng, _shape(rng)), *rquant(rng))
    return b


def gen_depthwise(rng):
    b = GraphBuilder("dw", seed=int(rng.integers(1 << 30)))
    k = int(rng.choice([1, 2, 3]))
    x = _input(b, rng, _shape(rng))
    b.depthwise(x, k, int(rng.integers(1, 3)), "SAME", str(rng.choice(ACTS)), multiplier=int(rng.choice([1, 2])),
                dilation=int(rng.choice([1, 2])), bias=bool(rng.random() < 0.75))
    return b


def gen_fc(rng):
    b = GraphBuilder("fc", seed=int(rng.integers(1 << 30)))
    x = _input(b, rng, (int(rng.integers(1, 4)), int(rng.integers(1, 60))))
    b.fully_connected(x, int(rng.integers(1, 20)), str(rng.choice(ACTS)), bias=bool(rng.random() < 0.75),
                      out_quant=rquant(rng) if rng.random() < 0.5 else None)
    return b


def gen_mul(rng):
    b = GraphBuilder("mul", seed=int(rng.integers(1 << 30)))
    shape = _shape(rng)
    b.mul(_input(b, rng, shape), _input(b, rng, tuple(d if rng.random() < 0.6 else 1 for d in shape)),
          str(rng.choice(ACTS)))
    return b


def gen_pool(rng, opcode):
    b = GraphBuilder("pool", seed=int(rng.integers(1 << 30)))
    x = _input(b, rng, _shape(rng, 3))
    (b.avg_pool if opcode == "AVERAGE_POOL_2D" else b.max_pool)(
        x, (int(rng.integers(1, 4)), int(rng.integers(1, 4))), (int(rng.integers(1, 3)), int(rng.integers(1, 3))),
        str(rng.choice(["SAME", "VALID"])), str(rng.choice(ACTS)))
    return b


def gen_mean(rng):
    b = GraphBuilder("mean", seed=int(rng.integers(1 << 30)))
    b.mean(_input(b, rng, _shape(rng)), [[1, 2], [1], [2], [3]][int(rng.integers(0, 4))],
           keep_dims=bool(rng.random() < 0.5), out_quant=rquant(rng) if rng.random() < 0.6 else None)
    return b


def gen_concat(rng):
    b = GraphBuilder("concat", seed=int(rng.integers(1 << 30)))
    s, q = _shape(rng), rquant(rng)
    b.concat([b.input(s, *q), b.input(s, *q)], axis=int(rng.integers(1, 4)), out_quant=q)
    return b


def gen_split(rng):
    b = GraphBuilder("split", seed=int(rng.integers(1 << 30)))
    s = _shape(rng)
    b.split(_input(b, rng, s[:3] + (2 * s[3],)), 2, axis=int(rng.choice([3, -1])))
    return b


def gen_dequantize(rng):
    b = GraphBuilder("dequantize", seed=int(rng.integers(1 << 30)))
    b.dequantize(_input(b, rng, _shape(rng)))
    return b


GEN16 = {"ADD": lambda r: gen_add_sub(r, "ADD"), "SUB": lambda r: gen_add_sub(r, "SUB"), "CONV_2D": gen_conv,
         "TRANSPOSE_CONV": gen_transpose_conv, "LEAKY_RELU": gen_leaky_relu, "PAD": gen_pad,
         "STRIDED_SLICE": gen_strided_slice, "QUANTIZE": gen_quantize, "DEPTHWISE_CONV_2D": gen_depthwise,
         "FULLY_CONNECTED": gen_fc, "MUL": gen_mul, "AVERAGE_POOL_2D": lambda r: gen_pool(r, "AVERAGE_POOL_2D"),
         "MAX_POOL_2D": lambda r: gen_pool(r, "MAX_POOL_2D"), "MEAN": gen_mean, "CONCATENATION": gen_concat,
         "SPLIT": gen_split, "DEQUANTIZE": gen_dequantize}
# The activation and layout operators TFLM also runs on int16 (its DEPTH_TO_SPACE, SPACE_TO_DEPTH,
# RESIZE_BILINEAR and HARD_SWISH refuse int16): their int8 generators, converted by as_int16x8.
EXTRA16 = ("RELU", "RELU6", "PRELU", "MAXIMUM", "MINIMUM", "TRANSPOSE", "RESIZE_NEAREST_NEIGHBOR", "SQUEEZE",
           "EXPAND_DIMS", "ABS", "SUM", "SLICE", "PADV2", "SPLIT_V", "PACK", "UNPACK", "REVERSE_V2", "BROADCAST_TO",
           "SHAPE", "READ_VARIABLE", "ASSIGN_VARIABLE")
GEN16.update({op: EXTRA_GENERATORS[op] for op in EXTRA16})


def gen_select_v2(rng):
    """SELECT_V2 on int16 values: a constant condition (comparisons take int8 only), broadcast operands."""
    b = GraphBuilder("select_v2", seed=int(rng.integers(1 << 30)))
    shape = _shape(rng)
    c, x, y = (tuple(d if rng.random() < 0.7 else 1 for d in shape) for _ in range(3))
    cond = b.const("cond", rng.random(c) < 0.5, "bool")
    x = _input(b, rng, x)
    b.select_v2(cond, x, b.quantize(_input(b, rng, y), *b.quant_of(x)))
    return b


GEN16["SELECT_V2"] = gen_select_v2


def gen_padv2(rng):
    """PADV2 on int16: the int8 model converted (its constant value on the output's new quantisation), then
    any int16 constant."""
    g = as_int16x8(EXTRA_GENERATORS["PADV2"](rng))
    c = g.tensors[g.operators[0].inputs[2]]
    c.data = np.array([int(rng.integers(-32768, 32768))], np.int16).reshape(c.shape)
    return g


GEN16["PADV2"] = gen_padv2


def gen_squared_difference(rng):
    """SQUARED_DIFFERENCE on int16: two activation operands (the int8 generator's constant stays int8)."""
    while True:
        g = EXTRA_GENERATORS["SQUARED_DIFFERENCE"](rng)
        if not any(g.tensors[i].is_const for i in g.operators[0].inputs):
            return g


GEN16["SQUARED_DIFFERENCE"] = gen_squared_difference
GEN16["BATCH_MATMUL"] = lambda rng: gen_batch_matmul(rng, const_rhs=False)  # TFLM: one type for LHS and RHS


def gen_cast(rng):
    """CAST int16 -> int32: the int8 model converted, its option's input type now int16."""
    g = gen_cast_widen(rng)
    g.operators[0].options["in_data_type"] = 7  # checked after as_int16x8 converts the tensors
    return g


GEN16["CAST"] = gen_cast


def gen_logistic(rng):
    b = GraphBuilder("logistic", seed=int(rng.integers(1 << 30)))
    b.logistic(_input(b, rng, _shape(rng)))
    return b


def gen_softmax(rng):
    b = GraphBuilder("softmax", seed=int(rng.integers(1 << 30)))
    shape = [(int(rng.integers(1, 9)), int(rng.integers(1, 40))), _shape(rng)][int(rng.integers(0, 2))]
    b.softmax(_input(b, rng, shape), beta=float(rng.choice([1.0, 0.5, 0.3, 2.0])))
    return b


# int16 LOGISTIC and TANH interpolate TFLM's sigmoid table (refops/activation.py sigmoid_table16),
# SOFTMAX its exp and reciprocal tables (refops/softmax.py softmax_luts16).
LUT16 = ("LOGISTIC", "TANH", "SOFTMAX")
def gen_rsqrt16(rng):
    """RSQRT after ABS (16x8 has zero point 0, and TFLM fails on a negative real): its int8 model made 16x8."""
    b = GraphBuilder("rsqrt16", seed=int(rng.integers(1 << 30)))
    x = b.input(tuple(int(d) for d in rng.integers(1, 9, size=int(rng.integers(1, 5)))),
                scale=float(np.float32(rng.uniform(0.0005, 0.5))))
    b.rsqrt(b.abs(x), out_quant=(float(np.float32(rng.uniform(0.01, 0.5))), 0) if rng.random() < 0.5 else None)
    return b


GEN16["RSQRT"] = gen_rsqrt16
GEN16.update({"LOGISTIC": gen_logistic, "TANH": EXTRA_GENERATORS["TANH"], "SOFTMAX": gen_softmax})
INT64_BIAS_ONLY = ("DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")  # TFLM reads their int16 bias as int64


def model16(opcode: str, rng, bias64: bool):
    g = GEN16[opcode](rng)
    return as_int16x8(g.finish() if isinstance(g, GraphBuilder) else g, bias64=bias64)


def check_16x8(g, seed: int) -> None:
    xs = random_inputs(g, seed)
    want = tflm_run(serialize(g), xs, len(g.outputs))
    for got in (run(g, naive_plan(g), xs), run_unplanned(g, xs)):
        for w, y in zip(want, got):
            w = np.asarray(w).reshape(y.shape)
            assert y.dtype == w.dtype and np.array_equal(y, w, equal_nan=True), g.operators


def test_every_int16_operator_has_a_generator():
    """Every operator with an int16 path has random models checked against TFLite Micro: the 16x8 quantised ones
    here; TFLite Micro's signal library (raw int16 audio, not 16x8) in tests/test_signal.py; IF and WHILE (byte
    copies of any type between subgraphs whose operators have generators of their own) on int8 models in
    tests/test_control_flow.py."""
    assert set(GEN16) == set(ops.INT16_OPS) - {"RESHAPE", "IF", "WHILE"} - set(SIGNAL_GENERATORS)
    assert set(CONTROL_GENERATORS) <= set(ops.INT16_OPS)


@pytest.mark.parametrize("opcode", sorted(GEN16))
def test_random_16x8_models_match_tflm(opcode):
    rng = np.random.default_rng(sum(map(ord, opcode)) + 16)
    for case in range(12):
        g = model16(opcode, rng, opcode in INT64_BIAS_ONLY or case % 2 == 0)
        assert g.tensors[g.operators[0].outputs[0]].dtype in ("int16", "float32", "int32")  # SHAPE: int32
        check_16x8(g, case)


@pytest.mark.parametrize("opcode", sorted(GEN16))
def test_random_16x8_models_match_tflm_in_host_firmware(opcode, tmp_path):
    if targets.get("host").missing_tools():
        pytest.skip("no host compiler")
    rng = np.random.default_rng(sum(map(ord, opcode)) + 17)
    for case in range(2):
        g = model16(opcode, rng, opcode in INT64_BIAS_ONLY or case == 0)
        pipeline.build(g, "host", tmp_path / str(case))
        xs = random_inputs(g, case)
        want = tflm_run(serialize(g), xs, len(g.outputs))
        y = runner.run("host", tmp_path / str(case), xs[0] if len(xs) == 1 else xs)[0]
        for w, got in zip(want, y if isinstance(y, list) else [y]):
            assert np.array_equal(np.asarray(w).reshape(got.shape), got, equal_nan=True), (opcode, case)


def test_quantize_between_int8_and_int16_matches_tflm():
    rng = np.random.default_rng(3)
    for case in range(6):
        b = GraphBuilder("q", seed=case)
        x = _input(b, rng, _shape(rng))
        g8 = b.finish([b.quantize(x, *rquant(rng))])
        g16 = as_int16x8(g8)
        for src, dst in ((g16, g8), (g8, g16)):  # int16 -> int8 and int8 -> int16
            g = g8.copy()
            g.tensors[0] = dataclasses.replace(src.tensors[0])
            g.tensors[1] = dataclasses.replace(dst.tensors[1])
            check_16x8(g, case)


def test_a_16x8_network_runs_bit_exact_in_firmware(tmp_path):
    """Every 16x8 kernel in one model, on the host and in QEMU (Cortex-M4)."""
    b = GraphBuilder("net16", seed=7)
    x = b.quantize(b.input((1, 6, 7, 3), dtype="float32"), 0.02, 3)
    y = b.pad(x, [[0, 0], [1, 0], [0, 2], [0, 0]])
    y = b.conv2d(y, 6, 3, 2, "SAME", "RELU")
    y = b.leaky_relu(y, 0.2)
    z = b.transpose_conv(y, 4, (3, 2), 2, "SAME")
    w = b.conv2d(z, 4, 1, 1, "VALID", "NONE", bias=False)
    y = b.sub(z, w)
    y = b.add(y, b.strided_slice(y, [0, 0, 0, 0], [1, 1, 10, 4], [1, 1, 1, 1]))
    y = b.strided_slice(y, [0, 1, 0, 0], [1, 8, 10, 4], [1, 2, 1, 3])
    g = as_int16x8(b.finish([b.dequantize(b.quantize(y))]))
    assert {op.opcode for op in g.operators} == {"PAD", "CONV_2D", "LEAKY_RELU", "TRANSPOSE_CONV", "SUB", "ADD",
                                                  "STRIDED_SLICE", "QUANTIZE", "DEQUANTIZE"}
    assert [g.tensors[i].dtype for i in g.inputs + g.outputs] == ["float32", "float32"]
    b = GraphBuilder("net16b", seed=8)
    x = b.input((1, 7, 6, 4), 0.03, -5)
    y = b.depthwise(x, 3, 1, "SAME", "RELU6", multiplier=2)
    y = b.mul(b.avg_pool(y, 2, 1, "SAME"), b.max_pool(y, 3, 1, "SAME"))
    p, q = b.split(b.concat([y, b.depthwise(x, 3, 1, "SAME", "NONE")]), 2)
    y = b.fully_connected(b.reshape(b.mean(b.add(p, q), (1,), keep_dims=True), (1, 6 * 6)), 10)
    g2 = as_int16x8(b.finish([y]))
    assert {op.opcode for op in g2.operators} == {"DEPTHWISE_CONV_2D", "MUL", "AVERAGE_POOL_2D", "MAX_POOL_2D",
                                                   "CONCATENATION", "SPLIT", "ADD", "MEAN", "RESHAPE",
                                                   "FULLY_CONNECTED", "QUANTIZE"}
    for board, g in [(bd, gr) for bd in ("host", "cortex-m4") for gr in (g, g2)]:
        data = serialize(g)
        t = targets.get(board)
        if t.missing_tools():
            pytest.skip(f"{board} needs {', '.join(t.missing_tools())}")
        pipeline.build(g, board, tmp_path / board / g.name)
        for seed in range(2):
            xs = random_inputs(g, seed)
            want = tflm_run(data, xs)[0]
            y, _, _ = runner.run(board, tmp_path / board / g.name, xs[0])
            assert np.array_equal(y, want) and np.array_equal(run(g, plan_arena(g), xs)[0], want), board


@pytest.mark.parametrize("opcode", ["ADD", "SUB"])
def test_add_sub_multipliers_come_from_double_scale_arithmetic(opcode):
    """Scales whose float32 and double rescaling multipliers differ: TFLM follows the double ones."""
    from buildtool.refops.quant_math import quantize_multiplier_scalar as qm

    rng, f = np.random.default_rng(0), np.float32
    while True:
        s1, s2, so = (float(f(rng.uniform(1e-4, 1e-3))) for _ in range(3))
        tm, twice = f(2) * max(f(s1), f(s2)), 2.0 * max(s1, s2)
        if qm(float(f(f(s1) / tm))) != qm(s1 / twice) or qm(float(f(tm / (f(1 << 15) * f(so))))) != qm(
                twice / ((1 << 15) * so)):
            break
    b = GraphBuilder("s", seed=1)
    x, y = b.input((1, 1, 64, 256), 0.05, 0), b.input((1, 1, 64, 256), 0.05, 0)
    (b.add if opcode == "ADD" else b.sub)(x, y, out_quant=(0.05, 0))
    g = as_int16x8(b.finish())
    for t, sc in zip(g.tensors, (s1, s2, so)):
        t.quant.scale[:] = sc
    xs = random_inputs(g, 1)
    assert np.array_equal(run_unplanned(g, xs)[0], tflm_run(serialize(g), xs)[0])


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_leaky_relu_matches_tflm_on_every_input_value(dtype):
    """Exhaustive: TFLM rounds a negative alpha's ties as for |alpha| and negates (-0.5 * -3 -> 1, not 2)."""
    lo, n = (-128, 256) if dtype == "int8" else (-32768, 65536)
    x = np.arange(lo, lo + n).astype(dtype).reshape(1, 1, n // 256, 256)
    for alpha, so in ((-0.5, 0.001), (-0.25, 0.0021), (-1.5, 0.001), (0.2, 0.001), (1.7, 0.0007)):
        b = GraphBuilder("leaky", seed=1)
        b.leaky_relu(b.input(x.shape, 0.001, 0), alpha, out_quant=(so, 0))
        g = b.finish() if dtype == "int8" else as_int16x8(b.finish())
        g.tensors[0].quant.scale[:], g.tensors[1].quant.scale[:] = 0.001, so
        assert np.array_equal(run_unplanned(g, [x])[0], tflm_run(serialize(g), [x])[0]), alpha


@pytest.mark.parametrize("opcode", LUT16[:2])
def test_int16_logistic_and_tanh_match_tflm_on_every_input_value(opcode):
    """Exhaustive over the 65536 int16 inputs at power-of-two input scales (TFLM's plain multiply by 3),
    scales the kernel rescales, and large scales that saturate most of the range."""
    x = np.arange(-32768, 32768).astype(np.int16).reshape(1, 1, 256, 256)
    for scale in (2.0 ** -12, 2.0 ** -11, 2.0 ** -13, 1 / 12288, 0.00037, 0.0021, 0.05, 3.0):
        b = GraphBuilder("lut16", seed=1)
        (b.logistic if opcode == "LOGISTIC" else b.tanh)(b.input(x.shape, 0.05, 0))
        g = as_int16x8(b.finish())
        g.tensors[0].quant.scale[:] = scale
        assert np.array_equal(run_unplanned(g, [x])[0], tflm_run(serialize(g), [x])[0]), scale


def test_int16_softmax_matches_tflm_over_every_table_segment():
    """Rows of random spreads at several input scales and betas: together they reach every segment of
    the exp table and of the reciprocal table (whose float32 and double builds differ at two entries:
    TFLM's is float32)."""
    from buildtool.refops.quant_math import clz32, mbqm
    from buildtool.refops.softmax import lut16_lookup, softmax16_params, softmax_luts16

    rng = np.random.default_rng(5)
    exp_seen, rec_seen = set(), set()
    for scale, beta in ((0.0004, 1.0), (0.001, 0.3), (0.003, 1.0), (0.00005, 2.0)):
        spread = rng.integers(1, 32768, size=(2048, 1))
        x = (rng.integers(-32768, 32768, size=(2048, 12)) % (spread + 1) - spread // 2).astype(np.int16)
        b = GraphBuilder("sm16", seed=1)
        b.softmax(b.input((1,) + x.shape, 0.05, 0), beta=beta)
        g = as_int16x8(b.finish())
        g.tensors[0].quant.scale[:] = scale
        assert np.array_equal(run_unplanned(g, [x[None]])[0], tflm_run(serialize(g), [x[None]])[0]), scale
        m, sh = softmax16_params(beta, g.tensors[0].scale)
        d = np.clip(mbqm(x.astype(np.int64) - x.max(axis=1, keepdims=True), m, sh) + 32767, -32768, 32767)
        exp_seen |= set((256 + (d >> 7)).reshape(-1).tolist())
        for total in lut16_lookup(d, softmax_luts16()[0]).sum(axis=1):
            h = clz32(int(total))
            rec_seen.add(256 + ((((int(total) << (h - 1)) + (1 << 13)) >> 14) - 3 * (1 << 15) >> 7))
    assert len(exp_seen) == 512 and len(rec_seen) >= 250  # exp: every segment; 1/(1+x): x in [0, 1)


def test_sigmoid_table_of_the_int16_kernels():
    from buildtool.refops.activation import sigmoid_table16

    t = sigmoid_table16().astype(np.int64)
    exact = 65536 / (1 + np.exp(-np.arange(256) / 24))
    assert t[0] == 32768 and t[-1] == 65535 and (np.diff(t) >= 0).all()
    assert (np.abs(t[:-1] - exact[:-1]) <= 1.2).all() and ((t - exact)[:60] > 0.5).sum() > 20  # above round()


# -- refusals ---------------------------------------------------------------------------------
def _leaky16():
    b = GraphBuilder("l", seed=1)
    b.leaky_relu(b.input((1, 2, 2, 3), 0.05, 0), 0.1)
    return as_int16x8(b.finish())


def test_int16_needs_zero_point_zero():
    g = _leaky16()
    g.tensors[1].quant.zero_point[:] = 5
    with pytest.raises(ModelError, match="int16 tensor .* has zero point 5; 16x8 quantisation needs zero point 0"):
        ops.check_graph(g)


def test_int16_transpose_conv_needs_an_int64_bias():
    b = GraphBuilder("t", seed=1)
    b.transpose_conv(b.input((1, 3, 3, 2), 0.05, 0), 3, 3, 2, "SAME")
    with pytest.raises(ModelError, match=r"TRANSPOSE_CONV\): bias must be int64 \[3\]; re-quantise the model"):
        as_int16x8(b.finish(), bias64=False)


def test_add_with_a_too_small_output_scale_is_refused():
    b = GraphBuilder("a", seed=1)
    b.add(b.input((1, 2, 2, 3), 0.05, 0), b.input((1, 2, 2, 3), 0.05, 0), out_quant=(0.05, 0))
    g = as_int16x8(b.finish())
    g.tensors[2].quant.scale[:] = 1e-9
    with pytest.raises(ModelError, match="output scale .* too small .* output multiplier below 1"):
        ops.check_graph(g)


@pytest.mark.parametrize("opcode", LUT16)
def test_int16_logistic_tanh_softmax_need_output_scale_two_to_the_minus_15(opcode):
    b = GraphBuilder("l", seed=1)
    getattr(b, opcode.lower())(b.input((1, 2, 2, 3), 0.05, 0))
    g = as_int16x8(b.finish())
    g.tensors[1].quant.scale[:] = 1 / 30000
    with pytest.raises(ModelError, match=rf"\({opcode}\): int16 output scale 3.33333e-05 must be 2\^-15"):
        ops.check_graph(g)
    if opcode == "SOFTMAX":
        return
    g.tensors[1].quant.scale[:], g.tensors[0].quant.scale[:] = 2.0 ** -15, 6.0
    with pytest.raises(ModelError, match="int16 input scale 6 is too large"):
        ops.check_graph(g)


@pytest.mark.parametrize("opcode", ["HARD_SWISH", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "RESIZE_BILINEAR"])
def test_operators_tflm_runs_only_on_int8_refuse_int16(opcode):
    """TFLM refuses these on int16 (checked against it: tests/test_int16.py EXTRA16 lists the rest)."""
    b = GraphBuilder("x", seed=1)
    x = b.input((1, 4, 4, 4), 0.05, 0)
    make = {"HARD_SWISH": lambda: b.hard_swish(x), "DEPTH_TO_SPACE": lambda: b.depth_to_space(x, 2),
            "SPACE_TO_DEPTH": lambda: b.space_to_depth(x, 2), "RESIZE_BILINEAR": lambda: b.resize_bilinear(x, (6, 6))}
    make[opcode]()
    with pytest.raises(ModelError, match=rf"\({opcode}\): tensor 0 is int16, and TFLite Micro runs {opcode} on "
                                         r"int8 only: keep this operator int8"):
        as_int16x8(b.finish())


def test_mixed_int8_int16_operator_is_refused():
    g = _leaky16()
    g.tensors[1] = dataclasses.replace(g.tensors[1], dtype="int8")
    with pytest.raises(ModelError, match=r"LEAKY_RELU\): mixes activation types \['int16', 'int8'\]"):
        ops.check_graph(g)


def test_add_of_two_model_inputs_plans_them_apart():
    """Regression: both inputs of an ADD were merged onto its output (two in-place decisions)."""
    b = GraphBuilder("add2", seed=1)
    b.add(b.input((1, 4, 4, 8), 0.05, 0), b.input((1, 4, 4, 8), 0.04, 1))
    g = b.finish()
    plan = plan_arena(g)
    assert plan.tensors[0].offset != plan.tensors[1].offset
    xs = [np.full((1, 4, 4, 8), 7, np.int8), np.full((1, 4, 4, 8), -9, np.int8)]
    assert np.array_equal(run(g, plan, xs)[0], tflm_run(serialize(g), xs)[0])


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_int16_activation_and_layout_operators_in_one_image_match_tflm(board, tmp_path):
    """Two random int16 models of each EXTRA16 and LUT16 operator side by side in one image (one build per
    board)."""
    from test_ops_extra import merge

    t = targets.get(board)
    if t.missing_tools():
        pytest.skip(f"{board} needs {', '.join(t.missing_tools())}")
    rng = np.random.default_rng(161)
    g = merge([model16(op, rng, True) for op in EXTRA16 + LUT16 for _ in range(2)], "extra16")
    plan = plan_arena(g)
    assert {g.tensors[i].dtype for i in g.inputs + g.outputs} == {"int16", "int32"}  # SHAPE: int32 out
    pipeline.build(g, board, tmp_path, plan=plan)
    xs = random_inputs(g, 4)
    want = tflm_run(serialize(g), xs, len(g.outputs))
    ys = runner.run(board, tmp_path, xs)[0]
    for k, (w, y) in enumerate(zip(want, ys)):
        assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1)), (board, k)
    for w, y in zip(want, run(g, plan, xs)):
        assert np.array_equal(y.reshape(-1), w.reshape(-1))
