"""Grouped convolutions (Keras Conv2D(groups=g): a CONV_2D whose filter depth is input channels / g) converted
by TensorFlow to int8 and to 16x8, for tests/test_grouped_conv.py (issue 54 item 1).

    python3 scripts/grouped_conv_model.py OUT_DIR

Writes grouped_conv_int8.tflite and grouped_conv_int16.tflite: x [1, 12, 12, 24] -> 3x3 SAME groups 4 (48,
relu) -> 1x1 groups 8 (48, ShuffleNet's pointwise) -> 3x3 VALID stride 2 groups 2 (32, relu6) -> 3x3 SAME
dilation 2 groups 8 (32) -> 1x1 (8, an ordinary conv); and grouped_conv_chain_int8.tflite, grouped convs between
layers fusion tiles: x [1, 32, 32, 8] -> 3x3 stride 2 (16, relu) -> depthwise 3x3 -> 1x1 groups 4 (32, relu) ->
3x3 (32, relu) -> max pool 2 -> 1x1 groups 2 (16) -> 3x3 (16). Seeded weights and representative set: the files are
reproduced byte for byte. Needs TensorFlow (the `netsplit` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SHAPE = (1, 12, 12, 24)
CHAIN = (1, 32, 32, 8)


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


def _chain(tf):
    tf.keras.utils.set_random_seed(11)
    L = tf.keras.layers
    x = inp = L.Input(CHAIN[1:], batch_size=1)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = L.DepthwiseConv2D(3, padding="same")(x)
    x = L.Conv2D(32, 1, groups=4, activation="relu")(x)
    x = L.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = L.MaxPooling2D(2)(x)
    x = L.Conv2D(16, 1, groups=2)(x)
    x = L.Conv2D(16, 3, padding="same")(x)
    return tf.keras.Model(inp, x)


def main(out: str) -> int:
    import tensorflow as tf  # (optional heavy dependency: the netsplit extra)

    ops = {"int8": [tf.lite.OpsSet.TFLITE_BUILTINS_INT8],
           "int16": [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]}
    for name, model, shape, kinds in (("grouped_conv", _model(tf), SHAPE, ("int8", "int16")),
                                      ("grouped_conv_chain", _chain(tf), CHAIN, ("int8",))):
        def representative():
            r = np.random.default_rng(0)
            for _ in range(16):
                yield [r.standard_normal(shape).astype(np.float32)]

        for kind in kinds:
            c = tf.lite.TFLiteConverter.from_keras_model(model)
            c.optimizations = [tf.lite.Optimize.DEFAULT]
            c.representative_dataset = representative
            c.target_spec.supported_ops = ops[kind]
            c.inference_input_type = c.inference_output_type = getattr(tf, kind)
            path = Path(out) / f"{name}_{kind}.tflite"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(c.convert())
            print(path)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[3].strip())
    sys.exit(main(sys.argv[1]))
