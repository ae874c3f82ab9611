"""The per-channel requantisation tables the flash image holds beside the weights (issue 50).

A convolution's or fully connected layer's multipliers and shifts (refops/prepare.py: what TFLite Micro
computes from the model's scales at Prepare, into its arena) are model data, not code: the image holds
them after the tensors of its primary part (plan/flash.py), so the build's RAM/flash line counts them as
weights, a part that places its weights elsewhere places them there too, and model.c points its parameter
structs at them (codegen/emitter.py requant_arrays) instead of declaring op<i>_mult and op<i>_shift.

One table per operator of the model (not its subgraphs) in TABLED with a constant filter and quantised
input, filter and output: its multipliers (int32, one a channel), then its shifts (int32); of a rows-live
conv (plan/weight_order.py) its live rows only, in the image's order of its filter (a fused block's tile
kernel, which reads the model's order, gets its own copy in model.c). The tables come after the tensors, so
no tensor's offset depends on them; their sizes depend on shapes, quantisation axes and the zero rows (which
model.c's rows-live calls depend on too).
"""

from __future__ import annotations

import struct

from ..model.ir import Graph
from ..refops import prepare
from .weight_order import RowOrder, row_orders

# opcode -> the prepare function whose multipliers and shifts its emitter reads (codegen: conv_fields,
# fc_fields, model_c.transpose_conv), and its data input
TABLED = {"CONV_2D": (prepare.conv, 0), "DEPTHWISE_CONV_2D": (prepare.conv, 0),
          "TRANSPOSE_CONV": (prepare.transpose_conv, 2), "FULLY_CONNECTED": (prepare.fully_connected, 0)}


def tabled(g: Graph) -> list:
    """The model's operators the image holds a table for, in execution order of the model's operator list."""
    out = []
    for op in g.operators:
        if op.opcode not in TABLED or len(op.inputs) < 2 or op.inputs[1] < 0 or not op.outputs:
            continue
        x = TABLED[op.opcode][1]
        if len(op.inputs) <= x or op.inputs[x] < 0:
            continue
        ts = [g.tensors[op.inputs[x]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]]
        if ts[1].is_const and all(t.quant is not None for t in ts):
            out.append(op)
    return out


def values(g: Graph, op, rows: RowOrder | None = None) -> tuple:
    """(multipliers, shifts) of op as the image holds them: of rows' live rows, in their order, when its filter is
    rows-live."""
    p = TABLED[op.opcode][0](g, op)
    keep = rows.rows[:rows.live] if rows is not None else range(len(p.multipliers))
    return [int(p.multipliers[r]) for r in keep], [int(p.shifts[r]) for r in keep]


def tables(g: Graph) -> list:
    """[(op, multipliers, shifts)] of every tabled operator with a live channel, in image order."""
    orders = row_orders(g)
    return [(op, m, s) for op in tabled(g) for m, s in [values(g, op, orders.get(op.inputs[1]))] if m]


def sizes(g: Graph) -> list:
    """[(op index, bytes)] of the tables, in image order: a word per channel for each of the two arrays."""
    return [(op.index, 8 * len(m)) for op, m, _ in tables(g)]


def table_bytes(mults: list, shifts: list) -> bytes:
    """One table's bytes in the image: the multipliers then the shifts, little-endian int32."""
    return struct.pack(f"<{len(mults) + len(shifts)}i", *mults, *shifts)


__all__ = ["TABLED", "tabled", "values", "tables", "sizes", "table_bytes"]
