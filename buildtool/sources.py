"""The package's own Python sources: which files, and a cheap fingerprint of them.

Light on purpose (os and zlib only): the daemon client fingerprints the code on every
connection, and a `gen` step sent to the daemon must not pay for more.
"""

from __future__ import annotations

import os
import zlib

PKG = os.path.dirname(os.path.abspath(__file__))


def files(names) -> list:
    """The .py files under each name (a file or folder relative to the package; "" is all of it), sorted."""
    out = []
    for name in names:
        path = os.path.join(PKG, name)
        if os.path.isdir(path):
            out += [e.path for _, e in _py_entries(path, "")]
        elif os.path.isfile(path):
            out.append(path)
    return out


def code_version() -> str:
    """Fingerprint of the bytes of every module of the package (and its name in the package), for the
    daemon handshake.

    A daemon must run the code the client would run itself (it plans and runs `gen` steps). Computed on
    every call (a client may live across edits) from the files' contents, not their paths or mtimes:
    two installs of the same code (two checkouts, a wheel and an editable install) share one warm
    daemon, and a save that leaves a file's bytes as they were restarts nothing. CRC-32 and Adler-32
    rather than SHA-256 keep hashlib out of the client (about 1 MB read: a millisecond or two).
    """
    crc, adler, n = 0, 1, 0
    for name, e in _py_entries(PKG, ""):
        with open(e.path, "rb") as f:
            data = name.encode() + b"\0" + f.read() + b"\0"
        crc, adler, n = zlib.crc32(data, crc), zlib.adler32(data, adler), n + len(data)
    return f"{crc:08x}{adler:08x}{n:x}"


def _py_entries(path: str, rel: str):
    """(name relative to path, DirEntry) of every .py under path: a directory's files, then its
    subdirectories, each sorted, __pycache__ skipped; scandir and no path arithmetic (code_version runs
    on every connection to the daemon)."""
    with os.scandir(path) as it:
        entries = sorted(it, key=lambda e: e.name)
    dirs = []
    for e in entries:
        if e.is_dir():
            if e.name != "__pycache__":
                dirs.append(e)
        elif e.name.endswith(".py"):
            yield f"{rel}{e.name}", e
    for e in dirs:
        yield from _py_entries(e.path, f"{rel}{e.name}/")


# The package's layers, lowest first: a module imports only modules of its own layer or a lower one
# (tests/test_layers.py checks it, imports inside functions included; docs/ARCHITECTURE.md draws it).
# Each name is a module or package under buildtool; a package's modules share its layer.
LAYERS = (
    ("base", ("errors", "units", "progress", "fsutil", "sources", "imports", "options")),
    ("model", ("model",)),  # graph IR, operator table and checks, .tflite reader/writer, model I/O files
    ("refops", ("refops",)),  # TFLite Micro's kernels in numpy, and the prepare step codegen shares
    ("zoo", ("zoo",)),  # graphs built in code, calibrated with refops
    ("boards", ("targets", "boards")),  # the board plugins: CPU, memories, toolchain, emulator
    ("plan", ("plan",)),  # the plan as data, the arena and fusion planners, flash image and region placement
    ("codegen", ("codegen",)),  # plan -> model.c / model.h
    ("firmware", ("firmware",)),  # compile, link, fit, run in an emulator, profile
    ("report", ("report",)),  # memory drawn as HTML/SVG
    ("pipeline", ("steps", "pipeline")),  # the build's steps (one module each) and the flow that runs them
    ("serve", ("serve",)),  # plan caches (local, team), the plan request, the planner daemon
    ("shells", ("cli", "integrations", "scons", "cmake", "bazel", "netsplit", "kernels")),
)


def layer_of(module: str):
    """The layer name of a dotted module under buildtool ("plan.fusion.costs" -> "plan"), or None."""
    best = None
    for name, members in LAYERS:
        for m in members:
            if (module == m or module.startswith(m + ".")) and (best is None or len(m) > len(best[1])):
                best = (name, m)
    return best[0] if best else None
