"""Instructions a fused plan's firmware should execute, predicted from the plain firmware's measured
per-operator counts: the goal and the regression bound tests/test_fused_firmware.py holds it to
(docs/fusion.md, "Firmware instructions").
"""

from __future__ import annotations

from ...model.ops import op_macs
from .schedule import BlockRun

INSTRUCTION_MARGIN = 1.3  # goal: fused firmware within this factor of predict_instructions
# Boards that meet it on the least-RAM plans tests/test_fused_firmware.py holds (docs/fusion.md has the
# figures from benchmarks/fusion.py --instructions); elsewhere INSTRUCTION_BOUND is a regression guard
# some 10% above the worst measured case (riscv32: its one-output-channel conv path, which the
# channel-by-channel blocks run, costs more per MAC than its plain kernels).
INSTRUCTION_BOARDS = ("cortex-m4",)
INSTRUCTION_BOUND = 1.6
# boards held to their own regression guard, some 10% above their measured worst case: cortex-m55 (Helium),
# whose plain firmware runs 2.8 times fewer instructions than cortex-m4's (mbv2-w0.35: 26.3 M against 74.2 M)
# while the tile runtime's per-call set-up (filter sums, geometry) and the channel-by-channel scheme's
# one-channel paths shrink less (mbv2-w0.35 least-RAM: fused / predicted 2.09, docs/kernels.md "Helium")
INSTRUCTION_BOUNDS = {"cortex-m55": 2.3}


def predict_instructions(g, plan, plain_counts: dict) -> int:
    """Instructions the fused plan's firmware should execute, from the plain firmware's measured
    per-operator counts (op index -> instructions, same board and kernels): a plain item as
    measured, a block as its operators' plain instructions times the block's MAC overhead over
    them (a tile runtime running the same kernels at the same instructions per MAC)."""
    return sum(n for _, n in predict_items(g, plan, plain_counts))


def predict_items(g, plan, plain_counts: dict) -> list:
    """predict_instructions per schedule item: [(item, instructions)] in schedule order."""
    out = []
    for it in plan.schedule.items:
        if not isinstance(it, BlockRun):
            out.append((it, plain_counts[it]))
            continue
        ops = range(it.p, it.q)
        plain = sum(plain_counts[i] for i in ops)
        base = sum(op_macs(g, g.operators[i]) for i in ops)
        out.append((it, round(plain * it.macs(g) / base) if base else plain))
    return out
