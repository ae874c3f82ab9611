"""`buildtool report`: an HTML page with an SVG of memory in use over the execution order,
before (layer by layer) and after splitting / fusion, with the blocks and regions marked.

Both curves are the per-step live bytes of real arena plans (the packed arena size is
printed beside each); a step is one operator of the model order. Below them, the arena map of each
plan (arena_map.py): every buffer at its offset over its steps, the peak step and what is live there.
"""

from __future__ import annotations

import html
import math
import os

from ..fsutil import write_atomic, writes_through
from ..plan.fusion.planner import plan_schedule
from ..plan.fusion.schedule import Schedule
from ..units import size
from .arena_map import map_section
from .code_plan import code_plan_html
from .regions import placement_html

_W, _H = 960, 380
_ML, _MR, _MT, _MB = 70, 20, 30, 60
_COLORS = {"recompute": "#e8a33c", "hcache": "#4c9ed9", "linebuf": "#69b36b", "split": "#a77fd1"}


def plain_plan(g, streamed: bool = False, align: int = 16):
    """Every tensor whole in the model order, packed like a fused plan (the benchmarks' baseline)."""

    return plan_schedule(g, Schedule(list(range(len(g.operators))), streamed), align, 0.5)


def _regions(g, plan) -> list:
    """(first op, last op, kind, tile, tiles, window bytes) of each fusion block or split region."""
    out = []
    for r in plan.regions(g):
        if "slices" in r:
            out.append((r["top"], r["bottom"], "split", "rows", f"{r['slices']}&times;1", 0))
        else:
            out.append((r["first_op"], r["last_op"], r["cache"], f"{r['tile'][0]}&times;{r['tile'][1]}",
                        f"{r['row_tiles']}&times;{r['col_tiles']}", r["window_bytes"]))
    return out


def memory_svg(g, before, after, title: str = "", after_label: str = "optimised") -> str:
    """Two step curves of KiB live over the operator axis (a block's tile-steps spread over its
    operators), blocks shaded by scheme; after_label names the second in the legend."""
    n = len(g.operators)
    live = {id(p): p.live_bytes() for p in (before, after)}
    top = max(max(live[id(before)]), max(live[id(after)]), 1) / 1024
    low = max(min(min(live[id(before)]), min(live[id(after)])), 1) / 1024
    ticks = [m * 10 ** e for e in range(-3, 7) for m in (1, 2, 5)]
    lo = max(t for t in ticks if t <= max(low, 0.001))
    hi = min(t for t in ticks if t >= top and t > lo)  # a flat curve on a tick still gets a scale
    pw, ph = _W - _ML - _MR, _H - _MT - _MB

    def x(s):
        return _ML + pw * s / max(n, 1)

    def y(kib):  # log scale: the optimised curve is often 10-100x below the other
        return _MT + ph * (1 - (math.log10(max(kib, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11">',
           f'<rect width="{_W}" height="{_H}" fill="white"/>']
    if title:
        out.append(f'<text x="{_W / 2}" y="18" text-anchor="middle" font-size="13" font-weight="bold">'
                   f'{html.escape(title)}</text>')
    for p, last, kind, tile, _, _ in _regions(g, after):
        x0, x1 = x(p), x(last + 1)
        out.append(f'<rect x="{x0:.1f}" y="{_MT}" width="{x1 - x0:.1f}" height="{ph}" fill="{_COLORS[kind]}" '
                   f'fill-opacity="0.16"><title>ops {p}-{last}: {kind}, tile {html.unescape(tile)}'
                   f'</title></rect>')
        out.append(f'<line x1="{x0:.1f}" y1="{_MT}" x2="{x0:.1f}" y2="{_MT + ph}" stroke="{_COLORS[kind]}" '
                   f'stroke-width="0.8"/>')
    for v in (t for t in ticks if lo <= t <= hi):
        out.append(f'<line x1="{_ML}" y1="{y(v):.1f}" x2="{_ML + pw}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{_ML - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    for s in range(0, n + 1, max(1, n // 13)):
        out.append(f'<text x="{x(s):.1f}" y="{_MT + ph + 16}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{_ML + pw / 2}" y="{_H - 22}" text-anchor="middle">operator (execution order)</text>')
    out.append(f'<text x="16" y="{_MT + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {_MT + ph / 2})">'
               f'activation memory in use (KiB, log scale)</text>')
    for plan, color, dash in ((before, "#888", "5,3"), (after, "#c0392b", "")):
        pts = []
        for s, b in enumerate(live[id(plan)]):
            a, e = plan.step_span(s)
            pts += [f"{x(a):.2f},{y(b / 1024):.1f}", f"{x(e):.2f},{y(b / 1024):.1f}"]
        out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color}" stroke-width="1.6" '
                   f'stroke-dasharray="{dash}"/>')
    lx = _ML + 10
    ly = _H - 6
    items = [("#888", f"layer by layer: arena {size(before.arena_bytes)}", "5,3"),
             ("#c0392b", f"{after_label}: arena {size(after.arena_bytes)}, MACs x{after.mac_overhead:.3f}", "")]
    for color, label, dash in items:
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{color}" stroke-width="2" '
                   f'stroke-dasharray="{dash}"/><text x="{lx + 28}" y="{ly}">{html.escape(label)}</text>')
        lx += max(300, int(5.6 * len(label)) + 36)
    for kind in sorted({r[2] for r in _regions(g, after)}):
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="10" fill="{_COLORS[kind]}" fill-opacity="0.4"/>'
                   f'<text x="{lx + 16}" y="{ly}">{kind}</text>')
        lx += max(76, 6 * len(kind) + 30)
    out.append("</svg>")
    return "\n".join(out)


def default_maps(before, after) -> list:
    """(key, heading, plan) of the arena maps a report draws unless told: the layer-by-layer plan's,
    then the optimised one's when it is another plan."""
    return [("plain", "Layer by layer", before)] + ([("optimised", "Optimised", after)] if after is not before else [])


def report_html(g, before, after, title: str, placement=None, maps=None, note: str = "",
                after_label: str = "optimised", code=None) -> str:
    """A self-contained page: the figure, the headline numbers, the arena maps (maps: (key, heading,
    plan) each, default_maps unless given), the block table (and, given a board's placement of the
    optimised plan, its memory regions: report_regions.py; a tuple: several). note: a paragraph saying
    which options made the plans; code: (board, firmware.json's "code_plan" or None) of the build, its
    kernel variant per layer (code_plan.py)."""
    streamed = after.to_json(g).get("input_accounting") == "streamed"
    acc = "input streamed (not in the arena)" if streamed else "input held in the arena"
    rows = []
    for p, last, kind, tile, tiles, win in _regions(g, after):
        ops = ", ".join(g.operators[i].opcode for i in range(p, last + 1))
        rows.append(f"<tr><td>{p}&ndash;{last}</td><td>{kind}</td><td>{tile}</td>"
                    f"<td>{tiles}</td><td>{win}</td>"
                    f"<td style='font-size:10px'>{html.escape(ops)}</td></tr>")
    svg = memory_svg(g, before, after, title, after_label)
    sections = "".join(map_section(g, plan, key, heading)
                       for key, heading, plan in (default_maps(before, after) if maps is None else maps))
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:Helvetica,Arial,sans-serif;max-width:960px;margin:24px auto;color:#222}}
table{{border-collapse:collapse;font-size:12px}}td,th{{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left}}
caption{{text-align:left;font-weight:bold;padding:6px 0}}svg.arena-map rect.buf:hover{{stroke:#000;stroke-width:1.5}}
section.arena-map{{margin:18px 0 30px}}td.tensors{{font-size:10px;max-width:260px}}td.n{{white-space:nowrap}}
td.name,td.tensors{{overflow-wrap:anywhere}}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>Accounting: {acc}; residual tensors held across a block are counted. Peak = packed arena of the real plan.</p>
{f"<p class='note'>{html.escape(note)}</p>" if note else ""}
<table><tr><th></th><th>arena</th><th>lower bound</th><th>MACs</th><th>MAC overhead</th></tr>
<tr><td>layer by layer</td><td>{before.arena_bytes}</td><td>{before.lower_bound_bytes}</td><td>{before.macs}</td><td>1.000</td></tr>
<tr><td>optimised</td><td>{after.arena_bytes}</td><td>{after.lower_bound_bytes}</td><td>{after.macs}</td>
<td>{after.mac_overhead:.3f}</td></tr></table>
{svg}
<h2 id="arena-map">Arena map</h2>
<p>Execution step across, offset in the arena down: one rectangle per buffer of the plan, coloured by kind
(legend under each map); hover over one for its name, shape, dtype, bytes, offset and steps. The dashed
red column is the peak step, the first with the most bytes live; the table under each map lists the
buffers live there.</p>
{sections}<h2>Blocks</h2>
<table><tr><th>ops</th><th>scheme</th><th>tile</th><th>tiles</th><th>window bytes</th><th>operators</th></tr>
{''.join(rows)}</table>
{_placement_section(placement)}{"" if code is None else code_plan_html(code[1], code[0])}</body></html>
"""


def _placement_section(placement) -> str:
    if placement is None:
        return ""

    return "".join(placement_html(p) for p in (placement if isinstance(placement, tuple) else (placement,)))


def write_report(g, before, after, path: str, title: str | None = None, placement=None, maps=None,
                 note: str = "", after_label: str = "optimised", code=None) -> tuple:
    """Write path (HTML) and the figure beside it (same name, .svg), atomically. Returns the paths
    written: both, or path alone when it names an .svg (the figure, no page) or is written through
    (a FIFO, a device, /dev/stdout: fsutil.writes_through; the page holds the figure, nothing is made beside it).
    before: the layer-by-layer plan (what `buildtool plan` prints); after: the optimised plan;
    maps, note, after_label, code: as report_html takes them."""
    title = title or f"{g.name}: activation memory before and after"
    figure = memory_svg(g, before, after, title, after_label)
    if path.lower().endswith(".svg"):
        write_atomic(path, figure)
        return (path,)
    page = report_html(g, before, after, title, placement, maps, note, after_label, code)
    if writes_through(path):
        write_atomic(path, page)
        return (path,)
    svg_path = os.path.splitext(path)[0] + ".svg"
    # the page first: it holds the figure too, so a failure never leaves a figure without its page
    for p, text in ((path, page), (svg_path, figure)):
        write_atomic(p, text)
    return path, svg_path
