"""benchmarks/code_size.py's split of our code into the harness and the model: the harness's bytes (its symbols named by
compiling each firmware_src source alone, nm -S of the trial link, plus their string literals) against the debug
information's own attribution of the linked symbols to firmware_src files (nm -l)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

from buildtool import pipeline, targets
from buildtool.firmware import toolchain
from buildtool.firmware.library import model_opcodes, model_sources
from buildtool.options import PlanOptions

sys.path.insert(0, str(ROOT / "benchmarks"))
import code_size  # noqa: E402


@pytest.mark.parametrize("board", ["cortex-m4", "riscv32"])
def test_harness_bytes_are_the_firmware_src_symbols(board, tmp_path):
    t = targets.get(board)
    if t.missing_tools():
        pytest.skip(f"{board}'s toolchain is not installed")
    m = pipeline.read_model("tiny")
    files = pipeline.code(m, pipeline.plan_memory(m.graph, PlanOptions()), board, PlanOptions())
    kernels = model_sources(t, model_opcodes(m.graph), False)
    (tmp_path / "e").mkdir()
    elf = toolchain.trial_elf(t, files["model.c"], files["model.h"], tmp_path / "e", kernels)
    harness = code_size.harness_bytes(t, elf, kernels, tmp_path / "e")
    rows = [line.split() for line in subprocess.run([t.binutil("nm"), "-S", "-l", "--defined-only", str(elf)],
                                                    capture_output=True, text=True, check=True).stdout.splitlines()]
    by_dwarf = {f[3]: int(f[1], 16) for f in rows
                if len(f) == 5 and "/firmware_src/" in f[4] and f[2] not in "bB"}
    assert "bt_main" in by_dwarf and "model_invoke" not in by_dwarf
    # the symbols nm -l places in firmware_src, and their string literals (unnamed: no file to read; the harness's
    # messages and its report's keys, ~300 B)
    assert 200 < harness - sum(by_dwarf.values()) < 400
    assert harness < toolchain.code_bytes(t, files["model.c"], files["model.h"], kernels) / 4
    if board == "cortex-m4":
        assert by_dwarf["bt_vectors"] == 16 * 4  # the system exceptions only
