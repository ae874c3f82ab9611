"""Per-layer tile kernels of fused blocks (codegen/tile_kernels.py): on boards with a kernel variant table
the generated model.c gives each multi-channel conv of a block its own kernel (the layer's variant on its
constants) and passes it to the tile runtime; other boards keep the runtime's bt_conv_s8.

Bit-exactness of firmware using them: tests/test_fused_firmware.py (mcunet-vww1 and tiny on cortex-m4 and
riscv32 in QEMU, against TFLite Micro) and tests/test_channel_groups.py (channel groups); here, the
fallback when another kernel set is linked, and what model.c defines and passes.
"""

from __future__ import annotations

import ctypes
import re
import shutil

import numpy as np
import pytest
from conftest import fixed_input, tflm_run
from test_kernel_variants import _conv_struct, _dw_path_layer, libs  # noqa: F401  (libs: the variant queries' fixture)
from test_kernels import DwP

from buildtool import pipeline, zoo
from buildtool.codegen import kernel_variants
from buildtool.firmware import runner
from buildtool.codegen import tile_kernels
from buildtool.codegen.fused_c import generate
from buildtool.plan.fusion.planner import plan_fused
from buildtool.model.writer import serialize

MODEL = "mcunet-vww1"


@pytest.fixture(scope="module")
def sources():
    """mcunet-vww1's least-RAM streamed fused plan: model.c per board, and on cortex-m4 without instances."""
    g = zoo.build(MODEL)
    plan = plan_fused(g, optimize="ram", input_streamed=True, time_budget=0.0)
    made = {b: generate(g, plan, b) for b in ("cortex-m4", "riscv32", "xcore")}
    out = {b: m[0] for b, m in made.items()}
    out["code plan"] = made["cortex-m4"].code_plan  # the forms of cortex-m4's tile kernels (fused_c.offer)
    with kernel_variants.mode("variants"):
        out["variants"] = generate(g, plan, "cortex-m4")[0]
    return out


def _kernels(c: str) -> dict:
    """tile kernel name -> (its macro call, the runtime call passing it)."""
    out = {}
    for fn in re.findall(r"static void (op\d+_tk)\(const bt_conv_params \*p,", c):
        body = c.split(f"static void {fn}(", 1)[1].split("\n}", 1)[0]
        macro = re.search(r"  (BT_CONV_\w+)\(&q, in, in_y0, out, y0, (?:y1|y0 \+ \d+)[^;]*\);", body)
        calls = re.findall(rf"fx_(?:win_k|conv_inplace_k|chw_kg?)\(&(op\d+)_p, {fn}, ", c)
        out[fn] = (macro.group(1) if macro else None, calls)
    return out


def test_model_c_defines_and_passes_tile_kernels(sources):
    """cortex-m4 and riscv32: each tile kernel calls its set's macro and is passed for its own layer, and for the
    other layers sharing it (tile_kernels.LIFTED: its comment names them all); the fallback to bt_conv_s8 is defined;
    xcore and the variants-only mode keep the runtime's calls."""
    forms = {True: "BT_CONV_PM", "compact": "BT_CONV_PMC", "medium": "BT_CONV_PMM"}
    for board, macro in (("cortex-m4", "BT_CONV_PM"), ("riscv32", "BT_CONV_PW")):
        c = sources[board]
        ks = _kernels(c)
        assert ks, board
        for fn, (m, calls) in ks.items():
            if board == "cortex-m4":  # the form the code budget chose for the layer's tile kernel
                macro = forms[sources["code plan"].choice[int(fn[2:-3])][1]]
            assert m == macro and calls[0] == fn[:-3] and len(set(calls)) == len(calls), (board, fn, m, calls)
            who = f"ops {', '.join(c[2:] for c in calls)}'s" if len(calls) > 1 else f"op {calls[0][2:]}'s"
            assert f"/* {who} tile kernel: " in c, (board, fn, calls)
        fallback = rf"#define {macro}\(p, in, in_y0, out, y0, y1[^)]*\) bt_conv_s8\(p, in, in_y0, out, y0, y1\)"
        assert re.search(fallback, c)
    cm = sources["cortex-m4"]
    # one-channel windows: the runtime's channel groups through the conv's "grp" tile kernel and the depthwise's
    # variant (fx_chw_k); windows of several channels: model.c's loop over them, the conv's "box" tile kernel
    assert re.search(r"fx_chw_kg?\(&(op\d+)_p, \1_tk, &ci, &wv, .*, &op\d+_p, bt_(?:depthwise_s8|dw)_\w+, ", cm)
    assert re.search(r"for \(int ch = 0; ch < \d+; ch \+= \d+\) \{\n +fx_win_k\(&(op\d+)_p, \1_tk, ", cm)
    assert "fx_chw(&" in sources["xcore"] and "fx_chw_k" not in sources["xcore"]
    assert "fx_win_k(&op" in cm and "fx_conv_inplace_k(&op" in cm
    for other in ("xcore", "variants"):
        assert "_tk(" not in sources[other] and "fx_win_k" not in sources[other]
        assert "fx_conv_inplace(&op" in sources[other]


def test_tile_kernel_constants(sources):
    """A tile kernel's struct: the tile's fields from p, the rest the layer's constants; a channel group's
    kernel takes its filter and requantisation from p and has out.c = the group."""
    cm = sources["cortex-m4"]
    body = {fn: cm.split(f"static void {fn}(", 1)[1].split("\n}", 1)[0] for fn in _kernels(cm)}
    for fn, b in body.items():
        # the call's shape from p, or, when every call the runtime makes shares it (tile_kernels.call_shape), out.w
        # and the rows a call as constants
        assert (".w = p->out.w" in b) != bool(re.search(r"out, y0, y0 \+ \d+, ", b)), fn
        assert "p->kh" not in b and "p->act_min" not in b and "p->input_offset" not in b
        grouped = ".filter = p->filter" in b
        assert grouped == (".multiplier = p->multiplier" in b)
        assert grouped or f".multiplier = ({fn[:-3]}_mult + " in b  # its table in the flash image
    assert any(".filter = p->filter" in b for b in body.values())  # vww1 has channel groups
    f = dict(kh=3, kw=3, stride_h=2, stride_w=2, pad_top=1, pad_left=1, filter="w", bias="b", multiplier="m",
             shift="s", **{"in": dict(h=9, w=9, c=8, pixel_stride=8), "out": dict(h=5, w=5, c=16, pixel_stride=16)})
    q = tile_kernels.local_params(f, 4, (7, 8), (3, 4), "box")
    assert q["in"] == dict(h=9, w=7, c=8, pixel_stride=8)
    assert q["out"] == dict(h=5, w="p->out.w", c=4, pixel_stride=4)
    assert q["pad_left"] == "p->pad_left" and q["filter"] == "p->filter" and q["pad_top"] == 1
    assert tile_kernels.local_params(f, 0, (7, 8), (3, 4), "box")["filter"] == "w"
    q = tile_kernels.local_params(f, 0, (), (), "grp")   # fx_chw_k's: geometry and channel group from p
    assert q["in"] == dict(h="p->in.h", w="p->in.w", c=8, pixel_stride="p->in.pixel_stride")
    assert q["out"] == dict(h="p->out.h", w="p->out.w", c="p->out.c", pixel_stride="p->out.pixel_stride")
    assert q["filter"] == "p->filter" and q["shift"] == "p->shift" and q["kh"] == 3 and q["pad_top"] == 1
    one = dict(f, kh=1, kw=1, stride_h=1, stride_w=1, pad_top=0, pad_left=0)
    assert tile_kernels.one_column(one, [(0, 1), (1, 3)], [(0, 2)], False)
    assert not tile_kernels.one_column(one, [(0, 1)], [(0, 2)], True)
    assert not tile_kernels.one_column(one, [(0, 2)], [(0, 2)], False)
    assert not tile_kernels.one_column(f, [(0, 1)], [(0, 2)], False)
    # cortex-m (FX_COL_CALLS 2): boxes of two columns and more rows too, on a row-banded input as well, unless the
    # box is its window's whole width (one call) or the output is row-banded
    assert tile_kernels.one_column(one, [(0, 2)], [(0, 3)], True, 2, 4)
    assert tile_kernels.one_column(one, [(0, 1)], [(0, 2)], True, 2, 1)
    assert not tile_kernels.one_column(one, [(0, 2)], [(0, 3)], False, 2, 2)
    assert not tile_kernels.one_column(one, [(0, 2)], [(0, 2)], False, 2, 4)
    assert not tile_kernels.one_column(one, [(0, 3)], [(0, 9)], False, 2, 4)
    assert not tile_kernels.one_column(one, [(0, 1)], [(0, 2)], True, 2, 4, out_banded=True)
    col = tile_kernels.local_params(one, 0, (7, 8), (3, 4), "col")
    assert col["in"]["pixel_stride"] == "p->in.pixel_stride" and col["pad_left"] == 0


def test_pixels_per_call():
    """Kernels with a per-call set-up (riscv's pointwise loops) only where every call has enough pixels."""
    assert tile_kernels.min_pixels([(0, 3), (3, 5), (5, 5)], [(0, 4)], "box", 16) == 2
    assert tile_kernels.min_pixels([(0, 1), (1, 4)], [(0, 4), (4, 6)], "col", 16) == 2
    assert tile_kernels.min_pixels([(0, 1), (1, 4)], [(0, 4), (4, 6)], "box", 16) == 1
    assert tile_kernels.min_pixels([(0, 9)], [(0, 1)], "inplace", 64) == 4
    assert tile_kernels.worth("bt_conv_s8_pm_rq2_ssat", [(0, 1)], [(0, 1)], "box", 8)
    assert not tile_kernels.worth("bt_conv_s8_pointwise", [(0, 1), (1, 3)], [(0, 1)], "box", 8)
    assert tile_kernels.worth("bt_conv_s8_pointwise", [(0, 2), (2, 4)], [(0, 1)], "box", 8)


def test_call_classes_and_a_copy_per_width():
    """call_classes: one class per output width of a conv's calls (rows a call: 1 on row bands or a box narrower than its
    buffer, else the box's; pad_left None where a width's calls differ); dispatched: a copy per width only when every
    call makes at most TAIL_PIXELS pixels; copies: the last copy runs every other call (width None)."""
    f = dict(kh=3, kw=3, stride_h=2, stride_w=2, pad_top=1, pad_left=1, dil_h=1, dil_w=1,
             **{"in": dict(h=16, w=16, c=16, pixel_stride=16), "out": dict(h=8, w=8, c=32, pixel_stride=32)})
    boxes = [(0, 5, 0, 2, False, False, 0), (0, 5, 2, 3, False, False, -3), (5, 9, 3, 4, False, False, -2)]
    classes = tile_kernels.call_classes(f, boxes)
    assert classes == [(1, 1, None), (2, 1, 0)]
    assert tile_kernels.call_shape(f, boxes) is None and tile_kernels.dispatched(classes) == classes
    assert tile_kernels.call_shape(f, boxes[1:]) == (1, 1, None) and tile_kernels.dispatched(classes[:1]) is None
    wide = boxes + [(0, 5, 4, 7, False, False, 0)]  # a call of three pixels: one copy on the call's out.w
    assert tile_kernels.call_classes(f, wide)[-1] == (3, 1, 0) and tile_kernels.dispatched(
        tile_kernels.call_classes(f, wide)) is None
    whole = [(0, 4, 0, 1, False, True, 1), (4, 6, 1, 2, False, True, 0)]  # whole boxes: their rows in one call
    assert tile_kernels.call_classes(f, whole) == [(1, None, None)] and tile_kernels.call_shape(f, whole) is None
    assert tile_kernels.call_classes(f, [(0, 2, 0, 1, True, False, 1)]) == [(1, 1, 1)]
    assert tile_kernels.call_classes(dict(f, kh=1, kw=1, stride_h=1, stride_w=1, pad_top=0, pad_left=0),
                                     [(0, 2, 0, 1, False, False, 0)]) is None  # a 1x1's column calls
    cs = tile_kernels.copies(f, 0, (3, 16), (3, 32), "box", dict(shape=None, classes=classes))
    assert [(w, q["out"]["w"], q["pad_left"], rows) for w, q, rows in cs] == [(1, 1, "p->pad_left", "y0 + 1"),
                                                                             (None, 2, 0, "y0 + 1")]


def test_depthwise_calls_take_the_layers_variant(sources):
    """cortex-m4: a block's depthwise calls go through fx_win_dk with the variant the table picks for the layer
    (none left on the dispatcher through fx_win), with the fallback to bt_depthwise_s8 for another set; riscv32
    and xcore, whose sets have no depthwise variants, keep fx_win on a channel group; riscv32's calls on all of a
    layer's several channels go through fx_win_dk on the dispatcher (fused_c.depthwise: its one-channel box paths,
    never taken there, not linked)."""
    cm = sources["cortex-m4"]
    calls = re.findall(r"fx_win_dk(?:_allg)?\(&op\d+_p, (\w+), ", cm)   # _allg: fused_c.py entries
    paths = {name for name, _ in kernel_variants.CORTEX_M["depthwise_m1"]}
    assert calls and set(calls) <= paths | {"bt_depthwise_s8_m1_rq2"} and "fx_win(FX_DW" not in cm
    assert set(calls) & paths  # the one path all of a layer's tile calls take (tile_kernels.dw_path_of_calls)
    for fn in set(calls):
        assert f"#define {fn} bt_depthwise_s8\n" in cm
    rv = sources["riscv32"]
    assert re.findall(r"fx_win_dk\(&op\d+_p, (\w+), [^;]*, (-?\w+), \w+\);", rv) == [("bt_depthwise_s8", "-1")]
    assert "fx_win(FX_DW, &op" in rv and not re.search(r"fx_win\(FX_DW, [^;]*, -1, \w+\);", rv)
    assert "fx_win_dk" not in sources["xcore"] and "fx_win(FX_DW, &op" in sources["xcore"]


def test_dw_small_entry_names_the_band_every_group_takes():
    """dw_small's entry (depthwise.c bt_dw_small_*): the row length of (out.w - 1) stride + 3 cells; every group of
    four on the sat path (shift -22 and up, |bias| < 2^29, the whole int8 range) at its stride, or none ("f", "m"
    without bt_rq2); groups that differ keep the path's own name ("")."""
    o = dict(h=4, w=5, c=8, pixel_stride=8)
    p = dict(out=o, stride_w=1, act_min=-128, act_max=127, shifts=[-8] * 8, bias=[100] * 8)
    assert tile_kernels.dw_small_entry(p, 1) == "bt_dw_small_s1_8"
    assert tile_kernels.dw_small_entry(dict(p, stride_w=2, out=dict(o, w=12)), 1) == "bt_dw_small_s2_32"
    assert tile_kernels.dw_small_entry(dict(p, act_min=-100), 1) == "bt_dw_small_f_8"
    assert tile_kernels.dw_small_entry(p, 0) == "bt_dw_small_m_8"
    off = dict(p, shifts=[-23, -8, -8, -8] * 2)
    assert tile_kernels.dw_small_entry(off, 1) == "bt_dw_small_f_8"
    assert tile_kernels.dw_small_entry(dict(p, shifts=[-23] + [-8] * 7), 1) == ""
    assert tile_kernels.dw_small_entry(dict(p, bias=[1 << 29] + [0] * 7), 1) == ""
    assert tile_kernels.dw_small_entry(dict(p, bias=[]), 1) == "bt_dw_small_s1_8"


def test_variant_holds_for_every_group():
    """A group's kernel needs one instantiated variant for every group's channels (bt_rq2 over each)."""
    class E:
        variants = kernel_variants.TABLES["cortex-m"]
    layer = dict(kh=1, kw=1, act_min=-128, act_max=127, pad_top=0, pad_left=0, **{"in": dict(c=8), "out": dict(c=8)},
                 multipliers=[1 << 30] * 8, shifts=[-3] * 8)
    assert tile_kernels.variant(E, layer, 4) == "bt_conv_s8_pm_rq2_ssat"
    assert tile_kernels.variant(E, layer, 2) is None  # out.c < 4: the direct loops
    slow = dict(layer, multipliers=[1 << 30] * 4 + [1 << 29] * 4)
    assert tile_kernels.variant(E, slow, 4) is None  # groups would take different variants
    assert tile_kernels.variant(E, slow, 0) == "bt_conv_s8_pm"
    E.variants = None
    assert tile_kernels.variant(E, layer, 0) is None


@pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm")),
                    reason="arm-none-eabi-gcc / qemu-system-arm not installed")
def test_reference_set_runs_the_same_model_c(tmp_path):
    """cortex-m4 model.c with tile kernels linked with the reference set (the macros fall back to
    bt_conv_s8) gives TFLite Micro's bytes."""
    g = zoo.build("tiny")
    plan = plan_fused(g, optimize="ram", time_budget=0.0)
    pipeline.build(g, "cortex-m4", tmp_path, plan=plan, kernels=("reference",))
    assert "_tk(" in (tmp_path / "model.c").read_text()
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, _, _ = runner.run("cortex-m4", tmp_path, x)
    assert np.array_equal(y, tflm_run(serialize(g), [x])[0])


def test_depthwise_tile_call_path_is_what_depthwise_c_picks(libs):
    """tile_kernels.dw_call_path, the path model.c passes for a block's depthwise when every tile call takes it: on
    random layers cut into random tile calls (a box's columns with its own pad_left and buffer width, any rows, any
    first input row) it names the path depthwise.c's dw_path picks for that call (bt_depthwise_s8_path), and the
    tile calls reach several paths."""
    lib, rng = libs["cortex-m"], np.random.default_rng(52)
    seen, wrong, n = set(), [], 0
    while n < 1500:
        layer = _dw_path_layer(rng)
        if not layer or layer[0]["depth_multiplier"] != 1:
            continue
        p, bias = layer
        o = p["out"]
        w = int(rng.integers(1, o["w"] + 1))
        y0 = int(rng.integers(0, o["h"]))
        y1 = int(rng.integers(y0 + 1, o["h"] + 1))
        q = dict(p, pad_left=int(rng.integers(-2 * o["w"], p["pad_left"] + 1)),
                 **{"in": dict(p["in"], w=int(rng.integers(1, p["in"]["w"] + 1))), "out": dict(o, w=w)})
        in_y0 = int(rng.integers(0, max(y0 * p["stride_h"] - p["pad_top"], 0) + 1))
        keep: list = []
        conv = _conv_struct(q, keep)
        conv.stride_h, conv.stride_w, conv.dil_h, conv.dil_w = q["stride_h"], q["stride_w"], q["dil_h"], q["dil_w"]
        if bias is not None:
            b = np.array(bias, np.int32)
            keep.append(b)
            conv.bias = ctypes.c_void_p(b.ctypes.data)
        want = lib.bt_depthwise_s8_path(ctypes.byref(DwP(conv=conv, depth_multiplier=1)), in_y0, y0, y1).decode()
        fast = int(kernel_variants.choose(kernel_variants.CORTEX_M, "depthwise", p) == "bt_depthwise_s8_m1_rq2")
        got = tile_kernels.dw_call_path(dict(q, bias=bias or []), in_y0, y0, y1, fast)
        seen.add(want)
        n += 1
        if got != want:
            wrong.append((want, got, q, in_y0, y0, y1))
    assert not wrong, f"{len(wrong)} of {n} differ, e.g. {wrong[0]}"
    assert len(seen) >= 8, seen



def test_whole_height_columns_run_on_the_rows_path_byte_exact(libs):
    """tile_kernels.dw_column_entry: a fused tile's 3x3 depthwise column under 4 outputs wide and of the layer's whole
    height (its window from the first row), which depthwise.c's dispatcher gives the box path, runs on the rows path
    transposed: bt_dw_rows_q4_RL on bt_dw_q4's terms, else bt_dw_rows_rq2. On random layers (strides 1 or 2 both ways,
    the whole int8 range or not), random windows of the input (at the image's borders or inside) and random boxes of
    output columns in a wider output buffer, the calls fx_win_dk_cols makes (dw_col_calls: a call per column, the
    buffer's row pitch its pixel stride) on the entry dw_cols_entry names give the reference kernel's bytes in the
    buffer (the set compiled for the host); dw_path_of_calls names the entry for such calls where they are whole
    boxes, and keeps the box path for a column from a later row."""
    lib, rng = libs["cortex-m"], np.random.default_rng(53)
    seen, n = set(), 0
    while n < 200:
        c, s = 4 * int(rng.integers(1, 13)), int(rng.integers(1, 3))
        H, W = int(rng.integers(2, 81)), int(rng.integers(2, 30))   # the layer's input ('same': output H/s x W/s)
        oh, ow = -(-H // s), -(-W // s)
        pt, pl = max((oh - 1) * s + 3 - H, 0) // 2, max((ow - 1) * s + 3 - W, 0) // 2
        nb = int(rng.integers(1, 4))   # the box's columns
        if nb > ow:
            continue
        ca = int(rng.integers(0, ow - nb + 1))
        cb = ca + nb
        lo, hi = max(ca * s - pl, 0), min((cb - 1) * s - pl + 3, W)   # the input window: the columns the box reads
        mult = [int(v) for v in rng.integers(1 << 30, (1 << 31) - 1, size=c)]
        shift = [int(v) for v in rng.integers(-24, -2, endpoint=True, size=c)]
        bias = [int(v) for v in rng.integers(-20000, 20000, size=c)]
        full = rng.random() < 0.7
        f = {"in": {"h": H, "w": W, "c": c, "pixel_stride": c}, "out": {"h": oh, "w": ow, "c": c, "pixel_stride": c},
             "kh": 3, "kw": 3, "stride_h": s, "stride_w": s, "dil_h": 1, "dil_w": 1, "pad_top": pt, "pad_left": pl,
             "input_offset": int(rng.integers(-128, 128)), "output_offset": int(rng.integers(-128, 128)),
             "act_min": -128 if full else -100, "act_max": 127}
        values = dict(bias=bias, multipliers=mult, shifts=shift)
        assert kernel_variants.rq2_ok(mult, shift)  # the layer's variant bt_depthwise_s8_m1_rq2 (fast 1)
        wp = nb + int(rng.integers(0, 3))   # the output buffer: wider than the box
        c0 = ca - int(rng.integers(0, wp - nb + 1))
        ib = dict(wp=hi - lo, ps=c, r0=0, c0=lo, rows=None)
        ob = dict(wp=wp, ps=c, r0=0, c0=c0, rows=None)
        calls = tile_kernels.dw_col_calls(f, ib, ob, 0, oh, ca, cb)
        name = tile_kernels.dw_cols_entry(calls, values, 1)
        if oh < 4:   # too short a row for the rows path's set-up: the box path's
            assert name is None
            continue
        assert name, f
        q4 = full and all(-v - 1 <= 21 for v in shift) and s == 1
        assert name.startswith("bt_dw_rows_q4_") == q4 and (q4 or name == "bt_dw_rows_rq2"), (name, f)
        keep: list = []
        x = rng.integers(-128, 128, size=(H, W, c), dtype=np.int8)
        win = np.ascontiguousarray(x[:, lo:hi])
        w = rng.integers(-128, 128, size=9 * c, dtype=np.int8)
        b = np.array(bias, np.int32)
        keep += [win, w, b]
        buf = np.zeros((oh, wp, c), np.int8)
        for col, (q, _, _, _, y0, y1) in zip(range(ca, cb), calls):
            conv = _conv_struct(dict(q, multipliers=mult, shifts=shift), keep)
            conv.stride_h, conv.stride_w = s, s
            conv.filter, conv.bias = w.ctypes.data_as(ctypes.c_void_p), b.ctypes.data_as(ctypes.c_void_p)
            x0 = tile_kernels.win_geom(f, ib, ob, col, col + 1, -1)[0]
            arg = DwP(conv=conv, depth_multiplier=1)
            getattr(lib, name)(ctypes.byref(arg), ctypes.c_void_p(win.ctypes.data + (x0 - lo) * c), 0,
                               ctypes.c_void_p(buf.ctypes.data + (col - c0) * c), y0, y1)
        whole = {"in": dict(f["in"]), "out": dict(f["out"])}
        conv = _conv_struct(dict(f, **whole, multipliers=mult, shifts=shift), keep)
        conv.stride_h, conv.stride_w = s, s
        conv.filter, conv.bias = w.ctypes.data_as(ctypes.c_void_p), b.ctypes.data_as(ctypes.c_void_p)
        xs = np.ascontiguousarray(x)
        ref = np.zeros((oh, ow, c), np.int8)
        lib.bt_ref_depthwise_generic_s8(ctypes.byref(DwP(conv=conv, depth_multiplier=1)),
                                        xs.ctypes.data_as(ctypes.c_void_p), 0, ref.ctypes.data_as(ctypes.c_void_p), 0, oh)
        assert np.array_equal(buf[:, ca - c0:cb - c0], ref[:, ca:cb]), (name, f, ca, cb, wp, c0)
        if nb == 1 and wp == 1:   # a whole box of one column: fx_win_dk's call, the same entry
            assert tile_kernels.dw_path_of_calls(tile_kernels.dw_box_calls(f, ib, ob, 0, oh, ca, cb, -1), values,
                                                 1) == name
        assert tile_kernels.dw_path_of_calls([(calls[0][0], 0, c, 1, 1, oh)], values, 1) != name
        seen.add((name, s, nb))
        n += 1
    names = {nm for nm, _, _ in seen}
    assert {"bt_dw_rows_q4_8", "bt_dw_rows_q4_16", "bt_dw_rows_q4_32", "bt_dw_rows_q4_56", "bt_dw_rows_rq2"} <= names
    assert {(s, nb) for _, s, nb in seen} == {(s, nb) for s in (1, 2) for nb in (1, 2, 3)}


def test_column_entries_where_the_firmware_links_them_or_at_speed():
    """fused_c.resolve_columns: a depthwise's whole-height column calls on the rows path (dw_column_entry) only where the
    firmware links that entry anyway (a plain layer's call of it, as model_c settled the plain layers' entries) or at
    optimize_code=speed, else the calls it made before (no new kernel code: benchmarks/code_size.py --fused). mbv2-w0.35's
    least-RAM plans on cortex-m4: input streamed, ops 25, 29, 33's 9x1 columns keep the box path by default and take
    bt_dw_rows_q4_16 at speed; in the arena op 7's 2-column boxes of a 4-column window go through fx_win_dk_cols, a
    column a call, on the bt_dw_rows_q4_16 the plain layers call (its 36-output columns in strips of at most 14)."""
    from buildtool.codegen.code_budget import CodeGoal
    g = zoo.build("mbv2-w0.35")
    streamed = plan_fused(g, optimize="ram", input_streamed=True, time_budget=0.0)
    c = generate(g, streamed, "cortex-m4")[0]
    for op in (25, 29, 33):
        assert f"(&op{op}_p, bt_dw_box_rq2, " in c
    assert "bt_dw_rows_q4" not in c and "@" not in c.replace("@brief", "")
    fast = generate(g, streamed, "cortex-m4", code=CodeGoal(preset="speed"))[0]
    for op in (25, 29, 33):
        assert f"(&op{op}_p, bt_dw_rows_q4_16, " in fast
    arena = generate(g, plan_fused(g, optimize="ram", time_budget=0.0), "cortex-m4")[0]
    assert "fx_win_dk_cols(&op7_p, bt_dw_rows_q4_16, " in arena and re.search(r"\bbt_dw_rows_q4_16\(&op\d+_p", arena)
    # strips of at most RL - 2 outputs, each at least 4: 36 in six of 6 on RL 8; 7 not in 3 + 4 on RL 8
    assert tile_kernels.dw_rows_rls(36) == [8, 16, 32, 56] and tile_kernels.dw_rows_rls(7) == [16, 32, 56]
    assert tile_kernels.dw_rows_rls(3) == []
