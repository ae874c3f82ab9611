"""What code generation may know of a constant's values, whether it has them or not.

Code generation reads a model file (every value) or its skeleton (codegen/skeleton.py: the weights as
zeros). Two facts of weight values change the code it writes, so the skeleton records them and both give
the same model.c:
- a filter's zero rows: output channels whose weights are all zero (a pruned channel; vww_96_int8 has 42 % of
  its MACs in them). Their sums are the bias alone, so their outputs are constants (plan/weight_order.py
  "rows-live", codegen/model_c.py conv_2d);
- a bound on a bias's magnitude, its bit length (cortex-m's doubled sums need 2 (bias + sum) in int32:
  kernel_variants.py doubled_ok), and its values at its filter's zero rows (the constant outputs).
A retrained model whose zero rows, those bias values or the biases' bit lengths change has another skeleton
and so another model.c; one whose other values change keeps both.
"""

from __future__ import annotations

import numpy as np


def zero_rows(t) -> tuple:
    """Indices along axis 0 of an integer tensor of at least 2 dimensions whose values are all zero."""
    if t.facts is not None:
        return tuple(int(r) for r in t.facts.get("zero_rows", ()))
    d = t.data
    if d is None or d.ndim < 2 or d.dtype.kind not in "iu" or d.shape[0] == 0:
        return ()
    return tuple(int(r) for r in np.flatnonzero(~d.reshape(d.shape[0], -1).any(axis=1)))


def abs_bound(t, skip=()) -> int | None:
    """An upper bound on |value| of a 1-D integer tensor outside rows skip: 2^b - 1 for b the bit length of the
    largest (a bound, not the value, so that a retrained bias of the same magnitude leaves the skeleton as it
    is); None when it is not known (a skeleton recorded none, or skip is not the rows it recorded values at)."""
    if t.facts is None:
        v = np.abs(np.asarray(t.data).reshape(-1).astype(np.int64))
        if skip:
            v = np.delete(v, list(skip))
        return (1 << int(v.max()).bit_length()) - 1 if v.size else 0
    at, skip = {int(r): int(v) for r, v in t.facts.get("at", {}).items()}, set(skip)
    if "abs_bits" not in t.facts or not skip <= set(at):
        return None
    return max([(1 << int(t.facts["abs_bits"])) - 1] + [(1 << abs(v).bit_length()) - 1 for r, v in at.items()
                                                       if r not in skip])


def value_at(t, row: int) -> int:
    """Element row of a 1-D integer tensor (a skeleton: one of the values it recorded)."""
    if t.facts is None:
        return int(np.asarray(t.data).reshape(-1)[row])
    return int(t.facts["at"][str(row)])


def record(t, at_rows=()) -> dict:
    """The facts a skeleton keeps of constant t (its values present): its zero rows, and for a 1-D integer
    tensor its values at at_rows and its largest |value| elsewhere."""
    out = {}
    rows = zero_rows(t)
    if rows:
        out["zero_rows"] = list(rows)
    d = t.data
    if d is not None and d.ndim == 1 and d.dtype.kind in "iu":
        at = sorted(set(int(r) for r in at_rows))
        if at:
            out["at"] = {str(r): int(d[r]) for r in at}
        out["abs_bits"] = abs_bound(t, at).bit_length()
    return out


__all__ = ["zero_rows", "abs_bound", "value_at", "record"]
