"""C for pipelined blocks (fusion/pipeline.py): each block of a group becomes a row function
fx_block<k>_row(r) (one tile row; the first zeroes an accumulator, the last finishes it), and
model_invoke runs the group's rows in the planned pull order (fusion.schedule.pull_order) from a table.
A block's window pool sits at its own offset per tile row: the table fx<k>_base[r]."""

from __future__ import annotations

from ..plan.fusion.schedule import pull_order
from .c_text import c_local_array


def row_header(plan, k: int, n_rows: int) -> str:
    """The row function's first line, after the window pool offsets of its tile rows (if any)."""
    head = f"static void fx_block{k}_row(int r) {{"
    if k not in plan.window_base:
        return head
    bases = ", ".join(str(int(b)) for b in plan.window_base[k])
    return f"static const uint32_t fx{k}_base[{n_rows}] = {{{bases}}};\n{head}"


def invoke_group(e, plan, k: int) -> None:
    """When k is the last block of a pipelined group: model_invoke runs the group's tile rows in
    pull order (one profile region for the whole group)."""
    grp = next(grp for grp in plan.schedule.pipelined if k in grp)
    if k != grp[-1]:
        return
    blocks = [plan.schedule.items[j] for j in grp]
    order = pull_order(blocks)
    steps = ", ".join(str(j) for j, _ in order)
    e.declare(f"static const uint8_t fx_pipe{grp[0]}[{len(order)}] = {{{steps}}};")
    calls = "\n".join(f"      case {j}: fx_block{grp[j]}_row(row[{j}]++); break;" for j in range(len(grp)))
    first, last = blocks[0], blocks[-1]
    e.body.append(f"  /* pipelined blocks ops {first.p}..{last.q - 1}: {len(order)} tile rows interleaved */\n"
                  f"  BT_PROFILE_BEGIN({first.p});\n"
                  f"  {{ {c_local_array('int', 'row', [0] * len(grp))}"
                  f"    for (int i = 0; i < {len(order)}; i++)\n"
                  f"      switch (fx_pipe{grp[0]}[i]) {{\n{calls}\n      }}\n  }}\n"
                  f"  BT_PROFILE_END({first.p});")
