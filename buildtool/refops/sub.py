"""SUB, int8 and int16 (TFLM sub: ADD's rescaling and parameters, the second operand subtracted)."""

from __future__ import annotations

from .elementwise import add_params, add_sub


def sub_params(g, op) -> dict:
    """TFLM CalculateOpDataSub: ADD's parameters (double arithmetic; checked against TFLM)."""
    return add_params(g, op)


def sub(g, op, ins, outs) -> None:
    add_sub(sub_params(g, op), ins, outs, sign=-1)
