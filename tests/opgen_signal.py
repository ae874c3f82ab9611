"""Random one-operator models of TFLite Micro's signal library (custom operators, model/signal.py) and the
front end that chains them, with inputs of their types (int16 audio, uint32 energies, uint64 sums)."""

from __future__ import annotations

import dataclasses

import numpy as np

from buildtool.model.ir import Graph, Operator, Tensor
from buildtool.model.reader import parse
from buildtool.model.writer import serialize


def graph(tensors: list, ops: list, inputs: list, outputs: list, name: str = "signal") -> Graph:
    """tensors: (name, shape, dtype, data or None); ops: (opcode, inputs, outputs, options)."""
    ts = [Tensor(i, n, tuple(s), d, None, data) for i, (n, s, d, data) in enumerate(tensors)]
    return Graph(ts, [Operator(k, *o) for k, o in enumerate(ops)], list(inputs), list(outputs), name=name)


def as_read(g: Graph) -> Graph:
    """g as the reader gives it: the state of DELAY, OVERLAP_ADD, STACKER and FRAMER a variable input, the
    spectral subtraction's noise estimate variable (model/signal.py STATE_INPUT, STATE_OUTPUT)."""
    return dataclasses.replace(parse(serialize(g)), name=g.name)


def signal_input(rng, t) -> np.ndarray:
    """A random input of tensor t's type: loud or quiet int16 audio, uint32 energies of any magnitude."""
    if t.dtype == "int16":
        amp = int(rng.choice([0, 5, 100, 3000, 32767]))
        return rng.integers(-amp, amp + 1, size=t.shape).astype(np.int16)
    if t.dtype in ("uint32", "uint64"):
        top = int(rng.choice([1 << 4, 1 << 12, 1 << 20, 1 << 31, (1 << 32) - 1]))
        return rng.integers(0, top, size=t.shape, dtype=np.uint64).astype(t.dtype)
    return rng.integers(-128, 128, size=t.shape, dtype=np.int8)


def filter_bank_tables(rng, n_in: int, channels: int, negative: bool = False) -> tuple:
    """(weights, unweights, freq_starts, weight_starts, widths) of channels + 1 channels over n_in energies."""
    widths = rng.integers(0, min(7, n_in + 1), channels + 1).astype(np.int16)
    starts = np.array([rng.integers(0, n_in - int(k) + 1) for k in widths], np.int16)
    wstarts = np.concatenate([[0], np.cumsum(widths[:-1])]).astype(np.int16)
    lo = -32768 if negative else 0
    n = int(widths.sum()) + 1
    return (rng.integers(lo, 32767, n).astype(np.int16), rng.integers(lo, 32767, n).astype(np.int16), starts,
            wstarts, widths)


def gen_window(rng):
    w = int(rng.integers(1, 40))
    shape = (int(rng.integers(1, 4)), w) if rng.random() < 0.5 else (w * int(rng.integers(1, 3)),)
    win = rng.integers(-32768, 32768, w).astype(np.int16)
    return graph([("x", shape, "int16", None), ("w", (w,), "int16", win), ("y", shape, "int16", None)],
                 [("SIGNAL_WINDOW", (0, 1), (2,), {"shift": int(rng.integers(0, 17))})], [0], [2], "window")


def gen_rfft(rng):
    n = 1 << int(rng.integers(2, 10))
    frames = (int(rng.integers(1, 3)),) if rng.random() < 0.5 else ()
    length = int(rng.integers(1, n + 1))
    return graph([("x", frames + (length,), "int16", None), ("y", frames + (n + 2,), "int16", None)],
                 [("SIGNAL_RFFT", (0,), (1,), {"T": 7, "fft_length": n})], [0], [1], "rfft")


def gen_energy(rng):
    n = int(rng.integers(1, 80))
    return graph([("x", (2 * n,), "int16", None), ("y", (n,), "uint32", None)],
                 [("SIGNAL_ENERGY", (0,), (1,), {"end_index": n, "start_index": 0})], [0], [1], "energy")


def gen_filter_bank(rng):
    n_in, ch = int(rng.integers(4, 60)), int(rng.integers(1, 24))
    tables = filter_bank_tables(rng, n_in, ch, negative=bool(rng.random() < 0.3))
    names = ("weights", "unweights", "freq_starts", "weight_starts", "widths")
    return graph([("x", (n_in,), "uint32", None)] + [(k, v.shape, "int16", v) for k, v in zip(names, tables)]
                 + [("y", (ch,), "uint64", None)],
                 [("SIGNAL_FILTER_BANK", (0, 1, 2, 3, 4, 5), (6,), {"num_channels": ch})], [0], [6], "filter_bank")


def gen_filter_bank_square_root(rng):
    n = int(rng.integers(1, 50))
    s = np.array(int(rng.integers(0, 16)), np.int32)
    return graph([("x", (n,), "uint64", None), ("s", (), "int32", s), ("y", (n,), "uint32", None)],
                 [("SIGNAL_FILTER_BANK_SQUARE_ROOT", (0, 1), (2,), {})], [0], [2], "fb_sqrt")


def gen_filter_bank_log(rng):
    n = int(rng.integers(1, 50))
    o = {"input_correction_bits": int(rng.integers(0, 8)), "output_scale": int(rng.integers(1, 1 << 14))}
    return graph([("x", (n,), "uint32", None), ("y", (n,), "int16", None)],
                 [("SIGNAL_FILTER_BANK_LOG", (0,), (1,), o)], [0], [1], "fb_log")


def gen_pcan(rng):
    n = int(rng.integers(1, 50))
    lut = np.clip(rng.normal(3000, 2000, 125 + int(rng.integers(0, 4))), -32768, 32767).astype(np.int16)
    return graph([("x", (n,), "uint32", None), ("noise", (n,), "uint32", None), ("lut", lut.shape, "int16", lut),
                  ("y", (n,), "uint32", None)],
                 [("SIGNAL_PCAN", (0, 1, 2), (3,), {"snr_shift": int(rng.integers(0, 20))})], [0, 1], [3], "pcan")


def spectral_subtraction_options(rng, n: int) -> dict:
    return dict(alternate_one_minus_smoothing=int(rng.integers(0, 1 << 14)),
                alternate_smoothing=int(rng.integers(0, 1 << 14)), clamping=bool(rng.random() < 0.5),
                min_signal_remaining=int(rng.integers(0, 1 << 14)), num_channels=n,
                one_minus_smoothing=int(rng.integers(0, 1 << 14)), smoothing=int(rng.integers(0, 1 << 14)),
                smoothing_bits=int(rng.integers(0, 12)), spectral_subtraction_bits=int(rng.integers(0, 20)))


def gen_filter_bank_spectral_subtraction(rng):
    """Its noise estimate (output 1) is its state: variable once read from a file (as every test model is)."""
    n = int(rng.integers(1, 40))
    g = graph([("x", (n,), "uint32", None), ("y", (n,), "uint32", None), ("noise", (n,), "uint32", None)],
              [("SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION", (0,), (1, 2), spectral_subtraction_options(rng, n))],
              [0], [1, 2], "spectral_subtraction")
    g.tensors[2].variable = True
    return g


def gen_delay(rng):
    shape = tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(0, 2)))) + (int(rng.integers(1, 30)),)
    return as_read(graph([("x", shape, "int16", None), ("y", shape, "int16", None)],
                         [("SIGNAL_DELAY", (0,), (1,), {"delay_length": int(rng.integers(0, 40))})], [0], [1], "delay"))


def gen_overlap_add(rng):
    fs = int(rng.integers(1, 30))
    step, nf, rows = int(rng.integers(1, fs + 1)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    return as_read(graph([("x", (rows, nf, fs), "int16", None), ("y", (rows, nf * step), "int16", None)],
                         [("SIGNAL_OVERLAP_ADD", (0,), (1,), {"T": 7, "frame_step": step})], [0], [1], "overlap_add"))


def stacker_model(c: int, left: int, right: int, step: int):
    return as_read(graph([("x", (c,), "int16", None), ("y", (c * (left + right + 1),), "int16", None),
                          ("valid", (), "bool", None)],
                         [("SIGNAL_STACKER", (0,), (1, 2), {"num_channels": c, "stacker_left_context": left,
                                                            "stacker_right_context": right, "stacker_step": step})],
                         [0], [1, 2], "stacker"))


def gen_stacker(rng):
    """No right context and a step of one: a stack at every call (TFLite Micro leaves an incomplete one
    unwritten, so a one-call comparison needs a full one); test_signal.py covers the rest over calls."""
    return stacker_model(int(rng.integers(1, 20)), int(rng.integers(0, 4)), 0, 1)


def framer_model(rows: int, steps: int, size: int, step: int, prefill: bool):
    return as_read(graph([("x", (rows, steps * step), "int16", None), ("y", (rows, steps, size), "int16", None),
                          ("valid", (), "bool", None)],
                         [("SIGNAL_FRAMER", (0,), (1, 2), {"frame_size": size, "frame_step": step, "prefill": prefill})],
                         [0], [1, 2], "framer"))


def gen_framer(rng):
    """Prefilled (a full frame at every call); test_signal.py covers frames that fill over calls."""
    step = int(rng.integers(1, 20))
    return framer_model(int(rng.integers(1, 3)), int(rng.integers(1, 4)), step + int(rng.integers(0, 30)), step, True)


def gen_irfft(rng):
    n = 1 << int(rng.integers(2, 10))
    frames = (int(rng.integers(1, 3)),) if rng.random() < 0.5 else ()
    return as_read(graph([("x", frames + (n + 2,), "int16", None), ("y", frames + (n,), "int16", None)],
                         [("SIGNAL_IRFFT", (0,), (1,), {"T": 7, "fft_length": n})], [0], [1], "irfft"))


def gen_fft_auto_scale(rng):
    n = int(rng.integers(1, 60))
    return graph([("x", (n,), "int16", None), ("y", (n,), "int16", None), ("scale_bits", (), "int32", None)],
                 [("SIGNAL_FFT_AUTO_SCALE", (0,), (1, 2), {})], [0], [1, 2], "fft_auto_scale")


SIGNAL_GENERATORS = {"SIGNAL_WINDOW": gen_window, "SIGNAL_RFFT": gen_rfft, "SIGNAL_ENERGY": gen_energy,
                     "SIGNAL_FILTER_BANK": gen_filter_bank, "SIGNAL_FILTER_BANK_SQUARE_ROOT": gen_filter_bank_square_root,
                     "SIGNAL_FILTER_BANK_LOG": gen_filter_bank_log, "SIGNAL_PCAN": gen_pcan,
                     "SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION": gen_filter_bank_spectral_subtraction,
                     "SIGNAL_DELAY": gen_delay, "SIGNAL_OVERLAP_ADD": gen_overlap_add, "SIGNAL_STACKER": gen_stacker,
                     "SIGNAL_FRAMER": gen_framer, "SIGNAL_IRFFT": gen_irfft, "SIGNAL_FFT_AUTO_SCALE": gen_fft_auto_scale}


def frontend(seed: int = 0, length: int = 480, fft_length: int = 512, channels: int = 40) -> Graph:
    """micro_speech's front end (TFLite Micro's examples/micro_speech/audio_preprocessor.py, its parameters; the
    window, filter bank tables and PCAN gain table made up here): WINDOW (12 bits) -> FFT_AUTO_SCALE -> RFFT ->
    ENERGY (bins 4..241) -> FILTER_BANK -> SQUARE_ROOT (by the auto-scale shift) -> SPECTRAL_SUBTRACTION (its noise
    estimate the state kept across invocations) -> PCAN (on that estimate) -> LOG -> STACKER (the last three
    frames); outputs the stack, its valid flag, the square roots and the noise estimate."""
    rng = np.random.default_rng(seed)
    bins = fft_length // 2 + 1
    start, end = min(4, bins - 1), min(241, bins)
    win = (np.hanning(length) * 4096).astype(np.int16)
    w, _, starts, wstarts, widths = filter_bank_tables(rng, end - start, channels)
    starts = (starts + start).astype(np.int16)
    w = (w >> 3).astype(np.int16)
    u = (4096 - w).astype(np.int16)
    lut = np.clip(rng.normal(3000, 800, 125), -32768, 32767).astype(np.int16)
    t = [("audio", (length,), "int16", None), ("window", (length,), "int16", win), ("windowed", (length,), "int16", None),
         ("spectrum", (fft_length + 2,), "int16", None), ("energy", (bins,), "uint32", None),
         ("weights", w.shape, "int16", w), ("unweights", u.shape, "int16", u), ("freq_starts", starts.shape, "int16", starts),
         ("weight_starts", wstarts.shape, "int16", wstarts), ("widths", widths.shape, "int16", widths),
         ("filterbank", (channels,), "uint64", None), ("scale_bits", (), "int32", None),
         ("sqrt", (channels,), "uint32", None), ("noise", (channels,), "uint32", None),
         ("gain_lut", lut.shape, "int16", lut), ("pcan", (channels,), "uint32", None),
         ("log", (channels,), "int16", None), ("subtracted", (channels,), "uint32", None),
         ("stacked", (3 * channels,), "int16", None), ("stacked_valid", (), "bool", None),
         ("scaled", (length,), "int16", None)]
    ss = dict(alternate_one_minus_smoothing=(1 << 14) - 983, alternate_smoothing=983, clamping=False,
              min_signal_remaining=819, num_channels=channels, one_minus_smoothing=(1 << 14) - 410, smoothing=410,
              smoothing_bits=10, spectral_subtraction_bits=14)  # 0.025 / 0.06 smoothing, 0.05 remaining in Q14
    ops = [("SIGNAL_WINDOW", (0, 1), (2,), {"shift": 12}),
           ("SIGNAL_FFT_AUTO_SCALE", (2,), (20, 11), {}),
           ("SIGNAL_RFFT", (20,), (3,), {"T": 7, "fft_length": fft_length}),
           ("SIGNAL_ENERGY", (3,), (4,), {"end_index": end, "start_index": start}),
           ("SIGNAL_FILTER_BANK", (4, 5, 6, 7, 8, 9), (10,), {"num_channels": channels}),
           ("SIGNAL_FILTER_BANK_SQUARE_ROOT", (10, 11), (12,), {}),
           ("SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION", (12,), (17, 13), ss),
           ("SIGNAL_PCAN", (17, 13, 14), (15,), {"snr_shift": 6}),
           ("SIGNAL_FILTER_BANK_LOG", (15,), (16,), {"input_correction_bits": 3, "output_scale": 1 << 6}),
           ("SIGNAL_STACKER", (16,), (18, 19), {"num_channels": channels, "stacker_left_context": 2,
                                                 "stacker_right_context": 0, "stacker_step": 1})]
    return as_read(graph(t, ops, [0], [18, 19, 12, 13], "frontend"))


def frontend_inputs(g: Graph, seed: int, frames: int = 1) -> list:
    """Input sets of frames of speech-like audio (Gaussian noise of one level and a tone each)."""
    rng = np.random.default_rng(seed)
    n = g.tensors[g.inputs[0]].shape[0]
    sets = []
    for _ in range(frames):
        tone = rng.uniform(0, 6000) * np.sin(np.arange(n) * rng.uniform(0.05, 1.5))
        audio = np.clip(rng.normal(0, rng.choice([30, 1000, 6000]), n) + tone, -32768, 32767).astype(np.int16)
        sets.append([audio])
    return sets
