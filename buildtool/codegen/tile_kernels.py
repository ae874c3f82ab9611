"""Per-layer tile kernels for the convolutions of fused blocks (issue 16 item 2).

The tile runtime (kernels/reference/fused.c) calls a conv's kernel once per tile, band or row with
the tile's geometry in a bt_conv_params; through bt_conv_s8 that is the set's dispatcher, which
chooses a variant on every call and runs it with nothing constant. On boards whose kernel set has a
variant table (kernel_variants.for_board), a CONV_2D the runtime calls with more than one output
channel gets its own kernel in model.c instead: a function with bt_conv_s8's signature that builds
a local bt_conv_params from the layer's constants and the few fields a tile changes, then calls
the set's macro of the layer's variant (kernel_variants.INSTANCES), so gcc folds the constants into
the loops as it does for the plain firmware's layers. model.c passes it to fx_win_k (or, for an
in-place 1x1, fx_conv_inplace_k), when every call gets enough pixels for the variant (MIN_PIXELS).

What a tile changes (win_geom and win_kind in fused.c): out.w and pad_left always; filter, bias,
multiplier and shift for a channel group (ch >= 0); and, on the one-column path of a 1x1 stride-1
conv without padding, in.h, in.w, out.h and both pixel strides. Everything else is the layer's, or
the physical width and pixel stride of the buffers the block passes (fixed per layer).
A 1x1 without padding reads its input columns from the tile's pointer: pad_left <= 0 on every
call (the buffer holds the columns the tile reads), so the kernel moves the pointer by -pad_left
pixels and runs with pad_left 0 (the patch-matrix loops read pixels in place; riscv's pointwise
loops need it).
"""

from __future__ import annotations

from . import code_budget, kernel_variants
from .c_text import c_ints, c_struct

SIGNATURE = "const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1"


def variant(e, layer: dict, group: int):
    """The INSTANCES variant the board's table picks for every call shape of the layer (out.c = group
    channels from each multiple of group; 0: all), or None (no table, another mode, or not one
    instantiated variant for all of them)."""
    if e.variants is None or not kernel_variants.instances():
        return None
    c = layer["out"]["c"]
    n = group or c
    names = {kernel_variants.choose_codegen(e.variants[1], "conv",
                                    dict(layer, out=dict(layer["out"], c=n), multipliers=layer["multipliers"][s:s + n],
                                         shifts=layer["shifts"][s:s + n]), tile=True)
             for s in range(0, c, n)}
    name = names.pop() if len(names) == 1 else None
    return name if name in kernel_variants.INSTANCES else None


# macro -> the fewest output pixels per call worth its own kernel: riscv's pointwise loops sum every
# channel's filter once per call (the input offset folded into the start value), as much work as a
# pixel's MACs, where the general loops' border pixels add the offset per MAC (mbv2-w0.35 streamed
# on riscv32, benchmarks/fusion.py --blocks: blocks whose 1x1 calls include one-pixel rows ran up to
# 1.8x slower through them; from two pixels a call they gain)
MIN_PIXELS = {"BT_CONV_PM": 1, "BT_CONV_PW": 2}


def min_pixels(cols: list, rows: list, shape: str, cin: int) -> int:
    """A lower bound of the output pixels of any kernel call over the tiles (cols, rows: (start, end)
    of the output per column / row tile; shape as local_params; cin: input channels): a row of a box,
    a one-column box of several rows ("col"), at most FX_INPLACE_BYTES of input ("inplace")."""
    widths = [b - a for a, b in cols if b > a] or [0]
    heights = [b - a for a, b in rows if b > a] or [0]
    if shape == "col" and 1 in widths:
        widths = [w for w in widths if w > 1] + [min(heights)]
    if shape == "inplace":
        widths.append(max(1, 256 // cin))  # reference/fused.c FX_INPLACE_BYTES
    return min(widths)


def worth(name: str, cols: list, rows: list, shape: str, cin: int) -> bool:
    """Does variant `name`'s tile kernel get enough pixels per call (MIN_PIXELS)?"""
    return min_pixels(cols, rows, shape, cin) >= MIN_PIXELS[kernel_variants.INSTANCES[name][0]]


def pointwise(f: dict) -> bool:
    """A 1x1 without padding (any stride): its tile kernel runs with pad_left 0."""
    return f["kh"] == 1 and f["kw"] == 1 and f["pad_top"] == 0 and f["pad_left"] == 0


def one_column(f: dict, cols: list, rows: list, banded: bool, pixels: int = 0, out_wp: int = 0,
               out_banded: bool = False) -> bool:
    """Can fused.c's column path (a 1x1 stride-1 conv without padding, a box one column wide and
    more than one row high, neither buffer row-banded) call the kernel? cols, rows: the output's
    (start, end) per column / row tile. pixels: the kernel set's FX_COL_CALLS (col_pixels(e)); when
    not 0, win_kind's rule with it: a box more than one row high and one column wide, or at most
    `pixels` columns wide, taller than wide and not out_wp (the output buffer's physical width) wide,
    its input row-banded or not; the output not row-banded (out_banded)."""
    if not (pointwise(f) and f["stride_h"] == 1 and f["stride_w"] == 1):
        return False
    if not pixels:
        return not banded and any(b - a == 1 for a, b in cols) and any(b - a > 1 for a, b in rows)
    return not out_banded and any(h > 1 and (w == 1 or (w != out_wp and w <= pixels and h > w))
                                  for h in {b - a for a, b in rows} for w in {b - a for a, b in cols} if w > 0)


def col_pixels(e) -> int:
    """The board's kernel set's FX_COL_CALLS (reference/fused.c: boxes up to that many columns wide called per
    column; cortex-m/fused.c defines 2), 0 for the other sets."""
    return 2 if e.cortex_m_set() else 0


def chw_groups(e) -> bool:
    """Does the board's kernel set run fx_chw in channel groups through fx_chw_k's kernels (cortex-m/fused.c
    FX_CHW_GROUPS)? The other sets' fx_chw paths go channel by channel: they keep fx_chw."""
    return e.cortex_m_set()


def local_params(f: dict, group: int, src: tuple, dst: tuple, shape: str) -> dict:
    """The tile kernel's bt_conv_params: layer fields f, with the tile's fields read from p.
    src, dst: (physical width, pixel stride) of the input and output buffers; shape: "box" (fx_win_k's
    calls), "col" (also its one-column path: pixels a row pitch apart), "inplace" (fx_conv_inplace_k:
    rows of copied pixels in.c bytes apart) or "grp" (fx_chw_k's: the geometry and the channel group from p,
    only the filter's shape, strides, offsets and activation constant)."""
    q = dict(f)
    if shape == "grp":  # fx_chw_k's: any group of channels, any box (the one-column calls' geometry too)
        q["in"] = dict(f["in"], h="p->in.h", w="p->in.w", pixel_stride="p->in.pixel_stride")
        q["out"] = dict(f["out"], h="p->out.h", w="p->out.w", c="p->out.c", pixel_stride="p->out.pixel_stride")
        q["pad_left"] = 0 if pointwise(f) else "p->pad_left"
        return dict(q, filter="p->filter", bias="p->bias", multiplier="p->multiplier", shift="p->shift")
    if shape == "inplace":
        q["in"] = dict(f["in"], h=1, w="p->in.w", pixel_stride=f["in"]["c"])
        q["out"] = dict(f["out"], h=1, w="p->out.w", pixel_stride=dst[1])
        return dict(q, pad_top=0, pad_left=0)
    col = shape == "col"
    q["in"] = dict(f["in"], h="p->in.h" if col else f["in"]["h"], w="p->in.w" if col else src[0],
                   pixel_stride="p->in.pixel_stride" if col else src[1])
    q["out"] = dict(f["out"], h="p->out.h" if col else f["out"]["h"], w="p->out.w", c=group or f["out"]["c"],
                    pixel_stride="p->out.pixel_stride" if col else dst[1])
    q["pad_left"] = 0 if pointwise(f) else "p->pad_left"
    if group:
        q.update(filter="p->filter", bias="p->bias", multiplier="p->multiplier", shift="p->shift")
    return q


def grouped(e, layer: dict):
    """The INSTANCES variant fx_chw_k's conv kernel instantiates (shape "grp"), or None: the one the board's
    table picks for the whole layer, which holds on any group of at least FX_CHW_K_MIN (4) of its channels
    (every row's conditions are per channel, or the layer's; doubled_ok's patch-per-channel bound only
    weighs speed)."""
    if e.variants is None or not kernel_variants.instances() or layer["out"]["c"] < 4:
        return None
    name = kernel_variants.choose_codegen(e.variants[1], "conv", layer, tile=True)
    return name if name in kernel_variants.INSTANCES else None


def call_classes(f: dict, boxes, whole_1x1: bool = False) -> list | None:
    """[(out.w, rows, pad_left)] of the kernel calls reference/fused_ref.h win_kind_b (a conv, no box paths) makes over
    boxes (ra, rb, ca, cb, input row-banded, whole: the box is all of its unbanded output buffer's width, pad_left:
    win_geom's at the box), one per output width the calls take (sorted by it), rows and pad_left None where that
    width's calls differ in them; None when a call's shape is not worked out here (a 1x1's column calls, a 1-row
    filter's runs on row bands, boxes of several rows: their calls from the rows the buffers hold). whole_1x1: a 1x1's
    whole boxes of two or more columns on an input not row-banded worked out too (win_kind_o makes no column calls
    there: one call of the box's rows and width; call_shape's)."""
    pw = f["kh"] == 1 and f["kw"] == 1 and f["stride_h"] == 1 and f["stride_w"] == 1 and f["pad_top"] == 0
    seen = {}
    for ra, rb, ca, cb, in_rows, whole, pad_left in boxes:
        known = whole_1x1 and whole and not in_rows and cb - ca > 1
        if rb - ra > 1 and ((pw and not known) or (in_rows and f["kh"] == 1)):
            return None
        rows, pads = seen.setdefault(cb - ca, (set(), set()))
        rows.add(rb - ra if whole and not in_rows else 1)
        pads.add(pad_left)
    return [(w, rows.pop() if len(rows) == 1 else None, pads.pop() if len(pads) == 1 else None)
            for w, (rows, pads) in sorted(seen.items())]


def call_shape(f: dict, boxes, row_loop: bool = False) -> tuple | None:
    """(out.w, rows, pad_left) of every kernel call over boxes (call_classes'; pad_left None when it differs), or None
    when they differ in width or rows, or a call's shape is not worked out here. row_loop: a box tile kernel's, which
    runs a call of rows that differ a row at a time (ROW_LOOP): rows None where they differ, a 1x1's whole boxes worked
    out too (call_classes' whole_1x1). The width folds the loops' bounds as in the plain layer's instance: vww's
    least-RAM 1x1 op 2, whole boxes of 48 columns and 1 to 3 rows, 2,512 -> 1,212 B at its medium form (its plain instance 2,236 B at the compact one; with
    the width and the rows a call's, gcc found no registers for bt_pm_loop3's asm)."""
    classes = call_classes(f, boxes, whole_1x1=row_loop)
    return classes[0] if classes and len(classes) == 1 and (row_loop or classes[0][1] is not None) else None


ROW_LOOP = "y + 1"  # tile_params' rows argument of a call run a row at a time (call_shape's row_loop, rows None)


# a tile kernel whose calls take several output widths (a column tile at an image edge wider than the others), each
# call of at most TAIL_PIXELS pixels, runs one copy of its variant's loops per width, each on that width and its rows:
# gcc folds them to the variant's pixels left after its triples, a few hundred bytes a copy, where the one copy on the
# call's out.w keeps every path (ResNet-8's fused 3x3 stride-2 layers on cortex-m4, ops 4 and 8, widths 2 and 1: 5.1
# and 4.9 KB -> 1.9 and 2.0 KB, benchmarks/code_size.py --fused). A wider call's copy is an instance's whole loops
# (ResNet-8's op 0, widths 7, 2 and 1: 6.2 KB -> 6.0 KB; ops 1 and 2 would no longer share theirs): one copy.
TAIL_PIXELS = 2


def dispatched(classes: list | None) -> list | None:
    """classes (call_classes') when the tile kernel runs a copy per width (TAIL_PIXELS), else None."""
    if not classes or len(classes) < 2 or any(n is None or w * n > TAIL_PIXELS for w, n, _ in classes):
        return None
    return classes


# ... and one whose calls are an output row each, those wider than TAIL_PIXELS at most 1 / PAIR_SHARE of its pixels (an
# image edge's wider column tile; a call's width and pad_left the tile's, run-time values, keep every path of its
# variant's loops in a tile kernel of one copy: ResNet-8's least-RAM stem on cortex-m4, calls 7, 2 and 1 pixels wide,
# op0_tk 6.2 KB with the helpers it alone calls), runs every call TAIL_PIXELS pixels at a time through one copy on that
# width ("paired"; a call of an odd width: its last pixel with the next one, a phantom, into a buffer on the stack, that
# one's bytes dropped; each pixel's bytes do not depend on the call's others): op0_tk 2.1 KB, the firmware's code 26,260
# -> 22,292 B, 1.24x its plain plan's (benchmarks/code_size.py --fused). The wider calls' pixels lose their triples
# (their share bounds the cost): in the arena 28,139,739 -> 28,232,491 QEMU instructions; the zoo's mobilenetv2 (its
# stem's calls 4 and 2 pixels wide, 5 % of the pixels in the 4-wide ones) 307,903,681 -> 308,351,001 for 4.0 KB less
# code (`python3 benchmarks/fusion.py --instructions`). Code saved for cycles as the emitter's other such choices
# (model_c._share_dw_rows): not at optimize_code=speed, nor on a part built for a small instruction cache
# (Emitter.instance_rate None; fused_c.tile_kernel).
PAIR_SHARE = 4
PAIRED = True


def paired(f: dict, boxes) -> bool:
    """Does the tile kernel of a conv of fields f run its calls over boxes (call_classes') TAIL_PIXELS pixels at a time
    (PAIR_SHARE)?"""
    classes = call_classes(f, boxes)
    if not PAIRED or not classes or dispatched(classes) or any(n != 1 for _, n, _ in classes):
        return False
    if classes[-1][0] <= TAIL_PIXELS:
        return False
    px = [((rb - ra) * (cb - ca), cb - ca) for ra, rb, ca, cb, *_ in boxes]
    return sum(n for n, w in px if w > TAIL_PIXELS) * PAIR_SHARE <= sum(n for n, _ in px)


# the fields a tile kernel shared by several layers reads from the call's bt_conv_params (the layer's, as fx_win_k
# passes it: win_geom keeps them, in.w the input buffer's physical width on a box call) where each layer's own has
# constants: the rest of two layers' tile kernels the same, so is their code (ResNet-8's 3x3 16 -> 16 convs)
LIFTED = ("output_offset", "filter", "bias", "multiplier", "shift")


def lifted(q: dict, shape: str) -> dict:
    """Tile kernel fields q with the per-layer values (LIFTED, a box call's in.w) read from p."""
    g = dict(q, **{k: f"p->{k}" for k in LIFTED})
    if shape == "box":
        g["in"] = dict(q["in"], w="p->in.w")
    return g


def tile_params(fields: dict, group: int, src: tuple, dst: tuple, shape: str, calls=None) -> tuple:
    """(the tile kernel's bt_conv_params, its macro's y1 argument): local_params' with what every call shares
    (define's calls) folded."""
    q = local_params(fields, group, src, dst, shape)
    rows = "y1"
    if calls and calls.get("shape"):
        w, n, pad_left = calls["shape"]
        q["out"] = dict(q["out"], w=w)
        if not pointwise(fields) and pad_left is not None:
            q["pad_left"] = pad_left
        rows = f"y0 + {n}" if n is not None else ROW_LOOP  # (rows that differ: call_shape's row_loop)
        if shape == "grp":  # no column calls: the layer's heights, the input buffer's width
            q["in"] = dict(q["in"], h=fields["in"]["h"], w=src[0], pixel_stride=src[1])
            q["out"] = dict(q["out"], h=fields["out"]["h"])
            if calls.get("channels"):
                q["out"].update(c=calls["channels"], pixel_stride=calls["channels"])
    return q, rows


def copies(fields: dict, group: int, src: tuple, dst: tuple, shape: str, calls=None) -> list:
    """[(the out.w its calls have, its bt_conv_params, its macro's y1 argument)] of each copy of the tile kernel's loops
    (tile_params'): one per width where calls' "classes" (dispatched) say so, the last one run on every other call
    (width None); else one."""
    if (calls or {}).get("paired"):
        return [("pairs", *tile_params(fields, group, src, dst, shape, dict(calls, shape=(TAIL_PIXELS, 1, None))))]
    classes = (calls or {}).get("classes")
    if not classes:
        return [(None, *tile_params(fields, group, src, dst, shape, calls))]
    last = len(classes) - 1
    return [(None if k == last else c[0], *tile_params(fields, group, src, dst, shape, dict(calls, shape=c)))
            for k, c in enumerate(classes)]


def identity(name: str, fields: dict, group: int, src: tuple, dst: tuple, shape: str, calls=None) -> str:
    """What makes two layers' tile kernels of variant `name` one function (define's shared: the same code but for the
    LIFTED fields), whatever form the code budget gives them: their code name in the budget (code_budget.plan's
    identities), so that it counts a shared tile kernel once."""
    macro, extra = kernel_variants.INSTANCES[name]
    flat = ";".join(f"w={w}:" + ",".join(f"{k}={v}" for k, v in kernel_variants.flat_fields(lifted(q, shape)))
                    + f" rows={rows}" for w, q, rows in copies(fields, group, src, dst, shape, calls))
    move = pointwise(fields) and shape != "inplace"
    return f"tile {name} {macro}{tuple(extra)} {shape} {flat} move={move}"


def define(e, op, fields: dict, name: str, group: int, src: tuple, dst: tuple, shape: str, calls=None,
           form=True, shared: dict | None = None) -> str:
    """Declare op's tile kernel calling variant `name`'s macro (local_params' arguments); returns the
    function's name. calls (shape "box" or "grp"): what every call the runtime makes with it shares, as constants
    of its loops (gcc folds them as in the plain firmware's layers): "shape" (call_shape's (out.w, rows, pad_left)), and for
    "grp" "channels" (its group's output channels, the window's pixel stride) and src (the input buffer's physical
    width and pixel stride). form: the code budget's choice of the instance's form (code_budget: True the full one,
    COMPACT or MEDIUM its compact or medium loops, kernel_variants.COMPACT, MEDIUM). shared: the block emitter's
    tile kernels so far (key -> [index in e.decls, name, ops, declaration per op]): a layer whose tile kernel differs
    from an earlier one's only in the LIFTED fields calls that one, which reads them from p (declared once, in the
    earlier one's place; each layer's own constants when no other layer shares it)."""
    macro, extra = kernel_variants.INSTANCES[name]
    macro = code_budget.instance_macro(macro, form)
    e.use_macro(macro)
    cs = copies(fields, group, src, dst, shape, calls)
    fn = f"op{op.index}_tk"
    move = ""
    if pointwise(fields) and shape != "inplace":
        ps = cs[0][1]["in"]["pixel_stride"]
        move = f"  in -= p->pad_left * {ps};  /* pad_left <= 0: the tile's first input column */\n"
    args = "".join(f", {a}" for a in extra)
    user = {"inplace": "fx_conv_inplace_k", "grp": "fx_chw_k"}.get(shape, "fx_win_k")

    def run(q: dict, rows: str, ind: str) -> str:
        head = f"{ind}const bt_conv_params q = {c_struct(q, ind + '  ')};\n"
        if rows == ROW_LOOP:  # a row a call (call_shape's row_loop): out's rows the box's width apart
            pitch = f"{q['out']['w']} * {q['out']['pixel_stride']}"
            return (head + f"{ind}for (int32_t y = y0; y < y1; y++)\n"
                    f"{ind}  {macro}(&q, in, in_y0, out + (y - y0) * {pitch}, y, {rows}{args});\n")
        return head + f"{ind}{macro}(&q, in, in_y0, out, y0, {rows}{args});\n"

    def text(who: str, fn: str, lift: bool) -> str:
        head = f"/* {who} tile kernel: {name}'s loops on its constants ({user}"
        if cs[0][0] == "pairs":
            return pairs(head, fn, lift)
        if len(cs) == 1:
            return (f"{head}) */\nstatic void {fn}({SIGNATURE}) {{\n{move}"
                    + run(lifted(cs[0][1], shape) if lift else cs[0][1], cs[0][2], "  ") + "}")
        # a copy per output width (dispatched), each its own function (one function of them all: gcc found no
        # registers for the row-buffer asm), the last one's the other calls'
        own = [f"{fn}_w{w if w is not None else 'n'}" for w, _, _ in cs]
        parts = [f"static void __attribute__((noinline)) {f}({SIGNATURE}) {{\n"
                 + run(lifted(q, shape) if lift else q, rows, "  ") + "}" for f, (w, q, rows) in zip(own, cs)]
        body = "".join(f"  {f}(p, in, in_y0, out, y0, y1);\n" if w is None else
                       f"  if (p->out.w == {w}) {{ {f}(p, in, in_y0, out, y0, y1); return; }}\n"
                       for f, (w, _, _) in zip(own, cs))
        return (f"{head}, a copy per output width) */\n" + "\n".join(parts)
                + f"\nstatic void {fn}({SIGNATURE}) {{\n{move}{body}}}")

    def pairs(head: str, fn: str, lift: bool) -> str:
        # paired: fn runs a call TAIL_PIXELS pixels at a time through its copy fn_wN (the pair's pad_left, and the
        # LIFTED fields where shared, in a bt_conv_params of its own: fn_wN reads no other field of it)
        _, q, rows = cs[0]
        n, ops, sw = TAIL_PIXELS, q["out"]["pixel_stride"], fields["stride_w"]
        own = f"{fn}_w{n}"
        sets = "".join(f"  c.{k} = p->{k};\n" for k in LIFTED) + ("  c.in.w = p->in.w;\n" if shape == "box" else "") \
            if lift else ""
        return (f"{head}, {n} output pixels a call: tile_kernels.paired) */\n"
                f"static void __attribute__((noinline)) {own}({SIGNATURE}) {{\n{move}"
                + run(lifted(q, shape) if lift else q, rows, "  ") + "}\n"
                f"static void {fn}({SIGNATURE}) {{\n"
                f"  bt_conv_params c;\n"
                f"  int8_t sc[{n * ops}] __attribute__((aligned(4)));   /* a last pixel's pair */\n"
                + sets
                + f"  int32_t x = 0;\n"
                f"  if (p->out.w == {n}) {{ {own}(p, in, in_y0, out, y0, y1); return; }}   /* most calls */\n"
                f"  for (; x + {n} <= p->out.w; x += {n}) {{\n"
                f"    c.pad_left = p->pad_left - x * {sw};\n"
                f"    {own}(&c, in, in_y0, out + x * {ops}, y0, y1);\n  }}\n"
                f"  if (x < p->out.w) {{\n"
                f"    c.pad_left = p->pad_left - x * {sw};\n"
                f"    {own}(&c, in, in_y0, sc, y0, y1);\n"
                f"    for (int32_t j = 0; x + j < p->out.w; j++)\n"
                f"      for (int32_t k = 0; k < {q['out']['c']}; k++) out[(x + j) * {ops} + k] = sc[j * {ops} + k];\n"
                f"  }}\n}}")

    if shared is None:
        e.declare(text(f"op {op.index}'s", fn, False))
        return fn
    key = text("", "", True)
    if key not in shared:
        shared[key] = [len(e.decls), fn, [op.index]]
        e.declare(text(f"op {op.index}'s", fn, False))
        return fn
    at, first, ops = shared[key]
    ops.append(op.index)
    e.decls[at] = text(f"ops {', '.join(map(str, ops))}'s", first, True).replace(
        "on its constants", f"reading {', '.join(LIFTED)}{', in.w' if shape == 'box' else ''} from p")
    return first


# -- cortex-m55 (Helium): the conv's filter sums made here --------------------------------------------
# Its dispatcher sums every output channel's filter on each call, for the input offset (bias +
# input_offset * sum(w), the start value of every window inside the image): as much work as a pixel's
# MACs, and the runtime calls it per tile, band or row. Its tile kernel passes those values, made here,
# to bt_conv_s8_kb (kernels/cortex-m55/bt_variants.h).
KB_GUARD = "BT_VARIANTS_CORTEX_M55"


def helium(e) -> bool:
    """Does the board's kernel set take tile kernels with filter sums (the cortex-m55 set)?"""
    return e.variants is not None and e.variants[0] == KB_GUARD


def kernel_bias(g, op, input_offset: int) -> list:
    """bias[oc] + input_offset * sum(filter[oc]) per output channel, wrapping as int32 (the C's uint32 sums)."""
    w = g.tensors[op.inputs[1]].data.astype("int64").reshape(g.tensors[op.inputs[1]].shape[0], -1)
    b = op.inputs[2] if len(op.inputs) > 2 else -1
    bias = g.tensors[b].data.astype("int64") if b >= 0 else 0
    kb = (bias + input_offset * w.sum(axis=1)) & 0xFFFFFFFF
    return [int(v) - (1 << 32) if v >= 1 << 31 else int(v) for v in kb]


def define_kb(e, g, op, params: str, input_offset: int) -> str:
    """Declare op's cortex-m55 tile kernel: bt_conv_s8_kb with the layer's kernel_bias from the channel
    of the call's multiplier on (a channel group moves p->multiplier); returns the function's name."""
    n = f"op{op.index}"
    kb = kernel_bias(g, op, input_offset)
    e.used_variants["BT_CONV_KB(p, kb, in, in_y0, out, y0, y1)"] = "bt_conv_s8(p, in, in_y0, out, y0, y1)"
    e.declare(f"static const int32_t {n}_kb[{len(kb)}] = {c_ints(kb)};")
    e.declare(f"/* op {op.index}'s tile kernel: bias + input offset x filter sums made at code generation (fx_win_k) */\n"
              f"static void {n}_tk({SIGNATURE}) {{\n"
              f"  BT_CONV_KB(p, {n}_kb + (p->multiplier - {params}.multiplier), in, in_y0, out, y0, y1);\n}}")
    return f"{n}_tk"


# -- cortex-m: the depthwise path each tile call takes -----------------------------------------------------
# bt_depthwise_s8_m1_rq2 / _m1 pick a path per call (cortex-m/depthwise.c dw_path) from a table of every path: a fused
# block passing them links all of them. When every call the runtime makes of a layer takes the same path (worked out
# here on each call's parameters, dw_path's rules for any call: kernel_variants' "depthwise_m1" rows state them for
# model.c's whole-map calls), model.c passes that path instead, so the plan links only the paths its blocks take.
DW_RLS = (8, 16, 32, 56)  # depthwise.c dw_rls
DW_M1 = {"bt_depthwise_s8_m1_rq2": 1, "bt_depthwise_s8_m1": 0}  # the variants that dispatch by dw_path -> fast


def _dw_li(need: int) -> int:
    return next((k for k, rl in enumerate(DW_RLS) if rl >= need), len(DW_RLS) - 1)


def _q4_terms(p: dict) -> bool:
    """bt_dw_q4's requantisation terms on every channel of a call (p as dw_call_path's): the whole int8 range, every
    bias under 2^29, every shift -22 and up."""
    bias = p["bias"] or [0] * p["out"]["c"]
    return (p["act_min"] == -128 and p["act_max"] == 127 and all(-(1 << 29) <= b < 1 << 29 for b in bias)
            and all(-s - 1 <= 21 for s in p["shifts"]))


def _q4_rl(ow: int) -> int:
    """The row length RL on which bt_dw_rows_q4_RL runs a row of ow outputs (depthwise.c dw_rows_q4_li: strips of at
    most DW_NS1 outputs, each at least 4, all of one row length), 0 for none."""
    ns = kernel_variants.strip_outputs(ow, kernel_variants.DW_NS1)
    lis = {_dw_li(((n + 1) & ~1) + 2) for n in ns}
    return DW_RLS[lis.pop()] if min(ns) >= 4 and len(lis) == 1 else 0


def _whole_column(p: dict, in_y0: int, y0: int, y1: int) -> bool:
    """Is a call (p as dw_call_path's) a 3x3 undilated layer's column under DW_MIN_WIDTH 4 outputs wide, of the
    layer's full height from its window's first row, tall enough that dw_rows_geo runs it transposed as one row?"""
    o = p["out"]
    return (p["kh"] == 3 and p["kw"] == 3 and p["dil_h"] == 1 and p["dil_w"] == 1 and o["w"] < 4 and y0 == 0
            and y1 == o["h"] and in_y0 == 0 and o["h"] >= 2 * o["w"])


def dw_call_path(p: dict, in_y0: int, y0: int, y1: int, fast: int) -> str:
    """depthwise.c dw_path of one call of out rows [y0, y1) (p: the call's bt_conv_params fields, with "bias",
    "multipliers", "shifts" its channels' values), as a "depthwise_m1" path's name."""
    o, i = p["out"], p["in"]
    kh, kw, sw, sh = p["kh"], p["kw"], p["stride_w"], p["stride_h"]
    d1 = p["dil_h"] == 1 and p["dil_w"] == 1
    rows, n_c = y1 - y0, o["c"]
    q4 = fast and _q4_terms(p)
    rq2 = "_rq2" if fast else ""
    if kh in (5, 7) and kw == kh and d1 and sw in (1, 2) and sh >= 1 and o["w"] > 0 and rows * o["w"] >= 16:
        return f"bt_dw_kxk{rq2}"
    dw3 = kh == 3 and kw == 3 and d1
    if sw == 2:
        pb = (o["h"] - 1) * 2 + 3 - p["pad_top"] - i["h"]
        pr = (o["w"] - 1) * 2 + 3 - p["pad_left"] - i["w"]
        if (q4 and dw3 and sh == 2 and n_c % 4 == 0 and n_c > 0 and o["w"] >= 3 and rows >= 2
                and 12 * (o["w"] + 1) <= 576 and 0 <= p["pad_left"] <= 1 and 0 <= p["pad_top"] <= 1 and pb <= 1
                and pr <= 1):
            return "bt_dw_s2g"
    if ((sw == 2 or rows * o["w"] <= 64) and o["w"] >= 3 and dw3 and sh >= 1 and sw >= 1 and n_c % 4 == 0
            and n_c > 0 and y1 > y0 and (o["w"] - 1) * sw + 3 <= 56):
        if sw == 1 and rows >= 2 and q4:
            return f"bt_dw_planes_{kernel_variants.dw_planes_cells(o['w'])}"
        return f"bt_dw_small{rq2}"
    if dw3 and sw in (1, 2) and sh >= 1 and rows * o["w"] >= 16 and rows >= 2 and o["w"] >= 4:
        t = y0 == 0 and y1 == o["h"] and in_y0 == 0 and sh == sw and o["w"] < 8 and o["h"] >= 2 * o["w"]
        ow, s = (o["h"], sh) if t else (o["w"], sw)
        rl = _q4_rl(ow) if q4 and s == 1 and n_c % 4 == 0 else 0
        return f"bt_dw_rows_q4_{rl}" if rl else f"bt_dw_rows{rq2}"
    return f"bt_dw_box{rq2}"


def dw_small_entry(p: dict, fast: int) -> str:
    """The bt_dw_small_* entry (cortex-m bt_variants.h; depthwise.c dw_small_b) of a call dw_call_path names
    bt_dw_small_rq2 / bt_dw_small (p as there): its row length's, with every group of four channels on the sat path
    at its stride ("s1", "s2"), none ("f": bt_rq2; "m": bt_mbqm_fast), or "" (the groups differ, or a sat group at
    another stride: the path's own name)."""
    o = p["out"]
    rl = DW_RLS[_dw_li((o["w"] - 1) * p["stride_w"] + 3)]
    full = fast and p["act_min"] == -128 and p["act_max"] == 127
    bias = p["bias"] or [0] * o["c"]
    ok = [-s - 1 <= 21 and -(1 << 29) <= b < 1 << 29 for s, b in zip(p["shifts"], bias)]
    sat = {bool(full) and all(ok[c:c + 4]) for c in range(0, o["c"], 4)}
    if sat == {False}:
        return f"bt_dw_small_{'f' if fast else 'm'}_{rl}"
    return f"bt_dw_small_s{p['stride_w']}_{rl}" if sat == {True} and p["stride_w"] in (1, 2) else ""


def win_geom(f: dict, ib: dict, ob: dict, ca: int, cb: int, ch: int) -> tuple:
    """reference/fused_ref.h win_geom for a conv or depthwise (f: the layer's fields; ib, ob: the buffers: "wp", "ps", "c0",
    "rows" (a row-banded tensor's row addresses, or None); ch >= 0: channels [ch, ch + ib["ps"])): (x0, the call's
    fields, its first channel, its channel count)."""
    q = dict(f, **{"in": dict(f["in"]), "out": dict(f["out"])})
    c0, n = 0, f["out"]["c"]
    if ch >= 0:
        c0, n = ch, ib["ps"]
        q["in"]["c"] = q["out"]["c"] = n
    s, k = f["stride_w"], (f["kw"] - 1) * f["dil_w"] + 1
    w, nlo, nhi = f["in"]["w"], ca * s - f["pad_left"], (cb - 1) * s - f["pad_left"] + k
    x0 = 0 if ib["rows"] is not None else 0 if nlo < 0 else w - ib["wp"] if nhi > w else ib["c0"]
    q["pad_left"] = f["pad_left"] + x0 - ca * s
    if k == 1 and q["pad_left"] < 0 and cb - ca > 1:
        x0 -= q["pad_left"]
        q["pad_left"] = 0
    q["in"].update(w=ib["wp"], pixel_stride=ib["ps"])
    q["out"].update(w=cb - ca, pixel_stride=ob["ps"])
    return x0, q, c0, n


def dw_box_calls(f: dict, ib: dict, ob: dict, ra: int, rb: int, ca: int, cb: int, ch: int):
    """The depthwise kernel calls reference/fused_ref.h win_kind_b (FX_DW, no box paths) makes for output rows
    [ra, rb) x cols [ca, cb): (fields, first channel, channels, in_y0, y0, y1) each; None when it would make one
    this does not work out (a 1-row filter's runs on row bands)."""
    x0, q, c0, n = win_geom(f, ib, ob, ca, cb, ch)
    calls = []
    if ib["rows"] is not None:
        rows, pitch = ib["rows"], ib["wp"] * ib["ps"]
        if q["kh"] == 1:
            return None
        span = (q["kh"] - 1) * q["dil_h"] + 1
        for y in range(ra, rb):
            iy = y * q["stride_h"] - q["pad_top"]
            r0, r1 = max(iy, 0), min(iy + span, q["in"]["h"])
            if r1 > r0 and rows[r1 - 1] - rows[r0] == (r1 - 1 - r0) * pitch:
                calls.append((q, c0, n, r0, y, y + 1))
        return calls
    whole = ob["rows"] is None and ca == ob["c0"] and cb - ca == ob["wp"]
    for y in ([ra] if whole else range(ra, rb)):
        calls.append((q, c0, n, ib["r0"], y, rb if whole else y + 1))
    return calls


def dw_col_calls(f: dict, ib: dict, ob: dict, ra: int, rb: int, ca: int, cb: int):
    """The depthwise kernel calls reference/fused_ref.h fx_win_dk_cols makes for output rows [ra, rb) x cols [ca, cb)
    (all channels): one per output column, out.w 1 and out.pixel_stride the output buffer's row pitch, as dw_box_calls'
    tuples; None on a row-banded input or output (fx_win_dk_cols takes neither)."""
    if ib["rows"] is not None or ob["rows"] is not None:
        return None
    calls = []
    for x in range(ca, cb):
        _, q, c0, n = win_geom(f, ib, ob, x, x + 1, -1)
        q["out"]["pixel_stride"] = ob["wp"] * ob["ps"]
        calls.append((q, c0, n, ib["r0"], ra, rb))
    return calls


def dw_cols_entry(calls, values: dict, fast: int) -> str | None:
    """The entry dw_column_entry names for every one of a layer's calls (dw_col_calls', or dw_box_calls' where each
    is such a column) where it names one for all (the box path fx_win_dk's calls take, a call per output row of a box narrower than its
    window, costs several times more: mbv2-w0.35's least-RAM plan in the arena, op 7's 648 calls of two pixels on
    bt_dw_pix4_rq2), else None."""
    if not calls or not fast:
        return None
    names = {dw_column_entry(dict(q, **{k: v[c0:c0 + n] for k, v in values.items()}), in_y0, y0, y1)
             for q, c0, n, in_y0, y0, y1 in calls}
    return names.pop() if len(names) == 1 and None not in names else None


# the most output pixels of a call whose box path runs the general pixels alone (depthwise.c bt_dw_pix_rq2: the 3x3
# interior's set-up, nine weights unpacked a call, buys nothing on so few; its code, 5 KB, not linked) ...
PIX_MAX = 2
# ... when at most 1 / PIX_SHARE of the layer's output pixels are in larger calls (vww's op 5: one column tile of 72 of
# its 576, the interior's gain on it less than its code's worth)
PIX_SHARE = 4


def dw_call_paths(calls, values: dict, fast: int) -> list:
    """[(dw_call_path's path, the call's parameters)] of each call (dw_box_calls'). values: the layer's per-channel
    "bias", "multipliers", "shifts"."""
    out = []
    for q, c0, n, in_y0, y0, y1 in calls:
        p = dict(q, **{k: v[c0:c0 + n] for k, v in values.items()})
        out.append((dw_call_path(p, in_y0, y0, y1, fast), p))
    return out


def dw_shared_entries(calls, values: dict, fast: int):
    """The plain plan's shared depthwise entries that give every call (dw_box_calls') the bytes of its path, whatever
    its rows, as (kind, options), or None: ("rows", row lengths RL) where depthwise.c bt_dw_rows_q4e_RL (dw_q4s on
    bt_dw_q4e_RL: 3x3 stride 1 along the row, bt_dw_q4's terms, every strip of at most RL - 2 and DW_NS1 outputs a
    whole number of quads, at least 4) runs every call; ("s2g", (out.w % 6,)) where bt_dw_s2g_N (dw_s2: dw_s2_ok on
    every call but its two rows, which are for speed: dw_s2 runs one row, its tap row 2 inside the image or not)
    does. A fused tile's calls of whole rows (a row-band or line-buffer tile) then run the loops the plain plan's
    layers link anyway (fused_c.dw_path), not dw_small's one-row band (vww's ops 1, 3: 4.6 KB)."""
    if not calls or not fast:
        return None
    values = dict(values, bias=values["bias"] or [0] * len(values["multipliers"]))
    kinds, rls, tails = set(), set(DW_RLS), set()
    for q, c0, n, in_y0, y0, y1 in calls:
        p = dict(q, **{k: v[c0:c0 + n] for k, v in values.items()})
        o, i = p["out"], p["in"]
        mm = all(-(1 << 29) <= b < 1 << 29 for b in p["bias"])
        q4 = p["act_min"] == -128 and p["act_max"] == 127 and mm and all(-s - 1 <= 21 for s in p["shifts"])
        if not (q4 and p["kh"] == 3 and p["kw"] == 3 and p["dil_h"] == 1 and p["dil_w"] == 1 and o["c"] % 4 == 0
                and o["c"] > 0 and y1 > y0):
            return None
        if p["stride_w"] == 1:
            kinds.add("rows")
            rls = {rl for rl in rls if kernel_variants.dw_rows_entry(p, rl) == f"bt_dw_rows_q4e_{rl}"}
        elif p["stride_w"] == 2 and p["stride_h"] == 2:
            kinds.add("s2g")
            pb = (o["h"] - 1) * 2 + 3 - p["pad_top"] - i["h"]
            pr = (o["w"] - 1) * 2 + 3 - p["pad_left"] - i["w"]
            if not (o["w"] >= 3 and 12 * (o["w"] + 1) <= 576 and 0 <= p["pad_left"] <= 1 and 0 <= p["pad_top"] <= 1
                    and pb <= 1 and pr <= 1):
                return None
            tails.add(o["w"] % 6)
        else:
            return None
    if kinds == {"rows"} and rls:
        return "rows", tuple(sorted(rls))
    if kinds == {"s2g"} and len(tails) == 1:
        return "s2g", tuple(tails)
    return None


def dw_path_of_calls(calls, values: dict, fast: int, paths: list | None = None, columns: bool = True):
    """The one path every call (dw_box_calls') takes (dw_small's, its entry of the calls' row length and requantisation:
    dw_small_entry), or None (several, or a call not worked out). values: the layer's per-channel "bias",
    "multipliers", "shifts"; paths: dw_call_paths' of them, where the caller has it."""
    if calls is None:
        return None
    names = set()
    for name, p in paths if paths is not None else dw_call_paths(calls, values, fast):
        names.add(name if name not in ("bt_dw_small_rq2", "bt_dw_small") else dw_small_entry(p, fast) or name)
        if len(names) > 1:
            return None
    name = names.pop() if names else None
    if name == "bt_dw_box_rq2" and columns:
        column = dw_cols_entry(calls, values, fast)
        if column is not None:
            return column
    sizes = [(y1 - y0) * q["out"]["w"] for q, _, _, _, y0, y1 in calls]
    if name == "bt_dw_box_rq2" and sum(n for n in sizes if n > PIX_MAX) * PIX_SHARE <= sum(sizes):
        return "bt_dw_pix4_rq2" if all(dw_pix4(q, n) for q, _, n, _, _, _ in calls) else "bt_dw_pix_rq2"
    return name


def dw_column_rl(p: dict, in_y0: int, y0: int, y1: int) -> int:
    """The row length RL of depthwise.c bt_dw_rows_q4_RL where it gives a call the box path takes (dw_call_path's
    bt_dw_box_rq2) its bytes and runs it faster: a whole column box of a fused tile (out.w < DW_MIN_WIDTH 4, the
    layer's full height, the window from its first row), which dw_rows_geo runs transposed (its column one row of
    out.h outputs, 3 input rows: the window's columns) on bt_dw_q4's terms (dw_rows_q4_li: 3x3 undilated, stride 1,
    the whole int8 range, channels in fours, every bias under 2^29 and shift -22 and up, every strip of at least 4
    outputs and one row length); else 0. The box path's interior loop unpacks the nine weights of each group of four
    channels a call and runs the border rows pixel by pixel: on mbv2-w0.35's 9x1 column tiles (ops 25, 29, 33 of its
    least-RAM plan, input streamed) 2.75x the plain plan's instructions (734 K against 267 K; 515 K on
    bt_dw_rows_q4_16, which model.c passes there at optimize_code=speed: fused_c.resolve_columns)."""
    o = p["out"]
    if not (_whole_column(p, in_y0, y0, y1) and p["stride_h"] == 1 and p["stride_w"] == 1 and o["c"] % 4 == 0
            and o["c"] > 0 and _q4_terms(p)):
        return 0
    return _q4_rl(o["h"])


def dw_rows_rls(ow: int) -> list:
    """The row lengths RL on which depthwise.c bt_dw_rows_q4_RL runs a row of ow outputs (a column transposed) all on
    bt_dw_q4: dw_rows' strips of at most RL - 2 (and DW_NS1 54) outputs, each at least 4 (model_c._share_dw_rows
    moves plain layers onto a row length the same way)."""
    return [rl for rl in DW_RLS if min(kernel_variants.strip_outputs(ow, min(rl - 2, kernel_variants.DW_NS1))) >= 4]


def dw_column_entries(calls, values: dict, fast: int) -> list:
    """The entries that give a layer's column calls (dw_cols_entry's) their bytes, its own first: on bt_dw_rows_q4_RL,
    those of every other row length dw_rows_rls allows for all of them (the firmware may link one anyway); [] where
    dw_cols_entry names none."""
    name = dw_cols_entry(calls, values, fast)
    if name is None or not name.startswith("bt_dw_rows_q4_"):
        return [name] if name else []
    rls = set(DW_RLS)
    for q, _, _, _, _, _ in calls:
        rls &= set(dw_rows_rls(q["out"]["h"]))
    return [name] + [f"bt_dw_rows_q4_{rl}" for rl in sorted(rls) if f"bt_dw_rows_q4_{rl}" != name]


def dw_column_entry(p: dict, in_y0: int, y0: int, y1: int) -> str | None:
    """The depthwise.c entry that runs a call (p: its fields and channels' values, as dw_call_path's; the layer's
    variant bt_depthwise_s8_m1_rq2) of a column under 4 outputs wide, of at least 4 rows and the layer's full height,
    its window from the first row, transposed as one row (dw_rows_geo): bt_dw_rows_q4_RL on bt_dw_q4's terms
    (dw_column_rl), else bt_dw_rows_rq2 (dw_rows, any 3x3 undilated call at equal strides 1 or 2); None for another
    call (the box path's: dw_call_path)."""
    rl = dw_column_rl(p, in_y0, y0, y1)
    if rl:
        return f"bt_dw_rows_q4_{rl}"
    if (_whole_column(p, in_y0, y0, y1) and p["stride_h"] == p["stride_w"] and p["stride_w"] in (1, 2)
            and p["out"]["h"] >= 4):
        return "bt_dw_rows_rq2"
    return None


def dw_pix4(q: dict, n: int) -> bool:
    """depthwise.c bt_dw_pix4_rq2 gives bt_dw_pix_rq2's bytes on a call of n channels with fields q: channels in fours,
    a 3-wide filter undilated, every output pixel's taps inside the input two or three a tap row (its straight-line
    rows; not its general tap loop nor its remainder channels, 0.6 KB of bt_dw_pix_rq2's 1.9)."""
    if n % 4 or q["kw"] != 3 or q["dil_w"] != 1:
        return False
    w, s, pad = q["in"]["w"], q["stride_w"], q["pad_left"]
    return all(min(x * s - pad + 3, w) - max(x * s - pad, 0) >= 2 for x in range(q["out"]["w"]))
