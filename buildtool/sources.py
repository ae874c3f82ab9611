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
    """Fingerprint (path, size, mtime) of every module of the package, for the daemon handshake.

    A daemon must run the code the client would run itself (it plans and runs `gen` steps).
    Computed on every call (a client may live across edits) from stat() alone, the same test
    Python uses to reuse a .pyc; CRC-32 rather than SHA-256 keeps hashlib out of the client.
    """
    text = "".join(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\n"
                   for name, e in _py_entries(PKG, "") for st in [e.stat()]).encode()
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}{len(text):x}"


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
