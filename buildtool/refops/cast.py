"""CAST as TFLite Micro's cast.cc runs it: raw values converted, no requantisation.

From int8 / int16 / int32 / bool to int8 / int16 / int32: the value kept modulo 2^bits of the output (a bool
is 0 or 1). From float32: truncated toward zero and saturated to the output type's range, NaN 0 (what the
tflite-micro package gives for every float, out-of-range and non-finite ones included)."""

from __future__ import annotations

import numpy as np


def cast_values(x: np.ndarray, dtype) -> np.ndarray:
    """x converted to dtype (an integer type) as TFLite Micro's CAST converts it."""
    dtype = np.dtype(dtype)
    if x.dtype.kind == "f":
        info = np.iinfo(dtype)
        v = np.trunc(np.where(np.isnan(x), 0.0, x.astype(np.float64)))
        return np.clip(v, info.min, info.max).astype(dtype)
    return x.astype(np.int64).astype(dtype)  # two's complement wrap


def cast(g, op, ins, outs) -> None:
    outs[0][...] = cast_values(np.asarray(ins[0]), outs[0].dtype).reshape(outs[0].shape)
