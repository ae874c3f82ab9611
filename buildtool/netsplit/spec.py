"""The network a split search works on, as data: blocks of 3x3 convolutions, each ending where the
network pools, each split into k slim branches. Pure Python (no TensorFlow): the search, the
formulas and the baselines rewrite this value; `transform.build` turns it into a Keras model.

A block with k > 1 runs k branches side by side, each with 1/k of every layer's filters and no
connection to the others. With `fuse` (the method's split blocks) the branches end in a fusion
block: each pools, the branches are concatenated, and a 1x1 convolution mixes them back to the
block's width. Without it (the naive and shared baselines) branch b feeds branch b of the next
block, and the branches meet only before the classifier.
"""

from __future__ import annotations

import dataclasses

from ..errors import UsageError


@dataclasses.dataclass(frozen=True)
class Block:
    filters: tuple  # output channels of each 3x3 convolution, in order
    residual: bool = False  # filters[1:] are residual units of two convolutions each (identity skip)
    k: int = 1  # branches
    fuse: bool = True  # a split block ends in a fusion block (pool, concatenate, 1x1 convolution)
    pool: bool = True  # 2x2 max pooling at the end of the block


@dataclasses.dataclass(frozen=True)
class NetSpec:
    input_shape: tuple  # (height, width, channels)
    classes: int
    blocks: tuple

    @property
    def factors(self) -> tuple:
        """The split factor of every block."""
        return tuple(b.k for b in self.blocks)


def _check_block(b: Block, i: int) -> None:
    if not b.filters or any(not isinstance(f, int) or f < 1 for f in b.filters):
        raise UsageError(f"block {i + 1}: filters must be positive integers, not {b.filters}")
    if b.residual and (len(b.filters) < 3 or len(b.filters) % 2 == 0 or len(set(b.filters)) != 1):
        raise UsageError(f"block {i + 1}: a residual block is one convolution and pairs of equal width, "
                         f"not {b.filters}")
    if b.k < 1 or any(f % b.k for f in b.filters):
        raise UsageError(f"block {i + 1}: split factor {b.k} does not divide its filters {b.filters}")


def check(spec: NetSpec) -> NetSpec:
    """spec, after refusing what `transform.build` could not build (one line)."""
    for i, b in enumerate(spec.blocks):
        _check_block(b, i)
    for i in range(1, len(spec.blocks)):
        prev, b = spec.blocks[i - 1], spec.blocks[i]
        if prev.k > 1 and not prev.fuse and b.k != prev.k:
            raise UsageError(f"block {i + 1}: unfused branches of block {i} (k={prev.k}) continue only into "
                             f"a block with the same k, not k={b.k}")
    return spec


def can_split(spec: NetSpec, i: int, k: int) -> bool:
    """Whether k divides every layer of block i."""
    return all(f % k == 0 for f in spec.blocks[i].filters)


def split(spec: NetSpec, i: int, k: int) -> NetSpec:
    """Block i (from 0) split into k branches ending in a fusion block."""
    if not 0 <= i < len(spec.blocks):
        raise UsageError(f"block {i + 1} does not exist (the network has {len(spec.blocks)} blocks)")
    blocks = list(spec.blocks)
    blocks[i] = dataclasses.replace(blocks[i], k=k, fuse=True)
    return check(dataclasses.replace(spec, blocks=tuple(blocks)))


def with_factors(spec: NetSpec, factors) -> NetSpec:
    """Every block split by its factor (the method's network for fixed factors, e.g. the paper's 8,2,2,4,4)."""
    factors = tuple(factors)
    if len(factors) != len(spec.blocks):
        raise UsageError(f"{len(factors)} split factors for {len(spec.blocks)} blocks")
    for i, k in enumerate(factors):
        spec = split(spec, i, k)
    return spec


def naive(spec: NetSpec, k: int) -> NetSpec:
    """The naive baseline: k slim networks from the input on, joined only before the classifier."""
    return shared(spec, 0, k)


def shared(spec: NetSpec, n_shared: int, k: int) -> NetSpec:
    """The shared baseline: the first n_shared blocks unsplit, the rest k slim networks joined only
    before the classifier."""
    if not 0 <= n_shared < len(spec.blocks):
        raise UsageError(f"shared blocks {n_shared} must be from 0 to {len(spec.blocks) - 1}")
    blocks = [dataclasses.replace(b, k=1, fuse=True) if j < n_shared else dataclasses.replace(b, k=k, fuse=False)
              for j, b in enumerate(spec.blocks)]
    return check(dataclasses.replace(spec, blocks=tuple(blocks)))


# -- the architectures the CLI knows by name -------------------------------------------------
def _vgg(shape, classes, widths) -> NetSpec:
    return NetSpec(tuple(shape), classes, tuple(Block(tuple(w)) for w in widths))


def _resnet(shape, classes, widths, units) -> NetSpec:
    return NetSpec(tuple(shape), classes, tuple(Block((w,) * (1 + 2 * units), residual=True) for w in widths))


ARCHITECTURES = {  # name: (description, builder(input shape, classes))
    "vgg-small": ("VGG-style, 3 blocks (16,16 | 32,32 | 64), for small inputs such as digits",
                  lambda s, c: _vgg(s, c, [(16, 16), (32, 32), (64,)])),
    "resnet-small": ("ResNet-style, 3 blocks of a convolution and one residual unit (16 | 32 | 64)",
                     lambda s, c: _resnet(s, c, [16, 32, 64], 1)),
    "vgg16": ("VGG16's 13 convolutions in 5 blocks (64..512), global pooling and one dense layer",
              lambda s, c: _vgg(s, c, [(64, 64), (128, 128), (256, 256, 256), (512, 512, 512), (512, 512, 512)])),
    "resnet18": ("ResNet18-style: 5 blocks of a convolution and two residual units (64, 64, 128, 256, 512)",
                 lambda s, c: _resnet(s, c, [64, 64, 128, 256, 512], 2)),
}


def architecture(name: str, input_shape, classes: int) -> NetSpec:
    """A known architecture for this input shape and class count."""
    if name not in ARCHITECTURES:
        raise UsageError(f"unknown architecture '{name}' (known: {', '.join(ARCHITECTURES)}; or a .keras file)")
    spec = ARCHITECTURES[name][1](input_shape, classes)
    pools = sum(b.pool for b in spec.blocks)
    if min(input_shape[:2]) >> pools < 1:
        raise UsageError(f"'{name}' pools {pools} times: the input {input_shape[0]}x{input_shape[1]} is too small")
    return check(spec)


def splits_input(channels: int, k: int) -> bool:
    """Whether k branches each read a 1/k channel slice of a block's input (a SPLIT): when k divides
    it; otherwise (e.g. a 1- or 3-channel image) every branch reads the whole input."""
    return k > 1 and channels % k == 0
