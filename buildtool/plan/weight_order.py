"""Weights the flash image holds in another order than the model's, for a board's kernels.

The order depends only on the graph's structure and the board (never on the plan), so the flash step
(which may run without the plan) and the code generator agree: `orders(g, board)` names the reordered
tensors, `image_bytes` is what the image holds for one, at the tensor's offset and in its size.

"fc-il" (issue 29): an int8 FULLY_CONNECTED's weights [n_out][n_in] on the cortex-m kernel set, for
bt_fully_connected_s8_il (kernels/cortex-m/fully_connected.c states the layout): per four rows and
four inputs, four words pairing two rows byte by byte, the first row's bytes biased by 128, so one
SMLAD of the raw word and one SXTB16 + SMLAD give two rows' sums (3 instructions per 4 MACs instead
of 4). Taken when the weights have no zero point, 4 <= n_in <= 1280 (the kernel's widened input row),
n_out >= 4, and no other operator reads the tensor; model.c then calls bt_fully_connected_s8_il*
(codegen/model_c.py) and a fused block's dense tail a plain copy (codegen/emitter.py fc_fields).

"rows-live" (issue 29, any board): an int8 CONV_2D whose filter has zero rows (output channels whose weights are
all zero: model/weight_facts.py) gets its filter's and bias's rows with the live ones first (RowOrder.rows).
model.c runs the convolution on the live rows only, its outputs packed at the start of each pixel, then spreads
them and writes the zero rows' constant outputs (the bias requantised) (codegen/model_c.py conv_2d); a fused
block's tile kernels take plain copies (codegen/emitter.py conv_fields). Taken when the zero rows' MACs per
pixel are at least ROWS_LIVE_GAIN per output channel (the spreading costs a few cycles per output), and no
other operator reads the filter or the bias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import targets
from ..errors import BuildtoolError
from ..model import weight_facts
from ..model.ir import Graph
from ..model.ops import conv_groups
from ..refops import prepare

FC_IL = "fc-il"
FC_IL_MAX_IN = 1280  # kernels/cortex-m/fully_connected.c BT_FC_COL_MAX
FC_IL_SET = "cortex-m"  # the kernel set whose kernels read fc-il (the board's first set)
ROWS_LIVE_GAIN = 4  # zero rows' MACs per pixel per output channel from which a conv runs on its live rows


@dataclass(frozen=True)
class RowOrder:
    """The "rows-live" order of a filter or bias: the image's row k is the model's row rows[k], the live rows
    (in order) before the zero ones; live of them are live."""

    rows: tuple
    live: int


def _first_set(board: str) -> str | None:
    try:
        return targets.get(board).kernel_search()[0]
    except (BuildtoolError, KeyError):
        return None


def fc_il_ok(g: Graph, op) -> bool:
    """Can bt_fully_connected_s8_il run op (an int8 FULLY_CONNECTED of constant 2-D weights)?"""
    if op.opcode != "FULLY_CONNECTED" or len(op.inputs) < 2 or op.inputs[1] < 0:
        return False
    ti, tw, to = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if (ti.dtype, tw.dtype, to.dtype) != ("int8", "int8", "int8") or not tw.is_const or len(tw.shape) != 2:
        return False
    p = prepare.fully_connected(g, op)
    return p.filter_offset == 0 and 4 <= p.n_in <= FC_IL_MAX_IN and p.n_out >= 4


def live_rows(g: Graph, op) -> RowOrder | None:
    """The rows-live order of an int8 CONV_2D's filter worth running on its live rows, else None."""
    if op.opcode != "CONV_2D" or len(op.inputs) < 2 or op.inputs[1] < 0 or conv_groups(g, op) > 1:
        return None  # a grouped conv's calls slice its filter by group (codegen/model_c.py), in the model's order
    tw, to = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    if (tw.dtype, to.dtype) != ("int8", "int8") or not tw.is_const or len(tw.shape) != 4:
        return None
    if tw.quant is not None and np.any(tw.quant.zero_point):
        return None
    dead = weight_facts.zero_rows(tw)
    c, k = int(tw.shape[0]), int(np.prod(tw.shape[1:]))
    if not dead or len(dead) * k < ROWS_LIVE_GAIN * c:
        return None
    zero = set(dead)
    live = [r for r in range(c) if r not in zero]
    return RowOrder(tuple(live + list(dead)), len(live))


def _uses(g: Graph) -> dict:
    """{tensor index: how many operator inputs (the subgraphs' too) read it}."""
    uses: dict = {}
    subs = getattr(g, "subgraphs", {})
    for op in list(g.operators) + [op for k in sorted(subs) for op in subs[k].operators]:
        for i in op.inputs:
            if i >= 0:
                uses[i] = uses.get(i, 0) + 1
    return uses


def row_orders(g: Graph, uses: dict | None = None) -> dict:
    """{constant tensor index: RowOrder} of the rows-live convs' filters and biases (any board): live_rows's
    convs whose filter and bias no other operator reads."""
    uses = _uses(g) if uses is None else uses
    out = {}
    for op in g.operators:
        rows = live_rows(g, op)
        b = prepare.bias_input(g, op) if rows else -1
        if rows and uses[op.inputs[1]] == 1 and (b < 0 or uses[b] == 1):
            out[op.inputs[1]] = rows
            if b >= 0:
                out[b] = rows
    return out


def orders(g: Graph, board: str) -> dict:
    """{constant tensor index: order (FC_IL, or a RowOrder)} of the tensors board's image holds reordered
    (the model's operators only; a tensor any other operator or subgraph reads keeps the model's order)."""
    uses = _uses(g)
    out = row_orders(g, uses)
    if _first_set(board) == FC_IL_SET:
        for op in g.operators:
            if fc_il_ok(g, op) and uses[op.inputs[1]] == 1:
                out[op.inputs[1]] = FC_IL
    return out


def fc_interleave(w: np.ndarray) -> np.ndarray:
    """int8 weights [m][n] in the fc-il order (a flat int8 array of the same size)."""
    m, n = w.shape
    m4, n4 = m & ~3, n & ~3
    u = np.ascontiguousarray(w, dtype=np.int8).view(np.uint8)
    parts = []
    if m4 and n4:
        a = u[:m4, :n4].reshape(m4 // 4, 4, n4 // 4, 4)  # group, row in group, quad, input in quad
        b = a ^ 0x80
        words = [np.stack([b[:, r, :, s], a[:, r + 1, :, s], b[:, r, :, s + 2], a[:, r + 1, :, s + 2]], axis=-1)
                 for r in (0, 2) for s in (0, 1)]  # each [group, quad, 4 bytes]
        body = np.stack(words, axis=2).reshape(m4 // 4, -1)  # group, (quad, word, byte)
        tail = u[:m4, n4:].reshape(m4 // 4, 4 * (n - n4))  # group, (row, tail value)
        parts.append(np.concatenate([body, tail], axis=1).reshape(-1))
    elif m4:
        parts.append(u[:m4].reshape(-1))
    parts.append(u[m4:].reshape(-1))
    return np.concatenate(parts).view(np.int8)


def image_bytes(g: Graph, i: int, order) -> bytes:
    """The bytes the flash image holds for constant tensor i in order (None: the model's, little-endian)."""
    d = np.asarray(g.tensors[i].data)
    if order == FC_IL:
        return fc_interleave(d).tobytes()
    if isinstance(order, RowOrder):
        d = d[list(order.rows)]
    return d.astype(d.dtype.newbyteorder("<"), copy=False).tobytes()


__all__ = ["FC_IL", "FC_IL_MAX_IN", "RowOrder", "fc_il_ok", "live_rows", "row_orders", "orders", "fc_interleave",
           "image_bytes"]
