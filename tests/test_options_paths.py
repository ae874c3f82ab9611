"""Every planning option means the same on every path: the plan from the CLI in this process, the
CLI through the planner daemon, the pipeline API and a SCons build are byte-identical, for each
option set (issue 11); bad values are one line naming the option on each path."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from buildtool import pipeline
from buildtool.errors import UsageError
from buildtool.options import PlanOptions

# (CLI flags, SCons build variables, PlanOptions map)
CASES = {
    "plain": ([], {}, {}),
    "optimize-ram": (["--optimize", "ram"], {"optimize": "ram"}, {"optimize": "ram"}),
    "optimize-macs-limit": (["--optimize", "macs", "--ram-limit", "4KiB"], {"optimize": "macs", "ram_limit": "4KiB"},
                            {"optimize": "macs", "ram_limit": 4096}),
    "input-streamed": (["--input-streamed"], {"input_streamed": "1"}, {"input_streamed": True}),
    "explicit-splits": (["--split", "0:0:2"], {"splits": "0:0:2"}, {"splits": [[0, 0, 2]]}),
    "band-input-0": (["--optimize", "ram", "--no-band-input"], {"optimize": "ram", "band_input": "0"},
                     {"optimize": "ram", "band_input": False}),
    "model-order-align8": (["--no-order-search", "--align", "8"], {"order_search": "0", "align": "8"},
                           {"order_search": False, "align": 8}),
}
MODEL = "tiny"


def _cli_plan(flags, daemon: bool) -> dict:
    env = dict(os.environ)
    env.pop("BUILDTOOL_NO_DAEMON", None)
    cmd = [sys.executable, "-m", "buildtool.cli", "plan", MODEL, "--json"] + flags + ([] if daemon else ["--no-daemon"])
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    if daemon:
        assert "cache" in d, "the plan did not come through the daemon"
    return {k: v for k, v in d.items() if k not in ("cache", "plan_ms")}


def _scons_plan(variables: dict, out) -> dict:
    cmd = [sys.executable, "-m", "SCons", "-C", str(ROOT), "-Q", "board=host", f"model={MODEL}", f"out={out}"]
    cmd += [f"{k}={v}" for k, v in variables.items()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "firmware.elf").is_file()
    return json.loads((out / "plan.json").read_text())


@pytest.mark.parametrize("name", list(CASES))
def test_every_path_plans_the_same_bytes(name, tmp_path):
    flags, variables, opts = CASES[name]
    api = pipeline.plan_memory(pipeline.read_model(MODEL).graph, PlanOptions.from_map(opts))
    want = json.dumps(api.to_json(pipeline.read_model(MODEL).graph), indent=1)
    assert json.dumps(_cli_plan(flags, daemon=False), indent=1) == want
    assert json.dumps(_cli_plan(flags, daemon=True), indent=1) == want
    assert json.dumps(_scons_plan(variables, tmp_path / "b"), indent=1) == want
    # the options really changed the plan (a case that plans like the default proves nothing)
    if name != "plain":
        plain = pipeline.plan_memory(pipeline.read_model(MODEL).graph, PlanOptions())
        assert json.dumps(plain.to_json(None)) != json.dumps(api.to_json(pipeline.read_model(MODEL).graph))


def test_the_three_builders_agree():
    for name, (flags, variables, opts) in CASES.items():
        from buildtool import cli

        a = cli.build_parser().parse_args(["plan", MODEL] + flags)
        assert PlanOptions.from_args(a) == PlanOptions.from_strings(variables) == PlanOptions.from_map(opts), name


@pytest.mark.parametrize("variables,words", [
    ({"optimize": "fast"}, ["optimize='fast'", "'ram', 'macs'"]),
    ({"align": "12"}, ["align=12", "power of two"]),
    ({"max_mac_overhead": "0.5", "optimize": "ram"}, ["max_mac_overhead=0.5", "'none'"]),
    ({"ram_limit": "lots", "optimize": "macs"}, ["ram_limit", "'lots' is not a size"]),
    ({"splits": "1-2"}, ["splits '1-2'", "TOP:BOTTOM:N"]),
    ({"band_input": "maybe", "optimize": "ram"}, ["band_input='maybe'", "true or false"]),
    ({"ram_limit": "64KiB"}, ["ram_limit needs optimize"]),
    ({"optimize": "macs"}, ["optimize=macs needs ram_limit"]),
    ({"speed": "1"}, ["unknown planning option 'speed'"]),
])
def test_a_bad_value_is_one_line_naming_it(variables, words):
    with pytest.raises(UsageError) as e:
        PlanOptions.from_strings(variables)
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


def test_scons_refuses_a_bad_option_in_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "SCons", "-C", str(ROOT), "-Q", "board=host", "model=tiny",
                        f"out={tmp_path}", "optimize=fast"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert [ln for ln in r.stderr.splitlines() if ln.strip()] == [
        "scons: *** planning option optimize='fast' is invalid: it must be 'ram', 'macs' or none"]


def test_canonical_form_is_one_key_for_equal_meanings():
    assert PlanOptions.from_map({"input_streamed": True}).canonical() == \
        PlanOptions.from_map({"input_streamed": True, "optimize": "ram", "order_search": False}).canonical()
    assert PlanOptions.from_map({}).to_map() == {}
    o = PlanOptions.from_map({"splits": [[0, 0, 2]], "align": 8})
    assert PlanOptions.from_map(o.to_map()) == o


def test_report_shows_the_plans_layer_by_layer_arena(tmp_path, capsys):
    """`report` draws the same layer-by-layer arena `plan` prints (mbv2-w0.35: not the model-order
    packing it once showed), and the optimised plan `plan --optimize ram` makes."""
    from buildtool import cli

    assert cli.main(["plan", "mbv2-w0.35", "--json", "--no-daemon"]) == 0
    plain = json.loads(capsys.readouterr().out)["arena_bytes"]
    assert cli.main(["plan", "mbv2-w0.35", "--json", "--no-daemon", "--optimize", "ram"]) == 0
    fused = json.loads(capsys.readouterr().out)["arena_bytes"]
    assert cli.main(["report", "mbv2-w0.35", "--no-daemon", "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert f"<tr><td>layer by layer</td><td>{plain}</td>" in page
    assert f"<tr><td>optimised</td><td>{fused}</td>" in page
