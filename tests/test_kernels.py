"""The C kernel library (kernels/): every kernel set against the reference set, on the host and in
QEMU, and the reference set against TensorFlow Lite Micro on one-operator models.

kernels/tests/kernel_test.c runs each kernel of a set on deterministic pseudo-random cases (shapes,
strides, dilations, paddings, pixel strides, row bands, per-channel quantisation, aliasing,
in-place depthwise) and compares every byte with the reference set linked next to it.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import pickle
import re
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from ctypes import POINTER, Structure, c_int8, c_int16, c_int32, c_uint16, c_void_p
from pathlib import Path

import numpy as np
import pytest

from buildtool.codegen import emitter, kernel_variants
from buildtool.firmware.toolchain import kernel_parts
from conftest import tflm_run

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "buildtool" / "kernels" / "tests"))
import kbuild  # noqa: E402

MIN_CASES = 400  # a floor: kernel_test.c runs 1,283 comparisons on the cortex-m set (2026-11-26)


def _assert_clean(rc: int, out: str, kset: str = "") -> None:
    """No failure, enough cases, (kset with a variant table) every variant of the table ran, and the
    wide SOFTMAX rows equal the numpy executor."""
    passed, failed = kbuild.summary(out)
    assert (failed, rc) == (0, 0), out[-3000:]
    assert passed >= MIN_CASES, out[-3000:]
    _check_softmax_wide(out)
    if kset in kernel_variants.TABLES:
        ran = set(re.findall(r"^variants:(.*)$", out, re.M)[-1].split())
        assert ran == {name for t in kernel_variants.TABLES[kset][1].values() for name, _ in t}


SANITIZE = "shift,signed-integer-overflow"  # gcc -fsanitize= of test_set_on_host_under_ubsan (shift: base and exponent)

# kernels/tests/unary_test.c test_softmax_widths: its (beta, input scale) pairs, widths and output lines
SOFTMAX_WIDE_Q = ((1.0, 0.1), (1.0, 0.02))
SOFTMAX_WIDE_WIDTHS = (2, 10, 511, 512, 513, 1000, 1001, 4096, 8192)
SOFTMAX_WIDE_LINE = re.compile(r"^softmax_wide q=(\d+) w=(\d+) pat=(\d+) bits=(\d+) fnv=(\d+)$", re.M)


def _softmax_mix(v: np.ndarray) -> np.ndarray:
    """unary_test.c's softmax_mix on uint32 values held in uint64."""
    m = 0xFFFFFFFF
    v = ((v ^ (v >> 16)) * 0x7FEB352D) & m
    v = ((v ^ (v >> 15)) * 0x846CA68B) & m
    return v ^ (v >> 16)


def softmax_logits(pattern: int, width: int) -> np.ndarray:
    """unary_test.c's softmax_logit: 37 everywhere (0), 37 +- 1 (1), random (2)."""
    i = np.arange(width, dtype=np.uint64)
    if pattern == 0:
        return np.full(width, 37, np.int8)
    if pattern == 1:
        return (36 + _softmax_mix(i) % 3).astype(np.int8)
    return (_softmax_mix(i ^ 0x9E3779B9) >> 24).astype(np.uint8).view(np.int8)


def _fnv(y: np.ndarray) -> int:
    h = 2166136261
    for b in np.ascontiguousarray(y.astype("<" + y.dtype.str[1:])).view(np.uint8).tolist():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def _check_softmax_wide(out: str) -> None:
    """Every softmax_wide line of a kernel_test.c run (any set, any target) against the numpy executor's
    SOFTMAX (refops.softmax.softmax_rows, what the executor runs) on the same logits."""
    from buildtool.refops.softmax import softmax_params, softmax_rows
    src = (kbuild.KERNELS / "tests" / "unary_test.c").read_text()
    assert all("{%d, %d, %d}" % softmax_params(*q) in src for q in SOFTMAX_WIDE_Q)  # g_softmax_q
    lines = SOFTMAX_WIDE_LINE.findall(out)
    assert len(lines) == len(SOFTMAX_WIDE_Q) * len(SOFTMAX_WIDE_WIDTHS) * 3 * 2, out[-3000:]
    bad = []
    for q, w, pat, bits, h in (tuple(map(int, t)) for t in lines):
        want = softmax_rows(softmax_logits(pat, w)[None], *softmax_params(*SOFTMAX_WIDE_Q[q]), bits)[0]
        if _fnv(want.astype(np.int8 if bits == 8 else np.int16)) != h:
            bad.append(f"q={q} w={w} pattern={pat} bits={bits}: the kernel's bytes (FNV-1a {h}) are not the "
                       f"numpy executor's (values {np.unique(want).tolist()})")
    assert not bad, "SOFTMAX differs from the numpy executor:\n" + "\n".join(bad)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kernels")


needs_arm = pytest.mark.skipif(not kbuild.tools_present("arm-none-eabi-gcc", "qemu-system-arm"),
                               reason="arm-none-eabi-gcc / qemu-system-arm not installed")
needs_rv = pytest.mark.skipif(not kbuild.tools_present("riscv64-unknown-elf-gcc", "qemu-system-riscv32"),
                              reason="riscv64-unknown-elf-gcc / qemu-system-riscv32 not installed")


@pytest.fixture(scope="module")
def builds(out_dir):
    """All default-run builds started at once (compiling dominates the run time); tests wait on theirs."""
    jobs = {("host", s): (kbuild.build_host, (s, out_dir)) for s in kbuild.SETS}
    jobs[("ubsan", "reference")] = (kbuild.build_host, ("reference", out_dir, (), kbuild.KERNELS, SANITIZE))
    if kbuild.tools_present("arm-none-eabi-gcc"):
        jobs[("arm", "cortex-m4")] = (kbuild.build_arm, ("cortex-m", out_dir, "cortex-m4"))
    if kbuild.tools_present("riscv64-unknown-elf-gcc"):
        for rvv in (False, True):
            jobs[("rv", rvv)] = (kbuild.build_riscv, ("riscv", out_dir, rvv))
    with ThreadPoolExecutor(max_workers=4) as ex:
        yield {k: ex.submit(fn, *args) for k, (fn, args) in jobs.items()}


# --------------------------------------------------------------------------- every set, host
@pytest.mark.parametrize("kset", kbuild.SETS)
def test_set_matches_reference_on_host(kset, builds):
    """cortex-m runs its exact C model of SXTB16/SMLAD here, xcore its C model of the VPU."""
    rc, out = kbuild.run_host(builds[("host", kset)].result())
    assert f"kernel set: {kset}" in out
    _assert_clean(rc, out, kset)


@pytest.mark.parametrize("kset", ["reference"] + [pytest.param(s, marks=pytest.mark.slow)
                                                  for s in kbuild.SETS if s != "reference"])
def test_set_on_host_under_ubsan(kset, builds, out_dir):
    """kernel_test.c built with gcc's shift and signed-integer-overflow sanitizers, which stop it at the
    first shift by 32 or more, left shift of a negative value or int32 overflow: SOFTMAX's rounding shift by
    32 at 512+ logits near the maximum, its sum of exponentials overflowing int32 at 4096
    (test_softmax_widths) and int8 ADD's half-multiplier term shifting a negative sum left
    (reference/add_dense.h) were all three."""
    key = ("ubsan", kset)
    exe = builds[key].result() if key in builds else kbuild.build_host(kset, out_dir, sanitize=SANITIZE)
    rc, out = kbuild.run_host(exe)
    assert "runtime error" not in out, out[-3000:]
    _assert_clean(rc, out, kset)


def test_broken_kernel_is_caught(out_dir, tmp_path):
    """A conv off by one in one output channel must fail the suite (the comparison can fail)."""
    src = (kbuild.KERNELS / "reference" / "conv.c").read_text()
    broken = src.replace("o[oc] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);",
                         "o[oc] = (int8_t)bt_clamp(acc + (oc == 2), p->act_min, p->act_max);")
    assert broken != src
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "conv.c").write_text(broken)
    exe = kbuild.build_host("broken", out_dir, set_root=tmp_path)
    rc, out = kbuild.run_host(exe)
    passed, failed = kbuild.summary(out)
    assert rc == 1 and failed > 0 and "FAIL conv" in out


# --------------------------------------------------------------------------- QEMU targets
@needs_arm
@pytest.mark.parametrize("cpu", ["cortex-m4", pytest.param("cortex-m7", marks=pytest.mark.slow),
                                 pytest.param("cortex-m33", marks=pytest.mark.slow)])
def test_cortex_m_set_in_qemu(cpu, builds, out_dir):
    key = ("arm", cpu)
    elf = builds[key].result() if key in builds else kbuild.build_arm("cortex-m", out_dir, cpu=cpu)
    rc, out = kbuild.run_cmd(kbuild.arm_cmd(elf, cpu=cpu))
    assert "kernel set: cortex-m" in out
    _assert_clean(rc, out, "cortex-m")


@needs_arm
def test_benchmark_image_runs_clean_and_its_regions_count(out_dir):
    """benchmarks/kernels_micro.py's image (-DBT_BENCH: the four benchmark kernels of each set run once between
    marker functions before the test suite) builds, its benchmark outputs equal the reference set's and the
    whole suite still passes; the plugin counts the 1x1 conv's marker regions, the optimised set's fewer."""
    elf = kbuild.build_arm("cortex-m", out_dir, cpu="cortex-m4", bench=True)
    rc, out = kbuild.run_cmd(kbuild.arm_cmd(elf))
    _assert_clean(rc, out, "cortex-m")
    assert "FAIL bench" not in out
    plugin = kbuild.build_plugin(out_dir)
    ref, opt = (kbuild.count_region(kbuild.arm_cmd, elf, plugin, f"bench_0_{s}_begin", f"bench_0_{s}_end",
                                    "arm-none-eabi-nm", out_dir) for s in ("ref", "opt"))
    assert 0 < opt < ref


@needs_arm
def test_helium_set_in_qemu(out_dir):
    """The cortex-m55 set (Helium/MVE: conv, depthwise, fully connected) on mps3-an547, every case byte for
    byte against the reference set linked beside it."""
    elf = kbuild.build_arm("cortex-m55", out_dir, cpu="cortex-m55")
    rc, out = kbuild.run_cmd(kbuild.arm_cmd(elf, cpu="cortex-m55"))
    assert "kernel set: cortex-m55" in out
    _assert_clean(rc, out, "cortex-m55")


@needs_arm
@pytest.mark.slow
def test_reference_set_on_cortex_m3(out_dir):
    """The portable set on a core without DSP instructions."""
    elf = kbuild.build_arm("reference", out_dir, cpu="cortex-m3")
    _assert_clean(*kbuild.run_cmd(kbuild.arm_cmd(elf, cpu="cortex-m3")))


@needs_arm
@needs_rv
@pytest.mark.slow
@pytest.mark.parametrize("opt", ["-O0", "-Os", "-O3"])
def test_optimised_sets_at_other_optimisation_levels(opt, out_dir):
    """The inline asm (register budget) and the freestanding code (no memcpy/memset calls) hold at
    every optimisation level a firmware build may use."""
    elf = kbuild.build_arm("cortex-m", out_dir, cpu="cortex-m4", opt=opt)
    _assert_clean(*kbuild.run_cmd(kbuild.arm_cmd(elf)))
    for rvv in (True, False):   # the scalar paths are compiled only without BT_RVV
        elf = kbuild.build_riscv("riscv", out_dir, rvv=rvv, opt=opt)
        _assert_clean(*kbuild.run_cmd(kbuild.riscv_cmd(elf, rvv=rvv)))


@needs_rv
@pytest.mark.parametrize("rvv", [False, True], ids=["rv32imac", "rvv"])
def test_riscv_set_in_qemu(rvv, builds):
    rc, out = kbuild.run_cmd(kbuild.riscv_cmd(builds[("rv", rvv)].result(), rvv=rvv))
    assert f"kernel set: {'riscv-rvv' if rvv else 'riscv'}" in out
    _assert_clean(rc, out, "" if rvv else "riscv")


@needs_rv
def test_rvv_build_really_uses_the_vector_unit(builds):
    """Without V in the CPU the RVV build must trap (exit 97): the vector paths really run."""
    rc, out = kbuild.run_cmd(kbuild.riscv_cmd(builds[("rv", True)].result(), rvv=False))
    assert rc == 97 and "mcause=0x00000002" in out


# --------------------------------------------------------------------------- reference vs TFLM
class Shape(Structure):
    _fields_ = [(n, c_int32) for n in ("h", "w", "c", "pixel_stride")]


def _ints(*names):
    return [(n, c_int32) for n in names]


def _shorts(*names):
    """bt_kernels.h's 16-bit fields (the layer structs' geometry and quantisation: 24 bytes less a conv's struct):
    sizes unsigned (emitter.PARAM16), offsets, pads and bounds signed."""
    return [(n, c_uint16 if n in emitter.PARAM16 and emitter.PARAM16[n][0] >= 0 else c_int16) for n in names]


class ConvP(Structure):
    _fields_ = ([("inp", Shape), ("out", Shape)] + _shorts("kh", "kw", "stride_h", "stride_w", "dil_h", "dil_w")
                + _ints("pad_top", "pad_left", "input_offset", "output_offset", "act_min", "act_max")
                + [(n, c_void_p) for n in ("filter", "bias", "multiplier", "shift")])


class DwP(Structure):
    _fields_ = [("conv", ConvP), ("depth_multiplier", c_int32)]


class FcP(Structure):
    _fields_ = (_ints("n_in", "n_out", "batches")
                + _shorts("input_offset", "filter_offset", "output_offset", "act_min", "act_max", "per_channel")
                + [(n, c_void_p) for n in ("weights", "bias", "multiplier", "shift")])


class Bcast4(Structure):
    _fields_ = [(n, c_int32 * 4) for n in ("dims", "a_stride", "b_stride", "out_stride")]


class AddP(Structure):
    _fields_ = _ints("input1_offset", "input2_offset", "output_offset", "left_shift", "input1_multiplier",
                     "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier", "output_shift",
                     "act_min", "act_max") + [("b", Bcast4)]


class MulP(Structure):
    _fields_ = _ints("input1_offset", "input2_offset", "output_offset", "output_multiplier", "output_shift",
                     "act_min", "act_max") + [("b", Bcast4)]


class PoolP(Structure):
    _fields_ = ([("inp", Shape), ("out", Shape)] + _shorts("filter_h", "filter_w", "stride_h", "stride_w")
                + _ints("pad_top", "pad_left") + _shorts("act_min", "act_max"))


class MeanP(Structure):
    _fields_ = _ints("outer", "reduce", "inner", "outer_stride", "reduce_stride", "input_zp", "output_zp",
                     "multiplier", "shift", "same_qparams")


class SoftmaxP(Structure):
    _fields_ = _ints("rows", "depth", "input_multiplier", "input_left_shift", "diff_min")


class LogisticP(Structure):
    _fields_ = _ints("n", "input_zero_point", "input_range_radius", "input_multiplier", "input_left_shift")


class HardSwishP(Structure):
    _fields_ = _ints("n", "input_zero_point", "output_zero_point", "reluish_multiplier_fixedpoint_int16",
                     "reluish_multiplier_exponent", "output_multiplier_fixedpoint_int16",
                     "output_multiplier_exponent")


class RequantP(Structure):
    _fields_ = _ints("n", "input_zp", "output_zp", "multiplier", "shift")


@pytest.fixture(scope="module")
def ref_lib(out_dir):
    so = out_dir / "libbt_reference.so"
    # the TFLM kernels; fused.c (the tile runtime) needs a platform and is checked by kernel_test.c
    srcs = [str(p) for p in sorted((kbuild.KERNELS / "reference").glob("*.c")) if p.name != "fused.c"]
    subprocess.run(["gcc", "-std=c99", "-O2", "-shared", "-fPIC", "-Wall", "-Werror",
                    f"-I{kbuild.KERNELS / 'include'}", *srcs, "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(c_void_p)


def _i32(values) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.int32).reshape(-1))


def _run_tflm(g, x: np.ndarray) -> np.ndarray:
    from buildtool.model import writer as tflite_writer
    return tflm_run(tflite_writer.serialize(g), [x])[0]


def _input(g, seed=3) -> np.ndarray:
    t = g.tensors[g.inputs[0]]
    return np.random.default_rng(seed).integers(-128, 128, size=t.shape, dtype=np.int8)


def _shape(t) -> Shape:
    _, h, w, c = t.shape
    return Shape(h, w, c, c)


def _conv_like(lib, g, x):
    from buildtool.model import ops
    from buildtool.codegen import qparams
    op = g.operators[0]
    ti, tf, to = g.tensors[op.inputs[0]], g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    o = op.options
    dw = op.opcode == "DEPTHWISE_CONV_2D"
    kh, kw = tf.shape[1], tf.shape[2]
    m, s = qparams.conv_multipliers(g, op)
    lo, hi = qparams.act_range(g, op)
    keep = [np.ascontiguousarray(tf.data.astype(np.int8)), _i32(g.tensors[op.inputs[2]].data), _i32(m), _i32(s)]
    p = ConvP(_shape(ti), _shape(to), kh, kw, o["stride_h"], o["stride_w"], o["dilation_h"], o["dilation_w"],
              ops.conv_padding(ti.shape[1], kh, o["stride_h"], o["dilation_h"], o["padding"]),
              ops.conv_padding(ti.shape[2], kw, o["stride_w"], o["dilation_w"], o["padding"]),
              -ti.zero_point, to.zero_point, lo, hi, *map(_ptr, keep))
    y = np.zeros(to.shape, np.int8)
    xin = np.ascontiguousarray(x)
    if dw:
        d = DwP(p, o.get("depth_multiplier", 1))
        lib.bt_depthwise_s8(ctypes.byref(d), _ptr(xin), 0, _ptr(y), 0, to.shape[1])
    else:
        lib.bt_conv_s8(ctypes.byref(p), _ptr(xin), 0, _ptr(y), 0, to.shape[1])
    return y


def _fc(lib, g, x):
    from buildtool.codegen import qparams
    op = g.operators[0]
    tw, to = g.tensors[op.inputs[1]], g.tensors[op.outputs[0]]
    ti = g.tensors[op.inputs[0]]
    m, s, pc = qparams.fc_multipliers(g, op)
    lo, hi = qparams.act_range(g, op)
    keep = [np.ascontiguousarray(tw.data.astype(np.int8)), _i32(g.tensors[op.inputs[2]].data), _i32(m), _i32(s)]
    n_out, n_in = tw.shape
    p = FcP(n_in, n_out, x.size // n_in, -ti.zero_point, 0, to.zero_point, lo, hi, pc, *map(_ptr, keep))
    y = np.zeros(to.shape, np.int8)
    lib.bt_fully_connected_s8(ctypes.byref(p), _ptr(np.ascontiguousarray(x)), _ptr(y))
    return y


def _bcast(a_shape, b_shape, out_shape) -> Bcast4:
    def strides(shape):
        shape = (1,) * (4 - len(shape)) + tuple(shape)
        st, acc = [0] * 4, 1
        for k in range(3, -1, -1):
            st[k] = 0 if shape[k] == 1 else acc
            acc *= shape[k]
        return st
    dims = (1,) * (4 - len(out_shape)) + tuple(out_shape)
    return Bcast4((c_int32 * 4)(*dims), (c_int32 * 4)(*strides(a_shape)), (c_int32 * 4)(*strides(b_shape)),
                  (c_int32 * 4)(*strides(dims)))


def _binary(lib, g, x, b_data):
    from buildtool.codegen import qparams
    op = g.operators[0]
    ta, tb, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    q = _bcast(ta.shape, tb.shape, to.shape)
    y = np.zeros(to.shape, np.int8)
    a, b = np.ascontiguousarray(x), np.ascontiguousarray(b_data)
    if op.opcode == "ADD":
        p = AddP(**qparams.add_params(g, op), b=q)
        lib.bt_add_s8(ctypes.byref(p), _ptr(a), _ptr(b), _ptr(y))
    else:
        p = MulP(**qparams.mul_params(g, op), b=q)
        lib.bt_mul_s8(ctypes.byref(p), _ptr(a), _ptr(b), _ptr(y))
    return y


def _pool(lib, g, x):
    from buildtool.model import ops
    from buildtool.codegen import qparams
    op = g.operators[0]
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    o = op.options
    lo, hi = qparams.act_range(g, op)
    p = PoolP(_shape(ti), _shape(to), o["filter_h"], o["filter_w"], o["stride_h"], o["stride_w"],
              ops.conv_padding(ti.shape[1], o["filter_h"], o["stride_h"], 1, o["padding"]),
              ops.conv_padding(ti.shape[2], o["filter_w"], o["stride_w"], 1, o["padding"]), lo, hi)
    y = np.zeros(to.shape, np.int8)
    fn = lib.bt_avg_pool_s8 if op.opcode == "AVERAGE_POOL_2D" else lib.bt_max_pool_s8
    fn(ctypes.byref(p), _ptr(np.ascontiguousarray(x)), 0, _ptr(y), 0, to.shape[1])
    return y


def _unary(lib, g, x):
    from buildtool.codegen import qparams
    op = g.operators[0]
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    n = x.size
    y = np.zeros(to.shape, np.int8)
    xi = np.ascontiguousarray(x)
    if op.opcode == "MEAN":
        _, h, w, c = ti.shape
        p = MeanP(1, h * w, c, h * w * c, c, **qparams.mean_params(ti, to, h * w))
        lib.bt_mean_s8(ctypes.byref(p), _ptr(xi), _ptr(y))
    elif op.opcode == "SOFTMAX":  # int8 -> int8, or int8 -> int16
        depth = ti.shape[-1]
        p = SoftmaxP(n // depth, depth, **qparams.softmax_quant(g, op))
        if to.dtype == "int16":
            y = np.zeros(to.shape, np.int16)
            lib.bt_softmax_s8_s16(ctypes.byref(p), _ptr(xi), _ptr(y))
        else:
            lib.bt_softmax_s8(ctypes.byref(p), _ptr(xi), _ptr(y))
    elif op.opcode == "LOGISTIC":
        lib.bt_logistic_s8(ctypes.byref(LogisticP(n, **qparams.logistic_params(g, op))), _ptr(xi), _ptr(y))
    elif op.opcode == "HARD_SWISH":
        lib.bt_hard_swish_s8(ctypes.byref(HardSwishP(n, **qparams.hard_swish_params(g, op))), _ptr(xi), _ptr(y))
    elif op.opcode == "QUANTIZE":
        lib.bt_requantize_s8(ctypes.byref(RequantP(n, **qparams.requant_params(ti, to))), _ptr(xi), _ptr(y))
    else:
        raise AssertionError(op.opcode)
    return y


def _one_op(build, shape=(1, 9, 11, 12), in_q=(0.05, 3), seed=0):
    from buildtool.zoo.builder import GraphBuilder
    b = GraphBuilder(seed=seed)
    x = b.input(shape, *in_q)
    build(b, x)
    return b.finish()


TFLM_CASES = {
    "conv3x3_s2_relu6": lambda b, x: b.conv2d(x, 10, k=3, stride=2, padding="SAME", activation="RELU6"),
    "conv1x1": lambda b, x: b.conv2d(x, 16, k=1, activation="NONE"),
    "conv5x3_valid_dil2": lambda b, x: b.conv2d(x, 7, k=(3, 2), dilation=2, padding="VALID", activation="RELU"),
    "depthwise3x3": lambda b, x: b.depthwise(x, k=3, stride=1, activation="RELU6"),
    "depthwise_s2_dm2": lambda b, x: b.depthwise(x, k=3, stride=2, multiplier=2, activation="NONE"),
    "avg_pool": lambda b, x: b.avg_pool(x, k=3, stride=2, padding="SAME"),
    "max_pool": lambda b, x: b.max_pool(x, k=2, stride=2, padding="VALID"),
    "mean_hw": lambda b, x: b.mean(x, axes=(1, 2), keep_dims=True),
    "mean_hw_same_quant": lambda b, x: b.mean(x, axes=(1, 2), keep_dims=True, out_quant=(0.05, 3)),
    # equal quantisation where a divide-by-count mean differs from TFLM (it did before the fix)
    "mean_hw_same_quant_7x7x40": (lambda b, x: b.mean(x, axes=(1, 2), keep_dims=True, out_quant=(0.1, -20)),
                                  (1, 7, 7, 40), (0.1, -20)),
    "softmax": lambda b, x: b.softmax(x, beta=0.7),
    "logistic": lambda b, x: b.logistic(x),
    "hard_swish": lambda b, x: b.hard_swish(x),
    "requantize": lambda b, x: b.quantize(x, 0.031, -7),
}


@pytest.mark.parametrize("case", sorted(TFLM_CASES))
def test_reference_kernels_match_tflm(case, ref_lib):
    spec = TFLM_CASES[case]
    g = _one_op(*spec) if isinstance(spec, tuple) else _one_op(spec)
    x = _input(g)
    op = g.operators[0]
    if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        got = _conv_like(ref_lib, g, x)
    elif op.opcode in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        got = _pool(ref_lib, g, x)
    else:
        got = _unary(ref_lib, g, x)
    want = _run_tflm(g, x)
    assert got.shape == tuple(want.shape) or got.size == want.size
    np.testing.assert_array_equal(got.reshape(-1), want.reshape(-1))


def test_reference_fully_connected_matches_tflm(ref_lib):
    g = _one_op(lambda b, x: b.fully_connected(b.reshape(x, (1, 99)), 13, activation="RELU"), shape=(1, 9, 11, 1))
    # the reshape makes this a two-op graph: run FC on the reshaped bytes (same bytes, RESHAPE aliases)
    x = _input(g)
    fc = [op for op in g.operators if op.opcode == "FULLY_CONNECTED"][0]
    sub = type(g)(g.tensors, [fc], [fc.inputs[0]], list(fc.outputs), name=g.name)
    got = _fc(ref_lib, sub, x.reshape(1, 99))
    np.testing.assert_array_equal(got.reshape(-1), _run_tflm(g, x).reshape(-1))


@pytest.mark.parametrize("opname,b_shape", [("add", (1, 9, 11, 12)), ("add", (1, 1, 1, 12)),
                                            ("mul", (1, 9, 11, 12)), ("mul", (1, 9, 1, 12))])
def test_reference_binary_matches_tflm(opname, b_shape, ref_lib):
    from buildtool.zoo.builder import GraphBuilder
    b = GraphBuilder(seed=1)
    x = b.input((1, 9, 11, 12), 0.05, 3, name="a")
    y = b.input(b_shape, 0.02, -9, name="b")
    getattr(b, opname)(x, y, activation="RELU" if opname == "add" else "NONE")
    g = b.finish()
    xa = _input(g, seed=5)
    xb = np.random.default_rng(6).integers(-128, 128, size=b_shape, dtype=np.int8)
    from buildtool.model import writer as tflite_writer
    want = tflm_run(tflite_writer.serialize(g), [xa, xb])[0]
    np.testing.assert_array_equal(_binary(ref_lib, g, xa, xb).reshape(-1), want.reshape(-1))


def tflm_or_abort(model: bytes, x: np.ndarray):
    """TFLM's output in a forked child, or None when TFLM aborts (gemmlowp's asserts are compiled in): the child is
    this process with TFLM imported once (a child process a case imported it 12 times a width: ~85 s of the suite)."""
    from tflite_micro import runtime  # noqa: F401  (imported here, before the fork, once)

    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, write the output, leave without any of the parent's exit handlers
        code = 1
        try:
            os.close(rd)
            faulthandler.disable()  # an abort is an answer here, not a crash to dump
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # (gemmlowp's assert message)
            with os.fdopen(wr, "wb") as f:
                f.write(pickle.dumps(np.asarray(tflm_run(model, [x])[0])))
            code = 0
        finally:
            os._exit(code)
    os.close(wr)
    with os.fdopen(rd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT:
        return None
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    return pickle.loads(data)


def _softmax_row_model(width: int, beta: float, scale: float, out_bits: int = 8):
    """[1, width] int8 -> SOFTMAX -> int8 (scale 1/256, zero point -128) or int16 (1/65536, -32768)."""
    import dataclasses
    from buildtool.zoo.builder import GraphBuilder, _quant
    b = GraphBuilder(f"softmax{width}", seed=0)
    y = b.softmax(b.input((1, width), scale, 0), beta=beta)
    g = b.finish()
    if out_bits == 16:
        g.tensors[y] = dataclasses.replace(g.tensors[y], dtype="int16", quant=_quant(1.0 / 65536, -32768))
    return g


def _softmax_units(x: np.ndarray, beta: float, scale: float) -> float:
    """TFLM's sum of exponentials in units of the maximum's term (Q12: 2^19), computed exactly."""
    from buildtool.refops.fixed_point import exp_on_negative_values
    from buildtool.refops.quant_math import rdbpot, srdhm, wrap32
    from buildtool.refops.softmax import softmax_params
    mult, shift, diff_min = softmax_params(beta, scale)
    diff = x.astype(np.int64) - int(x.max())
    exps = rdbpot(exp_on_negative_values(srdhm(wrap32(diff << shift), mult), 5), 12)
    return float(np.where(diff >= diff_min, exps, 0).sum()) / (1 << 19)


@pytest.mark.parametrize("width", [2, 10, 511, 512, 513, 1000, 1001, 4096])
def test_reference_softmax_wide_rows_match_tflm_or_exact_rounding(width, ref_lib):
    """SOFTMAX over [1, width] rows of equal, equal +-1 and random logits (kernels/tests/unary_test.c's
    patterns), int8 and int8 -> int16 output: the reference kernel (C) equals the numpy executor, and
    both equal TFLite Micro wherever TFLM returns. TFLM returns for every row of 511 or fewer logits;
    with int8 output it aborts exactly when its exponentials sum to 512 or more (in units of the
    maximum's term: 512+ logits near the maximum), where its rounding shift reaches 32 and gemmlowp
    asserts (built without asserts, C++ `x >> 32`: undefined). There the oracle is the float softmax
    rounded to the output's step (the numpy executor's rounding being exact, the outputs are within 1 of
    it and all -128 when every probability is below 1/512, i.e. half a step)."""
    from buildtool.model.writer import serialize
    from buildtool.plan.arena.execute import run
    from buildtool.plan.arena.naive import naive_plan
    aborted = []
    for beta, scale in SOFTMAX_WIDE_Q:
        for pattern in range(3):
            x = softmax_logits(pattern, width)[None]
            for bits in (8, 16):
                g = _softmax_row_model(width, beta, scale, bits)
                want = run(g, naive_plan(g), [x])[0].reshape(-1)  # the numpy executor
                got = _unary(ref_lib, g, x).reshape(-1)
                case = (beta, scale, pattern, bits)
                np.testing.assert_array_equal(got, want, err_msg=str(case))
                t = tflm_or_abort(serialize(g), x)
                units = _softmax_units(x[0], beta, scale)
                if t is not None:
                    np.testing.assert_array_equal(want, t.reshape(-1), err_msg=str(case))
                    assert bits == 16 or units < 512, case
                    continue
                assert bits == 8 and units >= 512 and width >= 512, case
                aborted.append(case)
                v = beta * scale * (x[0].astype(np.float64) - x.max())
                prob = np.exp(v) / np.exp(v).sum()
                flt = np.clip(np.floor(prob * 256 + 0.5) - 128, -128, 127)
                assert np.abs(want.astype(np.int64) - flt).max() <= 1, case
                if prob.max() < 1 / 512:
                    assert (want == -128).all(), case
    if width >= 512:  # the all-equal rows at least: the cases this test is about
        assert len(aborted) >= 2, aborted


@pytest.mark.parametrize("width", [1000, 65548, 65549, 70000])
def test_reference_softmax16_wide_rows_match_tflm(width, ref_lib):
    """int16 -> int16 SOFTMAX (TFLM's table path) over one row of equal logits: its int32 sum of
    exponentials (32762 at the maximum) overflows from 65549 of them (TFLM: undefined, then a shift by -1);
    C and the numpy executor saturate it, which gives every output 0, the exact rounding (each
    probability is below 1/65536, half a step of 2^-15) and what TFLM's build returns too."""
    from buildtool.model.writer import serialize
    from buildtool.plan.arena.execute import run
    from buildtool.plan.arena.naive import naive_plan
    from buildtool.refops.softmax import softmax16_params, softmax_luts16
    from buildtool.zoo.builder import GraphBuilder
    b = GraphBuilder(f"softmax16_{width}", seed=0)
    b.softmax(b.input((1, width), 0.1, 0))
    g = b.finish_int16()
    x = np.full((1, width), 1234, np.int16)
    want = run(g, naive_plan(g), [x])[0].reshape(-1)
    exp_lut, rec_lut = (np.ascontiguousarray(t) for t in softmax_luts16())
    mult, shift = softmax16_params(1.0, g.tensors[g.inputs[0]].scale)

    class Softmax16P(Structure):
        _fields_ = _ints("rows", "depth", "input_multiplier", "input_left_shift") + [("exp_lut", c_void_p),
                                                                                    ("rec_lut", c_void_p)]
    got = np.zeros(width, np.int16)
    ref_lib.bt_softmax_s16(ctypes.byref(Softmax16P(1, width, mult, shift, _ptr(exp_lut), _ptr(rec_lut))),
                           _ptr(x), _ptr(got))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, tflm_run(serialize(g), [x])[0].reshape(-1))
    if width > 65548:
        assert (want == 0).all()


def test_reference_float_io_matches_tflm(ref_lib):
    """QUANTIZE float32 -> int8 (round half away from zero, exact .5 ties included) and DEQUANTIZE."""
    from buildtool.model import writer as tflite_writer
    from buildtool.zoo.builder import GraphBuilder
    scale, zp = 0.0625, -5   # a power of two: x / scale is exact, so the ties below really are ties
    b = GraphBuilder(seed=2)
    x = b.input((1, 4, 4, 8), dtype="float32")
    q = b.quantize(x, scale, zp)
    b.dequantize(q)
    g = b.finish()
    xf = (np.arange(-64, 64) * (scale / 2)).astype(np.float32).reshape(1, 4, 4, 8)   # every other value: a .5 tie
    want_f = tflm_run(tflite_writer.serialize(g), [xf])[0]
    n = xf.size
    got_q = np.zeros(n, np.int8)
    got_f = np.zeros(n, np.float32)
    ref_lib.bt_quantize_f32_s8(n, ctypes.c_float(scale), zp, _ptr(np.ascontiguousarray(xf.reshape(-1))), _ptr(got_q))
    ref_lib.bt_dequantize_s8_f32(n, ctypes.c_float(scale), zp, _ptr(got_q), _ptr(got_f))
    want_q = np.round(want_f.reshape(-1) / scale) + zp   # DEQUANTIZE by a power of two is exact
    np.testing.assert_array_equal(got_q, want_q.astype(np.int8))
    np.testing.assert_array_equal(got_f, want_f.reshape(-1))
    assert np.any(got_q[1::2] != np.floor(xf.reshape(-1)[1::2] / scale + 0.5) + zp)   # ties went away from 0


def test_every_kernel_file_has_its_test_file():
    """kernels/tests/README.md's table, the test files' first lines and kernel_test.c's includes agree,
    and every kernel file of every set is covered by a test file or named as checked against TFLite
    Micro elsewhere (reference-only kernels)."""
    kernels = ROOT / "buildtool" / "kernels"
    tests = kernels / "tests"
    readme = (tests / "README.md").read_text()
    table = dict(re.findall(r"^\| (.+?) \| `(\w+_test\.c)` \|$", readme, re.M))
    files = sorted(p.name for p in tests.glob("*_test.c") if p.name != "kernel_test.c")
    assert sorted(table.values()) == files  # the table lists each test file once
    included = re.findall(r'^#include "(\w+_test\.c)"', (tests / "kernel_test.c").read_text(), re.M)
    assert sorted(included) == files
    covered = set()
    for covers, name in table.items():
        first = (tests / name).read_text().split("\n", 1)[0]
        assert first.startswith(f"/* {name} -- tests of ")
        names = set(re.findall(r"`(?:\w+/)?(\w+\.[ch])`", covers))
        assert names <= set(re.findall(r"(\w+\.[ch])", first)), name
        covered |= names
    elsewhere = set(re.findall(r"`(\w+\.c)`", readme.split("checked against TFLite Micro", 1)[1]))
    ref = {f.stem for f in (kernels / "reference").glob("*.c")}
    for folder in ("reference", "cortex-m", "cortex-m55", "riscv", "host", "xcore"):
        # a kernel split into files by path (cortex-m's depthwise_*.c): its parts are tested as their kernel is
        parts = {p for own in (kernels / folder).glob("*.c") if own.name in covered for p in kernel_parts(own, ref)}
        for src in (kernels / folder).glob("*.c"):
            assert src.name in covered | elsewhere or src in parts, f"{folder}/{src.name} has no test file"
    for name in elsewhere:  # only kernels no set replaces are left to the model-level tests
        assert not any((kernels / s / name).exists() for s in ("cortex-m", "cortex-m55", "riscv", "host", "xcore")), name
