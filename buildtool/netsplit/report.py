"""The table of a split search: one row per step (and per baseline), as text and as JSON."""

from __future__ import annotations

COLUMNS = ("step", "K", "factors", "accuracy %", "drop", "params", "MACs", "plain arena B", "optimised arena B",
           "branch-order arena B", "layer-order arena B", "search")


def _num(v) -> str:
    return "n/a" if v is None else f"{v:,}"


def row(step, base_accuracy: float) -> list:
    """The table cells of one step."""
    ram = step.ram or {}
    acc = "-" if step.accuracy is None else f"{step.accuracy:.2f}"
    drop = "-" if step.accuracy is None else f"{base_accuracy - step.accuracy:+.2f}"
    factors = ",".join(map(str, step.spec.factors))
    return [step.label, "" if step.k is None else str(step.k), factors, acc, drop, f"{step.params:,}",
            f"{step.macs:,}", _num(ram.get("plain")), _num(ram.get("optimized")), _num(ram.get("branch")),
            _num(ram.get("layer")), _verdict(step)]


def _verdict(step) -> str:
    """kept / stop (and why) for a search step; empty for the baseline, the baselines and the result."""
    if step.block is None:
        return ""
    return ("kept" if step.kept else "stop") + (f" ({step.note})" if step.note else "")


def table(steps, title: str = "") -> str:
    """A Markdown table of the steps (the first is the baseline)."""
    base = steps[0].accuracy
    rows = [row(s, base) for s in steps]
    lines = ([f"### {title}", ""] if title else []) + ["| " + " | ".join(COLUMNS) + " |",
                                                       "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def to_json(steps) -> list:
    """The steps as plain data."""
    return [{"step": s.label, "block": s.block, "k": s.k, "factors": list(s.spec.factors), "accuracy": s.accuracy,
             "kept": s.kept, "note": s.note, "params": s.params, "macs": s.macs, "ram": s.ram} for s in steps]
