"""Shared fixtures. Real-world models come from ../shared/models when it is there (CI has it)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings as _hypothesis_settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared"))
SHARED_MODELS = SHARED / "models"
SHARED_MODEL_NAMES = ["tiny_cnn_32", "dscnn_kws", "resnet_concat_64", "mbv2_w035_144", "mobilenetv2_160_a1"]

# hypothesis draws its examples from a fixed seed per test, so a clean clone passes or fails the same way every
# run (CI runs the README's command as is); BT_HYPOTHESIS_EXPLORE=1 explores new examples (failures found that
# way become explicit tests, as in test_arena.py)
_hypothesis_settings.register_profile("fixed", derandomize=True, print_blob=True)
if not os.environ.get("BT_HYPOTHESIS_EXPLORE"):
    _hypothesis_settings.load_profile("fixed")


@pytest.fixture(scope="session", autouse=True)
def private_daemon_dirs(tmp_path_factory):
    """Builds started by the tests (SCons plans through the planner daemon) get a daemon and a plan
    cache of their own, never the user's; the daemon is stopped when the session ends."""
    d = tmp_path_factory.mktemp("bt-daemon")
    keys = ("BUILDTOOL_RUNTIME_DIR", "BUILDTOOL_CACHE_DIR")
    old = {k: os.environ.get(k) for k in keys}
    os.environ["BUILDTOOL_RUNTIME_DIR"], os.environ["BUILDTOOL_CACHE_DIR"] = str(d / "run"), str(d / "cache")
    yield
    subprocess.run([sys.executable, "-m", "buildtool.cli", "daemon", "stop"], capture_output=True, timeout=60,
                   cwd=ROOT)
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def model_calls(src: str, fn: str) -> list:
    """(function, layer index) of each call in model.c of a function matching regex fn (no capturing group): a layer's
    own call (fn(&opN_p, ...)) or its row of a run's table bt_runN (model_c._call_runs: consecutive layers calling
    kernels of one signature on their parameters, arena pointers and integer constants alone), whose loop calls one
    kernel (fn(r->p, ...), fn(&r->p, ...)) or each row's (r->fn, the row's kernel after its parameters: &opN_p, or
    the struct itself after its /* op N */)."""
    out = [(m.group(1), int(m.group(2))) for m in re.finditer(rf"  ({fn})\(&op(\d+)_p", src)]
    for t in re.finditer(r"static const struct (bt_run\d+) \{.*?\} \1\[\d+\] = \{\n(.*?)\n *\};", src, re.S):
        call = re.search(rf"const struct {t[1]} \*r = &{t[1]}\[i\];\n.*\n\s*(r->fn|\w+)\(", src)
        ops = [int(k) for k in re.findall(r"(?:&op|/\* op )(\d+)", t[2])]
        fns = (re.findall(r"(?:&op\d+_p|\}), ([A-Za-z_]\w*)", t[2]) if call[1] == "r->fn"
               else [call[1]] * len(ops))
        out += [(f, o) for f, o in zip(fns, ops) if re.fullmatch(fn, f)]
    return sorted(out, key=lambda c: c[1])

def load_file(name: str, path, search_beside: bool = False):
    """The Python file at path (a benchmark, a script, the SCons tool) imported as module `name`, once a
    session (sys.modules keeps it: a dataclass in it needs its module there); search_beside: its folder goes on
    sys.path first, for a benchmark that imports its neighbours."""
    if name in sys.modules:
        return sys.modules[name]
    path = Path(path)
    if search_beside and str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


def shared_model(name: str) -> Path:
    p = SHARED_MODELS / f"{name}.tflite"
    if not p.exists():
        pytest.skip(f"{p} not present (../shared is only on CI and developer machines)")
    return p


def reference_outputs() -> dict:
    p = SHARED_MODELS / "reference_outputs.json"
    if not p.exists():
        pytest.skip("reference_outputs.json not present")
    return json.loads(p.read_text())["models"]


def fixed_input(shape, seed: int = 0) -> np.ndarray:
    """The input reference_outputs.json was made with."""
    return np.random.default_rng(seed).integers(-128, 128, size=tuple(shape), dtype=np.int8)


# Builtin codes of the operators the tflite-micro package's interpreter does not register: their oracle is
# TensorFlow Lite's reference kernels (GELU: 150).
TFLITE_ORACLE_OPS = {150: "GELU"}


def uses_tflite_oracle(model_bytes: bytes) -> bool:
    import tflite

    m = tflite.Model.GetRootAs(model_bytes, 0)
    return any(m.OperatorCodes(i).BuiltinCode() in TFLITE_ORACLE_OPS for i in range(m.OperatorCodesLength()))


# TensorFlow Lite's reference interpreter runs in one helper process per test process: with TensorFlow imported,
# OR-Tools' CP-SAT (the exact packer) crashes the process (a segmentation fault in the next plan_arena that
# solves), so no test process imports TensorFlow for an oracle. Requests and answers are pickled over its stdio.
_TFLITE_REF_LOOP = r"""
import os, pickle, sys
import numpy as np
out = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)  # TensorFlow's own prints go to stderr, the answers alone to the pipe
import tensorflow as tf
while True:
    try:
        model, inputs, n = pickle.load(sys.stdin.buffer)
    except EOFError:
        break
    try:
        ip = tf.lite.Interpreter(model_content=model,
                                 experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF)
        ip.allocate_tensors()
        for d, x in zip(ip.get_input_details(), inputs):
            ip.set_tensor(d["index"], np.asarray(x, d["dtype"]).reshape(d["shape"]))
        ip.invoke()
        answer = ("ok", [np.array(ip.get_tensor(d["index"])) for d in ip.get_output_details()[:n]])
    except Exception as e:
        answer = ("error", f"{type(e).__name__}: {e}")
    pickle.dump(answer, out)
    out.flush()
"""
_tflite_ref = []


def tflite_ref_run(model_bytes: bytes, inputs: list, n_outputs: int = 1) -> list:
    """Run TensorFlow Lite's reference kernels (OpResolverType.BUILTIN_REF): the oracle of TFLITE_ORACLE_OPS, in
    the helper process (_TFLITE_REF_LOOP; RuntimeError with its message when the interpreter fails)."""
    import atexit
    import pickle

    if not _tflite_ref or _tflite_ref[0].poll() is not None:
        proc = subprocess.Popen([sys.executable, "-c", _TFLITE_REF_LOOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if not _tflite_ref:
            atexit.register(lambda: _tflite_ref[0].stdin.close() or _tflite_ref[0].wait(timeout=30))
        _tflite_ref[:] = [proc]
    proc = _tflite_ref[0]
    pickle.dump((bytes(model_bytes), [np.asarray(x) for x in inputs], n_outputs), proc.stdin)
    proc.stdin.flush()
    status, answer = pickle.load(proc.stdout)
    if status != "ok":
        raise RuntimeError(answer)
    return answer


def tflm_run(model_bytes: bytes, inputs: list, n_outputs: int = 1) -> list:
    """Run TFLite Micro's reference interpreter (the correctness oracle); a model with an operator TFLite Micro
    does not register (TFLITE_ORACLE_OPS: GELU) runs on TensorFlow Lite's reference kernels instead."""
    if uses_tflite_oracle(model_bytes):
        return tflite_ref_run(model_bytes, inputs, n_outputs)
    from tflite_micro import runtime

    # TFLM's default arena (10x the file) is too small for tiny files with large activations
    ip = runtime.Interpreter.from_bytes(model_bytes, arena_size=max(10 * len(model_bytes), 1 << 20))
    for i, x in enumerate(inputs):
        ip.set_input(x, i)
    ip.invoke()
    return [np.array(ip.get_output(k)) for k in range(n_outputs)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On CI (CI=true) nothing may be skipped: the toolchains, QEMU and ../shared are all there,
    so a skip would only hide a broken install."""
    outcome = yield
    rep = outcome.get_result()
    if os.environ.get("CI") == "true" and rep.skipped and not hasattr(rep, "wasxfail"):
        rep.outcome = "failed"
        rep.longrepr = f"skipped on CI, where nothing may be skipped: {rep.longrepr}"


def run_app(board: str, elf, x, tmp) -> tuple:
    """(output bytes, log) of one run of an application built from the examples (or the harness):
    natively with the input on stdin, or in the board's emulator with input.bin/output.bin in tmp."""
    from buildtool import targets

    t = targets.get(board)
    data = np.ascontiguousarray(x).tobytes()
    if t.port.native:
        p = subprocess.run(t.port.run_command(t, elf), input=data, capture_output=True, timeout=60)
        out, log = p.stdout, p.stderr.decode()
    else:
        tmp = Path(tmp)
        (tmp / "output.bin").unlink(missing_ok=True)
        (tmp / "input.bin").write_bytes(data)
        p = subprocess.run(t.port.run_command(t, elf), cwd=tmp, capture_output=True, timeout=120)
        out = (tmp / "output.bin").read_bytes() if (tmp / "output.bin").exists() else b""
        log = (p.stdout + p.stderr).decode()
    assert p.returncode == 0, log
    return out, log


def wait_until(cond, timeout: float = 10.0) -> bool:
    """Poll cond every 20 ms until it holds (True) or timeout seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
