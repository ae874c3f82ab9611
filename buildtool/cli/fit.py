"""`buildtool fit MODEL [--boards A,B]`: one row per installed board (or per board named): does the model fit,
with which plan, what it uses of each memory, the estimated latency (pipeline/fit.py makes the rows; this module only
prints them). Exit status 0 when it fits at least one board that declares its memory sizes, else 1."""

from __future__ import annotations

import json

from .. import targets
from ..pipeline.fit import fit_table
from ..progress import Progress
from ..steps.models import model_name, read_model
from ..units import size
from .common import MODEL_HELP, add_plan_options, make_plan, one_line_usage_errors, plan_options

SHORT = {"ram": "RAM", "weights": "weights", "flash": "flash"}
HEAD = ("board", "fits", "plan", "RAM", "flash", "other memories", "latency (estimate)")


def _used(m) -> str:
    """used / size, with the measured code it counts ("(code N)"); "+ code" where the code is not counted
    (not measured, in flash that holds it without a code reserve)."""
    code = " + code" if m.memory == "FLASH" and m.holds_code and not m.code_reserve and not m.measured else ""
    of = f"{size(m.used)}{code} / {size(m.size)}" if m.size else f"{size(m.used)}{code} (no limit)"
    return of + (f" (code {size(m.code)})" if m.measured else "")


def _plan(r) -> str:
    if r.fits:
        return r.plan
    return "does not fit: " + ", ".join(f"{SHORT[what]} {size(n)} short" for what, n in sorted(r.use.short.items()))


def _latency(r) -> str:
    """low-high ms or s at the board's clock; cycles when the board has no clock; n/a without a cycle model."""
    s = r.seconds
    if s is None:
        if r.cycles is None or not r.fits:
            return "n/a"
        return f"{r.cycles[0] / 1e6:,.1f}-{r.cycles[1] / 1e6:,.1f} M cycles"
    unit, k = ("s", 1) if s[0] >= 1 else ("ms", 1e3)
    digits = 0 if s[0] * k >= 10 else 1
    return (f"{s[0] * k:,.{digits}f}-{s[1] * k:,.{digits}f} {unit} @ {r.clock_hz / 1e6:g} MHz"
            + (", memory model" if r.memory_model else ""))  # its flash and caches (docs/memory-model.md)


def cells(r) -> tuple:
    by = {m.memory: m for m in r.use.memories}
    other = [m for m in r.use.memories if m.memory not in ("RAM", "FLASH")]
    return (r.board, "yes" if r.fits else "no", _plan(r), _used(by["RAM"]) if "RAM" in by else "-",
            _used(by["FLASH"]) if "FLASH" in by else "-",
            ", ".join(f"{m.name} {_used(m)}" for m in other) or "-", _latency(r))


def table(rows: list, flash_wait_states: int = 0) -> list:
    """The rows as aligned text lines, the header first (its latency with the flash wait states)."""
    head = HEAD[:-1] + (f"latency (estimate, {flash_wait_states} flash wait states)",) if flash_wait_states else HEAD
    body = [head] + [cells(r) for r in rows]
    widths = [max(len(line[k]) for line in body) for k in range(len(HEAD))]
    return ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in body]


def cmd_fit(a) -> int:
    model = read_model(a.model)
    options = plan_options(a)
    name = model_name(a.model)
    boards = sorted({targets.get(b.strip()).name for b in a.boards.split(",") if b.strip()}) if a.boards else None
    with Progress(f"fitting {name} to {'every board' if boards is None else ', '.join(boards)}"):
        rows = fit_table(model.graph, options, planner=lambda graph, o: make_plan(graph, a, o), boards=boards,
                         flash_wait_states=a.flash_wait_states, model=model)
    fits_any = any(r.fits and r.limited for r in rows)
    if a.json:
        print(json.dumps({"model": name, "options": options.describe(), "fits_any": fits_any,
                          "boards": [r.to_json() for r in rows]}, indent=1))
    else:
        for line in table(rows, a.flash_wait_states):
            print(line)
    if not fits_any:
        if not a.json:
            print(f"{name} fits no board that declares its memory sizes")
        return 1
    return 0


def add_fit(sub) -> None:
    s = sub.add_parser("fit")
    s.add_argument("model", help=MODEL_HELP)
    s.add_argument("--json", action="store_true", help="the table as JSON")
    s.add_argument("--boards", metavar="A,B", default=None,
                   help="only these boards (comma-separated; `buildtool boards` lists them), not every installed one")
    s.add_argument("--flash-wait-states", type=int, default=0, metavar="N",
                   help="the latency with N wait states on every read of code and weights from the board's flash "
                        "(the cortex-m4 boards; docs/fit.md)")
    add_plan_options(s)
    one_line_usage_errors(s, "fit")
    s.set_defaults(fn=cmd_fit)
