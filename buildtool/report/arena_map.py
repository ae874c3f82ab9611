"""The arena map of `buildtool report`: where every buffer of a plan sits, and when.

Execution step across, arena offset down, one rectangle per buffer of the plan (`plan.buffers`, the
buffers `buildtool plan --json` lists with their offset, size and first / last step): a whole tensor,
a row band of one, a fusion block's window pool (its windows, or the rings of a cached scheme), an
accumulator, an operator's scratch, a persistent state. Each is named and coloured by kind, with a
tooltip (SVG <title>) giving its name, shape, dtype, bytes, offset and steps. The peak step (the
first step where the most bytes are live) is marked, and a table lists the buffers live there. A
layer-by-layer plan whose buffers a board's regions spread (plan.arena_regions) gets one map per
region, each in the region's own offsets.

Steps are the plan's: an operator of the execution order (layer by layer), or a tile row of a
fusion block / one plain operator (fused; a strip above the map marks each block's steps).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace

from ..plan import align_up
from ..plan.fusion.costs import accumulator_dtype, accumulator_len
from ..plan.fusion.schedule import BlockRun
from ..units import exact, size

_W, _ML, _MR, _MT, _PH = 960, 78, 16, 54, 280
_LEGEND_ROW = 16

# kind -> (fill, legend text); a fusion block's window pool is keyed by its scheme
KINDS = {
    "tensor": ("#8796ab", "tensor"),
    "band": ("#bcc6d3", "row band of a tensor"),
    "recompute": ("#e8a33c", "block windows (recompute)"),
    "hcache": ("#4c9ed9", "block windows (hcache: rings along the columns)"),
    "linebuf": ("#69b36b", "block windows (linebuf: line-buffer rings)"),
    "split": ("#a77fd1", "split-region slice windows"),
    "accumulator": ("#e377c2", "block accumulator"),
    "scratch": ("#d36f6f", "operator scratch"),
    "persistent": ("#8c6d4f", "persistent state"),
    "staged": ("#5fb0a8", "weights staged from flash (plan/staging.py)"),
}

POOLS = ("recompute", "hcache", "linebuf", "split")  # the kinds of a block's window pool


@dataclass(frozen=True)
class Box:
    """One buffer of a plan as the map draws it."""

    id: int  # Buffer.id
    name: str  # what it holds, as the label and the table name it
    kind: str  # a KINDS key
    tensors: tuple  # the graph tensors' names it holds (a window pool: its windows')
    shape: str
    dtype: str
    size: int  # bytes used (the packer reserves it rounded up to the plan's alignment)
    region: str  # its memory region ("" when the arena is whole)
    offset: int  # in its region (the arena's offset when whole)
    first: int  # first and last step it is live
    last: int
    group: str = ""  # bands of one tensor share it: the peak table sums them in one row
    detail: tuple = ()  # more tooltip lines (the windows of a pool)
    label: str = ""  # the short name the map and table show ("" : name itself), the full name on hover
    tensor_labels: tuple = ()  # the short names of tensors, in their order

    @property
    def short(self) -> str:
        return self.label or self.name


def _shape(shape) -> str:
    return "\u00d7".join(str(int(d)) for d in shape)


def short_names(g) -> dict:
    """Each tensor as the map and tables label it: the operator that makes it, type and index ("CONV_2D 12",
    "SPLIT 3:1" for its second output), "input k" for a model input, else "tensor i". Converters name
    tensors after their whole op path (`model/block/conv2d_2_1/convolution;...`): the full name is on hover."""
    made = {i: f"tensor {i}" for i in range(len(g.tensors))}
    for k, op in enumerate(g.operators):
        for j, o in enumerate(op.outputs):
            made[o] = f"{op.opcode} {k}" + (f":{j}" if len(op.outputs) > 1 else "")
    made.update({i: f"input {k}" for k, i in enumerate(g.inputs)})
    return made


def _tensor_box(g, b, region: str, offset: int, short: dict) -> Box:
    """A buffer holding whole graph tensors (aliases, concatenation views): named after its largest."""
    ts = [g.tensors[i] for i in b.tensors]
    main = max(ts, key=lambda t: t.nbytes) if ts else None
    name = main.name if main else f"buffer {b.id}"
    label = short[main.index] if main else name
    more = len(ts) - 1
    if more:
        name += f" (+{more} sharing it)"
        label += f" (+{more})"
    kind = "persistent" if b.kind == "persistent" else "tensor"
    return Box(b.id, name, kind, tuple(t.name for t in ts), _shape(main.shape) if main else "",
               main.dtype if main else "", b.size, region, offset, b.first_step, b.last_step, label=label,
               tensor_labels=tuple(short[t.index] for t in ts))


def _arena_boxes(g, plan, short: dict) -> list:
    """Boxes of a layer-by-layer plan (region-local offsets when its buffers are spread)."""
    where = {k: r for r in plan.arena_regions for k in r["buffers"]}
    out = []
    for b in plan.buffers:
        r = where.get(b.id)
        name, off = (r["name"], b.offset - r["base"]) if r else ("", b.offset)
        if b.kind == "scratch":  # an in-place depthwise convolution's copy of one input channel plane
            op = g.operators[b.op]
            x = g.tensors[op.inputs[0]]
            plane = x.shape[1:3] if len(x.shape) == 4 and x.shape[1] * x.shape[2] == b.size else (b.size,)
            out.append(Box(b.id, f"scratch of op {b.op} ({op.opcode})", "scratch", (), _shape(plane), x.dtype,
                           b.size, name, off, b.first_step, b.last_step))
        else:
            box = _tensor_box(g, b, name, off, short)
            if len(b.tensors) > 1:  # aliases, in-place outputs, concatenation views: each its own bytes and steps
                at = [plan.tensors[i] for i in b.tensors]
                box = replace(box, detail=tuple(f"{t.name}: {t.size:,} B at offset {t.offset - b.offset + off:,}, "
                                                f"steps {t.first_step}..{t.last_step}" for t in at))
            out.append(box)
    top = max((b.id for b in plan.buffers), default=-1)
    for k, d in enumerate(x for x in plan.staged if not x["spare"]):  # copies of a layer's weights, at its step
        t = g.tensors[d["tensor"]]
        out.append(Box(top + 1 + k, f"{t.name} (op {d['op']}'s, staged)", "staged", (t.name,), _shape(t.shape),
                       t.dtype, d["size"], "", d["offset"], d["step"], d["step"],
                       label=f"staged weights of op {d['op']}"))
    return out


def _item_of(plan, b) -> int:
    """The schedule item (a block) whose steps hold buffer b: its window pool or its accumulator."""
    for k, it in enumerate(plan.schedule.items):
        s0, s1 = plan.item_steps[k]
        if not (isinstance(it, BlockRun) and s0 <= b.first_step and b.last_step <= s1):
            continue
        if (b.kind == "windows" and sorted(it.windows) == sorted(b.tensors)) or \
                (b.kind == "accumulator" and plan.acc_offset.get(k) == b.offset):
            return k
    raise ValueError(f"buffer {b.id} ({b.kind}) belongs to no block of the schedule")


def _fused_boxes(g, plan, short: dict) -> list:
    """Boxes of a fused plan: whole tensors, row bands, window pools, accumulators, state."""
    out, band_no = [], {}
    split = plan.schedule.mode == "split"
    for b in plan.buffers:
        if b.kind in ("tensor", "persistent"):
            out.append(_tensor_box(g, b, "", b.offset, short))
        elif b.kind == "band":
            t = g.tensors[b.tensors[0]]
            j = band_no[t.index] = band_no.get(t.index, -1) + 1
            r0, r1, _ = plan.bands[t.index][j]
            rows = f"row {r0}" if r1 - r0 == 1 else f"rows {r0}\u2013{r1 - 1}"
            out.append(Box(b.id, f"{t.name} {rows}", "band", (t.name,), _shape((1, r1 - r0, *t.shape[2:])),
                           t.dtype, b.size, "", b.offset, b.first_step, b.last_step, group=t.name,
                           label=f"{short[t.index]} {rows}", tensor_labels=(short[t.index],)))
        else:
            k = _item_of(plan, b)
            it = plan.schedule.items[k]
            ops = f"ops {it.p}\u2013{it.q - 1}"
            if b.kind == "accumulator":
                out.append(Box(b.id, f"accumulator of {ops}", "accumulator", (), _shape((accumulator_len(g, it.geo),)),
                               accumulator_dtype(g, it.geo), b.size, "", b.offset, b.first_step, b.last_step))
                continue
            base = 0 if k in plan.window_base else b.offset  # a pipelined pool's window offsets are its own
            wins = sorted(it.windows, key=lambda t: (plan.window_offset[(k, t)], t))
            detail = tuple(f"{g.tensors[t].name}: window {_shape(it.window_shape(g, t))} at +"
                           f"{plan.window_offset[(k, t)] - base:,}" for t in wins)
            what = "slice windows of split region" if split else f"{it.scheme} windows of"
            out.append(Box(b.id, f"{what} {ops}", "split" if split else it.scheme,
                           tuple(g.tensors[t].name for t in wins), f"{len(wins)} windows",
                           g.tensors[wins[0]].dtype if wins else "", b.size, "", b.offset, b.first_step,
                           b.last_step, detail=detail, tensor_labels=tuple(short[t] for t in wins)))
    return out


def boxes(g, plan) -> list:
    """Every buffer of plan (either kind) as a Box, in the plan's buffer order."""
    return (_fused_boxes if plan.kind == "fused" else _arena_boxes)(g, plan, short_names(g))


def peak_step(plan) -> int:
    """The first step at which the most bytes are live (plan.live_bytes: buffer sizes rounded up to the
    plan's alignment)."""
    live = plan.live_bytes()
    return live.index(max(live))


def n_steps(plan) -> int:
    return len(plan.live_bytes())


def step_name(g, plan, s: int) -> str:
    """What runs at step s: an operator, or a tile row of a fusion block."""
    if plan.kind != "fused":
        op = plan.order[s]
        return f"op {op} {g.operators[op].opcode}"
    piped = {k: grp for grp in plan.schedule.pipelined for k in grp}
    for k, it in enumerate(plan.schedule.items):
        s0, s1 = plan.item_steps[k]
        if s0 <= s <= s1:
            if not isinstance(it, BlockRun):
                return f"op {it} {g.operators[it].opcode}"
            if k in piped:  # a pipelined group's blocks run their tile rows interleaved over its steps
                grp = piped[k]
                blocks = " + ".join(f"{b.scheme} ops {b.p}\u2013{b.q - 1}"
                                    for b in (plan.schedule.items[j] for j in grp))
                g0, g1 = min(plan.item_steps[j][0] for j in grp), max(plan.item_steps[j][1] for j in grp)
                return f"pipelined blocks {blocks}, step {s - g0 + 1} of their {g1 - g0 + 1}"
            what = "split region" if plan.schedule.mode == "split" else f"{it.scheme} block"
            row = "slice" if plan.schedule.mode == "split" else "tile row"
            return f"{what} ops {it.p}\u2013{it.q - 1}, {row} {s - s0 + 1} of {s1 - s0 + 1}"
    return f"step {s}"


def regions_of(plan) -> list:
    """(region name, bytes) of each map: the board's regions a spread plan uses, else ("", arena)."""
    regs = getattr(plan, "arena_regions", None)
    return [(r["name"], r["bytes"]) for r in regs] if regs else [("", plan.arena_bytes)]


def _ticks(top: int) -> list:
    """Byte offsets to label on a map of top bytes: multiples of a power of two, at most 8 steps."""
    step = 16
    while top / step > 8:
        step *= 2
    return list(range(0, top + 1, step))


def _tick_label(v: int) -> str:
    return f"{v:,} B" if v < 1024 else f"{v / 1024:g} KiB"


def _tooltip(x: Box, steps: str) -> str:
    pool = x.kind in POOLS  # its shape is its windows' (listed below)
    lines = [x.name, KINDS[x.kind][1],
             (x.shape if pool else f"shape {x.shape}") + (f", {x.dtype}" if x.dtype else ""),
             f"{exact(x.size)} ({size(x.size)})",
             f"offset {x.offset:,}" + (f" in {x.region}" if x.region else "") + f" to {x.offset + x.size:,}",
             steps, *x.detail]
    if len(x.tensors) > 1 and not x.detail:
        lines.append("holds " + ", ".join(x.tensors))
    return html.escape("\n".join(lines))


def map_svg(g, plan, items: list, region: str, top: int, key: str, heading: str) -> str:
    """The map of one region (region "" = the whole arena, top bytes high) of plan."""
    n = max(n_steps(plan), 1)
    peak = peak_step(plan)
    pw = _W - _ML - _MR
    kinds = [k for k in KINDS if any(x.kind == k for x in items)]
    legend_rows = (len(kinds) + 2) // 3
    h = _MT + _PH + 38 + _LEGEND_ROW * legend_rows + 6
    top = max(top, 1)

    def x(s):
        return _ML + pw * s / n

    def y(off):
        return _MT + _PH * off / top

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="arena-map" data-plan="{key}" '
           f'data-region="{html.escape(region)}" data-bytes="{top}" data-steps="{n}" data-peak="{peak}" '
           f'width="{_W}" height="{h}" viewBox="0 0 {_W} {h}" font-family="Helvetica, Arial, sans-serif" '
           f'font-size="11">',
           f'<rect width="{_W}" height="{h}" fill="white"/>',
           f'<text x="{_W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">'
           f'{html.escape(heading)}</text>']
    if plan.kind == "fused":  # the strip naming the blocks: a step is a tile row there
        for k, it in enumerate(plan.schedule.items):
            if isinstance(it, BlockRun):
                s0, s1 = plan.item_steps[k]
                kind = "split" if plan.schedule.mode == "split" else it.scheme
                out.append(f'<rect x="{x(s0):.2f}" y="{_MT - 14}" width="{x(s1 + 1) - x(s0):.2f}" height="8" '
                           f'fill="{KINDS[kind][0]}" stroke="white" stroke-width="1"><title>{kind} ops '
                           f'{it.p}\u2013{it.q - 1}: steps {s0}..{s1}</title></rect>')
    out.append(f'<rect x="{_ML}" y="{_MT}" width="{pw}" height="{_PH}" fill="#f4f4f4" stroke="#999"/>')
    for v in _ticks(top):
        out.append(f'<line x1="{_ML - 4}" y1="{y(v):.1f}" x2="{_ML}" y2="{y(v):.1f}" stroke="#666"/>'
                   f'<text x="{_ML - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{_tick_label(v)}</text>')
    for s in range(0, n, max(1, n // 12)):
        out.append(f'<text x="{(x(s) + x(s + 1)) / 2:.1f}" y="{_MT + _PH + 14}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{_ML + pw / 2}" y="{_MT + _PH + 30}" text-anchor="middle">execution step '
               f'({"a tile row of a block, or one operator" if plan.kind == "fused" else "one operator"})</text>')
    out.append(f'<text x="14" y="{_MT + _PH / 2}" text-anchor="middle" transform="rotate(-90 14 {_MT + _PH / 2})">'
               f'offset{" in " + html.escape(region) if region else " in the arena"} (down)</text>')
    for b in items:
        if b.region != region:
            continue
        x0, x1, y0, y1 = x(b.first), x(b.last + 1), y(b.offset), y(b.offset + b.size)
        live = b.first <= peak <= b.last
        steps = f"steps {b.first}..{b.last}: {step_name(g, plan, b.first)}" + (
            f" to {step_name(g, plan, b.last)}" if b.last != b.first else "")
        out.append(f'<rect class="buf{" peak-live" if live else ""}" data-id="{b.id}" data-kind="{b.kind}" '
                   f'data-offset="{b.offset}" data-size="{b.size}" data-first="{b.first}" data-last="{b.last}" '
                   f'x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" height="{max(y1 - y0, 0.5):.2f}" '
                   f'fill="{KINDS[b.kind][0]}" stroke="#333" stroke-width="0.4">'
                   f'<title>{_tooltip(b, steps)}</title></rect>')
        chars = int((x1 - x0 - 4) / 5.6)
        if y1 - y0 >= 12 and chars >= 4:
            label = b.short if len(b.short) <= chars else b.short[:chars - 1] + "\u2026"
            out.append(f'<text x="{x0 + 2:.1f}" y="{y0 + 10:.1f}" font-size="9" pointer-events="none">'
                       f'{html.escape(label)}</text>')
    px0, px1 = x(peak), x(peak + 1)
    live = size(plan.live_bytes()[peak])
    if region:  # the peak is the plan's; its bytes in this region beside
        here = sum(align_up(b.size, plan.align) for b in items if b.region == region and b.first <= peak <= b.last)
        live += f" ({size(here)} of it in {region})"
    out.append(f'<rect class="peak" x="{px0:.2f}" y="{_MT}" width="{max(px1 - px0, 1):.2f}" height="{_PH}" '
               f'fill="none" stroke="#c0392b" stroke-width="1.6" stroke-dasharray="4,2" pointer-events="none"/>')
    anchor = "end" if px0 > _ML + pw / 2 else "start"
    tx = px1 + 4 if anchor == "start" else px0 - 4
    out.append(f'<text x="{tx:.1f}" y="{_MT - 18}" text-anchor="{anchor}" fill="#c0392b" font-weight="bold">'
               f'peak: step {peak}, {html.escape(live)} live</text>')
    ly = _MT + _PH + 50
    for j, k in enumerate(kinds):
        lx, yy = _ML + 300 * (j % 3), ly + _LEGEND_ROW * (j // 3)
        out.append(f'<rect x="{lx}" y="{yy - 9}" width="12" height="10" fill="{KINDS[k][0]}" stroke="#333" '
                   f'stroke-width="0.4"/><text x="{lx + 16}" y="{yy}">{html.escape(KINDS[k][1])}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _peak_rows(items: list, peak: int) -> list:
    """(name, kind, tensors, shape, dtype, bytes, region, offsets, steps, short name, tensors' short names)
    of what is live at peak; the row bands of one tensor summed in one row."""
    live = sorted((b for b in items if b.first <= peak <= b.last), key=lambda b: (b.region, b.offset, b.id))
    rows, bands = [], {}
    for b in live:
        if b.group:
            if b.group in bands:
                bands[b.group].append(b)
                continue
            bands[b.group] = [b]
        rows.append(b)
    out = []
    for b in rows:
        if b.group and len(bands[b.group]) > 1:
            bs = bands[b.group]
            lo, hi = min(x.offset for x in bs), max(x.offset + x.size for x in bs)
            out.append((f"{b.group} ({len(bs)} row bands)", b.kind, b.tensors, f"{len(bs)} bands", b.dtype,
                        sum(x.size for x in bs), b.region, f"{lo:,}\u2013{hi:,}",
                        f"{min(x.first for x in bs)}..{max(x.last for x in bs)}",
                        f"{b.tensor_labels[0]} ({len(bs)} row bands)", b.tensor_labels))
        else:
            out.append((b.name, b.kind, b.tensors, b.shape, b.dtype, b.size, b.region, f"{b.offset:,}",
                        f"{b.first}..{b.last}", b.short, b.tensor_labels or b.tensors))
    return out


def peak_table(g, plan, items: list, key: str) -> str:
    """The buffers live at the peak step, with sizes (row bands of one tensor in one row)."""
    peak = peak_step(plan)
    spread = any(b.region for b in items)
    rows = []
    for name, kind, tensors, shape, dtype, n, region, offs, steps, short, labels in _peak_rows(items, peak):
        # the short names shown, the full ones (one a line) on hover
        rows.append(f'<tr><td class="name" title="{html.escape(name)}">{html.escape(short)}</td><td>{KINDS[kind][1]}</td>'
                    f'<td class="tensors" title="{html.escape(chr(10).join(tensors))}">{html.escape(", ".join(labels))}'
                    f'</td><td>{shape}</td><td>{dtype}</td>'
                    f'<td class="n" title="{n:,} B">{size(n)}</td><td class="n">{n:,}</td>'
                    + (f"<td>{html.escape(region)}</td>" if spread else "")
                    + f'<td class="n">{offs}</td><td class="n">{steps}</td></tr>')
    live = plan.live_bytes()[peak]
    region_th = "<th>region</th>" if spread else ""
    return (f'<table class="peak" data-plan="{key}" data-step="{peak}"><caption>Live at the peak, step {peak} '
            f'({html.escape(step_name(g, plan, peak))}): {size(live)} ({live:,} B, each buffer rounded up to the '
            f'{plan.align}-byte alignment), arena {size(plan.arena_bytes)} ({plan.arena_bytes:,} B)</caption>'
            f'<tr><th>buffer</th><th>kind</th><th>holds</th><th>shape</th><th>dtype</th><th>size</th><th>bytes</th>'
            f'{region_th}<th>offset</th><th>steps</th></tr>{"".join(rows)}</table>')


def map_section(g, plan, key: str, heading: str) -> str:
    """The map(s) of plan, one per memory region it uses, and the table of what is live at its peak."""
    items = boxes(g, plan)
    regs = regions_of(plan)
    peak = peak_step(plan)
    svgs = []
    for name, n in regs:
        where = f" \u2014 region {name}" if name else ""
        svgs.append(map_svg(g, plan, items, name, n, key,
                            f"{heading}{where}: {size(n)}, {sum(1 for b in items if b.region == name)} buffers"))
    live = plan.live_bytes()[peak]
    head = (f"{heading}: arena {size(plan.arena_bytes)} ({plan.arena_bytes:,} B), peak at step {peak} "
            f"(of steps 0..{n_steps(plan) - 1}), {size(live)} live")
    return (f'<section class="arena-map" id="map-{key}"><h3>{html.escape(head)}</h3>\n'
            + "\n".join(svgs) + "\n" + peak_table(g, plan, items, key) + "</section>\n")


__all__ = ["KINDS", "POOLS", "Box", "short_names", "boxes", "peak_step", "step_name", "regions_of", "map_svg", "peak_table", "map_section"]
