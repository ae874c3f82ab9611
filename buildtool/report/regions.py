"""The placement of a model in a board's memory regions (regions.py) as an SVG bar chart and an
HTML table, for `buildtool report --board B`."""

from __future__ import annotations

import html

_W, _ROW, _ML, _MR = 960, 34, 110, 250
_FILL = {"weights": "#4c9ed9", "arena": "#e8a33c"}


def _arena_in(p, region: str) -> int:
    """Arena bytes the placement puts in region (its buffers' part there when they are spread)."""
    if p.arena_parts:
        return p.arena_parts.get(region, 0)
    return p.arena_bytes if p.arena == region else 0


def _parts(p, region: str) -> list:
    """(kind, bytes) of what the placement puts in region."""
    arena = _arena_in(p, region)
    return [(k, n) for k, n in (("weights", p.used.get(region, 0) - arena), ("arena", arena)) if n]


def placement_svg(p) -> str:
    """One bar per region: its size the full width, what the placement puts there filled in."""
    h = 30 + _ROW * len(p.order)
    pw = _W - _ML - _MR
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{h}" viewBox="0 0 {_W} {h}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11">',
           f'<rect width="{_W}" height="{h}" fill="white"/>',
           f'<text x="{_W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">'
           f'{html.escape(p.board)}: placement per memory region (bytes used / size)</text>']
    for k, r in enumerate(p.order):
        y = 26 + _ROW * k
        out.append(f'<text x="{_ML - 8}" y="{y + 15}" text-anchor="end">{html.escape(r)}</text>')
        out.append(f'<rect x="{_ML}" y="{y}" width="{pw}" height="20" fill="#f2f2f2" stroke="#999"/>')
        x = _ML
        for kind, n in _parts(p, r):
            w = pw * n / p.sizes[r] if p.sizes[r] else 0
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="20" fill="{_FILL[kind]}">'
                       f'<title>{kind}: {n:,} B</title></rect>')
            x += w
        used = p.used.get(r, 0)
        pct = f" ({100 * used / p.sizes[r]:.1f} %)" if p.sizes[r] else ""
        out.append(f'<text x="{_ML + pw + 8}" y="{y + 15}">{used:,} / {p.sizes[r]:,} B{pct}</text>')
    out.append("</svg>")
    return "\n".join(out)


def placement_html(p) -> str:
    """The section of the report page: the bars and a table of regions."""
    rows = "".join(f"<tr><td>{html.escape(r)}</td><td>{p.used.get(r, 0):,}</td><td>{p.sizes[r]:,}</td>"
                   f"<td>{sum(1 for v in p.weights.values() if v == r)}</td>"
                   f"<td>{_arena_cell(p, r)}</td></tr>" for r in p.order)
    return (f"<h2>Memory regions of {html.escape(p.board)}</h2>\n"
            f"<p>Weights placed to minimise cost per byte read x bytes read per inference (cost {p.cost:,}); "
            f"{_arena_note(p)}</p>\n{placement_svg(p)}\n{arena_svg(p)}"
            f"<table><tr><th>region</th><th>bytes used</th><th>size</th><th>weight tensors</th><th>arena</th></tr>"
            f"{rows}</table>\n")


def _arena_cell(p, region: str) -> str:
    """The table's arena column: yes (the whole arena) or its bytes there (spread buffers)."""
    if p.arena_parts:
        return f"{p.arena_parts[region]:,} B" if region in p.arena_parts else ""
    return "yes" if p.arena == region else ""


def _arena_note(p) -> str:
    """How the arena was placed."""
    if p.arena_parts:
        return ("the arena's buffers spread over " + ", ".join(f"{r} ({n:,} B)" for r, n in p.arena_parts.items())
                + ", minimising the bytes moved in the slow regions (arena/regional.py).")
    return "the arena in the cheapest region that holds it."


def arena_svg(p) -> str:
    """A spread arena's buffers, one panel per region: steps across, the region's own offsets up
    (each region its own address space); "" when the arena is whole."""
    if not p.arena_buffers:
        return ""
    regs = list(p.arena_parts)
    steps = max(b[4] for b in p.arena_buffers) + 1
    ph, pw = 150, _W - _ML - 40
    h = 30 + (ph + 30) * len(regs)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{h}" viewBox="0 0 {_W} {h}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11">',
           f'<rect width="{_W}" height="{h}" fill="white"/>',
           f'<text x="{_W / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">'
           f'{html.escape(p.board)}: arena buffers per region (step across, offset in the region up)</text>']
    for k, r in enumerate(regs):
        top, size = 30 + (ph + 30) * k, max(p.arena_parts[r], 1)
        out.append(f'<text x="{_ML - 8}" y="{top + ph / 2}" text-anchor="end">{html.escape(r)}</text>')
        out.append(f'<text x="{_ML - 8}" y="{top + ph / 2 + 14}" text-anchor="end">{p.arena_parts[r]:,} B</text>')
        out.append(f'<rect x="{_ML}" y="{top}" width="{pw}" height="{ph}" fill="#f7f7f7" stroke="#999"/>')
        for reg, off, n, first, last in p.arena_buffers:
            if reg != r:
                continue
            x0, x1 = _ML + pw * first / steps, _ML + pw * (last + 1) / steps
            y1 = top + ph - ph * off / size
            y0 = top + ph - ph * (off + n) / size
            out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{max(y1 - y0, 0.5):.1f}" '
                       f'fill="{_FILL["arena"]}" stroke="#8a5a10" stroke-width="0.5">'
                       f'<title>{r}: [{off:,}, {off + n:,}) steps {first}..{last}</title></rect>')
    out.append("</svg>")
    return "\n".join(out)
