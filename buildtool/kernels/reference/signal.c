/* TFLite Micro's signal library: WINDOW, RFFT (int16), ENERGY, FILTER_BANK, FILTER_BANK_SQUARE_ROOT,
 * FILTER_BANK_LOG, PCAN (see bt_kernels.h; the arithmetic is described in refops/signal.py). */
#include "bt_kernels.h"

#define SIG_INLINE static inline __attribute__((always_inline))

void bt_signal_window_s16(int32_t size, int32_t wsize, int32_t shift, const int16_t *w, const int16_t *in,
                          int16_t *out) {
  for (int32_t i = 0; i < size; i += wsize)
    for (int32_t k = 0; k < wsize; k++) {
      const int32_t v = ((int32_t)in[i + k] * w[k]) >> shift;
      out[i + k] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
    }
}

/* -- RFFT: Q15 complex arithmetic as kiss_fft's FIXED_POINT 16 -------------------------------------------- */
typedef struct {
  int16_t r, i;
} sig_cpx;

SIG_INLINE int16_t sig_round(int32_t x) { return (int16_t)((int32_t)((uint32_t)x + (1u << 14)) >> 15); }

SIG_INLINE sig_cpx sig_div(sig_cpx c, int32_t k) {
  sig_cpx o = {sig_round(c.r * (32767 / k)), sig_round(c.i * (32767 / k))};
  return o;
}

SIG_INLINE sig_cpx sig_mul(sig_cpx a, const int16_t *tw) {
  sig_cpx o = {sig_round((int32_t)((uint32_t)(a.r * tw[0]) - (uint32_t)(a.i * tw[1]))),
               sig_round((int32_t)((uint32_t)(a.r * tw[1]) + (uint32_t)(a.i * tw[0])))};
  return o;
}

SIG_INLINE sig_cpx sig_add(sig_cpx a, sig_cpx b) {
  sig_cpx o = {(int16_t)(a.r + b.r), (int16_t)(a.i + b.i)};
  return o;
}

SIG_INLINE sig_cpx sig_sub(sig_cpx a, sig_cpx b) {
  sig_cpx o = {(int16_t)(a.r - b.r), (int16_t)(a.i - b.i)};
  return o;
}

/* the input frame as complex values, zero past in_len int16 values */
SIG_INLINE sig_cpx sig_load(const int16_t *in, int32_t in_len, int32_t c) {
  sig_cpx o = {(int16_t)(2 * c < in_len ? in[2 * c] : 0), (int16_t)(2 * c + 1 < in_len ? in[2 * c + 1] : 0)};
  return o;
}

static void sig_fft_work(const bt_rfft_params *p, sig_cpx *F, const int16_t *in, int32_t f, int32_t fstride,
                         const int32_t *factors) {
  const int32_t radix = factors[0], m = factors[1];
  if (m == 1) {
    for (int32_t j = 0; j < radix; j++) F[j] = sig_load(in, p->in_len, f + j * fstride);
  } else {
    for (int32_t j = 0; j < radix; j++) sig_fft_work(p, F + j * m, in, f + j * fstride, fstride * radix, factors + 2);
  }
  const int16_t *tw = p->twiddles;
  if (radix == 2) {
    for (int32_t k = 0; k < m; k++) {
      const sig_cpx a = sig_div(F[k], 2), t = sig_mul(sig_div(F[k + m], 2), tw + 2 * k * fstride);
      F[k + m] = sig_sub(a, t);
      F[k] = sig_add(a, t);
    }
    return;
  }
  const int32_t inv = p->inverse;
  for (int32_t k = 0; k < m; k++) {
    sig_cpx f0 = sig_div(F[k], 4);
    const sig_cpx s0 = sig_mul(sig_div(F[k + m], 4), tw + 2 * k * fstride);
    const sig_cpx s1 = sig_mul(sig_div(F[k + 2 * m], 4), tw + 4 * k * fstride);
    const sig_cpx s2 = sig_mul(sig_div(F[k + 3 * m], 4), tw + 6 * k * fstride);
    const sig_cpx s5 = sig_sub(f0, s1);
    f0 = sig_add(f0, s1);
    const sig_cpx s3 = sig_add(s0, s2), s4 = sig_sub(s0, s2);
    F[k + 2 * m] = sig_sub(f0, s3);
    F[k] = sig_add(f0, s3);
    F[k + m].r = (int16_t)(inv ? s5.r - s4.i : s5.r + s4.i);
    F[k + m].i = (int16_t)(inv ? s5.i + s4.r : s5.i - s4.r);
    F[k + 3 * m].r = (int16_t)(inv ? s5.r + s4.i : s5.r - s4.i);
    F[k + 3 * m].i = (int16_t)(inv ? s5.i - s4.r : s5.i + s4.r);
  }
}

void bt_signal_rfft_s16(const bt_rfft_params *p, const int16_t *in, int16_t *out) {
  const int32_t n = p->n;
  for (int32_t row = 0; row < p->frames; row++) {
    sig_cpx *F = (sig_cpx *)(void *)(out + row * p->out_stride);
    /* the n-point complex FFT into the first n bins, then kiss_fftr's split in place */
    sig_fft_work(p, F, in + row * p->in_len, 0, 1, p->factors);
    const sig_cpx dc = sig_div(F[0], 2);
    F[0].r = (int16_t)(dc.r + dc.i);
    F[0].i = 0;
    F[n].r = (int16_t)(dc.r - dc.i);
    F[n].i = 0;
    for (int32_t k = 1; k <= n / 2; k++) {
      const sig_cpx fpk = sig_div(F[k], 2);
      sig_cpx nk = F[n - k];
      nk.i = (int16_t)-nk.i;
      const sig_cpx fpnk = sig_div(nk, 2);
      const sig_cpx f1k = sig_add(fpk, fpnk), t = sig_mul(sig_sub(fpk, fpnk), p->super_twiddles + 2 * (k - 1));
      F[k].r = (int16_t)((f1k.r + t.r) >> 1);
      F[k].i = (int16_t)((f1k.i + t.i) >> 1);
      F[n - k].r = (int16_t)((f1k.r - t.r) >> 1);
      F[n - k].i = (int16_t)((t.i - f1k.i) >> 1);
    }
  }
}

/* -- energies, filter bank ------------------------------------------------------------------------------- */
void bt_signal_energy(int32_t n, int32_t start, int32_t end, const int16_t *in, uint32_t *out) {
  for (int32_t i = 0; i < n; i++) {
    const int32_t re = in[2 * i], im = in[2 * i + 1];
    out[i] = i >= start && i < end ? (uint32_t)(re * re) + (uint32_t)(im * im) : 0u;
  }
}

void bt_signal_filter_bank(const bt_filter_bank_params *p, const uint32_t *in, uint64_t *out) {
  uint64_t carry = 0;
  for (int32_t c = 0; c <= p->num_channels; c++) {
    const int32_t f0 = p->freq_starts[c], w0 = p->weight_starts[c];
    uint64_t weighted = carry, unweighted = 0;
    for (int32_t j = 0; j < p->widths[c]; j++) {
      weighted += (uint64_t)(int64_t)p->weights[w0 + j] * in[f0 + j];
      unweighted += (uint64_t)(int64_t)p->unweights[w0 + j] * in[f0 + j];
    }
    if (c > 0) out[c - 1] = weighted;
    carry = unweighted;
  }
}

SIG_INLINE int32_t sig_msb32(uint32_t x) { return x ? 32 - __builtin_clz(x) : 32; }

/* TFLM's Sqrt32 / Sqrt64 (digit by digit, rounded, saturated) as one loop over bits = 32 or 64: the same values,
   in 64-bit arithmetic (no intermediate exceeds 2^bits) */
static uint32_t sig_isqrt(uint64_t num, int32_t bits) {
  if (num == 0) return 0;
  uint64_t res = 0;
  const int32_t top = (bits - (64 - __builtin_clzll(num))) | 1;
  uint64_t bit = (uint64_t)1 << (bits - 1 - top);
  for (int32_t it = (bits - 1 - top) / 2 + 1; it > 0; it--) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  const uint64_t cap = ((uint64_t)1 << (bits / 2)) - 1;
  if (num > res && res != cap) ++res;
  return (uint32_t)(res & cap);
}

static uint32_t sig_sqrt64(uint64_t num) { return sig_isqrt(num, (num >> 32) == 0 ? 32 : 64); }

void bt_signal_fb_sqrt(int32_t n, int32_t shift, const uint64_t *in, uint32_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = (uint32_t)shift < 32u ? sig_sqrt64(in[i]) >> shift : 0u;
}

/* -- log ------------------------------------------------------------------------------------------------- */
static const uint16_t sig_log_lut[130] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087,
    3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934,
    5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622,
    5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370,
    5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
    4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659,
    2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963,  830,  695,  559,  421,
    282,  142,  0,    0};

static uint32_t sig_log32(uint32_t x, uint32_t out_scale) {
  const int32_t integer = sig_msb32(x) - 1;
  int32_t frac = (int32_t)(x - (1u << integer));
  frac = integer < 16 ? frac << (16 - integer) : frac >> (integer - 16);
  const int32_t seg = frac >> 9;
  const int32_t c0 = sig_log_lut[seg], c1 = sig_log_lut[seg + 1];
  const int32_t rel = ((c1 - c0) * (frac - (seg << 9))) >> 16;
  const uint32_t log2 = ((uint32_t)integer << 16) + (uint32_t)(frac + c0 + rel);
  const uint32_t loge = (uint32_t)(((uint64_t)45426 * log2 + 32768u) >> 16);
  return (out_scale * loge + 32768u) >> 16;
}

void bt_signal_fb_log(int32_t n, int32_t correction_bits, uint32_t out_scale, const uint32_t *in, int16_t *out) {
  for (int32_t i = 0; i < n; i++) {
    const uint32_t x = in[i] << correction_bits;
    if (x > 1) {
      const uint32_t v = sig_log32(x, out_scale);
      out[i] = (int16_t)(v < 32767u ? v : 32767u);
    } else {
      out[i] = 0;
    }
  }
}

/* -- PCAN ------------------------------------------------------------------------------------------------ */
static int16_t sig_wide_dynamic(uint32_t x, const int16_t *lut) {
  if (x <= 2) return lut[x];
  const int32_t interval = sig_msb32(x);
  lut += 4 * interval - 6;
  const int32_t frac = (int32_t)((interval < 11 ? x << (11 - interval) : x >> (interval - 11)) & 0x3FFu);
  int32_t r = ((int32_t)lut[2] * frac) >> 5;
  r = (int32_t)((uint32_t)r + ((uint32_t)lut[1] << 5));
  r = (int32_t)((uint32_t)r * (uint32_t)frac);
  r = (int32_t)((uint32_t)r + (1u << 14)) >> 15;
  return (int16_t)(r + lut[0]);
}

void bt_signal_pcan(int32_t n, int32_t snr_shift, const int16_t *lut, const uint32_t *in, const uint32_t *noise,
                    uint32_t *out) {
  for (int32_t i = 0; i < n; i++) {
    const uint32_t gain = (uint32_t)(int32_t)sig_wide_dynamic(noise[i], lut);
    const uint32_t snr = (uint32_t)(((uint64_t)in[i] * gain) >> snr_shift);
    out[i] = snr < (2u << 12) ? (snr * snr) >> 20 : (snr >> 6) - (1u << 6);
  }
}

/* -- spectral subtraction: noise holds the last invocation's estimate (0 at start-up), updated in place ------ */
void bt_signal_spectral_subtraction(const bt_spectral_subtraction_params *p, const uint32_t *in, uint32_t *out,
                                    uint32_t *noise) {
  for (int32_t i = 0; i < p->num_channels; i++) {
    const uint32_t sm = (i & 1) ? p->alternate_smoothing : p->smoothing;
    const uint32_t oms = (i & 1) ? p->alternate_one_minus_smoothing : p->one_minus_smoothing;
    const uint32_t up = in[i] << p->smoothing_bits;
    noise[i] = (uint32_t)(((uint64_t)up * sm + (uint64_t)noise[i] * oms) >> p->spectral_subtraction_bits);
    uint32_t est = noise[i];
    if (est > up) {
      est = up;
      if (p->clamping) noise[i] = est;
    }
    const uint32_t floor = (uint32_t)(((uint64_t)in[i] * p->min_signal_remaining) >> p->spectral_subtraction_bits);
    const uint32_t sub = (up - est) >> p->smoothing_bits;
    out[i] = sub > floor ? sub : floor;
  }
}

/* -- DELAY, OVERLAP_ADD, STACKER, FRAMER: state is the hidden int16 buffer (all zero: TFLite Micro's reset) ---- */
void bt_signal_delay_s16(int32_t rows, int32_t frame, int32_t delay, const int16_t *in, int16_t *state,
                         int16_t *out) {
  const int32_t stride = delay > 0 ? delay : 1;
  for (int32_t r = 0; r < rows; r++) {
    const int16_t *x = in + r * frame;
    int16_t *s = state + r * stride, *y = out + r * frame;
    for (int32_t i = 0; i < frame; i++) y[i] = i < delay ? s[i] : x[i - delay];
    for (int32_t j = 0; j < delay; j++) s[j] = frame + j < delay ? s[frame + j] : x[frame + j - delay];
  }
}

void bt_signal_overlap_add_s16(int32_t rows, int32_t frames, int32_t frame_size, int32_t step, const int16_t *in,
                               int16_t *state, int16_t *out) {
  for (int32_t r = 0; r < rows; r++) {
    int16_t *s = state + r * frame_size;
    for (int32_t f = 0; f < frames; f++) {
      const int16_t *x = in + (r * frames + f) * frame_size;
      int16_t *y = out + (r * frames + f) * step;
      for (int32_t i = 0; i < frame_size; i++) {
        const int32_t v = (int32_t)s[i] + x[i];
        s[i] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
      }
      for (int32_t i = 0; i < step; i++) y[i] = s[i];
      for (int32_t i = 0; i < frame_size - step; i++) s[i] = s[i + step];
      for (int32_t i = frame_size - step; i < frame_size; i++) s[i] = 0;
    }
  }
}

void bt_signal_stacker_s16(const bt_stacker_params *p, const int16_t *in, int16_t *state, int16_t *out,
                           uint8_t *valid) {
  const int32_t b = p->buffer_size, c = p->channels;
  int32_t n = state[b];
  for (int32_t i = 0; i < c; i++) state[n + i] = in[i];
  n += c;
  if (!state[b + 1]) { /* the first frame, left_context more times */
    for (int32_t l = 0; l < p->left; l++, n += c)
      for (int32_t i = 0; i < c; i++) state[n + i] = in[i];
    state[b + 1] = 1;
  }
  if (n >= b) {
    for (int32_t i = 0; i < b; i++) out[i] = state[i];
    for (int32_t i = 0; i < n - p->step_size; i++) state[i] = state[i + p->step_size];
    n -= p->step_size;
    *valid = 1;
  } else {
    for (int32_t i = 0; i < b; i++) out[i] = 0;
    *valid = 0;
  }
  for (int32_t i = n; i < b; i++) state[i] = 0;
  state[b] = (int16_t)n;
}

void bt_signal_framer_s16(const bt_framer_params *p, const int16_t *in, int16_t *state, int16_t *out,
                          uint8_t *valid) {
  const int32_t cap = p->capacity, size = p->frame_size, step = p->frame_step;
  uint8_t ok = 1;
  for (int32_t r = 0; r < p->rows; r++) {
    int16_t *s = state + r * (cap + 1);
    int32_t n = p->init + s[cap];
    for (int32_t f = 0; f < p->frames; f++) {
      const int16_t *x = in + (r * p->frames + f) * step;
      int16_t *y = out + (r * p->frames + f) * size;
      for (int32_t i = 0; i < step; i++) s[n + i] = x[i];
      n += step;
      if (n >= size) {
        for (int32_t i = 0; i < size; i++) y[i] = s[i];
        for (int32_t i = 0; i < n - step; i++) s[i] = s[i + step];
        n -= step;
      } else {
        for (int32_t i = 0; i < size; i++) y[i] = 0;
        ok = 0;
      }
    }
    for (int32_t i = n; i < cap; i++) s[i] = 0;
    s[cap] = (int16_t)(n - p->init);
  }
  *valid = ok;
}

/* -- IRFFT (kiss_fftri): the split of each frame into work (n complex), then the inverse n-point FFT ----------- */
void bt_signal_irfft_s16(const bt_rfft_params *p, const int16_t *in, int16_t *work, int16_t *out) {
  const int32_t n = p->n;
  sig_cpx *T = (sig_cpx *)(void *)work;
  for (int32_t row = 0; row < p->frames; row++) {
    const sig_cpx *f = (const sig_cpx *)(const void *)(in + row * p->in_stride);
    sig_cpx t0 = {(int16_t)(f[0].r + f[n].r), (int16_t)(f[0].r - f[n].r)};
    T[0] = sig_div(t0, 2);
    for (int32_t k = 1; k <= n / 2; k++) {
      const sig_cpx fk = sig_div(f[k], 2);
      sig_cpx nk = f[n - k];
      nk.i = (int16_t)-nk.i;
      const sig_cpx fnkc = sig_div(nk, 2);
      const sig_cpx fek = sig_add(fk, fnkc), fok = sig_mul(sig_sub(fk, fnkc), p->super_twiddles + 2 * (k - 1));
      T[k] = sig_add(fek, fok);
      T[n - k] = sig_sub(fek, fok);
      T[n - k].i = (int16_t)-T[n - k].i;
    }
    sig_fft_work(p, (sig_cpx *)(void *)(out + row * p->out_stride), work, 0, 1, p->factors);
  }
}

/* -- FFT_AUTO_SCALE: TFLM's MaxAbs16 (its int16 maximum wraps at -32768), then the shift ------------------------ */
void bt_signal_fft_auto_scale_s16(int32_t n, const int16_t *in, int16_t *out, int32_t *scale_bits) {
  int16_t mx = 0;
  for (int32_t i = 0; i < n; i++) {
    const int16_t v = in[i];
    if (v > mx) {
      mx = v;
    } else if (-v > mx) {
      mx = (int16_t)-v;
    }
  }
  int32_t bits = 16 - sig_msb32((uint32_t)(int32_t)mx) - 1;
  if (bits < 0) bits = 0;
  for (int32_t i = 0; i < n; i++) out[i] = (int16_t)(in[i] * (1 << bits));
  *scale_bits = bits;
}
