"""The CMake package config's Python side (BuildtoolConfig.cmake in this folder).

    buildtool cmake-dir                      the folder for CMAKE_PREFIX_PATH or Buildtool_DIR
    python -m buildtool.cmake configure ...  configure time: check the board, model and options, write
                                             the board files and DIR/buildtool.cmake (CMake lists)
    python -m buildtool.cmake ram-check ...  build time: the plan's arena against RAM_LIMIT
    python -m buildtool.cmake check ...      after a link: load segments and the RAM/flash summary

The flags, sources and linker script come from `buildtool gen board` (board.json), so CMake
compiles and links exactly as the SCons tool and `buildtool build` do.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from .. import targets
from ..cli import gen_steps
from ..codegen.c_text import c_string
from ..errors import BuildtoolError, ModelError, PlanError, UsageError
from ..firmware import runner
from ..firmware.fits import may_fuse
from ..firmware.library import model_opcodes, model_sources, split_kernels, split_unit, with_units
from ..firmware.toolchain import FIRMWARE, check_segments, cpu_flags, source_parts
from ..fsutil import write_if_changed
from ..imports import closure_files
from ..steps.code import measures_code
from ..steps.models import locate, read_model

CMAKE_DIR = Path(__file__).resolve().parent


def _cmake_quote(s: str) -> str:
    """s as one element of a quoted CMake list."""
    for a, b in (("\\", "\\\\"), ('"', '\\"'), ("$", "\\$"), (";", "\\;")):
        s = s.replace(a, b)
    return s


def _cmake_set(name: str, value) -> str:
    items = value if isinstance(value, list) else [value]
    return f'set({name} "{";".join(_cmake_quote(str(v)) for v in items)}")\n'


def _check_model(model: str, zoo: str) -> None:
    """A zoo name must be in the zoo; a model file must be a regular file (one line otherwise)."""

    if bool(model) == bool(zoo):
        raise UsageError("buildtool_add_model needs exactly one of MODEL <file.tflite> or ZOO <name>")
    if zoo:
        locate(zoo)  # one line listing the zoo when it is not a zoo name
    elif not os.path.isfile(model):
        raise ModelError(f"MODEL {model!r}: " + ("a directory, not a .tflite file" if os.path.isdir(model)
                                                 else "file not found"))


def configure(board: str, model: str, zoo: str, opts: list, ram_limit: str, out: str, library: bool = False) -> None:
    """Check everything a build needs, then write OUT/board.json (+ board.ld), OUT/weights_blob.S
    and OUT/buildtool.cmake; nothing is written when a check fails. library (LIBRARY): the weights go
    in .rodata.bt_weights, which any GNU ld script that places .rodata* takes."""
    t = targets.get(board)  # one line listing the boards when unknown
    options = gen_steps.options_of(opts)
    if ram_limit and not ram_limit.isdigit():
        raise UsageError(f"RAM_LIMIT {ram_limit!r} must be a number of bytes")
    _check_model(model, zoo)
    o = Path(out).resolve()
    gen_steps.run_step(argparse.Namespace(step="board", board=board, output=str(o), depfile=str(o / "board.d")))
    info = json.loads((o / "board.json").read_text())
    # the kernel sources its operators call, fixed at configure time: a weight edit reruns no configure (a model
    # edit that adds a kind of operator needs `cmake` again: docs/code-size.md)
    g = read_model(model or zoo).graph
    opcodes, fused = model_opcodes(g), may_fuse(options, t)
    kernels = model_sources(t, opcodes, fused)
    # a kernel split into files by path (library.split_kernels): one unit OUT/kernels/NAME.c, written from model.c at
    # build time (`python -m buildtool.cmake units`), that includes the files model.c's calls need
    split = split_kernels(t, kernels)
    units = [o / "kernels" / f"{n}.c" for n in split]
    write_if_changed(o / "units.json", json.dumps({"board": board, "opcodes": opcodes, "fused": fused,
                                                   "units": {str(o / "kernels" / f"{n}.c"): [str(f) for f in fs]
                                                             for n, fs in split.items()}}, indent=1) + "\n")
    parts = source_parts(t, kernels=[k for k in with_units(kernels, split) if k not in split] + units)
    ldflags = [f for f in info["ldflags"] if not f.startswith("-l")]
    lines = [("BT_BOARD", board), ("BT_CC", info["cc"]), ("BT_NATIVE", "ON" if t.port.native else "OFF"),
             ("BT_CFLAGS", info["cflags"]), ("BT_INCLUDES", info["include_dirs"][1:]),
             ("BT_CPU_FLAGS", cpu_flags(t)),
             ("BT_KERNEL_SOURCES", parts["kernels"]), ("BT_KERNEL_UNITS", units), ("BT_STARTUP_SOURCES", parts["startup"]),
             ("BT_HARNESS_MAIN", parts["main"]), ("BT_LDFLAGS", ldflags),
             ("BT_LDLIBS", [f[2:] for f in info["ldflags"] if f.startswith("-l")]),
             ("BT_LINKER_SCRIPT", str(o / "board.ld") if t.linker_template else ""),
             ("BT_FUSED", "ON" if may_fuse(options, t) else "OFF"), ("BT_RUN", info["run"]),
             ("BT_MEASURES_CODE", "ON" if measures_code(t) else "OFF"),
             ("BT_CONFIGURE_DEPENDS", _depfile_inputs(o / "board.d") + _template(t))]
    blob = (("#define BT_WEIGHTS_SECTION .rodata.bt_weights\n" if library else "")
            + f"#define BT_WEIGHTS_FILE {c_string(str(o / 'weights.bin'))}\n"
            f"#include {c_string(str(o / 'weights_split.h'))}\n"  # the flash step's: its external part
            f"#include {c_string(str(parts['weights']))}\n")
    write_if_changed(o / "weights_blob.S", blob)  # .incbin of this model's weights.bin
    write_if_changed(o / "buildtool.cmake", "".join(_cmake_set(k, v) for k, v in lines))


def _depfile_inputs(path: Path) -> list:
    """The inputs a depfile names (gen writes one path per line after the first)."""
    text = path.read_text().replace("\\\n", "\n")
    deps = text.split(":", 1)[1] if ":" in text else ""
    return [d.strip().replace("\\ ", " ") for d in deps.split("\n") if d.strip()]


def _template(t) -> list:
    """The board's linker script template (a configure input, like the Python that reads it)."""

    return [str(FIRMWARE / t.linker_template)] if t.linker_template else []


def ram_check(manifest: str, limit: int) -> None:
    """Refuse a plan whose arena exceeds RAM_LIMIT (one line)."""

    man = json.loads(Path(manifest).read_text())
    arena = int(man["arena_bytes"])
    if arena > limit:
        raise PlanError(f"{man.get('model', 'the model')}: arena {arena:,} B exceeds RAM_LIMIT {limit:,} B; "
                        f"try PLAN_OPTIONS optimize=ram")


def check_elf(elf: str, board: str, manifest: str) -> str:
    """After the link: every load segment where the board has memory (else the ELF is removed, so no
    image a loader would misplace is left) and the one-line RAM/flash summary, as the SCons tool does."""

    t = targets.get(board)
    if t.linker_template:
        try:
            check_segments(t, elf)
        except BuildtoolError:
            Path(elf).unlink(missing_ok=True)
            raise
    man = json.loads(Path(manifest).read_text())
    return runner.memory_summary(t, elf, int(man["arena_bytes"]), man.get("staged"))


__all__ = ["CMAKE_DIR", "configure", "ram_check", "check_elf"]


def write_units(units_json: str, model_c: str, model_h: str, depfile: str = "", stamp: str = "",
                with_outputs: bool = False) -> None:
    """Each unit configure named in units.json (a split kernel's: library.split_kernels) with the files model.c's
    calls need (library.model_sources with its text), rewritten only when its bytes change. depfile: a Makefile-style
    depfile, its target stamp (the step's, as gen --depfile-target), naming the inputs and this code (an edit of
    library.py reruns the step), with_outputs the units too (gen --depfile-outputs: Make remakes a deleted one)."""
    if bool(depfile) != bool(stamp):
        raise UsageError("units: --depfile FILE and --depfile-target STAMP go together")
    u = json.loads(Path(units_json).read_text())
    t = targets.get(u["board"])
    need = model_sources(t, u["opcodes"], u["fused"], model_c=Path(model_c).read_text(), gen_files=(model_h,))
    for unit, files in u["units"].items():
        Path(unit).parent.mkdir(parents=True, exist_ok=True)
        write_if_changed(Path(unit), split_unit([Path(f) for f in files], need))
    if depfile:
        inputs = [units_json, model_c, model_h] + (list(u["units"]) if with_outputs else [])
        write_if_changed(Path(depfile), gen_steps.depfile([stamp], inputs, closure_files(("cmake",))))
