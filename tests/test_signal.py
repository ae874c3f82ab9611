"""TFLite Micro's signal library (WINDOW, RFFT, ENERGY, FILTER_BANK, FILTER_BANK_SQUARE_ROOT, FILTER_BANK_LOG,
PCAN, FILTER_BANK_SPECTRAL_SUBTRACTION, FRAMER, STACKER, DELAY, OVERLAP_ADD, IRFFT, FFT_AUTO_SCALE; the state of
the stateful ones kept across invocations) as custom operators: read and written by custom_code with flexbuffer options, refused by name when
unknown, and byte-identical to TFLite Micro in the numpy executor and in host and Cortex-M4 firmware (the
one-operator cases per type: tests/test_executor.py with tests/opgen_signal.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import SHARED_MODELS, tflm_run
from opgen_signal import (SIGNAL_GENERATORS, as_read, framer_model, frontend, frontend_inputs, gen_rfft, graph,
                          signal_input, stacker_model)
from test_firmware import need
from test_ops_extra import inplace_plan, merge
from test_stateful import tflm_sequence

from buildtool import pipeline
from buildtool.errors import ModelError, PlanError
from buildtool.options import PlanOptions
from buildtool.firmware import runner
from buildtool.model import opdefs
from buildtool.model.reader import parse
from buildtool.model.writer import save, serialize
from buildtool.plan.arena import checker
from buildtool.plan.arena.execute import run, run_sequence, run_unplanned
from buildtool.plan.arena.planner import plan_arena
from buildtool.refops.signal import fft_twiddles, rfft_frame


def test_signal_operators_read_and_write_as_custom_operators():
    """Each is written as CUSTOM with its TFLite Micro custom_code and read back by name, options intact; the
    file is a fixed point of read and write."""
    rng = np.random.default_rng(0)
    for opcode, gen in SIGNAL_GENERATORS.items():
        g = gen(rng)
        data = serialize(g)
        custom = opdefs.BY_NAME[opcode].custom
        assert custom.encode() in data
        back = parse(data)
        assert [op.opcode for op in back.operators] == [opcode]
        assert back.operators[0].options == g.operators[0].options
        assert serialize(back) == data


def test_unknown_or_not_built_custom_operators_are_refused_in_one_line():
    data = serialize(frontend())
    for code in (b"SignalWindoX", b"MyAudioOpXYZ"):  # as long as SignalWindow: the same file otherwise
        with pytest.raises(ModelError, match=rf"^<bytes>: operator 0 is CUSTOM:{code.decode()}, which is not "
                                             rf"supported") as e:
            parse(data.replace(b"SignalWindow", code))
        assert "\n" not in str(e.value)


def test_bad_signal_models_get_one_line_errors():
    rng = np.random.default_rng(1)
    cases = []
    g = gen_rfft(rng)
    op = g.operators[0]
    cases.append((dataclasses.replace(g, operators=[dataclasses.replace(op, options={**op.options, "fft_length": 480})]),
                  "fft_length 480 is not a power of two"))
    cases.append((dataclasses.replace(g, operators=[dataclasses.replace(op, options={**op.options, "T": 1})]),
                  r"type T = 1 \(TensorType\): only int16"))
    p = SIGNAL_GENERATORS["SIGNAL_PCAN"](rng)
    lut = p.tensors[2]
    short = dataclasses.replace(lut, shape=(100,), data=lut.data[:100])
    cases.append((dataclasses.replace(p, tensors=[*p.tensors[:2], short, p.tensors[3]]), "gain_lut has 100 entries"))
    o = SIGNAL_GENERATORS["SIGNAL_OVERLAP_ADD"](rng)
    cases.append((dataclasses.replace(o, operators=[dataclasses.replace(o.operators[0], options={"T": 1, "frame_step": 1})]),
                  r"type T = 1 \(TensorType\): only int16"))
    cases.append((graph([("x", (5,), "int16", None), ("y", (1, 3), "int16", None), ("v", (), "bool", None)],
                        [("SIGNAL_FRAMER", (0,), (1, 2), {"frame_size": 3, "frame_step": 5, "prefill": True})],
                        [0], [1, 2]), "prefill needs frame_size >= frame_step"))
    for bad, match in cases:
        with pytest.raises(ModelError, match=match) as e:
            parse(serialize(bad))
        assert "\n" not in str(e.value)


def test_rfft_matches_tflm_on_every_built_length():
    """Powers of two 4..2048, frames shorter than the FFT (zero padding), full-scale input (int16 wrapping in
    kiss_fft's butterflies)."""
    rng = np.random.default_rng(2)
    for n in (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048):
        for length in {n, max(1, n - 3), max(1, n // 2 + 1)}:
            g = graph([("x", (length,), "int16", None), ("y", (n + 2,), "int16", None)],
                      [("SIGNAL_RFFT", (0,), (1,), {"T": 7, "fft_length": n})], [0], [1], "rfft")
            data = serialize(g)
            for amp in (50, 3000, 32767):
                x = rng.integers(-amp - 1, amp + 1, length).astype(np.int16)
                want = tflm_run(data, [x])[0]
                assert np.array_equal(rfft_frame(x, n).reshape(-1), want), (n, length, amp)
    tw, sup = fft_twiddles(512)
    assert tw.shape == (256, 2) and sup.shape == (128, 2) and tw[0].tolist() == [32767, 0]


def test_irfft_and_auto_scale_match_tflm():
    """IRFFT at every power of two 4..2048 on quiet and full-scale spectra, two frames a call; FFT_AUTO_SCALE on
    inputs holding -32768 before and after smaller values (TFLM's MaxAbs16 wraps there: the shift depends on the
    order) and on all-zero input."""
    rng = np.random.default_rng(6)
    for n in (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048):
        g = as_read(graph([("x", (2, n + 2), "int16", None), ("y", (2, n), "int16", None)],
                          [("SIGNAL_IRFFT", (0,), (1,), {"T": 7, "fft_length": n})], [0], [1], "irfft"))
        data = serialize(g)
        for amp in (10, 1000, 32767):
            x = rng.integers(-amp - 1, amp + 1, (2, n + 2)).astype(np.int16)
            assert np.array_equal(run_unplanned(g, [x])[0], tflm_run(data, [x])[0]), (n, amp)
    g = SIGNAL_GENERATORS["SIGNAL_FFT_AUTO_SCALE"](rng)
    n = g.tensors[0].shape[0]
    data = serialize(g)
    shifts = set()
    for x in ([-32768] + [3] * (n - 1), [3] * (n - 1) + [-32768], [0] * n, [1] * n, [-16384] * n):
        x = np.array(x[:n], np.int16)
        got, want = run_unplanned(g, [x]), tflm_run(data, [x], 2)
        assert np.array_equal(got[0], want[0]) and int(got[1]) == int(want[1]), x
        shifts.add(int(want[1]))
    assert len(shifts) >= 3


def test_energy_range_matches_tflm_inside_and_is_zero_outside():
    rng = np.random.default_rng(3)
    n = 33
    g = graph([("x", (2 * n,), "int16", None), ("y", (n,), "uint32", None)],
              [("SIGNAL_ENERGY", (0,), (1,), {"end_index": 30, "start_index": 4})], [0], [1], "energy")
    x = signal_input(rng, g.tensors[0])
    got = run_unplanned(g, [x])[0]
    want = tflm_run(serialize(g), [x])[0]
    assert np.array_equal(got[4:30], want[4:30])  # TFLite Micro leaves the rest unwritten
    assert not got[:4].any() and not got[30:].any()


def test_spectral_subtraction_keeps_its_state_over_invocations():
    """The noise estimate (output 1) carries over: six invocations of random models (clamping or not), the
    planned arena's outputs equal TFLite Micro's at every invocation; the file round-trips without is_variable."""
    rng = np.random.default_rng(4)
    for case in range(8):
        g = SIGNAL_GENERATORS["SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION"](rng)
        data = serialize(g)
        back = parse(data)
        assert back.tensors[2].variable and serialize(back) == data
        sets = [[signal_input(rng, back.tensors[0])] for _ in range(6)]
        want, _ = tflm_sequence(data, sets, 2)
        got = run_sequence(back, plan_arena(back), sets)
        assert [[y.tolist() for y in ys] for ys in got] == [[w.tolist() for w in ws] for ws in want], case
        assert any(w[1].any() for w in want)  # the state moved


def test_buffering_operators_keep_their_state_over_invocations():
    """DELAY, OVERLAP_ADD, STACKER (right context: stacks that fill over calls) and FRAMER (without prefill:
    frames that fill over calls), their circular buffers a hidden state input: 12 invocations each in the
    planned arena equal TFLite Micro's wherever it writes (output_valid true), output_valid always."""
    rng = np.random.default_rng(5)
    models = []
    for _ in range(4):
        models += [SIGNAL_GENERATORS["SIGNAL_DELAY"](rng), SIGNAL_GENERATORS["SIGNAL_OVERLAP_ADD"](rng)]
        left, right = int(rng.integers(0, 3)), int(rng.integers(1, 3))
        models.append(stacker_model(int(rng.integers(1, 9)), left, right, int(rng.integers(1, left + right + 2))))
        step, size = int(rng.integers(1, 9)), int(rng.integers(1, 30))
        models.append(framer_model(int(rng.integers(1, 3)), int(rng.integers(1, 3)), size, step,
                                   size >= step and bool(rng.random() < 0.3)))
    invalid = 0
    for g in models:
        data = serialize(g)
        assert serialize(parse(data)) == data  # the state is not in the file
        sets = [[signal_input(rng, g.tensors[i]) for i in g.inputs] for _ in range(12)]
        want, _ = tflm_sequence(data, sets, len(g.outputs))
        got = run_sequence(g, plan_arena(g), sets)
        for k, (ys, ws) in enumerate(zip(got, want)):
            if len(ws) == 2:  # output_valid
                assert bool(ys[1]) == bool(ws[1]), (g.name, k)
                if not ws[1]:
                    invalid += 1
                    continue
            for y, w in zip(ys, ws):
                assert np.array_equal(y, w), (g.name, k)
    assert invalid > 0  # stacks and frames that were not full yet were met


def test_frontend_planned_matches_tflm_over_invocations():
    """The whole front end in one model, ten frames in a row: the planned arena (WINDOW and PCAN in place where
    they may be, the noise estimate in a persistent buffer) gives TFLite Micro's bytes at every frame."""
    g = parse(serialize(frontend()))
    plan = plan_arena(g)
    assert checker.problems(g, plan) == []
    data = serialize(g)
    sets = frontend_inputs(g, 0, frames=10)
    want, _ = tflm_sequence(data, sets, 4)
    got = run_sequence(g, plan, sets)
    for k, (ys, ws) in enumerate(zip(got, want)):
        for y, w in zip(ys, ws):
            assert y.dtype == w.dtype and np.array_equal(y, w), k
    assert len({w[3].tobytes() for w in want}) == 10  # the noise estimate changes every frame
    assert all(w[1] for w in want) and np.array_equal(want[5][0][:80], want[4][0][-80:])  # stacks of 3 frames


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_frontend_firmware_matches_tflm(board, tmp_path):
    """WINDOW -> RFFT (512) -> ENERGY -> FILTER_BANK (40 channels) -> SQUARE_ROOT -> SPECTRAL_SUBTRACTION -> PCAN
    -> LOG -> STACKER as one model in firmware, eight frames in one run: every output of every frame byte-identical to
    TFLite Micro's."""
    need(board)
    g = parse(serialize(frontend()))
    pipeline.build(g, board, tmp_path)
    sets = frontend_inputs(g, 1, frames=8)
    want, _ = tflm_sequence(serialize(g), sets, 4)
    got, _, _ = runner.run(board, tmp_path, sets, sequence=True, profile=False)
    assert len(got) == len(want) == 8
    for k, (ys, ws) in enumerate(zip(got, want)):
        ys = ys if isinstance(ys, list) else [ys]
        assert len(ys) == 4
        for y, w in zip(ys, ws):
            assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1)), (board, k)


@pytest.mark.parametrize("board", ["host", "cortex-m4", "cortex-m55", "riscv32", "xcore"])
def test_random_signal_models_in_firmware_match_tflm(board, tmp_path):
    """Two random models of each signal operator side by side in one image, three invocations in one run (the
    state carried), on every kernel set (they fall back to the reference kernels): every output byte-identical to
    TFLite Micro's."""
    need(board)
    rng = np.random.default_rng(9)
    g = parse(serialize(merge([gen(rng) for gen in SIGNAL_GENERATORS.values() for _ in range(2)], "signal_ops")))
    assert {op.opcode for op in g.operators} == set(SIGNAL_GENERATORS)
    pipeline.build(g, board, tmp_path)
    sets = [[signal_input(rng, g.tensors[i]) for i in g.inputs] for _ in range(3)]
    want, _ = tflm_sequence(serialize(g), sets, len(g.outputs))
    got, _, _ = runner.run(board, tmp_path, sets, sequence=True, profile=False)
    assert len(got) == len(want) == 3
    for k, (ys, ws) in enumerate(zip(got, want)):
        assert len(ys) == len(ws) == len(g.outputs)
        for y, w in zip(ys, ws):
            assert y.dtype == w.dtype and np.array_equal(y.reshape(-1), w.reshape(-1)), (board, k)


def in_place_chain():
    """FFT_AUTO_SCALE -> WINDOW -> RFFT -> ENERGY -> FILTER_BANK -> SQUARE_ROOT -> PCAN -> LOG: WINDOW's and PCAN's
    inputs die there (neither is a model input or output)."""
    g = frontend(seed=3, length=64, fft_length=64, channels=8)
    c = {t.name: t for t in g.tensors if t.is_const}
    t = [("audio", (64,), "int16", None), ("scaled", (64,), "int16", None), ("shift", (), "int32", None),
         ("window", (64,), "int16", c["window"].data), ("windowed", (64,), "int16", None),
         ("spectrum", (66,), "int16", None), ("energy", (33,), "uint32", None)]
    t += [(k, c[k].shape, "int16", c[k].data) for k in ("weights", "unweights", "freq_starts", "weight_starts", "widths")]
    t += [("filterbank", (8,), "uint64", None), ("sqrt", (8,), "uint32", None), ("noise", (8,), "uint32", None),
          ("gain_lut", c["gain_lut"].shape, "int16", c["gain_lut"].data), ("pcan", (8,), "uint32", None),
          ("log", (8,), "int16", None)]
    ops = [("SIGNAL_FFT_AUTO_SCALE", (0,), (1, 2), {}), ("SIGNAL_WINDOW", (1, 3), (4,), {"shift": 12}),
           ("SIGNAL_RFFT", (4,), (5,), {"T": 7, "fft_length": 64}),
           ("SIGNAL_ENERGY", (5,), (6,), {"end_index": 33, "start_index": 0}),
           ("SIGNAL_FILTER_BANK", (6, 7, 8, 9, 10, 11), (12,), {"num_channels": 8}),
           ("SIGNAL_FILTER_BANK_SQUARE_ROOT", (12, 2), (13,), {}),
           ("SIGNAL_PCAN", (13, 14, 15), (16,), {"snr_shift": 6}),
           ("SIGNAL_FILTER_BANK_LOG", (16,), (17,), {"input_correction_bits": 3, "output_scale": 1 << 6})]
    return as_read(graph(t, ops, [0, 14], [17, 2], "in_place_chain"))


@pytest.mark.parametrize("board", ["host"])
def test_window_and_pcan_in_place_match_tflm(board, tmp_path):
    """Forced in place (each output over its dying input, as test_ops_extra forces them), the numpy executor and
    host firmware give TFLite Micro's bytes; the planner's own plan passes the checker; fusion refuses a stateful
    signal model in one line."""
    need(board)
    g = in_place_chain()
    plan = inplace_plan(g, ("SIGNAL_WINDOW", "SIGNAL_PCAN"))
    assert {g.operators[i].opcode for i in plan.inplace_ops} == {"SIGNAL_WINDOW", "SIGNAL_PCAN"}
    assert checker.problems(g, plan_arena(g)) == []
    pipeline.build(g, board, tmp_path, plan=plan)
    data = serialize(g)
    rng = np.random.default_rng(8)
    for _ in range(3):
        xs = [signal_input(rng, g.tensors[i]) for i in g.inputs]
        want = tflm_run(data, xs, 2)
        ys = runner.run(board, tmp_path, xs)[0]
        for y, u, w in zip(ys, run(g, plan, xs), want):
            assert np.array_equal(y.reshape(-1), w.reshape(-1)) and np.array_equal(u, w)
    with pytest.raises(PlanError, match=r"keeps state between invocations \(SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION, "
                                        r"SIGNAL_PCAN and 1 more\); splitting and fusion cannot") as e:
        pipeline.plan_memory(frontend(), PlanOptions(optimize="ram"))
    assert "\n" not in str(e.value)


def test_corrupt_signal_models_are_refused_in_one_line_or_run():
    """Random byte changes to signal models (their custom codes and flexbuffer options among them) and random
    option values: each file is read, or refused with one ModelError line; each one read runs in the executor."""
    rng = np.random.default_rng(10)
    datas = [serialize(frontend())] + [serialize(gen(rng)) for gen in SIGNAL_GENERATORS.values() for _ in range(2)]
    graphs = []
    for k in range(1500):
        d = bytearray(datas[k % len(datas)])
        for _ in range(int(rng.integers(1, 3))):
            d[int(rng.integers(0, len(d)))] = int(rng.integers(0, 256))
        graphs.append(bytes(d))
    for k in range(600):
        g = list(SIGNAL_GENERATORS.values())[k % len(SIGNAL_GENERATORS)](rng)
        op = g.operators[0]
        if op.options:
            o = dict(op.options)
            key = sorted(o)[int(rng.integers(0, len(o)))]
            o[key] = not o[key] if isinstance(o[key], bool) else int(rng.choice([-1, 0, 1, 3, 31, 32, 64, 1 << 15, -(1 << 31)]))
            graphs.append(serialize(dataclasses.replace(g, operators=[dataclasses.replace(op, options=o)])))
    outcomes = {"read": 0, "refused": 0}
    for data in graphs:
        try:
            g = parse(data)
        except ModelError as e:
            assert "\n" not in str(e)
            outcomes["refused"] += 1
            continue
        run_unplanned(g, [signal_input(rng, g.tensors[i]) for i in g.inputs])
        outcomes["read"] += 1
    assert outcomes["read"] > 100 and outcomes["refused"] > 100, outcomes


def test_frontend_and_kws_network_share_one_cortex_m4_firmware(tmp_path):
    """The audio front end and the DS-CNN keyword network (shared model) in one Cortex-M4 firmware with one joint
    arena (the front end's state kept apart): the front end twice (its state carried) and the network once, all
    byte-identical to TFLite Micro; the joint arena is 16,416 B (README)."""
    need("cortex-m4")
    kws = SHARED_MODELS / "dscnn_kws.tflite"
    if not kws.exists():
        pytest.skip(f"{kws} not present (../shared is only on CI and developer machines)")
    fe = frontend()
    save(fe, tmp_path / "frontend.tflite")
    out = tmp_path / "fw"
    _, joint = pipeline.build_multi([str(tmp_path / "frontend.tflite"), str(kws)], "cortex-m4", out)
    net = pipeline.read_model(str(kws)).graph
    xk = np.random.default_rng(0).integers(-128, 128, net.tensors[net.inputs[0]].shape).astype(np.int8)
    xf = frontend_inputs(fe, 2)[0]
    runs, _ = pipeline.run_multi("cortex-m4", out, [xf, xk])
    assert [r[0] for r in runs] == [0, 1, 0]
    want, _ = tflm_sequence(serialize(fe), [xf, xf], 4)
    got = [r[1] for r in runs if r[0] == 0]
    for ys, ws in zip(got, want):
        for y, w in zip(ys, ws):
            assert np.array_equal(np.asarray(y).reshape(-1), w.reshape(-1))
    assert not np.array_equal(want[0][3], want[1][3])  # the noise estimate moved on
    for y, w in zip(runs[1][1], tflm_run(kws.read_bytes(), [xk])):
        assert np.array_equal(np.asarray(y).reshape(-1), w.reshape(-1))
    assert joint.arena_bytes == 16416
