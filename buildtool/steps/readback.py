"""A plan read back from plan.json by the code and flash steps: refused in one line unless it is a
sound plan of the model (and, when its seal is there, the file it was made as)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import BuildtoolError, UsageError
from ..options import PlanOptions
from ..plan import canonical
from ..plan.kinds import plan_from_json, problems
from . import seal_of, unsealed
from .skeleton import read_json


def made_from(graph, options) -> dict:
    """What a plan of graph is a function of: the model's structure hash, the options, the planner's version."""
    return {"model": canonical.graph_digest(graph), "options": PlanOptions.from_map(options).canonical(),
            "planner": canonical.planner_version()}


def load_plan(d: dict, graph, source: str | None = None):
    """A plan object from its JSON (either kind). source: the file it was read from, named in the one
    line a malformed plan gets (a hand-edited file, another tool's JSON, a plan of another model)."""
    try:
        return plan_from_json(d, graph)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise UsageError(f"{source or 'the plan'} is not a buildtool plan for this model ({type(e).__name__}); "
                         f"make it again with buildtool gen plan") from None


def plan_problem(path, graph, options=None, need_seal: bool = False) -> tuple:
    """(plan, None) when plan.json matches its seal (need_seal: and has one), was made for graph (with
    these options, when given) by this planner, and passes the independent checker; else (None, why)."""
    why = unsealed(path) or ("its seal is missing" if need_seal and not seal_of(path).exists() else None)
    if why:
        return None, why
    data = Path(path).read_bytes()
    if options is not None and seal_of(path).exists():
        seal, expected = json.loads(seal_of(path).read_text()), made_from(graph, options)
        changed = [k for k in ("model", "options", "planner") if seal.get(k) != json.loads(json.dumps(expected[k]))]
        if changed:
            return None, f"it was planned for another {' / '.join(changed)}"
    try:
        plan = load_plan(json.loads(data), graph)
        err = problems(plan, graph)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, BuildtoolError) as e:
        return None, f"it is not a valid plan ({type(e).__name__}: {e})"
    if err:
        return None, f"it fails the plan checker: {err[0]} ({len(err)} problem(s))"
    return plan, None


def read_plan(path: str, graph):
    """plan.json read back for graph, refused in one line when it is no longer the file its seal was
    made of, not a plan, or not a sound plan of graph (the independent checker)."""
    why = unsealed(path)
    if why:
        raise UsageError(f"{path}: {why}; make it again with buildtool gen plan")
    plan = load_plan(read_json(path), graph, path)
    bad = problems(plan, graph)
    if bad:
        raise UsageError(f"{path} fails the plan checker ({bad[0]}); make it again with buildtool gen plan")
    return plan
