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

import numbers
import os
import time

from .errors import ModelError, UsageError

DEFAULT_OPTIONS = {"align": 16, "time_budget": 2.0, "order_search": True, "inplace": True,
                   # fusion.plan_fused (used when optimize or splits is set)
                   "optimize": None, "max_mac_overhead": None, "ram_limit": None, "splits": None,
                   "input_streamed": False}


# Allowed ranges of the numeric options: anything outside is refused in one line naming option,
# value and range (an align of 2**40 would plan a 2 TB arena; a NaN or endless time budget never ends).
MAX_ALIGN = 4096
MAX_TIME_BUDGET_S = 3600.0
MAX_MAC_OVERHEAD = 1000.0
DEFAULT_MAX_MAC_OVERHEAD = 1.3  # = fusion.DEFAULT_MAX_MAC_OVERHEAD (not imported: the fast path stays light)
MAX_RAM_LIMIT = 1 << 32
MAX_SPLITS, MAX_SPLIT_OPS, MAX_SPLIT_N = 256, 1 << 16, 1024


def _refuse(name: str, value, rule: str):
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."  # a 400-digit value stays one short line
    raise UsageError(f"planning option {name}={shown} is invalid: it must be {rule}")


def _int(name: str, v, lo: int, hi: int, rule: str | None = None, shown=None) -> int:
    """An integer (not a bool, not a string or float) in [lo, hi]."""
    rule = rule or f"an integer from {lo} to {hi}"
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not lo <= v <= hi:
        _refuse(name, v if shown is None else shown, rule)
    return int(v)


def _real(name: str, v, lo: float, hi: float, rule: str | None = None) -> float:
    """A finite number (int or float, not a bool or string) in [lo, hi]."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not lo <= v <= hi:  # NaN fails too
        _refuse(name, v, rule or f"a number from {lo:g} to {hi:g}")
    return float(v)


def _bool(name: str, v) -> bool:
    if not isinstance(v, bool):
        _refuse(name, v, "true or false")
    return v


def normalize_options(options: dict | None) -> dict:
    """Defaults filled in, types and ranges checked, unknown keys refused: equal requests get equal keys.

    Strict at the boundary: "16" is not an align, True is not a number, NaN is not a time budget."""
    if options is not None and not isinstance(options, dict):
        raise UsageError(f"planning options must be a map, not {type(options).__name__}")
    opts = dict(DEFAULT_OPTIONS)
    for k, v in (options or {}).items():
        if k not in DEFAULT_OPTIONS:
            raise UsageError(f"unknown planning option '{k}' (known: {', '.join(DEFAULT_OPTIONS)})")
        opts[k] = v
    align = _int("align", opts["align"], 1, MAX_ALIGN, f"a power of two from 1 to {MAX_ALIGN}")
    if align & (align - 1):
        _refuse("align", align, f"a power of two from 1 to {MAX_ALIGN}")
    budget = _real("time_budget", opts["time_budget"], 0, MAX_TIME_BUDGET_S)
    if opts["optimize"] not in (None, "ram", "macs"):
        _refuse("optimize", opts["optimize"], "'ram', 'macs' or none")
    splits = opts["splits"]
    if splits is not None and splits != "auto":
        rule = (f"'auto' or a list of at most {MAX_SPLITS} [top, bottom, n] with 0 <= top <= bottom < "
                f"{MAX_SPLIT_OPS} and 1 <= n <= {MAX_SPLIT_N}")
        if not isinstance(splits, (list, tuple)) or not 0 < len(splits) <= MAX_SPLITS:
            _refuse("splits", splits, rule)
        for sp in splits:
            if not isinstance(sp, (list, tuple)) or len(sp) != 3:
                _refuse("splits", splits, rule)
            top, bottom = (_int("splits", x, 0, MAX_SPLIT_OPS - 1, rule, splits) for x in sp[:2])
            _int("splits", sp[2], 1, MAX_SPLIT_N, rule, splits)
            if bottom < top:
                _refuse("splits", splits, rule)
        splits = [[int(x) for x in sp] for sp in splits]
    mmo = opts["max_mac_overhead"]
    if mmo is None and (opts["optimize"] == "ram" or (opts["optimize"] is None and splits == "auto")):
        mmo = DEFAULT_MAX_MAC_OVERHEAD  # the cap --optimize ram applies unless told: one key for both spellings
    elif mmo is not None and mmo != "none":
        mmo = _real("max_mac_overhead", mmo, 1, MAX_MAC_OVERHEAD, f"a number from 1 to {MAX_MAC_OVERHEAD:g} "
                    f"(default {DEFAULT_MAX_MAC_OVERHEAD:g}) or 'none' (no cap)")
    ram = None if opts["ram_limit"] is None else _int("ram_limit", opts["ram_limit"], 1, MAX_RAM_LIMIT,
                                                      f"a byte count from 1 to {MAX_RAM_LIMIT} (4 GiB)")
    return {"align": align, "time_budget": budget, "order_search": _bool("order_search", opts["order_search"]),
            "inplace": _bool("inplace", opts["inplace"]), "optimize": opts["optimize"], "max_mac_overhead": mmo,
            "ram_limit": ram, "splits": splits, "input_streamed": _bool("input_streamed", opts["input_streamed"])}


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

    def __init__(self, model, source: str | None = None):
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

                shown = source or model  # messages name the file as the user typed it
                self.data = read_model_file(model, shown)
                self.source = shown
                self.name = os.path.splitext(os.path.basename(shown))[0]
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
        import hashlib

        from . import canonical

        if self.zoo is not None:
            key = canonical.plan_key("zoo", canonical.zoo_version(), {"name": self.zoo})
        elif self.data is not None:
            key = canonical.plan_key("model", hashlib.sha256(self.data).hexdigest())
        else:
            return canonical.graph_digest(self.graph())
        return memo.get_or_compute("model", key, lambda: canonical.graph_digest(self.graph()), count=False)


def plan_request(model, options: dict | None = None, memo=None, source: str | None = None) -> dict:
    """Plan one model. Pure: the result depends only on the model's structure and the options.

    source: how error messages name a model path (the daemon gets an absolute path and the
    path as the user typed it, so its errors read exactly like in-process ones)."""
    from . import canonical
    from .cache import NullMemo

    t0 = time.perf_counter()
    memo = memo if memo is not None else NullMemo()
    opts = normalize_options(options)
    m = _Model(model, source)
    gd = m.digest(memo)
    if opts["optimize"] is None and opts["splits"] is None:
        plan = memo.get_or_compute("arena", canonical.plan_key("arena", gd, opts),
                                   lambda: arena_plan_json(m.graph(), opts))
    else:
        plan = memo.get_or_compute("fused", canonical.plan_key("fused", gd, opts),
                                   lambda: fused_plan_json(m.graph(), opts, memo))
    return {"plan": plan, "cache": memo.stats.as_dict(), "plan_ms": round((time.perf_counter() - t0) * 1e3, 3)}
