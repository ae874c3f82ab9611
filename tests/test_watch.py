"""`buildtool watch`: a real watcher process (watchdog, inotify) on a real folder, saves made as an editor
makes them; which rebuilds ran and what they printed."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT
from edits import tiny_bytes

TIMEOUT = 120


class Watcher:
    """`buildtool watch ...` in tmp, its stdout and stderr read line by line as they come."""

    def __init__(self, cwd, *args):
        env = dict(os.environ, PYTHONPATH=str(ROOT), BUILDTOOL_NO_DAEMON="1")
        self.p = subprocess.Popen([sys.executable, "-m", "buildtool.cli", "watch", *map(str, args)], cwd=cwd,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.seen: list = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, prefix: str) -> list:
        """Lines up to and including the first one starting with prefix."""
        got, end = [], time.monotonic() + TIMEOUT
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            got.append(line)
            self.seen.append(line)
            if line.startswith(prefix):
                return got
        self.p.kill()
        raise AssertionError(f"no line starting {prefix!r}; output so far:\n" + "\n".join(self.seen))

    def finish(self) -> int:
        rc = self.p.wait(timeout=TIMEOUT)
        rest = []
        while (line := self.lines.get(timeout=5)) is not None:
            rest.append(line)
        self.seen += rest
        return rc


def save(path: Path, data: bytes) -> None:
    """As editors save: a temporary file renamed over the original."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_model_watch_rebuilds_once_per_burst_only_on_new_bytes(tmp_path):
    model = tmp_path / "tiny.tflite"
    model.write_bytes(tiny_bytes())
    w = Watcher(tmp_path, model.name, "--board", "host", "--run", "--rounds", "3")
    first = w.until("watching")
    assert any(x.startswith("built build/host/tiny/firmware.elf") and "plan.json" in x and "model.c" in x
               for x in first), first
    assert any(x.startswith("host: RAM ") and "arena 6.0 KiB" in x and "flash" in x for x in first), first
    assert any(x.startswith("ran on host: class ") for x in first), first

    # a burst of saves 0.3 s apart: one rebuild, of the last bytes; only the weights (and so the image) change
    for k in (1, 2, 3):
        save(model, tiny_bytes(k))
        time.sleep(0.3)
    got = w.until("ran on host")
    assert got[0] == "changed: tiny.tflite", got
    built = [x for x in got if x.startswith("built ")]
    assert len(built) == 1 and built[0].endswith("changed: firmware.elf, weights.bin"), got

    # the same bytes saved again: nothing; then a truncated save: one error line, the watch goes on
    time.sleep(1.0)
    save(model, tiny_bytes(3))
    time.sleep(1.0)
    save(model, tiny_bytes(3)[:100])
    got = w.until("buildtool: error:")
    assert got[0] == "changed: tiny.tflite" and len(got) == 2 and "Traceback" not in got[1], got
    assert "tiny.tflite" in got[1], got

    save(model, tiny_bytes())  # back to the original weights: they change again
    got = w.until("ran on host")
    assert [x for x in got if x.startswith("built ")][0].endswith("changed: firmware.elf, weights.bin"), got
    assert w.finish() == 0
    assert sum(x.startswith("built ") for x in w.seen) == 3, w.seen  # initial + 2 (not the same-bytes save)



@pytest.mark.parametrize("board", ["host", "cortex-m4", "riscv32"])
def test_watch_started_over_an_up_to_date_build_changes_nothing(tmp_path, board):
    """The same inputs give the same bytes (the ELF too: no temporary object name in its symbols), so a
    watch started again over its own build lists no changed output."""
    model = tmp_path / "tiny.tflite"
    model.write_bytes(tiny_bytes())
    for expect in ("plan.json", "changed: nothing"):
        w = Watcher(tmp_path, model.name, "--board", board, "--rounds", "0")
        built = [x for x in w.until("watching") if x.startswith("built ")]
        assert len(built) == 1 and (expect in built[0] if expect == "plan.json" else built[0].endswith(expect)), built
        assert w.finish() == 0


def test_command_watch_reruns_the_users_build_and_ignores_outputs(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "build").mkdir()
    main_c = tmp_path / "src" / "main.c"
    main_c.write_text("int main(void) { return 0; }\n")
    cmd = f"{sys.executable} -c \"import sys; open('runs.txt', 'a').write('x'); print('user build ran')\""
    w = Watcher(tmp_path, "--command", cmd, "--path", "src", "--path", "build", "--rounds", "1")
    assert w.until("watching")[0] == "user build ran"
    (tmp_path / "build" / "main.o").write_bytes(b"\0")  # an output: ignored
    (tmp_path / "src" / "main.c~").write_text("backup")  # an editor's backup: ignored
    time.sleep(1.0)
    main_c.write_text("int main(void) { return 1; }\n")
    got = w.until(cmd.split()[0])
    assert got == ["changed: src/main.c", "user build ran", got[-1]] and ": ok in " in got[-1], got
    assert w.finish() == 0
    assert (tmp_path / "runs.txt").read_text() == "xx"


@pytest.mark.parametrize("args, msg", [
    (["tiny", "--board", "nope"], "unknown board"),
    (["--command", "true", "--path", "missing"], "--path missing: no such file or folder"),
    ([], "give a model to watch"),
])
def test_bad_watch_arguments_are_one_line(tmp_path, args, msg):
    r = subprocess.run([sys.executable, "-m", "buildtool.cli", "watch", *args], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and msg in r.stderr, r.stderr
