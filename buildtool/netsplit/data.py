"""The dataset of a split search: train and validation batches (tf.data), the input shape, the
classes and a few training samples for the int8 converter's calibration.

    digits[:SIZE]      scikit-learn's 8x8 digits, upsampled to SIZExSIZE (default 16), fixed split
    FILE.npz           arrays x_train, y_train, x_val, y_val
    MODULE:FUNCTION    returns those four arrays (a tuple or a dict) or (train, val) tf.data datasets
                       of (image, label) batches
"""

from __future__ import annotations

import dataclasses
import importlib
import os

import numpy as np

from ..errors import UsageError

BATCH = 64
CALIBRATION = 128  # training samples the converter calibrates on


@dataclasses.dataclass
class Data:
    train: object  # tf.data.Dataset of (x, y) batches
    val: object
    input_shape: tuple
    classes: int
    calibration: np.ndarray  # float32 samples from the training data


def digits(size: int = 16, seed: int = 0) -> tuple:
    """scikit-learn's digits scaled to [0, 1], upsampled (nearest) to size x size, split 80/20 with a
    fixed permutation: (x_train, y_train, x_val, y_val)."""
    from sklearn.datasets import load_digits  # (scikit-learn: the optional netsplit extra)

    if size < 8 or size % 8:
        raise UsageError(f"digits size {size} must be a multiple of 8")
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    r = size // 8
    x = np.repeat(np.repeat(x, r, axis=1), r, axis=2)[..., None]
    y = d.target.astype(np.int32)
    p = np.random.default_rng(seed).permutation(len(x))
    n = len(x) * 4 // 5
    return x[p[:n]], y[p[:n]], x[p[n:]], y[p[n:]]


def _arrays(spec: str) -> tuple | None:
    """The four arrays spec names, or None when it names tf.data datasets."""
    if spec == "digits" or spec.startswith("digits:"):
        return digits(int(spec.split(":", 1)[1]) if ":" in spec else 16)
    if spec.endswith(".npz") or os.path.exists(spec):
        try:
            with np.load(spec) as z:
                return tuple(z[k] for k in ("x_train", "y_train", "x_val", "y_val"))
        except (OSError, ValueError, KeyError) as e:
            raise UsageError(f"{spec}: not an .npz with x_train, y_train, x_val, y_val ({e})") from None
    return None


def _call(spec: str):
    mod, _, fn = spec.partition(":")
    if not fn:
        raise UsageError(f"dataset '{spec}' is neither digits[:SIZE], an .npz file nor MODULE:FUNCTION")
    try:
        got = getattr(importlib.import_module(mod), fn)()
    except (ImportError, AttributeError) as e:
        raise UsageError(f"dataset '{spec}': {e}") from None
    if isinstance(got, dict):
        got = tuple(got[k] for k in ("x_train", "y_train", "x_val", "y_val"))
    return tuple(got)


def _from_arrays(xt, yt, xv, yv) -> Data:
    import tensorflow as tf  # (the optional netsplit extra)

    xt, xv = np.asarray(xt, np.float32), np.asarray(xv, np.float32)
    yt, yv = np.asarray(yt).reshape(-1).astype(np.int32), np.asarray(yv).reshape(-1).astype(np.int32)
    if xt.ndim != 4 or xv.shape[1:] != xt.shape[1:] or len(xt) != len(yt) or len(xv) != len(yv):
        raise UsageError(f"the dataset needs x of shape (N, H, W, C) and one label per sample; got "
                         f"x_train {xt.shape}, y_train {yt.shape}, x_val {xv.shape}, y_val {yv.shape}")
    train = tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(len(xt), seed=0).batch(BATCH)
    val = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(256)
    return Data(train, val, xt.shape[1:], int(max(yt.max(), yv.max())) + 1, xt[:CALIBRATION])


def _from_datasets(train, val) -> Data:
    xs, labels = [], []
    for x, y in train.take(8):
        xs.append(np.asarray(x, np.float32))
        labels.append(np.asarray(y).reshape(-1))
    for _, y in val:
        labels.append(np.asarray(y).reshape(-1))
    x = np.concatenate(xs)
    return Data(train, val, x.shape[1:], int(np.concatenate(labels).max()) + 1, x[:CALIBRATION])


def load(spec: str) -> Data:
    """The Data a --data argument names."""
    arrays = _arrays(spec)
    if arrays is None:
        arrays = _call(spec)
    if len(arrays) == 2:
        return _from_datasets(*arrays)
    if len(arrays) != 4:
        raise UsageError(f"dataset '{spec}' must give x_train, y_train, x_val, y_val or (train, val) datasets")
    return _from_arrays(*arrays)
