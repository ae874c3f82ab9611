"""READ_VARIABLE and ASSIGN_VARIABLE as TFLite Micro runs them: a byte copy out of or into the variable's
persistent buffer (MicroResourceVariables::Read / Assign), no rescaling. ins[0] is the variable tensor."""

from __future__ import annotations

import numpy as np


def read_variable(g, op, ins, outs, **_) -> None:
    outs[0].reshape(-1).view(np.uint8)[...] = np.ascontiguousarray(ins[0]).reshape(-1).view(np.uint8)


def assign_variable(g, op, ins, outs, **_) -> None:
    ins[0].reshape(-1).view(np.uint8)[...] = np.ascontiguousarray(ins[1]).reshape(-1).view(np.uint8)
