"""plan_request: the one pure planning entry the daemon, the CLI (--no-daemon) and build rules call.

    plan_request(model, options, memo) -> {"plan": <plan JSON>, "cache": {"hits", "misses"}, "plan_ms": float}

model is a .tflite path, .tflite bytes, a zoo name or a Graph. Without fusion
options the plan is ArenaPlan.to_json() (kind "arena"); with optimize or splits it
is fusion.plan_fused(...).to_json(g) (kind "fused"). Every planning problem goes
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

import hashlib
import os
import time

from . import canonical
from .cache import NullMemo
from .errors import UsageError

DEFAULT_OPTIONS = {"align": 16, "time_budget": 2.0, "order_search": True, "inplace": True,
                   # fusion.plan_fused (used when optimize or splits is set)
                   "optimize": None, "max_mac_overhead": None, "ram_limit": None, "splits": None,
                   "input_streamed": False}


def normalize_options(options: dict | None) -> dict:
    """Defaults filled in, types fixed, unknown keys refused: equal requests get equal keys."""
    opts = dict(DEFAULT_OPTIONS)
    for k, v in (options or {}).items():
        if k not in DEFAULT_OPTIONS:
            raise UsageError(f"unknown planning option '{k}' (known: {', '.join(DEFAULT_OPTIONS)})")
        opts[k] = v
    try:
        align, budget = int(opts["align"]), float(opts["time_budget"])
    except (TypeError, ValueError):
        raise UsageError("planning options align and time_budget must be numbers") from None
    if align < 1 or align & (align - 1):
        raise UsageError(f"align {align} must be a power of two")
    if not budget >= 0:
        raise UsageError("time_budget must not be negative")
    splits = opts["splits"]
    if splits is not None and splits != "auto":
        try:
            splits = [[int(x) for x in s] for s in splits]
        except (TypeError, ValueError):
            splits = None
        if not splits or any(len(s) != 3 for s in splits):
            raise UsageError("splits must be 'auto' or a list of [top, bottom, n]")
    try:
        mmo = None if opts["max_mac_overhead"] is None else float(opts["max_mac_overhead"])
        ram = None if opts["ram_limit"] is None else int(opts["ram_limit"])
    except (TypeError, ValueError):
        raise UsageError("max_mac_overhead and ram_limit must be numbers") from None
    return {"align": align, "time_budget": budget, "order_search": bool(opts["order_search"]),
            "inplace": bool(opts["inplace"]), "optimize": opts["optimize"], "max_mac_overhead": mmo,
            "ram_limit": ram, "splits": splits, "input_streamed": bool(opts["input_streamed"])}


def arena_plan_json(g, opts: dict) -> dict:
    """The whole-graph arena plan."""
    from .arena import plan_arena

    return plan_arena(g, align=opts["align"], time_budget=opts["time_budget"], order_search=opts["order_search"],
                      inplace=opts["inplace"]).to_json()


def fused_plan_json(g, opts: dict, memo) -> dict:
    """Operator splitting / fusion; its per-block problems go through the same memo."""
    from .fusion import plan_fused

    splits = opts["splits"] if opts["splits"] in (None, "auto") else [tuple(s) for s in opts["splits"]]
    return plan_fused(g, optimize=opts["optimize"], max_mac_overhead=opts["max_mac_overhead"],
                      ram_limit=opts["ram_limit"], splits=splits, input_streamed=opts["input_streamed"],
                      align=opts["align"], time_budget=opts["time_budget"], memo=memo).to_json(g)


class _Model:
    """A model given as path, bytes, zoo name or Graph; parsed only when a planner needs it."""

    def __init__(self, model):
        self._graph = None
        self.data = None
        self.zoo = None
        self.name = "model"
        self.source = "<bytes>"
        if isinstance(model, (bytes, bytearray, memoryview)):
            self.data = bytes(model)
        elif isinstance(model, str):
            if os.path.exists(model) or model.endswith(".tflite") or os.sep in model:
                from .tflite_reader import read_model_file

                self.data = read_model_file(model)
                self.source = model
                self.name = os.path.splitext(os.path.basename(model))[0]
            else:
                from . import zoo

                if model not in zoo.names():
                    raise UsageError(f"'{model}' is neither a model file nor a zoo name "
                                     f"(zoo: {', '.join(zoo.names())})")
                self.zoo = model
        else:
            self._graph = model

    def graph(self):
        if self._graph is None and self.zoo is not None:
            from . import zoo

            self._graph = zoo.build(self.zoo)
        if self._graph is None:
            from . import tflite_reader

            self._graph = tflite_reader.parse(self.data, name=self.name, source=self.source)
        return self._graph

    def digest(self, memo) -> str:
        """Canonical graph digest; for bytes and zoo names via the uncounted "model" index."""
        if self.zoo is not None:
            key = canonical.plan_key("zoo", canonical.zoo_version(), {"name": self.zoo})
        elif self.data is not None:
            key = canonical.plan_key("model", hashlib.sha256(self.data).hexdigest())
        else:
            return canonical.graph_digest(self.graph())
        return memo.get_or_compute("model", key, lambda: canonical.graph_digest(self.graph()), count=False)


def plan_request(model, options: dict | None = None, memo=None) -> dict:
    """Plan one model. Pure: the result depends only on the model's structure and the options."""
    t0 = time.perf_counter()
    memo = memo if memo is not None else NullMemo()
    opts = normalize_options(options)
    m = _Model(model)
    gd = m.digest(memo)
    if opts["optimize"] is None and opts["splits"] is None:
        plan = memo.get_or_compute("arena", canonical.plan_key("arena", gd, opts),
                                   lambda: arena_plan_json(m.graph(), opts))
    else:
        plan = memo.get_or_compute("fused", canonical.plan_key("fused", gd, opts),
                                   lambda: fused_plan_json(m.graph(), opts, memo))
    return {"plan": plan, "cache": memo.stats.as_dict(), "plan_ms": round((time.perf_counter() - t0) * 1e3, 3)}
