"""The code plan of a build (codegen/code_budget.py: the kernel variant of each layer, firmware.json's
"code_plan") as an HTML table, for `buildtool report --board B`."""

from __future__ import annotations

import html


def code_plan_html(cp: dict | None, board: str = "") -> str:
    """A section: the preset and budget, the totals against the fastest set's, then one row per layer (op, operator,
    variant, own instance or shared, code bytes, modelled cycles). cp: firmware.json's "code_plan" (None or no
    layers: a line saying the board's model.c has no choice to make)."""
    head = f"<h2 id='code-plan'>Code plan{' on ' + html.escape(board) if board else ''}</h2>\n"
    if not cp or not cp.get("layers"):
        return head + "<p>No layer here has kernel variants to choose from (the board's kernel set calls its dispatchers).</p>\n"
    budget = "none" if cp["budget"] is None else f"{cp['budget']:,} B"
    ratio = cp["cycles"] / cp["fastest_cycles"] if cp["fastest_cycles"] else 1.0
    rows = []
    for r in cp["layers"]:
        kind = ("compact instance" if r.get("compact") else "own instance" if r["instance"]
                else "shared" if r["shared"] else "variant")
        rows.append(f"<tr class='code-layer' data-op='{r['op']}'><td>{r['op']}</td><td>{html.escape(r['opcode'])}</td>"
                    f"<td>{html.escape(r['variant'])}</td><td>{kind}</td><td class='n'>{r['bytes']:,}</td>"
                    f"<td class='n'>{r['cycles']:,}</td></tr>")
    return (head + f"<p>Which kernel each layer calls: the exact optimum of code bytes and modelled cycles the preset asks for "
            f"(<code>--optimize-code</code>, <code>--code-budget</code>; {html.escape(cp.get('costs', ''))}). "
            f"A shared variant's bytes are counted once however many layers call it.</p>\n"
            f"<table class='code-plan'><tr><th>preset</th><th>budget</th><th>layer kernels</th><th>modelled cycles</th>"
            f"<th>fastest set</th><th>cycles / fastest</th></tr>\n"
            f"<tr class='code-total'><td>{html.escape(cp['preset'])}</td><td>{budget}</td><td>{cp['bytes']:,} B</td>"
            f"<td>{cp['cycles']:,}</td><td>{cp['fastest_bytes']:,} B, {cp['fastest_cycles']:,} cycles</td>"
            f"<td>{ratio:.3f}</td></tr></table>\n"
            f"<table class='code-plan'><tr><th>op</th><th>operator</th><th>variant</th><th>code</th><th>bytes</th>"
            f"<th>modelled cycles</th></tr>\n" + "\n".join(rows) + "</table>\n")
