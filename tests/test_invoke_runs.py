"""model_invoke's glue: a run of consecutive layers calling one kernel is one loop over a table (codegen/model_c.py
_call_runs), bit-exact against TFLite Micro, each layer still its own profile region."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import fixed_input, tflm_run

from buildtool import pipeline
from buildtool.codegen import model_c
from buildtool.firmware import runner
from buildtool.model.writer import serialize
from buildtool.plan.arena.planner import plan_arena
from buildtool.zoo.builder import GraphBuilder


def dense_stack(n: int = 5):
    """n dense layers of one shape in a row (ad01's pattern), then a smaller one."""
    b = GraphBuilder("dense_stack", seed=7)
    x = b.input((1, 32))
    for _ in range(n):
        x = b.fully_connected(x, 32, activation="RELU")
    return b.finish([b.fully_connected(x, 8)])


@pytest.mark.parametrize("board", ["host", "cortex-m4", "riscv32"])
def test_a_run_of_calls_is_one_loop_and_bit_exact(board, tmp_path):
    g = dense_stack()
    plan = plan_arena(g)
    pipeline.build(g, board, tmp_path, plan=plan)
    c = (tmp_path / "model.c").read_text()
    invoke = c[c.index("int model_invoke(void)"):]
    (n,) = re.findall(r"for \(int i = 0; i < (\d+); i\+\+\)", invoke)  # one loop: the five (host: six) dense layers
    assert int(n) >= 5 and invoke.count("BT_PROFILE_BEGIN(") == len(g.operators) - int(n) + 1
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, prof, _ = runner.run(board, tmp_path, x)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])
    assert [o["op"] for o in prof["ops"]] == plan.order and all(o["count"] > 0 for o in prof["ops"])


def test_short_runs_and_other_calls_stay_straight():
    step = ("  /* op {i}: FULLY_CONNECTED -> t{i} */\n  BT_PROFILE_BEGIN({i});\n"
            "  {fn}(&op{i}_p, ((int8_t *)(bt_arena + {a})), ((int8_t *)(bt_arena + {b})));\n  BT_PROFILE_END({i});")
    body = [step.format(i=i, fn="bt_fc", a=64 * i, b=64 * i + 64) for i in range(model_c.CALL_RUN - 1)]
    assert model_c._call_runs(body) == body   # too short
    other = [step.format(i=i, fn="bt_fc" if i % 2 else "bt_sm", a=0, b=64) for i in range(model_c.FN_RUN - 1)]
    assert model_c._call_runs(other) == other  # the kernel changes every layer: too short for a table of kernels
    run = [step.format(i=i, fn="bt_fc", a=70000 * (i % 2), b=70000) for i in range(model_c.CALL_RUN)]
    (loop,) = model_c._call_runs(run)
    assert "uint32_t at[1]" in loop and "bt_fc(r->p, (int8_t *)(bt_arena + r->at[0]), (int8_t *)(bt_arena + 70000))" \
        in loop and "BT_PROFILE_BEGIN(0 + i)" in loop and all(f"op {i}:" in loop for i in range(3))
    gap = run[:1] + [step.format(i=i + 1, fn="bt_fc", a=0, b=64) for i in range(1, model_c.CALL_RUN)]
    assert model_c._call_runs(gap)[0] == gap[0]  # op 0 then op 2: not consecutive, no run across the gap


def test_a_run_of_several_kernels_of_one_signature_is_a_table_of_them():
    step = ("  /* op {i}: CONV_2D -> t{i} */\n  BT_PROFILE_BEGIN({i});\n"
            "  {fn}(&op{i}_p, ((int8_t *)(bt_arena + {a})), 0, ((int8_t *)(bt_arena + {b})), 0, {rows});\n"
            "  BT_PROFILE_END({i});")
    fns = ["bt_dw", "bt_conv", "bt_dw", "bt_conv"]
    body = [step.format(i=i, fn=f, a=64 * (i % 2), b=64 * (1 - i % 2), rows=6 >> (i // 2)) for i, f in enumerate(fns)]
    decls = [f"static const bt_x op{i}_p = {{.a = {i}}};" for i in range(4)] + ["int op1_p_reader = op1_p.a;"]
    (loop,) = model_c._call_runs(body, list(decls))  # one struct type, so one C type: called through one pointer type
    assert "typedef __typeof__(bt_dw) bt_run0_fn;" in loop and "{&op1_p, bt_conv, {64, 0}, {6}}" in loop
    assert "r->fn(r->p, (int8_t *)(bt_arena + r->at[0]), 0, (int8_t *)(bt_arena + r->at[1]), 0, r->a[0]);" in loop
    sig = [body[0], body[1].replace(", 0, 6);", ", 0, 6, 1);")] + body[2:]  # op 1 has another argument
    assert model_c._call_runs(sig, list(decls)) == sig
    two = [f"static const bt_{'xy'[i % 2]} op{i}_p = {{.a = {i}}};" for i in range(4)]  # two struct types: two C types
    assert model_c._call_runs(body, list(two)) == body
    one = [step.format(i=i, fn="bt_dw", a=64 * (i % 2), b=64 * (1 - i % 2), rows=6) for i in range(3)]
    kept = [f"static const bt_x op{i}_p = {{.a = {i}}};" for i in range(3)]  # one type, read by their calls only
    (loop,) = model_c._call_runs(one, kept)
    assert len(kept) == 1 and kept[0].startswith("static const struct bt_run0 { bt_x p; uint16_t at[2]; } bt_run0[3]")
    assert "  {/* op 2 */ {.a = 2}, {0, 64}}" in kept[0] and "bt_dw(&r->p, (int8_t *)(bt_arena + r->at[0]), 0," in loop
