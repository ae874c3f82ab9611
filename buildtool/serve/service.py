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
Without a memo (--no-daemon, no daemon to ask) nothing is looked up: no digest or
key is computed and the planners run unmemoised, as steps.plan runs them (the same bytes).
"""

from __future__ import annotations

import time

from ..options import PlanOptions
from ..plan import canonical
from ..steps.models import Source, locate, parse
from ..plan.planner import plan_memory
from .cache import NullMemo
from .daemon import protocol
from .daemon.client import DaemonClient, daemon_wanted, warn_once


def normalize_options(options) -> dict:
    """The canonical form of a request's options (PlanOptions.canonical): defaults filled in, types
    and ranges checked, unknown keys refused, so equal requests get equal keys."""
    return PlanOptions.from_map(options).canonical()


class _Model:
    """A model given as path, bytes, zoo name or Graph; parsed only when a planner needs it."""

    def __init__(self, model, source: str | None = None):
        self._graph, self.src = None, None
        if isinstance(model, (bytes, bytearray, memoryview)):
            self.src = Source("model", "<bytes>", bytes(model))
        elif isinstance(model, str):
            self.src = locate(model, source)  # messages name the file as the user typed it
        else:
            self._graph = model

    def graph(self):
        if self._graph is None:
            self._graph = parse(self.src)
        return self._graph

    def digest(self, memo) -> str:
        """Canonical graph digest; for bytes and zoo names via the uncounted "model" index."""
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
    t0 = time.perf_counter()
    opts = PlanOptions.from_map(options)
    m = _Model(model, source)
    kind = "fused" if opts.fused else "arena"
    if memo is None:  # nothing to look up (--no-daemon, no daemon): no digest or keys, the planners unmemoised
        memo = NullMemo()
        plan = memo.get_or_compute(kind, kind, lambda: plan_memory(m.graph(), opts).to_json(m.graph()))
        return {"plan": plan, "cache": memo.stats.as_dict(), "plan_ms": round((time.perf_counter() - t0) * 1e3, 3)}
    gd = m.digest(memo)

    def compute():
        g = m.graph()
        return plan_memory(g, opts, memo).to_json(g)

    plan = memo.get_or_compute(kind, canonical.plan_key(kind, gd, opts.canonical()), compute)
    return {"plan": plan, "cache": memo.stats.as_dict(), "plan_ms": round((time.perf_counter() - t0) * 1e3, 3)}


def plan_json(model, options=None, no_daemon: bool = False) -> dict:
    """The plan's JSON through the planner daemon and its cache (started on demand), or in this process
    with no_daemon / BUILDTOOL_NO_DAEMON=1 / no daemon available (one warning line): byte-identical
    either way. model: a path, a zoo name, .tflite bytes or a Graph. Returns plan_request's map and
    "via_daemon"."""
    options = PlanOptions.from_map(options).to_map()
    use = daemon_wanted(no_daemon)
    r = None
    if use:
        try:
            with DaemonClient() as c:
                r = c.plan(model, options)
        except protocol.DaemonUnavailable as e:
            warn_once(f"{e}; planning in this process")
    if r is None:
        r = plan_request(model, options)
    r["via_daemon"] = use
    return r


def planner(no_daemon: bool = False):
    """The plan step's planner (steps.plan.run): plan_json's plan."""
    return lambda graph, options: plan_json(graph, options, no_daemon)["plan"]
