/* The cortex-m set's patch-matrix convolution loops (im2col.h), one static inline function: the
 * bt_conv_s8_pm* variants (conv.c) instantiate it for any layer, and model.c for each of its
 * patch-matrix layers with that layer's parameters as constants (BT_CONV_PM_INLINE, bt_variants.h),
 * so gcc folds the shape, strides, offsets and loop bounds into the code. */
#ifndef BT_CONV_PM_H
#define BT_CONV_PM_H
/* With a layer's constants gcc warns about the int32 overflow of the tail loops' trip counts on paths
 * that never run (iteration 2^31 / K): the loops stop at the layer's n, so the warning is silenced. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "im2col.h"

#define BT_PM3_T 8   /* triples of pixels widened at once on the 3-pixel path (their columns share 3 BT_COL3) */

/* The patch-matrix path's bt_rq2 condition: bt_rq2_ok's (requant.h), except that a channel whose
 * multiplier is 0 may have any shift in [-31, 31] (TFLite writes multiplier 0, shift 0 for a channel of
 * scale 0, as in vww's 1x1 layers): its output is the zero point with either requantisation, and
 * bt_pm_shift hands bt_rq2 a shift in its range for it. */
static inline int bt_pm_rq2_ok(const int32_t *mult, const int32_t *shift, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    const int32_t m = mult[i], s = shift[i];
    if (m == 0 ? (s < -31 || s > 31) : (m < (1 << 30) || s > -2 || s < -31)) return 0;
  }
  return 1;
}
static inline int32_t bt_pm_shift(int32_t s) { return s > -2 ? -2 : s; }
#define BT_PM_P2(s) bt_rq2_p2(bt_pm_shift(s))
#define BT_PM_E1(s) bt_rq2_e1(bt_pm_shift(s))

/* fast 2, the doubled sums: the columns hold 2 (x + off) and the sums start from 2 bias, so an accumulator is
 * a2 = 2a and SMMLAR(a2, m, R) = R + floor((a m + 2^30) / 2^31) = R + h, TFLite's SaturatingRoundingDoublingHighMul
 * for m >= 2^30 (or m = 0); with R = 2^(e-1) - [a < 0] (+ zp 2^e) an ASR by e = -shift is its
 * RoundingDivideByPOT (bt_rq2's floor form, requant.h) (plus zp): ADD, SMMLAR, ASR per output instead of bt_rq2's
 * AND, ORR, ADD, SMLAL, ASR. Needs bt_pm_rq2_ok and |bias| + K 255 128 < 2^30 on every channel (2a in int32),
 * which code generation checks (kernel_variants.py doubled_ok): no run-time check, so only model.c calls it.
 * bt_smmlar: dsp.h. */
static inline __attribute__((always_inline)) int32_t bt_rq2m(int32_t a2, int32_t m, int32_t s) {
  const int32_t e = -bt_pm_shift(s);
  return bt_smmlar(a2, m, (1 << (e - 1)) + (a2 >> 31)) >> e;
}

/* Requantised, clamped output of one accumulator: fast 1 takes bt_rq2 (p2, e1 from the shift), 2 bt_rq2m
 * (doubled sums), 0 bt_mbqm_fast; act 2: the activation range is the whole int8 range (one SSAT), act 1: its upper
 * bound is 127 (SSAT, then the lower bound: act_min >= -128), act 0: any range. */
static inline __attribute__((always_inline)) int32_t bt_pm_out(int32_t acc, int32_t m, int32_t s, int32_t p2, int32_t e1,
                                                           int32_t zp, int32_t lo, int32_t hi, const int fast,
                                                           const int act) {
  const int32_t v = (fast == 2 ? bt_rq2m(acc, m, s) : fast ? bt_rq2(acc, m, p2, e1) : bt_mbqm_fast(acc, m, s)) + zp;
  if (act == 2) return bt_ssat8(v);
  if (act == 1) { const int32_t t = bt_ssat8(v); return t < lo ? lo : t; }
  return bt_clamp(v, lo, hi);
}

/* The 3-pixel path's six sums of a pair of output channels requantised and stored in asm (gcc's own code
 * for them reloaded the channels' constants from the stack for every output): bt_rq2 (AND, ORR, ADD,
 * SMLAL, ASR), the output zero point folded into the rounding word when both channels allow it
 * (bt_rq2_zp_ok: ZA empty) or one ADD, SSAT #8 (act 2: the activation range is all of int8), STRB at
 * pixel q's output o + q*ops (the band's outputs are in raster order, ops apart). k = {m0, p0, e0, m1,
 * p1, e1}. Only with a layer's constant output pixel stride (the store offsets are immediates), DSP
 * and optimised. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
#define BT_PM_RQ_ONE(a, ZA, OFS)                          \
  "and %[lo], %[" a "], #0x80000000\n\t"                   \
  "orr %[lo], %[lo], #0x40000000\n\t"                      \
  "add %[hi], %[pz], %[" a "], asr #31\n\t"                \
  "smlal %[lo], %[hi], %[" a "], %[m]\n\t"                 \
  "asr %[hi], %[hi], %[e]\n\t" ZA                          \
  "ssat %[hi], #8, %[hi]\n\t"                              \
  "strb %[hi], [%[o], %[" OFS "]]\n\t"
#define BT_PM_RQ6(ZA)                                                                   \
  "ldrd %[m], %[pz], [%[k]]\n\tldr %[e], [%[k], #8]\n\t"                                \
  BT_PM_RQ_ONE("a00", ZA, "s00") BT_PM_RQ_ONE("a10", ZA, "s10") BT_PM_RQ_ONE("a20", ZA, "s20") \
  "ldrd %[m], %[pz], [%[k], #12]\n\tldr %[e], [%[k], #20]\n\t"                          \
  BT_PM_RQ_ONE("a01", ZA, "s01") BT_PM_RQ_ONE("a11", ZA, "s11") BT_PM_RQ_ONE("a21", ZA, "s21")
#define BT_PM_RQM_ONE(a, ZA, OFS)                         \
  "add %[hi], %[pz], %[" a "], asr #31\n\t"                \
  "smmlar %[hi], %[" a "], %[m], %[hi]\n\t"                \
  "asr %[hi], %[hi], %[e]\n\t" ZA                          \
  "ssat %[hi], #8, %[hi]\n\t"                              \
  "strb %[hi], [%[o], %[" OFS "]]\n\t"
#define BT_PM_RQM6(ZA)                                                                     \
  "ldrd %[m], %[pz], [%[k]]\n\tldr %[e], [%[k], #8]\n\t"                                   \
  BT_PM_RQM_ONE("a00", ZA, "s00") BT_PM_RQM_ONE("a10", ZA, "s10") BT_PM_RQM_ONE("a20", ZA, "s20") \
  "ldrd %[m], %[pz], [%[k], #12]\n\tldr %[e], [%[k], #20]\n\t"                             \
  BT_PM_RQM_ONE("a01", ZA, "s01") BT_PM_RQM_ONE("a11", ZA, "s11") BT_PM_RQM_ONE("a21", ZA, "s21")
#define BT_PM_RQ_ADD "add %[hi], %[hi], %[zp]\n\t"
#define BT_PM_RQ_OPS                                                                                   \
  : [lo] "=&r"(lo_), [hi] "=&r"(hi_), [m] "=&r"(m_), [pz] "=&r"(pz_), [e] "=&r"(e_)                   \
  : [a00] "r"(acc[0]), [a01] "r"(acc[1]), [a10] "r"(acc[2]), [a11] "r"(acc[3]), [a20] "r"(acc[4]),   \
    [a21] "r"(acc[5]), [k] "r"(k), [o] "r"(o), [s00] "i"(0), [s01] "i"(1), [s10] "i"(OPS),           \
    [s11] "i"(OPS + 1), [s20] "i"(2 * OPS), [s21] "i"(2 * OPS + 1)
#define BT_PM_RQM_OPS                                                                                  \
  : [hi] "=&r"(hi_), [m] "=&r"(m_), [pz] "=&r"(pz_), [e] "=&r"(e_)                                     \
  : [a00] "r"(acc[0]), [a01] "r"(acc[1]), [a10] "r"(acc[2]), [a11] "r"(acc[3]), [a20] "r"(acc[4]),   \
    [a21] "r"(acc[5]), [k] "r"(k), [o] "r"(o), [s00] "i"(0), [s01] "i"(1), [s10] "i"(OPS),           \
    [s11] "i"(OPS + 1), [s20] "i"(2 * OPS), [s21] "i"(2 * OPS + 1)
static inline __attribute__((always_inline)) void bt_pm_rq6(const int32_t *acc, const int32_t *k, int8_t *o,
                                                            const int32_t OPS, const int folded, int32_t zp) {
  uint32_t lo_, hi_, m_, pz_, e_;
  if (folded) __asm__ volatile(BT_PM_RQ6("") BT_PM_RQ_OPS : "memory");
  else __asm__ volatile(BT_PM_RQ6(BT_PM_RQ_ADD) BT_PM_RQ_OPS, [zp] "r"(zp) : "memory");
}
/* The same for doubled sums (fast 2): ADD, SMMLAR, ASR; k = {m0, R0, e0, m1, R1, e1}, R = 2^(e-1) (+ zp 2^e when
 * folded), e = -shift. */
static inline __attribute__((always_inline)) void bt_pm_rqm6(const int32_t *acc, const int32_t *k, int8_t *o,
                                                             const int32_t OPS, const int folded, int32_t zp) {
  uint32_t hi_, m_, pz_, e_;
  if (folded) __asm__ volatile(BT_PM_RQM6("") BT_PM_RQM_OPS : "memory");
  else __asm__ volatile(BT_PM_RQM6(BT_PM_RQ_ADD) BT_PM_RQM_OPS, [zp] "r"(zp) : "memory");
}
#undef BT_PM_RQM_OPS
#undef BT_PM_RQ_OPS
#undef BT_PM_RQ_ADD
#undef BT_PM_RQ6
#undef BT_PM_RQ_ONE
#undef BT_PM_RQM6
#undef BT_PM_RQM_ONE
#define BT_PM_RQ6_ASM 1
#else
#define BT_PM_RQ6_ASM 0
#endif

/* The per-call values pixel_col needs, read once (int8 output stores could alias the parameters). */
typedef struct {
  int32_t K, off, off2, ow, ips, ops, in_row, sh, sw;
  int direct;   /* 1x1 without padding: the pixel is read in place */
} bt_pm_geom;

/* Widens the patch of the output pixel whose window starts at input (iy0, ix0) tap by tap into pixel q's place
 * of the P interleaved at col: with c_in % 4 == 0 each tap is whole groups of 4 values (tap t at col + P t c_in),
 * a padding tap is zeros; no gathered copy, any pixel stride and dilation. (Inlined at bt_pm_col's call sites it
 * grows gcc's size estimate of every instance: bt_rq2m, bt_tailw and bt_tail_dot are always_inline so that an
 * RGB stem's instance keeps them inline; out of line, ResNet-8's 8x8 layer lost most of the gain.) */
static inline __attribute__((always_inline)) void bt_pm_taps(const bt_conv_params *p, const int8_t *in,
                                                             int32_t in_y0, int32_t iy0, int32_t ix0, int16_t *col,
                                                             int32_t q, int32_t off, int32_t off2, const int32_t P,
                                                             const int dbl) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  int16_t *d = col;
  for (int32_t ky = 0; ky < p->kh; ky++) {
    const int32_t iy = iy0 + ky * p->dil_h;
    const int row_ok = (uint32_t)iy < (uint32_t)p->in.h;
    const int8_t *const irow = in + (iy - in_y0) * in_row;
    for (int32_t kx = 0; kx < p->kw; kx++, d += P * cin) {
      const int32_t ix = ix0 + kx * p->dil_w;
      if (row_ok && (uint32_t)ix < (uint32_t)p->in.w) {
        bt_widenp_x(irow + ix * ips, d, q, cin, P, off, off2, dbl);
      } else {
        int16_t *z = d + 2 * q;
        for (int32_t k = 0; k < cin; k += 4, z += 4 * P) {
          const int32_t zero = 0;
          __builtin_memcpy(z, &zero, 4);
          __builtin_memcpy(z + 2 * P, &zero, 4);
        }
      }
    }
  }
}

/* The patch's values j..j+3 (j % 4 == 0) as one word, the patch inside the image: its kh filter rows are runs
 * of `run` (>= 4) input bytes `rs` apart from s. One unaligned load inside a run, else the run's last bytes
 * (the load ending at its end, shifted down) and the next run's first ones (ORR with a shift): every load
 * inside the runs. */
static inline __attribute__((always_inline)) uint32_t bt_pm_word(const int8_t *s, int32_t rs, int32_t run,
                                                                  int32_t j) {
  const int32_t ky = j / run, o = j % run;
  const int8_t *r = s + ky * rs;
  if (o + 4 <= run) return bt_ld4(r + o);
  const int32_t n1 = run - o;   /* 1..3 bytes from this run, the rest from the next one */
  return (bt_ld4(r + run - 4) >> (8 * (4 - n1))) | (bt_ld4(r + rs) << (8 * n1));
}

/* A patch inside the image whose filter rows are not whole groups of 4 values (a stem's kw*c_in = 9, 15, ...),
 * layer constants only (K <= BT_PM_WORDS_K: the loop unrolled, each group's rows known at compile time):
 * widened straight from the input, the groups that straddle two rows by bt_pm_word (2 loads and 2 shifts
 * instead of a gather's copies of every byte and a reload), the K % 4 tail from the load ending at the last
 * run's end, its missing values masked to 0 (the layout of bt_widen_x / bt_widenp_x). */
#define BT_PM_WORDS_K 64
static inline __attribute__((always_inline)) void bt_pm_widen_words(const int8_t *s, int32_t rs, int32_t run,
                                                                     int32_t K, int16_t *col, int32_t q,
                                                                     const int32_t P, int32_t off, int32_t off2,
                                                                     const int dbl) {
  const int32_t K4 = K & ~3, r = K & 3;
  int16_t *d = P ? col + 2 * q : col;
#pragma GCC unroll 16
  for (int32_t j = 0; j < K4; j += 4, d += P ? 4 * P : 4) {
    const uint32_t v = bt_pm_word(s, rs, run, j);
    int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
    if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
    __builtin_memcpy(d, &a, 4);
    __builtin_memcpy(d + (P ? 2 * P : 2), &b, 4);
  }
  if (r) {   /* values K4..K-1: the last run's last r bytes */
    const uint32_t v = bt_ld4(s + (K4 / run) * rs + run - 4) >> (8 * (4 - r));
    if (P) {
      int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, v), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, v);
      if (r < 3) a &= 0xffff;          /* value k+2 missing */
      b = r > 1 ? b & 0xffff : 0;      /* value k+3 always, k+1 when r == 1 */
      if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
      __builtin_memcpy(d, &a, 4);
      __builtin_memcpy(d + 2 * P, &b, 4);
    } else {
      for (int32_t i = 0; i < r; i++) d[i] = (int16_t)(((int8_t)(v >> (8 * i)) + off) * (1 + dbl));
    }
  }
}

/* Widens output pixel tt of the band (raster order from row y0)'s patch into col; P = 0: col is a
 * column of its own (bt_widen), else pixel q of the P interleaved at col (bt_widenp). A 1x1 without
 * padding (g->direct) reads the pixel in place; a patch inside the image of a dense input without
 * horizontal dilation is widened from its kh input runs directly when its filter rows are whole groups
 * of 4 values (kw*c_in % 4 == 0), or, with the layer's constants, by bt_pm_widen_words (runs of 4 or more
 * values, K <= BT_PM_WORDS_K); with interleaved columns (P > 0) and c_in % 4 == 0 other patches are
 * widened tap by tap (bt_pm_taps); the rest are gathered into patch first (bt_gather: zero point at
 * padding taps). Returns its output address. */
static inline __attribute__((always_inline)) int8_t *bt_pm_col(const bt_conv_params *p, const bt_pm_geom *g,
                                                              const int8_t *in, int32_t in_y0, int8_t *out,
                                                              int32_t y0, int32_t tt, int8_t *__restrict patch,
                                                              int16_t *__restrict col, int32_t q, const int32_t P,
                                                              const int dbl) {
  const int8_t *src = patch;
  if (g->direct && g->sh == 1 && g->sw == 1 && g->in_row == g->ow * g->ips) {
    src = in + (y0 - in_y0) * g->in_row + tt * g->ips;   /* the band's pixels in raster order, no division */
  } else if (g->direct) {
    const int32_t y = y0 + tt / g->ow, x = tt % g->ow;
    src = in + (y * g->sh - in_y0) * g->in_row + x * g->sw * g->ips;
  } else {
    const int32_t y = y0 + tt / g->ow, x = tt % g->ow;
    const int32_t run = p->kw * p->in.c, iy0 = y * g->sh - p->pad_top, ix0 = x * g->sw - p->pad_left;
    const int words = (run & 3) && __builtin_constant_p(run) && __builtin_constant_p(g->K) && run >= 4 &&
                      g->K <= BT_PM_WORDS_K;
    if (((run & 3) == 0 || words) && g->ips == p->in.c && p->dil_w == 1 && iy0 >= 0 &&
        iy0 + (p->kh - 1) * p->dil_h < p->in.h && ix0 >= 0 && ix0 + p->kw <= p->in.w) {
      const int8_t *s = in + (iy0 - in_y0) * g->in_row + ix0 * g->ips;
#ifdef __OPTIMIZE__   /* -O0 knows no constants (words is 0): its copies would only grow the frame */
      if (words) {
        bt_pm_widen_words(s, p->dil_h * g->in_row, run, g->K, col, q, P, g->off, g->off2, dbl);
        return out + tt * g->ops;
      }
#endif
      for (int32_t ky = 0; ky < p->kh; ky++, s += p->dil_h * g->in_row) {
        if (P == 0) bt_widen_x(s, col + ky * run, run, g->off, g->off2, dbl);
        else bt_widenp_x(s, col + P * ky * run, q, run, P, g->off, g->off2, dbl);
      }
      return out + tt * g->ops;
    }
    if (P != 0 && (p->in.c & 3) == 0) {   /* whole groups per tap: widened tap by tap, no patch */
      bt_pm_taps(p, in, in_y0, iy0, ix0, col, q, g->off, g->off2, P, dbl);
      return out + tt * g->ops;
    }
    bt_gather(p, in, in_y0, y, x, patch);
  }
  if (P == 0) bt_widen_x(src, col, g->K, g->off, g->off2, dbl);
  else bt_widenp_x(src, col, q, g->K, P, g->off, g->off2, dbl);
  return out + tt * g->ops;
}

/* The patch-matrix path (im2col.h): output pixels of the band three at a time (bt_mm3x2) when the patch has at
 * most BT_COL3 values (up to BT_PM3_T triples widened at once) or, up to BT_COL_MAX, one triple at a time when
 * no patch is gathered (1x1 without padding, or c_in % 4 == 0: bt_pm_taps), else two at a time (bt_mm2x2),
 * output channels two at a time; the pixels left over two at a time, an odd last pixel alone, four channels at
 * a time (bt_mv1x4). Stack: 3 columns of BT_COL_MAX int16 (3840 bytes); a gathered patch (BT_COL_MAX bytes)
 * lies in it after 3 BT_COL3 (the triples' columns on the BT_COL3 path, at most 2 BT_COL_MAX on the others). */
static inline __attribute__((always_inline)) void bt_conv_pm(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                           int8_t *out, int32_t y0, int32_t y1, const int fast,
                                                           const int act) {
  int16_t col[3 * BT_COL_MAX] __attribute__((aligned(4)));   /* one frame under 4 KB: bt_mm3x2's end pointer */
  int8_t *const patch = (int8_t *)(col + 3 * BT_COL3);         /* BT_COL_MAX bytes, used only with P = 0 or 2 or
                                                                  K <= BT_COL3 (bt_pm_col gathers no other) */
  const int32_t cout = p->out.c, K = p->kh * p->kw * p->in.c;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const filter = p->filter;
  const bt_pm_geom g = {K, p->input_offset, bt_dup16(p->input_offset), p->out.w, p->in.pixel_stride,
                      p->out.pixel_stride, p->in.w * p->in.pixel_stride, p->stride_h, p->stride_w,
                      p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0};
  const int32_t n = (y1 - y0) * p->out.w;
  const int dbl = fast == 2;   /* doubled sums (bt_rq2m) */
  int32_t t = 0;
  if (K <= BT_COL3 || g.direct || (p->in.c & 3) == 0) {   /* three pixels at a time: each filter word unpacked
                                                              once for three columns */
    /* up to BT_PM3_T triples widened at once (triple j at col + j*S; over BT_COL3 values one), then per pair of
       output channels their constants loaded once for all the triples; the asm requantisation's outputs are
       in raster order from ob[0]: as many triples as the columns hold */
    const int asm_rq = BT_PM_RQ6_ASM && fast && act == 2 && __builtin_constant_p(g.ops) && g.ops > 0 && g.ops < 2000;
    const int32_t S = BT_GROUPED(3, K), tcap = asm_rq ? BT_COL3 : BT_PM3_T;
    const int32_t tmax = K > BT_COL3 ? 1 : 3 * BT_COL3 / S < tcap ? 3 * BT_COL3 / S : tcap;
    int8_t *ob[3 * BT_PM3_T];
    ob[0] = out;   /* set in every pass (T >= 1); GCC -O2 cannot see it */
    while (t + 3 <= n) {
      int32_t T = (n - t) / 3;
      if (T > tmax) T = tmax;
      for (int32_t j = 0; j < T; j++, t += 3) {
        int8_t *const o0 = bt_pm_col(p, &g, in, in_y0, out, y0, t, patch, col + j * S, 0, 3, dbl);
        int8_t *const o1 = bt_pm_col(p, &g, in, in_y0, out, y0, t + 1, patch, col + j * S, 1, 3, dbl);
        int8_t *const o2 = bt_pm_col(p, &g, in, in_y0, out, y0, t + 2, patch, col + j * S, 2, 3, dbl);
        if (!asm_rq) { ob[3 * j] = o0; ob[3 * j + 1] = o1; ob[3 * j + 2] = o2; }
        else if (j == 0) ob[0] = o0;
      }
      int32_t oc = 0;
      for (; oc + 2 <= cout; oc += 2) {
        const int32_t b0 = bias ? bias[oc] * (1 + dbl) : 0, b1 = bias ? bias[oc + 1] * (1 + dbl) : 0;
        const int32_t m0 = mult[oc], m1 = mult[oc + 1], s0 = shift[oc], s1 = shift[oc + 1];
        const int32_t p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;
        const int32_t p1 = fast ? BT_PM_P2(s1) : 0, e1 = fast ? BT_PM_E1(s1) : 0;
        const int8_t *const f = filter + oc * K;
#if BT_PM_RQ6_ASM
        if (fast == 2 && asm_rq) {
          const int32_t q0 = -bt_pm_shift(s0), q1 = -bt_pm_shift(s1);
          const int folded = q0 <= 22 && q1 <= 22;   /* bt_rq2_zp_ok */
          const int32_t k[6] = {m0, (1 << (q0 - 1)) + (folded ? (int32_t)((uint32_t)zp << q0) : 0), q0,
                                m1, (1 << (q1 - 1)) + (folded ? (int32_t)((uint32_t)zp << q1) : 0), q1};
          int8_t *o = ob[0] + oc;
          const int16_t *cj = col;
          if (folded) {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rqm6(acc, k, o, g.ops, 1, zp);
            }
          } else {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rqm6(acc, k, o, g.ops, 0, zp);
            }
          }
          continue;
        }
        if (fast == 1 && asm_rq) {
          const int folded = bt_rq2_zp_ok(bt_pm_shift(s0)) && bt_rq2_zp_ok(bt_pm_shift(s1));
          const int32_t k[6] = {m0, folded ? bt_rq2_p2_zp(p0, e0, zp) : p0, e0,
                                m1, folded ? bt_rq2_p2_zp(p1, e1, zp) : p1, e1};
          int8_t *o = ob[0] + oc;   /* triple j's outputs at ob[0] + 3*j*ops: raster order */
          const int16_t *cj = col;
          if (folded) {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rq6(acc, k, o, g.ops, 1, zp);
            }
          } else {
            for (int32_t j = 0; j < T; j++, cj += S, o += 3 * g.ops) {
              int32_t acc[6];
              bt_mm3x2(cj, f, K, b0, b1, acc);
              bt_pm_rq6(acc, k, o, g.ops, 0, zp);
            }
          }
          continue;
        }
#endif
        for (int32_t j = 0; j < T; j++) {
          int32_t acc[6];
          bt_mm3x2(col + j * S, f, K, b0, b1, acc);
          int8_t *const o0 = ob[3 * j] + oc, *const o1 = ob[3 * j + 1] + oc, *const o2 = ob[3 * j + 2] + oc;
          o0[0] = (int8_t)bt_pm_out(acc[0], m0, s0, p0, e0, zp, lo, hi, fast, act);
          o0[1] = (int8_t)bt_pm_out(acc[1], m1, s1, p1, e1, zp, lo, hi, fast, act);
          o1[0] = (int8_t)bt_pm_out(acc[2], m0, s0, p0, e0, zp, lo, hi, fast, act);
          o1[1] = (int8_t)bt_pm_out(acc[3], m1, s1, p1, e1, zp, lo, hi, fast, act);
          o2[0] = (int8_t)bt_pm_out(acc[4], m0, s0, p0, e0, zp, lo, hi, fast, act);
          o2[1] = (int8_t)bt_pm_out(acc[5], m1, s1, p1, e1, zp, lo, hi, fast, act);
        }
      }
      if (oc < cout) {
        const int32_t b = bias ? bias[oc] * (1 + dbl) : 0;
        const int32_t s0 = shift[oc], p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;
        for (int32_t j = 0; j < T; j++) {
          int32_t acc[3];
          bt_mmpx1(col + j * S, filter + oc * K, K, 3, acc);
          /* asm_rq: only ob[0] is kept (more triples than ob holds), the outputs in raster order from it */
          int8_t *const o0 = asm_rq ? ob[0] + 3 * j * g.ops : ob[3 * j];
          int8_t *const o1 = asm_rq ? o0 + g.ops : ob[3 * j + 1], *const o2 = asm_rq ? o0 + 2 * g.ops : ob[3 * j + 2];
          o0[oc] = (int8_t)bt_pm_out(acc[0] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
          o1[oc] = (int8_t)bt_pm_out(acc[1] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
          o2[oc] = (int8_t)bt_pm_out(acc[2] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
        }
      }
    }
  }
  for (; t + 2 <= n; t += 2) {
    int8_t *const o0 = bt_pm_col(p, &g, in, in_y0, out, y0, t, patch, col, 0, 2, dbl);
    int8_t *const o1 = bt_pm_col(p, &g, in, in_y0, out, y0, t + 1, patch, col, 1, 2, dbl);
    int32_t oc = 0;
    for (; oc + 2 <= cout; oc += 2) {
      int32_t acc[4], b0 = 0, b1 = 0;
      if (bias) { b0 = bias[oc] * (1 + dbl); b1 = bias[oc + 1] * (1 + dbl); }
      bt_mm2x2(col, filter + oc * K, K, b0, b1, acc);
      const int32_t m0 = mult[oc], m1 = mult[oc + 1], s0 = shift[oc], s1 = shift[oc + 1];
      const int32_t p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;
      const int32_t p1 = fast ? BT_PM_P2(s1) : 0, e1 = fast ? BT_PM_E1(s1) : 0;
      const int32_t r00 = bt_pm_out(acc[0], m0, s0, p0, e0, zp, lo, hi, fast, act);
      const int32_t r01 = bt_pm_out(acc[1], m1, s1, p1, e1, zp, lo, hi, fast, act);
      const int32_t r10 = bt_pm_out(acc[2], m0, s0, p0, e0, zp, lo, hi, fast, act);
      const int32_t r11 = bt_pm_out(acc[3], m1, s1, p1, e1, zp, lo, hi, fast, act);
      o0[oc] = (int8_t)r00; o0[oc + 1] = (int8_t)r01; o1[oc] = (int8_t)r10; o1[oc + 1] = (int8_t)r11;
    }
    if (oc < cout) {
      int32_t acc[2];
      bt_mmpx1(col, filter + oc * K, K, 2, acc);
      const int32_t b = bias ? bias[oc] * (1 + dbl) : 0;
      const int32_t s0 = shift[oc], p0 = fast ? BT_PM_P2(s0) : 0, e0 = fast ? BT_PM_E1(s0) : 0;
      const int32_t r0 = bt_pm_out(acc[0] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
      const int32_t r1 = bt_pm_out(acc[1] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
      o0[oc] = (int8_t)r0; o1[oc] = (int8_t)r1;
    }
  }
  if (t < n) {
    int8_t *const o = bt_pm_col(p, &g, in, in_y0, out, y0, t, patch, col, 0, 0, dbl);
    int32_t oc = 0;
    for (; oc + 4 <= cout; oc += 4) {
      int32_t acc[4];
      acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;
      if (bias) { acc[0] = bias[oc] * (1 + dbl); acc[1] = bias[oc + 1] * (1 + dbl); acc[2] = bias[oc + 2] * (1 + dbl); acc[3] = bias[oc + 3] * (1 + dbl); }
      bt_mv1x4(col, filter + oc * K, K, acc);
      int32_t r[4];
      for (int k = 0; k < 4; k++) {
        const int32_t sk = shift[oc + k], pk = fast ? BT_PM_P2(sk) : 0, ek = fast ? BT_PM_E1(sk) : 0;
        r[k] = bt_pm_out(acc[k], mult[oc + k], sk, pk, ek, zp, lo, hi, fast, act);
      }
      o[oc] = (int8_t)r[0]; o[oc + 1] = (int8_t)r[1]; o[oc + 2] = (int8_t)r[2]; o[oc + 3] = (int8_t)r[3];
    }
    for (; oc < cout; oc++) {
      const int32_t a = bt_mv1x1(col, filter + oc * K, K, bias ? bias[oc] * (1 + dbl) : 0);
      const int32_t sk = shift[oc], pk = fast ? BT_PM_P2(sk) : 0, ek = fast ? BT_PM_E1(sk) : 0;
      o[oc] = (int8_t)bt_pm_out(a, mult[oc], sk, pk, ek, zp, lo, hi, fast, act);
    }
  }
}
#pragma GCC diagnostic pop
#endif
