"""`buildtool flash verify`, `boards`, and where the build-system glue lives (`scons-dir`, `cmake-dir`,
`bazel-dir`)."""

from __future__ import annotations

import os
import shlex

from .. import targets, units
from ..cmake import CMAKE_DIR
from ..errors import UsageError
from ..firmware.toolchain import PACKAGE, SCONS_DIR
from ..plan import flash


def cmd_flash(a) -> int:
    if not os.path.exists(a.image):
        raise UsageError(f"flash image not found: {a.image}")
    info = flash.verify(a.image)
    print(flash.describe(a.image, info))
    return 0


def cmd_boards(a) -> int:
    if a.board:
        print(describe_board(targets.get(a.board)))
        return 0
    boards = sorted(targets.boards().items())
    width = max(len(name) for name, _ in boards)
    for name, t in boards:
        print(f"{name:{width}s}  {t.description}")
    return 0


def describe_board(t) -> str:
    """What a user needs to build and start their own image for board t."""
    lines = [f"{t.name}: {t.description}", f"  compiler  {shlex.join([t.cc, *t.cflags])}"]
    if t.ram_bytes:
        lines.append(f"  memory    RAM {units.size(t.ram_bytes)} at {t.ram_origin:#010x}, "
                     f"flash {units.size(t.flash_bytes)} at {t.flash_origin:#010x}")
    for r in t.regions:
        lines.append(f"  region    {r.name}: {units.size(r.size)} at {r.origin:#010x}"
                     + (f", holds {', '.join(r.holds)}" if r.holds else ""))
    if t.clock_hz:
        lines.append(f"  clock     {t.clock_hz / 1e6:g} MHz")
    if t.source:
        lines.append(f"  source    {t.source}")
    for key, values in t.option_values().items():
        lines.append(f"  option    {key}: {' | '.join(values)} (default {values[0]}; {t.name.split(':')[0]}:VALUE)")
    if t.images:
        lines.append(f"  outputs   firmware.elf, {', '.join('firmware.' + k for k in t.images)}")
    if not t.runs_here:
        lines.append("  run       none here: built and link-checked only; flash firmware.elf/.bin/.hex with a probe "
                     "(docs/boards.md)")
    elif t.port.native:
        lines.append("  run       ./app < input.bin > output.bin   (bt_puts on stderr)")
    else:
        lines.append(f"  run       {shlex.join(t.port.run_command(t, 'app.elf'))}")
        lines.append("            (in a folder holding input.bin: bt_read_input reads it, bt_write_output writes "
                     "output.bin, bt_puts prints on stdout; the exit status is bt_main's)")
    return "\n".join(lines)


def cmd_scons_dir(a) -> int:
    print(SCONS_DIR)
    return 0


def cmd_cmake_dir(a) -> int:
    print(CMAKE_DIR)
    return 0


def cmd_bazel_dir(a) -> int:
    print(PACKAGE / "bazel")
    return 0


def add_flash(sub) -> None:
    s = sub.add_parser("flash",
                       description="Check a weights image (weights.bin, the flash step's output) without a board: "
                                   "its header (magic, format version, size, CRC-32, alignment, target, model hash) "
                                   "and payload. Prints what it holds; exit 2 with one line when it is damaged.")
    s.add_argument("action", choices=["verify"], help="verify: check the image and describe it (the only action)")
    s.add_argument("image", help="the weights image, e.g. build/cortex-m4/tiny/weights.bin")
    s.set_defaults(fn=cmd_flash)


def add_boards(sub) -> None:
    s = sub.add_parser("boards")
    s.add_argument("board", nargs="?", help="a board name: show how to build and run your own image for it")
    s.set_defaults(fn=cmd_boards)


def add_scons_dir(sub) -> None:
    s = sub.add_parser("scons-dir")
    s.set_defaults(fn=cmd_scons_dir)


def add_cmake_dir(sub) -> None:
    s = sub.add_parser("cmake-dir")
    s.set_defaults(fn=cmd_cmake_dir)


def add_bazel_dir(sub) -> None:
    s = sub.add_parser("bazel-dir")
    s.set_defaults(fn=cmd_bazel_dir)
