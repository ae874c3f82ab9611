"""examples/scons: a user project (its own main.c + BtModel) copied outside the checkout, built with
the toolpath `buildtool scons-dir` prints, run natively and in QEMU; its printed class and output bytes
match TFLite Micro's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import fixed_input, run_app, tflm_run

from buildtool import zoo
from buildtool.model.writer import serialize

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "buildtool.cli", *args], capture_output=True, text=True,
                          timeout=60, **kw)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """examples/scons in a folder of its own, with the tiny model as a .tflite file; the tool's folder
    and the reference output and class."""
    top = tmp_path_factory.mktemp("user") / "app"
    shutil.copytree(ROOT / "examples" / "scons", top, ignore=shutil.ignore_patterns("build", ".sconsign*"))
    g = zoo.build("tiny")
    data = serialize(g)
    (top / "tiny.tflite").write_bytes(data)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    ref = tflm_run(data, [x])[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's buildtool, found by a normal import
    r = _cli("scons-dir", env=env, cwd=top)
    assert r.returncode == 0, r.stderr
    tool_dir = r.stdout.strip()
    assert Path(tool_dir, "btfirmware", "__init__.py").is_file()
    return top, env, tool_dir, x, ref


def test_scons_dir_is_inside_the_package():
    r = _cli("scons-dir", cwd=ROOT)
    assert r.returncode == 0 and Path(r.stdout.strip()) == ROOT / "buildtool" / "scons"


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_user_app_classifies_like_the_reference(project, board, tmp_path):
    top, env, tool_dir, x, ref = project
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={tool_dir}", f"board={board}",
                        "model=tiny.tflite"], cwd=top, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    elf = top / "build" / board / "app.elf"
    assert elf.is_file() and "Traceback" not in r.stdout + r.stderr
    ram = next(x for x in r.stdout.splitlines() if x.startswith(f"{board}: RAM"))  # the summary after the link
    out, log = run_app(board, elf, x, tmp_path)
    assert out == np.ascontiguousarray(ref).tobytes()
    assert re.search(r"^class=(\d+)$", log, re.M).group(1) == str(int(np.argmax(ref.reshape(-1))))
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-q", f"toolpath={tool_dir}", f"board={board}",
                        "model=tiny.tflite", f"build/{board}/app.elf"], cwd=top, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr  # up to date
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={tool_dir}", f"board={board}",
                        "model=tiny.tflite"], cwd=top, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "LD " not in r.stdout, r.stdout + r.stderr  # a no-op build still says it
    assert [x for x in r.stdout.splitlines() if x.startswith(f"{board}: RAM")] == [ram], r.stdout
    _clangd_finds_no_errors(top, top / "build" / board, board)


def _clangd_finds_no_errors(top: Path, build: Path, board: str) -> None:
    """BtModel.CompileCommands (called in the example) lists the user's main.c and the generated model.c
    with the board's flags; clangd --check reads them with 0 errors (the cross build asks
    arm-none-eabi-gcc for its system include directories)."""
    import json
    import shutil

    db = json.loads((build / "compile_commands.json").read_text())
    files = {Path(e["directory"], e["file"]).resolve() for e in db}
    assert {(top / "main.c").resolve(), (build / "model.c").resolve()} <= files
    clangd = shutil.which("clangd")
    assert clangd, "clangd is not installed (scripts/install.sh installs Debian's clangd)"
    extra = [] if board == "host" else ["--query-driver=/usr/bin/arm-none-eabi-*"]
    for src in (top / "main.c", build / "model.c"):
        r = subprocess.run([clangd, f"--check={src}", f"--compile-commands-dir={build}", *extra], cwd=top,
                           capture_output=True, text=True, timeout=120)
        m = re.search(r"All checks completed, (\d+) errors", r.stderr)
        assert m and m.group(1) == "0", r.stderr[-3000:]


def _steps(stdout: str) -> list:
    """The steps a quiet SCons build reports, as 'plan', 'CC model.c', 'AS weights.S', 'LD'..."""
    out = []
    for line in stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("CC", "AS"):
            out.append(f"{word} {Path(rest).name}")
        elif word in ("skeleton", "plan", "codegen", "flash", "LD"):
            out.append(word)
    return out


def test_each_kind_of_edit_reruns_only_its_steps(tmp_path):
    """A private copy of the package (so the planner can be edited) and of examples/scons, host."""
    from edits import tiny_bytes

    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "buildtool", pkg / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    top = tmp_path / "app"
    shutil.copytree(ROOT / "examples" / "scons", top, ignore=shutil.ignore_patterns("build", ".sconsign*"))
    model = top / "tiny.tflite"
    model.write_bytes(tiny_bytes())
    env = dict(os.environ, PYTHONPATH=str(pkg), BUILDTOOL_NO_DAEMON="1")

    def build() -> list:
        r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={pkg / 'buildtool' / 'scons'}",
                            "board=host", "model=tiny.tflite"], cwd=top, env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
        return _steps(r.stdout)

    cold = build()
    assert {"skeleton", "plan", "codegen", "flash", "CC model.c", "CC main.c", "AS weights.S", "LD"} <= set(cold)
    assert build() == []  # no-op
    model.write_bytes(model.read_bytes())
    assert build() == []  # same bytes, newer file
    model.write_bytes(tiny_bytes(bump=1))
    assert build() == ["skeleton", "flash", "AS weights.S", "LD"]  # weight-only: no plan, no model.c
    planner = pkg / "buildtool" / "plan" / "arena" / "planner.py"
    planner.write_text(planner.read_text() + "# an edit that changes no plan\n")
    assert build() == ["plan"]  # re-planned, same plan.json: stops there
    model.write_bytes(tiny_bytes(wide=True))
    steps = build()
    assert {"skeleton", "plan", "codegen", "CC model.c", "CC main.c", "flash", "LD"} <= set(steps), steps
    # the sources that include model.h recompile; no kernel does
    assert not any(s.startswith("CC ") and s not in ("CC model.c", "CC main.c", "CC platform.c") for s in steps), steps


def _readme_qemu_line() -> str:
    """The QEMU command of docs/projects.md's "Running your own app"."""
    text = (ROOT / "docs" / "projects.md").read_text()
    section = text.split("### Running your own app", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```sh\n(qemu-system-arm [^\n]+)\n```", section).group(1)


def test_readme_runs_your_own_app_in_qemu(project):
    """docs/projects.md's "Running your own app": the command it prints is the one `buildtool boards cortex-m4` gives,
    and run as written (a shell, `> log.txt`) it leaves bt_puts' text in log.txt, the output bytes in
    output.bin (TFLite Micro's) and bt_main's exit status; without input.bin the status is BT_EXIT_IO."""
    top, env, tool_dir, x, ref = project
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={tool_dir}", "board=cortex-m4",
                        "model=tiny.tflite"], cwd=top, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    line = _readme_qemu_line()
    shown = _cli("boards", "cortex-m4", env=env).stdout
    run = re.search(r"^  run +(.+)$", shown, re.M).group(1)
    assert line == run.replace("app.elf", "build/cortex-m4/app.elf") + " > log.txt"
    for f in ("output.bin", "log.txt"):
        (top / f).unlink(missing_ok=True)
    (top / "input.bin").write_bytes(np.ascontiguousarray(x).tobytes())
    r = subprocess.run(line, shell=True, cwd=top, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    log = (top / "log.txt").read_text()
    assert re.search(r"^class=(\d+)$", log, re.M).group(1) == str(int(np.argmax(ref.reshape(-1))))
    assert "stack_high_water_bytes=" in log and r.stdout == ""
    assert (top / "output.bin").read_bytes() == np.ascontiguousarray(ref).tobytes()
    (top / "input.bin").unlink()
    r = subprocess.run(line, shell=True, cwd=top, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "app: cannot read the input" in (top / "log.txt").read_text()


OWN_SCONSTRUCT = """import os
env = Environment(tools=["default", "btfirmware"], toolpath=[ARGUMENTS["toolpath"]], ENV=os.environ)
m = env.BtModel(board="cortex-m4", model="tiny.tflite", out="build/model", library=True)
own = m.env.Clone(CCFLAGS=["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-Os"],
                  LINKFLAGS=["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-nostdlib",
                             "-nostartfiles", "-Tlink.ld"], LIBS=["gcc"])
app = own.Program("build/app.elf", own.Object(["startup.c", "semihost.c", "main.c"]) + m.objects)
Depends(app, "link.ld")
"""


def test_scons_library_mode_links_into_a_project_with_its_own_start_up_and_linker_script(project, tmp_path):
    """BtModel(library=True) (issue 28): only model.o, the kernels and weights.o (weights in
    .rodata.bt_weights), linked by the project's own Program with its own start-up code, vector table,
    linker script and main (tests/test_export.py's); runs in QEMU with TFLite Micro's output."""
    from test_export import OWN_LIBRARY_FILES, _project, _values

    top, env, tool_dir, x, ref = project
    own = _project(tmp_path / "own", {**OWN_LIBRARY_FILES, "SConstruct": OWN_SCONSTRUCT}, np.asarray(x))
    shutil.copy(top / "tiny.tflite", own / "tiny.tflite")
    r = subprocess.run([sys.executable, "-m", "SCons", "-Q", f"toolpath={tool_dir}"], cwd=own, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert not list((own / "build" / "model" / "obj").glob("fw/*"))  # none of our start-up objects
    run = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                          "enable=on,target=native", "-kernel", "build/app.elf"], cwd=own, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _values(run.stdout + run.stderr) == np.asarray(ref).reshape(-1).tolist()
