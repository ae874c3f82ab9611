"""TFLite Micro's signal library (signal/micro/kernels): the audio front end as custom operators.

A .tflite file holds them as CUSTOM operators named by custom_code (opdefs column `custom`: SignalWindow,
SignalRfft, ...) with a flexbuffer map as custom_options. TFLite Micro reads that map by position (its
values in key order, FlexbufferWrapper::ElementAs*), so the reader does too: the options dict holds the
value at each position of KEYS under that key, whatever the file's own key names; the writer writes the
dict as the map. This module holds the options' reading and writing and the semantic checks (arity, types,
shapes, constants: TFLite Micro's Prepare, plus what its Eval would read out of bounds).
"""

from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from ..errors import ModelError

# The flexbuffer map's keys, in TFLite Micro's order (alphabetical: the map's own order)
KEYS = {
    "SIGNAL_WINDOW": ("shift",),
    "SIGNAL_RFFT": ("T", "fft_length"),
    "SIGNAL_ENERGY": ("end_index", "start_index"),
    "SIGNAL_FILTER_BANK": ("num_channels",),
    "SIGNAL_FILTER_BANK_SQUARE_ROOT": (),
    "SIGNAL_FILTER_BANK_LOG": ("input_correction_bits", "output_scale"),
    "SIGNAL_PCAN": ("snr_shift",),
    "SIGNAL_FRAMER": ("frame_size", "frame_step", "prefill"),
    "SIGNAL_STACKER": ("num_channels", "stacker_left_context", "stacker_right_context", "stacker_step"),
    "SIGNAL_DELAY": ("delay_length",),
    "SIGNAL_OVERLAP_ADD": ("T", "frame_step"),
    "SIGNAL_IRFFT": ("T", "fft_length"),
    "SIGNAL_FFT_AUTO_SCALE": (),
    "SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION": (
        "alternate_one_minus_smoothing", "alternate_smoothing", "clamping", "min_signal_remaining", "num_channels",
        "one_minus_smoothing", "smoothing", "smoothing_bits", "spectral_subtraction_bits"),
}
BOOL_KEYS = ("clamping", "prefill")  # read with ElementAsBool (any non-zero value is true), written as a bool
# Operators with state: the output at this position is the state TFLite Micro keeps in a persistent buffer and
# copies out after each invocation; the IR keeps it as that output, a variable tensor (persistent in the arena,
# reset to 0 at start-up) the operator reads and updates (ir.validate_graph allows it).
STATE_OUTPUT = {"SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION": 1}
# Operators whose state TFLite Micro keeps out of the model's tensors (circular buffers): the reader gives each an
# extra input, a variable int16 tensor of state_shape appended to the tensors (zero: TFLite Micro's reset state),
# and the writer leaves it out again. The value: the operator's inputs in the file.
STATE_INPUT = {"SIGNAL_FRAMER": 1, "SIGNAL_STACKER": 1, "SIGNAL_DELAY": 1, "SIGNAL_OVERLAP_ADD": 1,
               "SIGNAL_IRFFT": 1}  # IRFFT's: not state but kiss_fftri's work buffer (fft_length values)


def _prod(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def framer_capacity(o: dict) -> int:
    """The circular buffer's capacity: frame_size rounded up to a whole number of frame steps."""
    return -(-o["frame_size"] // o["frame_step"]) * o["frame_step"]


def state_shape(opcode: str, options: dict, in_shape: tuple) -> tuple | None:
    """The hidden state tensor's shape (int16) of a STATE_INPUT operator; None when its input or options are
    too broken to tell (its check then says what is wrong)."""
    try:
        if opcode == "SIGNAL_DELAY":  # the last delay_length samples of each row
            return (_prod(in_shape[:-1]), max(int(options["delay_length"]), 1))
        if opcode == "SIGNAL_OVERLAP_ADD":  # each row's frame_size accumulator
            return (_prod(in_shape[:-2]), int(in_shape[-1]))
        if opcode == "SIGNAL_STACKER":  # the FIFO, its count, whether the first frame came
            o = options
            return (o["num_channels"] * (o["stacker_left_context"] + o["stacker_right_context"] + 1) + 2,)
        if opcode == "SIGNAL_FRAMER":  # each row's FIFO and its count (less the prefill)
            return (_prod(in_shape[:-1]), framer_capacity(options) + 1)
        if opcode == "SIGNAL_IRFFT":  # the complex FFT's input, rebuilt every frame
            return (max(int(options["fft_length"]), 2),)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    return None
MAX_KEYS = 64  # more values than any signal operator's map has: a corrupt file
TENSOR_INT16 = 7  # TFLite's TensorType INT16: SignalRfft's 'T'
PCAN_LUT = 125  # gain_lut entries PCAN's WideDynamicFunction may read (4 * 32 - 6 + 2, plus one)


def read_options(raw: bytes | None, opcode: str, i: int, fail) -> dict:
    """The options dict of custom operator i from its custom_options bytes (fail: the reader's one-line error)."""
    keys = KEYS[opcode]
    if not keys:
        return {}
    if not raw:
        fail(f"operator {i} ({opcode}) has no custom options")
    try:  # scalars only: a value that is a vector or map is never decoded (a corrupt file may claim millions)
        m = flexbuffers.GetRoot(bytearray(raw))
        if not m.IsMap:
            fail(f"operator {i} ({opcode}): custom options are not a flexbuffer map")
        m = m.AsMap
        if len(m) > MAX_KEYS:
            fail(f"operator {i} ({opcode}): custom options hold {len(m)} values; TFLite Micro reads {len(keys)}")
        names = [k.AsKey for k in m.Keys]
        values = [bool(v.AsBool) if v.IsBool else int(v.AsInt) if v.IsInt else None for v in m.Values]
    except ModelError:
        raise
    except Exception:  # noqa: BLE001 - any malformed flexbuffer is a corrupt file
        fail(f"operator {i} ({opcode}): corrupt flexbuffer custom options")
    if len(values) < len(keys):
        fail(f"operator {i} ({opcode}): custom options hold {len(values)} values, TFLite Micro reads {len(keys)} "
             f"({', '.join(keys)})")
    out = {}
    for k, key in enumerate(keys):
        v = values[k] if key != "T" else dict(zip(names, values)).get("T")
        if key in BOOL_KEYS and isinstance(v, (bool, int)):
            out[key] = bool(v)
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            fail(f"operator {i} ({opcode}): custom option '{key}' is {v!r}, not an integer")
        out[key] = int(v)
    return out


def write_options(op) -> bytes:
    """custom_options of a signal operator: its options dict as a flexbuffer map."""
    return bytes(flexbuffers.Dumps({k: bool(op.options[k]) if k in BOOL_KEYS else int(op.options[k])
                                    for k in KEYS[op.opcode]}))


def _need(cond: bool, op, what: str) -> None:
    if not cond:
        raise ModelError(f"operator {op.index} ({op.opcode}): {what}")


def _arity(op, n_in: int, n_out: int) -> None:
    _need(len(op.inputs) == n_in and all(i >= 0 for i in op.inputs), op, f"needs {n_in} inputs, has {len(op.inputs)}")
    _need(len(op.outputs) == n_out, op, f"needs {n_out} output{'s' if n_out > 1 else ''}, has {len(op.outputs)}")


def _t(g, op, i: int, what: str, dtype: str, rank: int | None = None, const: bool | None = None):
    t = g.tensors[i]
    _need(t.dtype == dtype, op, f"{what} '{t.name}' is {t.dtype}; TFLite Micro needs {dtype}")
    if rank is not None:
        _need(len(t.shape) == rank, op, f"{what} '{t.name}' has shape {list(t.shape)}; it must have rank {rank}")
    if const is not None:
        _need(t.is_const == const, op, f"{what} '{t.name}' must {'' if const else 'not '}be a constant tensor")
    return t


def _opt(op, key: str, lo: int, hi: int) -> int:
    v = op.options.get(key)
    _need(isinstance(v, int) and lo <= v <= hi, op, f"option {key} = {v!r}, outside {lo}..{hi}")
    return v


def check_window(g, op) -> None:
    """WINDOW: int16 input times a constant int16 window (rank 1), >> shift, saturated; frames of the window's
    length over the flattened input."""
    _arity(op, 2, 1)
    x = _t(g, op, op.inputs[0], "input", "int16", const=False)
    w = _t(g, op, op.inputs[1], "window", "int16", 1, True)
    y = _t(g, op, op.outputs[0], "output", "int16")
    _need(len(x.shape) >= 1 and tuple(y.shape) == tuple(x.shape), op, "output must have the input's shape")
    _need(w.shape[0] >= 1 and x.num_elements % w.shape[0] == 0, op,
          f"input of {x.num_elements} values is not a whole number of {w.shape[0]}-value windows")
    _opt(op, "shift", 0, 31)


def fft_factors(n: int) -> list:
    """kiss_fft's factorisation of an n-point complex FFT: radix 4 first, then 2 (n a power of two here)."""
    out = []
    while n > 1:
        p = 4 if n % 4 == 0 else 2
        n //= p
        out += [p, n]
    return out


def _fft_frames(g, op) -> tuple:
    """(fft_length, input, output) of RFFT / IRFFT, checked alike: int16 (T), a power-of-two length, frames on
    the last axis of input and output of one rank sharing every other axis."""
    t = op.options.get("T")
    _need(t == TENSOR_INT16, op, f"type T = {t} (TensorType): only int16 (7) is built")
    n = _opt(op, "fft_length", 4, 1 << 14)
    _need(n & (n - 1) == 0, op, f"fft_length {n} is not a power of two (the only lengths built)")
    x = _t(g, op, op.inputs[0], "input", "int16", const=False)
    y = _t(g, op, op.outputs[0], "output", "int16")
    _need(len(x.shape) >= 1 and len(y.shape) == len(x.shape), op, "input and output must have the same rank >= 1")
    _need(tuple(x.shape[:-1]) == tuple(y.shape[:-1]), op, "input and output must share all but the last axis")
    return n, x, y


def check_rfft(g, op) -> None:
    """RFFT (int16): frames of the last axis zero-padded to fft_length (a power of two), fft_length/2 + 1
    complex values each as (real, imaginary) int16 pairs."""
    _arity(op, 1, 1)
    n, x, y = _fft_frames(g, op)
    _need(x.shape[-1] <= n, op, f"frames of {x.shape[-1]} values are longer than fft_length {n}")
    _need(y.shape[-1] == n + 2, op, f"output's last axis is {y.shape[-1]}; fft_length {n} gives {n + 2} "
                                    f"({n // 2 + 1} complex values)")


def check_energy(g, op) -> None:
    """ENERGY: re^2 + im^2 (uint32) of the complex int16 input in [start_index, end_index)."""
    _arity(op, 1, 1)
    x = _t(g, op, op.inputs[0], "input", "int16", 1, False)
    y = _t(g, op, op.outputs[0], "output", "uint32", 1)
    _need(x.shape[0] == 2 * y.shape[0], op, f"input of {x.shape[0]} int16 values must hold the output's "
                                            f"{y.shape[0]} complex values")
    end = _opt(op, "end_index", 0, y.shape[0])
    _opt(op, "start_index", 0, end)


def check_filter_bank(g, op) -> None:
    """FILTER_BANK: uint32 energies -> num_channels uint64 weighted sums (constant int16 tables)."""
    _arity(op, 6, 1)
    x = _t(g, op, op.inputs[0], "input", "uint32", 1, False)
    w = _t(g, op, op.inputs[1], "weights", "int16", 1, True)
    u = _t(g, op, op.inputs[2], "unweights", "int16", 1, True)
    tables = [_t(g, op, op.inputs[k], name, "int16", 1, True).data.astype(np.int64)
              for k, name in ((3, "channel_frequency_starts"), (4, "channel_weight_starts"), (5, "channel_widths"))]
    y = _t(g, op, op.outputs[0], "output", "uint64", 1)
    n = _opt(op, "num_channels", 1, 1 << 15)
    _need(y.shape[0] == n, op, f"output has {y.shape[0]} values, num_channels is {n}")
    _need(all(len(t) >= n + 1 for t in tables), op, f"the channel tables need num_channels + 1 = {n + 1} entries")
    _need(w.shape == u.shape, op, "weights and unweights must have the same length")
    fs, ws, widths = (t[:n + 1] for t in tables)
    _need((widths >= 0).all() and (fs >= 0).all() and (ws >= 0).all(), op, "negative channel start or width")
    _need(((widths == 0) | ((fs + widths <= x.shape[0]) & (ws + widths <= w.shape[0]))).all(), op,
          "a channel reads past the input or the weights")


def check_filter_bank_square_root(g, op) -> None:
    """FILTER_BANK_SQUARE_ROOT: rounded sqrt of uint64 -> uint32, >> a scalar int32 (a constant, or computed:
    FFT_AUTO_SCALE's shift in micro_speech's front end)."""
    _arity(op, 2, 1)
    x = _t(g, op, op.inputs[0], "input", "uint64", 1, False)
    s = _t(g, op, op.inputs[1], "scale_bits", "int32", 0)
    y = _t(g, op, op.outputs[0], "output", "uint32", 1)
    _need(y.shape == x.shape, op, "output must have the input's length")
    if s.is_const:
        _need(0 <= int(s.data) <= 31, op, f"scale_bits {int(s.data)} outside 0..31")


def check_filter_bank_log(g, op) -> None:
    """FILTER_BANK_LOG: uint32 << input_correction_bits -> scaled natural log, int16."""
    _arity(op, 1, 1)
    x = _t(g, op, op.inputs[0], "input", "uint32", 1, False)
    y = _t(g, op, op.outputs[0], "output", "int16", 1)
    _need(y.shape == x.shape, op, "output must have the input's length")
    _opt(op, "input_correction_bits", 0, 31)
    _opt(op, "output_scale", 0, (1 << 31) - 1)


def check_pcan(g, op) -> None:
    """PCAN: per-channel energy normalisation with a constant int16 gain table, uint32 in and out."""
    _arity(op, 3, 1)
    x = _t(g, op, op.inputs[0], "input", "uint32", 1, False)
    ne = _t(g, op, op.inputs[1], "noise_estimate", "uint32", 1)
    lut = _t(g, op, op.inputs[2], "gain_lut", "int16", 1, True)
    y = _t(g, op, op.outputs[0], "output", "uint32", 1)
    _need(x.shape[0] >= 1 and ne.shape == x.shape == y.shape, op,
          "input, noise_estimate and output must have one length")
    _need(lut.shape[0] >= PCAN_LUT, op, f"gain_lut has {lut.shape[0]} entries; PCAN may read {PCAN_LUT}")
    _opt(op, "snr_shift", 0, 63)


def check_filter_bank_spectral_subtraction(g, op) -> None:
    """FILTER_BANK_SPECTRAL_SUBTRACTION: uint32 in, uint32 out and the noise estimate (its state, output 1)."""
    _arity(op, 1, 2)
    x = _t(g, op, op.inputs[0], "input", "uint32", 1, False)
    y = _t(g, op, op.outputs[0], "output", "uint32", 1)
    ne = _t(g, op, op.outputs[1], "noise_estimate", "uint32", 1)
    n = _opt(op, "num_channels", 1, 1 << 15)
    _need(x.shape[0] == y.shape[0] == ne.shape[0] == n, op,
          f"input, output and noise_estimate must have num_channels = {n} values")
    _need(ne.variable, op, "noise_estimate must be the operator's state (read from a .tflite file)")
    _need(not any(ne.index in o.inputs for o in g.operators if o.index <= op.index) and
          sum(ne.index in o.outputs for o in g.operators) == 1, op,
          "noise_estimate must be written by this operator only and read after it")
    bits = _opt(op, "spectral_subtraction_bits", 0, 63)
    _opt(op, "smoothing_bits", 0, 31)
    for k in ("alternate_one_minus_smoothing", "alternate_smoothing", "min_signal_remaining", "one_minus_smoothing",
              "smoothing"):
        _opt(op, k, -(1 << 31), (1 << 31) - 1)
    _need(bits >= 0, op, "negative spectral_subtraction_bits")


def _state(g, op, shape: tuple) -> None:
    _need(len(op.inputs) == 2 and op.inputs[1] >= 0, op, "lacks its state (read the model from a .tflite file)")
    t = g.tensors[op.inputs[1]]
    _need(t.variable and t.dtype == "int16" and tuple(t.shape) == tuple(shape), op,
          f"state tensor '{t.name}' must be a variable int16 {list(shape)}")
    _need(sum(t.index in o.inputs for o in g.operators) == 1, op, f"state tensor '{t.name}' is shared")


def _arity_state(op, n_out: int) -> None:
    _need(len(op.inputs) in (1, 2) and op.inputs[0] >= 0, op, f"needs 1 input, has {len(op.inputs)}")
    _need(len(op.outputs) == n_out, op, f"needs {n_out} output{'s' if n_out > 1 else ''}, has {len(op.outputs)}")


def check_delay(g, op) -> None:
    """DELAY: each row of the last axis delayed by delay_length samples across invocations (int16)."""
    _arity_state(op, 1)
    x = _t(g, op, op.inputs[0], "input", "int16", const=False)
    y = _t(g, op, op.outputs[0], "output", "int16")
    _need(len(x.shape) >= 1 and tuple(y.shape) == tuple(x.shape), op, "output must have the input's shape")
    _opt(op, "delay_length", 0, 1 << 14)
    _state(g, op, state_shape(op.opcode, op.options, x.shape))


def check_overlap_add(g, op) -> None:
    """OVERLAP_ADD (int16): [..., n_frames, frame_size] -> [..., n_frames * frame_step], the overlap carried."""
    _arity_state(op, 1)
    t = op.options.get("T")
    _need(t == TENSOR_INT16, op, f"type T = {t} (TensorType): only int16 (7) is built")
    x = _t(g, op, op.inputs[0], "input", "int16", const=False)
    y = _t(g, op, op.outputs[0], "output", "int16")
    _need(len(x.shape) >= 2 and len(y.shape) == len(x.shape) - 1, op,
          "input must be [..., frames, frame_size] and the output one rank less")
    step = _opt(op, "frame_step", 1, x.shape[-1])
    _need(tuple(y.shape) == tuple(x.shape[:-2]) + (x.shape[-2] * step,), op,
          f"output must be {list(x.shape[:-2]) + [x.shape[-2] * step]}")
    _state(g, op, state_shape(op.opcode, op.options, x.shape))


def check_stacker(g, op) -> None:
    """STACKER: num_channels values a call, stacked with left/right context frames (the first frame repeated
    left_context times), every stacker_step frames; output_valid (bool scalar) says when a stack is out."""
    _arity_state(op, 2)
    x = _t(g, op, op.inputs[0], "input", "int16", 1, False)
    y = _t(g, op, op.outputs[0], "output", "int16", 1)
    _t(g, op, op.outputs[1], "output_valid", "bool", 0)
    c = _opt(op, "num_channels", 1, 1 << 12)
    left = _opt(op, "stacker_left_context", 0, 64)
    right = _opt(op, "stacker_right_context", 0, 64)
    _opt(op, "stacker_step", 1, left + right + 1)
    _need(x.shape[0] == c, op, f"input has {x.shape[0]} values, num_channels is {c}")
    _need(y.shape[0] == c * (left + right + 1), op, f"output must hold {c * (left + right + 1)} values")
    _need(y.shape[0] + 2 < 1 << 15, op, "stack too large")
    _state(g, op, state_shape(op.opcode, op.options, x.shape))


def check_framer(g, op) -> None:
    """FRAMER: the last axis cut into frames of frame_size every frame_step samples across invocations
    (prefill: frame_size - frame_step zeros first); output_valid (bool scalar) says when every frame is full."""
    _arity_state(op, 2)
    x = _t(g, op, op.inputs[0], "input", "int16", const=False)
    y = _t(g, op, op.outputs[0], "output", "int16")
    _t(g, op, op.outputs[1], "output_valid", "bool", 0)
    size = _opt(op, "frame_size", 1, 1 << 14)
    step = _opt(op, "frame_step", 1, 1 << 14)
    _need(len(x.shape) >= 1 and x.shape[-1] >= step and x.shape[-1] % step == 0, op,
          f"the last axis ({list(x.shape)[-1:]}) must be a whole number of frame_step = {step} samples")
    _need(not op.options.get("prefill") or size >= step, op, "prefill needs frame_size >= frame_step")
    _need(tuple(y.shape) == tuple(x.shape[:-1]) + (x.shape[-1] // step, size), op,
          f"output must be {list(x.shape[:-1]) + [x.shape[-1] // step, size]}")
    _need(framer_capacity(op.options) + 1 < 1 << 15, op, "frames too large")
    _state(g, op, state_shape(op.opcode, op.options, x.shape))


def check_fft_auto_scale(g, op) -> None:
    """FFT_AUTO_SCALE: the int16 input shifted left until its largest magnitude has no spare bit (output 1: the
    shift, an int32 scalar)."""
    _arity(op, 1, 2)
    x = _t(g, op, op.inputs[0], "input", "int16", 1, False)
    y = _t(g, op, op.outputs[0], "output", "int16", 1)
    _t(g, op, op.outputs[1], "scale_bits", "int32", 0)
    _need(y.shape == x.shape, op, "output must have the input's length")


def check_irfft(g, op) -> None:
    """IRFFT (int16, kiss_fftri): frames of fft_length/2 + 1 complex values -> fft_length int16 values."""
    _arity_state(op, 1)
    n, x, y = _fft_frames(g, op)
    _need(x.shape[-1] == n + 2, op, f"input's last axis is {x.shape[-1]}; fft_length {n} reads {n + 2} "
                                    f"({n // 2 + 1} complex values)")
    _need(y.shape[-1] == n, op, f"output's last axis is {y.shape[-1]}, not fft_length {n}")
    _state(g, op, state_shape(op.opcode, op.options, x.shape))
