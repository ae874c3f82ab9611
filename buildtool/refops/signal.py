"""TFLite Micro's signal library (signal/src, signal/micro/kernels) in numpy, bit-exact.

WINDOW: (x * w) >> shift, saturated to int16, window by window over the flattened input.
RFFT (int16): kiss_fft's fixed-point real FFT (FIXED_POINT 16, as TFLite Micro builds kissfft): the frame
  zero-padded to fft_length, packed as fft_length/2 complex values, an fft_length/2-point complex FFT in radix-4
  stages and a last radix-2 one (every stage divides by its radix with rounding: C_FIXDIV), then kiss_fftr's
  split into fft_length/2 + 1 bins. Q15 twiddles floor(0.5 + 32767 cos/sin(phase)) in double (fft_twiddles,
  shared with code generation); every complex sum is stored to int16 (wraps as two's complement).
ENERGY: re^2 + im^2 as uint32 in [start_index, end_index); TFLite Micro leaves the other outputs unwritten,
  here and in C they are 0.
FILTER_BANK: num_channels + 1 channels of weighted sums (uint64, wrapping), each channel's unweighted sum
  carried into the next; channel 0 is scratch and dropped.
FILTER_BANK_SQUARE_ROOT: Sqrt64 (bit-by-bit, rounded; Sqrt32 when the high word is 0) >> scale_bits (a constant
  or computed scalar; outside 0..31, undefined in TFLite Micro's C, the result is 0 here).
FILTER_BANK_LOG: Log32 of (x << input_correction_bits) (log2 by a 129-entry segment table, to ln and the
  output scale with rounding), at most 32767; 0 for values 0 and 1.
PCAN: gain = WideDynamicFunction(noise_estimate) (piecewise quadratic from gain_lut), snr = (x * gain) >>
  snr_shift, out = PcanShrink(snr) (x^2/4 below 2, x - 1 above, 12 -> 6 fractional bits).
FILTER_BANK_SPECTRAL_SUBTRACTION: per channel (odd channels with the alternate coefficients) the noise estimate
  ((x << smoothing_bits) * smoothing + estimate * one_minus_smoothing) >> spectral_subtraction_bits (uint64,
  kept as uint32), at most the scaled signal (stored so when clamping), out = max(((x << smoothing_bits) -
  estimate) >> smoothing_bits, (x * min_signal_remaining) >> spectral_subtraction_bits). The estimate is the
  operator's state: output 1, a persistent tensor reset to 0 at start-up (model/signal.py STATE_OUTPUT).
DELAY, OVERLAP_ADD (int16), STACKER, FRAMER: TFLite Micro's circular buffers, here a hidden variable int16 input
  (model/signal.py STATE_INPUT) whose all-zero value is TFLite Micro's reset state; where TFLite Micro leaves an
  output unwritten (no full frame or stack yet: output_valid false) it is 0 here.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.signal import fft_factors, framer_capacity

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def window(g, op, ins, outs) -> None:
    w = g.tensors[op.inputs[1]].data.astype(np.int64)
    x = ins[0].reshape(-1, len(w)).astype(np.int64)
    outs[0][...] = np.clip((x * w) >> op.options["shift"], -32768, 32767).astype(np.int16).reshape(outs[0].shape)


# -- RFFT ---------------------------------------------------------------------------------------------------
def fft_twiddles(fft_length: int, inverse: bool = False) -> tuple:
    """(twiddles, super_twiddles) of kiss_fftr_alloc(fft_length, inverse): int16 (n, 2) arrays of Q15 (cos, sin)
    (the inverse's phases negated, as kiss_fft does)."""
    n = fft_length // 2
    pi = 3.141592653589793238462643383279502884197169399375105820974944
    sign = -1 if inverse else 1

    def q15(phase):
        phase = phase * sign
        return (math.floor(0.5 + 32767 * math.cos(phase)), math.floor(0.5 + 32767 * math.sin(phase)))

    tw = [q15(-2 * pi * i / n) for i in range(n)]
    sup = [q15(-3.14159265358979323846264338327 * ((i + 1) / n + 0.5)) for i in range(n // 2)]
    return np.array(tw, np.int16).reshape(-1, 2), np.array(sup, np.int16).reshape(-1, 2)


def _s16(x):
    return ((x + 32768) & 0xFFFF) - 32768


def _sround(x):
    """kiss_fft's sround: ((int32)x + 2^14) >> 15, stored to int16."""
    x = ((x + (1 << 14) + (1 << 31)) & M32) - (1 << 31)
    return _s16(x >> 15)


def _fixdiv(c, k: int):
    return _sround(c[0] * (32767 // k)), _sround(c[1] * (32767 // k))


def _cmul(a, b):
    return _sround(a[0] * b[0] - a[1] * b[1]), _sround(a[0] * b[1] + a[1] * b[0])


def _cadd(a, b):
    return _s16(a[0] + b[0]), _s16(a[1] + b[1])


def _csub(a, b):
    return _s16(a[0] - b[0]), _s16(a[1] - b[1])


def _kf_work(F, src, out: int, f: int, fstride: int, factors: list, tw, inverse: bool = False) -> None:
    """kiss_fft's kf_work on F (2, n) int64: sub-FFTs into F[out:out + p*m], then the radix-p butterflies."""
    p, m = factors[0], factors[1]
    if m == 1:
        idx = f + fstride * np.arange(p)
        F[:, out:out + p] = src[:, idx]
    else:
        for j in range(p):
            _kf_work(F, src, out + j * m, f + j * fstride, fstride * p, factors[2:], tw, inverse)
    k = np.arange(m)
    if p == 2:
        a, b = out + k, out + m + k
        fa, fb = _fixdiv(F[:, a], 2), _fixdiv(F[:, b], 2)
        t = _cmul(fb, tw[:, k * fstride])
        F[0, b], F[1, b] = _csub(fa, t)
        F[0, a], F[1, a] = _cadd(fa, t)
        return
    i0, i1, i2, i3 = (out + k + j * m for j in range(4))
    f0, f1, f2, f3 = (_fixdiv(F[:, i], 4) for i in (i0, i1, i2, i3))
    s0 = _cmul(f1, tw[:, k * fstride])
    s1 = _cmul(f2, tw[:, 2 * k * fstride])
    s2 = _cmul(f3, tw[:, 3 * k * fstride])
    s5 = _csub(f0, s1)
    f0 = _cadd(f0, s1)
    s3, s4 = _cadd(s0, s2), _csub(s0, s2)
    F[0, i2], F[1, i2] = _csub(f0, s3)
    F[0, i0], F[1, i0] = _cadd(f0, s3)
    if inverse:
        F[0, i1], F[1, i1] = _s16(s5[0] - s4[1]), _s16(s5[1] + s4[0])
        F[0, i3], F[1, i3] = _s16(s5[0] + s4[1]), _s16(s5[1] - s4[0])
    else:
        F[0, i1], F[1, i1] = _s16(s5[0] + s4[1]), _s16(s5[1] - s4[0])
        F[0, i3], F[1, i3] = _s16(s5[0] - s4[1]), _s16(s5[1] + s4[0])


def rfft_frame(frame: np.ndarray, fft_length: int, tables=None) -> np.ndarray:
    """kiss_fftr (FIXED_POINT 16) of one int16 frame zero-padded to fft_length: (fft_length/2 + 1) x 2 int16."""
    tw, sup = tables if tables is not None else fft_twiddles(fft_length)
    n = fft_length // 2
    x = np.zeros(fft_length, np.int64)
    x[:len(frame)] = frame
    src = x.reshape(n, 2).T.copy()
    F = np.zeros((2, n), np.int64)
    _kf_work(F, src, 0, 0, 1, fft_factors(n), tw.T.astype(np.int64))
    out = np.zeros((n + 1, 2), np.int64)
    dc = _fixdiv(F[:, 0], 2)
    out[0] = (_s16(dc[0] + dc[1]), 0)
    out[n] = (_s16(dc[0] - dc[1]), 0)
    k = np.arange(1, n // 2 + 1)
    fpk = _fixdiv(F[:, k], 2)
    fpnk = _fixdiv((F[0, n - k], _s16(-F[1, n - k])), 2)
    f1k, f2k = _cadd(fpk, fpnk), _csub(fpk, fpnk)
    t = _cmul(f2k, sup.T.astype(np.int64)[:, k - 1])
    out[k, 0], out[k, 1] = _s16((f1k[0] + t[0]) >> 1), _s16((f1k[1] + t[1]) >> 1)
    out[n - k, 0], out[n - k, 1] = _s16((f1k[0] - t[0]) >> 1), _s16((t[1] - f1k[1]) >> 1)
    return out.astype(np.int16)


def rfft(g, op, ins, outs) -> None:
    n = op.options["fft_length"]
    tables = fft_twiddles(n)
    x = ins[0].reshape(-1, ins[0].shape[-1])
    y = outs[0].reshape(-1, outs[0].shape[-1])
    for r in range(x.shape[0]):
        y[r] = rfft_frame(x[r], n, tables).reshape(-1)


# -- energies, filter bank ------------------------------------------------------------------------------------
def energy(g, op, ins, outs) -> None:
    c = ins[0].reshape(-1, 2).astype(np.int64)
    e = (c[:, 0] * c[:, 0] + c[:, 1] * c[:, 1]) & M32
    s, t = op.options["start_index"], op.options["end_index"]
    outs[0][...] = 0
    outs[0][s:t] = e[s:t].astype(np.uint32)


def filter_bank(g, op, ins, outs) -> None:
    x = ins[0].astype(np.uint64)
    w, u, fs, ws, widths = (g.tensors[i].data.astype(np.int64) for i in op.inputs[1:6])
    n = op.options["num_channels"]
    acc = [0] * (n + 1)
    carry = 0
    for c in range(n + 1):
        f0, w0, k = int(fs[c]), int(ws[c]), int(widths[c])
        xs = [int(v) for v in x[f0:f0 + k]] if k > 0 else []
        weighted = carry + sum((int(w[w0 + j]) & M64) * xs[j] for j in range(k))
        carry = sum((int(u[w0 + j]) & M64) * xs[j] for j in range(k)) & M64
        acc[c] = weighted & M64
    outs[0][...] = np.array(acc[1:], np.uint64)


def _msb(x: int) -> int:
    return x.bit_length() if x else 0


def _isqrt(num: int, bits: int) -> int:
    """TFLM's Sqrt32 (bits 32) / Sqrt64 (bits 64): digit by digit, rounded, saturated at 2^(bits/2) - 1."""
    if num == 0:
        return 0
    res = 0
    top = (bits - _msb(num)) | 1
    bit = 1 << (bits - 1 - top)
    for _ in range((bits - 1 - top) // 2 + 1):
        if num >= res + bit:
            num -= res + bit
            res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    cap = (1 << (bits // 2)) - 1
    if num > res and res != cap:
        res += 1
    return res & cap


def sqrt64(num: int) -> int:
    return _isqrt(num, 32 if num >> 32 == 0 else 64)


def filter_bank_square_root(g, op, ins, outs) -> None:
    """A computed shift outside 0..31 (undefined in TFLM's C) gives 0 here and in C."""
    s = int(np.asarray(ins[1]).reshape(-1)[0])
    outs[0][...] = np.array([sqrt64(int(v)) >> s if 0 <= s < 32 else 0 for v in ins[0]], np.uint32)


# -- log ----------------------------------------------------------------------------------------------------
LOG_LUT = (
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
    3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001,
    5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631,
    5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332,
    5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
    4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549,
    2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0)
LOG_COEFF = 45426  # ln(2) in Q16


def log32(x: int, out_scale: int) -> int:
    """TFLM's Log32: x > 1."""
    integer = _msb(x) - 1
    frac = x - (1 << integer)
    frac = frac << (16 - integer) if integer < 16 else frac >> (integer - 16)
    seg = frac >> 9
    c0, c1 = LOG_LUT[seg], LOG_LUT[seg + 1]
    rel = ((c1 - c0) * (frac - (seg << 9))) >> 16
    log2 = ((integer << 16) + frac + c0 + rel) & M32
    loge = ((LOG_COEFF * log2 + 32768) >> 16) & M32
    return ((out_scale * loge + 32768) & M32) >> 16


def filter_bank_log(g, op, ins, outs) -> None:
    bits, scale = op.options["input_correction_bits"], op.options["output_scale"]
    out = []
    for v in ins[0]:
        x = (int(v) << bits) & M32
        out.append(min(log32(x, scale), 32767) if x > 1 else 0)
    outs[0][...] = np.array(out, np.int16)


# -- PCAN ---------------------------------------------------------------------------------------------------
def _wrap32(x: int) -> int:
    return ((x + (1 << 31)) & M32) - (1 << 31)


def wide_dynamic(x: int, lut) -> int:
    if x <= 2:
        return int(lut[x])
    interval = _msb(x)
    base = 4 * interval - 6
    frac = ((x << (11 - interval)) if interval < 11 else (x >> (interval - 11))) & 0x3FF
    r = (int(lut[base + 2]) * frac) >> 5
    r = _wrap32(r + ((int(lut[base + 1]) << 5) & M32))
    r = _wrap32(r * frac)
    r = _wrap32(r + (1 << 14)) >> 15
    return _s16(r + int(lut[base]))


def pcan_shrink(x: int) -> int:
    if x < (2 << 12):
        return ((x * x) & M32) >> (2 + 2 * 12 - 6)
    return ((x >> 6) - (1 << 6)) & M32


def pcan(g, op, ins, outs) -> None:
    lut = g.tensors[op.inputs[2]].data
    shift = op.options["snr_shift"]
    out = []
    for x, ne in zip(ins[0], ins[1]):
        gain = wide_dynamic(int(ne), lut) & M32
        snr = ((int(x) * gain) >> shift) & M32
        out.append(pcan_shrink(snr))
    outs[0][...] = np.array(out, np.uint32)


# -- spectral subtraction (state: the noise estimate, output 1) -----------------------------------------------
def filter_bank_spectral_subtraction(g, op, ins, outs) -> None:
    """outs[1] holds the noise estimate of the last invocation (0 at start-up) and is updated in place."""
    o = {k: (int(v) & M32 if not isinstance(v, bool) else v) for k, v in op.options.items()}
    sb, ssb = o["smoothing_bits"], o["spectral_subtraction_bits"]
    x, ne = ins[0], outs[1]
    out = []
    for i in range(o["num_channels"]):
        sm, oms = ((o["smoothing"], o["one_minus_smoothing"]) if i % 2 == 0 else
                   (o["alternate_smoothing"], o["alternate_one_minus_smoothing"]))
        up = (int(x[i]) << sb) & M32
        est = (((up * sm + int(ne[i]) * oms) & M64) >> ssb) & M32
        ne[i] = est
        if est > up:
            est = up
            if o["clamping"]:
                ne[i] = est
        floor = ((int(x[i]) * o["min_signal_remaining"]) >> ssb) & M32
        out.append(max((up - est) >> sb, floor))
    outs[0][...] = np.array(out, np.uint32)


# -- framing, stacking, delay, overlap-add: the state is a hidden variable int16 input (ins[1]) ----------------
def delay(g, op, ins, outs) -> None:
    """Each row: (state ++ x)[:F] out, the last delay_length samples kept."""
    d = op.options["delay_length"]
    x = ins[0].reshape(-1, ins[0].shape[-1])
    y = outs[0].reshape(x.shape)
    st = ins[1]
    for r in range(x.shape[0]):
        stream = np.concatenate([st[r, :d], x[r]])
        y[r] = stream[:x.shape[1]]
        st[r, :d] = stream[x.shape[1]:]


def overlap_add(g, op, ins, outs) -> None:
    """Each frame added (saturated) to the row's accumulator; its first frame_step values out, the rest shifted."""
    step = op.options["frame_step"]
    nf, fs = ins[0].shape[-2], ins[0].shape[-1]
    x = ins[0].reshape(-1, nf, fs).astype(np.int32)
    y = outs[0].reshape(x.shape[0], nf * step)
    st = ins[1]
    for r in range(x.shape[0]):
        for f in range(nf):
            acc = np.clip(st[r].astype(np.int32) + x[r, f], -32768, 32767)
            y[r, f * step:(f + 1) * step] = acc[:step]
            st[r, :fs - step] = acc[step:]
            st[r, fs - step:] = 0


def stacker(g, op, ins, outs) -> None:
    """FIFO state[:B] with count state[B] and the first-frame flag state[B + 1]; out when B values are in
    (else output_valid false and the output 0: TFLite Micro leaves it unwritten)."""
    o = op.options
    c, left = o["num_channels"], o["stacker_left_context"]
    b = c * (left + o["stacker_right_context"] + 1)
    s = c * o["stacker_step"]
    st = ins[1]
    n = int(st[b])
    fifo = np.concatenate([st[:n], ins[0]])
    if not st[b + 1]:
        fifo = np.concatenate([fifo] + [ins[0]] * left)
        st[b + 1] = 1
    valid = len(fifo) >= b
    if valid:
        outs[0][...] = fifo[:b]
        fifo = fifo[s:]
    else:
        outs[0][...] = 0
    st[:len(fifo)] = fifo
    st[len(fifo):b] = 0
    st[b] = len(fifo)
    outs[1][...] = valid


def framer(g, op, ins, outs) -> None:
    """Each row's FIFO state[r, :cap] holds count = prefill + state[r, cap] samples; per frame_step samples
    in, a frame out once frame_size are there (else output_valid false and that frame 0)."""
    o = op.options
    size, step = o["frame_size"], o["frame_step"]
    cap = framer_capacity(o)
    init = size - step if o["prefill"] else 0
    x = ins[0].reshape(-1, ins[0].shape[-1])
    nf = x.shape[1] // step
    y = outs[0].reshape(x.shape[0], nf, size)
    st = ins[1]
    valid = True
    for r in range(x.shape[0]):
        n = init + int(st[r, cap])
        fifo = st[r, :n].copy()
        for f in range(nf):
            fifo = np.concatenate([fifo, x[r, f * step:(f + 1) * step]])
            if len(fifo) >= size:
                y[r, f] = fifo[:size]
                fifo = fifo[step:]
            else:
                y[r, f] = 0
                valid = False
        st[r, :len(fifo)] = fifo
        st[r, len(fifo):cap] = 0
        st[r, cap] = len(fifo) - init
    outs[1][...] = valid



# -- IRFFT, FFT_AUTO_SCALE -----------------------------------------------------------------------------------
def irfft_frame(freq: np.ndarray, fft_length: int, tables=None) -> np.ndarray:
    """kiss_fftri (FIXED_POINT 16): fft_length/2 + 1 complex int16 values -> fft_length int16 values."""
    tw, sup = tables if tables is not None else fft_twiddles(fft_length, inverse=True)
    n = fft_length // 2
    f = np.asarray(freq, np.int64).reshape(-1, 2)[:n + 1].T
    tmp = np.zeros((2, n), np.int64)
    tmp[0, 0], tmp[1, 0] = _fixdiv((_s16(f[0, 0] + f[0, n]), _s16(f[0, 0] - f[0, n])), 2)
    k = np.arange(1, n // 2 + 1)
    fk = _fixdiv(f[:, k], 2)
    fnkc = _fixdiv((f[0, n - k], _s16(-f[1, n - k])), 2)
    fek = _cadd(fk, fnkc)
    fok = _cmul(_csub(fk, fnkc), sup.T.astype(np.int64)[:, k - 1])
    tmp[0, k], tmp[1, k] = _cadd(fek, fok)
    tmp[0, n - k], tmp[1, n - k] = _csub(fek, fok)
    tmp[1, n - k] = _s16(-tmp[1, n - k])
    F = np.zeros((2, n), np.int64)
    _kf_work(F, tmp, 0, 0, 1, fft_factors(n), tw.T.astype(np.int64), inverse=True)
    return F.T.reshape(-1).astype(np.int16)


def irfft(g, op, ins, outs) -> None:
    """ins[1]: the work buffer (a hidden input, model/signal.py STATE_INPUT), unused here."""
    n = op.options["fft_length"]
    tables = fft_twiddles(n, inverse=True)
    x = ins[0].reshape(-1, ins[0].shape[-1])
    y = outs[0].reshape(-1, outs[0].shape[-1])
    for r in range(x.shape[0]):
        y[r] = irfft_frame(x[r], n, tables)


def fft_auto_scale(g, op, ins, outs) -> None:
    """MaxAbs16 as TFLM (its int16 maximum wraps at -32768, making the shift order-dependent), then the shift."""
    mx = 0
    for v in ins[0].tolist():
        if v > mx:
            mx = v
        elif -v > mx:
            mx = _s16(-v)
    bits = max(16 - (_msb(mx & M32) if mx else 32) - 1, 0)
    outs[0][...] = _s16(ins[0].astype(np.int64) << bits).astype(np.int16)
    outs[1][...] = bits
