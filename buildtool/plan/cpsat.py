"""OR-Tools' CP-SAT solver, loaded on first use.

Importing `ortools.sat.python.cp_model` loads pandas (about 0.4 s of a command's start-up), which a
plan that needs no exact solve (most layer-by-layer plans, a warm daemon answer, `inspect`) never
pays: the exact packer, the regional arena spreading and the weight placement call load() when they
build a model.

cp_model needs pandas only for its `*_series` methods (buildtool uses none of them), but imports it
at the top and names `pd.Index` / `pd.Series` in type aliases there: a plan that does need the solver
paid 0.2-0.3 CPU s for pandas (a fifth of `--optimize ram --input-streamed` on mbv2_w035_144). So
load() imports cp_model with a stand-in for pandas when pandas is not loaded yet: during the import
its attributes are placeholder classes (for those aliases), afterwards they are pandas' own, imported
then (the series methods keep working); `import pandas` elsewhere gets the real module throughout.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types

_LOCK = threading.Lock()
_LOADED = None  # cp_model once its import has finished: a thread must not take it from sys.modules half made


class _LatePandas(types.ModuleType):
    """pandas as cp_model sees it: placeholders while cp_model is imported, then the real module."""

    def __init__(self):
        super().__init__("pandas")
        self.__dict__["_importing"] = True

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self.__dict__["_importing"]:
            return type(name, (), {})  # only cp_model's annotations and type aliases read it now
        return getattr(importlib.import_module("pandas"), name)


def load():
    """The cp_model module. Threads may call it at once (SCons -j runs several models' plan and code steps in its
    worker threads; the daemon plans in a thread per request): cp_model is in sys.modules from the moment its
    import starts, so a thread that took it from there got a module without CpModel yet; the others now wait
    for the import to finish."""
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    with _LOCK:
        if _LOADED is not None:
            return _LOADED
        if "pandas" in sys.modules or "ortools.sat.python.cp_model" in sys.modules:
            from ortools.sat.python import cp_model  # (the optional heavy dependency: see the module docstring)

            _LOADED = cp_model
            return cp_model
        late = _LatePandas()
        sys.modules["pandas"] = late
        try:
            # the optional heavy dependency, loaded without pandas (see the module docstring)
            from ortools.sat.python import cp_model
        finally:
            late.__dict__["_importing"] = False
            if sys.modules.get("pandas") is late:
                del sys.modules["pandas"]
        _LOADED = cp_model
        return cp_model
