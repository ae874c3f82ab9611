"""Build int8 graphs programmatically, calibrated as they are built.

Random int8 networks collapse to constants unless every layer's quantisation
fits the values that really reach it. So the builder carries a float forward
pass of a seeded calibration batch alongside the graph (uniform random int8
inputs, like the fixed test input) and simulates the int8 model: weights and
biases are used as their quantised values, every activation is rounded to its
int8 grid. Convolutions normalise each output channel to unit variance on the
batch (batch-norm folding with random gamma/beta), so activations keep a
sensible scale at any depth. Output scales and zero points come from the
observed range. Everything is drawn from one seeded numpy RNG: the same calls
give the same graph, bit for bit.

Each op method takes activation tensor indices and returns the output index.
`out_quant=(scale, zero_point)` overrides calibration and `seed=` gives a
weighted op its own weight stream, for tests:

    b = GraphBuilder("t", seed=1)
    x = b.input((1, 16, 16, 3))
    y = b.conv2d(x, 8, k=3, stride=2)             # CONV_2D + ReLU6, SAME
    y = b.add(y, b.depthwise(y, 3), out_quant=(0.05, -3))
    g = b.finish()                                # validated Graph; b.simulate(y) predicts int8 values
"""

from __future__ import annotations

import math

import numpy as np

from ..model import ops
from ..model.ir import NUMPY_DTYPE, Graph, Operator, Quant, Tensor, validate_graph
from ..model.ops_extra import CAST_TYPE_CODES
from ..refops.cast import cast_values
from ..refops.layout import block_view
from ..refops.resize import bilinear_taps, nearest_indices

_ACT = {"NONE": (-np.inf, np.inf), "RELU": (0.0, np.inf), "RELU_N1_TO_1": (-1.0, 1.0), "RELU6": (0.0, 6.0)}
_FIXED_01 = (1.0 / 256.0, -128)  # TFLM's required output quantisation of int8 SOFTMAX and LOGISTIC
_FIXED_TANH = (1.0 / 128.0, 0)  # the output quantisation TFLM's int8 TANH computes in


def _pair(v) -> tuple:
    return (int(v), int(v)) if np.isscalar(v) else (int(v[0]), int(v[1]))


def _quant(scale, zp, axis: int = 0) -> Quant:
    return Quant(np.atleast_1d(np.asarray(scale, dtype=np.float32)),
                 np.atleast_1d(np.asarray(zp, dtype=np.int64)), axis)


def _mm(a, b) -> np.ndarray:
    """a @ b for the float calibration pass, the same on every machine. BLAS picks its kernel per CPU
    (Haswell, SkylakeX, Zen...) and each sums in its own order: in float32 the last bits differ, which
    moves quantisation ranges, so the zoo's models differed between an AVX-512 machine and others.
    Summed in float64 (exact products of float32 values) and rounded once to float32, the kernels'
    differences (about 1e-16 relative) vanish in the rounding."""
    return (np.asarray(a, np.float64) @ np.asarray(b, np.float64)).astype(np.float32)


def range_quant(lo: float, hi: float) -> tuple:
    """Asymmetric int8 (scale, zero_point) covering [lo, hi] and exactly representing 0."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi - lo < 1e-6:
        hi = lo + 1e-3
    scale = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.round(-128 - lo / float(scale)), -128, 127))
    return float(scale), zp


def fake_quant(x: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """x rounded to the int8 grid and back (what the int8 model sees)."""
    q = np.clip(np.round(x / scale) + zp, -128, 127)
    return ((q - zp) * scale).astype(np.float32)


def _pad_amounts(size, k, stride, dilation, padding):
    out = ops.conv_out_size(size, k, stride, dilation, padding)
    if padding != "SAME":
        return out, 0, 0
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return out, total // 2, total - total // 2


def _windows(x, kh, kw, sh, sw, dh, dw, padding, fill=0.0):
    """Yield (i, j, slice of padded x) for every filter tap: output-shaped views, no copies per tap."""
    n, h, w, c = x.shape
    oh, pt, pb = _pad_amounts(h, kh, sh, dh, padding)
    ow, pl, pr = _pad_amounts(w, kw, sw, dw, padding)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill) if pt + pb + pl + pr else x
    for i in range(kh):
        for j in range(kw):
            yield i, j, xp[:, i * dh: i * dh + (oh - 1) * sh + 1: sh, j * dw: j * dw + (ow - 1) * sw + 1: sw, :]


class GraphBuilder:
    """Append operators to a graph; finish() validates and returns it."""

    def __init__(self, name: str = "model", seed: int = 0, calib_batch: int = 4, description: str = ""):
        self.name, self.description = name, description
        self.rng = np.random.default_rng(seed)
        self.calib_rng = np.random.default_rng(seed + 1_000_003)
        self.batch = calib_batch
        self.tensors: list = []
        self.operators: list = []
        self.inputs: list = []
        self.values: dict = {}  # tensor index -> float calibration batch (dequantised int8 values)

    # -- tensors --------------------------------------------------------------
    def _tensor(self, name, shape, dtype="int8", quant=None, data=None) -> int:
        i = len(self.tensors)
        if data is not None:
            data = np.asarray(data, dtype=NUMPY_DTYPE[dtype]).reshape(shape)
        self.tensors.append(Tensor(i, name, tuple(int(d) for d in shape), dtype, quant, data))
        return i

    def const(self, name, data, dtype, quant=None) -> int:
        data = np.asarray(data)
        return self._tensor(name, data.shape, dtype, quant, data)

    def _op(self, opcode, inputs, outputs, options=None) -> Operator:
        op = Operator(len(self.operators), opcode, tuple(inputs), tuple(outputs), dict(options or {}))
        self.operators.append(op)
        return op

    def _act_out(self, opname, value, activation="NONE", out_quant=None, shape=None) -> int:
        """Quantise a float result and make its tensor (batch dimension 1 in the graph)."""
        lo, hi = _ACT[activation]
        value = np.clip(value, lo, hi).astype(np.float32)
        scale, zp = out_quant if out_quant is not None else range_quant(value.min(), value.max())
        shape = shape if shape is not None else (1,) + value.shape[1:]
        t = self._tensor(f"{opname}/out", shape, "int8", _quant(scale, zp))
        self.values[t] = fake_quant(value, scale, zp)
        return t

    def simulate(self, t: int, sample: int = 0) -> np.ndarray:
        """Int8 codes of tensor t for one calibration sample, as the builder's simulation computed them."""
        s, zp = self.quant_of(t)
        v = self.values[t]
        return np.clip(np.round(v / s) + zp, -128, 127).astype(np.int8).reshape(-1)[
            sample * self.tensors[t].num_elements:(sample + 1) * self.tensors[t].num_elements].reshape(self.shape(t))

    def shape(self, t: int) -> tuple:
        return self.tensors[t].shape

    def quant_of(self, t: int) -> tuple:
        return self.tensors[t].scale, self.tensors[t].zero_point

    def _rng(self, seed):
        """Weights come from the builder's stream, or from their own when an op gets a seed."""
        return self.rng if seed is None else np.random.default_rng(seed)

    def _name(self, kind: str) -> str:
        return f"{kind}_{len(self.operators)}"

    # -- inputs ---------------------------------------------------------------
    def input(self, shape, scale: float = 1.0 / 128, zp: int = 0, dtype: str = "int8", name: str = "input",
              calib=None) -> int:
        """A model input. Calibration uses uniform random int8 codes (float inputs: uniform in [-1, 1]);
        calib (int8 codes, one row per sample) replaces the first samples, e.g. to simulate a known input."""
        shape = tuple(int(d) for d in shape)
        cal = (self.batch,) + shape[1:]
        if dtype == "int8":
            t = self._tensor(name, shape, "int8", _quant(scale, zp))
            q = self.calib_rng.integers(-128, 128, size=cal)
            if calib is not None:
                calib = np.asarray(calib).reshape((-1,) + shape[1:])[:self.batch]
                q[:len(calib)] = calib
            self.values[t] = ((q - zp) * np.float32(scale)).astype(np.float32)
        else:
            t = self._tensor(name, shape, dtype)
            self.values[t] = self.calib_rng.uniform(-1, 1, size=cal).astype(np.float32)
        self.inputs.append(t)
        return t

    # -- weighted layers ------------------------------------------------------
    def _fold(self, rng, y, w, b, axis_c, normalize, out_std=1.0):
        """Batch-norm folding: scale each output channel to unit variance and shift by a random beta."""
        c = y.shape[-1]
        red = tuple(range(y.ndim - 1))
        if normalize:
            mean, std = y.mean(axis=red), y.std(axis=red)
            std = np.where(std > 1e-6, std, 1.0)
            gamma = rng.uniform(0.5, 1.5, size=c).astype(np.float32)
            beta = rng.normal(0.0, 0.25, size=c).astype(np.float32)
            g = gamma / std
        else:  # one scale for the whole layer (dense heads: keep the spread between outputs)
            mean = np.full(c, y.mean(), np.float32)
            g = np.full(c, out_std / max(float(y.std()), 1e-6), np.float32)
            beta = np.zeros(c, np.float32)
        shape = [1] * w.ndim
        shape[axis_c] = c
        return w * g.reshape(shape), (b - mean) * g + beta

    def _quant_weights(self, w, axis_c):
        red = tuple(d for d in range(w.ndim) if d != axis_c)
        sw = np.abs(w).max(axis=red) / 127.0
        sw = np.where(sw > 0, sw, 1e-6).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis_c] = len(sw)
        wq = np.clip(np.round(w / sw.reshape(shape)), -127, 127).astype(np.int8)
        return wq, sw, sw.reshape(shape)

    def _weighted(self, rng, kind, opcode, x, w, y_fn, axis_c, activation, out_quant, normalize, options,
                  out_shape, bias=True, out_std=1.0):
        """Fold, quantise, add weight/bias constants and the operator; y_fn(w) is the float layer."""
        name = self._name(kind)
        xv = self.values[x]
        b = np.zeros(w.shape[axis_c], np.float32)
        w, b = self._fold(rng, y_fn(xv, w), w, b, axis_c, normalize, out_std)
        wq, sw, sw_b = self._quant_weights(w, axis_c)
        s_in = self.tensors[x].scale
        bscale = (np.float64(s_in) * sw.astype(np.float64)).astype(np.float32)
        bq = np.clip(np.round(b / bscale), -(2 ** 31), 2 ** 31 - 1).astype(np.int32)
        ti_w = self.const(f"{name}/weights", wq, "int8", _quant(sw, np.zeros(len(sw)), axis_c))
        ins = [x, ti_w]
        y = y_fn(xv, wq.astype(np.float32) * sw_b)
        if bias:
            ins.append(self.const(f"{name}/bias", bq, "int32", _quant(bscale, np.zeros(len(bscale)))))
            y = y + (bq * bscale).astype(np.float32)
        out = self._act_out(name, y, activation, out_quant, out_shape)
        self._op(opcode, ins, [out], options)
        return out

    def conv2d(self, x, cout, k=3, stride=1, padding="SAME", activation="RELU6", dilation=1, *,
               bias=True, normalize=True, out_quant=None, seed=None) -> int:
        """CONV_2D with He-normal weights [cout, kh, kw, cin], per-channel int8."""
        (kh, kw), (sh, sw), (dh, dw) = _pair(k), _pair(stride), _pair(dilation)
        _, h, wd, cin = self.shape(x)
        rng = self._rng(seed)
        w = rng.normal(0, np.sqrt(2.0 / (kh * kw * cin)), size=(cout, kh, kw, cin)).astype(np.float32)

        def f(xv, w):
            y = 0
            for i, j, win in _windows(xv, kh, kw, sh, sw, dh, dw, padding):
                y = y + _mm(win, w[:, i, j, :].T)
            return y

        oh, ow = ops.conv_out_size(h, kh, sh, dh, padding), ops.conv_out_size(wd, kw, sw, dw, padding)
        opts = {"padding": padding, "stride_h": sh, "stride_w": sw, "dilation_h": dh, "dilation_w": dw,
                "activation": activation}
        return self._weighted(rng, "conv", "CONV_2D", x, w, f, 0, activation, out_quant, normalize, opts,
                              (1, oh, ow, cout), bias)

    def depthwise(self, x, k=3, stride=1, padding="SAME", activation="RELU6", multiplier=1, dilation=1, *,
                  bias=True, normalize=True, out_quant=None, seed=None) -> int:
        """DEPTHWISE_CONV_2D, weights [1, kh, kw, cin*multiplier], per-channel int8 on axis 3."""
        (kh, kw), (sh, sw), (dh, dw) = _pair(k), _pair(stride), _pair(dilation)
        _, h, wd, cin = self.shape(x)
        cout = cin * multiplier
        rng = self._rng(seed)
        w = rng.normal(0, np.sqrt(2.0 / (kh * kw)), size=(1, kh, kw, cout)).astype(np.float32)

        def f(xv, w):
            if multiplier > 1:
                xv = np.repeat(xv, multiplier, axis=3)
            y = 0
            for i, j, win in _windows(xv, kh, kw, sh, sw, dh, dw, padding):
                y = y + win * w[0, i, j, :]
            return y

        oh, ow = ops.conv_out_size(h, kh, sh, dh, padding), ops.conv_out_size(wd, kw, sw, dw, padding)
        opts = {"padding": padding, "stride_h": sh, "stride_w": sw, "dilation_h": dh, "dilation_w": dw,
                "activation": activation, "depth_multiplier": multiplier}
        return self._weighted(rng, "dwconv", "DEPTHWISE_CONV_2D", x, w, f, 3, activation, out_quant, normalize, opts,
                              (1, oh, ow, cout), bias)

    def fully_connected(self, x, units, activation="NONE", *, bias=True, out_std=2.0, normalize=False,
                        out_quant=None, seed=None) -> int:
        """FULLY_CONNECTED over the flattened input; weights [units, in], per-channel int8.

        Without normalize the layer is scaled as a whole to out_std, so outputs keep their spread.
        """
        n_in = self.shape(x)[-1]
        rows = self.tensors[x].num_elements // n_in
        rng = self._rng(seed)
        w = rng.normal(0, np.sqrt(2.0 / n_in), size=(units, n_in)).astype(np.float32)

        def f(xv, w):
            return _mm(xv.reshape(-1, n_in), w.T)

        opts = {"activation": activation, "keep_num_dims": False}
        out = self._weighted(rng, "fc", "FULLY_CONNECTED", x, w, f, 0, activation, out_quant, normalize, opts,
                             (rows, units), bias, out_std)
        return out

    # -- element-wise and shape ops ------------------------------------------
    def _binary(self, opcode, a, b, activation, out_quant):
        va, vb = self.values[a], self.values[b]
        y = va + vb if opcode == "ADD" else va - vb if opcode == "SUB" else va * vb
        shape = tuple(np.broadcast_shapes(self.shape(a), self.shape(b)))
        out = self._act_out(self._name(opcode.lower()), y, activation, out_quant, shape)
        self._op(opcode, [a, b], [out], {"activation": activation})
        return out

    def add(self, a, b, activation="NONE", *, out_quant=None) -> int:
        return self._binary("ADD", a, b, activation, out_quant)

    def mul(self, a, b, activation="NONE", *, out_quant=None) -> int:
        return self._binary("MUL", a, b, activation, out_quant)

    def sub(self, a, b, activation="NONE", *, out_quant=None) -> int:
        return self._binary("SUB", a, b, activation, out_quant)

    def leaky_relu(self, x, alpha=0.2, *, out_quant=None) -> int:
        v = self.values[x]
        alpha = float(np.float32(alpha))
        out = self._act_out(self._name("leaky_relu"), np.where(v >= 0, v, alpha * v), "NONE", out_quant,
                            self.shape(x))
        self._op("LEAKY_RELU", [x], [out], {"alpha": alpha})
        return out

    def transpose_conv(self, x, cout, k=3, stride=2, padding="SAME", *, bias=True, normalize=True,
                       out_quant=None, seed=None) -> int:
        """TRANSPOSE_CONV (inputs output_shape, weights [cout, kh, kw, cin], x, [bias]); the output is
        the largest size whose convolution with this geometry gives x's size."""
        (kh, kw), (sh, sw) = _pair(k), _pair(stride)
        _, h, wd, cin = self.shape(x)
        oh = h * sh if padding == "SAME" else (h - 1) * sh + kh
        ow = wd * sw if padding == "SAME" else (wd - 1) * sw + kw
        pt = ops.conv_padding(oh, kh, sh, 1, padding)
        pl = ops.conv_padding(ow, kw, sw, 1, padding)
        rng = self._rng(seed)
        w = rng.normal(0, np.sqrt(2.0 / (kh * kw * cin)), size=(cout, kh, kw, cin)).astype(np.float32)

        def f(xv, w):
            full = np.zeros((xv.shape[0], max((h - 1) * sh + kh, pt + oh), max((wd - 1) * sw + kw, pl + ow), cout),
                            np.float32)
            for i in range(kh):
                for j in range(kw):
                    full[:, i:i + (h - 1) * sh + 1:sh, j:j + (wd - 1) * sw + 1:sw] += _mm(xv, w[:, i, j, :].T)
            return full[:, pt:pt + oh, pl:pl + ow]

        name = self._name("tconv")
        opts = {"padding": padding, "stride_h": sh, "stride_w": sw, "activation": "NONE"}
        out = self._weighted(rng, "tconv", "TRANSPOSE_CONV", x, w, f, 0, "NONE", out_quant, normalize, opts,
                             (1, oh, ow, cout), bias)
        op = self.operators[-1]
        shp = self.const(f"{name}/output_shape", np.array([1, oh, ow, cout], np.int32), "int32")
        op.inputs = (shp, op.inputs[1], op.inputs[0]) + op.inputs[2:]
        return out

    def _same_quant_out(self, kind, x, value, shape=None, activation="NONE") -> int:
        """Output sharing x's quantisation (ops that move int8 values without rescaling)."""
        s, zp = self.quant_of(x)
        return self._act_out(self._name(kind), value, activation, (s, zp), shape)

    def concat(self, xs, axis=-1, activation="NONE", *, out_quant=None) -> int:
        """CONCATENATION. TFLM needs one quantisation for all inputs and the output, so inputs
        with another one are first requantised with QUANTIZE ops."""
        xs = list(xs)
        if out_quant is None:
            lo = min(float(self.values[x].min()) for x in xs)
            hi = max(float(self.values[x].max()) for x in xs)
            out_quant = range_quant(lo, hi)
        out_quant = (float(np.float32(out_quant[0])), int(out_quant[1]))
        xs = [x if self.quant_of(x) == tuple(out_quant) else self.quantize(x, *out_quant) for x in xs]
        rank = len(self.shape(xs[0]))
        ax = axis + rank if axis < 0 else axis
        shape = list(self.shape(xs[0]))
        shape[ax] = sum(self.shape(x)[ax] for x in xs)
        y = np.concatenate([self.values[x] for x in xs], axis=ax)
        out = self._act_out(self._name("concat"), y, activation, out_quant, tuple(shape))
        self._op("CONCATENATION", xs, [out], {"axis": axis, "activation": activation})
        return out

    def _pool(self, opcode, x, k, stride, padding, activation):
        (kh, kw) = _pair(k)
        sh, sw = _pair(stride if stride is not None else k)
        xv = self.values[x]
        if opcode == "MAX_POOL_2D":
            y = None
            for _, _, win in _windows(xv, kh, kw, sh, sw, 1, 1, padding, fill=-np.inf):
                y = win if y is None else np.maximum(y, win)
        else:  # TFLite averages over the taps inside the input only
            ones = np.ones((1,) + xv.shape[1:3] + (1,), np.float32)
            tot = sum(win for _, _, win in _windows(xv, kh, kw, sh, sw, 1, 1, padding))
            cnt = sum(win for _, _, win in _windows(ones, kh, kw, sh, sw, 1, 1, padding))
            y = tot / cnt
        out = self._same_quant_out(opcode.lower(), x, y, None, activation)
        self._op(opcode, [x], [out], {"padding": padding, "stride_h": sh, "stride_w": sw, "filter_h": kh,
                                      "filter_w": kw, "activation": activation})
        return out

    def avg_pool(self, x, k=2, stride=None, padding="VALID", activation="NONE") -> int:
        return self._pool("AVERAGE_POOL_2D", x, k, stride, padding, activation)

    def max_pool(self, x, k=2, stride=None, padding="VALID", activation="NONE") -> int:
        return self._pool("MAX_POOL_2D", x, k, stride, padding, activation)

    def mean(self, x, axes=(1, 2), keep_dims=False, *, out_quant=None) -> int:
        name = self._name("mean")
        rank = len(self.shape(x))
        axes = tuple(a + rank if a < 0 else a for a in axes)
        y = self.values[x].mean(axis=axes, keepdims=keep_dims)
        shape = tuple(1 if d in axes else n for d, n in enumerate(self.shape(x)) if keep_dims or d not in axes)
        ax = self.const(f"{name}/axes", np.array(axes, np.int32), "int32")
        out = self._act_out(name, y, "NONE", out_quant, shape)
        self._op("MEAN", [x, ax], [out], {"keep_dims": keep_dims})
        return out

    def reduce(self, opcode, x, axes=(1, 2), keep_dims=False, *, out_quant=None) -> int:
        """SUM, REDUCE_MAX or REDUCE_MIN over axes (never the batch axis 0); REDUCE_MAX / REDUCE_MIN keep the
        input's quantisation (TFLM requires it)."""
        name = self._name(opcode.lower())
        rank = len(self.shape(x))
        axes = tuple(a + rank if a < 0 else a for a in axes)
        fn = {"SUM": np.sum, "REDUCE_MAX": np.max, "REDUCE_MIN": np.min}[opcode]
        y = fn(self.values[x], axis=axes, keepdims=keep_dims)
        shape = tuple(1 if d in axes else n for d, n in enumerate(self.shape(x)) if keep_dims or d not in axes)
        ax = self.const(f"{name}/axes", np.array(axes, np.int32), "int32")
        if opcode != "SUM":
            out_quant = self.quant_of(x)
        out = self._act_out(name, y, "NONE", out_quant, shape)
        self._op(opcode, [x, ax], [out], {"keep_dims": keep_dims})
        return out

    def pad(self, x, paddings) -> int:
        """PAD with the zero point (real zero); paddings [[before, after]] per dimension."""
        name = self._name("pad")
        p = np.asarray(paddings, np.int32).reshape(-1, 2)
        y = np.pad(self.values[x], [(0, 0)] + [tuple(r) for r in p[1:]])
        shape = tuple(int(n + p[d].sum()) for d, n in enumerate(self.shape(x)))
        pt = self.const(f"{name}/paddings", p, "int32")
        out = self._same_quant_out("pad", x, y, shape)
        self._op("PAD", [x, pt], [out])
        return out

    def reshape(self, x, shape) -> int:
        name = self._name("reshape")
        shape = tuple(int(d) for d in shape)
        st = self.const(f"{name}/shape", np.array(shape, np.int32), "int32")
        y = self.values[x].reshape((self.batch,) + shape[1:])
        out = self._same_quant_out("reshape", x, y, shape)
        self._op("RESHAPE", [x, st], [out])
        return out

    def softmax(self, x, beta=1.0) -> int:
        v = self.values[x] * beta
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        out = self._act_out(self._name("softmax"), e / e.sum(axis=-1, keepdims=True), "NONE", _FIXED_01,
                            self.shape(x))
        self._op("SOFTMAX", [x], [out], {"beta": float(beta)})
        return out

    def logistic(self, x) -> int:
        y = 1.0 / (1.0 + np.exp(-self.values[x]))
        out = self._act_out(self._name("logistic"), y, "NONE", _FIXED_01, self.shape(x))
        self._op("LOGISTIC", [x], [out])
        return out

    def hard_swish(self, x, *, out_quant=None) -> int:
        v = self.values[x]
        out = self._act_out(self._name("hard_swish"), v * np.clip(v + 3, 0, 6) / 6, "NONE", out_quant,
                            self.shape(x))
        self._op("HARD_SWISH", [x], [out])
        return out

    def quantize(self, x, scale=None, zp=None) -> int:
        """QUANTIZE float -> int8, or requantise int8 -> int8 (scale None: from the observed range)."""
        v = self.values[x]
        q = range_quant(v.min(), v.max()) if scale is None else (scale, 0 if zp is None else zp)
        out = self._act_out(self._name("quantize"), v, "NONE", q, self.shape(x))
        self._op("QUANTIZE", [x], [out])
        return out

    def dequantize(self, x) -> int:
        name = self._name("dequantize")
        out = self._tensor(f"{name}/out", self.shape(x), "float32")
        self.values[out] = self.values[x]
        self._op("DEQUANTIZE", [x], [out])
        return out

    def split(self, x, n, axis=-1) -> list:
        name = self._name("split")
        ax = self.const(f"{name}/axis", np.array(axis, np.int32), "int32")
        rank = len(self.shape(x))
        a = axis + rank if axis < 0 else axis
        shape = list(self.shape(x))
        shape[a] //= n
        outs = [self._same_quant_out("split", x, v, tuple(shape)) for v in np.split(self.values[x], n, axis=a)]
        self._op("SPLIT", [ax, x], outs, {"num_splits": n})
        return outs

    def slice(self, x, begin, size) -> int:
        """SLICE (batch axis whole): begin and size per dimension, size -1 to the end."""
        name = self._name("slice")
        shape = self.shape(x)
        ends = [n if s < 0 else b + s for b, s, n in zip(begin, size, shape)]
        out_shape = tuple(e - b for b, e in zip(begin, ends))
        sl = (slice(None),) + tuple(slice(b, e) for b, e in zip(begin[1:], ends[1:]))
        bt = self.const(f"{name}/begin", np.array(begin, np.int32), "int32")
        st = self.const(f"{name}/size", np.array(size, np.int32), "int32")
        out = self._same_quant_out("slice", x, self.values[x][sl], out_shape)
        self._op("SLICE", [x, bt, st], [out])
        return out

    def padv2(self, x, paddings, value: int) -> int:
        """PADV2 with the raw code `value` (on the input's quantisation, which the output keeps)."""
        name = self._name("padv2")
        p = np.asarray(paddings, np.int32).reshape(-1, 2)
        s, zp = self.quant_of(x)
        y = np.pad(self.values[x], [(0, 0)] + [tuple(r) for r in p[1:]], constant_values=(value - zp) * s)
        shape = tuple(int(n + p[d].sum()) for d, n in enumerate(self.shape(x)))
        pt = self.const(f"{name}/paddings", p, "int32")
        cv = self.const(f"{name}/value", np.array([value], np.int8 if self.tensors[x].dtype == "int8" else np.int16),
                        self.tensors[x].dtype, _quant(s, zp))
        out = self._same_quant_out("padv2", x, y, shape)
        self._op("PADV2", [x, pt, cv], [out])
        return out

    def split_v(self, x, sizes, axis=-1) -> list:
        """SPLIT_V: outputs of the given sizes along axis (not the batch axis; one size may be -1)."""
        name = self._name("split_v")
        rank = len(self.shape(x))
        a = axis + rank if axis < 0 else axis
        real = list(sizes)
        if -1 in real:
            real[real.index(-1)] = self.shape(x)[a] - sum(s for s in real if s != -1)
        st = self.const(f"{name}/sizes", np.array(sizes, np.int32), "int32")
        ax = self.const(f"{name}/axis", np.array([axis], np.int32), "int32")
        parts = np.split(self.values[x], np.cumsum(real)[:-1], axis=a)
        outs = [self._same_quant_out("split_v", x, v, self.shape(x)[:a] + (n,) + self.shape(x)[a + 1:])
                for v, n in zip(parts, real)]
        self._op("SPLIT_V", [x, st, ax], outs, {"num_splits": len(sizes)})
        return outs

    def pack(self, xs, axis=0) -> int:
        """PACK: inputs of one shape (and, here, one quantisation: TFLM copies raw codes) on a new axis >= 1."""
        xs = list(xs)
        q = self.quant_of(xs[0])
        xs = [x if self.quant_of(x) == q else self.quantize(x, *q) for x in xs]
        shape = self.shape(xs[0])
        a = axis + len(shape) + 1 if axis < 0 else axis
        out = self._same_quant_out("pack", xs[0], np.stack([self.values[x] for x in xs], axis=a),
                                   shape[:a] + (len(xs),) + shape[a:])
        self._op("PACK", xs, [out], {"values_count": len(xs), "axis": axis})
        return out

    def unpack(self, x, axis=1) -> list:
        """UNPACK along axis (not the batch axis)."""
        shape = self.shape(x)
        a = axis + len(shape) if axis < 0 else axis
        outs = [self._same_quant_out("unpack", x, np.take(self.values[x], k, axis=a), shape[:a] + shape[a + 1:])
                for k in range(shape[a])]
        self._op("UNPACK", [x], outs, {"num": shape[a], "axis": axis})
        return outs

    def strided_slice(self, x, begin, end, strides=None, begin_mask=0, end_mask=0, shrink_axis_mask=0) -> int:
        """STRIDED_SLICE with positive strides; masks as TFLite's (bit d applies to dimension d)."""
        name = self._name("slice")
        shape = self.shape(x)
        strides = strides if strides is not None else [1] * len(shape)
        sl, out_shape = [slice(None)], []
        for d, n in enumerate(shape):
            b = 0 if begin_mask >> d & 1 else begin[d]
            e = n if end_mask >> d & 1 else end[d]
            s = slice(b, e, strides[d]) if not shrink_axis_mask >> d & 1 else slice(b, b + 1)
            size = len(range(*s.indices(n)))
            if d > 0:
                sl.append(s)
            if not shrink_axis_mask >> d & 1:
                out_shape.append(size)
        y = self.values[x][tuple(sl)]
        y = y.reshape((self.batch,) + tuple(out_shape[1:]))
        ins = [x] + [self.const(f"{name}/{k}", np.array(v, np.int32), "int32")
                     for k, v in (("begin", begin), ("end", end), ("strides", strides))]
        out = self._same_quant_out("slice", x, y, tuple(out_shape))
        self._op("STRIDED_SLICE", ins, [out], {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": 0,
                                              "new_axis_mask": 0, "shrink_axis_mask": shrink_axis_mask,
                                              "offset": False})
        return out

    # -- activations, layout and resize (TFLM int8 semantics, see ops_extra.py) ----------
    def _per_sample(self, x, fn, out_shape) -> np.ndarray:
        """Calibration values of fn(x) for a shape-only op: fn maps x in its graph shape to the output.

        The builder's calibration arrays stack the samples on axis 0; when an op moves or makes that
        axis other than 1, the output keeps the input's values (its spread), not their positions."""
        v = self.values[x]
        cal = (self.batch,) + tuple(out_shape[1:])
        if self.shape(x)[0] == 1 and out_shape and out_shape[0] == 1:
            return np.stack([fn(s[None]) for s in v]).reshape(cal)
        return np.resize(v, cal)

    def relu(self, x, *, out_quant=None) -> int:
        out = self._act_out(self._name("relu"), np.maximum(self.values[x], 0), "NONE", out_quant, self.shape(x))
        self._op("RELU", [x], [out])
        return out

    def abs(self, x, *, out_quant=None) -> int:
        out = self._act_out(self._name("abs"), np.abs(self.values[x]), "NONE", out_quant, self.shape(x))
        self._op("ABS", [x], [out])
        return out

    def rsqrt(self, x, *, out_quant=None) -> int:
        """RSQRT of a non-negative input (TFLM fails on a code below the input zero point)."""
        v = np.maximum(self.values[x], 0)
        y = 1.0 / np.sqrt(np.maximum(v, max(float(self.tensors[x].scale), 1e-6)))
        out = self._act_out(self._name("rsqrt"), y, "NONE", out_quant, self.shape(x))
        self._op("RSQRT", [x], [out])
        return out

    def _dequant(self, i) -> np.ndarray:
        """A quantised constant's real values."""
        t = self.tensors[i]
        return ((t.data.astype(np.float32) - t.zero_point) * np.float32(t.scale)).astype(np.float32)

    def compare(self, opcode, a, b) -> int:
        """EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER or GREATER_EQUAL: a bool output (no quantisation)."""
        fn = {"EQUAL": np.equal, "NOT_EQUAL": np.not_equal, "LESS": np.less, "LESS_EQUAL": np.less_equal,
              "GREATER": np.greater, "GREATER_EQUAL": np.greater_equal}[opcode]
        shape = tuple(np.broadcast_shapes(self.shape(a), self.shape(b)))
        t = self._tensor(f"{self._name(opcode.lower())}/out", shape, "bool")
        va, vb = (self.values[i] if i in self.values else self._dequant(i) for i in (a, b))
        self.values[t] = fn(va, vb).astype(np.float32)
        self._op(opcode, [a, b], [t])
        return t

    def logical(self, opcode, a, b=None) -> int:
        """LOGICAL_AND or LOGICAL_OR of two bool tensors, LOGICAL_NOT of one."""
        va = self.values[a] != 0
        if opcode == "LOGICAL_NOT":
            shape, y, ins = self.shape(a), np.logical_not(va), [a]
        else:
            vb = self.values[b] != 0
            shape = tuple(np.broadcast_shapes(self.shape(a), self.shape(b)))
            y, ins = (np.logical_and if opcode == "LOGICAL_AND" else np.logical_or)(va, vb), [a, b]
        t = self._tensor(f"{self._name(opcode.lower())}/out", shape, "bool")
        self.values[t] = y.astype(np.float32)
        self._op(opcode, ins, [t])
        return t

    def select_v2(self, c, x, y) -> int:
        """SELECT_V2: x where the bool c holds, else y; TFLM copies raw codes, so y is first requantised
        (QUANTIZE) to x's quantisation, which the output keeps."""
        if self.quant_of(y) != self.quant_of(x):
            y = self.quantize(y, *self.quant_of(x))
        shape = tuple(np.broadcast_shapes(self.shape(c), self.shape(x), self.shape(y)))
        vc = self.values[c] if c in self.values else self.tensors[c].data.astype(np.float32)  # a constant
        v = np.where(vc != 0, self.values[x], self.values[y])
        out = self._act_out(self._name("select_v2"), v, "NONE", self.quant_of(x), shape)
        self._op("SELECT_V2", [c, x, y], [out])
        return out

    def squared_difference(self, a, b, *, out_quant=None) -> int:
        """SQUARED_DIFFERENCE (a - b)^2, broadcast; either operand may be a quantised constant."""
        va, vb = (self.values[i] if i in self.values else self._dequant(i) for i in (a, b))
        shape = tuple(np.broadcast_shapes(self.shape(a), self.shape(b)))
        out = self._act_out(self._name("squared_difference"), np.square(va - vb), "NONE", out_quant, shape)
        self._op("SQUARED_DIFFERENCE", [a, b], [out])
        return out

    def add_n(self, xs, *, out_quant=None) -> int:
        """ADD_N of inputs of one shape; inputs on another quantisation than the first are requantised to it
        (QUANTIZE), as TFLM requires one."""
        xs = list(xs)
        q = self.quant_of(xs[0])
        xs = [x if self.quant_of(x) == q else self.quantize(x, *q) for x in xs]
        v = np.sum([self.values[x] for x in xs], axis=0)
        out = self._act_out(self._name("add_n"), v, "NONE", out_quant, self.shape(xs[0]))
        self._op("ADD_N", xs, [out])
        return out

    def zeros_like(self, x) -> int:
        """ZEROS_LIKE: TFLM writes raw code 0, so the output gets the input's scale and zero point 0."""
        out = self._act_out(self._name("zeros_like"), np.zeros_like(self.values[x]), "NONE",
                            (self.quant_of(x)[0], 0), self.shape(x))
        self._op("ZEROS_LIKE", [x], [out])
        return out

    def argminmax(self, opcode, x, axis=-1) -> int:
        """ARG_MAX or ARG_MIN along axis (not the batch axis): an int32 output."""
        name = self._name(opcode.lower())
        shape = self.shape(x)
        a = axis % len(shape)
        ax = self.const(f"{name}/axis", np.array([axis], np.int32), "int32")
        t = self._tensor(f"{name}/out", shape[:a] + shape[a + 1:], "int32")
        fn = np.argmax if opcode == "ARG_MAX" else np.argmin
        self.values[t] = fn(self.values[x], axis=a).astype(np.float32)
        self._op(opcode, [x, ax], [t], {"output_type": 2})
        return t

    def gather(self, x, indices, axis=1) -> int:
        """GATHER of constant int32 indices along axis (not the batch axis); the output keeps x's quantisation."""
        name = self._name("gather")
        idx = np.asarray(indices, np.int32)
        shape = self.shape(x)
        a = axis % len(shape)
        it = self.const(f"{name}/indices", idx, "int32")
        out = self._same_quant_out("gather", x, np.take(self.values[x], idx, axis=a),
                                   shape[:a] + idx.shape + shape[a + 1:])
        self._op("GATHER", [x, it], [out], {"axis": axis, "batch_dims": 0})
        return out

    def fill(self, shape, value, *, out_quant=None) -> int:
        """FILL of shape (constant dims) with the computed int8 scalar tensor value; the output takes value's
        quantisation unless out_quant (TFLM copies the raw code)."""
        name = self._name("fill")
        shape = tuple(int(d) for d in shape)
        dt = self.const(f"{name}/dims", np.array(shape, np.int32), "int32")
        s, zp = self.quant_of(value)
        code = np.round(np.asarray(self.values[value], np.float32).reshape(-1)[:1] / s) + zp
        s, zp = out_quant if out_quant is not None else (s, zp)
        real = (code - zp) * np.float32(s)
        out = self._act_out(name, np.full((self.batch,) + shape[1:], real[0], np.float32), "NONE", (s, zp), shape)
        self._op("FILL", [dt, value], [out])
        return out

    def gather_computed(self, x, it, axis=1) -> int:
        """GATHER along axis by the computed int32 indices tensor it; the output keeps x's quantisation (its
        values only calibrate what follows)."""
        shape = self.shape(x)
        a = axis % len(shape)
        oshape = shape[:a] + self.shape(it) + shape[a + 1:]
        v = self.values[x]
        out = self._same_quant_out("gather", x, np.resize(v, (v.shape[0],) + oshape[1:]), oshape)
        self._op("GATHER", [x, it], [out], {"axis": axis, "batch_dims": 0})
        return out

    def space_to_batch(self, x, block, paddings) -> int:
        """SPACE_TO_BATCH_ND of a [1,H,W,C] (or [1,H,C]) input; the padding is the output zero point (x's)."""
        name = self._name("space_to_batch")
        shape, sp = self.shape(x), len(block)
        pads = np.asarray(paddings, np.int32).reshape(sp, 2)
        sizes = [shape[1 + k] + int(pads[k].sum()) for k in range(sp)]
        out_shape = (shape[0] * int(np.prod(block)), *[n // b for n, b in zip(sizes, block)], shape[-1])
        bt = self.const(f"{name}/block", np.array(block, np.int32), "int32")
        pt = self.const(f"{name}/paddings", pads, "int32")
        v = self.values[x]
        out = self._same_quant_out("space_to_batch", x, np.resize(v, (v.shape[0],) + out_shape[1:]), out_shape)
        self._op("SPACE_TO_BATCH_ND", [x, bt, pt], [out])
        return out

    def batch_to_space(self, x, block, crops) -> int:
        """BATCH_TO_SPACE_ND (the inverse of space_to_batch); the output keeps x's quantisation."""
        name = self._name("batch_to_space")
        shape, sp = self.shape(x), len(block)
        cr = np.asarray(crops, np.int32).reshape(sp, 2)
        out_shape = (shape[0] // int(np.prod(block)), *[shape[1 + k] * block[k] - int(cr[k].sum()) for k in range(sp)],
                     shape[-1])
        bt = self.const(f"{name}/block", np.array(block, np.int32), "int32")
        ct = self.const(f"{name}/crops", cr, "int32")
        v = self.values[x]
        out = self._same_quant_out("batch_to_space", x, np.resize(v, (v.shape[0],) + out_shape[1:]), out_shape)
        self._op("BATCH_TO_SPACE_ND", [x, bt, ct], [out])
        return out

    def mirror_pad(self, x, paddings, mode="REFLECT") -> int:
        name = self._name("mirror_pad")
        p = np.asarray(paddings, np.int32).reshape(-1, 2)
        pt = self.const(f"{name}/paddings", p, "int32")
        y = np.pad(self.values[x], [(0, 0)] + [tuple(r) for r in p[1:]], mode=mode.lower())
        shape = tuple(int(n + p[d].sum()) for d, n in enumerate(self.shape(x)))
        out = self._same_quant_out("mirror_pad", x, y, shape)
        self._op("MIRROR_PAD", [x, pt], [out], {"mode": 0 if mode == "REFLECT" else 1})
        return out

    def reverse(self, x, axes) -> int:
        """REVERSE_V2 over the given axes; the output keeps x's quantisation."""
        name = self._name("reverse")
        at = self.const(f"{name}/axis", np.array(axes, np.int32), "int32")
        rank = len(self.shape(x))
        out = self._same_quant_out("reverse", x, np.flip(self.values[x], axis=tuple(a % rank for a in axes)),
                                   self.shape(x))
        self._op("REVERSE_V2", [x, at], [out])
        return out

    def broadcast_to(self, x, shape) -> int:
        """BROADCAST_TO a shape (batch 1); the output keeps x's quantisation."""
        name = self._name("broadcast_to")
        shape = tuple(int(d) for d in shape)
        st = self.const(f"{name}/shape", np.array(shape, np.int32), "int32")
        v = self.values[x]
        v = v.reshape((v.shape[0],) + (1,) * (len(shape) - v.ndim) + v.shape[1:])
        out = self._same_quant_out("broadcast_to", x, np.broadcast_to(v, (v.shape[0],) + shape[1:]), shape)
        self._op("BROADCAST_TO", [x, st], [out])
        return out

    def batch_matmul(self, a, b, adj_x=False, adj_y=False, *, out_quant=None) -> int:
        """BATCH_MATMUL of a (activation) and b (activation or quantised constant); batch dimensions broadcast."""
        va = self.values[a]
        vb = self.values[b] if b in self.values else self._dequant(b)  # activations: calibration batch first
        if adj_x:
            va = np.swapaxes(va, -1, -2)
        if adj_y:
            vb = np.swapaxes(vb, -1, -2)
        la, lb = self.shape(a), self.shape(b)
        rank = max(len(la), len(lb))
        la, lb = (1,) * (rank - len(la)) + la, (1,) * (rank - len(lb)) + lb
        m = la[-1] if adj_x else la[-2]
        n = lb[-2] if adj_y else lb[-1]
        shape = tuple(np.broadcast_shapes(la[:-2], lb[:-2])) + (m, n)
        v = np.matmul(va, vb)
        out = self._act_out(self._name("batch_matmul"), v, "NONE", out_quant, shape)
        self._op("BATCH_MATMUL", [a, b], [out], {"adj_x": adj_x, "adj_y": adj_y,
                                                 "asymmetric_quantize_inputs": False})
        return out

    def elu(self, x, *, out_quant=None) -> int:
        v = self.values[x]
        y = np.where(v < 0, np.expm1(np.minimum(v, 0)), v)
        out = self._act_out(self._name("elu"), y, "NONE", out_quant, self.shape(x))
        self._op("ELU", [x], [out])
        return out

    def l2_normalization(self, x) -> int:
        """L2_NORMALIZATION over the last axis: TFLM writes codes of scale 1/128, zero point 0."""
        v = self.values[x]
        y = v / np.maximum(np.sqrt(np.sum(v * v, axis=-1, keepdims=True)), 1e-6)
        out = self._act_out(self._name("l2_norm"), y, "NONE", (1.0 / 128, 0), self.shape(x))
        self._op("L2_NORMALIZATION", [x], [out], {"activation": "NONE"})
        return out

    def shape_of(self, x) -> int:
        """SHAPE: x's dimensions as an int32 tensor."""
        t = self._tensor(f"{self._name('shape')}/out", (len(self.shape(x)),), "int32")
        self.values[t] = np.broadcast_to(np.array(self.shape(x), np.float32), (self.batch, len(self.shape(x))))
        self._op("SHAPE", [x], [t], {"out_type": 2})
        return t

    def gather_nd(self, x, indices) -> int:
        """GATHER_ND of constant int32 indices [..., n]."""
        name = self._name("gather_nd")
        idx = np.asarray(indices, np.int32)
        n = idx.shape[-1]
        it = self.const(f"{name}/indices", idx, "int32")
        shape = tuple(idx.shape[:-1]) + self.shape(x)[n:]
        v = self.values[x]  # the output keeps x's quantisation: its values only calibrate what follows
        out = self._same_quant_out("gather_nd", x, np.resize(v, (v.shape[0],) + shape[1:]), shape)
        self._op("GATHER_ND", [x, it], [out])
        return out

    def gather_nd_computed(self, x, it) -> int:
        """GATHER_ND by the computed int32 indices tensor it [..., n]; the output keeps x's quantisation."""
        ishape = self.shape(it)
        shape = tuple(ishape[:-1]) + self.shape(x)[ishape[-1]:]
        v = self.values[x]
        out = self._same_quant_out("gather_nd", x, np.resize(v, (v.shape[0],) + shape[1:]), shape)
        self._op("GATHER_ND", [x, it], [out])
        return out

    def cumsum(self, x, axis=-1, exclusive=False, reverse=False, *, out_quant=None) -> int:
        """CUMSUM along axis (not the batch axis)."""
        name = self._name("cumsum")
        a = axis % len(self.shape(x))
        at = self.const(f"{name}/axis", np.array([axis], np.int32), "int32")
        v = self.values[x]
        v = np.flip(v, a) if reverse else v
        c = np.cumsum(v, axis=a)
        if exclusive:
            c = c - v
        c = np.flip(c, a) if reverse else c
        out = self._act_out(name, c, "NONE", out_quant, self.shape(x))
        self._op("CUMSUM", [x, at], [out], {"exclusive": exclusive, "reverse": reverse})
        return out

    def embedding_lookup(self, ids, table, scale: float, zp: int = 0) -> int:
        """EMBEDDING_LOOKUP of int32 ids (an activation) in a constant int8 table (codes, its quantisation kept by
        the output: TFLM copies rows)."""
        name = self._name("embedding_lookup")
        table = np.asarray(table, np.int8)
        tt = self.const(f"{name}/table", table, "int8", _quant(scale, zp))
        v = (table.astype(np.float32) - zp) * np.float32(scale)
        vals = np.resize(v, (self.batch,) + table.shape[1:])  # calibration batch first, as every tensor's values
        out = self._act_out(name, vals, "NONE", (scale, zp), (self.shape(ids)[0],) + table.shape[1:])
        self._op("EMBEDDING_LOOKUP", [ids, tt], [out])
        return out

    def cast(self, x, dtype: str = "int32") -> int:
        """CAST of an int8/int16/int32/float32/bool tensor to int8/int16/int32 (raw values, refops.cast); an
        int8/int16 output gets scale 1, zero point 0, so its real values are the codes."""
        t = self._tensor(f"{self._name('cast')}/out", self.shape(x), dtype,
                         _quant(1.0, 0) if dtype in ("int8", "int16") else None)
        src = self.tensors[x].dtype
        v = self.values[x]
        if src in ("int8", "int16"):
            s, zp = self.quant_of(x)
            v = np.round(v / s) + zp
        self.values[t] = cast_values(np.asarray(v, np.float32 if src == "float32" else np.int64),
                                     NUMPY_DTYPE[dtype]).astype(np.float32)
        self._op("CAST", [x], [t], {"in_data_type": CAST_TYPE_CODES[src], "out_data_type": CAST_TYPE_CODES[dtype]})
        return t

    def log_softmax(self, x) -> int:
        """LOG_SOFTMAX over the last axis; TFLM requires the output on (16/256, 127)."""
        v = self.values[x]
        m = v.max(axis=-1, keepdims=True)
        y = v - m - np.log(np.sum(np.exp(v - m), axis=-1, keepdims=True))
        out = self._act_out(self._name("log_softmax"), y, "NONE", (16.0 / 256, 127), self.shape(x))
        self._op("LOG_SOFTMAX", [x], [out])
        return out

    def div(self, a, b, activation="NONE", *, out_quant=None) -> int:
        """DIV a / b, broadcast; either operand may be a quantised constant. Calibrated on the quotients between
        their 2nd and 98th percentiles (a divisor near 0 makes the rest)."""
        va, vb = (self.values[i] if i in self.values else self._dequant(i) for i in (a, b))
        y = va / np.where(np.abs(vb) < 1e-3, np.where(vb < 0, -1e-3, 1e-3), vb)
        y = np.clip(y, *np.percentile(y, [2, 98]))
        shape = tuple(np.broadcast_shapes(self.shape(a), self.shape(b)))
        out = self._act_out(self._name("div"), y, activation, out_quant, shape)
        self._op("DIV", [a, b], [out], {"activation": activation})
        return out

    def neg(self, x) -> int:
        """NEG on a float32 tensor (TFLite Micro has no int8/int16 NEG): put it between dequantize and quantize."""
        out = self._tensor(f"{self._name('neg')}/out", self.shape(x), "float32")
        self.values[out] = -self.values[x]
        self._op("NEG", [x], [out])
        return out

    def gelu(self, x, approximate=False, *, out_quant=None) -> int:
        """GELU (the erf form, or the tanh form when approximate), as TensorFlow writes Dense(activation='gelu')."""
        v = self.values[x].astype(np.float64)
        if approximate:
            y = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
        else:
            y = 0.5 * v * np.array([math.erfc(-t / math.sqrt(2)) for t in v.reshape(-1)]).reshape(v.shape)
        out = self._act_out(self._name("gelu"), y, "NONE", out_quant, self.shape(x))
        self._op("GELU", [x], [out], {"approximate": bool(approximate)})
        return out

    def relu6(self, x) -> int:
        """RELU6: TFLM clamps the input codes, so the output keeps the input's quantisation."""
        out = self._same_quant_out("relu6", x, np.clip(self.values[x], 0, 6), self.shape(x))
        self._op("RELU6", [x], [out])
        return out

    def tanh(self, x) -> int:
        out = self._act_out(self._name("tanh"), np.tanh(self.values[x]), "NONE", _FIXED_TANH, self.shape(x))
        self._op("TANH", [x], [out])
        return out

    def prelu(self, x, alpha_shape=None, *, out_quant=None, seed=None) -> int:
        """PRELU with random alphas in [-0.5, 1] (shape default [1, 1, C]), int8 per-tensor asymmetric."""
        name = self._name("prelu")
        shape = tuple(alpha_shape) if alpha_shape is not None else (1, 1, self.shape(x)[-1])
        alpha = self._rng(seed).uniform(-0.5, 1.0, size=shape).astype(np.float32)
        s, zp = range_quant(alpha.min(), alpha.max())
        aq = np.clip(np.round(alpha / s) + zp, -128, 127).astype(np.int8)
        ta = self.const(f"{name}/alpha", aq, "int8", _quant(s, zp))
        v = self.values[x]
        y = np.where(v >= 0, v, v * ((aq.astype(np.float32) - zp) * np.float32(s)))
        out = self._act_out(name, y, "NONE", out_quant, self.shape(x))
        self._op("PRELU", [x, ta], [out])
        return out

    def _minmax(self, opcode, a, b, out_quant):
        """MAXIMUM / MINIMUM: TFLM compares raw codes, so both inputs are first requantised (QUANTIZE)
        to the output's quantisation (default: the first input's)."""
        q = tuple(out_quant) if out_quant is not None else self.quant_of(a)
        q = (float(np.float32(q[0])), int(q[1]))
        a, b = (t if self.quant_of(t) == q else self.quantize(t, *q) for t in (a, b))
        y = (np.maximum if opcode == "MAXIMUM" else np.minimum)(self.values[a], self.values[b])
        shape = tuple(np.broadcast_shapes(self.shape(a), self.shape(b)))
        out = self._act_out(self._name(opcode.lower()), y, "NONE", q, shape)
        self._op(opcode, [a, b], [out])
        return out

    def maximum(self, a, b, *, out_quant=None) -> int:
        return self._minmax("MAXIMUM", a, b, out_quant)

    def minimum(self, a, b, *, out_quant=None) -> int:
        return self._minmax("MINIMUM", a, b, out_quant)

    def transpose(self, x, perm) -> int:
        name = self._name("transpose")
        perm = tuple(int(p) for p in perm)
        shape = tuple(self.shape(x)[p] for p in perm)
        pt = self.const(f"{name}/perm", np.array(perm, np.int32), "int32")
        out = self._same_quant_out("transpose", x, self._per_sample(x, lambda v: np.transpose(v, perm), shape), shape)
        self._op("TRANSPOSE", [x, pt], [out])
        return out

    def _space_depth(self, opcode, x, block) -> int:
        view, perm = block_view(opcode, self.shape(x), int(block))
        if opcode == "DEPTH_TO_SPACE":
            shape = (1, self.shape(x)[1] * block, self.shape(x)[2] * block, self.shape(x)[3] // (block * block))
        else:
            shape = (1, self.shape(x)[1] // block, self.shape(x)[2] // block, self.shape(x)[3] * block * block)
        y = self._per_sample(x, lambda v: np.transpose(v.reshape(view), perm), shape)
        out = self._same_quant_out(opcode.lower(), x, y, shape)
        self._op(opcode, [x], [out], {"block_size": int(block)})
        return out

    def depth_to_space(self, x, block) -> int:
        return self._space_depth("DEPTH_TO_SPACE", x, block)

    def space_to_depth(self, x, block) -> int:
        return self._space_depth("SPACE_TO_DEPTH", x, block)

    def squeeze(self, x, dims=()) -> int:
        """SQUEEZE the given dimensions (all size-1 dimensions when dims is empty)."""
        s = self.shape(x)
        drop = {d % len(s) for d in dims} if dims else {d for d, n in enumerate(s) if n == 1}
        shape = tuple(n for d, n in enumerate(s) if d not in drop)
        out = self._same_quant_out("squeeze", x, self._per_sample(x, lambda v: v.reshape(shape), shape), shape)
        self._op("SQUEEZE", [x], [out], {"squeeze_dims": tuple(int(d) for d in dims)})
        return out

    def expand_dims(self, x, axis) -> int:
        name = self._name("expand_dims")
        s = self.shape(x)
        a = int(axis) % (len(s) + 1)
        shape = s[:a] + (1,) + s[a:]
        at = self.const(f"{name}/axis", np.array([axis], np.int32), "int32")
        out = self._same_quant_out("expand_dims", x, self._per_sample(x, lambda v: v.reshape(shape), shape), shape)
        self._op("EXPAND_DIMS", [x, at], [out])
        return out

    def _resize(self, opcode, x, size, align_corners, half_pixel_centers) -> int:
        name = self._name(opcode.lower())
        _, h, w, c = self.shape(x)
        oh, ow = (int(v) for v in size)
        st = self.const(f"{name}/size", np.array([oh, ow], np.int32), "int32")
        v = self.values[x]
        if opcode == "RESIZE_NEAREST_NEIGHBOR":
            y = v[:, nearest_indices(h, oh, align_corners, half_pixel_centers)]
            y = y[:, :, nearest_indices(w, ow, align_corners, half_pixel_centers)]
        else:
            vy, y0, y1 = bilinear_taps(h, oh, align_corners, half_pixel_centers)
            vx, x0, x1 = bilinear_taps(w, ow, align_corners, half_pixel_centers)
            y0, x0 = np.minimum(y0, h - 1), np.minimum(x0, w - 1)  # past the input: finish() says so
            fy = ((vy - (y0 << 10)) / 1024.0)[None, :, None, None].astype(np.float32)
            fx = ((vx - (x0 << 10)) / 1024.0)[None, None, :, None].astype(np.float32)
            top = v[:, y0][:, :, x0] * (1 - fx) + v[:, y0][:, :, x1] * fx
            bot = v[:, y1][:, :, x0] * (1 - fx) + v[:, y1][:, :, x1] * fx
            y = top * (1 - fy) + bot * fy
        out = self._same_quant_out(opcode.lower(), x, y, (1, oh, ow, c))
        self._op(opcode, [x, st], [out], {"align_corners": bool(align_corners),
                                          "half_pixel_centers": bool(half_pixel_centers)})
        return out

    def resize_nearest(self, x, size, align_corners=False, half_pixel_centers=False) -> int:
        return self._resize("RESIZE_NEAREST_NEIGHBOR", x, size, align_corners, half_pixel_centers)

    def resize_bilinear(self, x, size, align_corners=False, half_pixel_centers=False) -> int:
        return self._resize("RESIZE_BILINEAR", x, size, align_corners, half_pixel_centers)

    # -- stateful operators ---------------------------------------------------
    def svdf(self, x, units, rank=1, memory=4, state_dtype="int8", *, out_quant=None, seed=None) -> int:
        """SVDF over a [1, n_in] input: units * rank filters, `memory` time steps of int8 (or int16)
        state in a variable tensor. Calibrated on one step from a reset state (only the newest
        memory slot holds a value); the output range is widened for the history a real run adds."""
        rng = self._rng(seed)
        n_in = self.shape(x)[-1]
        n_filter = units * rank
        name = self._name("svdf")
        wf = rng.normal(0, np.sqrt(1.0 / n_in), size=(n_filter, n_in)).astype(np.float32)
        wt = rng.normal(0, np.sqrt(1.0 / memory), size=(n_filter, memory)).astype(np.float32)
        wf_s = float(np.float32(np.abs(wf).max() / 127))
        wf_q = np.clip(np.round(wf / wf_s), -127, 127)
        feat = _mm(self.values[x].reshape(-1, n_in), (wf_q * wf_s).T)
        qmax = 127 if state_dtype == "int8" else 32767
        if state_dtype == "int8":
            st_s, st_zp = range_quant(1.2 * feat.min(), 1.2 * feat.max())
        else:
            st_s, st_zp = float(np.float32(1.2 * np.abs(feat).max() / qmax + 1e-9)), 0
        wt_s = float(np.float32(np.abs(wt).max() / qmax))
        wt_q = np.clip(np.round(wt / wt_s), -qmax, qmax)
        b_s = float(np.float32(np.float32(st_s) * np.float32(wt_s)))
        bias = rng.normal(0, 0.2, size=units).astype(np.float32)
        bias_q = np.round(bias / b_s).astype(np.int64)
        ifw = self.const(f"{name}/weights_feature", wf_q.astype(np.int8), "int8", _quant(wf_s, 0))
        itw = self.const(f"{name}/weights_time", wt_q.astype(NUMPY_DTYPE[state_dtype]), state_dtype,
                         _quant(wt_s, 0))
        ib = self.const(f"{name}/bias", bias_q.astype(np.int32), "int32", _quant(b_s, 0))
        ist = self._tensor(f"{name}/state", (1, n_filter * memory), state_dtype, _quant(st_s, st_zp))
        self.tensors[ist].variable = True
        sf = np.clip(np.round(feat / st_s) + st_zp, -qmax - 1, qmax)
        y = ((sf - st_zp) * st_s * (wt_q[:, -1] * wt_s)).reshape(-1, units, rank).sum(axis=2) + bias_q * b_s
        if out_quant is None:
            spread = float(np.sqrt(memory))
            out_quant = range_quant(spread * y.min(), spread * y.max())
        out = self._act_out(name, y, "NONE", out_quant, (1, units))
        self._op("SVDF", [x, ifw, itw, ib, ist], [out], {"rank": rank, "activation": "NONE"})
        return out

    def lstm(self, x, units, *, time_major=False, cell_clip=0.0, cell_scale_power=-11, seed=None) -> int:
        """UNIDIRECTIONAL_SEQUENCE_LSTM over x [batch, time, in] ([time, batch, in] when time_major):
        four gates with per-tensor int8 weights, int32 biases, an int8 hidden state on (1/128, 0) (also
        the output's quantisation) and an int16 cell state on 2^cell_scale_power, both variable."""
        rng = self._rng(seed)
        shape = self.shape(x)
        n_in = shape[2]
        batch = shape[1] if time_major else shape[0]
        name = self._name("lstm")
        xs = float(self.tensors[x].scale)
        hq = (1.0 / 128, 0)
        ins = [x] + [-1] * 23
        w_f = {}
        for k, (rows, cols) in ((1, (units, n_in)), (5, (units, units))):
            for gate in range(4):
                w = rng.normal(0, np.sqrt(1.0 / cols), size=(rows, cols)).astype(np.float32)
                ws = float(np.float32(np.abs(w).max() / 127))
                wq = np.clip(np.round(w / ws), -127, 127)
                w_f[(k, gate)] = wq * ws
                ins[k + gate] = self.const(f"{name}/w{k + gate}", wq.astype(np.int8), "int8", _quant(ws, 0))
        for gate in range(4):
            ws = float(self.tensors[ins[1 + gate]].scale)
            bs = float(np.float32(np.float32(xs) * np.float32(ws)))
            bias = rng.normal(1.0 if gate == 1 else 0.0, 0.3, size=units).astype(np.float32)
            ins[12 + gate] = self.const(f"{name}/b{gate}", np.round(bias / bs).astype(np.int32), "int32",
                                        _quant(bs, 0))
        ih = self._tensor(f"{name}/hidden_state", (batch, units), "int8", _quant(*hq))
        ic = self._tensor(f"{name}/cell_state", (batch, units), "int16", _quant(2.0 ** cell_scale_power, 0))
        self.tensors[ih].variable = self.tensors[ic].variable = True
        ins[18], ins[19] = ih, ic
        # calibration: a float LSTM over the batch-major calibration samples (time-major: zeros)
        v = self.values[x]
        out_v = np.zeros(v.shape[:2] + (units,), np.float32)
        if not time_major:
            sig = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
            h = np.zeros((v.shape[0], units), np.float32)
            c = np.zeros_like(h)
            for t in range(v.shape[1]):
                pre = [_mm(v[:, t], w_f[(1, k)].T) + _mm(h, w_f[(5, k)].T) for k in range(4)]
                c = sig(pre[1]) * c + sig(pre[0]) * np.tanh(pre[2])
                if cell_clip > 0:
                    c = np.clip(c, -cell_clip, cell_clip)
                h = sig(pre[3]) * np.tanh(c)
                out_v[:, t] = h
        out = self._act_out(name, out_v, "NONE", hq, shape[:2] + (units,))
        self._op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [out], {"lstm_activation": "TANH", "cell_clip": float(cell_clip),
                                                            "proj_clip": 0.0, "time_major": bool(time_major)})
        return out

    # -- result ---------------------------------------------------------------
    def delay(self, x, init=None) -> int:
        """A one-step delay line in a resource variable: the value x had at the previous invocation (at the
        first, the variable's start value: init's int8 codes, default x's zero point). READ_VARIABLE, then
        ASSIGN_VARIABLE of x; calibrated as x (a steady input)."""
        t = self.tensors[x]
        name = self._name("delay")
        v = self._tensor(f"{name}/var", t.shape, t.dtype, t.quant)
        self.tensors[v].variable = True
        start = np.full(t.shape, t.zero_point) if init is None else np.asarray(init).reshape(t.shape)
        self.tensors[v].init = start.astype(NUMPY_DTYPE[t.dtype])
        y = self._tensor(f"{name}/read", t.shape, t.dtype, t.quant)
        self.values[y] = self.values[x]
        self._op("READ_VARIABLE", [v], [y])
        self._op("ASSIGN_VARIABLE", [v, x], [])
        return y

    def finish_int16(self, outputs=None, bias64: bool = True) -> Graph:
        """The graph as a 16x8 model: see as_int16x8."""
        return as_int16x8(self.finish(outputs), bias64)

    def finish(self, outputs=None) -> Graph:
        """The graph (outputs default to the last operator's outputs), validated and op-checked."""
        if outputs is None:
            outputs = list(self.operators[-1].outputs)
        elif np.isscalar(outputs):
            outputs = [outputs]
        g = Graph(list(self.tensors), list(self.operators), list(self.inputs), [int(o) for o in outputs],
                  name=self.name, description=self.description)
        validate_graph(g)
        ops.check_graph(g)
        return g


def as_int16x8(g: Graph, bias64: bool = True) -> Graph:
    """The int8 graph g quantised 16x8 instead (TFLite's int16 activation mode): every int8 activation
    becomes int16 with zero point 0 over the same real range, weights stay int8, and the biases of
    convolutions and dense layers are requantised to the new input scale as int64 (int32 when
    bias64 is False). LOGISTIC, TANH and SOFTMAX outputs get TFLM's fixed int16 scale 2^-15."""
    g = g.copy()
    new_scale = {}
    for t in g.tensors:
        if t.is_const or t.dtype != "int8" or t.quant is None:
            continue
        s, zp = float(t.scale), int(t.zero_point)
        lim = max(abs(-128 - zp), abs(127 - zp)) * s
        t.dtype, t.quant = "int16", _quant(np.float32(max(lim, 1e-2) / 32767.0), 0)
        new_scale[t.index] = float(t.quant.scale[0])
        if t.init is not None:  # a resource variable's start value: the same reals
            t.init = np.clip(np.round((t.init.astype(np.float64) - zp) * s / new_scale[t.index]), -32768,
                             32767).astype(np.int16)
    for op in g.operators:
        if op.opcode in ("LOGISTIC", "TANH", "SOFTMAX") and g.tensors[op.outputs[0]].dtype == "int16":
            g.tensors[op.outputs[0]].quant = _quant(np.float32(2.0 ** -15), 0)
    for op in g.operators:  # PADV2's constant value: the same real value on its output's new quantisation
        if op.opcode == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0 and g.tensors[op.inputs[2]].dtype == "int8":
            c, to = g.tensors[op.inputs[2]], g.tensors[op.outputs[0]]
            real = (c.data.astype(np.float64) - int(c.zero_point)) * float(c.scale)
            c.dtype, c.quant = to.dtype, _quant(np.float32(to.scale), int(to.zero_point))
            c.data = np.clip(np.round(real / float(to.scale)), -32768, 32767).astype(np.int16).reshape(c.shape)
    for op in g.operators:
        pos = {"CONV_2D": 2, "DEPTHWISE_CONV_2D": 2, "FULLY_CONNECTED": 2, "TRANSPOSE_CONV": 3}.get(op.opcode)
        if pos is None or len(op.inputs) <= pos or op.inputs[pos] < 0:
            continue
        x = op.inputs[2 if op.opcode == "TRANSPOSE_CONV" else 0]
        b, w = g.tensors[op.inputs[pos]], g.tensors[op.inputs[1]]
        bscale = (np.float64(new_scale[x]) * w.quant.scale.astype(np.float64)).astype(np.float32)
        real = b.data.astype(np.float64) * b.quant.scale.astype(np.float64)
        lim = (1 << 31) - 1 if not bias64 else (1 << 40)
        q = np.clip(np.round(real / bscale), -lim, lim)
        b.dtype = "int64" if bias64 else "int32"
        b.data = q.astype(NUMPY_DTYPE[b.dtype]).reshape(b.shape)
        b.quant = _quant(bscale, np.zeros(len(bscale)))
    validate_graph(g)
    ops.check_graph(g)
    return g
