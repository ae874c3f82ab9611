"""Each layer's requantisation tables (its multipliers and shifts: plan/requant_tables.py) are in the weights
image, after the primary part's tensors, not in model.c: the image holds TFLite Micro's values (refops.prepare)
for the live rows of each conv, depthwise and dense layer, model.c's parameter structs point at those bytes,
the build's RAM/flash line counts them as weights, and the firmware gives TFLite Micro's bytes."""

from __future__ import annotations

import re
import shutil
import struct

import numpy as np
import pytest

from buildtool import pipeline, targets, zoo
from buildtool.codegen.model_c import generate
from buildtool.errors import UsageError
from buildtool.firmware import runner, toolchain
from buildtool.model import weight_facts
from buildtool.model.writer import serialize
from buildtool.plan import flash
from buildtool.refops import prepare

from conftest import tflm_run
from test_zero_rows import _model

ARM = all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm"))


def _want(g, c: str) -> dict:
    """op index -> the bytes of its table, from prepare and the filter's zero rows: the multipliers then the
    shifts (int32) of the live rows, in order, for a conv whose zero rows are worth skipping (model.c runs it on
    its live rows: the offset of its first zero-row-less output is the count of live rows before it), of every
    row otherwise; none for a layer without a live row."""
    out = {}
    for op in g.operators:
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            continue
        p = prepare.fully_connected(g, op) if op.opcode == "FULLY_CONNECTED" else prepare.conv(g, op)
        src = re.search(rf"static const bt_conv_params op{op.index}_p = \{{\n.*?\.out = \{{[^}}]*\.c = (\d+)",
                        c, re.S)
        rows = range(len(p.multipliers))
        if op.opcode == "CONV_2D" and src and int(src[1]) < len(p.multipliers):  # rows-live: its live rows
            dead = set(weight_facts.zero_rows(g.tensors[op.inputs[1]]))
            rows = [r for r in rows if r not in dead]
            assert len(rows) == int(src[1])
        if rows:
            out[op.index] = struct.pack(f"<{2 * len(rows)}i", *[p.multipliers[r] for r in rows],
                                        *[p.shifts[r] for r in rows])
    return out


@pytest.mark.parametrize("model", ["pruned", "tiny"])
def test_the_image_holds_the_tables_and_model_c_points_at_them(model):
    g = _model() if model == "pruned" else zoo.build("tiny")
    plan = pipeline.plan_memory(g)
    c, h = generate(g, plan, "cortex-m4")
    image = flash.build_image(g, "cortex-m4", 16)
    at = flash.table_offsets(g, 16)
    want = _want(g, c)
    assert sorted(at) == sorted(want) and want
    if model == "pruned":  # the layer of no live row has no table; the rows-live ones hold their live rows
        assert len(want) == len([op for op in g.operators if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D")]) - 1
    tensors_end = max(o + g.tensors[i].nbytes for i, o in flash.layout(g, 16).items())
    assert min(at.values()) >= tensors_end  # after every tensor: no tensor moved
    for k, (i, table) in enumerate(sorted(want.items(), key=lambda kv: at[kv[0]])):
        assert image[at[i]:at[i] + len(table)] == table, f"op {i}"
        n = len(table) // 8
        assert f".multiplier = (op{i}_mult + {at[i] // 4})" in c and f".shift = (op{i}_shift + {at[i] // 4 + n})" in c
    # none in model.c but the empty ones of a layer of no live row (its call spreads constants only)
    assert re.findall(r"static const int32_t op\d+_(?:mult|shift)\[(\d+)\]", c) == (["0", "0"] if model == "pruned" else [])
    assert f"#define MODEL_WEIGHTS_BYTES {len(image)}u" in h
    pad = lambda n: -(-n // 16) * 16  # noqa: E731
    tensors = sum(pad(g.tensors[i].nbytes) for i in flash.flash_tensors(g))
    assert flash.padded_bytes(g, 16) == flash.HEADER_BYTES + tensors + pad(sum(len(t) for t in want.values()))
    starts = sorted(at.values())  # back to back, from a multiple of 16
    assert starts[0] % 16 == 0 and all(b - a == len(want[i]) for (i, a), b in zip(sorted(at.items(), key=lambda kv: kv[1]), starts[1:]))
    assert flash.build_image(g, "cortex-m4", 16) == image  # deterministic


def test_an_image_without_tables_is_refused():
    """Format 2 holds the tables; a format 1 image (none) is refused in one line, as model_init refuses it."""
    image = bytearray(flash.build_image(zoo.build("tiny"), "cortex-m4", 16))
    assert flash.FORMAT_VERSION == 2 and struct.unpack_from("<I", image, 4)[0] == 2
    struct.pack_into("<I", image, 4, 1)
    with pytest.raises(UsageError, match=r"^flash image format version 1 .* rebuild it with this buildtool$"):
        flash.parse_header(bytes(image))


@pytest.mark.skipif(not ARM, reason="arm toolchain or qemu not installed")
def test_the_line_counts_the_tables_as_weights_and_the_firmware_is_bit_exact(tmp_path):
    """The pruned model (rows-live convs, a layer of no live row) on cortex-m4: no table symbol in the code,
    the .bt_weights section the image whole (its tables included) and the RAM/flash line's weights; the
    firmware's output TFLite Micro's bytes."""
    g = _model()
    t = targets.get("cortex-m4")
    paths = pipeline.build(g, "cortex-m4", tmp_path / "b")
    image = paths["weights"].read_bytes()
    sym = runner.symbols(t, paths["elf"])
    assert not [s for s in sym if re.fullmatch(r"op\d+_(mult|shift)", s)]
    assert sym["bt_weights_end"][0] - sym["bt_weights"][0] == len(image)
    m = runner.memory_figures(t, paths["elf"], 0)
    assert m["weights"] == toolchain.section_bytes(t, paths["elf"], (".bt_weights",)) >= len(image)
    line = runner.memory_summary(t, paths["elf"], 0)
    assert line.endswith(f"+ weights (with requantisation tables) {m['weights'] / 1024:.1f} KiB")
    x = np.random.default_rng(11).integers(-128, 128, size=(1, 12, 12, 8), dtype=np.int8)
    got = np.asarray(runner.run("cortex-m4", tmp_path / "b", x)[0])
    assert got.tobytes() == np.asarray(tflm_run(serialize(g), [x])[0]).tobytes()
