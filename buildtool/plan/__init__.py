"""The arena plan: the contract between the planner, the executor, code generation and the daemon.

Vocabulary
- step s: the s-th operator executed, op index `order[s]`.
- A *buffer* is one allocation in the arena: [offset, offset + size) reserved over the
  steps [first_step, last_step] (inclusive). Graph inputs start at step 0; graph outputs end
  at the last step. A tensor produced at step s starts at s; it ends at the last step that
  reads it.
- Several tensors may live in one buffer (aliases): a RESHAPE output shares its input's buffer;
  an element-wise op run in place writes its output over the input it is the last reader of;
  a CONCATENATION's inputs are *views* into the output's buffer (each producer writes its
  channels straight into its slice, with the output's pixel stride).
- A *persistent* buffer holds one variable tensor (the state of an SVDF or LSTM, `is_variable` in
  the flatbuffer): it lives at every step [0, last] and nothing else ever shares its bytes, so its
  contents survive from one invocation to the next. It is initialised once, at start-up, as TFLite
  Micro resets variable tensors (every byte = `Tensor.state_fill_byte`), never by an invocation.
- A *scratch* buffer is working memory of one operator (e.g. the channel buffer of an in-place
  depthwise convolution); it lives only at that operator's step.
- Every buffer offset is a multiple of `align`, and the packer reserves sizes rounded up to
  `align`; `arena_bytes` is the end of the highest buffer, rounded up to `align`.
- lower_bound_bytes = max over steps of the sum of aligned buffer sizes live at that step,
  for the chosen order and aliasing: no packing of those buffers can be smaller.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import ClassVar, Protocol

from ..errors import PlanError


def align_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class Buffer:
    id: int
    offset: int
    size: int  # bytes actually used (unaligned)
    first_step: int
    last_step: int
    tensors: list = field(default_factory=list)  # tensor indices stored in this buffer
    kind: str = "tensor"  # "tensor" | "scratch" | "persistent"
    op: int = -1  # for scratch: the operator index that owns it


@dataclass
class TensorPlace:
    index: int  # tensor index in the graph
    name: str
    buffer: int  # Buffer.id
    offset: int  # absolute arena byte offset of the tensor's first element
    size: int  # bytes of the tensor
    first_step: int
    last_step: int
    pixel_stride: int = 0  # 0 = dense; else bytes between consecutive pixels (concat views, NHWC)


class Plan(Protocol):
    """What every later stage reads from a plan, whichever planner made it (ArenaPlan: layer by
    layer; fusion.FusedPlan: operator splitting / patch-based fusion). Codegen, report, firmware
    and the daemon use only this; `plan_from_json` reads either back."""

    kind: ClassVar[str]  # "arena" | "fused"
    arena_bytes: int
    lower_bound_bytes: int
    macs: int
    align: int

    @property
    def mac_overhead(self) -> float: ...  # MACs / the unfused network's

    def live_bytes(self) -> list: ...  # bytes live at each step (a tile row of a block is a step)

    def step_span(self, step: int) -> tuple: ...  # the stretch of the operator axis a step covers

    def regions(self, g) -> list: ...  # fusion blocks / split regions as JSON maps ([] for layer by layer)

    def manifest_order(self, g) -> tuple: ...  # (profile region ids, their names) in execution order

    def to_json(self, g=None) -> dict: ...


def first_bytes(plan) -> int:
    """Bytes of the plan's arena in its first (cheapest) region: the whole arena unless spread."""
    regs = getattr(plan, "arena_regions", None)
    return regs[0]["bytes"] if regs else plan.arena_bytes


def arena_symbol(plan, r: dict) -> str:
    """The C array holding region r of the plan's arena: bt_arena for the first, bt_arena_<name> after."""
    return "bt_arena" if r is plan.arena_regions[0] or r["base"] == 0 else f"bt_arena_{r['name']}"


def region_of(plan, offset: int) -> dict:
    """The arena region (plan.arena_regions entry) holding virtual byte offset."""
    for r in plan.arena_regions:
        if r["base"] <= offset < r["base"] + r["bytes"]:
            return r
    raise PlanError(f"arena offset {offset} lies in no region of the plan")


@dataclass
class ArenaPlan:
    kind: ClassVar[str] = "arena"
    arena_bytes: int
    lower_bound_bytes: int
    total_activation_bytes: int
    order: list  # operator indices in execution order
    buffers: list  # [Buffer]
    tensors: dict  # tensor index -> TensorPlace (activation tensors only)
    scratch: dict = field(default_factory=dict)  # op index -> Buffer (kind == "scratch")
    inplace_ops: list = field(default_factory=list)  # op indices whose output overwrites an input
    planner: str = ""
    optimal: bool = False
    macs: int = 0
    params_bytes: int = 0
    align: int = 16
    # [] = one arena; else the regions the buffers are placed in (arena/regional.py), cheapest first:
    # {"name", "base": its first virtual offset, "bytes", "buffers": [buffer ids]}
    arena_regions: list = field(default_factory=list)
    # control flow (model/control.py): subgraph index -> its own ArenaPlan, offsets from the start of the
    # scratch buffer of the IF / WHILE that runs it
    subplans: dict = field(default_factory=dict)
    # weights a layer re-reads, copied from flash into SRAM before it runs (plan/staging.py; code generation for a
    # part whose memory model makes flash loads cost): {"op", "step", "tensor", "offset", "size", "spare"}, at
    # offset in the arena (bytes no buffer uses at that step) or, spare, in bt_staging, an array of
    # staging_bytes in the part's spare SRAM
    staged: list = field(default_factory=list)
    staging_bytes: int = 0

    def persistent(self) -> list:
        """The persistent buffers (one per variable tensor), by id."""
        return [b for b in self.buffers if b.kind == "persistent"]

    def step_of(self) -> dict:
        return {op: s for s, op in enumerate(self.order)}

    @property
    def mac_overhead(self) -> float:
        return 1.0

    def live_bytes(self) -> list:
        """Aligned bytes of the buffers live at each step (the lower bound is the largest)."""
        out = [0] * max(len(self.order), 1)
        for b in self.buffers:
            for s in range(b.first_step, b.last_step + 1):
                out[s] += align_up(b.size, self.align)
        return out

    def step_span(self, step: int) -> tuple:
        return step, step + 1

    def regions(self, g=None) -> list:
        return []

    def manifest_order(self, g) -> tuple:
        return list(self.order), [g.operators[i].opcode for i in self.order]

    def to_json(self, g=None) -> dict:
        """The documented `buildtool plan --json` form (deterministic key order)."""
        return {
            "arena_bytes": self.arena_bytes,
            "lower_bound_bytes": self.lower_bound_bytes,
            "total_activation_bytes": self.total_activation_bytes,
            "planner": self.planner,
            "optimal": self.optimal,
            "macs": self.macs,
            "params_bytes": self.params_bytes,
            "align": self.align,
            "order": list(self.order),
            "inplace_ops": list(self.inplace_ops),
            "tensors": [asdict(self.tensors[k]) for k in sorted(self.tensors)],
            "scratch": [asdict(self.scratch[k]) for k in sorted(self.scratch)],
            "buffers": [asdict(b) for b in self.buffers],
        } | ({"arena_regions": self._regions_json()} if self.arena_regions else {}) \
            | ({"subgraphs": [{"subgraph": k, "plan": self.subplans[k].to_json()} for k in sorted(self.subplans)]}
               if self.subplans else {}) \
            | ({"staged": [dict(sorted(d.items())) for d in self.staged], "staging_bytes": self.staging_bytes}
               if self.staged else {})

    def _regions_json(self) -> list:
        """Per region: its name, virtual base, bytes, and each buffer's id and region-local offset."""
        at = {b.id: b.offset for b in self.buffers}
        return [{"name": r["name"], "base": r["base"], "bytes": r["bytes"],
                 "buffers": [{"id": k, "offset": at[k] - r["base"]} for k in r["buffers"]]} for r in self.arena_regions]

    @staticmethod
    def from_json(d: dict) -> "ArenaPlan":
        tensors = {t["index"]: TensorPlace(**t) for t in d["tensors"]}
        scratch = {b["op"]: Buffer(**b) for b in d.get("scratch", [])}
        return ArenaPlan(
            arena_bytes=d["arena_bytes"], lower_bound_bytes=d["lower_bound_bytes"],
            total_activation_bytes=d["total_activation_bytes"], order=list(d["order"]),
            buffers=[Buffer(**b) for b in d["buffers"]], tensors=tensors, scratch=scratch,
            inplace_ops=list(d.get("inplace_ops", [])), planner=d["planner"], optimal=d["optimal"],
            macs=d["macs"], params_bytes=d["params_bytes"], align=d.get("align", 16),
            arena_regions=[{"name": r["name"], "base": r["base"], "bytes": r["bytes"],
                            "buffers": [b["id"] for b in r["buffers"]]} for r in d.get("arena_regions", [])],
            subplans={s["subgraph"]: ArenaPlan.from_json(s["plan"]) for s in d.get("subgraphs", [])},
            staged=[dict(x) for x in d.get("staged", [])], staging_bytes=d.get("staging_bytes", 0))
