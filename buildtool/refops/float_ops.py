"""Float32 operators TFLite Micro runs between DEQUANTIZE and QUANTIZE in int8 models as TensorFlow converts them.

NEG (float32, TFLM neg.cc): out = -in, element by element (the sign bit flipped: -0.0 for 0.0). TensorFlow's
converter writes every Keras LayerNormalization of an int8 model with DEQUANTIZE -> float32 NEG -> QUANTIZE;
TFLite Micro has no int8/int16 NEG (opdefs.NOT_BUILT). kernels/reference/neg.c does the same.
"""

from __future__ import annotations

import numpy as np


def neg(g, op, ins, outs) -> None:
    outs[0][...] = np.negative(ins[0].astype(np.float32)).reshape(outs[0].shape)
