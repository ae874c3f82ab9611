"""Make the resource-variable test models (tests/data/var_*.tflite) with TensorFlow's converter.

Usage: python3 scripts/variable_models.py [DIR]   (default tests/data; TensorFlow 2.21)

Each model keeps a tf.Variable across invocations; the converter (with variable quantisation on)
writes VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE in the model's subgraph and a CALL_ONCE that
runs an init subgraph assigning each variable its initial value:
  var_accumulator_int8   s = 0.5 s + x, y = s + 1: a streaming accumulator ([1, 8], starts at 0)
  var_ring_int8          a keyword-spotting ring buffer: the last 4 frames of 8 features (starts at a
                         non-zero constant), y = dense(flatten(frames)); two variables (frames, a count)
  var_accumulator_int16  the accumulator converted 16x8 (int16 activations and variable)
and the control-flow models (IF and WHILE run other subgraphs; built and tested in tests/test_control_flow.py):
  cf_if_int8             y = 2 cond(sum(x) > 0, x / 2 + 1/4, |x| - 1/4): IF, float32 across it (DEQUANTIZE
                         before, QUANTIZE ... DEQUANTIZE in each branch)
  cf_while_int8          three times y = y / 2 + 0.1: WHILE with an int32 counter (ADD, LESS in int32)
"""

from __future__ import annotations

import os
import sys

import numpy as np


def convert(module, spec, int16=False):
    import tensorflow as tf

    rng = np.random.default_rng(0)
    conc = module.__call__.get_concrete_function()
    c = tf.lite.TFLiteConverter.from_concrete_functions([conc], module)
    c.optimizations = [tf.lite.Optimize.DEFAULT]
    c.representative_dataset = lambda: ([rng.uniform(-1, 1, spec).astype(np.float32)] for _ in range(64))
    if int16:
        c.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        c.inference_input_type = c.inference_output_type = tf.int16
    else:
        c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        c.inference_input_type = c.inference_output_type = tf.int8
    c._experimental_variable_quantization = True
    return c.convert()


def models():
    import tensorflow as tf

    class Accumulator(tf.Module):
        def __init__(self):
            super().__init__()
            self.s = tf.Variable(tf.zeros([1, 8]), trainable=False)

        @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
        def __call__(self, x):
            y = self.s * 0.5 + x
            self.s.assign(y)
            return y + 1.0

    class Ring(tf.Module):
        def __init__(self):
            super().__init__()
            init = np.linspace(-0.9, 0.9, 32, dtype=np.float32).reshape(1, 4, 8)
            self.frames = tf.Variable(init, trainable=False)
            self.count = tf.Variable(tf.fill([1, 8], 0.25), trainable=False)
            self.w = tf.constant(np.random.default_rng(1).uniform(-0.5, 0.5, (32, 6)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
        def __call__(self, x):
            f = tf.concat([self.frames[:, 1:, :], tf.reshape(x, [1, 1, 8])], axis=1)
            self.frames.assign(f)
            c = self.count * 0.75 + tf.abs(x) * 0.25
            self.count.assign(c)
            return tf.matmul(tf.reshape(f, [1, 32]), self.w) + tf.reduce_mean(c)

    class If(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
        def __call__(self, x):
            y = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 0.5 + 0.25, lambda: tf.abs(x) - 0.25)
            return y * 2.0

    class While(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
        def __call__(self, x):
            _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 0.5 + 0.1), [tf.constant(0), x])
            return y

    return {"var_accumulator_int8": (Accumulator(), False), "var_ring_int8": (Ring(), False),
            "var_accumulator_int16": (Accumulator(), True), "cf_if_int8": (If(), False),
            "cf_while_int8": (While(), False)}


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for name, (m, int16) in models().items():
        data = convert(m, (1, 8), int16)
        with open(os.path.join(out, name + ".tflite"), "wb") as f:
            f.write(data)
        print(f"{name}.tflite {len(data)} B")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data"))
