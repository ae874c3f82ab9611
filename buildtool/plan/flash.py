"""The weights flash image: constant tensors laid out for in-place reads.

Weights never live in RAM: the firmware links this image into a flash section
and the generated code reads each tensor at its offset. Offsets depend only on
tensor shapes and types (never on values), so a change of weight values
changes weights.bin and nothing else.

Layout (little-endian):
  0   4  magic b"BTWF"
  4   4  format version (FORMAT_VERSION)
  8   4  header size (HEADER_BYTES)
  12  4  payload size in bytes (tensors, after the header)
  16  4  CRC-32 (zlib) of the payload
  20  4  tensor alignment in bytes
  24 16  target name, NUL-padded ASCII
  40 16  model hash: first 16 bytes of Graph.structure_hash() (no weight values)
  56  4  external part: offset of the tensors placed in an external memory region (0: none)
  60  4  CRC-32 of the external part's tensor indices (u32 each; 0 when none): the code checks both
Tensor offsets are from the start of the image; the payload starts at HEADER_BYTES. A tensor the board's
kernels read in another order (plan/weight_order.py) is held in that order, in the same bytes. The
requantisation tables (plan/requant_tables.py: each layer's multipliers and shifts) follow the tensors of the
primary part. When a board's placement (buildtool/plan/regions.py) puts tensors in an external region, those
come last, from a multiple of 64 (the external part), and weights.S links that part into the region's own
section. Format 2 added the tables (a format 1 image has none).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from ..errors import PlanError, UsageError
from ..fsutil import write_atomic
from ..model.ir import Graph
from ..model.opdefs import OPDEFS
from . import align_up, requant_tables, weight_order

MAGIC = b"BTWF"
FORMAT_VERSION = 2
HEADER_BYTES = 64
EXT_ALIGN = 64  # the external part's start in the image (its section is aligned as much)
_HEADER = struct.Struct("<4sIIIII16s16sII")

# Constant inputs that describe structure (read by the code generator and
# compiled into model.c), not data a kernel streams: (opcode, input position).
STRUCTURAL_INPUTS = {(d.name, pos) for d in OPDEFS for pos in d.structural}


@dataclass(frozen=True)
class FlashInfo:
    target: str
    model_hash: bytes
    payload_bytes: int
    crc32: int
    align: int
    version: int
    ext_offset: int = 0  # where the external part starts (0: no external part)


def flash_tensors(g: Graph) -> list:
    """Constant tensor indices the kernels read from flash, in first-use order."""
    out = []
    subs = getattr(g, "subgraphs", {})  # control flow: the subgraphs' constants follow the model's
    for op in list(g.operators) + [op for k in sorted(subs) for op in subs[k].operators]:
        for pos, i in enumerate(op.inputs):
            if i >= 0 and g.tensors[i].is_const and (op.opcode, pos) not in STRUCTURAL_INPUTS and i not in out:
                out.append(i)
    return out


def layout(g: Graph, align: int = 16, groups=None) -> dict:
    """tensor index -> byte offset in the image (shapes only, so stable under weight changes).
    groups (a placement's [primary, external] tensor lists): the external ones from ext_offset."""
    return _layout(g, align, groups)[0]


def table_offsets(g: Graph, align: int = 16, groups=None) -> dict:
    """operator index -> byte offset of its requantisation table (requant_tables.py) in the image: after the
    primary part's tensors, back to back from a multiple of align and of 8 (each a multiple of 8 bytes long)."""
    return _layout(g, align, groups)[1]


def _layout(g: Graph, align: int, groups) -> tuple:
    """(tensor offsets, table offsets, the image's end before its padding)."""
    offsets, tables, off = {}, {}, HEADER_BYTES
    for k, group in enumerate(groups or [flash_tensors(g)]):
        if k:
            off = align_up(off, EXT_ALIGN)
        for i in group:
            off = align_up(off, align)
            offsets[i] = off
            off += g.tensors[i].nbytes
        if not k:  # the tables back to back (8 bytes a channel) from a multiple of align and of 8
            off = align_up(off, max(align, 8))
            for op, n in requant_tables.sizes(g):
                tables[op] = off
                off += n
    return offsets, tables, off


def padded_bytes(g: Graph, align: int = 16) -> int:
    """The header, every weight tensor and the requantisation tables rounded up to align: what the image needs
    in one region at most."""
    return HEADER_BYTES + sum(align_up(g.tensors[i].nbytes, align) for i in flash_tensors(g)) + tables_bytes(g, align)


def tables_bytes(g: Graph, align: int = 16) -> int:
    """The requantisation tables' bytes in the image, rounded up to align (and 8): all in its primary part."""
    return align_up(sum(n for _, n in requant_tables.sizes(g)), max(align, 8))


def ext_offset(g: Graph, align: int = 16, groups=None) -> int:
    """Where the external part of the image starts (0 when there is none)."""
    if not groups or len(groups) < 2 or not groups[1]:
        return 0
    return layout(g, align, groups)[groups[1][0]]


def model_hash(g: Graph) -> bytes:
    return bytes.fromhex(g.structure_hash())[:16]


def ext_signature(groups=None) -> int:
    """The CRC-32 of which tensors the external part holds (0 when there is none)."""
    if not groups or len(groups) < 2 or not groups[1]:
        return 0
    return zlib.crc32(struct.pack(f"<{len(groups[1])}I", *groups[1]))


def image_bytes(g: Graph, align: int, groups=None) -> int:
    """The image's length, header included (model.h's WEIGHTS_BYTES): its last tensor's or table's end, padded
    to align."""
    return align_up(_layout(g, align, groups)[2], align)


def build_image(g: Graph, target: str, align: int = 16, groups=None) -> bytes:
    """The complete flash image for graph g on board `target` (groups: see layout)."""
    if align < 1 or align > HEADER_BYTES or align & (align - 1):
        raise UsageError(f"flash alignment {align} must be a power of two up to {HEADER_BYTES}")
    offsets, at, end = _layout(g, align, groups)
    body = bytearray(align_up(end, align) - HEADER_BYTES)
    order = weight_order.orders(g, target)  # the tensors the board's kernels read reordered
    raws = [(off, weight_order.image_bytes(g, i, order.get(i))) for i, off in offsets.items()]
    raws += [(at[op.index], requant_tables.table_bytes(m, s)) for op, m, s in requant_tables.tables(g)]
    for off, raw in raws:
        body[off - HEADER_BYTES:off - HEADER_BYTES + len(raw)] = raw
    name = target.encode("ascii")[:15]
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, HEADER_BYTES, len(body), zlib.crc32(body), align,
                        name, model_hash(g), ext_offset(g, align, groups), ext_signature(groups))
    return head + bytes(body)


def write_image(path: str, image: bytes) -> None:
    write_atomic(path, image)


def parse_header(data: bytes) -> FlashInfo:
    if len(data) < HEADER_BYTES:
        raise UsageError(f"flash image is {len(data)} bytes, shorter than its {HEADER_BYTES}-byte header")
    magic, ver, hsize, size, crc, align, name, mhash, ext, _ = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise UsageError(f"not a buildtool flash image (magic {magic!r}, expected {MAGIC!r})")
    if ver != FORMAT_VERSION or hsize != HEADER_BYTES:
        raise UsageError(f"flash image format version {ver} (header {hsize} B) is not supported "
                         f"(expected version {FORMAT_VERSION}); rebuild it with this buildtool")
    if ext and not HEADER_BYTES <= ext <= HEADER_BYTES + size:
        raise UsageError(f"flash image's external part starts at {ext}, outside its {HEADER_BYTES + size} bytes")
    return FlashInfo(name.rstrip(b"\0").decode("ascii", "replace"), mhash, size, crc, align, ver, ext)


def verify(path: str) -> FlashInfo:
    """Check magic, version, size and CRC of a flash image file; raise UsageError naming the problem."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read flash image {path}: {e.strerror}") from None
    info = parse_header(data)
    if len(data) != HEADER_BYTES + info.payload_bytes:
        raise UsageError(f"{path}: size {len(data)} B does not match the header "
                         f"({HEADER_BYTES} + {info.payload_bytes} B); the image is truncated or padded")
    crc = zlib.crc32(data[HEADER_BYTES:])
    if crc != info.crc32:
        raise UsageError(f"{path}: CRC-32 {crc:08x} does not match the header {info.crc32:08x}; the image is corrupt")
    return info


def describe(path: str, info: FlashInfo) -> str:
    """One line for `buildtool flash verify`."""
    return (f"{path}: ok, format {info.version}, target {info.target}, {info.payload_bytes} bytes of tensors "
            f"(aligned {info.align}), crc32 {info.crc32:08x}, model {info.model_hash.hex()}"
            + (f", {HEADER_BYTES + info.payload_bytes - info.ext_offset} bytes external from offset {info.ext_offset}"
               if info.ext_offset else ""))


def split_defines(t, data: bytes) -> list:
    """The -D flags that split an image (data: at least its header) at its external part, for weights.S on
    board t (none when it has none)."""
    ext = parse_header(data[:64]).ext_offset
    if not ext:
        return []
    regs = t.external_regions()
    if len(regs) != 1:
        raise PlanError(f"the weights have an external part but board {t.name} has "
                        f"{len(regs)} external weight regions")
    return ext_defines(regs[0], ext)


def ext_defines(region, offset: int) -> list:
    """weights.S's -D flags putting the image's bytes from offset on in region's section (bt_weights_ext)."""
    return [f"-DBT_WEIGHTS_EXT_OFFSET={offset}", f"-DBT_WEIGHTS_EXT_SECTION=.bt_weights_{region.name}"]


def split_header(t, data: bytes) -> str:
    """split_defines as a header weights.S can #include first."""
    lines = ["/* The split of weights.bin (buildtool gen flash --split-header): its part in external memory. */"]
    for flag in split_defines(t, data):
        name, value = flag[2:].split("=", 1)
        lines.append(f"#define {name} {value}")
    return "\n".join(lines) + "\n"
