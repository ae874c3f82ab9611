"""Weights staged in SRAM (plan/staging.py, firmware/staging.py): a conv layer's filter and bias copied from flash
on the part whose memory model code generation builds for (nucleo-l4r5zi): a firmware's into bt_staging in the part's
spare SRAM, each layer's bytes its own, copied once by model_init; what bt_staging cannot hold (and a library's, which
has no spare SRAM) before the layer runs into arena bytes no buffer uses at that step; the independent checker holds
the spans to the live buffers and to each other; the firmware stays byte-identical to TFLite Micro and its staged
layers stall less."""

import dataclasses
import json

import numpy as np
import pytest
from conftest import fixed_input, tflm_run

from buildtool import pipeline, targets
from buildtool.firmware import memory_model, runner, staging
from buildtool.units import exact, kib
from buildtool.model.writer import serialize
from buildtool.plan import align_up
from buildtool.plan.arena import checker
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.staging import free_spans, stage
from buildtool.zoo.builder import GraphBuilder

L4 = "nucleo-l4r5zi"


def _net():
    """Two 3x3 layers whose filters (2,304 B and 9,216 B) pass the 256-byte data cache: the first's input and
    output leave arena bytes free at its step, the second's (16 KiB live of a 16 KiB arena) none; then a
    1x1 layer (256 B of filter and 32 of bias: over the data cache too)."""
    b = GraphBuilder("staged", seed=5, calib_batch=2)
    x = b.input((1, 16, 16, 8))
    h = b.conv2d(x, 32, 3, activation="RELU")
    h = b.conv2d(h, 32, 3, activation="RELU")
    h = b.conv2d(h, 8, 1, activation="RELU")
    b.fully_connected(b.mean(h), 10)
    return b.finish()


def _live_mask(plan, step: int) -> np.ndarray:
    """Arena bytes a buffer live at step uses (aligned), counted byte by byte."""
    m = np.zeros(plan.arena_bytes, bool)
    for b in plan.buffers:
        if b.first_step <= step <= b.last_step:
            m[b.offset:b.offset + align_up(b.size, plan.align)] = True
    return m


def _per_step(g, plan, t):
    """The plan staged a layer at a time (the arena's free bytes first, then bt_staging shared by the steps): what
    a firmware's layers get when bt_staging cannot hold them all."""
    return stage(plan, staging.candidates(g, plan, staging.model_for(t)), staging.spare_ram(t, plan))


def test_staged_spans_lie_in_bytes_free_at_their_step():
    """Staged a layer at a time on nucleo-l4r5zi, all three layers are (filter and bias), the first and the 1x1 in
    the arena's free bytes (none of them used by a buffer live at its step, counted byte by byte), the second, with
    no free bytes at its step, in bt_staging; the arena's size is the plan's; the checker accepts the plan."""
    g = _net()
    plan = plan_arena(g)
    t = targets.get(L4)
    staged = _per_step(g, plan, t)
    assert staged.arena_bytes == plan.arena_bytes and staged.buffers == plan.buffers
    convs = [op.index for op in g.operators if op.opcode == "CONV_2D"]
    by_op = {}
    for d in staged.staged:
        by_op.setdefault(d["op"], []).append(d)
    assert sorted(by_op) == convs
    first, second, third = (by_op[c] for c in convs)
    assert [d["tensor"] for d in first] == [g.operators[convs[0]].inputs[1], g.operators[convs[0]].inputs[2]]
    assert not any(d["spare"] or d.get("once") for d in first + third) and all(d["spare"] for d in second)
    for d in first + third:
        assert not _live_mask(plan, d["step"])[d["offset"]:d["offset"] + align_up(d["size"], plan.align)].any()
    assert free_spans(plan, second[0]["step"]) == [] and staged.staging_bytes == sum(
        align_up(d["size"], plan.align) for d in second)
    assert checker.problems(g, staged) == []
    assert staging.summary(staged)["staged"] == {"layers": convs, "tensors": 6, "arena_layers": [convs[0], convs[2]],
                                                 "arena_bytes": 2304 + 128, "spare_bytes": staged.staging_bytes}
    # the plan's JSON holds them and reads back the same
    back = type(plan).from_json(json.loads(json.dumps(staged.to_json(g))))
    assert back.staged == staged.staged and back.staging_bytes == staged.staging_bytes
    # without spare SRAM (a library's: buildtool export) the second layer stays in flash
    alone = staging.staged_plan(g, plan, t, spare=False)
    assert {d["op"] for d in alone.staged} == {convs[0], convs[2]} and alone.staging_bytes == 0
    assert not any(d["spare"] for d in alone.staged)


def test_a_firmware_stages_each_layer_once_in_bytes_of_its_own():
    """A firmware's plan (spare SRAM its own): every staged layer in bt_staging, copied once ("once"), each tensor
    at bytes no other staged tensor of any step shares, most cycles saved first (the second 3x3's 9 KiB, then the
    first's, then the 1x1's), then the dense layer's 80 B of weights and 40 of bias (read once an inference),
    bt_staging their sum; the arena untouched; the checker accepts it."""
    g = _net()
    plan = plan_arena(g)
    staged = staging.staged_plan(g, plan, targets.get(L4))
    convs = [op.index for op in g.operators if op.opcode == "CONV_2D"]
    fc = next(op.index for op in g.operators if op.opcode == "FULLY_CONNECTED")
    assert staged.arena_bytes == plan.arena_bytes and staged.buffers == plan.buffers
    assert all(d["spare"] and d["once"] for d in staged.staged)
    assert [d["op"] for d in staged.staged] == [convs[1], convs[1], convs[0], convs[0], convs[2], convs[2], fc, fc]
    spans = sorted((d["offset"], d["offset"] + align_up(d["size"], plan.align)) for d in staged.staged)
    assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert staged.staging_bytes == spans[-1][1] == sum(align_up(n, plan.align)
                                                       for n in (9216, 128, 2304, 128, 256, 32, 80, 40))
    assert checker.problems(g, staged) == []


def _dense_net():
    """Dense layers as ad01 has them: 64 -> 256 (16 KiB of weights), 256 -> 256 (64 KiB) and 256 -> 8 (2 KiB)."""
    b = GraphBuilder("staged-dense", seed=6, calib_batch=2)
    h = b.fully_connected(b.input((1, 64)), 256, activation="RELU")
    h = b.fully_connected(h, 256, activation="RELU")
    b.fully_connected(h, 8)
    return b.finish()


def test_dense_layers_are_staged_once_or_not_at_all():
    """A dense layer reads its weights once an inference, so a copy per inference saves nothing: its weights and
    bias go into bt_staging, copied once (each read's wait states saved: once_gain, the 64-bit reads' count times 5 on
    nucleo-l4r5zi), most saved first, a layer bt_staging cannot hold passed over for the next; never into the
    arena, and not at all for a library (no spare SRAM)."""
    g = _dense_net()
    plan = plan_arena(g)
    t = targets.get(L4)
    fcs = [op.index for op in g.operators]
    mm = staging.model_for(t)
    assert staging.once_gain(mm, 65536 + 1024, 1) == (65536 + 1024) // 8 * 5 == 41600
    want = staging.once_candidates(g, plan, mm)
    assert [c[0] for c in want] == [fcs[1], fcs[0], fcs[2]]
    assert [c[3] for c in want] == [[65536, 1024], [16384, 1024], [2048, 32]]
    staged = staging.staged_plan(g, plan, t)
    assert [d["op"] for d in staged.staged] == [fcs[1], fcs[1], fcs[0], fcs[0], fcs[2], fcs[2]]
    assert all(d["spare"] and d["once"] for d in staged.staged) and staged.arena_bytes == plan.arena_bytes
    assert staged.staging_bytes == 65536 + 1024 + 16384 + 1024 + 2048 + 32 and checker.problems(g, staged) == []
    # bt_staging of 20 KiB: the 64 KiB layer passed over, the other two staged; none in the arena
    small = staging.stage_once(plan, want, 20 << 10)
    assert [d["op"] for d in small.staged] == [fcs[0], fcs[0], fcs[2], fcs[2]] and all(d["once"] for d in small.staged)
    assert small.staging_bytes == 16384 + 1024 + 2048 + 32 and checker.problems(g, small) == []
    assert staging.stage_once(plan, want, 1024).staged == []
    assert staging.staged_plan(g, plan, t, spare=False).staged == []


def test_ad01_stages_what_the_part_has_spare():
    """ad01 on nucleo-l4r5zi: its dense layers staged once within the SRAM the part (640 KiB, never the 4 MiB of
    the machine its image runs on) leaves over the arena, the stack and STATIC_RESERVE: all ten. With 192 KiB (the
    part's code on an STM32F405's machine, as it once ran) the two 80 KiB layers and the two small ones, the six
    128 -> 128 layers (16.5 KiB each) passed over: what does not fit stays in flash."""
    from conftest import SHARED_MODELS

    from buildtool.steps.models import read_model

    g = read_model(str(SHARED_MODELS / "mlperf-tiny" / "ad01_int8.tflite")).graph
    plan = plan_arena(g)
    t = targets.get(L4)
    staged = staging.staged_plan(g, plan, t)
    assert staged.staging_bytes <= staging.spare_ram(t, plan) == (640 << 10) - plan.arena_bytes - t.stack_bytes \
        - staging.STATIC_RESERVE
    dense = [op for op in g.operators if op.opcode == "FULLY_CONNECTED"]
    assert {d["op"] for d in staged.staged} == {op.index for op in dense} and checker.problems(g, staged) == []
    assert staged.staging_bytes == sum(align_up(g.tensors[i].nbytes, plan.align) for op in dense for i in op.inputs[1:]
                                       if i >= 0)
    small = staging.staged_plan(g, plan, dataclasses.replace(t, ram_bytes=192 << 10))
    big = {op.index for op in g.operators if g.tensors[op.inputs[1]].nbytes == 81920}
    little = {op.index for op in g.operators if g.tensors[op.inputs[1]].nbytes == 1024}
    assert {d["op"] for d in small.staged} == big | little and checker.problems(g, small) == []


def _small_net():
    """A depthwise 3x3 over 16 channels (144 B of filter, 64 of bias: within the 256-byte data cache) and a 1x1
    layer of 16 -> 8 (128 B and 32 B): neither re-reads weights the data cache does not hold, so a copy before
    each inference does not pay (staging_gain <= 0), but each reads its weights from flash once a call."""
    b = GraphBuilder("staged-small", seed=7, calib_batch=2)
    h = b.depthwise(b.input((1, 12, 12, 16)), 3, activation="RELU")
    b.conv2d(h, 8, 1, activation="RELU")
    return b.finish()


def test_a_firmware_stages_once_what_a_copy_an_inference_would_not_pay():
    """Copied once by model_init, a layer's weights cost no cycles an inference: a firmware stages the depthwise and
    the 1x1 layer of _small_net (each read's wait states on the first pass saved, weights within the data cache:
    once_gain, worked here by hand), a library (no spare SRAM, copies before each inference) neither."""
    g = _small_net()
    plan = plan_arena(g)
    t = targets.get(L4)
    mm = staging.model_for(t)
    dw, pw = (op.index for op in g.operators)
    assert staging.candidates(g, plan, mm) == []  # a copy an inference: its reads cost what it saves
    # 144 + 64 B: 26 reads of 8 B at 5 wait states; 128 + 32 B: 20 reads
    assert [(c[0], sum(c[3])) for c in staging.once_candidates(g, plan, mm)] == [(dw, 208), (pw, 160)]
    assert staging.once_gain(mm, 208, 12) == 26 * 5 and staging.once_gain(mm, 160, 36) == 20 * 5
    assert staging.once_gain(mm, 512, 12) == 12 * 64 * 5  # over the data cache: every pass misses
    staged = staging.staged_plan(g, plan, t)
    assert [d["op"] for d in staged.staged] == [dw, dw, pw, pw] and all(d["once"] for d in staged.staged)
    assert checker.problems(g, staged) == []
    assert staging.staged_plan(g, plan, t, spare=False).staged == []


def _with_and_without_staging(g, tmp_path, monkeypatch):
    """g's firmware for nucleo-l4r5zi with staging, then the same part without (its model not tuned), each run
    byte-identical to TFLite Micro: yields (staged, out dir, build paths, profile, ram) for each."""
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    want = tflm_run(serialize(g), [x])[0]
    for staged in (True, False):
        if not staged:
            monkeypatch.setitem(memory_model.MODELS, L4, dataclasses.replace(memory_model.MODELS[L4], tuned=False))
        out = tmp_path / str(staged)
        paths = pipeline.build(g, L4, out)
        y, prof, ram = runner.run(L4, out, x, timeout=600)
        assert np.array_equal(y, want), staged
        yield staged, out, paths, prof, ram


@pytest.mark.slow
def test_depthwise_staged_once_runs_byte_exact_and_stalls_less(tmp_path, monkeypatch):
    """_small_net's firmware on nucleo-l4r5zi: its depthwise and 1x1 weights read from bt_staging (copied in
    model_init only) give TFLite Micro's bytes, and each layer's load stalls are below the same build's without
    staging."""
    g = _small_net()
    stalls = {}
    for staged, out, _, prof, _ in _with_and_without_staging(g, tmp_path, monkeypatch):
        stalls[staged] = {o["op"]: o["memory_stalls"]["load_stalls"] for o in prof["ops"]}
        init, invoke = (out / "model.c").read_text().split("int model_invoke(void)")
        assert init.count("bt_stage_copy(bt_staging") == (4 if staged else 0) and "bt_stage_copy(" not in invoke
    assert all(stalls[True][op.index] < stalls[False][op.index] for op in g.operators), stalls


def test_checker_refuses_a_staged_span_over_a_live_tensor():
    """The independent checker: a staged span moved onto a buffer live at its step, past the arena, onto
    another staged span of its step, at another step, or naming an activation is a problem each."""
    g = _net()
    plan = _per_step(g, plan_arena(g), targets.get(L4))
    d = next(d for d in plan.staged if not d["spare"])
    live = next(b for b in plan.buffers if b.first_step <= d["step"] <= b.last_step)

    def with_entry(**change):
        return dataclasses.replace(plan, staged=[dict(x, **change) if x is d else x for x in plan.staged])

    assert any("with buffer" in e for e in checker.problems(g, with_entry(offset=live.offset)))
    assert any("inside the arena" in e for e in checker.problems(g, with_entry(offset=plan.arena_bytes)))
    other = next(x for x in plan.staged if x is not d and x["step"] == d["step"])
    assert any("with staged tensor" in e for e in checker.problems(g, with_entry(offset=other["offset"])))
    assert any("not the operator's" in e for e in checker.problems(g, with_entry(step=d["step"] + 1)))
    act = g.operators[d["op"]].inputs[0]
    assert any("not a constant" in e for e in checker.problems(g, with_entry(tensor=act)))
    # copied once: its bt_staging bytes are its own at every step, and never the arena's
    once = staging.staged_plan(g, plan_arena(g), targets.get(L4))
    a, b = once.staged[0], next(x for x in once.staged if x["step"] != once.staged[0]["step"])

    def moved(**change):
        return dataclasses.replace(once, staged=[dict(x, **change) if x is b else x for x in once.staged])

    assert checker.problems(g, once) == []
    assert any("with staged tensor" in e for e in checker.problems(g, moved(offset=a["offset"])))
    assert any("copied once but in the arena" in e for e in checker.problems(g, moved(spare=False)))


def test_only_the_part_built_for_its_memory_model_stages():
    """Every other board (those with a memory model of their part included) gets the plan unchanged."""
    g = _net()
    plan = plan_arena(g)
    tuned = [name for name, m in memory_model.MODELS.items() if m.tuned]
    assert tuned == [L4]
    for name, t in targets.boards().items():
        got = staging.staged_plan(g, plan, t)
        assert bool(got.staged) == (name == L4), name
        if name != L4:
            assert got == plan


@pytest.mark.slow
def test_staged_firmware_on_the_record_board(tmp_path, monkeypatch):
    """nucleo-l4r5zi's firmware with the 3x3 layers' weights staged: byte-identical to TFLite Micro; plan.json,
    firmware.json and the RAM lines show the staging; against the same part without staging each staged
    layer's load stalls and modelled cycles are lower and the arena the same."""
    g = _net()
    runs = {}
    for staged, out, paths, prof, ram in _with_and_without_staging(g, tmp_path, monkeypatch):
        man = json.loads((out / "firmware.json").read_text())
        runs[staged] = ({o["op"]: o for o in prof["ops"]}, ram, man, json.loads((out / "plan.json").read_text()))
        line = runner.memory_summary(targets.get(L4), paths["elf"], man["arena_bytes"], man.get("staged"))
        report = runner.format_report(prof, ram)
        if staged:
            spare = runs[True][3]["staging_bytes"]
            init, invoke = (out / "model.c").read_text().split("int model_invoke(void)")
            # copied once, by model_init: no copy in the inference
            assert init.split("int model_init(void)")[1].count("bt_stage_copy(") == 8 and "bt_stage_copy" not in invoke
            assert man["staged"]["spare_bytes"] == spare > 0 and ram["staged_bytes"] == spare
            assert man["staged"]["arena_layers"] == [] and "(weights of" not in line
            assert f" + staged weights {kib(spare)} + stack " in line
            assert f"RAM: arena {exact(man['arena_bytes'])} + staged weights {exact(spare)} + stack " in report
        else:
            assert "staged" not in man and "staged" not in runs[False][3] and "staged" not in line
    on, off = runs[True][0], runs[False][0]
    assert runs[True][2]["arena_bytes"] == runs[False][2]["arena_bytes"]
    for op in man_ops(runs[True][2]):
        assert on[op]["memory_stalls"]["load_stalls"] < off[op]["memory_stalls"]["load_stalls"], op
        assert on[op]["modelled_cycles"] < off[op]["modelled_cycles"], op


def man_ops(man: dict) -> list:
    return man["staged"]["layers"]


def test_model_c_declares_bt_staging_before_any_struct_points_at_it():
    """model.c: bt_staging and the copy function come before the first parameter struct that reads a copy (the
    first staged layer in bt_staging, none in the arena, was once declared after its own struct)."""
    from buildtool.codegen.emit import emit_c

    g = _net()
    full = _per_step(g, plan_arena(g), targets.get(L4))
    plan = dataclasses.replace(full, staged=[d for d in full.staged if d["spare"]])
    assert plan.staged and checker.problems(g, plan) == []
    c, _ = emit_c(plan, g, L4, targets.get(L4).weights_align)
    assert c.index(f"int8_t bt_staging[{plan.staging_bytes}]") < c.index("bt_staging + ") \
        < c.index("bt_stage_copy(bt_staging + ")
    # copied once: the array and the copy function before model_init, which copies; the inference copies none
    once = staging.staged_plan(g, plan_arena(g), targets.get(L4))
    c, _ = emit_c(once, g, L4, targets.get(L4).weights_align)
    assert c.index(f"int8_t bt_staging[{once.staging_bytes}]") < c.index("void bt_stage_copy(") \
        < c.index("int model_init(void)") < c.index("bt_stage_copy(bt_staging + ") < c.index("int model_invoke(void)")
    assert "bt_stage_copy(" not in c.split("int model_invoke(void)")[1]


def test_report_maps_the_staged_copies_at_their_step():
    """buildtool report's arena map (report/arena_map.boxes): each copy staged in the arena a box of kind "staged"
    at its offset, live at its layer's step only; bt_staging's are not in the arena and not drawn there."""
    from buildtool.report import arena_map

    g = _net()
    plan = _per_step(g, plan_arena(g), targets.get(L4))
    got = sorted((b.offset, b.size, b.first, b.last) for b in arena_map.boxes(g, plan) if b.kind == "staged")
    assert got == sorted((d["offset"], d["size"], d["step"], d["step"]) for d in plan.staged if not d["spare"])
    assert got and len(got) < len(plan.staged)


def test_staging_ram_caps_the_spare_sram_and_leaves_the_arena_free_bytes():
    """The staging_ram option (--staging-ram, staging_ram= in SCons, CMake and Bazel): ad01's dense layers staged once
    within the cap, most gain first (once_candidates' order; a layer over what is left passed over); 0 stages
    nothing in spare SRAM; a cap over the part's spare SRAM changes nothing."""
    from conftest import SHARED_MODELS

    from buildtool.steps.models import read_model

    g = read_model(str(SHARED_MODELS / "mlperf-tiny" / "ad01_int8.tflite")).graph
    plan = plan_arena(g)
    t = targets.get(L4)
    full = staging.staged_plan(g, plan, t)
    assert staging.staged_plan(g, plan, t, cap=1 << 30) == full
    assert not any(d["spare"] for d in staging.staged_plan(g, plan, t, cap=0).staged)
    cap = 100_000
    capped = staging.staged_plan(g, plan, t, cap=cap)
    order = [c[0] for c in staging.once_candidates(g, plan, staging.model_for(t))]  # most gain first
    want, end = set(), 0  # the greedy fill worked out from the tensors' sizes alone
    for op in order:
        need = end + sum(align_up(g.tensors[i].nbytes, plan.align) for i in g.operators[op].inputs[1:] if i >= 0)
        if need <= cap:
            want.add(op)
            end = need
    assert 0 < len(want) < len(order)
    assert {d["op"] for d in capped.staged} == want and capped.staging_bytes == end <= cap
    assert checker.problems(g, capped) == []


def test_staging_ram_reaches_the_code_step(tmp_path):
    """`buildtool gen code ... --opt staging_ram=8KiB` for nucleo-l4r5zi: firmware.json's spare bytes within 8 KiB and
    fewer than the default's; a bad value is one line naming the option."""
    import subprocess
    import sys

    g = _net()
    model = tmp_path / "net.tflite"
    model.write_bytes(serialize(g))

    def gen(*args):
        return subprocess.run([sys.executable, "-m", "buildtool.cli", "gen", *map(str, args), "--no-daemon"],
                              capture_output=True, text=True)

    sk, pl = tmp_path / "skeleton.json", tmp_path / "plan.json"
    assert gen("skeleton", model, "-o", sk).returncode == 0
    assert gen("plan", sk, "-o", pl, "--board", L4).returncode == 0
    spare = {}
    for opt in (None, "staging_ram=8KiB"):
        out = tmp_path / str(opt)
        r = gen("code", sk, pl, "-o", out, "--board", L4, *(["--opt", opt] if opt else []))
        assert r.returncode == 0, r.stderr
        man = json.loads((out / "firmware.json").read_text())
        spare[opt] = man.get("staged", {}).get("spare_bytes", 0)
    assert 0 < spare["staging_ram=8KiB"] <= 8192 < spare[None]
    r = gen("code", sk, pl, "-o", tmp_path / "bad", "--board", L4, "--opt", "staging_ram=lots")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "staging_ram" in r.stderr, r.stderr
