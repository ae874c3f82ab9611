"""Fold an explicit PAD into the convolutions that read it (issue 33 item 4).

Converters from NCHW frameworks write every padded convolution as PAD (zero point) + CONV_2D VALID
(TFLite Micro's own MobileNetV2 example, onnx2tf, ...). The padded copy costs its bytes in the arena
and a pass over memory, and a fusion block stops at it. A convolution's padding taps are its input zero
point, so PAD(zero point) followed by a convolution is the same convolution with that much more
padding, to the bit: `fold_pads` gives the graph in which each such convolution reads the PAD's input
with an explicit padding ((top, bottom), (left, right): ops.axis_padding), and the PAD is gone. The
planner, the fusion search, the kernels and code generation all take a window's padding from
ops.conv_out_size / conv_padding, so nothing else changes; operator indices are those of the folded
graph (tensor indices stay the file's: the PAD's tensors stay, unread). `unfold_pads` gives back a graph a
.tflite file can hold (the writer calls it), which folds to the same graph again.

A PAD is folded when it pads only height and width of a 4-D tensor with the zero point (PAD always,
PADV2 when its constant is the zero point), keeps its input's quantisation, is no graph output, and
every reader is a CONV_2D or DEPTHWISE_CONV_2D taking it as input and whose combined padding on each
side stays below its (dilated) filter size, as SAME padding does.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .ir import Graph, Operator
from .ops import axis_padding, conv_out_size, conv_padding

FOLDABLE_READERS = ("CONV_2D", "DEPTHWISE_CONV_2D")


def _pads(g: Graph, op) -> tuple | None:
    """((top, bottom), (left, right)) of a PAD/PADV2 that pads only height and width with the zero point."""
    x, t = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    if len(x.shape) != 4 or x.is_const or x.quant is None or t.quant is None:
        return None
    if not (np.float32(x.scale) == np.float32(t.scale) and x.zero_point == t.zero_point and x.dtype == t.dtype):
        return None
    if op.opcode == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        if int(g.tensors[op.inputs[2]].data.reshape(-1)[0]) != t.zero_point:
            return None
    p = g.tensors[op.inputs[1]].data.reshape(-1, 2).astype(np.int64)
    if p.shape != (4, 2) or p[0].any() or p[3].any():
        return None
    return (int(p[1, 0]), int(p[1, 1])), (int(p[2, 0]), int(p[2, 1]))


def _combined(g: Graph, conv, pads: tuple) -> tuple | None:
    """The conv's own padding (on the padded input) plus the PAD's, per axis, when each side stays below
    the dilated filter size and the output size is unchanged; else None."""
    o, t = conv.options, g.tensors[conv.inputs[0]]
    f = g.tensors[conv.inputs[1]].shape
    out = g.tensors[conv.outputs[0]].shape
    res = []
    for a, (n, k, s, d) in enumerate(((t.shape[1], f[1], o["stride_h"], o.get("dilation_h", 1)),
                                      (t.shape[2], f[2], o["stride_w"], o.get("dilation_w", 1)))):
        own = axis_padding(o["padding"], a)
        m = conv_out_size(n, k, s, d, own)
        lead = conv_padding(n, k, s, d, own)
        trail = max((m - 1) * s + (k - 1) * d + 1 - n - lead, 0)
        before, after = lead + pads[a][0], trail + pads[a][1]
        eff = (k - 1) * d + 1
        n_in = n - pads[a][0] - pads[a][1]
        if before >= eff or after >= eff or conv_out_size(n_in, k, s, d, (before, after)) != out[1 + a]:
            return None
        res.append((before, after))
    return tuple(res)


def fold_pads(g: Graph) -> Graph:
    """g with every foldable PAD folded into its readers (the same Graph object when there is none)."""
    readers = g.consumers()
    outputs = set(g.outputs)
    rewrite, drop = {}, set()
    for op in g.operators:
        if op.opcode not in ("PAD", "PADV2") or op.outputs[0] in outputs:
            continue
        pads = _pads(g, op)
        ks = readers.get(op.outputs[0], [])
        if pads is None or not ks or any(k in rewrite for k in ks):
            continue
        convs = [g.operators[k] for k in ks]
        if any(c.opcode not in FOLDABLE_READERS or c.inputs[0] != op.outputs[0] or op.outputs[0] in c.inputs[1:]
               for c in convs):
            continue
        new = [_combined(g, c, pads) for c in convs]
        if any(n is None for n in new):
            continue
        record = {"opcode": op.opcode, "inputs": list(op.inputs), "output": op.outputs[0]}
        for c, n in zip(convs, new):
            rewrite[c.index] = dataclasses.replace(c, inputs=(op.inputs[0],) + tuple(c.inputs[1:]), options={
                **c.options, "padding": n, "folded_pad": {**record, "padding": c.options["padding"]}})
        drop.add(op.index)
    if not drop:
        return g
    return _renumbered(g, [rewrite.get(op.index, op) for op in g.operators if op.index not in drop])


def unfold_pads(g: Graph) -> Graph:
    """The graph fold_pads made g from, up to where each PAD stands (just before its first reader): what a
    .tflite file can hold. Each folded convolution's options keep its PAD ("folded_pad": opcode, inputs,
    output tensor, the convolution's own padding), and fold_pads keeps the PAD's tensors, so folding the
    result gives g again, tensor for tensor."""
    if not any("folded_pad" in op.options for op in g.operators):
        return g
    ops, placed = [], set()
    for op in g.operators:
        fp = op.options.get("folded_pad")
        if fp is not None:
            if fp["output"] not in placed:
                placed.add(fp["output"])
                ops.append(Operator(-1, fp["opcode"], tuple(fp["inputs"]), (fp["output"],), {}))
            options = {k: v for k, v in op.options.items() if k != "folded_pad"} | {"padding": fp["padding"]}
            op = dataclasses.replace(op, inputs=(fp["output"],) + tuple(op.inputs[1:]), options=options)
        ops.append(op)
    return _renumbered(g, ops)


def _renumbered(g: Graph, ops: list) -> Graph:
    out = g.copy()
    out.operators = [dataclasses.replace(op, index=k, options=dict(op.options)) for k, op in enumerate(ops)]
    return out
