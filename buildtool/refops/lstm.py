"""UNIDIRECTIONAL_SEQUENCE_LSTM, int8 (TFLite Micro's integer LSTM kernel, 8x8->16).

int8 input, weights and hidden state (= the output), int32 biases, int16 cell state. The four
gates (input, forget, cell, output) each run two fully-connected layers into int16 on the
fixed scale 2^-12 (Q3.12): the input one (input zero point, gate bias) and the recurrent one on
the hidden state (hidden zero point, no bias), each rescaled by
double(in_scale) * double(weight_scale) / 2^-12 and saturated to int16, then added with int16
saturation. Gates go through TFLM's int16 LUT sigmoid (the cell gate through its LUT tanh)
into Q0.15. Then, element-wise:
  cell   = sat16(MBQM(forget * cell, 2^-15) + MBQM(input * cell_gate, 2^-30 / cell_scale)),
           clipped to +-cell_clip / cell_scale when cell_clip > 0;
  hidden = clamp8(MBQM(tanh(cell) * output, 2^-30 / hidden_scale) + hidden_zp),
where tanh(cell) reads the cell state on its power-of-two scale. The hidden state of every step
is the output row of that step. Batch-major input [batch, time, in] runs each batch row through
all its steps; time-major [time, batch, in] runs all batch rows per step. The state tensors
(hidden, cell) are variable: they carry over to the next invocation. ins = [input, hidden, cell].
"""

from __future__ import annotations

import math

import numpy as np

from . import activation
from .quant_math import mbqm, quantize_multiplier_scalar

GATE_SCALE = 2.0 ** -12  # fully-connected outputs, sigmoid/tanh inputs (Q3.12)
ACT_SCALE = 2.0 ** -15  # sigmoid/tanh outputs (Q0.15)
# input positions of the gate weights and biases (TFLite's order), gates in TFLM's evaluation order
GATE_INPUTS = {"forget": (2, 6, 13), "input": (1, 5, 12), "cell": (3, 7, 14), "output": (4, 8, 15)}


def sigmoid16(x):
    """TFLM reference_integer_ops::Logistic on int16 Q3.12 input (multiplier 3, no shift) -> Q0.15."""
    return activation.sigmoid16(np.asarray(x, dtype=np.int64) * 3)


def tanh16(x, scale_power: int):
    """TFLM's int16 tanh of a value on scale 2^scale_power -> Q0.15 (LstmTanh: shift 15 + power - 3)."""
    shift = 15 + scale_power - 3
    if shift < 0:
        mult, shift = 3, -shift
    else:
        mult, shift = 3 << shift, 0
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    return activation.tanh16((np.asarray(x, dtype=np.int64) * mult + rnd) >> shift)


def _sat16(x):
    return np.clip(x, -32768, 32767)


def lstm_params(g, op) -> dict:
    """The integers TFLM's UnidirectionalSequenceLstmPrepare computes (shared with code generation)."""
    x, h, c = (g.tensors[op.inputs[k]] for k in (0, 18, 19))
    f64 = np.float64
    gates = {}
    for name, (wi, wr, b) in GATE_INPUTS.items():
        twi, twr = g.tensors[op.inputs[wi]], g.tensors[op.inputs[wr]]
        mi, si = quantize_multiplier_scalar(float(f64(x.scale) * f64(twi.scale) / f64(GATE_SCALE)))
        mr, sr = quantize_multiplier_scalar(float(f64(h.scale) * f64(twr.scale) / f64(GATE_SCALE)))
        gates[name] = dict(in_mult=mi, in_shift=si, rec_mult=mr, rec_shift=sr, w_in_zp=twi.zero_point,
                           w_rec_zp=twr.zero_point)
    power = int(round(math.log2(float(c.scale))))
    fm, fs = quantize_multiplier_scalar(float(f64(np.float32(ACT_SCALE)) * f64(c.scale) / f64(c.scale)))
    im, is_ = quantize_multiplier_scalar(float(f64(np.float32(ACT_SCALE)) * f64(np.float32(ACT_SCALE)) / f64(c.scale)))
    om, os_ = quantize_multiplier_scalar(float(f64(np.float32(ACT_SCALE)) * f64(np.float32(ACT_SCALE)) / f64(h.scale)))
    clip = float(op.options.get("cell_clip", 0.0))
    qclip = int(max(min(float(f64(np.float32(clip)) / f64(c.scale)), 32767.0), -32768.0)) if clip > 0 else 0
    return dict(gates=gates, input_zp=x.zero_point, hidden_zp=h.zero_point, cell_power=power,
                forget_mult=fm, forget_shift=fs, input_mult=im, input_shift=is_, output_mult=om, output_shift=os_,
                cell_clip=qclip)


def _fc16(x, w, zp_x, zp_w, bias, mult, shift):
    acc = (x.astype(np.int64) - zp_x) @ (w.astype(np.int64) - zp_w).T
    if bias is not None:
        acc = acc + bias
    return _sat16(mbqm(acc, mult, shift))


def lstm(g, op, ins, outs) -> None:
    p = lstm_params(g, op)
    x, hidden, cell = ins
    y = outs[0]
    time_major = op.options.get("time_major", False)
    n_state = hidden.size // (x.shape[1] if time_major else x.shape[0])
    hflat, cflat = hidden.reshape(-1, n_state), cell.reshape(-1, n_state)
    consts = {name: (g.tensors[op.inputs[wi]].data, g.tensors[op.inputs[wr]].data,
                     g.tensors[op.inputs[b]].data.astype(np.int64) if op.inputs[b] >= 0 else None)
              for name, (wi, wr, b) in GATE_INPUTS.items()}

    def step(xt, rows):
        """One time step for the batch rows `rows` of the state, input xt [len(rows), n_in]."""
        h, c = hflat[rows], cflat[rows].astype(np.int64)
        gate = {}
        for name, (wi, wr, b) in consts.items():
            q = p["gates"][name]
            a = _fc16(xt, wi, p["input_zp"], q["w_in_zp"], b, q["in_mult"], q["in_shift"])
            r = _fc16(h, wr, p["hidden_zp"], q["w_rec_zp"], None, q["rec_mult"], q["rec_shift"])
            s = _sat16(a + r)
            act = tanh16(s, -12) if name == "cell" else sigmoid16(s)
            gate[name] = act.astype(np.int64)
        fc = _sat16(mbqm(gate["forget"] * c, p["forget_mult"], p["forget_shift"]))
        ic = _sat16(mbqm(gate["input"] * gate["cell"], p["input_mult"], p["input_shift"]))
        c = _sat16(fc + ic)
        if p["cell_clip"] > 0:
            c = np.clip(c, -p["cell_clip"], p["cell_clip"])
        t = tanh16(c, p["cell_power"]).astype(np.int64)
        h = np.clip(mbqm(t * gate["output"], p["output_mult"], p["output_shift"]) + p["hidden_zp"], -128, 127)
        cflat[rows] = c
        hflat[rows] = h
        return h

    if time_major:  # [time, batch, in]: every batch row per step
        for t in range(x.shape[0]):
            y[t] = step(x[t], slice(None))
    else:  # [batch, time, in]: one batch row through all its steps
        for b in range(x.shape[0]):
            for t in range(x.shape[1]):
                y[b, t] = step(x[b, t][None, :], slice(b, b + 1))[0]
