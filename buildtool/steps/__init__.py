"""The build's steps, one module each, and the one way every caller writes their outputs.

    step       reads                                   makes (* sealed: a later step reads it back)
    model      a zoo name                              model.tflite*
    skeleton   model.tflite                            skeleton.json*          (the model minus weight values)
    plan       skeleton.json + plan options            plan.json*
    code       skeleton.json (a fused plan: the model) + plan.json + board   model.c, model.h, firmware.json*
    flash      model.tflite [+ a fused plan.json] + board                    weights.bin [+ its split header]
    board      a board                                 board.json [+ board.ld]

Each step module's `run(...)` is a pure function of its inputs that returns an `Outputs`: the bytes of
every file by name and, for a sealed file, what it was made from. `store` writes them the same way for
every caller (pipeline.build, `buildtool gen` for CMake and Bazel, the SCons tool, the multi-model
build): atomically, an unchanged file left untouched (its mtime kept for restat), a sealed file with
NAME.seal beside it (its SHA-256 and what made it), so an edited or damaged read-back file is caught.

`sources(step)` is what a step's output is a function of: the import closure of its module, read from
the source (sources.closure), never a hand-kept list. Build rules declare it (depfiles, SCons Depends).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

from ..errors import PlanError
from ..fsutil import client_setting, for_client, write_if_changed, writes_through
from ..imports import closure_files
from ..sources import PKG

STEPS = ("model", "skeleton", "plan", "code", "flash", "board")
# board plugins are found through the buildtool.targets entry point, which no import names
_PLUGIN_ROOTS = {"plan": ("boards",), "code": ("boards",), "flash": ("boards",), "board": ("boards",)}


def sources(step: str) -> list:
    """The Python (and template) files a step's output depends on: absolute paths, sorted; under the
    client's own install inside sources_for()."""
    files = closure_files((f"steps.{step}",) + _PLUGIN_ROOTS.get(step, ()))
    package = client_setting("package")
    if package and package != PKG:
        files = [os.path.join(package, os.path.relpath(f, PKG)) for f in files]
    return files


def sources_for(package: str | None):
    """sources() named in another install of the same code: the planner daemon runs a step for a client
    whose buildtool lives elsewhere (the handshake checked the bytes are the same; the client's depfile
    must name its own files). None: this process's."""
    return for_client("package", package)


@dataclasses.dataclass
class Outputs:
    """What a step made: files by name (str or bytes) and, for the sealed ones, what they were made from."""

    files: dict
    made_from: dict = dataclasses.field(default_factory=dict)
    notes: tuple = ()  # lines for the user (the plan a board picked for itself: firmware.fits.fitting_plan)

    def __getitem__(self, name: str):
        return self.files[name]


def store(outputs: Outputs, paths: dict) -> list:
    """Write outputs.files[name] to paths[name] for every name in paths (sealed ones with their seal);
    return the paths written. Their folders must exist (a step's -o DIR is made by its caller; a missing
    folder of a file output is one line naming it). An output written through (a FIFO, a device,
    /dev/stdout: fsutil.writes_through) gets no seal: nothing is made beside it, and nothing reads it back."""
    for name, path in paths.items():
        data = outputs.files[name]
        write_if_changed(Path(path), data)
        if name in outputs.made_from and not writes_through(path):
            data = data.encode() if isinstance(data, str) else data
            seal = {"sha256": sha256(data), **outputs.made_from[name]}
            write_if_changed(seal_of(path), json.dumps(seal, indent=1, sort_keys=True) + "\n")
    return list(paths.values())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def seal_of(path) -> Path:
    return Path(f"{path}.seal")


def unsealed(path) -> str | None:
    """Why path does not match its seal (None when it does, or when either was never made)."""
    path, seal = Path(path), seal_of(path)
    if not path.exists() or not seal.exists():
        return None  # a missing output is remade by the build anyway
    try:
        recorded = json.loads(seal.read_text())["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"its seal {seal.name} is unreadable"
    try:
        if recorded == sha256(path.read_bytes()):
            return None
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    return "it does not match the digest recorded when it was made (edited or damaged)"


def read_sealed(path, remake: str = "run the build again to remake it") -> tuple:
    """(bytes, seal) of a read-back file; PlanError when it does not match its seal or has none."""
    why = unsealed(path) or (None if seal_of(path).exists() else f"its seal {seal_of(path).name} is missing")
    if why:
        raise PlanError(f"{path}: {why}; {remake}")
    return Path(path).read_bytes(), json.loads(seal_of(path).read_text())


__all__ = ["STEPS", "Outputs", "store", "sources", "sources_for", "sha256", "seal_of", "unsealed", "read_sealed"]
