"""MLPerf Tiny (closed division) on the Cortex-M boards against the published records (issue 29).

Builds each of the four MLPerf Tiny reference models (../shared/models/mlperf-tiny/) for a board with
the plain (layer-by-layer arena) plan, runs the firmware once in QEMU with the project's
instruction-count plugin on a fixed pseudo-random input, compares the output byte for byte with
TensorFlow Lite Micro's (the `tflite-micro` package, the same oracle as the tests) and prints, per
model: executed instructions (every operator's profile region), the estimated cycle range where the
board's CPU has a timing table (buildtool/firmware/cycles.py), the record (records.json: cycles =
latency x clock) and the ratios.

    python3 benchmarks/mlperf_tiny.py                        # cortex-m4, cortex-m33, cortex-m7, cortex-m55
    python3 benchmarks/mlperf_tiny.py --boards cortex-m55    # Helium: instructions vs the Cortex-M85 record
    python3 benchmarks/mlperf_tiny.py --boards nucleo-l4r5zi --models vww,ic,kws,ad   # the record board: + modelled
        # cycles under its memory model (flash wait states, ART caches, prefetch), the weight stream's floor
    python3 benchmarks/mlperf_tiny.py --boards cortex-m4 --models kws,ad
    python3 benchmarks/mlperf_tiny.py --boards cortex-m4 --profile   # + one line per operator
    python3 benchmarks/mlperf_tiny.py --boards cortex-m4 --flash-wait-states 5   # + the estimate with
        # 5 wait states on every read of code and weights from flash (cycles.py: the model, what it leaves out)
    python3 benchmarks/mlperf_tiny.py --write-docs           # + the tables into docs/kernels.md
    python3 benchmarks/mlperf_tiny.py --boards cortex-m4 --dense   # also each model with its pruned
        # (all-zero) filter rows filled with pseudo-random weights: the same network unpruned
    python3 benchmarks/mlperf_tiny.py --published   # cortex-m4 vww (and dense), ic, kws, then the published
        # stacks' vww/ic and kws/ic latency ratios (mlperf_published.json) beside ours

The cycle figures are an ESTIMATE from the executed instruction mix (zero wait states), not a
measurement; the records are measured on real boards with their flash wait states.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool import pipeline  # noqa: E402
from buildtool import targets  # noqa: E402
from buildtool.firmware import cycles, memory_model, op_cost, runner  # noqa: E402
from buildtool.model import reader as tflite_reader  # noqa: E402
from buildtool.model.writer import serialize  # noqa: E402
from buildtool.refops import prepare  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared"))
MLPERF = SHARED / "models" / "mlperf-tiny"
ORDER = ("vww", "ic", "kws", "ad")
BOARDS = ("cortex-m4", "cortex-m33", "cortex-m7")
# what each board's estimate is made from; a board without a timing table prints instructions only
TIMING = {b: cycles.SOURCES.get(b, "none: no cycle model for this core; instructions only") for b in BOARDS}
RECORD_KEY = {"cortex-m4": "cortex-m4", "cortex-m33": "cortex-m33", "cortex-m7": "cortex-m7"}
# cortex-m55 (Helium, issue 30): the cortex-m55 kernel set on QEMU mps3-an547, instructions against the
# Cortex-M85 record's cycles (RA8D1, TFLM + CMSIS-NN); no Cortex-M55 timing table is sourced here, so no
# cycle estimate (cycles.CPUS has no cortex-m55): instructions only
BOARDS += ("cortex-m55",)
TIMING["cortex-m55"] = ("none: no Cortex-M55 cycle model (Arm's Cortex-M55 Software Optimization Guide is not "
                        "sourced here); executed instructions only, not cycles")
RECORD_KEY["cortex-m55"] = "cortex-m85 (Helium)"
# nucleo-l4r5zi (issue 49): the record board itself, its own firmware run on QEMU's mps2-an386 (the same core; the
# image linked at the part's boot alias, its 640 KiB of SRAM inside what the machine maps) under its memory model
# (buildtool/firmware/memory_model.py): the modelled cycles
MODELLED = "nucleo-l4r5zi"
RECORD_KEY[MODELLED] = "cortex-m4"
TIMING[MODELLED] = (cycles.SOURCES["cortex-m4"] + "; modelled: the high plus the stalls of the part's memory model, "
                    + memory_model.get(MODELLED).summary() + " (buildtool/firmware/memory_model.py, "
                    "docs/memory-model.md)")


PUBLISHED = Path(__file__).resolve().parent / "mlperf_published.json"


def records() -> dict:
    return json.loads((MLPERF / "records.json").read_text())


def fixed_input(g) -> np.ndarray:
    t = g.tensors[g.inputs[0]]
    return np.random.default_rng(0).integers(-128, 128, size=tuple(t.shape), dtype=np.int8)


def densify(data: bytes) -> tuple[bytes, int]:
    """The model with every all-zero output-channel row of a CONV_2D or DEPTHWISE_CONV_2D filter (a pruned
    channel) filled with pseudo-random int8 weights in [-60, 60] (scales, biases and structure unchanged), and
    how many rows: the same network without its pruning, which code generation's pruned-channel path
    (plan/weight_order.py, rows-live) cannot shortcut. The held-out check of issue 29: a gain that holds here
    comes from the kernels, not from the model's zeros."""
    g = tflite_reader.parse(data, name="model")
    rng = np.random.default_rng(1)
    filled = 0
    for op in g.operators:
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            continue
        t = g.tensors[op.inputs[1]]
        axis = 0 if op.opcode == "CONV_2D" else 3   # output channels: OHWI, depthwise 1HW(C*M)
        w = np.moveaxis(np.array(t.data, dtype=np.int8), axis, 0).copy()
        rows = w.reshape(w.shape[0], -1)
        dead = np.flatnonzero(~rows.any(axis=1))
        for r in dead:
            rows[r] = rng.integers(-60, 61, size=rows.shape[1])
        filled += len(dead)
        if len(dead):
            t.data = np.moveaxis(rows.reshape(w.shape), 0, axis).copy()
    return serialize(g), filled


def tflm_output(data: bytes, x: np.ndarray) -> np.ndarray:
    from tflite_micro import runtime

    ip = runtime.Interpreter.from_bytes(data, arena_size=max(10 * len(data), 1 << 20))
    ip.set_input(x, 0)
    ip.invoke()
    return np.array(ip.get_output(0))


def measure(key: str, board: str, work: Path, tflm: dict, flash_wait_states: int | None = None,
            dense: bool = False) -> dict:
    """One model on one board: instructions, estimated cycles (or None), identical, per-op profile;
    with flash_wait_states (boards with a cycle model), also "cycles_ws": the estimate with them; dense:
    the model densified (densify(): "filled" rows), None when it has no all-zero row (the same model)."""
    name = records()["models"][key]
    data, filled = (MLPERF / name).read_bytes(), None
    if dense:
        data, filled = densify(data)
        if not filled:
            return None
        key = key + " dense"
    g = tflite_reader.parse(data)
    x = fixed_input(g)
    if key not in tflm:
        tflm[key] = tflm_output(data, x)
    pipeline.build(g, board, work)
    cpu = targets.get(board).cpu
    ws = flash_wait_states if cpu in cycles.WAIT_STATE_CPUS else None
    y, prof, _ = runner.run(board, work, x, flash_wait_states=ws)
    ops = prof["ops"]
    est = [o.get("cycles_estimate") for o in ops]
    lo_hi = (sum(e[0] for e in est), sum(e[1] for e in est)) if all(e is not None for e in est) else None
    zero = [cycles.estimate(o["mix"], cpu=cpu) for o in ops if "mix" in o]  # the same mixes at zero wait states
    mm = memory_model.get(board)
    modelled = None
    if mm and all("modelled_cycles" in o for o in ops):
        weights = (work / "weights.bin").stat().st_size
        once = json.loads((work / "firmware.json").read_text()).get("staged", {}).get("spare_bytes", 0)
        modelled = {"cycles": sum(o["modelled_cycles"] for o in ops), "weights": weights,
                    "floor": mm.stream_floor(weights), "once": once, "copy": mm.copy_cycles(once),
                    **{k: sum(o["memory_stalls"][k] for o in ops) for k in ("fetch_stalls", "load_stalls")}}
        other = mm.other_reading()
        if other:   # the same firmware, the faster reading the manual leaves open
            _, p2, _ = runner.run(board, work, x, memory=other)
            modelled["other"] = sum(o["modelled_cycles"] for o in p2["ops"])
            modelled["other_floor"] = other.stream_floor(weights)
    return {"model": name, "filled": filled, "insns": sum(o["count"] for o in ops), "modelled": modelled,
            "cycles": (sum(e[0] for e in zero), sum(e[1] for e in zero)) if lo_hi and ws is not None else lo_hi,
            "cycles_ws": lo_hi if ws is not None else None,
            "identical": np.asarray(y).tobytes() == tflm[key].tobytes(), "ops": ops, "graph": g,
            "general": general_layers(g, (work / "model.c").read_text()) if board != "cortex-m55" else []}


_CALL = re.compile(r"^\s*(op(\d+)_conv|bt_\w+)\((?:&op(\d+)_p)?")


def _kxk_fast(g, op) -> bool:
    """A 5x5 or 7x7 depthwise the cortex-m set runs on its widened planes (depthwise.c's dw_kxk.h: dilation 1,
    stride_w 1 or 2, at least 16 output pixels a call; whole-layer calls assumed)."""
    w = prepare.window(g, op)
    return (w.kh == w.kw and w.kh in (5, 7) and w.dh == w.dw == 1 and w.sw in (1, 2)
            and w.out_h * w.out_w >= 16)


# the depthwise paths on bt_dw_q4's terms (kernel_variants.py's "depthwise_m1" table): bt_rq2 requantisation
Q4_PATHS = ("bt_dw_s2g", "bt_dw_planes_", "bt_dw_rows_q4_", "bt_dw_rows_q4e_")


def general_layers(g, model_c: str) -> list:
    """(op, why) of the conv, depthwise and dense layers that model.c sends to a general (slower)
    path of the cortex-m set instead of its fast ones: direct conv (patch over 640 values or fewer than
    4 output channels), depthwise with another depth multiplier or filter size than 1 and 3x3 (5x5 and 7x7 of
    16 output pixels or more, dilation 1 and stride_w 1 or 2 are fast), in place (rows through a ring in
    scratch), bt_mbqm_fast requantisation (multipliers bt_rq2 cannot take), the direct dense loop."""
    calls = {}
    for line in model_c.splitlines():
        m = _CALL.match(line)
        if m and (m.group(2) or m.group(3)):
            calls[int(m.group(3) or m.group(2))] = m.group(1)  # op<i>_conv(&op<j>_p: layer j (a shared instance)
    out = []
    for k, op in enumerate(g.operators):
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED") or k not in calls:
            continue
        fn, why = calls[k], []
        if op.opcode == "CONV_2D":
            if "direct" in fn:
                why.append("direct convolution")
        elif op.opcode == "DEPTHWISE_CONV_2D":
            kh, kw = g.tensors[op.inputs[1]].shape[1:3]
            if "generic" in fn:
                why.append("depth multiplier > 1")
            elif (kh, kw) != (3, 3) and not _kxk_fast(g, op):
                why.append(f"{kh}x{kw} filter: general loops")
        elif "direct" in fn:
            why.append("direct dense loop")
        if fn.endswith("_inplace"):   # its dispatcher picks bt_rq2 per call where the multipliers allow it
            why.append("in place: rows through a ring in scratch")
        elif "rq2" not in fn and not fn.startswith(("op",) + Q4_PATHS):
            why.append(f"{fn}: bt_mbqm_fast requantisation")
        if why:
            out.append((k, "; ".join(why)))
    return out


def _keys(res: dict) -> list:
    """res's keys in ORDER, each model's dense variant ("vww dense") right after it."""
    return [k for key in ORDER for k in (key, key + " dense") if k in res]


def _label(r: dict) -> str:
    name = r["model"].removesuffix(".tflite")
    return name if r.get("filled") is None else f"{name}, dense ({r['filled']:,} zero filter rows filled)"


def _m(v: float) -> str:
    return f"{v / 1e6:.3f} M"


def table(board: str, res: dict, ws: int | None = None) -> str:
    rec = records()["records"][RECORD_KEY[board]]
    ws = ws if any(r.get("cycles_ws") for r in res.values()) else None
    wcols = (f" est. cycles, {ws} flash wait states | est. high ({ws} WS) / record |", "---:|---:|") if ws is not None \
        else ("", "")
    lines = [f"### {board} (record board: {rec['board']})", "",
             f"Timing source: {TIMING[board]}" + (f"; {ws} flash wait states: N cycles more on every fetch of code "
                                                  "from flash after a branch and every load from flash (low) or on "
                                                  "every fetched word and load (high)" if ws is not None else "") + ".",
             "", "| model | instructions | est. cycles (low-high) |" + wcols[0] + " record (stack) | "
             "instructions / record | est. high / record | identical to TFLM |",
             "|---|---:|---:|" + wcols[1] + "---:|---:|---:|---|"]
    for key in _keys(res):
        r, rc = res[key], rec[key.split()[0]]
        mc = rc["mcycles"] * 1e6
        cyc = f"{_m(r['cycles'][0])}-{_m(r['cycles'][1])}" if r["cycles"] else "no model"
        hi = f"{r['cycles'][1] / mc:.3f}" if r["cycles"] else "-"
        wc = r.get("cycles_ws")
        wtext = "" if ws is None else (f" {_m(wc[0])}-{_m(wc[1])} | {wc[1] / mc:.3f} |" if wc else " no model | - |")
        lines.append(f"| {_label(r)} | {_m(r['insns'])} | {cyc} |{wtext} "
                     f"{rc['mcycles']:.3f} M ({rc['stack']}) | {r['insns'] / mc:.3f} | {hi} | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    gen = [f"{_label(res[k])} op {op} ({why})" for k in _keys(res) for op, why in res[k]["general"]]
    lines += ["", "Layers on a general path (not the fast ones): " + ("; ".join(gen) if gen else "none") + "."]
    if any(res[k].get("modelled") for k in _keys(res)):
        lines += ["", modelled_table(board, res, rec)]
    return "\n".join(lines)


def modelled_table(board: str, res: dict, rec: dict) -> str:
    """The modelled cycles (the part's memory model) against the record, the stalls, and the floor the weights
    set: the weights image read once from flash, every read taking the wait states plus one cycle."""
    mm = memory_model.get(board)
    other = mm.other_reading()
    lines = [f"Modelled on {board} ({mm.summary()}): the zero-wait high plus the memory stalls; weight floor: "
             f"the weights image read once, {8 * mm.read_bytes}-bit reads of {mm.wait_states + 1} cycles each "
             "(no kernel that reads its weights from flash runs in fewer)"
             + (f"; the same with the {8 * other.read_bytes}-bit reads the manual also allows (not the modelled "
                "figure: the slower reading is)" if other else "") + "; staged once: the weights model_init copies "
             "into SRAM (bt_staging) before the first inference, and that copy's cycles (MemoryModel.copy_cycles: "
             f"the flash reads at {mm.wait_states + 1} cycles each and {memory_model.COPY_CYCLES_PER_WORD} cycles a "
             "word), paid once at start-up, in no inference's figure.", "",
             "| model | modelled cycles | modelled / record | zero-wait high / record | fetch stalls | load stalls | "
             "weights | weight floor | floor / record |"
             + (f" {8 * other.read_bytes}-bit reads / record | {8 * other.read_bytes}-bit floor / record |"
                if other else "") + " staged once | its copy at model_init |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if other else "") + "---:|---:|"]
    for key in _keys(res):
        r, mc = res[key], rec[key.split()[0]]["mcycles"] * 1e6
        m = r.get("modelled")
        if not m:
            continue
        lines.append(f"| {_label(r)} | {_m(m['cycles'])} | {m['cycles'] / mc:.3f} | {r['cycles'][1] / mc:.3f} | "
                     f"{_m(m['fetch_stalls'])} | {_m(m['load_stalls'])} | {m['weights']:,} B | {_m(m['floor'])} | "
                     f"{m['floor'] / mc:.3f} |"
                     + (f" {m['other'] / mc:.3f} | {m['other_floor'] / mc:.3f} |" if "other" in m else "")
                     + f" {m['once']:,} B | {_m(m['copy'])} |")
    return "\n".join(lines + ["", stalls_per_mac(board, res)])


MIN_MACS = 100_000   # op_cost's per-MAC figures count layers of at least this many MACs (call overhead below)


def class_stalls(res: dict) -> dict:
    """{layer class: (lowest, highest) memory stalls per MAC} over the layers of res of at least MIN_MACS MACs
    (op_cost.MEMORY_STALLS_PER_MAC is this, for `buildtool fit`)."""
    per = {}
    for key in _keys(res):
        g = res[key]["graph"]
        for o in res[key]["ops"]:
            cls = op_cost.layer_class(g, g.operators[o["op"]])
            if cls and o.get("macs") and "memory_stalls" in o:
                st = o["memory_stalls"]
                per.setdefault(cls, []).append((o["macs"], (st["fetch_stalls"] + st["load_stalls"]) / o["macs"]))
    out = {}
    for c, v in sorted(per.items()):   # a class with no layer that large: all its layers (ad01's dense ones)
        v = [r for m, r in v if m >= MIN_MACS] or [r for _, r in v]
        out[c] = (round(min(v), 2), round(max(v), 2))
    return out


def stalls_per_mac(board: str, res: dict) -> str:
    lines = [f"Memory stalls per MAC by layer class on {board} (layers of {MIN_MACS:,} MACs or more, all of a class "
             "that has none; lowest and highest; buildtool fit's latency on this part adds them, op_cost.MEMORY_STALLS_PER_MAC):", "",
             "| layer class | stalls / MAC |", "|---|---:|"]
    lines += [f"| {c} | {lo:.2f}-{hi:.2f} |" for c, (lo, hi) in class_stalls(res).items()]
    return "\n".join(lines)


def profile(res: dict, ws: int | None = None) -> str:
    out = []
    for key in _keys(res):
        r = res[key]
        g = r["graph"]
        est = "est. cycles" + (f" ({ws} flash wait states)" if ws is not None and r.get("cycles_ws") else "")
        mod = r.get("modelled") is not None   # a part's memory model: its modelled cycles and stalls per operator
        out += [f"#### {_label(r)}", "", f"| op | opcode | shape out | MACs | instructions | insns/MAC | {est} |"
                + (" modelled cycles | fetch stalls | load stalls |" if mod else ""),
                "|---:|---|---|---:|---:|---:|---:|" + ("---:|---:|---:|" if mod else "")]
        for o in sorted(r["ops"], key=lambda o: -o["count"]):
            op = g.operators[o["op"]]
            shp = "x".join(map(str, g.tensors[op.outputs[0]].shape))
            macs = o.get("macs", 0)
            ce = o.get("cycles_estimate")
            st = o.get("memory_stalls")
            out.append(f"| {o['op']} | {o['opcode']} | {shp} | {macs:,} | {o['count']:,} | "
                       f"{o['count'] / macs if macs else 0:.2f} | {f'{ce[0]:,}-{ce[1]:,}' if ce else '-'} |"
                       + (f" {o['modelled_cycles']:,} | {st['fetch_stalls']:,} | {st['load_stalls']:,} |"
                          if mod and st else ""))
        out.append("")
    return "\n".join(out)


def published_ms(stack: dict) -> dict:
    """A mlperf_published.json entry's latencies in ms: as published, or 1000 / its median throughput."""
    return dict(stack["ms"]) if "ms" in stack else {k: 1000.0 / v for k, v in stack["throughput"].items()}


def published(res: dict, mhz: float) -> str:
    """The published stacks' vww/ic and kws/ic latency ratios (mlperf_published.json) beside the ones of
    res (cortex-m4: vww, its dense variant, ic, kws; est. high at zero wait states, as ms at mhz), and what
    the record would be on a dense vww were its vww/ic that of any other published Cortex-M4 stack."""
    stacks = json.loads(PUBLISHED.read_text())["stacks"]
    lines = ["### Published stacks: vww and kws against ic", "",
             "Latency ratios are clock-free, so results of one stack on one board compare its speed on vww "
             "(whose 1x1 filters have all-zero rows: 42 % of its MACs) and kws (no such rows) with its speed "
             "on ResNet-8 (none either). Sources: benchmarks/mlperf_published.json (each submission's "
             "performance/results.txt); buildtool: est. high at zero wait states, as ms at "
             f"{mhz:g} MHz.", "",
             "| stack | board | executes the zero rows | vww ms | ic ms | kws ms | vww / ic | kws / ic |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for s in stacks:
        ms = published_ms(s)
        lines.append(f"| {s['stack']} | {s['board']} | {s['zeros']} | {ms['vww']:.1f} | {ms['ic']:.1f} | "
                     f"{ms['kws']:.1f} | {ms['vww'] / ms['ic']:.3f} | {ms['kws'] / ms['ic']:.3f} |")
    ours = {k: res[k]["cycles"][1] for k in ("vww", "ic", "kws")}   # est. high cycles
    dense = res.get("vww dense") if res.get("vww dense") and res["vww dense"].get("filled") else None
    rows = [("buildtool, zero rows computed as constants", "no", ours["vww"])]
    if dense:
        rows.append((f"buildtool, dense vww ({dense['filled']:,} zero rows filled)", "all", dense["cycles"][1]))
    ms = mhz * 1e3   # cycles a millisecond
    for label, zeros, vww in rows:
        lines.append(f"| {label} | cortex-m4 | {zeros} | {vww / ms:.1f} | {ours['ic'] / ms:.1f} | "
                     f"{ours['kws'] / ms:.1f} | {vww / ours['ic']:.3f} | {ours['kws'] / ours['ic']:.3f} |")
    record = next(s for s in stacks if s["board"] == "cortex-m4" and "record" in s["stack"])
    ratios = sorted(m["vww"] / m["ic"] for m in (published_ms(s) for s in stacks
                                                 if s["board"] == "cortex-m4" and s is not record))
    rms = published_ms(record)
    ic = rms["ic"] * ms   # the record stack's ic in cycles
    lo, hi = ratios[0] * ic, ratios[-1] * ic
    lines += ["", f"The record stack's vww / ic is {rms['vww'] / rms['ic']:.3f}; every other published "
              f"cortex-m4 stack's is {ratios[0]:.3f}-{ratios[-1]:.3f}. Were the record's vww / ic in that "
              f"range (a vww whose zero rows it executed), its vww would take {_m(lo)}-{_m(hi)} cycles "
              f"(its ic {_m(ic)} x the ratio)"]
    if dense:
        d = dense["cycles"][1]
        lines[-1] += f"; buildtool's dense vww (est. high {_m(d)}) is {d / hi:.3f}-{d / lo:.3f} of that"
    lines[-1] += "."
    return "\n".join(lines)


def bad_arguments(a) -> str:
    """The one line saying what is wrong with the arguments, '' when nothing is."""
    if a.flash_wait_states is not None and a.flash_wait_states < 0:
        return f"--flash-wait-states must be 0 or more, not {a.flash_wait_states}"
    for board in a.boards.split(","):
        if board not in RECORD_KEY:
            return f"unknown board '{board}' (boards with a record: {', '.join(RECORD_KEY)})"
    if (MLPERF / "records.json").is_file():
        for key in a.models.split(","):
            if key not in records()["models"]:
                return f"unknown model '{key}' (records.json: {', '.join(records()['models'])})"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", default=",".join(BOARDS))
    ap.add_argument("--models", default=",".join(ORDER), help="keys of records.json: vww, ic, kws, ad")
    ap.add_argument("--profile", action="store_true", help="also one line per operator, most first")
    ap.add_argument("--flash-wait-states", type=int, metavar="N",
                    help="also the estimate with N wait states on every read of code and weights from flash "
                         "(boards with a cycle model)")
    ap.add_argument("--dense", action="store_true",
                    help="also each model with its all-zero filter rows (pruned channels) filled with "
                         "pseudo-random weights: the same network unpruned")
    ap.add_argument("--published", action="store_true",
                    help="cortex-m4 vww (and dense), ic and kws, then the published stacks' vww/ic and kws/ic "
                         "latency ratios (benchmarks/mlperf_published.json) beside ours")
    ap.add_argument("--write-docs", action="store_true",
                    help="also put the tables in docs/kernels.md (their own region with --flash-wait-states "
                         "or --dense)")
    a = ap.parse_args()
    if a.published:
        a.boards, a.models, a.dense = "cortex-m4", "vww,ic,kws", True
    bad = bad_arguments(a)
    if bad:
        print(f"mlperf_tiny: {bad}", file=sys.stderr)
        return 2
    if not (MLPERF / "records.json").is_file():
        print(f"mlperf_tiny: skipped, no MLPerf Tiny models in {MLPERF}")
        return 0
    out = Out()
    if a.write_docs:
        command = " ".join(["python3 benchmarks/mlperf_tiny.py"] + [x for x in sys.argv[1:] if x != "--write-docs"])
        out(f"Measured {environment()}; `{command}`, as printed.\n")
    out("MLPerf Tiny reference models, plain plan, cortex-m kernel set, one inference in QEMU "
        "(instructions: the insncount plugin over every operator's region), output compared byte for byte "
        "with TFLite Micro on the same pseudo-random input; records: records.json (cycles = ms x MHz)\n")
    tflm: dict = {}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="bt-mlperf-") as tmp:
        for board in a.boards.split(","):
            res = {}
            for k in a.models.split(","):
                res[k] = measure(k, board, Path(tmp) / f"{board}-{k}", tflm, a.flash_wait_states)
                if a.dense:   # a model without pruned rows is its own dense variant: measured once
                    d = measure(k, board, Path(tmp) / f"{board}-{k}-dense", tflm, a.flash_wait_states, dense=True)
                    res[k + " dense"] = d or dict(res[k], filled=0)
            bad += sum(not r["identical"] for r in res.values())
            out(table(board, res, a.flash_wait_states) + "\n")
            if a.profile:
                out(profile(res, a.flash_wait_states))
            if a.published:
                out(published(res, 120.0) + "\n")   # records.json: NUCLEO-L4R5ZI at 120 MHz
    if a.write_docs and a.boards == MODELLED:
        write_docs("docs/memory-model.md", f"mlperf_tiny.py --boards {MODELLED}", out.text)
    elif a.write_docs:
        region = "mlperf_tiny.py" + (" --published" if a.published else
                                     (" --flash-wait-states" if a.flash_wait_states else "") +
                                     (" --dense" if a.dense else ""))
        write_docs("docs/kernels.md", region, out.text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
