"""PlanOptions: the one vocabulary of planning options, for every path that plans.

    PlanOptions.from_map({"optimize": "ram"})           Python callers and the daemon's message
    PlanOptions.from_strings({"optimize": "ram"})       key=value build variables (SCons, CMake, Bazel)
    PlanOptions.from_args(argparse_namespace)           the CLI's flags

Each builds the same frozen, validated value; `canonical()` is its one form for cache keys and
seals, `to_map()` the non-default entries (what the daemon is sent). A bad value is refused in
one line naming the option, the value and what is allowed. Pure Python, no numpy: the warm
daemon path imports this module.

| option | meaning |
|---|---|
| align | buffer alignment in bytes, a power of two (16) |
| time_budget | seconds the exact solver may spend (2; deterministic work, not wall time) |
| order_search | search the operator order (layer-by-layer plans) |
| inplace | let element-wise outputs overwrite their input (layer-by-layer plans) |
| inplace_pointwise | let a 1x1 convolution write its output over its own dying input (layer-by-layer plans; off) |
| optimize | ram: least peak RAM under max_mac_overhead; macs: least MACs under ram_limit |
| max_mac_overhead | MACs <= F x the unfused network (default 1.3), or none |
| ram_limit | peak RAM limit in bytes: optimize=macs plans the least MACs under it; every other fused plan meets it or is refused |
| splits | 'auto', or operator ranges [top, bottom, n] computed in n row slices |
| input_streamed | the network input is pulled a row band at a time, never held whole |
| band_input | a fused plan may hold the input in row bands freed as the first block passes |
| optimize_code | the code step's choice of kernel variants (codegen/code_budget.py): size, balanced (default) or speed |
| code_budget | bytes the layers' kernel code may take (the code step refuses a model whose smallest code is over it) |
| staging_ram | bytes of spare SRAM a part's firmware may copy weights into (firmware/staging.py; default: all it has spare, 0: none) |

optimize_code, code_budget and staging_ram are the code step's: canonical() (plan cache keys and seals) leaves them out,
code() is their form for the code step's seal; to_map() carries every option.

Any of optimize, splits, input_streamed makes the plan a fused one (operator splitting /
patch-based fusion); input_streamed alone means optimize=ram. Without them the plan is the
layer-by-layer arena plan, and the fused-only options must not be given.
"""

from __future__ import annotations

import dataclasses
import numbers
import re

from .errors import UsageError

MAX_ALIGN = 4096
MAX_TIME_BUDGET_S = 3600.0
MAX_MAC_OVERHEAD = 1000.0
DEFAULT_MAX_MAC_OVERHEAD = 1.3  # --optimize ram's MAC cap unless told (fusion reads it from here)
NO_CAP = "none"
MAX_RAM_LIMIT = 1 << 32
MAX_SPLITS, MAX_SPLIT_OPS, MAX_SPLIT_N = 256, 1 << 16, 1024
FUSED_ONLY = ("max_mac_overhead", "ram_limit", "band_input")
CODE_ONLY = ("optimize_code", "code_budget", "staging_ram")  # the code step's options (not the planner's)
CODE_PRESETS = ("size", "balanced", "speed")  # codegen/code_budget.py
MAX_CODE_BUDGET = 1 << 32
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


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


_ALIGN_RULE = f"a power of two from 1 to {MAX_ALIGN}"
_MMO_RULE = (f"a number from 1 to {MAX_MAC_OVERHEAD:g} (default {DEFAULT_MAX_MAC_OVERHEAD:g}) "
             f"or '{NO_CAP}' (no cap)")
_RAM_RULE = f"a byte count from 1 to {MAX_RAM_LIMIT} (4 GiB)"
_SPLITS_RULE = (f"'auto' or a list of at most {MAX_SPLITS} [top, bottom, n] with 0 <= top <= bottom < "
                f"{MAX_SPLIT_OPS} and 1 <= n <= {MAX_SPLIT_N}")


def _splits(v):
    if v is None or v == "auto":
        return v
    if not isinstance(v, (list, tuple)) or not 0 < len(v) <= MAX_SPLITS:
        _refuse("splits", v, _SPLITS_RULE)
    out = []
    for sp in v:
        if not isinstance(sp, (list, tuple)) or len(sp) != 3:
            _refuse("splits", v, _SPLITS_RULE)
        top, bottom = (_int("splits", x, 0, MAX_SPLIT_OPS - 1, _SPLITS_RULE, v) for x in sp[:2])
        n = _int("splits", sp[2], 1, MAX_SPLIT_N, _SPLITS_RULE, v)
        if bottom < top:
            _refuse("splits", v, _SPLITS_RULE)
        out.append((top, bottom, n))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """Validated planning options (construct through from_map / from_strings / from_args)."""

    align: int = 16
    time_budget: float = 2.0
    order_search: bool = True
    inplace: bool = True
    inplace_pointwise: bool = False  # plan/arena/liveness.pointwise_shift; canonical() names it only when on
    optimize: str | None = None
    max_mac_overhead: float | str | None = None  # None: the default cap (relaxed when nothing is within it)
    ram_limit: int | None = None
    splits: tuple | str | None = None  # "auto" or ((top, bottom, n), ...)
    input_streamed: bool = False
    band_input: bool = True
    optimize_code: str = "balanced"
    code_budget: int | None = None
    staging_ram: int | None = None  # None: the part's spare SRAM (firmware/staging.py spare_ram)

    def __post_init__(self):
        align = _int("align", self.align, 1, MAX_ALIGN, _ALIGN_RULE)
        if align & (align - 1):
            _refuse("align", align, _ALIGN_RULE)
        if self.optimize not in (None, "ram", "macs"):
            _refuse("optimize", self.optimize, "'ram', 'macs' or none")
        mmo = self.max_mac_overhead
        if mmo is not None and mmo != NO_CAP:
            mmo = _real("max_mac_overhead", mmo, 1, MAX_MAC_OVERHEAD, _MMO_RULE)
        ram = None if self.ram_limit is None else _int("ram_limit", self.ram_limit, 1, MAX_RAM_LIMIT, _RAM_RULE)
        fix = {"align": align, "time_budget": _real("time_budget", self.time_budget, 0, MAX_TIME_BUDGET_S),
               "order_search": _bool("order_search", self.order_search), "inplace": _bool("inplace", self.inplace),
               "inplace_pointwise": _bool("inplace_pointwise", self.inplace_pointwise),
               "max_mac_overhead": mmo, "ram_limit": ram, "splits": _splits(self.splits),
               "input_streamed": _bool("input_streamed", self.input_streamed),
               "band_input": _bool("band_input", self.band_input),
               "code_budget": None if self.code_budget is None else _int(
                   "code_budget", self.code_budget, 1, MAX_CODE_BUDGET, f"a byte count from 1 to {MAX_CODE_BUDGET} (4 GiB)"),
               "staging_ram": None if self.staging_ram is None else _int(
                   "staging_ram", self.staging_ram, 0, MAX_RAM_LIMIT, f"a byte count from 0 to {MAX_RAM_LIMIT} (4 GiB)")}
        if self.optimize_code not in CODE_PRESETS:
            _refuse("optimize_code", self.optimize_code, "'size', 'balanced' or 'speed'")
        for k, v in fix.items():
            object.__setattr__(self, k, v)
        if self.splits is not None and self.optimize is not None:
            raise UsageError("planning option splits cannot be combined with optimize; give one of them")
        if self.optimize is None and self.splits is None and self.input_streamed:
            object.__setattr__(self, "optimize", "ram")  # streaming alone: the least-RAM fused plan
        if not self.fused:
            given = [k for k in FUSED_ONLY if getattr(self, k) != PlanOptions.__dataclass_fields__[k].default]
            if given:
                raise UsageError(f"planning option {given[0]} needs optimize=ram|macs (or splits / input_streamed)")
        if self.optimize == "macs" and self.ram_limit is None:
            raise UsageError("planning option optimize=macs needs ram_limit")

    @property
    def fused(self) -> bool:
        """Operator splitting / fusion (else the layer-by-layer arena plan)."""
        return self.optimize is not None or self.splits is not None

    # -- builders ------------------------------------------------------------------------
    @classmethod
    def from_map(cls, options) -> "PlanOptions":
        """From a map of typed values (Python callers, the daemon's message, JSON): strict types,
        unknown keys refused, splits as lists or tuples."""
        if isinstance(options, PlanOptions):
            return options
        if options is not None and not isinstance(options, dict):
            raise UsageError(f"planning options must be a map, not {type(options).__name__}")
        known = [f.name for f in dataclasses.fields(cls)]
        for k in options or {}:
            if k not in known:
                raise UsageError(f"unknown planning option '{k}' (known: {', '.join(known)})")
        return cls(**(options or {}))

    @classmethod
    def from_strings(cls, given: dict) -> "PlanOptions":
        """From key=value strings (build variables): align=16 optimize=ram max_mac_overhead=none
        ram_limit=64KiB splits=auto|TOP:BOTTOM:N[,TOP:BOTTOM:N] input_streamed=1 band_input=0."""
        known = [f.name for f in dataclasses.fields(cls)]
        out = {}
        for k, v in given.items():
            if k not in known:
                raise UsageError(f"unknown planning option '{k}' (known: {', '.join(known)})")
            out[k] = _from_string(k, str(v).strip())
        return cls(**out)

    @classmethod
    def from_args(cls, a) -> "PlanOptions":
        """From the CLI's parsed flags (add_arguments)."""
        splits = None
        if a.split:
            if "auto" in a.split:
                if len(a.split) > 1:
                    raise UsageError("--split auto cannot be combined with explicit regions")
                splits = "auto"
            else:
                splits = tuple(parse_split(x) for x in a.split)
        if (a.max_mac_overhead is not None or a.ram_limit) and not (a.optimize or a.split or a.input_streamed):
            raise UsageError("--max-mac-overhead and --ram-limit need --optimize ram|macs")
        try:
            return cls._from_flags(a, splits)
        except UsageError as e:
            raise UsageError(_as_flags(str(e))) from None

    @classmethod
    def _from_flags(cls, a, splits) -> "PlanOptions":
        return cls(align=a.align, time_budget=a.time_budget, order_search=not a.no_order_search,
                   inplace=not a.no_inplace, inplace_pointwise=bool(getattr(a, "inplace_pointwise", False)),
                   optimize=a.optimize, max_mac_overhead=a.max_mac_overhead,
                   ram_limit=parse_bytes(a.ram_limit) if a.ram_limit else None, splits=splits,
                   input_streamed=a.input_streamed, band_input=not getattr(a, "no_band_input", False),
                   optimize_code=getattr(a, "optimize_code", None) or "balanced",
                   code_budget=parse_bytes(a.code_budget) if getattr(a, "code_budget", None) else None,
                   staging_ram=parse_bytes(a.staging_ram) if getattr(a, "staging_ram", None) else None)

    # -- forms ---------------------------------------------------------------------------
    def canonical(self) -> dict:
        """The one form for cache keys and seals: every option, plain JSON types; options a plan
        kind ignores at their defaults (a fused plan has its own order, an arena plan no bands). inplace_pointwise only
        when on: the keys and seals of every plan made before it existed stay the same."""
        d = {k: v for k, v in dataclasses.asdict(self).items() if k not in CODE_ONLY}
        if not self.inplace_pointwise:
            del d["inplace_pointwise"]
        d["splits"] = self.splits if self.splits in (None, "auto") else [list(s) for s in self.splits]
        if self.fused:
            d["order_search"], d["inplace"] = True, True
        return d

    def code(self) -> dict:
        """The code step's options (CODE_ONLY), every one: its form for the code step's seal."""
        return {k: getattr(self, k) for k in CODE_ONLY}

    def to_map(self) -> dict:
        """The entries that differ from the defaults (what a daemon request carries), the code step's too."""
        base, d = PlanOptions(), {**self.canonical(), **self.code()}
        base = {**base.canonical(), **base.code(), "inplace_pointwise": False}
        return {k: v for k, v in d.items() if v != base[k]}

    def plan_map(self) -> dict:
        """to_map() without the code step's options."""
        return {k: v for k, v in self.to_map().items() if k not in CODE_ONLY}

    def arena_kwargs(self) -> dict:
        """buildtool.plan.arena.planner.plan_arena's keyword arguments."""
        return {"align": self.align, "time_budget": self.time_budget, "order_search": self.order_search,
                "inplace": self.inplace, "inplace_pointwise": self.inplace_pointwise}

    def fused_kwargs(self) -> dict:
        """buildtool.plan.fusion.planner.plan_fused's keyword arguments."""
        return {"optimize": self.optimize, "max_mac_overhead": self.max_mac_overhead, "ram_limit": self.ram_limit,
                "splits": self.splits if self.splits in (None, "auto") else list(self.splits),
                "input_streamed": self.input_streamed, "band_input": self.band_input, "align": self.align,
                "time_budget": self.time_budget}

    def describe(self) -> str:
        """key=value of the non-default options, for messages ('' for the defaults)."""
        return " ".join(f"{k}={_to_string(v)}" for k, v in self.to_map().items())


FLAGS = {"align": "--align", "time_budget": "--time-budget", "order_search": "--no-order-search",
         "inplace": "--no-inplace", "inplace_pointwise": "--inplace-pointwise", "optimize": "--optimize", "max_mac_overhead": "--max-mac-overhead",
         "ram_limit": "--ram-limit", "splits": "--split", "input_streamed": "--input-streamed",
         "band_input": "--no-band-input", "optimize_code": "--optimize-code", "code_budget": "--code-budget",
         "staging_ram": "--staging-ram"}
_NAMED = re.compile(r"(planning option |needs |and |with )(%s)\b=?" % "|".join(FLAGS))


def _as_flags(msg: str) -> str:
    """A refusal as the CLI spells its options: 'planning option ram_limit=...' -> '--ram-limit ...'."""
    return _NAMED.sub(lambda m: ("" if m.group(1).startswith("planning") else m.group(1)) + FLAGS[m.group(2)]
                      + (" " if m.group(0).endswith("=") else ""), msg)


# -- strings ---------------------------------------------------------------------------------
HELP = {
    "align": "buffer alignment in bytes, a power of two",
    "time_budget": "seconds the exact solver may spend",
    "order_search": "search the operator order (1/0)",
    "inplace": "let element-wise outputs overwrite their input (1/0)",
    "inplace_pointwise": "let a 1x1 convolution write its output over its own dying input (1/0; default 0)",
    "optimize": "ram (least peak RAM) or macs (least MACs under ram_limit): a fused plan",
    "max_mac_overhead": "optimize=ram: MACs at most F x the unfused network, or none",
    "ram_limit": "optimize=macs: peak RAM limit, e.g. 65536, 64KiB, 64kB",
    "splits": "auto, or TOP:BOTTOM:N[,TOP:BOTTOM:N] (operators computed in N row slices)",
    "input_streamed": "pull the input a row band at a time, never held whole (1/0)",
    "band_input": "fused plans may hold the input in row bands (1/0)",
    "optimize_code": "kernel code per layer: size, balanced (default) or speed",
    "code_budget": "bytes the layers' kernel code may take, e.g. 65536, 64KiB (default: none)",
    "staging_ram": "bytes of spare SRAM the firmware may copy weights into, e.g. 0, 64KiB (default: all it has)",
}


def defaults_as_strings() -> dict:
    """Each option's default as a build variable spells it ("" for none: the planner's default)."""
    return {f.name: "" if f.default is None else _to_string(f.default) for f in dataclasses.fields(PlanOptions)}


def _to_string(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return ",".join(":".join(str(x) for x in sp) for sp in v)
    return str(v)


def _from_string(k: str, v: str):
    if k in ("align",):
        return int(v) if re.fullmatch(r"[+-]?\d{1,12}", v) else v
    if k == "time_budget":
        try:
            return float(v)
        except ValueError:
            return v
    if k in ("order_search", "inplace", "inplace_pointwise", "input_streamed", "band_input"):
        return v.lower() in _TRUE if v.lower() in _TRUE + _FALSE else v
    if k == "optimize":
        return None if v.lower() in ("", "none") else v
    if k == "max_mac_overhead":
        if v.lower() in ("", "default"):
            return None
        if v.lower() == NO_CAP:
            return NO_CAP
        try:
            return float(v)
        except ValueError:
            return v
    if k in ("ram_limit", "code_budget"):
        return None if v.lower() in ("", "none") else parse_bytes(v, k)
    if k == "staging_ram":
        return None if v.lower() in ("", "none") else parse_bytes(v, k)
    if k == "optimize_code":
        return "balanced" if v == "" else v
    if k == "splits":
        if v.lower() in ("", "none"):
            return None
        if v == "auto":
            return "auto"
        return tuple(parse_split(x, "splits") for x in v.split(","))
    return v


_SPLIT = re.compile(r"^\s*(\d+):(\d+):(\d+)\s*$")


def parse_split(spec: str, flag: str = "--split") -> tuple:
    """'TOP:BOTTOM:N' -> (top, bottom, n)."""
    m = _SPLIT.match(spec.strip())
    shown = spec if len(spec) <= 40 else spec[:37] + "..."
    if not m:
        raise UsageError(f"{flag} '{shown}' must be TOP:BOTTOM:N (operator indices and a slice count) or 'auto'")
    if any(len(x.lstrip("0")) > 9 for x in m.groups()):  # beyond any model (and int() refuses thousands of digits)
        raise UsageError(f"{flag} '{shown}': a number is too large for an operator index or a slice count")
    top, bottom, n = (int(x) for x in m.groups())
    if bottom < top or n < 1:
        raise UsageError(f"{flag} '{shown}': need TOP <= BOTTOM and N >= 1")
    return top, bottom, n


def parse_bytes(text: str, what: str | None = None) -> int:
    """'64KiB', '65536', '64kB' (= 64000), '1MiB' -> bytes."""
    m = re.match(r"^\s*([0-9]+)(?:\.([0-9]+))?\s*(B|KiB|kB|KB|MiB|MB)?\s*$", text, re.ASCII)
    shown = text if len(text) <= 40 else text[:37] + "..."
    pre = f"planning option {what}: " if what else ""
    if not m:
        raise UsageError(f"{pre}'{shown}' is not a size; write e.g. 65536, 64KiB or 64kB")
    whole, frac = m.group(1).lstrip("0"), (m.group(2) or "").rstrip("0")
    if len(whole) > 18:  # beyond any memory (and int() refuses thousands of digits)
        raise UsageError(f"{pre}size '{shown}' is too large; write e.g. 65536, 64KiB or 64kB")
    if len(frac) > 18:
        raise UsageError(f"{pre}size '{shown}' has more than 18 decimals; write e.g. 65536, 64KiB or 64kB")
    mult = {None: 1, "B": 1, "KiB": 1024, "kB": 1000, "KB": 1000, "MiB": 1 << 20, "MB": 1000000}[m.group(3)]
    return int(whole or 0) * mult + int(frac or 0) * mult // 10 ** len(frac)  # exact, rounded down
