"""TFLite Micro's offline memory plan (`OfflineMemoryAllocation` metadata): read it from a .tflite file,
and write a file that carries one, with its subgraph's operators in a given order.

The format (TFLite Micro's micro_allocation_info.cc, GetOfflinePlannedOffsets; docs/memory_management.md):
a Metadata entry named "OfflineMemoryAllocation" whose buffer holds little-endian int32 words
[version, number of subgraphs, n, offset of tensor 0, ..., offset of tensor n-1]. TFLite Micro ignores the
first two words, requires n to equal the model's tensor count over all subgraphs, and reads each tensor's
offset from the start of the arena's head; -1 leaves the tensor to its own (online) planner. It indexes the
offsets with each subgraph's own tensor index, so a plan can only describe a model of one subgraph.

The file is written by editing the original bytes, not by re-serialising the graph: everything TFLite and
TFLite Micro read (tensors, weights, options, operator versions, signatures, other metadata) stays byte for
byte as it was. The new root table (a copy of the old one with the buffers and metadata vectors extended),
the plan's buffer and its metadata entry are put in front of the old bytes (flatbuffer offsets point forward
only; the prefix is a multiple of 16 bytes, so every old buffer keeps its alignment), and the subgraph's
operator vector is permuted in place (its entries point forward to operator tables written after it).
"""

from __future__ import annotations

import struct

from ..errors import ModelError

NAME = "OfflineMemoryAllocation"
FORMAT_VERSION = 0  # word 0: TFLite Micro ignores it
ONLINE = -1
ALIGN = 16

# field numbers of the schema's tables (tensorflow/lite/schema/schema.fbs)
MODEL_FIELDS = 8  # version, operator_codes, subgraphs, description, buffers, metadata_buffer, metadata, signature_defs
M_VERSION, M_SUBGRAPHS, M_BUFFERS, M_METADATA = 0, 2, 4, 6
SG_TENSORS, SG_OPERATORS = 0, 3
OP_OUTPUTS = 2
MD_NAME, MD_BUFFER = 0, 1
BUF_DATA = 0


class _Flat:
    """Just enough of the flatbuffer layout to find a table's fields and follow offsets."""

    def __init__(self, data: bytes, source: str):
        self.d, self.source = data, source

    def u32(self, pos: int) -> int:
        return struct.unpack_from("<I", self.d, pos)[0]

    def field(self, table: int, k: int) -> int | None:
        """Absolute position of field k of the table at `table`, or None when absent."""
        vt = table - struct.unpack_from("<i", self.d, table)[0]
        vt_len = struct.unpack_from("<H", self.d, vt)[0]
        if 4 + 2 * k >= vt_len:
            return None
        off = struct.unpack_from("<H", self.d, vt + 4 + 2 * k)[0]
        return table + off if off else None

    def ref(self, table: int, k: int) -> int | None:
        """Where field k (an offset field) points, or None."""
        p = self.field(table, k)
        return None if p is None else p + self.u32(p)

    def vector(self, table: int, k: int) -> list:
        """Absolute positions of the tables a vector-of-tables field points to ([] when absent)."""
        v = self.ref(table, k)
        if v is None:
            return []
        return [v + 4 + 4 * i + self.u32(v + 4 + 4 * i) for i in range(self.u32(v))]

    def string(self, pos: int) -> bytes:
        return self.d[pos + 4:pos + 4 + self.u32(pos)]

    def root(self) -> int:
        if len(self.d) < 8 or self.d[4:8] != b"TFL3":
            raise ModelError(f"{self.source}: not a TFLite model (no 'TFL3' flatbuffer identifier)")
        return self.u32(0)


def _parse(data: bytes, source: str) -> tuple:
    f = _Flat(bytes(data), source)
    try:
        model = f.root()
        return f, model, f.vector(model, M_SUBGRAPHS), f.vector(model, M_BUFFERS), f.vector(model, M_METADATA)
    except struct.error:
        raise ModelError(f"{source}: corrupt or truncated TFLite flatbuffer (read past the end)") from None


def _name(f: _Flat, metadata: int) -> bytes:
    p = f.ref(metadata, MD_NAME)
    return b"" if p is None else f.string(p)


def read(data: bytes, source: str = "<bytes>") -> dict | None:
    """The model's OfflineMemoryAllocation, or None: {"version", "subgraphs", "offsets": [int], "planned": how
    many offsets are not -1, "tensors": the model's tensor count}."""
    f, model, sgs, bufs, metas = _parse(data, source)
    try:
        for m in metas:
            if _name(f, m) != NAME.encode():
                continue
            p = f.field(m, MD_BUFFER)
            b = f.u32(p) if p is not None else 0
            if b >= len(bufs):
                raise ModelError(f"{source}: its {NAME} metadata names buffer {b}, but the model has {len(bufs)}")
            v = f.ref(bufs[b], BUF_DATA)
            raw = f.string(v) if v is not None else b""
            if len(raw) < 12 or len(raw) % 4:
                raise ModelError(f"{source}: its {NAME} metadata holds {len(raw)} bytes, not a header of 3 int32 "
                                 f"words and one word per tensor")
            words = struct.unpack(f"<{len(raw) // 4}i", raw)
            n = words[2]
            if n != len(words) - 3:
                raise ModelError(f"{source}: its {NAME} metadata says {n} offsets but holds {len(words) - 3}")
            tensors = sum(len(f.vector(s, SG_TENSORS)) for s in sgs)
            return {"version": words[0], "subgraphs": words[1], "offsets": list(words[3:]),
                    "planned": sum(1 for w in words[3:] if w != ONLINE), "tensors": tensors}
    except struct.error:
        raise ModelError(f"{source}: corrupt or truncated TFLite flatbuffer (read past the end)") from None
    return None


def tensor_count(data: bytes, source: str = "<bytes>") -> int:
    """Tensors of the model's one subgraph (the offsets TFLite Micro expects); ModelError for any other count
    of subgraphs."""
    f, model, sgs, bufs, metas = _parse(data, source)
    _one_subgraph(sgs, source)
    return len(f.vector(sgs[0], SG_TENSORS))


def _one_subgraph(sgs: list, source: str) -> None:
    if len(sgs) != 1:
        raise ModelError(f"{source}: has {len(sgs)} subgraphs (control flow, or CALL_ONCE initialising "
                         f"variables); TFLite Micro indexes an offline plan by each subgraph's own tensor numbers, "
                         f"so buildtool plans models of one subgraph only")


def operator_outputs(data: bytes, source: str = "<bytes>") -> list:
    """Each operator of subgraph 0, in file order, as the tuple of its output tensor indices."""
    f, model, sgs, bufs, metas = _parse(data, source)
    out = []
    try:
        for op in f.vector(sgs[0], SG_OPERATORS) if sgs else []:
            v = f.ref(op, OP_OUTPUTS)
            n = f.u32(v) if v is not None else 0
            out.append(struct.unpack_from(f"<{n}i", f.d, v + 4) if n else ())
    except struct.error:
        raise ModelError(f"{source}: corrupt or truncated TFLite flatbuffer (read past the end)") from None
    return out


def payload(offsets: list) -> bytes:
    """The metadata buffer's bytes for one subgraph's offsets."""
    return struct.pack(f"<3i{len(offsets)}i", FORMAT_VERSION, 1, len(offsets), *offsets)


def write(data: bytes, order: list, offsets: list, replace: bool = False, source: str = "<bytes>") -> bytes:
    """The model's bytes with subgraph 0's operators run in `order` (its operator indices, a permutation) and
    an OfflineMemoryAllocation of `offsets` (one per tensor, -1: online). A model that already has one keeps
    it unless replace (the old buffer stays, unreferenced by any metadata)."""
    f, model, sgs, bufs, metas = _parse(data, source)
    _one_subgraph(sgs, source)
    if not replace and read(data, source) is not None:
        raise ModelError(f"{source}: already carries an {NAME} plan; pass --replace to write ours over it")
    n_tensors = len(f.vector(sgs[0], SG_TENSORS))
    if len(offsets) != n_tensors:
        raise ModelError(f"{source}: {len(offsets)} offsets for {n_tensors} tensors")
    ops_vec = f.ref(sgs[0], SG_OPERATORS)
    n_ops = f.u32(ops_vec) if ops_vec is not None else 0
    if sorted(order) != list(range(n_ops)):
        raise ModelError(f"{source}: the order is not a permutation of the model's {n_ops} operators")

    body = bytearray(f.d)
    targets = [ops_vec + 4 + 4 * i + f.u32(ops_vec + 4 + 4 * i) for i in range(n_ops)]
    for i, k in enumerate(order):
        rel = targets[k] - (ops_vec + 4 + 4 * i)
        if rel <= 0:  # a table before its vector: not what a converter writes; refuse rather than guess
            raise ModelError(f"{source}: operator tables lie before their vector; cannot reorder this file")
        struct.pack_into("<I", body, ops_vec + 4 + 4 * i, rel)

    keep = [m for m in metas if _name(f, m) != NAME.encode()]
    return _prefixed(f, model, body, bufs, keep, payload(offsets))


def _prefixed(f: _Flat, model: int, body: bytearray, bufs: list, metas: list, plan: bytes) -> bytes:
    """A new root Model table (old fields, the buffers and metadata vectors extended by the plan's buffer and
    metadata entry) and those new tables, in front of body (the old file, offsets relative to its start)."""
    out = bytearray()

    def put(b: bytes) -> int:
        pos = len(out)
        out.extend(b)
        return pos

    def pad(a: int, mod: int = 0) -> None:
        while len(out) % a != mod:
            out.append(0)

    fixups = []  # (position of a uoffset in out, absolute target in the final file or ("body", pos))

    put(b"\0\0\0\0TFL3")
    # the Model's vtable and table: version (u32) then every offset field, 4 bytes each
    present = [k for k in range(1, MODEL_FIELDS) if k in (M_BUFFERS, M_METADATA) or f.field(model, k) is not None]
    vt = put(struct.pack("<HH", 4 + 2 * MODEL_FIELDS, 8 + 4 * len(present))
             + b"".join(struct.pack("<H", 4 if k == M_VERSION else
                                    (8 + 4 * present.index(k) if k in present else 0)) for k in range(MODEL_FIELDS)))
    pad(4)
    table = put(struct.pack("<iI", 0, 0))
    struct.pack_into("<i", out, table, table - vt)
    vp = f.field(model, M_VERSION)
    struct.pack_into("<I", out, table + 4, f.u32(vp) if vp is not None else 3)
    slot = {}
    for k in present:
        slot[k] = put(b"\0\0\0\0")
        if k not in (M_BUFFERS, M_METADATA):
            fixups.append((slot[k], ("body", f.ref(model, k))))
    # buffers: the old ones and the plan's
    fixups.append((slot[M_BUFFERS], len(out)))
    put(struct.pack("<I", len(bufs) + 1))
    buf_slots = [put(b"\0\0\0\0") for _ in range(len(bufs) + 1)]
    for s, b in zip(buf_slots, bufs):
        fixups.append((s, ("body", b)))
    # metadata: the kept ones and the plan's
    fixups.append((slot[M_METADATA], len(out)))
    put(struct.pack("<I", len(metas) + 1))
    md_slots = [put(b"\0\0\0\0") for _ in range(len(metas) + 1)]
    for s, m in zip(md_slots, metas):
        fixups.append((s, ("body", m)))
    # the plan's Metadata table: name, buffer index
    mvt = put(struct.pack("<HHHH", 8, 12, 4, 8))
    mt = put(struct.pack("<iII", 0, 0, len(bufs)))
    struct.pack_into("<i", out, mt, mt - mvt)
    fixups.append((md_slots[-1], mt))
    fixups.append((mt + 4, len(out)))
    put(struct.pack("<I", len(NAME)) + NAME.encode() + b"\0")
    pad(4)
    # the plan's Buffer table: data
    bvt = put(struct.pack("<HHH", 6, 8, 4))
    pad(4)
    bt = put(struct.pack("<iI", 0, 0))
    struct.pack_into("<i", out, bt, bt - bvt)
    fixups.append((buf_slots[-1], bt))
    pad(ALIGN, ALIGN - 4)  # the plan's words start 16-aligned
    fixups.append((bt + 4, len(out)))
    put(struct.pack("<I", len(plan)) + plan)
    pad(ALIGN)
    shift = len(out)
    struct.pack_into("<I", out, 0, table)
    for pos, target in fixups:
        at = shift + target[1] if isinstance(target, tuple) else target
        struct.pack_into("<I", out, pos, at - pos)
    return bytes(out + body)
