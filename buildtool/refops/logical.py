"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT (bool, TFLM logical.cc / elementwise.cc) and SELECT_V2 (bool condition,
int8 or int16 values, TFLM select.cc): no arithmetic, broadcast over up to 4 dimensions. SELECT_V2 copies the
chosen operand's raw codes (TFLM ignores the output's quantisation, as for MAXIMUM).
"""

from __future__ import annotations

import numpy as np

from .activation import operands


def logical_and(g, op, ins, outs) -> None:
    a, b = operands(g, op, ins)
    outs[0][...] = np.logical_and(a, b).reshape(outs[0].shape)


def logical_or(g, op, ins, outs) -> None:
    a, b = operands(g, op, ins)
    outs[0][...] = np.logical_or(a, b).reshape(outs[0].shape)


def logical_not(g, op, ins, outs) -> None:
    outs[0][...] = np.logical_not(ins[0]).reshape(outs[0].shape)


def select_v2(g, op, ins, outs) -> None:
    c, x, y = operands(g, op, ins)
    outs[0][...] = np.where(c, x, y).astype(outs[0].dtype).reshape(outs[0].shape)
