"""TFLite builtin options, read and written from the operator table (opdefs.OPDEFS).

An operator's row names its options table (`options`, e.g. "Conv2DOptions") and lists the table's
fields (`option_fields`: IR key, schema field name, kind, default). The reader and the writer have
no per-operator code: `read` turns a table into the IR's options dict, `write` builds the table
from it, both through the generated accessors of the `tflite` package (`{Table}.{Field}()`,
`{Table}Add{Field}`, `{Table}Start{Field}Vector`). Field kinds:

  int, bool, float       a scalar
  padding, activation    an enum (PADDING, ACTIVATION below)
  ints                   an int32 vector (bounds-checked by the reader)
  output_shape           an int32 vector written from the operator's output shape, never read
  refuse                 read only: a non-zero value is refused; the key is the reason

A default of `...` means the writer needs the key; `N_OUTPUTS` means the operator's number of
outputs. An operator whose row says `options_required` is refused without its table.
"""

from __future__ import annotations

import tflite
from tflite.BuiltinOptions import BuiltinOptions

from ..errors import ModelError
from .opdefs import BY_NAME, N_OUTPUTS

ACTIVATION = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
PADDING = {0: "SAME", 1: "VALID"}
ACTIVATION_CODES = {v: k for k, v in ACTIVATION.items()}
PADDING_CODES = {v: k for k, v in PADDING.items()}
_ENUMS = {"activation": ACTIVATION, "padding": PADDING}
_CODES = {"activation": ACTIVATION_CODES, "padding": PADDING_CODES}
_SCALAR = {"int": int, "bool": bool, "float": float}


def _default(f, n_outputs: int):
    return n_outputs if f.default is N_OUTPUTS else f.default


class _SlotProbe:
    """Stands in for a flatbuffers Builder to learn which slot a generated `Add` function writes."""

    def __getattr__(self, name):
        def record(slot, *args):
            self.slot = slot
        return record


_SLOTS: dict = {}


def vtable_offset(table: str, field: str) -> int:
    """The vtable offset of a table's field (4 + 2 x its index in schema.fbs), from the generated code."""
    key = (table, field)
    if key not in _SLOTS:
        probe = _SlotProbe()
        getattr(tflite, f"{table}Add{field}")(probe, 0)
        _SLOTS[key] = 4 + 2 * probe.slot
    return _SLOTS[key]


# -- reading ----------------------------------------------------------------------------------------
def read(reader, opcode: str, table: int | None, i: int, n_outputs: int) -> dict:
    """The options dict of operator i (opcode) from its builtin_options table (file position or None).
    `reader` is the tflite_reader._Reader: its buffer, `fail` and checked vector reads."""
    d = BY_NAME[opcode]
    if not d.option_fields:
        return {}
    if table is None:
        if d.options_required:
            reader.fail(f"operator {i} ({opcode}) has no options")
        return {f.key: _default(f, n_outputs) for f in d.option_fields if f.kind not in ("output_shape", "refuse")}
    o = getattr(tflite, d.options)()
    o.Init(reader.buf, table)
    out = {}
    for f in d.option_fields:
        if f.kind == "output_shape":
            continue
        if f.kind == "ints":
            where = reader._table(table, f"operator {i} options")
            out[f.key] = tuple(reader._ivec(where, vtable_offset(d.options, f.schema), f"operator {i} {f.key}"))
            continue
        v = getattr(o, f.schema)()
        if f.kind == "refuse":
            if v != 0:
                reader.fail(f"operator {i} ({opcode}) {f.key}")
        elif f.kind in _ENUMS:
            if v not in _ENUMS[f.kind]:
                reader.fail(f"operator {i}: unknown {f.kind} value {v}")
            out[f.key] = _ENUMS[f.kind][v]
        else:
            out[f.key] = _SCALAR[f.kind](v or f.default) if f.zero_is_default else _SCALAR[f.kind](v)
    return out


# -- writing ----------------------------------------------------------------------------------------
def write(writer, op) -> tuple:
    """(BuiltinOptions type, table offset or None) of one operator. `writer` is the
    tflite_writer._Writer: its Builder `b`, graph `g` and `_ints` vector helper."""
    d = BY_NAME.get(op.opcode)
    if d is None or not d.options:
        return BuiltinOptions.NONE, None
    b, name, o = writer.b, d.options, op.options
    values = []  # (schema field, value or vector offset), in the row's order
    for f in d.option_fields:  # vectors are built first: a table cannot be open while one is
        if f.kind == "refuse":
            continue
        if f.kind == "output_shape":
            v = writer.g.tensors[op.outputs[0]].shape
        else:
            v = o[f.key] if f.default is ... else o.get(f.key, _default(f, len(op.outputs)))
        if f.kind in ("ints", "output_shape"):
            if f.kind == "output_shape" or len(v):  # an empty optional vector is left out
                values.append((f.schema, writer._ints(getattr(tflite, f"{name}Start{f.schema}Vector"), list(v))))
        else:
            if f.kind == "padding" and v not in PADDING_CODES:  # explicit padding: a folded PAD (model/fold_pad.py)
                raise ModelError(f"operator {op.index} ({op.opcode}) has the explicit padding {v} of a folded PAD, "
                                 f"which a .tflite file cannot hold; write the graph as read, before fold_pads")
            values.append((f.schema, _CODES[f.kind][v] if f.kind in _CODES else _SCALAR[f.kind](v)))
    getattr(tflite, f"{name}Start")(b)
    for schema, v in values:
        getattr(tflite, f"{name}Add{schema}")(b, v)
    return getattr(BuiltinOptions, name), getattr(tflite, f"{name}End")(b)


__all__ = ["ACTIVATION", "PADDING", "ACTIVATION_CODES", "PADDING_CODES", "read", "write", "vtable_offset"]
