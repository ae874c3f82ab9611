"""GELU int8 (TensorFlow Lite's activations.cc GeluPrepare / GeluEval: a 256-entry lookup table).

The tflite-micro package's interpreter does not register GELU, so the oracle of this one operator is TensorFlow
Lite's reference kernel (tf.lite.Interpreter with OpResolverType.BUILTIN_REF), not TFLite Micro.

TFLite's LUTPopulate, in float32 for each input code c: d = input scale * (c - input zero point); t = f(d);
out = clamp(int(round_half_away(t * (1 / output scale)) + output zero point), -128, 127), where f is
reference_ops::GeluTransform (approximate false: 0.5 * d * erfc(d * -1/sqrt(2)), erfc not erf, so large negative
inputs do not cancel) or GeluTransformApproximate (approximate true: 0.5 * d * (1 + tanh(sqrt(2/pi) * (d + 0.044715
* d * d * d)))), every product and sum a float32 operation in that order. erfc and tanh are float32's correctly
rounded values (the double function rounded to float32, as ELU's exp here); TFLite takes its host's libm erfcf /
tanhf, within an ulp or two of those, which can move an entry only when t / output scale lies within an ulp of a
rounding boundary. The table is made at code generation; the C is bt_lut_s8 (a lookup), as ELU and RSQRT.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .quant_math import round_half_away

_F = np.float32
_SQRT1_2 = _F(-0.70710678118654752440)  # static_cast<float>(-M_SQRT1_2)
_SQRT_2_OVER_PI = _F(1.12837916709551257390 * 0.70710678118654752440)  # float(M_2_SQRTPI * M_SQRT1_2)
_HALF, _ONE, _CUBIC = _F(0.5), _F(1.0), _F(0.044715)


def gelu_f32(d: np.float32, approximate: bool) -> np.float32:
    """TFLite's GeluTransform(Approximate) on one float32 value, float32 arithmetic step by step."""
    d = _F(d)
    if approximate:
        inner = _F(d + _F(_F(_F(_CUBIC * d) * d) * d))
        th = _F(math.tanh(float(_F(_SQRT_2_OVER_PI * inner))))
        return _F(_F(_HALF * d) * _F(_ONE + th))
    return _F(_F(_HALF * d) * _F(math.erfc(float(_F(d * _SQRT1_2)))))


@functools.lru_cache(maxsize=256)
def _gelu_table(scale: float, zp: int, out_scale: float, out_zp: int, approximate: bool) -> tuple:
    s, inv = _F(scale), _F(1) / _F(out_scale)
    out = []
    for code in range(-128, 128):
        t = gelu_f32(_F(s * _F(code - zp)), approximate)
        r = float(round_half_away(_F(t * inv)))
        out.append(int(np.clip(int(_F(_F(r) + _F(out_zp))), -128, 127)))
    return tuple(out)


def gelu_table(g, op) -> np.ndarray:
    """int8 GELU's result for each input code -128..127 (index code + 128)."""
    ti, to = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
    return np.array(_gelu_table(float(_F(ti.scale)), ti.zero_point, float(_F(to.scale)), to.zero_point,
                                bool(op.options.get("approximate", False))), np.int8)


def gelu(g, op, ins, outs) -> None:
    outs[0][...] = gelu_table(g, op)[ins[0].astype(np.int64) + 128].reshape(outs[0].shape)
