"""buildtool's arena plan inside the .tflite, run by TensorFlow Lite Micro (`buildtool export --format tflm`).

For every model of ../shared/models, ../shared/models/mlperf-tiny and ../shared/models/real: TFLite Micro's
arena head (the non-persistent section its RecordingMicroAllocator reports after allocating: tensors and
scratch buffers) for the original file and for the planned one, and the outputs of both files on several
random inputs, run in sequence on one interpreter each (stateful models carry their state alike), by TFLite
Micro (tflite_micro.runtime) and by TensorFlow Lite (tf.lite.Interpreter, in a separate process: TensorFlow
and OR-Tools' CP-SAT do not share a process). Prints the table of docs/tflm.md, then the total and the largest
saving; --write-docs puts the table there. Exit 1 when a head grows or an output differs.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from docs_tables import Out, environment, write_docs  # noqa: E402

from buildtool.errors import ModelError  # noqa: E402
from buildtool.model import offline_plan  # noqa: E402
from buildtool.options import PlanOptions  # noqa: E402
from buildtool.pipeline.tflm_export import planned_model, sample_inputs, tflm_head, tflm_outputs  # noqa: E402

SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
FOLDERS = ("", "mlperf-tiny", "real")

# TensorFlow Lite runs in a helper process that imports TensorFlow once and forks a child per file: a child
# that TensorFlow Lite brings down (it corrupts its heap on tflm_keyword_scrambled_8bit, original as well) costs
# only that file's answer, and the crash is that file's own.
_TFLITE = r"""
import os, pickle, sys
import numpy as np
out = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
import tensorflow as tf


def run(model, inputs):
    try:
        ip = tf.lite.Interpreter(model_content=model)
        ip.allocate_tensors()
        outs = []
        for xs in inputs:
            for d, x in zip(ip.get_input_details(), xs):
                ip.set_tensor(d["index"], np.asarray(x, d["dtype"]).reshape(d["shape"]))
            ip.invoke()
            outs.append([np.array(ip.get_tensor(d["index"])).tobytes() for d in ip.get_output_details()])
        return ("ok", outs)
    except Exception as e:
        return ("error", f"{type(e).__name__}: {e}")


answers = []
for model, inputs in pickle.load(sys.stdin.buffer):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        with os.fdopen(w, "wb") as f:
            pickle.dump(run(model, inputs), f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        got = f.read()
    _, status = os.waitpid(pid, 0)
    answers.append(pickle.loads(got) if status == 0 and got else ("crash", f"exit status {status}"))
pickle.dump(answers, out)
out.flush()
"""


def models():
    for folder in FOLDERS:
        d = SHARED / folder if folder else SHARED
        for p in sorted(d.glob("*.tflite")):
            yield (f"{folder}/{p.stem}" if folder else p.stem), p


def tflite_outputs(jobs: list) -> list:
    """For each (model bytes, inputs) job: ("ok", outputs) of TensorFlow Lite over the inputs in sequence,
    ("error", message) when it refuses the model, ("crash", ...) when it brings its process down."""
    p = subprocess.run([sys.executable, "-c", _TFLITE], input=pickle.dumps(jobs), capture_output=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"the TensorFlow Lite helper failed: {p.stderr.decode(errors='replace')[-400:]}")
    return pickle.loads(p.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=3, help="random inputs per model (default 3)")
    ap.add_argument("--time-budget", type=float, default=2.0, help="planning seconds per model (default 2)")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the generated table of docs/tflm.md")
    a = ap.parse_args(argv)
    if not SHARED.is_dir():
        sys.exit(f"no models at {SHARED}; set BUILDTOOL_SHARED to the shared folder (the one holding models/)")
    rows, jobs = [], []
    for name, path in models():
        data = path.read_bytes()
        try:
            planned, info = planned_model(str(path), PlanOptions(time_budget=a.time_budget))
        except ModelError as e:  # not written: the original stays, its head unchanged
            rows.append((name, None, (str(e).split(": ", 1)[-1].split(";")[0], tflm_head(data),
                                      len(offline_plan.operator_outputs(data))), None))
            continue
        xs = sample_inputs(data, a.inputs, seed=len(rows))
        same_tflm = tflm_outputs(data, xs) == tflm_outputs(planned, xs)
        rows.append((name, info, same_tflm, len(jobs)))
        jobs += [(data, xs), (planned, xs)]
    answers = tflite_outputs(jobs)

    out = Out()
    out(f"Measured {environment()}; `python3 benchmarks/tflm_plan.py --inputs {a.inputs} "
        f"--time-budget {a.time_budget:g}`.\n")
    out("| model | operators | TFLM head, original | TFLM head, planned | saving | our arena (with TFLM's scratch) "
        "| planned tensors | in-place ops | outputs, TFLM | outputs, TFLite |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    bad, total, best, heads = 0, 0, (0, "", 0), [0, 0]
    for name, info, same_tflm, j in rows:
        if info is None:
            why, head, n_ops = same_tflm
            heads[0] += head
            heads[1] += head
            out(f"| {name} | {n_ops} | {head:,} | {head:,} (original kept) | 0 (0.0%) | | 0 | 0 "
                f"| not written: {why} | |")
            continue
        (s0, o0), (s1, o1) = answers[j], answers[j + 1]
        same_tfl = s0 == s1 == "ok" and o0 == o1
        tfl = "identical" if same_tfl else "differ"
        if s0 == s1 == "crash":  # TensorFlow Lite's own defect, on the original file too: not ours
            same_tfl, tfl = True, "TensorFlow Lite crashes on both files (its heap corrupted)"
        elif "ok" != s0 or "ok" != s1:
            tfl = f"{s0} / {s1}: {(o0 if s0 != 'ok' else o1)[:60]}"
        saving = info.head_before - info.head_after
        heads[0] += info.head_before
        heads[1] += info.head_after
        total += saving
        if saving > best[0]:
            best = (saving, name, info.head_before)
        bad += (saving < 0) + (not same_tflm) + (not same_tfl)
        planned = sum(1 for o in info.offsets if o != offline_plan.ONLINE)
        out(f"| {name} | {len(info.order)} | {info.head_before:,} | {info.head_after:,} | {saving:,} "
            f"({100.0 * saving / info.head_before:.1f}%) | {info.arena_bytes:,} | {planned} | {len(info.inplace_ops)} "
            f"| {'identical' if same_tflm else 'differ'} | {tfl} |")
    out()
    out(f"Total saving {total:,} B over {len(rows)} models ({sum(1 for r in rows if r[1] is not None)} written): "
        f"TFLite Micro's heads add up to {heads[0]:,} B as they are and {heads[1]:,} B planned; the largest saving "
        f"{best[0]:,} B ({best[1]}, {100.0 * best[0] / max(best[2], 1):.1f}% of its head).")
    if a.write_docs:
        write_docs("docs/tflm.md", "tflm_plan.py", out.text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
