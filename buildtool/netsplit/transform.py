"""The structural transform as a Keras model rewrite (usable without training).

    model = build(spec)                         # the Keras network a NetSpec describes
    split_model = split_block(model, i, k)      # block i split by k, with its fusion block

Layer names are b{block}_s{branch}_c{conv}, b{block}_fuse, head: a rewrite copies every weight
whose layer keeps its name and shape, and starts a newly split block from the unsplit one's
weights (each branch gets its diagonal slice: what the branch computed before, minus the
connections to other branches), so fine-tuning starts close to the parent network.
Imports TensorFlow (Keras 3); the rest of buildtool never imports this module.
"""

from __future__ import annotations

import keras
import numpy as np

from ..errors import UsageError
from . import spec as specs
from .spec import Block, NetSpec, splits_input


@keras.saving.register_keras_serializable(package="buildtool")
class ChannelSplit(keras.layers.Layer):
    """k equal slices of the channel axis (TFLite: one SPLIT operator)."""

    def __init__(self, k: int, **kw):
        super().__init__(**kw)
        self.k = k

    def call(self, x):
        return keras.ops.split(x, self.k, axis=-1)

    def compute_output_shape(self, shape):
        return [tuple(shape[:-1]) + (shape[-1] // self.k,)] * self.k

    def get_config(self):
        return {**super().get_config(), "k": self.k}


def _conv(x, filters: int, size: int, name: str, relu: bool = True):
    return keras.layers.Conv2D(filters, size, padding="same", activation="relu" if relu else None, name=name)(x)


def _branch(x, b: Block, i: int, s: int):
    """One branch of block i: its convolutions (residual units if asked) and the pooling."""
    name = f"b{i}_s{s}_c"
    x = _conv(x, b.filters[0] // b.k, 3, f"{name}0")
    for j in range(1, len(b.filters), 2 if b.residual else 1):
        if b.residual:
            y = _conv(x, b.filters[j] // b.k, 3, f"{name}{j}")
            y = _conv(y, b.filters[j + 1] // b.k, 3, f"{name}{j + 1}", relu=False)
            x = keras.layers.ReLU(name=f"b{i}_s{s}_r{j}")(keras.layers.Add(name=f"b{i}_s{s}_add{j}")([x, y]))
        else:
            x = _conv(x, b.filters[j] // b.k, 3, f"{name}{j}")
    if b.pool:
        x = keras.layers.MaxPooling2D(2, name=f"b{i}_s{s}_pool")(x)
    return x


def _sources(streams: list, channels: int, k: int, i: int) -> list:
    """The k branch inputs of block i: the previous block's unfused branches, one SPLIT's slices,
    or the whole input k times."""
    if len(streams) == k:
        return streams
    if splits_input(channels, k):
        return ChannelSplit(k, name=f"b{i}_split")(streams[0])
    return streams * k


def build(spec: NetSpec, seed: int = 0) -> keras.Model:
    """The Keras network spec describes (weights initialised from seed)."""
    specs.check(spec)
    keras.utils.set_random_seed(seed)
    inp = keras.Input(spec.input_shape, name="image")
    streams, channels = [inp], spec.input_shape[-1]
    for i, b in enumerate(spec.blocks):
        outs = [_branch(x, b, i, s) for s, x in enumerate(_sources(streams, channels, b.k, i))]
        channels = b.filters[-1]
        if b.k > 1 and b.fuse:
            y = keras.layers.Concatenate(name=f"b{i}_concat")(outs)
            outs = [_conv(y, channels, 1, f"b{i}_fuse")]
        streams = outs
    feats = [keras.layers.GlobalAveragePooling2D(name=f"gap{s}")(x) for s, x in enumerate(streams)]
    y = feats[0] if len(feats) == 1 else keras.layers.Concatenate(name="join")(feats)
    model = keras.Model(inp, keras.layers.Dense(spec.classes, name="head")(y), name="netsplit")
    model.netsplit_spec = spec
    return model


# -- weights from a parent network -------------------------------------------------------------
def _full_kernel(model: keras.Model, spec: NetSpec, i: int, j: int, cin_total: int):
    """Conv j of block i over all branches as one kernel (block-diagonal) and one bias."""
    b = spec.blocks[i]
    parts = [model.get_layer(f"b{i}_s{s}_c{j}").get_weights() for s in range(b.k)]
    size = parts[0][0].shape[0]
    cout = b.filters[j]
    w = np.zeros((size, size, cin_total, cout), np.float32)
    for s, (ws, _) in enumerate(parts):
        ci = ws.shape[2]
        lo = 0 if ci == cin_total else s * ci
        w[:, :, lo:lo + ci, s * ws.shape[3]:(s + 1) * ws.shape[3]] = ws
    return w, np.concatenate([p[1] for p in parts])


def _block_inputs(spec: NetSpec) -> list:
    """Channels entering each block (all branches together)."""
    out, c = [], spec.input_shape[-1]
    for b in spec.blocks:
        out.append(c)
        c = b.filters[-1]
    return out


def _inherit_block(new: keras.Model, nspec: NetSpec, old: keras.Model, ospec: NetSpec, i: int) -> None:
    b, cin_total = nspec.blocks[i], _block_inputs(nspec)[i]
    cins = [cin_total] + list(b.filters[:-1])
    for j in range(len(b.filters)):
        w, bias = _full_kernel(old, ospec, i, j, cins[j])
        step_out = b.filters[j] // b.k
        for s in range(b.k):
            layer = new.get_layer(f"b{i}_s{s}_c{j}")
            ci = layer.get_weights()[0].shape[2]
            lo = 0 if ci == cins[j] else s * ci
            out = slice(s * step_out, (s + 1) * step_out)
            layer.set_weights([w[:, :, lo:lo + ci, out], bias[out]])


def inherit(new: keras.Model, old: keras.Model) -> keras.Model:
    """Copy old's weights into new where the networks agree (see the module's docstring)."""
    nspec, ospec = new.netsplit_spec, old.netsplit_spec
    olds = {layer.name: layer for layer in old.layers}
    for layer in new.layers:
        src = olds.get(layer.name)
        if src is not None and [w.shape for w in src.get_weights()] == [w.shape for w in layer.get_weights()]:
            layer.set_weights(src.get_weights())
    for i, (nb, ob) in enumerate(zip(nspec.blocks, ospec.blocks)):
        if nb.k != ob.k and nb.filters == ob.filters and _block_inputs(nspec)[i] == _block_inputs(ospec)[i]:
            _inherit_block(new, nspec, old, ospec, i)
    return new


def split_block(model: keras.Model, i: int, k: int) -> keras.Model:
    """model with block i (from 0) split by k and its fusion block, weights carried over."""
    spec = spec_of(model)
    return inherit(build(specs.split(spec, i, k)), with_spec(model, spec))


def with_spec(model: keras.Model, spec: NetSpec) -> keras.Model:
    """model itself when it was built here, else a copy built from spec holding model's weights."""
    if getattr(model, "netsplit_spec", None) is not None:
        return model
    out = build(spec)
    convs = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    mine = [out.get_layer(f"b{i}_s0_c{j}") for i, b in enumerate(spec.blocks) for j in range(len(b.filters))]
    for src, dst in zip(convs, mine):
        dst.set_weights(src.get_weights())
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)]
    out.get_layer("head").set_weights(dense[-1].get_weights())
    return out


# -- reading a plain Keras network -----------------------------------------------------------
_PASS = (keras.layers.InputLayer, keras.layers.ReLU, keras.layers.Dropout)


def _refuse(layer) -> None:
    raise UsageError(f"netsplit reads chains of 3x3 'same' stride-1 Conv2D (ReLU), MaxPooling2D(2), "
                     f"GlobalAveragePooling2D and one Dense; layer '{layer.name}' ({type(layer).__name__}) "
                     f"is not one (or build the network by name: vgg-small, resnet-small, vgg16, resnet18)")


def spec_of(model: keras.Model) -> NetSpec:
    """The NetSpec of a network built here, or of a plain chain of convolutions and poolings."""
    if getattr(model, "netsplit_spec", None) is not None:
        return model.netsplit_spec
    blocks, filters, classes = [], [], None
    for layer in model.layers:
        if type(layer) is keras.layers.Conv2D:
            ok = (tuple(layer.kernel_size) == (3, 3) and layer.padding == "same" and tuple(layer.strides) == (1, 1)
                  and layer.groups == 1 and tuple(layer.dilation_rate) == (1, 1) and classes is None
                  and layer.get_config()["activation"] in ("relu", "linear"))
            if not ok:
                _refuse(layer)
            filters.append(layer.filters)
        elif isinstance(layer, keras.layers.MaxPooling2D) and filters and tuple(layer.pool_size) == (2, 2):
            blocks.append(Block(tuple(filters)))
            filters = []
        elif isinstance(layer, keras.layers.Dense) and classes is None:
            classes = layer.units
        elif isinstance(layer, keras.layers.Activation) and layer.get_config()["activation"] == "relu":
            continue
        elif not isinstance(layer, _PASS + (keras.layers.GlobalAveragePooling2D,)):
            _refuse(layer)
    if filters:
        blocks.append(Block(tuple(filters), pool=False))
    if not blocks or classes is None:
        raise UsageError("netsplit needs at least one Conv2D and a final Dense layer")
    return specs.check(NetSpec(tuple(model.input_shape[1:]), classes, tuple(blocks)))
