"""RELU, RELU6, TANH, PRELU, MAXIMUM, MINIMUM, TRANSPOSE, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR,
SQUEEZE, EXPAND_DIMS, DEPTH_TO_SPACE, SPACE_TO_DEPTH: byte-exact against TFLite Micro in the numpy
executor (test_executor.py runs 20 random one-op models each), here in firmware (random one-op
models merged into one image per board), in place, as aliases, and their one-line errors. Also SOFTMAX
over 1000 near-equal logits in firmware, where TFLite Micro aborts (against the numpy executor)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import TFLITE_ORACLE_OPS, tflm_run
from opgen_extra import EXTRA_GENERATORS
from test_firmware import need

from buildtool import pipeline
from buildtool.model import ops
from buildtool.firmware import runner
from buildtool.plan.arena import checker
from buildtool.plan.arena.naive import naive_plan
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder
from buildtool.codegen.model_c import generate
from buildtool.errors import ModelError
from buildtool.plan.arena.execute import run, run_unplanned
from buildtool.plan.fusion.planner import plan_fused
from buildtool.plan.fusion.execute import run_fused
from buildtool.model.ir import Graph, validate_graph
from buildtool.model.reader import parse
from buildtool.model.writer import serialize
from buildtool.refops.div import div_params

EXTRA = sorted(EXTRA_GENERATORS)
EXTRA_TFLM = [op for op in EXTRA if op not in TFLITE_ORACLE_OPS.values()]  # TFLite Micro runs them (not GELU)


def merge(graphs: list, name: str = "merged") -> Graph:
    """Independent graphs side by side in one graph (their inputs and outputs concatenated)."""
    tensors, operators, inputs, outputs = [], [], [], []
    for g in graphs:
        base = len(tensors)

        def m(i):
            return i + base if i >= 0 else i

        tensors += [dataclasses.replace(t, index=t.index + base, name=f"g{len(inputs)}_{t.name}") for t in g.tensors]
        operators += [dataclasses.replace(op, index=len(operators) + k, inputs=tuple(map(m, op.inputs)),
                                          outputs=tuple(map(m, op.outputs)), options=dict(op.options))
                      for k, op in enumerate(g.operators)]
        inputs += [m(i) for i in g.inputs]
        outputs += [m(i) for i in g.outputs]
    g = Graph(tensors, operators, inputs, outputs, name=name)
    validate_graph(g)
    ops.check_graph(g)
    return g


def random_inputs(g, seed=0) -> list:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=g.tensors[i].shape, dtype=np.int8) for i in g.inputs]


def one_op_models(cases: int, seed: int = 7) -> Graph:
    rng = np.random.default_rng(seed)
    return merge([EXTRA_GENERATORS[op](rng) for op in EXTRA_TFLM for _ in range(cases)], "extra_ops")


def check_firmware(g, board, tmp_path, plan, seeds=(0,)):
    pipeline.build(g, board, tmp_path, plan=plan)
    data = serialize(g)
    for seed in seeds:
        xs = random_inputs(g, seed)
        ys = runner.run(board, tmp_path, xs)[0]
        ys = ys if isinstance(ys, list) else [ys]
        refs = tflm_run(data, xs, len(g.outputs))
        assert len(ys) == len(refs)
        for k, (y, r) in enumerate(zip(ys, refs)):
            assert y.dtype == r.dtype and np.array_equal(y.reshape(-1), r.reshape(-1)), (
                board, k, g.operators[[o for op in g.operators for o in op.outputs].index(g.outputs[k])].opcode)


@pytest.mark.parametrize("board,cases", [("host", 4), ("cortex-m4", 1)])
def test_random_one_op_models_in_firmware_match_tflm(board, cases, tmp_path):
    """cases random models of each operator in one image; host: two inputs each."""
    need(board)
    g = one_op_models(cases)
    assert {op.opcode for op in g.operators} >= set(EXTRA_TFLM)
    check_firmware(g, board, tmp_path, naive_plan(g), seeds=(0, 1) if board == "host" else (0,))


def chain_model(seed=3):
    """Every new operator in one network, element-wise ones on a big tensor so running them in place pays."""
    b = GraphBuilder("extra_chain", seed=seed)
    x = b.input((1, 12, 10, 4))
    k = b.conv2d(x, 8, 3, 1)
    k = b.prelu(b.tanh(b.relu(k, out_quant=(0.03, -100))))
    k = b.relu6(b.maximum(k, b.minimum(k, b.conv2d(k, 8, 1, 1, out_quant=b.quant_of(k)))))
    e = b.space_to_depth(b.resize_nearest(k, (8, 6), half_pixel_centers=True), 2)
    e = b.resize_bilinear(b.depth_to_space(e, 2), (12, 10), align_corners=True)
    e = b.squeeze(b.expand_dims(b.transpose(e, (0, 2, 1, 3)), 1), [1])
    return b.finish(b.conv2d(e, 3, 3, 2))


def inplace_plan(g, opcodes):
    """naive plan with every listed element-wise op writing over an input that dies there (same size)."""
    p = naive_plan(g)
    cons = g.consumers()
    for op in g.operators:
        xs = [x for x in g.act_inputs(op) if cons[x][-1] == op.index and x not in g.inputs
              and g.tensors[x].nbytes == g.tensors[op.outputs[0]].nbytes]
        if op.opcode in opcodes and xs:
            p.tensors[op.outputs[0]] = dataclasses.replace(p.tensors[op.outputs[0]], offset=p.tensors[xs[0]].offset)
            p.inplace_ops.append(op.index)
    return p


def test_chain_in_place_and_aliased_matches_tflm(tmp_path):
    g = chain_model()
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs)[0]
    elementwise = ("RELU", "RELU6", "TANH", "PRELU", "MAXIMUM", "MINIMUM")
    forced = inplace_plan(g, elementwise)
    assert sorted(g.operators[i].opcode for i in forced.inplace_ops) == sorted(elementwise)
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    for p in (forced, planned):
        assert np.array_equal(run(g, p, xs)[0], want.reshape(g.tensors[g.outputs[0]].shape))
    # SQUEEZE and EXPAND_DIMS are aliases: no bytes of their own, no copy in model.c
    for op in g.operators:
        if op.opcode in ("SQUEEZE", "EXPAND_DIMS"):
            assert planned.tensors[op.outputs[0]].offset == planned.tensors[op.inputs[0]].offset
    c, _ = generate(g, planned, "host")
    assert c.count("output shares the input's bytes") == 2
    assert planned.arena_bytes < naive_plan(g).arena_bytes
    check_firmware(g, "host", tmp_path / "forced", forced)


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_chain_planned_firmware_matches_tflm(board, tmp_path):
    need(board)
    g = chain_model()
    check_firmware(g, board, tmp_path, plan_arena(g))


def test_round_trip_keeps_options():
    g = one_op_models(2, seed=5)
    h = parse(serialize(g))
    assert [(op.opcode, op.options) for op in h.operators] == [(op.opcode, op.options) for op in g.operators]
    assert serialize(h) == serialize(g)


def _bad(make, match):
    with pytest.raises(ModelError, match=match):
        make()


def test_bad_models_get_one_line_errors():
    def bad_perm():
        b = GraphBuilder("t")
        b.transpose(b.input((1, 2, 3, 4)), (0, 2, 1, 3))
        g = b.finish()
        g.tensors[g.operators[0].inputs[1]].data = np.array([0, 1, 1, 3], np.int32)
        ops.check_graph(g)

    def bad_block():
        b = GraphBuilder("d")
        b.depth_to_space(b.input((1, 2, 3, 8)), 2)
        g = b.finish()
        g.operators[0].options["block_size"] = 3
        ops.check_graph(g)

    def bad_squeeze():
        b = GraphBuilder("s")
        b.squeeze(b.input((1, 2, 1, 4)), [2])
        g = b.finish()
        g.operators[0].options["squeeze_dims"] = (1,)
        ops.check_graph(g)

    def both_bilinear_modes():
        b = GraphBuilder("r")
        b.resize_bilinear(b.input((1, 4, 4, 2)), (8, 8), align_corners=True)
        g = b.finish()
        g.operators[0].options["half_pixel_centers"] = True
        parse(serialize(g))

    def alpha_does_not_broadcast():
        b = GraphBuilder("p")
        b.prelu(b.input((1, 3, 3, 2)), (1, 1, 2))
        g = b.finish()
        a = g.tensors[g.operators[0].inputs[1]]
        a.data, a.shape = np.zeros((1, 1, 3), np.int8), (1, 1, 3)
        parse(serialize(g))

    def bilinear_past_the_input():
        b = GraphBuilder("r")
        b.resize_bilinear(b.input((1, 1, 4, 2)), (55, 4))
        b.finish()

    def alpha_per_channel():
        b = GraphBuilder("p")
        b.prelu(b.input((1, 3, 3, 2)), (2,))
        g = b.finish()
        a = g.tensors[g.operators[0].inputs[1]]
        a.quant = dataclasses.replace(a.quant, scale=np.array([0.1, 0.2], np.float32), zero_point=np.zeros(2, np.int64))
        ops.check_graph(g)

    _bad(bad_perm, r"perm \[0, 1, 1, 3\] is not a permutation")
    _bad(bad_block, "not a multiple of block_size")
    _bad(bad_squeeze, "not 1")
    _bad(both_bilinear_modes, "cannot both be set")
    _bad(alpha_per_channel, "per-tensor")
    _bad(alpha_does_not_broadcast, r"alpha shape \[1, 1, 3\] must broadcast to the input shape \[1, 3, 3, 2\]")
    _bad(bilinear_past_the_input, "height 1 -> 55: at this ratio TFLM's integer interpolation reads past")


def fused_model():
    """The element-wise operators between convolutions: the least-RAM fusion plan tiles them all."""
    b = GraphBuilder("extra_fused", seed=4)
    x = b.input((1, 24, 24, 3))
    k = b.relu(b.conv2d(x, 8, 3, 2, activation="NONE"))
    k = b.prelu(b.tanh(b.depthwise(k, 3, 1, activation="NONE")))
    m = b.conv2d(k, 8, 1, 1, out_quant=b.quant_of(k), activation="NONE")
    k = b.prelu(b.relu6(b.minimum(b.maximum(k, m), k)), (1,))
    k = b.conv2d(k, 16, 3, 2)
    return b.finish(b.fully_connected(b.mean(k), 5))


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_elementwise_ops_run_inside_fused_blocks(board, tmp_path):
    need(board)
    g = fused_model()
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", time_budget=0.5)  # least RAM
    tiled = {g.operators[s.op].opcode for it in plan.schedule.blocks() for s in it.geo.steps}
    assert {"RELU", "RELU6", "TANH", "PRELU", "MAXIMUM", "MINIMUM"} <= tiled
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs)[0].reshape(-1)
    assert np.array_equal(run_fused(g, plan, xs)[0].reshape(-1), want)
    pipeline.build(g, board, tmp_path, plan=plan)
    assert np.array_equal(runner.run(board, tmp_path, xs)[0].reshape(-1), want)


def fused_leaky_sub_model():
    """LEAKY_RELU (positive and negative alpha) and SUB between convolutions."""
    b = GraphBuilder("leaky_sub_fused", seed=6)
    x = b.input((1, 24, 24, 3))
    k = b.leaky_relu(b.conv2d(x, 8, 3, 2, activation="NONE"), 0.2, out_quant=(0.04, -20))
    m = b.leaky_relu(b.depthwise(k, 3, 1, activation="NONE"), -0.3)
    k = b.sub(b.conv2d(m, 8, 1, 1, activation="NONE"), k, "RELU")
    k = b.conv2d(k, 16, 3, 2)
    return b.finish(b.fully_connected(b.mean(k), 5))


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_leaky_relu_and_sub_run_inside_fused_blocks(board, tmp_path):
    need(board)
    g = fused_leaky_sub_model()
    plan = plan_fused(g, optimize="ram", max_mac_overhead="none", time_budget=0.5)  # least RAM
    tiled = [g.operators[s.op].opcode for it in plan.schedule.blocks() for s in it.geo.steps]
    assert tiled.count("LEAKY_RELU") == 2 and "SUB" in tiled
    assert plan.arena_bytes < plan_arena(g).arena_bytes
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs)[0].reshape(-1)
    assert np.array_equal(run_fused(g, plan, xs)[0].reshape(-1), want)
    pipeline.build(g, board, tmp_path, plan=plan)
    assert np.array_equal(runner.run(board, tmp_path, xs)[0].reshape(-1), want)


def test_tflm_ignores_the_output_quantisation_where_it_does_not_requantise():
    """RELU6, TANH, MAXIMUM/MINIMUM, resizes and transposes with an output quantisation unlike the
    input's: TFLM writes raw codes anyway, and so do we (byte-exact, numpy and firmware)."""
    rng = np.random.default_rng(11)
    graphs = []
    for opcode in ("RELU6", "TANH", "MAXIMUM", "MINIMUM", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR",
                   "TRANSPOSE", "SPACE_TO_DEPTH"):
        g = EXTRA_GENERATORS[opcode](rng)
        t = g.tensors[g.outputs[0]]
        t.quant = dataclasses.replace(t.quant, scale=np.array([0.037], np.float32), zero_point=np.array([13]))
        if opcode in ("MAXIMUM", "MINIMUM"):
            x = g.tensors[g.inputs[1]]
            x.quant = dataclasses.replace(x.quant, scale=x.quant.scale * 3, zero_point=x.quant.zero_point // 2)
        graphs.append(g)
    g = merge(graphs, "raw_codes")
    xs = random_inputs(g, 3)
    want = tflm_run(serialize(g), xs, len(g.outputs))
    for y, w in zip(run(g, naive_plan(g), xs), want):
        assert np.array_equal(y.reshape(-1), w.reshape(-1))


def softmax_rows_model() -> Graph:
    """Three [1, 1000] -> SOFTMAX side by side: int8 output at input scales 0.1 and 0.02 (beta 1, 0.7),
    and int8 -> int16 output (scale 1/65536, zero point -32768)."""
    graphs = []
    for k, (scale, beta, bits) in enumerate(((0.1, 1.0, 8), (0.02, 0.7, 8), (0.1, 1.0, 16))):
        b = GraphBuilder(f"softmax1000_{k}", seed=k)
        y = b.softmax(b.input((1, 1000), scale, 0), beta=beta)
        g = b.finish()
        if bits == 16:
            g.tensors[y] = dataclasses.replace(g.tensors[y], dtype="int16",
                                               quant=dataclasses.replace(g.tensors[y].quant,
                                                                         scale=np.array([1 / 65536], np.float32),
                                                                         zero_point=np.array([-32768])))
        graphs.append(g)
    return merge(graphs, "softmax1000")


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_softmax_over_1000_near_equal_logits_in_firmware(board, tmp_path):
    """Issue 33 (a 1000-class MobileNetV3-Small): with 512 or more logits near the maximum, TFLM's int8
    SOFTMAX rounding-shifts by 32 (gemmlowp asserts, TFLite Micro aborts; the C shift was undefined, and
    the host and Cortex-M4 firmware gave all +127 and all -127 where the numpy executor gives -128). Every
    row of equal, equal +-1 and random logits now gives the numpy executor's bytes, and equal logits the
    exact rounding of 1/1000: the output zero point (tests/test_kernels.py checks it against the float
    softmax and, where TFLM returns, against TFLM)."""
    need(board)
    g = softmax_rows_model()
    pipeline.build(g, board, tmp_path)
    rng = np.random.default_rng(5)
    patterns = [np.full((1, 1000), 37, np.int8), (37 + rng.integers(-1, 2, (1, 1000))).astype(np.int8),
                rng.integers(-128, 128, (1, 1000), dtype=np.int8)]
    for turn in range(3):  # each model gets each pattern once
        xs = [patterns[(k + turn) % 3] for k in range(3)]
        ys = runner.run(board, tmp_path, xs)[0]
        want = run(g, naive_plan(g), xs)
        for k, (y, w) in enumerate(zip(ys, want)):
            assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1)), (board, turn, k)
        for k in range(2):  # int8 outputs of all-equal logits
            if (k + turn) % 3 == 0:
                assert (ys[k] == -128).all(), (board, turn, k)


def parity_chain_model(seed=5):
    """ABS, RSQRT and the comparisons between convolutions, each on a tensor that dies there (in place)."""
    b = GraphBuilder("parity_chain", seed=seed)
    x = b.input((1, 10, 9, 4))
    k = b.conv2d(x, 8, 3, 1, activation="NONE")
    a = b.abs(k, out_quant=(0.04, -128))  # non-negative reals: every code at or above the zero point
    r = b.rsqrt(a, out_quant=(0.05, -100))
    m = b.conv2d(r, 8, 1, 1, activation="NONE")
    half = b.const("half", np.full((1, 1, 1, 8), 7, np.int8), "int8", r_quant(0.05, -100))
    outs = [b.compare(op, m, half) if k % 2 else b.compare(op, m, b.conv2d(r, 8, 1, 1, activation="NONE"))
            for k, op in enumerate(("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"))]
    return b.finish(outs)


def r_quant(scale, zp):
    from buildtool.model.ir import Quant
    return Quant(np.array([scale], np.float32), np.array([zp], np.int64), 0)


def test_parity_ops_in_place_match_tflm(tmp_path):
    """ABS and RSQRT run over their dying input, comparisons over an int8 input that dies there (bool is one
    byte): forced by hand and as the planner places them; numpy executor and host firmware."""
    g = parity_chain_model()
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs, len(g.outputs))
    new = ("ABS", "RSQRT", "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")
    forced = inplace_plan(g, new)
    assert {g.operators[i].opcode for i in forced.inplace_ops} >= {"ABS", "RSQRT", "GREATER"}
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    assert planned.arena_bytes <= naive_plan(g).arena_bytes
    for p in (forced, planned):
        for y, w in zip(run(g, p, xs), want):
            assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1))
    check_firmware(g, "host", tmp_path / "forced", forced)
    check_firmware(g, "host", tmp_path / "planned", planned)


def test_parity_ops_bad_models_get_one_line_errors():
    def compare_scale_one():
        b = GraphBuilder("c")
        x = b.input((1, 2, 2, 3), scale=1.5, zp=0)
        b.compare("LESS", x, b.input((1, 2, 2, 3), name="y"))
        b.finish()

    def compare_int16():
        b = GraphBuilder("c")
        b.compare("EQUAL", b.input((1, 2, 3)), b.input((1, 2, 3), name="y"))
        g = b.finish()
        for i in g.inputs:
            g.tensors[i].dtype = "int16"
            g.tensors[i].quant = r_quant(0.001, 0)
        ops.check_graph(g)

    _bad(compare_scale_one, "compares inputs with scales below 1 only")
    _bad(compare_int16, "TFLite Micro runs EQUAL on int8 only")


def select16_model(seed=2):
    """SELECT_V2 on int16 values (16x8), the condition from int8 comparisons combined by LOGICAL_*."""
    b = GraphBuilder("select16", seed=seed)
    c = b.input((1, 4, 5, 3), name="c")
    lo, hi = (b.const(n, np.full((1,), v, np.int8), "int8", r_quant(*b.quant_of(c))) for n, v in (("lo", -40),
                                                                                                   ("hi", 50)))
    cond = b.logical("LOGICAL_OR", b.logical("LOGICAL_NOT", b.compare("GREATER", c, lo)),
                     b.logical("LOGICAL_AND", b.compare("LESS", c, hi), b.compare("NOT_EQUAL", c, lo)))
    x0, y0 = b.input((1, 4, 5, 3), name="x"), b.input((1, 1, 5, 1), name="y")
    x, y = b.quantize(x0, 0.02, 0), b.quantize(y0, 0.02, 0)  # x dies at SELECT_V2: its output may take x's bytes
    out = b.select_v2(cond, x, y)
    g = b.finish([out])
    for i in (x0, y0, x, y, out):  # the values and the QUANTIZEs before: int16, zero point 0
        g.tensors[i].dtype, g.tensors[i].quant = "int16", r_quant(0.001 * (1 + i % 3), 0)
    ops.check_graph(g)
    return g


def test_select_v2_int16_and_logical_ops_match_tflm(tmp_path):
    g = select16_model()
    rng = np.random.default_rng(4)
    xs = [rng.integers(-128, 128, (1, 4, 5, 3)).astype(np.int8), rng.integers(-3000, 3000, (1, 4, 5, 3)).astype(
        np.int16), rng.integers(-3000, 3000, (1, 1, 5, 1)).astype(np.int16)]
    want = tflm_run(serialize(g), xs)[0]
    forced = inplace_plan(g, ("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "SELECT_V2"))
    assert {g.operators[i].opcode for i in forced.inplace_ops} >= {"LOGICAL_NOT", "LOGICAL_OR", "SELECT_V2"}
    for p in (naive_plan(g), forced, plan_arena(g)):
        y = run(g, p, xs)[0]
        assert y.dtype == np.int16 and np.array_equal(y.reshape(-1), want.reshape(-1))
    for p, sub in ((forced, "forced"), (plan_arena(g), "planned")):
        pipeline.build(g, "host", tmp_path / sub, plan=p)
        assert np.array_equal(runner.run("host", tmp_path / sub, xs)[0].reshape(-1), want.reshape(-1))


def arith_chain_model(seed=6):
    """SQUARED_DIFFERENCE, ADD_N and ZEROS_LIKE between convolutions, each on a tensor that dies there."""
    b = GraphBuilder("arith_chain", seed=seed)
    x = b.input((1, 9, 8, 4))
    k = b.conv2d(x, 8, 3, 1, activation="NONE")
    d = b.squared_difference(b.conv2d(k, 8, 1, 1, activation="NONE"), b.conv2d(k, 8, 1, 1, activation="NONE"))
    q = b.quant_of(d)
    m = b.add_n([d, b.conv2d(k, 8, 1, 1, activation="NONE", out_quant=q), b.conv2d(d, 8, 1, 1, out_quant=q)])
    z = b.zeros_like(b.conv2d(m, 8, 1, 1))
    return b.finish([b.conv2d(m, 4, 3, 2), z])


def test_arith_ops_in_place_match_tflm(tmp_path):
    """SQUARED_DIFFERENCE, ADD_N and ZEROS_LIKE over a dying input: forced by hand and as the planner places them;
    numpy executor and host firmware."""
    g = arith_chain_model()
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs, len(g.outputs))
    forced = inplace_plan(g, ("SQUARED_DIFFERENCE", "ADD_N", "ZEROS_LIKE"))
    assert {g.operators[i].opcode for i in forced.inplace_ops} == {"SQUARED_DIFFERENCE", "ADD_N", "ZEROS_LIKE"}
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    for p in (forced, planned):
        for y, w in zip(run(g, p, xs), want):
            assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1))
    check_firmware(g, "host", tmp_path / "forced", forced)
    check_firmware(g, "host", tmp_path / "planned", planned)


def test_arith_ops_bad_models_get_one_line_errors():
    def add_n_two_quantisations():
        b = GraphBuilder("a")
        b.add_n([b.input((1, 2, 3), 0.1, 3), b.input((1, 2, 3), 0.1, 3, name="y")])
        g = b.finish()
        g.tensors[g.inputs[1]].quant = r_quant(0.2, 3)
        ops.check_graph(g)

    def zeros_like_int16():
        b = GraphBuilder("z")
        b.zeros_like(b.input((1, 2, 3)))
        g = b.finish()
        for t in g.tensors:
            t.dtype, t.quant = "int16", r_quant(0.001, 0)
        ops.check_graph(g)

    def log_softmax_own_quantisation():
        b = GraphBuilder("l")
        b.log_softmax(b.input((1, 5)))
        g = b.finish()
        g.tensors[g.outputs[0]].quant = r_quant(0.1, 127)
        ops.check_graph(g)

    _bad(log_softmax_own_quantisation, r"must be \(16/256, 127\), as TFLite Micro requires")
    _bad(add_n_two_quantisations, "inputs must share one quantisation, as TFLite Micro requires")
    _bad(zeros_like_int16, "TFLite Micro runs ZEROS_LIKE on int8 only")


def test_index_ops_bad_models_get_one_line_errors():
    def padded_space_to_batch():
        b = GraphBuilder("s")
        b.space_to_batch(b.input((1, 3, 4, 2), 0.1, 0), [2, 2], [[1, 0], [0, 0]])
        b.finish()

    def reverse_apart():
        b = GraphBuilder("r")
        b.reverse(b.input((1, 3, 4, 2)), [1, 3])
        b.finish()

    def gather_past_the_end():
        b = GraphBuilder("g")
        b.gather(b.input((1, 3, 4)), [0, 2], axis=1)
        g = b.finish()
        g.tensors[g.operators[0].inputs[1]].data = np.array([0, 3], np.int32)
        ops.check_graph(g)

    def ids_not_1d():
        b = GraphBuilder("e")
        ids = b.argminmax("ARG_MAX", b.input((1, 2, 3)), 2)
        b.embedding_lookup(ids, np.zeros((4, 2), np.int8), 0.1)
        b.finish()

    _bad(ids_not_1d, "ids must be 1-D int32")
    _bad(padded_space_to_batch, "TFLite Micro pads with an uninitialised value")
    _bad(reverse_apart, r"axes \[1, 3\] are not distinct and contiguous, as TFLite Micro requires")
    _bad(gather_past_the_end, r"indices must lie in \[0, 3\)")


def attention_model(seed=8, tokens=6, dim=8):
    """One attention head on BATCH_MATMUL: constant projections, Q K^T (adj_y), SOFTMAX over the keys, times V."""
    b = GraphBuilder("attention", seed=seed)
    x = b.input((1, tokens, dim))
    rng = np.random.default_rng(seed)
    w = [b.const(f"w{k}", rng.integers(-128, 128, size=(1, dim, dim)).astype(np.int8), "int8", r_quant(0.01, 0))
         for k in range(3)]
    q, k, v = (b.batch_matmul(x, wk) for wk in w)
    p = b.softmax(b.batch_matmul(q, k, adj_y=True))
    return b.finish(b.batch_matmul(p, v))


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_attention_head_on_batch_matmul_matches_tflm(board, tmp_path):
    need(board)
    g = attention_model()
    check_firmware(g, board, tmp_path, plan_arena(g), seeds=(0, 1))
    xs = random_inputs(g, 2)
    assert np.array_equal(run(g, plan_arena(g), xs)[0].reshape(-1), tflm_run(serialize(g), xs)[0].reshape(-1))


def norm_chain_model(seed=9):
    """ELU, CUMSUM, L2_NORMALIZATION and LOG_SOFTMAX between convolutions, each on a tensor that dies there."""
    b = GraphBuilder("norm_chain", seed=seed)
    x = b.input((1, 7, 6, 5))
    k = b.l2_normalization(b.cumsum(b.elu(b.conv2d(x, 8, 3, 1, activation="NONE")), 2, exclusive=True))
    k = b.log_softmax(b.conv2d(k, 8, 1, 1, activation="NONE"))
    return b.finish(b.conv2d(k, 4, 3, 2))


def test_elu_and_l2_normalization_in_place_match_tflm(tmp_path):
    g = norm_chain_model()
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs)[0]
    new = ("ELU", "CUMSUM", "L2_NORMALIZATION", "LOG_SOFTMAX")
    forced = inplace_plan(g, new)
    assert {g.operators[i].opcode for i in forced.inplace_ops} == set(new)
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    for p in (forced, planned):
        assert np.array_equal(run(g, p, xs)[0].reshape(-1), want.reshape(-1))
    check_firmware(g, "host", tmp_path / "forced", forced)


# -- DIV: TFLM's bytes where its rounding shift stays <= 31, the exact big-integer result everywhere --------------
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


def _wrap(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _srdhm(a: int, b: int) -> int:
    if a == b == _I32_MIN:
        return _I32_MAX
    n = a * b + ((1 << 30) if a * b >= 0 else 1 - (1 << 30))
    return n >> 31 if n >= 0 else -((-n) >> 31)


def _sat_pot(x: int, e: int) -> int:
    """SaturatingRoundingMultiplyByPOT<e>, e > 0."""
    t = (1 << (31 - e)) - 1
    return _I32_MAX if x > t else _I32_MIN if x < -t else x << e


def _round_pot(x: int, e: int) -> int:
    """x / 2^e rounded to nearest, ties away from zero, for any e >= 0 (Python integers: exact)."""
    if e == 0:
        return x
    m = (abs(x) + (1 << (e - 1))) >> e
    return m if x >= 0 else -m


def _one_over_one_plus_x(a: int) -> int:
    s = a + _I32_MAX
    s += 1 if s >= 0 else -1
    half = s // 2 if s >= 0 else -((-s) // 2)
    x = _wrap(1515870810 + _srdhm(half, -1010580540))
    for _ in range(3):
        x = _wrap(x + _sat_pot(_srdhm(x, _wrap((1 << 29) - _srdhm(half, x))), 2))
    return _sat_pot(x, 1)


def div_exact(p: dict, x1: int, x2: int) -> tuple:
    """(output code, TFLM's rounding shift) of one int8 DIV element in Python integers: TFLM's steps with the
    final RoundingDivideByPOT exact for every shift (TFLM's own where the shift is <= 31)."""
    v1, v2 = int(x1) + p["input1_offset"], int(x2) + p["input2_offset"]
    if v2 < 0:
        v1, v2 = -v1, -v2
    h = 32 - v2.bit_length()
    inv = _one_over_one_plus_x(((v2 << h) & 0xFFFFFFFF) - (1 << 31))
    headroom = 31 - (v1 if v1 >= 0 else ~v1).bit_length()
    e = headroom + (31 - h) - p["output_shift"]
    r = _round_pot(_srdhm(_srdhm(v1 << headroom, inv), p["output_multiplier"]), e) + p["output_offset"]
    return min(max(r, p["act_min"]), p["act_max"]), e


def div_models(seed: int = 11, count: int = 8):
    """count DIV models on ordinary quantisations (output scale independent of the inputs', so TFLM's shift
    passes 31 for small numerators), shapes [1, 16, 16] (one [1, 16, 1] divisor broadcast), every activation."""
    rng = np.random.default_rng(seed)
    graphs = []
    for k in range(count):
        b = GraphBuilder(f"div{k}", seed=k)
        q = [(float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(-128, 128))) for _ in range(3)]
        x = b.input((1, 16, 16), scale=q[0][0], zp=q[0][1], name="a")
        y = b.input((1, 16, 1) if k == 0 else (1, 16, 16), scale=q[1][0], zp=q[1][1], name="b")
        b.div(x, y, ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")[k % 4], out_quant=q[2])
        graphs.append(b.finish())
    return graphs


def div_inputs(g, rng) -> list:
    """Random codes with many numerators at and next to the zero point and some divisors at it (zero)."""
    a, b = (rng.integers(-128, 128, size=g.tensors[i].shape, dtype=np.int8) for i in g.inputs)
    z1, z2 = (g.tensors[i].zero_point for i in g.inputs)
    near = rng.random(a.shape) < 0.4
    a[near] = np.clip(z1 + rng.integers(-3, 4, size=int(near.sum())), -128, 127)
    b.reshape(-1)[:3] = z2
    return [a, b]


def div_expected(g, xs) -> tuple:
    """(exact codes, mask of the elements whose TFLM shift is <= 31) of a one-DIV model."""
    p = div_params(g, g.operators[0])
    a, b = np.broadcast_arrays(*(x.astype(np.int64) for x in xs))
    res = [div_exact(p, u, v) for u, v in zip(a.reshape(-1), b.reshape(-1))]
    return np.array([r for r, _ in res]), np.array([e <= 31 for _, e in res])


def test_div_matches_tflm_where_defined_and_the_exact_result_elsewhere():
    """Issue 33: TFLM's DIV shifts by 32 or more (undefined in C; its x86 build gives saturated codes, zp + 1 for
    a zero numerator) whenever the numerator is small next to the divisor. The numpy executor gives TFLM's bytes
    wherever the shift is <= 31 (zero divisors included) and the exactly rounded result everywhere."""
    rng = np.random.default_rng(3)
    undefined = 0
    for g in div_models():
        xs = div_inputs(g, rng)
        want, defined = div_expected(g, xs)
        got = run(g, naive_plan(g), xs)[0].reshape(-1)
        assert np.array_equal(got, want)
        tflm = tflm_run(serialize(g), xs)[0].reshape(-1)
        assert np.array_equal(got[defined], tflm[defined])
        undefined += int((~defined).sum())
        p = div_params(g, g.operators[0])  # past 31 the quotient rounds to 0: the output zero point, clamped
        assert (got[~defined] == min(max(p["output_offset"], p["act_min"]), p["act_max"])).all()
    assert undefined > 200  # the cases the rule is about are exercised (383 of 2048)


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_div_in_firmware_gives_the_exact_result(board, tmp_path):
    """The same DIV models in one image: the firmware's bytes are the numpy executor's (exact where TFLM's shift
    passes 31, TFLM's elsewhere) on x86 and Arm alike."""
    need(board)
    graphs = div_models(count=4)
    g = merge(graphs, "div_models")
    pipeline.build(g, board, tmp_path)
    rng = np.random.default_rng(8)
    for _ in range(2):
        xs = [x for h in graphs for x in div_inputs(h, rng)]
        ys = runner.run(board, tmp_path, xs)[0]
        for k, (h, y) in enumerate(zip(graphs, ys)):
            want, _ = div_expected(h, xs[2 * k:2 * k + 2])
            assert np.array_equal(y.reshape(-1), want), (board, k)


def test_div_bad_models_get_one_line_errors():
    def huge_multiplier():
        b = GraphBuilder("d")
        b.div(b.input((1, 4), scale=1.0, name="a"), b.input((1, 4), scale=1e-4, name="b"), out_quant=(1e-4, 0))
        ops.check_graph(b.finish())

    def int16():
        b = GraphBuilder("d")
        b.div(b.input((1, 4), name="a"), b.input((1, 4), name="b"))
        g = b.finish()
        for t in g.tensors:
            t.dtype, t.quant = "int16", r_quant(0.001, 0)
        ops.check_graph(g)

    _bad(huge_multiplier, r"is 2\^21 or more .*re-quantise the model")
    _bad(int16, "DIV")


# -- NEG on float32: TensorFlow's int8 LayerNormalization writes MEAN, DEQUANTIZE -> NEG -> QUANTIZE, ... ----------
def layer_norm_neg_model(seed=4):
    """x - mean(x) over the last axis as TensorFlow writes it (the mean negated in float32), plus the negated
    float32 mean as a model output."""
    b = GraphBuilder("neg_layer_norm", seed=seed)
    x = b.input((1, 12, 16), scale=0.04, zp=5)
    m = b.dequantize(b.mean(x, (2,), keep_dims=True))
    n = b.neg(m)
    return b.finish([b.add(x, b.quantize(n, 0.03, -2)), b.neg(n)])


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_neg_float32_layer_norm_matches_tflm(board, tmp_path):
    need(board)
    g = layer_norm_neg_model()
    assert [t.dtype for t in (g.tensors[i] for i in g.outputs)] == ["int8", "float32"]
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs, 2)
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    for y, w in zip(run(g, planned, xs), want):
        assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1))
    check_firmware(g, board, tmp_path, planned, seeds=(0, 1))


def test_neg_int8_is_refused():
    """TFLite Micro has no int8/int16 NEG ('Type INT8 (9) not supported' at invoke): refused with one line."""
    b = GraphBuilder("n")
    g = b.finish(b.neg(b.input((1, 4), dtype="float32")))
    for i in (*g.inputs, *g.outputs):
        g.tensors[i].dtype, g.tensors[i].quant = "int8", r_quant(0.01, 0)
    _bad(lambda: ops.check_graph(g), r"\(NEG\): tensor \d+ is int8, and TFLite Micro runs NEG on float32 only: keep "
                                     r"it float \(DEQUANTIZE before it, QUANTIZE after it\)$")


# -- GELU: the oracle is TensorFlow Lite's reference kernel (the tflite-micro interpreter does not register it) ----
def gelu_models(count: int, seed: int = 21) -> list:
    """count one-GELU models over every input code ([1, 256] inputs), approximate false and true alternately, on
    random input and output quantisations (or calibrated)."""
    rng = np.random.default_rng(seed)
    graphs = []
    for k in range(count):
        b = GraphBuilder(f"gelu{k}", seed=k)
        x = b.input((1, 256), scale=float(np.float32(rng.uniform(0.002, 0.3))), zp=int(rng.integers(-128, 128)))
        oq = (float(np.float32(rng.uniform(0.001, 0.2))), int(rng.integers(-128, 128))) if k % 3 else None
        b.gelu(x, approximate=bool(k % 2), out_quant=oq)
        graphs.append(b.finish())
    return graphs


def test_gelu_tables_match_tflite_reference():
    """Every table entry (all 256 input codes) of 60 GELU models, both approximate settings, is TFLite's (its
    reference kernel through tf.lite.Interpreter with BUILTIN_REF: conftest.tflm_run routes GELU there); the
    options survive the writer and reader."""
    codes = [np.arange(-128, 128, dtype=np.int8).reshape(1, 256)]
    for g in gelu_models(60):
        data = serialize(g)
        assert parse(data).operators[0].options == g.operators[0].options
        want = tflm_run(data, codes)[0].reshape(-1)
        assert np.array_equal(run(g, naive_plan(g), codes)[0].reshape(-1), want), g.operators[0].options


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_gelu_in_firmware_matches_tflite_reference(board, tmp_path):
    """Eight GELU models in one image (the table made at code generation, bt_lut_s8 in C), every input code, in
    place where the planner puts it: TFLite's bytes."""
    need(board)
    g = merge(gelu_models(8, seed=4), "gelu_models")
    pipeline.build(g, board, tmp_path, plan=plan_arena(g))
    xs = [np.roll(np.arange(-128, 128, dtype=np.int8), 17 * k).reshape(1, 256) for k in range(len(g.inputs))]
    ys = runner.run(board, tmp_path, xs)[0]
    for k, (y, w) in enumerate(zip(ys, tflm_run(serialize(g), xs, len(g.outputs)))):
        assert np.array_equal(y.reshape(-1), w.reshape(-1)), (board, k)


def div_neg_chain_model(seed=12):
    """DIV by a constant (a quantisation whose TFLM shifts stay defined) and the float32 NEG of a layer norm between
    convolutions, each on a tensor that dies there."""
    from opgen_extra import div_defined_quant, quant_of

    b = GraphBuilder("div_neg_chain", seed=seed)
    rng = np.random.default_rng(seed)
    k = b.conv2d(b.input((1, 7, 6, 5)), 8, 3, 1, activation="NONE")
    (s1, _), (s2, z2) = b.quant_of(k), (0.05, 3)
    codes = (z2 + rng.choice([-9, -4, -1, 1, 2, 6, 11], size=(8,))).astype(np.int8)
    d = b.div(k, b.const("c", codes, "int8", quant_of((s2, z2))), out_quant=div_defined_quant(s1, s2, z2, codes, rng))
    n = b.quantize(b.neg(b.dequantize(d)), *b.quant_of(d))
    return b.finish(b.conv2d(n, 4, 3, 2))


def test_div_and_neg_in_place_match_tflm(tmp_path):
    g = div_neg_chain_model()
    xs = random_inputs(g)
    want = tflm_run(serialize(g), xs)[0]
    forced = inplace_plan(g, ("DIV", "NEG"))
    assert {g.operators[i].opcode for i in forced.inplace_ops} == {"DIV", "NEG"}
    planned = plan_arena(g)
    assert checker.problems(g, planned) == []
    for p in (forced, planned):
        assert np.array_equal(run(g, p, xs)[0].reshape(-1), want.reshape(-1))
    check_firmware(g, "host", tmp_path / "forced", forced)


def test_gelu_in_place(tmp_path):
    """GELU over its dying input (its table is checked against TFLite above): forced in place, the numpy executor
    and host firmware give the unplanned executor's bytes."""
    b = GraphBuilder("gelu_chain", seed=3)
    k = b.gelu(b.conv2d(b.input((1, 6, 6, 4)), 8, 3, 1, activation="NONE"), approximate=True)
    g = b.finish(b.conv2d(k, 4, 1, 1))
    xs = random_inputs(g)
    want = run_unplanned(g, xs)[0]
    forced = inplace_plan(g, ("GELU",))
    assert [g.operators[i].opcode for i in forced.inplace_ops] == ["GELU"]
    assert np.array_equal(run(g, forced, xs)[0], want)
    need("host")
    pipeline.build(g, "host", tmp_path, plan=forced)
    assert np.array_equal(np.asarray(runner.run("host", tmp_path, xs)[0]).reshape(-1), want.reshape(-1))
