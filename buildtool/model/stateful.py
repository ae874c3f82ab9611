"""Stateful operators: SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM (int8, as TFLite Micro runs them).

Their state lives in *variable* tensors (`Tensor.variable`): operator inputs that the operator
updates in place and that persist across invocations (the plan keeps them in persistent buffers,
see plan.py). This module holds their semantic checks and MAC counts (their options tables are rows
of opdefs.OPDEFS, read and written by tflite_options). Options keys:
  SVDF                           rank, activation
  UNIDIRECTIONAL_SEQUENCE_LSTM   cell_clip, proj_clip, time_major, lstm_activation
Also here: the int16/int32 model edges the TFLM keyword example needs around its SVDF stack
(QUANTIZE int16 -> int8 and int16 -> int32, SOFTMAX int8 -> int16, an int16 model input).
"""

from __future__ import annotations

import math

from ..errors import ModelError

LSTM_INPUTS = 24
# UNIDIRECTIONAL_SEQUENCE_LSTM input positions (TFLite's order)
LSTM_X = 0
LSTM_W_IN = (1, 2, 3, 4)  # input-to-{input, forget, cell, output} gate weights (input gate optional)
LSTM_W_REC = (5, 6, 7, 8)  # recurrent-to-{input, forget, cell, output}
LSTM_PEEPHOLE = (9, 10, 11)
LSTM_BIAS = (12, 13, 14, 15)  # {input, forget, cell, output} gate biases
LSTM_PROJ = (16, 17)
LSTM_H, LSTM_C = 18, 19  # output (hidden) state and cell state: variable tensors
LSTM_LAYER_NORM = (20, 21, 22, 23)
GATES = ("input", "forget", "cell", "output")


def _need(cond: bool, op, what: str) -> None:
    if not cond:
        raise ModelError(f"operator {op.index} ({op.opcode}): {what}")


def _in(op, pos: int) -> int:
    return op.inputs[pos] if len(op.inputs) > pos else -1


def _const(g, op, pos, what, dtypes=("int8",), shape=None):
    i = _in(op, pos)
    _need(i >= 0 and g.tensors[i].is_const, op, f"{what} (input {pos}) must be a constant tensor")
    t = g.tensors[i]
    _need(t.dtype in dtypes, op, f"{what} (input {pos}) is {t.dtype}; it must be {' or '.join(dtypes)}")
    if shape is not None:
        _need(tuple(t.shape) == tuple(shape), op, f"{what} (input {pos}) has shape {list(t.shape)}, "
                                                  f"expected {list(shape)}")
    _need(t.quant is not None, op, f"{what} (input {pos}) has no quantisation")
    return t


def _act(g, op, i, what, dtypes=("int8",)):
    _need(i >= 0, op, f"{what} is missing")
    t = g.tensors[i]
    _need(not t.is_const, op, f"{what} must not be a constant")
    if t.dtype.startswith("float"):
        raise ModelError(f"operator {op.index} ({op.opcode}) computes in {t.dtype} (tensor '{t.name}'): float "
                         f"activations are not supported; convert the model with full-integer int8 quantisation")
    _need(t.dtype in dtypes, op, f"{what} '{t.name}' is {t.dtype}; it must be {' or '.join(dtypes)}")
    _need(t.quant is not None, op, f"{what} '{t.name}' has no quantisation")
    return t


def _state(g, op, pos, what, dtypes):
    i = _in(op, pos)
    _need(i >= 0, op, f"{what} (input {pos}) is missing")
    t = g.tensors[i]
    _need(t.variable, op, f"{what} (input {pos}) '{t.name}' must be a variable tensor (is_variable)")
    return _act(g, op, i, what, dtypes)


# -- SVDF ------------------------------------------------------------------------------------------
def svdf_dims(g, op) -> dict:
    x, wf, wt = (g.tensors[op.inputs[k]] for k in (0, 1, 2))
    rank = op.options["rank"]
    return dict(batch=x.shape[0], n_input=x.shape[1], n_filter=wf.shape[0], n_memory=wt.shape[1],
                rank=rank, n_unit=wf.shape[0] // rank)


def check_svdf(g, op) -> None:
    _need(len(op.inputs) == 5 and len(op.outputs) == 1, op, "needs 5 inputs and 1 output")
    x = _act(g, op, op.inputs[0], "input")
    _need(len(x.shape) == 2, op, f"input must be 2-D [batch, input_size], not {list(x.shape)}")
    rank = op.options.get("rank", 0)
    _need(rank >= 1, op, f"rank {rank} must be at least 1")
    wf = _const(g, op, 1, "feature weights")
    _need(len(wf.shape) == 2 and wf.shape[1] == x.shape[1], op,
          f"feature weights {list(wf.shape)} must be [num_filters, {x.shape[1]}]")
    n_filter = wf.shape[0]
    _need(n_filter % rank == 0, op, f"{n_filter} filters are not a multiple of rank {rank}")
    wt = _const(g, op, 2, "time weights", ("int8", "int16"))
    _need(len(wt.shape) == 2 and wt.shape[0] == n_filter, op,
          f"time weights {list(wt.shape)} must be [{n_filter}, memory_size]")
    d = svdf_dims(g, op)
    st = _state(g, op, 4, "activation state", ("int8", "int16"))
    _need(st.dtype == wt.dtype, op, f"activation state is {st.dtype} but time weights are {wt.dtype}; "
                                    f"they must have the same type")
    _need(tuple(st.shape) == (d["batch"], d["n_memory"] * n_filter), op,
          f"activation state {list(st.shape)} must be [{d['batch']}, {d['n_memory'] * n_filter}]")
    if _in(op, 3) >= 0:
        b = _const(g, op, 3, "bias", ("int32",))
        _need(b.num_elements == d["n_unit"], op, f"bias has {b.num_elements} values, expected {d['n_unit']}")
        want = float(st.quant.scale[0]) * float(wt.quant.scale[0])
        _need(abs(float(b.quant.scale[0]) - want) < 1e-5, op,
              "bias scale must equal activation-state scale x time-weights scale")
    y = _act(g, op, op.outputs[0], "output")
    _need(tuple(y.shape) == (d["batch"], d["n_unit"]), op,
          f"output {list(y.shape)} must be [{d['batch']}, {d['n_unit']}]")


def svdf_macs(g, op) -> int:
    d = svdf_dims(g, op)
    return d["batch"] * d["n_filter"] * (d["n_input"] + d["n_memory"])


# -- UNIDIRECTIONAL_SEQUENCE_LSTM ------------------------------------------------------------------
def lstm_dims(g, op) -> dict:
    x, h = g.tensors[op.inputs[LSTM_X]], g.tensors[op.inputs[LSTM_H]]
    tm = op.options.get("time_major", False)
    batch, steps = (x.shape[1], x.shape[0]) if tm else (x.shape[0], x.shape[1])
    return dict(batch=batch, steps=steps, n_input=x.shape[2], n_state=h.num_elements // max(batch, 1),
                time_major=tm)


def check_lstm(g, op) -> None:
    _need(len(op.inputs) == LSTM_INPUTS and len(op.outputs) == 1, op,
          f"needs {LSTM_INPUTS} inputs and 1 output, has {len(op.inputs)} and {len(op.outputs)}")
    x = _act(g, op, op.inputs[LSTM_X], "input")
    _need(len(x.shape) == 3, op, f"input must be 3-D [batch, time, input] (or time-major), not {list(x.shape)}")
    act = op.options.get("lstm_activation", "TANH")
    _need(act == "TANH", op, f"cell activation {act} is not supported (only TANH)")
    _need(op.options.get("cell_clip", 0.0) >= 0, op, "cell_clip must not be negative")
    for group, what in ((LSTM_PEEPHOLE, "peephole (cell-to-gate) weights"), (LSTM_PROJ, "a projection layer"),
                        (LSTM_LAYER_NORM, "layer normalisation")):
        _need(all(_in(op, k) < 0 for k in group), op, f"{what} is not supported")
    _need(_in(op, LSTM_W_IN[0]) >= 0, op, "has no input gate (CIFG), which TFLite Micro's integer LSTM does not run")
    h = _state(g, op, LSTM_H, "hidden (output) state", ("int8",))
    c = _state(g, op, LSTM_C, "cell state", ("int16",))
    d = lstm_dims(g, op)
    n_in, n = d["n_input"], d["n_state"]
    _need(h.num_elements == d["batch"] * n and c.num_elements == d["batch"] * n, op,
          f"hidden and cell state must hold batch x state = {d['batch']} x {n} values")
    scale = float(c.scale)
    lg = math.log2(scale)  # TFLM's CheckedLog2: within 1e-3 of a power of two
    _need(c.zero_point == 0 and abs(lg - round(lg)) < 1e-3, op,
          f"cell state scale {scale} must be a power of two with zero point 0")
    for k in LSTM_W_IN:
        w = _const(g, op, k, "input weights", shape=(n, n_in))
        _need(not w.quant.per_channel, op, f"input weights (input {k}) must be quantised per tensor")
    for k in LSTM_W_REC:
        w = _const(g, op, k, "recurrent weights", shape=(n, n))
        _need(not w.quant.per_channel, op, f"recurrent weights (input {k}) must be quantised per tensor")
    for k in LSTM_BIAS:
        _const(g, op, k, "gate bias", ("int32",), shape=(n,))
    y = _act(g, op, op.outputs[0], "output")
    x0, x1 = x.shape[0], x.shape[1]
    _need(tuple(y.shape) == (x0, x1, n), op, f"output {list(y.shape)} must be [{x0}, {x1}, {n}]")


def lstm_macs(g, op) -> int:
    d = lstm_dims(g, op)
    return d["batch"] * d["steps"] * 4 * d["n_state"] * (d["n_input"] + d["n_state"])


# -- int16 / int32 model edges (QUANTIZE, SOFTMAX) ---------------------------------------------------
# (int8/int16 <-> int8/int16 QUANTIZE is ordinary 16x8: ops.INT16_OPS)
EDGE_TYPES = {"QUANTIZE": {("int16", "int32")},
              "SOFTMAX": {("int8", "int16")}}


def edge_types(g, op) -> tuple | None:
    """(input dtype, output dtype) of a QUANTIZE/SOFTMAX with a non-int8 side, else None."""
    if op.opcode not in EDGE_TYPES or not op.inputs or op.inputs[0] < 0 or not op.outputs:
        return None
    pair = (g.tensors[op.inputs[0]].dtype, g.tensors[op.outputs[0]].dtype)
    return pair if pair in EDGE_TYPES[op.opcode] else None


def check_edge(g, op) -> None:
    x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    _need(x.quant is not None and y.quant is not None, op, "input and output need quantisation")
    _need(tuple(x.shape) == tuple(y.shape), op, "input and output shapes differ")
    if op.opcode == "SOFTMAX":
        _need(y.zero_point == -32768 and abs(float(y.scale) - 1.0 / 65536) < 1e-9, op,
              "an int16 softmax output must have scale 1/65536 and zero point -32768")


# -- dispatch (one-line entries in ops.py and tflite_reader.py) ------------------------------------
# Checks and MAC counts: named by opdefs.OPDEFS.
