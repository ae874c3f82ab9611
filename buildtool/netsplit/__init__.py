"""Network-structure splitting (`buildtool netsplit`): K-way split blocks with fusion blocks, the
accuracy-guided search, the naive and shared baselines, and the peak RAM our planner measures for
the int8 models. Needs TensorFlow (the `netsplit` extra); nothing else in buildtool imports it.

    from buildtool.netsplit import run
    r = run("vgg-small", "digits", candidates=(2, 4), threshold=0.5, epochs=2)

`spec`, `formulas`, `search`, `memory` and `report` are pure Python; `transform`, `train`,
`convert`, `data` and `api` import TensorFlow.
"""

from __future__ import annotations

import importlib.util

from ..errors import UsageError

MISSING = "netsplit needs TensorFlow: pip install 'buildtool[netsplit]'"


def require_tensorflow() -> None:
    """One UsageError line (exit 2) when TensorFlow or scikit-learn is not installed."""
    for mod in ("tensorflow", "keras", "sklearn"):
        if importlib.util.find_spec(mod) is None:
            raise UsageError(MISSING)


def run(*args, **kw):
    """The split search: see api.run."""
    require_tensorflow()
    from .api import run as _run  # (TensorFlow: only when netsplit runs)

    return _run(*args, **kw)
