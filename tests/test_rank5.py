"""Issue 54 item 2: every operator the checker accepts at rank 5 builds and runs on every kernel set byte for byte
as TFLite Micro, and every one it does not is refused by the check, in one line, before planning. Binary
operators above 4-D run on the 4-D kernels when their broadcast folds to 4 axes (model.ops.fold_axes: a
MobileViT block's [1, 2, 2, N, C] x [1, 1, 1, 1, C] folds to 2), PAD and PADV2 when their unpadded axes fold
(model.ops.fold_pad); what does not fold is refused at check time. Every operator of the table (model/opdefs.py)
is in exactly one list here, so a new one needs a decision."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import tflm_run
from test_firmware import need

from buildtool import pipeline
from buildtool.errors import ModelError
from buildtool.firmware import runner
from buildtool.model import opdefs
from buildtool.model.ops import check_graph, check_op, fold_axes, fold_pad, folded_broadcast
from buildtool.model.writer import serialize
from buildtool.plan.arena.execute import run
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder, as_int16x8

S = (1, 2, 3, 4, 5)

# opcode -> its rank-5 case (builder, x [1, 2, 3, 4, 5], m = MEAN of x over axes 2 and 4 [1, 2, 1, 4, 1],
# h = MEAN over axis 1 [1, 1, 3, 4, 5]): all in one model, built and run once per board
ACCEPTED = {
    "ADD": lambda b, x, m, h: b.add(x, m),
    "SUB": lambda b, x, m, h: b.sub(x, h),
    "MUL": lambda b, x, m, h: b.mul(x, m),
    "MAXIMUM": lambda b, x, m, h: b.maximum(x, h),
    "MINIMUM": lambda b, x, m, h: b.minimum(m, x),
    "PRELU": lambda b, x, m, h: b.prelu(x),
    "RELU": lambda b, x, m, h: b.relu(x),
    "RELU6": lambda b, x, m, h: b.relu6(x),
    "ABS": lambda b, x, m, h: b.abs(x),
    "RSQRT": lambda b, x, m, h: b.rsqrt(b.abs(x)),
    "TANH": lambda b, x, m, h: b.tanh(x),
    "LOGISTIC": lambda b, x, m, h: b.logistic(x),
    "HARD_SWISH": lambda b, x, m, h: b.hard_swish(x),
    "LEAKY_RELU": lambda b, x, m, h: b.leaky_relu(x),
    "ELU": lambda b, x, m, h: b.elu(x),
    "QUANTIZE": lambda b, x, m, h: b.quantize(x, 0.02, 3),
    "DEQUANTIZE": lambda b, x, m, h: b.dequantize(x),
    "NEG": lambda b, x, m, h: b.neg(b.dequantize(x)),
    "CAST": lambda b, x, m, h: b.cast(x, "int32"),
    "SOFTMAX": lambda b, x, m, h: b.softmax(x),
    "LOG_SOFTMAX": lambda b, x, m, h: b.log_softmax(x),
    "CONCATENATION": lambda b, x, m, h: b.concat([x, x], axis=2),
    "PACK": lambda b, x, m, h: b.pack([x, x], axis=1),
    "UNPACK": lambda b, x, m, h: b.unpack(x, axis=2)[1],
    "SPLIT": lambda b, x, m, h: b.split(x, 2, axis=1)[1],
    "SPLIT_V": lambda b, x, m, h: b.split_v(x, [1, 2], axis=2)[1],
    "TRANSPOSE": lambda b, x, m, h: b.transpose(x, [0, 2, 1, 4, 3]),
    "RESHAPE": lambda b, x, m, h: b.reshape(b.relu(x), (1, 6, 20)),
    "SQUEEZE": lambda b, x, m, h: b.squeeze(b.relu(x), (0,)),
    "EXPAND_DIMS": lambda b, x, m, h: b.expand_dims(b.relu(m), 1),
    "MEAN": lambda b, x, m, h: b.mean(x, axes=(2, 3)),
    "SUM": lambda b, x, m, h: b.reduce("SUM", x, axes=(2, 3)),
    "REDUCE_MAX": lambda b, x, m, h: b.reduce("REDUCE_MAX", x, axes=(3,)),
    "REDUCE_MIN": lambda b, x, m, h: b.reduce("REDUCE_MIN", m, axes=(1, 3)),  # adjacent past a size-1 axis
    "PAD": lambda b, x, m, h: b.pad(x, [[0, 0], [1, 1], [0, 0], [1, 0], [0, 0]]),
    "PADV2": lambda b, x, m, h: b.padv2(x, [[0, 0], [0, 0], [0, 1], [0, 0], [2, 0]], 3),
    "REVERSE_V2": lambda b, x, m, h: b.reverse(x, [2]),
    "BROADCAST_TO": lambda b, x, m, h: b.broadcast_to(m, (1, 2, 3, 4, 5)),
    "BATCH_MATMUL": lambda b, x, m, h: b.batch_matmul(x, b.transpose(h, [0, 1, 2, 4, 3])),
    "CUMSUM": lambda b, x, m, h: b.cumsum(x, axis=2),
    "GATHER": lambda b, x, m, h: b.gather(x, [0, 2], axis=2),
    "GATHER_ND": lambda b, x, m, h: b.gather_nd(x, [[0, 1], [0, 0]]),
    "ADD_N": lambda b, x, m, h: b.add_n([x, x]),
    "ZEROS_LIKE": lambda b, x, m, h: b.zeros_like(x),
    "ARG_MAX": lambda b, x, m, h: b.argminmax("ARG_MAX", x, axis=2),
    "ARG_MIN": lambda b, x, m, h: b.argminmax("ARG_MIN", x, axis=4),
    "SHAPE": lambda b, x, m, h: b.shape_of(x),
    "FULLY_CONNECTED": lambda b, x, m, h: b.fully_connected(x, 3),
}

# opcode -> its rank-5 case, which the check refuses (the builder checks each operator as it adds it)
REFUSED = {
    "DIV": (lambda b, x: b.div(x, x), "rank 5 is above the 4 supported"),
    "SQUARED_DIFFERENCE": (lambda b, x: b.squared_difference(x, x), "rank 5 is above the 4 supported"),
    **{op: (lambda b, x, op=op: b.compare(op, x, x), "rank 5 is above the 4 TFLite Micro compares")
       for op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")},
    "STRIDED_SLICE": (lambda b, x: b.strided_slice(x, [0] * 5, list(S), [1, 1, 2, 1, 2]),
                      "a 5-D input: TFLite Micro slices at most 4 dimensions"),
    "SLICE": (lambda b, x: b.slice(x, [0, 0, 1, 1, 1], [1, 2, 2, 2, 3]), "(at most 4)"),
    "MIRROR_PAD": (lambda b, x: b.mirror_pad(x, [[0, 0], [1, 1], [0, 1], [1, 0], [0, 0]]),
                   "rank 5 is above the 4 supported"),
    "L2_NORMALIZATION": (lambda b, x: b.l2_normalization(x), "more than 4 dimensions: TFLite Micro refuses them"),
    "SPACE_TO_BATCH_ND": (lambda b, x: b.space_to_batch(x, [2, 2], [[0, 0], [0, 0]]), "needs a 3-D or 4-D input"),
    "BATCH_TO_SPACE_ND": (lambda b, x: b.batch_to_space(x, [1, 1], [[0, 0], [0, 0]]), "needs a 3-D or 4-D input"),
    "SVDF": (lambda b, x: b.svdf(x, 4), "input must be 2-D"),
}

# opcode -> its 4-D case (x [1, 3, 4, 5]): the check refuses it once its input is made 5-D ([1, 1, 3, 4, 5])
FOUR_D = {
    "CONV_2D": lambda b, x: b.conv2d(x, 4, 3),
    "DEPTHWISE_CONV_2D": lambda b, x: b.depthwise(x, 3),
    "AVERAGE_POOL_2D": lambda b, x: b.avg_pool(x, 2),
    "MAX_POOL_2D": lambda b, x: b.max_pool(x, 2),
    "RESIZE_NEAREST_NEIGHBOR": lambda b, x: b.resize_nearest(x, (4, 6)),
    "RESIZE_BILINEAR": lambda b, x: b.resize_bilinear(x, (4, 6)),
    "TRANSPOSE_CONV": lambda b, x: b.transpose_conv(x, 4),
    "DEPTH_TO_SPACE": lambda b, x: b.depth_to_space(b.concat([x, x, x, x][:4], axis=3), 2),
    "SPACE_TO_DEPTH": lambda b, x: b.space_to_depth(b.pad(x, [[0, 0], [0, 1], [0, 0], [0, 0]]), 2),
}

# neither: operators with no rank-5 form to try (inputs of a fixed meaning, or none of int8 at rank 5), each why
OTHERS = {
    "GELU": "element-wise on its element count (reference/activation.c); checked against TFLite's reference "
            "interpreter, not TFLite Micro, so it is not in the shared model",
    "FILL": "its output shape is a constant's values (the builder writes 1-D to 4-D)",
    "LOGICAL_AND": "bool operands come from comparisons, which stop at 4-D",
    "LOGICAL_OR": "as LOGICAL_AND", "LOGICAL_NOT": "as LOGICAL_AND", "SELECT_V2": "its condition is a bool (as LOGICAL_AND); its check stops at 4-D",
    "EMBEDDING_LOOKUP": "1-D ids and a 2-D table",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "3-D [batch, time, features]",
    "READ_VARIABLE": "a resource variable's tensor", "ASSIGN_VARIABLE": "a resource variable's tensor",
    "IF": "control flow", "WHILE": "control flow",
}


def _signal(name):
    return name.startswith("SIGNAL_")


def test_every_operator_is_decided_once():
    lists = [set(ACCEPTED), set(REFUSED), set(FOUR_D), set(OTHERS)]
    names = {n for n in opdefs.BY_NAME if not _signal(n)}  # the signal library: 1-D frames, checked so
    assert sum(len(s) for s in lists) == len(set().union(*lists))
    assert set().union(*lists) == names


def rank5_model():
    b = GraphBuilder("rank5")
    x = b.input(S)
    m, h = b.mean(b.mean(x, axes=(2,), keep_dims=True), axes=(4,), keep_dims=True), b.mean(x, axes=(1,), keep_dims=True)
    return b.finish([fn(b, x, m, h) for fn in ACCEPTED.values()])


def inputs(n: int = 2) -> list:
    return [[np.random.default_rng(s).integers(-128, 128, size=S, dtype=np.int8)] for s in range(n)]


def same(ys, want):
    assert len(ys) == len(want)
    for y, w in zip(ys, want):
        y, w = np.asarray(y), np.asarray(w)
        assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1)), (y.reshape(-1), w.reshape(-1))


def test_the_folds():
    # a MobileViT block's gate: [1, 2, 2, 16, 32] x [1, 1, 1, 1, 32] -> 2 axes
    assert folded_broadcast((1, 2, 2, 16, 32), [(1, 2, 2, 16, 32), (1, 1, 1, 1, 32)]) == (
        [64, 32], [32, 1], [32, 1], [0, 1])
    assert folded_broadcast((1, 2, 3, 4, 5), [(1, 2, 3, 4, 5), (1, 2, 1, 4, 1)])[0] == [2, 3, 4, 5]
    assert len(folded_broadcast((2, 3, 4, 5, 6), [(2, 1, 4, 1, 6), (1, 3, 1, 5, 1)])[0]) == 5
    assert fold_axes([1, 1], [1, 1]) == ([1], [0])
    assert fold_pad((1, 2, 3, 4, 5), [[0, 0], [1, 1], [0, 0], [1, 0], [0, 0]]) == ([6, 20], [3, 5], [3, 0])
    assert fold_pad((2, 3, 4, 5, 6), [[1, 1]] * 5) == ([2, 3, 4, 5, 6], [1] * 5, [1] * 5)


def test_executor_is_tflite_micros():
    g = rank5_model()
    data, p = serialize(g), plan_arena(g)
    for x in inputs():
        want = tflm_run(data, x, len(g.outputs))
        same(run(g, p, x), want)


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "cortex-m4", "cortex-m55", "riscv32", "xcore", "cortex-m0plus"])
def test_firmware_is_tflite_micros(board, tmp_path):
    need(board)
    g = rank5_model()
    data = serialize(g)
    pipeline.build(g, board, tmp_path)
    for x in inputs():
        same(runner.run(board, tmp_path, x)[0], tflm_run(data, x, len(g.outputs)))


INT16 = ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "PRELU", "PAD", "PADV2", "CONCATENATION", "TRANSPOSE", "MEAN")


@pytest.mark.slow
@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_16x8_firmware_is_tflite_micros(board, tmp_path):
    """The folded broadcasts and pads on int16 activations (zoo.builder.as_int16x8 of the same cases)."""
    need(board)
    b = GraphBuilder("rank5_16")
    x = b.input(S)
    m, h = b.mean(b.mean(x, axes=(2,), keep_dims=True), axes=(4,), keep_dims=True), b.mean(x, axes=(1,), keep_dims=True)
    g = as_int16x8(b.finish([ACCEPTED[op](b, x, m, h) for op in INT16]))
    assert {g.tensors[i].dtype for i in g.outputs} == {"int16"}
    data = serialize(g)
    pipeline.build(g, board, tmp_path)
    for s in range(2):
        x16 = [np.random.default_rng(s).integers(-32768, 32768, size=S, dtype=np.int16)]
        want = tflm_run(data, x16, len(g.outputs))
        same(run(g, plan_arena(g), x16), want)
        same(runner.run(board, tmp_path, x16)[0], want)


@pytest.mark.parametrize("opcode", sorted(REFUSED))
def test_refused_by_the_check_in_one_line(opcode):
    fn, msg = REFUSED[opcode]
    b = GraphBuilder(opcode.lower())
    with pytest.raises(ModelError) as e:
        b.finish([fn(b, b.input(S))])
    assert f"({opcode}): " in str(e.value) and msg in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("opcode", sorted(FOUR_D))
def test_four_d_operators_refuse_a_five_d_input(opcode):
    b = GraphBuilder(opcode.lower())
    x = b.input((1,) + S[2:])
    g = b.finish([FOUR_D[opcode](b, x)])
    check_graph(g)
    op = next(op for op in g.operators if op.opcode == opcode)
    i = op.inputs[2] if opcode == "TRANSPOSE_CONV" else op.inputs[0]
    g.tensors[i] = dataclasses.replace(g.tensors[i], shape=(1,) + tuple(g.tensors[i].shape))
    with pytest.raises(ModelError) as e:
        check_op(g, op)
    assert f"({opcode}): " in str(e.value) and "\n" not in str(e.value)


def mean(b, x, axes):
    """MEAN over axes one at a time (a reduction needs adjacent axes), keeping dimensions."""
    for a in axes:
        x = b.mean(x, axes=(a,), keep_dims=True)
    return x


def test_a_reduction_over_axes_apart_is_refused_at_check_time():
    b = GraphBuilder("mean")
    x = b.input(S)
    with pytest.raises(ModelError) as e:
        b.finish([b.mean(x, axes=(2, 4), keep_dims=True)])
    assert str(e.value) == ("operator 0 (MEAN): axes [2, 4] of [1, 2, 3, 4, 5] are not adjacent (size-1 axes aside), "
                            "which the kernels need; reduce them one run of adjacent axes at a time")
    b = GraphBuilder("mean")
    b.finish([b.reduce("SUM", b.input((1, 2, 1, 4)), axes=(1, 3), keep_dims=True)])  # adjacent past the 1


@pytest.mark.parametrize("case", ["broadcast", "pad"])
def test_what_does_not_fold_is_refused_at_check_time(case):
    b = GraphBuilder(case)
    x = b.input((2, 3, 4, 5, 6) if case == "broadcast" else S)
    with pytest.raises(ModelError) as e:
        if case == "broadcast":
            b.finish([b.mul(mean(b, x, (1, 3)), mean(b, x, (0, 2, 4)))])
        else:
            b.finish([b.pad(x, [[1, 1]] * 5)])
    want = ("a 5-D broadcast of [2, 1, 4, 1, 6] and [1, 3, 1, 5, 1] that does not fold to 4 dimensions"
            if case == "broadcast" else "5-D padding [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1]] that does not fold")
    assert want in str(e.value) and "\n" not in str(e.value)
