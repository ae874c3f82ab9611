"""SVDF, integer (TFLite Micro's reference semantics): int8 input and output, int8 feature weights,
time weights and activation state both int8 or both int16.

One invocation, per batch row:
1. the state [n_filter, n_memory] (row-major) shifts left by one element over the whole buffer;
2. feature step: for every filter, dot(weights_feature[f], x - input_zp) rescaled by
   effective_scale_1 = float32(input_scale * feature_scale / state_scale), saturated to the state
   type, plus the state's zero point, narrowed (wrapping) to the state type, is written into the
   filter's newest (last) memory slot (the TFLM build we check against adds the zero point after
   the clamp, so an int8 state with a non-zero zero point can wrap);
3. time step: per filter, sum over memory of weights_time * (state - state_zp) (int32);
4. bias (or 0) + the sum over each unit's `rank` filters, rescaled by
   effective_scale_2 = float32(state_scale * time_scale / output_scale), plus the output zero point,
   saturated to int8. TFLM's integer SVDF applies no fused activation.
The kernel gets ins = [input, state] (the state is updated in place).
"""

from __future__ import annotations

import numpy as np

from .quant_math import mbqm, quantize_multiplier_scalar


def svdf_params(g, op) -> dict:
    """The integers TFLM's PrepareSvdf computes (shared with code generation)."""
    x, wf, wt, st, y = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.inputs[2], op.inputs[4],
                                               op.outputs[0]))
    f32 = np.float32
    s1 = f32(f32(x.scale) * f32(wf.scale)) / f32(st.scale)
    s2 = f32(f32(st.scale) * f32(wt.scale)) / f32(y.scale)
    m1, e1 = quantize_multiplier_scalar(float(s1))
    m2, e2 = quantize_multiplier_scalar(float(s2))
    return dict(input_zp=x.zero_point, state_zp=st.zero_point, output_zp=y.zero_point,
                mult1=m1, shift1=e1, mult2=m2, shift2=e2)


def svdf(g, op, ins, outs) -> None:
    p = svdf_params(g, op)
    wf = g.tensors[op.inputs[1]].data.astype(np.int64)
    wt = g.tensors[op.inputs[2]].data.astype(np.int64)
    n_filter, n_memory = wt.shape
    rank = op.options["rank"]
    bias = (g.tensors[op.inputs[3]].data.reshape(-1).astype(np.int64) if op.inputs[3] >= 0
            else np.zeros(n_filter // rank, dtype=np.int64))
    x, state, y = ins[0], ins[1], outs[0]
    lim = np.iinfo(state.dtype)
    flat = state.reshape(-1)
    flat[:-1] = flat[1:].copy()  # one shift over the whole buffer, batches included
    for b in range(x.shape[0]):
        acc = wf @ (x[b].astype(np.int64) - p["input_zp"])
        new = np.clip(mbqm(acc, p["mult1"], p["shift1"]), lim.min, lim.max) + p["state_zp"]
        new = (new - lim.min) % (1 << lim.bits) + lim.min  # narrowed to the state type: wraps
        sb = state[b].reshape(n_filter, n_memory)
        sb[:, -1] = new
        t = (wt * (sb.astype(np.int64) - p["state_zp"])).sum(axis=1)
        acc2 = bias + t.reshape(-1, rank).sum(axis=1)
        y[b] = np.clip(mbqm(acc2, p["mult2"], p["shift2"]) + p["output_zp"], -128, 127)
