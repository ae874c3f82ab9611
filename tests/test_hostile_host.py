"""Issue 52.5 and 52.6: nothing unbounded in the planner daemon and the Bazel worker; a gen step the
daemon says it did but whose outputs this process does not see (another mount namespace) runs here."""

from __future__ import annotations

import hashlib
import os

import pytest

from buildtool import cli
from buildtool.cli import gen as gen_cli
from buildtool.serve.daemon import client, protocol


# -- 6. a daemon that writes where the client cannot see ------------------------------------------
class _FakeDaemon:
    """A daemon in another mount namespace: it says the step is done (with the digests it saw) and
    nothing appears here. claim: {path: bytes} the reply says were written."""

    calls = []

    def __init__(self, claim=None):
        self.claim = claim or {}

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def request(self, msg):
        _FakeDaemon.calls.append(msg)
        return {"type": "ok", "done": msg["args"]["step"], "notes": [],
                "outputs": {p: hashlib.sha256(b).hexdigest() for p, b in self.claim.items()}}


@pytest.fixture
def model(tmp_path):
    assert cli.main(["gen", "model", "tiny", "-o", str(tmp_path / "m.tflite"), "--no-daemon"]) == 0
    assert cli.main(["gen", "skeleton", str(tmp_path / "m.tflite"), "-o", str(tmp_path / "want.json"),
                     "--no-daemon"]) == 0
    return tmp_path


@pytest.mark.parametrize("case", ["nothing", "stale file", "claims the right bytes"])
def test_a_gen_step_whose_daemon_outputs_are_not_here_runs_in_this_process(case, model, monkeypatch, capsys):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    out = model / "s.json"
    want = (model / "want.json").read_bytes()
    claim = {}
    if case == "stale file":
        out.write_bytes(b"an earlier build's\n")
        claim = {str(out): want}
    elif case == "claims the right bytes":
        claim = {str(out): want}
    _FakeDaemon.calls = []
    monkeypatch.setattr(gen_cli, "DaemonClient", _FakeDaemon(claim))
    monkeypatch.setattr(client, "_warned", False)
    monkeypatch.chdir(model)
    assert cli.main(["gen", "skeleton", "m.tflite", "-o", "s.json"]) == 0
    assert len(_FakeDaemon.calls) == 1 and out.read_bytes() == want
    err = capsys.readouterr().err
    assert err == ("buildtool: warning: the planner daemon's output s.json is not here (a daemon in another mount "
                   "namespace?); running the step in this process\n"), err


def test_a_gen_step_whose_outputs_are_here_is_not_run_again(model, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    out = model / "s.json"
    out.write_bytes((model / "want.json").read_bytes())  # as the daemon wrote it
    monkeypatch.setattr(gen_cli, "DaemonClient", _FakeDaemon({str(out): out.read_bytes()}))
    monkeypatch.setattr("buildtool.cli.gen_steps.run_step", lambda a: pytest.fail("ran here"))
    assert cli.main(["gen", "skeleton", str(model / "m.tflite"), "-o", str(out)]) == 0


def test_an_output_written_through_never_goes_to_the_daemon(model, monkeypatch):
    monkeypatch.setenv("BUILDTOOL_NO_DAEMON", "0")
    _FakeDaemon.calls = []
    monkeypatch.setattr(gen_cli, "DaemonClient", _FakeDaemon())
    assert cli.main(["gen", "skeleton", str(model / "m.tflite"), "-o", "/dev/null"]) == 0
    assert _FakeDaemon.calls == []


def test_gen_outputs_names_every_file_a_step_writes():
    assert protocol.gen_outputs({"step": "code", "output": "/o", "depfile": "/d"}) == [
        "/o/model.c", "/o/model.h", "/o/firmware.json", "/d"]
    assert protocol.gen_outputs({"step": "flash", "output": "/w.bin", "split_header": "/s.h"}) == ["/w.bin", "/s.h"]
