"""OR-Tools' CP-SAT solver, loaded on first use.

Importing `ortools.sat.python.cp_model` loads pandas (about 0.4 s of a command's start-up), which a
plan that needs no exact solve (most layer-by-layer plans, a warm daemon answer, `inspect`) never
pays: the exact packer, the regional arena spreading and the weight placement call load() when they
build a model.
"""

from __future__ import annotations


def load():
    """The cp_model module."""
    from ortools.sat.python import cp_model  # (the optional heavy dependency: see the module docstring)

    return cp_model
