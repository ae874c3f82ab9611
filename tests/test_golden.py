"""Every generated plan.json, model.c, model.h and weights.bin is byte-identical to the recording made
before issue 11's refactor (scripts/golden_outputs.py), for every zoo and shared model, on two boards,
under eleven option sets; refusals stay the same refusals. Small models run by default, the rest in
the slow suite."""

import json

import pytest
from conftest import ROOT, SHARED_MODELS, load_file

golden = load_file("golden_outputs", ROOT / "scripts" / "golden_outputs.py")

WANT = json.loads(golden.GOLDEN.read_text())
MODELS = golden.models()


def _params():
    for key in sorted(WANT):
        name, opt = key.split("/", 1)
        marks = [] if name in golden.SMALL else [pytest.mark.slow]
        yield pytest.param(name, opt, id=key, marks=marks)


@pytest.mark.parametrize("name,opt", list(_params()))
def test_generated_files_unchanged(name, opt):
    if name not in MODELS:
        pytest.skip(f"{name} is a model of {SHARED_MODELS}, which is not present")
    plain = WANT.get(f"{name}/plain", {}).get("arena_bytes")
    assert golden.case(name, MODELS[name], opt, plain) == WANT[f"{name}/{opt}"]
