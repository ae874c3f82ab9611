"""Issue 32: an optimiser never returns more RAM than planning layer by layer (the promise broken on a
NASNet-like network, where the fusion planner's own no-fusion schedule, packed by heuristics, came to
1.4x the arena planner's exact plan). Checked through `buildtool plan --json`, as a user sees it, on the
zoo, the shared models and generated NASNet-like graphs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED

from buildtool import cli, zoo
from buildtool.model.writer import serialize
from buildtool.plan.arena.planner import plan_arena
from buildtool.plan.fusion.planner import plan_fused
from buildtool.zoo.synthetic import nasnet_like


def _arena(capsys, model: str, *opts: str) -> dict:
    capsys.readouterr()
    assert cli.main(["plan", model, "--json", "--no-daemon", *opts]) == 0
    return json.loads(capsys.readouterr().out)


def _models():
    shared = sorted(Path(SHARED, "models").glob("*.tflite")) + sorted(Path(SHARED, "models", "mlperf-tiny").glob("*.tflite"))
    return ["tiny", "mbv2-w0.35", "mcunet-vww1", "nasnet-6", "nasnet-12"] + [str(p) for p in shared]


@pytest.mark.parametrize("model", _models(), ids=lambda m: Path(m).stem)
def test_optimize_ram_and_split_auto_are_never_worse_than_plain(model, tmp_path, capsys):
    if model.startswith("nasnet-"):
        path = tmp_path / f"{model}.tflite"
        path.write_bytes(serialize(nasnet_like(int(model.split("-")[1]))))
        model = str(path)
    plain = _arena(capsys, model)["arena_bytes"]
    for opts in (["--optimize", "ram"], ["--optimize", "ram", "--max-mac-overhead", "none"], ["--split", "auto"]):
        got = _arena(capsys, model, *opts)["arena_bytes"]
        assert got <= plain, (opts, got, plain)
    # the fewest MACs within the plain plan's RAM: never a plan above that limit
    got = _arena(capsys, model, "--optimize", "macs", "--ram-limit", str(plain))
    assert got["arena_bytes"] <= plain


def test_the_nasnet_like_case_is_one_where_the_fused_search_alone_loses(capsys, tmp_path):
    """Why the comparison is needed: on this graph the fusion planner alone returns more than the plain
    plan, and `plan --optimize ram` returns the plain plan's bytes (if the fused planner ever wins here,
    this test should move to a graph where it still loses)."""
    g = nasnet_like(6)
    plain, fused = plan_arena(g).arena_bytes, plan_fused(g, optimize="ram").arena_bytes
    assert fused > plain
    path = tmp_path / "n.tflite"
    path.write_bytes(serialize(g))
    assert _arena(capsys, str(path), "--optimize", "ram")["arena_bytes"] == plain
