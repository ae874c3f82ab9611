"""Convolutions whose filters have zero rows (pruned output channels: plan/weight_order.py "rows-live",
model/weight_facts.py): the image holds the live rows first, model.c runs the convolution on them only and
writes the zero rows' constant outputs; a skeleton records what code generation reads of the values, so the
build rules' model.c is the model file's; every board's firmware gives TFLite Micro's bytes."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from buildtool import pipeline
from buildtool.codegen import skeleton as skel
from buildtool.model import weight_facts
from buildtool.model.writer import serialize
from buildtool.pipeline import plan_memory
from buildtool.plan import weight_order
from buildtool.refops import prepare
from buildtool.steps.models import Model
from buildtool.zoo.builder import GraphBuilder

from conftest import tflm_run

BIG = 1 << 30  # a pruned channel's bias as vww_96_int8 has them: 2 (bias + sum) leaves int32


def _conv(g, k):
    return [op for op in g.operators if op.opcode == "CONV_2D"][k]


def _prune(g, op, rows, biases=None, zero_scale=()):
    """Zero op's filter rows (their bias values from biases, their filter scale 0 for rows in zero_scale)."""
    w = g.tensors[op.inputs[1]]
    w.data = w.data.copy()
    w.data[list(rows)] = 0
    b = g.tensors[prepare.bias_input(g, op)]
    b.data = b.data.copy()
    for r, v in (biases or {}).items():
        b.data[r] = v
    if zero_scale:
        w.quant.scale = w.quant.scale.copy()
        w.quant.scale[list(zero_scale)] = 0.0


def _model(seed: int = 5):
    """12x12x8 -> conv 3x3 to 24 (9 zero rows, one of filter scale 0, biases +-2^30) -> depthwise -> 1x1 to 21
    (4 zero rows: 17 live, odd) and 1x1 to 16 (every row zero), concatenated (both views of the concat: pixel
    stride 37) -> 1x1 to 10 (no zero row)."""
    b = GraphBuilder("pruned", seed=seed)
    x = b.input((1, 12, 12, 8))
    y = b.conv2d(x, 24, k=3)
    y = b.depthwise(y, k=3)
    q = (0.05, -3)  # one quantisation: the concat's inputs are its views, no QUANTIZE between
    y = b.concat([b.conv2d(y, 21, k=1, out_quant=q), b.conv2d(y, 16, k=1, out_quant=q)], out_quant=q)
    g = b.finish([b.conv2d(y, 10, k=1, activation="NONE")])
    _prune(g, _conv(g, 0), [0, 3, 4, 5, 11, 12, 17, 22, 23], {0: BIG, 3: -BIG, 11: BIG - 64, 23: 7}, zero_scale=[4])
    _prune(g, _conv(g, 1), [2, 9, 10, 20], {9: -BIG})
    _prune(g, _conv(g, 2), range(16))
    return g


def test_rows_live_orders_on_every_board():
    g = _model()
    c = [_conv(g, k) for k in range(4)]
    want = {}
    for op in c[:3]:
        r = weight_order.live_rows(g, op)
        assert r is not None and sorted(r.rows) == list(range(len(r.rows)))
        assert set(r.rows[r.live:]) == set(weight_facts.zero_rows(g.tensors[op.inputs[1]]))
        want[op.inputs[1]] = want[prepare.bias_input(g, op)] = r
    assert weight_order.live_rows(g, c[3]) is None
    assert [want[op.inputs[1]].live for op in c[:3]] == [15, 17, 0]
    for board in ("host", "riscv32", "cortex-m4", "cortex-m55", "xcore"):
        assert weight_order.orders(g, board) == want
    r = want[c[0].inputs[1]]
    w = g.tensors[c[0].inputs[1]]
    assert weight_order.image_bytes(g, w.index, r) == w.data[list(r.rows)].tobytes()


def test_a_few_zero_rows_of_a_small_patch_are_not_worth_it():
    """One zero row of 24 with a 3x3x8 patch: 72 MACs a pixel against the 24 outputs spread (ROWS_LIVE_GAIN)."""
    g = _model()
    op = _conv(g, 0)
    w = g.tensors[op.inputs[1]]
    w.data = w.data.copy()
    w.data[[3, 4, 5, 11, 12, 17, 22, 23]] = 1
    assert weight_facts.zero_rows(w) == (0,) and weight_order.live_rows(g, op) is None


def test_the_skeleton_records_the_facts_code_generation_reads():
    g = _model()
    s = skel.from_json(json.loads(json.dumps(skel.to_json(g))))
    for op in g.operators:
        if op.opcode != "CONV_2D":
            continue
        f, b = op.inputs[1], prepare.bias_input(g, op)
        rows = weight_facts.zero_rows(g.tensors[f])
        assert weight_facts.zero_rows(s.tensors[f]) == rows and not s.tensors[f].data.any()
        assert weight_facts.abs_bound(s.tensors[b], rows) == weight_facts.abs_bound(g.tensors[b], rows)
        assert weight_facts.abs_bound(s.tensors[b]) == weight_facts.abs_bound(g.tensors[b])
        assert [weight_facts.value_at(s.tensors[b], r) for r in rows] == [int(g.tensors[b].data[r]) for r in rows]
    assert weight_facts.abs_bound(s.tensors[prepare.bias_input(g, _conv(g, 0))]) == (1 << 31) - 1


def test_code_from_the_skeleton_is_the_model_files():
    """The build rules generate model.c from skeleton.json: the same text as from the model (the zero rows'
    constants, and no doubled sums where a bias of 2^30 would overflow them)."""
    g = _model()
    plan = plan_memory(g)
    s = skel.from_json(json.loads(json.dumps(skel.to_json(g))))
    for board in ("cortex-m4", "host"):
        want = pipeline.code(Model("pruned", "pruned", g), plan, board)
        assert pipeline.code(Model("pruned", "pruned", s), plan, board) == want
    src = pipeline.code(Model("pruned", "pruned", g), plan, "cortex-m4")["model.c"]
    assert len(re.findall(r"^static void op\d+_spread\(int8_t \*o\)", src, re.M)) == 3


needs = {"cortex-m4": ("arm-none-eabi-gcc", "qemu-system-arm"), "riscv32": ("riscv64-unknown-elf-gcc",
                                                                            "qemu-system-riscv32")}


@pytest.mark.parametrize("board", ["host", "cortex-m4", "riscv32"])
def test_pruned_model_is_bit_exact(board, tmp_path):
    from buildtool.firmware import runner

    if not all(shutil.which(t) for t in needs.get(board, ())):
        pytest.skip(f"{board} toolchain not installed")
    g = _model()
    x = np.random.default_rng(11).integers(-128, 128, size=(1, 12, 12, 8), dtype=np.int8)
    want = tflm_run(serialize(g), [x])[0]
    pipeline.build(g, board, tmp_path / "b")
    src = (tmp_path / "b" / "model.c").read_text()
    assert src.count("_spread(int8_t *o)") == 3 and src.count("i++, o += 37)") == 2  # two of them views
    got = np.asarray(runner.run(board, tmp_path / "b", x)[0])
    assert got.tobytes() == np.asarray(want).tobytes()


def _spread_model():
    """12x12x8 -> conv 3x3 to 24 (9 zero rows: 144 pixels) -> conv 3x3 stride 4 to 16 -> 1x1 to 256 of 3x3 pixels (236
    zero rows, outputs of a few values: the commonest filled first, the others and those among the first 20 channels
    stored) -> 1x1 to 8."""
    b = GraphBuilder("spread", seed=6)
    y = b.conv2d(b.input((1, 12, 12, 8)), 24, k=3)
    y = b.conv2d(b.conv2d(y, 16, k=3, stride=4), 256, k=1)
    g = b.finish([b.conv2d(y, 8, k=1, activation="NONE")])
    _prune(g, _conv(g, 0), [0, 3, 4, 5, 11, 12, 17, 22, 23])
    dead = [r for r in range(256) if r % 13 != 5]
    _prune(g, _conv(g, 2), dead, {**{r: 0 for r in dead}, dead[0]: BIG, dead[1]: -BIG, dead[7]: 9, dead[30]: -BIG})
    assert [weight_order.live_rows(g, _conv(g, k)).live for k in (0, 2)] == [15, 20]
    return g


@pytest.mark.parametrize("board", ["host", "cortex-m4", "riscv32"])
@pytest.mark.parametrize("form", ["table", "straight"])
def test_spreads_from_tables_and_straight_are_bit_exact(board, form, tmp_path, monkeypatch):
    """Every rows-live layer's spread from its table (templates/spread_rows.c.in's loop: runs of word and byte moves,
    fill-first and plain forms, words and bytes of the fill value and of others, an all-zero layer's fill alone,
    pixels in fours and the rest, the concat's views of pixel stride 37) or as straight code: TFLite Micro's bytes."""
    from buildtool.codegen import model_c
    from buildtool.firmware import runner

    if not all(shutil.which(t) for t in needs.get(board, ())):
        pytest.skip(f"{board} toolchain not installed")
    monkeypatch.setattr(model_c, "SPREAD_FORCED", form)
    for name, g, shape, spreads in (("pruned", _model(), (1, 12, 12, 8), 3), ("spread", _spread_model(), (1, 12, 12, 8), 2)):
        x = np.random.default_rng(13).integers(-128, 128, size=shape, dtype=np.int8)
        want = tflm_run(serialize(g), [x])[0]
        pipeline.build(g, board, tmp_path / name)
        src = (tmp_path / name / "model.c").read_text()
        calls = len(re.findall(r"^  bt_spread_rows\(", src, re.M))
        straight = len(re.findall(r"^static void op\d+_spread\(int8_t \*o\)", src, re.M))
        assert (calls, straight) == ((spreads, 0) if form == "table" else (0, spreads))
        got = np.asarray(runner.run(board, tmp_path / name, x)[0])
        assert got.tobytes() == np.asarray(want).tobytes(), name


def test_spread_table_holds_the_straight_codes_steps():
    """_spread_table's bytes are _spread_form's steps, each the straight code's statement: a run's word and byte
    moves (four bytes a move from its end), the fill value's word and byte stores by their channel alone, the others'
    with their bytes."""
    from buildtool.codegen import model_c

    live = [0, 1, 2, 7, 8, 9, 10, 11, 12, 14]   # outputs 3..8 up 4 (a word and two bytes), 9 up 5 (a byte)
    consts = [(r, -128) for r in (3, 4, 5, 6, 15, 16, 17, 18, 19)] + [(13, 5), (20, 1), (21, 2), (22, 3), (23, 4)]
    form = model_c._spread_form(live, consts, 24, -128)   # fill first: 4 + 4 moves + 3 stores, not 4 + 5: plain
    assert form == (24, [(9, 9, 5), (3, 8, 4)], [(3, (128,) * 4), (13, (5,)), (15, (128,) * 4), (19, (128, 1, 2, 3)),
                                                  (23, (4,))])
    table, counts = model_c._spread_table(form, -128)
    assert counts == (2, 2, 1, 0, 2)
    assert table == [9, 9, 5, 3, 8, 4, 3, 15, 19, 128, 1, 2, 3, 13, 5, 23, 4]
    straight = model_c._straight_spread(form, 24, -128).splitlines()
    assert [ln.strip() for ln in straight] == [
        "o[14] = o[9];", "bt_mv4(o + 9, o + 5);", "o[8] = o[4];", "o[7] = o[3];", "bt_st4(o + 3, 0x80808080u);",
        "o[13] = 5;", "bt_st4(o + 15, 0x80808080u);", "bt_st4(o + 19, 0x03020180u);", "o[23] = 4;"]
    # every third channel live: no four constants run on; with the fill first (channels 8-23, four words) only those
    # among the first 8 channels are stored: 4 + 7 moves + 5 stores, not 7 + 16
    live = list(range(0, 24, 3))
    form = model_c._spread_form(live, [(r, -128) for r in range(24) if r % 3], 24, -128)
    assert form == (8, [(j, j, 2 * j) for j in range(7, 0, -1)], [(r, (128,)) for r in (1, 2, 4, 5, 7)])
    assert model_c._spread_table(form, -128) == ([x for j in range(7, 0, -1) for x in (j, j, 2 * j)] + [1, 2, 4, 5, 7],
                                                (7, 0, 0, 5, 0))


def test_the_code_budget_chooses_the_spreads():
    """Each rows-live layer's spread is an entry of the code budget (code_budget.spread_candidates, its costs measured:
    spread_costs.json): on vww (ops 10-26) optimize_code=size runs every spread from its table (the shared loop and
    the tables: fewer bytes than the straight code), speed as straight code (no cycles added); the plan's rows say so,
    and model.c follows them; a part built for a small instruction cache keeps straight spreads (icache_part)."""
    from buildtool.codegen import code_budget
    from buildtool.codegen.emit import emit_c

    from conftest import SHARED

    spec = SHARED / "models" / "mlperf-tiny" / "vww_96_int8.tflite"
    if not spec.exists():
        pytest.skip("vww_96_int8 not in the shared models")
    g = pipeline.read_model(str(spec)).graph
    plan = plan_memory(g)
    taken = {}
    for preset, table in (("size", True), ("speed", False)):
        src = emit_c(plan, g, "cortex-m4", 16, code=code_budget.CodeGoal(preset))
        rows = [r for r in src.code_plan.rows if r["opcode"] == "spread"]
        assert [r["op"] for r in rows] == list(range(10, 27, 2))
        straight = sum(r["bytes"] for r in rows if r["variant"] != code_budget.SPREAD_LOOP)
        assert all((r["variant"] == code_budget.SPREAD_LOOP) == table for r in rows)
        assert all((r["cycles"] > 0) == table and r["shared"] == table for r in rows)
        calls = re.findall(r"^  (bt_spread_rows|op\d+_spread)\(", src[0], re.M)
        assert calls == [r["variant"] for r in rows]
        taken[preset] = straight or rows[0]["bytes"]   # the straight functions', or the loop's with every table
    assert taken["size"] < taken["speed"]
    src = emit_c(plan, g, "nucleo-l4r5zi", 16, code=code_budget.CodeGoal("size"))
    assert "bt_spread_rows(" not in src[0] and len(re.findall(r"^  op\d+_spread\(", src[0], re.M)) == 9


@pytest.mark.skipif(not all(shutil.which(t) for t in needs["cortex-m4"]), reason="arm toolchain not installed")
def test_fused_plan_reads_plain_copies(tmp_path):
    """A fused plan's tile kernels read a rows-live filter and bias as plain copies in model.c."""
    from buildtool.firmware import runner
    from buildtool.plan.fusion.planner import plan_fused

    g = _model(seed=8)
    plan = plan_fused(g, time_budget=0.3, optimize="ram")
    x = np.random.default_rng(12).integers(-128, 128, size=(1, 12, 12, 8), dtype=np.int8)
    want = tflm_run(serialize(g), [x])[0]
    pipeline.build(g, "cortex-m4", tmp_path / "m", plan=plan)
    src = (tmp_path / "m" / "model.c").read_text()
    assert "_wplain[" in src and "_bplain[" in src
    assert np.asarray(runner.run("cortex-m4", tmp_path / "m", x)[0]).tobytes() == np.asarray(want).tobytes()


def test_fit_estimate_counts_the_live_rows():
    """buildtool fit's cycle estimate (firmware/op_cost.static_cycles) prices a rows-live conv's live MACs."""
    from buildtool.firmware import op_cost
    from buildtool.model.ops import op_macs

    g = _model()
    plan = plan_memory(g)
    lo, hi = op_cost.static_cycles(g, plan, "cortex-m4")
    rates = op_cost.CYCLES_PER_MAC["cortex-m4"]
    want = [0, 0]
    for op in g.operators:
        macs = op_macs(g, op)
        rows = weight_order.live_rows(g, op)
        macs = macs * rows.live // len(rows.rows) if rows else macs
        if macs:
            for side in (0, 1):
                want[side] += macs * rates[op_cost.layer_class(g, op)][side]
    assert (lo, hi) == (round(want[0]), round(want[1]))
    assert weight_order.live_rows(g, _conv(g, 2)).live == 0  # its MACs count nothing
