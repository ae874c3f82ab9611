"""Per-operator cost for the run report: MACs per profiled region, the plugin's instruction mixes,
estimated cycles (cycles.py) and the report's per-operator columns; and, with no firmware run, a
plan's cycles estimated from its MACs (`static_cycles`)."""

from __future__ import annotations

from . import cycles, memory_model
from ..model.ops import op_macs
from ..plan import weight_order
from ..plan.fusion.instructions import predict_instructions

# Estimated cycles per MAC by layer class, (low, high), for CPUs with a timing table (cycles.py): the
# run report's estimate over whole firmware, docs/kernels.md "Per-operator cost in the run report"
# (`python benchmarks/kernels_m4_cycles.py`, cortex-m kernel set, -O2): per class the lowest low and
# the highest high "est. cycles/MAC" over the models whose layers of that class execute at least
# 100,000 MACs (tiny_cnn_32's 18,432-55,296 MAC layers are call overhead more than arithmetic).
CYCLES_PER_MAC = {
    "cortex-m4": {
        "conv 1x1": (1.32, 1.56),  # dscnn_kws low, mbv2_w035_144 high (resnet_concat_64, mobilenetv2_160_a1 between)
        "conv KxK": (1.22, 1.72),  # resnet_concat_64 low, mobilenetv2_160_a1 high (dscnn_kws, mbv2_w035_144 between)
        "depthwise": (2.63, 3.53),  # dscnn_kws low, mobilenetv2_160_a1 high (mbv2_w035_144 between)
        "FC": (1.31, 1.34),  # mbv2_w035_144 and mobilenetv2_160_a1 (the models with a 100,000-MAC dense layer)
    },
}


# cortex-m33: the Cortex-M4 figures, as cycles.py prices an M33 mix with the M4 table (a proxy: the same kernel
# set, the same instructions); cortex-m7 has no measured figures (its model is a dual-issue range, cycles.py)
CYCLES_PER_MAC["cortex-m33"] = CYCLES_PER_MAC["cortex-m4"]


# Flash accesses per MAC by layer class, (low, high), the accesses cycles.wait_cycles charges wait
# states on (low: the fetches after a taken branch and the loads from flash; high: every code word
# fetched and the loads), measured as CYCLES_PER_MAC (`python benchmarks/kernels_m4_cycles.py
# --flash-wait-states 0`, docs/kernels.md; per class the lowest low and the highest high "flash
# accesses/MAC" over the models whose layers of that class execute at least 100,000 MACs).
FLASH_ACCESSES_PER_MAC = {
    "cortex-m4": {
        "conv 1x1": (0.09, 1.25),  # dscnn_kws, resnet_concat_64 low, mbv2_w035_144 high
        "conv KxK": (0.01, 1.47),  # mbv2_w035_144, mobilenetv2_160_a1 low, mobilenetv2_160_a1 high
        "depthwise": (0.04, 2.53),  # dscnn_kws low, mobilenetv2_160_a1 high
        "FC": (0.26, 1.16),  # mbv2_w035_144 and mobilenetv2_160_a1
    },
}


# Memory stall cycles per MAC by layer class, (low, high), on the parts whose memory model (memory_model.py) has
# been run: the stalls the part's flash, caches and prefetch add to the zero-wait cycles (`python3
# benchmarks/mlperf_tiny.py --boards nucleo-l4r5zi`, its "Memory stalls per MAC by layer class" table: the
# lowest and highest over the four MLPerf Tiny models' layers of 100,000 MACs or more; FC: their dense layers,
# all smaller). `static_cycles(..., board=)` adds them at zero wait states (`buildtool fit`).
MEMORY_STALLS_PER_MAC = {
    "nucleo-l4r5zi": {"conv 1x1": (0.00, 0.03), "conv KxK": (0.01, 0.05), "depthwise": (0.06, 0.07),
                      "FC": (0.01, 1.04)},
}


def layer_class(g, op) -> str | None:
    """conv 1x1, conv KxK, depthwise or FC (the classes of CYCLES_PER_MAC); None for other operators."""
    if op.opcode == "CONV_2D":
        kh, kw = g.tensors[op.inputs[1]].shape[1:3]
        return "conv 1x1" if (kh, kw) == (1, 1) else "conv KxK"
    return {"DEPTHWISE_CONV_2D": "depthwise", "FULLY_CONNECTED": "FC"}.get(op.opcode)


def static_cycles(g, plan, cpu: str, flash_wait_states: int = 0, board: str | None = None):
    """(low, high) estimated cycles of the plan's conv, depthwise and dense layers on cpu, from their
    MACs and CYCLES_PER_MAC (plus flash_wait_states x FLASH_ACCESSES_PER_MAC: code and weights in a
    flash with that many wait states); a fused block's layers scaled by the block's MACs over theirs
    (predict_instructions, with per-operator figures in place of measured counts). A conv model.c runs on
    its live rows only (plan/weight_order.py rows-live: a plain plan's) counts their MACs. Operators without
    MACs are not counted (1-17 % of the measured estimate of the models in docs/kernels.md). None when cpu has
    no figures (or none of flash accesses, with flash_wait_states) or an operator with MACs has no class (TRANSPOSE_CONV, RESIZE_BILINEAR, SVDF, LSTM).
    board: a part with MEMORY_STALLS_PER_MAC (and no flash_wait_states): its memory model's stalls per MAC added."""
    rates = CYCLES_PER_MAC.get(cpu)
    if rates is None or (flash_wait_states and cpu not in FLASH_ACCESSES_PER_MAC):
        return None
    if flash_wait_states:
        fa = FLASH_ACCESSES_PER_MAC[cpu]
        rates = {c: (lo + flash_wait_states * fa[c][0], hi + flash_wait_states * fa[c][1])
                 for c, (lo, hi) in rates.items()}
    elif board in MEMORY_STALLS_PER_MAC:
        st = MEMORY_STALLS_PER_MAC[board]
        rates = {c: (lo + st[c][0], hi + st[c][1]) for c, (lo, hi) in rates.items()}
    per_op = []
    live = weight_order.row_orders(g) if plan.kind != "fused" else {}
    for op in g.operators:
        macs = op_macs(g, op)
        rows = live.get(op.inputs[1]) if op.opcode == "CONV_2D" else None
        if rows:
            macs = macs * rows.live // len(rows.rows)
        cls = layer_class(g, op) if macs else None
        if macs and cls is None:
            return None
        per_op.append((macs * rates[cls][0], macs * rates[cls][1]) if macs else (0, 0))
    out = []
    for side in (0, 1):
        counts = {k: c[side] for k, c in enumerate(per_op)}
        out.append(round(predict_instructions(g, plan, counts) if plan.kind == "fused" else sum(counts.values())))
    return tuple(out)


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


def read_flash(text: str, n: int) -> list:
    """The n regions' flash accesses [{"fetches", "branch_fetches", "loads"}] from the plugin's "flash"
    lines (its flash= option; cycles.py: wait states)."""
    out = [{"fetches": 0, "branch_fetches": 0, "loads": 0} for _ in range(n)]
    for line in text.splitlines():
        if line.startswith("flash\t"):
            _, region, fetches, branch_fetches, loads = line.split("\t")
            out[int(region)] = {"fetches": int(fetches), "branch_fetches": int(branch_fetches), "loads": int(loads)}
    return out


def fold(per_region: list, n: int) -> list:
    """Mixes (or flash access counts) of n operators invoked several times in a row: summed per operator."""
    out = [{} for _ in range(n)]
    for k, mix in enumerate(per_region):
        for key, c in mix.items():
            out[k % n][key] = out[k % n].get(key, 0) + c
    return out


def annotate(prof: dict, macs, mixes: list, cpu: str, flash: list | None = None, wait_states: int = 0,
             stalls: list | None = None, model=None) -> None:
    """Add each operator's MACs (from firmware.json), instruction mix and estimated cycles; with flash
    (per region, read_flash) its flash accesses too and `wait_states` cycles on each (cycles.py); with stalls
    (per region, memory_model.read_stalls) and model (the part's MemoryModel) its memory stalls and modelled
    cycles, and prof["memory_model"]: "BOARD, summary"."""
    for k, o in enumerate(prof["ops"]):
        if macs and k < len(macs):
            o["macs"] = macs[k]
        if k < len(mixes):
            o["mix"] = dict(sorted(mixes[k].items()))
            fl = flash[k] if flash else None
            if fl is not None:
                o["flash_accesses"] = fl
            o["cycles_estimate"] = list(cycles.estimate(mixes[k], flash=fl, wait_states=wait_states, cpu=cpu))
            if stalls and model:
                o["memory_stalls"] = stalls[k]
                o["modelled_cycles"] = memory_model.modelled_cycles(mixes[k], stalls[k], cpu)
    if mixes:
        prof["cycles_range"] = cycles.RANGES[cpu]
        prof["cycles_model"] = f"{cycles.LABELS[cpu]}, " + (
            f"{wait_states} flash wait state{'s' if wait_states > 1 else ''} on code and data read from flash"
            if flash and wait_states else "zero wait states")
        if stalls and model:
            prof["memory_model"] = f"{model.part}, {model.summary()}"


def header(prof: dict) -> list:
    """The line that labels the cycles as an estimate (none without one)."""
    if "cycles_model" not in prof:
        return []
    waits = "wait states" in prof["cycles_model"] and "zero wait states" not in prof["cycles_model"]
    return [f"  cycles are an ESTIMATE from the instruction mix ({prof['cycles_model']}; low-high: "
            + prof["cycles_range"]
            + (", flash fetches waiting only after a branch or on every word; no cache or flash accelerator"
               if waits else "") + ")"]


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
    lines = [f"  operators: {sum(o['count'] for o in prof['ops']):,} {prof['unit']}, estimated "
             f"{sum(e[0] for e in est):,}-{sum(e[1] for e in est):,} cycles"]
    if "memory_model" in prof:
        mod = sum(o["modelled_cycles"] for o in prof["ops"] if "modelled_cycles" in o)
        lines.append(f"  modelled cycles ({prof['memory_model']}): {mod:,}   zero-wait estimate: "
                     f"{sum(e[0] for e in est):,}-{sum(e[1] for e in est):,}")
    return lines


__all__ = ["CYCLES_PER_MAC", "FLASH_ACCESSES_PER_MAC", "MEMORY_STALLS_PER_MAC", "layer_class", "static_cycles", "region_macs", "read_mixes", "read_flash", "fold",
           "annotate", "header",
           "columns", "summary"]
