"""Record (or check) the sha256 of every generated file for every zoo and shared model.

    python3 scripts/golden_outputs.py --write          # tests/data/golden_outputs.json
    python3 scripts/golden_outputs.py --write --model tiny   # re-record these models' cases only
    python3 scripts/golden_outputs.py                  # compare; print the cases that differ

The refactors of issue 11 (one pipeline, one options type, one plan contract) must leave every
plan.json, model.c, model.h and weights.bin byte-identical; tests/test_golden.py checks this
file against what the current code makes. A case whose planner refuses it records the error's
class and message instead (a refusal must stay the same refusal).

Each case plans once per option set and generates for two boards (cortex-m4, riscv32: different
kernel sets and weight alignment).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOLDEN = ROOT / "tests" / "data" / "golden_outputs.json"
SHARED = Path(os.environ.get("BUILDTOOL_SHARED", ROOT.parent / "shared")) / "models"
BOARDS = ("cortex-m4", "riscv32")
FILES = ("plan.json", "model.c", "model.h", "weights.bin")
# option sets, in the vocabulary every path accepts (planner keyword arguments)
OPTION_SETS = {
    "plain": {},
    "align8-model-order-no-inplace": {"align": 8, "order_search": False, "inplace": False},
    "optimize-ram": {"optimize": "ram"},
    "optimize-ram-uncapped": {"optimize": "ram", "max_mac_overhead": "none"},
    "streamed": {"optimize": "ram", "input_streamed": True},
    "band-input-0": {"optimize": "ram", "band_input": False},
    "split-auto": {"splits": "auto"},
    "split-0-1-2": {"splits": [[0, 1, 2]]},
    "split-0-0-2": {"splits": [[0, 0, 2]]},
    "macs-under-limit": {"optimize": "macs", "ram_limit": "plain"},  # the plain plan's arena bytes
}
SMALL = ("tiny", "tiny_cnn_32", "dscnn_kws", "resnet_concat_64", "tflm_hello_world_int8",
         "mlperftiny_kws_ref_model", "tflm_keyword_scrambled_8bit", "tflm_trained_lstm_int8",
         "seanet_conv-conv0", "seanet_add-add0")


def models() -> dict:
    """name -> zoo name or model path (shared models only when ../shared is there)."""
    from buildtool import zoo

    out = {n: n for n in zoo.names()}
    for d in (SHARED, SHARED / "real"):
        for p in sorted(d.glob("*.tflite")) if d.is_dir() else ():
            out[p.stem] = str(p)
    return out


def _sha(path: Path) -> str:
    """sha256 of the file; for plan.json without the "layout" key a fused plan gained in issue 11
    (the schedule and offsets that let it be read back; every other byte is as before)."""
    data = path.read_bytes()
    if path.name == "plan.json":
        d = json.loads(data)
        if "layout" in d:
            del d["layout"]
            data = (json.dumps(d, indent=1) + "\n").encode()
    return hashlib.sha256(data).hexdigest()


def case(name: str, spec: str, opt_name: str, plain_arena: int | None = None) -> dict:
    """{board: {file: sha256}} or {"error": "Class: message"} for one model and option set."""
    from buildtool import pipeline
    from buildtool.errors import BuildtoolError

    opts = dict(OPTION_SETS[opt_name])
    if opts.get("ram_limit") == "plain":
        opts["ram_limit"] = plain_arena
    try:
        model = pipeline.read_model(spec)
        pipeline.check(model)
        plan = pipeline.plan_memory(model.graph, pipeline.PlanOptions.from_map(opts))
        out = {}
        for board in BOARDS:
            with tempfile.TemporaryDirectory() as tmp:
                pipeline.generate(model, plan, board, tmp)
                out[board] = {f: _sha(Path(tmp) / f) for f in FILES}
        out["arena_bytes"] = plan.arena_bytes
        return out
    except BuildtoolError as e:
        return {"error": f"{type(e).__name__}: {e}"}


def all_cases(names=None, option_sets=None, progress=False) -> dict:
    run = case
    out = {}
    for name, spec in models().items():
        if names is not None and name not in names:
            continue
        plain = None
        for opt_name in option_sets or OPTION_SETS:
            if plain is None and opt_name == "macs-under-limit":
                plain = run(name, spec, "plain").get("arena_bytes")
            r = run(name, spec, opt_name, plain)
            if opt_name == "plain":
                plain = r.get("arena_bytes")
            out[f"{name}/{opt_name}"] = r
            if progress:
                print(f"{name}/{opt_name}: {r.get('error', r.get('arena_bytes'))}", file=sys.stderr, flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write tests/data/golden_outputs.json")
    ap.add_argument("--model", action="append", help="only these models")
    a = ap.parse_args()
    got = all_cases(a.model, progress=True)
    if a.write:
        if a.model and GOLDEN.exists():  # the other models' cases stay as recorded
            got = {**json.loads(GOLDEN.read_text()), **got}
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(got)} cases to {GOLDEN}")
        return 0
    want = json.loads(GOLDEN.read_text())
    bad = [k for k in got if want.get(k) != got[k]]
    for k in bad:
        print(f"DIFFERS {k}: {want.get(k)} -> {got[k]}")
    print(f"{len(got) - len(bad)} of {len(got)} cases identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
