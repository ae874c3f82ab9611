"""Per-operator cost for the run report: MACs per profiled region, the plugin's instruction mixes,
estimated cycles (cycles.py) and the report's per-operator columns."""

from __future__ import annotations

from . import cycles
from ..model.ops import op_macs


def region_macs(g, plan) -> list:
    """MACs per region in the order of plan.manifest_order: an operator's MACs, or those a fused
    block executes (its recomputed rows included)."""
    schedule = getattr(plan, "schedule", None)
    items = schedule.items if schedule is not None else plan.manifest_order(g)[0]
    return [int(it.macs(g)) if hasattr(it, "macs") else op_macs(g, g.operators[it]) for it in items]


def read_mixes(text: str, n: int) -> list:
    """The n regions' instruction mixes [{key: executions}] from the plugin's "mix" lines."""
    out = [{} for _ in range(n)]
    for line in text.splitlines():
        if line.startswith("mix\t"):
            _, region, count, key = line.split("\t", 3)
            out[int(region)][key] = int(count)
    return out


def fold(per_region: list, n: int) -> list:
    """Mixes of n operators invoked several times in a row: summed per operator."""
    out = [{} for _ in range(n)]
    for k, mix in enumerate(per_region):
        for key, c in mix.items():
            out[k % n][key] = out[k % n].get(key, 0) + c
    return out


def annotate(prof: dict, macs, mixes: list, cpu: str) -> None:
    """Add each operator's MACs (from firmware.json), instruction mix and estimated cycles."""
    for k, o in enumerate(prof["ops"]):
        if macs and k < len(macs):
            o["macs"] = macs[k]
        if k < len(mixes):
            o["mix"] = dict(sorted(mixes[k].items()))
            o["cycles_estimate"] = list(cycles.estimate(mixes[k]))
    if mixes:
        prof["cycles_model"] = f"{cpu} TRM timings, zero wait states"


def header(prof: dict) -> list:
    """The line that labels the cycles as an estimate (none without one)."""
    if "cycles_model" not in prof:
        return []
    return [f"  cycles are an ESTIMATE from the instruction mix ({prof['cycles_model']}; low-high: "
            "pipeline refill 1-3, divide 2-12 cycles, loads and stores pipelined or not)"]


def columns(o: dict, unit: str) -> str:
    """The per-MAC and estimated-cycle columns of one operator's report line ('' when unknown)."""
    per = "insns" if unit == "instructions" else unit
    text = f" {o['count'] / o['macs']:7.2f} {per}/MAC" if o.get("macs") else ""
    if "cycles_estimate" in o:
        lo, hi = o["cycles_estimate"]
        text = (text or " " * (13 + len(per))) + f"  est. cycles {lo:,}-{hi:,}"
    return text


def summary(prof: dict) -> list:
    """The operators' total instructions and estimated cycles (none without an estimate)."""
    est = [o["cycles_estimate"] for o in prof["ops"] if "cycles_estimate" in o]
    if not est:
        return []
    return [f"  operators: {sum(o['count'] for o in prof['ops']):,} {prof['unit']}, estimated "
            f"{sum(e[0] for e in est):,}-{sum(e[1] for e in est):,} cycles"]


__all__ = ["region_macs", "read_mixes", "fold", "annotate", "header", "columns", "summary"]
