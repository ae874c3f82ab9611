"""Model edits as a user makes them, for the build-system tests and benchmarks/integrations.py."""

from __future__ import annotations

from buildtool import zoo
from buildtool.zoo.builder import GraphBuilder
from buildtool.model.writer import serialize


def tiny_bytes(bump: int = 0, wide: bool = False) -> bytes:
    """tiny.tflite. bump != 0: one weight byte changed (same structure, same plan, same model.c);
    wide: a structural edit (the first layers 12 channels instead of 8)."""
    if wide:
        b = GraphBuilder("tiny", seed=0, calib_batch=2)
        x = b.input((1, 32, 32, 3))
        s = b.conv2d(x, 12, 3, 2)
        h = b.conv2d(b.depthwise(s, 3, 1), 12, 1, activation="NONE")
        h = b.conv2d(b.add(s, h), 16, 3, 2)
        b.fully_connected(b.mean(h), 10)
        return serialize(b.finish())
    g = zoo.build("tiny")
    if bump:
        t = next(t for t in g.tensors if t.is_const and t.dtype == "int8")
        t.data = t.data.copy()
        t.data.flat[0] = (int(t.data.flat[0]) + bump) % 127
    return serialize(g)


def perturb_weights(data: bytes) -> bytes:
    """Any model's bytes with one byte of one weight buffer flipped (structure and scales unchanged):
    the first constant of 16 bytes or more whose bytes occur once in the file."""
    import numpy as np

    from buildtool.plan import flash
    from buildtool.model import reader as tflite_reader

    g = tflite_reader.parse(data, name="model")
    out = bytearray(data)
    for i in flash.flash_tensors(g):
        raw = np.ascontiguousarray(g.tensors[i].data).tobytes()
        if len(raw) >= 16 and out.count(raw) == 1:
            out[out.index(raw)] ^= 0x01
            return bytes(out)
    raise ValueError("no weight buffer found that occurs once in the model")
