"""examples/bazel: a user project (its own main.c + bt_model) copied outside the checkout, its
local_repository pointed at what `buildtool bazel-dir` prints, built with Debian's Bazel 4.2 for the
host and cortex-m4, run natively and in QEMU; output bytes and class match TFLite Micro's. One Bazel
server for the module (shut down at the end); which actions rerun after a weight-only edit. docs/projects.md's
"Bazel in your own project" run as written (its shell blocks, with the pip-installed package)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import fixed_input, run_app, tflm_run
from edits import perturb_weights
from test_remote_cache import CONF, NGINX, _serving, free_port

from buildtool import targets, zoo
from buildtool.firmware.library import model_opcodes, model_sources, split_kernels
from buildtool.firmware.toolchain import KERNELS, kernel_sources
from buildtool.integrations.bazel import executed
from buildtool.model.writer import serialize

ROOT = Path(__file__).resolve().parents[1]
if not shutil.which("bazel"):
    pytest.skip("bazel is not installed (Debian: apt-get install bazel-bootstrap; scripts/install.sh does)",
                allow_module_level=True)


class Project:
    """The example in a temporary folder, with its own Bazel output root and server."""

    def __init__(self, top: Path, root: Path, env: dict, remote: str):
        self.top, self.root, self.env, self.remote, self.n = top, root, env, remote, 0

    def bazel(self, *args, log=False, check=True) -> tuple:
        self.n += 1
        xlog = self.top.parent / f"exec{self.n}.json"
        extra = ([f"--execution_log_json_file={xlog}"] if log else []) + [f"--remote_cache={self.remote}"]
        r = subprocess.run(["bazel", f"--output_user_root={self.root}", "--max_idle_secs=120", *args[:1], *extra,
                            *args[1:]], cwd=self.top, env=self.env, capture_output=True, text=True, timeout=300)
        if check:
            assert r.returncode == 0, r.stdout + r.stderr
        return r, (executed(xlog) if log and xlog.exists() else [])

    def shutdown(self) -> None:
        """Stop this project's server (and its workers), then remove its output root."""
        subprocess.run(["bazel", f"--output_user_root={self.root}", "shutdown"], cwd=self.top, env=self.env,
                       capture_output=True, timeout=120)

        def writable(fn, path, _):  # Bazel leaves read-only folders in its output root
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            os.chmod(path, stat.S_IRWXU) if os.path.isdir(path) else None
            fn(path)

        shutil.rmtree(self.root, onerror=writable)


@pytest.fixture(scope="module")
def cache_url(tmp_path_factory):
    """A real nginx WebDAV server on 127.0.0.1 (Bazel's HTTP cache); its URL."""
    if NGINX is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-extras; scripts/install.sh does)")
    d = tmp_path_factory.mktemp("nginx")
    for sub in ("logs", "tmp", "data"):
        (d / sub).mkdir()
    user = "user root;\n" if os.geteuid() == 0 else ""
    port = free_port()
    (d / "nginx.conf").write_text(CONF.format(d=d, port=port, user=user))
    proc = subprocess.Popen([NGINX, "-p", str(d), "-c", str(d / "nginx.conf"), "-e", str(d / "logs" / "error.log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while proc.poll() is None and not _serving(port) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None and _serving(port), (d / "logs" / "error.log").read_text()[-2000:]
    yield f"http://127.0.0.1:{port}/bazel"
    proc.send_signal(signal.SIGQUIT)
    proc.wait(timeout=10)


def make_project(base: Path, data: bytes, remote: str, pkg_root: Path = ROOT) -> Project:
    """examples/bazel in base/app, its @buildtool at what `buildtool bazel-dir` prints (the buildtool
    under pkg_root: this checkout's by default)."""
    top = base / "app"
    shutil.copytree(ROOT / "examples" / "bazel", top)
    env = dict(os.environ, PYTHONPATH=str(pkg_root))
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "bazel-dir"], capture_output=True, text=True,
                       env=env, cwd=top, timeout=60)
    assert r.returncode == 0 and Path(r.stdout.strip()) == pkg_root / "buildtool" / "bazel", r.stderr
    ws = top / "WORKSPACE"
    ws.write_text(re.sub(r'path = "[^"]*"', f'path = "{r.stdout.strip()}"', ws.read_text()))
    (top / "tiny.tflite").write_bytes(data)
    # a short output root: Bazel's server socket lives under it (a Unix socket path has ~100 bytes)
    return Project(top, Path(tempfile.mkdtemp(prefix="btbz", dir="/tmp")), env, remote)


@pytest.fixture(scope="module")
def project(tmp_path_factory, cache_url):
    g = zoo.build("tiny")
    data = serialize(g)
    p = make_project(tmp_path_factory.mktemp("bazel"), data, cache_url)
    yield p, data, fixed_input(g.tensors[g.inputs[0]].shape)
    p.shutdown()


def run_and_classify(board: str, elf: Path, x, tmp: Path) -> tuple:
    """(output bytes, printed class or None: main.c prints it, the built-in harness does not)."""
    out, log = run_app(board, elf, x, tmp)
    m = re.search(r"^class=(\d+)$", log, re.M)
    return out, int(m.group(1)) if m else None


def check_output(board, project, model: bytes, tmp: Path, target: str = "app") -> None:
    p, _, x = project
    elf = tmp / f"{target}-{board}"
    shutil.copy(p.top / "bazel-bin" / target, elf)  # bazel-bin follows the last build's configuration
    ref = tflm_run(model, [x])[0]
    out, cls = run_and_classify(board, elf, x, tmp)
    assert out == np.ascontiguousarray(ref).tobytes()
    assert cls == (int(np.argmax(ref.reshape(-1))) if target == "app" else None)


def compiled_kernels(ran: list) -> list:
    """The kernel files a build compiled (stems, sorted): Bazel compiles the folder BtKernels wrote (a tree
    artifact) file by file; any compile of a board's own kernel library counted too, by its source's stem."""
    return sorted(Path(o).name.split(".")[0] for m, o, _ in ran
                  if m == "CppCompile" and ("_kernels/kernels/" in o or "/board_" in o))


def models_kernels(board: str) -> list:
    """The kernel stems SCons, CMake and `buildtool run` compile for tiny on board (library.model_sources),
    checked to be far fewer than the board's whole set; a kernel split into files by path one unit of its name
    (library.split_kernels: cortex-m's depthwise, whose unit includes depthwise_q4s.c alone for tiny)."""
    t = targets.get(board)
    srcs = model_sources(t, model_opcodes(zoo.build("tiny")), False)
    split = split_kernels(t, srcs)
    grouped = {f for fs in split.values() for f in fs}
    stems = sorted([s.stem for s in srcs if s not in grouped] + list(split))
    assert "conv" in stems and len(kernel_sources(t)) > 3 * len(stems)
    return stems


def test_host_build_run_and_weight_only_edit(project, tmp_path):
    p, data, x = project
    r, ran = p.bazel("build", "//:app", log=True)
    kinds = {m for m, _, _ in ran}
    assert {"BtSkeleton", "BtPlan", "BtKernels", "BtCode", "BtFlash", "CppCompile", "CppLink"} <= kinds, kinds
    assert compiled_kernels(ran) == models_kernels("host"), ran  # the model's kernels, not the board's set
    assert {run for m, _, run in ran if m.startswith("Bt")} == {"worker"}  # persistent workers, proto protocol
    assert "Traceback" not in r.stderr
    # after the link: one line of RAM and flash (the host has no sizes to hold them against)
    assert len(re.findall(r"^host: RAM [\d.,]+ KiB = arena .*; flash [\d.,]+ KiB = code", r.stderr, re.M)) == 1, \
        r.stderr
    check_output("host", project, data, tmp_path)
    for f in ("skeleton.json", "plan.json", "model.c", "model.h", "firmware.json"):  # no machine paths
        text = (p.top / "bazel-bin" / "model" / f).read_text()
        assert str(p.top) not in text and str(ROOT) not in text and str(p.root) not in text

    r, ran = p.bazel("build", "//:app", log=True)
    assert ran == [] and "RAM" not in r.stderr  # no-op: no link, no line

    edited = perturb_weights(data)
    (p.top / "tiny.tflite").write_bytes(edited)
    _, ran = p.bazel("build", "//:app", log=True)
    kinds = sorted(m for m, _, _ in ran)
    compiled = sorted(Path(o).name.split(".")[0] for m, o, _ in ran if m == "CppCompile")
    assert kinds == ["BtFlash", "BtSkeleton", "CppCompile", "CppLink"], ran  # not BtPlan, BtCode, BtKernels
    assert compiled == ["weights"], compiled  # buildtool's weights.S, not model.c
    assert p.bazel("build", "//:app", log=True)[1] == []  # a second build runs nothing
    check_output("host", project, edited, tmp_path)
    (p.top / "tiny.tflite").write_bytes(data)


def test_cortex_m4_build_runs_in_qemu(project, tmp_path):
    p, data, x = project
    r, ran = p.bazel("build", "--config=cortex-m4", "//:app", log=True)
    assert any(m == "CppLink" for m, _, _ in ran) and "Traceback" not in r.stderr
    assert compiled_kernels(ran) == models_kernels("cortex-m4"), ran  # 7 of the set's 40 (issue 50 item 3)
    # after the link: RAM and flash against the board's, in one line Bazel shows as the link's output
    arena = json.loads((p.top / "bazel-bin" / "model" / "firmware.json").read_text())["arena_bytes"]
    assert re.search(r"^INFO: From Linking app:\ncortex-m4: RAM [\d.,]+ KiB of 4,096.0 KiB \(\d+ %\) = arena "
                     + re.escape(f"{arena / 1024:,.1f} KiB + stack ")
                     + r".*; flash [\d.,]+ KiB of 4,096.0 KiB \(\d+ %\) = code .* \+ weights", r.stderr, re.M), r.stderr
    check_output("cortex-m4", project, data, tmp_path)


def test_optimize_code_reruns_the_code_action_only(project, tmp_path):
    """plan_options optimize_code=size (the code step's option): BtCode, model.c's compile and the link rerun, never
    BtPlan; model.c calls the one direct conv; the firmware classifies as TFLite Micro."""
    p, data, x = project
    build = p.top / "BUILD"
    plain = build.read_text()
    p.bazel("build", "--config=cortex-m4", "//:app")
    try:
        build.write_text(plain.replace('bt_model(name = "model", model = "tiny.tflite")',
                                       'bt_model(name = "model", model = "tiny.tflite", plan_options = {"optimize_code": "size"})'))
        _, ran = p.bazel("build", "--config=cortex-m4", "//:app", log=True)
        kinds = {m for m, _, _ in ran}
        assert "BtCode" in kinds and "CppLink" in kinds and "BtPlan" not in kinds, ran
        assert "bt_conv_s8_direct(&" in (p.top / "bazel-bin" / "model" / "model.c").read_text()
        check_output("cortex-m4", project, data, tmp_path)
    finally:
        build.write_text(plain)


def test_cortex_m55_build_runs_in_qemu(project, tmp_path):
    """The Helium board through its platform: its kernel set (cortex-m55) and start-up code, the link's
    report against its ITCM and SRAM, bit-exact in QEMU's mps3-an547."""
    p, data, x = project
    r, ran = p.bazel("build", "--config=cortex-m55", "//:app", log=True)
    assert any(m == "CppLink" for m, _, _ in ran) and "Traceback" not in r.stderr
    assert re.search(r"^cortex-m55: RAM [\d.,]+ KiB of 4,096.0 KiB .*; flash [\d.,]+ KiB of 512.0 KiB", r.stderr,
                     re.M), r.stderr
    check_output("cortex-m55", project, data, tmp_path)


@pytest.mark.slow
def test_weights_beyond_flash_link_their_psram_part(project, tmp_path):
    """A zoo model with more weights than cortex-m4's flash: the flash step's split header puts the
    image's external part in PSRAM when weights.S is assembled; the app runs bit-exact in QEMU."""
    p, _, x = project
    big = zoo.build("efficientnet-lite0")
    with open(p.top / "BUILD", "a") as f:
        f.write('\nbt_model(name = "big", zoo = "efficientnet-lite0")\n'
                'cc_binary(name = "big_app", srcs = ["main.c"], deps = [":big"])\n')
    p.bazel("build", "--config=cortex-m4", "//:big_app")
    split = (p.top / "bazel-bin" / "big" / "weights_split.h").read_text()
    assert "#define BT_WEIGHTS_EXT_SECTION .bt_weights_psram" in split
    elf = tmp_path / "big_app"
    shutil.copy(p.top / "bazel-bin" / "big_app", elf)
    x = fixed_input(big.tensors[big.inputs[0]].shape)
    out, _ = run_and_classify("cortex-m4", elf, x, tmp_path)
    assert out == np.ascontiguousarray(tflm_run(serialize(big), [x])[0]).tobytes()


@pytest.mark.slow
def test_arena_beyond_ram_spreads_into_psram(project, tmp_path):
    """bt_model with board cortex-m4-256k (its SRAM cannot hold mbv2-w0.35's arena): the code action
    spreads the arena over SRAM and PSRAM as the planner does (the plan's region sizes are the ELF's
    arena symbols), the board's linker script places both, the app runs bit-exact in QEMU."""
    from buildtool import pipeline, targets
    from buildtool.plan import regions
    from buildtool.firmware import runner

    p, _, _ = project
    board, name = "cortex-m4-256k", "mbv2-w0.35"
    model = pipeline.read_model(name)
    spread = regions.place_arena(model.graph, pipeline.plan_memory(model.graph), targets.get(board))
    assert [r["name"] for r in spread.arena_regions] == ["sram", "psram"]
    with open(p.top / "BUILD", "a") as f:
        f.write(f'\nbt_model(name = "spread", zoo = "{name}", board = "{board}")\n'
                'cc_binary(name = "spread_app", srcs = ["main.c"], deps = [":spread"])\n')
    r, _ = p.bazel("build", f"--platforms=@buildtool//platforms:{board}", "//:spread_app")
    assert "Traceback" not in r.stderr
    elf = tmp_path / "spread_app"
    shutil.copy(p.top / "bazel-bin" / "spread_app", elf)
    sym = runner.symbols(targets.get(board), elf)
    assert [sym["bt_arena"][1], sym["bt_arena_psram"][1]] == [r["bytes"] for r in spread.arena_regions]
    x = fixed_input(model.graph.tensors[model.graph.inputs[0]].shape)
    out, cls = run_and_classify(board, elf, x, tmp_path)
    ref = tflm_run(serialize(model.graph), [x])[0]
    assert out == np.ascontiguousarray(ref).tobytes() and cls == int(np.argmax(ref.reshape(-1)))


def test_builtin_harness_on_a_zoo_model(project, tmp_path):
    p, data, _ = project
    _, ran = p.bazel("build", "//:harness", log=True)
    assert "BtModel" in {m for m, _, _ in ran}  # zoo = "tiny": the model made by an action
    check_output("host", project, data, tmp_path, "harness")  # the zoo's tiny is the test's tiny


def test_second_checkout_remote_hits_then_planner_edit(project, tmp_path):
    """Another checkout (other path, other output root, cold server; buildtool a copy of this one):
    every action of the host build is a remote cache hit, the plan made in a worker included. Then
    a comment added to the planner's source reruns the plan step, nothing else: its output is
    unchanged (the code step's sources do not include the planner's search); one added to a kernel
    source the model does not call recompiles nothing (each kernel file's compile is keyed on what it
    includes)."""
    p, data, x = project
    p.bazel("build", "//:app")  # the first checkout fills the cache (a no-op after the other tests)
    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "buildtool", pkg / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    other = make_project(tmp_path, data, p.remote, pkg)
    try:
        r, ran = other.bazel("build", "//:app", log=True)
        assert {run for _, _, run in ran} == {"remote cache hit"}, ran
        assert {"BtPlan", "BtCode", "CppLink"} <= {m for m, _, _ in ran}
        assert "remote cache hit" in r.stderr and "linux-sandbox" not in r.stderr
        shutil.copy(other.top / "bazel-bin" / "app", tmp_path / "app.elf")
        planner = pkg / "buildtool" / "plan" / "arena" / "planner.py"
        planner.write_text(planner.read_text() + "# an edit\n")
        unused = pkg / "buildtool" / "kernels" / "reference" / "pooling.c"  # tiny has no pooling layer
        assert "pooling" not in models_kernels("host")
        unused.write_text(unused.read_text() + "/* an edit */\n")
        _, ran = other.bazel("build", "//:app", log=True)
        assert sorted(m for m, _, _ in ran) == ["BtPlan"], ran  # its output unchanged: it stops there
    finally:
        other.shutdown()
    out, cls = run_and_classify("host", tmp_path / "app.elf", x, tmp_path)
    ref = tflm_run(data, [x])[0]
    assert out == np.ascontiguousarray(ref).tobytes() and cls == int(np.argmax(ref.reshape(-1)))


def test_compile_commands_from_aquery_and_clangd(project):
    p, _, _ = project
    r = subprocess.run([sys.executable, "-m", "buildtool.integrations.bazel", "compdb", f"--output_user_root={p.root}",
                        "--", "//:app"], cwd=p.top, env=p.env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    db = json.loads((p.top / "compile_commands.json").read_text())
    files = {Path(e["file"]).name for e in db}
    assert {"main.c", "model.c", "conv.c", "weights.S"} <= files, files
    # the kernels the model compiles (aquery does not list a tree artifact's compiles), as the real sources
    kernels = sorted(Path(e["file"]).stem for e in db if KERNELS in Path(e["file"]).parents)
    assert kernels == models_kernels("host"), kernels
    assert all("-fno-canonical-system-headers" not in e["arguments"] and Path(e["file"]).is_absolute() for e in db)
    if not shutil.which("clangd"):
        pytest.skip("clangd is not installed (Debian: apt-get install clangd)")
    p.bazel("build", "//:app")  # the generated sources as this configuration makes them
    for src in ("main.c", "bazel-bin/model/model.c"):  # model.c: clangd resolves bazel-bin into the execroot
        c = subprocess.run(["clangd", f"--check={src}"], cwd=p.top, capture_output=True, text=True, timeout=120)
        assert "All checks completed, 0 errors" in c.stderr, c.stderr[-2000:]


@pytest.mark.parametrize("rule, expect", [
    ('bt_model(name = "m", model = "//:tiny.tflite", plan_options = {"optimize": "nosuch"})', "optimize"),
    ('bt_model(name = "m", model = "//:tiny.tflite", board = "nosuch")', "nosuch"),
    ('bt_model(name = "m")', "exactly one of model"),
])
def test_bad_input_is_one_line(project, rule, expect):
    p, _, _ = project
    (p.top / "bad").mkdir(exist_ok=True)
    (p.top / "bad" / "BUILD").write_text('load("@buildtool//bazel:defs.bzl", "bt_model")\n' + rule + "\n")
    r, _ = p.bazel("build", "//bad:m", check=False)
    assert r.returncode != 0
    assert "Traceback" not in r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if expect in line]
    assert errors, r.stderr


def test_cross_board_without_toolchain_resolution_is_refused_at_analysis(project):
    """Without .bazelrc's --incompatible_enable_cc_toolchain_resolution, Bazel 4.2 would compile the
    board's start-up code with the host's compiler (pages of assembler errors): bt_model stops the build
    at analysis instead, saying which line to add, before any action runs."""
    p, _, _ = project
    r, ran = p.bazel("build", "--noincompatible_enable_cc_toolchain_resolution", "--config=cortex-m4", "//:app",
                     log=True, check=False)
    assert r.returncode != 0 and ran == []
    assert ("buildtool: //:model: board cortex-m4 needs `build --incompatible_enable_cc_toolchain_resolution` "
            "in .bazelrc") in r.stderr, r.stderr


def test_a_model_too_big_for_the_board_stops_at_the_plan_step(project):
    """A .tflite file of mcunet-vww1 (an 87.5 KiB arena) for hifive1 (16 KiB of RAM), linked into an app
    (issue 53 item 3): the plan action fails with one line naming the model as its file is named and the
    RAM it needs, Bazel's own ERROR line names the model too; nothing is compiled or linked (the kernels,
    the weights and the start-up code all wait for the plan), no code step, no kernel list."""
    p, _, _ = project
    (p.top / "big").mkdir(exist_ok=True)
    shutil.copy(p.top / "main.c", p.top / "big" / "main.c")
    (p.top / "big" / "vww_big.tflite").write_bytes(serialize(zoo.build("mcunet-vww1")))
    (p.top / "big" / "BUILD").write_text('load("@buildtool//bazel:defs.bzl", "bt_model")\n'
                                         'bt_model(name = "m", model = "vww_big.tflite", board = "hifive1")\n'
                                         'cc_binary(name = "app", srcs = ["main.c"], deps = [":m"])\n')
    r, ran = p.bazel("build", "--platforms=@buildtool//platforms:hifive1", "//big:app", log=True, check=False)
    assert r.returncode != 0 and "Traceback" not in r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("buildtool: error:")]
    assert len(errors) == 1, r.stderr
    assert re.search(r"^buildtool: error: vww_big does not fit board hifive1: it needs [\d,]+ B of RAM "
                     r"\(arena [\d,]+ B \+ stack [\d,]+ B\), the board has 16,384 B of RAM", errors[0]), errors
    assert re.search(r"^ERROR: .*BtPlan vww_big for hifive1 \(//big:m\) failed", r.stderr, re.M), r.stderr
    kinds = {m for m, _, _ in ran}
    assert "BtPlan" in kinds and kinds <= {"BtSkeleton", "BtPlan", "BtFlash"}, ran  # no compile, link, code


# -- docs/projects.md's "Bazel in your own project", as written, with buildtool installed by pip ------
def readme_bazel_scripts() -> list:
    """The shell blocks of docs/projects.md's "Bazel in your own project": a new project in an empty
    folder, then examples/bazel copied from the checkout."""
    text = (ROOT / "docs" / "projects.md").read_text()
    section = text.split("\n## Bazel in your own project\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)^```$", section, re.S | re.M)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """buildtool as `pip install` leaves it (from a copy of this checkout's sources, offline): the --target
    folder, with the console script in its bin/. Not the checkout: only the package's declared files."""
    d = tmp_path_factory.mktemp("pip")
    src = d / "src"
    shutil.copytree(ROOT / "buildtool", src / "buildtool", ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(d / "site"), str(src)]
    # offline with the interpreter's own setuptools; else pip fetches the build backend pyproject.toml names
    r = subprocess.run(pip + ["--no-build-isolation", "--no-index"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        shutil.rmtree(d / "site", ignore_errors=True)
        r = subprocess.run(pip, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (d / "site" / "bin" / "buildtool").is_file()
    return d / "site"


@pytest.fixture(scope="module")
def readme_env(tmp_path_factory, installed, cache_url):
    """The environment docs/projects.md's commands run in: the installed buildtool first on PATH and PYTHONPATH,
    and `bazel` that is Bazel with this module's own output root (a short path: the server's socket
    lives under it) and, as a user's ~/.bazelrc would, the module's remote cache with the actions' PATH
    the other tests' (PATH is in every action's key): the board's kernels, the same actions as the other
    tests', compile once."""
    d = tmp_path_factory.mktemp("readme")
    root = Path(tempfile.mkdtemp(prefix="btbz", dir="/tmp"))
    (d / "bin").mkdir()
    (d / "test.bazelrc").write_text(f"build --remote_cache={cache_url}\n"
                                    f"build --action_env=PATH={os.environ['PATH']}\n")
    wrapper = d / "bin" / "bazel"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("bazel")} --output_user_root={root} --max_idle_secs=300 '
                       f'--bazelrc={d / "test.bazelrc"} "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ, PATH=os.pathsep.join([str(installed / "bin"), str(d / "bin"), os.environ["PATH"]]),
               PYTHONPATH=str(installed))
    yield env
    Project(d, root, env, "").shutdown()  # removes the output root (each test stops its own server)


def run_readme(script: str, cwd: Path, env: dict, top: Path) -> str:
    """Run a docs/projects.md block with bash -e in cwd; stop the Bazel server of the workspace top after it.
    Everything it printed."""
    try:
        r = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=900)
    finally:
        if top.is_dir():
            subprocess.run(["bazel", "shutdown"], cwd=top, env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "Traceback" not in r.stdout + r.stderr
    return r.stdout + r.stderr


def link_lines(log: str) -> list:
    """The boards of the RAM/flash lines Bazel showed after each link, in order."""
    return re.findall(r"^INFO: From Linking app:\n([\w-]+): RAM [\d.,]+ KiB .*; flash [\d.,]+ KiB .*$", log, re.M)


def test_readme_project_builds_in_an_empty_folder(readme_env, installed, tmp_path):
    """docs/projects.md's first block as written, in an empty folder: its WORKSPACE names the installed package
    (`buildtool bazel-dir`); nothing that changes the build beyond the block's .bazelrc (the test's rc
    file adds only the cache); the host, then cortex-m4 with a least-RAM fused plan, each link followed
    by its RAM/flash line; the board's app gives TFLite Micro's bytes."""
    top = tmp_path / "app"
    top.mkdir()
    log = run_readme(readme_bazel_scripts()[0], top, readme_env, top)
    assert f'path = "{installed / "buildtool" / "bazel"}"' in (top / "WORKSPACE").read_text()
    assert link_lines(log) == ["host", "cortex-m4"], log[-6000:]
    assert re.search(r"^cortex-m4: RAM [\d.,]+ KiB of 4,096.0 KiB", log, re.M)
    g = zoo.build("tiny")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    shutil.copy(top / "bazel-bin" / "app", tmp_path / "app.elf")
    out, _ = run_app("cortex-m4", tmp_path / "app.elf", x, tmp_path)
    assert out == np.ascontiguousarray(tflm_run((top / "tiny.tflite").read_bytes(), [x])[0]).tobytes()


def test_readme_builds_examples_bazel_as_shipped(readme_env, installed, tmp_path):
    """docs/projects.md's second block as written: examples/bazel copied out of a checkout, its WORKSPACE path filled
    in by the block's sed, its model made by `buildtool zoo`; host and --config=cortex-m4 build, each link
    with its RAM/flash line; its .gitignore leaves only the example's own files untracked."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "examples" / "bazel", checkout / "examples" / "bazel",
                    ignore=shutil.ignore_patterns("bazel-*", "*.tflite", "compile_commands.json", "user.bazelrc"))
    top = checkout / "my-app"
    log = run_readme(readme_bazel_scripts()[1], checkout, readme_env, top)
    assert f'path = "{installed / "buildtool" / "bazel"}"' in (top / "WORKSPACE").read_text()
    assert link_lines(log) == ["host", "cortex-m4"], log[-6000:]
    g = zoo.build("tiny")
    x = fixed_input(g.tensors[g.inputs[0]].shape)
    shutil.copy(top / "bazel-bin" / "app", tmp_path / "app.elf")
    out, log = run_app("cortex-m4", tmp_path / "app.elf", x, tmp_path)
    ref = tflm_run((top / "tiny.tflite").read_bytes(), [x])[0]
    assert out == np.ascontiguousarray(ref).tobytes()
    assert re.search(r"^class=(\d+)$", log, re.M).group(1) == str(int(np.argmax(ref.reshape(-1))))
    subprocess.run(["git", "init", "-q"], cwd=top, check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=top, capture_output=True,
                            text=True, check=True).stdout
    assert sorted(line[3:] for line in status.splitlines()) == [".bazelrc", ".gitignore", "BUILD", "WORKSPACE",
                                                                "main.c"], status


def _worker_messages():
    """WorkRequest and WorkResponse (Bazel's worker_protocol.proto) as protobuf message classes."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FileDescriptorProto(name="bt_test_worker_protocol.proto", package="bt_test_worker",
                                           syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto
    one, many = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    for name, fields in [
        ("Input", [("path", 1, F.TYPE_STRING, one, None), ("digest", 2, F.TYPE_BYTES, one, None)]),
        ("WorkRequest", [("arguments", 1, F.TYPE_STRING, many, None),
                         ("inputs", 2, F.TYPE_MESSAGE, many, ".bt_test_worker.Input"),
                         ("request_id", 3, F.TYPE_INT32, one, None), ("verbosity", 5, F.TYPE_INT32, one, None),
                         ("sandbox_dir", 6, F.TYPE_STRING, one, None)]),
        ("WorkResponse", [("exit_code", 1, F.TYPE_INT32, one, None), ("output", 2, F.TYPE_STRING, one, None),
                          ("request_id", 3, F.TYPE_INT32, one, None)]),
    ]:
        m = f.message_type.add(name=name)
        for fname, number, ftype, label, tname in fields:
            m.field.add(name=fname, number=number, type=ftype, label=label, **({"type_name": tname} if tname else {}))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(f"bt_test_worker.{n}"))
            for n in ("WorkRequest", "WorkResponse")]


def _delimited(msg: bytes) -> bytes:
    """A message as Bazel's writeDelimitedTo frames it: its length as a varint, then the bytes."""
    n, head = len(msg), bytearray()
    while True:
        head.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(head) + msg


def test_kernel_list_action_alone(tmp_path):
    """`gen kernels` as BtKernels runs it: one file per kernel source the plan's code calls (fused.c only for
    a fused plan), each including the source as @buildtool_src names it; a file the last run left and this
    model does not call is removed; a bad command line is one line and exit 2."""
    def gen(*args) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "buildtool.integrations.bazel", "gen", *map(str, args)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_NO_DAEMON="1"))

    (tmp_path / "tiny.tflite").write_bytes(serialize(zoo.build("tiny")))
    assert gen("skeleton", "tiny.tflite", "-o", "skeleton.json").returncode == 0
    t = targets.get("cortex-m4")
    for opts, fused in (([], False), (["--opt", "optimize=ram"], True)):
        assert gen("plan", "skeleton.json", "-o", "plan.json", "--board", "cortex-m4", *opts).returncode == 0
        (tmp_path / "k").mkdir(exist_ok=True)
        (tmp_path / "k" / "softmax.c").write_text("stale\n")
        r = gen("kernels", "skeleton.json", "plan.json", "--board", "cortex-m4", "-o", "k")
        assert r.returncode == 0 and r.stdout + r.stderr == "", r.stderr
        want = model_sources(t, model_opcodes(zoo.build("tiny")), fused)
        assert ("fused" in {s.stem for s in want}) is fused
        def inc(s) -> str:
            return f'#include "buildtool/{s.relative_to(KERNELS.parent).as_posix()}"\n'

        parts = [s for s in want if s.stem.startswith("depthwise")]  # cortex-m's depthwise split by path: one unit
        units = {f.name: f.read_text() for f in (tmp_path / "k").iterdir()}
        assert len(parts) > 1 and units.keys() == {f"{s.stem}.c" for s in want if s not in parts} | {"depthwise.c"}
        assert all(units[f"{s.stem}.c"] == inc(s) for s in want if s not in parts)
        dw = units["depthwise.c"]  # every part (no model.c given), the asm each emits flagged before the first
        assert [line + "\n" for line in dw.splitlines() if line.startswith("#include")] == [inc(s) for s in parts]
        assert dw.index("#define DW_EMIT_Q4E\n") < dw.index("#define DW_EMIT_S2G\n") < dw.index("#include")
    for args in (["skeleton.json", "--board", "cortex-m4", "-o", "k"], ["skeleton.json", "nosuch.json", "--board",
                                                                         "cortex-m4", "-o", "k"]):
        r = gen("kernels", *args)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
        assert r.stderr.startswith("buildtool: error:") and "Traceback" not in r.stderr


def test_worker_speaks_bazels_proto_protocol(tmp_path):
    """The worker reads WorkRequests back to back, each framed by its length (Bazel's default protocol,
    the one Bazel 4.2 runs without a flag), skips the fields it does not use (inputs, verbosity) and
    answers each with a WorkResponse protobuf parses; a bad option is one line and exit 2 inside the
    response, and the worker lives on."""
    request, response = _worker_messages()
    model = tmp_path / "tiny.tflite"
    model.write_bytes(serialize(zoo.build("tiny")))
    skel = tmp_path / "skeleton.json"
    reqs = [(["skeleton", str(model), "-o", str(skel)], 1),
            (["plan", str(skel), "-o", str(tmp_path / "plan.json"), "--opt", "optimize=nosuch"], 2),
            (["plan", str(skel), "-o", str(tmp_path / "plan.json")], 300)]
    stream = b"".join(_delimited(request(arguments=a, request_id=i, verbosity=1, sandbox_dir="",
                                         inputs=[{"path": str(model), "digest": b"\x01" * 32}]).SerializeToString())
                      for a, i in reqs)
    w = subprocess.run([sys.executable, str(ROOT / "buildtool" / "bazel" / "bazel" / "btgen.py"), str(ROOT), "gen",
                        "--persistent_worker"], input=stream, capture_output=True, timeout=120)
    assert w.returncode == 0, w.stderr
    out, i = [], 0
    while i < len(w.stdout):
        n = shift = 0
        while True:
            b = w.stdout[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        out.append(response.FromString(w.stdout[i:i + n]))
        i += n
    assert [(o.request_id, o.exit_code) for o in out] == [(1, 0), (2, 2), (300, 0)]
    assert out[1].output.count("\n") == 1 and "optimize" in out[1].output and "Traceback" not in out[1].output
    assert (tmp_path / "plan.json").is_file()


def test_library_mode_links_into_a_binary_with_its_own_start_up_and_linker_script(project, tmp_path):
    """bt_model(library = True) (issue 28): model.c, the kernels and the weights (in .rodata.bt_weights)
    and nothing else: a cc_binary with its own start-up code, vector table, linker script and main
    (tests/test_export.py's) links it for cortex-m4; no report line; TFLite Micro's output in QEMU."""
    from test_export import OWN_LIBRARY_FILES, _project, _values

    p, data, x = project
    own = _project(p.top / "own", OWN_LIBRARY_FILES, np.asarray(x))
    (own / "BUILD").write_text(
        'load("@buildtool//bazel:defs.bzl", "bt_model")\n'
        'bt_model(name = "lib", model = "//:tiny.tflite", board = "cortex-m4", library = True)\n'
        'cc_binary(name = "own", srcs = ["startup.c", "semihost.c", "main.c", "input.h"], deps = [":lib", '
        '"link.ld"],\n          linkopts = ["-T$(location link.ld)"], target_compatible_with = '
        '["@buildtool//platforms:board_cortex-m4"])\n')
    r, _ = p.bazel("build", "--config=cortex-m4", "//own:own")
    assert "RAM" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    elf = tmp_path / "own.elf"
    shutil.copy(p.top / "bazel-bin" / "own" / "own", elf)
    run = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                          "enable=on,target=native", "-kernel", str(elf)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _values(run.stdout + run.stderr) == tflm_run(data, [x])[0].reshape(-1).tolist()
