"""Kernel variants chosen at code generation (buildtool/codegen/kernel_variants.py): the Python table picks
the variant the C dispatcher picks (bt_*_variant(), the kernels compiled for the host) on random
layers; model.c calls the chosen variants on cortex-m and riscv boards only, and falls back to the
dispatchers when another kernel set is linked. (kernel_test.c runs every variant against the
reference set: tests/test_kernels.py checks that each variant of a table ran there.)
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
from ctypes import c_char_p, c_int32, c_void_p
from pathlib import Path

import numpy as np
import pytest

from buildtool.codegen import kernel_variants
from buildtool import pipeline
from buildtool.firmware.toolchain import kernel_parts

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_kernels import AddP, Bcast4, ConvP, DwP, FcP  # noqa: E402

KERNELS = ROOT / "buildtool" / "kernels"
CASES = 3000
# the variant queries of each set with a table: the files that define them
QUERIES = {"cortex-m": {"conv": "conv.c", "depthwise": "depthwise.c", "fully_connected": "fully_connected.c",
                        "fully_connected_il": "fully_connected.c"},
           "riscv": {"conv": "conv.c"}}
QUERY_FN = {"conv": "bt_conv_s8_variant", "depthwise": "bt_depthwise_s8_variant",
            "fully_connected": "bt_fully_connected_s8_variant",
            "fully_connected_il": "bt_fully_connected_s8_il_variant"}


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> dict:
    """Each set's variant-choosing files as one host shared library (cortex-m: its C model of the DSP)."""
    out = tmp_path_factory.mktemp("variants")
    libs = {}
    for kset, files in QUERIES.items():
        so = out / f"lib_{kset}.so"
        ref = {f.stem for f in (KERNELS / "reference").glob("*.c")}  # a kernel split by path: its parts too
        srcs = [str(s) for f in sorted(set(files.values())) for s in [KERNELS / kset / f, *kernel_parts(KERNELS / kset / f, ref)]]
        subprocess.run(["gcc", "-std=c99", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-Wl,--no-undefined",
                        f"-I{KERNELS / 'include'}", f"-I{KERNELS / 'reference'}", f"-I{KERNELS / kset}", *srcs,
                        "-o", str(so)], check=True)
        lib = ctypes.CDLL(str(so))
        for fn in (QUERY_FN[k] for k in files):
            getattr(lib, fn).restype = c_char_p
        if kset == "cortex-m":
            lib.bt_depthwise_s8_path.restype = c_char_p
        libs[kset] = lib
    return libs


def _quant(rng, n: int) -> tuple:
    """Multipliers and shifts around bt_rq2_ok's and rv_rq_ok's edges: mostly TFLite's, some not."""
    mult = rng.integers(1 << 30, (1 << 31) - 1, size=n, endpoint=True)
    shift = rng.integers(-12, -2, size=n, endpoint=True)
    if rng.random() < 0.5:
        k = rng.integers(0, n)
        mult[k] = rng.choice([0, (1 << 30) - 1, 1, -(1 << 31), -(1 << 30), 1 << 30])
        shift[k] = rng.choice([-32, -31, -2, -1, 0, 3, int(shift[k])])
    return [int(v) for v in mult], [int(v) for v in shift]


def _conv(rng) -> dict:
    kh, kw = int(rng.choice([1, 1, 3, 5, 10])), int(rng.choice([1, 1, 3, 4, 7]))
    cin, cout = int(rng.choice([1, 3, 5, 17, 32, 64, 71, 130, 644, 960, 962, 1924])), int(rng.integers(1, 20))
    lo = int(rng.choice([-128, -128, -100, 0]))
    hi = int(rng.choice([127, 127, 100]))
    mult, shift = _quant(rng, cout)
    return {"in": {"h": 8, "w": 8, "c": cin, "pixel_stride": cin}, "out": {"h": 8, "w": 8, "c": cout,
            "pixel_stride": cout}, "kh": kh, "kw": kw, "stride_h": 1, "stride_w": 1, "dil_h": 1, "dil_w": 1,
            "pad_top": int(rng.integers(0, 2)) * (kh > 1 or rng.random() < 0.2),
            "pad_left": int(rng.integers(0, 2)) * (kw > 1 or rng.random() < 0.2),
            "input_offset": 3, "output_offset": -5, "act_min": lo, "act_max": hi,
            "multipliers": mult, "shifts": shift}


def _conv_struct(p: dict, keep: list) -> ConvP:
    m, s = np.array(p["multipliers"], np.int32), np.array(p["shifts"], np.int32)
    keep += [m, s]
    c = ConvP(kh=p["kh"], kw=p["kw"], stride_h=1, stride_w=1, dil_h=1, dil_w=1, pad_top=p["pad_top"],
              pad_left=p["pad_left"], input_offset=p["input_offset"], output_offset=p["output_offset"],
              act_min=p["act_min"], act_max=p["act_max"], multiplier=m.ctypes.data_as(c_void_p),
              shift=s.ctypes.data_as(c_void_p))
    for name, key in (("inp", "in"), ("out", "out")):
        for f in ("h", "w", "c", "pixel_stride"):
            setattr(getattr(c, name), f, p[key][f])
    return c


def _fc(rng) -> dict:
    n_out, per_channel = int(rng.integers(1, 40)), int(rng.integers(0, 2))
    mult, shift = _quant(rng, n_out if per_channel else 1)
    if rng.random() < 0.3:  # right shifts beyond bt_rq2_zp_ok's (the interleaved variants' zero point fold)
        shift[0] = int(rng.integers(-31, -20, endpoint=True))
    lo = int(rng.choice([-128, -128, -100, 0]))
    return {"n_in": int(rng.choice([1, 3, 16, 17, 64, 128, 132, 640, 1280, 1281, 4000])), "n_out": n_out,
            "batches": int(rng.choice([1, 1, 2])),
            "input_offset": 1, "filter_offset": int(rng.choice([0, 0, 0, 2])), "output_offset": 0,
            "act_min": lo, "act_max": int(rng.choice([127, 127, 100])), "per_channel": per_channel,
            "multipliers": mult, "shifts": shift}


def _fc_struct(p: dict, keep: list) -> FcP:
    m, s = np.array(p["multipliers"], np.int32), np.array(p["shifts"], np.int32)
    keep += [m, s]
    return FcP(**{k: p[k] for k in ("n_in", "n_out", "batches", "input_offset", "filter_offset", "output_offset",
                                     "act_min", "act_max", "per_channel")},
               multiplier=m.ctypes.data_as(c_void_p), shift=s.ctypes.data_as(c_void_p))


def _query(lib, kind: str, p: dict) -> str:
    keep: list = []
    if kind == "conv":
        arg = _conv_struct(p, keep)
    elif kind == "depthwise":
        arg = DwP(conv=_conv_struct(p, keep), depth_multiplier=c_int32(p["depth_multiplier"]))
    else:
        arg = _fc_struct(p, keep)
    return getattr(lib, QUERY_FN[kind])(ctypes.byref(arg)).decode()


@pytest.mark.parametrize("kset,kind", [(s, k) for s, files in QUERIES.items() for k in files])
def test_table_picks_what_the_dispatcher_picks(libs, kset, kind):
    """Random layers (channel counts 1, 3, 5, 17 among others, multipliers and shifts at the
    requantisation paths' edges): the table's choice is the C dispatcher's, and every variant occurs (but
    CODEGEN_ONLY's, which need choose_codegen)."""
    rng = np.random.default_rng(13)
    table = kernel_variants.TABLES[kset][1]
    seen, wrong = set(), []
    for _ in range(CASES):
        p = _fc(rng) if kind.startswith("fully_connected") else _conv(rng)
        if kind == "depthwise":
            p["depth_multiplier"] = int(rng.choice([1, 1, 1, 2]))
        want, got = _query(libs[kset], kind, p), kernel_variants.choose(table, kind, p)
        seen.add(want)
        if want != got:
            wrong.append((want, got, p))
    assert not wrong, f"{len(wrong)} of {CASES} differ, e.g. {wrong[0]}"
    assert seen == {name for name, _ in table[kind]} - kernel_variants.CODEGEN_ONLY


def _dw_path_layer(rng) -> tuple:
    """A random depthwise layer for the "depthwise_m1" table (the layer dict, its biases or None): maps 1-60 wide and
    1-40 tall, filters 1, 3, 5, 7 (3 most), strides 1-2 each way, dilation 1 or 2, 'same' or 'valid', 1-40 channels
    (multiples of four most), depth multiplier 1 or 2, the whole int8 range or not, shifts at bt_rq2's and
    bt_rq2_zp_ok's edges, biases beyond 2^29 on a channel or none (not exactly -2^29: see kernel_variants._dw_mm_ok)."""
    k = int(rng.choice([1, 3, 3, 3, 3, 5, 7]))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    if rng.random() < 0.6:
        sh = sw
    d = 2 if rng.random() < 0.1 else 1
    ih, iw = int(rng.integers(1, 41)), int(rng.integers(1, 61))
    same = bool(rng.integers(0, 2))
    span = (k - 1) * d + 1

    def out(n, s):
        return -(-n // s) if same else (n - span) // s + 1

    oh, ow = out(ih, sh), out(iw, sw)
    if oh < 1 or ow < 1:
        return None
    c = 4 * int(rng.integers(1, 11)) if rng.random() < 0.7 else int(rng.integers(1, 41))
    mult, shift = _quant(rng, c)
    if rng.random() < 0.2:  # a right shift beyond bt_rq2_zp_ok's 21 bits
        shift[int(rng.integers(0, c))] = int(rng.integers(-31, -22, endpoint=True))
    bias = None
    if rng.random() < 0.8:
        bias = [int(v) for v in rng.integers(-20000, 20000, size=c)]
        if rng.random() < 0.2:
            bias[int(rng.integers(0, c))] = int(rng.choice([(1 << 29) - 1, 1 << 29, -(1 << 29) + 1, -(1 << 29) - 5]))
    full = rng.random() < 0.7
    p = {"in": {"h": ih, "w": iw, "c": c, "pixel_stride": c}, "out": {"h": oh, "w": ow, "c": c, "pixel_stride": c},
         "kh": k, "kw": k, "stride_h": sh, "stride_w": sw, "dil_h": d, "dil_w": d,
         "pad_top": max((oh - 1) * sh + span - ih, 0) // 2 if same else 0,
         "pad_left": max((ow - 1) * sw + span - iw, 0) // 2 if same else 0,
         "input_offset": 3, "output_offset": -5, "act_min": -128 if full else -100, "act_max": 127,
         "multipliers": mult, "shifts": shift, "depth_multiplier": int(rng.choice([1, 1, 1, 1, 2])),
         "bias_bound": (1 << max(abs(b) for b in bias).bit_length()) - 1 if bias else 0}
    return p, bias


def _dw_path_query(lib, p: dict, bias) -> str:
    keep: list = []
    conv = _conv_struct(p, keep)
    conv.stride_h, conv.stride_w, conv.dil_h, conv.dil_w = p["stride_h"], p["stride_w"], p["dil_h"], p["dil_w"]
    if bias is not None:
        b = np.array(bias, np.int32)
        keep.append(b)
        conv.bias = b.ctypes.data_as(c_void_p)
    arg = DwP(conv=conv, depth_multiplier=c_int32(p["depth_multiplier"]))
    return lib.bt_depthwise_s8_path(ctypes.byref(arg), 0, 0, p["out"]["h"]).decode()


def _add(rng) -> dict:
    """An int8 ADD's bt_add_params around add.c add_tab's edges: TFLite's (one input's multiplier 0.5, left shift
    20), its sizes, offsets, shifts, bounds and activations, and some not."""
    half = (1 << 30, 0)
    m = [(int(rng.integers(1 << 30, (1 << 31) - 1)), int(rng.integers(-3, 0, endpoint=True))) for _ in range(2)]
    k = int(rng.integers(0, 4))  # the 0.5 input: first, second, both, none
    if k in (0, 2):
        m[0] = half
    if k in (1, 2):
        m[1] = half
    if rng.random() < 0.1:
        m[int(rng.integers(0, 2))] = (int(rng.integers(0, 1 << 31)), int(rng.choice([1, -1])))
    dims = [1, int(rng.integers(1, 40)), int(rng.integers(1, 40)), int(rng.choice([1, 3, 8, 16, 64]))]
    dense = [dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1]
    b_stride = list(dense)
    if rng.random() < 0.15:  # a broadcast or a pixel stride: no one dense run
        b_stride[int(rng.integers(1, 4))] = 0
    offs = [-256, -255, -128, 0, 17, 128, 200, 256, 257, -300]
    act = (-128, 127) if rng.random() < 0.6 else (int(rng.integers(-128, 0)), int(rng.integers(0, 128)))
    return {"input1_offset": int(rng.choice(offs)), "input2_offset": int(rng.choice(offs)),
            "output_offset": int(rng.integers(-128, 127, endpoint=True)),
            "left_shift": 20 if rng.random() < 0.95 else 15,
            "input1_multiplier": m[0][0], "input1_shift": m[0][1], "input2_multiplier": m[1][0], "input2_shift": m[1][1],
            "output_multiplier": int(rng.choice([int(rng.integers(1 << 30, (1 << 31) - 1)), -5, 1 << 30])),
            "output_shift": int(rng.choice([-31, -30, -22, -20, -17, -10, -2, -1, 0, -32])),
            "act_min": act[0], "act_max": act[1],
            "b": {"dims": dims, "a_stride": dense, "b_stride": b_stride, "out_stride": dense}}


def test_add_tab_variant_says_what_add_c_runs(tmp_path):
    """kernel_variants.add_tab_variant (the bt_add_s8_tab_* model.c calls, unchecked) names the variant cortex-m/add.c's
    add_tab runs (bt_add_s8_tab_taken) on random ADDs around its edges, every variant and a decline seen."""
    so = tmp_path / "libadd.so"
    subprocess.run(["gcc", "-std=c99", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-Wl,--no-undefined",
                    f"-I{KERNELS / 'include'}", f"-I{KERNELS / 'reference'}", f"-I{KERNELS / 'cortex-m'}",
                    str(KERNELS / "cortex-m" / "add.c"), "-o", str(so)], check=True)
    lib = ctypes.CDLL(str(so))
    rng = np.random.default_rng(50)
    seen = set()
    for _ in range(CASES):
        p = _add(rng)
        arg = AddP(**{k: v for k, v in p.items() if k != "b"},
                   b=Bcast4(**{k: (c_int32 * 4)(*v) for k, v in p["b"].items()}))
        want = ("",) + kernel_variants.ADD_TAB_VARIANTS
        want = want[lib.bt_add_s8_tab_taken(ctypes.byref(arg))]
        assert kernel_variants.add_tab_variant(p) == want, p
        assert kernel_variants.add_tab_ok(p) == bool(want), p
        seen.add(want)
    assert seen == {"", *kernel_variants.ADD_TAB_VARIANTS}


def test_depthwise_path_table_picks_what_depthwise_c_runs(libs):
    """model.c's whole-map depthwise calls: on random layers (and the MLPerf vww's and kws's shapes, rows of 8 cells
    and planes of 56, rare at random) the "depthwise_m1" table names the path depthwise.c's dw_path runs for the call
    (bt_depthwise_s8_path), and every path occurs."""
    rng = np.random.default_rng(50)
    fixed = [(16, 16, 1, 1), (48, 48, 1, 1), (48, 48, 2, 2), (6, 6, 1, 1), (3, 3, 1, 1), (25, 5, 1, 1), (11, 6, 1, 1),
             (24, 6, 2, 1), (2, 32, 1, 1)]
    cases = []
    for h, w, sh, sw in fixed:
        for k in (3, 5):
            mult, shift = [1 << 30] * 8, [-8] * 8
            for full, rq2 in ((True, True), (False, True), (True, False)):
                p = {"in": {"h": h, "w": w, "c": 8, "pixel_stride": 8}, "kh": k, "kw": k, "stride_h": sh,
                     "stride_w": sw, "dil_h": 1, "dil_w": 1, "pad_top": (k - 1) // 2, "pad_left": (k - 1) // 2,
                     "out": {"h": -(-h // sh), "w": -(-w // sw), "c": 8, "pixel_stride": 8}, "input_offset": 3,
                     "output_offset": -5, "act_min": -128 if full else -100, "act_max": 127, "multipliers": mult,
                     "shifts": shift if rq2 else [0] + shift[1:], "depth_multiplier": 1, "bias_bound": 16383}
                cases.append((p, [9999] * 8))
    while len(cases) < CASES:
        layer = _dw_path_layer(rng)
        if layer:
            cases.append(layer)
    table = kernel_variants.CORTEX_M
    seen, wrong = set(), []
    for p, bias in cases:
        want, got = _dw_path_query(libs["cortex-m"], p, bias), kernel_variants.choose(table, "depthwise_m1", p)
        seen.add(want)
        if want != got:
            wrong.append((want, got, p))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[0]}"
    assert seen == {name for name, _ in table["depthwise_m1"]}


def test_depthwise_candidates_run_byte_exact(libs):
    """kernel_variants.depthwise_candidates (the code budget's choices for a layer): the table's path first, the shared
    reference last, and on random depth-multiplier-1 layers each candidate's output equals the reference kernel's byte
    for byte (the set compiled for the host: the Arm-only loops run their portable counterparts under their names;
    kernel_test.c runs the Arm ones in QEMU)."""
    lib, rng = libs["cortex-m"], np.random.default_rng(51)
    runs, n = {}, 0
    while n < 400:
        layer = _dw_path_layer(rng)
        if not layer or layer[0]["depth_multiplier"] != 1:
            continue
        p, bias = layer
        names = kernel_variants.depthwise_candidates(p)
        assert names[0] == kernel_variants.choose(kernel_variants.CORTEX_M, "depthwise_m1", p)
        assert names[-1] == "bt_ref_depthwise_generic_s8" and kernel_variants.DW_KINDS[names[-1]] == "shared"
        keep: list = []
        conv = _conv_struct(p, keep)
        conv.stride_h, conv.stride_w, conv.dil_h, conv.dil_w = p["stride_h"], p["stride_w"], p["dil_h"], p["dil_w"]
        c, o = p["in"]["c"], p["out"]
        x = rng.integers(-128, 128, size=p["in"]["h"] * p["in"]["w"] * c + 16, dtype=np.int8)
        w = rng.integers(-128, 128, size=p["kh"] * p["kw"] * c, dtype=np.int8)
        keep += [x, w]
        conv.filter = w.ctypes.data_as(c_void_p)
        if bias is not None:
            b = np.array(bias, np.int32)
            keep.append(b)
            conv.bias = b.ctypes.data_as(c_void_p)
        arg = DwP(conv=conv, depth_multiplier=c_int32(1))
        outs = {}
        for name in names:
            y = np.zeros(o["h"] * o["w"] * c, np.int8)
            getattr(lib, name)(ctypes.byref(arg), x.ctypes.data_as(c_void_p), 0, y.ctypes.data_as(c_void_p), 0, o["h"])
            outs[name] = y.tobytes()
            runs[name] = runs.get(name, 0) + 1
        assert all(v == outs["bt_ref_depthwise_generic_s8"] for v in outs.values()), (p, names)
        n += 1
    assert {"bt_dw_box_rq2", "bt_dw_rows_q4_32", "bt_dw_s2g", "bt_ref_depthwise_generic_s8", "bt_dw_small_rq2",
            "bt_dw_rows_rq2", "bt_dw_small", "bt_dw_rows", "bt_dw_box"} <= set(runs)
    assert all(kernel_variants.DW_KINDS[n] == "shared" for n in runs if n.startswith(("bt_dw_small", "bt_dw_rows",
                                                                                        "bt_dw_box"))
               and not n.startswith("bt_dw_rows_q4"))


def test_depthwise_candidates_name_the_shared_paths_that_take_the_layer():
    """Worked by hand: a 3x3 stride-2 layer on 24x24x32 (12x12 outputs, bt_rq2 multipliers, the whole int8 range) is
    bt_dw_s2g's, and bt_dw_small (stride 2, (12 - 1) 2 + 3 = 25 <= 56 columns) and bt_dw_rows (144 >= 16 outputs) take
    it too; a 5x5 neither (bt_dw_kxk's: the box path and the reference); a depth multiplier of 2 the reference alone.
    The budget's class of each is its fastest path's family (kernel_variants.dw_family)."""
    p = dict(_dw_layer(24, 24, 32, 3, 2), act_min=-128, act_max=127)
    assert kernel_variants.depthwise_candidates(p) == ("bt_dw_s2g", "bt_dw_small_rq2", "bt_dw_rows_rq2",
                                                      "bt_dw_box_rq2", "bt_ref_depthwise_generic_s8")
    five = dict(_dw_layer(24, 24, 32, 5, 1), act_min=-128, act_max=127)
    assert kernel_variants.depthwise_candidates(five) == ("bt_dw_kxk_rq2", "bt_dw_box_rq2",
                                                         "bt_ref_depthwise_generic_s8")
    assert kernel_variants.depthwise_candidates(dict(p, depth_multiplier=2)) == ("bt_ref_depthwise_generic_s8",)
    assert [kernel_variants.dw_family(n) for n in ("bt_dw_rows_q4_32", "bt_dw_planes_8", "bt_dw_s2g", "bt_dw_box_rq2")] \
        == ["rows_q4", "planes", "s2g", "box"]


def _dw_layer(h: int, w: int, c: int, k: int, s: int) -> dict:
    """A depthwise layer dict (kernel_variants') of SAME padding: h x w x c in, a k x k filter at stride s, bt_rq2
    multipliers, biases below 2^29."""
    oh, ow = -(-h // s), -(-w // s)
    pad = lambda n, o: max((o - 1) * s + k - n, 0) // 2  # noqa: E731
    return {"in": {"h": h, "w": w, "c": c}, "out": {"h": oh, "w": ow, "c": c}, "kh": k, "kw": k, "stride_h": s,
            "stride_w": s, "dil_h": 1, "dil_w": 1, "pad_top": pad(h, oh), "pad_left": pad(w, ow), "depth_multiplier": 1,
            "multipliers": [1 << 30] * c, "shifts": [-8] * c, "bias_bound": 1000}


def test_board_tables():
    """cortex-m boards use the cortex-m table, scalar riscv boards the riscv one; the RVV board, the
    host, xcore and unknown boards none."""
    assert kernel_variants.for_board("cortex-m4")[0] == "BT_VARIANTS_CORTEX_M"
    assert kernel_variants.for_board("cortex-m33")[0] == "BT_VARIANTS_CORTEX_M"
    assert kernel_variants.for_board("riscv32")[0] == "BT_VARIANTS_RISCV"
    for board in ("riscv32-rvv", "host", "xcore", "no-such-board"):
        assert kernel_variants.for_board(board) is None
    with kernel_variants.mode("dispatchers"):
        assert kernel_variants.for_board("cortex-m4") is None
    with pytest.raises(ValueError), kernel_variants.mode("fastest"):
        pass


@pytest.fixture(scope="module")
def model_sources():
    """tiny_cnn_32's model.c on cortex-m4 (each of kernel_variants.MODES), riscv32 and host, each layer on its
    fastest variant (optimize_code=speed: the code budget's choice is tests/test_code_budget.py's)."""
    model = _tiny_cnn()
    plan = pipeline.plan_memory(model.graph, pipeline.PlanOptions())
    speed = pipeline.PlanOptions(optimize_code="speed")
    out = {b: pipeline.code(model, plan, b, speed)["model.c"] for b in ("cortex-m4", "riscv32", "host")}
    for mode in kernel_variants.MODES:
        with kernel_variants.mode(mode):
            out[mode] = pipeline.code(model, plan, "cortex-m4", speed)["model.c"]
    return out


def _without_variant_block(c: str) -> str:
    head, rest = c.split("/* Kernel variants chosen per layer", 1)
    return head + "#ifndef BT_PROFILE_BEGIN" + rest.split("#ifndef BT_PROFILE_BEGIN", 1)[1]


def test_model_c_calls_variants(model_sources):
    """model.c on cortex-m4 calls variants, with a fallback to the dispatchers; without that block and
    with the dispatchers' names it is the dispatcher model.c; the host's calls the dispatchers."""
    cm, host = model_sources["variants"], model_sources["host"]
    assert "bt_conv_s8(" not in cm and "bt_conv_s8_pm" in cm and "#ifndef BT_VARIANTS_CORTEX_M" in cm
    assert "bt_conv_s8(" in host and "bt_variants.h" not in host
    assert "BT_VARIANTS_RISCV" in model_sources["riscv32"]
    plain = _without_variant_block(cm)
    for kind, table in kernel_variants.CORTEX_M.items():
        for name, _ in table:
            plain = plain.replace(f"  {name}(&", f"  {kernel_variants.DISPATCHERS[kind]}(&")
    for name in kernel_variants.ADD_TAB_VARIANTS:  # add.c's table loops, called by name (add_tab_variant)
        plain = plain.replace(f"  {name}(&", "  bt_add_s8(&")
    plain = plain.replace("  bt_avg_pool_s8_sxt(&", "  bt_avg_pool_s8(&")  # pooling.c's loop, called by name (AVG_SXT_TAPS)
    for rl in kernel_variants.DW_CELLS_ROWS:  # a rows path's entry where its strips are whole quads (dw_rows_entry)
        plain = plain.replace(f"  bt_dw_rows_q4e_{rl}(&", "  bt_depthwise_s8(&")
    assert plain == model_sources["dispatchers"]


def test_model_c_instantiates_layers(model_sources):
    """By default each cortex-m patch-matrix conv layer gets its own function instantiating BT_CONV_PM
    with its constant parameters (fallback: the dispatcher), each riscv pointwise one BT_CONV_PW;
    other layers call their variant."""
    cm, var = model_sources["instances"], model_sources["variants"]
    assert cm == model_sources["cortex-m4"]
    pm = re.findall(r"  (bt_conv_s8_pm\w*)\(&(op\d+)_p, (.*?), 0, (.*?), 0, (\d+)\);", var)
    assert pm
    for name, op, src, dst, h in pm:
        fast, act = kernel_variants.INSTANCES[name][1]
        fn = re.search(rf"  (op\d+_conv)\(&{op}_p, {re.escape(src)}, {re.escape(dst)}\);", cm).group(1)
        own = "p" if fn != f"{op}_conv" else f"{op}_p"  # a later layer of a shared instance (its identity's first names it)
        body = cm.split(f"void {fn}(const bt_conv_params *q", 1)[1].split("\n}", 1)[0]
        assert f"  BT_CONV_PM(&{own}, in, 0, out, 0, {h}, {fast}, {act});" in body
    assert "#define BT_CONV_PM(p, in, in_y0, out, y0, y1, fast, act) bt_conv_s8(p, in, in_y0, out, y0, y1)" in cm
    assert "bt_conv_s8_pm" not in cm
    rv = model_sources["riscv32"]
    assert "  BT_CONV_PW(&op" in rv and "bt_conv_s8_pointwise" not in rv and "bt_conv_s8_general(&op" in rv


needs_arm = pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                               reason="arm-none-eabi-gcc / qemu-system-arm not installed")


@needs_arm
def test_firmware_links_only_the_variants_it_calls(tmp_path):
    """tiny_cnn_32 on cortex-m4: the variants model.c calls are linked, the dispatchers and the other
    variants dropped; with the reference set linked instead (the fallback to the dispatchers) the
    outputs are the same bytes."""
    from buildtool import pipeline, targets
    from buildtool.firmware import runner

    model = _tiny_cnn()
    g = model.graph
    x = np.random.default_rng(0).integers(-128, 128, size=tuple(g.tensors[g.inputs[0]].shape), dtype=np.int8)
    pipeline.build(g, "cortex-m4", tmp_path / "v")
    pipeline.build(g, "cortex-m4", tmp_path / "r", kernels=("reference",))
    syms = runner.symbols(targets.get("cortex-m4"), tmp_path / "v" / "firmware.elf")
    table = {n for t in kernel_variants.CORTEX_M.values() for n, _ in t}
    calls = {n for n in table if f"{n}(&" in (tmp_path / "v" / "model.c").read_text()}
    assert calls and calls <= set(syms)
    assert not (table - calls) & set(syms)
    assert not {"bt_conv_s8", "bt_depthwise_s8", "bt_fully_connected_s8"} & set(syms)
    y, _, _ = runner.run("cortex-m4", tmp_path / "v", x)
    y_ref, _, _ = runner.run("cortex-m4", tmp_path / "r", x)
    assert np.asarray(y).tobytes() == np.asarray(y_ref).tobytes()


def _tiny_cnn():
    path = ROOT.parent / "shared" / "models" / "tiny_cnn_32.tflite"
    return pipeline.read_model(str(path) if path.exists() else "tiny")


@needs_arm
def test_each_widened_fc_form_is_linked_alone(tmp_path):
    """A dense head of 2 outputs (vww's 256 -> 2) calls bt_fully_connected_s8_widened_rq2_few, which the link keeps
    alone: none of the other widened forms (each a function of its own: _pc, _ssat32, _ssat, _rq2), no four-output
    loop (the form is smaller than any of the others); the firmware gives TFLite Micro's bytes."""
    from conftest import fixed_input, tflm_run

    from buildtool import targets
    from buildtool.firmware import runner
    from buildtool.model.writer import serialize
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder("head-256-2", seed=4)
    b.fully_connected(b.input((1, 256)), 2)
    g = b.finish()
    out = tmp_path / "m"
    pipeline.build(g, "cortex-m4", out)
    assert "  bt_fully_connected_s8_widened_rq2_few(&op0_p" in (out / "model.c").read_text()
    syms = runner.symbols(targets.get("cortex-m4"), out / "firmware.elf")
    forms = {n for n, _ in kernel_variants.CORTEX_M["fully_connected"]}
    assert {n for n in forms if n in syms} == {"bt_fully_connected_s8_widened_rq2_few"}
    lib = tmp_path / "fc.o"
    subprocess.run([targets.get("cortex-m4").cc, "-mcpu=cortex-m4", "-mthumb", "-O2", "-c", f"-I{KERNELS / 'include'}",
                    f"-I{KERNELS / 'reference'}", f"-I{KERNELS / 'cortex-m'}", "-ffunction-sections",
                    str(KERNELS / "cortex-m" / "fully_connected.c"), "-o", str(lib)], check=True)
    nm = subprocess.run([targets.get("cortex-m4").binutil("nm"), "-S", str(lib)], capture_output=True, text=True).stdout
    size = {p[3]: int(p[1], 16) for p in (line.split() for line in nm.splitlines()) if len(p) == 4}
    assert all(size["bt_fully_connected_s8_widened_rq2_few"] < size[n] for n in forms
               if n != "bt_fully_connected_s8_widened_rq2_few")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, _, _ = runner.run("cortex-m4", out, x)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])


@pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                    reason="arm toolchain not installed")
def test_avg_pool_calls_its_sxtab16_loop_by_window(tmp_path):
    """model.c on cortex-m4 calls bt_avg_pool_s8_sxt for a window of at most AVG_SXT_TAPS taps (the reference loop not
    linked) and bt_avg_pool_s8 for a larger one (17x17: its reference path); TFLite Micro's bytes."""
    from buildtool.firmware import runner
    from buildtool.model.writer import serialize
    from buildtool.zoo.builder import GraphBuilder
    from conftest import tflm_run

    b = GraphBuilder("pools", seed=4)
    y = b.conv2d(b.input((1, 34, 34, 3)), 8, k=1)
    g = b.finish([b.avg_pool(b.avg_pool(y, 2), 17)])
    x = np.random.default_rng(2).integers(-128, 128, size=(1, 34, 34, 3), dtype=np.int8)
    pipeline.build(g, "cortex-m4", tmp_path / "b")
    src = (tmp_path / "b" / "model.c").read_text()
    assert re.findall(r"^  (bt_avg_pool_s8\w*)\(&op(\d+)_p", src, re.M) == [("bt_avg_pool_s8_sxt", "1"),
                                                                         ("bt_avg_pool_s8", "2")]
    got = np.asarray(runner.run("cortex-m4", tmp_path / "b", x)[0])
    assert got.tobytes() == np.asarray(tflm_run(serialize(g), [x])[0]).tobytes()


@pytest.mark.parametrize("width", [10, 14, 18])
def test_stride_2_layers_link_their_own_row_loop_alone(width, tmp_path):
    """A 3x3 stride-2 layer on bt_dw_s2g calls bt_dw_s2g_N, N = out.w % 6 (kernel_variants.dw_s2g_entry: out.w 5, 7, 9
    -> 5, 1, 3): its firmware links bt_dws2g's loop of rows of N outputs (bt_dws2_tN) and none of the other four, and
    its outputs are TFLite Micro's bytes in QEMU."""
    from conftest import tflm_run
    from test_memory_model import _symbol_sizes

    from buildtool import pipeline
    from buildtool.firmware import runner
    from buildtool.model.writer import serialize
    from buildtool.options import PlanOptions
    from buildtool.zoo.builder import GraphBuilder

    b = GraphBuilder(f"dw-s2-{width}", seed=width)
    b.depthwise(b.input((1, width, width, 16)), 3, 2, activation="NONE")
    g = b.finish()
    n = -(-width // 2) % 6
    out = tmp_path / "fw"
    pipeline.build(g, "cortex-m4", out, PlanOptions(inplace=False))
    assert f"bt_dw_s2g_{n}(&op0_p," in (out / "model.c").read_text()
    loops = {f"bt_dws2_t{k}" for k in range(1, 6)} & set(_symbol_sizes(out / "firmware.elf"))
    assert loops == {f"bt_dws2_t{n}"}
    x = np.random.default_rng(width).integers(-128, 128, size=(1, width, width, 16), dtype=np.int8)
    y, _, _ = runner.run("cortex-m4", out, x)
    assert np.asarray(y).tobytes() == tflm_run(serialize(g), [x])[0].tobytes()
