"""A small model converted to int8 by TensorFlow whose GATHER, GATHER_ND and FILL take computed inputs (issue 33
item 1), for tests/test_ops_computed.py.

    python3 scripts/computed_ops_model.py OUT_DIR

Writes computed_ops.tflite: x [1, 10, 8] -> h = relu(dense 8); GATHER of h along axis 1 by ARG_MAX(h[0]) (10
int32 indices in [0, 8)); GATHER_ND of h[0] by ARG_MAX over a dense 16 of x reshaped [10, 2, 8] (10 index pairs in
[0, 8)), and again by those pairs swapped (UNPACK and PACK of int32); FILL [1, 10, 8] with REDUCE_MAX(h) (a
computed scalar); the GATHER plus the two GATHER_ND columns and the FILL concatenated into a dense 4. Seeded weights and representative set: the file is reproduced byte for byte.
Needs TensorFlow (the `netsplit` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def main(out: str) -> int:
    import tensorflow as tf  # (optional heavy dependency: the netsplit extra)

    rng = np.random.default_rng(3)
    w1, w3, w2 = (tf.constant(rng.standard_normal(s).astype(np.float32) * k)
                  for s, k in (((8, 8), 0.4), ((8, 16), 0.4), ((16, 4), 0.3)))

    @tf.function(input_signature=[tf.TensorSpec((1, 10, 8), tf.float32)])
    def model(x):
        h = tf.nn.relu(tf.matmul(x, w1))
        g = tf.gather(h, tf.argmax(h[0], axis=-1, output_type=tf.int32), axis=1)
        pairs = tf.argmax(tf.reshape(tf.matmul(x, w3), (10, 2, 8)), axis=-1, output_type=tf.int32)
        nd = tf.gather_nd(h[0], pairs)
        a, b = tf.unstack(pairs, axis=-1)
        nd2 = tf.gather_nd(h[0], tf.stack([b, a], -1))  # indices TensorFlow writes as UNPACK and PACK of int32
        f = tf.fill([1, 10, 8], tf.reduce_max(h))
        return tf.matmul(tf.concat([g + tf.reshape(nd, (1, 10, 1)) + tf.reshape(nd2, (1, 10, 1)), f], -1), w2)

    def representative():
        r = np.random.default_rng(0)
        for _ in range(16):
            yield [r.standard_normal((1, 10, 8)).astype(np.float32)]

    c = tf.lite.TFLiteConverter.from_concrete_functions([model.get_concrete_function()], model)
    c.optimizations = [tf.lite.Optimize.DEFAULT]
    c.representative_dataset = representative
    c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    c.inference_input_type = c.inference_output_type = tf.int8
    path = Path(out) / "computed_ops.tflite"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(c.convert())
    print(path)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[3].strip())
    sys.exit(main(sys.argv[1]))
