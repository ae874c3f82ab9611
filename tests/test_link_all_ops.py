"""Every operator's generated code links on every kernel set (issue 54: an unrolled GRU's UNPACK of 25
outputs had gcc copy its local pointer table with memcpy, which the -nostdlib firmware lacks: `undefined
reference to 'memcpy'` on cortex-m4/m33/m55 only).

For each kernel set (one board of each) the firmware's own sources (start-up code, main, I/O) are compiled
once, and model.c of a one-operator model of every operator the planner accepts (tests/test_executor.py's
generators) and of wide UNPACK / SPLIT / CONCATENATION / PACK / ADD_N models is compiled with the board's
flags: every symbol a model.o needs is defined by the kernel library, the firmware's sources or libgcc,
exactly what the board's link (-nostdlib ... -lgcc) offers. One real link per kernel set of the widest model
checks the method against the linker itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from buildtool import pipeline, targets
from buildtool.errors import BuildtoolError
from buildtool.firmware import toolchain
from buildtool.zoo.builder import GraphBuilder
from test_executor import GENERATORS

BOARDS = ["host", "cortex-m4", "cortex-m55", "riscv32", "cortex-m0plus", "xcore"]  # one per kernel set
WIDE = 25


def wide_models() -> dict:
    """The shape of the GRU keyword model: an UNPACK with many outputs feeding many operators, joined again."""
    out = {}
    b = GraphBuilder("wide_unpack", seed=1, calib_batch=1)
    parts = b.unpack(b.input((1, WIDE, 8)), axis=1)
    out["wide_unpack_concat"] = b.finish([b.concat([b.fully_connected(p, 4, activation="RELU") for p in parts])])
    b = GraphBuilder("wide_split", seed=2, calib_batch=1)
    parts = b.split(b.input((1, 4, WIDE * 2)), WIDE, axis=2)
    out["wide_split_pack"] = b.finish([b.pack([b.relu(p) for p in parts], axis=1)])
    b = GraphBuilder("wide_add_n", seed=3, calib_batch=1)
    parts = b.split_v(b.input((1, 15 * 3)), [3] * 15, axis=1)  # TFLite Micro adds at most 15
    out["wide_add_n"] = b.finish([b.add_n(parts)])
    return out


def operator_models() -> dict:
    models = dict(wide_models())
    for name, gen in sorted(GENERATORS.items()):
        models[name] = gen(np.random.default_rng(0))
    return models


def _nm(t, path: Path, *flags) -> set:
    r = subprocess.run([t.binutil("nm"), *flags, str(path)], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in r.stdout.splitlines() if line.strip() and not line.endswith(":")}


def _provided(t, tmp: Path) -> set:
    """Symbols the board's link offers model.o: the kernel library, the firmware's own sources, libgcc."""
    cflags = toolchain.compile_flags(t, tmp)
    syms = _nm(t, toolchain.kernel_library(t), "--defined-only")
    own = [s for s in toolchain.sources(t, tmp) if s.parent.parent != toolchain.KERNELS and s.name != "model.c"]
    for k, src in enumerate(own):
        obj = tmp / f"own{k}.o"
        extra = [toolchain.weights_define(tmp / "weights.bin")] if src.suffix == ".S" else []
        subprocess.run([t.cc, *cflags, *extra, "-c", str(src), "-o", str(obj)], check=True, capture_output=True)
        syms |= _nm(t, obj, "--defined-only")
    libgcc = subprocess.run([t.cc, *cflags, "-print-libgcc-file-name"], capture_output=True, text=True).stdout.strip()
    if libgcc and Path(libgcc).exists():
        syms |= _nm(t, Path(libgcc), "--defined-only")
    return syms


def _board(name: str):
    t = targets.get(name)
    try:
        toolchain.check_tools(t)
    except BuildtoolError as e:
        pytest.skip(str(e))
    return t


@pytest.mark.slow
@pytest.mark.parametrize("board", BOARDS)
def test_every_operator_links_on_every_kernel_set(board, tmp_path):
    t = _board(board)
    models = operator_models()
    (tmp_path / "weights.bin").write_bytes(b"")
    first = models["wide_unpack_concat"]
    (tmp_path / "model.h").write_text(pipeline.code(pipeline.read_model(first), pipeline.plan_memory(first), board)["model.h"])
    provided = _provided(t, tmp_path)
    missing, compiled = {}, 0
    for name, g in models.items():
        try:
            plan = pipeline.plan_memory(g)
            files = pipeline.code(pipeline.read_model(g), plan, board)
        except BuildtoolError:  # refused for this board at plan or code time, in one line: not a link question
            continue
        d = tmp_path / name
        d.mkdir()
        (d / "model.c").write_text(files["model.c"])
        (d / "model.h").write_text(files["model.h"])
        obj = d / "model.o"
        subprocess.run([t.cc, *toolchain.compile_flags(t, d), "-c", str(d / "model.c"), "-o", str(obj)], check=True,
                       capture_output=True)
        compiled += 1
        need = _nm(t, obj, "--undefined-only") - provided
        if need:
            missing[name] = sorted(need)
        shutil.rmtree(d)
    assert compiled >= len(GENERATORS) // 2 + 3, compiled
    assert not missing, f"{board}: undefined at link time: {missing}"


@pytest.mark.slow
@pytest.mark.parametrize("board", ["cortex-m4", "riscv32", "host"])
def test_wide_unpack_firmware_links(board, tmp_path):
    """The real link of the GRU-shaped model (the method above agrees with the linker)."""
    _board(board)
    g = wide_models()["wide_unpack_concat"]
    paths = pipeline.build(g, board, tmp_path)
    assert paths["elf"].exists()


def test_link_error_is_the_linkers_line_with_the_model_path_and_a_pasteable_command(tmp_path):
    """The line names what the linker said (not collect2's 'ld returned 1 exit status'), starts with the model
    path as typed, and its command, split back with shlex, is the command that ran."""
    import shlex
    from types import SimpleNamespace

    from buildtool.cli import error_message

    t = targets.get("cortex-m4")
    g = wide_models()["wide_unpack_concat"]
    stderr = ("/usr/lib/gcc/arm-none-eabi/13/ld: /tmp/cc1.o: in function `model_invoke':\n"
              "/b/model.c:550: undefined reference to `memcpy'\n"
              "collect2: error: ld returned 1 exit status\n")
    cmd = ["arm-none-eabi-gcc", "-DBT_WEIGHTS_FILE=\"/a b/weights.bin\"", "/a b/model.c", "-o", "fw.elf"]
    e = toolchain._link_error(g, None, t, tmp_path / "firmware.elf", SimpleNamespace(stderr=stderr, returncode=1), cmd)
    line = error_message(e, "models/my gru.tflite")
    assert line.startswith("models/my gru.tflite: compiling for cortex-m4 failed: /b/model.c:550: undefined "
                           "reference to `memcpy' (command: "), line
    assert "collect2" not in line
    assert shlex.split(line.split("(command: ", 1)[1][:-1]) == cmd
