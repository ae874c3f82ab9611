/* DEPTHWISE_CONV_2D int8 for Cortex-M DSP, depth multiplier 1. 3x3 undilated calls with channels in
 * groups of four, stride_w 2 or at most DW_SMALL_PIXELS output pixels, take dw_small (below "small maps
 * and stride 2": the input copied a word of four channels at a time into a zero-point padded buffer, nine
 * straight-line taps a pixel); on Arm those with stride_w 1, rows of at least 3 outputs and every channel
 * on bt_dw_q4's terms take dw_q4s's planes instead (per-channel int16 planes, SMLAD on column pairs, bt_dwp).
 * On Arm, stride 2 both ways with every channel on bt_dw_q4's terms, 3 to 47 outputs a row and at least two rows
 * a call, takes dw_s2 first (below dw_q4s: four channels' int16 column pairs in three rows of cells that
 * each output row refills two of, bt_dws2g).
 * Other 3x3 undilated calls with stride_w 1 or 2, of at least DW_MIN_PIXELS
 * output pixels, 2 rows and DW_MIN_WIDTH columns, take dw_rows (below "3x3, dilation 1"): per group
 * of four channels the input rows of a chunk of output rows are widened once into int16 planes padded
 * with the input zero point, then per channel two outputs a pass with SMLAD on column pairs and the sums
 * requantised two at a time (on Arm, the whole int8 range at stride 1: four outputs a pass, bt_dw_q4_RL,
 * and dw_small's sat groups two pixels a pass, bt_dws2_SW_RL); border pixels are no special case. Other
 * calls: four channels per word.
 * Per tap and 4 channels: LDR input + 2 SXTB16 + 2 SADD16 (offset), LDR filter + 2 SXTB16, then
 * SMLABB/SMLATT into four per-channel accumulators. 3x3 filters get a straight-line path for the pixels whose taps are all inside the
 * image (weights unpacked once per channel group and row, the input offset folded into the bias);
 * border pixels have straight-line 2- and 3-wide tap rows. Requantisation by bt_rq2 (requant.h) when
 * every channel allows it. Depth multiplier > 1 uses the reference code (included under another
 * name); the in-place variant runs this kernel row by row through a ring of rows in scratch, or
 * channel by channel when scratch cannot hold the rows that must wait (below).
 *
 * This header holds the code every depthwise.c file shares (issue 50 item 3: a model compiles the files of the paths
 * its model.c calls): static helpers, types, and the asm each file emits once where it defines DW_EMIT_* (bt_dw_widen4
 * weak: the files of dw_widen's and dw_q4s' paths each emit it, the link keeps one). depthwise.c: the run-time
 * dispatcher bt_depthwise_s8 (its paths through dw_paths), the variants and depth multipliers above 1; the paths:
 * depthwise_q4s.c (bt_dw_rows_q4e_RL, bt_dw_planes_RL), depthwise_rows.c (bt_dw_rows, _rq2, bt_dw_rows_q4_RL,
 * bt_dw_kxk(_rq2) (5x5 and 7x7: dw_widen's other caller), depthwise_s2g.c (bt_dw_s2g), depthwise_small.c (bt_dw_small) and
 * depthwise_box.c (bt_dw_box, bt_dw_pix_rq2, bt_dw_pix4_rq2). Helpers a file does not call are not compiled there. */
#ifndef BT_CM_DEPTHWISE_CORE_H
#define BT_CM_DEPTHWISE_CORE_H
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "bt_variants.h"
/* (a file compiles the helpers its paths call: the others unused there) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

/* MultiplyByQuantizedMultiplier(a, m, -e) (+ zp) for bt_rq2_ok parameters from a2 = 2a, |a| < 2^30:
 * SMMLAR(2a, m) is h = floor((a m + 2^30) / 2^31) plus its accumulate word, and RoundingDivideByPOT(h, e) =
 * floor((h + 2^(e-1) - [h < 0]) / 2^e); [h < 0] is [a < 0] (m >= 2^30; a < 0 with h = 0 gives 0 both ways,
 * as does m = 0), so with pm = 2^(e-1) (+ zp 2^e, bt_rq2_zp_ok) the whole step is ADD (a2 ASR 31), SMMLAR,
 * ASR: dw_mm_p(shift) is pm, dw_mm_e(shift) e. The sums give 2a when the weights and bias are doubled
 * (dw_mm_ok: every bias in [-2^29, 2^29), so |a| < 2^29 + 9 * 255 * 128 < 2^30). */
static inline __attribute__((always_inline)) int32_t dw_rqm(int32_t a2, int32_t m, int32_t pm, int32_t e) {
  return bt_smmlar(a2, m, pm + (a2 >> 31)) >> e;
}
static inline int32_t dw_mm_p(int32_t shift) { return 1 << (-shift - 1); }
static inline int32_t dw_mm_e(int32_t shift) { return -shift; }
/* Channel c's bias (if any) in [-2^29, 2^29): its sums give 2a with |a| < 2^30. */
static inline int dw_bias_ok(const bt_conv_params *p, int32_t c) {
  return !p->bias || (uint32_t)p->bias[c] + (1u << 29) < (1u << 30);
}
static int dw_mm_ok(const bt_conv_params *p) {
  for (int32_t c = 0; c < p->out.c; c++)
    if (!dw_bias_ok(p, c)) return 0;
  return 1;
}
/* Channel c on the sat path (dw_rqm with the output zero point folded, one SSAT): -shift - 1 <= 21 and its bias
 * in dw_bias_ok's range (the activation range all of int8 is the caller's condition). */
static inline int dw_sat_ok(const bt_conv_params *p, int32_t c) {
  return bt_rq2_zp_ok(p->shift[c]) && dw_bias_ok(p, c);
}

/* Requantised, clamped output of one accumulator (fast: bt_rq2, else bt_mbqm_fast). */
static inline __attribute__((always_inline)) uint32_t dw_out(int32_t acc, int32_t m, int32_t s, int32_t zp,
                                                            int32_t lo, int32_t hi, const int fast) {
  return (uint8_t)bt_clamp((fast ? bt_rq2(acc, m, bt_rq2_p2(s), bt_rq2_e1(s)) : bt_mbqm_fast(acc, m, s)) + zp, lo, hi);
}

/* Channels c..c+3's requantisation constants (mult, shift, sat and zp in scope): multipliers mk, shifts sk, and for
 * sat dw_rqm's ek and pk (the output zero point folded into the rounding word), else pk 0. */
#define DW_CONST4(c)                                                                                 \
  const int32_t m0 = mult[(c)], m1 = mult[(c) + 1], m2 = mult[(c) + 2], m3 = mult[(c) + 3];          \
  const int32_t s0 = shift[(c)], s1 = shift[(c) + 1], s2 = shift[(c) + 2], s3 = shift[(c) + 3];      \
  const int32_t e0 = dw_mm_e(s0), e1 = dw_mm_e(s1), e2 = dw_mm_e(s2), e3 = dw_mm_e(s3);              \
  const int32_t p0 = sat ? bt_rq2_p2_zp(dw_mm_p(s0), e0, zp) : 0;                                    \
  const int32_t p1 = sat ? bt_rq2_p2_zp(dw_mm_p(s1), e1, zp) : 0;                                    \
  const int32_t p2 = sat ? bt_rq2_p2_zp(dw_mm_p(s2), e2, zp) : 0;                                    \
  const int32_t p3 = sat ? bt_rq2_p2_zp(dw_mm_p(s3), e3, zp) : 0

/* word = four channels' sums a0..a3 requantised and packed (channel k's constants mk, pk, ek, sk, and zp,
 * lo, hi, fast, sat in scope): sat, the sums times D are doubled (dw_mm_ok) and go through dw_rqm and SSAT,
 * the (q0, q2) and (q1, q3) halves packed then bytes; else dw_out each. */
#define DW_WORD4(word, D)                                                                                       \
  do {                                                                                                          \
    if (sat) {                                                                                                  \
      const int32_t q0 = bt_ssat8(dw_rqm(a0 * (D), m0, p0, e0)), q1 = bt_ssat8(dw_rqm(a1 * (D), m1, p1, e1));   \
      const int32_t q2 = bt_ssat8(dw_rqm(a2 * (D), m2, p2, e2)), q3 = bt_ssat8(dw_rqm(a3 * (D), m3, p3, e3));   \
      const uint32_t h02 = bt_pkhbt16((uint32_t)q0, (uint32_t)q2), h13 = bt_pkhbt16((uint32_t)q1, (uint32_t)q3); \
      word = (h02 & 0x00ff00ffu) | ((h13 & 0x00ff00ffu) << 8);                                                  \
    } else {                                                                                                    \
      const uint32_t q0 = dw_out(a0, m0, s0, zp, lo, hi, fast), q1 = dw_out(a1, m1, s1, zp, lo, hi, fast);      \
      const uint32_t q2 = dw_out(a2, m2, s2, zp, lo, hi, fast), q3 = dw_out(a3, m3, s3, zp, lo, hi, fast);      \
      word = q0 | (q1 << 8) | (q2 << 16) | (q3 << 24);                                                          \
    }                                                                                                           \
  } while (0)

/* The taps [t0, t1) of n, dil apart from i0, that fall inside [0, size): a pixel's valid filter rows or columns. */
#define BT_DW_VALID(i0, n, dil, size, t0, t1)                     \
  do {                                                            \
    (t0) = 0, (t1) = (n);                                         \
    while ((t0) < (n) && (i0) + (t0) * (dil) < 0) (t0)++;         \
    while ((t1) > (t0) && (i0) + ((t1) - 1) * (dil) >= (size)) (t1)--; \
  } while (0)

/* One tap of four channels: the input's and the filter's four bytes widened (the input plus its offset, off2 at the call
 * site), two dual 16-bit MACs into accumulators a0..a3 (channels 0, 2 from the even bytes, 1, 3 from the odd). */
#define BT_DW_TAP4(ip, fp, a0, a1, a2, a3)                                                      \
  do {                                                                                          \
    const uint32_t xv = bt_ld4(ip), wv = bt_ld4(fp);                                            \
    const int32_t xa = bt_sadd16(bt_sxtb16(xv), off2), xb = bt_sadd16(bt_sxtb16_ror8(xv), off2); \
    const int32_t wa = bt_sxtb16(wv), wb = bt_sxtb16_ror8(wv);                                  \
    (a0) = bt_smlabb(wa, xa, (a0)); (a2) = bt_smlatt(wa, xa, (a2));                             \
    (a1) = bt_smlabb(wb, xb, (a1)); (a3) = bt_smlatt(wb, xb, (a3));                             \
  } while (0)

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
    int32_t ky0, ky1;   /* valid tap rows */
    BT_DW_VALID(iy0, kh, p->dil_h, p->in.h, ky0, ky1);
    for (int32_t x = xa; x < xb; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0, kx1;
      BT_DW_VALID(ix0, kw, p->dil_w, p->in.w, kx0, kx1);
      int8_t *o = orow + x * p->out.pixel_stride;
      const int8_t *ibase = in + (iy0 - in_y0) * in_row + ix0 * ips;
      int32_t c = 0;
      for (; c + 4 <= c_n; c += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const int8_t *irow = ibase + ky0 * dy + kx0 * dx + c;
        const int8_t *frow = p->filter + (ky0 * kw + kx0) * c_n + c;
#define BT_DW_TAP(ip, fp) BT_DW_TAP4(ip, fp, a0, a1, a2, a3)
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
 * valid here), then each pixel runs nine straight-line taps (LDR + 2 SXTB16 + 4 SMLAxy). sat (the
 * activation range all of int8, every channel's -shift - 1 <= 21): the output zero point folded into
 * bt_rq2's rounding word and one SSAT for the clamp, the four bytes packed by PKHBT and two masks. */
static inline __attribute__((always_inline)) void dw3x3_rows(const bt_conv_params *p, const int8_t *in,
                                                            int32_t in_y0, int8_t *out, int32_t y0, int32_t ya,
                                                            int32_t yb, int32_t xa, int32_t xb, const int fast,
                                                            const int sat) {
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
    /* sat: dw_rqm of 2a (an LSL: a call's few pixels a group would not repay doubled weights) with the output
     * zero point in its rounding word, one SSAT for the clamp */
    DW_CONST4(c);
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
      uint32_t word;
      DW_WORD4(word, 2);
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
  int sat = fast && p->act_min == -128 && p->act_max == 127;   /* every -shift - 1 <= 21 and |bias| < 2^29 */
  for (int32_t c = 0; sat && c < p->out.c; c++) sat = dw_sat_ok(p, c);
  if (sat) dw3x3_rows(p, in, in_y0, out, y0, ya, yb, xa, xb, 1, 1);
  else if (fast) dw3x3_rows(p, in, in_y0, out, y0, ya, yb, xa, xb, 1, 0);
  else dw3x3_rows(p, in, in_y0, out, y0, ya, yb, xa, xb, 0, 0);
}

/* ---- 3x3, dilation 1, stride_w 1 or 2: rows widened once into zero-point padded int16 planes ----
 * Per strip of output columns (at most DW_NS1 / DW_NS2 outputs), group of (up to) four channels and
 * chunk of output rows, the chunk's input rows are widened once (two pixels' four channels per two
 * LDR + 4 SXTB16 + 2 PKHBT + 2 PKHTB + 4 STR: per channel, its two values in one word) into one plane
 * per channel, rows rl cells apart (rl 8, 16, 32 or 56: a constant in each sums loop, so the three tap
 * rows are immediate offsets from one pointer). Cells outside the image (padding, rows above or below)
 * hold the input's zero point, whose terms vanish once the input offset times the filter's sum is in
 * the bias: every pixel, border or not, runs the same straight-line taps. Per channel, all the chunk's
 * rows in one call, two outputs per pass: stride 1, per tap row the words of columns (x, x+1) and
 * (x+2, x+3), then SMLAD + SMLABT and SMLATB + SMLAD with the row's weights (w0,w1), (w1,w2) in
 * registers (22 instructions per 18 MACs; on Arm with the whole int8 range four outputs a pass in asm,
 * bt_dw_q4_RL below); stride 2 (each row stored as its even then its odd columns):
 * SMLAD with (w0,w2) on two even columns + SMLABB/SMLATB with w1. The sums go to a stack row, then are
 * requantised two at a time (the output zero point folded into bt_rq2's rounding constant when it
 * fits) and clamped (SSAT when the upper bound is 127). Stack: 2688 + 1024 bytes; a strip whose every group runs
 * bt_dw_q4 keeps no sums and takes all 3712 for cells, its chunks balanced (vww's 48x48x8: 8 chunks of 6 output rows,
 * 64 input rows widened, where 12 of 4 widened 72; with bt_dw_widen4's row tails and dw_fill_z the layer 442.2 K ->
 * 420.8 K cycles, 24x24x32 454.5 K -> 430.3 K, cortex-m4 est. high). */
#define DW_CELLS 1344               /* int16 cells of widened rows (four channels' planes) */
#define DW_ACC 256                  /* int32 sums of one channel's outputs in a chunk */
#define DW_NS1 54                   /* most outputs of a strip, stride 1: cells n2 + 2 <= 56 */
#define DW_NS2 26                   /* stride 2: even cells n2 + 1 at [0, 28), odd cells n2 at 28 */
/* Smaller calls (a fused tile's) take the box path (less set-up), and so do one-row calls (three input
 * rows widened for one output row: the in-place kernel's rows) and calls under DW_MIN_WIDTH outputs
 * wide (a fused tile's narrow columns: a few cells widened per row, each row's set-up for them; a column
 * of the whole map's height, which dw_rows_geo runs transposed, goes to bt_dw_rows_q4_RL or bt_dw_rows_rq2
 * where code generation passes them: codegen/tile_kernels.py dw_column_entry, fx_win_dk_cols). */
/* Rows of at least DW_Q_MIN outputs: sums requantised in the same pass (dw_sums_q); narrower rows keep
 * the two passes, whose rows cost less set-up. */
#define DW_Q_MIN 16
/* A whole map under DW_T_MAX outputs wide and at least twice as tall runs transposed (dw_geo). */
#define DW_T_MAX 8
#define DW_MIN_PIXELS 16
#define DW_MIN_WIDTH 4

typedef struct {                    /* (the order is dw_q4's: bias, w, m, p2, e1 at 0, 4, 28, 32, 36) */
  int32_t bias;                     /* bias + input offset * sum of the nine weights */
  int32_t w[6];                     /* per tap row r: stride 1 (w0,w1), (w1,w2); stride 2 (w0,w2), w1 */
  int32_t m, p2, e1, zp;            /* requantisation: p2 with zp << e1 added when folded */
} dw_chan;

/* Cell b of a strip's row (input column ix0 + b) in a row of rl cells: stride 1 b, stride 2 the even
 * cells in the first half, the odd ones in the second. */
static inline int32_t dw_cell(int32_t b, int32_t s, int32_t rl) { return s == 1 ? b : (b >> 1) + (b & 1) * (rl / 2); }

/* dw_rows' geometry: the map as it is, or transposed (its columns as rows: a narrow, tall whole map
 * then runs long rows, fewer of them). Input iw x ih pixels, ips bytes between pixels along a row and
 * irow between rows; output ow pixels a row, ops and orow; strides s (along a row) and sh, paddings pl
 * and pt; tap (r, j) of the filter at r fr + j fc bytes (as it is: fr 3 c, fc c). */
typedef struct {
  int32_t iw, ih, ips, irow, ow, ops, orow, s, sh, pl, pt, fr, fc;
} dw_geo;

/* bt_dw_q4_RL (below) */
typedef void (*dw_q4_fn)(const int16_t *, const void *, int8_t *, const int32_t *);
/* dw_sums_q_1_rl's (a row's last pair, n % 4 of 2 or 3; bt_dw_rows_q4e_RL: none) */
typedef void (*dw_pair_fn)(const int16_t *, const void *, int8_t *, int32_t, int32_t, int32_t, int32_t, int32_t);

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* The start of an asm function made by a .macro whose parameter `name` names it: its own section (the linker
 * drops it when unused), hidden, Thumb; r4-r11 and lr saved and 32 bytes of locals below them. */
#define BT_ASM_ENTRY                                                                                  \
  ".section .text.\\name,\"ax\",%progbits\n\t.p2align 2\n\t.global \\name\n\t.hidden \\name\n\t"          \
  ".type \\name, %function\n\t.thumb_func\n\t\\name:\n\tpush {r4-r11, lr}\n\tsub sp, sp, #32\n\t"
/* Stride 1, the whole int8 range with the zero point folded (dw_sums_q's case): four outputs a pass in asm,
 * dw_q4_RL(r, f, o, g) with g = {nq * 8, rows, rstep * 2, out_row, ops, n odd, -, -, channels, bytes between
 * their planes, from a row's quads' end to the next row's cells and output (bytes), the last column's cells
 * and output from a channel's start, pairs of rows for it, rows left for it one at a time}: per channel (f the
 * next dw_chan, o the next byte) and row its first 4 nq outputs, two quads a pass (the second's tap rows in
 * the order 2, 1, 0, each quad starting with the weights the quad before ended with), then with n odd the
 * channel's last column, two rows a pass where they share two tap rows (stride 1 down; 54 cycles for two
 * outputs, one at a time 47). Per tap row the cells x..x+5 in three words and the row's (w0,w1), (w1,w2), five
 * single LDRs (after the first 1 cycle each, TRM 3.3.2: 6 cycles, where LDRD + LDR + LDRD took 8; LDRD and
 * LDM pay 1 + N however they follow): out x SMLAD + SMLABT, x+1 SMLATB + SMLAD, x+2 and x+3 the same on the next
 * words (8 instructions for 12 MACs), the bias by LDR (dw_chan's order: bias, w, m, p2, e1), then dw_rqm (ADD,
 * SMMLAR, ASR), SSAT and STRB each. Measured (kws's 25x5x64, cortex-m4 est. high): ~148 cycles per two quads
 * (~158 with the LDRDs), the layer 247 K -> 228 K with dw_widen4_s1 and dw_chan4_q4, 224 K -> 204 K with the
 * single LDRs, bt_dw_widen4 and the odd quad out of line, 201 K with each quad's fourth output left in r7 for
 * the next quad's first LDRs (a STRB right after an LDR: 1 cycle, TRM 3.3.2; the row's first pair peeled, which
 * no output waits for; the row's last stored after its pairs). An odd number of quads: the row's first alone, its
 * tap rows 2, 1, 0, then its pairs (one taken branch a row where the odd quad out of line after the pairs took four:
 * vww's 12x12x64 layer 244.8 K -> 235.3 K cycles, cortex-m4 est. high). gcc's two-output loop kept the weights
 * and constants in registers it did not have (five reloads from the stack a pass) and loaded each word twice.
 * Registers: r0 cells, r1 f, r2 out, r3 ops (out_row for the last column), r4-r7 sums, r8-r10 cells (then m, p2,
 * e1), r11-r12 weights, lr the end of the row's quads. */
#if defined(DW_EMIT_Q4) || defined(DW_EMIT_Q4E)
__asm__(
    ".macro BT_DWQ4_ROW off, w\n\t"
    "ldr.w r11, [r1, #\\w]\n\t"
    "ldr.w r12, [r1, #(\\w + 4)]\n\t"
    "ldr.w r8, [r0, #\\off]\n\t"
    "ldr.w r9, [r0, #(\\off + 4)]\n\t"
    "ldr.w r10, [r0, #(\\off + 8)]\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlatb r5, r8, r11, r5\n\t"
    "smlad r6, r9, r11, r6\n\t"
    "smlatb r7, r9, r11, r7\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "smlad r5, r9, r12, r5\n\t"
    "smlabt r6, r10, r12, r6\n\t"
    "smlad r7, r10, r12, r7\n\t"
    ".endm\n\t"
    /* a quad's first tap row, its weights already in r11, r12: the sums start from the bias */
    /* (st: first the quad before's last output, r7, left by BT_DWQ4_OUT 1: after the LDRs its STRB is 1 cycle) */
    /* (entry: label 3 after the STRB, where a row's first pair enters the loop with its LDRs done) */
    ".macro BT_DWQ4_FIRST off, st, entry=0\n\t"
    "ldr.w r4, [r1]\n\t"
    "ldr.w r8, [r0, #\\off]\n\t"
    "ldr.w r9, [r0, #(\\off + 4)]\n\t"
    "ldr.w r10, [r0, #(\\off + 8)]\n\t"
    ".if \\st\n\t"
    "strb.w r7, [r2, r3]\n\t"
    "add.w r2, r2, r3, lsl #1\n\t"
    ".endif\n\t"
    ".if \\entry\n\t"
    "3:\n\t"
    ".endif\n\t"
    "smlatb r5, r8, r11, r4\n\t"
    "smlad r6, r9, r11, r4\n\t"
    "smlatb r7, r9, r11, r4\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "smlad r5, r9, r12, r5\n\t"
    "smlabt r6, r10, r12, r6\n\t"
    "smlad r7, r10, r12, r7\n\t"
    ".endm\n\t"
    /* the four sums requantised (r8-r10 only: r11, r12 keep the last tap row's weights) and stored; defer: the
       fourth left in r7 for the next BT_DWQ4_FIRST's STRB (r2 two outputs on) */
    ".macro BT_DWQ4_OUT defer\n\t"
    "ldrd r8, r9, [r1, #28]\n\t"    /* m, p2 */
    "add r10, r9, r4, asr #31\n\t"
    "smmlar r4, r4, r8, r10\n\t"
    "add r10, r9, r5, asr #31\n\t"
    "smmlar r5, r5, r8, r10\n\t"
    "add r10, r9, r6, asr #31\n\t"
    "smmlar r6, r6, r8, r10\n\t"
    "add r10, r9, r7, asr #31\n\t"
    "smmlar r7, r7, r8, r10\n\t"
    "ldr r10, [r1, #36]\n\t"        /* e1 */
    "asr r4, r4, r10\n\t"
    "asr r5, r5, r10\n\t"
    "asr r6, r6, r10\n\t"
    "asr r7, r7, r10\n\t"
    "ssat r4, #8, r4\n\t"
    "ssat r5, #8, r5\n\t"
    "ssat r6, #8, r6\n\t"
    "ssat r7, #8, r7\n\t"
    "strb.w r4, [r2]\n\t"
    "strb.w r5, [r2, r3]\n\t"
    "add r2, r2, r3, lsl #1\n\t"
    "strb.w r6, [r2]\n\t"
    ".if \\defer == 0\n\t"
    "strb.w r7, [r2, r3]\n\t"
    "add r2, r2, r3, lsl #1\n\t"
    ".endif\n\t"
    ".endm\n\t"
    /* one quad: its three tap rows from the cells at r0, requantised; st as BT_DWQ4_FIRST's, defer as BT_DWQ4_OUT's */
    ".macro BT_DWQ4_QUAD rl, st, defer, entry=0\n\t"
    "BT_DWQ4_FIRST 0, \\st, \\entry\n\t"
    "BT_DWQ4_ROW (2 * \\rl), 12\n\t"
    "BT_DWQ4_ROW (4 * \\rl), 20\n\t"
    "BT_DWQ4_OUT \\defer\n\t"
    ".endm\n\t"
    /* two quads, the second's tap rows in the order 2, 1, 0 (it starts with the weights the first ended with); the
       fourth output left in r7; r0 on to the next pair, compared with the row's end (lr) */
    /* one quad at cell byte q, its tap rows in the order 2, 1, 0 (it starts with tap row 2's weights, ends with tap
       row 0's); the fourth output left in r7 */
    ".macro BT_DWQ4_RQUAD rl, q, st\n\t"
    "BT_DWQ4_FIRST (4 * \\rl + \\q), \\st\n\t"
    "BT_DWQ4_ROW (2 * \\rl + \\q), 12\n\t"
    "BT_DWQ4_ROW \\q, 4\n\t"
    "BT_DWQ4_OUT 1\n\t"
    ".endm\n\t"
    ".macro BT_DWQ4_PAIR rl, st, entry=0\n\t"
    "BT_DWQ4_QUAD \\rl, \\st, 1, \\entry\n\t"
    "BT_DWQ4_RQUAD \\rl, 8, 1\n\t"
    "add.w r0, r0, #16\n\t"
    "cmp.w r0, lr\n\t"
    ".endm\n\t"
    /* a row's end: its last output (r7, after the LDRs: 1 cycle), r0 and r2 on to the next row's cells and outputs,
       the row count down, and on to done when no rows are left */
    ".macro BT_DWQ4_NEXT done\n\t"
    "ldr r5, [sp, #32]\n\t"
    "ldr r6, [sp, #36]\n\t"
    "ldr r4, [sp, #12]\n\t"
    "strb r7, [r2, r3]\n\t"
    "add r2, r2, r3, lsl #1\n\t"
    "add r0, r0, r5\n\t"
    "add r2, r2, r6\n\t"
    "subs r4, r4, #1\n\t"
    "str r4, [sp, #12]\n\t"
    "beq.w \\done\n\t"
    ".endm\n\t"
    ".macro BT_DWQ4 name, rl, col=1\n\t"
    BT_ASM_ENTRY
    "sub sp, sp, #8\n\t"           /* 40 bytes of locals: g[10], g[11] at 32 */
    "str r3, [sp, #8]\n\t"
    "ldrd r4, r5, [r3, #40]\n\t"
    "strd r4, r5, [sp, #32]\n\t"
    "ldr r4, [r3, #32]\n\t"         /* channels */
    "str r4, [sp, #24]\n\t"
    "ldr r4, [r3, #0]\n\t"
    "and r5, r4, #8\n\t"
    "strd r4, r5, [sp, #0]\n\t"     /* the row's quads (cell bytes), an odd quad */
    "ldr r4, [r3, #20]\n\t"
    "str r4, [sp, #28]\n\t"         /* n odd */
    "ldr r3, [r3, #16]\n\t"         /* ops */
    "0:\n\t"
    "str r0, [sp, #16]\n\t"
    "str r2, [sp, #20]\n\t"
    "ldr r4, [sp, #8]\n\t"
    "ldr r4, [r4, #4]\n\t"          /* rows */
    "str r4, [sp, #12]\n\t"
    "ldr r4, [sp, #4]\n\t"          /* an even number of quads: the row loop at 1 */
    "cmp r4, #0\n\t"
    "beq.w 1f\n\t"
    /* an odd number of quads (vww's 12-wide rows): the row's first quad alone, its tap rows in the order 2, 1, 0
       (it ends with tap row 0's weights, the pairs' first), then its pairs: one taken branch a row, where the odd
       quad out of line after the pairs took three more (with one pair, four: 12 cycles a row) */
    "20:\n\t"
    "ldr.w lr, [sp, #0]\n\t"
    "ldr.w r11, [r1, #20]\n\t"      /* tap row 2's (w0,w1), (w1,w2) */
    "ldr.w r12, [r1, #24]\n\t"
    "add lr, lr, r0\n\t"            /* the end of the row's quads */
    "BT_DWQ4_RQUAD \\rl, 0, 0\n\t"
    "add.w r0, r0, #8\n\t"
    "cmp.w r0, lr\n\t"
    "bne.w 2f\n\t"               /* its pairs: the even rows' loop (one copy of the pair, ~490 bytes less) */
    "b.w 26f\n\t"
    /* an even number of quads (at least two) */
    "1:\n\t"
    "ldr.w lr, [sp, #0]\n\t"
    "ldr.w r11, [r1, #4]\n\t"       /* tap row 0's (w0,w1), (w1,w2) (single LDRs: each after the first 1 cycle) */
    "ldr.w r12, [r1, #8]\n\t"
    "add lr, lr, r0\n\t"            /* the end of the row's pairs of quads */
    /* the row's first pair enters the loop after its first STRB (no output waits), its LDRs done here: one copy
       of the pair a row (a peeled first pair made the row's code ~950 bytes, past nucleo-l4r5zi's 1 KiB instruction
       cache with the rest of the row: kws's 25x5x64 layers 189 K cycles of fetch stalls each, vww's 24x24x32 416 K) */
    "ldr.w r4, [r1]\n\t"
    "ldr.w r8, [r0]\n\t"
    "ldr.w r9, [r0, #4]\n\t"
    "ldr.w r10, [r0, #8]\n\t"
    "b.w 3f\n\t"
    ".p2align 2\n\t"                /* every instruction of the loop 32-bit and word-aligned: none straddles a
                                       1 KB boundary, where QEMU's plugin counted a refill a pass that the
                                       hardware does not have (+3 K cycles a kws layer, by where the code fell) */
    "2:\n\t"                        /* two quads: the second's tap rows in the order 2, 1, 0, each quad starting
                                       with the weights the one before ended with (two LDRs less a quad) */
    "BT_DWQ4_PAIR \\rl, 1, 1\n\t"
    "bne.w 2b\n\t"
    "26:\n\t"
    "BT_DWQ4_NEXT 40f\n\t"       /* no refill a row */
    "ldr r4, [sp, #4]\n\t"        /* the next row as this one: an even number of quads at 1, else at 20 */
    "cmp r4, #0\n\t"
    "beq.w 1b\n\t"
    "b.w 20b\n\t"
    "40:\n\t"
    /* n odd: the channel's last column, two rows a pass where they share two tap rows (stride 1 down: g[14]
       pairs), then one at a time (g[15]); r3 out_row meanwhile (col 0: none, bt_dw_q4e_RL) */
    ".if \\col\n\t"
    "ldr r5, [sp, #28]\n\t"
    "cmp r5, #0\n\t"
    "beq 9f\n\t"
    "ldr r4, [sp, #8]\n\t"
    "ldrd r0, r2, [sp, #16]\n\t"
    "ldrd r6, r7, [r4, #48]\n\t"    /* the last column's cells and output */
    "add r0, r0, r6\n\t"
    "add r2, r2, r7\n\t"
    "ldr r3, [r4, #12]\n\t"         /* out_row */
    "ldr r6, [r4, #56]\n\t"         /* pairs of rows */
    "str r6, [sp, #12]\n\t"
    "cmp r6, #0\n\t"
    "beq 7f\n\t"
    "6:\n\t"
    "ldr.w r7, [r1]\n\t"
    "ldr.w r11, [r1, #4]\n\t"
    "ldr.w r12, [r1, #8]\n\t"
    "ldr.w r8, [r0]\n\t"
    "ldr.w r9, [r0, #4]\n\t"
    "smlad r4, r8, r11, r7\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "ldr.w r8, [r0, #(2 * \\rl)]\n\t"
    "ldr.w r9, [r0, #(2 * \\rl + 4)]\n\t"
    "ldr.w r6, [r1, #12]\n\t"
    "ldr.w r10, [r1, #16]\n\t"
    "smlad r5, r8, r11, r7\n\t"
    "smlabt r5, r9, r12, r5\n\t"
    "smlad r4, r8, r6, r4\n\t"
    "smlabt r4, r9, r10, r4\n\t"
    "ldr.w r8, [r0, #(4 * \\rl)]\n\t"
    "ldr.w r9, [r0, #(4 * \\rl + 4)]\n\t"
    "ldr.w r11, [r1, #20]\n\t"
    "ldr.w r12, [r1, #24]\n\t"
    "smlad r5, r8, r6, r5\n\t"
    "smlabt r5, r9, r10, r5\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "ldr.w r8, [r0, #(6 * \\rl)]\n\t"
    "ldr.w r9, [r0, #(6 * \\rl + 4)]\n\t"
    "ldr.w r6, [r1, #28]\n\t"
    "ldr.w r7, [r1, #32]\n\t"
    "ldr.w r10, [r1, #36]\n\t"
    "smlad r5, r8, r11, r5\n\t"
    "smlabt r5, r9, r12, r5\n\t"
    "add r11, r7, r4, asr #31\n\t"
    "smmlar r4, r4, r6, r11\n\t"
    "add r11, r7, r5, asr #31\n\t"
    "smmlar r5, r5, r6, r11\n\t"
    "asr r4, r4, r10\n\t"
    "asr r5, r5, r10\n\t"
    "ssat r4, #8, r4\n\t"
    "ssat r5, #8, r5\n\t"
    "strb r4, [r2]\n\t"
    "strb r5, [r2, r3]\n\t"
    "add r0, r0, #(4 * \\rl)\n\t"
    "add r2, r2, r3, lsl #1\n\t"
    "ldr r6, [sp, #12]\n\t"
    "subs r6, r6, #1\n\t"
    "str r6, [sp, #12]\n\t"
    "bne 6b\n\t"
    "7:\n\t"
    "ldr r4, [sp, #8]\n\t"
    "ldr r6, [r4, #60]\n\t"         /* rows one at a time */
    "str r6, [sp, #12]\n\t"
    "cmp r6, #0\n\t"
    "beq 9f\n\t"
    "8:\n\t"
    "ldr.w r7, [r1]\n\t"
    "ldr.w r11, [r1, #4]\n\t"
    "ldr.w r12, [r1, #8]\n\t"
    "ldr.w r8, [r0]\n\t"
    "ldr.w r9, [r0, #4]\n\t"
    "smlad r4, r8, r11, r7\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "ldr.w r11, [r1, #12]\n\t"
    "ldr.w r12, [r1, #16]\n\t"
    "ldr.w r8, [r0, #(2 * \\rl)]\n\t"
    "ldr.w r9, [r0, #(2 * \\rl + 4)]\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "ldr.w r11, [r1, #20]\n\t"
    "ldr.w r12, [r1, #24]\n\t"
    "ldr.w r8, [r0, #(4 * \\rl)]\n\t"
    "ldr.w r9, [r0, #(4 * \\rl + 4)]\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "ldr.w r8, [r1, #28]\n\t"
    "ldr.w r9, [r1, #32]\n\t"
    "ldr.w r10, [r1, #36]\n\t"
    "add r11, r9, r4, asr #31\n\t"
    "smmlar r4, r4, r8, r11\n\t"
    "asr r4, r4, r10\n\t"
    "ssat r4, #8, r4\n\t"
    "strb r4, [r2]\n\t"
    "ldr r4, [sp, #8]\n\t"
    "ldr r5, [r4, #8]\n\t"          /* rstep (bytes) */
    "add r0, r0, r5\n\t"
    "add r2, r2, r3\n\t"
    "ldr r6, [sp, #12]\n\t"
    "subs r6, r6, #1\n\t"
    "str r6, [sp, #12]\n\t"
    "bne 8b\n\t"
    ".endif\n\t"
    "9:\n\t"
    "ldr r4, [sp, #8]\n\t"
    "ldr r3, [r4, #16]\n\t"         /* ops again */
    "ldr r5, [r4, #36]\n\t"         /* bytes between channels' planes */
    "ldrd r0, r2, [sp, #16]\n\t"
    "add r0, r0, r5\n\t"
    "adds r2, r2, #1\n\t"
    "adds r1, r1, #44\n\t"          /* sizeof (dw_chan) */
    "ldr r7, [sp, #24]\n\t"
    "subs r7, r7, #1\n\t"
    "str r7, [sp, #24]\n\t"
    "bne 0b\n\t"
    "add sp, sp, #40\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size \\name, . - \\name\n\t"
    ".endm\n\t"
#if defined(DW_EMIT_Q4)
    "BT_DWQ4 bt_dw_q4_8, 8\n\t"
    "BT_DWQ4 bt_dw_q4_16, 16\n\t"
    "BT_DWQ4 bt_dw_q4_32, 32\n\t"
    "BT_DWQ4 bt_dw_q4_56, 56\n\t"
#endif
#if defined(DW_EMIT_Q4E)
    /* rows of whole quads alone (n % 4 == 0: no last column), ~330 bytes less */
    "BT_DWQ4 bt_dw_q4e_8, 8, 0\n\t"
    "BT_DWQ4 bt_dw_q4e_16, 16, 0\n\t"
    "BT_DWQ4 bt_dw_q4e_32, 32, 0\n\t"
    "BT_DWQ4 bt_dw_q4e_56, 56, 0\n\t"
#endif
    ".purgem BT_DWQ4\n\t"
    ".purgem BT_DWQ4_NEXT\n\t"
    ".purgem BT_DWQ4_PAIR\n\t"
    ".purgem BT_DWQ4_RQUAD\n\t"
    ".purgem BT_DWQ4_QUAD\n\t"
    ".purgem BT_DWQ4_ROW\n\t"
    ".purgem BT_DWQ4_FIRST\n\t"
    ".purgem BT_DWQ4_OUT\n\t"
    ".text");
#endif
void bt_dw_q4_8(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4_16(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4_32(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4_56(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4e_8(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4e_16(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4e_32(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
void bt_dw_q4e_56(const int16_t *r, const void *f, int8_t *o, const int32_t *g);
#if defined(DW_PART_ROWS)
static const dw_q4_fn dw_q4_fns[4] = {
    bt_dw_q4_8, bt_dw_q4_16, bt_dw_q4_32, bt_dw_q4_56};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dw_q4_fn dw_q4_fns[4];
#endif
_Static_assert(sizeof(dw_chan) == 44, "dw_q4 reads dw_chan's fields at fixed offsets");
/* bt_dw_q4's cell bytes and output bytes from a row's start to where it ends (its quads, and with n odd the
 * pair the C code takes after it, skipped to reach the last output): g[10], g[11] take it to the next row */
#define DW_Q4_CELLS(n) (((n) >> 2) * 8)
#define DW_Q4_OUTS(n, ops) (((n) >> 2) * 4 * (ops))
#define DW_Q4 1

/* dw_widen4_s1's rows in asm: bt_dw_widen4(src, ips, d, g), g = {in_row, bytes between the planes,
 * rows, bytes of a row's groups of four pixels (8 n4, n4 > 0), bytes between rows of cells, lead, tail}: per row, with
 * lead its first pixel by halves (d's first cell odd: the STRDs below need the next one word-aligned), then four
 * pixels a pass: four LDR (1 cycle each after the first), PKHBT and PKHTB on the raw words of two pixels give
 * bytes (c, c+1) and (c+2, c+3) of both, SXTB16 and SXTB16 ROR 8 of each the four planes' words, one STRD a
 * plane with write-back (35 cycles for 4 pixels; gcc's pair loop ~52: two STRs a word, the loop's adds and
 * branch twice), then the row's tail: a pair (one STR a plane) and a pixel by halves (the C loop took them after
 * the call, ~55 instructions a row: vww's 48- and 24-pixel rows, 3 after the lead and the groups). Registers: r0 source, r1 ips, r2-r5 the four planes' cells, r6-r11 words, r12 3 ips, lr the
 * end of the row's groups. */
#if defined(DW_EMIT_W4)
__asm__(
    ".section .text.bt_dw_widen4,\"ax\",%progbits\n\t.p2align 2\n\t.weak bt_dw_widen4\n\t"
    ".hidden bt_dw_widen4\n\t.type bt_dw_widen4, %function\n\t.thumb_func\n\t"
    "bt_dw_widen4:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #32\n\t"
    /* the row's steps once a call: every pointer moves on with its stores, then by a constant to the next row */
    "ldr r4, [r3, #8]\n\t"
    "str r4, [sp, #4]\n\t"         /* rows left */
    "ldr r5, [r3, #20]\n\t"
    "ldr r6, [r3, #12]\n\t"
    "ldr r7, [r3, #24]\n\t"
    "str r5, [sp, #16]\n\t"        /* lead */
    "str r6, [sp, #20]\n\t"        /* bytes of a row's groups of four pixels */
    "str r7, [sp, #24]\n\t"        /* tail */
    "add r8, r5, r7\n\t"
    "add r9, r6, r8, lsl #1\n\t"   /* bytes of a row's cells a plane */
    "ldr r10, [r3, #16]\n\t"
    "sub r10, r10, r9\n\t"
    "str r10, [sp, #8]\n\t"        /* from a row's last cell to the next row's first */
    "add r8, r8, r6, lsr #1\n\t"   /* a row's pixels */
    "mul r8, r8, r1\n\t"
    "ldr r10, [r3, #0]\n\t"
    "sub r10, r10, r8\n\t"
    "str r10, [sp, #12]\n\t"       /* from a row's last pixel to the next row's first */
    "ldr r11, [r3, #4]\n\t"
    "add r3, r2, r11\n\t"
    "add r4, r3, r11\n\t"
    "add r5, r4, r11\n\t"
    "add r12, r1, r1, lsl #1\n\t"  /* 3 ips */
    "1:\n\t"
    "ldr r6, [sp, #16]\n\t"
    "cbz r6, 3f\n\t"
    "ldr r6, [r0]\n\t"
    "add r0, r0, r1\n\t"
    "sxtb16 r7, r6\n\t"
    "sxtb16 r8, r6, ror #8\n\t"
    "strh r7, [r2], #2\n\t"
    "strh r8, [r3], #2\n\t"
    "lsrs r7, r7, #16\n\t"
    "lsrs r8, r8, #16\n\t"
    "strh r7, [r4], #2\n\t"
    "strh r8, [r5], #2\n\t"
    "3:\n\t"
    "ldr lr, [sp, #20]\n\t"
    "add lr, lr, r2\n\t"           /* the end of the row's groups */
    "cmp lr, r2\n\t"
    "beq.w 6f\n\t"                 /* none (a row of at most 3 + lead pixels): its tail alone */
    ".p2align 2\n\t"               /* (32-bit instructions, word-aligned: see bt_dw_q4's loop) */
    "2:\n\t"
    "ldr.w r6, [r0]\n\t"
    "ldr.w r7, [r0, r1]\n\t"
    "ldr.w r8, [r0, r1, lsl #1]\n\t"
    "ldr.w r9, [r0, r12]\n\t"
    "add.w r0, r0, r1, lsl #2\n\t"
    "pkhbt r10, r6, r7, lsl #16\n\t" /* bytes c, c+1 of pixels x, x+1 */
    "pkhtb r6, r7, r6, asr #16\n\t"  /* c+2, c+3 */
    "pkhbt r11, r8, r9, lsl #16\n\t"
    "pkhtb r8, r9, r8, asr #16\n\t"
    "sxtb16 r7, r10\n\t"
    "sxtb16 r9, r11\n\t"
    "strd r7, r9, [r2], #8\n\t"
    "sxtb16 r7, r10, ror #8\n\t"
    "sxtb16 r9, r11, ror #8\n\t"
    "strd r7, r9, [r3], #8\n\t"
    "sxtb16 r7, r6\n\t"
    "sxtb16 r9, r8\n\t"
    "strd r7, r9, [r4], #8\n\t"
    "sxtb16 r7, r6, ror #8\n\t"
    "sxtb16 r9, r8, ror #8\n\t"
    "strd r7, r9, [r5], #8\n\t"
    "cmp.w r2, lr\n\t"
    "bne.w 2b\n\t"
    "6:\n\t"
    "ldr lr, [sp, #24]\n\t"      /* the row's last pixels: a pair (tail & 2), then a single (tail & 1) */
    "tst lr, #2\n\t"
    "beq 4f\n\t"
    "ldr r6, [r0]\n\t"
    "ldr r7, [r0, r1]\n\t"
    "add r0, r0, r1, lsl #1\n\t"
    "pkhbt r8, r6, r7, lsl #16\n\t"
    "pkhtb r6, r7, r6, asr #16\n\t"
    "sxtb16 r7, r8\n\t"
    "sxtb16 r9, r8, ror #8\n\t"
    "str r7, [r2], #4\n\t"
    "str r9, [r3], #4\n\t"
    "sxtb16 r7, r6\n\t"
    "sxtb16 r9, r6, ror #8\n\t"
    "str r7, [r4], #4\n\t"
    "str r9, [r5], #4\n\t"
    "4:\n\t"
    "tst lr, #1\n\t"
    "beq 5f\n\t"
    "ldr r6, [r0]\n\t"
    "add r0, r0, r1\n\t"
    "sxtb16 r7, r6\n\t"
    "sxtb16 r8, r6, ror #8\n\t"
    "strh r7, [r2], #2\n\t"
    "strh r8, [r3], #2\n\t"
    "lsrs r7, r7, #16\n\t"
    "lsrs r8, r8, #16\n\t"
    "strh r7, [r4], #2\n\t"
    "strh r8, [r5], #2\n\t"
    "5:\n\t"
    "ldr r6, [sp, #8]\n\t"
    "ldr r7, [sp, #12]\n\t"
    "add r0, r0, r7\n\t"
    "add r2, r2, r6\n\t"
    "add r3, r3, r6\n\t"
    "add r4, r4, r6\n\t"
    "add r5, r5, r6\n\t"
    "ldr r6, [sp, #4]\n\t"
    "subs r6, r6, #1\n\t"
    "str r6, [sp, #4]\n\t"
    "bne 1b\n\t"
    "add sp, sp, #32\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size bt_dw_widen4, . - bt_dw_widen4\n\t"
    ".text");
#endif
void bt_dw_widen4(const int8_t *src, int32_t ips, int16_t *d, const int32_t *g);
#define DW_W4 1
#else
#define DW_Q4 0
#define DW_W4 0
#endif

/* dw_widen's stride-1 rows of four channels: `rows` input rows (the first at src, in_row bytes apart, pixels ips
 * apart) of cnt pixels each into the planes at d (channel k's at d + k K, rows rl cells apart): per two pixels
 * two LDR, four SXTB16, PKHBT and PKHTB into (c, c+2) and (c+1, c+3) halves, a word stored to each plane; an
 * odd pixel by halves. One call a chunk: the per-row set-up of the general loop (its parities, the rows
 * outside the image) was ~126 cycles a row, as much as 5 of its pairs (kws's 25-pixel rows). On Arm bt_dw_widen4 takes
 * every row (rows of fewer than four pixels by its lead and tail); the C loop is for builds without DSP. */
static __attribute__((noinline)) void dw_widen4_s1(const int8_t *src, int32_t in_row, int32_t ips, int16_t *d,
                                                   int32_t K, int32_t rl, int32_t rows, int32_t cnt) {
#if DW_W4
  /* the rows in asm: a lead pixel to reach a word-aligned cell, groups of four (any number), a pair, a pixel */
  const int32_t lead = ((uintptr_t)d & 2) ? 1 : 0, n4 = (cnt - lead) >> 2;
  if (rows > 0 && cnt > 0) {
    const int32_t g[7] = {in_row, 2 * K, rows, 8 * n4, 2 * rl, lead, (cnt - lead) & 3};
    bt_dw_widen4(src, ips, d, g);
  }
#else
  const int32_t np = cnt >> 1, step2 = 2 * ips;
  for (int32_t r = 0; r < rows; r++, src += in_row, d += rl) {
    const int8_t *sp = src;
    /* (halfword-aligned: the first cell inside the image may be odd; single STRs take that) */
    int16_t *q = d, *const end = d + 2 * np;
    for (; q < end; q += 2, sp += step2) {
      const uint32_t A = bt_ld4(sp), B = bt_ld4(sp + ips);
      const uint32_t a02 = (uint32_t)bt_sxtb16(A), b02 = (uint32_t)bt_sxtb16(B);
      const uint32_t a13 = (uint32_t)bt_sxtb16_ror8(A), b13 = (uint32_t)bt_sxtb16_ror8(B);
      const uint32_t v0 = bt_pkhbt16(a02, b02), v2 = bt_pkhtb16(b02, a02);
      const uint32_t v1 = bt_pkhbt16(a13, b13), v3 = bt_pkhtb16(b13, a13);
      __builtin_memcpy(q, &v0, 4);
      __builtin_memcpy(q + K, &v1, 4);
      __builtin_memcpy(q + 2 * K, &v2, 4);
      __builtin_memcpy(q + 3 * K, &v3, 4);
    }
    if (cnt & 1) {
      int16_t *h = d + 2 * np;
      const uint32_t A = bt_ld4(sp);
      const int32_t a02 = bt_sxtb16(A), a13 = bt_sxtb16_ror8(A);
      h[0] = (int16_t)a02; h[K] = (int16_t)a13;
      h[2 * K] = (int16_t)(a02 >> 16); h[3 * K] = (int16_t)(a13 >> 16);
    }
  }
#endif
}

/* A row of rl cells (rl a multiple of 8, word-aligned) at d the zero point (z2 twice), four words a pass (the
 * rows above and below the image of a chunk's planes: a word a pass cost vww's 24x24x32 layer ~8 K instructions). */
typedef uint32_t __attribute__((may_alias)) dw_word;
static inline __attribute__((always_inline)) void dw_fill_z(int16_t *d, int32_t rl, uint32_t z2) {
  dw_word *w = (dw_word *)(void *)d, *const end = w + rl / 2;
  for (; w < end; w += 4) {
    w[0] = z2;
    w[1] = z2;
    w[2] = z2;
    w[3] = z2;
  }
}

/* Input rows [iy0, iy0 + nr) of channels [c, c + nc) widened into d0 (row r of channel k at
 * d0 + k * K + r * rl): cells [0, cells) are input columns ix0 + b; rows outside the image get the zero
 * point z in every cell, rows inside it only their cells inside the image (the others keep the z that
 * dw_rows wrote for the strip; zdone: so did the rows outside the image, the strip being one chunk). */
static inline __attribute__((always_inline)) void dw_widen_in(const bt_conv_params *p, const dw_geo *g,
                                                            const int8_t *in, int32_t in_y0, int16_t *d0, int32_t K,
                                                            int32_t rl, int32_t iy0, int32_t nr, int32_t ix0,
                                                            int32_t cells, int32_t c, int32_t nc, int32_t s, int zdone) {
  const int32_t z2 = bt_dup16(-p->input_offset), ips = g->ips, in_row = g->irow, ih = g->ih;
  int32_t bv0 = -ix0, bv1 = g->iw - ix0;   /* cells inside the image: [bv0, bv1) */
  bv0 = bv0 < 0 ? 0 : (bv0 > cells ? cells : bv0);
  bv1 = bv1 < bv0 ? bv0 : (bv1 > cells ? cells : bv1);
  /* per parity (stride 2: the even cells, then the odd ones): first cell, count, first destination */
  int32_t b0[2], n[2], q0[2];
  for (int32_t par = 0; par < s; par++) {
    b0[par] = bv0 + ((bv0 & 1) != par && s == 2);
    n[par] = s == 1 ? bv1 - bv0 : (bv1 - b0[par] + 1) / 2;
    if (n[par] < 0) n[par] = 0;
    q0[par] = dw_cell(b0[par], s, rl);
  }
  const int32_t step = s * ips;
  if (s == 1 && nc == 4) {   /* the rows inside the image in one call (dw_widen4_s1), the others the zero point */
    int32_t ra = -iy0, rz = ih - iy0;
    ra = ra < 0 ? 0 : (ra > nr ? nr : ra);
    rz = rz < ra ? ra : (rz > nr ? nr : rz);
    if (!zdone)
      for (int32_t r = 0; r < nr; r++) {
        if (r == ra) r = rz;   /* the rows above the image, then those below */
        if (r >= nr) break;
        for (int32_t k = 0; k < 4; k++) dw_fill_z(d0 + r * rl + k * K, rl, (uint32_t)z2);
      }
    if (rz > ra && n[0] > 0)
      dw_widen4_s1(in + (iy0 + ra - in_y0) * in_row + (ix0 + b0[0]) * ips + c, in_row, ips, d0 + ra * rl + q0[0], K,
                   rl, rz - ra, n[0]);
    return;
  }
  for (int32_t r = 0; r < nr; r++, d0 += rl) {
    const int32_t iy = iy0 + r;
    if (iy < 0 || iy >= ih) {
      if (zdone) continue;   /* dw_rows wrote them for the strip */
      for (int32_t k = 0; k < nc; k++)
        for (int32_t i = 0; i < rl; i += 2) __builtin_memcpy(d0 + k * K + i, &z2, 4);
      continue;
    }
    const int8_t *const row = in + (iy - in_y0) * in_row + ix0 * ips + c;
    for (int32_t par = 0; par < s; par++) {
      const int8_t *src = row + b0[par] * ips;
      int16_t *d = d0 + q0[par];
      const int32_t cnt = n[par];
      if (nc == 4) {
        int32_t i = 0;
        for (; i + 2 <= cnt; i += 2, src += 2 * step) {
          const uint32_t A = bt_ld4(src), B = bt_ld4(src + step);
          const uint32_t a02 = (uint32_t)bt_sxtb16(A), b02 = (uint32_t)bt_sxtb16(B);
          const uint32_t a13 = (uint32_t)bt_sxtb16_ror8(A), b13 = (uint32_t)bt_sxtb16_ror8(B);
          const uint32_t v0 = bt_pkhbt16(a02, b02), v2 = bt_pkhtb16(b02, a02);
          const uint32_t v1 = bt_pkhbt16(a13, b13), v3 = bt_pkhtb16(b13, a13);
          __builtin_memcpy(d + i, &v0, 4);
          __builtin_memcpy(d + K + i, &v1, 4);
          __builtin_memcpy(d + 2 * K + i, &v2, 4);
          __builtin_memcpy(d + 3 * K + i, &v3, 4);
        }
        if (i < cnt) {
          const uint32_t A = bt_ld4(src);
          const int32_t a02 = bt_sxtb16(A), a13 = bt_sxtb16_ror8(A);
          d[i] = (int16_t)a02; d[K + i] = (int16_t)a13;
          d[2 * K + i] = (int16_t)(a02 >> 16); d[3 * K + i] = (int16_t)(a13 >> 16);
        }
      } else {
        for (int32_t i = 0; i < cnt; i++, src += step)
          for (int32_t k = 0; k < nc; k++) d[k * K + i] = src[k];
      }
    }
  }
}

/* dw_widen_in for any stride and channels, and (dw_rows' bt_dw_q4 groups: without the general loop) stride 1 and four
 * channels. */
static __attribute__((noinline)) void dw_widen(const bt_conv_params *p, const dw_geo *g, const int8_t *in, int32_t in_y0,
                                               int16_t *d0, int32_t K, int32_t rl, int32_t iy0, int32_t nr, int32_t ix0,
                                               int32_t cells, int32_t c, int32_t nc, int32_t s, int zdone) {
  dw_widen_in(p, g, in, in_y0, d0, K, rl, iy0, nr, ix0, cells, c, nc, s, zdone);
}
#if DW_Q4
static __attribute__((noinline)) void dw_widen4(const bt_conv_params *p, const dw_geo *g, const int8_t *in,
                                                int32_t in_y0, int16_t *d0, int32_t K, int32_t rl, int32_t iy0,
                                                int32_t nr, int32_t ix0, int32_t cells, int32_t c, int zdone) {
  dw_widen_in(p, g, in, in_y0, d0, K, rl, iy0, nr, ix0, cells, c, 4, 1, zdone);
}
#endif

/* Stride 1: two outputs' sums from the planes at q (cells i, i + 1 in word i / 2; tap rows rl cells apart). */
#define DW_S1_PAIR(q, x0, x1)                                                                     \
  do {                                                                                            \
    uint32_t p0 = (q)[0], p1 = (q)[1];                                                            \
    x0 = bt_smlad(p0, w0, b); x1 = bt_smlatb(p0, w0, b);                                          \
    x0 = bt_smlabt(p1, w1, x0); x1 = bt_smlad(p1, w1, x1);                                        \
    p0 = (q)[rl / 2]; p1 = (q)[rl / 2 + 1];                                                       \
    x0 = bt_smlad(p0, w2, x0); x1 = bt_smlatb(p0, w2, x1);                                        \
    x0 = bt_smlabt(p1, w3, x0); x1 = bt_smlad(p1, w3, x1);                                        \
    p0 = (q)[rl]; p1 = (q)[rl + 1];                                                               \
    x0 = bt_smlad(p0, w4, x0); x1 = bt_smlatb(p0, w4, x1);                                        \
    x0 = bt_smlabt(p1, w5, x0); x1 = bt_smlad(p1, w5, x1);                                        \
  } while (0)
/* Stride 2: one tap row (o cells on) of two outputs' sums, even cells E at e, odd cells O at e + rl / 2. */
#define DW_S2_ROW(e, o, we, wo)                                                                   \
  do {                                                                                            \
    const uint32_t e0 = bt_ld4((const int8_t *)((e) + (o))), e1 = bt_ld4((const int8_t *)((e) + (o) + 1)); \
    const uint32_t od = bt_ld4((const int8_t *)((e) + (o) + rl / 2));                             \
    x0 = bt_smlad(e0, we, x0); x1 = bt_smlad(e1, we, x1);                                          \
    x0 = bt_smlabb(od, wo, x0); x1 = bt_smlatb(od, wo, x1);                                        \
  } while (0)

/* Sums of `rows` output rows of n outputs of one channel into acc, n a row (two at a time: with n odd
 * the extra sum is overwritten by the next row's first, acc has room for one more): r is the first
 * output row's first tap row, its other tap rows rl and 2 rl cells on, the next output row rstep cells
 * on; f the channel's values. */
static inline __attribute__((always_inline)) void dw_sums(const int16_t *r, const dw_chan *f, int32_t *acc,
                                                         int32_t n, int32_t rows, int32_t rstep, const int s,
                                                         const int rl) {
  const int32_t w0 = f->w[0], w1 = f->w[1], w2 = f->w[2], w3 = f->w[3], w4 = f->w[4], w5 = f->w[5], b = f->bias;
  const int32_t n2 = (n + 1) & ~1;
  for (int32_t *const last = acc + rows * n; acc < last; r += rstep, acc -= n2 - n) {
    int32_t *const end = acc + n2;
    if (s == 1) {
      const uint32_t *q = (const uint32_t *)(const void *)r;   /* cells i, i + 1 in word i / 2 */
      for (; acc < end; acc += 2, q++) {
        int32_t x0, x1;
        DW_S1_PAIR(q, x0, x1);
        acc[0] = x0; acc[1] = x1;
      }
    } else {
      const int16_t *e = r;
      for (; acc < end; acc += 2, e += 2) {   /* even cells E at e, odd cells O at e + rl / 2 */
        int32_t x0 = b, x1 = b;
        DW_S2_ROW(e, 0, w0, w1);
        DW_S2_ROW(e, rl, w2, w3);
        DW_S2_ROW(e, 2 * rl, w4, w5);
        acc[0] = x0; acc[1] = x1;
      }
    }
  }
}


/* dw_sums with the requantisation in the same pass (the output zero point folded, the activation range all
 * of int8: dw_rqm + SSAT): `rows` rows of n outputs of one channel into o (ops bytes between outputs,
 * out_row between rows); no sums in memory. */
static inline __attribute__((always_inline)) void dw_sums_q(const int16_t *r, const dw_chan *f, int8_t *o, int32_t n,
                                                           int32_t rows, int32_t rstep, int32_t ops, int32_t out_row,
                                                           const int s, const int rl) {
  const int32_t w0 = f->w[0], w1 = f->w[1], w2 = f->w[2], w3 = f->w[3], w4 = f->w[4], w5 = f->w[5], b = f->bias;
  const int32_t m = f->m, pm = f->p2, e = f->e1, np = n >> 1;
  for (int32_t y = 0; y < rows; y++, r += rstep, o += out_row) {
    int8_t *d = o;
    if (s == 1) {
      const uint32_t *q = (const uint32_t *)(const void *)r, *const end = q + np;   /* cells i, i + 1 in word i / 2 */
      for (; q < end; q++, d += 2 * ops) {
        int32_t x0, x1;
        DW_S1_PAIR(q, x0, x1);
        d[0] = (int8_t)bt_ssat8(dw_rqm(x0, m, pm, e));
        d[ops] = (int8_t)bt_ssat8(dw_rqm(x1, m, pm, e));
      }
      if (n & 1) {
        int32_t x0 = bt_smlad(q[0], w0, b);
        x0 = bt_smlabt(q[1], w1, x0);
        x0 = bt_smlad(q[rl / 2], w2, x0);
        x0 = bt_smlabt(q[rl / 2 + 1], w3, x0);
        x0 = bt_smlad(q[rl], w4, x0);
        x0 = bt_smlabt(q[rl + 1], w5, x0);
        d[0] = (int8_t)bt_ssat8(dw_rqm(x0, m, pm, e));
      }
    } else {
      const int16_t *c = r, *const end = r + 2 * np;
      for (; c < end; c += 2, d += 2 * ops) {   /* even cells E at c, odd cells O at c + rl / 2 */
        int32_t x0 = b, x1 = b;
        DW_S2_ROW(c, 0, w0, w1);
        DW_S2_ROW(c, rl, w2, w3);
        DW_S2_ROW(c, 2 * rl, w4, w5);
        d[0] = (int8_t)bt_ssat8(dw_rqm(x0, m, pm, e));
        d[ops] = (int8_t)bt_ssat8(dw_rqm(x1, m, pm, e));
      }
      if (n & 1) {
        int32_t x0 = b;
        for (int32_t t = 0; t < 3; t++) {
          x0 = bt_smlad(bt_ld4((const int8_t *)(c + t * rl)), f->w[2 * t], x0);
          x0 = bt_smlabb(bt_ld4((const int8_t *)(c + t * rl + rl / 2)), f->w[2 * t + 1], x0);
        }
        d[0] = (int8_t)bt_ssat8(dw_rqm(x0, m, pm, e));
      }
    }
  }
}

#undef DW_S1_PAIR
#undef DW_S2_ROW

typedef void (*dw_sums_q_fn)(const int16_t *, const dw_chan *, int8_t *, int32_t, int32_t, int32_t, int32_t, int32_t);
#define DW_SUMS_Q(name, s, rl)                                                                                 \
  static void name(const int16_t *r, const dw_chan *f, int8_t *o, int32_t n, int32_t rows, int32_t rstep,     \
                   int32_t ops, int32_t out_row) {                                                             \
    dw_sums_q(r, f, o, n, rows, rstep, ops, out_row, s, rl);                                                   \
  }
DW_SUMS_Q(dw_sums_q_1_8, 1, 8)
DW_SUMS_Q(dw_sums_q_1_16, 1, 16)
DW_SUMS_Q(dw_sums_q_1_32, 1, 32)
DW_SUMS_Q(dw_sums_q_1_56, 1, 56)
DW_SUMS_Q(dw_sums_q_2_8, 2, 8)
DW_SUMS_Q(dw_sums_q_2_16, 2, 16)
DW_SUMS_Q(dw_sums_q_2_32, 2, 32)
DW_SUMS_Q(dw_sums_q_2_56, 2, 56)
#undef DW_SUMS_Q
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* bt_dw_q4's rows' last pair (n & 2), any row length: one copy for every rl (its few outputs, not the loop's) */
static __attribute__((noinline)) void dw_sums_q_1_rl(const int16_t *r, const void *f, int8_t *o, int32_t rows,
                                                     int32_t rstep, int32_t ops, int32_t out_row, int32_t rl) {
  dw_sums_q(r, (const dw_chan *)f, o, 2, rows, rstep, ops, out_row, 1, rl);
}
#endif
#if defined(DW_PART_ROWS) || !DW_Q4   /* (tables of functions: in the files that call them, -O0 keeps them) */
static const dw_sums_q_fn dw_sums_q_fns[2][4] = {
    {dw_sums_q_1_8, dw_sums_q_1_16, dw_sums_q_1_32, dw_sums_q_1_56},
    {dw_sums_q_2_8, dw_sums_q_2_16, dw_sums_q_2_32, dw_sums_q_2_56}};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dw_sums_q_fn dw_sums_q_fns[2][4];
#endif

typedef void (*dw_sums_fn)(const int16_t *, const dw_chan *, int32_t *, int32_t, int32_t, int32_t);
#define DW_SUMS(name, s, rl)                                                                                    \
  static void name(const int16_t *r, const dw_chan *f, int32_t *acc, int32_t n, int32_t rows, int32_t rstep) { \
    dw_sums(r, f, acc, n, rows, rstep, s, rl);                                                                 \
  }
DW_SUMS(dw_sums_1_8, 1, 8)
DW_SUMS(dw_sums_1_16, 1, 16)
DW_SUMS(dw_sums_1_32, 1, 32)
DW_SUMS(dw_sums_1_56, 1, 56)
DW_SUMS(dw_sums_2_8, 2, 8)
DW_SUMS(dw_sums_2_16, 2, 16)
DW_SUMS(dw_sums_2_32, 2, 32)
DW_SUMS(dw_sums_2_56, 2, 56)
#undef DW_SUMS
static const int32_t dw_rls[4] = {8, 16, 32, 56};   /* widened row lengths (cells) */
#if defined(DW_PART_ROWS) || !DW_Q4   /* (tables of functions: in the files that call them, -O0 keeps them) */
static const dw_sums_fn dw_sums_fns[2][4] = {{dw_sums_1_8, dw_sums_1_16, dw_sums_1_32, dw_sums_1_56},
                                             {dw_sums_2_8, dw_sums_2_16, dw_sums_2_32, dw_sums_2_56}};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dw_sums_fn dw_sums_fns[2][4];
#endif

/* One output from its sum: fast bt_rq2 (fold: the zero point is in p2), else bt_mbqm_fast; act 2: the
 * whole int8 range (SSAT), 1: upper bound 127 (SSAT, then the lower bound), 0: [lo, hi]. */
static inline __attribute__((always_inline)) int32_t dw_q(int32_t a, int32_t m, int32_t p2, int32_t e1, int32_t zp,
                                                         int32_t lo, int32_t hi, const int fast, const int fold,
                                                         const int act) {
  int32_t v = fast ? dw_rqm(a, m, p2, e1) : bt_mbqm_fast(a, m, e1);
  if (!fold) v += zp;
  if (act == 2) return bt_ssat8(v);
  if (act == 1) { v = bt_ssat8(v); return v < lo ? lo : v; }
  return bt_clamp(v, lo, hi);
}

/* `rows` rows of n outputs of one channel (sums n a row in acc) requantised into o (ops bytes between
 * outputs, out_row between rows; rows of the whole width, out_row = n ops, as one row), two at a time. */
static inline __attribute__((always_inline)) void dw_requant(const int32_t *acc, int32_t n, int32_t rows,
                                                            int8_t *o, int32_t ops, int32_t out_row,
                                                            const dw_chan *f, int32_t lo, int32_t hi,
                                                            const int fast, const int fold, const int act) {
  const int32_t m = f->m, p2 = f->p2, e1 = f->e1, zp = f->zp;   /* locals: the int8 stores may alias f */
  if (out_row == n * ops) { n *= rows; rows = 1; }
  for (int32_t y = 0; y < rows; y++, acc += n, o += out_row) {
    int8_t *q = o;
    const int32_t *a = acc, *const end = acc + (n & ~1);
    for (; a < end; a += 2, q += 2 * ops) {
      const int32_t a0 = a[0], a1 = a[1];
      q[0] = (int8_t)dw_q(a0, m, p2, e1, zp, lo, hi, fast, fold, act);
      q[ops] = (int8_t)dw_q(a1, m, p2, e1, zp, lo, hi, fast, fold, act);
    }
    if (n & 1) q[0] = (int8_t)dw_q(a[0], m, p2, e1, zp, lo, hi, fast, fold, act);
  }
}

typedef void (*dw_requant_fn)(const int32_t *, int32_t, int32_t, int8_t *, int32_t, int32_t, const dw_chan *, int32_t,
                              int32_t);
#define DW_REQUANT(name, fast, fold, act)                                                                      \
  static void name(const int32_t *acc, int32_t n, int32_t rows, int8_t *o, int32_t ops, int32_t out_row,       \
                   const dw_chan *f, int32_t lo, int32_t hi) {                                                 \
    dw_requant(acc, n, rows, o, ops, out_row, f, lo, hi, fast, fold, act);                                    \
  }
DW_REQUANT(dw_requant_f2, 1, 1, 2)
DW_REQUANT(dw_requant_f1, 1, 1, 1)
DW_REQUANT(dw_requant_f0, 1, 1, 0)
DW_REQUANT(dw_requant_r, 1, 0, 0)
DW_REQUANT(dw_requant_m, 0, 0, 0)
#undef DW_REQUANT
/* mode 0..2: bt_rq2 with the zero point folded, act 2..0; 3: bt_rq2; 4: bt_mbqm_fast */
#if defined(DW_PART_ROWS) || !DW_Q4   /* (tables of functions: in the files that call them, -O0 keeps them) */
static const dw_requant_fn dw_requant_fns[5] = {dw_requant_f2, dw_requant_f1, dw_requant_f0, dw_requant_r,
                                                dw_requant_m};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dw_requant_fn dw_requant_fns[5];
#endif

#if DW_Q4
/* One tap row of four channels' 3x3 filter (the row's three taps at w, w + step, w + 2 step, four channels each):
 * se, so gain the taps' even (channels 0, 2) and odd (1, 3) channel halves, t the doubled halves of the taps
 * (a, b, c even, then a, b, c odd), which dw_chan4_q4 and dw_s2_chan pack for their kernels. */
static inline __attribute__((always_inline)) void dw_tap_row4(const int8_t *w, int32_t step, int32_t *se, int32_t *so,
                                                              uint32_t *t) {
  const uint32_t A = bt_ld4(w), B = bt_ld4(w + step), C = bt_ld4(w + 2 * step);
  const int32_t ae = bt_sxtb16(A), be = bt_sxtb16(B), ce = bt_sxtb16(C);
  const int32_t ao = bt_sxtb16_ror8(A), bo = bt_sxtb16_ror8(B), co = bt_sxtb16_ror8(C);
  *se = bt_sadd16(bt_sadd16(*se, ae), bt_sadd16(be, ce));   /* 9 int8 sums: 16 bits */
  *so = bt_sadd16(bt_sadd16(*so, ao), bt_sadd16(bo, co));
  t[0] = (uint32_t)bt_sadd16(ae, ae); t[1] = (uint32_t)bt_sadd16(be, be); t[2] = (uint32_t)bt_sadd16(ce, ce);
  t[3] = (uint32_t)bt_sadd16(ao, ao); t[4] = (uint32_t)bt_sadd16(bo, bo); t[5] = (uint32_t)bt_sadd16(co, co);
}

/* dw_rows' values of channels c..c+3 for bt_dw_q4 (stride 1, fast with the zero point folded: the caller checked
 * dw_mm_ok and every bt_rq2_zp_ok): the same dw_chan fields as dw_rows' general set-up (doubled weights and
 * bias, p2 with the zero point), in one straight pass: the general one, its branches on s, fast, fold and nc
 * and gcc's spills around them, cost ~1000 cycles a group of four channels (kws: 16 K of a layer's 240 K). */
/* (weak: depthwise_q4s.c, depthwise_rows.c and depthwise_s2g.c each compile it, a link keeps one; its code and its
 * callers' as when it was static, objdump -d) */
__attribute__((noinline, weak, visibility("hidden"))) void dw_chan4_q4(const bt_conv_params *p, int32_t c, int32_t fr, int32_t fc,
                                                  dw_chan *ch) {
  const int32_t off = p->input_offset, zp = p->output_offset;
  int32_t se = 0, so = 0;
  for (int32_t r = 0; r < 3; r++) {
    const int8_t *w = p->filter + r * fr + c;
    uint32_t t[6];
    dw_tap_row4(w, fc, &se, &so, t);
    const uint32_t ae2 = t[0], be2 = t[1], ce2 = t[2], ao2 = t[3], bo2 = t[4], co2 = t[5];
    ch[0].w[2 * r] = (int32_t)bt_pkhbt16(ae2, be2); ch[0].w[2 * r + 1] = (int32_t)bt_pkhbt16(be2, ce2);
    ch[2].w[2 * r] = (int32_t)bt_pkhtb16(be2, ae2); ch[2].w[2 * r + 1] = (int32_t)bt_pkhtb16(ce2, be2);
    ch[1].w[2 * r] = (int32_t)bt_pkhbt16(ao2, bo2); ch[1].w[2 * r + 1] = (int32_t)bt_pkhbt16(bo2, co2);
    ch[3].w[2 * r] = (int32_t)bt_pkhtb16(bo2, ao2); ch[3].w[2 * r + 1] = (int32_t)bt_pkhtb16(co2, bo2);
  }
  const int32_t sum[4] = {(int16_t)se, (int16_t)so, se >> 16, so >> 16};
  for (int32_t k = 0; k < 4; k++) {
    const int32_t sft = p->shift[c + k], e1 = dw_mm_e(sft);
    ch[k].bias = 2 * (off * sum[k] + (p->bias ? p->bias[c + k] : 0));
    ch[k].m = p->multiplier[c + k];
    ch[k].p2 = bt_rq2_p2_zp(dw_mm_p(sft), e1, zp);
    ch[k].e1 = e1;
    ch[k].zp = zp;
  }
}
#endif

/* Channel c's requantisation fields: m, zp; dw_rqm's p2 and e1 when fast, else e1 the shift. 0 when fast and its shift
 * cannot take the output zero point in p2 (no fold). dw_rows and dwk (dw_kxk.h) set the biases. */
static inline __attribute__((always_inline)) int dw_chan_rq(const bt_conv_params *p, dw_chan *f, int32_t c, int32_t zp,
                                                           int fast) {
  f->m = p->multiplier[c];
  f->zp = zp;
  const int32_t sft = p->shift[c];
  if (fast) {
    f->p2 = dw_mm_p(sft);
    f->e1 = dw_mm_e(sft);
    return bt_rq2_zp_ok(sft);
  }
  f->e1 = sft;
  return 1;
}

/* The dw_requant_fns entry for nc channels whose fields dw_chan_rq set, the output zero point first folded into
 * their p2 when fold (act: dw_requant's activation case). */
static inline __attribute__((always_inline)) dw_requant_fn dw_chan_fold(dw_chan *ch, int32_t nc, int32_t zp, int fast,
                                                                       int fold, int act) {
  if (fold)
    for (int32_t k = 0; k < nc; k++) ch[k].p2 = bt_rq2_p2_zp(ch[k].p2, ch[k].e1, zp);
  return dw_requant_fns[!fast ? 4 : (!fold ? 3 : 2 - act)];
}

/* 1 when dw_rows takes the layer: 3x3, dilation 1, stride_w 1 or 2. */
static int dw_rows_ok(const bt_conv_params *p) {
  return p->kh == 3 && p->kw == 3 && p->dil_h == 1 && p->dil_w == 1 && (p->stride_w == 1 || p->stride_w == 2) &&
         p->stride_h >= 1;
}

/* Output rows [y0, y1) (out holds row y0) of a 3x3 depth-multiplier-1 layer (dw_rows_ok): per strip
 * of output columns, group of four channels and chunk of output rows, the chunk's input rows widened
 * into each channel's plane, then per channel its sums and their requantisation. LI >= 0: every strip's
 * row length dw_rls[LI] (dw_rows_q4_li; at stride 1 the strips at most dw_rls[LI] - 2 outputs each, more of them
 * where the row is longer), -1: each strip's own; Q4 1: every group of every strip in bt_dw_q4
 * (dw_rows_q4_li's conditions; only that loop is compiled: q4f the row length's bt_dw_q4), -1: as the layer allows. */
static inline __attribute__((always_inline)) void dw_rows(const bt_conv_params *p, const dw_geo *g, const int8_t *in,
                                                         int32_t in_y0, int8_t *out, int32_t y0, int32_t y1, int fast,
                                                         const int LI, const int Q4, dw_q4_fn q4f, dw_pair_fn pf) {
  /* bt_dw_q4's strips (big) take the sums' stack row for cells too: longer chunks, fewer input rows widened twice */
  union {
    int16_t cells[DW_CELLS + 2 * DW_ACC];
    struct {
      int16_t plane[DW_CELLS];
      int32_t acc[DW_ACC];
    } s;
  } u __attribute__((aligned(8)));
  int16_t *const plane = u.cells;
  int32_t *const acc = u.s.acc;
  dw_chan ch[4];
  (void)q4f;   /* (without DSP no bt_dw_q4) */
  (void)pf;
  if (y1 <= y0) return;
  const int32_t s = g->s, sh = g->sh, c_n = p->out.c, ops = g->ops, ow = g->ow, fr = g->fr, fc = g->fc;
  const int32_t out_row = g->orow, off = p->input_offset, zp = p->output_offset, lo = p->act_min,
                hi = p->act_max;
  /* most outputs a strip (a row length built in shorter than DW_NS1's: more strips, model_c._share_dw_rows) */
  const int32_t ns = s == 2 ? DW_NS2 : LI >= 0 && dw_rls[LI] - 2 < DW_NS1 ? dw_rls[LI] - 2 : DW_NS1;
  const int32_t strips = (ow + ns - 1) / ns;
  const int act = hi != 127 ? 0 : (lo == -128 ? 2 : 1);
  if (Q4 != 1 && fast && !dw_mm_ok(p)) fast = 0;   /* sums of 2a for dw_rqm; a bias of 2^29 or more: bt_mbqm_fast */
  int q4 = Q4 == 1 || (DW_Q4 && fast && act == 2 && s == 1);   /* every group of four channels set up by dw_chan4_q4 */
  for (int32_t c = 0; Q4 != 1 && q4 && c < c_n; c++) q4 = bt_rq2_zp_ok(p->shift[c]);
  for (int32_t st = 0; st < strips; st++) {
    const int32_t xa = ow * st / strips, xb = ow * (st + 1) / strips, n = xb - xa, n2 = (n + 1) & ~1;
    const int32_t ix0 = xa * s - g->pl, cells = s == 1 ? n + 2 : 2 * n + 1, need = s == 1 ? n2 + 2 : 2 * n2 + 2;
    int32_t li = LI;
    if (LI < 0)
      for (li = 0; dw_rls[li] < need;) li++;
    const int32_t rl = dw_rls[li];
    const dw_sums_fn sums = dw_sums_fns[s - 1][li];
    /* output rows a chunk: its input rows' planes and its sums fit (big: every group of the strip in bt_dw_q4,
       which keeps no sums: the cells of both); the chunks balanced */
    const int big = Q4 == 1 || (DW_Q4 && q4 && (c_n & 3) == 0 && n >= 4);
    int32_t rc = ((big ? DW_CELLS + 2 * DW_ACC : DW_CELLS) / (4 * rl) - 3) / sh + 1;
    if (!big && rc * n + 1 > DW_ACC) rc = (DW_ACC - 1) / n;
    if (rc >= y1 - y0) {
      rc = y1 - y0;
    } else {
      const int32_t nch = (y1 - y0 + rc - 1) / rc;
      rc = (y1 - y0 + nch - 1) / nch;
    }
    const int32_t K = ((rc - 1) * sh + 3) * rl;   /* cells of a channel's plane */
    {   /* the cells outside the image the zero point (widened rows leave them) */
      int32_t bv0 = -ix0, bv1 = g->iw - ix0;
      bv0 = bv0 < 0 ? 0 : (bv0 > cells ? cells : bv0);
      bv1 = bv1 < bv0 ? bv0 : (bv1 > cells ? cells : bv1);
      const int16_t z = (int16_t)-off;
      for (int32_t b = 0; b < cells; b++) {
        if (b == bv0) b = bv1;
        if (b >= cells) break;
        int16_t *d = plane + dw_cell(b, s, rl);
        for (int32_t i = 0; i < 4 * K; i += rl) d[i] = z;
      }
    }
    const int zdone = rc == y1 - y0;   /* one chunk: its rows outside the image the zero point once, not per group */
    if (zdone) {
      const int32_t z2 = bt_dup16(-off), iy0 = y0 * sh - g->pt;
      for (int32_t r = 0; r < (rc - 1) * sh + 3; r++)
        if (iy0 + r < 0 || iy0 + r >= g->ih)
          for (int32_t k = 0; k < 4; k++)
            for (int32_t i = 0; i < rl; i += 2) __builtin_memcpy(plane + k * K + r * rl + i, &z2, 4);
    }
    for (int32_t c = 0; c < c_n; c += 4) {
      const int32_t nc = c_n - c < 4 ? c_n - c : 4;
#if DW_Q4
      if (Q4 == 1 || (q4 && nc == 4 && n >= 4)) {   /* the channels' quads (and last output, n odd) in asm, then pairs */
        dw_chan4_q4(p, c, fr, fc, ch);
        for (int32_t ya = y0; ya < y1; ya += rc) {
          const int32_t rows = y1 - ya < rc ? y1 - ya : rc, nr = (rows - 1) * sh + 3;
          dw_widen4(p, g, in, in_y0, plane, K, rl, ya * sh - g->pt, nr, ix0, cells, c, zdone);
          int8_t *o = out + (ya - y0) * out_row + xa * ops + c;
          const int32_t qg[16] = {(n >> 2) * 8, rows, 2 * sh * rl, out_row, ops, n & 1, 0, 0, 4, 2 * K,
                                  2 * sh * rl - DW_Q4_CELLS(n), out_row - DW_Q4_OUTS(n, ops), 2 * (n - 1),
                                  (n - 1) * ops, sh == 1 ? rows >> 1 : 0, sh == 1 ? rows & 1 : rows};
          (Q4 == 1 ? q4f : dw_q4_fns[li])(plane, ch, o, qg);
          if (n & 2)   /* (Q4 1: the entry's pf, none where no strip has such a pair) */
            for (int32_t k = 0; k < 4; k++)
              (Q4 == 1 ? pf : dw_sums_q_1_rl)(plane + k * K + (n & ~3), &ch[k], o + k + (n & ~3) * ops, rows,
                                              sh * rl, ops, out_row, rl);
        }
        continue;
      }
#endif
      int fold = fast;
      if (nc == 4) {   /* a word of four channels a tap: SXTB16 halves (c, c+2) e and (c+1, c+3) o */
        int32_t se = 0, so = 0;
        for (int32_t r = 0; r < 3; r++) {
          const int8_t *w = p->filter + r * fr + c;
          const uint32_t A = bt_ld4(w), B = bt_ld4(w + fc), C = bt_ld4(w + 2 * fc);
          uint32_t ae = (uint32_t)bt_sxtb16(A), be = (uint32_t)bt_sxtb16(B), ce = (uint32_t)bt_sxtb16(C);
          uint32_t ao = (uint32_t)bt_sxtb16_ror8(A), bo = (uint32_t)bt_sxtb16_ror8(B), co = (uint32_t)bt_sxtb16_ror8(C);
          se = bt_sadd16(bt_sadd16(se, (int32_t)ae), bt_sadd16((int32_t)be, (int32_t)ce));   /* 9 int8 sums: 16 bits */
          so = bt_sadd16(bt_sadd16(so, (int32_t)ao), bt_sadd16((int32_t)bo, (int32_t)co));
          if (fast) {   /* doubled weights: the sums give 2a (dw_rqm) */
            ae = (uint32_t)bt_sadd16((int32_t)ae, (int32_t)ae); be = (uint32_t)bt_sadd16((int32_t)be, (int32_t)be);
            ce = (uint32_t)bt_sadd16((int32_t)ce, (int32_t)ce); ao = (uint32_t)bt_sadd16((int32_t)ao, (int32_t)ao);
            bo = (uint32_t)bt_sadd16((int32_t)bo, (int32_t)bo); co = (uint32_t)bt_sadd16((int32_t)co, (int32_t)co);
          }
          if (s == 1) {   /* (w0, w1), (w1, w2) */
            ch[0].w[2 * r] = (int32_t)bt_pkhbt16(ae, be); ch[0].w[2 * r + 1] = (int32_t)bt_pkhbt16(be, ce);
            ch[2].w[2 * r] = (int32_t)bt_pkhtb16(be, ae); ch[2].w[2 * r + 1] = (int32_t)bt_pkhtb16(ce, be);
            ch[1].w[2 * r] = (int32_t)bt_pkhbt16(ao, bo); ch[1].w[2 * r + 1] = (int32_t)bt_pkhbt16(bo, co);
            ch[3].w[2 * r] = (int32_t)bt_pkhtb16(bo, ao); ch[3].w[2 * r + 1] = (int32_t)bt_pkhtb16(co, bo);
          } else {        /* (w0, w2), w1 */
            ch[0].w[2 * r] = (int32_t)bt_pkhbt16(ae, ce); ch[0].w[2 * r + 1] = (int16_t)be;
            ch[2].w[2 * r] = (int32_t)bt_pkhtb16(ce, ae); ch[2].w[2 * r + 1] = (int32_t)be >> 16;
            ch[1].w[2 * r] = (int32_t)bt_pkhbt16(ao, co); ch[1].w[2 * r + 1] = (int16_t)bo;
            ch[3].w[2 * r] = (int32_t)bt_pkhtb16(co, ao); ch[3].w[2 * r + 1] = (int32_t)bo >> 16;
          }
        }
        ch[0].bias = off * (int16_t)se; ch[2].bias = off * (se >> 16);
        ch[1].bias = off * (int16_t)so; ch[3].bias = off * (so >> 16);
        if (fast)
          for (int32_t k = 0; k < 4; k++) ch[k].bias *= 2;
      } else {
        for (int32_t k = 0; k < nc; k++) {
          const int8_t *w = p->filter + c + k;
          int32_t sum = 0;
          for (int32_t t = 0; t < 9; t++) sum += w[t * c_n];
          for (int32_t r = 0; r < 3; r++) {
            const int32_t a = w[r * fr], b = w[r * fr + fc], e = w[r * fr + 2 * fc];
            ch[k].w[2 * r] = (int32_t)(((uint32_t)(uint16_t)a) | ((uint32_t)(s == 1 ? b : e) << 16));
            ch[k].w[2 * r + 1] = s == 1 ? (int32_t)(((uint32_t)(uint16_t)b) | ((uint32_t)e << 16)) : b;
          }
          ch[k].bias = off * sum;
          if (fast) {   /* the sums give 2a (dw_rqm) */
            for (int32_t i = 0; i < 6; i++) ch[k].w[i] = bt_sadd16(ch[k].w[i], ch[k].w[i]);
            ch[k].bias *= 2;
          }
        }
      }
      for (int32_t k = 0; k < nc; k++) {
        if (p->bias) ch[k].bias += fast ? 2 * p->bias[c + k] : p->bias[c + k];   /* (fast: 2a) */
        if (!dw_chan_rq(p, &ch[k], c + k, zp, fast)) fold = 0;
      }
      const dw_requant_fn rq = dw_chan_fold(ch, nc, zp, fast, fold, act);
      const dw_sums_q_fn sq = fast && fold && act == 2 && n >= (s == 1 && DW_Q4 ? 4 : DW_Q_MIN) ? dw_sums_q_fns[s - 1][li] : 0;
      for (int32_t ya = y0; ya < y1; ya += rc) {
        const int32_t rows = y1 - ya < rc ? y1 - ya : rc, nr = (rows - 1) * sh + 3;
        dw_widen(p, g, in, in_y0, plane, K, rl, ya * sh - g->pt, nr, ix0, cells, c, nc, s, zdone);
        int8_t *o = out + (ya - y0) * out_row + xa * ops + c;
#if DW_Q4
        if (sq && s == 1 && n >= 4) {   /* the channels' quads (and last output, n odd) in asm, then pairs */
          const int32_t qg[16] = {(n >> 2) * 8, rows, 2 * sh * rl, out_row, ops, n & 1, 0, 0, nc, 2 * K,
                                  2 * sh * rl - DW_Q4_CELLS(n), out_row - DW_Q4_OUTS(n, ops), 2 * (n - 1),
                                  (n - 1) * ops, sh == 1 ? rows >> 1 : 0, sh == 1 ? rows & 1 : rows};
          dw_q4_fns[li](plane, ch, o, qg);
          if (n & 2)
            for (int32_t k = 0; k < nc; k++)
              sq(plane + k * K + (n & ~3), &ch[k], o + k + (n & ~3) * ops, 2, rows, sh * rl, ops, out_row);
          continue;
        }
#endif
        for (int32_t k = 0; k < nc; k++) {
          if (sq) {
            sq(plane + k * K, &ch[k], o + k, n, rows, sh * rl, ops, out_row);
            continue;
          }
          sums(plane + k * K, &ch[k], acc, n, rows, sh * rl);
          rq(acc, n, rows, o + k, ops, out_row, &ch[k], lo, hi);
        }
      }
    }
  }
}

#include "dw_kxk.h"   /* 5x5 and 7x7: dw_widen's planes, K-tap column pairs (dwk) */

/* ---- 3x3, dilation 1, small maps and stride 2: four channels' input copied into a padded buffer ----
 * Per band of output rows and group of four channels, the input pixels the band reads are copied a
 * word (four channels) at a time into a buffer whose cells outside the image (padding, rows above or
 * below) hold the input zero point in all four bytes (written once per band, the same for every group),
 * rows rl words apart (rl 8, 16, 32 or 56: a constant in each loop, so the nine taps are immediate
 * offsets from one pointer). The input offset times the filter's sum enters the bias, so every pixel,
 * border or not, runs the same nine straight-line taps (LDR + 2 SXTB16 + 4 SMLAxy with the unpacked
 * weights from one LDRD) and is requantised like dw3x3_rows' (sat: dw_rqm with the zero point folded,
 * SSAT, one word stored). No widening: it takes maps too small for dw_rows' set-up to repay (a whole map
 * at most DW_SMALL_PIXELS outputs) and every stride-2 call, whose widened cells are each read ~2 times.
 * On Arm the stride-1 ones on bt_dw_q4's terms go to dw_q4s with bt_dwp (below): widened after all, but
 * into one small buffer with its zero-point cells written once a band and SMLAD's 1.5 MACs an instruction
 * (vww's 6x6x128 layers 177.9 K -> 132.9 K cycles, cortex-m4 est. high; dw_rows' set-up took 234.6 K).
 * Stride 2 stayed here when widened planes (the same kernel with (w0,w1), w2 and five cell words a quad)
 * measured 414 K against 369 K for vww's 24x24x16 layer and 204 K against 190 K for its 12x12x32, ~2 cycles a
 * widened input value that each stride-2 value repays only ~2.25 times (its 6x6x64 layer 100.1 K against
 * 102.6 K): its bands widened their shared input row twice and set up every group once a band. dw_s2 (below
 * dw_q4s) widens each value once a group, sets a group up once a call and keeps every tap an immediate
 * offset: 369 K -> 295 K and 190 K -> 164 K; the one-row calls and the other stride-2 calls stay here. */
#define DW_PAD_WORDS 672            /* buffer words (2688 bytes: dw_rows' planes) */
#define DW_SMALL_PIXELS 64

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* dw_small_band's sat groups, two pixels a pass: bt_dws2_SW_RL(buf, wq, o, g), wq the unpacked weights (18
 * words), the four biases, then (m, p) of each channel and the four shifts (cq's order), g = {pairs a row,
 * rows, bytes between the rows' first cells, bytes between output rows, ops}. Per tap one LDRD of the weights
 * serves both pixels (LDR, 2 SXTB16, 4 SMLABB/SMLATT each), and per channel one LDRD of (m, p) both
 * requantisations (ADD, SMMLAR; ASR, SSAT, the bytes packed as dw_small_band's). Registers: r0 cells, r1 wq,
 * r2-r5 the first pixel's sums, r6-r9 the second's, r10-r11 weights or constants, r12 and lr the cells'
 * word and its halves; the pointers and counts on the stack. */
#if defined(DW_EMIT_DWS2)
__asm__(
    ".macro BT_DWS2_TAP k, t, S\n\t"
    "ldr r12, [r0, #(\\k)]\n\t"
    "ldr r10, [r1, #(\\t)]\n\t"      /* single LDRs: 1 cycle each after the first (LDRD 3) */
    "ldr r11, [r1, #(\\t + 4)]\n\t"
    "sxtb16 lr, r12\n\t"
    "sxtb16 r12, r12, ror #8\n\t"
    "smlabb r2, r10, lr, r2\n\t"
    "smlatt r4, r10, lr, r4\n\t"
    "smlabb r3, r11, r12, r3\n\t"
    "smlatt r5, r11, r12, r5\n\t"
    "ldr r12, [r0, #(\\k + \\S)]\n\t"
    "sxtb16 lr, r12\n\t"
    "sxtb16 r12, r12, ror #8\n\t"
    "smlabb r6, r10, lr, r6\n\t"
    "smlatt r8, r10, lr, r8\n\t"
    "smlabb r7, r11, r12, r7\n\t"
    "smlatt r9, r11, r12, r9\n\t"
    ".endm\n\t"
    /* the first tap, the second pixel first: its sums start from the biases in r2-r5 (no copies) */
    ".macro BT_DWS2_FIRST S\n\t"
    "ldr r12, [r0, #(\\S)]\n\t"
    "ldr r10, [r1]\n\t"
    "ldr r11, [r1, #4]\n\t"
    "sxtb16 lr, r12\n\t"
    "sxtb16 r12, r12, ror #8\n\t"
    "smlabb r6, r10, lr, r2\n\t"
    "smlatt r8, r10, lr, r4\n\t"
    "smlabb r7, r11, r12, r3\n\t"
    "smlatt r9, r11, r12, r5\n\t"
    "ldr r12, [r0]\n\t"
    "sxtb16 lr, r12\n\t"
    "sxtb16 r12, r12, ror #8\n\t"
    "smlabb r2, r10, lr, r2\n\t"
    "smlatt r4, r10, lr, r4\n\t"
    "smlabb r3, r11, r12, r3\n\t"
    "smlatt r5, r11, r12, r5\n\t"
    ".endm\n\t"
    ".macro BT_DWS2_RQ k, a, b\n\t"
    "ldrd r10, r11, [r1, #(88 + 8 * \\k)]\n\t"
    "add r12, r11, \\a, asr #31\n\t"
    "smmlar \\a, \\a, r10, r12\n\t"
    "add r12, r11, \\b, asr #31\n\t"
    "smmlar \\b, \\b, r10, r12\n\t"
    ".endm\n\t"
    ".macro BT_DWS2 name, RL, S\n\t"
    BT_ASM_ENTRY
    "str r3, [sp, #24]\n\t"           /* g */
    "ldr r12, [r3, #16]\n\t"
    "str r12, [sp, #4]\n\t"           /* ops */
    "ldr r12, [r3, #4]\n\t"
    "str r12, [sp, #20]\n\t"          /* rows left */
    "str r2, [sp, #16]\n\t"           /* the row's output */
    "1:\n\t"
    "str r0, [sp, #12]\n\t"           /* the row's cells */
    "ldr r12, [sp, #16]\n\t"
    "str r12, [sp, #0]\n\t"           /* output */
    "ldr r12, [sp, #24]\n\t"
    "ldr r12, [r12]\n\t"
    "str r12, [sp, #8]\n\t"           /* pairs left */
    "2:\n\t"
    "ldr r2, [r1, #72]\n\t"           /* the biases (single LDRs, chained with the first tap's three) */
    "ldr r3, [r1, #76]\n\t"
    "ldr r4, [r1, #80]\n\t"
    "ldr r5, [r1, #84]\n\t"
    "BT_DWS2_FIRST \\S\n\t"
    "BT_DWS2_TAP 4, 8, \\S\n\t"
    "BT_DWS2_TAP 8, 16, \\S\n\t"
    "BT_DWS2_TAP (4 * \\RL), 24, \\S\n\t"
    "BT_DWS2_TAP (4 * \\RL + 4), 32, \\S\n\t"
    "BT_DWS2_TAP (4 * \\RL + 8), 40, \\S\n\t"
    "BT_DWS2_TAP (8 * \\RL), 48, \\S\n\t"
    "BT_DWS2_TAP (8 * \\RL + 4), 56, \\S\n\t"
    "BT_DWS2_TAP (8 * \\RL + 8), 64, \\S\n\t"
    "BT_DWS2_RQ 0, r2, r6\n\t"
    "BT_DWS2_RQ 1, r3, r7\n\t"
    "BT_DWS2_RQ 2, r4, r8\n\t"
    "BT_DWS2_RQ 3, r5, r9\n\t"
    "ldrd r10, r11, [r1, #120]\n\t"
    "asr r2, r2, r10\n\t"
    "asr r6, r6, r10\n\t"
    "asr r3, r3, r11\n\t"
    "asr r7, r7, r11\n\t"
    "ldrd r10, r11, [r1, #128]\n\t"
    "asr r4, r4, r10\n\t"
    "asr r8, r8, r10\n\t"
    "asr r5, r5, r11\n\t"
    "asr r9, r9, r11\n\t"
    "ssat r2, #8, r2\n\t"
    "ssat r3, #8, r3\n\t"
    "ssat r4, #8, r4\n\t"
    "ssat r5, #8, r5\n\t"
    "ssat r6, #8, r6\n\t"
    "ssat r7, #8, r7\n\t"
    "ssat r8, #8, r8\n\t"
    "ssat r9, #8, r9\n\t"
    "pkhbt r2, r2, r4, lsl #16\n\t"
    "pkhbt r3, r3, r5, lsl #16\n\t"
    "pkhbt r6, r6, r8, lsl #16\n\t"
    "pkhbt r7, r7, r9, lsl #16\n\t"
    "and r2, r2, #0x00ff00ff\n\t"
    "and r3, r3, #0x00ff00ff\n\t"
    "and r6, r6, #0x00ff00ff\n\t"
    "and r7, r7, #0x00ff00ff\n\t"
    "orr r2, r2, r3, lsl #8\n\t"
    "orr r6, r6, r7, lsl #8\n\t"
    "ldr r10, [sp, #0]\n\t"          /* output, ops (the STR after them 1 cycle) */
    "ldr r11, [sp, #4]\n\t"
    "str r2, [r10]\n\t"
    "str r6, [r10, r11]\n\t"
    "add r10, r10, r11, lsl #1\n\t"
    "str r10, [sp, #0]\n\t"
    "add r0, r0, #(2 * \\S)\n\t"
    "ldr r12, [sp, #8]\n\t"
    "subs r12, r12, #1\n\t"
    "str r12, [sp, #8]\n\t"
    "bne 2b\n\t"
    "ldr r12, [sp, #24]\n\t"
    "ldrd r10, r11, [r12, #8]\n\t"    /* bytes between rows of cells, of outputs */
    "ldr r0, [sp, #12]\n\t"
    "add r0, r0, r10\n\t"
    "ldr r2, [sp, #16]\n\t"
    "add r2, r2, r11\n\t"
    "str r2, [sp, #16]\n\t"
    "ldr r12, [sp, #20]\n\t"
    "subs r12, r12, #1\n\t"
    "str r12, [sp, #20]\n\t"
    "bne 1b\n\t"
    "add sp, sp, #32\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size \\name, . - \\name\n\t"
    ".endm\n\t"
    "BT_DWS2 bt_dws2_1_8, 8, 4\n\t"
    "BT_DWS2 bt_dws2_1_16, 16, 4\n\t"
    "BT_DWS2 bt_dws2_1_32, 32, 4\n\t"
    "BT_DWS2 bt_dws2_1_56, 56, 4\n\t"
    "BT_DWS2 bt_dws2_2_8, 8, 8\n\t"
    "BT_DWS2 bt_dws2_2_16, 16, 8\n\t"
    "BT_DWS2 bt_dws2_2_32, 32, 8\n\t"
    "BT_DWS2 bt_dws2_2_56, 56, 8\n\t"
    ".purgem BT_DWS2\n\t"
    ".purgem BT_DWS2_RQ\n\t"
    ".purgem BT_DWS2_TAP\n\t"
    ".purgem BT_DWS2_FIRST\n\t"
    ".text");
#endif
typedef void (*dw_small2_fn)(const uint32_t *, const int32_t *, int8_t *, const int32_t *);
#define DWS2_DECL(n) void n(const uint32_t *, const int32_t *, int8_t *, const int32_t *);
DWS2_DECL(bt_dws2_1_8) DWS2_DECL(bt_dws2_1_16) DWS2_DECL(bt_dws2_1_32) DWS2_DECL(bt_dws2_1_56)
DWS2_DECL(bt_dws2_2_8) DWS2_DECL(bt_dws2_2_16) DWS2_DECL(bt_dws2_2_32) DWS2_DECL(bt_dws2_2_56)
#undef DWS2_DECL
#if defined(DW_PART_SMALL)
static const dw_small2_fn dw_small2_fns[2][4] = {{bt_dws2_1_8, bt_dws2_1_16, bt_dws2_1_32, bt_dws2_1_56},
                                                 {bt_dws2_2_8, bt_dws2_2_16, bt_dws2_2_32, bt_dws2_2_56}};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dw_small2_fn dw_small2_fns[2][4];
#endif

/* dw_small's stride-1 layers on Arm with every channel on bt_dw_q4's terms (the whole int8 range, bt_rq2_zp_ok,
 * dw_mm_ok), from per-channel int16 planes: bt_dwp_RL(planes, ch, o, g), the four channels' planes 2 K bytes apart
 * (rows RL cells apart, cell b input column b - pad_left), ch four dw_chan (dw_chan4_q4's: doubled weights and bias,
 * per tap row (w0,w1) and (w1,w2), the zero point in p2), o channel 0's first output, g = {bytes of a row's quads'
 * cells, the row's last outputs (0, 2: six, 3: three), bytes between output rows' cells, out_row, ops, a column of
 * single outputs, n when 6 or 3 (their own loops, else 0), channels, 2 K, rows times the cells' row step, from a row's
 * quads' end to the next row's cells and outputs, the single column's cells and output}. Per channel and row its
 * quads, then (n % 4 of 2, n >= 6) six outputs or (n % 4 of 3) three in one pass, sharing the tap rows' weight loads,
 * constants and loop (a quad and a pair apart: vww's 6x6 layers 12 cycles a row more); n % 4 of 1 a column of single
 * outputs after the rows, its steps in registers. Per tap row and pair of outputs x, x+1 the cells' words (x, x+1),
 * (x+2, x+3) and SMLAD + SMLABT, SMLATB + SMLAD with (w0,w1), (w1,w2) (bt_dw_q4's: 4 instructions for 6 MACs), where
 * dw_small's four-channel words took 6 for 4 (LDR, SXTB16 twice and four SMLABB/SMLATT a tap, each input word widened
 * again by each of its up to nine taps); then dw_rqm, SSAT and STRB each output. The planes are bt_dw_widen4's (dw_q4s), each
 * pixel widened once a group. Rows of exactly six or three outputs (a 6x6 or 3x3 map) run their own loops, every
 * channel in them, the row steps in registers or loaded after the stores (the general row loop's checks and steps: 15
 * cycles a row more); bt_dwp_8 holds those two loops only (rows of 8 cells: six or three outputs, dw_planes_li), the
 * other row lengths the general loop only. vww (cortex-m4 est. high): the 6x6x128 layers 177.9 K with dw_small's bt_dws2 -> 132.9 K (of its
 * instructions bt_dwp 74 %, bt_dwp_widen 14 %, dw_chan4_q4 8 %), the 3x3x256 layer 132.0 K -> 109.5 K. Registers: r0
 * cells, r1 ch, r2 out, r3 ops, r4-r7 sums (six outputs: r3-r8), r8-r10 cells (six: r9, r10, lr), r11-r12 weights, lr
 * the row's quads' end. */
#if defined(DW_EMIT_DWP)
__asm__(
    /* a tap row's loads: its two weight words at w, two words of cells at off (first: the bias into r4) */
    ".macro BT_DWP_LOADS off, w, first\n\t"
    ".if \\first\n\t"
    "ldr.w r4, [r1]\n\t"
    ".endif\n\t"
    "ldr.w r11, [r1, #\\w]\n\t"
    "ldr.w r12, [r1, #(\\w + 4)]\n\t"
    "ldr.w r8, [r0, #\\off]\n\t"
    "ldr.w r9, [r0, #(\\off + 4)]\n\t"
    ".endm\n\t"
    /* one tap row of a quad from the cells at off, weights at w (first: the sums start from the bias, r4) */
    ".macro BT_DWP_QROW off, w, first\n\t"
    "BT_DWP_LOADS \\off, \\w, \\first\n\t"
    "ldr.w r10, [r0, #(\\off + 8)]\n\t"
    ".if \\first\n\t"
    "smlatb r5, r8, r11, r4\n\t"
    "smlad r6, r9, r11, r4\n\t"
    "smlatb r7, r9, r11, r4\n\t"
    "smlad r4, r8, r11, r4\n\t"
    ".else\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlatb r5, r8, r11, r5\n\t"
    "smlad r6, r9, r11, r6\n\t"
    "smlatb r7, r9, r11, r7\n\t"
    ".endif\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "smlad r5, r9, r12, r5\n\t"
    "smlabt r6, r10, r12, r6\n\t"
    "smlad r7, r10, r12, r7\n\t"
    ".endm\n\t"
    /* one tap row of three outputs (sums r4-r6) */
    ".macro BT_DWP_TROW off, w, first\n\t"
    "BT_DWP_LOADS \\off, \\w, \\first\n\t"
    "ldr.w r10, [r0, #(\\off + 8)]\n\t"
    ".if \\first\n\t"
    "smlatb r5, r8, r11, r4\n\t"
    "smlad r6, r9, r11, r4\n\t"
    "smlad r4, r8, r11, r4\n\t"
    ".else\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlatb r5, r8, r11, r5\n\t"
    "smlad r6, r9, r11, r6\n\t"
    ".endif\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    "smlad r5, r9, r12, r5\n\t"
    "smlabt r6, r10, r12, r6\n\t"
    ".endm\n\t"
    /* one tap row of a single output (sum r4) */
    ".macro BT_DWP_SROW off, w, first\n\t"
    "BT_DWP_LOADS \\off, \\w, \\first\n\t"
    "smlad r4, r8, r11, r4\n\t"
    "smlabt r4, r9, r12, r4\n\t"
    ".endm\n\t"
    /* n sums (r4, r5, r6, r7) requantised and stored at r2, ops (r3) apart; n 4: r2 on past them; defer (n 3): the
       third left in r6 for the caller to store after an LDR (1 cycle) */
    ".macro BT_DWP_OUT n, defer=0\n\t"
    "ldr.w r8, [r1, #28]\n\t"        /* m, p2, e1 */
    "ldr.w r9, [r1, #32]\n\t"
    "ldr.w r10, [r1, #36]\n\t"
    "add r11, r9, r4, asr #31\n\t"
    "smmlar r4, r4, r8, r11\n\t"
    ".if \\n > 1\n\t"
    "add r11, r9, r5, asr #31\n\t"
    "smmlar r5, r5, r8, r11\n\t"
    "add r11, r9, r6, asr #31\n\t"
    "smmlar r6, r6, r8, r11\n\t"
    ".endif\n\t"
    ".if \\n > 3\n\t"
    "add r11, r9, r7, asr #31\n\t"
    "smmlar r7, r7, r8, r11\n\t"
    ".endif\n\t"
    "asr r4, r4, r10\n\t"
    "ssat r4, #8, r4\n\t"
    ".if \\n > 1\n\t"
    "asr r5, r5, r10\n\t"
    "asr r6, r6, r10\n\t"
    "ssat r5, #8, r5\n\t"
    "ssat r6, #8, r6\n\t"
    ".endif\n\t"
    ".if \\n > 3\n\t"
    "asr r7, r7, r10\n\t"
    "ssat r7, #8, r7\n\t"
    ".endif\n\t"
    "strb.w r4, [r2]\n\t"
    ".if \\n == 3\n\t"
    "strb.w r5, [r2, r3]\n\t"
    ".if \\defer == 0\n\t"
    "strb.w r6, [r2, r3, lsl #1]\n\t"
    ".endif\n\t"
    ".endif\n\t"
    ".if \\n == 4\n\t"
    "strb.w r5, [r2, r3]\n\t"
    "add r2, r2, r3, lsl #1\n\t"
    "strb.w r6, [r2]\n\t"
    "strb.w r7, [r2, r3]\n\t"
    "add r2, r2, r3, lsl #1\n\t"
    ".endif\n\t"
    ".endm\n\t"
    /* one tap row of six outputs, sums r3-r8, cells r9, r10, lr */
    ".macro BT_DWP_HROW off, w, first\n\t"
    ".if \\first\n\t"
    "ldr.w r3, [r1]\n\t"
    ".endif\n\t"
    "ldr.w r11, [r1, #\\w]\n\t"
    "ldr.w r12, [r1, #(\\w + 4)]\n\t"
    "ldr.w r9, [r0, #\\off]\n\t"
    "ldr.w r10, [r0, #(\\off + 4)]\n\t"
    "ldr.w lr, [r0, #(\\off + 8)]\n\t"
    ".if \\first\n\t"
    "smlatb r4, r9, r11, r3\n\t"
    "smlad r5, r10, r11, r3\n\t"
    "smlatb r6, r10, r11, r3\n\t"
    "smlad r7, lr, r11, r3\n\t"
    "smlatb r8, lr, r11, r3\n\t"
    "smlad r3, r9, r11, r3\n\t"
    ".else\n\t"
    "smlad r3, r9, r11, r3\n\t"
    "smlatb r4, r9, r11, r4\n\t"
    "smlad r5, r10, r11, r5\n\t"
    "smlatb r6, r10, r11, r6\n\t"
    "smlad r7, lr, r11, r7\n\t"
    "smlatb r8, lr, r11, r8\n\t"
    ".endif\n\t"
    "smlabt r3, r10, r12, r3\n\t"
    "smlad r4, r10, r12, r4\n\t"
    "smlabt r5, lr, r12, r5\n\t"
    "smlad r6, lr, r12, r6\n\t"
    "ldr.w r9, [r0, #(\\off + 12)]\n\t"
    "smlabt r7, r9, r12, r7\n\t"
    "smlad r8, r9, r12, r8\n\t"
    ".endm\n\t"
    /* the six sums requantised and stored at r2 (ops from the locals) and r2 four outputs on; adv: six on, r3 ops;
       defer: the sixth left in r8 for the caller to store after an LDR (1 cycle) */
    ".macro BT_DWP_HOUT adv, defer=0\n\t"
    "ldr.w r9, [r1, #28]\n\t"        /* m, p2, e1, ops */
    "ldr.w r10, [r1, #32]\n\t"
    "ldr.w r11, [r1, #36]\n\t"
    "ldr.w r12, [sp, #24]\n\t"
    "add lr, r10, r3, asr #31\n\t"
    "smmlar r3, r3, r9, lr\n\t"
    "add lr, r10, r4, asr #31\n\t"
    "smmlar r4, r4, r9, lr\n\t"
    "add lr, r10, r5, asr #31\n\t"
    "smmlar r5, r5, r9, lr\n\t"
    "add lr, r10, r6, asr #31\n\t"
    "smmlar r6, r6, r9, lr\n\t"
    "add lr, r10, r7, asr #31\n\t"
    "smmlar r7, r7, r9, lr\n\t"
    "add lr, r10, r8, asr #31\n\t"
    "smmlar r8, r8, r9, lr\n\t"
    "asr r3, r3, r11\n\t"
    "asr r4, r4, r11\n\t"
    "asr r5, r5, r11\n\t"
    "asr r6, r6, r11\n\t"
    "asr r7, r7, r11\n\t"
    "asr r8, r8, r11\n\t"
    "ssat r3, #8, r3\n\t"
    "ssat r4, #8, r4\n\t"
    "ssat r5, #8, r5\n\t"
    "ssat r6, #8, r6\n\t"
    "ssat r7, #8, r7\n\t"
    "ssat r8, #8, r8\n\t"
    "strb.w r3, [r2]\n\t"
    "strb.w r4, [r2, r12]\n\t"
    "add r2, r2, r12, lsl #1\n\t"
    "strb.w r5, [r2]\n\t"
    "strb.w r6, [r2, r12]\n\t"
    "add r2, r2, r12, lsl #1\n\t"
    "strb.w r7, [r2]\n\t"
    ".if \\defer == 0\n\t"
    "strb.w r8, [r2, r12]\n\t"
    ".endif\n\t"
    ".if \\adv\n\t"
    "add r2, r2, r12, lsl #1\n\t"
    "mov r3, r12\n\t"
    ".endif\n\t"
    ".endm\n\t"
    ".macro BT_DWP name, RL\n\t"
    BT_ASM_ENTRY
    "sub sp, sp, #16\n\t"           /* 48 bytes of locals */
    "str r3, [sp, #0]\n\t"          /* g */
    "ldr r4, [r3, #28]\n\t"
    "str r4, [sp, #4]\n\t"          /* channels left */
    ".if \\RL == 8\n\t"             /* rows of six or three outputs (dw_planes_li): their own loops only */
    "mov r12, r3\n\t"
    "ldr r4, [r12, #24]\n\t"
    "cmp r4, #6\n\t"
    "beq 8f\n\t"
    "b 12f\n\t"
    ".else\n\t"                     /* any other row: the general loop only */
    "0:\n\t"
    "str r0, [sp, #8]\n\t"          /* the channel's cells and output */
    "str r2, [sp, #12]\n\t"
    "ldr r12, [sp, #0]\n\t"
    "ldr r4, [r12, #0]\n\t"         /* bytes of a row's quads, its last outputs */
    "ldr r5, [r12, #4]\n\t"
    "orrs r6, r4, r5\n\t"
    "beq 3f\n\t"
    "str r5, [sp, #20]\n\t"
    "ldr r5, [r12, #36]\n\t"
    "ldr r3, [r12, #16]\n\t"        /* ops */
    "add r5, r5, r0\n\t"
    "str r5, [sp, #16]\n\t"         /* the channel's rows' end */
    "str r3, [sp, #24]\n\t"
    "add lr, r0, r4\n\t"
    "1:\n\t"
    "cmp r0, lr\n\t"
    "beq 5f\n\t"
    "6:\n\t"
    "BT_DWP_QROW 0, 4, 1\n\t"
    "BT_DWP_QROW (2 * \\RL), 12, 0\n\t"
    "BT_DWP_QROW (4 * \\RL), 20, 0\n\t"
    "BT_DWP_OUT 4\n\t"
    "add r0, r0, #8\n\t"
    "cmp r0, lr\n\t"
    "bne 6b\n\t"
    "5:\n\t"
    "ldr r8, [sp, #20]\n\t"
    "cmp r8, #3\n\t"
    "bne 10f\n\t"
    "BT_DWP_TROW 0, 4, 1\n\t"
    "BT_DWP_TROW (2 * \\RL), 12, 0\n\t"
    "BT_DWP_TROW (4 * \\RL), 20, 0\n\t"
    "BT_DWP_OUT 3\n\t"
    "b 7f\n\t"
    "10:\n\t"
    "cmp r8, #2\n\t"
    "bne 7f\n\t"
    "BT_DWP_HROW 0, 4, 1\n\t"
    "BT_DWP_HROW (2 * \\RL), 12, 0\n\t"
    "BT_DWP_HROW (4 * \\RL), 20, 0\n\t"
    "BT_DWP_HOUT 1\n\t"
    "7:\n\t"
    "ldr r8, [sp, #0]\n\t"
    "ldr r12, [sp, #16]\n\t"
    "ldr r9, [r8, #40]\n\t"         /* from the quads' end to the next row's cells, output */
    "ldr r10, [r8, #44]\n\t"
    "ldr r11, [r8, #0]\n\t"
    "add r0, r0, r9\n\t"
    "add r2, r2, r10\n\t"
    "add lr, r0, r11\n\t"
    "cmp r0, r12\n\t"
    "bne 1b\n\t"
    "3:\n\t"                        /* a column of single outputs (n % 4 of 1), top to bottom */
    "ldr r12, [sp, #0]\n\t"
    "ldr r4, [r12, #20]\n\t"
    "cmp r4, #0\n\t"
    "beq 4f\n\t"
    "ldr r0, [sp, #8]\n\t"
    "ldr r2, [sp, #12]\n\t"
    "ldr r4, [r12, #48]\n\t"
    "ldr r5, [r12, #52]\n\t"
    "ldr r3, [r12, #16]\n\t"        /* ops, the cells' row step, out_row, the column's extent */
    "ldr r6, [r12, #8]\n\t"
    "ldr r7, [r12, #12]\n\t"
    "ldr lr, [r12, #36]\n\t"
    "add r0, r0, r4\n\t"
    "add r2, r2, r5\n\t"
    "add lr, lr, r0\n\t"
    "11:\n\t"
    "BT_DWP_SROW 0, 4, 1\n\t"
    "BT_DWP_SROW (2 * \\RL), 12, 0\n\t"
    "BT_DWP_SROW (4 * \\RL), 20, 0\n\t"
    "BT_DWP_OUT 1\n\t"
    "add r0, r0, r6\n\t"
    "add r2, r2, r7\n\t"
    "cmp r0, lr\n\t"
    "bne 11b\n\t"
    "4:\n\t"
    "ldr r12, [sp, #0]\n\t"
    "ldr r0, [sp, #8]\n\t"
    "ldr r2, [sp, #12]\n\t"
    "ldr r4, [r12, #32]\n\t"        /* bytes between the channels' planes */
    "ldr r5, [sp, #4]\n\t"
    "add r0, r0, r4\n\t"
    "adds r2, r2, #1\n\t"
    "adds r1, r1, #44\n\t"          /* sizeof (dw_chan) */
    "subs r5, r5, #1\n\t"
    "str r5, [sp, #4]\n\t"
    "bne 0b\n\t"
    ".endif\n\t"
    "14:\n\t"
    "add sp, sp, #48\n\t"
    "pop {r4-r11, pc}\n\t"
    ".if \\RL == 8\n\t"
    /* rows of six outputs (n 6): every channel in this loop, its steps on the stack (ops, the cells' row step,
       out_row - 4 ops, rows times the row step, 2 K), the row's loaded after its stores */
    "8:\n\t"
    "ldr r3, [r12, #16]\n\t"
    "ldr r4, [r12, #8]\n\t"
    "ldr r5, [r12, #44]\n\t"
    "ldr r6, [r12, #36]\n\t"
    "ldr r7, [r12, #32]\n\t"
    "strd r3, r4, [sp, #24]\n\t"
    "strd r5, r6, [sp, #32]\n\t"
    "str r7, [sp, #40]\n\t"
    "80:\n\t"
    "add r5, r6, r0\n\t"
    "strd r0, r2, [sp, #8]\n\t"
    "str r5, [sp, #16]\n\t"         /* the channel's rows' end */
    "9:\n\t"
    "BT_DWP_HROW 0, 4, 1\n\t"
    "BT_DWP_HROW (2 * \\RL), 12, 0\n\t"
    "BT_DWP_HROW (4 * \\RL), 20, 0\n\t"
    "BT_DWP_HOUT 0, 1\n\t"
    "ldr r9, [sp, #32]\n\t"
    "ldr r10, [sp, #28]\n\t"
    "ldr r11, [sp, #16]\n\t"
    "strb.w r8, [r2, r12]\n\t"      /* the row's sixth output after the LDRs: 1 cycle, not 2 */
    "add r2, r2, r9\n\t"
    "add r0, r0, r10\n\t"
    "cmp r0, r11\n\t"
    "bne 9b\n\t"
    "ldrd r0, r2, [sp, #8]\n\t"     /* the next channel */
    "ldr r4, [sp, #40]\n\t"
    "ldr r5, [sp, #4]\n\t"
    "ldr r6, [sp, #36]\n\t"
    "add r0, r0, r4\n\t"
    "adds r2, r2, #1\n\t"
    "adds r1, r1, #44\n\t"
    "subs r5, r5, #1\n\t"
    "str r5, [sp, #4]\n\t"
    "bne 80b\n\t"
    "b 14b\n\t"
    /* rows of three outputs (n 3): every channel in this loop, the row steps in r7, lr */
    "12:\n\t"
    "ldr r3, [r12, #16]\n\t"
    "ldr r7, [r12, #8]\n\t"
    "ldr lr, [r12, #12]\n\t"
    "ldr r6, [r12, #36]\n\t"
    "ldr r4, [r12, #32]\n\t"
    "strd r6, r4, [sp, #32]\n\t"    /* rows times the row step, 2 K */
    "120:\n\t"
    "add r5, r6, r0\n\t"
    "strd r0, r2, [sp, #8]\n\t"
    "str r5, [sp, #16]\n\t"
    "13:\n\t"
    "BT_DWP_TROW 0, 4, 1\n\t"
    "BT_DWP_TROW (2 * \\RL), 12, 0\n\t"
    "BT_DWP_TROW (4 * \\RL), 20, 0\n\t"
    "BT_DWP_OUT 3, 1\n\t"
    "ldr r8, [sp, #16]\n\t"
    "strb.w r6, [r2, r3, lsl #1]\n\t" /* the row's third output after the LDR: 1 cycle, not 2 */
    "add r0, r0, r7\n\t"
    "add r2, r2, lr\n\t"
    "cmp r0, r8\n\t"
    "bne 13b\n\t"
    "ldrd r0, r2, [sp, #8]\n\t"
    "ldrd r6, r4, [sp, #32]\n\t"
    "ldr r5, [sp, #4]\n\t"
    "add r0, r0, r4\n\t"
    "adds r2, r2, #1\n\t"
    "adds r1, r1, #44\n\t"
    "subs r5, r5, #1\n\t"
    "str r5, [sp, #4]\n\t"
    "bne 120b\n\t"
    "b 14b\n\t"
    ".endif\n\t"
    ".size \\name, . - \\name\n\t"
    ".endm\n\t"
    "BT_DWP bt_dwp_8, 8\n\t"
    "BT_DWP bt_dwp_16, 16\n\t"
    "BT_DWP bt_dwp_32, 32\n\t"
    "BT_DWP bt_dwp_56, 56\n\t"
    ".purgem BT_DWP\n\t"
    ".purgem BT_DWP_HOUT\n\t"
    ".purgem BT_DWP_HROW\n\t"
    ".purgem BT_DWP_OUT\n\t"
    ".purgem BT_DWP_SROW\n\t"
    ".purgem BT_DWP_TROW\n\t"
    ".purgem BT_DWP_QROW\n\t"
    ".text");
#endif
#define DWP_DECL(n) void n(const int16_t *, const void *, int8_t *, const int32_t *);
DWP_DECL(bt_dwp_8) DWP_DECL(bt_dwp_16) DWP_DECL(bt_dwp_32) DWP_DECL(bt_dwp_56)
#undef DWP_DECL
typedef void (*dwp_fn)(const int16_t *, const void *, int8_t *, const int32_t *);
#endif

static inline __attribute__((always_inline)) void dw_small_band(const bt_conv_params *p, const uint32_t *buf,
                                                               int8_t *o, int32_t rows, int32_t c, const int rl,
                                                               const int fast, const int sat, const int SW) {
  (void)SW;
  const int32_t c_n = p->out.c, ops = p->out.pixel_stride, ow = p->out.w, sh = p->stride_h, sw = p->stride_w;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  /* the unpacked weights w, then the four biases bq, then (sat, Arm) the constants for bt_dws2 (its layout) */
  int32_t wq[34] __attribute__((aligned(8))), se = 0, so = 0;
  int32_t *const w = wq, *const bq = wq + 18;
  for (int t = 0; t < 9; t++) {
    const uint32_t v = bt_ld4(p->filter + t * c_n + c);
    const int32_t we = bt_sxtb16(v), wo = bt_sxtb16_ror8(v);
    se = bt_sadd16(se, we);   /* 9 int8 weights: the sums fit 16 bits */
    so = bt_sadd16(so, wo);
    w[2 * t] = sat ? bt_sadd16(we, we) : we;   /* sat: doubled, the sums give 2a (dw_rqm) */
    w[2 * t + 1] = sat ? bt_sadd16(wo, wo) : wo;
  }
  const int32_t *const bias = p->bias;
  bq[0] = (bias ? bias[c] : 0) + off * (int16_t)se; bq[1] = (bias ? bias[c + 1] : 0) + off * (int16_t)so;
  bq[2] = (bias ? bias[c + 2] : 0) + off * (se >> 16); bq[3] = (bias ? bias[c + 3] : 0) + off * (so >> 16);
  if (sat)
    for (int k = 0; k < 4; k++) bq[k] *= 2;
  const int32_t *const mult = p->multiplier, *const shift = p->shift;
  DW_CONST4(c);
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  /* sat's constants as the asm reads them: (m, p) pairs, then the shifts, by LDRD */
  const int32_t cq[12] __attribute__((aligned(8))) = {m0, p0, m1, p1, m2, p2, m3, p3, e0, e1, e2, e3};
#endif
  int32_t x0 = 0;   /* the first pixel of each row the loop below takes */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  if (sat && ow >= 4 && sw <= 2) {   /* pairs of pixels in asm (bt_dws2), the last of an odd row below (3 wide: */
    /* one pair a row does not repay the call) */
    for (int k = 0; k < 12; k++) wq[22 + k] = cq[k];
    const int32_t g[5] = {ow >> 1, rows, sh * rl * 4, ow * ops, ops};
    /* SW (1, 2: the stride a specialised band takes; 0: the call's) picks the row's function by name, so a band of
       one stride links one, and any band its row length's two, not the table's eight */
    const int li = rl == 8 ? 0 : rl == 16 ? 1 : rl == 32 ? 2 : 3;
    if ((SW ? SW : sw) == 1) dw_small2_fns[0][li](buf, wq, o, g);
    else dw_small2_fns[1][li](buf, wq, o, g);
    x0 = ow & ~1;
  }
#endif
  for (int32_t y = 0; y < rows && x0 < ow; y++) {
    const uint32_t *ip = buf + y * sh * rl + x0 * sw;
    int8_t *q = o + y * ow * ops + x0 * ops;
    for (int32_t x = x0; x < ow; x++, ip += sw, q += ops) {
      int32_t a0, a1, a2, a3;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
      {
        uint32_t xv, xe, wa, wb;
/* nine taps, rows RL words apart (a literal: the offsets are assembler expressions at any -O level) */
#define BT_DWS_TAP(k, t)                                             \
  "ldr %[xv], [%[ip], #(" k ")]\n\t"                                 \
  "ldr %[wa], [%[wp], #" t "]\n\t"                                   \
  "ldr %[wb], [%[wp], #(" t "+4)]\n\t"                               \
  "sxtb16 %[xe], %[xv]\n\t"                                          \
  "sxtb16 %[xv], %[xv], ror #8\n\t"                                  \
  "smlabb %[a0], %[wa], %[xe], %[a0]\n\t"                            \
  "smlatt %[a2], %[wa], %[xe], %[a2]\n\t"                            \
  "smlabb %[a1], %[wb], %[xv], %[a1]\n\t"                            \
  "smlatt %[a3], %[wb], %[xv], %[a3]\n\t"
#define BT_DWS_ASM(RL)                                                                                          \
  __asm__(BT_DWS_TAP("0", "0") BT_DWS_TAP("4", "8") BT_DWS_TAP("8", "16")                                       \
          BT_DWS_TAP("4*" #RL, "24") BT_DWS_TAP("4*" #RL "+4", "32") BT_DWS_TAP("4*" #RL "+8", "40")            \
          BT_DWS_TAP("8*" #RL, "48") BT_DWS_TAP("8*" #RL "+4", "56") BT_DWS_TAP("8*" #RL "+8", "64")            \
          : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xv] "=&r"(xv), [xe] "=&r"(xe),         \
            [wa] "=&r"(wa), [wb] "=&r"(wb)                                                                      \
          : [ip] "r"(ip), [wp] "r"(wq), "m"(*(const uint32_t(*)[3 * RL])ip), "m"(*(const int32_t(*)[18])wq))
        a0 = bq[0]; a1 = bq[1]; a2 = bq[2]; a3 = bq[3];
        if (rl == 8) BT_DWS_ASM(8);
        else if (rl == 16) BT_DWS_ASM(16);
        else if (rl == 32) BT_DWS_ASM(32);
        else BT_DWS_ASM(56);
#undef BT_DWS_ASM
#undef BT_DWS_TAP
      }
#else
      a0 = bq[0]; a1 = bq[1]; a2 = bq[2]; a3 = bq[3];
      for (int t = 0; t < 9; t++) {
        const uint32_t xv = ip[(t / 3) * rl + t % 3];
        const int32_t xe = bt_sxtb16(xv), xo = bt_sxtb16_ror8(xv);
        a0 = bt_smlabb(w[2 * t], xe, a0); a2 = bt_smlatt(w[2 * t], xe, a2);
        a1 = bt_smlabb(w[2 * t + 1], xo, a1); a3 = bt_smlatt(w[2 * t + 1], xo, a3);
      }
#endif
      uint32_t word;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
      if (sat) {   /* dw_rqm, SSAT, (q0, q2) and (q1, q3) halves, then bytes; each channel's (m, p) by one LDRD */
        int32_t t0, t1;
#define BT_DWS_RQ(a, k)                                              \
  "ldrd %[t0], %[t1], [%[cq], #" k "]\n\t"                           \
  "add %[t1], %[t1], %[" a "], asr #31\n\t"                          \
  "smmlar %[" a "], %[" a "], %[t0], %[t1]\n\t"
        __asm__(BT_DWS_RQ("a0", "0") BT_DWS_RQ("a1", "8") BT_DWS_RQ("a2", "16") BT_DWS_RQ("a3", "24")
                "ldrd %[t0], %[t1], [%[cq], #32]\n\t"
                "asr %[a0], %[a0], %[t0]\n\t"
                "asr %[a1], %[a1], %[t1]\n\t"
                "ldrd %[t0], %[t1], [%[cq], #40]\n\t"
                "asr %[a2], %[a2], %[t0]\n\t"
                "asr %[a3], %[a3], %[t1]\n\t"
                "ssat %[a0], #8, %[a0]\n\t"
                "ssat %[a1], #8, %[a1]\n\t"
                "ssat %[a2], #8, %[a2]\n\t"
                "ssat %[a3], #8, %[a3]\n\t"
                "pkhbt %[a0], %[a0], %[a2], lsl #16\n\t"
                "pkhbt %[a1], %[a1], %[a3], lsl #16\n\t"
                "and %[a0], %[a0], #0x00ff00ff\n\t"
                "and %[a1], %[a1], #0x00ff00ff\n\t"
                "orr %[a0], %[a0], %[a1], lsl #8"
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [t0] "=&r"(t0), [t1] "=&r"(t1)
                : [cq] "r"(cq), "m"(cq));
#undef BT_DWS_RQ
        word = (uint32_t)a0;
      } else
#endif
      DW_WORD4(word, 1);
      __builtin_memcpy(q, &word, 4);
    }
  }
}

typedef void (*dw_small_fn)(const bt_conv_params *, const uint32_t *, int8_t *, int32_t, int32_t);
#define DW_SMALL(name, rl, fast, sat, sw)                                                              \
  static void name(const bt_conv_params *p, const uint32_t *buf, int8_t *o, int32_t rows, int32_t c) { \
    dw_small_band(p, buf, o, rows, c, rl, fast, sat, sw);                                              \
  }
DW_SMALL(dw_small_8_s, 8, 1, 1, 0)
DW_SMALL(dw_small_16_s, 16, 1, 1, 0)
DW_SMALL(dw_small_32_s, 32, 1, 1, 0)
DW_SMALL(dw_small_56_s, 56, 1, 1, 0)
DW_SMALL(dw_small_8_f, 8, 1, 0, 0)
DW_SMALL(dw_small_16_f, 16, 1, 0, 0)
DW_SMALL(dw_small_32_f, 32, 1, 0, 0)
DW_SMALL(dw_small_56_f, 56, 1, 0, 0)
DW_SMALL(dw_small_8_m, 8, 0, 0, 0)
DW_SMALL(dw_small_16_m, 16, 0, 0, 0)
DW_SMALL(dw_small_32_m, 32, 0, 0, 0)
DW_SMALL(dw_small_56_m, 56, 0, 0, 0)
/* the sat bands of one stride, for the entries below that name it (bt_dw_small_sSW_RL: one bt_dws2 each) */
DW_SMALL(dw_small_8_s1, 8, 1, 1, 1)
DW_SMALL(dw_small_16_s1, 16, 1, 1, 1)
DW_SMALL(dw_small_32_s1, 32, 1, 1, 1)
DW_SMALL(dw_small_56_s1, 56, 1, 1, 1)
DW_SMALL(dw_small_8_s2, 8, 1, 1, 2)
DW_SMALL(dw_small_16_s2, 16, 1, 1, 2)
DW_SMALL(dw_small_32_s2, 32, 1, 1, 2)
DW_SMALL(dw_small_56_s2, 56, 1, 1, 2)
#undef DW_SMALL
/* [mode: sat, fast, bt_mbqm_fast][row length 8, 16, 32, 56] */
#if defined(DW_PART_SMALL) || !DW_Q4
static const dw_small_fn dw_small_fns[3][4] = {{dw_small_8_s, dw_small_16_s, dw_small_32_s, dw_small_56_s},
                                               {dw_small_8_f, dw_small_16_f, dw_small_32_f, dw_small_56_f},
                                               {dw_small_8_m, dw_small_16_m, dw_small_32_m, dw_small_56_m}};
#else   /* not this file's: its functions not kept by -O0 (whose -fno-toplevel-reorder keeps a table) */
static const dw_small_fn dw_small_fns[3][4];
#endif

/* 1 when dw_small takes the call of out rows [y0, y1): stride_w 2 or at most DW_SMALL_PIXELS outputs, at
 * least 3 outputs wide, 3x3 undilated, whole groups of four channels, buffer rows of at most 56 words. */
static int dw_small_ok(const bt_conv_params *p, int32_t y0, int32_t y1) {
  if (p->stride_w != 2 && (y1 - y0) * p->out.w > DW_SMALL_PIXELS) return 0;
  if (p->out.w < 3) return 0;   /* a fused tile's 1-2 columns: the box path reads them in place */
  return p->kh == 3 && p->kw == 3 && p->dil_h == 1 && p->dil_w == 1 && p->stride_h >= 1 && p->stride_w >= 1 &&
         (p->out.c & 3) == 0 && p->out.c > 0 && y1 > y0 && (p->out.w - 1) * p->stride_w + 3 <= 56;
}

/* Output rows [y0, y1) (out holds row y0) of a 3x3 depth-multiplier-1 layer (dw_small_ok), a band of rows
 * at a time. ONE 1: every group through `band` (dw_small_one: the entries bt_dw_small_*_RL below, which model.c calls
 * where code generation found every call of a layer to take that band: codegen/tile_kernels.py dw_small_entry), so
 * it links one band, not a table of twelve; 0: each group's band by its requantisation (dw_sat_ok). */
static inline __attribute__((always_inline)) void dw_small_b(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                            int8_t *out, int32_t y0, int32_t y1, const int fast,
                                                            const int ONE, dw_small_fn band) {
  uint32_t buf[DW_PAD_WORDS];
  const int32_t c_n = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips, ops = p->out.pixel_stride;
  const int32_t sh = p->stride_h, sw = p->stride_w, ow = p->out.w, ih = p->in.h, iw = p->in.w;
  const int32_t cols = (ow - 1) * sw + 3, ix0 = -p->pad_left;
  const int li = cols <= 8 ? 0 : cols <= 16 ? 1 : cols <= 32 ? 2 : 3;
  const int32_t rl = li == 0 ? 8 : li == 1 ? 16 : li == 2 ? 32 : 56;
  int32_t rb = (DW_PAD_WORDS / rl - 3) / sh + 1;   /* output rows a band */
  /* sat per group: the activation range all of int8, each channel's -shift - 1 <= 21 and |bias| < 2^29 */
  const int full = fast && p->act_min == -128 && p->act_max == 127;
  const uint32_t zw = (uint32_t)(uint8_t)(int8_t)-p->input_offset * 0x01010101u;
  int32_t jv0 = -ix0, jv1 = iw - ix0;   /* buffer columns inside the image: [jv0, jv1) */
  jv0 = jv0 < 0 ? 0 : (jv0 > cols ? cols : jv0);
  jv1 = jv1 < jv0 ? jv0 : (jv1 > cols ? cols : jv1);
  for (int32_t ya = y0; ya < y1; ya += rb) {
    const int32_t rows = y1 - ya < rb ? y1 - ya : rb, nr = (rows - 1) * sh + 3, iy0 = ya * sh - p->pad_top;
    /* rows inside the image: [ra, rz) of the band's nr */
    int32_t ra = -iy0, rz = ih - iy0;
    ra = ra < 0 ? 0 : (ra > nr ? nr : ra);
    rz = rz < ra ? ra : (rz > nr ? nr : rz);
    for (int32_t r = 0; r < nr; r++) {   /* the zero point where the image is not */
      uint32_t *d = buf + r * rl;
      if (r < ra || r >= rz) {
        for (int32_t j = 0; j < cols; j++) d[j] = zw;
      } else {
        for (int32_t j = 0; j < jv0; j++) d[j] = zw;
        for (int32_t j = jv1; j < cols; j++) d[j] = zw;
      }
    }
    int8_t *o = out + (ya - y0) * ow * ops;
    const int8_t *src0 = in + (iy0 + ra - in_y0) * in_row + (ix0 + jv0) * ips;
    const int32_t nj = jv1 - jv0;
    for (int32_t c = 0; c < c_n; c += 4) {
      const int8_t *s = src0 + c;
      uint32_t *d = buf + ra * rl + jv0;
      for (int32_t r = ra; r < rz; r++, s += in_row, d += rl) {
        const int8_t *sp = s;
        int32_t j = 0;
        for (; j + 2 <= nj; j += 2, sp += 2 * ips) {
          const uint32_t A = bt_ld4(sp), B = bt_ld4(sp + ips);
          d[j] = A; d[j + 1] = B;
        }
        if (j < nj) d[j] = bt_ld4(sp);
      }
      if (ONE) {
        band(p, buf, o + c, rows, c);
        continue;
      }
      const int sat = full && dw_sat_ok(p, c) && dw_sat_ok(p, c + 1) && dw_sat_ok(p, c + 2) && dw_sat_ok(p, c + 3);
      dw_small_fns[sat ? 0 : fast ? 1 : 2][li](p, buf, o + c, rows, c);
    }
  }
}
static __attribute__((noinline)) void dw_small(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out,
                                                int32_t y0, int32_t y1, int fast) {
  dw_small_b(p, in, in_y0, out, y0, y1, fast, 0, 0);
}
static __attribute__((noinline)) void dw_small_one(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                    int8_t *out, int32_t y0, int32_t y1, dw_small_fn band) {
  dw_small_b(p, in, in_y0, out, y0, y1, 1, 1, band);
}

/* 1 when dw_q4s's planes (bt_dw_planes_RL) take a dw_small_ok call of out rows [y0, y1): stride_w 1, rows of at least 3 outputs
 * (narrower ones: a pair or a single output a row in bt_dwp's column loop, its set-up not repaid), at least 2 rows
 * (the in-place ring's one-row calls would widen three input rows and set up every group for one output row),
 * fast with the zero point folded and the whole int8 range (dw_rqm + SSAT) for every channel (bt_dw_q4's
 * conditions). */
static int dw_small_planes_ok(const bt_conv_params *p, int32_t y0, int32_t y1, int fast) {
  if (!fast || p->act_min != -128 || p->act_max != 127 || p->stride_w != 1 || p->out.w < 3 || y1 - y0 < 2 ||
      !dw_mm_ok(p))
    return 0;
  for (int32_t c = 0; c < p->out.c; c++)
    if (!bt_rq2_zp_ok(p->shift[c])) return 0;
  return 1;
}

#define DW_S2_WORDS 576             /* three rows of cells: outputs at most 47 a row (2304 bytes) */

/* 1 when dw_s2 takes the call of out rows [y0, y1): 3x3, dilation 1, stride 2 both ways, channels a multiple of
 * four, 3 to 47 outputs a row (narrower: dw_small's and the box path's, as before), at least two rows (the in-place
 * ring's and a fused plan's one-row calls would set every group up for one output row: dw_small), at most one row or
 * column of padding each side, fast with the zero point folded and the whole int8 range for every channel (bt_dw_q4's
 * conditions). */
static int dw_s2_ok(const bt_conv_params *p, int32_t y0, int32_t y1, int fast) {
  const int32_t pb = (p->out.h - 1) * 2 + 3 - p->pad_top - p->in.h, pr = (p->out.w - 1) * 2 + 3 - p->pad_left - p->in.w;
  if (!fast || p->act_min != -128 || p->act_max != 127 || p->kh != 3 || p->kw != 3 || p->dil_h != 1 ||
      p->dil_w != 1 || p->stride_w != 2 || p->stride_h != 2 || (p->out.c & 3) || p->out.c <= 0 || p->out.w < 3 ||
      y1 - y0 < 2 ||
      12 * (p->out.w + 1) > DW_S2_WORDS || p->pad_left < 0 || p->pad_left > 1 || p->pad_top < 0 || p->pad_top > 1 ||
      pb > 1 || pr > 1 || !dw_mm_ok(p))
    return 0;
  for (int32_t c = 0; c < p->out.c; c++)
    if (!bt_rq2_zp_ok(p->shift[c])) return 0;
  return 1;
}

#if DW_Q4

/* Output rows [y0, y1) (out holds row y0) of a stride-1 3x3 layer on bt_dw_q4's terms, the map as it is: bt_dw_planes_RL
 * (kernel bt_dwp_RL, planes 1: whole rows of at most rl - 2 outputs, dw_small_planes_ok) and bt_dw_rows_q4e_RL (bt_dw_q4e_RL,
 * planes 0: strips of at most rl - 2 and DW_NS1 outputs, every one's a multiple of four) in one driver (issue 50: it
 * and dw_widen4_s1's asm, bt_dw_widen4, serve both where dw_small_planes, its own widening bt_dwp_widen, dw_rows' copy
 * for bt_dw_q4 and its widening wrapper took 3,112 bytes: vww cortex-m4; its 6x6x128 layers 120.5 K -> 120.2 K est. cycles,
 * the 3x3x256 one 94.4 K -> 99.8 K, the rows' 48x48x8, 24x24x32, 12x12x64 407.9 K -> 403.8 K, 406.3 K -> 402.6 K, 221.8 K
 * -> 216.0 K, with bt_dw_widen4's row steps once a call). Per strip the cells outside the image the input zero point (its columns outside for every
 * row; its rows outside once where the strip is one chunk, else each chunk), then per group of four channels
 * dw_chan4_q4's values and per chunk of output rows (dw_rows' chunks: its planes and the sums' stack row, balanced)
 * the rows inside the image widened (bt_dw_widen4) and the kernel. */
static __attribute__((noinline)) void dw_q4s(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                            int8_t *out, int32_t y0, int32_t y1, int li, dw_q4_fn kern,
                                                            int planes) {
  int16_t plane[DW_CELLS + 2 * DW_ACC + 2] __attribute__((aligned(8)));   /* (bt_dwp reads the cell past the last) */
  dw_chan ch[4];
  if (y1 <= y0) return;
  const int32_t c_n = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips, ops = p->out.pixel_stride;
  const int32_t sh = p->stride_h, ow = p->out.w, ih = p->in.h, out_row = ow * ops, rl = dw_rls[li];
  const int32_t most = planes ? ow : (rl - 2 < DW_NS1 ? rl - 2 : DW_NS1), strips = (ow + most - 1) / most;
  const int16_t z = (int16_t)-p->input_offset;
  const uint32_t z2 = (uint32_t)bt_dup16(-p->input_offset);
  int32_t rc = ((DW_CELLS + 2 * DW_ACC) / (4 * rl) - 3) / sh + 1;
  if (rc >= y1 - y0) {
    rc = y1 - y0;
  } else {
    const int32_t nch = (y1 - y0 + rc - 1) / rc;
    rc = (y1 - y0 + nch - 1) / nch;
  }
  const int32_t K = ((rc - 1) * sh + 3) * rl, rstep = 2 * sh * rl, one = rc == y1 - y0;
  /* bt_dwp's row: its quads (n % 4 of 2: the last one with the pair, six outputs; of 3: three after them) */
  const int32_t tail = (ow & 3) == 3 ? 3 : ((ow & 3) == 2 ? 2 : 0), nq = (ow >> 2) - (tail == 2), qb = nq * 8;
  for (int32_t st = 0; st < strips; st++) {
    const int32_t xa = ow * st / strips, xb = ow * (st + 1) / strips, n = xb - xa, cells = n + 2;
    const int32_t ix0 = xa - p->pad_left;
    int32_t bv0 = -ix0, bv1 = p->in.w - ix0;   /* cells inside the image: [bv0, bv1) */
    bv0 = bv0 < 0 ? 0 : (bv0 > cells ? cells : bv0);
    bv1 = bv1 < bv0 ? bv0 : (bv1 > cells ? cells : bv1);
    for (int32_t b = 0; b < cells; b++) {   /* the columns outside the image, every row */
      if (b == bv0) b = bv1;
      if (b >= cells) break;
      for (int32_t i = b; i < 4 * K; i += rl) plane[i] = z;
    }
    const int32_t cnt = bv1 - bv0, lead = bv0 & 1;
    int32_t g[16], wg[7], ra = 0, rz = 0;   /* a chunk's (one chunk: worked out for the strip's first group alone) */
    for (int32_t c = 0; c < c_n; c += 4) {
      dw_chan4_q4(p, c, 3 * c_n, c_n, ch);
      for (int32_t ya = y0; ya < y1; ya += rc) {
        const int32_t rows = y1 - ya < rc ? y1 - ya : rc, nr = (rows - 1) * sh + 3, iy0 = ya * sh - p->pad_top;
        if (c == 0 || !one) {
          ra = -iy0, rz = ih - iy0;   /* rows inside the image: [ra, rz) of the chunk's nr */
          ra = ra < 0 ? 0 : (ra > nr ? nr : ra);
          rz = rz < ra ? ra : (rz > nr ? nr : rz);
          for (int32_t r = 0; r < nr; r++) {   /* the rows outside the image */
            if (r == ra) r = rz;
            if (r >= nr) break;
            for (int32_t k = 0; k < 4; k++) dw_fill_z(plane + k * K + r * rl, rl, z2);
          }
          wg[0] = in_row; wg[1] = 2 * K; wg[2] = rz - ra; wg[3] = 8 * ((cnt - lead) >> 2); wg[4] = 2 * rl;
          wg[5] = lead; wg[6] = (cnt - lead) & 3;
          if (planes) {   /* bt_dwp's */
            const int32_t q[14] = {qb, tail, rstep, out_row, ops, (ow & 3) == 1, ow == 6 || ow == 3 ? ow : 0, 4, 2 * K,
                                   rows * rstep, rstep - qb,
                                   out_row - (ow == 6 ? 4 : nq * 4 + (tail == 2 ? 6 : 0)) * ops, qb, nq * 4 * ops};
            __builtin_memcpy(g, q, sizeof q);
          } else {        /* bt_dw_q4e's */
            const int32_t q[12] = {(n >> 2) * 8, rows, rstep, out_row, ops, 0, 0, 0, 4, 2 * K, rstep - DW_Q4_CELLS(n),
                                   out_row - DW_Q4_OUTS(n, ops)};
            __builtin_memcpy(g, q, sizeof q);
          }
        }
        if (rz > ra && cnt > 0)
          bt_dw_widen4(in + (iy0 + ra - in_y0) * in_row + (ix0 + bv0) * ips + c, ips, plane + ra * rl + bv0, wg);
        kern(plane, ch, out + (ya - y0) * out_row + xa * ops + c, g);
      }
    }
  }
}

/* ---- stride 2 (both ways) on Arm with every channel on bt_dw_q4's terms: column pairs of four channels ----
 * The whole int8 range, every channel bt_rq2_zp_ok and dw_mm_ok, one row or column of padding at most on each side:
 * per group of four channels, three rows of int16 cells, pair j of a row holding channel k's input columns
 * 2j - pad_left and 2j + 1 - pad_left (the zero point outside the image); a pair's four channels in its three rows
 * side by side (48 bytes a pair: (pair j, row p, channel k) at 48 j + 16 p + 4 k), ow + 1 pairs. Output x of a row
 * reads pair x of each row: SMLAD with (w0,w1) and SMLABT with w2 (the top of dw_chan's (w1,w2)) on pair x + 1's low
 * half (6 instructions for 9
 * MACs, all offsets immediate: dw_small's four-channel words took 13.5, LDR, 2 SXTB16 and 4 SMLAxy a tap of four
 * channels, each input word widened again by each of its taps). The next output row keeps the row of cells its
 * first tap row shares with the last one and widens its other two over the rest, so the rows of cells run down,
 * then up (the constants of every second output row with tap rows 0 and 2 swapped, the second four dw_chan), and each
 * input value is widened once a group: two pixels' words PKHBT/PKHTB into (c0,c1) and (c2,c3) halves, four SXTB16,
 * two rows' eight words one STM (31.5 cycles a pass of two pairs of two rows: ~8 cycles an output). Per channel and
 * output row, six outputs a pass (7 cells a tap row, three registers of them reloaded twice, the weights two LDRs: 12
 * chained LDRs and 12 SMLAD/SMLABT, ~24 cycles a tap row; then dw_rqm, SSAT and STRB each), the row's last n % 6 in
 * one pass, rows of 1-5 outputs a loop of their own over the channels (vww's 3x3 maps: ~15 cycles a row less than
 * the general loop's per-channel checks). Groups outermost, dw_s2_chan once a group (its constants ~380 cycles:
 * 12 K of vww's 3x3x128 layer). vww dense, cortex-m4 est. high: 24x24x16 368.9 K -> 294.6 K, 12x12x32 190.2 K ->
 * 163.5 K, 6x6x64 102.6 K -> 102.4 K, 3x3x128 74.5 K -> 73.2 K (dw_small's bt_dws2 before); a first version with
 * rows of cells apart (a register step, quads, a band's rows of cells refilled) 330.9 K, 180.9 K, 113.3 K, 89.7 K;
 * with quads instead of passes of six 298.0 K, 164.3 K, 105.8 K, 72.8 K. */

#if defined(DW_EMIT_S2G)
__asm__(
    /* one tap row of n (1-6) outputs from the row of cells at off (pairs 48 bytes apart, r0), weights at w (r1);
       first: the sums from the bias (BT_DWS2_MAC). Sums r3 to r3 + n - 1, cells r9, r10, lr and (n <= 4) the
       sums' unused registers down from r8, else reloaded into r9, r10, lr after their last use; weights r11, r12. */
    ".macro BT_DWS2_MAC first, s, c, b\n\t"
    ".if \\first\n\t"
    "smlad \\s, \\c, r11, \\b\n\t"
    ".else\n\t"
    "smlad \\s, \\c, r11, \\s\n\t"
    ".endif\n\t"
    ".endm\n\t"
    /* a tap row's first loads: (first) the bias into r3 (and b2), the weights r11, r12, cells 0 and 1 r9, r10 */
    ".macro BT_DWS2_HEAD first, w, off, b2\n\t"
    ".if \\first\n\t"
    "ldr.w r3, [r1]\n\t"
    ".ifnb \\b2\n\tldr.w \\b2, [r1]\n\t.endif\n\t"
    ".endif\n\t"
    "ldr.w r11, [r1, #\\w]\n\t"
    "ldr.w r12, [r1, #(\\w + 4)]\n\t"
    "ldr.w r9, [r0, #(\\off + 0)]\n\t"
    "ldr.w r10, [r0, #(\\off + 48)]\n\t"
    ".endm\n\t"
    ".macro BT_DWS2_ROW n, off, w, first\n\t"
    ".if \\n <= 4\n\t"               /* cells r9, r10, lr, r8, r7; sums r3-r6 */
    "BT_DWS2_HEAD \\first, \\w, \\off\n\t"
    ".if \\n > 1\n\tldr.w lr, [r0, #(\\off + 96)]\n\t.endif\n\t"
    ".if \\n > 2\n\tldr.w r8, [r0, #(\\off + 144)]\n\t.endif\n\t"
    ".if \\n > 3\n\tldr.w r7, [r0, #(\\off + 192)]\n\t.endif\n\t"
    ".if \\n > 3\n\tBT_DWS2_MAC \\first, r6, r8, r3\n\t.endif\n\t"
    ".if \\n > 2\n\tBT_DWS2_MAC \\first, r5, lr, r3\n\t.endif\n\t"
    ".if \\n > 1\n\tBT_DWS2_MAC \\first, r4, r10, r3\n\t.endif\n\t"
    "BT_DWS2_MAC \\first, r3, r9, r3\n\t"
    "smlabt r3, r10, r12, r3\n\t"
    ".if \\n > 1\n\tsmlabt r4, lr, r12, r4\n\t.endif\n\t"
    ".if \\n > 2\n\tsmlabt r5, r8, r12, r5\n\t.endif\n\t"
    ".if \\n > 3\n\tsmlabt r6, r7, r12, r6\n\t.endif\n\t"
    ".endif\n\t"
    ".if \\n == 5\n\t"
    "BT_DWS2_HEAD \\first, \\w, \\off, r7\n\t"
    "ldr.w lr, [r0, #(\\off + 96)]\n\t"
    "ldr.w r8, [r0, #(\\off + 144)]\n\t"
    "BT_DWS2_MAC \\first, r6, r8, r3\n\t"
    "BT_DWS2_MAC \\first, r5, lr, r3\n\t"
    "BT_DWS2_MAC \\first, r4, r10, r3\n\t"
    "BT_DWS2_MAC \\first, r3, r9, r3\n\t"
    "smlabt r3, r10, r12, r3\n\t"
    "smlabt r4, lr, r12, r4\n\t"
    "smlabt r5, r8, r12, r5\n\t"
    "ldr.w r9, [r0, #(\\off + 192)]\n\t"
    "ldr.w r10, [r0, #(\\off + 240)]\n\t"
    "smlabt r6, r9, r12, r6\n\t"
    "BT_DWS2_MAC \\first, r7, r9, r7\n\t"
    "smlabt r7, r10, r12, r7\n\t"
    ".endif\n\t"
    ".if \\n == 6\n\t"
    "BT_DWS2_HEAD \\first, \\w, \\off, r8\n\t"
    "ldr.w lr, [r0, #(\\off + 96)]\n\t"
    "BT_DWS2_MAC \\first, r5, lr, r3\n\t"
    "BT_DWS2_MAC \\first, r4, r10, r3\n\t"
    "BT_DWS2_MAC \\first, r3, r9, r3\n\t"
    "smlabt r3, r10, r12, r3\n\t"
    "smlabt r4, lr, r12, r4\n\t"
    "ldr.w r9, [r0, #(\\off + 144)]\n\t"
    "ldr.w r10, [r0, #(\\off + 192)]\n\t"
    "smlabt r5, r9, r12, r5\n\t"
    "BT_DWS2_MAC \\first, r6, r9, r8\n\t"
    "BT_DWS2_MAC \\first, r7, r10, r8\n\t"
    "smlabt r6, r10, r12, r6\n\t"
    "ldr.w lr, [r0, #(\\off + 240)]\n\t"
    "ldr.w r9, [r0, #(\\off + 288)]\n\t"
    "BT_DWS2_MAC \\first, r8, lr, r8\n\t"
    "smlabt r7, lr, r12, r7\n\t"
    "smlabt r8, r9, r12, r8\n\t"
    ".endif\n\t"
    ".endm\n\t"

    /* n outputs: their sums (three tap rows) requantised (dw_rqm, SSAT) and stored at r2, ops apart (n 6: r2 on past
       them); end (n <= 5): r8 loaded from [sp, #4] (the channels' end) in the constants' chain */
    ".macro BT_DWS2_RQ s\n\t"
    "add lr, r10, \\s, asr #31\n\t"
    "smmlar \\s, \\s, r9, lr\n\t"
    "asr \\s, \\s, r11\n\t"
    "ssat \\s, #8, \\s\n\t"
    ".endm\n\t"
    ".macro BT_DWS2_OUT n, end\n\t"
    "BT_DWS2_ROW \\n, 0, 4, 1\n\t"
    "BT_DWS2_ROW \\n, 16, 12, 0\n\t"
    "BT_DWS2_ROW \\n, 32, 20, 0\n\t"
    "ldr.w r9, [r1, #28]\n\t"        /* m, p2, e1, ops */
    "ldr.w r10, [r1, #32]\n\t"
    "ldr.w r11, [r1, #36]\n\t"
    "ldr.w r12, [sp, #0]\n\t"
    ".if \\end\n\t"
    "ldr.w r8, [sp, #4]\n\t"
    ".endif\n\t"
    "BT_DWS2_RQ r3\n\t"
    ".if \\n > 1\n\t"
    "BT_DWS2_RQ r4\n\t"
    ".endif\n\t"
    ".if \\n > 2\n\t"
    "BT_DWS2_RQ r5\n\t"
    ".endif\n\t"
    ".if \\n > 3\n\t"
    "BT_DWS2_RQ r6\n\t"
    ".endif\n\t"
    ".if \\n > 4\n\t"
    "BT_DWS2_RQ r7\n\t"
    ".endif\n\t"
    ".if \\n > 5\n\t"
    "BT_DWS2_RQ r8\n\t"
    ".endif\n\t"
    "strb.w r3, [r2]\n\t"
    ".if \\n > 1\n\t"
    "strb.w r4, [r2, r12]\n\t"
    ".endif\n\t"
    ".if \\n > 2\n\t"
    "strb.w r5, [r2, r12, lsl #1]\n\t"
    ".endif\n\t"
    ".if \\n > 3\n\t"
    "add lr, r12, r12, lsl #1\n\t"
    "strb.w r6, [r2, lr]\n\t"
    ".endif\n\t"
    ".if \\n > 4\n\t"
    "strb.w r7, [r2, r12, lsl #2]\n\t"
    ".endif\n\t"
    ".if \\n > 5\n\t"
    "add lr, lr, r12, lsl #1\n\t"
    "strb.w r8, [r2, lr]\n\t"
    "add r2, r2, lr\n\t"
    "add r2, r2, r12\n\t"
    ".endif\n\t"
    ".endm\n\t"
    /* one pair of two rows of cells from the pixel words r6, r7 (first row) and r10, r11 (second): r4-r11 stored
       at r2, r2 on to the next pair */
    ".macro BT_DWS2_PAIR\n\t"
    "pkhbt r4, r6, r7, lsl #16\n\t"
    "pkhtb r7, r7, r6, asr #16\n\t"
    "sxtb16 r5, r4, ror #8\n\t"
    "sxtb16 r4, r4\n\t"
    "sxtb16 r6, r7\n\t"
    "sxtb16 r7, r7, ror #8\n\t"
    "pkhbt r8, r10, r11, lsl #16\n\t"
    "pkhtb r11, r11, r10, asr #16\n\t"
    "sxtb16 r9, r8, ror #8\n\t"
    "sxtb16 r8, r8\n\t"
    "sxtb16 r10, r11\n\t"
    "sxtb16 r11, r11, ror #8\n\t"
    "stm r2, {r4-r11}\n\t"
    "add r2, r2, #48\n\t"
    ".endm\n\t"
    /* the next pair's four pixel words (first row r0, ips r1; second r3, r12) into r6, r7, r10, r11 */
    ".macro BT_DWS2_LOAD\n\t"
    "ldr r6, [r0]\n\t"
    "ldr r7, [r0, r1]\n\t"
    "ldr r10, [r3]\n\t"
    "ldr r11, [r3, r12]\n\t"
    "add r0, r0, r1, lsl #1\n\t"
    "add r3, r3, r12, lsl #1\n\t"
    ".endm\n\t"
    /* a channel loop over rows of n (1-5) outputs alone: r1 to the channels' end (r8, from [sp, #4]) */
    ".macro BT_DWS2_TLOOP n\n\t"
    "1:\n\t"
    "BT_DWS2_OUT \\n, 1\n\t"
    "adds r0, r0, #4\n\t"
    "adds r2, r2, #1\n\t"
    "adds r1, r1, #44\n\t"           /* sizeof (dw_chan) */
    "cmp r1, r8\n\t"
    "bne 1b\n\t"
    ".endm\n\t"
    /* bt_dws2g(cells, f, out, g): g = {output rows, their first two new input rows (tap rows 1, 2 of the first
       output row), the pixel step of each (0: a row of the zero point, its word), bytes between output rows' input
       rows, pairs, lead, tail, the zero point in four bytes, the passes of six's cells' bytes, n % 6, ops, out_row,
       a last row with tap row 2 the zero point (1) or none, the first output row's tap row 0 and its pixel step, the
       output bytes of the passes of six, the loop of rows of n % 6 outputs (bt_dws2_tN, N = n % 6; unread for
       none)}: its tap row 0 into row 2 of cells, then per output row its two new rows
       of cells (bt_dws2 widen: down the cells' rows 1, 2 from its tap rows 1, 2, up their rows 0, 1 from its tap
       rows 2, 1), per channel its passes of six, then the channels' last n % 6 in the loop of rows of 1-5 outputs
       (such rows: that loop alone; one copy of each n, 1,142 bytes less than a second after each channel's passes;
       each a function of its own, called: bt_dws2_tN below).
       Stack: 0 ops, 4 a loop's end, 8 rows left, 12 srcA, 16 srcB, 20 ipsA, 24 ipsB, 28 adv, 32 pairs, 36 lead, 40
       tail, 44 zw, 48 qb, 52 n % 6, 56 out_row, 60 up, 64 cells, 68 f, 72 the output row, 76 extra, 80 a channel's
       cells and output, 88 the widening's return (and bt_dws2_tN's), 92 the channels' end, 96 the passes' output bytes,
       100 bt_dws2_tN. */
    ".section .text.bt_dws2g,\"ax\",%progbits\n\t.p2align 2\n\t.global bt_dws2g\n\t"
    ".hidden bt_dws2g\n\t.type bt_dws2g, %function\n\t.thumb_func\n\t"
    "bt_dws2g:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #108\n\t"
    "strd r0, r1, [sp, #64]\n\t"     /* cells, f */
    "str r2, [sp, #72]\n\t"          /* the output row */
    "ldm r3!, {r4-r11}\n\t"          /* rows, srcA, srcB, ipsA, ipsB, adv, pairs, lead */
    "str r4, [sp, #8]\n\t"
    "strd r5, r6, [sp, #12]\n\t"
    "strd r7, r8, [sp, #20]\n\t"
    "strd r9, r10, [sp, #28]\n\t"
    "str r11, [sp, #36]\n\t"
    "ldm r3!, {r4-r10}\n\t"          /* tail, zw, qb, n % 4, ops, out_row, extra */
    "strd r4, r5, [sp, #40]\n\t"
    "strd r6, r7, [sp, #48]\n\t"
    "str r8, [sp, #0]\n\t"
    "str r9, [sp, #56]\n\t"
    "str r10, [sp, #76]\n\t"
    "ldr r4, [r3, #8]\n\t"         /* the last n % 6 outputs' offset */
    "str r4, [sp, #96]\n\t"
    "ldr r4, [r3, #12]\n\t"        /* the loop of rows of n % 6 outputs (bt_dws2_tN) */
    "str r4, [sp, #100]\n\t"
    "movs r4, #1\n\t"
    "str r4, [sp, #60]\n\t"          /* the first output row up */
    "ldm r3, {r3, r12}\n\t"          /* its tap row 0 into row 2 of cells (row 1 the zero point) */
    "add r0, sp, #44\n\t"
    "movs r1, #0\n\t"
    "ldr r2, [sp, #64]\n\t"
    "adds r2, r2, #16\n\t"
    "bl 60f\n\t"
    "10:\n\t"                        /* an output row: its two new rows of cells */
    "ldrd r0, r3, [sp, #12]\n\t"
    "ldrd r1, r12, [sp, #20]\n\t"
    "ldr r2, [sp, #64]\n\t"
    "ldr r4, [sp, #60]\n\t"
    "cmp r4, #0\n\t"
    "bne 11f\n\t"
    "adds r2, r2, #16\n\t"           /* down: tap rows 1, 2 into rows 1, 2 of cells */
    "b 12f\n\t"
    "11:\n\t"                        /* up: tap row 2 into row 0, 1 into row 1 */
    "mov r4, r0\n\t"
    "mov r0, r3\n\t"
    "mov r3, r4\n\t"
    "mov r4, r1\n\t"
    "mov r1, r12\n\t"
    "mov r12, r4\n\t"
    "12:\n\t"
    "bl 60f\n\t"
    "ldrd r0, r1, [sp, #64]\n\t"     /* the four channels' outputs */
    "ldr r2, [sp, #72]\n\t"
    "ldr r4, [sp, #60]\n\t"
    "cmp r4, #0\n\t"
    "beq 13f\n\t"
    "adds r1, r1, #176\n\t"          /* up: the constants with tap rows 0 and 2 swapped */
    "13:\n\t"
    "add r5, r1, #176\n\t"
    "str r5, [sp, #92]\n\t"          /* the channels' end */
    "ldr r4, [sp, #48]\n\t"
    "cmp r4, #0\n\t"
    "beq 30f\n\t"
    "20:\n\t"                        /* rows of six or more outputs: per channel its passes of six */
    "strd r0, r2, [sp, #80]\n\t"
    "add r9, r0, r4\n\t"
    "str r9, [sp, #4]\n\t"
    "21:\n\t"
    "BT_DWS2_OUT 6, 0\n\t"
    "add r0, r0, #288\n\t"
    "ldr r9, [sp, #4]\n\t"
    "cmp r0, r9\n\t"
    "bne 21b\n\t"
    "ldrd r0, r2, [sp, #80]\n\t"
    "ldr r5, [sp, #92]\n\t"
    "ldr r4, [sp, #48]\n\t"
    "adds r0, r0, #4\n\t"
    "adds r2, r2, #1\n\t"
    "adds r1, r1, #44\n\t"           /* sizeof (dw_chan) */
    "cmp r1, r5\n\t"
    "bne 20b\n\t"
    /* then, n % 6 > 0, the channels' last n % 6 outputs: the loops of rows of 1-5 outputs from the cells and
       outputs past the passes (one loop of theirs, not a copy of the five after each channel's passes) */
    "ldr r4, [sp, #52]\n\t"
    "cmp r4, #0\n\t"
    "beq 50f\n\t"
    "ldr r0, [sp, #64]\n\t"
    "ldr r4, [sp, #48]\n\t"
    "ldr r2, [sp, #72]\n\t"
    "ldr r5, [sp, #96]\n\t"
    "sub r1, r1, #176\n\t"
    "add r0, r0, r4\n\t"
    "add r2, r2, r5\n\t"
    "30:\n\t"                        /* rows of 1-5 outputs: a loop of their own over the channels */
    "add r4, r1, #176\n\t"
    "str r4, [sp, #4]\n\t"
    "ldr r4, [sp, #100]\n\t"
    "blx r4\n\t"
    "50:\n\t"                        /* the next output row */
    "ldrd r4, r5, [sp, #12]\n\t"
    "ldr r6, [sp, #28]\n\t"
    "ldr r7, [sp, #72]\n\t"
    "ldr r8, [sp, #56]\n\t"
    "ldr r9, [sp, #60]\n\t"
    "ldr r10, [sp, #8]\n\t"
    "add r4, r4, r6\n\t"
    "add r5, r5, r6\n\t"
    "add r7, r7, r8\n\t"
    "eor r9, r9, #1\n\t"
    "subs r10, r10, #1\n\t"
    "strd r4, r5, [sp, #12]\n\t"
    "str r7, [sp, #72]\n\t"
    "str r9, [sp, #60]\n\t"
    "str r10, [sp, #8]\n\t"
    "bne 10b\n\t"
    "ldr r4, [sp, #76]\n\t"          /* a last row whose tap row 2 is the zero point */
    "cmp r4, #0\n\t"
    "beq 59f\n\t"
    "movs r4, #0\n\t"
    "movs r5, #1\n\t"
    "add r6, sp, #44\n\t"
    "str r4, [sp, #76]\n\t"
    "str r5, [sp, #8]\n\t"
    "str r6, [sp, #16]\n\t"
    "str r4, [sp, #24]\n\t"
    "b 10b\n\t"
    "59:\n\t"
    "add sp, sp, #108\n\t"
    "pop {r4-r11, pc}\n\t"
    /* the widening: two rows of cells from r2 (pairs 48 bytes apart), the first from the pixels at r0 (ips r1), the
       second from r3 (r12): a lead pair (the zero point, pixel 0), the pairs two a pass, a tail pair (pixel, the zero
       point); r4-r11 and lr clobbered, the return address at [sp, #88] */
    "60:\n\t"
    "str lr, [sp, #88]\n\t"
    "ldr r4, [sp, #36]\n\t"
    "cmp r4, #0\n\t"
    "beq 61f\n\t"
    "ldr r6, [sp, #44]\n\t"
    "ldr r7, [r0]\n\t"
    "ldr r11, [r3]\n\t"
    "mov r10, r6\n\t"
    "add r0, r0, r1\n\t"
    "add r3, r3, r12\n\t"
    "BT_DWS2_PAIR\n\t"
    "61:\n\t"
    "ldr lr, [sp, #32]\n\t"
    "lsrs lr, lr, #1\n\t"
    "beq 63f\n\t"
    "62:\n\t"
    "BT_DWS2_LOAD\n\t"
    "BT_DWS2_PAIR\n\t"
    "BT_DWS2_LOAD\n\t"
    "BT_DWS2_PAIR\n\t"
    "subs lr, lr, #1\n\t"
    "bne 62b\n\t"
    "63:\n\t"
    "ldr r4, [sp, #32]\n\t"
    "tst r4, #1\n\t"
    "beq 64f\n\t"
    "BT_DWS2_LOAD\n\t"
    "BT_DWS2_PAIR\n\t"
    "64:\n\t"
    "ldr r4, [sp, #40]\n\t"
    "cmp r4, #0\n\t"
    "beq 65f\n\t"
    "ldr r7, [sp, #44]\n\t"
    "ldr r6, [r0]\n\t"
    "ldr r10, [r3]\n\t"
    "mov r11, r7\n\t"
    "BT_DWS2_PAIR\n\t"
    "65:\n\t"
    "ldr pc, [sp, #88]\n\t"
    ".size bt_dws2g, . - bt_dws2g\n\t"
    /* bt_dws2_tN: bt_dws2g's loop over the channels of rows of N (1-5) outputs, called (blx) from its frame, which it
       shares (its return address at [sp, #88], free then): one function each, so that a layer's entry
       (bt_dw_s2g_N: out.w % 6 == N) links the one its rows take, not all five (1,214 bytes) */
    ".section .text.bt_dws2_t1,\"ax\",%progbits\n\t.p2align 2\n\t.global bt_dws2_t1\n\t"
    ".hidden bt_dws2_t1\n\t.type bt_dws2_t1, %function\n\t.thumb_func\n\t"
    "bt_dws2_t1:\n\t"
    "str lr, [sp, #88]\n\t"
    "BT_DWS2_TLOOP 1\n\t"
    "ldr pc, [sp, #88]\n\t"
    ".size bt_dws2_t1, . - bt_dws2_t1\n\t"
    ".section .text.bt_dws2_t2,\"ax\",%progbits\n\t.p2align 2\n\t.global bt_dws2_t2\n\t"
    ".hidden bt_dws2_t2\n\t.type bt_dws2_t2, %function\n\t.thumb_func\n\t"
    "bt_dws2_t2:\n\t"
    "str lr, [sp, #88]\n\t"
    "BT_DWS2_TLOOP 2\n\t"
    "ldr pc, [sp, #88]\n\t"
    ".size bt_dws2_t2, . - bt_dws2_t2\n\t"
    ".section .text.bt_dws2_t3,\"ax\",%progbits\n\t.p2align 2\n\t.global bt_dws2_t3\n\t"
    ".hidden bt_dws2_t3\n\t.type bt_dws2_t3, %function\n\t.thumb_func\n\t"
    "bt_dws2_t3:\n\t"
    "str lr, [sp, #88]\n\t"
    "BT_DWS2_TLOOP 3\n\t"
    "ldr pc, [sp, #88]\n\t"
    ".size bt_dws2_t3, . - bt_dws2_t3\n\t"
    ".section .text.bt_dws2_t4,\"ax\",%progbits\n\t.p2align 2\n\t.global bt_dws2_t4\n\t"
    ".hidden bt_dws2_t4\n\t.type bt_dws2_t4, %function\n\t.thumb_func\n\t"
    "bt_dws2_t4:\n\t"
    "str lr, [sp, #88]\n\t"
    "BT_DWS2_TLOOP 4\n\t"
    "ldr pc, [sp, #88]\n\t"
    ".size bt_dws2_t4, . - bt_dws2_t4\n\t"
    ".section .text.bt_dws2_t5,\"ax\",%progbits\n\t.p2align 2\n\t.global bt_dws2_t5\n\t"
    ".hidden bt_dws2_t5\n\t.type bt_dws2_t5, %function\n\t.thumb_func\n\t"
    "bt_dws2_t5:\n\t"
    "str lr, [sp, #88]\n\t"
    "BT_DWS2_TLOOP 5\n\t"
    "ldr pc, [sp, #88]\n\t"
    ".size bt_dws2_t5, . - bt_dws2_t5\n\t"
    ".purgem BT_DWS2_TLOOP\n\t"
    ".purgem BT_DWS2_LOAD\n\t"
    ".purgem BT_DWS2_PAIR\n\t"
    ".purgem BT_DWS2_OUT\n\t"
    ".purgem BT_DWS2_RQ\n\t"
    ".purgem BT_DWS2_ROW\n\t"
    ".purgem BT_DWS2_HEAD\n\t"
    ".purgem BT_DWS2_MAC\n\t"
    ".text");
#endif
void bt_dws2g(uint32_t *cells, const dw_chan *f, int8_t *out, const int32_t *g);
void bt_dws2_t1(void);
void bt_dws2_t2(void);
void bt_dws2_t3(void);
void bt_dws2_t4(void);
void bt_dws2_t5(void);


/* dw_s2's constants of channels c..c+3: f[0..3] dw_chan4_q4's (bt_dws2g reads w2 from the top half of each tap row's
 * (w1,w2) by SMLABT: the stride-1 paths' set-up, where a copy of its own took 392 bytes), then f[4..7] the same with
 * tap rows 0 and 2 swapped, a word at a time. */
static __attribute__((noinline)) void dw_s2_chan(const bt_conv_params *p, int32_t c, dw_chan *f) {
  dw_chan4_q4(p, c, 3 * p->out.c, p->out.c, f);
  const int32_t *a = (const int32_t *)f;
  int32_t *b = (int32_t *)(f + 4);
  for (int32_t k = 0; k < 4; k++, a += 11, b += 11) {   /* bias, w[6], m, p2, e1, zp */
    b[0] = a[0]; b[1] = a[5]; b[2] = a[6]; b[3] = a[3]; b[4] = a[4]; b[5] = a[1]; b[6] = a[2];
    b[7] = a[7]; b[8] = a[8]; b[9] = a[9];
  }
}

/* Output rows [y0, y1) of a dw_s2_ok layer: the pairs past the image the zero point once a call; per group of four
 * channels dw_s2_chan, then one bt_dws2g: the rows whose tap rows are all inside the image, then (extra) a last row
 * whose tap row 2 is below it (the zero point's word as that row's pixels, step 0; so is a tap row 0 above the
 * image). Stack: 2304 bytes of cells and 352 of constants, less than dw_small's 2688 and its band's. */
/* dw_s2's loop of rows of ow % 6 outputs (bt_dws2_tN; none: 0) */
typedef void (*dw_s2_tail)(void);
static __attribute__((noinline, optimize("Os"))) void dw_s2(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out,
                                            int32_t y0, int32_t y1, dw_s2_tail t) {
  uint32_t buf[DW_S2_WORDS] __attribute__((aligned(8)));
  dw_chan f[8];
  const int32_t c_n = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips, ops = p->out.pixel_stride;
  const int32_t ow = p->out.w, iw = p->in.w, ih = p->in.h, pl = p->pad_left, out_row = ow * ops;
  const uint32_t z2 = (uint32_t)bt_dup16(-p->input_offset);
  const uint32_t zw = (uint32_t)(uint8_t)(int8_t)-p->input_offset * 0x01010101u;
  /* a row's pairs: with pad_left a lead (the zero point, pixel 0), full ones to jb, a tail (pixel, zero point) */
  int32_t jb = (iw + pl) / 2;
  if (jb > ow + 1) jb = ow + 1;
  const int32_t tail = jb <= ow && 2 * jb - pl < iw, jz = jb + tail, pairs = jb - pl;
  for (int32_t j = jz; j <= ow; j++)   /* the pairs past the image, the same for every group */
    for (int32_t k = 0; k < 12; k++) buf[12 * j + k] = z2;
  int32_t n1 = 0;   /* rows whose tap row 2 is inside the image */
  while (y0 + n1 < y1 && 2 * (y0 + n1) + 2 - p->pad_top < ih) n1++;
  const int32_t iy0 = 2 * y0 - p->pad_top;
  int32_t g[19] = {n1, 0, 0, ips, ips, 2 * in_row, pairs, pl, tail, (int32_t)zw, ow / 6 * 288, ow % 6, ops, out_row,
                   n1 < y1 - y0, 0, iy0 < 0 ? 0 : ips, ow / 6 * 6 * ops, (int32_t)(uintptr_t)t};
  if (n1 == 0) {   /* one row, its tap row 2 the zero point */
    g[0] = 1;
    g[2] = (int32_t)(uintptr_t)&g[9];
    g[4] = 0;
    g[14] = 0;
  }
  const int8_t *const src = in + (iy0 - in_y0) * in_row;
  for (int32_t c = 0; c < c_n; c += 4) {
    dw_s2_chan(p, c, f);
    g[1] = (int32_t)(uintptr_t)(src + in_row + c);
    if (n1 > 0) g[2] = g[1] + in_row;
    g[15] = iy0 < 0 ? (int32_t)(uintptr_t)&g[9] : (int32_t)(uintptr_t)(src + c);
    bt_dws2g(buf, f, out + c, g);
  }
}
#endif

/* ---- depth multiplier 1: one function a path (issue 50: model.c calls the one its layer takes) ----
 * dw_path picks the path of a call (fast: requantisation by bt_rq2) in the order below; the variants
 * bt_depthwise_s8_m1_rq2 / _m1 run it through dw_paths, code generation calls it by name
 * (buildtool/codegen/kernel_variants.py's "depthwise_m1" table states the same rules for model.c's whole-map calls,
 * and which paths are specialised, a row length built in, and which shared), so --gc-sections drops the paths no
 * layer takes. The paths on bt_dw_q4's Arm loops (bt_dw_s2g, bt_dw_planes_RL, bt_dw_rows_q4_RL) keep their names
 * without DSP instructions and run what the set runs there (dw_small, dw_rows, the box path): the choice is the
 * layer's, not the CPU's. */

/* the row length index (dw_rls) of rows of cols cells */
static inline int dw_small_li(int32_t cols) { return cols <= 8 ? 0 : cols <= 16 ? 1 : cols <= 32 ? 2 : 3; }

/* dw_q4s's planes' row length for rows of ow outputs: rows of 8 cells for six or three outputs (bt_dwp_8: their loops alone), of
 * 16 for four or five (bt_dwp_16's general loop: bt_dwp_8 holds no copy of it, 1,174 bytes less where a model's small
 * maps are 6x6 and 3x3, vww's), else dw_small_li's */
static inline int dw_planes_li(int32_t ow) { return ow == 6 || ow == 3 ? 0 : dw_small_li(ow + 2 < 9 ? 9 : ow + 2); }

/* 1 when dw_rows takes the call of out rows [y0, y1) (the dispatcher's order: after dwk, dw_s2 and dw_small). */
static int dw_rows_take(const bt_conv_params *p, int32_t y0, int32_t y1) {
  return dw_rows_ok(p) && (y1 - y0) * p->out.w >= DW_MIN_PIXELS && y1 - y0 >= 2 && p->out.w >= DW_MIN_WIDTH;
}

/* dw_rows' geometry of a call: a narrow, tall whole map runs transposed (*t 1: its columns as rows). */
static inline __attribute__((always_inline)) dw_geo dw_rows_geo(const bt_conv_params *p, int32_t in_y0, int32_t y0,
                                                                int32_t y1, int *t) {
  const int32_t ips = p->in.pixel_stride, ops = p->out.pixel_stride;
  *t = y0 == 0 && y1 == p->out.h && in_y0 == 0 && p->stride_h == p->stride_w && p->out.w < DW_T_MAX &&
       p->out.h >= 2 * p->out.w;
  if (*t) {
    const dw_geo g = {p->in.h, p->in.w, p->in.w * ips, ips, p->out.h, p->out.w * ops, ops, p->stride_h,
                      p->stride_w, p->pad_top, p->pad_left, p->out.c, 3 * p->out.c};
    return g;
  }
  const dw_geo g = {p->in.w, p->in.h, ips, p->in.w * ips, p->out.w, ops, p->out.w * ops, p->stride_w,
                    p->stride_h, p->pad_left, p->pad_top, 3 * p->out.c, p->out.c};
  return g;
}

/* The row length index every strip of a dw_rows call with geometry g shares when every group of every strip runs
 * bt_dw_q4 (fast, the whole int8 range, stride 1 along the row, every channel dw_mm_ok and bt_rq2_zp_ok, channels a
 * multiple of four, at least 4 outputs a strip); else -1. */
static int dw_rows_q4_li(const bt_conv_params *p, const dw_geo *g, int fast) {
  if (!fast || p->act_min != -128 || p->act_max != 127 || g->s != 1 || (p->out.c & 3) || !dw_mm_ok(p)) return -1;
  for (int32_t c = 0; c < p->out.c; c++)
    if (!bt_rq2_zp_ok(p->shift[c])) return -1;
  const int32_t strips = (g->ow + DW_NS1 - 1) / DW_NS1;
  int li = -1;
  for (int32_t st = 0; st < strips; st++) {
    const int32_t n = g->ow * (st + 1) / strips - g->ow * st / strips, need = ((n + 1) & ~1) + 2;
    int k = 0;
    while (dw_rls[k] < need) k++;
    if (n < 4 || (li >= 0 && k != li)) return -1;
    li = k;
  }
  return li;
}

/* dw_rows on the call's geometry (LI, Q4: dw_rows'). */
static inline __attribute__((always_inline)) void dw_rows_call(const bt_conv_params *p, const int8_t *in,
                                                              int32_t in_y0, int8_t *out, int32_t y0, int32_t y1,
                                                              int fast, const int LI, const int Q4, dw_q4_fn q4f,
                                                              dw_pair_fn pf) {
  int t;
  const dw_geo g = dw_rows_geo(p, in_y0, y0, y1, &t);
  dw_rows(p, &g, in, t ? 0 : in_y0, out, t ? 0 : y0, t ? p->out.w : y1, fast, LI, Q4, q4f, pf);
}

/* Any filter, stride, padding and dilation: the 3x3 interior path where a row has one, the general pixels else. */
static inline __attribute__((always_inline)) void dw_box(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                        int8_t *out, int32_t y0, int32_t y1, const int fast) {
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

enum { DWP_KXK_RQ2, DWP_KXK, DWP_S2G, DWP_PLANES, DWP_SMALL_RQ2 = DWP_PLANES + 4, DWP_SMALL, DWP_ROWS_Q4,
       DWP_ROWS_RQ2 = DWP_ROWS_Q4 + 4, DWP_ROWS, DWP_BOX_RQ2, DWP_BOX, DWP_N };

/* The path (DWP_*) of a depth-multiplier-1 call of out rows [y0, y1). */
static int dw_path(const bt_conv_params *p, int32_t in_y0, int32_t y0, int32_t y1, int fast) {
  if (dwk_ok(p) && (y1 - y0) * p->out.w >= DWK_MIN_PIXELS) return fast ? DWP_KXK_RQ2 : DWP_KXK;   /* 5x5, 7x7 */
  if (p->stride_w == 2 && dw_s2_ok(p, y0, y1, fast)) return DWP_S2G;
  if (dw_small_ok(p, y0, y1)) {
    /* (stride 2 and the in-place ring's one-row calls, the bulk of the calls here, without planes) */
    if (p->stride_w == 1 && y1 - y0 >= 2 && dw_small_planes_ok(p, y0, y1, fast))
      return DWP_PLANES + dw_planes_li(p->out.w);
    return fast ? DWP_SMALL_RQ2 : DWP_SMALL;
  }
  if (dw_rows_take(p, y0, y1)) {
    int t;
    const dw_geo g = dw_rows_geo(p, in_y0, y0, y1, &t);
    const int li = dw_rows_q4_li(p, &g, fast);
    return li >= 0 ? DWP_ROWS_Q4 + li : fast ? DWP_ROWS_RQ2 : DWP_ROWS;
  }
  return fast ? DWP_BOX_RQ2 : DWP_BOX;
}
#pragma GCC diagnostic pop
#endif
