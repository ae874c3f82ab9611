"""Generated graphs for planner tests and benchmarks, not published architectures: a NASNet-like
network (cells of separable-conv, pooling and add branches concatenated, every third cell a reduction)
and a chain of equal 3x3 convolutions, at any depth."""

from __future__ import annotations

from ..model.ir import Graph
from .builder import GraphBuilder


def nasnet_like(cells: int = 6, channels: int = 16, size: int = 48, seed: int = 0) -> Graph:
    """A stem conv, then `cells` cells: two separable convs (3x3 on this cell's input, 5x5 on the
    previous cell's), a max and an average pool, the sum of the two convs, all five concatenated and
    projected by a 1x1 conv; every third cell has stride 2. Many branches live at once, the case where
    fusion finds little and the layer-by-layer order search and packer matter."""
    b = GraphBuilder(f"nasnet-like-{cells}", seed=seed, calib_batch=2)
    h = b.conv2d(b.input((1, size, size, 3)), channels, 3, 2)
    prev = h
    for c in range(cells):
        reduction = c % 3 == 2
        s = 2 if reduction else 1
        branches = [b.conv2d(b.depthwise(h, 3, s), channels, 1, activation="NONE"),
                    b.conv2d(b.depthwise(h if reduction else prev, 5, s), channels, 1, activation="NONE"),
                    b.max_pool(h, 3, s, padding="SAME"), b.avg_pool(h, 3, s, padding="SAME")]
        branches.append(b.add(branches[0], branches[1]))
        out = b.conv2d(b.concat(branches), channels, 1)
        prev, h = (out if reduction else h), out
    return b.finish([b.fully_connected(b.mean(h), 10)])


def conv_chain(n: int, channels: int = 16, size: int = 32, seed: int = 0) -> Graph:
    """n 3x3 stride-1 convolutions of `channels` channels on a size x size map, one after the other."""
    b = GraphBuilder(f"conv-chain-{n}", seed=seed, calib_batch=1)
    h = b.conv2d(b.input((1, size, size, 3)), channels, 3, 1)
    for _ in range(n - 1):
        h = b.conv2d(h, channels, 3, 1)
    return b.finish([h])
