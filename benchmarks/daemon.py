"""Planner daemon: cold plan vs warm cache hit, medians of several runs.

    python benchmarks/daemon.py [--runs N] [--warm-runs N] [--cli-only] [--write-docs]

Runs a daemon in a private temporary runtime and cache directory (never the
user's), stops it at the end, and prints a Markdown table for docs/daemon.md.
Rows per model:
  in-process   service.plan_request without a daemon or cache (what --no-daemon does)
  daemon cold  cache cleared, then one request (parse + plan inside the daemon)
  daemon warm  the same request again over a new connection (what each build does)
  warm, new process  a fresh Python process: importing the client + the warm request, timed inside
                     it (what a one-shot CLI call adds to the interpreter's own start, shown
                     for reference as a bare `python -c pass`)
A second table times whole `buildtool plan MODEL --optimize ram` CLI processes (mbv2-w0.35; pip's
console script, run by this interpreter):
--no-daemon, a daemon miss (cache cleared first, daemon running), a warm daemon hit, and that hit
again under `python -S` (no .pth start-up hooks), and the warm hit of a user's install: this checkout
built as a wheel and installed with its dependencies into a fresh venv (pip, from the package index or
pip's cache; --no-venv skips it), whose own console script is timed against its own daemon. The
children keep compiled bytecode in a private PYTHONPYCACHEPREFIX, as an installed buildtool has.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from docs_tables import Out, environment, median_ms, write_docs  # noqa: E402 (beside this script)

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"


def models() -> list:
    """(label, model spec): zoo architectures, plus the converter-made MobileNetV2 when present."""
    out = [("mobilenetv2 (zoo)", "mobilenetv2"), ("mcunet-in3 (zoo)", "mcunet-in3")]
    p = SHARED / "mobilenetv2_160_a1.tflite"
    if p.exists():
        out.append(("mobilenetv2_160_a1.tflite", str(p)))
    return out


def scons_rebuild_rows(runs: int = 5) -> list:
    """`scons` no-op and weight-only rebuild of the zoo `tiny` firmware (host board), median of `runs`,
    with the planner daemon (warm) and with BUILDTOOL_NO_DAEMON=1: rows (label, no-daemon ms, daemon ms)."""
    from buildtool.model import reader as tflite_reader
    from buildtool import zoo
    from buildtool.model.writer import serialize

    tmp = Path(tempfile.mkdtemp(prefix="btscons", dir="/tmp"))
    model = tmp / "m.tflite"
    model.write_bytes(serialize(zoo.build("tiny")))
    base = [sys.executable, "-m", "SCons", "-Q", "-C", str(ROOT), "board=host", f"model={model}"]

    def scons(out: str, no_daemon: bool) -> None:
        env = dict(os.environ, BUILDTOOL_NO_DAEMON="1" if no_daemon else "0")
        subprocess.run(base + [f"out={tmp / out}"], check=True, capture_output=True, env=env)

    flip = [0]

    def edit_weight() -> None:
        g = tflite_reader.load(str(model))
        w = g.tensors[g.operators[0].inputs[1]]
        w.data = w.data.copy()
        flip[0] += 1
        w.data.flat[0] = flip[0] % 100
        model.write_bytes(serialize(g))

    rows = []
    try:
        res = {}
        for no_daemon in (True, False):
            out = "nd" if no_daemon else "d"
            scons(out, no_daemon)
            res[("noop", no_daemon)] = median_ms(lambda: scons(out, no_daemon), runs)
            times = []
            for _ in range(runs):
                edit_weight()
                t = time.perf_counter()
                scons(out, no_daemon)
                times.append((time.perf_counter() - t) * 1e3)
            res[("weights", no_daemon)] = statistics.median(times)
        rows.append(("`scons` no-op (tiny, host)", res[("noop", True)], res[("noop", False)]))
        rows.append(("`scons` after a weight edit (tiny, host)", res[("weights", True)], res[("weights", False)]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def console_script() -> list:
    """How a user runs buildtool: pip's `buildtool` script for this interpreter (it imports re and
    buildtool.cli), run by this interpreter (not through a shell shim); else `-m buildtool.cli`."""
    import sysconfig

    script = os.path.join(sysconfig.get_path("scripts"), "buildtool")
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            if "from buildtool.cli import main" in f.read(4096):
                return [script]
    except OSError:
        pass
    return ["-m", "buildtool.cli"]


def venv_rows(tmp: str, warm_runs: int) -> list:
    """The warm hit of a user's install: a wheel of this checkout and its dependencies in a fresh venv
    (no editable-install finder, none of this interpreter's site hooks), its console script against its
    own daemon (own runtime and cache directories). Rows (label, median ms); one row saying why when the
    install cannot be made here (no package index)."""
    venv, wheels = os.path.join(tmp, "venv"), os.path.join(tmp, "wheels")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUILDTOOL_", "PYTHON"))}
    env.update(BUILDTOOL_RUNTIME_DIR=os.path.join(tmp, "venv-run"), BUILDTOOL_CACHE_DIR=os.path.join(tmp, "venv-cache"))
    src = os.path.join(tmp, "src")  # a copy: setuptools writes build/ beside the sources it builds
    shutil.copytree(ROOT / "buildtool", os.path.join(src, "buildtool"), ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src)
    steps = [[sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", wheels, src],
             [sys.executable, "-m", "venv", venv]]
    script, py = os.path.join(venv, "bin", "buildtool"), os.path.join(venv, "bin", "python")
    try:
        for cmd in steps:
            subprocess.run(cmd, check=True, capture_output=True, cwd=tmp, timeout=600)
        wheel = [os.path.join(wheels, f) for f in os.listdir(wheels) if f.startswith("buildtool-")]
        subprocess.run([py, "-m", "pip", "install", "-q", *wheel], check=True, capture_output=True, timeout=600)
    except (subprocess.SubprocessError, OSError) as e:
        why = (getattr(e, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()[-1:] or [str(e)]
        return [("daemon warm hit, wheel in a fresh venv", f"not measured: {why[0][:120]}")]
    cmd = [script, "plan", "mbv2-w0.35", "--optimize", "ram"]
    try:
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=tmp)  # starts its daemon, plans once
        warm = median_ms(lambda: subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=tmp), warm_runs)
        bare = median_ms(lambda: subprocess.run([py, "-c", "pass"], check=True, env=env), warm_runs)
    finally:
        subprocess.run([script, "daemon", "stop"], capture_output=True, env=env, cwd=tmp)
    return [("daemon warm hit, wheel in a fresh venv (a user's install)", warm), ("(its `python -c pass`)", bare)]


def cli_rows(runs: int, warm_runs: int) -> list:
    """Whole CLI processes, fused plan of mbv2-w0.35: rows (label, median ms)."""
    from buildtool.serve.daemon.client import DaemonClient

    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(os.environ["BUILDTOOL_CACHE_DIR"], "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, *console_script(), "plan", "mbv2-w0.35", "--optimize", "ram"]

    def cli(*extra):
        subprocess.run(cmd + list(extra), check=True, capture_output=True, env=env, cwd=ROOT)

    def cleared():
        with DaemonClient() as c:
            c.clear()

    cli("--no-daemon")  # bytecode compiled, daemon started
    cli()
    nod, miss = [], []
    for _ in range(runs):  # interleaved, so load changes hit both alike
        t = time.perf_counter()
        cli("--no-daemon")
        nod.append((time.perf_counter() - t) * 1e3)
        cleared()
        t = time.perf_counter()
        cli()
        miss.append((time.perf_counter() - t) * 1e3)
    warm = median_ms(cli, warm_runs)
    bare = median_ms(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True, env=env), warm_runs)
    # The same without site's start-up hooks (.pth files: an editable install's finder, this machine's
    # certificate hook), which an interpreter with a plain wheel install does not run: -S, and the
    # directory holding msgpack on PYTHONPATH (its .pth files are not read from there).
    import msgpack

    lean = dict(env, PYTHONPATH=os.pathsep.join([str(ROOT), os.path.dirname(os.path.dirname(msgpack.__file__))]))
    warm_s = median_ms(lambda: subprocess.run([sys.executable, "-S", *cmd[1:]], check=True, capture_output=True,
                                              env=lean, cwd=ROOT), warm_runs)
    bare_s = median_ms(lambda: subprocess.run([sys.executable, "-S", "-c", "pass"], check=True, env=lean), warm_runs)
    return [("`--no-daemon`", statistics.median(nod)), ("daemon miss (cache cleared)", statistics.median(miss)),
            ("daemon warm hit", warm), ("(`python -c pass`)", bare),
            ("daemon warm hit, no site hooks (`python -S`)", warm_s), ("(`python -S -c pass`)", bare_s)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3, help="runs of each cold measurement")
    ap.add_argument("--warm-runs", type=int, default=20, help="runs of each warm measurement")
    ap.add_argument("--cli-only", action="store_true", help="only the whole-CLI-process table")
    ap.add_argument("--no-venv", action="store_true", help="skip the fresh-venv install (its wheel and pip run)")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the generated tables of docs/daemon.md "
                                                              "(not with --cli-only)")
    a = ap.parse_args(argv)
    if a.write_docs and (a.cli_only or a.no_venv):
        ap.error("--write-docs needs every table: drop --cli-only / --no-venv")
    tmp = tempfile.mkdtemp(prefix="btbench", dir="/tmp")
    os.environ["BUILDTOOL_RUNTIME_DIR"] = os.path.join(tmp, "run")
    os.environ["BUILDTOOL_CACHE_DIR"] = os.path.join(tmp, "cache")
    from buildtool.serve import service
    from buildtool.serve.daemon.client import DaemonClient

    rows, scons_rows = [], []
    try:
        with DaemonClient() as c:
            c.connect()
        cli_table = cli_rows(max(a.runs, 5), max(a.warm_runs, 9))
        if not a.no_venv:
            cli_table += venv_rows(tmp, max(a.warm_runs, 9))
        for label, spec in ([] if a.cli_only else models()):
            inproc = median_ms(lambda: service.plan_request(spec), a.runs)

            def cold():
                with DaemonClient() as c:
                    c.clear()
                    r = c.plan(spec)
                assert r["cache"] == {"hits": 0, "misses": 1}, r["cache"]

            def warm():
                with DaemonClient() as c:
                    return c.plan(spec)["cache"] == {"hits": 1, "misses": 0}

            cold_ms = median_ms(cold, a.runs)
            for _ in range(3):  # a daemon restarted by a source edit meanwhile must plan once more
                if warm():
                    break
            warm_ms = median_ms(warm, a.warm_runs)
            code = ("import time; t = time.perf_counter(); from buildtool.serve.daemon.client import DaemonClient; "
                    f"DaemonClient().plan({spec!r}); print((time.perf_counter() - t) * 1e3)")
            proc_ms = statistics.median(
                float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
                for _ in range(7))
            rows.append((label, inproc, cold_ms, warm_ms, proc_ms))
        bare = median_ms(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 5)
        scons_rows = [] if a.cli_only else scons_rebuild_rows()
    finally:
        with DaemonClient(start=False) as c:
            if c.connect():
                c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out = Out()
    out(f"Measured {environment()}; load average {os.getloadavg()[0]:.1f} at the end.")
    out()
    out("| `buildtool plan mbv2-w0.35 --optimize ram`, whole CLI process | median |")
    out("|---|---:|")
    for label, ms in cli_table:
        out(f"| {label} | {ms if isinstance(ms, str) else f'{ms:.0f} ms'} |")
    out()
    if a.cli_only:
        return 0
    out(f"| model | in-process plan | daemon cold | daemon warm hit | new process: import + warm hit "
        f"(interpreter start: {bare:.0f} ms) |")
    out("|---|---:|---:|---:|---:|")
    for label, inproc, cold_ms, warm_ms, proc_ms in rows:
        out(f"| {label} | {inproc:.0f} ms | {cold_ms:.0f} ms | {warm_ms:.1f} ms | {proc_ms:.1f} ms |")
    out()
    out("| build step | without daemon (BUILDTOOL_NO_DAEMON=1) | with the daemon |")
    out("|---|---:|---:|")
    for label, nod, dae in scons_rows:
        out(f"| {label} | {nod:.0f} ms | {dae:.0f} ms |")
    if a.write_docs:
        write_docs("docs/daemon.md", "daemon.py", out.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
