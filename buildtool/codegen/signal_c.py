"""Code generation for TFLite Micro's signal library (model/signal.py; kernels/reference/signal.c).

Each emitter fn(e, op) is named in the operator's opdefs row (column emit). RFFT's Q15 twiddle tables and
kiss_fft's factors are made here from refops.signal (the numpy kernel's own tables), once per length.
"""

from __future__ import annotations

import numpy as np

from ..model.signal import fft_factors, framer_capacity
from ..refops.signal import fft_twiddles
from .c_text import c_struct


def _dense(e, op) -> None:
    for i in list(op.inputs) + list(op.outputs):
        if i >= 0 and not e.g.tensors[i].is_const:
            e.dense(op, i)


def window(e, op) -> None:
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    _dense(e, op)
    t = e.g.tensors[x]
    e.call(op, f"bt_signal_window_s16({t.num_elements}, {e.g.tensors[w].shape[0]}, {op.options['shift']}, "
               f"{e.weight(w, 'int16_t')}, {e.act(x, 'int16_t')}, {e.act(y, 'int16_t')});")


def rfft(e, op) -> None:
    x, y = op.inputs[0], op.outputs[0]
    _dense(e, op)
    n = op.options["fft_length"]
    tw, sup = fft_twiddles(n)
    tws = e.table(f"bt_rfft{n}_twiddles", "int16_t", tw.reshape(-1).tolist())
    sups = e.table(f"bt_rfft{n}_super", "int16_t", sup.reshape(-1).tolist())
    factors = fft_factors(n // 2)
    fs = e.table(f"bt_rfft{n}_factors", "int32_t", factors)
    tx, ty = e.g.tensors[x], e.g.tensors[y]
    fields = dict(n=n // 2, in_len=tx.shape[-1], frames=tx.num_elements // tx.shape[-1], out_stride=ty.shape[-1],
                  nfactors=len(factors), factors=fs, twiddles=tws, super_twiddles=sups)
    name = f"op{op.index}"
    e.declare(f"static const bt_rfft_params {name}_p = {c_struct(fields)};")
    e.call(op, f"bt_signal_rfft_s16(&{name}_p, {e.act(x, 'int16_t')}, {e.act(y, 'int16_t')});")


def energy(e, op) -> None:
    x, y = op.inputs[0], op.outputs[0]
    _dense(e, op)
    o = op.options
    e.call(op, f"bt_signal_energy({e.g.tensors[y].shape[0]}, {o['start_index']}, {o['end_index']}, "
               f"{e.act(x, 'int16_t')}, {e.act(y, 'uint32_t')});")


def filter_bank(e, op) -> None:
    _dense(e, op)
    i = op.inputs
    fields = dict(num_channels=op.options["num_channels"],
                  **{k: e.weight(i[pos], "int16_t") for pos, k in
                     enumerate(("weights", "unweights", "freq_starts", "weight_starts", "widths"), 1)})
    name = f"op{op.index}"
    e.declare(f"static const bt_filter_bank_params {name}_p = {c_struct(fields)};")
    e.call(op, f"bt_signal_filter_bank(&{name}_p, {e.act(i[0], 'uint32_t')}, {e.act(op.outputs[0], 'uint64_t')});")


def filter_bank_square_root(e, op) -> None:
    x, s, y = op.inputs[0], op.inputs[1], op.outputs[0]
    _dense(e, op)
    t = e.g.tensors[s]
    shift = int(np.asarray(t.data).reshape(-1)[0]) if t.is_const else f"*{e.act(s, 'int32_t')}"
    e.call(op, f"bt_signal_fb_sqrt({e.g.tensors[x].shape[0]}, {shift}, {e.act(x, 'uint64_t')}, "
               f"{e.act(y, 'uint32_t')});")


def filter_bank_log(e, op) -> None:
    x, y = op.inputs[0], op.outputs[0]
    _dense(e, op)
    o = op.options
    e.call(op, f"bt_signal_fb_log({e.g.tensors[x].shape[0]}, {o['input_correction_bits']}, {o['output_scale']}u, "
               f"{e.act(x, 'uint32_t')}, {e.act(y, 'int16_t')});")


def pcan(e, op) -> None:
    x, ne, lut = op.inputs
    y = op.outputs[0]
    _dense(e, op)
    noise = e.weight(ne, "uint32_t") if e.g.tensors[ne].is_const else e.act(ne, "uint32_t")
    e.call(op, f"bt_signal_pcan({e.g.tensors[x].shape[0]}, {op.options['snr_shift']}, {e.weight(lut, 'int16_t')}, "
               f"{e.act(x, 'uint32_t')}, {noise}, {e.act(y, 'uint32_t')});")


def filter_bank_spectral_subtraction(e, op) -> None:
    """The noise estimate (output 1) is a persistent buffer: model_init() zeroes it, each call updates it."""
    x, (y, ne) = op.inputs[0], op.outputs
    _dense(e, op)
    o = op.options
    fields = dict(num_channels=o["num_channels"], clamping=int(bool(o["clamping"])),
                  **{k: f"{int(o[k]) & 0xFFFFFFFF}u" for k in (
                      "smoothing", "one_minus_smoothing", "alternate_smoothing", "alternate_one_minus_smoothing",
                      "min_signal_remaining", "smoothing_bits", "spectral_subtraction_bits")})
    name = f"op{op.index}"
    e.declare(f"static const bt_spectral_subtraction_params {name}_p = {c_struct(fields)};")
    e.call(op, f"bt_signal_spectral_subtraction(&{name}_p, {e.act(x, 'uint32_t')}, {e.act(y, 'uint32_t')}, "
               f"{e.act(ne, 'uint32_t')});")


# -- the operators with a hidden state input (model/signal.py STATE_INPUT): its persistent arena buffer ----------
def delay(e, op) -> None:
    x, st = op.inputs
    _dense(e, op)
    t = e.g.tensors[x]
    e.call(op, f"bt_signal_delay_s16({t.num_elements // t.shape[-1]}, {t.shape[-1]}, {op.options['delay_length']}, "
               f"{e.act(x, 'int16_t')}, {e.act(st, 'int16_t')}, {e.act(op.outputs[0], 'int16_t')});")


def overlap_add(e, op) -> None:
    x, st = op.inputs
    _dense(e, op)
    t = e.g.tensors[x]
    nf, fs = t.shape[-2], t.shape[-1]
    e.call(op, f"bt_signal_overlap_add_s16({t.num_elements // (nf * fs)}, {nf}, {fs}, {op.options['frame_step']}, "
               f"{e.act(x, 'int16_t')}, {e.act(st, 'int16_t')}, {e.act(op.outputs[0], 'int16_t')});")


def stacker(e, op) -> None:
    x, st = op.inputs
    _dense(e, op)
    o = op.options
    c = o["num_channels"]
    fields = dict(channels=c, left=o["stacker_left_context"],
                  buffer_size=c * (o["stacker_left_context"] + o["stacker_right_context"] + 1),
                  step_size=c * o["stacker_step"])
    e.call(op, f"{{ static const bt_stacker_params p = {c_struct(fields)}; bt_signal_stacker_s16(&p, "
               f"{e.act(x, 'int16_t')}, {e.act(st, 'int16_t')}, {e.act(op.outputs[0], 'int16_t')}, "
               f"{e.act(op.outputs[1], 'uint8_t')}); }}")


def framer(e, op) -> None:
    x, st = op.inputs
    _dense(e, op)
    o = op.options
    t = e.g.tensors[x]
    fields = dict(rows=t.num_elements // t.shape[-1], frames=t.shape[-1] // o["frame_step"], frame_size=o["frame_size"],
                  frame_step=o["frame_step"], capacity=framer_capacity(o),
                  init=o["frame_size"] - o["frame_step"] if o["prefill"] else 0)
    e.call(op, f"{{ static const bt_framer_params p = {c_struct(fields)}; bt_signal_framer_s16(&p, "
               f"{e.act(x, 'int16_t')}, {e.act(st, 'int16_t')}, {e.act(op.outputs[0], 'int16_t')}, "
               f"{e.act(op.outputs[1], 'uint8_t')}); }}")


def irfft(e, op) -> None:
    """The inverse tables (refops.signal.fft_twiddles(inverse=True)); input 1 is the hidden work buffer."""
    x, work = op.inputs
    y = op.outputs[0]
    _dense(e, op)
    n = op.options["fft_length"]
    tw, sup = fft_twiddles(n, inverse=True)
    tws = e.table(f"bt_irfft{n}_twiddles", "int16_t", tw.reshape(-1).tolist())
    sups = e.table(f"bt_irfft{n}_super", "int16_t", sup.reshape(-1).tolist())
    factors = fft_factors(n // 2)
    fs = e.table(f"bt_rfft{n}_factors", "int32_t", factors)
    tx, ty = e.g.tensors[x], e.g.tensors[y]
    fields = dict(n=n // 2, in_len=n, frames=tx.num_elements // tx.shape[-1], out_stride=ty.shape[-1],
                  nfactors=len(factors), factors=fs, twiddles=tws, super_twiddles=sups, inverse=1,
                  in_stride=tx.shape[-1])
    name = f"op{op.index}"
    e.declare(f"static const bt_rfft_params {name}_p = {c_struct(fields)};")
    e.call(op, f"bt_signal_irfft_s16(&{name}_p, {e.act(x, 'int16_t')}, {e.act(work, 'int16_t')}, "
               f"{e.act(y, 'int16_t')});")


def fft_auto_scale(e, op) -> None:
    x = op.inputs[0]
    y, s = op.outputs
    _dense(e, op)
    e.call(op, f"bt_signal_fft_auto_scale_s16({e.g.tensors[x].shape[0]}, {e.act(x, 'int16_t')}, "
               f"{e.act(y, 'int16_t')}, {e.act(s, 'int32_t')});")
