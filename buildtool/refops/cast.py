"""CAST (int8 / int16 -> int32): TFLM's cast.cc converts raw codes with static_cast (no requantisation), so
int8 and int16 values widen to int32 unchanged."""

from __future__ import annotations


def cast(g, op, ins, outs) -> None:
    outs[0][...] = ins[0].astype(outs[0].dtype).reshape(outs[0].shape)
