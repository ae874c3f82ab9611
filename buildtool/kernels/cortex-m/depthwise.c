/* DEPTHWISE_CONV_2D int8 for Cortex-M DSP, depth multiplier 1: four channels per word. Per tap and
 * 4 channels: LDR input + 2 SXTB16 + 2 SADD16 (offset), LDR filter + 2 SXTB16, then SMLABB/SMLATT
 * into four per-channel accumulators. 3x3 filters get a straight-line path for the pixels whose
 * taps are all inside the image (weights unpacked once per channel group and row, the input offset
 * folded into the bias); border pixels have straight-line 2- and 3-wide tap rows. Requantisation by
 * bt_rq2 (requant.h) when every channel allows it. Depth multiplier > 1 uses the reference code
 * (included under another name); the in-place variant runs this kernel row by row through a ring of
 * rows in scratch, or channel by channel when scratch cannot hold the rows that must wait (below). */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "bt_variants.h"

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#define bt_depthwise_s8_inplace bt_ref_depthwise_inplace_s8
#include "../reference/depthwise.c"
#undef bt_depthwise_s8
#undef bt_depthwise_s8_inplace

/* Requantised, clamped output of one accumulator (fast: bt_rq2, else bt_mbqm_fast). */
static inline __attribute__((always_inline)) uint32_t dw_out(int32_t acc, int32_t m, int32_t s, int32_t zp,
                                                            int32_t lo, int32_t hi, const int fast) {
  return (uint8_t)bt_clamp((fast ? bt_rq2(acc, m, bt_rq2_p2(s), bt_rq2_e1(s)) : bt_mbqm_fast(acc, m, s)) + zp, lo, hi);
}

/* Output row y (written at orow), pixels [xa, xb): any filter size, padding and dilation. */
static inline __attribute__((always_inline)) void dw_pixels_q(const bt_conv_params *p, const int8_t *in,
                                                             int32_t in_y0, int8_t *orow, int32_t y,
                                                             int32_t xa, int32_t xb, const int fast) {
  const int32_t c_n = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t in_row = p->in.w * p->in.pixel_stride, ips = p->in.pixel_stride;
  const int32_t off = p->input_offset, off2 = bt_dup16(off);
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ips;   /* input step between taps */
  const int32_t fy = kw * c_n;                                 /* filter step between tap rows */
  {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int32_t ky0 = 0, ky1 = kh;   /* valid tap rows */
    while (ky0 < kh && iy0 + ky0 * p->dil_h < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * p->dil_h >= p->in.h) ky1--;
    for (int32_t x = xa; x < xb; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0 = 0, kx1 = kw;
      while (kx0 < kw && ix0 + kx0 * p->dil_w < 0) kx0++;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dil_w >= p->in.w) kx1--;
      int8_t *o = orow + x * p->out.pixel_stride;
      const int8_t *ibase = in + (iy0 - in_y0) * in_row + ix0 * ips;
      int32_t c = 0;
      for (; c + 4 <= c_n; c += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const int8_t *irow = ibase + ky0 * dy + kx0 * dx + c;
        const int8_t *frow = p->filter + (ky0 * kw + kx0) * c_n + c;
#define BT_DW_TAP(ip, fp)                                                                       \
  do {                                                                                          \
    const uint32_t xv = bt_ld4(ip), wv = bt_ld4(fp);                                            \
    const int32_t xa = bt_sadd16(bt_sxtb16(xv), off2), xb = bt_sadd16(bt_sxtb16_ror8(xv), off2); \
    const int32_t wa = bt_sxtb16(wv), wb = bt_sxtb16_ror8(wv);                                  \
    a0 = bt_smlabb(wa, xa, a0); a2 = bt_smlatt(wa, xa, a2);                                     \
    a1 = bt_smlabb(wb, xb, a1); a3 = bt_smlatt(wb, xb, a3);                                     \
  } while (0)
        if (kx1 - kx0 == 3) {   /* full 3-wide rows (3x3 interior): straight-line taps */
          for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
            BT_DW_TAP(irow, frow);
            BT_DW_TAP(irow + dx, frow + c_n);
            BT_DW_TAP(irow + 2 * dx, frow + 2 * c_n);
          }
        } else if (kx1 - kx0 == 2) {   /* a 3-wide filter at a left or right border */
          for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
            BT_DW_TAP(irow, frow);
            BT_DW_TAP(irow + dx, frow + c_n);
          }
        } else {
          for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
            const int8_t *ip = irow, *fp = frow;
            for (int32_t kx = kx0; kx < kx1; kx++, ip += dx, fp += c_n) BT_DW_TAP(ip, fp);
          }
        }
#undef BT_DW_TAP
        if (bias) { a0 += bias[c]; a1 += bias[c + 1]; a2 += bias[c + 2]; a3 += bias[c + 3]; }
        const uint32_t r0 = dw_out(a0, mult[c], shift[c], zp, lo, hi, fast);
        const uint32_t r1 = dw_out(a1, mult[c + 1], shift[c + 1], zp, lo, hi, fast);
        const uint32_t r2 = dw_out(a2, mult[c + 2], shift[c + 2], zp, lo, hi, fast);
        const uint32_t r3 = dw_out(a3, mult[c + 3], shift[c + 3], zp, lo, hi, fast);
        const uint32_t word = r0 | (r1 << 8) | (r2 << 16) | (r3 << 24);
        __builtin_memcpy(o + c, &word, 4);   /* one (unaligned) store: int8 stores would alias p */
      }
      for (; c < c_n; c++) {
        int32_t a = 0;
        for (int32_t ky = ky0; ky < ky1; ky++)
          for (int32_t kx = kx0; kx < kx1; kx++)
            a += p->filter[(ky * kw + kx) * c_n + c] *
                 (ibase[ky * p->dil_h * in_row + kx * p->dil_w * ips + c] + off);
        if (p->bias) a += p->bias[c];
        a = bt_mbqm_fast(a, p->multiplier[c], p->shift[c]) + p->output_offset;
        o[c] = (int8_t)bt_clamp(a, p->act_min, p->act_max);
      }
    }
  }
}

/* 3x3 filter, output rows [ya, yb) (out holds row y0) with every tap inside the image for pixels
 * [xa, xb): per group of four channels the nine weight words are unpacked once for the whole box
 * (SXTB16 into c0,c2 and c1,c3 halves; narrow boxes, such as a fused tile's column, pay it once, not
 * per row) and the input offset enters the bias once (offset * the channel's weight sum: every tap is
 * valid here), then each pixel runs nine straight-line taps (LDR + 2 SXTB16 + 4 SMLAxy). */
static inline __attribute__((always_inline)) void dw3x3_rows(const bt_conv_params *p, const int8_t *in,
                                                            int32_t in_y0, int8_t *out, int32_t y0, int32_t ya,
                                                            int32_t yb, int32_t xa, int32_t xb, const int fast) {
  const int32_t c_n = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips, ops = p->out.pixel_stride;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ips, xstep = p->stride_w * ips;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t out_row = p->out.w * ops, in_step = p->stride_h * in_row;
  const int8_t *const irow = in + (ya * p->stride_h - p->pad_top - in_y0) * in_row + (xa * p->stride_w - p->pad_left) * ips;
  int8_t *const orow = out + (ya - y0) * out_row;
  int32_t c = 0;
  for (; c + 4 <= c_n; c += 4) {
    int32_t wa[9], wb[9], se = 0, so = 0;
    for (int t = 0; t < 9; t++) {
      const uint32_t w = bt_ld4(p->filter + t * c_n + c);
      wa[t] = bt_sxtb16(w);
      wb[t] = bt_sxtb16_ror8(w);
      se = bt_sadd16(se, wa[t]);   /* 9 int8 weights: the sums fit 16 bits */
      so = bt_sadd16(so, wb[t]);
    }
    const int32_t b0 = (bias ? bias[c] : 0) + off * (int16_t)se, b1 = (bias ? bias[c + 1] : 0) + off * (int16_t)so,
                  b2 = (bias ? bias[c + 2] : 0) + off * (se >> 16), b3 = (bias ? bias[c + 3] : 0) + off * (so >> 16);
    const int32_t m0 = mult[c], m1 = mult[c + 1], m2 = mult[c + 2], m3 = mult[c + 3];
    const int32_t s0 = shift[c], s1 = shift[c + 1], s2 = shift[c + 2], s3 = shift[c + 3];
    for (int32_t y = ya; y < yb; y++) {
    const int8_t *ip = irow + (y - ya) * in_step + c;
    int8_t *o = orow + (y - ya) * out_row + xa * ops + c;
    for (int32_t x = xa; x < xb; x++, ip += xstep, o += ops) {
      int32_t a0 = b0, a1 = b1, a2 = b2, a3 = b3;
#define BT_DW3_TAP(q, t)                                                      \
  do {                                                                        \
    const uint32_t xv = bt_ld4(q);                                            \
    const int32_t xe = bt_sxtb16(xv), xo = bt_sxtb16_ror8(xv);                \
    a0 = bt_smlabb(wa[t], xe, a0); a2 = bt_smlatt(wa[t], xe, a2);             \
    a1 = bt_smlabb(wb[t], xo, a1); a3 = bt_smlatt(wb[t], xo, a3);             \
  } while (0)
      const int8_t *r0 = ip, *r1 = ip + dy, *r2 = ip + 2 * dy;
      BT_DW3_TAP(r0, 0); BT_DW3_TAP(r0 + dx, 1); BT_DW3_TAP(r0 + 2 * dx, 2);
      BT_DW3_TAP(r1, 3); BT_DW3_TAP(r1 + dx, 4); BT_DW3_TAP(r1 + 2 * dx, 5);
      BT_DW3_TAP(r2, 6); BT_DW3_TAP(r2 + dx, 7); BT_DW3_TAP(r2 + 2 * dx, 8);
#undef BT_DW3_TAP
      const uint32_t q0 = dw_out(a0, m0, s0, zp, lo, hi, fast), q1 = dw_out(a1, m1, s1, zp, lo, hi, fast);
      const uint32_t q2 = dw_out(a2, m2, s2, zp, lo, hi, fast), q3 = dw_out(a3, m3, s3, zp, lo, hi, fast);
      const uint32_t word = q0 | (q1 << 8) | (q2 << 16) | (q3 << 24);
      __builtin_memcpy(o, &word, 4);
    }
    }
  }
  for (; c < c_n; c++)   /* channel remainder */
    for (int32_t y = ya; y < yb; y++) {
      const int8_t *ip = irow + (y - ya) * in_step + c;
      int8_t *o = orow + (y - ya) * out_row + xa * ops + c;
      for (int32_t x = xa; x < xb; x++, ip += xstep, o += ops) {
        int32_t a = bias ? bias[c] : 0;
        for (int t = 0; t < 9; t++) a += p->filter[t * c_n + c] * (ip[(t / 3) * dy + (t % 3) * dx] + off);
        *o = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[c], shift[c]) + zp, lo, hi);
      }
    }
}

static void dw_pixels(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *orow, int32_t y,
                      int32_t xa, int32_t xb, int fast) {
  if (fast) dw_pixels_q(p, in, in_y0, orow, y, xa, xb, 1);
  else dw_pixels_q(p, in, in_y0, orow, y, xa, xb, 0);
}

static void dw3x3_interior(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                           int32_t ya, int32_t yb, int32_t xa, int32_t xb, int fast) {
  if (fast) dw3x3_rows(p, in, in_y0, out, y0, ya, yb, xa, xb, 1);
  else dw3x3_rows(p, in, in_y0, out, y0, ya, yb, xa, xb, 0);
}

/* Depth multiplier 1 (fast: requantisation by bt_rq2): the 3x3 interior path where a row has one. */
static inline __attribute__((always_inline)) void dw_m1(const bt_depthwise_params *dp, const int8_t *in,
                                                       int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                       const int fast) {
  const bt_conv_params *p = &dp->conv;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  /* output columns whose taps are all inside the image */
  int32_t xi0 = 0, xi1 = p->out.w;
  while (xi0 < xi1 && xi0 * p->stride_w - p->pad_left < 0) xi0++;
  while (xi1 > xi0 && (xi1 - 1) * p->stride_w - p->pad_left + (p->kw - 1) * p->dil_w >= p->in.w) xi1--;
  /* rows whose taps are all inside the image: their interior columns in one call */
  int32_t ya = y0, yb = y1;
  while (ya < yb && ya * p->stride_h - p->pad_top < 0) ya++;
  while (yb > ya && (yb - 1) * p->stride_h - p->pad_top + (p->kh - 1) * p->dil_h >= p->in.h) yb--;
  const int box = p->kh == 3 && p->kw == 3 && ya < yb && xi0 < xi1;
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = out + (y - y0) * out_row;
    if (box && y >= ya && y < yb) {   /* the border columns, if any */
      if (xi0 > 0) dw_pixels(p, in, in_y0, orow, y, 0, xi0, fast);
      if (xi1 < p->out.w) dw_pixels(p, in, in_y0, orow, y, xi1, p->out.w, fast);
    } else {
      dw_pixels(p, in, in_y0, orow, y, 0, p->out.w, fast);
    }
  }
  if (box) dw3x3_interior(p, in, in_y0, out, y0, ya, yb, xi0, xi1, fast);
}

void bt_depthwise_s8_m1_rq2(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                            int32_t y1) {
  dw_m1(dp, in, in_y0, out, y0, y1, 1);
}

void bt_depthwise_s8_m1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                        int32_t y1) {
  dw_m1(dp, in, in_y0, out, y0, y1, 0);
}

typedef void (*dw_fn)(const bt_depthwise_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
static const dw_fn dw_variants[] = {bt_depthwise_s8_m1_rq2, bt_depthwise_s8_m1, bt_ref_depthwise_generic_s8};
static const char *const dw_names[] = {"bt_depthwise_s8_m1_rq2", "bt_depthwise_s8_m1", "bt_ref_depthwise_generic_s8"};

/* Index in dw_variants of the variant for dp (buildtool/codegen/kernel_variants.py states the same rules). */
static int dw_variant(const bt_depthwise_params *dp) {
  if (dp->depth_multiplier != 1) return 2;
  return bt_rq2_ok(dp->conv.multiplier, dp->conv.shift, dp->conv.out.c) ? 0 : 1;
}

const char *bt_depthwise_s8_variant(const bt_depthwise_params *dp) { return dw_names[dw_variant(dp)]; }

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  dw_variants[dw_variant(dp)](dp, in, in_y0, out, y0, y1);
}

#include "dw_inplace_rows.h"

