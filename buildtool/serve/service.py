"""plan_request: the one pure planning entry the daemon, the CLI (--no-daemon) and build rules call.

    plan_request(model, options, memo) -> {"plan": <plan JSON>, "cache": {"hits", "misses"}, "plan_ms": float}

model is a .tflite path, .tflite bytes, a zoo name or a Graph; options a map in
PlanOptions' vocabulary. The plan is pipeline.plan_memory(...).to_json(g) (cache kind
"arena" or "fused"). Every planning problem goes
through memo.get_or_compute with a content key (canonical.py), so
the same request gives the same bytes whether it was solved now, by a daemon,
or read back from the disk cache. Planners that solve many subgraph problems
(operator splitting, fusion) receive the same memo and key each problem with
canonical.subgraph_key, so after an edit to one layer only regions touching it
are solved again.

A file's bytes are mapped to its canonical graph digest through an uncounted
"model" index entry, so a warm request neither parses the model nor plans.
"""

from __future__ import annotations

import time

from ..options import PlanOptions


def normalize_options(options) -> dict:
    """The canonical form of a request's options (PlanOptions.canonical): defaults filled in, types
    and ranges checked, unknown keys refused, so equal requests get equal keys."""
    return PlanOptions.from_map(options).canonical()


class _Model:
    """A model given as path, bytes, zoo name or Graph; parsed only when a planner needs it."""

    def __init__(self, model, source: str | None = None):
        from .. import pipeline

        self._graph, self.src = None, None
        if isinstance(model, (bytes, bytearray, memoryview)):
            self.src = pipeline.Source("model", "<bytes>", bytes(model))
        elif isinstance(model, str):
            self.src = pipeline.locate(model, source)  # messages name the file as the user typed it
        else:
            self._graph = model

    def graph(self):
        if self._graph is None:
            from .. import pipeline

            self._graph = pipeline.parse(self.src)
        return self._graph

    def digest(self, memo) -> str:
        """Canonical graph digest; for bytes and zoo names via the uncounted "model" index."""
        from ..plan import canonical

        if self.src is None:
            return canonical.graph_digest(self.graph())
        kind, part = self.src.digest_key()
        key = (canonical.plan_key("zoo", canonical.zoo_version(), {"name": part}) if kind == "zoo"
               else canonical.plan_key("model", part))
        return memo.get_or_compute("model", key, lambda: canonical.graph_digest(self.graph()), count=False)


def plan_request(model, options=None, memo=None, source: str | None = None) -> dict:
    """Plan one model. Pure: the result depends only on the model's structure and the options.

    source: how error messages name a model path (the daemon gets an absolute path and the
    path as the user typed it, so its errors read exactly like in-process ones)."""
    from ..plan import canonical
    from .cache import NullMemo

    t0 = time.perf_counter()
    memo = memo if memo is not None else NullMemo()
    opts = PlanOptions.from_map(options)
    m = _Model(model, source)
    gd = m.digest(memo)
    kind = "fused" if opts.fused else "arena"

    def compute():
        from ..pipeline import plan_memory

        g = m.graph()
        return plan_memory(g, opts, memo).to_json(g)

    plan = memo.get_or_compute(kind, canonical.plan_key(kind, gd, opts.canonical()), compute)
    return {"plan": plan, "cache": memo.stats.as_dict(), "plan_ms": round((time.perf_counter() - t0) * 1e3, 3)}
