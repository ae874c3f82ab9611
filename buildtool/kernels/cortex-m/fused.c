/* fused.c -- the fused-plan tile runtime for Cortex-M DSP: the reference runtime (included below)
 * with the one-channel calls of the channel-by-channel scheme on their own paths (fx_k_box,
 * fx_k_pulled). A tile computes an expansion conv one output channel at a time into a one-channel
 * window, then the depthwise on that window; the set's conv and depthwise kernels block 4 channels
 * and would run their scalar remainders there, paying their whole set-up per call. Here, per call:
 *  - conv, one output channel (window, whole tensor, row bands, or pulled from the streamed input):
 *    the channel's filter widened once to int16 pairs (im2col.h layout), the input offset folded
 *    into the start value (bias + offset * sum(filter), exact in int32). Interior pixels: a 1x1 (or
 *    one dense tap row) sums and requantises in one pass, one LDR + two SXTB16 + two SMLAD per 4
 *    input bytes with the filter words in registers (runs over 16 bytes two pixels at a time; runs
 *    of 12..16 bytes two pixels at a time sharing each filter word, in asm);
 *    dense tap rows of up to 16 bytes (the stem) sum all rows in registers (an RGB stem's 3x9 rows in
 *    asm, two pixels sharing each filter word; in a channelwise tile, fx_chw or fx_pulled_chw, as the
 *    patch-matrix conv makes it: each pixel's patch widened once for up to 8 channel pairs, bt_mm3x2
 *    three pixels x two channels, cm_s3); other shapes add one pass per tap row or tap over
 *    chunks of CM_CHUNK sums. Border pixels walk their valid taps (an RGB stem's: a 3x9 patch with
 *    the input's zero point outside, on the stem's one-pixel asm);
 *  - depthwise on a one-channel input: the offset folded likewise; 3x3 rows take two outputs per
 *    input word at stride 1 (SMLAD + SMLABB/SMLABT), one at larger strides, other widths SMLAD on
 *    taps widened per row; tap rows above or below the input read a row of the input's zero point
 *    (their terms vanish), and boxes that are mostly border (small maps) copy their input rows once
 *    into a zero-point-padded ring;
 *  - requantisation by bt_rq2 when the channel allows it (else bt_mbqm_fast); when the activation range is
 *    all of int8, the output zero point folded into bt_rq2's rounding word and one SSAT for the clamp
 *    (CM_SAT: bt_rq2's 5 instructions and an SSAT, where adding the zero point and a two-sided clamp
 *    took 5-6 more, their constants often spilled). 3x3 depthwise rows whose taps are all inside go through dw3_rows in one call.
 * Stack: CM_K_MAX int16s and CM_CHUNK sums (a depthwise's padded rows reuse the int16s; an RGB stem's group
 * state, cm_s3, 0.4 KB beside them), below the set's conv (3.2 KB). Same results as the reference runtime, byte for byte. */
#include "bt_fused.h"
#include "requant.h"
#include "dsp.h"
#include "im2col.h"
#include "fx_box.h"

#define CM_K_MAX 640   /* filter values of one output channel handled here (kh*kw*c_in) */
#define CM_TAPS 64     /* depthwise taps handled here (kh*kw) */

/* Both 16-bit halves: lo, hi (int16 values). */
static inline int32_t cm_pack(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)(uint16_t)lo) | ((uint32_t)hi << 16));
}
/* c + bottom(a) * top(b) (SMLABT). */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define cm_smlabt(a, b, c) __smlabt((a), (b), (c))
#else
static inline int32_t cm_smlabt(int32_t a, int32_t b, int32_t c) {
  return (int32_t)((uint32_t)c + (uint32_t)((int32_t)(int16_t)(uint16_t)((uint32_t)a & 0xffffu) * ((int32_t)b >> 16)));
}
#endif

/* One requantised, clamped output: bt_rq2 (p2, e1) when fast, else bt_mbqm_fast; fast 2 (CM_SAT): p2 is
   cm_p2z's (the output zero point folded in) and the activation range is all of int8, so one SSAT clamps. */
static inline __attribute__((always_inline)) int8_t cm_out(int32_t acc, int32_t m, int32_t sh, int32_t p2, int32_t e1,
                                                          int fast, int32_t zp, int32_t lo, int32_t hi) {
  if (fast == 2) return (int8_t)bt_ssat8(bt_rq2(acc, m, p2, e1));
  return (int8_t)bt_clamp((fast ? bt_rq2(acc, m, p2, e1) : bt_mbqm_fast(acc, m, sh)) + zp, lo, hi);
}
#define CM_SAT 2
/* call (its requantisation argument written QQ) with QQ = CM_SAT when sat, else 1: optimised builds get a copy
   of the call per value (the checks leave the loops); -O0 one call with QQ a variable (the copies' locals
   would double its stack). */
#if defined(__OPTIMIZE__)
#define CM_QCALL(sat, call)                  \
  do {                                       \
    if (sat) {                               \
      enum { QQ = CM_SAT };                  \
      call;                                  \
    } else {                                 \
      enum { QQ = 1 };                       \
      call;                                  \
    }                                        \
  } while (0)
#else
#define CM_QCALL(sat, call)                  \
  do {                                       \
    const int QQ = (sat) ? CM_SAT : 1;       \
    call;                                    \
  } while (0)
#endif

/* 1 when a bt_rq2 channel (shift sh) of p can take CM_SAT: activation range [-128, 127] and the zero point
   folded into bt_rq2's rounding word (cm_p2z) exactly (bt_rq2_zp_ok, requant.h). */
static inline int cm_sat_ok(const bt_conv_params *p, int32_t sh) {
  return p->act_min == -128 && p->act_max == 127 && p->output_offset >= -128 && p->output_offset <= 128 &&
         bt_rq2_zp_ok(sh);
}
/* bt_rq2's p2 with p's output zero point folded in (cm_sat_ok). */
static inline int32_t cm_p2z(const bt_conv_params *p, int32_t sh) {
  return bt_rq2_p2_zp(bt_rq2_p2(sh), bt_rq2_e1(sh), p->output_offset);
}

/* The pixels of a pass: nr rows of n pixels, pixel (j, i) at ip + j*rs + i*step; their sums are
   acc[j*n + i]. */
typedef struct {
  const int8_t *ip;
  int32_t step, n, nr, rs;
} cm_pass;

/* acc[.] += f . run of each pixel of the pass: G groups of 4 values (f widened, the words held in
   registers) then T single values (T < 4, f int16 in order). */
static inline __attribute__((always_inline)) void cm_pass_dot(const cm_pass *ps, const int16_t *f, int32_t *acc,
                                                             const int G, int32_t T) {
  int32_t w[8];
  _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
    __builtin_memcpy(&w[2 * g], f + 4 * g, 4);
    __builtin_memcpy(&w[2 * g + 1], f + 4 * g + 2, 4);
  }
  const int32_t step = ps->step, n = ps->n;
  for (int32_t j = 0; j < ps->nr; j++) {
    const int8_t *ip = ps->ip + j * ps->rs;
    for (int32_t i = 0; i < n; i++, ip += step, acc++) {
      int32_t a = *acc;
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
        const uint32_t v = bt_ld4(ip + 4 * g);
        a = bt_smlad(w[2 * g], bt_sxtb16(v), a);
        a = bt_smlad(w[2 * g + 1], bt_sxtb16_ror8(v), a);
      }
      for (int32_t t = 0; t < T; t++) a += f[4 * G + t] * ip[4 * G + t];
      *acc = a;
    }
  }
}

/* The same for runs longer than 16 values: two pixels at a time share each filter word. */
static void cm_pass_long(const cm_pass *ps, const int16_t *f, int32_t len, int32_t *acc) {
  for (int32_t j = 0; j < ps->nr; j++) {
    const int8_t *ip = ps->ip + j * ps->rs;
    int32_t i = 0;
    for (; i + 2 <= ps->n; i += 2, ip += 2 * ps->step, acc += 2) {
      const int8_t *iq = ip + ps->step;
      int32_t a0 = acc[0], a1 = acc[1], k = 0;
      for (; k + 4 <= len; k += 4) {
        int32_t fa, fb;
        __builtin_memcpy(&fa, f + k, 4);
        __builtin_memcpy(&fb, f + k + 2, 4);
        const uint32_t v0 = bt_ld4(ip + k), v1 = bt_ld4(iq + k);
        a0 = bt_smlad(fa, bt_sxtb16(v0), a0); a0 = bt_smlad(fb, bt_sxtb16_ror8(v0), a0);
        a1 = bt_smlad(fa, bt_sxtb16(v1), a1); a1 = bt_smlad(fb, bt_sxtb16_ror8(v1), a1);
      }
      for (; k < len; k++) { a0 += f[k] * ip[k]; a1 += f[k] * iq[k]; }
      acc[0] = a0; acc[1] = a1;
    }
    if (i < ps->n) {
      int32_t a0 = acc[0], k = 0;
      for (; k + 4 <= len; k += 4) {
        int32_t fa, fb;
        __builtin_memcpy(&fa, f + k, 4);
        __builtin_memcpy(&fb, f + k + 2, 4);
        const uint32_t v0 = bt_ld4(ip + k);
        a0 = bt_smlad(fa, bt_sxtb16(v0), a0); a0 = bt_smlad(fb, bt_sxtb16_ror8(v0), a0);
      }
      for (; k < len; k++) a0 += f[k] * ip[k];
      *acc++ = a0;
    }
  }
}

/* acc[.] += f . run of `len` values of each pixel of the pass (runs of any length; up to 16 values
   unrolled). */
static void cm_pass_run(const cm_pass *ps, const int16_t *f, int32_t len, int32_t *acc) {
  switch (len) {
#define CM_RUN(n) case n: cm_pass_dot(ps, f, acc, (n) >> 2, (n) & 3); break;
    CM_RUN(1) CM_RUN(2) CM_RUN(3) CM_RUN(4) CM_RUN(5) CM_RUN(6) CM_RUN(7) CM_RUN(8)
    CM_RUN(9) CM_RUN(10) CM_RUN(11) CM_RUN(12) CM_RUN(13) CM_RUN(14) CM_RUN(15) CM_RUN(16)
#undef CM_RUN
    default: cm_pass_long(ps, f, len, acc); break;
  }
}

#define CM_CHUNK 64
#define CM_KH 8        /* tap rows of a conv whose rows go through conv1_dense */

/* A one-output-channel conv's per-call values: the filter widened per run (a tap row when dense, else
   a tap), the start value with the input offset folded in, the requantisation, the interior columns. */
typedef struct {
  int16_t fw[CM_K_MAX] __attribute__((aligned(4)));
  int32_t acc0, m, sh, p2, e1, fast, xi0, xi1, run, nrun, dense;
  int32_t p2z, sat;   /* CM_SAT: sat 1, p2z bt_rq2's p2 with the zero point folded in (cm_p2z) */
  int32_t row1;   /* conv1_row1's path: 2 an RGB stem's 3x9 rows, 1 dense rows, 0 conv1_rows */
} cm_conv1;

/* One channel's start value and bt_rq2 requantisation (q: cm_out's fast, 1 or CM_SAT with p2 from cm_p2z). */
typedef struct {
  int32_t acc0, m, p2, e1, q;
} cm_chq;

/* dst[0..n) = src[0..n) widened, each group of 4 stored [k, k+2, k+1, k+3] (im2col.h's layout); returns
   their sum. */
static inline int32_t cm_widen(const int8_t *src, int16_t *dst, int32_t n) {
  int32_t k = 0, sum = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t v = bt_ld4(src + k);
    const int32_t a = bt_sxtb16(v), b = bt_sxtb16_ror8(v);
    __builtin_memcpy(dst + k, &a, 4);
    __builtin_memcpy(dst + k + 2, &b, 4);
    sum = bt_smlad(a, 0x00010001, sum);
    sum = bt_smlad(b, 0x00010001, sum);
  }
  for (; k < n; k++) { dst[k] = src[k]; sum += src[k]; }
  return sum;
}

/* st's start value (p's bias and the input offset times fsum, the sum of the channel's filter) and
   requantisation (bt_rq2 when the channel allows it). */
static inline __attribute__((always_inline)) void cm_chan_values(const bt_conv_params *p, cm_conv1 *st,
                                                                int32_t fsum) {
  st->acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum;
  st->m = p->multiplier[0];
  st->sh = p->shift[0];
  st->fast = bt_rq2_ok(&st->m, &st->sh, 1);
  st->p2 = st->fast ? bt_rq2_p2(st->sh) : 0;
  st->e1 = st->fast ? bt_rq2_e1(st->sh) : 0;
  st->sat = st->fast && cm_sat_ok(p, st->sh);
  st->p2z = st->sat ? cm_p2z(p, st->sh) : st->p2;
}

/* st's values that depend on p's channel (filter, bias, requantisation), its geometry already in st. */
static void conv1_chan(const bt_conv_params *p, cm_conv1 *st) {
  int32_t fsum = 0;
  for (int32_t r = 0; r < st->nrun; r++) fsum += cm_widen(p->filter + r * st->run, st->fw + r * st->run, st->run);
  cm_chan_values(p, st, fsum);
}

/* st = p's per-call values (p: one output channel); 0 when the filter is too large for this path.
   first 0: a later channel of the same tile (fx_k_chw), st's geometry kept. */
static int conv1_prep_ch(const bt_conv_params *p, cm_conv1 *st, int first) {
  const int32_t c = p->in.c, K = p->kh * p->kw * c;
  if (K > CM_K_MAX) return 0;
  if (first) {
    st->dense = p->dil_w == 1 && p->in.pixel_stride == c;   /* a tap row is one run of bytes */
    st->run = st->dense ? p->kw * c : c;
    st->nrun = st->dense ? p->kh : p->kh * p->kw;
    box_interior(p, &st->xi0, &st->xi1);
    st->row1 = !st->dense || st->run > 16 || p->kh > CM_KH ? 0 : p->kh == 3 && st->run == 9 ? 2 : 1;
  }
  conv1_chan(p, st);
  return 1;
}
#define conv1_prep(p, st) conv1_prep_ch(p, st, 1)
#define FX_CONV1_CHAN conv1_prep_ch

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
static void cm_row9_padded(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, int8_t *orow,
                           int32_t iy0, int32_t xa, int32_t xb);
#endif

/* Output row y of a one-output-channel conv, pixels [xa, xb), one at a time (borders): an RGB stem's
   (3x3 taps on 3 channels, bt_rq2) on a gathered 3x9 patch (cm_row9_padded), others tap by tap. */
static void conv1_edge(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                       int32_t xa, int32_t xb) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ops = p->out.pixel_stride;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
  if (st->row1 == 2 && st->fast && p->kw == 3 && p->in.c == 3 && p->input_offset >= -127 &&
      p->input_offset <= 128) {
    cm_row9_padded(p, st, s, orow, iy0, xa, xb);
    return;
  }
#endif
  for (int32_t x = xa; x < xb; x++)
    orow[x * ops] = cm_out(conv1_border(p, s, iy0, x * p->stride_w - p->pad_left), st->m, st->sh, st->p2, st->e1,
                           st->fast, p->output_offset, p->act_min, p->act_max);
}

/* acc + sum_k f[k] * ip[k] over n values, f widened by cm_widen (pairs [k, k+2], [k+1, k+3]). */
static inline __attribute__((always_inline)) int32_t cm_dot(const int8_t *ip, const int16_t *f, int32_t n,
                                                            int32_t acc) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t v = bt_ld4(ip + k);
    int32_t a, b;
    __builtin_memcpy(&a, f + k, 4);
    __builtin_memcpy(&b, f + k + 2, 4);
    acc = bt_smlad(a, bt_sxtb16(v), acc);
    acc = bt_smlad(b, bt_sxtb16_ror8(v), acc);
  }
  for (; k < n; k++) acc += f[k] * ip[k];
  return acc;
}

/* n outputs of a one-run conv (a 1x1, or one dense tap row) from pixels ip + i*step into o + i*ops:
   sum and requantisation (bt_rq2: st->fast) in one pass, G groups of 4 values and T single values
   per run. */
static inline __attribute__((always_inline)) void cm_run_out(const int8_t *ip, int32_t step, int32_t n,
                                                            const int16_t *f,
                                                            int8_t *o, int32_t ops, const bt_conv_params *p,
                                                            const cm_conv1 *st, const int G, const int T,
                                                            const int Q) {
  int32_t w[8];
  _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
    __builtin_memcpy(&w[2 * g], f + 4 * g, 4);
    __builtin_memcpy(&w[2 * g + 1], f + 4 * g + 2, 4);
  }
  const int32_t acc0 = st->acc0, m = st->m, p2 = Q == CM_SAT ? st->p2z : st->p2, e1 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t i = 0; i < n; i++, ip += step, o += ops) {
    int32_t a = acc0;
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      const uint32_t v = bt_ld4(ip + 4 * g);
      a = bt_smlad(w[2 * g], bt_sxtb16(v), a);
      a = bt_smlad(w[2 * g + 1], bt_sxtb16_ror8(v), a);
    }
    for (int t = 0; t < T; t++) a += f[4 * G + t] * ip[4 * G + t];
    *o = cm_out(a, m, 0, p2, e1, Q, zp, lo, hi);
  }
}

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
/* Four values of two pixels (x, y: one word each, already loaded) against the filter pairs at byte OFF of f (a
   string: "#16", "#16+8"): 2 LDR + 4 SXTB16 + 4 SMLAD into a (pixel x) and b (pixel y), the filter words loaded
   once for both. */
#define CM_SMLAD_XY4(OFF)                               \
  "ldr %[w], [%[f], " OFF "]\n\t"                      \
  "sxtb16 %[t], %[x]\n\t"                               \
  "smlad %[a], %[w], %[t], %[a]\n\t"                    \
  "sxtb16 %[t], %[y]\n\t"                               \
  "smlad %[b], %[w], %[t], %[b]\n\t"                    \
  "ldr %[w], [%[f], " OFF "+4]\n\t"                    \
  "sxtb16 %[t], %[x], ror #8\n\t"                       \
  "smlad %[a], %[w], %[t], %[a]\n\t"                    \
  "sxtb16 %[t], %[y], ror #8\n\t"                       \
  "smlad %[b], %[w], %[t], %[b]\n\t"

/* One group of 4 values (input bytes XO.., filter pairs at byte FO) of two pixels (ip, iq) sharing each
   filter word, loaded from memory (kept in registers across the loop, gcc spilled them and the
   requantisation's values): 4 LDR + 4 SXTB16 + 4 SMLAD per 8 MACs. */
#define CM_PAIR4(XO, FO)                                                                              \
  __asm__ volatile("ldr %[x], [%[ip], #" #XO "]\n\t"                                                  \
                   "ldr %[y], [%[iq], #" #XO "]\n\t"                                                  \
                   CM_SMLAD_XY4("#" #FO)                                                            \
                   : [a] "+&r"(a), [b] "+&r"(b), [x] "=&r"(x), [y] "=&r"(y), [w] "=&r"(w), [t] "=&r"(t) \
                   : [ip] "r"(ip), [iq] "r"(iq), [f] "r"(f)                                            \
                   : "memory")

/* cm_run_out two neighbouring pixels at a time (runs of 4..16 values: G 1..4), the sums in asm
   (CM_PAIR4), the last odd pixel by cm_run_out. */
static inline __attribute__((always_inline)) void cm_run_pairs(const int8_t *ip, int32_t step, int32_t n,
                                                              const int16_t *f, int8_t *o, int32_t ops,
                                                              const bt_conv_params *p, const cm_conv1 *st,
                                                              const int G, const int T, const int Q) {
  const int32_t acc0 = st->acc0, m = st->m, p2 = Q == CM_SAT ? st->p2z : st->p2, e1 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  int32_t i = 0;
  for (; i + 2 <= n; i += 2, ip += 2 * step, o += 2 * ops) {
    const int8_t *const iq = ip + step;
    int32_t a = acc0, b = acc0;
    uint32_t x, y, w, t;
    if (G >= 1) CM_PAIR4(0, 0);
    if (G >= 2) CM_PAIR4(4, 8);
    if (G >= 3) CM_PAIR4(8, 16);
    if (G >= 4) CM_PAIR4(12, 24);
    for (int u = 0; u < T; u++) { a += f[4 * G + u] * ip[4 * G + u]; b += f[4 * G + u] * iq[4 * G + u]; }
    o[0] = cm_out(a, m, 0, p2, e1, Q, zp, lo, hi);
    o[ops] = cm_out(b, m, 0, p2, e1, Q, zp, lo, hi);
  }
  if (i < n) cm_run_out(ip, step, 1, f, o, ops, p, st, G, T, Q);
}
#undef CM_PAIR4

/* cm_run_pairs over rows [ya, ya + nr) of a box, pixels [xa, xa + n) (conv1_single's interior): the
   per-call values set up once for all the rows. */
static inline __attribute__((always_inline)) void cm_rows_pairs(const bt_conv_params *p, const cm_conv1 *st,
                                                               const box_src *s, const box_dst *d, int32_t ya,
                                                               int32_t nr, int32_t xa, int32_t n, const int G,
                                                               const int T, const int Q) {
  const int32_t ps = p->in.pixel_stride, step = p->stride_w * ps, ops = p->out.pixel_stride;
  const int32_t ix = (xa * p->stride_w - p->pad_left) * ps;
  for (int32_t j = 0; j < nr; j++)
    cm_run_pairs(box_row(s, (ya + j) * p->stride_h - p->pad_top) + ix, step, n, st->fw, box_orow(d, ya + j) + xa * ops,
                 ops, p, st, G, T, Q);
}
#define CM_ROWS_PAIRS 1
#endif

/* n pairs of outputs of a one-run conv whose run is longer than 16 values, pixels ip + i*step and
   iq + i*step into o + i*ops and oq + i*ops: the two pixels share each filter word. */
static void cm_long_pairs(const int8_t *ip, const int8_t *iq, int32_t step, int32_t n, const int16_t *f, int32_t len,
                          int8_t *o, int8_t *oq, int32_t ops, const bt_conv_params *p, const cm_conv1 *st) {
  const int32_t m = st->m, sh = st->sh, p2 = st->p2, e1 = st->e1, fast = st->fast;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t i = 0; i < n; i++, ip += step, iq += step, o += ops, oq += ops) {
    int32_t a0 = st->acc0, a1 = st->acc0, k = 0;
    for (; k + 4 <= len; k += 4) {
      int32_t fa, fb;
      __builtin_memcpy(&fa, f + k, 4);
      __builtin_memcpy(&fb, f + k + 2, 4);
      const uint32_t v0 = bt_ld4(ip + k), v1 = bt_ld4(iq + k);
      a0 = bt_smlad(fa, bt_sxtb16(v0), a0); a0 = bt_smlad(fb, bt_sxtb16_ror8(v0), a0);
      a1 = bt_smlad(fa, bt_sxtb16(v1), a1); a1 = bt_smlad(fb, bt_sxtb16_ror8(v1), a1);
    }
    for (; k < len; k++) { a0 += f[k] * ip[k]; a1 += f[k] * iq[k]; }
    *o = cm_out(a0, m, sh, p2, e1, fast, zp, lo, hi);
    *oq = cm_out(a1, m, sh, p2, e1, fast, zp, lo, hi);
  }
}

/* The same along one row of n pixels: neighbouring pixels in pairs, the last one alone. */
static void cm_run_out_long(const int8_t *ip, int32_t step, int32_t n, const int16_t *f, int32_t len, int8_t *o,
                            int32_t ops, const bt_conv_params *p, const cm_conv1 *st) {
  cm_long_pairs(ip, ip + step, 2 * step, n / 2, f, len, o, o + ops, 2 * ops, p, st);
  if (n & 1) {
    ip += (n - 1) * step;
    o += (n - 1) * ops;
    *o = cm_out(cm_dot(ip, f, len, st->acc0), st->m, st->sh, st->p2, st->e1, st->fast, p->output_offset, p->act_min,
                p->act_max);
  }
}

/* n outputs of a conv whose kh tap rows are dense runs of 4G+T values (row r of output i at
   ipr[r] + i*step): all runs summed in registers, then requantised (bt_rq2: st->fast). */
static inline __attribute__((always_inline)) void cm_rows_out(const int8_t *const *ipr, int32_t kh, int32_t step,
                                                             int32_t n, const int16_t *fw, int8_t *o, int32_t ops,
                                                             const bt_conv_params *p, const cm_conv1 *st, const int G,
                                                             const int T, const int Q) {
  const int32_t m = st->m, p2 = Q == CM_SAT ? st->p2z : st->p2, e1 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t i = 0; i < n; i++, o += ops) {
    int32_t a = st->acc0;
    const int16_t *f = fw;
    _Pragma("GCC unroll 8") for (int32_t r = 0; r < kh; r++, f += 4 * G + T) {
      const int8_t *ip = ipr[r] + i * step;
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
        const uint32_t v = bt_ld4(ip + 4 * g);
        int32_t fa, fb;
        __builtin_memcpy(&fa, f + 4 * g, 4);
        __builtin_memcpy(&fb, f + 4 * g + 2, 4);
        a = bt_smlad(fa, bt_sxtb16(v), a);
        a = bt_smlad(fb, bt_sxtb16_ror8(v), a);
      }
      for (int t = 0; t < T; t++) a += f[4 * G + t] * ip[4 * G + t];
    }
    *o = cm_out(a, m, 0, p2, e1, Q, zp, lo, hi);
  }
}

/* Tap row r (9 values at f, widened) of two outputs whose rows start at u and v: each filter word
   loaded once for both. */
#define CM_ROW9_PAIR(u, v, f)                                                                  \
  do {                                                                                         \
    int32_t w0, w1, w2, w3;                                                                    \
    __builtin_memcpy(&w0, (f), 4); __builtin_memcpy(&w1, (f) + 2, 4);                         \
    __builtin_memcpy(&w2, (f) + 4, 4); __builtin_memcpy(&w3, (f) + 6, 4);                     \
    const uint32_t x0 = bt_ld4(u), y0 = bt_ld4(v);                                             \
    a = bt_smlad(w0, bt_sxtb16(x0), a); b = bt_smlad(w0, bt_sxtb16(y0), b);                     \
    a = bt_smlad(w1, bt_sxtb16_ror8(x0), a); b = bt_smlad(w1, bt_sxtb16_ror8(y0), b);           \
    const uint32_t x1 = bt_ld4((u) + 4), y1 = bt_ld4((v) + 4);                                 \
    a = bt_smlad(w2, bt_sxtb16(x1), a); b = bt_smlad(w2, bt_sxtb16(y1), b);                     \
    a = bt_smlad(w3, bt_sxtb16_ror8(x1), a); b = bt_smlad(w3, bt_sxtb16_ror8(y1), b);           \
    const int32_t f8 = (f)[8];                                                                 \
    a += f8 * (u)[8]; b += f8 * (v)[8];                                                        \
    __asm__("" : "+r"(a), "+r"(b));   /* one tap row at a time: gcc would interleave and spill */ \
  } while (0)

/* cm_rows_out for 3 tap rows of 9 values (a 3x3 conv on 3 channels: an RGB stem): outputs two at
   a time sharing each filter load, an odd last one alone. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
/* One tap row of CM_ROWS9_ASM: the row's 9 bytes at u (pixel a) and v = u + step (pixel b), its
   widened filter at byte FO of f: 2 LDR + 4 SXTB16 + 4 SMLAD per 4 values of both pixels, the filter
   words loaded once for both. */
#define CM_ROW9_ASM(FO)                                                \
  "add %[v], %[u], %[step]\n\t"                                       \
  "ldr %[x], [%[u]]\n\t"                                              \
  "ldr %[y], [%[v]]\n\t"                                              \
  CM_SMLAD_XY4("#" #FO)                                             \
  "ldr %[x], [%[u], #4]\n\t"                                          \
  "ldr %[y], [%[v], #4]\n\t"                                          \
  CM_SMLAD_XY4("#" #FO "+8")                                        \
  "ldrsh %[w], [%[f], #" #FO "+16]\n\t"                               \
  "ldrsb %[x], [%[u], #8]\n\t"                                        \
  "ldrsb %[y], [%[v], #8]\n\t"                                        \
  "smlabb %[a], %[w], %[x], %[a]\n\t"                                 \
  "smlabb %[b], %[w], %[y], %[b]\n\t"
/* The same for one pixel (u): 2 LDR + 2 SXTB16 + 2 SMLAD per 4 values. */
#define CM_ROW9_ONE(FO)                                                \
  "ldr %[x], [%[u]]\n\t"                                              \
  "ldr %[w], [%[f], #" #FO "]\n\t"                                    \
  "sxtb16 %[t], %[x]\n\t"                                             \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[w], [%[f], #" #FO "+4]\n\t"                                  \
  "sxtb16 %[t], %[x], ror #8\n\t"                                     \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[x], [%[u], #4]\n\t"                                          \
  "ldr %[w], [%[f], #" #FO "+8]\n\t"                                  \
  "sxtb16 %[t], %[x]\n\t"                                             \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[w], [%[f], #" #FO "+12]\n\t"                                 \
  "sxtb16 %[t], %[x], ror #8\n\t"                                     \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldrsh %[w], [%[f], #" #FO "+16]\n\t"                               \
  "ldrsb %[x], [%[u], #8]\n\t"                                        \
  "smlabb %[a], %[w], %[x], %[a]\n\t"
#endif

/* cm_rows_out for 3 tap rows of 9 values (a 3x3 conv on 3 channels: an RGB stem): outputs two at
   a time sharing each filter load (the DSP version's sums in asm: gcc's schedule of the same C
   spilled), an odd last one alone. */
static inline __attribute__((always_inline)) void cm_rows_out_3x9(const int8_t *const *ipr, int32_t step, int32_t n,
                                                     const int16_t *fw, int8_t *o, int32_t ops,
                                                     const bt_conv_params *p, const cm_conv1 *st, const int Q) {
  const int32_t m = st->m, p2 = Q == CM_SAT ? st->p2z : st->p2, e1 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int8_t *r0 = ipr[0], *r1 = ipr[1], *r2 = ipr[2];
  int32_t i = 0;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
  const int32_t d1 = r1 - r0, d2 = r2 - r0, acc0 = st->acc0;
  for (; i + 2 <= n; i += 2, o += 2 * ops, r0 += 2 * step) {
    int32_t a = acc0, b = acc0;
    const int8_t *u = r0, *v;
    uint32_t x, y, w, t;
    __asm__ volatile(CM_ROW9_ASM(0)
                     "ldr %[u], %[d1]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ASM(18)
                     "ldr %[u], %[d2]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ASM(36)
                     : [a] "+r"(a), [b] "+r"(b), [u] "+&r"(u), [v] "=&r"(v), [x] "=&r"(x), [y] "=&r"(y),
                       [w] "=&r"(w), [t] "=&r"(t)
                     : [r0] "r"(r0), [f] "r"(fw), [step] "r"(step), [d1] "m"(d1), [d2] "m"(d2)
                     : "memory");
    o[0] = cm_out(a, m, 0, p2, e1, Q, zp, lo, hi);
    o[ops] = cm_out(b, m, 0, p2, e1, Q, zp, lo, hi);
  }
  if (i < n) {   /* the odd last output */
    int32_t a = acc0;
    const int8_t *u = r0;
    uint32_t x, w, t;
    __asm__ volatile(CM_ROW9_ONE(0)
                     "ldr %[u], %[d1]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ONE(18)
                     "ldr %[u], %[d2]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ONE(36)
                     : [a] "+r"(a), [u] "+&r"(u), [x] "=&r"(x), [w] "=&r"(w), [t] "=&r"(t)
                     : [r0] "r"(r0), [f] "r"(fw), [d1] "m"(d1), [d2] "m"(d2)
                     : "memory");
    o[0] = cm_out(a, m, 0, p2, e1, Q, zp, lo, hi);
  }
  return;
#else
  for (; i + 2 <= n; i += 2, o += 2 * ops, r0 += 2 * step, r1 += 2 * step, r2 += 2 * step) {
    int32_t a = st->acc0, b = st->acc0;
    CM_ROW9_PAIR(r0, r0 + step, fw);
    CM_ROW9_PAIR(r1, r1 + step, fw + 9);
    CM_ROW9_PAIR(r2, r2 + step, fw + 18);
    o[0] = cm_out(a, m, 0, p2, e1, Q, zp, lo, hi);
    o[ops] = cm_out(b, m, 0, p2, e1, Q, zp, lo, hi);
  }
#endif
  if (i < n) {
    const int8_t *last[3] = {r0, r1, r2};
    cm_rows_out(last, 3, step, 1, fw, o, ops, p, st, 2, 1, Q);
  }
}

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
/* The 3x9 patch of an RGB stem's output pixel x (tap rows from input row iy0) into pb, 12 bytes a tap row, the
   input's zero point z where a tap leaves the input. */
static inline __attribute__((always_inline)) void cm_gather9(const bt_conv_params *p, const box_src *s, int8_t *pb,
                                                            int32_t iy0, int32_t x, int8_t z) {
  const int32_t ps = p->in.pixel_stride, ix0 = x * p->stride_w - p->pad_left;
  for (int32_t ky = 0; ky < 3; ky++) {
    const int32_t iy = iy0 + ky * p->dil_h;
    int8_t *dst = pb + 12 * ky;
    const int8_t *row = (uint32_t)iy < (uint32_t)p->in.h ? box_row(s, iy) : 0;
    for (int32_t kx = 0; kx < 3; kx++, dst += 3) {
      const int32_t ix = ix0 + kx;
      if (row && (uint32_t)ix < (uint32_t)p->in.w) {
        const int8_t *q = row + ix * ps;
        dst[0] = q[0]; dst[1] = q[1]; dst[2] = q[2];
      } else {
        dst[0] = z; dst[1] = z; dst[2] = z;
      }
    }
  }
}

/* One stem output's sum from a gathered patch pb (cm_gather9) with the widened filter fw, from a. */
static inline __attribute__((always_inline)) int32_t cm_patch9(const int8_t *pb, const int16_t *fw, int32_t a) {
  const int32_t d1 = 12, d2 = 24;
  const int8_t *u = pb;
  uint32_t xv, w, t;
  __asm__ volatile(CM_ROW9_ONE(0)
                   "ldr %[u], %[d1]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ONE(18)
                   "ldr %[u], %[d2]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ONE(36)
                   : [a] "+r"(a), [u] "+&r"(u), [x] "=&r"(xv), [w] "=&r"(w), [t] "=&r"(t)
                   : [r0] "r"(pb), [f] "r"(fw), [d1] "m"(d1), [d2] "m"(d2)
                   : "memory");
  return a;
}

/* Border pixels [xa, xb) of an RGB stem's output row (tap rows from input row iy0, a 3-wide tap row
   of 3 channels = 9 bytes; st->row1 == 2, bt_rq2): each pixel's taps gathered into a 3x9 patch whose
   taps outside the input hold the input's zero point (their terms vanish: the input offset is folded
   into the start value), then the one-pixel asm of cm_rows_out_3x9 (cm_patch9); fw, acc0, m, p2, e1: the
   channel's widened filter, start value and requantisation. */
static void cm_row9_padded_f(const bt_conv_params *p, const int16_t *fw, int32_t acc0, int32_t m, int32_t p2,
                             int32_t e1, const box_src *s, int8_t *orow, int32_t iy0, int32_t xa, int32_t xb) {
  int8_t pb[36] __attribute__((aligned(4)));
  const int8_t z = (int8_t)(-p->input_offset);
  const int32_t ops = p->out.pixel_stride, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t x = xa; x < xb; x++) {
    cm_gather9(p, s, pb, iy0, x, z);
    orow[x * ops] = cm_out(cm_patch9(pb, fw, acc0), m, 0, p2, e1, 1, zp, lo, hi);
  }
}

/* The same for two channels (filters widened at fw and 28 int16s on, values k[0], k[1]) into orow and qrow:
   each patch gathered once for both. */
static void cm_row9_padded2(const bt_conv_params *p, const int16_t *fw, const cm_chq *k, const box_src *s,
                            int8_t *orow, int8_t *qrow, int32_t iy0, int32_t xa, int32_t xb) {
  int8_t pb[36] __attribute__((aligned(4)));
  const int8_t z = (int8_t)(-p->input_offset);
  const int32_t ops = p->out.pixel_stride, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t x = xa; x < xb; x++) {
    cm_gather9(p, s, pb, iy0, x, z);
    orow[x * ops] = cm_out(cm_patch9(pb, fw, k[0].acc0), k[0].m, 0, k[0].p2, k[0].e1, k[0].q, zp, lo, hi);
    qrow[x * ops] = cm_out(cm_patch9(pb, fw + 28, k[1].acc0), k[1].m, 0, k[1].p2, k[1].e1, k[1].q, zp, lo, hi);
  }
}
static void cm_row9_padded(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, int8_t *orow,
                           int32_t iy0, int32_t xa, int32_t xb) {
  cm_row9_padded_f(p, st->fw, st->acc0, st->m, st->p2, st->e1, s, orow, iy0, xa, xb);
}
#endif

/* Interior pixels [xa, xa + n) of rows [ya, ya + nr) of a conv whose tap rows are dense runs of at
   most 16 values (kh <= CM_KH), requantised by bt_rq2: one pass per output row. */
static void conv1_dense(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, const box_dst *d,
                        int32_t ya, int32_t nr, int32_t xa, int32_t n) {
  const int32_t ps = p->in.pixel_stride, step = p->stride_w * ps, ops = p->out.pixel_stride, kh = p->kh;
  const int32_t ix = (xa * p->stride_w - p->pad_left) * ps;
  const int8_t *ipr[CM_KH];
  for (int32_t j = 0; j < nr; j++) {
    const int32_t iy = (ya + j) * p->stride_h - p->pad_top;
    for (int32_t r = 0; r < kh; r++) ipr[r] = box_row(s, iy + r * p->dil_h) + ix;
    int8_t *o = box_orow(d, ya + j) + xa * ops;
    if (kh == 3 && st->run == 9) {
      CM_QCALL(st->sat, cm_rows_out_3x9(ipr, step, n, st->fw, o, ops, p, st, QQ));
      continue;
    }
    switch (st->run) {
#define CM_RUN(k)                                                                          \
  case k:                                                                                  \
    CM_QCALL(st->sat, cm_rows_out(ipr, kh, step, n, st->fw, o, ops, p, st, (k) >> 2, (k) & 3, QQ)); \
    break;
      CM_RUN(1) CM_RUN(2) CM_RUN(3) CM_RUN(4) CM_RUN(5) CM_RUN(6) CM_RUN(7) CM_RUN(8)
      CM_RUN(9) CM_RUN(10) CM_RUN(11) CM_RUN(12) CM_RUN(13) CM_RUN(14) CM_RUN(15) CM_RUN(16)
#undef CM_RUN
      default: break;   /* not taken: conv1_rows checks the run length */
    }
  }
}

/* Interior pixels [xa, xa + n) of rows [ya, ya + nr) of a conv whose taps are one run (st->nrun 1):
   row by row, one pass each. */
static void conv1_single(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, const box_dst *d,
                         int32_t ya, int32_t nr, int32_t xa, int32_t n) {
  const int32_t ps = p->in.pixel_stride, step = p->stride_w * ps, ops = p->out.pixel_stride;
  const int32_t ix = (xa * p->stride_w - p->pad_left) * ps;
  int32_t j = 0;
  if (!st->fast || st->run > 16)   /* long runs: two rows at a time (pairs however narrow the rows) */
    for (; j + 2 <= nr; j += 2)
      cm_long_pairs(box_row(s, (ya + j) * p->stride_h - p->pad_top) + ix,
                    box_row(s, (ya + j + 1) * p->stride_h - p->pad_top) + ix, step, n, st->fw, st->run,
                    box_orow(d, ya + j) + xa * ops, box_orow(d, ya + j + 1) + xa * ops, ops, p, st);
#ifdef CM_ROWS_PAIRS
  /* runs of 12..16 values: the rows' pixels two at a time (shorter runs load few filter words a pixel,
     and the pair's extra live values cost more than the loads it shares) */
  if (st->fast && st->run >= 12 && st->run <= 16 && j < nr) {
    switch (st->run) {
#define CM_RUNP(k)                                                                      \
  case k:                                                                               \
    CM_QCALL(st->sat, cm_rows_pairs(p, st, s, d, ya + j, nr - j, xa, n, (k) >> 2, (k) & 3, QQ)); \
    break;
      CM_RUNP(12) CM_RUNP(13) CM_RUNP(14) CM_RUNP(15) CM_RUNP(16)
#undef CM_RUNP
      default: break;
    }
    return;
  }
#endif
  for (; j < nr; j++) {
    const int8_t *ip = box_row(s, (ya + j) * p->stride_h - p->pad_top) + ix;
    int8_t *o = box_orow(d, ya + j) + xa * ops;
    switch (st->fast ? st->run : 0) {
#define CM_RUN(k)                                                                     \
  case k:                                                                             \
    CM_QCALL(st->sat, cm_run_out(ip, step, n, st->fw, o, ops, p, st, (k) >> 2, (k) & 3, QQ)); \
    break;
      CM_RUN(1) CM_RUN(2) CM_RUN(3) CM_RUN(4) CM_RUN(5) CM_RUN(6) CM_RUN(7) CM_RUN(8)
      CM_RUN(9) CM_RUN(10) CM_RUN(11) CM_RUN(12) CM_RUN(13) CM_RUN(14) CM_RUN(15) CM_RUN(16)
#undef CM_RUN
      default: cm_run_out_long(ip, step, n, st->fw, st->run, o, ops, p, st); break;
    }
  }
}

/* Interior pixels [xa, xa + n) of rows [ya, ya + nr) (all taps inside) into d: per tap
   row (or tap), one pass adding that run's dot products to the sums, then one requantisation pass.
   Row bands (s->rows) take one row per pass. */
static void conv1_chunk(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, const box_dst *d,
                        int32_t ya, int32_t nr, int32_t xa, int32_t n) {
  int32_t acc[CM_CHUNK];
  const int32_t ps = p->in.pixel_stride, run = st->run, dh = p->dil_h;
  const int32_t iy = ya * p->stride_h - p->pad_top, ix = xa * p->stride_w - p->pad_left;
  for (int32_t i = 0; i < nr * n; i++) acc[i] = st->acc0;
  const int16_t *f = st->fw;
  for (int32_t ky = 0; ky < p->kh; ky++)
    for (int32_t kx = 0; kx < (st->dense ? 1 : p->kw); kx++, f += run) {
      const int32_t xo = (ix + kx * p->dil_w) * ps;
      if (s->rows) {
        for (int32_t j = 0; j < nr; j++) {
          const cm_pass pass = {s->rows[iy + j * p->stride_h + ky * dh] + s->xoff + xo, p->stride_w * ps, n, 1, 0};
          cm_pass_run(&pass, f, run, acc + j * n);
        }
      } else {
        const cm_pass pass = {box_row(s, iy + ky * dh) + xo, p->stride_w * ps, n, nr, s->row * p->stride_h};
        cm_pass_run(&pass, f, run, acc);
      }
    }
  const int32_t m = st->m, sh = st->sh, p2 = st->p2, e1 = st->e1, fast = st->fast;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, ops = p->out.pixel_stride;
  const int32_t *a = acc;
  for (int32_t j = 0; j < nr; j++) {
    int8_t *o = box_orow(d, ya + j) + xa * ops;
    if (fast) for (int32_t i = 0; i < n; i++, o += ops) *o = cm_out(*a++, m, 0, p2, e1, 1, zp, lo, hi);
    else for (int32_t i = 0; i < n; i++, o += ops) *o = cm_out(*a++, m, sh, 0, 0, 0, zp, lo, hi);
  }
}

/* Output rows [y0, y1) of a one-output-channel conv into d:
   rows and columns whose taps leave the input pixel by pixel, the interior in chunks of at most
   CM_CHUNK pixels (several rows per chunk when they fit). */
static void conv1_rows(const bt_conv_params *p, const cm_conv1 *st, const box_src *s, const box_dst *d,
                       int32_t y0, int32_t y1) {
  int32_t ya, yb;
  box_inside_rows(p, y0, y1, &ya, &yb);
  for (int32_t y = y0; y < ya; y++) conv1_edge(p, st, s, box_orow(d, y), y, 0, p->out.w);
  for (int32_t y = yb > ya ? yb : ya; y < y1; y++) conv1_edge(p, st, s, box_orow(d, y), y, 0, p->out.w);
  const int32_t xi0 = st->xi0, xi1 = st->xi1, n = xi1 - xi0;
  if (ya >= yb) return;
  if (xi0 > 0 || xi1 < p->out.w)
    for (int32_t y = ya; y < yb; y++) {
      conv1_edge(p, st, s, box_orow(d, y), y, 0, xi0);
      conv1_edge(p, st, s, box_orow(d, y), y, xi1, p->out.w);
    }
  if (n <= 0) return;
  const int32_t rows_per = n > CM_CHUNK ? 1 : CM_CHUNK / n;
  void (*const chunk)(const bt_conv_params *, const cm_conv1 *, const box_src *, const box_dst *, int32_t, int32_t,
                      int32_t, int32_t) =
      st->nrun == 1 ? conv1_single
      : st->dense && st->fast && st->run <= 16 && p->kh <= CM_KH ? conv1_dense : conv1_chunk;
  for (int32_t y = ya; y < yb; y += rows_per) {
    const int32_t nr = yb - y < rows_per ? yb - y : rows_per;
    for (int32_t xa = xi0; xa < xi1; xa += CM_CHUNK)
      chunk(p, st, s, d, y, nr, xa, xi1 - xa < CM_CHUNK ? xi1 - xa : CM_CHUNK);
  }
}

/* Output row y of a one-output-channel conv into d (a pulled stem's row, fx_k_pulled): a dense conv
   without conv1_rows' row-range or chunk bookkeeping, inlined into its caller. */
static inline __attribute__((always_inline)) void conv1_row1(const bt_conv_params *p, const cm_conv1 *st,
                                                            const box_src *s, const box_dst *d, int32_t y) {
  if (st->row1 && st->fast) {
    const int32_t iy = y * p->stride_h - p->pad_top, xi0 = st->xi0, xi1 = st->xi1;
    int8_t *const orow = box_orow(d, y);
    if (iy < 0 || iy + (p->kh - 1) * p->dil_h >= p->in.h || xi1 <= xi0) {
      conv1_edge(p, st, s, orow, y, 0, p->out.w);
      return;
    }
    if (xi0 > 0) conv1_edge(p, st, s, orow, y, 0, xi0);
    if (xi1 < p->out.w) conv1_edge(p, st, s, orow, y, xi1, p->out.w);
    if (st->row1 == 2 && !s->rows) {   /* an RGB stem's row: straight to its loop */
      const int32_t ps = p->in.pixel_stride, dy = s->row * p->dil_h;
      const int8_t *const b = s->base + (iy - s->y0) * s->row + (xi0 * p->stride_w - p->pad_left) * ps;
      const int8_t *const ipr[3] = {b, b + dy, b + 2 * dy};
      CM_QCALL(st->sat, cm_rows_out_3x9(ipr, p->stride_w * ps, xi1 - xi0, st->fw, orow + xi0 * p->out.pixel_stride,
                                        p->out.pixel_stride, p, st, QQ));
      return;
    }
    conv1_dense(p, st, s, d, y, 1, xi0, xi1 - xi0);
    return;
  }
  conv1_rows(p, st, s, d, y, y + 1);
}
#define FX_CONV1_ROW1

/* One depthwise output (channel 0) at a border pixel: the valid taps only. */
static int32_t dw1_border(const bt_conv_params *p, const int8_t *in, int32_t in_y0, const int8_t *fk,
                          int32_t iy0, int32_t ix0) {
  const int32_t ps = p->in.pixel_stride, in_row = p->in.w * ps, off = p->input_offset;
  int32_t ky0, ky1, kx0, kx1, acc = p->bias ? p->bias[0] : 0;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &ky0, &ky1);
  box_taps(ix0, p->kw, p->dil_w, p->in.w, &kx0, &kx1);
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ps;
  const int8_t *rp = in + (iy0 + ky0 * p->dil_h - in_y0) * in_row + (ix0 + kx0 * p->dil_w) * ps;
  for (int32_t ky = ky0; ky < ky1; ky++, rp += dy) {
    const int8_t *ip = rp;
    const int8_t *f = fk + ky * p->kw + kx0;
    for (int32_t kx = kx0; kx < kx1; kx++, ip += dx) acc += *f++ * (*ip + off);
  }
  return acc;
}

/* A 3x3 one-channel depthwise's filter as SMLAD operands: f02[r] = taps (r,0) and (r,2) as an
   int16 pair, f1[r] = tap (r,1); acc0 the start value (bias and folded input offset). */
typedef struct {
  int32_t f02[3], f1[3], acc0;
} cm_dw3;

/* Tap row t (its bytes at r) of a 3x3 one-channel depthwise: x0..x3 as (x0, x2) e, (x1, x3) d; output
   i adds f02 . e + f1 * x1, output i + 1 f02 . d + f1 * x2. */
#define CM_DW3_PAIR(t, r)                                                   \
  do {                                                                      \
    const uint32_t v = bt_ld4(r);                                           \
    const int32_t e = bt_sxtb16(v), d = bt_sxtb16_ror8(v);                  \
    s0 = bt_smlad(k->f02[t], e, s0); s0 = bt_smlabb(k->f1[t], d, s0);       \
    s1 = bt_smlad(k->f02[t], d, s1); s1 = cm_smlabt(k->f1[t], e, s1);       \
  } while (0)
/* Tap row t of one output from the word at r (x3 unused). */
#define CM_DW3_ONE(t, r)                                                    \
  do {                                                                      \
    const uint32_t v = bt_ld4(r);                                           \
    s0 = bt_smlad(k->f02[t], bt_sxtb16(v), s0);                             \
    s0 = bt_smlabb(k->f1[t], bt_sxtb16_ror8(v), s0);                        \
  } while (0)
/* Tap row t of one output, byte by byte (the last output: a word would reach past its taps). */
#define CM_DW3_BYTES(t, r) (s0 += (int16_t)k->f02[t] * (r)[0] + k->f1[t] * (r)[1] + (k->f02[t] >> 16) * (r)[2])

/* n outputs of one row of a 3x3 undilated depthwise on a dense one-channel input (r0, r1, r2: the tap
   rows of the first output), stride 1: the words x0..x3 of each tap row serve two outputs (SMLAD on bytes
   0,2 / 1,3 plus SMLABB / SMLABT for the middle tap); bt_rq2. */
static inline __attribute__((always_inline)) void dw3_s1_q(const cm_dw3 *k, const int8_t *r0, const int8_t *r1,
                                                           const int8_t *r2, int32_t n, int8_t *o, int32_t ops,
                                                           const bt_conv_params *p, const cm_conv1 *st, const int Q) {
  const int32_t m = st->m, p2 = Q == CM_SAT ? st->p2z : st->p2, e1 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  int32_t i = 0;
  for (; i + 2 <= n; i += 2, o += 2 * ops, r0 += 2, r1 += 2, r2 += 2) {
    int32_t s0 = k->acc0, s1 = k->acc0;
    CM_DW3_PAIR(0, r0); CM_DW3_PAIR(1, r1); CM_DW3_PAIR(2, r2);
    o[0] = cm_out(s0, m, 0, p2, e1, Q, zp, lo, hi);
    o[ops] = cm_out(s1, m, 0, p2, e1, Q, zp, lo, hi);
  }
  if (i < n) {
    int32_t s0 = k->acc0;
    CM_DW3_BYTES(0, r0); CM_DW3_BYTES(1, r1); CM_DW3_BYTES(2, r2);
    o[0] = cm_out(s0, m, 0, p2, e1, Q, zp, lo, hi);
  }
}
static __attribute__((noinline)) void dw3_s1(const cm_dw3 *k, const int8_t *r0, const int8_t *r1, const int8_t *r2,
                                             int32_t n, int8_t *o, int32_t ops, const bt_conv_params *p,
                                             const cm_conv1 *st) {
  CM_QCALL(st->sat, dw3_s1_q(k, r0, r1, r2, n, o, ops, p, st, QQ));
}

/* The same at stride s > 1: one output per word of each tap row (x3 unused), the last output byte by
   byte. */
static inline __attribute__((always_inline)) void dw3_sn_q(const cm_dw3 *k, const int8_t *r0, const int8_t *r1,
                                                           const int8_t *r2, int32_t s, int32_t n, int8_t *o,
                                                           int32_t ops, const bt_conv_params *p, const cm_conv1 *st,
                                                           const int Q) {
  const int32_t m = st->m, p2 = Q == CM_SAT ? st->p2z : st->p2, e1 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t i = 0; i < n; i++, o += ops, r0 += s, r1 += s, r2 += s) {
    int32_t s0 = k->acc0;
    if (i + 1 < n) { CM_DW3_ONE(0, r0); CM_DW3_ONE(1, r1); CM_DW3_ONE(2, r2); }
    else { CM_DW3_BYTES(0, r0); CM_DW3_BYTES(1, r1); CM_DW3_BYTES(2, r2); }
    o[0] = cm_out(s0, m, 0, p2, e1, Q, zp, lo, hi);
  }
}
static __attribute__((noinline)) void dw3_sn(const cm_dw3 *k, const int8_t *r0, const int8_t *r1, const int8_t *r2,
                                             int32_t s, int32_t n, int8_t *o, int32_t ops, const bt_conv_params *p,
                                             const cm_conv1 *st) {
  CM_QCALL(st->sat, dw3_sn_q(k, r0, r1, r2, s, n, o, ops, p, st, QQ));
}

/* nr rows of n outputs each of a 3x3 undilated depthwise on a dense one-channel input whose taps all
   stay inside, stride 1 along rows (ip: the first output's first tap row, in_row bytes an input row, rs
   input bytes between output rows; o: the first output, os bytes between output rows): dw3_s1 row after
   row without the per-row bookkeeping of dw1_chan (at larger strides, measured slower than dw3_sn per row). */
static inline __attribute__((always_inline)) void dw3_rows_q(const cm_dw3 *k, const int8_t *ip, int32_t in_row,
                                                             int32_t rs, int32_t nr, int32_t n, int8_t *o, int32_t os,
                                                             const bt_conv_params *p, const cm_conv1 *st,
                                                             const int Q) {
  const int32_t ops = p->out.pixel_stride;
  for (int32_t j = 0; j < nr; j++, ip += rs, o += os) dw3_s1_q(k, ip, ip + in_row, ip + 2 * in_row, n, o, ops, p, st, Q);
}
static __attribute__((noinline)) void dw3_rows(const cm_dw3 *k, const int8_t *ip, int32_t in_row, int32_t rs,
                                               int32_t nr, int32_t n, int8_t *o, int32_t os, const bt_conv_params *p,
                                               const cm_conv1 *st) {
  CM_QCALL(st->sat, dw3_rows_q(k, ip, in_row, rs, nr, n, o, os, p, st, QQ));
}

/* n outputs of one row of a one-channel depthwise (rp[ky]: tap row ky of the first output):
   3x3 undilated by dw3_s1 / dw3_sn, other undilated widths by cm_rows_out (taps widened per tap row
   in st->fw), the rest (dilated, or requantised without bt_rq2) tap by tap. */
static void dw1_row(const bt_conv_params *p, const cm_conv1 *st, const cm_dw3 *k3, int fast3, const int8_t *fk,
                    const int8_t *const *rp, int32_t n, int8_t *o) {
  const int32_t ops = p->out.pixel_stride, ps = p->in.pixel_stride, step = p->stride_w * ps, dx = p->dil_w * ps;
  if (fast3 && st->fast && p->stride_w == 1) { dw3_s1(k3, rp[0], rp[1], rp[2], n, o, ops, p, st); return; }
  if (fast3 && st->fast) { dw3_sn(k3, rp[0], rp[1], rp[2], p->stride_w, n, o, ops, p, st); return; }
  if (st->fast && dx == 1)
    switch (p->kw) {
#define CM_RUN(k)                                                                                \
  case k:                                                                                        \
    CM_QCALL(st->sat, cm_rows_out(rp, p->kh, step, n, st->fw, o, ops, p, st, (k) >> 2, (k) & 3, QQ)); \
    return;
      CM_RUN(1) CM_RUN(2) CM_RUN(3) CM_RUN(4) CM_RUN(5) CM_RUN(6) CM_RUN(7) CM_RUN(8)
#undef CM_RUN
      default: break;
    }
  for (int32_t i = 0; i < n; i++, o += ops) {
    int32_t acc = st->acc0;
    const int8_t *f = fk;
    for (int32_t ky = 0; ky < p->kh; ky++) {
      const int8_t *q = rp[ky] + i * step;
      for (int32_t kx = 0; kx < p->kw; kx++, q += dx) acc += *f++ * *q;
    }
    *o = cm_out(acc, st->m, st->sh, st->p2, st->e1, st->fast, p->output_offset, p->act_min, p->act_max);
  }
}

/* Output row y of a one-channel depthwise, pixels [xa, xb), one at a time through dw1_border. */
static void dw1_edge(const bt_conv_params *p, const int8_t *in, int32_t in_y0, const int8_t *fk,
                     const cm_conv1 *st, int8_t *orow, int32_t y, int32_t xa, int32_t xb) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ops = p->out.pixel_stride;
  for (int32_t x = xa; x < xb; x++)
    orow[x * ops] = cm_out(dw1_border(p, in, in_y0, fk, iy0, x * p->stride_w - p->pad_left), st->m, st->sh, st->p2,
                           st->e1, st->fast, p->output_offset, p->act_min, p->act_max);
}

#define CM_PADB 1024   /* bytes of padded tap rows dw1_padded holds (kh + 1 rows) */
#define CM_ZROW 256    /* bytes of the zero-point row standing in for tap rows above / below the input */
/* Both live in the part of cm_conv1's fw a depthwise's taps leave free. */
_Static_assert(2 * (CM_K_MAX - CM_TAPS) >= CM_PADB && CM_PADB >= CM_ZROW, "depthwise scratch");

/* src[0..n) into dst, then bytes of value z up to dst[m). */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void cm_fill(int8_t *dst, const int8_t *src, int32_t n, int32_t m, int8_t z) {
  int32_t i = 0;
  for (; i < n; i++) dst[i] = src[i];
  for (; i < m; i++) dst[i] = z;
}

/* Rows [y0, y1) of an undilated one-channel depthwise (dense input, in_row bytes a row) into d with
   every output through dw1_row, for boxes that are mostly border (small maps): each input row the
   taps read copied once into a ring of kh rows, padded with the input's zero point at the sides (a
   tap row above or below the input: a row of it); the padded terms vanish with the input offset
   folded into the start value; buf: CM_PADB bytes. 0 when the rows do not fit. */
static int dw1_padded(const bt_conv_params *p, const cm_conv1 *st, const cm_dw3 *k3, int fast3, const int8_t *fk,
                      int8_t *buf, const int8_t *in, int32_t in_y0, int32_t in_row, const box_dst *d, int32_t y0,
                      int32_t y1) {
  const int32_t kh = p->kh, lo = -p->pad_left, hi = (p->out.w - 1) * p->stride_w - p->pad_left + p->kw;
  const int32_t pw = (hi - lo + 3) & ~3, z = -p->input_offset;
  if (p->dil_h != 1 || p->dil_w != 1 || p->in.pixel_stride != 1 || z < -128 || z > 127 || (kh + 1) * pw > CM_PADB)
    return 0;
  int8_t *const zrow = buf + kh * pw;
  const int32_t a = lo < 0 ? 0 : lo, b = hi < p->in.w ? hi : p->in.w;   /* input columns the taps read */
  int32_t tag[CM_KH];
  cm_fill(zrow, 0, 0, pw, (int8_t)z);
  for (int32_t t = 0; t < kh; t++) tag[t] = -1;
  for (int32_t y = y0; y < y1; y++) {
    const int8_t *rp[CM_KH];
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t ky = 0; ky < kh; ky++) {
      const int32_t iy = iy0 + ky;
      int8_t *slot = buf + (iy % kh) * pw;
      if (iy < 0 || iy >= p->in.h) slot = zrow;
      else if (tag[iy % kh] != iy) {
        cm_fill(slot, 0, 0, a - lo, (int8_t)z);
        cm_fill(slot + (a - lo), in + (iy - in_y0) * in_row + a, b - a, pw - (a - lo), (int8_t)z);
        tag[iy % kh] = iy;
      }
      rp[ky] = slot;
    }
    dw1_row(p, st, k3, fast3, fk, rp, p->out.w, box_orow(d, y));
  }
  return 1;
}

/* A one-channel depthwise's values for a tile: its geometry (the same for every channel of a
   channelwise window) and its channel's filter, start value and requantisation. */
typedef struct {
  cm_conv1 st;   /* requantisation, interior columns and (fw, not for fast3) the taps widened per tap row;
                    the rest of fw: the zero-point row / padded rows (CM_PADB bytes) */
  cm_dw3 k3;
  int fast3, zr, padded;
  int32_t ya, yb, n, in_row;
} cm_dw1;

/* w's geometry for rows [y0, y1) of p; 0 when this path does not apply. */
static int dw1_geo(const bt_depthwise_params *dp, int32_t y0, int32_t y1, cm_dw1 *w) {
  const bt_conv_params *p = &dp->conv;
  const int32_t kh = p->kh, kw = p->kw, ps = p->in.pixel_stride;
  if (p->out.c != 1 || dp->depth_multiplier != 1 || kh * kw > CM_TAPS || kh > CM_KH) return 0;
  w->fast3 = kh == 3 && kw == 3 && p->dil_h == 1 && p->dil_w == 1 && ps == 1;
  box_interior(p, &w->st.xi0, &w->st.xi1);
  const int32_t n = w->st.xi1 - w->st.xi0, z = -p->input_offset;
  const int32_t span = n > 0 ? ((n - 1) * p->stride_w + (kw - 1) * p->dil_w + 1) * ps : 0;
  w->n = n;
  w->in_row = p->in.w * ps;
  box_inside_rows(p, y0, y1, &w->ya, &w->yb);
  const int32_t inner = w->yb > w->ya && n > 0 ? (w->yb - w->ya) * n : 0;
  w->padded = 2 * inner < (y1 - y0) * p->out.w;
  /* rows with taps above or below the input: through the zero-point row when it can stand in */
  w->zr = (w->ya > y0 || w->yb < y1) && n > 0 && span <= CM_ZROW && ps == 1 && z >= -128 && z <= 127;
  uint32_t *const zw = (uint32_t *)(w->st.fw + CM_TAPS);
  if (w->zr)
    for (int32_t i = 0; i < (span + 3) / 4; i++) zw[i] = (uint32_t)(uint8_t)z * 0x01010101u;
  return 1;
}

/* Rows [y0, y1) of p's channel into d, w's geometry worked out (dw1_geo): per output row, the columns
   whose taps stay inside the input columns go through dw1_row, a tap row above or below the input
   read as a row of the input's zero point (its terms vanish: the input offset is folded into the start
   value); the few side pixels (and whole rows when that row would not fit CM_ZROW) pixel by pixel;
   boxes that are mostly border through dw1_padded when it can. */
static void dw1_chan(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d,
                     int32_t y0, int32_t y1, cm_dw1 *w) {
  const bt_conv_params *p = &dp->conv;
  const int32_t kh = p->kh, kw = p->kw, ps = p->in.pixel_stride;
  const int8_t *fk = p->filter;
  cm_conv1 *const st = &w->st;
  cm_dw3 *const k3 = &w->k3;
  const int fast3 = w->fast3;
  int8_t *const scratch = (int8_t *)(st->fw + CM_TAPS);
  int32_t fsum = 0;
  for (int32_t t = 0; t < kh * kw; t++) fsum += fk[t];
  if (!fast3)
    for (int32_t r = 0; r < kh; r++) cm_widen(p->filter + r * kw, st->fw + r * kw, kw);
  cm_chan_values(p, st, fsum);
  if (fast3)
    for (int t = 0; t < 3; t++) { k3->f02[t] = cm_pack(fk[3 * t], fk[3 * t + 2]); k3->f1[t] = fk[3 * t + 1]; }
  k3->acc0 = st->acc0;
  const int32_t in_row = w->in_row, xi0 = st->xi0, xi1 = st->xi1, n = w->n, ya = w->ya, yb = w->yb;
  if (w->padded && dw1_padded(p, st, k3, fast3, fk, scratch, in, in_y0, in_row, d, y0, y1)) return;
  const int zr = w->zr;
  /* rows whose every tap is inside (no side pixels): dw3_rows in one call */
  int32_t yf0 = y1, yf1 = y1;
  if (fast3 && st->fast && p->stride_w == 1 && xi0 == 0 && xi1 == p->out.w && n > 0 && !d->b->rows) {
    yf0 = ya > y0 ? ya : y0;
    yf1 = yb < y1 ? yb : y1;
    if (yf1 <= yf0) yf0 = yf1 = y1;
  }
  for (int32_t y = y0; y < y1; y++) {
    if (y == yf0) {
      const int32_t iy0 = y * p->stride_h - p->pad_top, ix = -p->pad_left * ps;
      dw3_rows(k3, in + (iy0 - in_y0) * in_row + ix, in_row, p->stride_h * in_row, yf1 - yf0, n, box_orow(d, y),
               d->b->wp * d->b->ps, p, st);
      y = yf1 - 1;
      continue;
    }
    int8_t *orow = box_orow(d, y);
    if ((y < ya || y >= yb) && !zr) { dw1_edge(p, in, in_y0, fk, st, orow, y, 0, p->out.w); continue; }
    if (xi0 > 0) dw1_edge(p, in, in_y0, fk, st, orow, y, 0, xi0);
    if (xi1 < p->out.w) dw1_edge(p, in, in_y0, fk, st, orow, y, xi1, p->out.w);
    if (n <= 0) continue;
    const int32_t iy0 = y * p->stride_h - p->pad_top, ix = (xi0 * p->stride_w - p->pad_left) * ps;
    const int8_t *ip = in + (iy0 - in_y0) * in_row + ix;
    int8_t *o = orow + xi0 * p->out.pixel_stride;
    if (fast3 && st->fast && y >= ya && y < yb) {   /* all tap rows inside: the row's pointers */
      if (p->stride_w == 1) dw3_s1(k3, ip, ip + in_row, ip + 2 * in_row, n, o, p->out.pixel_stride, p, st);
      else dw3_sn(k3, ip, ip + in_row, ip + 2 * in_row, p->stride_w, n, o, p->out.pixel_stride, p, st);
      continue;
    }
    const int8_t *rp[CM_KH];
    for (int32_t ky = 0; ky < kh; ky++) {
      const int32_t iy = iy0 + ky * p->dil_h;
      rp[ky] = iy < 0 || iy >= p->in.h ? (const int8_t *)scratch : ip + ky * p->dil_h * in_row;
    }
    dw1_row(p, st, k3, fast3, fk, rp, n, o);
  }
}

/* A depthwise on a one-channel input (in.c == out.c == 1, multiplier 1) over rows [y0, y1) into
   d (first 0: a later channel of the same tile, w's geometry kept); 0 when this path does not
   apply. */
static int dw1_ch(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
                  int32_t y1, cm_dw1 *w, int first) {
  if (first && !dw1_geo(dp, y0, y1, w)) return 0;
  dw1_chan(dp, in, in_y0, d, y0, y1, w);
  return 1;
}

static int dw1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
               int32_t y1) {
  cm_dw1 w;
  return dw1_ch(dp, in, in_y0, d, y0, y1, &w, 1);
}
#define FX_DW1_CHAN cm_dw1

/* Two output channels of a one-run 1x1 conv (fx_k_chw's channel ch and ch + 1): each input word loaded
   and widened once for both (the one-channel path widens it once per channel); G groups of 4 values and
   T single values per run, bt_rq2 for both channels (f, g: their filters widened; a1, m1, p21, e11: the
   second channel's start value and requantisation). */
static inline __attribute__((always_inline)) void cm_run_out2(const int8_t *ip, int32_t step, int32_t n,
                                                             const int16_t *f, const int16_t *g, int8_t *o,
                                                             int8_t *q, int32_t ops, const bt_conv_params *p,
                                                             const cm_conv1 *st, int32_t a1, int32_t m1, int32_t p21,
                                                             int32_t e11, const int G, const int T, const int Q) {
  int32_t u[8], w[8];
  _Pragma("GCC unroll 4") for (int k = 0; k < G; k++) {
    __builtin_memcpy(&u[2 * k], f + 4 * k, 4); __builtin_memcpy(&u[2 * k + 1], f + 4 * k + 2, 4);
    __builtin_memcpy(&w[2 * k], g + 4 * k, 4); __builtin_memcpy(&w[2 * k + 1], g + 4 * k + 2, 4);
  }
  const int32_t a0 = st->acc0, m0 = st->m, p20 = Q == CM_SAT ? st->p2z : st->p2, e10 = st->e1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t i = 0; i < n; i++, ip += step, o += ops, q += ops) {
    int32_t a = a0, b = a1;
    _Pragma("GCC unroll 4") for (int k = 0; k < G; k++) {
      const uint32_t v = bt_ld4(ip + 4 * k);
      const int32_t x = bt_sxtb16(v), y = bt_sxtb16_ror8(v);
      a = bt_smlad(u[2 * k], x, a); b = bt_smlad(w[2 * k], x, b);
      a = bt_smlad(u[2 * k + 1], y, a); b = bt_smlad(w[2 * k + 1], y, b);
    }
    for (int t = 0; t < T; t++) { a += f[4 * G + t] * ip[4 * G + t]; b += g[4 * G + t] * ip[4 * G + t]; }
    o[0] = cm_out(a, m0, 0, p20, e10, Q, zp, lo, hi);
    q[0] = cm_out(b, m1, 0, p21, e11, Q, zp, lo, hi);
  }
}

#define CM_PAIR_K 16   /* longest run of the two-channel path; st->fw: both filters, then the second window */
/* Two channels at once of a 1x1 conv whose taps are one run of at most CM_PAIR_K values (st->nrun 1), every
   pixel inside, both channels on bt_rq2 (st->fast for channel 0): c's channels 0 and 1 (st: channel 0's values,
   its geometry; channel 1's filter widened at st->fw + CM_PAIR_K) into d0 and d1, rows [wra, wrb), pixels
   c->out.pixel_stride apart. 0 when this path does not apply. */
static int conv1_pair_d(bt_conv_params *c, int32_t K, cm_conv1 *st, const box_src *s, const box_dst *d0,
                        const box_dst *d1, int32_t wra, int32_t wrb) {
  int32_t ya, yb;
  if (c->kh != 1 || c->kw != 1 || st->xi0 != 0 || st->xi1 != c->out.w || c->out.w <= 0) return 0;
  box_inside_rows(c, wra, wrb, &ya, &yb);
  if (ya != wra || yb != wrb) return 0;
  int32_t m1 = c->multiplier[1], sh1 = c->shift[1];
  if (!bt_rq2_ok(&m1, &sh1, 1)) return 0;
  int16_t *const g = st->fw + CM_PAIR_K;
  const int32_t a1 = (c->bias ? c->bias[1] : 0) + c->input_offset * cm_widen(c->filter + K, g, K);
  const int sat = st->sat && cm_sat_ok(c, sh1);   /* both channels on CM_SAT, or neither */
  const int32_t p21 = sat ? cm_p2z(c, sh1) : bt_rq2_p2(sh1), e11 = bt_rq2_e1(sh1);
  const int32_t ps = c->in.pixel_stride, step = c->stride_w * ps, n = c->out.w, ix = -c->pad_left * ps;
  const int32_t ops = c->out.pixel_stride;
  for (int32_t y = wra; y < wrb; y++) {
    const int8_t *ip = box_row(s, y * c->stride_h - c->pad_top) + ix;
    int8_t *const o = box_orow(d0, y), *const q = box_orow(d1, y);
    switch (st->run) {
#define CM_RUN2(k)                                                                                      \
  case k:                                                                                               \
    CM_QCALL(sat, cm_run_out2(ip, step, n, st->fw, g, o, q, ops, c, st, a1, m1, p21, e11, (k) >> 2, (k) & 3, QQ)); \
    break;
      CM_RUN2(1) CM_RUN2(2) CM_RUN2(3) CM_RUN2(4) CM_RUN2(5) CM_RUN2(6) CM_RUN2(7) CM_RUN2(8)
      CM_RUN2(9) CM_RUN2(10) CM_RUN2(11) CM_RUN2(12) CM_RUN2(13) CM_RUN2(14) CM_RUN2(15) CM_RUN2(16)
#undef CM_RUN2
      default: break;
    }
  }
  return 1;
}
/* fx_k_chw's two channels at once (FX_CONV1_PAIR): conv1_pair_d with channel 0 into window win, channel 1 into
   *win2, a copy of win's layout in the rest of st->fw (no stack beyond the one-channel path's). */
static int conv1_pair(bt_conv_params *c, int32_t K, cm_conv1 *st, const box_src *s, const fx_buf *win, int32_t wca,
                      int32_t wra, int32_t wrb, fx_buf *win2) {
  if (c->out.pixel_stride != 1 || (wrb - win->r0) * win->wp > (int32_t)sizeof(st->fw) - 4 * CM_PAIR_K) return 0;
  *win2 = *win;
  win2->base = (int8_t *)(st->fw + 2 * CM_PAIR_K);
  const box_dst d0 = {win, wca, 0}, d1 = {win2, wca, 0};
  return conv1_pair_d(c, K, st, s, &d0, &d1, wra, wrb);
}
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
#define CM_G9 56   /* bytes from an RGB stem's first channel's widened 3x9 filter (st->fw) to the second's */
/* Four values of two pixels (x, y: one word each, already loaded) against both channels' filter pairs (at byte
   OFF of f and OFF + CM_G9): each input word widened once for both channels, 4 SXTB16 + 4 LDR + 8 SMLAD into
   a, b (channel 0, pixels x, y) and c, d (channel 1). */
#define CM_SMLAD_XY4_2(OFF)                             \
  "sxtb16 %[s], %[x]\n\t"                               \
  "sxtb16 %[t], %[y]\n\t"                               \
  "ldr %[w], [%[f], " OFF "]\n\t"                      \
  "smlad %[a], %[w], %[s], %[a]\n\t"                    \
  "smlad %[b], %[w], %[t], %[b]\n\t"                    \
  "ldr %[w], [%[f], " OFF "+56]\n\t"                   \
  "smlad %[c], %[w], %[s], %[c]\n\t"                    \
  "smlad %[d], %[w], %[t], %[d]\n\t"                    \
  "sxtb16 %[s], %[x], ror #8\n\t"                       \
  "sxtb16 %[t], %[y], ror #8\n\t"                       \
  "ldr %[w], [%[f], " OFF "+4]\n\t"                    \
  "smlad %[a], %[w], %[s], %[a]\n\t"                    \
  "smlad %[b], %[w], %[t], %[b]\n\t"                    \
  "ldr %[w], [%[f], " OFF "+60]\n\t"                   \
  "smlad %[c], %[w], %[s], %[c]\n\t"                    \
  "smlad %[d], %[w], %[t], %[d]\n\t"
/* One tap row (9 bytes at u for pixel x, at u + step for pixel y) of both channels (widened filters at byte FO
   and FO + CM_G9 of f). */
#define CM_ROW9_ASM2(FO)                                               \
  "ldr %[v], %[step]\n\t"                                             \
  "add %[v], %[v], %[u]\n\t"                                          \
  "ldr %[x], [%[u]]\n\t"                                              \
  "ldr %[y], [%[v]]\n\t"                                              \
  CM_SMLAD_XY4_2("#" #FO)                                           \
  "ldr %[x], [%[u], #4]\n\t"                                          \
  "ldr %[y], [%[v], #4]\n\t"                                          \
  CM_SMLAD_XY4_2("#" #FO "+8")                                      \
  "ldrsb %[x], [%[u], #8]\n\t"                                        \
  "ldrsb %[y], [%[v], #8]\n\t"                                        \
  "ldrsh %[w], [%[f], #" #FO "+16]\n\t"                               \
  "smlabb %[a], %[w], %[x], %[a]\n\t"                                 \
  "smlabb %[b], %[w], %[y], %[b]\n\t"                                 \
  "ldrsh %[w], [%[f], #" #FO "+72]\n\t"                               \
  "smlabb %[c], %[w], %[x], %[c]\n\t"                                 \
  "smlabb %[d], %[w], %[y], %[d]\n\t"

/* One tap row (9 bytes at u) of one pixel for both channels (widened filters at byte FO and FO + CM_G9 of f):
   each input word loaded and widened once for both, 1 LDR + 2 SXTB16 + 4 LDR + 4 SMLAD per 4 values, into a
   (channel 0) and c (channel 1). */
#define CM_ROW9_ONE2(FO)                                               \
  "ldr %[x], [%[u]]\n\t"                                              \
  "sxtb16 %[t], %[x]\n\t"                                             \
  "ldr %[w], [%[f], #" #FO "]\n\t"                                    \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[w], [%[f], #" #FO "+56]\n\t"                                 \
  "smlad %[c], %[w], %[t], %[c]\n\t"                                  \
  "sxtb16 %[t], %[x], ror #8\n\t"                                     \
  "ldr %[w], [%[f], #" #FO "+4]\n\t"                                  \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[w], [%[f], #" #FO "+60]\n\t"                                 \
  "smlad %[c], %[w], %[t], %[c]\n\t"                                  \
  "ldr %[x], [%[u], #4]\n\t"                                          \
  "sxtb16 %[t], %[x]\n\t"                                             \
  "ldr %[w], [%[f], #" #FO "+8]\n\t"                                  \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[w], [%[f], #" #FO "+64]\n\t"                                 \
  "smlad %[c], %[w], %[t], %[c]\n\t"                                  \
  "sxtb16 %[t], %[x], ror #8\n\t"                                     \
  "ldr %[w], [%[f], #" #FO "+12]\n\t"                                 \
  "smlad %[a], %[w], %[t], %[a]\n\t"                                  \
  "ldr %[w], [%[f], #" #FO "+68]\n\t"                                 \
  "smlad %[c], %[w], %[t], %[c]\n\t"                                  \
  "ldrsb %[x], [%[u], #8]\n\t"                                        \
  "ldrsh %[w], [%[f], #" #FO "+16]\n\t"                               \
  "smlabb %[a], %[w], %[x], %[a]\n\t"                                 \
  "ldrsh %[w], [%[f], #" #FO "+72]\n\t"                               \
  "smlabb %[c], %[w], %[x], %[c]\n\t"

/* cm_rows_out_3x9 for two output channels (filters widened at fw and fw + CM_G9 bytes; k[0], k[1] their values)
   into o and q: two pixels x two channels per pass, each input word loaded and widened once for the four
   outputs (the one-channel pass widens it once per channel); an odd last pixel by the one-pixel asm. */
static inline __attribute__((always_inline)) void cm_rows_out_3x9x2_q(const int8_t *r0, int32_t d1, int32_t d2,
                                                                     int32_t step, int32_t n, const int16_t *fw,
                                                                     int8_t *o, int8_t *q, int32_t ops,
                                                                     const bt_conv_params *p, const cm_chq *k,
                                                                     const int Q) {
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  int32_t i = 0;
  for (; i + 2 <= n; i += 2, o += 2 * ops, q += 2 * ops, r0 += 2 * step) {
    int32_t a = k[0].acc0, b = k[0].acc0, c = k[1].acc0, d = k[1].acc0;
    const int8_t *u = r0, *v;
    uint32_t x, y, w, s, t;
    __asm__ volatile(CM_ROW9_ASM2(0)
                     "ldr %[u], %[d1]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ASM2(18)
                     "ldr %[u], %[d2]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ASM2(36)
                     : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(d), [u] "+&r"(u), [v] "=&r"(v),
                       [x] "=&r"(x), [y] "=&r"(y), [w] "=&r"(w), [s] "=&r"(s), [t] "=&r"(t)
                     : [r0] "r"(r0), [f] "r"(fw), [step] "m"(step), [d1] "m"(d1), [d2] "m"(d2)
                     : "memory");
    o[0] = cm_out(a, k[0].m, 0, k[0].p2, k[0].e1, Q, zp, lo, hi);
    o[ops] = cm_out(b, k[0].m, 0, k[0].p2, k[0].e1, Q, zp, lo, hi);
    q[0] = cm_out(c, k[1].m, 0, k[1].p2, k[1].e1, Q, zp, lo, hi);
    q[ops] = cm_out(d, k[1].m, 0, k[1].p2, k[1].e1, Q, zp, lo, hi);
  }
  if (i < n) {   /* the odd last pixel, both channels from each input word */
    int32_t a = k[0].acc0, c = k[1].acc0;
    const int8_t *u = r0;
    uint32_t x, w, t;
    __asm__ volatile(CM_ROW9_ONE2(0)
                     "ldr %[u], %[d1]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ONE2(18)
                     "ldr %[u], %[d2]\n\tadd %[u], %[u], %[r0]\n\t" CM_ROW9_ONE2(36)
                     : [a] "+r"(a), [c] "+r"(c), [u] "+&r"(u), [x] "=&r"(x), [w] "=&r"(w), [t] "=&r"(t)
                     : [r0] "r"(r0), [f] "r"(fw), [d1] "m"(d1), [d2] "m"(d2)
                     : "memory");
    o[0] = cm_out(a, k[0].m, 0, k[0].p2, k[0].e1, Q, zp, lo, hi);
    q[0] = cm_out(c, k[1].m, 0, k[1].p2, k[1].e1, Q, zp, lo, hi);
  }
}
/* The same, k[0].q's requantisation (CM_SAT: one SSAT). */
static inline __attribute__((always_inline)) void cm_rows_out_3x9x2(const int8_t *r0, int32_t d1, int32_t d2,
                                                                   int32_t step, int32_t n, const int16_t *fw,
                                                                   int8_t *o, int8_t *q, int32_t ops,
                                                                   const bt_conv_params *p, const cm_chq *k) {
  CM_QCALL(k[0].q == CM_SAT, cm_rows_out_3x9x2_q(r0, d1, d2, step, n, fw, o, q, ops, p, k, QQ));
}

/* An RGB stem's second channel for a two-channel pass (st: channel 0's values, row1 == 2, bt_rq2): channel 1's
   filter widened after channel 0's in st->fw, its values in k[1] (channel 0's in k[0]); *win2 a copy of window
   win's layout in the rest of st->fw (no stack beyond the one-channel path's). 0 when this path does not apply. */
static int pair9_prep(const bt_conv_params *c, int32_t K, cm_conv1 *st, const fx_buf *win, int32_t wrb, fx_buf *win2,
                      cm_chq *k) {
  if (st->row1 != 2 || !st->fast || K != 27 || c->kw != 3 || c->in.c != 3 || c->input_offset < -127 ||
      c->input_offset > 128 || c->out.w <= 0 || (wrb - win->r0) * win->wp > (int32_t)sizeof(st->fw) - 2 * CM_G9)
    return 0;
  int32_t m1 = c->multiplier[1], sh1 = c->shift[1];
  if (!bt_rq2_ok(&m1, &sh1, 1)) return 0;
  int16_t *const g = st->fw + CM_G9 / 2;
  int32_t fsum = 0;
  for (int32_t r = 0; r < 3; r++) fsum += cm_widen(c->filter + K + 9 * r, g + 9 * r, 9);
  const int sat = st->sat && cm_sat_ok(c, sh1);   /* both channels on CM_SAT, or neither */
  k[0] = (cm_chq){st->acc0, st->m, sat ? st->p2z : st->p2, st->e1, sat ? CM_SAT : 1};
  k[1] = (cm_chq){(c->bias ? c->bias[1] : 0) + c->input_offset * fsum, m1, sat ? cm_p2z(c, sh1) : bt_rq2_p2(sh1),
                  bt_rq2_e1(sh1), sat ? CM_SAT : 1};
  *win2 = *win;
  win2->base = (int8_t *)(st->fw + CM_G9);
  return 1;
}

/* Output row y of both channels of a pair9_prep pass into o and q (the rows' starts): border pixels through
   cm_row9_padded_f per channel, the interior by cm_rows_out_3x9x2 (s: a box or row bands); fw: the pair's
   widened filters (pair9_prep). Not inlined: in its one caller at -Os the asm's 13 registers do not fit. */
__attribute__((noinline)) static void pair9_row_f(const bt_conv_params *c, const cm_conv1 *st, const int16_t *fw, const cm_chq *k,
                        const box_src *s, int8_t *o, int8_t *q, int32_t y) {
  const int32_t ps = c->in.pixel_stride, ops = c->out.pixel_stride, w = c->out.w, xi0 = st->xi0, xi1 = st->xi1;
  const int32_t iy = y * c->stride_h - c->pad_top;
  const int inside = iy >= 0 && iy + 2 * c->dil_h < c->in.h && xi1 > xi0;
  const int32_t ea = inside ? xi0 : w, eb = inside ? xi1 : w;   /* borders: [0, ea) and [eb, w) */
  if (ea > 0) cm_row9_padded2(c, fw, k, s, o, q, iy, 0, ea);
  if (eb < w) cm_row9_padded2(c, fw, k, s, o, q, iy, eb, w);
  if (!inside) return;
  const int32_t ix = (xi0 * c->stride_w - c->pad_left) * ps;
  const int8_t *const b = box_row(s, iy) + ix;
  /* the tap rows' distances (row bands: wherever each row is) */
  const int32_t d1 = (int32_t)((uintptr_t)(box_row(s, iy + c->dil_h) + ix) - (uintptr_t)b);
  const int32_t d2 = (int32_t)((uintptr_t)(box_row(s, iy + 2 * c->dil_h) + ix) - (uintptr_t)b);
  cm_rows_out_3x9x2(b, d1, d2, c->stride_w * ps, xi1 - xi0, fw, o + xi0 * ops, q + xi0 * ops, ops, c, k);
}
#define pair9_row(c, st, k, s, o, q, y) pair9_row_f(c, st, (st)->fw, k, s, o, q, y)

/* An RGB stem (3x3 taps on 3 channels, dense) of a one-channel-window tile, several channel pairs at a time as
   the plain firmware's patch-matrix conv makes it (conv_pm.h): each output pixel's 27-value patch widened once
   for all the pairs (int16, the input offset added as it widens: a tap outside the input becomes 0) into a
   triple of interleaved columns (im2col.h's layout, BT_GROUPED(3, 27)), then per pair of output channels three
   pixels at a time through bt_mm3x2 (filters read from flash, each weight word for three pixels and two
   channels: 141 instructions per 162 MACs) and the six outputs requantised and stored in one asm (cm_s3_rq6).
   The pixels of a tile's rows go into the triples in raster order (a triple may span rows: the tiles' rows are
   about seven pixels), each with its output's offset in the windows; up to T triples are widened before the
   pairs run over them. The two-channel path it replaces on these tiles (cm_rows_out_3x9x2: each input word
   widened per pair, two pixels a pass, requantisation in C, a 9-value tap row's last value on its own) took
   11.9 M instructions for mbv2-w0.35's streamed stem (5.1 M MACs, 2.3 a MAC, borders and row set-up included);
   this one 9.4 M (1.84: cm_s3_flush 7.1 M, some 213 instructions a triple and pair in its loop; the widening
   1.6 M, 68 a pixel and group; 16 channels in two groups of 8, the windows filling the buffer). The windows,
   the columns and the offsets live in the one-channel state's filter buffer (cm_conv1.fw), the pairs' values
   in the group's state (cm_s3, on the stack: 0.4 KB where the path it replaces kept 0.2 KB). */
#define CM_S3_COL 84     /* int16s of a triple's widened patches: BT_GROUPED(3, 27) */
#define CM_S3_TMAX 8     /* triples widened before the pairs run over them, at most */
#define CM_S3_PAIRS 8    /* channel pairs of a group, at most */

/* A pair's values: bt_rq2's m, rounding word (the output zero point folded in when q is CM_SAT) and shift of
   channels 0 and 1 (cm_s3_rq6 reads three words each), their biases, q (CM_SAT: the asm requantisation), their
   filters and windows. */
typedef struct {
  int32_t k[6];
  int32_t b0, b1, q;
  const int8_t *f;   /* the pair's filters (channel 1's K bytes on) */
  int8_t *oa, *ob;   /* the channels' windows */
} cm_s3k;

/* A group's state: np pairs' values k (each with its filters and windows), channel i > 0's window at
   wn + (i - 1) * bytes (channel 0's is the tile's, the same layout), T triples of columns at col with their 3T output offsets, n pixels
   widened so far; the input's zero point z (padding taps), off2 the input offset in both halves. */
typedef struct {
  cm_s3k k[CM_S3_PAIRS];
  int8_t *wn;
  int16_t *col;
  int32_t *offs;
  int32_t bytes, np, T, n, off2, zp, lo, hi;
  int8_t z;
} cm_s3;

/* The group of up to CM_S3_PAIRS channel pairs of c (its filter, bias and requantisation from the group's first
   channel; `left` channels left) whose windows, offsets and columns fit size bytes at buf (4-aligned): as many
   pairs as fit with one triple, balanced over the groups the channels take (16 channels in two groups of 8, not
   10 + 6: both widen each pixel twice), then as many triples as fit. Returns the pairs, 0 when this path does
   not apply (the shape, bt_rq2, the window's size). */
static int32_t cm_s3_prep(const bt_conv_params *c, const fx_buf *win, int32_t wrb, int32_t left, int8_t *buf,
                          int32_t size, cm_s3 *S) {
  if (c->kh != 3 || c->kw != 3 || c->in.c != 3 || c->in.pixel_stride != 3 || c->dil_w != 1 ||
      c->out.pixel_stride != 1 || c->input_offset < -127 || c->input_offset > 128 || c->out.w <= 0 || left < 2 ||
      win->ps != 1 || win->rows)
    return 0;
  const int32_t bytes = ((wrb - win->r0) * win->wp + 3) & ~3;
  const int32_t tb = 12 + 2 * CM_S3_COL;   /* a triple's offsets and columns */
  int32_t np = 0;
  while (np < CM_S3_PAIRS && 2 * np + 2 <= left && (2 * np + 1) * bytes + tb <= size) np++;
  if (!np) return 0;
  const int32_t groups = (left / 2 + np - 1) / np;
  np = (left / 2 + groups - 1) / groups;
  for (int32_t i = 0; i < 2 * np; i++) {
    int32_t m = c->multiplier[i], sh = c->shift[i];
    if (!bt_rq2_ok(&m, &sh, 1)) { np = i / 2; break; }
  }
  if (!np) return 0;
  int32_t T = (size - (2 * np - 1) * bytes) / tb;
  if (T > CM_S3_TMAX) T = CM_S3_TMAX;
  S->offs = (int32_t *)buf;
  S->col = (int16_t *)(S->offs + 3 * T);
  S->wn = (int8_t *)(S->col + T * CM_S3_COL);
  S->bytes = bytes; S->np = np; S->T = T; S->n = 0;
  S->off2 = (int32_t)bt_dup16(c->input_offset);
  S->z = (int8_t)(-c->input_offset);
  S->zp = c->output_offset; S->lo = c->act_min; S->hi = c->act_max;
  for (int32_t j = 0; j < np; j++) {
    cm_s3k *const k = S->k + j;
    const int32_t s0 = c->shift[2 * j], s1 = c->shift[2 * j + 1];
    const int sat = cm_sat_ok(c, s0) && cm_sat_ok(c, s1);   /* both channels on CM_SAT, or neither */
    k->k[0] = c->multiplier[2 * j];
    k->k[1] = sat ? cm_p2z(c, s0) : bt_rq2_p2(s0);
    k->k[2] = bt_rq2_e1(s0);
    k->k[3] = c->multiplier[2 * j + 1];
    k->k[4] = sat ? cm_p2z(c, s1) : bt_rq2_p2(s1);
    k->k[5] = bt_rq2_e1(s1);
    k->b0 = c->bias ? c->bias[2 * j] : 0;
    k->b1 = c->bias ? c->bias[2 * j + 1] : 0;
    k->q = sat ? CM_SAT : 1;
    k->f = c->filter + 54 * j;
    k->oa = j ? S->wn + (2 * j - 1) * bytes : win->base;
    k->ob = S->wn + 2 * j * bytes;
  }
  return np;
}

/* The patch whose three 9-byte tap rows start at r0, r1, r2, widened with the input offset (off2) into pixel
   slot d (a triple's column + 2q): 9 loads (the groups that straddle two tap rows: the end of one and the start
   of the next, shifted and ORed; the 3-value tail: the last row's last word shifted down), 14 SXTAB16, 14 STR;
   every load inside the rows. */
static inline __attribute__((always_inline)) void cm_s3_widen(const int8_t *r0, const int8_t *r1, const int8_t *r2,
                                                             int16_t *d, uint32_t off2) {
  uint32_t v[7];
  v[0] = bt_ld4(r0);
  v[1] = bt_ld4(r0 + 4);
  v[2] = (bt_ld4(r0 + 5) >> 24) | (bt_ld4(r1) << 8);
  v[3] = bt_ld4(r1 + 3);
  v[4] = (bt_ld4(r1 + 5) >> 16) | (bt_ld4(r2) << 16);
  v[5] = bt_ld4(r2 + 2);
  v[6] = bt_ld4(r2 + 5) >> 8;
#pragma GCC unroll 7
  for (int g = 0; g < 7; g++) {
    int32_t a = (int32_t)bt_sxtab16(off2, v[g]), b = (int32_t)bt_sxtab16_ror8(off2, v[g]);
    if (g == 6) b &= 0xffff;   /* value 27 is no value: 0 */
    __builtin_memcpy(d + 12 * g, &a, 4);
    __builtin_memcpy(d + 12 * g + 6, &b, 4);
  }
}

/* cm_s3_rq6's asm for one output: bt_rq2 (AND, ORR, ADD, SMLAL, ASR; the zero point in the rounding word), SSAT,
   the output's offset loaded from the offsets (OFS bytes on), STRB. */
#define CM_S3_RQ_ONE(a, OFS)                               \
  "and %[lo], %[" a "], #0x80000000\n\t"                   \
  "orr %[lo], %[lo], #0x40000000\n\t"                      \
  "add %[hi], %[pz], %[" a "], asr #31\n\t"                \
  "smlal %[lo], %[hi], %[" a "], %[m]\n\t"                 \
  "asr %[hi], %[hi], %[e]\n\t"                             \
  "ssat %[hi], #8, %[hi]\n\t"                              \
  "ldr %[lo], [%[of], #" OFS "]\n\t"                       \
  "strb %[hi], [%[o], %[lo]]\n\t"
/* The six outputs of a pair's triple (acc as bt_mm3x2 leaves them: pixel q's channels at acc[2q], acc[2q + 1]) into
   the pair's windows at the pixels' offsets of[0..2]: CM_SAT (activation range all of int8, the output zero point
   folded in pz). The pair's values and windows read from k (cm_s3k); 14 registers. */
static inline __attribute__((always_inline)) void cm_s3_rq6(const int32_t *acc, const cm_s3k *k, const int32_t *of) {
  uint32_t lo, hi, m, pz, e, o;
  __asm__ volatile("ldrd %[m], %[pz], [%[k]]\n\tldr %[e], [%[k], #8]\n\tldr %[o], [%[k], %[OA]]\n\t"
                   CM_S3_RQ_ONE("a00", "0") CM_S3_RQ_ONE("a10", "4") CM_S3_RQ_ONE("a20", "8")
                   "ldrd %[m], %[pz], [%[k], #12]\n\tldr %[e], [%[k], #20]\n\tldr %[o], [%[k], %[OB]]\n\t"
                   CM_S3_RQ_ONE("a01", "0") CM_S3_RQ_ONE("a11", "4") CM_S3_RQ_ONE("a21", "8")
                   : [lo] "=&r"(lo), [hi] "=&r"(hi), [m] "=&r"(m), [pz] "=&r"(pz), [e] "=&r"(e), [o] "=&r"(o)
                   : [a00] "r"(acc[0]), [a01] "r"(acc[1]), [a10] "r"(acc[2]), [a11] "r"(acc[3]), [a20] "r"(acc[4]),
                     [a21] "r"(acc[5]), [k] "r"(k), [of] "r"(of), [OA] "i"(offsetof(cm_s3k, oa)),
                     [OB] "i"(offsetof(cm_s3k, ob))
                   : "memory");
}
#undef CM_S3_RQ_ONE

/* The group's pairs over the pixels widened so far (a last triple short of pixels filled with copies of its last
   one: the same output, stored twice), then none pending. */
__attribute__((noinline)) static void cm_s3_flush(cm_s3 *S) {
  int32_t n = S->n;
  if (!n) return;
  const int32_t nt = (n + 2) / 3;
  int16_t *const last = S->col + (nt - 1) * CM_S3_COL;
  for (; n < 3 * nt; n++) {
    const int32_t qs = 2 * ((n - 1) % 3), qd = 2 * (n % 3);
    for (int32_t g = 0; g < 7; g++) {
      __builtin_memcpy(last + 12 * g + qd, last + 12 * g + qs, 4);
      __builtin_memcpy(last + 12 * g + 6 + qd, last + 12 * g + 6 + qs, 4);
    }
    S->offs[n] = S->offs[n - 1];
  }
  for (const cm_s3k *kj = S->k, *const kend = S->k + S->np; kj != kend; kj++) {
    const int8_t *const f = kj->f;
    int8_t *const oa = kj->oa, *const ob = kj->ob;
    const int16_t *cc = S->col;
    const int32_t *of = S->offs;
    if (kj->q == CM_SAT) {
      const int32_t *const end = of + 3 * nt;
      do {
        int32_t acc[6];
        bt_mm3x2(cc, f, 27, kj->b0, kj->b1, acc);
        cm_s3_rq6(acc, kj, of);
        cc += CM_S3_COL;
        of += 3;
      } while (of != end);
    } else {
      const int32_t zp = S->zp, lo = S->lo, hi = S->hi;
      for (int32_t t = 0; t < nt; t++, cc += CM_S3_COL, of += 3) {
        int32_t acc[6];
        bt_mm3x2(cc, f, 27, kj->b0, kj->b1, acc);
        for (int32_t q = 0; q < 3; q++) {
          oa[of[q]] = cm_out(acc[2 * q], kj->k[0], 0, kj->k[1], kj->k[2], 1, zp, lo, hi);
          ob[of[q]] = cm_out(acc[2 * q + 1], kj->k[3], 0, kj->k[4], kj->k[5], 1, zp, lo, hi);
        }
      }
    }
  }
  S->n = 0;
}

/* A border pixel x of output row y (tap rows from input row iy) into the group's next slot (o: its output's
   offset): its patch gathered (the input's zero point at taps outside the input), then widened; the pairs run
   when the triples are full. */
__attribute__((noinline)) static void cm_s3_edge(cm_s3 *S, const bt_conv_params *c, const box_src *s, int32_t iy,
                                                int32_t x, int32_t o) {
  int8_t pb[28] __attribute__((aligned(4)));
  const int32_t ix0 = x * c->stride_w - c->pad_left, n = S->n;
  for (int32_t ky = 0; ky < 3; ky++) {
    const int32_t yy = iy + ky * c->dil_h;
    const int8_t *const row = (uint32_t)yy < (uint32_t)c->in.h ? box_row(s, yy) : 0;
    for (int32_t kx = 0; kx < 3; kx++) {
      const int32_t ix = ix0 + kx;
      const int ok = row && (uint32_t)ix < (uint32_t)c->in.w;
      for (int32_t i = 0; i < 3; i++) pb[9 * ky + 3 * kx + i] = ok ? row[3 * ix + i] : S->z;
    }
  }
  cm_s3_widen(pb, pb + 9, pb + 18, S->col + (n / 3) * CM_S3_COL + 2 * (n % 3), (uint32_t)S->off2);
  S->offs[n] = o;
  S->n = n + 1;
  if (S->n == 3 * S->T) cm_s3_flush(S);
}

/* Output row y of the group (o0: the row's first output's offset in the windows): its pixels widened in order
   into the triples (interior pixels straight from the input rows, ~50 instructions a pixel; border pixels by
   cm_s3_edge), the pairs run whenever the triples are full. */
__attribute__((noinline)) static void cm_s3_row(cm_s3 *S, const bt_conv_params *c, const cm_conv1 *st,
                                               const box_src *s, int32_t y, int32_t o0) {
  const int32_t w = c->out.w, iy = y * c->stride_h - c->pad_top, dh = c->dil_h;
  const int inside = iy >= 0 && iy + 2 * dh < c->in.h;
  const int32_t xa = inside ? st->xi0 : w, xb = inside ? st->xi1 : w;
  int32_t x = 0;
  for (; x < xa; x++) cm_s3_edge(S, c, s, iy, x, o0 + x);
  if (xb > xa) {
    const int8_t *const r0 = box_row(s, iy);
    const int32_t d1 = (int32_t)((uintptr_t)box_row(s, iy + dh) - (uintptr_t)r0);
    const int32_t d2 = (int32_t)((uintptr_t)box_row(s, iy + 2 * dh) - (uintptr_t)r0);
    const int32_t step = 3 * c->stride_w, cap = 3 * S->T;
    const uint32_t off2 = (uint32_t)S->off2;
    const int8_t *p = r0 + (xa * c->stride_w - c->pad_left) * 3;
    int32_t n = S->n, q = n % 3;
    int16_t *d = S->col + (n / 3) * CM_S3_COL + 2 * q;
    int32_t *of = S->offs + n;
    for (; x < xb; x++, p += step) {
      cm_s3_widen(p, p + d1, p + d2, d, off2);
      *of++ = o0 + x;
      d += 2;
      if (++q == 3) {
        q = 0;
        d += CM_S3_COL - 6;
        if (of == S->offs + cap) {
          S->n = cap;
          cm_s3_flush(S);
          d = S->col;
          of = S->offs;
        }
      }
    }
    S->n = (int32_t)(of - S->offs);
  }
  for (; x < w; x++) cm_s3_edge(S, c, s, iy, x, o0 + x);
}

/* fx_k_chw's two channels at once for an RGB stem (FX_CONV1_PAIR): c's channels 0 and 1, channel 0 into window
   win, channel 1 into *win2 (pair9_prep). 0 when this path does not apply. */
static int conv1_pair9(bt_conv_params *c, int32_t K, cm_conv1 *st, const box_src *s, const fx_buf *win, int32_t wca,
                       int32_t wra, int32_t wrb, fx_buf *win2) {
  cm_chq k[2];
  if (!pair9_prep(c, K, st, win, wrb, win2, k)) return 0;
  const box_dst d0 = {win, wca, 0}, d1 = {win2, wca, 0};
  for (int32_t y = wra; y < wrb; y++) pair9_row(c, st, k, s, box_orow(&d0, y), box_orow(&d1, y), y);
  return 1;
}
#define CM_PAIR9(c, K, st, s, win, wca, wra, wrb, win2) \
  ((st)->row1 == 2 && conv1_pair9(c, K, st, s, win, wca, wra, wrb, win2))
#define CM_S3_PREP cm_s3_prep
#else
#define CM_PAIR9(c, K, st, s, win, wca, wra, wrb, win2) 0
typedef struct {
  int8_t *wn;
  int32_t bytes;
} cm_s3;
#define CM_S3_PREP(c, win, wrb, left, buf, size, S) ((void)(S), 0)
#define cm_s3_row(S, c, st, s, y, o0) ((void)(S))
#define cm_s3_flush(S) ((void)(S))
#define CM_G9 0
#endif

/* the one-run, bt_rq2 check inline (or an RGB stem's, CM_PAIR9): other convs pay three compares a channel
   pair */
#define FX_CONV1_PAIR(c, K, st, s, win, wca, wra, wrb, win2)                                               \
  ((st)->fast && ((st)->nrun == 1 ? (st)->run <= CM_PAIR_K && conv1_pair(c, K, st, s, win, wca, wra, wrb, win2) \
                                  : CM_PAIR9(c, K, st, s, win, wca, wra, wrb, win2)))

/* the variant conv.c's bt_conv_s8 picks for fewer than 4 output channels (bt_variants.h; a plan whose convs all
   have their own kernels links none of the others) */
void bt_conv_s8_direct(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1);
#define FX_CONV_FEW bt_conv_s8_direct
/* fx_chw_kg's group path (cm_chw_pm without the one-channel paths) */
static int cm_chw_pm0(fx_win_fn wk, const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin,
                      const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm,
                      fx_dw_kernel dk, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                      int32_t cb, int32_t channels);
#define FX_CHW_PM cm_chw_pm0
#define FX_SET_PATHS
#define FX_BOX_ONE_CHANNEL 1   /* fx_k_box: fx_hooks.h's, one-channel boxes only */
#define FX_PULLED_CHW
#define FX_ROW_RUNS 1
#define FX_COL_CALLS 2
/* FX_ADD_DENSE: add.c's dense loops (add_dense.h), without add_tab, which declines rows under 256 values */
void bt_dense_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);
#define FX_ADD_DENSE_S8 bt_dense_add_s8
#define FX_ADD_HS_OWN
#include "../reference/fused_ref.h"

/* FX_ADD_HS (bt_fused.h): add_dense.h's loop of a 0.5-multiplier input and an AD_SMALL one, bt_rq2 out, saturating
   (ad_half_small_sat), its state made once a call where bt_dense_add_s8 (ad_s8) chooses among all of its loops on
   every row, so a plan links that loop alone. add_dense.h's bt_add_s8 / bt_sub_s8 are here under other names, which
   nothing calls (add.c's are the set's). */
#define AD_SAT8(v) bt_ssat8(v)
#define bt_add_s8 fx_hs_unused_add_s8
#define bt_sub_s8 fx_hs_unused_sub_s8
#include "../reference/add_dense.h"
#undef bt_add_s8
#undef bt_sub_s8
void fx_pw_add_hs(const void *prm, const fx_buf *a, const fx_buf *b, const fx_buf *o, int32_t ra, int32_t rb,
                  int32_t ca, int32_t cb, int32_t ch) {
  bt_add_params p;
  fx_get(&p, prm, sizeof p);
  /* the 0.5 input first (ad_s8's order): x, its AD_HALF term; y, the AD_SMALL one (its shift -e, e >= 1). The fields
     ad_half_small_sat reads, set here: ad_s8's set-up of every field, ad_kind and bt_rq2_ok linked, is 384 B more
     (ResNet-8's and tiny's fused firmware on cortex-m4) */
  const int first = !(p.input1_multiplier == (1 << 30) && p.input1_shift == 0);
  const fx_buf *x = first ? b : a, *y = first ? a : b;
  const int32_t my = first ? p.input1_multiplier : p.input2_multiplier, e = -(first ? p.input1_shift : p.input2_shift);
  ad_state st;
  st.off[0] = first ? p.input2_offset : p.input1_offset;
  st.off[1] = first ? p.input1_offset : p.input2_offset;
  st.mh[1] = my >> (31 - AD_LS), st.ml[1] = my & ((1 << (31 - AD_LS)) - 1);
  st.e[1] = e, st.c[1] = 1 << (e - 1);
  st.mo = p.output_multiplier, st.zp = p.output_offset;
  st.p2o = bt_rq2_p2(p.output_shift), st.e1o = bt_rq2_e1(p.output_shift);
  const int32_t n = (cb - ca) * ch;
  const int one = a->ps == ch && b->ps == ch && o->ps == ch;  /* each row one run, else a run a pixel */
  for (int32_t r = ra; r < rb; r++)
    for (int32_t c = ca; c < (one ? ca + 1 : cb); c++)
      ad_half_small_sat(&st, fx_at(x, r, c), fx_at(y, r, c), fx_at(o, r, c), one ? n : ch);
}

/* fx_chw on a one-channel window that starts at the tile's box (nothing cached in it), g channels at a time:
   the set's one-channel conv paths (two channels a pass where conv1_pair_d takes them) write channels ch..
   into a g-channel copy of the window's box, the depthwise's taps for them are regrouped [kh*kw][g], and one
   depthwise call per output row makes the g channels (the one-channel depthwise pays its set-up per channel
   and per row; a row per call keeps the set's depthwise on its box path, whose stack is small). The copy and
   the taps live in the conv state's filter buffer past the filters; 0 when fewer than CM_GRP_MIN channels fit
   (fewer channels a call: the one-channel depthwise paths were faster, a 7x7 stride-2 depthwise of 4 channels
   on 13-wide windows in mcunet-vww1), the conv is an RGB stem (cm_chw_rows) or too large for the one-channel
   paths. */
#define CM_GRP_MIN 8
/* The depthwise of channels [ch, ch + n) made in g-channel window gw: their taps regrouped [T][n] at taps, one
   depthwise call per output row (rows [ra, rb) x cols [ca, cb) of out), through the layer's kernel dk (paths 0: never
   the set's one-channel box paths, which decline n > 1 channels: fx_chw_kg links none of them). */
FX_ALWAYS void cm_grp_dw(int paths, const void *dprm, fx_dw_kernel dk, const int8_t *fch, int8_t *taps, int32_t T, int32_t ch,
                             int32_t n, const fx_buf *gw, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                             int32_t cb) {
  for (int32_t t = 0; t < T; t++)
    for (int32_t j = 0; j < n; j++) taps[t * n + j] = fch[(ch + j) * T + t];
  /* fx_win takes channel ch's taps at fch + ch * kh * kw: this group's, regrouped */
  const int8_t *const f = (const int8_t *)((uintptr_t)taps - (uintptr_t)(ch * T));
  for (int32_t y = ra; y < rb; y++) {
    if (paths) fx_win_dk(dprm, dk, gw, out, y, y + 1, ca, cb, ch, f);
    else win_dk_ch0(dprm, dk, gw, out, y, y + 1, ca, cb, ch, f);
  }
}
/* cm_chw_groups through the set's own conv kernel: the conv makes g channels of the tile's box at once into a
   g-channel copy of the window (fx_win_k with the group's channels: one call of the layer's kernel ck per box, or
   per row on row bands, so the patch-matrix loops widen each input pixel once for the g channels, where the one-channel
   paths widen it once per channel or pair), then the group's depthwise as cm_chw_groups. The copy and the
   regrouped taps in CM_GRP_BUF bytes of this frame; 0 when fewer than CM_GRP_MIN channels fit. */
#define CM_GRP_BUF 1280
FX_ALWAYS int cm_chw_pm_b(int paths, fx_win_fn wk, const void *cprm, fx_conv_kernel ck, fx_conv_kernel few,
                          const fx_buf *cin,
                          int32_t wra, int32_t wrb,
                          int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk, const int8_t *fch,
                          const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
  const bt_depthwise_params *const dp = dprm;
  const int32_t T = dp->conv.kh * dp->conv.kw, box = (wrb - wra) * (wcb - wca);
  int32_t g = (CM_GRP_BUF - 4) / (box + T);
  g = g >= channels ? channels : g & ~3;
  if (g < CM_GRP_MIN || T > 9) return 0;   /* larger depthwise filters: the one-channel paths measured faster */
  uint32_t buf[CM_GRP_BUF / 4];
  int8_t *const taps = (int8_t *)buf, *const wb = taps + ((g * T + 3) & ~3);
  fx_buf gw = {wb, wra, wca, wcb - wca, 1, 0};
  for (int32_t ch = 0; ch < channels; ch += g) {
    const int32_t n = channels - ch < g ? channels - ch : g;
    gw.ps = n;
    if (paths) win_k_groups(cprm, n >= FX_CHW_K_MIN ? ck : few, cin, &gw, wra, wrb, wca, wcb, ch);
    else wk(cprm, n >= FX_CHW_K_MIN ? ck : few, cin, &gw, wra, wrb, wca, wcb, ch);
    cm_grp_dw(paths, dprm, dk, fch, taps, T, ch, n, &gw, out, ra, rb, ca, cb);
  }
  return 1;
}
__attribute__((noinline)) static int cm_chw_pm(const void *cprm, fx_conv_kernel ck, const fx_buf *cin, int32_t wra,
                                               int32_t wrb, int32_t wca, int32_t wcb, const void *dprm,
                                               fx_dw_kernel dk, const int8_t *fch, const fx_buf *out, int32_t ra,
                                               int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
  return cm_chw_pm_b(1, 0, cprm, ck, FX_CONV_FEW, cin, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb,
                     channels);
}
/* cm_chw_groups' checks, then cm_chw_pm without the one-channel paths (fx_chw_kg: code generation found that every
   tile's groups hold more than one channel; an RGB stem goes to fx_chw_k). */
static int cm_chw_pm0(fx_win_fn wk, const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin,
                      const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm,
                      fx_dw_kernel dk, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                      int32_t cb, int32_t channels) {
  const bt_conv_params *const cp = cprm;
  if (win->ps != 1 || win->rows || wra != win->r0 || wca != win->c0 || wrb <= wra || wcb <= wca ||
      ((const bt_depthwise_params *)dprm)->depth_multiplier != 1 || (cp->kh == 3 && cp->kw * cp->in.c == 9))
    return 0;
  return cm_chw_pm_b(0, wk, cprm, ck, few, cin, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels);
}
/* The one-channel paths' groups (cm_chw_groups checked the window, the depth multiplier and the RGB stem). */
__attribute__((noinline)) static int cm_chw_groups1(const void *cprm, const fx_buf *cin, int32_t wra, int32_t wrb,
                                                   int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
                                                   const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb,
                                                   int32_t ca, int32_t cb, int32_t channels) {
  const bt_depthwise_params *const dp = dprm;
  const int32_t T = dp->conv.kh * dp->conv.kw, box = (wrb - wra) * (wcb - wca);
  fx_prm cq;
  fx_buf gw = {0, wra, wca, wcb - wca, 1, 0};
  const int32_t cx0 = win_geom(FX_CONV, cprm, cin, &gw, wca, wcb, 0, 0, &cq);
  bt_conv_params *const c = &cq.c;
  cm_conv1 st;
  if (!conv1_prep_ch(c, &st, 1)) return 0;
  const int32_t K = c->kh * c->kw * c->in.c;
  const int32_t used = ((K > 2 * CM_PAIR_K ? K : 2 * CM_PAIR_K) * 2 + 3) & ~3;   /* fw's bytes the filters take */
  int32_t g = ((int32_t)sizeof(st.fw) - used - 4) / (box + T);
  g = g >= channels ? channels : g & ~1;
  if (g < CM_GRP_MIN) return 0;
  int8_t *const taps = (int8_t *)st.fw + used, *const wb = taps + ((g * T + 3) & ~3);
  gw.base = wb;
  const box_src s = {cin->rows ? 0 : fx_at(cin, cin->r0, cx0), cin->r0, cin->wp * cin->ps, cin->rows,
                     cin->rows ? cx0 * cin->ps : 0};
  for (int32_t ch = 0; ch < channels; ch += g) {
    const int32_t n = channels - ch < g ? channels - ch : g;
    gw.ps = c->out.pixel_stride = n;
    for (int32_t j = 0; j < n; j++) {
      if (ch + j) conv1_prep_ch(c, &st, 0);
      const box_dst d0 = {&gw, wca, j}, d1 = {&gw, wca, j + 1};
      const int pair = j + 1 < n && st.fast && st.nrun == 1 && st.run <= CM_PAIR_K &&
                       conv1_pair_d(c, K, &st, &s, &d0, &d1, wra, wrb);
      if (!pair) conv1_rows(c, &st, &s, &d0, wra, wrb);
      const int32_t m = pair ? 2 : 1;
      c->filter += m * K; c->multiplier += m; c->shift += m;
      if (c->bias) c->bias += m;
      j += m - 1;
    }
    cm_grp_dw(1, dprm, dk, fch, taps, T, ch, n, &gw, out, ra, rb, ca, cb);
  }
  return 1;
}
static int cm_chw_rows(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
                       int32_t wcb, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k, int32_t n_in,
                       int32_t img_w, int32_t img_c, const void *dprm, const int8_t *fch, const fx_buf *out,
                       int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels, int pulled);
/* The group paths, each in its own frame (the stack of one, not both): an RGB stem's (cm_chw_rows), else the conv
   kernel's first, then the one-channel paths'. */
__attribute__((noinline)) static int cm_chw_groups(const void *cprm, fx_conv_kernel ck, const fx_buf *cin,
                                                   const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
                                                   int32_t wcb, const void *dprm, fx_dw_kernel dk, const int8_t *fch,
                                                   const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                                                   int32_t channels) {
  if (win->ps != 1 || win->rows || wra != win->r0 || wca != win->c0 || wrb <= wra || wcb <= wca ||
      ((const bt_depthwise_params *)dprm)->depth_multiplier != 1)
    return 0;
  const bt_conv_params *const cp = cprm;
  if (cp->kh == 3 && cp->kw * cp->in.c == 9)   /* an RGB stem: its own group path (else fx_k_chw1's pair9) */
    return cm_chw_rows(cprm, cin, win, wra, wrb, wca, wcb, 0, 0, 0, 0, 0, 0, 0, 0, dprm, fch, out, ra, rb, ca, cb,
                       channels, 0);
  return cm_chw_pm(cprm, ck, cin, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels) ||
         cm_chw_groups1(cprm, cin, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels);
}
#define FX_CHW_GROUPS cm_chw_groups

#define FX_CONV1 cm_conv1
#include "../reference/fx_hooks.h"

/* A one-channel-window tile whose conv pulls its streamed input (fx_pulled_chw; pulled 1: ta..img_c its
   arguments) or reads it from the arena (fx_chw; pulled 0: an RGB stem, cm_chw_groups): both operators' geometry
   once, then per group of channels (an RGB stem: up to CM_S3_PAIRS channel pairs, cm_s3_prep, each output row's
   input rows pulled once for all of them, the extra windows in the one-channel state's filter buffer; else one
   channel) the conv's rows made (pulled: as fx_k_pulled does), then the depthwise on each window as fx_k_chw
   does. Pulled 0 returns 0 when cm_s3_prep does not take the first channels (fx_k_chw1's pair path then). */
__attribute__((noinline)) static int cm_chw_rows(const void *cprm, const fx_buf *cin, const fx_buf *win,
                                                 int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, int32_t ta,
                                                 int32_t tb, int32_t s, int32_t pad, int32_t k, int32_t n_in,
                                                 int32_t img_w, int32_t img_c, const void *dprm,
                                                 const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb,
                                                 int32_t ca, int32_t cb, int32_t channels, int pulled) {
  if (win->ps != 1 || win->rows || (pulled && cin->rows)) return 0;
  fx_prm cq, dq;
  const int32_t cx0 = win_geom(FX_CONV, cprm, cin, win, wca, wcb, 0, 0, &cq);
  bt_conv_params *const c = &cq.c;
  cm_conv1 st;
  if (c->out.c != 1 || !conv1_prep_ch(c, &st, 1)) return 0;
  cm_s3 S;
  int32_t np = CM_S3_PREP(c, win, wrb, channels, (int8_t *)st.fw, (int32_t)sizeof st.fw, &S);   /* the first group */
  if (!pulled && !np) return 0;
  const int32_t dx0 = win_geom(FX_DW, dprm, win, out, ca, cb, 0, fch, &dq);
  bt_conv_params *const d = &dq.d.conv;
  const int32_t K = c->kh * c->kw * c->in.c, T = d->kh * d->kw;
  /* pulled: an output row's input rows go to the input window's first physical rows (as fx_k_pulled) */
  const int32_t pitch = cin->wp * cin->ps, img_row = img_w * img_c;
  int8_t *const dst = pulled ? cin->base + (ta - cin->c0) * cin->ps : 0;
  box_src src = {cin->base + (cx0 - cin->c0) * cin->ps, 0, pitch, 0, 0};
  if (!pulled)
    src = (box_src){cin->rows ? 0 : fx_at(cin, cin->r0, cx0), cin->r0, pitch, cin->rows, cin->rows ? cx0 * cin->ps : 0};
  const box_dst cd = {win, wca, 0};
  box_dst dd = {out, ca, 0};
  const int8_t *const din = fx_at(win, win->r0, dx0);
  FX_DW1_CHAN dw;
  int dw_ok = 0;
  for (int32_t ch = 0; ch < channels;) {
    if (ch) {   /* a later group (the one-channel values only when it is one channel) */
      np = CM_S3_PREP(c, win, wrb, channels - ch, (int8_t *)st.fw, (int32_t)sizeof st.fw, &S);
      if (!np) conv1_prep_ch(c, &st, 0);
    }
    const int32_t nc = np ? 2 * np : 1;
    if (!pulled && !np) conv1_rows(c, &st, &src, &cd, wra, wrb);
    else
      for (int32_t y = wra; y < wrb; y++) {
        if (pulled) {
          const int32_t r0 = BT_MAX(y * s - pad, 0), r1 = BT_MIN(y * s - pad + k, n_in);
          if (r1 > r0 && tb > ta)
            bt_read_input_rows((uint32_t)(r0 * img_row + ta * img_c), (uint32_t)((tb - ta) * img_c),
                               (uint32_t)(r1 - r0), (uint32_t)img_row, dst, (uint32_t)pitch);
          src.y0 = r0;
        }
        if (!np) { conv1_row1(c, &st, &src, &cd, y); continue; }
        /* every pair's row from the same input rows (the row's first output at its offset in each window) */
        cm_s3_row(&S, c, &st, &src, y, (y - win->r0) * win->wp + (wca - win->c0));
      }
    if (np) cm_s3_flush(&S);
    for (int32_t j = 0; j < nc; j++) {   /* the depthwise on each channel made */
      int8_t *const wj = j ? S.wn + (j - 1) * S.bytes : 0;
      dd.oc = ch + j;
      dw_ok = dw1_ch(&dq.d, j ? wj + (dx0 - win->c0) : din, win->r0, &dd, ra, rb, &dw, !dw_ok);
      if (!dw_ok) {
        fx_buf wb = *win;
        if (j) wb.base = wj;
        fx_win(FX_DW, dprm, &wb, out, ra, rb, ca, cb, ch + j, fch);
      }
      d->filter += T; d->multiplier++; d->shift++;
      if (d->bias) d->bias++;
    }
    c->filter += nc * K; c->multiplier += nc; c->shift += nc;
    if (c->bias) c->bias += nc;
    ch += nc;
  }
  return 1;
}
static int fx_k_pulled_chw(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb,
                           int32_t wca, int32_t wcb, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k,
                           int32_t n_in, int32_t img_w, int32_t img_c, const void *dprm, const int8_t *fch,
                           const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
  return cm_chw_rows(cprm, cin, win, wra, wrb, wca, wcb, ta, tb, s, pad, k, n_in, img_w, img_c, dprm, fch, out, ra,
                     rb, ca, cb, channels, 1);
}
