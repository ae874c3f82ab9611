"""`buildtool -h` and `buildtool plan --help` answer without loading a model reader, a planner, the
boards, numpy or OR-Tools (cli/__init__.py: the command list imports no command's module; cli/common.py
and cli/plan.py import what reads a model or a plan inside the functions that need it). Checked on the
modules a fresh process holds after the command, not on its time (a timing test would fail on a loaded
machine)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Packages (and the package's own modules) that only reading or planning a model needs.
HEAVY = ("numpy", "ortools", "tflite", "buildtool.model", "buildtool.plan", "buildtool.steps", "buildtool.targets",
         "buildtool.zoo", "buildtool.serve.service", "buildtool.pipeline", "buildtool.firmware")

PROBE = r"""
import contextlib, io, json, sys
from buildtool.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as e:
        code = e.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def probe(*argv: str) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def heavy(modules: list) -> list:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize("argv", [["-h"], ["--help"], [], ["plan", "--help"], ["plan", "-h"]])
def test_help_imports_no_model_planner_or_numpy(argv):
    d = probe(*argv)
    assert heavy(d["modules"]) == [], heavy(d["modules"])
    assert d["code"] in (0, 2) and "usage: buildtool" in d["out"]


def test_command_list_is_every_command_with_its_line():
    """The list `buildtool -h` prints (from cli.COMMANDS, no module imported) names every command with its
    line, and no command module was imported for it."""
    from buildtool import cli

    d = probe("-h")
    shown = " ".join(d["out"].split())  # argparse wraps the lines
    for name, (_, _, line) in cli.COMMANDS.items():
        assert f"{name} {' '.join(line.split())}" in shown, name
    assert [m for m in d["modules"] if m.startswith("buildtool.cli.")] == []


def test_plan_help_is_the_full_plan_parser():
    """`plan --help` still shows every plan option (the parser of cli/plan.py, not the listing's stub)."""
    d = probe("plan", "--help")
    for opt in ("--json", "--board", "--optimize", "--max-mac-overhead", "--input-streamed", "--no-daemon"):
        assert opt in d["out"], opt
    assert "buildtool.cli.plan" in d["modules"]


def test_planning_still_loads_the_planner(tmp_path):
    """The probe sees imports: `plan --no-daemon` does load the planner and numpy (else the tests above
    could pass on a probe that saw nothing)."""
    d = probe("plan", "tiny", "--no-daemon")
    assert d["code"] == 0 and d["out"].startswith("tiny: arena "), d["out"]
    assert "numpy" in d["modules"] and "buildtool.plan.arena" in d["modules"]
