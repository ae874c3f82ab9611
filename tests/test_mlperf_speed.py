"""benchmarks/mlperf_tiny.py (issue 29): the four MLPerf Tiny reference models built for cortex-m4
(plain plan, the cortex-m kernel set) run in QEMU byte-identical with TFLite Micro, every operator
counted with an estimated cycle range; boards without a cycle model say so. One line and exit 0
without ../shared. No speed figure is asserted here: they are in docs/kernels.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildtool import targets
from buildtool.firmware import cycles

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "mlperf_tiny.py"
sys.path.insert(0, str(ROOT / "benchmarks"))
import mlperf_tiny as mt  # noqa: E402


def _need(board: str) -> None:
    if not (mt.MLPERF / "records.json").is_file():
        pytest.skip(f"no MLPerf Tiny models in {mt.MLPERF}")
    missing = targets.get(board).missing_tools()
    if missing:
        pytest.skip(f"{board} needs {', '.join(missing)}")


def test_without_shared_it_says_so_in_one_line_and_exits_0(tmp_path):
    env = {**os.environ, "BUILDTOOL_SHARED": str(tmp_path / "nowhere"), "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(BENCH)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and "skipped" in lines[0] and str(tmp_path / "nowhere") in lines[0]


@pytest.mark.parametrize("key", mt.ORDER)
def test_mlperf_model_on_cortex_m4_is_byte_identical_to_tflm(key, tmp_path):
    """Each model's firmware output equals TFLite Micro's byte for byte; every operator is one counted
    region with its instruction mix priced (cortex-m4 has the TRM timing table)."""
    _need("cortex-m4")
    r = mt.measure(key, "cortex-m4", tmp_path, {})
    assert r["identical"]
    g = r["graph"]
    assert sorted(o["op"] for o in r["ops"]) == list(range(len(g.operators)))
    lo, hi = r["cycles"]
    assert 0 < r["insns"] <= lo <= hi  # every instruction costs at least a cycle
    text = mt.table("cortex-m4", {key: r})
    row = next(x for x in text.splitlines() if x.startswith(f"| {r['model'].removesuffix('.tflite')} |"))
    assert row.endswith("| yes |")
    assert text.splitlines()[-1].startswith("Layers on a general path")


@pytest.mark.parametrize("board, source", [
    ("cortex-m33", "Cortex-M4 TRM (DDI 0439) timings as a proxy"),
    ("cortex-m7", "LLVM's Cortex-M7 scheduling model (ARMScheduleM7.td"),
])
def test_m33_and_m7_estimates_name_their_timing_source(tmp_path, board, source):
    """Issue 29 item 2: the M33 and M7 tables carry cycle estimates beside their records, each naming what
    it rests on. M33: the M4 table as a proxy (the same mix priced as on cortex-m4); M7: dual issue, so its
    low end may be below the instruction count, never below half of it."""
    _need(board)
    r = mt.measure("ad", board, tmp_path, {})
    assert r["identical"] and r["insns"] > 0
    lo, hi = r["cycles"]
    if board == "cortex-m33":
        assert r["insns"] <= lo <= hi
        assert [tuple(o["cycles_estimate"]) for o in r["ops"]] == [cycles.estimate(o["mix"]) for o in r["ops"]]
    else:
        assert r["insns"] / 2 <= lo < r["insns"] <= hi
    text = mt.table(board, {"ad": r})
    assert f"Timing source: {source}" in text and "no model" not in text
    row = next(x for x in text.splitlines() if x.startswith("| ad01_int8 |"))
    assert row.endswith("| yes |") and f"{hi / (mt.records()['records'][board]['ad']['mcycles'] * 1e6):.3f}" in row


@pytest.mark.parametrize("key", mt.ORDER)
def test_mlperf_model_on_cortex_m55_is_byte_identical_to_tflm(key, tmp_path):
    """Issue 30: each model built for cortex-m55 (the Helium kernel set, QEMU mps3-an547) gives TFLite
    Micro's output byte for byte; every operator is one counted region; no cycle model, so the table
    reports instructions against the Cortex-M85 record and says so. No speed figure asserted."""
    _need("cortex-m55")
    r = mt.measure(key, "cortex-m55", tmp_path, {})
    assert r["identical"]
    g = r["graph"]
    assert sorted(o["op"] for o in r["ops"]) == list(range(len(g.operators)))
    assert r["insns"] > 0 and r["cycles"] is None
    text = mt.table("cortex-m55", {key: r})
    assert "(record board: Renesas RA8D1" in text  # the Cortex-M85 (Helium) record
    assert "no Cortex-M55 cycle model" in text and "| no model |" in text
    row = next(x for x in text.splitlines() if x.startswith(f"| {r['model'].removesuffix('.tflite')} |"))
    assert row.endswith("| yes |")


def test_the_dense_variant_fills_every_pruned_row_and_runs_the_whole_network(tmp_path):
    """--dense (issue 29's held-out check): vww with its all-zero filter rows filled is still byte-identical
    to TFLite Micro, runs every channel (no pruned-channel spreading in model.c) and so more instructions;
    densify changes exactly the all-zero rows, counted here from the raw filters, and nothing else."""
    _need("cortex-m4")
    import numpy as np

    from buildtool.model import reader

    data = (mt.MLPERF / mt.records()["models"]["vww"]).read_bytes()
    dense, filled = mt.densify(data)
    before, after = reader.parse(data), reader.parse(dense)
    zero_rows = changed = 0
    for a, b in zip(before.operators, after.operators):
        if a.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            continue
        axis = 0 if a.opcode == "CONV_2D" else 3   # output channels: OHWI, depthwise 1HW(C*M)

        def rows(g, op):
            w = np.moveaxis(np.asarray(g.tensors[op.inputs[1]].data), axis, 0)
            return w.reshape(w.shape[0], -1)

        wa, wb = rows(before, a), rows(after, b)
        dead = ~wa.any(axis=1)
        zero_rows += int(dead.sum())
        assert wb.any(axis=1).all()
        assert (wa[~dead] == wb[~dead]).all()
        changed += int((wa != wb).any(axis=1).sum())
    assert filled == zero_rows == changed > 0
    r = mt.measure("vww", "cortex-m4", tmp_path / "plain", {})
    d = mt.measure("vww", "cortex-m4", tmp_path / "dense", {}, dense=True)
    assert r["identical"] and d["identical"] and d["filled"] == filled
    assert "_spread(" in (tmp_path / "plain" / "model.c").read_text()
    assert "_spread(" not in (tmp_path / "dense" / "model.c").read_text()
    assert d["insns"] > r["insns"]
    row = next(x for x in mt.table("cortex-m4", {"vww": r, "vww dense": d}).splitlines() if ", dense (" in x)
    assert f"dense ({filled:,} zero filter rows filled)" in row and row.endswith("| yes |")


def test_published_ratios_are_each_stacks_own_latencies_and_the_projection_spans_the_other_stacks():
    """--published: a stack's vww/ic and kws/ic come from its own latencies (1000 / median throughput where
    that is what the results file gives), ours from the est. high cycles of the measured firmware, and the
    record's dense-vww projection is its ic times the lowest and highest vww/ic of the other cortex-m4 stacks.
    Checked on stand-in results, so it needs neither QEMU nor ../shared."""
    import json

    stacks = json.loads(mt.PUBLISHED.read_text())["stacks"]
    tflm = next(s for s in stacks if s["stack"].startswith("TFLite Micro"))
    assert mt.published_ms(tflm)["vww"] == pytest.approx(1000 / 1.665)
    rec = next(s for s in stacks if s["board"] == "cortex-m4" and "record" in s["stack"])
    assert mt.published_ms(rec) == rec["ms"]
    res = {"vww": {"cycles": (0, 6_000_000)}, "ic": {"cycles": (0, 12_000_000)}, "kws": {"cycles": (0, 3_000_000)},
           "vww dense": {"cycles": (0, 9_000_000), "filled": 971}}
    text = mt.published(res, 120.0)
    ours = [r for r in text.splitlines() if r.startswith("| buildtool")]
    assert ours[0].endswith("| 50.0 | 100.0 | 25.0 | 0.500 | 0.250 |")
    assert "971 zero rows filled" in ours[1] and ours[1].endswith("| 75.0 | 100.0 | 25.0 | 0.750 | 0.250 |")
    others = sorted(mt.published_ms(s)["vww"] / mt.published_ms(s)["ic"] for s in stacks
                    if s["board"] == "cortex-m4" and s is not rec)
    lo, hi = others[0] * rec["ms"]["ic"] * 120e3, others[-1] * rec["ms"]["ic"] * 120e3
    assert f"its vww would take {lo / 1e6:.3f} M-{hi / 1e6:.3f} M cycles" in text
    assert f"is {9e6 / hi:.3f}-{9e6 / lo:.3f} of that" in text
    for s in stacks:   # every row printed, with both ratios
        ms = mt.published_ms(s)
        assert f"| {s['stack']} | {s['board']} |" in text and f"| {ms['vww'] / ms['ic']:.3f} | " in text
