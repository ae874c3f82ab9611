"""BATCH_MATMUL, int8 and int16 (TFLM batch_matmul.cc, reference_ops::BatchMatMul with FullyConnectedParams).

out[b, i, j] = clamp(MBQM(sum_k (A[b, i, k] - lhs zero point) (B[b, k, j] - rhs zero point), m, s) + output zero
point), the type's range, where A is the LHS (transposed when adj_x) and B the RHS (transposed when adj_y); batch
dimensions (up to 3, ranks 2..5) broadcast. The multiplier is TFLM's GetQuantizedConvolutionMultipler: the
float32 product of the input scales over the output scale, in double. int8 accumulates in int32 and uses the
int32 MultiplyByQuantizedMultiplier; int16 (zero points 0) accumulates in int64 and uses the 64-bit one (the
multiplier rounded to 16 bits, quant_math.mbqm64).

matmul_params is shared with code generation (codegen/extra_c.py): the C kernel walks the same strides.
"""

from __future__ import annotations

import numpy as np

from .activation import operands
from .quant_math import QRANGE, mbqm, mbqm64, quantize_multiplier_scalar


def _ext(shape, rank: int) -> tuple:
    return (1,) * (rank - len(shape)) + tuple(int(d) for d in shape)


def matmul_params(g, op) -> dict:
    """Quantisation and geometry: M x K times K x N per batch, element strides of each operand (the batch
    strides 0 where it broadcasts), the output dense [batch][M][N]."""
    tl, tr, to = (g.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    adj_x, adj_y = bool(op.options.get("adj_x", False)), bool(op.options.get("adj_y", False))
    L, R = _ext(tl.shape, 5), _ext(tr.shape, 5)
    M, K = (L[4], L[3]) if adj_x else (L[3], L[4])
    N = R[3] if adj_y else R[4]
    lst = [int(np.prod(L[k + 1:])) for k in range(5)]
    rst = [int(np.prod(R[k + 1:])) for k in range(5)]
    batch = [max(L[k], R[k]) for k in range(3)]
    real = float(np.float32(np.float32(tl.scale) * np.float32(tr.scale))) / float(np.float32(to.scale))
    m, s = quantize_multiplier_scalar(real)
    lo, hi = QRANGE[to.dtype]
    return dict(batch=batch, lhs_batch_stride=[0 if L[k] == 1 else lst[k] for k in range(3)],
                rhs_batch_stride=[0 if R[k] == 1 else rst[k] for k in range(3)],
                rows=M, cols=N, depth=K,
                lhs_row_stride=1 if adj_x else K, lhs_depth_stride=M if adj_x else 1,
                rhs_depth_stride=1 if adj_y else N, rhs_col_stride=K if adj_y else 1,
                lhs_offset=-tl.zero_point, rhs_offset=-tr.zero_point, output_offset=to.zero_point,
                output_multiplier=m, output_shift=s, act_min=lo, act_max=hi)


def batch_matmul(g, op, ins, outs) -> None:
    p = matmul_params(g, op)
    a, b = (np.asarray(x, np.int64) for x in operands(g, op, ins))
    if op.options.get("adj_x", False):
        a = np.swapaxes(a, -1, -2)
    if op.options.get("adj_y", False):
        b = np.swapaxes(b, -1, -2)
    acc = np.matmul(a + p["lhs_offset"], b + p["rhs_offset"])
    if outs[0].dtype == np.int16:
        raw = mbqm64(acc, p["output_multiplier"], p["output_shift"])
    else:
        raw = mbqm(acc, p["output_multiplier"], p["output_shift"])
    outs[0][...] = np.clip(raw + p["output_offset"], p["act_min"], p["act_max"]).astype(outs[0].dtype).reshape(
        outs[0].shape)

