"""`buildtool watch`: rebuild on save.

    buildtool watch MODEL --board B [plan options: --optimize ram ...] [--run [--input x.npy]]
        the firmware of MODEL (the built-in harness) in build/B/NAME, rebuilt when the model file
        (or a PATH given with --path) is saved; prints which outputs changed and the new RAM/flash.
    buildtool watch --command "scons -Q board=cortex-m4" [--path DIR ...]
        the user's own build command, rerun when a source under DIR (default .) is saved.

Events are debounced (an editor's save is several events; saves less than DEBOUNCE_S apart are one
rebuild) and a save that leaves a file's bytes as they were triggers nothing. Build outputs (build/, bazel-*,
.sconsign*, CMake and Ninja files) are never watched. A failed build prints one line and the
watch goes on; Ctrl-C ends it with status 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from .. import pipeline, targets
from ..cli.common import add_plan_options, plan_options
from ..cli.gen_steps import options_of
from ..errors import BuildtoolError, UsageError, one_line
from ..firmware import runner
from ..options import PlanOptions
from ..steps.readback import made_from

DEBOUNCE_S = 0.6  # an editor's save is several events, and a burst of saves ~0.3 s apart is one rebuild
IGNORED_PARTS = ("build", ".git", "__pycache__", ".sconf_temp", "CMakeFiles", ".cache")
IGNORED_PREFIXES = ("bazel-", ".sconsign", ".#", "#")
IGNORED_SUFFIXES = ("~", ".swp", ".swx", ".tmp", ".o", ".a", ".elf", ".ninja_log", ".ninja_deps")


def ignored(path: str, roots=()) -> bool:
    """True for build outputs, editors' temporaries and version-control files."""
    p = Path(path)
    for r in roots:
        try:
            p = p.relative_to(r)
            break
        except ValueError:
            continue
    name = p.name
    return (any(part in IGNORED_PARTS or part.startswith("bazel-") for part in p.parts[:-1])
            or name.startswith(IGNORED_PREFIXES) or name.endswith(IGNORED_SUFFIXES))


def digest(path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None  # deleted, or not a file


class Changes:
    """Paths saved since the last take(), with the moment of the last event (for the debounce)."""

    def __init__(self, roots):
        self.roots = [Path(r).resolve() for r in roots]
        self.paths: set = set()
        self.last = 0.0
        self.cond = threading.Condition()

    def add(self, path: str) -> None:
        if not path or ignored(path, self.roots):
            return
        with self.cond:
            self.paths.add(os.path.abspath(path))
            self.last = time.monotonic()
            self.cond.notify_all()

    def wait(self, quiet_s: float) -> set:
        """Block until something changed and then nothing more for quiet_s; the paths, cleared."""
        with self.cond:
            while not self.paths:
                self.cond.wait(0.5)
            while time.monotonic() - self.last < quiet_s:
                self.cond.wait(quiet_s)
            paths, self.paths = self.paths, set()
            return paths


def _observe(changes: Changes, dirs) -> object:
    class Handler(FileSystemEventHandler):
        def on_any_event(self, ev):
            if ev.is_directory or ev.event_type in ("opened", "closed_no_write"):
                return
            changes.add(ev.src_path)
            changes.add(getattr(ev, "dest_path", "") or "")

    obs = Observer()
    for d in sorted(set(dirs)):
        obs.schedule(Handler(), str(d), recursive=True)
    obs.start()
    return obs


def _rel(p) -> str:
    try:
        return os.path.relpath(p)
    except ValueError:
        return str(p)


# -- what a rebuild is ------------------------------------------------------------------------------
class ModelBuild:
    """Build the harness firmware of a model; report changed outputs and RAM/flash."""

    def __init__(self, model: str, board: str, options, out_dir: str | None, run: bool, inputs):
        self.model, self.board, self.options, self.run, self.inputs = model, board, options, run, inputs
        self.target = targets.get(board)
        name = pipeline.model_name(model)
        self.out = Path(out_dir or Path("build") / board / name)
        self.plan, self.plan_key = None, None

    def __call__(self) -> None:
        before = {p.name: digest(p) for p in self.out.glob("*") if p.is_file()}
        t0 = time.monotonic()
        model = pipeline.read_model(self.model)  # read once: build takes the Model as it is
        pipeline.check(model)
        key = json.dumps(made_from(model.graph, self.options), sort_keys=True)
        if key != self.plan_key:  # planned again only when the structure or the options changed
            self.plan, self.plan_key = pipeline.plan_memory(model.graph, self.options), key
        paths = pipeline.build(model, self.board, self.out, self.options, plan=self.plan)
        after = {p.name: digest(p) for p in self.out.glob("*") if p.is_file()}
        changed = sorted(n for n in after if after[n] != before.get(n) and not n.endswith((".o", ".a", ".ld")))
        print(f"built {_rel(paths['elf'])} in {time.monotonic() - t0:.1f} s; changed: "
              f"{', '.join(changed) or 'nothing'}")
        arena = json.loads((self.out / "plan.json").read_text())["arena_bytes"]
        staged = json.loads((self.out / "firmware.json").read_text()).get("staged")
        print(runner.memory_summary(self.target, paths["elf"], arena, staged), flush=True)
        if self.run:
            self._run()

    def _run(self) -> None:
        man = json.loads((self.out / "firmware.json").read_text())
        if self.inputs:
            x = [np.load(p) for p in self.inputs]
        else:
            x = [np.zeros(i["shape"], dtype=i["dtype"]) for i in man["inputs"]]
        out, profile, _ = pipeline.run(self.board, self.out, x if len(x) > 1 else x[0])
        first = out[0] if isinstance(out, list) else out
        total = sum(o["count"] for o in profile["ops"])
        print(f"ran on {self.board}: class {int(np.argmax(first.reshape(-1)))}"
              + (f", {total:,} {profile['unit']} in the model" if total else ""), flush=True)


class CommandBuild:
    """Run the user's own build command; its output passes through."""

    def __init__(self, command: str):
        self.argv = shlex.split(command)
        if not self.argv:
            raise UsageError("--command is empty; give the build command, e.g. --command 'scons -Q'")

    def __call__(self) -> None:
        t0 = time.monotonic()
        try:
            r = subprocess.run(self.argv)
        except OSError as e:
            raise UsageError(f"cannot run {self.argv[0]}: {e.strerror}") from None
        state = "ok" if r.returncode == 0 else f"failed (exit {r.returncode})"
        print(f"{' '.join(self.argv)}: {state} in {time.monotonic() - t0:.1f} s")


# -- the loop ---------------------------------------------------------------------------------------
def watch(build, files, dirs, quiet_s: float = DEBOUNCE_S, rounds: int | None = None) -> int:
    """Build once, then after every debounced save of a watched file whose bytes changed.
    files: watched files (None: every file under dirs). rounds: stop after that many rebuilds (tests)."""
    changes = Changes(dirs)
    obs = _observe(changes, dirs)
    known = {}
    try:
        for d in dirs:  # before the first build: a save during it is a change
            for p in Path(d).rglob("*"):
                if p.is_file() and not ignored(str(p), changes.roots) and (files is None or str(p) in files):
                    known[str(p.resolve())] = digest(p)
        _attempt(build)
        print("watching; Ctrl-C to stop", flush=True)
        done = 0
        while rounds is None or done < rounds:
            saved = changes.wait(quiet_s)
            if files is not None:
                saved = {p for p in saved if p in files}
            really = sorted(p for p in saved if digest(p) != known.get(p))
            for p in saved:
                known[p] = digest(p)
            if not really:
                continue
            print(f"changed: {', '.join(_rel(p) for p in really)}", flush=True)
            _attempt(build)
            done += 1
    except KeyboardInterrupt:
        pass
    finally:
        obs.stop()
        obs.join(timeout=5)
    return 0


def _attempt(build) -> None:
    try:
        build()
    except BuildtoolError as e:
        print(f"buildtool: error: {one_line(str(e))}", file=sys.stderr)
    sys.stdout.flush()


def add_parser(sub) -> None:
    s = sub.add_parser("watch")
    s.add_argument("model", nargs="?", help=".tflite file (or zoo name) whose firmware to rebuild")
    s.add_argument("--board", default="host", help="board (default host)")
    # the plan options every planning command takes (--optimize ram, --align 8, ...); --opt KEY=VALUE, the
    # build variables' spelling it took before, still works with a note
    s.add_argument("--opt", action="append", metavar="KEY=VALUE", help=argparse.SUPPRESS)
    s.add_argument("--build-dir", help="where to build (default build/BOARD/MODEL)")
    s.add_argument("--run", action="store_true", help="run the firmware after each build (QEMU or natively)")
    s.add_argument("--input", action="append", help=".npy input for --run (default zeros)")
    s.add_argument("--command", help="your own build command to rerun instead, e.g. 'scons -Q board=cortex-m4'")
    s.add_argument("--path", action="append", help="also watch this file or folder (default: the model's "
                                                   "file; with --command: .)")
    s.add_argument("--debounce", type=float, default=DEBOUNCE_S,
                   help=f"seconds of quiet before a rebuild: saves closer together are one rebuild (default {DEBOUNCE_S:g})")
    s.add_argument("--rounds", type=int, help=argparse.SUPPRESS)  # stop after N rebuilds (tests)
    add_plan_options(s)
    s.set_defaults(fn=run)


def _options(a) -> PlanOptions:
    """The plan options of the flags (as `buildtool plan`'s); --opt KEY=VALUE pairs, deprecated, on top."""
    options = plan_options(a)
    if not a.opt:
        return options
    print("buildtool: note: watch --opt KEY=VALUE is deprecated: give the plan options as every command "
          "does (--optimize ram, --align 8, ...)", file=sys.stderr)
    return PlanOptions.from_map({**options.to_map(), **options_of(a.opt).to_map()})


def run(a) -> int:
    if a.debounce < 0:
        raise UsageError("--debounce must be 0 or more seconds")
    extra = [Path(p) for p in a.path or ()]
    for p in extra:
        if not p.exists():
            raise UsageError(f"--path {p}: no such file or folder")
    if a.command:
        if a.model:
            raise UsageError("give a model or --command, not both")
        build = CommandBuild(a.command)
        dirs = [p if p.is_dir() else p.parent for p in extra] or [Path(".")]
        files = None if not extra or any(p.is_dir() for p in extra) else {str(p.resolve()) for p in extra}
    else:
        if not a.model:
            raise UsageError("give a model to watch (a .tflite file or zoo name) or --command 'your build'")
        targets.get(a.board)  # an unknown board is one line now, not after the first save
        build = ModelBuild(a.model, a.board, _options(a), a.build_dir, a.run, a.input)
        model_file = Path(a.model)
        watched = ([model_file] if model_file.is_file() else []) + extra
        if not watched:
            print(f"{a.model} is a zoo model: built once, nothing to watch (give --path)")
            _attempt(build)
            return 0
        dirs = [p if p.is_dir() else p.parent for p in watched]
        files = None if any(p.is_dir() for p in watched) else {str(p.resolve()) for p in watched}
    return watch(build, files, dirs, a.debounce, a.rounds)
