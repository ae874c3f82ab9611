"""Well-known CNN architectures as int8 graphs with deterministic random weights.

Block tables follow ../shared/models/zoo.md (MobileNetV2 as keras.applications
builds it, and MCUNet's searched networks). Only shapes matter for memory; the
builder's calibration keeps every activation at a sensible int8 scale, so the
models also make meaningful correctness tests. Padding is SAME (the converter
folds Keras' explicit zero padding into the convolutions; only MobileNetV2's last
1x1 conv is VALID, as Keras has it), ReLU6 follows every convolution except the
projection of an inverted-residual block, so there are no PAD operators.
"""

from __future__ import annotations

from .builder import GraphBuilder
from ..errors import UsageError
from ..model.ir import Graph

# MobileNetV2 (expansion, channels, repeats, first stride), k = 3.
MBV2_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
               (6, 320, 1, 1))
# MCUNet blocks (cout, expansion, stride, kernel) after the stem and the first depthwise-separable block.
VWW1_BLOCKS = ((16, 6, 2, 3), (16, 3, 1, 3), (16, 3, 1, 3), (24, 3, 2, 7), (24, 6, 1, 3), (24, 5, 1, 5),
               (40, 6, 2, 7), (40, 6, 1, 7), (48, 6, 1, 3), (48, 4, 1, 3), (96, 5, 2, 5), (96, 5, 1, 3),
               (96, 4, 1, 3), (160, 3, 1, 7))
IN3_BLOCKS = ((16, 3, 2, 7), (16, 5, 1, 3), (16, 5, 1, 7), (16, 4, 1, 5), (24, 5, 2, 5), (24, 5, 1, 5),
              (24, 5, 1, 5), (40, 5, 2, 3), (40, 6, 1, 7), (40, 4, 1, 5), (48, 5, 1, 5), (48, 5, 1, 7),
              (48, 5, 1, 3), (96, 6, 2, 3), (96, 5, 1, 7), (96, 4, 1, 3), (160, 5, 1, 7))


# EfficientNet-Lite0 (expansion, channels, repeats, first stride, kernel): EfficientNet-B0's blocks
# without squeeze-excitation, ReLU6 for swish, stem and head not scaled (the TFLite-friendly variant).
EFFNET_LITE0_BLOCKS = ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3), (6, 112, 3, 1, 5),
                       (6, 192, 4, 2, 5), (6, 320, 1, 1, 3))


def make_divisible(v: float, divisor: int = 8) -> int:
    """Keras' channel rounding: nearest multiple of divisor, at least divisor, never losing over 10%."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def inverted_residual(b: GraphBuilder, x: int, cout: int, expansion: int, stride: int, k: int = 3) -> int:
    """1x1 expand (unless expansion is 1), kxk depthwise, 1x1 projection, residual ADD when shapes allow."""
    cin = b.shape(x)[3]
    h = b.conv2d(x, cin * expansion, 1) if expansion != 1 else x
    h = b.depthwise(h, k, stride)
    h = b.conv2d(h, cout, 1, activation="NONE")
    return b.add(x, h) if stride == 1 and cin == cout else h


def mobilenetv2(b: GraphBuilder, size: int = 160, alpha: float = 1.0, classes: int = 1000, calib=None) -> None:
    """keras.applications.MobileNetV2 layer for layer (batch norm folded, no PAD ops)."""
    x = b.input((1, size, size, 3), calib=calib)
    x = b.conv2d(x, make_divisible(32 * alpha), 3, 2)
    for e, c, n, s in MBV2_BLOCKS:
        for r in range(n):
            x = inverted_residual(b, x, make_divisible(int(c * alpha)), e, s if r == 0 else 1)
    x = b.conv2d(x, make_divisible(1280 * alpha) if alpha > 1.0 else 1280, 1, padding="VALID")  # as Keras
    x = b.mean(x)
    x = b.fully_connected(x, classes, out_std=3.0)
    b.softmax(x)


def efficientnet_lite(b: GraphBuilder, size: int = 96, classes: int = 1000, calib=None) -> None:
    """EfficientNet-Lite0: stem 3x3 s2 32, MBConv blocks (EFFNET_LITE0_BLOCKS), 1x1 1280 head,
    global average pool, fully connected (logits)."""
    x = b.input((1, size, size, 3), calib=calib)
    x = b.conv2d(x, 32, 3, 2)
    for e, c, n, s, k in EFFNET_LITE0_BLOCKS:
        for r in range(n):
            x = inverted_residual(b, x, c, e, s if r == 0 else 1, k)
    x = b.conv2d(x, 1280, 1)
    x = b.mean(x)
    b.fully_connected(x, classes, out_std=3.0)


def mcunet(b: GraphBuilder, size: int, blocks, classes: int, calib=None) -> None:
    """MCUNet backbone: stem 3x3 s2 16, depthwise-separable 16 -> 8, inverted residual blocks,
    global average pool, fully connected (logits)."""
    x = b.input((1, size, size, 3), calib=calib)
    x = b.conv2d(x, 16, 3, 2)
    x = inverted_residual(b, x, 8, 1, 1)
    for c, e, s, k in blocks:
        x = inverted_residual(b, x, c, e, s, k)
    x = b.mean(x)
    b.fully_connected(x, classes, out_std=3.0)


def tiny(b: GraphBuilder, calib=None) -> None:
    """The default firmware model: the common kernels once each, 6 KiB of activations, 2 KB of weights."""
    x = b.input((1, 32, 32, 3), calib=calib)
    s = b.conv2d(x, 8, 3, 2)
    h = b.depthwise(s, 3, 1)
    h = b.conv2d(h, 8, 1, activation="NONE")
    h = b.add(s, h)
    h = b.conv2d(h, 16, 3, 2)
    h = b.mean(h)
    b.fully_connected(h, 10)


# name -> (architecture, arguments, one-line description)
_MODELS = {
    "tiny": (tiny, (), "tiny CNN, 32x32x3 -> 10 logits (conv, depthwise, residual add, mean, dense); "
                       "the default firmware model"),
    "mobilenetv2": (mobilenetv2, (160, 1.0, 1000), "MobileNetV2 alpha 1.0, 160x160x3 -> 1000 softmax, "
                                                   "as keras.applications (154 M MACs)"),
    "mbv2-w0.35": (mobilenetv2, (144, 0.35, 1000), "MobileNetV2 alpha 0.35, 144x144x3 -> 1000 softmax "
                                                   "(MCUNet / msf-CNN benchmark, 27 M MACs)"),
    "mcunet-vww1": (mcunet, (80, VWW1_BLOCKS, 2), "MCUNet vww1 (msf-CNN's MN2-vww5), 80x80x3 -> 2 logits, "
                                                  "11.6 M MACs"),
    "mcunet-in3": (mcunet, (176, IN3_BLOCKS, 1000), "MCUNet in3 (msf-CNN's MN2-320K), 176x176x3 -> 1000 logits, "
                                                    "81.8 M MACs"),
    "efficientnet-lite0": (efficientnet_lite, (96, 1000), "EfficientNet-Lite0 (B0 without squeeze-excitation, "
                                                        "ReLU6), 96x96x3 -> 1000 logits, 4.6 M weights: more "
                                                        "than a 4 MiB flash holds"),
}
# more weights than any board's flash: left out of names() (the test matrices, the golden recording);
# tests/test_regions.py builds it
LARGE = ("efficientnet-lite0",)


def names(large: bool = False) -> list:
    """The zoo's names; large=True adds the LARGE ones."""
    return [n for n in _MODELS if large or n not in LARGE]


def describe(large: bool = False) -> dict:
    return {n: _MODELS[n][2] for n in names(large)}


def builder(name: str, calib=None, seed: int = 0) -> GraphBuilder:
    """The populated builder of a zoo model (its simulate() predicts int8 values; calib: see
    GraphBuilder.input). build() is builder(name).finish()."""
    if name not in _MODELS:
        raise UsageError(f"unknown zoo model '{name}' (known: {', '.join(_MODELS)})")
    arch, args, desc = _MODELS[name]
    b = GraphBuilder(name, seed=seed, calib_batch=2, description=desc)
    arch(b, *args, calib=calib)
    return b


def build(name: str) -> Graph:
    return builder(name).finish()
