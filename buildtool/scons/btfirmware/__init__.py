"""SCons tool: firmware for one (board, model) pair, with every output declared.

    env = Environment(tools=["default", "btfirmware"], toolpath=[<`buildtool scons-dir`>])
    elf = env.BtFirmware(board="cortex-m4", model="tiny", out="build/cortex-m4/tiny")

The tool lives in the package (buildtool/scons/btfirmware) and imports buildtool normally.
For the user's own application (a main.c defining bt_main):

    m = env.BtModel(board="cortex-m4", model="m.tflite", out="build/cortex-m4")
    app = m.Program("build/cortex-m4/app.elf", m.env.Object("build/cortex-m4/main.o", "main.c"))

BtFirmware is BtModel(harness=True) (the built-in firmware_src/common/main.c) linked, plus `run`.
BtMultiFirmware(board=, models=[...], out=) links several models into one firmware sharing one
arena (buildtool/pipeline/multi.py, docs/multi-model.md), as one declared step.

Pipeline (each step a Builder whose targets are declared, so SCons' content
signatures decide what reruns):
  zoo name    -> model.tflite                       (BtZooModel; a .tflite path is used as is)
  model       -> skeleton.json                      (BtSkeleton: the model minus weight values)
  skeleton    -> plan.json                          (BtPlan)
  skeleton+plan -> model.c, model.h, firmware.json  (BtCode)
  model       -> weights.bin                        (BtFlash)
  sources     -> obj/*.o -> firmware.elf            (Object / Program; board.ld from BtLinkerScript)
  compile_commands.json                             (BtText: the exact commands of the objects)
A weight change rewrites model.tflite and weights.bin; skeleton.json comes out
byte-identical, so plan.json, model.c and their objects are not rebuilt: only
weights.o (which .incbin's weights.bin) and the link run.

Hostile input. No string a user names (model path, out=, kernel_root=, input=, output=)
reaches SCons' variable substitution or a shell: the model file becomes a node directly,
input/output are read by Python only, and every path that does land on a compiler command
line (the build folder, named by pipeline.build_dir_name, and the sources and include
directories) must be made of characters that are plain words to a shell (else one line,
exit 2).

Concurrent builds. Each build folder is locked (an fcntl lock on OUT/.btfirmware.lock, taken when the
SConstruct declares the model and held until scons exits): a second scons building the same folder
(another terminal, an editor's build on save) waits for the first, says so in one line, and then
finds its outputs up to date, instead of deleting and rewriting objects the first one is linking.

Read-back files. skeleton.json, plan.json, firmware.json and a zoo model's model.tflite,
which later steps read back, are each written with a seal (NAME.seal: the file's SHA-256
and what made it; for the plan the model's structure hash, the options and the planner
version). A file that no longer matches its seal is remade (one line says so), and codegen
uses a plan only when it matches its seal and passes the independent checker
(buildtool/plan/arena/checker.py); otherwise it re-plans once and refuses in one line if that
plan fails too.
"""

from __future__ import annotations

import atexit
import dataclasses
import fcntl
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Errors
import SCons.Node
import SCons.Defaults
import SCons.Node.FS
import SCons.Scanner.C
import SCons.SConsign
import SCons.Script
import SCons.Util
import numpy as np

try:  # a normal import (installed or editable, or PYTHONPATH): never relative to this file
    import buildtool  # noqa: F401  (one line, not a traceback, when it is missing)
except ImportError:
    raise SCons.Errors.UserError("the btfirmware tool needs the buildtool package: pip install it "
                                 "(or put its checkout on PYTHONPATH)") from None

from buildtool import pipeline, steps, targets
from buildtool.errors import BuildtoolError, ModelError, PlanError, UsageError, internal
from buildtool.firmware import runner, toolchain
from buildtool.firmware.fits import check_fits, may_fuse
from buildtool.firmware.library import model_opcodes, model_sources, split_kernels, split_unit, with_units
from buildtool.fsutil import make_dirs, write_if_changed
from buildtool.imports import closure_files
from buildtool.model.inputs import load_inputs, output_file_bytes
from buildtool.options import PlanOptions
from buildtool.plan.joint import prefixes
from buildtool.steps.models import build_dir_name
from buildtool.steps.models import model_name as name_of
from buildtool.serve.service import planner
from buildtool.steps import code as code_step
from buildtool.steps import flash as flash_step
from buildtool.steps import model as model_step
from buildtool.steps import plan as plan_step
from buildtool.steps import skeleton as skeleton_step
from buildtool.steps.readback import load_plan, plan_problem


LOCK_NAME = ".btfirmware.lock"
_held = {}  # build folder -> the descriptor of its lock, held until this scons exits


def lock_build_folder(o: str) -> None:
    """Hold OUT/.btfirmware.lock for the rest of this process: a concurrent scons of the same folder
    waits here (one line says for what) rather than racing this one's steps."""
    if o in _held:
        return
    if not os.path.isdir(o):  # made for this build: gone again at exit if nothing but the lock is in it
        atexit.register(_drop_lock_only_folder, o)
    make_dirs(o)
    fd = os.open(os.path.join(o, LOCK_NAME), os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"scons: waiting for another build of {o} to finish", flush=True)
        fcntl.flock(fd, fcntl.LOCK_EX)
    _held[o] = fd


def _drop_lock_only_folder(o: str) -> None:
    """At exit: a build folder this scons made and nothing wrote into but its lock (a model refused before any
    step ran) is removed, as _drop_empty_build_folder removes one holding only SCons' state."""
    try:
        if os.listdir(o) == [LOCK_NAME]:
            os.unlink(os.path.join(o, LOCK_NAME))
            os.rmdir(o)
    except OSError:
        pass


def _say(text: str) -> None:
    """A step's line(s) on stdout in one write. print() writes the text and its newline in two calls (and SCons'
    stdout, when not a terminal, flushes each): under -j the steps run in SCons' worker threads, and another step's
    line, or SCons' own echo of a command, landed between the two."""
    sys.stdout.write(f"{text}\n")


def _write(path, data) -> None:
    write_if_changed(Path(path), data)


def _one_line(step):
    """A build step whose failures a user can act on end in one line (exit 2), not a traceback."""
    @functools.wraps(step)
    def run(target, source, env):
        try:
            return step(target, source, env)
        except BuildtoolError as e:
            raise SCons.Errors.UserError(str(e)) from None
        except Exception as e:  # a bug: one line too (BUILDTOOL_DEBUG=1 keeps the traceback)
            if os.environ.get("BUILDTOOL_DEBUG"):
                raise
            raise SCons.Errors.UserError(str(internal(e))) from None
    return run


# -- build variables ----------------------------------------------------------------------
def plan_options(given: dict) -> dict:
    """The plan options named on the command line as strings (align=16 optimize=ram
    max_mac_overhead=none ram_limit=64KiB splits=auto input_streamed=1 ...), checked by
    buildtool.options.PlanOptions: a bad value is refused in one line naming the variable, the
    value and what is allowed. Returns the non-default options as a map (PlanOptions.to_map)."""
    return PlanOptions.from_strings(given).to_map()


def _kernel_sets(t, kernels: str) -> tuple:
    """kernels=SET[,SET] as a search order; one line listing the board's sets for an unknown name."""
    sets = tuple(kernels.split(","))
    bad = [s for s in sets if s not in t.kernel_search()]
    if bad:
        raise UsageError(f"kernels={kernels!r}: board {t.name} has no kernel set {bad[0]!r}; "
                         f"its sets are {', '.join(t.kernel_search())}")
    return sets


# -- paths on command lines -------------------------------------------------------------
_COMMAND_WORD = re.compile(r"[\w.+,=@%:/ -]+")  # plain to sh (SCons quotes words with spaces)


def _command_path(path, what: str) -> str:
    """path as a string that may go on a command line; refuse anything a shell or SCons would
    read as more than a plain word (quotes, $, `, ;, newline, ...)."""
    s = str(path)
    if not _COMMAND_WORD.fullmatch(s):
        bad = re.search(r"[^\w.+,=@%:/ -]", s)
        raise UsageError(f"{what} {s!r} contains {bad.group()!r}, which is not safe on a compiler command line; "
                         f"use a path of letters, digits, spaces and . _ - + , = @ % : /")
    return s


# -- the steps (buildtool/steps: the same functions and seals as pipeline.build and buildtool gen) --
_REMAKE = "run scons again to remake it"


def _zoo_model(target, source, env):
    steps.store(model_step.run(env["BT_ZOO_NAME"]), {"model.tflite": str(target[0])})
    return 0


def _skeleton(target, source, env):
    steps.store(skeleton_step.run(str(source[0])), {"skeleton.json": str(target[0])})
    return 0


def _load_skeleton(path):
    """The skeleton graph, only when skeleton.json matches its seal."""
    return skeleton_step.from_skeleton(json.loads(steps.read_sealed(path, _REMAKE)[0])).graph


def _plan_to(path, g, env) -> None:
    """Plan through the planner daemon (started on demand; BUILDTOOL_NO_DAEMON=1 plans in-process) and
    write plan.json with its seal. The daemon only saves time: its answer is byte-identical. A board
    that picks its own plan (Target.auto_fit) says which one in a line."""
    made = plan_step.run(g, env["BT_PLAN_OPTIONS"], planner(), env["BT_BOARD"], env["BT_MODEL_NAME"],
                         code_step.measurer)
    for note in made.notes:
        _say(f"scons: {note}")
    steps.store(made, {"plan.json": path})


def _plan(target, source, env):
    _plan_to(str(target[0]), _load_skeleton(str(source[0])), env)
    return 0


def _code(target, source, env):
    src = str(source[0])
    g = pipeline.read_model(src).graph if src.endswith(".tflite") else _load_skeleton(src)
    path, options = str(source[1]), env["BT_PLAN_OPTIONS"]
    plan, why = plan_problem(path, g, options, need_seal=True)
    if why:
        _say(f"scons: {path}: {why}: re-planning")
        _plan_to(path, g, env)
        plan, why = plan_problem(path, g, options, need_seal=True)
        if why:
            raise PlanError(f"{path}: {why} even after re-planning; refusing to generate code from it "
                            f"(clear the plan cache with `buildtool daemon clear` and please report this model)")
    g = dataclasses.replace(g, name=env["BT_MODEL_NAME"])  # named as the user did (mbv2-w0.35 whole), in model.h too
    t, model = targets.get(env["BT_BOARD"]), pipeline.read_model(g)
    if not t.code_in_ram:  # one line naming the model, before any code is made
        check_fits(g, plan, t, "optimize=ram", options)
    made = code_step.run(model, plan, env["BT_BOARD"], options=options)
    if t.code_in_ram:  # xcore's tile: this code measured, the arena given the RAM it leaves; before any is written
        check_fits(g, plan, t, "optimize=ram", options, code_step.measured_code(model, plan, t, options, made))
    steps.store(made, {"model.c": str(target[0]), "model.h": str(target[1]), "firmware.json": str(target[2])})
    return 0


def _flash(target, source, env):
    """weights.bin; a fused plan's (a plan.json source) places the weights as its code step does, around
    the code the code step measured (a firmware.json source, on a board whose weights may go to external
    memory: steps.code.measures_code)."""
    more = {os.path.basename(str(s)): str(s) for s in source[1:]}
    made = flash_step.run_files(str(source[0]), env["BT_BOARD"], more.get("plan.json"), more.get("firmware.json"))
    steps.store(made, {"weights.bin": str(target[0])})
    return 0


def _check_segments(target, source, env):
    """After the link: every load segment lies where the board has memory (toolchain.check_segments);
    a firmware.elf that does not is removed, so no build is left that a loader would misplace."""
    try:
        toolchain.check_segments(targets.get(env["BT_BOARD"]), str(target[0]))
    except BuildtoolError:
        Path(str(target[0])).unlink(missing_ok=True)
        raise
    return 0


def _summary(target, source, env):
    """After the link: RAM and flash in use against the board's (one line)."""
    elf = Path(str(target[0]))
    if elf.exists():
        man = json.loads(steps.read_sealed(str(Path(env["BT_OUT"], "firmware.json")), _REMAKE)[0])  # arena_bytes: the RAM part
        _say(runner.memory_summary(targets.get(env["BT_BOARD"]), elf, man["arena_bytes"], man.get("staged")))
    return 0


# Every image a Program() links, with what _summary needs: a build in which it was up to date prints its
# line at the end, as a build that linked it does (a no-op `scons` still says what the firmware uses).
_IMAGES: list = []


def _summaries_of_up_to_date_images() -> None:
    if SCons.Script.GetOption("clean") or SCons.Script.GetOption("question") or SCons.Script.Main.exit_status:
        return
    for node, env in _IMAGES:
        if node.get_state() == SCons.Node.up_to_date:
            try:
                _summary([node], [], env)
            except (BuildtoolError, OSError, ValueError):
                pass  # the image's manifest went away since: the next build says so


def _link_spawn(out: str, board: str, model_name: str):
    """SPAWN for the link: the linker's 'region X overflowed by N bytes' (code, weights and static data
    beyond what the fits check counts) becomes firmware.build's one line, not the linker's page."""
    def spawn(sh, escape, cmd, args, env):
        r = subprocess.run([sh, "-c", " ".join(args)], env=env, capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        over = [m for m in map(toolchain.OVERFLOW.search, r.stderr.splitlines()) if m] if r.returncode else []
        if not over:
            sys.stderr.write(r.stderr)
            return r.returncode
        g = dataclasses.replace(_load_skeleton(os.path.join(out, "skeleton.json")), name=model_name)
        plan = load_plan(json.loads(Path(out, "plan.json").read_text()), g)
        raise SCons.Errors.UserError(toolchain.overflow_message(g, plan, targets.get(board), over[0].group(1),
                                                                int(over[0].group(2))))
    return spawn


def _text(target, source, env):
    _write(str(target[0]), source[0].get_contents())
    return 0


def _split_unit(target, source, env):
    """A split kernel's unit (library.split_kernels): one #include of each of its files model.c (source[0]; model.h
    source[1]) calls, as library.model_sources chooses them from its text; written only when its bytes change."""
    t, opcodes, fused, kroot, files = env["BT_UNIT"]
    need = set(model_sources(t, opcodes, fused, kroot, model_c=Path(source[0].abspath).read_text(),
                             gen_files=(source[1].abspath,)))
    write_if_changed(Path(str(target[0])), split_unit(files, need))
    return 0


def _run_inputs(r: dict, man: dict) -> list:
    """The arrays input= names (one .npy per model input, comma-separated, or one .npz; checked
    like `buildtool run --input`), else a fixed random array for every model input."""
    if r["input"]:
        paths = [r["input"]] if os.path.isfile(r["input"]) else r["input"].split(",")
        g = _load_skeleton(os.path.join(r["out"], "skeleton.json"))
        return load_inputs(g, paths, how="give input=a.npy,b.npy with one .npy per input in order")
    rng = np.random.default_rng(0)  # int16 inputs get values in the int8 range
    return [rng.integers(-128, 128, size=spec["shape"], dtype=np.int8).astype(np.dtype(spec["dtype"]))
            for spec in man["inputs"]]


def _check_output(r: dict, man: dict) -> None:
    n = len(man["outputs"])
    if r["output"] and n > 1 and not r["output"].endswith(".npz"):
        raise UsageError(f"output={r['output']!r}: the model has {n} outputs; name a .npz file to save them all")


def _run(target, source, env):
    """BT_RUN (out, input, output) is a dict, never substituted: its paths reach Python only."""
    r = env["BT_RUN"]
    man = json.loads(steps.read_sealed(os.path.join(r["out"], "firmware.json"), _REMAKE)[0])
    _check_output(r, man)
    xs = _run_inputs(r, man)
    y, prof, ram = runner.run(env["BT_BOARD"], r["out"], xs[0] if len(xs) == 1 else xs)
    ys = y if isinstance(y, list) else [y]
    _say("\n".join([f"output{k if len(ys) > 1 else ''}: {' '.join(str(e) for e in v.reshape(-1).tolist())}"
                    for k, v in enumerate(ys)] + [runner.format_report(prof, ram)]))
    if r["output"]:
        try:
            _write(r["output"], output_file_bytes(r["output"], ys))
        except OSError as e:
            raise UsageError(f"output={r['output']!r} cannot be written ({e.strerror})") from None
    return 0


def _cdb_entry(env, com: str, obj, src) -> dict:
    """One compile_commands.json entry, the command exactly as SCons runs it."""
    src_node = env.File(str(src)) if not hasattr(src, "abspath") else src
    return {"directory": env.Dir("#").abspath, "file": src_node.abspath, "output": obj.abspath,
            "command": env.subst(com, target=[obj], source=[src_node])}


def _include_scanner():
    """SCons' C include scanner, but one that reads a generated file (model.c, model.h, a split kernel's unit)
    whether or not it is up to date yet. SCons' own skips a derived file that is not known to be current when
    the object is first considered: that object then records no include of it at all, and when the generated
    file comes out unchanged (plan.json re-made to the same bytes) nothing rescans it. So the same build
    recorded bt_kernels.h as a dependency of model.o or not depending on which node the build happened to
    reach first (-j2, a library build), and the next build recompiled model.o ("... is a new dependency").
    Reading the file as it is is right either way: a generated file that is rebuilt has its includes
    rescanned after (SCons clears the scan of every object waiting on it), and one that is not rebuilt
    holds the bytes read."""
    s = SCons.Scanner.C.CScanner()
    s.scan_check = None
    return s


# Object for C (and preprocessed assembler) sources, with that scanner: every object the tool compiles (and a split
# kernel's unit, made from model.c) records the same includes whatever the order (or -j) of the build.
_C_OBJECT = SCons.Builder.Builder(action={".c": SCons.Defaults.CAction, ".S": SCons.Defaults.ASPPAction},
                                  emitter={".c": SCons.Defaults.StaticObjectEmitter, ".S": SCons.Defaults.StaticObjectEmitter},
                                  prefix="$OBJPREFIX", suffix="$OBJSUFFIX", source_scanner=_include_scanner(),
                                  single_source=True)


def _split_ldflags(flags) -> tuple:
    libs = [f[2:] for f in flags if f.startswith("-l")]
    return [f for f in flags if not f.startswith("-l")], libs


class BtModel:
    """What env.BtModel declares: link `objects` (board start-up code, kernels, model.o, weights.o)
    with the user's sources through `env` (the board's compiler, flags, include directories and
    linker script), or call Program(). include_dir holds model.h; include_dirs is every directory
    the objects were compiled with (model.h, bt_platform.h, the kernel headers); libs is empty (the
    kernels come as objects); nodes are the generated files (plan.json, weights.bin, ...)."""

    def __init__(self, env, link_env, objects, include_dirs, nodes, db, library: bool = False):
        self.env, self._link_env, self.objects, self.include_dirs = env, link_env, objects, include_dirs
        self.library = library
        self.include_dir, self.libs, self.nodes, self.compile_db = include_dirs[0], [], nodes, db

    def Program(self, target, sources):
        """Link sources (the user's .c files or objects) with the model into an ELF, checked against the
        board's memory map, with the RAM/flash summary after the link."""
        if self.library:
            raise UsageError("BtModel(library=True) has no start-up code or linker script: link m.objects into "
                             "your own env.Program(target, your objects + m.objects)")
        if self._link_env is None:  # BtModel(harness=True) leaves the harness to BtFirmware
            raise UsageError("this model includes the harness; link it with BtFirmware")
        elf = self._link_env.Program(target, list(sources) + self.objects)
        self._link_env.Depends(elf, self._link_env["BT_LINK_DEPS"])
        if self._link_env["BT_CHECK_SEGMENTS"]:
            self._link_env.AddPostAction(elf, SCons.Action.Action(_one_line(_check_segments), None))
        self._link_env.AddPostAction(elf, SCons.Action.Action(_one_line(_summary), None))
        _IMAGES.extend((node, {"BT_OUT": self._link_env["BT_OUT"], "BT_BOARD": self._link_env["BT_BOARD"]})
                       for node in elf)
        return elf

    def CompileCommands(self, target, objects=()):
        """compile_commands.json for clangd: the model's objects and `objects` (the user's, compiled with
        .env), each command exactly as SCons runs it. Not SCons' CompilationDatabase: that is
        AlwaysBuild, which defeats `scons -q`."""
        user = SCons.Util.flatten(objects)
        db = list(self.compile_db) + [_cdb_entry(self.env, "$CCCOM", o, o.sources[0]) for o in user]
        return self.env.BtText(target, self.env.Value(json.dumps(db, indent=1) + "\n"))


def _configure_graph(model: str, out: str):
    """The model's graph at configure time, for the kernel sources its operators call: the file itself,
    or for a zoo name the model.tflite a previous build made (when its seal still holds), else the zoo's."""
    made = os.path.join(out, "model.tflite")
    if pipeline.is_model_file(model):
        return pipeline.read_model(model).graph
    if os.path.exists(made) and not steps.unsealed(made):
        return pipeline.read_model(made).graph
    return pipeline.read_model(model).graph


def bt_model(env, board: str, model: str, out: str = "", kernels: str = "", plan_options: dict | None = None,
             kernel_root: str = "", verbose: bool = False, harness: bool = False, library: bool = False) -> BtModel:
    """Declare a model's build for the user's own application: returns a BtModel (objects, env,
    include_dir holding model.h). harness=True also compiles the built-in harness (BtFirmware).
    library=True: the model alone (model.o, the kernels, weights.o with the weights in
    .rodata.bt_weights), archived as libmodel.a, for a project with its own start-up code and linker
    script: no start-up objects, and m.env has no link flags; link m.objects (the archive) into your
    own Program after your objects (m.Program refuses).

    out "" is build/BOARD/NAME (NAME: pipeline.build_dir_name of the model's name). A user's
    error (unknown board or zoo name, a path unsafe on a command line) raises a BuildtoolError."""
    t = targets.get(board)
    kroot = Path(kernel_root).resolve() if kernel_root else toolchain.KERNELS
    if kernels:
        t = t.with_kernels(_kernel_sets(t, kernels))
    if not pipeline.is_model_file(model):
        pipeline.locate(model)  # a zoo name (one line listing the zoo when it is not)
    elif not os.path.isfile(model):
        raise ModelError(f"model {model!r} is a directory, not a .tflite model file" if os.path.isdir(model)
                         else f"model file not found: {model!r}")
    top = env.Dir("#").abspath
    out = out or os.path.join("build", board, default_name(model))
    o = _command_path(os.path.normpath(os.path.join(top, out)), "out directory")
    _command_path(kroot, "kernel_root")
    lock_build_folder(o)
    d = env.fs.Dir(o)  # nodes made directly: a string target or source would go through substitution
    fenv = env.Clone(BT_BOARD=board, BT_WEIGHTS_ALIGN=t.weights_align,
                     BT_PLAN_OPTIONS=dict(sorted((plan_options or {}).items())))
    fenv["BT_MODEL_NAME"] = model_name(model)  # set, not Clone(): no substitution
    fenv["BT_OUT"] = o
    sealed = []  # (read-back file, the step that makes it, what remaking it means)
    if pipeline.is_model_file(model):
        model_node = env.fs.File(os.path.abspath(model))
    else:
        zoo_model = fenv.BtZooModel([d.File("model.tflite"), d.File("model.tflite.seal")], fenv.Value(model),
                                    BT_ZOO_NAME=model)
        fenv.Depends(zoo_model, steps.sources("model"))
        model_node = zoo_model[0]
        sealed.append((model_node, zoo_model, "remaking it"))
    skel = fenv.BtSkeleton([d.File("skeleton.json"), d.File("skeleton.json.seal")], model_node)
    fenv.Depends(skel, steps.sources("skeleton"))
    plan = fenv.BtPlan([d.File("plan.json"), d.File("plan.json.seal")], skel[0])
    opts = PlanOptions.from_map(fenv["BT_PLAN_OPTIONS"])  # the plan's options, then the code step's
    fenv.Depends(plan, [fenv.Value(repr(opts.plan_map()))] + steps.sources("plan"))
    # a fused plan's code holds weight copies (depthwise filters regrouped per channel): it is made
    # from the model itself; a layer-by-layer plan's code only from the skeleton (weights apart)
    fused = may_fuse(plan_options, t)  # (a board that picks its own plan may pick a fused one)
    code = fenv.BtCode([d.File(n) for n in ("model.c", "model.h", "firmware.json", "firmware.json.seal")],
                       [model_node if fused else skel[0], plan[0]] + ([skel[0]] if fused else []))
    # not on plan.json.seal: a planner edit that leaves plan.json's bytes as they were stops at the plan
    fenv.Depends(code, [fenv.Value(f"{board}:{t.weights_align}:{sorted(opts.code().items())}")] + steps.sources("code"))
    weights = fenv.BtFlash(d.File("weights.bin"), [model_node] + ([plan[0]] if fused else [])
                           + ([code[2]] if code_step.measures_code(t) else []))
    fenv.Depends(weights, [fenv.Value(f"{board}:{t.weights_align}")] + steps.sources("flash"))
    if not env.GetOption("clean"):  # a read-back file changed since it was made: SCons alone would not remake it
        sealed += [(skel[0], skel, "remaking it"), (plan[0], plan, "re-planning"),
                   (code[2], code, "regenerating the code")]
        for node, step, redo in sealed:
            why = steps.unsealed(node.abspath)
            if why:
                print(f"scons: {node}: {why}: {redo}")
                fenv.AlwaysBuild(step)

    cflags = [f for f in toolchain.compile_flags(t, o, kroot) if not f.startswith("-I")]
    ldflags, libs = _split_ldflags(list(t.ldflags))
    incs = [_command_path(d, "include directory") for d in toolchain.include_dirs(t, o, kroot)]
    # include directories through CPPPATH so SCons' scanner sees model.h and every kernel header
    cenv = fenv.Clone(CC=t.cc, AS=t.cc, ASPP=t.cc, LINK=t.cc, CCFLAGS=cflags, ASPPFLAGS=cflags,
                      CPPPATH=incs, LINKFLAGS=ldflags, LIBS=libs, PROGSUFFIX=".elf", OBJSUFFIX=".o")
    if not verbose:  # one short line a step; VERBOSE=1 prints the full commands
        cenv.Replace(CCCOMSTR="CC $SOURCE", ASPPCOMSTR="AS $SOURCE", LINKCOMSTR="LD $TARGET")
    objs, db = [], []
    opcodes = model_opcodes(_configure_graph(model, o))
    used = model_sources(t, opcodes, fused, kroot)  # the kernels the model calls
    # a kernel split into files by path (cortex-m's depthwise*.c): one unit, written once model.c is, that includes
    # the files its calls need (tiny: depthwise_q4s.c alone); same bytes, no recompile
    split = split_kernels(t, used, kroot)
    for src in with_units(toolchain.sources(t, o, kroot, used), split):
        if src in split:  # a split kernel's name: its one unit
            name, files = src, [Path(_command_path(f, "source file")) for f in split[src]]
            uenv = fenv.Clone(BT_UNIT=(t, tuple(opcodes), fused, kroot, tuple(files)))
            unit = uenv.Command(os.path.join(o, "kernels", f"{name}.c"), [code[0], code[1]],
                                SCons.Action.Action(_split_unit, None), source_scanner=_C_OBJECT.source_scanner)
            uenv.Depends(unit, [fenv.Value(repr([str(f) for f in files])), fenv.Value(f"{board}:{fused}")]
                         + [str(f) for f in files])
            obj = cenv.BtCObject(os.path.join(o, "obj", "kernels", f"{name}.o"), unit[0])
            db.append(_cdb_entry(cenv, "$CCCOM", obj[0], unit[0]))
            objs += obj
            continue
        src = Path(_command_path(src, "source file"))
        if src == toolchain.HARNESS_MAIN and not harness:
            continue  # the user's application brings its own bt_main
        if library and not (src.is_relative_to(kroot) or src.name in ("model.c", "weights.S")):
            continue  # start-up code: the project's own
        if src.name == "weights.S":
            wenv = cenv.Clone()
            wenv.Append(ASPPFLAGS=[f'-DBT_WEIGHTS_FILE=\\"{weights[0].abspath}\\"'])  # through the shell
            if library:  # where any GNU ld script that places .rodata* takes it
                wenv.Append(ASPPFLAGS=["-DBT_WEIGHTS_SECTION=.rodata.bt_weights"])
            # the image's external part (weights placed in PSRAM...), read from weights.bin's header
            # when the command runs: weights.bin is built by then (the object depends on it)
            wenv["_BT_SPLIT"] = lambda target, source, env, for_signature, w=weights[0].abspath: (
                toolchain.weights_split_defines(t, w) if os.path.exists(w) else [])
            wenv.Append(ASPPFLAGS=["${_BT_SPLIT}"])
            obj = wenv.Object(os.path.join(o, "obj", "weights.o"), str(src))
            wenv.Depends(obj, weights)
            db.append(_cdb_entry(wenv, "$ASPPCOM", obj[0], src))
        else:
            if src.is_relative_to(kroot):
                name = f"kernels/{src.stem}.o"
            elif src.name in ("model.c",):
                name = "model.o"
            else:
                name = f"fw/{src.parent.name}_{src.stem}.o"
            obj = cenv.BtCObject(os.path.join(o, "obj", name), code[0] if src.name == "model.c" else str(src))
            if src.name == "model.c":
                cenv.Depends(obj, code[1])
            db.append(_cdb_entry(cenv, "$CCCOM", obj[0], src if src.name != "model.c" else code[0]))
        objs += obj
    if library:  # one archive: the linker takes only the kernels the model calls
        cenv.Replace(LINKFLAGS=[], LIBS=[], AR=t.binutil("ar"), RANLIB=t.binutil("ranlib"))
        lib = cenv.StaticLibrary(os.path.join(o, "libmodel.a"), objs)
        return BtModel(cenv, None, lib, incs, weights + plan[:1] + code[:3], db, library=True)
    link_deps = []
    if t.linker_template:
        ld = fenv.BtText(os.path.join(o, "board.ld"), fenv.Value(t.linker_script()))
        cenv.Append(LINKFLAGS=[f"-T{ld[0].abspath}"])
        link_deps = ld
        lenv = cenv.Clone()
        lenv["SPAWN"] = _link_spawn(o, board, fenv["BT_MODEL_NAME"])  # set, not Clone(): no substitution
    else:
        lenv = cenv.Clone()
    lenv["BT_LINK_DEPS"], lenv["BT_CHECK_SEGMENTS"] = link_deps, bool(t.linker_template)
    return BtModel(cenv, lenv, objs, incs, weights + plan[:1] + code[:3], db)


def bt_firmware(env, board: str, model: str, out: str = "", kernels: str = "", plan_options: dict | None = None,
                run_input: str = "", run_output: str = "", kernel_root: str = "", verbose: bool = False):
    """Declare the whole firmware build (BtModel with the built-in harness, linked); return the default
    nodes (ELF, compile_commands.json, weights.bin, plan.json) and register the 'run' alias (build, run,
    print output and RAM)."""
    m = bt_model(env, board, model, out=out, kernels=kernels, plan_options=plan_options, kernel_root=kernel_root,
                 verbose=verbose, harness=True)
    o, fenv = m.env["BT_OUT"], m.env
    elf = m.Program(os.path.join(o, "firmware.elf"), [])
    cdb = m.CompileCommands(os.path.join(o, "compile_commands.json"))
    renv = fenv.Clone()
    renv["BT_RUN"] = {"out": o, "input": run_input, "output": run_output}  # set, not Clone(): no substitution
    weights, plan, manifest = m.nodes[0], m.nodes[1], m.nodes[4]
    nodes = elf + cdb + [weights, plan]
    run = renv.Alias("run", nodes + [manifest], SCons.Action.Action(_one_line(_run), "running firmware on $BT_BOARD"))
    renv.AlwaysBuild(run)
    return nodes


def _multi(target, source, env):
    """BT_MULTI (board, models, out, plan options) is a dict, never substituted: paths reach Python only."""
    m = env["BT_MULTI"]
    paths, joint = pipeline.build_multi(m["models"], m["board"], m["out"], m["options"])
    _say(runner.memory_summary(targets.get(m["board"]), paths["elf"], joint.arena_bytes))
    return 0


def bt_multi_firmware(env, board: str, models: list, out: str = "", plan_options: dict | None = None):
    """Several models (never running at once) in one firmware sharing one arena (buildtool/pipeline/multi.py):
    one step plans each model and all of them jointly, generates and links. Returns the declared
    outputs: firmware.elf, joint.json, firmware.json, models.c, model.h (board.ld), and per model
    <prefix>/model.c, model.h, plan.json, weights.bin, weights.o. Run it with pipeline.run_multi."""
    t = targets.get(board)  # one line naming the boards when it is not one
    for model in models:
        if not pipeline.is_model_file(model):
            pipeline.locate(model)
    opts = PlanOptions.from_map(plan_options or {})
    top = env.Dir("#").abspath
    out = out or os.path.join("build", board, "multi-" + "-".join(default_name(m) for m in models))
    o = os.path.normpath(os.path.join(top, out))
    lock_build_folder(o)
    d = env.fs.Dir(o)
    names = ["firmware.elf", "joint.json", "firmware.json", "models.c", "model.h"]
    names += ["board.ld"] if t.linker_template else []
    names += [f"{p}/{f}" for p in prefixes([model_name(m) for m in models])
              for f in ("model.c", "model.h", "plan.json", "weights.bin", "weights.o")]
    menv = env.Clone()
    menv["BT_MULTI"] = {"board": board, "models": list(models), "out": o, "options": opts}  # set: no substitution
    srcs = [env.fs.File(os.path.abspath(m)) if pipeline.is_model_file(m) else menv.Value(m) for m in models]
    step = menv.Command([d.File(n) for n in names], srcs, SCons.Action.Action(_one_line(_multi),
                                                                               "multi-model firmware $TARGET"))
    fw = [p for p in toolchain.FIRMWARE.rglob("*") if p.is_file()]
    kernels = [p for p in toolchain.KERNELS.rglob("*") if p.suffix in (".c", ".h", ".S")]
    menv.Depends(step, [menv.Value(repr(opts.canonical()))] + [str(p) for p in sorted(fw + kernels)]
                 + closure_files(("pipeline.multi", "boards")))
    return step


def model_name(model: str) -> str:
    """A file's name without .tflite, a zoo name whole (mbv2-w0.35 keeps its dot)."""
    return name_of(model)


def default_name(model: str) -> str:
    """The build folder name of a model argument (a .tflite path or a zoo name)."""
    return build_dir_name(model_name(model))


def _drop_empty_build_folder() -> None:
    """After a failed build: the build folder (and the empty folders above it, up to the project) when it
    holds nothing but SCons' own state and the folder's lock, as for a model refused before any step wrote a file."""
    name = SCons.SConsign.DB_Name
    if not name or not os.path.isabs(name):
        return
    db, out = name + ".dblite", os.path.dirname(name)
    top = SCons.Node.FS.get_default_fs().Dir("#").abspath
    if not os.path.isdir(out) or not set(os.listdir(out)) <= {os.path.basename(db), LOCK_NAME}:
        return
    for f in {os.path.basename(db), LOCK_NAME} & set(os.listdir(out)):  # SCons' state and this build's lock
        os.unlink(os.path.join(out, f))
    os.rmdir(out)
    out = os.path.dirname(out)
    while out.startswith(top + os.sep) and not os.listdir(out):  # build/BOARD, build: made for it alone
        os.rmdir(out)
        out = os.path.dirname(out)


def _save_build_state_or_say_so(write=SCons.SConsign.write):
    """SCons.SConsign.write, which SCons calls once the build ends: a full or read-only disk there was a
    traceback after the build's own error line, a retry in a destructor (a second traceback) and a
    .sconsign.tmp left behind. Now exit status 2, no temporary file, and one line: the failed step's, or
    this one's when the build itself went through."""
    def save() -> None:
        try:
            write()
            if SCons.Script.Main.this_build_status:
                _drop_empty_build_folder()
        except OSError as e:
            for db in SCons.SConsign.DB_sync_list:
                if hasattr(db, "_needs_sync"):
                    db._needs_sync = False  # dblite's destructor would try (and fail) again
                tmp = getattr(db, "_tmp_name", None)
                if tmp and os.path.isfile(tmp):
                    os.unlink(tmp)
            if not SCons.Script.Main.this_build_status:  # a failed build has said why in its own line
                sys.stderr.write(f"scons: *** cannot save SCons's build state (.sconsign.dblite): {e.strerror}; "
                                 f"free some space (or make the folder writable) and build again\n")
            raise SystemExit(2) from None
    save.bt_guard = True
    return save


def _first_failure_only(failed):
    """SCons.Script.Main.BuildTask.failed, which writes a 'scons: ***' line for every failed job. Under -j the jobs
    already running when one fails (the build then stops) may fail as well: a full disk fails every compile in
    flight, each with its line. Now a build that stops at its first failure says so in that one line; a later
    failure of a job that was already running is counted (exit status, the failed targets) but its line left out,
    the compiler's own message apart. With -k or -i every failure has its line, as does any failure SCons would
    report with a traceback (a bug, not a failed step)."""
    def report(task) -> None:
        t, e = task.exc_info()[:2]
        err = SCons.Errors.convert_to_BuildError(e if e is not None else t)
        traceback = err.exc_info[1] and err.exc_info[2] and not isinstance(
            err.exc_info[1], (EnvironmentError, SCons.Errors.StopError, SCons.Errors.UserError))  # as failed() decides
        if (not SCons.Script.Main.this_build_status or task.options.keep_going or task.options.ignore_errors
                or traceback):
            return failed(task)
        err.node = err.node or task.node
        task.exception = (e, err, None)
        task.do_failed(err.exitstatus)
        task.exc_clear()
    report.bt_guard = True
    return report


def generate(env):
    if not getattr(SCons.SConsign.write, "bt_guard", False):
        SCons.SConsign.write = _save_build_state_or_say_so()
        atexit.register(_summaries_of_up_to_date_images)
    task = SCons.Script.Main.BuildTask
    if not getattr(task.failed, "bt_guard", False):
        task.failed = _first_failure_only(task.failed)
    mk = SCons.Builder.Builder
    env["BUILDERS"]["BtZooModel"] = mk(action=SCons.Action.Action(_one_line(_zoo_model),
                                                                  "zoo model $BT_ZOO_NAME -> $TARGET"))
    env["BUILDERS"]["BtSkeleton"] = mk(action=SCons.Action.Action(_one_line(_skeleton), "skeleton $TARGET"))
    env["BUILDERS"]["BtPlan"] = mk(action=SCons.Action.Action(_one_line(_plan), "plan $TARGET"))
    env["BUILDERS"]["BtCode"] = mk(action=SCons.Action.Action(_one_line(_code), "codegen ${TARGETS[:3]}"))
    env["BUILDERS"]["BtFlash"] = mk(action=SCons.Action.Action(_one_line(_flash), "flash image $TARGET"))
    env["BUILDERS"]["BtCObject"] = _C_OBJECT
    env["BUILDERS"]["BtText"] = mk(action=SCons.Action.Action(_text, "write $TARGET"))
    env.AddMethod(bt_firmware, "BtFirmware")
    env.AddMethod(bt_model, "BtModel")
    env.AddMethod(bt_multi_firmware, "BtMultiFirmware")
    env.AddMethod(lambda env, model: default_name(model), "BtDefaultName")
    env.AddMethod(lambda env, given: plan_options(given), "BtPlanOptions")


def exists(env):
    return True
