/* The cortex-m set's 1x1 convolution over more input channels than a patch-matrix column holds (K = c_in over
 * BT_COL_MAX = 640; MobileNetV2's 960 -> 160 and 960 -> 320 projections), included by conv.c after conv_pm.h:
 * bt_conv_s8_1x1_wide, which bt_conv_s8 takes for such a layer (before, bt_conv_s8_direct: each pixel's input
 * widened for every four output channels, every weight read once a pixel). Three output pixels x two output channels
 * a step, as the patch-matrix path's triples (bt_mm3x2's groups, each weight word read once a triple), over K in
 * chunks of BT_1X1W_KC values: a triple's three widened columns of a chunk (BT_GROUPED(3, KC) int16, 2,880 bytes) and
 * the int32 sums of up to BT_1X1W_PAIRS pairs of channels between chunks share the patch-matrix path's frame of 3
 * BT_COL_MAX int16 (3,840 bytes): per triple, per block of pairs, each chunk widened (the triple's inputs read again
 * for each block: a triple's outputs never reach its own inputs, so a 1x1 over its dying input stays right), its
 * pairs' sums started from the biases (the first chunk) or from the block's sums, the last chunk's requantised
 * (bt_mbqm_fast, any activation range: a few cycles against K MACs an output) and stored. The asm (bt_1x1w_mm3x2):
 * BT_MM3X2_STEP_R with the filter row stride K apart from the chunk's length, BT_1X1W_U groups a pass, the end pointer
 * pushed onto the stack (its 14 registers all taken). The pixels a band leaves after its triples (one or two: a square map leaves
 * one, n^2 % 3 < 2), each a column of the whole K four channels at a time (bt_mv1x4; a pair of columns, bt_mm2x2, was
 * 1.4 KB of code more for a tenth of two pixels' cycles). An odd last channel: the last pair is (c_out - 2, c_out - 1) (c_out - 2 computed again, the same
 * value stored again). Conditions (conv.c bt_1x1w_ok, kernel_variants.py wide_1x1): kh = kw = 1, no padding, any
 * stride and pixel strides, c_in % 4 == 0 with BT_COL_MAX < c_in <= 3 BT_COL_MAX, c_out >= 4. */
#ifndef BT_CONV_1X1W_H
#define BT_CONV_1X1W_H

#define BT_1X1W_KC 480     /* values of a chunk (a multiple of 16): a triple's columns, 3 KC int16 */
#define BT_1X1W_PAIRS ((3 * BT_COL_MAX - 3 * BT_1X1W_KC) / 12)   /* pairs' six int32 sums after them: 40 */

static inline int bt_1x1w_ok(const bt_conv_params *p) {
  return p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0 && p->in.c % 4 == 0 &&
         p->in.c > BT_COL_MAX && p->in.c <= 3 * BT_COL_MAX && p->out.c >= 4;
}

/* Groups a pass of bt_1x1w_mm3x2's loop: 8 (its end test 7 est. cycles a pass against 27 a group; mobilenetv2_160_a1's
 * 960 -> 160 at 5x5, 5.234 M -> 5.111 M zero-wait cycles against 4), but 6 on a part built for a small instruction
 * cache (BT_ICACHE_BYTES): the 8 groups' 720 B and the calls' code missed nucleo-l4r5zi's 1 KiB (LRU) every pass
 * (5.26 M -> 5.68 M modelled cycles, 0.57 M of them fetch stalls). */
#ifdef BT_ICACHE_BYTES
#define BT_1X1W_U 6
#define BT_1X1W_RUN BT_1X1W_S4 BT_1X1W_S2
#else
#define BT_1X1W_U 8
#define BT_1X1W_RUN BT_1X1W_S4 BT_1X1W_S4
#endif

/* acc[0..6) (bt_mm3x2's order: pixel 0 row 0, pixel 0 row 1, pixel 1..., pixel 2...) += triple c . rows f, f + K
 * over ng groups of 4 values (the triple's columns BT_GROUPED(3, 4 ng)). */
static __attribute__((noinline)) void bt_1x1w_mm3x2(const int16_t *c, const int8_t *f, int32_t K, int32_t ng,
                                                     int32_t *acc) {   /* a call: inlined, gcc left its asm no registers */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
  uint32_t a00 = (uint32_t)acc[0], a01 = (uint32_t)acc[1], a10 = (uint32_t)acc[2], a11 = (uint32_t)acc[3];
  uint32_t a20 = (uint32_t)acc[4], a21 = (uint32_t)acc[5], wa, wb, x0, x1, x2;
  const int32_t r = ng % BT_1X1W_U;
  wa = (uint32_t)(f + 4 * (ng - r));
#define BT_1X1W_OPS                                                                                            \
  : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [a20] "+r"(a20), [a21] "+r"(a21),      \
    [c] "+r"(c), [f] "+r"(f), [wa] "+r"(wa), [wb] "=&r"(wb), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2)
#define BT_1X1W_S2 BT_MM3X2_STEP_R BT_MM3X2_STEP_R
#define BT_1X1W_S4 BT_1X1W_S2 BT_1X1W_S2
  /* the operands made opaque: with what gcc's GCSE knew of them it left the asm's 14 registers none at -O2 and -O3
     ("impossible constraints") */
  __asm__("" : "+r"(a00), "+r"(a01), "+r"(a10), "+r"(a11), "+r"(a20), "+r"(a21), "+r"(c), "+r"(f), "+r"(wa), "+r"(K));
  if (ng >= BT_1X1W_U)   /* the end (in wa) pushed onto the stack, read from it (no register left for it) */
    __asm__ volatile("str %[wa], [sp, #-8]!\n1:\n\t" BT_1X1W_RUN
                     "ldr %[wa], [sp]\n\tcmp %[f], %[wa]\n\tbne 1b\n\tadd sp, sp, #8\n\t" BT_1X1W_OPS
                     : [K] "r"(K) : "cc", "memory");
  for (int32_t i = 0; i < r; i++)   /* the groups left (none for K 960: 120 a chunk), one a step: its code once */
    __asm__ volatile(BT_MM3X2_STEP_R BT_1X1W_OPS : [K] "r"(K) : "cc", "memory");
#undef BT_1X1W_S4
#undef BT_1X1W_S2
#undef BT_1X1W_OPS
  acc[0] = (int32_t)a00; acc[1] = (int32_t)a01; acc[2] = (int32_t)a10; acc[3] = (int32_t)a11;
  acc[4] = (int32_t)a20; acc[5] = (int32_t)a21;
#else
  for (int32_t g = 0; g < ng; g++, c += 12, f += 4) {
    const uint32_t w0 = bt_ld4(f), w1 = bt_ld4(f + K);
    const int32_t l0 = bt_sxtb16(w0), h0 = bt_sxtb16_ror8(w0), l1 = bt_sxtb16(w1), h1 = bt_sxtb16_ror8(w1);
    for (int q = 0; q < 3; q++) {
      int32_t x, y;
      __builtin_memcpy(&x, c + 2 * q, 4);
      __builtin_memcpy(&y, c + 6 + 2 * q, 4);
      acc[2 * q] = bt_smlad(h0, y, bt_smlad(l0, x, acc[2 * q]));
      acc[2 * q + 1] = bt_smlad(h1, y, bt_smlad(l1, x, acc[2 * q + 1]));
    }
  }
#endif
}

static inline int8_t bt_1x1w_out(const bt_conv_params *p, int32_t a, int32_t c) {
  return (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[c], p->shift[c]) + p->output_offset, p->act_min, p->act_max);
}

/* One triple: input pixels x[0..3), outputs o[0..3); col: the frame's 3 BT_COL_MAX int16. Per block of pairs: their
 * six sums each started from the biases, each chunk's pairs (one call each, its sums read and written back), then
 * the block's outputs: three short loops, so the pairs' one (with bt_1x1w_mm3x2) stays in the instruction cache. */
static __attribute__((noinline)) void bt_1x1w_triple(const bt_conv_params *p, const int8_t *const *x, int8_t *const *o,
                                                     int16_t *col) {
  const int32_t K = p->in.c, cout = p->out.c, np = (cout + 1) >> 1, off = p->input_offset, off2 = bt_dup16(off);
  const int32_t *const bias = p->bias;
  int32_t *const part = (int32_t *)(void *)(col + 3 * BT_1X1W_KC);   /* the block's pairs' sums between chunks */
  for (int32_t j0 = 0; j0 < np; j0 += BT_1X1W_PAIRS) {
    const int32_t nj = np - j0 < BT_1X1W_PAIRS ? np - j0 : BT_1X1W_PAIRS;
    for (int32_t j = 0; j < nj; j++) {
      const int32_t c = 2 * (j0 + j) + 2 <= cout ? 2 * (j0 + j) : cout - 2;
      const int32_t b0 = bias ? bias[c] : 0, b1 = bias ? bias[c + 1] : 0;
      int32_t *const s = part + 6 * j;
      s[0] = b0; s[1] = b1; s[2] = b0; s[3] = b1; s[4] = b0; s[5] = b1;
    }
    for (int32_t k0 = 0; k0 < K; k0 += BT_1X1W_KC) {
      const int32_t kc = K - k0 < BT_1X1W_KC ? K - k0 : BT_1X1W_KC;
      for (int q = 0; q < 3; q++) bt_widenp_x(x[q] + k0, col, q, kc, 3, off, off2, 0);
      const int8_t *f = p->filter + 2 * j0 * K + k0;
      for (int32_t j = 0; j < nj; j++, f += 2 * K)
        bt_1x1w_mm3x2(col, 2 * (j0 + j) + 2 <= cout ? f : p->filter + (cout - 2) * K + k0, K, kc >> 2, part + 6 * j);
    }
    for (int32_t j = 0; j < nj; j++) {
      const int32_t c = 2 * (j0 + j) + 2 <= cout ? 2 * (j0 + j) : cout - 2;
      const int32_t *const s = part + 6 * j;
      for (int q = 0; q < 3; q++) {
        o[q][c] = bt_1x1w_out(p, s[2 * q], c);
        o[q][c + 1] = bt_1x1w_out(p, s[2 * q + 1], c + 1);
      }
    }
  }
}

/* One pixel (a column of K at col): four channels at a time (the last four again where c_out % 4 != 0). */
static __attribute__((noinline)) void bt_1x1w_one(const bt_conv_params *p, const int8_t *x, int8_t *o, int16_t *col) {
  const int32_t K = p->in.c, cout = p->out.c;
  bt_widen(x, col, K, p->input_offset, bt_dup16(p->input_offset));
  for (int32_t oc = 0; oc < cout; oc += 4) {
    const int32_t c = oc + 4 <= cout ? oc : cout - 4;
    int32_t a[4];
    for (int k = 0; k < 4; k++) a[k] = p->bias ? p->bias[c + k] : 0;
    bt_mv1x4(col, p->filter + c * K, K, a);
    for (int k = 0; k < 4; k++) o[c + k] = bt_1x1w_out(p, a[k], c + k);
  }
}

void bt_conv_s8_1x1_wide(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                         int32_t y1) {
  int16_t col[3 * BT_COL_MAX] __attribute__((aligned(4)));   /* as bt_conv_pm's: the columns, the sums after them */
  const int32_t ow = p->out.w, n = (y1 - y0) * ow, ops = p->out.pixel_stride, ips = p->in.pixel_stride;
  const int32_t in_row = p->in.w * ips, rstep = p->stride_h * in_row, step = p->stride_w * ips;
  const int8_t *x[3];
  int8_t *o[3];
  const int8_t *row = in + (y0 * p->stride_h - in_y0) * in_row;
  int32_t xi = 0, t = 0;
  for (; t < n; t++) {   /* each pixel's input and output, three at a time */
    const int q = (int)(t % 3);
    x[q] = row + xi * step;
    o[q] = out + t * ops;
    if (++xi == ow) { xi = 0; row += rstep; }
    if (q == 2) bt_1x1w_triple(p, x, o, col);
  }
  for (int q = 0; q < n % 3; q++) bt_1x1w_one(p, x[q], o[q], col);
}

#endif
