"""Reference int8 kernels with TFLite Micro's exact integer semantics.

KERNELS maps an opcode to fn(graph, op, ins, outs, **band): `ins` are the arrays of
kernel_inputs(graph, op) (activation inputs; ADD, MUL and CONCATENATION get constants too), `outs` its output
arrays, written in place. The sliding-window kernels (CONV_2D,
DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D) also accept y0, y1, in_row0 to
compute output rows [y0, y1) from an input band that starts at image row in_row0
(band_input_rows says which rows that band must hold). Element-wise kernels work
on any matching slices, so a band of rows needs no extra arguments.
"""

from __future__ import annotations

from .conv import conv2d, conv_window
from .depthwise import depthwise_conv2d, dw_window
from .elementwise import add, dequantize, hard_swish, logistic, mul, quantize
from .fully_connected import fully_connected
from .pooling import average_pool2d, max_pool2d, pool_window
from .reduce import mean
from .shape_ops import concatenation, pad, reshape, split, strided_slice
from .softmax import softmax
from .leaky_relu import leaky_relu
from .sub import sub
from .transpose_conv import transpose_conv
from .activation import maximum, minimum, prelu, relu, relu6, tanh
from .layout import depth_to_space, expand_dims, space_to_depth, squeeze, transpose
from .resize import resize_bilinear, resize_nearest_neighbor
from .lstm import lstm
from .svdf import svdf

KERNELS = {
    "CONV_2D": conv2d,
    "DEPTHWISE_CONV_2D": depthwise_conv2d,
    "FULLY_CONNECTED": fully_connected,
    "ADD": add,
    "MUL": mul,
    "CONCATENATION": concatenation,
    "AVERAGE_POOL_2D": average_pool2d,
    "MAX_POOL_2D": max_pool2d,
    "MEAN": mean,
    "PAD": pad,
    "RESHAPE": reshape,
    "SOFTMAX": softmax,
    "LOGISTIC": logistic,
    "QUANTIZE": quantize,
    "DEQUANTIZE": dequantize,
    "HARD_SWISH": hard_swish,
    "SPLIT": split,
    "STRIDED_SLICE": strided_slice,
    "SVDF": svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": lstm,
}
KERNELS.update({"LEAKY_RELU": leaky_relu, "SUB": sub, "TRANSPOSE_CONV": transpose_conv})
KERNELS.update({
    "RELU": relu, "RELU6": relu6, "TANH": tanh, "PRELU": prelu, "MAXIMUM": maximum, "MINIMUM": minimum,
    "TRANSPOSE": transpose, "DEPTH_TO_SPACE": depth_to_space, "SPACE_TO_DEPTH": space_to_depth,
    "SQUEEZE": squeeze, "EXPAND_DIMS": expand_dims,
    "RESIZE_NEAREST_NEIGHBOR": resize_nearest_neighbor, "RESIZE_BILINEAR": resize_bilinear,
})
BANDED = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D")
_WINDOWS = {"CONV_2D": conv_window, "DEPTHWISE_CONV_2D": dw_window,
            "AVERAGE_POOL_2D": pool_window, "MAX_POOL_2D": pool_window}


def band_input_rows(g, op, y0: int, y1: int) -> tuple:
    """Input image rows [lo, hi) a BANDED op needs to compute its output rows [y0, y1)."""
    return _WINDOWS[op.opcode](g, op).input_rows(y0, y1)


def kernel_inputs(g, op) -> list:
    """Tensor indices a kernel receives in `ins`: the activation inputs in operator order.

    ADD, MUL and CONCATENATION receive every operand, constants included (their
    data comes from the graph); repeated inputs are passed once per position.
    """
    if op.opcode in ("ADD", "MUL", "CONCATENATION", "SUB"):
        return [i for i in op.inputs if i >= 0]
    return [i for i in op.inputs if i >= 0 and not g.tensors[i].is_const]


__all__ = ["KERNELS", "BANDED", "kernel_inputs", "band_input_rows"]
