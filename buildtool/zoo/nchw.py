"""A network as converters from NCHW frameworks write it: every padded convolution an explicit PAD.

onnx2tf and the converters behind TFLite Micro's NCHW MobileNetV2 example write a padded convolution as
PAD (the zero point, symmetric PyTorch-style pads, at stride 2 too) followed by a VALID convolution.
`explicit_pads` rewrites a zoo graph that way, to test and measure what model/fold_pad.py does with such
files (tests/test_fold_pad.py, benchmarks/fold_pad.py).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..model.ir import Graph, Operator, Tensor, validate_graph
from ..model.ops import check_graph


def explicit_pads(g: Graph, name: str | None = None) -> Graph:
    """g with every SAME conv/depthwise of an odd kernel larger than 1 written as PAD(zero point, (k-1)/2 on
    each side of height and width) + the same conv VALID (its output size is SAME's; at stride 2 the windows
    start one row and column earlier, as PyTorch's do, so the values differ from g's)."""
    tensors = [dataclasses.replace(t) for t in g.tensors]
    ops = []
    for op in g.operators:
        o = op.options
        if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D") and o["padding"] == "SAME":
            f = g.tensors[op.inputs[1]].shape
            ph, pw = ((f[1] - 1) * o["dilation_h"]) // 2, ((f[2] - 1) * o["dilation_w"]) // 2
            if (ph or pw) and f[1] % 2 and f[2] % 2:
                x = tensors[op.inputs[0]]
                pads = Tensor(len(tensors), f"{x.name}/paddings", (4, 2), "int32",
                              data=np.array([[0, 0], [ph, ph], [pw, pw], [0, 0]], np.int32))
                tensors.append(pads)
                shape = (x.shape[0], x.shape[1] + 2 * ph, x.shape[2] + 2 * pw, x.shape[3])
                padded = Tensor(len(tensors), f"{x.name}/padded", shape, x.dtype, x.quant)
                tensors.append(padded)
                ops.append(Operator(-1, "PAD", (x.index, pads.index), (padded.index,), {}))
                op = dataclasses.replace(op, inputs=(padded.index,) + tuple(op.inputs[1:]),
                                         options={**o, "padding": "VALID"})
        ops.append(op)
    ops = [dataclasses.replace(op, index=k) for k, op in enumerate(ops)]
    out = Graph(tensors, ops, list(g.inputs), list(g.outputs), name or f"{g.name}_nchw")
    validate_graph(out)
    check_graph(out)
    return out
