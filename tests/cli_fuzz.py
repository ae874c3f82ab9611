"""Runs `buildtool` commands on many model files, each in a forked child of one process that imported
buildtool once, the lazily loaded modules included (a fresh interpreter or fresh imports per command
would cost more than the commands).

    python tests/cli_fuzz.py < job.json      job: {"cases": [{"id", "args", "input"}], "workers",
                                                   "timeout_s", "memory_bytes", "scratch"}

Each child gets an address-space limit (inherited by a planner daemon it starts) and a wall-clock
deadline, after which it is killed; it runs cli.main as the `buildtool` script would (an uncaught
exception prints its traceback and exits 1). A case with "input": true first writes an input .npy that
fits the model's first input (read under the same limits), then runs `run --input` on it. One JSON line
per case on stdout: id, rc (None when killed), stdout and stderr text, seconds, timed_out.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback

import numpy as np

from buildtool import cli
from buildtool.model import reader as tflite_reader


def _input_for(path: str, out: str) -> None:
    shape, dtype = (1,), "int8"
    try:
        g, _ = tflite_reader.read(tflite_reader.read_model_file(path))
        t = g.tensors[g.inputs[0]]
        if 0 < t.num_elements <= 1 << 24 and all(d > 0 for d in t.shape):
            shape, dtype = tuple(t.shape), t.dtype
    except Exception:
        pass
    x = np.random.default_rng(0).integers(-128, 128, size=shape).astype(dtype if dtype != "bool" else "int8")
    np.save(out, x)


def _child(case: dict, scratch: str, memory: int) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    base = os.path.join(scratch, str(case["id"]))
    for fd, suffix in ((1, ".out"), (2, ".err")):
        f = os.open(base + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    args = list(case["args"])
    try:
        if case.get("input"):
            _input_for(args[1], base + ".npy")
            args += ["--input", base + ".npy"]
        rc = cli.main(args)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
        rc = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return rc


def _preload() -> None:
    """Import, once in this parent, every module the commands load lazily (the planner and its solver,
    the executor and every kernel, the daemon client): each forked child then runs only the command."""
    import importlib

    from buildtool.model import opdefs

    for name in ("pipeline", "plan.arena.planner", "plan.arena.exact", "plan.arena.order", "plan.arena.execute",
                 "serve.service", "serve.daemon.client", "model.inspect", "model.inputs", "plan.canonical", "serve.cache",
                 "refops.prepare", "cli.gen", "integrations.watch"):
        importlib.import_module(f"buildtool.{name}")
    for column in ("check", "kernel", "macs"):
        opdefs.table(column)


def main() -> int:
    _preload()
    job = json.load(sys.stdin)
    cases, scratch = list(job["cases"]), job["scratch"]
    workers, timeout, memory = int(job["workers"]), float(job["timeout_s"]), int(job["memory_bytes"])
    running: dict = {}
    pending = cases[::-1]
    while pending or running:
        while pending and len(running) < workers:
            case = pending.pop()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                rc = 1
                try:
                    rc = _child(case, scratch, memory)
                finally:
                    os._exit(rc if isinstance(rc, int) and 0 <= rc < 256 else 1)
            running[pid] = (case, time.monotonic(), False)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for p, (case, start, killed) in list(running.items()):
                if not killed and now - start > timeout:
                    os.kill(p, signal.SIGKILL)
                    running[p] = (case, start, True)
            time.sleep(0.005)
            continue
        case, start, killed = running.pop(pid)
        base = os.path.join(scratch, str(case["id"]))
        out = {"id": case["id"], "args": case["args"], "seconds": round(time.monotonic() - start, 3),
               "timed_out": killed, "rc": os.waitstatus_to_exitcode(status) if not killed else None}
        for suffix, key in ((".out", "stdout"), (".err", "stderr")):
            try:
                with open(base + suffix, errors="replace") as f:
                    out[key] = f.read(20000)
            except OSError:
                out[key] = ""
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
