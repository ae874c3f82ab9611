"""Every installed board, built-in or third-party, gets the same smoke test: build tiny, run it
(natively or in its emulator), compare with TFLite Micro byte for byte, check the profile and the
RAM report. A fake third-party board (an entry point returning a Target on the host platform)
goes through the same test, as do the registry's rules for stale or broken entry points."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import ROOT, fixed_input, tflm_run

from buildtool import pipeline, targets, zoo
from buildtool.firmware import runner
from buildtool.plan.arena.planner import plan_arena
from buildtool.boards import host as host_boards
from buildtool.errors import UsageError
from buildtool.targets import platform
from buildtool.model.writer import serialize

THIRD_PARTY = "acme-host"


class _EntryPoint:
    """What importlib.metadata.entry_points() yields, for a plugin that is not installed."""

    def __init__(self, name, value, load, dist="acme-boards"):
        self.name, self.value, self._load = name, value, load
        self.dist = type("Dist", (), {"name": dist})()

    def load(self):
        return self._load()


def _acme_boards():
    host = host_boards.targets()[0]  # not targets.get: this runs while the registry loads
    return [dataclasses.replace(host, name=THIRD_PARTY, description="third-party board on the host platform")]


def _with_entry_points(monkeypatch, *eps):
    monkeypatch.setattr(targets, "entry_points", lambda group: list(eps) if group == targets.GROUP else [])
    monkeypatch.setattr(targets, "_CACHE", {})


@pytest.fixture
def board(request, monkeypatch):
    """The board under test; THIRD_PARTY is registered through a (fake) entry point first."""
    if request.param == THIRD_PARTY:
        boards = _acme_boards()
        _with_entry_points(monkeypatch, _EntryPoint("acme", "acme_boards:targets", lambda: lambda: boards))
    t = targets.get(request.param)
    missing = t.missing_tools()
    if missing:
        pytest.skip(f"{t.name} needs {', '.join(missing)}")
    return t


@pytest.mark.parametrize("board", targets.names() + [THIRD_PARTY], indirect=True)
def test_board_smoke(board, tmp_path):
    g = zoo.build("tiny")
    data = serialize(g)
    paths = pipeline.build(g, board.name, tmp_path)
    assert paths["elf"].exists() and ("ld" in paths) == bool(board.linker_template)
    if not board.runs_here:  # a real part with no emulator: built and link-checked (tests/test_parts.py)
        assert all(paths[k].stat().st_size > 0 for k in board.images)
        with pytest.raises(UsageError, match="link-checked only"):
            runner.run(board.name, tmp_path, fixed_input(g.tensors[g.inputs[0]].shape))
        return
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    y, prof, ram = runner.run(board.name, tmp_path, x)
    assert np.array_equal(y, tflm_run(data, [x])[0])
    order = plan_arena(g).order
    assert [o["op"] for o in prof["ops"]] == order and all(o["count"] > 0 for o in prof["ops"])
    assert prof["unit"] == ("ns" if board.port.native else "instructions")
    assert ram["arena_bytes"] == plan_arena(g).arena_bytes and 0 < ram["stack_bytes"]
    # weights a part stages once into its spare SRAM (bt_staging, plan/staging.py) are RAM of their own
    assert ram["total_bytes"] == (ram["arena_bytes"] + ram.get("staged_bytes", 0) + ram["stack_bytes"]
                                  + ram["static_other_bytes"])


def test_every_board_has_a_registered_platform():
    for name in targets.names():
        t = targets.get(name)
        assert isinstance(t.port, platform.Platform)
        assert t.firmware_sources()[0] == "common/main.c"
        assert all((ROOT / "buildtool" / "firmware_src" / s).is_file() for s in t.firmware_sources())


def test_platforms_own_start_up_code_running_and_thumb_bit():
    m4, rv, host = targets.get("cortex-m4"), targets.get("riscv32"), targets.get("host")
    assert "arm/startup.c" in m4.firmware_sources() and "riscv/start.S" in rv.firmware_sources()
    assert host.port.run_command(host, "/b/firmware.elf") == ["/b/firmware.elf"]
    assert m4.port.run_command(m4, "/b/firmware.elf", ("-plugin", "p"))[-4:] == ["-plugin", "p", "-kernel",
                                                                               "/b/firmware.elf"]
    assert (0x101 & m4.port.code_mask, 0x101 & rv.port.code_mask) == (0x100, 0x101)
    assert not host.emulated and m4.emulated and rv.emulated


def test_a_board_may_carry_its_own_platform_object():
    custom = platform.Platform("acme-rtos", ("host/platform.c",), native=True)
    t = dataclasses.replace(targets.get("host"), name="acme-rtos-board", platform=custom)
    assert t.port is custom and not t.emulated
    with pytest.raises(UsageError, match="board x: unknown platform 'vax'"):
        dataclasses.replace(t, name="x", platform="vax").firmware_sources()


def test_a_broken_or_stale_entry_point_is_one_warning_line(monkeypatch, capsys):
    def broken():
        raise ModuleNotFoundError("No module named 'plugins'")

    _with_entry_points(monkeypatch, _EntryPoint("host", "plugins.host:targets", broken),
                       _EntryPoint("junk", "junk:targets", lambda: lambda: ["not a board"]),
                       _EntryPoint("acme", "acme_boards:targets", lambda: _acme_boards))
    names = targets.names()
    assert {"host", "cortex-m4", "riscv32", "xcore", THIRD_PARTY} <= set(names)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("buildtool: warning: skipped board plugins")
    assert "plugins.host:targets" in err and "junk:targets" in err


def test_buildtool_s_own_stale_entry_points_are_skipped_silently(monkeypatch, capsys):
    """An install made before the boards moved still names plugins.host etc.: never loaded."""
    def stale():
        raise ModuleNotFoundError("No module named 'plugins'")

    _with_entry_points(monkeypatch, _EntryPoint("host", "plugins.host:targets", stale, dist="buildtool"))
    assert "host" in targets.names() and capsys.readouterr().err == ""


def test_built_in_boards_win_over_an_entry_point_of_the_same_name(monkeypatch):
    stale = dataclasses.replace(targets.get("host"), description="stale copy")
    _with_entry_points(monkeypatch, _EntryPoint("host", "plugins.host:targets", lambda: lambda: [stale]))
    assert targets.get("host").description != "stale copy"


def test_built_in_boards_are_a_namespaced_package():
    """Installing buildtool claims no generic top-level name such as `plugins`."""
    assert not (ROOT / "plugins").exists()
    assert all(m.startswith("buildtool.boards.") for m in targets.BUILTIN_PLUGINS)
    text = (ROOT / "pyproject.toml").read_text()
    assert '"plugins' not in text and 'host = "buildtool.boards.host:targets"' in text


@pytest.mark.parametrize("fake, says", [
    ("arm-none-eabi-gcc", "arm-none-eabi-gcc cannot compile Helium (MVE) code for -mcpu=cortex-m55 with arm_mve.h; "
                          "install Debian's gcc-arm-none-eabi 12 or later"),
    ("qemu-system-arm", "qemu-system-arm has no machine mps3-an547 (the Cortex-M55 board); install qemu-system-arm "
                        "7.2 or later")], ids=["gcc-without-mve", "qemu-without-an547"])
def test_helium_board_without_its_toolchain_is_one_line(fake, says, tmp_path):
    """cortex-m55 with a compiler that has no Cortex-M55/MVE support, or a QEMU without mps3-an547 (each
    faked first on PATH): one line naming what to install, exit 2, nothing built."""
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = {"arm-none-eabi-gcc": "echo 'arm-none-eabi-gcc: error: unrecognized -mcpu target: cortex-m55' >&2; exit 1",
              "qemu-system-arm": "echo 'Supported machines are:'; echo 'mps2-an386  ARM MPS2 with AN386'"}[fake]
    (bin_dir / fake).write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / fake).chmod(0o755)
    g = zoo.build("tiny")
    np.save(tmp_path / "x.npy", fixed_input(g.tensors[g.inputs[0]].shape))
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "run", "tiny", "--board", "cortex-m55", "--input",
                        str(tmp_path / "x.npy"), "--build-dir", str(tmp_path / "b"), "--no-daemon"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("buildtool: error: board cortex-m55: ") and says in r.stderr, r.stderr
    assert not (tmp_path / "b" / "firmware.elf").exists()
