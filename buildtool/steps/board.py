"""Step `board`: what a foreign build system needs of a board (compiler, flags, include directories,
start-up and kernel sources, link flags, the command prefix that runs an image: "run" + -kernel ELF;
for an RTT board the RTT reader in front of its emulator) as board.json, and its linker script."""

from __future__ import annotations

import json
from pathlib import Path

from .. import targets
from ..firmware import toolchain
from . import Outputs


def run(board: str, out) -> Outputs:
    """out: the folder board.json's paths are relative to (the generated sources live there)."""
    t = targets.get(board)
    out = Path(out)
    files = {}
    ld = out / "board.ld" if t.linker_template else None
    if ld:
        files["board.ld"] = t.linker_script()
    info = {"board": t.name, "cc": t.cc, "cflags": list(t.cflags) + ["-Wall"] + [f"-D{d}" for d in t.defines],
            "include_dirs": [str(d) for d in toolchain.include_dirs(t, out)],
            "sources": [str(s) for s in toolchain.sources(t, out) if s.name != "model.c"],
            "ldflags": toolchain.link_flags(t, ld), "run": t.port.run_prefix(t), "weights_align": t.weights_align}
    files["board.json"] = json.dumps(info, indent=1) + "\n"
    return Outputs(files)
