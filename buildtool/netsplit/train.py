"""Training and evaluation with fixed seeds, one progress line per epoch on stderr."""

from __future__ import annotations

import sys

import keras

LEARNING_RATE = 1e-3


class _Progress(keras.callbacks.Callback):
    def __init__(self, label: str, epochs: int, out):
        super().__init__()
        self.label, self.epochs, self.out = label, epochs, out

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.out is not None:
            print(f"netsplit: {self.label}: epoch {epoch + 1}/{self.epochs} loss {logs.get('loss', 0):.4f} "
                  f"accuracy {logs.get('accuracy', 0):.4f}", file=self.out, flush=True)


def fit(model: keras.Model, data, epochs: int, label: str, seed: int = 0, progress=sys.stderr) -> keras.Model:
    """model trained for epochs on data.train (Adam, cross-entropy), in place."""
    keras.utils.set_random_seed(seed)
    model.compile(optimizer=keras.optimizers.Adam(LEARNING_RATE),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"],
                  jit_compile=False)  # XLA's compile costs more than it saves on these small networks
    if epochs > 0:
        model.fit(data.train, epochs=epochs, verbose=0, callbacks=[_Progress(label, epochs, progress)])
    return model


def accuracy(model: keras.Model, data) -> float:
    """Top-1 accuracy on data.val, in percent."""
    if not model.compiled:
        fit(model, data, 0, "")
    return float(model.evaluate(data.val, verbose=0, return_dict=True)["accuracy"]) * 100.0
