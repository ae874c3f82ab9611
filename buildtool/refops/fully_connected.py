"""FULLY_CONNECTED, int8 (TFLM reference semantics: per-tensor or per-channel weights).

Per-tensor: multiplier from double(input_scale) * double(weights_scale) / double(output_scale)
(GetQuantizedConvolutionMultipler); per-channel: the same per output row.
"""

from __future__ import annotations

import numpy as np

from . import prepare
from .requant import bias_of, requantize


def fully_connected(g, op, ins, outs) -> None:
    w = g.tensors[op.inputs[1]].data
    n_out, depth = w.shape
    p = prepare.fully_connected(g, op)
    # TFLM adds both offsets: sum((x + input_offset) * (w + filter_offset)), filter_offset = -weights' zero point
    x = ins[0].reshape(-1, depth).astype(np.float64) + p.input_offset
    acc = (x @ (w.astype(np.float64) + p.filter_offset).T).astype(np.int64) + bias_of(g, op, n_out)
    outs[0][...] = requantize(acc, np.array(p.multipliers), np.array(p.shifts), g, op).reshape(outs[0].shape)
