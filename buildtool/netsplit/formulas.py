"""Parameter and MAC counts of a split network, from its NetSpec alone (no TensorFlow).

`two_layer_params` is the method's formula for one two-layer block (3x3 kernels, weights only):
original (L0*L1 + L1*L2) * 9, split (L0*L1/K1 + (L1/K1)*(L2/K2)*K2) * 9. `layers` lists every
convolution and dense layer of the network `transform.build` makes; `params` and `macs` sum it
(weights plus biases; MACs of convolutions and the dense layer, as `buildtool inspect` counts them).
The tests check these against Keras' count_params and against the converted .tflite's MACs.
"""

from __future__ import annotations

import dataclasses

from .spec import NetSpec, splits_input


def two_layer_params(l0: int, l1: int, l2: int, k1: int = 1, k2: int = 1) -> int:
    """Weights of a two-layer 3x3 block with split factors k1, k2 (the method's formula)."""
    if k1 == 1 and k2 == 1:
        return (l0 * l1 + l1 * l2) * 9
    return (l0 * l1 // k1 + (l1 // k1) * (l2 // k2) * k2) * 9


@dataclasses.dataclass(frozen=True)
class Layer:
    kind: str  # "conv3x3", "fusion1x1" or "dense"
    block: int  # from 0; -1 for the classifier
    copies: int  # branches that each have this layer
    cin: int  # input channels of one copy
    cout: int  # output channels of one copy
    pixels: int  # output positions (height * width) of one copy

    @property
    def params(self) -> int:
        taps = 9 if self.kind == "conv3x3" else 1
        return self.copies * (taps * self.cin * self.cout + self.cout)

    @property
    def macs(self) -> int:
        taps = 9 if self.kind == "conv3x3" else 1
        return self.copies * self.pixels * taps * self.cin * self.cout


def layers(spec: NetSpec) -> list:
    """Every weighted layer of the network, in order."""
    h, w, cin = spec.input_shape
    streams, out = 1, []
    for i, b in enumerate(spec.blocks):
        k = b.k
        if streams == k:
            c = cin // k  # the previous block's unfused branches continue
        else:
            c = cin // k if splits_input(cin, k) else cin
        for f in b.filters:
            out.append(Layer("conv3x3", i, k, c, f // k, h * w))
            c = f // k
        if b.pool:
            h, w = h // 2, w // 2
        cin = b.filters[-1]
        streams = 1 if (k == 1 or b.fuse) else k
        if k > 1 and b.fuse:
            out.append(Layer("fusion1x1", i, 1, cin, cin, h * w))
    out.append(Layer("dense", -1, 1, cin, spec.classes, 1))
    return out


def params(spec: NetSpec) -> int:
    """Weights and biases of the whole network."""
    return sum(x.params for x in layers(spec))


def macs(spec: NetSpec) -> int:
    """Multiply-accumulates of one inference (convolutions and the dense layer)."""
    return sum(x.macs for x in layers(spec))
