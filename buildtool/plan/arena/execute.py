"""Reference executor: runs a graph inside ONE bytearray arena at the offsets of an ArenaPlan.

Every activation tensor is a numpy view onto the arena at its planned offset, so a
wrong plan (two live tensors overlapping, a misplaced scratch buffer) corrupts the
results instead of being hidden. Nothing is kept outside the arena between ops.
`run_unplanned` runs the same kernels with one array per tensor: the baseline.
"""

from __future__ import annotations

import numpy as np

from ...model import opdefs
from ...errors import PlanError, UsageError
from ...model.control import CONTROL_SUBGRAPHS, subgraph_indices, while_loop
from ...model.ir import NUMPY_DTYPE, Graph
from ...model.ops import ALIASING, ELEMENTWISE_INPLACE
from .. import ArenaPlan
from ...refops import KERNELS, kernel_inputs, run_arrays
from ...refops.control import truth
from .liveness import pad_shifts, pointwise_geometry, pointwise_group, pointwise_least_shift


# Operators that may overwrite an input: element-wise ones (exact alias, same size) and the
# depthwise convolution, which works channel by channel through its scratch buffer.
IN_PLACE_OPS = tuple(ELEMENTWISE_INPLACE) + opdefs.names(memory="depthwise")
# PAD: its input may lie inside its output, shifted as far as the kernel's forward copy needs (pad_shifts)
PAD_OPS = opdefs.names(memory="pad")
# operators whose output may share its input's bytes by design (views, a concatenation in place)
SHARING_OPS = frozenset(ALIASING + opdefs.names(memory="concat"))


def tensor_view(buf: np.ndarray, t, offset: int, pixel_stride: int = 0) -> np.ndarray:
    """View of tensor t at `offset` in the uint8 arena `buf` (strided NHWC when pixel_stride != 0)."""
    dt = np.dtype(NUMPY_DTYPE[t.dtype])
    shape = tuple(int(d) for d in t.shape)
    if pixel_stride:
        if len(shape) != 4 or dt.itemsize != 1:
            raise PlanError(f"tensor {t.index} '{t.name}' has a pixel stride but is not a 4-D int8 tensor")
        n, h, w, _ = shape
        strides = (h * w * pixel_stride, w * pixel_stride, pixel_stride, 1)
        return np.ndarray(shape, dtype=dt, buffer=buf, offset=offset, strides=strides)
    return np.ndarray(shape, dtype=dt, buffer=buf, offset=offset)


def extent(t, place) -> tuple:
    """[start, end) bytes of the arena a placed tensor touches."""
    if place.pixel_stride:
        n, h, w, c = t.shape
        return place.offset, place.offset + (n * h * w - 1) * place.pixel_stride + c
    return place.offset, place.offset + t.nbytes


def _check_plan(g: Graph, plan: ArenaPlan) -> None:
    for op in g.operators:
        for i in g.act_inputs(op) + list(op.outputs):
            if i not in plan.tensors:
                raise PlanError(f"plan has no place for tensor {i} '{g.tensors[i].name}' "
                                f"(operator {op.index} {op.opcode}); re-run the planner")
    for i, p in plan.tensors.items():
        lo, hi = extent(g.tensors[i], p)
        if lo < 0 or hi > plan.arena_bytes:
            raise PlanError(f"tensor {i} '{g.tensors[i].name}' at [{lo}, {hi}) lies outside the "
                            f"{plan.arena_bytes}-byte arena; re-run the planner")
    for op_index, b in plan.scratch.items():
        if b.offset < 0 or b.offset + b.size > plan.arena_bytes:
            raise PlanError(f"scratch buffer of operator {op_index} lies outside the arena; re-run the planner")


def _check_overlap(g: Graph, plan: ArenaPlan, op) -> None:
    """An operator not run in place must not write over bytes it reads (the MCU kernel would corrupt them)."""
    if op.opcode in SHARING_OPS:
        return
    inplace = op.index in plan.inplace_ops and op.opcode in IN_PLACE_OPS
    for o in op.outputs:
        olo, ohi = extent(g.tensors[o], plan.tensors[o])
        for i in g.act_inputs(op):
            ilo, ihi = extent(g.tensors[i], plan.tensors[i])
            if olo < ihi and ilo < ohi:
                po, pi = plan.tensors[o], plan.tensors[i]
                exact = (po.offset, po.pixel_stride) == (pi.offset, pi.pixel_stride)
                same_size = g.tensors[o].nbytes == g.tensors[i].nbytes
                if inplace and exact and (same_size or op.opcode == "DEPTHWISE_CONV_2D"):
                    continue
                if (op.index in plan.inplace_ops and op.opcode == "CONV_2D" and i == op.inputs[0]
                        and not (po.pixel_stride or pi.pixel_stride)):
                    least = pointwise_least_shift(g, op)
                    if least is not None and pi.offset - po.offset >= least:
                        continue  # _pointwise_in_place runs the kernel's groups as the MCU's
                    raise PlanError(f"operator {op.index} (CONV_2D) reads its input {pi.offset - po.offset} B from "
                                    f"its output's start, where a 1x1 kernel's forward groups need "
                                    f"{'no in-place run' if least is None else f'at least {least} B'}; fix the plan")
                if op.index in plan.inplace_ops and op.opcode in PAD_OPS and not (po.pixel_stride or pi.pixel_stride):
                    lo, hi = pad_shifts(g, op)
                    if lo <= pi.offset - po.offset <= hi:
                        continue
                raise PlanError(f"operator {op.index} ({op.opcode}) writes tensor {o} over its input {i} "
                                f"without running in place; fix the plan")


def run_op(g: Graph, op, ins: list, outs: list, **band) -> None:
    """One kernel: ins/outs as refops.kernel_inputs / op.outputs; band = y0, y1, in_row0 for BANDED ops."""
    KERNELS[op.opcode](g, op, ins, outs, **band)


def _depthwise_in_place(g: Graph, op, buf: np.ndarray, plan: ArenaPlan, x: np.ndarray, y: np.ndarray) -> None:
    """MCU-style in-place depthwise: per channel, copy the input plane to scratch, then write the output plane."""
    if op.options.get("depth_multiplier", 1) != 1:
        raise PlanError(f"operator {op.index}: in-place depthwise needs depth multiplier 1")
    sb = plan.scratch.get(op.index)
    _, h, w, c = x.shape
    if sb is None or sb.size < h * w:
        raise PlanError(f"operator {op.index}: in-place depthwise needs a scratch buffer of {h * w} bytes")
    plane = np.ndarray((1, h, w, 1), dtype=np.int8, buffer=buf, offset=sb.offset)
    for ch in range(c):
        plane[...] = x[..., ch:ch + 1]
        KERNELS[op.opcode](g, op, [plane], [y[..., ch:ch + 1]], channels=slice(ch, ch + 1))


# the byte a group's outputs are filled with before its inputs are read (_pointwise_in_place)
POISON = 0x5A


def _pointwise_in_place(g: Graph, op, x: np.ndarray, y: np.ndarray) -> None:
    """A 1x1 convolution over its own input as the MCU runs it, made as hard on the plan as the rule allows
    (liveness.pointwise_shift): the pixels in forward groups of G (liveness.pointwise_group), each group's output
    bytes written first (POISON: a kernel may write any of them before it has read its last input), then the
    group's inputs read from the arena, then its outputs written. A shift that lets a group's outputs reach an
    input byte not yet read changes the results."""
    geo = pointwise_geometry(g, op)
    if geo is None:
        raise PlanError(f"operator {op.index}: only a 1x1 stride-1 int8 convolution runs over its own input")
    hw, ci, co = geo
    n, h, w, _ = x.shape
    xf, yf = x.reshape(hw, ci), y.reshape(hw, co)
    grp = pointwise_group(ci, w)
    ends = sorted({0, *range(hw % grp, hw + 1, grp)})   # the groups end at hw - k*G: the last one whole, where
    for a, b in zip(ends, ends[1:]):                      # the rule is tightest; the first the short one
        yf[a:b] = np.int8(POISON)
        ra, rb = a // w, -(-b // w)   # the rows holding the group, the other pixels zero
        band = np.zeros((1, rb - ra, w, ci), np.int8)
        band.reshape(-1, ci)[a - ra * w:b - ra * w] = xf[a:b]
        out = np.zeros((1, rb - ra, w, co), np.int8)
        KERNELS[op.opcode](g, op, [band], [out], y0=ra, y1=rb, in_row0=ra)
        yf[a:b] = out.reshape(-1, co)[a - ra * w:b - ra * w]


def _check_inputs(g: Graph, inputs: list) -> None:
    if len(inputs) != len(g.inputs):
        raise UsageError(f"model has {len(g.inputs)} inputs, {len(inputs)} given")
    for k, (i, x) in enumerate(zip(g.inputs, inputs)):
        t = g.tensors[i]
        if tuple(np.shape(x)) != tuple(t.shape):
            raise UsageError(f"input {k} has shape {list(np.shape(x))}, the model expects {list(t.shape)}")


def init_state(g: Graph, view) -> None:
    """Reset every variable tensor as TFLM does at start-up: every byte set to Tensor.state_fill_byte, or a
    resource variable's start value (Tensor.init: its CALL_ONCE init subgraph's constant)."""
    for v in g.variable_tensors():
        t = g.tensors[v]
        if t.init is not None:
            view(v)[...] = t.init.reshape(view(v).shape)
        else:
            view(v).view(np.uint8)[...] = t.state_fill_byte


class Session:
    """One planned arena kept across invocations: variable tensors (SVDF/LSTM state) persist in it
    from one invoke() to the next, as in TFLite Micro and the firmware."""

    def __init__(self, g: Graph, plan: ArenaPlan, buf: np.ndarray | None = None):
        """buf: the bytes to run in (a subgraph's: its operator's scratch buffer), else an arena of its own."""
        _check_plan(g, plan)
        self.g, self.plan = g, plan
        if buf is None:
            self.arena = bytearray(plan.arena_bytes)
            self.buf = np.frombuffer(self.arena, dtype=np.uint8)
            init_state(g, self.view)
        else:
            self.buf = buf

    def view(self, i):
        t = self.g.tensors[i]
        if t.is_const:
            return t.data
        p = self.plan.tensors[i]
        return tensor_view(self.buf, t, p.offset, p.pixel_stride)

    def invoke(self, inputs: list) -> list:
        """Execute plan.order once; returns copies of the graph outputs."""
        g, plan, view = self.g, self.plan, self.view
        _check_inputs(g, inputs)
        for i, x in zip(g.inputs, inputs):
            view(i)[...] = np.asarray(x, dtype=NUMPY_DTYPE[g.tensors[i].dtype])
        self.steps()
        return [np.array(view(i)) for i in g.outputs]

    def steps(self) -> None:
        """Run plan.order once on what the arena holds."""
        g, plan, view = self.g, self.plan, self.view
        for oi in plan.order:
            op = g.operators[oi]
            _check_overlap(g, plan, op)
            ins = [view(i) for i in kernel_inputs(g, op)]
            outs = [view(o) for o in op.outputs]
            if op.opcode == "DEPTHWISE_CONV_2D" and oi in plan.inplace_ops:
                _depthwise_in_place(g, op, self.buf, plan, ins[0], outs[0])
            elif op.opcode == "CONV_2D" and oi in plan.inplace_ops:
                _pointwise_in_place(g, op, ins[0], outs[0])
            elif op.opcode in CONTROL_SUBGRAPHS:
                self._control(op, ins, outs)
            else:
                run_op(g, op, ins, outs)

    def _subgraph(self, op, k: int, values: list) -> list:
        """Subgraph k run in op's scratch buffer at its own plan's offsets: values copied into its inputs;
        views of its outputs (valid until the scratch is used again)."""
        sp, sb = self.plan.subplans.get(k), self.plan.scratch.get(op.index)
        if sp is None or sb is None or sb.size < sp.arena_bytes:
            raise PlanError(f"operator {op.index} ({op.opcode}) has no plan or scratch buffer for subgraph {k}; "
                            f"re-run the planner")
        s = Session(self.g.subgraph(k), sp, self.buf[sb.offset:sb.offset + sp.arena_bytes])
        for i, v in zip(s.g.inputs, values):
            s.view(i)[...] = v
        s.steps()
        return [s.view(o) for o in s.g.outputs]

    def _control(self, op, ins: list, outs: list) -> None:
        """IF: the branch its condition picks; WHILE: cond, then body while cond holds, the values kept in
        the operator's outputs (TFLite Micro's copies; nothing but the arena holds them)."""
        first, second = subgraph_indices(op)
        if op.opcode == "IF":
            for y, v in zip(outs, self._subgraph(op, first if truth(ins[0]) else second, ins[1:])):
                y[...] = v
            return
        for y, x in zip(outs, ins):
            y[...] = x

        def body():
            for y, v in zip(outs, self._subgraph(op, second, outs)):
                y[...] = v

        while_loop(op, lambda: truth(self._subgraph(op, first, outs)[0]), body)


def run(g: Graph, plan: ArenaPlan, inputs: list) -> list:
    """Execute plan.order inside one arena of plan.arena_bytes; returns copies of the graph outputs."""
    _check_inputs(g, inputs)
    return Session(g, plan).invoke(inputs)


def run_sequence(g: Graph, plan: ArenaPlan, input_sets: list) -> list:
    """Invoke the same arena once per input set (state persists between invocations); one output list each."""
    s = Session(g, plan)
    return [s.invoke(x) for x in input_sets]


def run_unplanned(g: Graph, inputs: list) -> list:
    """Same kernels, one separate numpy array per tensor, model order."""
    _check_inputs(g, inputs)
    arrays = {i: np.array(x, dtype=NUMPY_DTYPE[g.tensors[i].dtype]) for i, x in zip(g.inputs, inputs)}
    for v in g.variable_tensors():
        t = g.tensors[v]
        arrays[v] = np.zeros(t.shape, NUMPY_DTYPE[t.dtype])
    init_state(g, arrays.__getitem__)
    return run_arrays(g, arrays)


__all__ = ["run", "run_sequence", "Session", "init_state", "run_unplanned", "run_op", "tensor_view", "extent"]
