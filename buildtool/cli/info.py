"""`buildtool flash verify`, `boards`, and where the build-system glue lives (`scons-dir`, `cmake-dir`,
`bazel-dir`)."""

from __future__ import annotations

import os

from .. import targets
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
    for name, t in sorted(targets.boards().items()):
        print(f"{name:12s} {t.description}")
    return 0


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
    s = sub.add_parser("flash", help="flash images: `flash verify weights.bin`")
    s.add_argument("action", choices=["verify"])
    s.add_argument("image")
    s.set_defaults(fn=cmd_flash)


def add_boards(sub) -> None:
    s = sub.add_parser("boards", help="list the boards (target plugins) that are installed")
    s.set_defaults(fn=cmd_boards)


def add_scons_dir(sub) -> None:
    s = sub.add_parser("scons-dir", help="the folder for SCons' toolpath=[...] (tools=[\"default\", \"btfirmware\"])")
    s.set_defaults(fn=cmd_scons_dir)


def add_cmake_dir(sub) -> None:
    s = sub.add_parser("cmake-dir", help="the folder for CMAKE_PREFIX_PATH or Buildtool_DIR (find_package(Buildtool))")
    s.set_defaults(fn=cmd_cmake_dir)


def add_bazel_dir(sub) -> None:
    s = sub.add_parser("bazel-dir", help="the path for local_repository(name = \"buildtool\", path = ...)")
    s.set_defaults(fn=cmd_bazel_dir)
