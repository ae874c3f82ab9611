"""Keras -> int8 TFLite with TensorFlow's converter, calibrated on training samples."""

from __future__ import annotations

import contextlib
import io

import numpy as np


def to_int8_tflite(model, calibration: np.ndarray) -> bytes:
    """A full-integer .tflite (int8 input, output and activations) of model."""
    import tensorflow as tf  # (the optional netsplit extra)

    def samples():
        for x in calibration:
            yield [x[None].astype(np.float32)]

    c = tf.lite.TFLiteConverter.from_keras_model(model)
    c.optimizations = [tf.lite.Optimize.DEFAULT]
    c.representative_dataset = samples
    c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    c.inference_input_type = tf.int8
    c.inference_output_type = tf.int8
    with contextlib.redirect_stdout(io.StringIO()):  # the exporter prints its SavedModel's signature
        return bytes(c.convert())
