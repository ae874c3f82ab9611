"""Fused and split plans on the xcore board (the xcore kernel set and its tile runtime, kernels/xcore/fused.c,
on the VPU C model): every output byte for byte equal to TensorFlow Lite Micro's, and the arena symbol the
plan's arena_bytes.

tests/test_fused_firmware.py runs the same checks on host, cortex-m4 and riscv32; kernel_test.c checks
the tile runtime of every set call by call against the reference set (on xcore also that no VPU
operand is unaligned).
"""

from __future__ import annotations

import pytest
from test_fused_firmware import check

from buildtool import targets


@pytest.mark.parametrize("name,setting", [("tiny", "ram"), ("tiny", "ram-streamed"), ("tiny", "split-explicit"),
                                          ("mcunet-vww1", "ram"), ("shared:tiny_cnn_32", "ram")])
def test_xcore_fused_bit_exact(name, setting, tmp_path):
    if targets.get("xcore").missing_tools():
        pytest.skip("xcore board tools missing")
    check(name, setting, "xcore", tmp_path)
