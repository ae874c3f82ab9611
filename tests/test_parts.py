"""Real parts (buildtool/boards/cortex_m/parts.py, boards/riscv/parts.py): each is built and its image
checked against the part's memories as the vendors' documents give them, in a table written here from
those documents (not imported from the board files); the code of each part without an emulated twin
runs on QEMU's machine with the same core; netduinoplus2 runs in QEMU's netduinoplus2 machine, bit-exact
with TFLite Micro, its console read back over RTT (a GDB-protocol client reading the emulated RAM) and
over semihosting. Nothing here runs on hardware."""

from __future__ import annotations

import dataclasses
import io
import re
import struct
import subprocess

import numpy as np
import pytest
from conftest import fixed_input, shared_model, tflm_run

from buildtool import pipeline, targets, zoo
from buildtool.errors import BuildtoolError, UsageError
from buildtool.firmware import rtt, runner
from buildtool.firmware.toolchain import FirmwareError
from buildtool.model import reader as tflite_reader
from buildtool.model.writer import serialize
from buildtool.zoo.builder import GraphBuilder

K, M = 1 << 10, 1 << 20

# From the documents (docs/boards.md cites each): core flags, clock, and every memory as
# name: (origin, bytes, kind); kind "flash" (on-chip or XIP code/data, loadable), "ram" (data),
# "ext" (external memory behind a controller: QSPI flash loadable, SDRAM not), "code" (instruction-only),
# "alias" (the flash mapped again where the part boots, which the core reads and runs as the flash itself).
DATASHEETS = {
    "netduinoplus2": dict(flags=("-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16"), clock=168_000_000, mem={
        "flash": (0x08000000, 1 * M, "flash"), "sram1": (0x20000000, 112 * K, "ram"),
        "sram2": (0x2001C000, 16 * K, "ram"), "ccm": (0x10000000, 64 * K, "ram")}),
    "nucleo-l4r5zi": dict(flags=("-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16"), clock=120_000_000, mem={
        "flash": (0x08000000, 2 * M, "flash"), "flash's boot alias (booted from main flash)": (0, 2 * M, "alias"),
        "sram1": (0x20000000, 192 * K, "ram"), "sram2 (alias of 0x10000000)": (0x20030000, 64 * K, "ram"),
        "sram3": (0x20040000, 384 * K, "ram")}),
    "stm32f746g-disco": dict(flags=("-mcpu=cortex-m7", "-mfpu=fpv5-sp-d16"), clock=216_000_000, mem={
        "flash (AXIM)": (0x08000000, 1 * M, "flash"), "dtcm": (0x20000000, 64 * K, "ram"),
        "sram1": (0x20010000, 240 * K, "ram"), "sram2": (0x2004C000, 16 * K, "ram"),
        "itcm ram": (0x00000000, 16 * K, "code"), "qspi (N25Q128A)": (0x90000000, 16 * M, "ext"),
        "sdram (64 Mbit wired)": (0xC0000000, 8 * M, "ext")}),
    "nucleo-h7a3zi": dict(flags=("-mcpu=cortex-m7", "-mfpu=fpv5-d16"), clock=280_000_000, mem={
        "flash": (0x08000000, 2 * M, "flash"), "dtcm": (0x20000000, 128 * K, "ram"),
        "itcm": (0x00000000, 64 * K, "code"), "axi sram1": (0x24000000, 256 * K, "ram"),
        "axi sram2": (0x24040000, 384 * K, "ram"), "axi sram3": (0x240A0000, 384 * K, "ram"),
        "ahb sram1": (0x30000000, 64 * K, "ram"), "ahb sram2": (0x30010000, 64 * K, "ram"),
        "srd sram": (0x38000000, 32 * K, "ram")}),
    "nucleo-u575zi": dict(flags=("-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16"), clock=160_000_000, mem={
        "flash": (0x08000000, 2 * M, "flash"), "sram1": (0x20000000, 192 * K, "ram"),
        "sram2": (0x20030000, 64 * K, "ram"), "sram3": (0x20040000, 512 * K, "ram"),
        "sram4": (0x28000000, 16 * K, "ram")}),
    "nrf52840dk": dict(flags=("-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16"), clock=64_000_000, mem={
        "flash": (0x00000000, 1 * M, "flash"), "ram": (0x20000000, 256 * K, "ram"),
        "qspi xip (MX25R6435F)": (0x12000000, 8 * M, "ext")}),
    "pico2": dict(flags=("-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16"), clock=150_000_000, mem={
        "xip flash (4 MB on the board)": (0x10000000, 4 * M, "flash"), "sram0-7": (0x20000000, 512 * K, "ram"),
        "sram8-9": (0x20080000, 8 * K, "ram")}),
    "esp32c3-devkitm": dict(flags=("-march=rv32imc",), clock=160_000_000, mem={
        "flash via cache, IBUS (4 MB on the module)": (0x42000000, 4 * M, "flash"),
        "the same flash via cache, DBUS": (0x3C000000, 4 * M, "dbus"),
        "sram1 (data bus)": (0x3FC80000, 384 * K, "ram")}),
    "longan-nano": dict(flags=("-march=rv32imac",), clock=108_000_000, mem={
        "flash": (0x08000000, 128 * K, "flash"), "sram": (0x20000000, 32 * K, "ram")}),
}
# the QEMU machine with the same core each part's code is run on (its board here), where the part has no twin
CORE_TWIN = {"nucleo-l4r5zi": "cortex-m4", "nrf52840dk": "cortex-m4", "stm32f746g-disco": "cortex-m7",
             "nucleo-h7a3zi": "cortex-m7", "nucleo-u575zi": "cortex-m33", "pico2": "cortex-m33",
             "longan-nano": "riscv32", "esp32c3-devkitm": "riscv32"}
PARTS = sorted(DATASHEETS)


def distinct_code(parts) -> list:
    """The parts whose code differs: two parts built with the same flags, defines and kernels for the same
    twin compile to the same code (nucleo-l4r5zi as nrf52840dk, pico2 as nucleo-u575zi), so one runs."""
    seen = {}
    for p in sorted(parts):
        t = targets.get(p)
        seen.setdefault((t.cflags, t.defines, t.kernel_sets, CORE_TWIN[p]), p)
    return sorted(seen.values())


def need(name: str) -> targets.Target:
    t = targets.get(name)
    if t.missing_tools():
        pytest.skip(f"{name} needs {', '.join(t.missing_tools())}")
    return t


def bigger_model(name: str):
    """A model larger than tiny that fits the part's RAM and flash (graph, bytes)."""
    if name == "longan-nano":  # 32 KB of SRAM: the 16,000 B arena of the shared keyword spotter
        data = shared_model("dscnn_kws").read_bytes()
        return tflite_reader.parse(data), data
    g = zoo.build("mcunet-vww1")  # arena 89,600 B, weights 444,984 B
    return g, serialize(g)


def covered(lo: int, hi: int, spans: list) -> bool:
    """[lo, hi) lies inside the union of spans [(origin, size)] (adjacent banks join)."""
    at = lo
    for o, n in sorted(spans):
        if o <= at < o + n:
            at = o + n
        if at >= hi:
            return True
    return at >= hi or lo == hi


def spans(part: str, *kinds) -> list:
    return [(o, n) for o, n, k in DATASHEETS[part]["mem"].values() if k in kinds]


def load_segments(t, elf) -> list:
    """(vaddr, paddr, filesz, memsz) of every PT_LOAD (readelf, parsed here)."""
    out = subprocess.run([t.binutil("readelf"), "-lW", str(elf)], capture_output=True, text=True, check=True).stdout
    return [tuple(int(v, 16) for v in line.split()[2:6]) for line in out.splitlines() if line.split()[:1] == ["LOAD"]]


def alloc_sections(t, elf) -> dict:
    """name -> (address, size) of every allocated section (readelf -SW)."""
    out = subprocess.run([t.binutil("readelf"), "-SW", str(elf)], capture_output=True, text=True, check=True).stdout
    secs = {}
    for m in re.finditer(r"\]\s+(\S+)\s+(\S+)\s+([0-9a-f]{8})\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*A\S*)", out):
        secs[m.group(1)] = (int(m.group(3), 16), int(m.group(4), 16))
    return secs


def hex_records(path) -> list:
    """(address, length) of every data record of an Intel HEX file."""
    base, out = 0, []
    for line in path.read_text().split():
        n, addr, kind = int(line[1:3], 16), int(line[3:7], 16), int(line[7:9], 16)
        if kind == 0:
            out.append((base + addr, n))
        elif kind == 4:
            base = int(line[9:13], 16) << 16
        elif kind == 2:
            base = int(line[9:13], 16) << 4
    return out


# -- the definitions against the documents ------------------------------------------------------------
@pytest.mark.parametrize("part", PARTS)
def test_part_matches_its_datasheet(part):
    t, ds = targets.get(part), DATASHEETS[part]
    assert t.clock_hz == ds["clock"] and t.source
    for f in ds["flags"]:
        assert f in t.cflags and f in t.ldflags
    flash = [(o, n) for o, n, k in ds["mem"].values() if k == "flash"]
    # linked at the flash or at its boot alias; either way a programmer writes the flash where it is
    assert [(t.flash_origin, t.flash_bytes)] == (spans(part, "alias") or flash)
    assert (t.flash_origin if t.flash_load is None else t.flash_load) == flash[0][0]
    assert covered(t.ram_origin, t.ram_origin + t.ram_bytes, spans(part, "ram"))
    for r in t.memory_regions():  # every declared memory is one the documents give, and what it holds fits it
        kinds = {"code": ("flash", "alias", "code"), "weights": ("flash", "alias", "ext"), "arena": ("ram", "ext")}
        assert covered(r.origin, r.end, spans(part, *{k for h in r.holds or ("code",) for k in kinds[h]})), r
    assert "bin" in t.images and "hex" in t.images
    assert t.option_values() == {"console": ["rtt", "semihosting"]}
    assert t.platform in ("arm-rtt", "riscv-rtt") and targets.get(f"{part}:semihosting").platform in ("arm", "riscv")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """part -> {model: paths} for tiny and the bigger model, built once."""
    cache: dict = {}

    def build(part: str, which: str):
        key = (part, which)
        if key not in cache:
            g = zoo.build("tiny") if which == "tiny" else bigger_model(part)[0]
            cache[key] = (g, pipeline.build(g, part, tmp_path_factory.mktemp(f"{part}-{which}")))
        return cache[key]
    return build


@pytest.mark.parametrize("which", ["tiny", "bigger"])
@pytest.mark.parametrize("part", PARTS)
def test_part_image_lies_in_the_datasheet_memories(part, which, built):
    """Every load segment in the part's flash (or an external memory's window) with nothing to zero-fill,
    every RAM section in its SRAM, the vector table where the core reads it, .bin/.hex made from them (the .hex
    at the flash's own address where the image is linked at its boot alias)."""
    t = need(part)
    g, paths = built(part, which)
    elf = paths["elf"]
    loadable = spans(part, "flash", "ext")
    for vaddr, paddr, filesz, memsz in load_segments(t, elf):
        if memsz:
            assert filesz == memsz and covered(paddr, paddr + memsz, spans(part, "alias") or loadable), hex(paddr)
    secs = alloc_sections(t, elf)
    for name in (".stack", ".data", ".bss"):
        lo, n = secs[name]
        assert covered(lo, lo + n, spans(part, "ram")), name
    for name, (lo, n) in secs.items():
        if name.startswith(".bt_arena_") and n:
            assert covered(lo, lo + n, spans(part, "ram", "ext")), name
    sym = runner.symbols(t, elf)
    cb = sym["_SEGGER_RTT"][0]
    assert covered(cb, cb + 24 + 2 * 24, spans(part, "ram"))  # the RTT control block, in RAM
    image = paths["bin"].read_bytes()
    assert len(image) <= t.flash_bytes and image[:len(image) // 2]
    for addr, n in hex_records(paths["hex"]):
        assert covered(addr, addr + n, loadable), hex(addr)
    if spans(part, "alias"):  # the .hex holds the .bin's bytes, each at the flash address its alias maps
        (flash, _), = spans(part, "flash")
        back = paths["hex"].with_name("from-hex.bin")
        subprocess.run([t.binutil("objcopy"), "-I", "ihex", "-O", "binary", str(paths["hex"]), str(back)], check=True)
        assert back.read_bytes() == image and min(a for a, _ in hex_records(paths["hex"])) == flash
    if t.platform == "arm-rtt":  # initial SP and reset vector, read back from the raw image
        sp, reset = struct.unpack_from("<II", image, 0)
        assert sp == sym["__stack_top"][0] and covered(sp - 4, sp, spans(part, "ram"))
        # where the part boots: the flash, or its boot alias (the vector table read at 0 runs on there)
        assert reset & 1 and covered(reset & ~1, (reset & ~1) + 2, spans(part, "alias") or spans(part, "flash"))
    # the harness ends on the RTT console and waits there (rtt_io.c's bt_exit): no semihosting call, which
    # a core without a debugger attached takes as a fault (RISC-V) or a halt (Arm)
    for fn in ("bt_exit", "reset_c"):  # reset_c: the start-up code's end, after bt_main returns
        dis = subprocess.run([t.binutil("objdump"), "-d", f"--disassemble={fn}", str(elf)], capture_output=True,
                             text=True, check=True).stdout
        assert f"<{fn}>:" in dis and "ebreak" not in dis and "bkpt" not in dis, dis
        assert fn != "bt_exit" or "wfi" in dis, dis
    if part == "pico2":  # the boot ROM's IMAGE_DEF block within the first 4 KiB
        start = image.find(struct.pack("<I", 0xFFFFDED3))
        assert 0 <= start < 4096 - 20 and struct.unpack_from("<5I", image, start) == (
            0xFFFFDED3, 0x10210142, 0x000001FF, 0, 0xAB123579)
    if part == "esp32c3-devkitm":  # the ROM's direct boot: the magic twice at flash offset 0, entry after it
        assert image[:8] == bytes.fromhex("1d04dbae1d04dbae") and sym["_start"][0] == 0x42000008
        (ibus, _), = spans(part, "flash")
        (dbus, size), = spans(part, "dbus")
        read_as_data = [(v, p) for v, p, _, n in load_segments(t, elf) if n and covered(v, v + n, [(dbus, size)])]
        assert read_as_data and all(v - dbus == p - ibus for v, p in read_as_data)  # the same flash offset
        for name in ("bt_weights", "__data_load"):  # the weights and .data's initial values: through the data bus
            assert covered(sym[name][0], sym[name][0] + 1, [(dbus, size)]), name
    if part == "longan-nano":  # starts at the flash alias 0: the first instructions jump to the link address
        entry = sym["_start"][0]
        assert entry == t.flash_origin


@pytest.mark.parametrize("which", ["tiny", "bigger"])
@pytest.mark.parametrize("part", distinct_code(CORE_TWIN))
def test_part_code_runs_bit_exact_on_its_cores_emulator(part, which, tmp_path, monkeypatch):
    """The part's compiler flags, kernels and start-up code, linked for QEMU's machine with the same core
    (mps2-an386 for an M4F, an500 for an M7, an505 for an M33, virt for RV32) and run there: this proves
    the core/FPU flags and the code bit-exact on that core, not the part's memory map, boot or clocks."""
    t = need(part)
    base = need(CORE_TWIN[part])
    twin = dataclasses.replace(base, name=f"{part}-on-{base.name}", cpu=t.cpu, cflags=t.cflags, ldflags=t.ldflags,
                               kernel_sets=t.kernel_sets, defines=t.defines, stack_bytes=t.stack_bytes)
    monkeypatch.setattr(targets, "_CACHE", {**targets.boards(), twin.name: twin})
    g, data = (zoo.build("tiny"), None) if which == "tiny" else bigger_model(part)
    data = data or serialize(g)
    pipeline.build(g, twin.name, tmp_path)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, prof, ram = runner.run(twin.name, tmp_path, x, timeout=600)
    assert np.array_equal(y, tflm_run(data, [x])[0])
    assert all(o["count"] > 0 for o in prof["ops"])


# -- netduinoplus2 in QEMU's netduinoplus2 machine ------------------------------------------------------
def test_qemu_netduinoplus2_maps_the_f405_flash_and_sram_but_no_ccm():
    """What the emulated twin really has (`info mtree`): the 1 MiB flash at 0x08000000 (and its alias at 0),
    SRAM at 0x20000000 covering the part's 128 KiB (QEMU maps 192 KiB there), nothing at the CCM's 0x10000000."""
    need("netduinoplus2")
    r = subprocess.run(["qemu-system-arm", "-M", "netduinoplus2", "-S", "-monitor", "stdio", "-display", "none",
                        "-serial", "none"], input="info mtree\nquit\n", capture_output=True, text=True, timeout=30)
    maps = {m.group(3): (int(m.group(1), 16), int(m.group(2), 16) + 1)
            for m in re.finditer(r"([0-9a-f]{16})-([0-9a-f]{16}) \(prio \d+, (?:rom|ram)\): (\S+)", r.stdout)}
    assert maps["STM32F405.flash"] == (0x08000000, 0x08100000)
    lo, hi = maps["STM32F405.sram"]
    assert lo == 0x20000000 and hi - lo >= 128 * K
    assert not any(a <= 0x10000000 < b for a, b in maps.values())


@pytest.mark.parametrize("console", ["rtt", "semihosting"])
@pytest.mark.parametrize("which", ["tiny", "bigger"])
def test_netduinoplus2_runs_bit_exact_in_qemu(which, console, tmp_path):
    """The part's own image (its memory map, vector table, start-up code) in QEMU's STM32F405, the output
    byte-identical with TFLite Micro's; the harness's report lines come over RTT (default) or semihosting."""
    name = "netduinoplus2" if console == "rtt" else "netduinoplus2:semihosting"
    need(name)
    g = zoo.build("tiny") if which == "tiny" else bigger_model("netduinoplus2")[0]
    data = serialize(g)
    paths = pipeline.build(g, name, tmp_path)
    sym = runner.symbols(targets.get(name), paths["elf"])
    assert ("_SEGGER_RTT" in sym) == (console == "rtt")
    for seed in (0, 1) if which == "tiny" else (0,):
        x = fixed_input(g.tensors[g.inputs[0]].shape, seed)
        y, prof, ram = runner.run(name, tmp_path, x, timeout=600)
        assert np.array_equal(y, tflm_run(data, [x])[0])
    assert ram["stack_bytes"] > 0 and ram["measured_bytes"] == ram["total_bytes"]  # lines read from the console
    assert all(o["count"] > 0 for o in prof["ops"])


def test_rtt_console_is_read_from_the_emulated_ram(tmp_path, monkeypatch):
    """The RTT reader on its own: the control block found by the ELF symbol and, as a probe without the ELF
    does, by scanning the SRAM for its id (past the MPU's stack guard); the text is the harness's lines and
    the exit code the one the firmware reports (bt_exit=N). Nothing is printed through semihosting."""
    t = need("netduinoplus2")
    g = zoo.build("tiny")
    pipeline.build(g, t.name, tmp_path)
    elf = tmp_path / "firmware.elf"
    fixed_input(g.tensors[g.inputs[0]].shape).tofile(tmp_path / "input.bin")
    cmd = list(t.run) + ["-kernel", str(elf)]
    monkeypatch.chdir(tmp_path)  # semihosting's input.bin / output.bin
    for how in (dict(elf=str(elf), scan=[]), dict(elf=None, scan=[(t.ram_origin, t.ram_bytes)])):
        out = io.BytesIO()
        rc = rtt.run(cmd, out=out, **how)
        text = out.getvalue().decode()
        assert rc == 0 and text.endswith("bt_exit=0\n"), text
        assert re.search(r"^arena_bytes=\d+$", text, re.M) and re.search(r"^stack_high_water_bytes=\d+$", text, re.M)
        assert (tmp_path / "output.bin").stat().st_size == 10  # the model's output, through semihosting
    # without the reader, QEMU's semihosting console gets no text from an RTT build
    r = subprocess.run(["timeout", "5"] + cmd, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 124 and "arena_bytes" not in r.stdout + r.stderr


def test_rtt_reports_the_firmwares_exit_code(tmp_path):
    """A failing harness ends through the same bt_exit: the code reaches runner over RTT."""
    t = need("netduinoplus2")
    g = zoo.build("tiny")
    pipeline.build(g, t.name, tmp_path)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    # the weights image's magic in the ELF's flash copy spoilt: model_init refuses it (exit 3)
    elf = tmp_path / "firmware.elf"
    blob = bytearray(elf.read_bytes())
    k = blob.find(b"BTWF")
    blob[k:k + 4] = b"XXXX"
    elf.write_bytes(bytes(blob))
    with pytest.raises(FirmwareError, match=r"exited with 3 \(weights image does not match"):
        runner.run(t.name, tmp_path, x)


# -- placement on the parts' memories ---------------------------------------------------------------
def branchy_model():
    """Three live 51,200 B tensors at once (x, a, b before the add): 153,600 B, more than the F405's
    SRAM1+SRAM2 leave beside the stack, so one buffer goes to the CCM."""
    b = GraphBuilder("three_live", seed=7)
    x = b.input((1, 80, 80, 8))
    s = b.add(b.conv2d(x, 8, 3, 1, padding="SAME"), b.conv2d(x, 8, 1, 1))
    return b.finish([b.fully_connected(b.mean(s), 4)])


def test_f405_arena_spills_into_the_ccm(tmp_path):
    t = need("netduinoplus2")
    g = branchy_model()
    paths = pipeline.build(g, t.name, tmp_path)
    sym = runner.symbols(t, paths["elf"])
    a, n = sym["bt_arena"]
    c, m = sym["bt_arena_ccm"]
    assert 0x20000000 <= a and a + n <= 0x20000000 + 128 * K and n > 0
    assert 0x10000000 <= c and c + m <= 0x10000000 + 64 * K and m > 0
    assert all(not (0x10000000 <= p < 0x10010000) for _, p, _, _ in load_segments(t, paths["elf"]))
    assert "ccm" in t.unemulated_regions()  # so the board matrix builds it but does not run it in QEMU


def test_h7_arena_is_in_dtcm_first_then_axi_sram(tmp_path):
    t = need("nucleo-h7a3zi")
    g = zoo.build("mcunet-in3")  # arena 247,808 B: DTCM's 128 KiB less the stack, the rest in AXI SRAM
    paths = pipeline.build(g, t.name, tmp_path)
    sym = runner.symbols(t, paths["elf"])
    a, n = sym["bt_arena"]
    x, m = sym["bt_arena_axisram"]
    assert 0x20000000 <= a and a + n <= 0x20000000 + 128 * K and n > 64 * K
    assert 0x24000000 <= x and x + m <= 0x24000000 + 1 * M and m > 0
    assert "bt_arena_ahbsram" not in sym or sym["bt_arena_ahbsram"][1] == 0


# -- bad input ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,needle", [
    ("netduinoplus2:uart", "bad option 'uart'"), ("netduinoplus2:rtt,semihosting", "bad option 'semihosting'"),
    ("cortex-m4:semihosting", "takes no options"), ("stm32f407:rtt", "unknown board 'stm32f407' (known: ")])
def test_bad_board_options_are_one_line(spec, needle):
    with pytest.raises(UsageError) as e:
        targets.get(spec)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_a_model_too_big_for_a_part_names_the_option_that_fits(tmp_path):
    need("netduinoplus2")
    with pytest.raises(BuildtoolError) as e:
        pipeline.build(zoo.build("mcunet-in3"), "netduinoplus2", tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("mcunet-in3 does not fit board netduinoplus2: it needs 256,000 B of RAM")
    assert "the board has 131,072 B of RAM (128 KiB); with --optimize ram it fits" in msg
    assert not (tmp_path / "firmware.elf").exists()
