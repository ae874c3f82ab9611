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
"""

from __future__ import annotations

import numpy as np

from .. import targets
from ..errors import BuildtoolError
from ..model.ir import Graph
from ..refops import prepare

FC_IL = "fc-il"
FC_IL_MAX_IN = 1280  # kernels/cortex-m/fully_connected.c BT_FC_COL_MAX
FC_IL_SET = "cortex-m"  # the kernel set whose kernels read fc-il (the board's first set)


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


def orders(g: Graph, board: str) -> dict:
    """{constant tensor index: order name} of the tensors board's image holds reordered (the model's
    operators only; a tensor any other operator or subgraph reads keeps the model's order)."""
    if _first_set(board) != FC_IL_SET:
        return {}
    uses: dict = {}
    subs = getattr(g, "subgraphs", {})
    for op in list(g.operators) + [op for k in sorted(subs) for op in subs[k].operators]:
        for i in op.inputs:
            if i >= 0:
                uses[i] = uses.get(i, 0) + 1
    out = {}
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


def image_bytes(g: Graph, i: int, order: str | None) -> bytes:
    """The bytes the flash image holds for constant tensor i in order (None: the model's, little-endian)."""
    t = g.tensors[i]
    if order == FC_IL:
        return fc_interleave(np.asarray(t.data)).tobytes()
    return t.data.astype(t.data.dtype.newbyteorder("<"), copy=False).tobytes()


__all__ = ["FC_IL", "FC_IL_MAX_IN", "fc_il_ok", "orders", "fc_interleave", "image_bytes"]
