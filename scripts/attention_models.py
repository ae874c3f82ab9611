"""Two small attention models converted to int8 by TensorFlow (issue 33 item 2), for planning and testing.

    python3 scripts/attention_models.py OUT_DIR

Writes kws_transformer.tflite (49x40 MFCC frames -> a dense embedding, two pre-norm transformer blocks of
dimension 64 with 2 heads and a GELU MLP of 128, average over time, 12 classes) and tiny_vit.tflite
(32x32x3 -> 4x4 patches by a strided conv, two blocks of dimension 48 with 3 heads and an MLP of 96, 10
classes), random weights (seeded), full-integer quantised with a random representative set. Needs
TensorFlow (the `netsplit` extra).

What TensorFlow 2.21 writes (`buildtool inspect`): FULLY_CONNECTED, BATCH_MATMUL, TRANSPOSE, RESHAPE,
SOFTMAX, MUL, ADD; each LayerNormalization as MEAN, DEQUANTIZE -> float NEG -> QUANTIZE, SQUARED_DIFFERENCE,
MEAN, ADD, RSQRT, MUL; and the GELU builtin, which the tflite-micro package's interpreter does not
register ("Didn't find op for builtin opcode 'GELU'"), so TFLite Micro cannot run either model as written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def main(out: str) -> int:
    import tensorflow as tf  # (optional heavy dependency: the netsplit extra)

    tf.keras.utils.set_random_seed(7)
    layers = tf.keras.layers

    def block(x, dim, heads, mlp):
        h = layers.LayerNormalization(epsilon=1e-6)(x)
        h = layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)(h, h)
        x = layers.Add()([x, h])
        h = layers.LayerNormalization(epsilon=1e-6)(x)
        h = layers.Dense(mlp, activation="gelu")(h)
        return layers.Add()([x, layers.Dense(dim)(h)])

    def kws():
        inp = tf.keras.Input((49, 40), batch_size=1)
        x = layers.Dense(64)(inp)
        for _ in range(2):
            x = block(x, 64, 2, 128)
        x = layers.GlobalAveragePooling1D()(x)
        return tf.keras.Model(inp, layers.Dense(12, activation="softmax")(x), name="kws_transformer")

    def vit():
        inp = tf.keras.Input((32, 32, 3), batch_size=1)
        x = layers.Reshape((64, 48))(layers.Conv2D(48, 4, strides=4)(inp))
        for _ in range(2):
            x = block(x, 48, 3, 96)
        x = layers.GlobalAveragePooling1D()(x)
        return tf.keras.Model(inp, layers.Dense(10, activation="softmax")(x), name="tiny_vit")

    Path(out).mkdir(parents=True, exist_ok=True)
    for make in (kws, vit):
        m = make()

        def representative(shape=m.input_shape):
            rng = np.random.default_rng(0)
            for _ in range(16):
                yield [rng.standard_normal(shape).astype(np.float32)]

        c = tf.lite.TFLiteConverter.from_keras_model(m)
        c.optimizations = [tf.lite.Optimize.DEFAULT]
        c.representative_dataset = representative
        c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        c.inference_input_type = c.inference_output_type = tf.int8
        path = Path(out) / f"{m.name}.tflite"
        path.write_bytes(c.convert())
        print(path)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[2].strip())
    sys.exit(main(sys.argv[1]))
