"""The arena plan TFLite Micro can run: buildtool's layer-by-layer plan of a model's activations, restricted
to what TFLite Micro's own kernels execute safely, as an operator order and one head offset per tensor for
its `OfflineMemoryAllocation` metadata (model/offline_plan.py; docs/tflm.md).

What is left out, and why:
- fusion and operator splitting: TFLite Micro runs whole operators, one after another in the subgraph's order;
- in place, except where TFLite Micro's reference kernel reads each element of the overwritten input before
  it writes the output element at the same address, and never reads that input element again (TFLM_INPLACE:
  each entry names the kernel and its loop). buildtool's own in-place depthwise (a ring in scratch), shifted
  PAD, concatenation views (strided) and the SQUEEZE / EXPAND_DIMS aliases (their kernels memcpy without
  checking for the same address) are never planned;
- scratch buffers (RequestScratchBufferInArena) and persistent allocations (operator data, variable tensors):
  TFLite Micro keeps them. Its greedy planner places the offline offsets first and fits each scratch buffer
  into a gap of the head around them (greedy_memory_planner.cc), so the head would exceed our arena where no
  gap is large enough: the scratch each operator's kernel asks for (measured, pipeline/tflm_export.py) is
  planned as a gap live at its step, and the export checks the head TFLite Micro reports;
- variable tensors get -1: TFLite Micro allocates them in the tail (persistent) whatever the plan says.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..model.fold_pad import unfold_pads
from ..model.ir import NUMPY_DTYPE, Graph
from ..model.offline_plan import ONLINE
from .arena.planner import plan_arena

# opcode -> (the TFLite Micro kernel and the loop that makes aliasing its output with a same-shaped input safe).
# Element-wise int8 / int16 operators only: output_data[i] = f(input_data[i], ...) in one pass, every read of
# element i before the write of element i, each input index equal to the output index for an input of the
# output's shape (the broadcast loops step the full-shaped input with the output's strides). The output
# overwrites an input of its own shape and type only (plan/arena/inplace.candidates and allow below).
TFLM_INPLACE = {
    "ADD": "kernels/add.cc -> int8: reference_integer_ops::Add (ElementWise: output[i] = AddFunc(in1[i], in2[i])) "
           "or BroadcastAdd4DSlow (BroadcastBinaryFunction6DSlow: output[o] from in1/in2 at the output's index "
           "for a full-shaped input); int16: reference_ops::Add(pot_scale=false) -> AddElementwise (the same "
           "loop) or BroadcastAdd6DSlow (the same loops)",
    "SUB": "kernels/sub.cc -> reference_ops::SubElementwise (output[i] from in1[i], in2[i]) or "
           "BroadcastQuantSubSlow (NDOpsHelper: output[SubscriptToIndex(out)] from inputs at the same subscript)",
    "LEAKY_RELU": "kernels/leaky_relu.cc -> reference_ops::QuantizeLeakyRelu<T> (input_value = input_data[i], "
                  "then output_data[i] = ...)",
}
# RESHAPE: kernels/reshape.cc EvalReshapeReference copies only `if (input->data.raw != output->data.raw)`.
ALIAS_OPS = ("RESHAPE",)


def allow(g: Graph, d) -> bool:
    """Whether TFLite Micro's kernel runs aliasing decision d (plan/arena/liveness.Decision) correctly."""
    op = g.operators[d.op]
    if d.kind == "reshape":
        return op.opcode in ALIAS_OPS
    if d.kind == "elementwise":
        x, o = g.tensors[d.tensor], g.tensors[op.outputs[0]]
        return (op.opcode in TFLM_INPLACE and x.dtype == o.dtype and o.dtype in ("int8", "int16")
                and tuple(x.shape) == tuple(o.shape))
    return False


def _without_variables(g: Graph) -> Graph:
    """g with each variable tensor held as a constant: TFLite Micro keeps variable tensors in the tail of its
    arena (persistent), so the head plan must not reserve room for them (they get -1)."""
    if not g.variable_tensors():
        return g
    out = g.copy()
    out.tensors = [dataclasses.replace(t, variable=False, data=np.zeros(t.shape, NUMPY_DTYPE[t.dtype]))
                   if t.variable else t for t in g.tensors]
    return out


@dataclass
class TflmPlan:
    order: list  # the file's operator indices in execution order
    offsets: list  # per tensor of the file: its offset in the head, or -1 (planned by TFLite Micro)
    arena_bytes: int  # the offline-planned tensors' extent (TFLite Micro's head is at least this)
    inplace_ops: list  # the file's operator indices whose output overwrites an input (RESHAPE aliases aside)
    plan: object  # the ArenaPlan


def plan_tflm(g: Graph, op_outputs: list, n_tensors: int, align: int = 16, time_budget: float = 2.0,
              order_search: bool = True, inplace: bool = True, scratch: dict | None = None) -> TflmPlan:
    """Plan g (as the reader gives it, explicit PADs folded) for TFLite Micro. op_outputs: each file operator's
    output tensor indices, in file order (model/offline_plan.operator_outputs); n_tensors: the file's tensor
    count. The PADs are unfolded first: TFLite Micro runs them, so their outputs need room. scratch: {operator
    of the unfolded graph: bytes} the head its TFLite Micro kernel asks for; planned as a gap live at that
    operator's step, so that TFLite Micro's greedy placement finds one there (it places scratch itself)."""
    if align < 16:
        raise ModelError(f"alignment {align} is below TFLite Micro's 16-byte buffer alignment; use 16 or more")
    if g.subgraphs:
        raise ModelError(f"model '{g.name}' runs other subgraphs (IF / WHILE); TFLite Micro reads an offline plan "
                         f"by each subgraph's own tensor indices, so export --format tflm plans one subgraph only")
    g = _without_variables(unfold_pads(g))
    index = {tuple(outs): k for k, outs in enumerate(op_outputs)}
    if len(index) != len(op_outputs) or any(not outs for outs in op_outputs):
        raise ModelError(f"model '{g.name}': an operator without outputs or two with the same outputs; "
                         f"export --format tflm cannot match the plan to the file's operators")
    to_file = {}
    for op in g.operators:
        k = index.get(tuple(op.outputs))
        if k is None:
            raise ModelError(f"model '{g.name}': operator {op.index} ({op.opcode}) matches no operator of the "
                             f"file; export --format tflm cannot write its order")
        to_file[op.index] = k
    if sorted(to_file.values()) != list(range(len(op_outputs))):
        raise ModelError(f"model '{g.name}': the graph's operators are not the file's; export --format tflm "
                         f"cannot write its order")
    plan = plan_arena(g, align, time_budget, order_search, inplace, allow=allow, scratch=scratch)
    offsets = [ONLINE] * n_tensors
    for t, place in plan.tensors.items():
        if t < n_tensors:
            offsets[t] = place.offset
    return TflmPlan([to_file[oi] for oi in plan.order], offsets, plan.arena_bytes,
                    sorted(to_file[oi] for oi in plan.inplace_ops), plan)
