"""Firmware: generated model.c + kernels + start-up code, built per board and run (natively or in QEMU).

Every output is compared byte for byte with TFLite Micro's interpreter on the same input.
Boards whose toolchain or emulator is missing are skipped.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import zlib

import numpy as np
import pytest
from conftest import ROOT, SHARED_MODEL_NAMES, fixed_input, shared_model, tflm_run

from buildtool import pipeline, targets, zoo
from buildtool.plan import flash, regions, weight_order
from buildtool.firmware import runner, toolchain
from buildtool.model import opdefs, ops, reader as tflite_reader
from buildtool.plan.arena.naive import naive_plan
from buildtool.plan.arena.planner import plan_arena
from buildtool.firmware.fits import fitting_plan
from buildtool.options import PlanOptions
from buildtool.steps.plan import plan_memory
from buildtool.zoo.builder import GraphBuilder
from buildtool.codegen.model_c import generate
from buildtool.codegen.skeleton import from_json, to_json
from buildtool.errors import PlanError, UsageError
from buildtool.plan import first_bytes
from buildtool.model.writer import serialize

MAIN_BOARDS = ["host", "cortex-m4", "riscv32"]


def need(board: str) -> targets.Target:
    t = targets.get(board)
    missing = t.missing_tools()
    if missing:
        pytest.skip(f"{board} needs {', '.join(missing)}")
    return t


def check_bit_exact(model_bytes: bytes, board: str, out_dir, seeds=(0,), **plan_options) -> tuple:
    """Build once, run every seed's input, compare with TFLM; return the last (profile, ram)."""
    g = tflite_reader.parse(model_bytes)
    pipeline.build(g, board, out_dir, plan_options)
    for seed in seeds:
        x = fixed_input(g.tensors[g.inputs[0]].shape, seed)
        y, prof, ram = runner.run(board, out_dir, x)
        ref = tflm_run(model_bytes, [x])[0]
        assert y.dtype == ref.dtype and y.shape == ref.shape
        assert np.array_equal(y, ref), f"{board}: firmware {y.reshape(-1)[:12]} != tflm {ref.reshape(-1)[:12]}"
    return prof, ram


# -- the board matrix: every zoo and shared model on every installed board ------------------------
ZOO = zoo.names()
SHARED = SHARED_MODEL_NAMES
# big arenas and long QEMU runs (together about a minute of the matrix): `-m "slow or not slow"` (CI)
BIG = {"mobilenetv2", "mbv2-w0.35", "mcunet-in3", "mbv2_w035_144", "mobilenetv2_160_a1"}
_MODEL_BYTES: dict = {}
_TFLM: dict = {}


def model_bytes(name: str) -> bytes:
    """A zoo model serialised, or a shared model's file (skipped where ../shared is absent)."""
    if name not in _MODEL_BYTES:
        _MODEL_BYTES[name] = serialize(zoo.build(name)) if name in ZOO else shared_model(name).read_bytes()
    return _MODEL_BYTES[name]


def tflm_reference(name: str, data: bytes, x: np.ndarray, seed: int) -> np.ndarray:
    """TFLM's output for the model's input of this seed, once per model for all boards."""
    if (name, seed) not in _TFLM:
        _TFLM[name, seed] = tflm_run(data, [x])[0]
    return _TFLM[name, seed]


def _load_segments_readelf(t, elf) -> list:
    """(paddr, filesz, memsz) of every PT_LOAD, read here with readelf independently of firmware.py."""
    out = subprocess.run([t.binutil("readelf"), "-lW", str(elf)], capture_output=True, text=True, check=True).stdout
    return [(int(p[3], 16), int(p[4], 16), int(p[5], 16)) for p in map(str.split, out.splitlines())
            if p[:1] == ["LOAD"]]


def assert_loads_in_flash(t, elf) -> None:
    """What QEMU's ELF loader writes (every PT_LOAD, file bytes then zero-fill to MemSiz, at its
    physical address) stays inside the board's flash, overwrites no other segment (code), and the
    arena, stack and .bss are loaded by nothing (NOLOAD: zeroed and painted by the start-up code)."""
    segs = sorted(s for s in _load_segments_readelf(t, elf) if s[2])  # (an empty segment loads nothing)
    loadable = [(t.flash_origin, t.flash_origin + t.flash_bytes)] + [(r.origin, r.end) for r in t.external_regions()]
    for paddr, filesz, memsz in segs:  # in flash, or in a memory that holds weights beside it (QSPI, PSRAM)
        assert any(lo <= paddr and paddr + memsz <= hi for lo, hi in loadable), f"segment at 0x{paddr:x} leaves flash"
        assert filesz == memsz, f"segment at 0x{paddr:x} zero-fills {memsz - filesz} B of flash"
    for (a, _, na), (b, _, _) in zip(segs, segs[1:]):
        assert a + na <= b, f"segments at 0x{a:x} and 0x{b:x} overlap"
    sym = runner.symbols(t, elf)
    arena = sym["bt_arena"][0]
    assert t.ram_origin <= sym["__stack_bottom"][0] < sym["__bss_end"][0] <= t.ram_origin + t.ram_bytes
    assert sym["__bss_start"][0] <= arena < sym["__bss_end"][0]
    flash_lo, flash_hi = loadable[0]
    assert sum(filesz for paddr, filesz, _ in segs if flash_lo <= paddr < flash_hi) < t.flash_bytes


def _matrix_params():
    return [pytest.param(m, b, marks=[pytest.mark.slow] if m in BIG else [], id=f"{m}-{b}")
            for m in ZOO + SHARED for b in targets.names() if targets.get(b).runs_here]  # link-only parts: test_parts


@pytest.mark.parametrize("model,board", _matrix_params())
def test_board_matrix(model, board, tmp_path):
    """Every zoo and shared model on every installed board (third-party boards included): built
    once, run on one input (tiny: two), byte-identical with TFLite Micro, the profile covering the plan's
    order, every load segment inside flash. A board whose RAM the model does not fit refuses it
    before linking with one line naming its RAM and the need."""
    t = need(board)
    data = model_bytes(model)
    g = tflite_reader.parse(data)
    plan = plan_arena(g)
    # a board that picks its own plan (xcore: one tile's SRAM) takes the least-RAM plan when this does not fit
    fitted, note = fitting_plan(g, plan, t, PlanOptions(), plan_memory)
    if note:
        assert t.auto_fit and fitted.kind != "arena" and first_bytes(fitted) + t.stack_bytes <= t.data_ram_bytes
        assert plan.arena_bytes + t.stack_bytes > t.data_ram_bytes
        plan = fitted
    need_bytes = plan.arena_bytes + t.stack_bytes
    try:
        placed = regions.place_arena(g, plan, t)  # a board with more regions takes the rest of the arena there
    except PlanError:  # not even spread over all of them: refused with the RAM line, as check_fits does
        placed = plan
    if t.ram_bytes and need_bytes > t.data_ram_bytes and placed is plan:  # (ram_bytes 0: the host's, unlimited)
        with pytest.raises(toolchain.FirmwareError) as e:
            pipeline.build(g, board, tmp_path, plan=plan)
        msg = str(e.value)
        assert "\n" not in msg and f"does not fit board {board}" in msg
        assert f"needs {need_bytes:,} B of RAM" in msg and f"the board has {t.ram_bytes:,} B of RAM" in msg
        assert not (tmp_path / "firmware.elf").exists() and not (tmp_path / "model.c").exists()
        return
    paths = pipeline.build(g, board, tmp_path, plan=plan)
    if t.linker_template:
        assert_loads_in_flash(t, paths["elf"])
    unmapped = [r["name"] for r in (getattr(placed, "arena_regions", None) or []) if r["name"] in t.unemulated_regions()]
    if unmapped:  # QEMU's netduinoplus2 has no CCM: the build and link checks above are this case's test
        return
    for seed in (0, 1) if model == "tiny" else (0,):
        x = fixed_input(g.tensors[g.inputs[0]].shape, seed)
        y, prof, ram = runner.run(board, tmp_path, x, timeout=600)
        ref = tflm_reference(model, data, x, seed)
        assert y.dtype == ref.dtype and y.shape == ref.shape
        assert np.array_equal(y, ref), f"{board}: firmware {y.reshape(-1)[:12]} != tflm {ref.reshape(-1)[:12]}"
    assert [o["op"] for o in prof["ops"]] == list(plan.manifest_order(g)[0])
    assert all(o["count"] > 0 for o in prof["ops"])
    assert ram["arena_bytes"] == first_bytes(placed)


def test_dscnn_kws_fused_bit_exact_on_hifive1(tmp_path):
    """A second shared model on the 16 KiB board: its plain arena (16,000 B) leaves no room for the
    stack, the minimum-RAM fusion plan does."""
    need("hifive1")
    _, ram = check_bit_exact(shared_model("dscnn_kws").read_bytes(), "hifive1", tmp_path, optimize="ram")
    assert ram["total_bytes"] <= 16 * 1024


def test_hifive1_refuses_a_model_that_does_not_fit(tmp_path):
    """16 KiB of RAM: mcunet-vww1 needs an 88 KiB arena (19,696 B even fused, so no --optimize ram
    hint); refused before linking, in one line naming the board's RAM and the need."""
    need("hifive1")
    with pytest.raises(toolchain.FirmwareError) as e:
        pipeline.build(zoo.build("mcunet-vww1"), "hifive1", tmp_path)
    assert str(e.value) == ("mcunet-vww1 does not fit board hifive1: it needs 91,648 B of RAM (arena 89,600 B + "
                            "stack 2,048 B), the board has 16,384 B of RAM (16 KiB)")
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_refusal_suggests_optimize_ram_when_that_fits(tmp_path):
    """dscnn_kws: 16,000 B of arena + 2 KiB of stack > 16 KiB; the least-RAM fusion plan fits."""
    need("hifive1")
    g = tflite_reader.load(shared_model("dscnn_kws"))
    with pytest.raises(toolchain.FirmwareError) as e:
        pipeline.build(g, "hifive1", tmp_path)
    assert str(e.value).endswith("the board has 16,384 B of RAM (16 KiB); with --optimize ram it fits "
                                 "(arena 8,640 B + stack 2,048 B = 10,688 B)")


def test_cli_refuses_in_one_line_with_status_2(tmp_path):
    """`buildtool run --board`: the refusal is one line on stderr, exit status 2, nothing written."""
    need("hifive1")
    x = tmp_path / "x.npy"
    np.save(x, fixed_input((1, 80, 80, 3)))
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "run", "mcunet-vww1", "--board", "hifive1",
                        "--input", str(x), "--build-dir", str(tmp_path / "b")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "does not fit board hifive1: it needs 91,648 B of RAM" in r.stderr
    assert not (tmp_path / "b").exists()


class _BoardWithScript(targets.Target):
    """A board whose linker script text is given (a third-party board's own script)."""

    def __init__(self, base, name, script):
        super().__init__(**{**dataclasses.asdict(base), "name": name})
        object.__setattr__(self, "_script", script)

    def linker_script(self):
        return self._script


def _add_board(monkeypatch, t):
    monkeypatch.setattr(targets, "_CACHE", {**targets.boards(), t.name: t})


def test_build_refuses_a_linker_script_that_zero_fills_flash(monkeypatch, tmp_path):
    """Without explicit program headers ld puts .bss in the .data segment at a flash load address:
    QEMU's loader would zero-fill the arena's size there (past the end of flash into its mirror,
    over the vector table, for MobileNetV2). The build refuses such an ELF and leaves none behind."""
    base = need("cortex-m4")
    script = base.linker_script()
    script = script[:script.index("PHDRS {")] + script[script.index("SECTIONS {"):]
    for tag in (" :text", " :data", " :NONE", " :psram"):
        script = script.replace(tag, "")
    _add_board(monkeypatch, _BoardWithScript(base, "m4-default-phdrs", script))
    with pytest.raises(toolchain.FirmwareError, match="zero-fills 6,144 B in flash"):
        pipeline.build(zoo.build("tiny"), "m4-default-phdrs", tmp_path)
    assert not (tmp_path / "firmware.elf").exists() and not (tmp_path / "firmware.elf.tmp").exists()


def test_flash_too_small_is_refused_in_one_line(monkeypatch, tmp_path):
    """Weights beyond the flash: refused before linking; code + weights just beyond it: the
    linker's overflow becomes the same kind of line (a board without external memory regions:
    tests/test_regions.py covers the placement's refusal)."""
    base = dataclasses.replace(need("cortex-m4"), regions=())
    g = zoo.build("tiny")
    _add_board(monkeypatch, dataclasses.replace(base, name="m4-1k-flash", flash_bytes=1024))
    with pytest.raises(toolchain.FirmwareError) as e:
        pipeline.build(g, "m4-1k-flash", tmp_path)
    assert str(e.value) == (f"tiny does not fit board m4-1k-flash: its weights need {g.params_bytes():,} B of "
                            f"flash, the board has 1,024 B")
    _add_board(monkeypatch, dataclasses.replace(base, name="m4-4k-flash", flash_bytes=4096))
    with pytest.raises(toolchain.FirmwareError, match=r"^tiny does not fit board m4-4k-flash: code, weights and "
                                                     r"data need [\d,]+ B of flash, the board has 4,096 B$"):
        pipeline.build(g, "m4-4k-flash", tmp_path)


def _size_sections(t, elf) -> dict:
    out = subprocess.run([t.binutil("size"), "-A", str(elf)], capture_output=True, text=True, check=True).stdout
    return {p[0]: int(p[1]) for p in (line.split() for line in out.splitlines()) if len(p) >= 3 and p[0][0] == "."}


@pytest.mark.parametrize("board", ["cortex-m4", "cortex-m33", "riscv32", "hifive1"])
def test_measured_ram_is_arena_plus_stack_plus_static(board, tmp_path):
    t = need(board)
    g = zoo.build("tiny")
    plan = plan_arena(g)
    pipeline.build(g, board, tmp_path)
    _, _, ram = runner.run(board, tmp_path, fixed_input(g.tensors[g.inputs[0]].shape))
    sec = _size_sections(t, tmp_path / "firmware.elf")
    # independent of the symbols ram_report reads: section sizes from `size -A`
    static = sec.get(".data", 0) + sec.get(".bss", 0)
    assert ram["arena_bytes"] == plan.arena_bytes
    assert ram["static_other_bytes"] == static - plan.arena_bytes
    assert 0 < ram["stack_bytes"] < ram["stack_reserved_bytes"] == sec[".stack"]
    # what the firmware measured at run time (linker symbols + painted stack) is the same sum
    assert ram["measured_bytes"] == plan.arena_bytes + ram["stack_bytes"] + ram["static_other_bytes"]
    assert ram["total_bytes"] == ram["measured_bytes"]


def test_weights_stay_in_flash(tmp_path):
    t = need("cortex-m4")
    g = tflite_reader.load(shared_model("dscnn_kws"))
    paths = pipeline.build(g, "cortex-m4", tmp_path)
    image = paths["weights"].read_bytes()
    sym = runner.symbols(t, paths["elf"])
    flash_end = t.flash_origin + t.flash_bytes
    assert t.flash_origin <= sym["bt_weights"][0] < sym["bt_weights_end"][0] <= flash_end
    assert sym["bt_weights_end"][0] - sym["bt_weights"][0] == len(image)
    sec = _size_sections(t, paths["elf"])
    assert sec[".bt_weights"] >= len(image) > g.params_bytes()
    assert sec.get(".data", 0) + sec.get(".bss", 0) < plan_arena(g).arena_bytes + 64  # no weight copy in RAM


def test_profile_is_deterministic_and_covers_every_op(tmp_path):
    need("cortex-m4")
    g = zoo.build("tiny")
    pipeline.build(g, "cortex-m4", tmp_path)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    p1 = runner.run("cortex-m4", tmp_path, x)[1]
    p2 = runner.run("cortex-m4", tmp_path, x)[1]
    assert p1 == p2 and p1["unit"] == "instructions"
    assert [o["op"] for o in p1["ops"]] == plan_arena(g).order
    assert [o["opcode"] for o in p1["ops"]] == [g.operators[i].opcode for i in plan_arena(g).order]
    assert 0 < sum(o["count"] for o in p1["ops"]) < p1["total"]


def test_host_profile_is_wall_time(tmp_path):
    g = zoo.build("tiny")
    pipeline.build(g, "host", tmp_path)
    _, prof, ram = runner.run("host", tmp_path, fixed_input(g.tensors[g.inputs[0]].shape))
    assert prof["unit"] == "ns" and len(prof["ops"]) == len(g.operators)
    assert ram["arena_bytes"] == plan_arena(g).arena_bytes and ram["stack_bytes"] > 0


def test_model_c_is_deterministic_and_weight_free():
    g = zoo.build("tiny")
    plan = plan_arena(g)
    c1, h1 = generate(g, plan, "cortex-m4")
    g2 = g.copy()
    for t in g2.tensors:
        if t.is_const and t.dtype == "int8":
            t.data = (t.data.astype(np.int16) // 2).astype(np.int8)
    assert generate(g2, plan, "cortex-m4") == (c1, h1)
    assert f"MODEL_ARENA_BYTES {plan.arena_bytes}u" in h1
    assert "int model_invoke(void)" in h1
    assert c1.count("BT_PROFILE_BEGIN(") == len(g.operators) + 1  # + the macro's definition


def test_every_supported_operator_names_its_c_emitter():
    """The operator table names each supported opcode's emitter (column emit), and it resolves."""
    emitters = opdefs.table("emit")
    assert set(emitters) == set(ops.SUPPORTED) and all(callable(f) for f in emitters.values())


def test_skeleton_round_trip_gives_the_same_code():
    g = tflite_reader.load(shared_model("resnet_concat_64"))
    g2 = from_json(json.loads(json.dumps(to_json(g))))
    p1, p2 = plan_arena(g), plan_arena(g2)
    assert p1.to_json() == p2.to_json()
    assert generate(g, p1, "host") == generate(g2, p2, "host")


def test_flash_image_header_and_verify(tmp_path):
    g = zoo.build("tiny")
    image = flash.build_image(g, "cortex-m4", 16)
    p = tmp_path / "weights.bin"
    p.write_bytes(image)
    info = flash.verify(str(p))
    assert (info.target, info.version, info.align) == ("cortex-m4", flash.FORMAT_VERSION, 16)
    assert info.payload_bytes == len(image) - flash.HEADER_BYTES
    assert info.crc32 == zlib.crc32(image[flash.HEADER_BYTES:])
    assert info.model_hash == bytes.fromhex(g.structure_hash())[:16]
    order = weight_order.orders(g, "cortex-m4")  # the dense layer's weights interleaved (fc-il)
    assert list(order.values()) == [weight_order.FC_IL]
    for i, off in flash.layout(g, 16).items():
        t = g.tensors[i]
        assert off % 16 == 0
        plain = t.data.astype(t.data.dtype.newbyteorder("<")).tobytes()
        assert image[off:off + t.nbytes] == (weight_order.image_bytes(g, i, order[i]) if i in order else plain)
        assert (image[off:off + t.nbytes] == plain) == (i not in order)
    bad = bytearray(image)
    bad[-1] ^= 1
    p.write_bytes(bad)
    with pytest.raises(UsageError, match="CRC"):
        flash.verify(str(p))
    p.write_bytes(image[:-1])
    with pytest.raises(UsageError, match="size"):
        flash.verify(str(p))
    p.write_bytes(b"XXXX" + image[4:])
    with pytest.raises(UsageError, match="magic"):
        flash.verify(str(p))


def test_firmware_rejects_a_foreign_weights_image(tmp_path):
    """model_init compares the image's model hash: a rebuilt image of another model is refused (exit 3)."""
    a, b = tflite_reader.load(shared_model("tiny_cnn_32")), zoo.build("tiny")
    pipeline.build(a, "host", tmp_path)
    flash.write_image(str(tmp_path / "weights.bin"), flash.build_image(b, "host"))
    # relink with the foreign image (same command as build, kernels from the cache)
    t = targets.get("host")
    cmd = ([t.cc] + toolchain.compile_flags(t, tmp_path) + [toolchain.weights_define(tmp_path / "weights.bin")]
           + [str(s) for s in toolchain.sources(t, tmp_path) if s.parent.parent != toolchain.KERNELS]
           + [str(toolchain.kernel_library(t))] + list(t.ldflags) + ["-o", str(tmp_path / "firmware.elf")])
    subprocess.run(cmd, check=True, capture_output=True)
    with pytest.raises(toolchain.FirmwareError, match="exited with 3"):
        runner.run("host", tmp_path, fixed_input(a.tensors[a.inputs[0]].shape))


def test_run_checks_the_input(tmp_path):
    g = zoo.build("tiny")
    pipeline.build(g, "host", tmp_path)
    with pytest.raises(UsageError, match="the model wants"):
        runner.run("host", tmp_path, np.zeros((1, 3, 3, 3), np.int8))
    with pytest.raises(UsageError, match="built for board host"):
        runner.run("cortex-m4", tmp_path, fixed_input(g.tensors[g.inputs[0]].shape))


def test_board_registry_and_third_party_plugin(monkeypatch):
    assert {"host", "cortex-m4", "cortex-m7", "cortex-m33", "riscv32", "hifive1", "xcore"} <= set(targets.names())
    with pytest.raises(UsageError, match="unknown board"):
        targets.get("no-such-board")

    class EP:
        name, value = "acme", "acme_boards:targets"

        def load(self):
            return lambda: [targets.Target(name="acme-m0", cpu="cortex-m0", description="third party",
                                           platform="arm", cc="arm-none-eabi-gcc")]

    monkeypatch.setattr(targets, "entry_points", lambda group: [EP()] if group == targets.GROUP else [])
    monkeypatch.setattr(targets, "_CACHE", {})
    assert targets.get("acme-m0").cpu == "cortex-m0"
    assert "cortex-m4" in targets.names()  # built-ins still load


@pytest.mark.parametrize("board,code", [("hifive1", 97), ("cortex-m4", 98), ("cortex-m33", 98)])
def test_stack_overflow_traps(board, code, tmp_path):
    """A stack budget too small for the model: the guard (unmapped RAM below the stack on sifive_e,
    the MPU region on v7-M, MSPLIM on v8-M) stops the firmware with the documented exit code."""
    need(board)
    g = zoo.build("tiny")
    pipeline.build(g, board, tmp_path, stack_bytes=64)
    with pytest.raises(toolchain.FirmwareError, match=f"exited with {code}"):
        runner.run(board, tmp_path, fixed_input(g.tensors[g.inputs[0]].shape))


def test_timeout_is_reported_as_124(tmp_path):
    need("cortex-m4")
    g = tflite_reader.load(shared_model("resnet_concat_64"))
    pipeline.build(g, "cortex-m4", tmp_path)
    with pytest.raises(toolchain.FirmwareError, match="exited with 124 \\(timeout\\)"):
        runner.run("cortex-m4", tmp_path, fixed_input(g.tensors[g.inputs[0]].shape), timeout=0.05)


# -- operator coverage: small generated models through every kernel and code path ------------------
def all_ops_model():
    """Every int8 operator the generator supports, chained (int8 in, int8 out)."""
    b = GraphBuilder("allops", seed=3)
    x = b.input((1, 16, 16, 4))
    p = b.pad(x, [[0, 0], [1, 1], [2, 0], [0, 0]])
    c = b.conv2d(p, 8, 3, 2, padding="VALID", activation="RELU")
    d = b.depthwise(c, 3, 1, multiplier=2, activation="NONE")
    s1, s2 = b.split(d, 2, axis=-1)
    lg, hs = b.logistic(s1), b.hard_swish(s2)
    cat = b.concat([b.mul(lg, hs), lg, c], axis=-1)
    pooled = b.add(b.avg_pool(cat, 2), b.max_pool(cat, 3, 2, padding="SAME"), activation="RELU6")
    sl = b.strided_slice(pooled, [0, 1, 0, 0], [1, 4, 4, 24], [1, 2, 1, 3])
    f = b.fully_connected(b.reshape(sl, (1, int(np.prod(b.shape(sl))))), 7)
    return b.finish([b.softmax(b.quantize(f))])


def float_io_model():
    """float32 input and output: QUANTIZE / DEQUANTIZE at the edges, MEAN with keep_dims."""
    b = GraphBuilder("float_io", seed=4)
    x = b.input((1, 8, 8, 3), dtype="float32")
    c = b.conv2d(b.quantize(x), 4, 3, 1)
    return b.finish([b.dequantize(b.mean(c, axes=(1, 2), keep_dims=True))])


def concat_model():
    """A channel concatenation whose inputs have mixed quantisation: requantised inputs are copied,
    the max-pool output (same quantisation as the concat) can be written in place into its slice."""
    b = GraphBuilder("concat_views", seed=5)
    x = b.input((1, 8, 8, 4))
    a = b.conv2d(x, 4, 1, activation="RELU")
    d = b.depthwise(x, 3, 1)
    m = b.max_pool(x, 3, 1, padding="SAME")
    q = b.quant_of(x)
    e = b.conv2d(x, 4, 1, out_quant=q)
    cat = b.concat([a, m, d, e], axis=-1, out_quant=q)
    z = b.add(b.conv2d(cat, 6, 1), b.conv2d(m, 6, 1))
    return b.finish([b.fully_connected(b.mean(z), 5)])


def view_plan(g):
    """naive_plan with every channel-concat input whose producer and other readers take strided
    tensors moved into its slice of the concat output (a plan with views, independent of the planner)."""
    strided = {"CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D", "ADD", "MUL", "CONCATENATION"}
    p = naive_plan(g)
    prod, cons = g.producers(), g.consumers()
    for op in g.operators:
        if op.opcode != "CONCATENATION" or op.options.get("axis") not in (-1, 3):
            continue
        out, ch = p.tensors[op.outputs[0]], 0
        width = g.tensors[op.outputs[0]].shape[3]
        for i in op.inputs:
            if (i in prod and g.operators[prod[i]].opcode in strided - {"CONCATENATION"}
                    and all(g.operators[k].opcode in strided for k in cons.get(i, []))):
                p.tensors[i] = dataclasses.replace(p.tensors[i], offset=out.offset + ch, pixel_stride=width,
                                                   buffer=out.buffer)
            ch += g.tensors[i].shape[3]
    return p


def model_input(g, seed=0):
    t = g.tensors[g.inputs[0]]
    rng = np.random.default_rng(seed)
    if t.dtype == "float32":
        return rng.uniform(-1, 1, size=t.shape).astype(np.float32)
    return rng.integers(-128, 128, size=t.shape, dtype=np.int8)


@pytest.mark.parametrize("board", MAIN_BOARDS)
@pytest.mark.parametrize("make,planner", [(all_ops_model, "planner"), (all_ops_model, "naive"),
                                          (float_io_model, "planner"), (concat_model, "views")])
def test_operator_coverage_bit_exact(make, planner, board, tmp_path):
    need(board)
    g = make()
    plan = {"planner": plan_arena, "naive": naive_plan, "views": view_plan}[planner](g)
    pipeline.build(g, board, tmp_path, plan=plan)
    x = model_input(g)
    y, prof, ram = runner.run(board, tmp_path, x)
    ref = tflm_run(serialize(g), [x])[0]
    assert y.dtype == ref.dtype and np.array_equal(y, ref)
    assert len(prof["ops"]) == len(g.operators) and ram["arena_bytes"] == plan.arena_bytes


def test_concat_views_are_written_in_place():
    g = concat_model()
    plan = view_plan(g)
    views = [i for i, t in plan.tensors.items() if t.pixel_stride]
    assert len(views) == 2  # the max-pool output and the conv output with the concat's quantisation
    c, _ = generate(g, plan, "host")
    cat = next(op for op in g.operators if op.opcode == "CONCATENATION")
    body = c.split(f"BT_PROFILE_BEGIN({cat.index});")[1].split(f"BT_PROFILE_END({cat.index});")[0]
    assert body.count("bt_pad_s8(") == len(cat.inputs) - len(views)  # only the requantised inputs are copied


@pytest.mark.parametrize("board", MAIN_BOARDS)
def test_planner_view_of_a_requantised_concat_input(board, tmp_path):
    """The planner writes a QUANTIZE's output (a concat input requantised to the concat's scale) straight into
    its slice of the concat (a view, pixel stride 37): model.c requantises pixel by pixel (Emitter.unary)
    instead of refusing the plan."""
    need(board)
    b = GraphBuilder("requantised_view", seed=5)
    y = b.conv2d(b.input((1, 12, 12, 8)), 21, k=1)
    y = b.concat([b.conv2d(y, 16, k=1), y])
    g = b.finish([b.conv2d(y, 10, k=1, activation="NONE")])
    plan = plan_memory(g)
    q = next(op for op in g.operators if op.opcode == "QUANTIZE")
    assert plan.tensors[q.outputs[0]].pixel_stride == 37
    pipeline.build(g, board, tmp_path, plan=plan)
    x = model_input(g)
    assert np.array_equal(runner.run(board, tmp_path, x)[0], tflm_run(serialize(g), [x])[0])
