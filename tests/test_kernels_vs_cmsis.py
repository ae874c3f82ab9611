"""benchmarks/kernels_vs_cmsis.py: one line and exit 0 without ../shared; on a shared model every
conv/depthwise/FC layer runs in CMSIS-NN, our cortex-m set and our reference set with byte-identical
outputs, one counted region per call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "kernels_vs_cmsis.py"
sys.path.insert(0, str(ROOT / "benchmarks"))
import kernels_vs_cmsis as kvc  # noqa: E402


def test_without_shared_it_says_so_in_one_line_and_exits_0(tmp_path):
    env = {**os.environ, "BUILDTOOL_SHARED": str(tmp_path / "nowhere"), "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(BENCH)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and "skipped" in lines[0] and str(tmp_path / "nowhere") in lines[0]


@pytest.mark.slow
@pytest.mark.skipif(not (kvc.CMSIS / "Source").is_dir() or not (kvc.SHARED / "models" / "tiny_cnn_32.tflite").is_file()
                    or not kvc.kbuild.tools_present("arm-none-eabi-gcc", "qemu-system-arm") or not kvc.has_newlib(),
                    reason="needs ../shared (CMSIS-NN, tiny_cnn_32), the Arm toolchain with newlib, QEMU")
def test_every_layer_of_a_shared_model_runs_identically_in_all_three(tmp_path):
    from buildtool.model import ops, reader as tflite_reader
    g = tflite_reader.parse((kvc.SHARED / "models" / "tiny_cnn_32.tflite").read_bytes())
    want = [op.index for op in g.operators if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    rows = kvc.measure("tiny_cnn_32", tmp_path / "tiny")
    assert [r["op"].index for r in rows] == want
    assert all(r["identical"] for r in rows)
    assert [r["macs"] for r in rows] == [ops.op_macs(g, g.operators[i]) for i in want]
    # each region counted its whole call: a Cortex-M4 instruction does at most 2 MACs (SMLAD)
    assert all(min(r["cmsis"], r["ours"], r["ref"]) * 2 >= r["macs"] for r in rows)
    assert {r["cls"] for r in rows} <= set(kvc.CLASSES)


def test_a_part_of_another_core_is_refused_with_exit_2():
    r = subprocess.run([sys.executable, str(BENCH), "--board", "cortex-m55", "--mem", "nucleo-l4r5zi"],
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1].endswith("--mem nucleo-l4r5zi is a cortex-m4 part; measure it with "
                                                      "--board cortex-m4")


@pytest.mark.slow
@pytest.mark.skipif(not (kvc.CMSIS / "Source").is_dir() or not (kvc.SHARED / "models" / "tiny_cnn_32.tflite").is_file()
                    or not kvc.kbuild.tools_present("arm-none-eabi-gcc", "qemu-system-arm") or not kvc.has_newlib(),
                    reason="needs ../shared (CMSIS-NN, tiny_cnn_32), the Arm toolchain with newlib, QEMU")
def test_under_a_parts_memory_model_each_call_costs_its_zero_wait_estimate_plus_stalls(tmp_path):
    """--mem nucleo-l4r5zi: the same calls, byte-identical, priced as modelled cycles; code and weights in
    flash at 5 wait states stall every kernel, so each modelled figure is at least its zero-wait high and the
    layers' sum above it; our set is built with the part's BT_ICACHE_BYTES."""
    kvc.use_memory_model("nucleo-l4r5zi")
    try:
        assert kvc.MEM_DEFINES == ("BT_ICACHE_BYTES=1024",)
        rows = kvc.measure("tiny_cnn_32", tmp_path / "tiny")
    finally:
        kvc.use_memory_model(None)
    assert rows and all(r["identical"] for r in rows)
    for who in ("cmsis", "ours", "ref"):
        assert all(r[who] >= r[f"{who}_zw"] > 0 for r in rows), who
        assert sum(r[who] for r in rows) > sum(r[f"{who}_zw"] for r in rows), who
    # ours is the part's firmware for every layer (each fits the part), not the
    # bench image's run-time variants
    assert not any(r["fallback"] for r in rows) and all(r["runtime"] != r["ours"] for r in rows)
    # CMSIS-NN's multipliers and shifts where TFLite Micro's Prepare leaves them, in SRAM; ours in flash
    elf, nm = tmp_path / "tiny" / "bench.elf", "arm-none-eabi-nm"
    ram = int(kvc.kbuild.ARM_BOARDS["cortex-m4"][3], 16)
    for k in range(len(rows)):
        assert int(kvc.kbuild.symbol(elf, f"cm{k}", nm), 16) >= ram > int(kvc.kbuild.symbol(elf, f"m{k}", nm), 16)


@pytest.mark.slow
@pytest.mark.skipif(not (kvc.SHARED / "models" / "dscnn_kws.tflite").is_file()
                    or not kvc.kbuild.tools_present("arm-none-eabi-gcc", "qemu-system-arm"),
                    reason="needs ../shared (dscnn_kws), the Arm toolchain, QEMU")
def test_a_layer_built_alone_runs_as_in_the_whole_models_firmware(tmp_path):
    """--mem's ours where the whole model's firmware does not fit: each layer built alone for the part calls the
    kernel the whole model's model.c calls for it (own instance, variant), stages what the whole model stages
    and executes the same instruction mix (its zero-wait estimate within 1 %; the input differs). Its stalls
    may differ: the code links at other addresses (dscnn_kws's first depthwise: 40.6 K against 18.0 K)."""
    import re

    import numpy as np
    from buildtool import pipeline
    from buildtool.firmware import cycles, runner
    from buildtool.model import reader as tflite_reader
    g = tflite_reader.parse((kvc.SHARED / "models" / "dscnn_kws.tflite").read_bytes())
    pipeline.build(g, "nucleo-l4r5zi", tmp_path / "whole", say=lambda line: None)
    x = np.random.default_rng(0).integers(-128, 128, g.tensors[g.inputs[0]].shape).astype(np.int8)
    _, prof, _ = runner.run("nucleo-l4r5zi", tmp_path / "whole", x)
    whole = {o["op"]: cycles.estimate(o["mix"], cpu="cortex-m4")[1] for o in prof["ops"]}
    src = (tmp_path / "whole" / "model.c").read_text()
    staged = set(json.loads((tmp_path / "whole" / "firmware.json").read_text())["staged"]["layers"])

    def call(text, op):   # the line model_invoke runs for op, its operator number taken out
        body = text[text.index("int model_invoke(void)"):]
        line = re.search(rf"BT_PROFILE_BEGIN\({op}\);\n\s*(.*)\n", body).group(1)
        return re.sub(r"op\d+_", "op_", line.split("(")[0])

    kvc.use_memory_model("nucleo-l4r5zi")
    try:
        for op in (0, 1, 2, 10):   # the stem, a depthwise, a 1x1, the dense layer
            r = kvc.product(g, g.operators[op], op, tmp_path, inplace=False)
            assert r["identical"] and r["staged"] == (op in staged), op
            assert call((tmp_path / f"product{op}" / "model.c").read_text(), 0) == call(src, op)
            assert abs(r["zw"] - whole[op]) <= 0.01 * whole[op], (op, r["zw"], whole[op])
    finally:
        kvc.use_memory_model(None)


@pytest.mark.skipif(not (kvc.SHARED / "models" / "tiny_cnn_32.tflite").is_file(), reason="needs ../shared (tiny_cnn_32)")
def test_an_fc_layer_model_c_runs_interleaved_is_measured_on_the_interleaved_weights():
    """On the cortex-m set a FULLY_CONNECTED that model.c runs on interleaved weights is timed as model.c calls
    it: bt_fully_connected_s8_il on the weights in plan/weight_order.py's order (the bytes the image holds);
    the cortex-m55 set, which has no such order, keeps the dispatcher on the TFLite order."""
    import re

    import numpy as np
    from buildtool.model import reader as tflite_reader
    from buildtool.plan import weight_order
    g = tflite_reader.parse((kvc.SHARED / "models" / "tiny_cnn_32.tflite").read_bytes())
    op = next(op for op in g.operators if op.opcode == "FULLY_CONNECTED")
    assert weight_order.fc_il_ok(g, op)
    w = g.tensors[op.inputs[1]].data.astype(np.int8)
    blob = kvc.Blob()
    decl, body, _, _ = kvc.fc_layer(g, op, 4, blob)
    assert "bt_fully_connected_s8_il(&q4, g_in, g_opt);" in body and "; bt_fully_connected_s8(&p4" not in body
    off = int(re.search(r"static const bt_fc_params q4 = \{[^}]*bench_blob \+ (\d+)\)", decl).group(1))
    assert bytes(blob.data[off:off + w.size]) == weight_order.fc_interleave(w).tobytes() != w.tobytes()
    kvc.use_board("cortex-m55")
    try:
        decl, body, _, _ = kvc.fc_layer(g, op, 4, kvc.Blob())
    finally:
        kvc.use_board("cortex-m4")
    assert "; bt_fully_connected_s8(&p4, g_in, g_opt);" in body and "q4" not in decl


def test_our_floor_is_our_zero_wait_cycles_plus_the_single_passs_wait_states(capsys):
    """--mem's "our floor / CMSIS-NN": a layer's zero-wait high plus the wait states of reading its flash bytes
    once (each 64-bit read of nucleo-l4r5zi's flash waits 5 cycles; the read's own cycle is the load's, so the
    flash floor is one cycle a read more), over CMSIS-NN's modelled cycles, in the column the header names."""
    kvc.use_memory_model("nucleo-l4r5zi")
    try:
        # mbv2_w035_144's 1280 -> 1000: 1,280,000 B of weights and 4,000 B of bias, 160,500 reads
        assert kvc.single_pass_stalls(1_284_000) == 160_500 * 5
        assert kvc.single_pass_stalls(1001) == 126 * 5 == kvc.MEM.stream_floor(1001) - 126
        row = dict(macs=1_280_000, cmsis=4_000_000, ours=2_500_000, ref=0, cmsis_zw=3_000_000,
                   ours_zw=1_600_000, runtime=2_600_000, floor=960_000, stalls=800_000, identical=True,
                   fallback=False, cls=kvc.CLASSES[4], label="op 1 FC 1280 -> 1000")
        kvc.table("m", [row], per_layer=False)
    finally:
        kvc.use_memory_model(None)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = [c.strip() for c in lines[-1].strip("|").split("|")]
    assert len(cells) == len(head) and cells[0] == "**total**"
    assert cells[head.index("our floor / CMSIS-NN")] == "0.600"   # (1.6 M + 0.8 M) / 4 M
    assert cells[head.index("floor / CMSIS-NN")] == "0.240" and cells[head.index("ours / CMSIS-NN")] == "0.625"


def test_ops_takes_operator_indices_and_refuses_other_words_with_exit_2():
    r = subprocess.run([sys.executable, str(BENCH), "--ops", "3,x"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1].endswith("--ops takes operator indices separated by commas, not '3,x'")


@pytest.mark.skipif(not (kvc.SHARED / "models" / "tiny_cnn_32.tflite").is_file(), reason="needs ../shared (tiny_cnn_32)")
def test_ops_measures_only_the_named_layers(tmp_path, monkeypatch):
    """--ops I,J: the bench image holds only those operators' layers (each once, in the model's order); an index of
    no conv, depthwise or FC layer adds none."""
    from buildtool.model import reader as tflite_reader
    g = tflite_reader.parse((kvc.SHARED / "models" / "tiny_cnn_32.tflite").read_bytes())
    every = [op.index for op in g.operators if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    other = next(op.index for op in g.operators if op.index not in every)
    pick = [every[-1], every[0]]
    monkeypatch.setattr(kvc, "OPS", frozenset(pick + [other]))
    layers, c, _ = kvc.generate(g, tmp_path)
    assert [op.index for _, op in layers] == sorted(pick) and [k for k, _ in layers] == [0, 1]
    assert c.read_text().count("static void layer") == 2
