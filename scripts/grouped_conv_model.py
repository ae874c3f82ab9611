"""Grouped convolutions (Keras Conv2D(groups=g): a CONV_2D whose filter depth is input channels / g) converted
by TensorFlow to int8 and to 16x8, for tests/test_grouped_conv.py (issue 54 item 1).

    python3 scripts/grouped_conv_model.py OUT_DIR

Writes grouped_conv_int8.tflite and grouped_conv_int16.tflite: x [1, 12, 12, 24] -> 3x3 SAME groups 4 (48,
relu) -> 1x1 groups 8 (48, ShuffleNet's pointwise) -> 3x3 VALID stride 2 groups 2 (32, relu6) -> 3x3 SAME
dilation 2 groups 8 (32) -> 1x1 (8, an ordinary conv). Seeded weights and representative set: the files are
reproduced byte for byte. Needs TensorFlow (the `netsplit` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SHAPE = (1, 12, 12, 24)


def _model(tf):
    tf.keras.utils.set_random_seed(7)
    L = tf.keras.layers
    x = inp = L.Input(SHAPE[1:], batch_size=1)
    x = L.Conv2D(48, 3, padding="same", groups=4, activation="relu")(x)
    x = L.Conv2D(48, 1, groups=8)(x)
    x = L.Conv2D(32, 3, strides=2, padding="valid", groups=2, activation="relu6")(x)
    x = L.Conv2D(32, 3, padding="same", dilation_rate=2, groups=8)(x)
    x = L.Conv2D(8, 1)(x)
    return tf.keras.Model(inp, x)


def main(out: str) -> int:
    import tensorflow as tf  # (optional heavy dependency: the netsplit extra)

    model = _model(tf)

    def representative():
        r = np.random.default_rng(0)
        for _ in range(16):
            yield [r.standard_normal(SHAPE).astype(np.float32)]

    ops = {"int8": [tf.lite.OpsSet.TFLITE_BUILTINS_INT8],
           "int16": [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]}
    for kind, supported in ops.items():
        c = tf.lite.TFLiteConverter.from_keras_model(model)
        c.optimizations = [tf.lite.Optimize.DEFAULT]
        c.representative_dataset = representative
        c.target_spec.supported_ops = supported
        c.inference_input_type = c.inference_output_type = getattr(tf, kind)
        path = Path(out) / f"grouped_conv_{kind}.tflite"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(c.convert())
        print(path)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[3].strip())
    sys.exit(main(sys.argv[1]))
