/* CONV_2D int8 for Cortex-M DSP (M4/M7/M33). Variants (bt_variants.h), which model.c calls directly
 * (chosen at code generation, buildtool/kernel_variants.py); bt_conv_s8 picks the same one at run time:
 *  - patches of at most BT_COL_MAX (640) values (kh*kw*c_in): the patch-matrix path of im2col.h, two
 *    output pixels x two output channels per SMLAD step, the patch widened once per pixel (1x1 without
 *    padding reads the input pixel in place; other filters gather it, word copies inside the image);
 *    requantisation by bt_rq2 when every channel allows it, SSAT clamps when the upper bound is 127;
 *  - larger patches: direct convolution without scratch. For each output pixel and valid filter tap,
 *    four output channels at a time share each input word: one LDR + two SXTB16 (bytes 0,2 and,
 *    through ROR #8, bytes 1,3) + two SADD16 (input offset) per 4 input bytes, then per channel one
 *    LDR + two SXTB16 + two SMLAD (bt_dot4x4 in dsp.h); remainders in scalar code.
 * Stack: 3.2 KB on the patch-matrix path. Same results as the reference set (bt_kernels.h), same
 * TFLite weight layout. */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "im2col.h"
#include "bt_variants.h"

const char *bt_kernel_set_name(void) { return "cortex-m"; }

/* acc[0..nch) += sum_i f_k[i] * (ip[i] + off), nch 1 or 4 filters spaced fstride bytes apart */
static inline void dot_n(const int8_t *ip, const int8_t *f, int32_t fstride, int32_t n, int32_t off,
                         int32_t off2, int32_t *acc, int nch) {
  const int32_t n4 = n & ~3;
  if (nch == 4) {
    if (n4) bt_dot4x4(ip, f, fstride, n4, off2, acc);
    for (int32_t i = n4; i < n; i++) {
      const int32_t xv = ip[i] + off;
      for (int k = 0; k < 4; k++) acc[k] += f[k * fstride + i] * xv;
    }
  } else {
    int32_t a0 = acc[0];
    for (int32_t i = 0; i < n4; i += 4) {
      const uint32_t x = bt_ld4(ip + i), w = bt_ld4(f + i);
      a0 = bt_smlad(bt_sxtb16(w), bt_sadd16(bt_sxtb16(x), off2), a0);
      a0 = bt_smlad(bt_sxtb16_ror8(w), bt_sadd16(bt_sxtb16_ror8(x), off2), a0);
    }
    for (int32_t i = n4; i < n; i++) a0 += f[i] * (ip[i] + off);
    acc[0] = a0;
  }
}

/* Requantised, clamped output of one accumulator: fast takes bt_rq2 (p2, e1 from the shift), else
 * bt_mbqm_fast; act 2: the activation range is the whole int8 range (one SSAT), act 1: its upper
 * bound is 127 (SSAT, then the lower bound: act_min >= -128), act 0: any range. */
static inline __attribute__((always_inline)) int32_t rq_out(int32_t acc, int32_t m, int32_t s, int32_t p2, int32_t e1,
                                                           int32_t zp, int32_t lo, int32_t hi, const int fast,
                                                           const int act) {
  const int32_t v = (fast ? bt_rq2(acc, m, p2, e1) : bt_mbqm_fast(acc, m, s)) + zp;
  if (act == 2) return bt_ssat8(v);
  if (act == 1) { const int32_t t = bt_ssat8(v); return t < lo ? lo : t; }
  return bt_clamp(v, lo, hi);
}

/* The per-call values pixel_col needs, read once (int8 output stores could alias the parameters). */
typedef struct {
  int32_t K, off, off2, ow, ips, ops, in_row, sh, sw;
  int direct;   /* 1x1 without padding: the pixel is read in place */
} col_geom;

/* Widens output pixel tt of the band (raster order from row y0)'s patch into col (gathered through
 * patch unless g->direct); returns its output address. */
static inline __attribute__((always_inline)) int8_t *pixel_col(const bt_conv_params *p, const col_geom *g,
                                                              const int8_t *in, int32_t in_y0, int8_t *out,
                                                              int32_t y0, int32_t tt, int8_t *patch, int16_t *col) {
  const int32_t y = y0 + tt / g->ow, x = tt % g->ow;
  const int8_t *src = patch;
  if (g->direct) src = in + (y * g->sh - in_y0) * g->in_row + x * g->sw * g->ips;
  else bt_gather(p, in, in_y0, y, x, patch);
  bt_widen(src, col, g->K, g->off, g->off2);
  return out + ((y - y0) * g->ow + x) * g->ops;
}

/* The patch-matrix path (im2col.h): output pixels of the band two at a time, output channels two at
 * a time; an odd last pixel alone, four channels at a time (bt_mv1x4). */
static inline __attribute__((always_inline)) void conv_cols(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                           int8_t *out, int32_t y0, int32_t y1, const int fast,
                                                           const int act) {
  int16_t col[2 * BT_COL_MAX] __attribute__((aligned(4)));
  int8_t patch[BT_COL_MAX] __attribute__((aligned(4)));
  const int32_t cout = p->out.c, K = p->kh * p->kw * p->in.c;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const filter = p->filter;
  const col_geom g = {K, p->input_offset, bt_dup16(p->input_offset), p->out.w, p->in.pixel_stride,
                      p->out.pixel_stride, p->in.w * p->in.pixel_stride, p->stride_h, p->stride_w,
                      p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0};
  const int32_t n = (y1 - y0) * p->out.w;
  int32_t t = 0;
  for (; t + 2 <= n; t += 2) {
    int8_t *const o0 = pixel_col(p, &g, in, in_y0, out, y0, t, patch, col);
    int8_t *const o1 = pixel_col(p, &g, in, in_y0, out, y0, t + 1, patch, col + BT_COL_MAX);
    int32_t oc = 0;
    for (; oc + 2 <= cout; oc += 2) {
      int32_t acc[4], b0 = 0, b1 = 0;
      if (bias) { b0 = bias[oc]; b1 = bias[oc + 1]; }
      bt_mm2x2(col, filter + oc * K, K, b0, b1, acc);
      const int32_t m0 = mult[oc], m1 = mult[oc + 1], s0 = shift[oc], s1 = shift[oc + 1];
      const int32_t p0 = fast ? bt_rq2_p2(s0) : 0, e0 = fast ? bt_rq2_e1(s0) : 0;
      const int32_t p1 = fast ? bt_rq2_p2(s1) : 0, e1 = fast ? bt_rq2_e1(s1) : 0;
      const int32_t r00 = rq_out(acc[0], m0, s0, p0, e0, zp, lo, hi, fast, act);
      const int32_t r01 = rq_out(acc[1], m1, s1, p1, e1, zp, lo, hi, fast, act);
      const int32_t r10 = rq_out(acc[2], m0, s0, p0, e0, zp, lo, hi, fast, act);
      const int32_t r11 = rq_out(acc[3], m1, s1, p1, e1, zp, lo, hi, fast, act);
      o0[oc] = (int8_t)r00; o0[oc + 1] = (int8_t)r01; o1[oc] = (int8_t)r10; o1[oc + 1] = (int8_t)r11;
    }
    if (oc < cout) {
      int32_t acc[2];
      bt_mm2x1(col, filter + oc * K, K, acc);
      const int32_t b = bias ? bias[oc] : 0;
      const int32_t s0 = shift[oc], p0 = fast ? bt_rq2_p2(s0) : 0, e0 = fast ? bt_rq2_e1(s0) : 0;
      const int32_t r0 = rq_out(acc[0] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
      const int32_t r1 = rq_out(acc[1] + b, mult[oc], s0, p0, e0, zp, lo, hi, fast, act);
      o0[oc] = (int8_t)r0; o1[oc] = (int8_t)r1;
    }
  }
  if (t < n) {
    int8_t *const o = pixel_col(p, &g, in, in_y0, out, y0, t, patch, col);
    int32_t oc = 0;
    for (; oc + 4 <= cout; oc += 4) {
      int32_t acc[4];
      acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;
      if (bias) { acc[0] = bias[oc]; acc[1] = bias[oc + 1]; acc[2] = bias[oc + 2]; acc[3] = bias[oc + 3]; }
      bt_mv1x4(col, filter + oc * K, K, acc);
      int32_t r[4];
      for (int k = 0; k < 4; k++) {
        const int32_t sk = shift[oc + k], pk = fast ? bt_rq2_p2(sk) : 0, ek = fast ? bt_rq2_e1(sk) : 0;
        r[k] = rq_out(acc[k], mult[oc + k], sk, pk, ek, zp, lo, hi, fast, act);
      }
      o[oc] = (int8_t)r[0]; o[oc + 1] = (int8_t)r[1]; o[oc + 2] = (int8_t)r[2]; o[oc + 3] = (int8_t)r[3];
    }
    for (; oc < cout; oc++) {
      const int32_t a = bt_mv1x1(col, filter + oc * K, K, bias ? bias[oc] : 0);
      const int32_t sk = shift[oc], pk = fast ? bt_rq2_p2(sk) : 0, ek = fast ? bt_rq2_e1(sk) : 0;
      o[oc] = (int8_t)rq_out(a, mult[oc], sk, pk, ek, zp, lo, hi, fast, act);
    }
  }
}

/* The patch-matrix variants (bt_variants.h): requantisation by bt_rq2 or not, SSAT clamps. */
void bt_conv_s8_pm_rq2_ssat(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                            int32_t y1) {
  conv_cols(p, in, in_y0, out, y0, y1, 1, 2);
}

void bt_conv_s8_pm_rq2_ssat_lo(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                               int32_t y1) {
  conv_cols(p, in, in_y0, out, y0, y1, 1, 1);
}

void bt_conv_s8_pm_rq2(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                       int32_t y1) {
  conv_cols(p, in, in_y0, out, y0, y1, 1, 0);
}

void bt_conv_s8_pm(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  conv_cols(p, in, in_y0, out, y0, y1, 0, 0);
}

/* Direct convolution (no scratch): patches over BT_COL_MAX values or fewer than 4 output channels. */
void bt_conv_s8_direct(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                       int32_t y1) {
  const int32_t cin = p->in.c, cout = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t in_row = p->in.w * p->in.pixel_stride, ips = p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  const int32_t off = p->input_offset, off2 = bt_dup16(off);
  const int32_t fstride = kh * kw * cin;   /* bytes between output channels' filters */
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  if (kh == 1 && kw == 1 && p->pad_top == 0 && p->pad_left == 0) {   /* pointwise: no tap logic */
    const int32_t n4 = cin & ~3, ops = p->out.pixel_stride, step = p->stride_w * ips, ow = p->out.w;
    const int8_t *const filter = p->filter;
    for (int32_t y = y0; y < y1; y++) {
      const int8_t *ip = in + (y * p->stride_h - in_y0) * in_row;
      int8_t *o = out + (y - y0) * out_row;
      for (int32_t x = 0; x < ow; x++, ip += step, o += ops) {
        int32_t oc = 0;
        for (; oc + 4 <= cout; oc += 4) {
          int32_t acc[4];
          acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;   /* (an initialiser becomes a memset call at -Os) */
          const int8_t *f = filter + oc * cin;
          if (n4) bt_dot4x4(ip, f, cin, n4, off2, acc);
          for (int32_t i = n4; i < cin; i++) {
            const int32_t xv = ip[i] + off;
            acc[0] += f[i] * xv; acc[1] += f[cin + i] * xv; acc[2] += f[2 * cin + i] * xv; acc[3] += f[3 * cin + i] * xv;
          }
          if (bias) { acc[0] += bias[oc]; acc[1] += bias[oc + 1]; acc[2] += bias[oc + 2]; acc[3] += bias[oc + 3]; }
          const uint32_t r0 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[0], mult[oc], shift[oc]) + zp, lo, hi);
          const uint32_t r1 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[1], mult[oc + 1], shift[oc + 1]) + zp, lo, hi);
          const uint32_t r2 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[2], mult[oc + 2], shift[oc + 2]) + zp, lo, hi);
          const uint32_t r3 = (uint8_t)bt_clamp(bt_mbqm_fast(acc[3], mult[oc + 3], shift[oc + 3]) + zp, lo, hi);
          const uint32_t word = r0 | (r1 << 8) | (r2 << 16) | (r3 << 24);
          __builtin_memcpy(o + oc, &word, 4);   /* one store: int8 stores would alias the parameters */
        }
        for (; oc < cout; oc++) {
          int32_t a = 0;
          dot_n(ip, filter + oc * cin, cin, cin, off, off2, &a, 1);
          if (bias) a += bias[oc];
          o[oc] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[oc], shift[oc]) + zp, lo, hi);
        }
      }
    }
    return;
  }
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int8_t *o = out + (y - y0) * out_row + x * p->out.pixel_stride;
      for (int32_t oc = 0; oc < cout;) {
        const int nch = (cout - oc >= 4) ? 4 : 1;
        int32_t acc[4];
        acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;   /* (an initialiser becomes a memset call at -Os) */
        const int8_t *fbase = p->filter + oc * fstride;
        for (int32_t ky = 0; ky < kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if ((uint32_t)iy >= (uint32_t)p->in.h) continue;
          const int8_t *irow = in + (iy - in_y0) * in_row;
          for (int32_t kx = 0; kx < kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            if ((uint32_t)ix >= (uint32_t)p->in.w) continue;
            dot_n(irow + ix * ips, fbase + (ky * kw + kx) * cin, fstride, cin, off, off2, acc, nch);
          }
        }
        for (int k = 0; k < nch; k++) {
          int32_t a = acc[k];
          if (bias) a += bias[oc + k];
          o[oc + k] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[oc + k], shift[oc + k]) + zp, lo, hi);
        }
        oc += nch;
      }
    }
  }
}

typedef void (*conv_fn)(const bt_conv_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
static const conv_fn conv_variants[] = {bt_conv_s8_pm_rq2_ssat, bt_conv_s8_pm_rq2_ssat_lo, bt_conv_s8_pm_rq2,
                                        bt_conv_s8_pm, bt_conv_s8_direct};
static const char *const conv_names[] = {"bt_conv_s8_pm_rq2_ssat", "bt_conv_s8_pm_rq2_ssat_lo", "bt_conv_s8_pm_rq2",
                                         "bt_conv_s8_pm", "bt_conv_s8_direct"};

/* Index in conv_variants of the variant for p (buildtool/kernel_variants.py states the same rules). */
static int conv_variant(const bt_conv_params *p) {
  if (p->kh * p->kw * p->in.c > BT_COL_MAX || p->out.c < 4) return 4;
  if (!bt_rq2_ok(p->multiplier, p->shift, p->out.c)) return 3;
  if (p->act_max != 127) return 2;
  return p->act_min == -128 ? 0 : 1;
}

const char *bt_conv_s8_variant(const bt_conv_params *p) { return conv_names[conv_variant(p)]; }

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  conv_variants[conv_variant(p)](p, in, in_y0, out, y0, y1);
}
