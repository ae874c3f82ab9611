"""Code generation for the stateful operators (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM, READ_VARIABLE and
ASSIGN_VARIABLE) and their variable tensors.

A variable tensor lives in a persistent buffer of the arena (plan.py): model_init() resets it once,
as TFLite Micro's ResetVariableTensors does, and model_invoke() only updates it, so the state
carries over from one invocation to the next. The emitters fn(e, op) are named in the operator
table (model/opdefs.py, column emit).
"""

from __future__ import annotations

import numpy as np

from ..model.stateful import LSTM_C, LSTM_H, LSTM_X, lstm_dims, svdf_dims
from ..refops.lstm import GATE_INPUTS, lstm_params
from ..refops.svdf import svdf_params
from .c_text import c_comment, c_ints, c_local_array, c_struct


def state_reset(e) -> list:
    """C lines for model_init(): every byte of each variable tensor set to its reset byte."""
    lines = []
    for v in e.g.variable_tensors():
        t = e.g.tensors[v]
        off = e.place(v).offset
        if t.init is not None:  # a resource variable's start value (its CALL_ONCE init subgraph's constant)
            raw = np.ascontiguousarray(t.init).reshape(-1).view(np.uint8).tolist()
            lines.append(f"  {{ /* variable '{c_comment(t.name)}': its start value */\n"
                         f"    static const uint8_t init[{len(raw)}] = {c_ints(raw)};\n"
                         f"    for (uint32_t i = 0; i < {len(raw)}u; i++) ((uint8_t *)({e.at(off)}))[i] = init[i];\n  }}")
            continue
        byte = f"({e.at(off)})[i]" if getattr(e.plan, "arena_regions", None) else f"bt_arena[{off}u + i]"
        lines.append(f"  for (uint32_t i = 0; i < {t.nbytes}u; i++) {byte} = "
                     f"(int8_t){t.state_fill_byte - 256 if t.state_fill_byte > 127 else t.state_fill_byte}; "
                     f"/* state '{c_comment(t.name)}' */")
    return lines


def svdf(e, op) -> None:
    g, n = e.g, f"op{op.index}"
    for i in (op.inputs[0], op.inputs[4], op.outputs[0]):
        e.dense(op, i)
    d = svdf_dims(g, op)
    wt = g.tensors[op.inputs[2]]
    bits = 16 if wt.dtype == "int16" else 8
    p = svdf_params(g, op)
    fields = dict(batch=d["batch"], n_input=d["n_input"], n_filter=d["n_filter"], n_memory=d["n_memory"],
                  rank=d["rank"], input_zp=p["input_zp"], state_zp=p["state_zp"], output_zp=p["output_zp"],
                  mult1=p["mult1"], shift1=p["shift1"], mult2=p["mult2"], shift2=p["shift2"], state_bits=bits,
                  weights_feature=e.weight(op.inputs[1], "int8_t"),
                  weights_time=e.weight(op.inputs[2], "int16_t" if bits == 16 else "int8_t"),
                  bias=e.bias(op))
    e.declare(f"static const bt_svdf_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_svdf_s8(&{n}_p, {e.act(op.inputs[0])}, {e.at(e.place(op.inputs[4]).offset)}, "
               f"{e.act(op.outputs[0])});")


def lstm(e, op) -> None:
    g, n = e.g, f"op{op.index}"
    for i in (op.inputs[LSTM_X], op.inputs[LSTM_H], op.inputs[LSTM_C], op.outputs[0]):
        e.dense(op, i)
    d, p = lstm_dims(g, op), lstm_params(g, op)
    fields = dict(batch=d["batch"], steps=d["steps"], n_input=d["n_input"], n_state=d["n_state"],
                  time_major=int(d["time_major"]), input_zp=p["input_zp"], hidden_zp=p["hidden_zp"],
                  cell_power=p["cell_power"], forget_mult=p["forget_mult"], forget_shift=p["forget_shift"],
                  input_mult=p["input_mult"], input_shift=p["input_shift"], output_mult=p["output_mult"],
                  output_shift=p["output_shift"], cell_clip=p["cell_clip"])
    for gate, (wi, wr, b) in GATE_INPUTS.items():
        q = p["gates"][gate]
        fields[gate] = dict(in_mult=q["in_mult"], in_shift=q["in_shift"], rec_mult=q["rec_mult"],
                            rec_shift=q["rec_shift"], w_in_zp=q["w_in_zp"], w_rec_zp=q["w_rec_zp"],
                            w_in=e.weight(op.inputs[wi], "int8_t"), w_rec=e.weight(op.inputs[wr], "int8_t"),
                            bias=e.bias(op, pos=b))
    fields["sigmoid_table"] = e.sigmoid_table16()
    e.declare(f"static const bt_lstm_params {n}_p = {c_struct(fields)};")
    e.call(op, f"bt_lstm_s8(&{n}_p, {e.act(op.inputs[LSTM_X])}, {e.act(op.inputs[LSTM_H])}, "
               f"{e.act(op.inputs[LSTM_C], 'int16_t')}, {e.act(op.outputs[0])});")



def _copy(e, op, src: int, dst: int) -> None:
    """A byte copy between a variable and a value tensor (TFLM's memcpy): the one-part concat kernel."""
    e.dense(op, src)
    e.dense(op, dst)
    n = f"op{op.index}"
    e.declare(f"static const int32_t {n}_sizes[1] = {{{e.g.tensors[src].nbytes}}};")
    e.declare(f"static const bt_concat_params {n}_p = {{.n = 1, .outer = 1, .size = {n}_sizes}};")
    e.call(op, f"{{\n    {c_local_array('const int8_t *', 'in', [e.weight(src, 'int8_t') if e.g.tensors[src].is_const else e.act(src)])}"
               f"    bt_concat_s8(&{n}_p, in, {e.act(dst)});\n  }}")


def read_variable(e, op) -> None:
    _copy(e, op, op.inputs[0], op.outputs[0])


def assign_variable(e, op) -> None:
    _copy(e, op, op.inputs[1], op.inputs[0])
