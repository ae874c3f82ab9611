"""examples/cmake: a user project (its own main.c + buildtool_add_model) copied outside the checkout,
found through `buildtool cmake-dir`, configured with Ninja for the host and (toolchain file) the
Cortex-M4, built, run natively and in QEMU and compared byte for byte with TFLite Micro; which steps
rerun after each kind of edit; a Makefile build; clangd on the compile_commands.json; bad input as
one line at configure time. One build per board is shared by every test (module fixtures)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import fixed_input, load_file, run_app, tflm_run
from edits import perturb_weights

from buildtool import targets, zoo
from buildtool.errors import PlanError, UsageError
from buildtool.model.writer import serialize

ROOT = Path(__file__).resolve().parents[1]
bench = load_file("cmake_bench", ROOT / "benchmarks" / "cmake_bench.py")


def _run(args: list, env: dict, cwd=None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """examples/cmake in a folder of its own with the tiny model as tiny.tflite; the reference output."""
    top = tmp_path_factory.mktemp("user") / "app"
    shutil.copytree(ROOT / "examples" / "cmake", top, ignore=shutil.ignore_patterns("build"))
    g = zoo.build("tiny")
    data = serialize(g)
    (top / "tiny.tflite").write_bytes(data)
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    env = dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_DAEMON_WATCH="0")  # this checkout's buildtool
    r = _run([sys.executable, "-m", "buildtool.cli", "cmake-dir"], env, cwd=top)
    assert r.returncode == 0, r.stderr
    return SimpleNamespace(top=top, env=env, cmake_dir=Path(r.stdout.strip()), model=data, x=x,
                           ref=tflm_run(data, [x])[0])


def _configure(p, build: Path, board: str, generator: str = "Ninja", *extra,
               find: str = "CMAKE_PREFIX_PATH") -> subprocess.CompletedProcess:
    """cmake -G generator for board, finding the package through find (CMAKE_PREFIX_PATH or Buildtool_DIR)."""
    args = ["cmake", "-G", generator, "-S", p.top, "-B", build, f"-D{find}={p.cmake_dir}", *extra]
    if board != "host":
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={p.cmake_dir}/toolchains/{board}.cmake")
    return _run(args, p.env)


@pytest.fixture(scope="module")
def builds(project):
    """{board: build folder}: host, cortex-m4 and cortex-m55 (Helium) configured with Ninja and built once."""
    out = {}
    for board in ("host", "cortex-m4", "cortex-m55"):
        build = project.top / "build" / board
        r = _configure(project, build, board)
        assert r.returncode == 0, r.stdout + r.stderr
        r = _run(["ninja", "-C", build], project.env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Traceback" not in r.stdout + r.stderr
        steps = bench.steps_ran(r.stdout)
        assert {"model.o", "weights.o", "main.o", "link"} <= set(steps), steps
        assert f"{board}: RAM" in r.stdout  # buildtool_firmware_report after the link
        out[board] = build
    return out


@pytest.mark.slow
def test_weights_beyond_flash_link_their_psram_part(project, tmp_path):
    """ZOO efficientnet-lite0 (more weights than cortex-m4's flash): the flash step's split header puts
    the image's external part in PSRAM when weights_blob.S is assembled; bit-exact in QEMU."""
    build = tmp_path / "big"
    r = _configure(project, build, "cortex-m4", "Ninja", "-DZOO=efficientnet-lite0")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["ninja", "-C", build], project.env, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "; psram " in r.stdout and "Traceback" not in r.stdout + r.stderr
    big = zoo.build("efficientnet-lite0")
    x = fixed_input(big.tensors[big.inputs[0]].shape)
    out, _ = run_app("cortex-m4", _app(build, "cortex-m4"), x, tmp_path)
    assert out == np.ascontiguousarray(tflm_run(serialize(big), [x])[0]).tobytes()


def _app(build: Path, board: str) -> Path:
    return build / ("app" if targets.get(board).port.native else "app.elf")


def _assert_classifies(out: bytes, log: str, ref: np.ndarray) -> None:
    assert out == np.ascontiguousarray(ref).tobytes()
    assert re.search(r"^class=(\d+)$", log, re.M).group(1) == str(int(np.argmax(ref.reshape(-1))))


def test_cmake_dir_holds_the_package_config_and_toolchains(project):
    d = project.cmake_dir
    assert d == ROOT / "buildtool" / "cmake"
    for f in ["BuildtoolConfig.cmake", "BuildtoolConfigVersion.cmake"] + [
            f"toolchains/{b}.cmake" for b in ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "riscv32",
                                                "hifive1")]:
        assert (d / f).is_file(), f
    assert '"cmake/**/*.cmake"' in (ROOT / "pyproject.toml").read_text()  # shipped in the wheel
    # both examples build the same application
    assert (ROOT / "examples/cmake/main.c").read_bytes() == (ROOT / "examples/scons/main.c").read_bytes()


@pytest.mark.parametrize("board", ["host", "cortex-m4", "cortex-m55"])
def test_user_app_classifies_like_the_reference(project, builds, board, tmp_path):
    build = builds[board]
    out, log = run_app(board, _app(build, board), project.x, tmp_path)
    _assert_classifies(out, log, project.ref)
    db = json.loads((build / "compile_commands.json").read_text())
    files = {Path(e["file"]).name for e in db}
    assert {"model.c", "main.c", "weights_blob.S"} <= files
    t = targets.get(board)
    model_c = [e["command"] for e in db if Path(e["file"]).name == "model.c"]
    assert model_c and all(t.cflags[0] in c and (t.port.native or t.cc in c) for c in model_c)  # the board's
    r = _run(["ninja", "-C", build, "-n", "-d", "explain"], project.env)  # a no-op build runs nothing
    assert r.returncode == 0 and "no work to do" in r.stdout, r.stdout + r.stderr
    assert "ninja explain" not in r.stderr, r.stderr


@pytest.mark.parametrize("board", ["host", "cortex-m4"])
def test_clangd_finds_no_errors(project, builds, board):
    """clangd --check on the generated model.c and the user's main.c, with the build's compile_commands.json;
    the cross build asks arm-none-eabi-gcc for its system include directories (--query-driver)."""
    clangd = shutil.which("clangd")
    assert clangd, "clangd is not installed (scripts/install.sh installs Debian's clangd)"
    build = builds[board]
    extra = [] if board == "host" else ["--query-driver=/usr/bin/arm-none-eabi-*"]
    for src in (build / "model" / "model.c", project.top / "main.c"):
        r = _run([clangd, f"--check={src}", f"--compile-commands-dir={build}", *extra], project.env, timeout=120)
        m = re.search(r"All checks completed, (\d+) errors", r.stderr)
        assert m and m.group(1) == "0", r.stderr[-3000:]
        assert "model.h" not in "".join(line for line in r.stderr.splitlines() if line.startswith("E["))


def _ninja_steps(project, build: Path) -> list:
    r = _run(["ninja", "-C", build], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    return bench.steps_ran(r.stdout)


# what Make's own bookkeeping prints under VERBOSE=1: its directories, the recursive makes of CMake's
# Makefile2, CMake's checks of the build system, dependency scans (and what they say of the depfiles the last
# build's compiles and steps wrote) and progress, the targets it found built
_MAKE_OWN = re.compile(r"^(g?make(\[\d+\])?: |\S*\bg?make\s+-f CMakeFiles/|\[\s*\d+%\] Built target |"
                       r"Dependencies file .* is newer than depends file |Consolidate compiler generated dependencies |"
                       r".*( --check-build-system | -E cmake_depends | -E cmake_progress_start ))")


def _commands(build: Path, generator: str, project) -> list:
    """The commands a `cmake --build` of build runs, verbose (Ninja -v, Make VERBOSE=1), less the build tool's
    own bookkeeping: a build with nothing to do runs none (no buildtool step, no compile, no link)."""
    verbose = ["-v"] if generator == "Ninja" else ["VERBOSE=1"]
    r = _run(["cmake", "--build", build, "--", *verbose], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    if generator == "Ninja":
        return [line for line in lines if not line.startswith("ninja: ")]
    return [line for line in lines if not _MAKE_OWN.match(line)]


def _steps(build: Path, generator: str, project) -> list:
    """The steps a `cmake --build` of build ran (bench.step_name's names: skeleton, kernel (the units step), link,
    model.o, kernel:depthwise.o, ...), from Ninja's or Make's status lines."""
    r = _run(["cmake", "--build", build], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    if generator == "Ninja":
        return bench.steps_ran(r.stdout)
    return [bench.step_name(s) for s in re.findall(r"^\[\s*\d+%\] (.*)$", r.stdout, re.M)
            if not s.startswith("Built target")]


def test_what_reruns_after_each_edit(project, builds, tmp_path):
    """Same bytes: skeleton and flash at most, and they stop there (restat). A weight-only edit: skeleton,
    flash, the weights object and the link; never the plan, the code or model.c; the new weights reach
    the image. Undoing it: the same steps again."""
    build, model = builds["host"], project.top / "tiny.tflite"
    model.write_bytes(project.model)  # a newer file, the same bytes
    assert set(_ninja_steps(project, build)) <= {"skeleton", "flash"}
    try:
        model.write_bytes(perturb_weights(model.read_bytes()))
        steps = _ninja_steps(project, build)
        assert sorted(steps) == ["flash", "link", "skeleton", "weights.o"], steps
        edited = model.read_bytes()
        out, log = run_app("host", _app(build, "host"), project.x, tmp_path)
        _assert_classifies(out, log, tflm_run(edited, [project.x])[0])
    finally:
        model.write_bytes(project.model)
    assert sorted(_ninja_steps(project, build)) == ["flash", "link", "skeleton", "weights.o"]
    assert _ninja_steps(project, build) == []


@pytest.mark.parametrize("generator", ["Ninja", "Unix Makefiles"])
def test_an_unchanged_build_runs_nothing_after_any_edit(project, builds, generator):
    """cortex-m4 (its depthwise kernel split into files: the units step writes kernels/depthwise.c from model.c).
    After each edit a second build runs no command at all, with Ninja and with Make: the steps' outputs are
    rewritten only when their bytes change, so one older than its inputs must not rerun its step (it did on
    every Make build: skeleton and flash after a same-bytes model, flash and the units step after a model.c that
    kept its unit: 1.8-3 s). A same-bytes model reruns no compile; a model.c whose calls need the same files reruns the units
    step but compiles no kernel; one whose calls change recompiles the unit; a weight-only edit compiles no kernel."""
    model = project.top / "tiny.tflite"
    if generator == "Ninja":
        build = builds["cortex-m4"]
    else:
        build = project.top / "build" / "make-cortex-m4"
        r = _configure(project, build, "cortex-m4", generator)
        assert r.returncode == 0, r.stdout + r.stderr
    _steps(build, generator, project)
    assert _commands(build, generator, project) == []
    try:
        model.write_bytes(project.model)  # a newer file, the same bytes
        steps = _steps(build, generator, project)
        assert _commands(build, generator, project) == []
        assert set(steps) <= {"skeleton", "flash"}, steps  # they stop there: no compile, no link
        unit, model_c = build / "model" / "kernels" / "depthwise.c", build / "model" / "model.c"
        before = unit.read_text(), model_c.read_text()
        # optimize_code=speed: other variants in model.c, the same depthwise path (the units step reran on every
        # Make build after it: its unit, rewritten only when it changes, stayed older than model.c)
        r = _configure(project, build, "cortex-m4", generator, "-DPLAN_OPTIONS=optimize_code=speed")
        assert r.returncode == 0, r.stdout + r.stderr
        steps = _steps(build, generator, project)
        assert model_c.read_text() != before[1] and unit.read_text() == before[0]
        assert {"code", "kernel", "model.o", "link"} <= set(steps), steps
        assert not [s for s in steps if s.startswith("kernel:")] and "plan" not in steps, steps  # the unit kept
        assert _commands(build, generator, project) == []
        # optimize_code=size: model.c's calls choose every depthwise file
        r = _configure(project, build, "cortex-m4", generator, "-DPLAN_OPTIONS=optimize_code=size")
        assert r.returncode == 0, r.stdout + r.stderr
        steps = _steps(build, generator, project)
        assert {"code", "kernel", "model.o", "kernel:depthwise.o", "link"} <= set(steps), steps
        assert unit.read_text() != before[0] and "plan" not in steps, steps  # model.c's calls chose other files
        assert not [s for s in steps if s.startswith("kernel:") and s != "kernel:depthwise.o"], steps
        assert _commands(build, generator, project) == []
        model.write_bytes(perturb_weights(project.model))
        steps = _steps(build, generator, project)
        assert sorted(steps) == ["flash", "link", "skeleton", "weights.o"], steps
        assert _commands(build, generator, project) == []
    finally:
        model.write_bytes(project.model)
        assert _configure(project, build, "cortex-m4", generator, "-DPLAN_OPTIONS=").returncode == 0
    steps = _steps(build, generator, project)
    assert "kernel" in steps and "kernel:depthwise.o" in steps and "plan" not in steps, steps
    assert _commands(build, generator, project) == []
    # generated files someone deleted are made again (Make: each step's depfile names its outputs among its stamp's
    # prerequisites, gen --depfile-outputs; it failed "No rule to make target weights.bin" with stamps alone)
    gone = [build / "model" / n for n in ("plan.json", "model.c", "weights.bin", "kernels/depthwise.c")]
    kept = [f.read_bytes() for f in gone]
    for f in gone:
        f.unlink()
    steps = _steps(build, generator, project)
    assert {"plan", "code", "kernel", "flash"} <= set(steps), steps
    assert [f.read_bytes() for f in gone] == kept
    assert _commands(build, generator, project) == []


def test_makefile_generator(project, tmp_path):
    """A host build with Make, also linking buildtool's harness (buildtool_add_firmware) from the same model."""
    build = project.top / "build" / "make"
    r = _configure(project, build, "host", "Unix Makefiles", "-DBUILD_HARNESS=ON", find="Buildtool_DIR")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["make", "-C", build, "-j2"], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("host: RAM") == 2  # buildtool_firmware_report after each link (app, harness)
    out, log = run_app("host", build / "app", project.x, tmp_path)
    _assert_classifies(out, log, project.ref)
    out, log = run_app("host", build / "harness", project.x, tmp_path)
    assert out == np.ascontiguousarray(project.ref).tobytes() and "arena_bytes=" in log
    assert (build / "compile_commands.json").is_file()
    assert _commands(build, "Unix Makefiles", project) == []  # up to date: no step, no compile, no link


def _one_line(r: subprocess.CompletedProcess, *expected: str) -> str:
    assert r.returncode != 0
    text = r.stdout + r.stderr
    assert "Traceback" not in text
    lines = [line.strip() for line in text.splitlines() if "buildtool:" in line]
    assert len(lines) == 1, text
    for e in expected:
        assert e in lines[0], lines[0]
    return lines[0]


def test_bad_input_is_one_line_at_configure(project):
    build = project.top / "build" / "bad"
    _one_line(_configure(project, build, "host", "Ninja", "-DBOARD=nosuch"), "unknown board 'nosuch'", "cortex-m4")
    assert not (build / "build.ninja").exists()  # nothing generated
    _one_line(_configure(project, build, "host", "Ninja", "-DBOARD=host", "-DPLAN_OPTIONS=optimize=bad"),
              "optimize='bad'")
    _one_line(_configure(project, build, "host", "Ninja", "-DPLAN_OPTIONS=", f"-DMODEL={project.top}/nope.tflite"),
              "nope.tflite", "not found")
    _one_line(_configure(project, build, "host", "Ninja", f"-DMODEL={project.top}/tiny.tflite", "-DBOARD=cortex-m4"),
              "arm-none-eabi-gcc", "toolchains/cortex-m4.cmake")


def test_ram_limit_and_configure_checks(tmp_path):
    from buildtool import cmake

    man = tmp_path / "firmware.json"
    man.write_text(json.dumps({"model": "tiny", "arena_bytes": 6144}))
    cmake.ram_check(str(man), 6144)
    with pytest.raises(PlanError, match="arena 6,144 B exceeds RAM_LIMIT 4,096 B"):
        cmake.ram_check(str(man), 4096)
    with pytest.raises(UsageError, match="RAM_LIMIT"):
        cmake.configure("host", "", "tiny", [], "64k", str(tmp_path / "out"))
    with pytest.raises(UsageError, match="exactly one of MODEL"):
        cmake.configure("host", "", "", [], "", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()  # nothing written when a check fails


def test_a_model_too_big_for_the_board_stops_at_the_plan_step(project):
    """Issue 31 item 2: mbv2-w0.35 (a 284 KiB arena) for hifive1 (16 KiB of RAM) is refused by the plan
    step in one line naming the RAM it needs, before any compile (not by the linker after it)."""
    build = project.top / "build" / "toobig"
    r = _configure(project, build, "hifive1", "Ninja", "-DZOO=mbv2-w0.35")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["ninja", "-C", build], project.env)
    line = _one_line(r, "mbv2-w0.35 does not fit board hifive1: it needs", "of RAM", "the board has 16,384 B")
    assert "overflowed" not in r.stdout + r.stderr and "model.o" not in bench.steps_ran(r.stdout), line
    assert not list(build.rglob("plan.json")) and not list(build.rglob("model.c"))


OWN_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(own_app C ASM)
find_package(Buildtool REQUIRED)
buildtool_add_model(model ZOO tiny BOARD cortex-m4 LIBRARY)
add_executable(app startup.c semihost.c main.c)
target_compile_options(app PRIVATE -Os)   # the CPU flags come with the model (issue 53)
target_link_options(app PRIVATE -nostdlib -nostartfiles -T${CMAKE_CURRENT_SOURCE_DIR}/link.ld)
target_link_libraries(app PRIVATE model gcc)
set_target_properties(app PROPERTIES SUFFIX ".elf")
"""


def test_library_mode_links_into_a_project_with_its_own_start_up_and_linker_script(project, tmp_path):
    """buildtool_add_model(... LIBRARY) (issue 28): the model alone (model.c, kernels, weights in
    .rodata.bt_weights) in a project whose start-up code, vector table, linker script and main are its
    own (tests/test_export.py's); no start-up code, linker script or report of ours reaches the link;
    it runs in QEMU and prints TFLite Micro's output."""
    from test_export import OWN_LIBRARY_FILES, _project, _values

    g = zoo.build("tiny")
    x = np.random.default_rng(3).integers(-128, 128, size=g.tensors[g.inputs[0]].shape, dtype=np.int8)
    ref = tflm_run(serialize(g), [x])[0].reshape(-1).tolist()
    top = _project(tmp_path / "own", {**OWN_LIBRARY_FILES, "CMakeLists.txt": OWN_CMAKE}, x)
    build = top / "build"
    r = _run(["cmake", "-G", "Ninja", "-S", top, "-B", build, f"-DCMAKE_PREFIX_PATH={project.cmake_dir}",
              f"-DCMAKE_TOOLCHAIN_FILE={project.cmake_dir}/toolchains/cortex-m4.cmake"], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["ninja", "-C", build, "-v"], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    link = next(line for line in r.stdout.splitlines() if " -o app.elf" in line)
    assert "startup.c.obj" in link and "board.ld" not in link and "firmware_src" not in link, link
    own = next(line for line in r.stdout.splitlines() if "semihost.c" in line and " -c " in line)
    for flag in ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"):  # bkpt needs Thumb
        assert flag in own and flag in link, (flag, own, link)
    assert "cortex-m4: RAM" not in r.stdout  # the image is the project's: no report of ours
    run = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                          "enable=on,target=native", "-kernel", "app.elf"], cwd=build, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _values(run.stdout + run.stderr) == ref
    sections = subprocess.run(["arm-none-eabi-objdump", "-h", str(build / "app.elf")], capture_output=True,
                              text=True).stdout
    assert ".bt_weights" not in sections  # in .rodata.bt_weights, inside the project's .text


ZEPHYR_LIKE = """cmake_minimum_required(VERSION 3.20)
project(zephyr_like_app C ASM)
# what Zephyr does with a module whose zephyr/module.yml says `cmake: zephyr`
set(ZEPHYR_CURRENT_MODULE_DIR "@MODULE@")
add_subdirectory("${ZEPHYR_CURRENT_MODULE_DIR}/zephyr" modules/buildtool)
# the application, as docs/cmake.md's Zephyr section writes it
find_package(Buildtool REQUIRED)
buildtool_add_model(model ZOO tiny BOARD cortex-m4 LIBRARY)
add_library(app STATIC app.c)
target_link_libraries(app PRIVATE model)
"""


def test_zephyr_module_glue_gives_the_application_buildtool_add_model(project, tmp_path):
    """Issue 28 item 5, as far as this machine goes (no Zephyr tree or west here): zephyr/module.yml names
    the folder Zephyr adds, and that folder makes find_package(Buildtool) + buildtool_add_model(... LIBRARY)
    work in the application's directory; the model library builds with the board's cross compiler."""
    module = ROOT / "zephyr"
    yml = (module / "module.yml").read_text()
    assert re.search(r"^build:\n  cmake: zephyr$", yml, re.M) and (module / "CMakeLists.txt").is_file()
    top = tmp_path / "app"
    top.mkdir()
    (top / "CMakeLists.txt").write_text(ZEPHYR_LIKE.replace("@MODULE@", str(ROOT)))
    (top / "app.c").write_text('#include "model.h"\nint app_run(void) { return model_init() || model_invoke(); }\n')
    build = top / "build"
    r = _run(["cmake", "-G", "Ninja", "-S", top, "-B", build,
              f"-DCMAKE_TOOLCHAIN_FILE={project.cmake_dir}/toolchains/arm-none-eabi.cmake"], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(["ninja", "-C", build], project.env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (build / "libmodel.a").is_file() and (build / "libapp.a").is_file()


def test_optimize_code_reruns_the_code_step_only(project, builds, tmp_path):
    """PLAN_OPTIONS optimize_code=size (the code step's option, docs/code-size.md): the code step, model.o and the
    link rerun, never the plan; model.c calls the one direct conv; the firmware classifies as TFLite Micro."""
    build = builds["cortex-m4"]
    try:
        r = _configure(project, build, "cortex-m4", "Ninja", "-DPLAN_OPTIONS=optimize_code=size")
        assert r.returncode == 0, r.stdout + r.stderr
        steps = _ninja_steps(project, build)
        assert "code" in steps and "model.o" in steps and "link" in steps and "plan" not in steps, steps
        assert "bt_conv_s8_direct(&" in next(build.rglob("model.c")).read_text()
        out, log = run_app("cortex-m4", _app(build, "cortex-m4"), project.x, tmp_path)
        _assert_classifies(out, log, project.ref)
    finally:
        assert _configure(project, build, "cortex-m4", "Ninja", "-DPLAN_OPTIONS=").returncode == 0
    assert "plan" not in _ninja_steps(project, build)
