/* conv_test.c -- tests of conv.c (every set's bt_conv_s8 and, where a set has them, its variants), against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

static void test_conv(void) {
  for (int32_t t = 0; t < 60; t++) {
    spatial_case c; c.kind = K_CONV;
    int32_t kh = ri(1, 3) * 2 - 1, kw = kh;
    if (t % 5 == 1) { kh = 1; kw = 3; }
    if (t % 5 == 2) { kh = 1; kw = 1; }
    int32_t cin = (t % 4 == 0) ? ri(1, 5) : ri(1, 24), cout = ri(1, 20);
    if (t % 7 == 0) { cin = 4 * ri(1, 8); cout = 4 * ri(1, 6); }
    if (t % 10 == 9) { cin = ri(33, 72); cout = ri(17, 40); kh = kw = (t & 1) ? 1 : 3; }   /* several chunks/groups */
    int32_t s = ri(1, 3), d = (t % 6 == 5) ? 2 : 1;
    int same = (int)(rnd() & 1);
    int32_t h = ri(kh + (kh - 1) * (d - 1), 11), w = ri(kw + (kw - 1) * (d - 1), 11);
    int32_t ips = cin + ((t % 3 == 0) ? ri(1, 5) : 0), ops = cout + ((t % 3 == 1) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cout, kh, kw, s, ri(1, 3), d, d, same, ips, ops, 0);
    c.dw.depth_multiplier = 1;
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("conv", t, &c);
  }
}

/* Convolution variants of the optimised sets (cortex-m: the patch-matrix path of im2col.h and its
 * bt_rq2 requantisation): input depths 1, 3, 5, 17 and random, odd and even pixel and channel counts
 * (1 included), rectangular filters (10x4 as a keyword-spotting stem), strides, dilations, both
 * paddings, random offsets, pixel-strided views, a left shift on one channel (the generic
 * requantisation), a channel of multiplier 0 (shift 0 or -31), patches of 513..639 values (cortex-m: three
 * pixels a pass, one triple at a time, when c_in % 4 == 0 (tap by tap at the edges), else two), patches just
 * over the 640-value column limit (the direct path) and 1x1 layers of 644..1600 values (cortex-m: the wide 1x1). */
static void test_conv_variants(void) {
  static const int32_t depths[] = {1, 3, 5, 17};
  for (int32_t t = 0; t < 64; t++) {
    spatial_case c; c.kind = K_CONV;
    int32_t cin = t < 32 ? depths[t % 4] : ri(1, 40), cout = (t % 5 == 0) ? 1 : ri(1, 24);
    int32_t kh = (t % 4 == 3) ? 1 : ri(1, 3) * 2 - 1, kw = (t % 8 == 5) ? ri(1, 4) : kh;
    if (t % 12 == 11) { kh = 10; kw = 4; }
    if (t % 16 == 15) { cin = ri(72, 80); kh = kw = 3; }
    if (t % 16 == 13) {   /* 513..639 values (over BT_COL3): c_in 60, 64 or 68 three pixels a pass, others two */
      cin = (t & 16) ? ri(57, 71) : 4 * ri(15, 17); kh = kw = 3;
    }
    const int32_t d = (t % 10 == 7) ? 2 : 1;
    int32_t h = ri(kh + (kh - 1) * (d - 1), 13), w = ri(kw + (kw - 1) * (d - 1), 13);
    if (t % 16 == 9) {   /* a 1x1 over 640 values (cortex-m: bt_conv_s8_1x1_wide, K in chunks of 480), maps to 6x6 */
      cin = 4 * ri(161, 400); kh = kw = 1; cout = ri(4, 65536 / cin); h = ri(1, 6); w = ri(1, 6);
    }
    int32_t ips = cin + ((t % 3 == 0) ? ri(1, 5) : 0), ops = cout + ((t % 3 == 1) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cout, kh, kw, ri(1, 3), ri(1, 3), d, d, (int)(rnd() & 1), ips, ops, 0);
    c.dw.depth_multiplier = 1;
    if (t % 9 == 4) g_shift[ri(0, cout - 1)] = ri(0, 2);
    if (t % 3 == 2) {   /* a channel of scale 0 (multiplier 0, shift 0 as TFLite writes it): still bt_rq2 */
      const int32_t k = ri(0, cout - 1);
      g_mult[k] = 0; g_shift[k] = ri(-1, 3) == 3 ? -31 : 0;
    }
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("conv_variants", t, &c);
  }
}

#ifdef BT_VARIANTS_CORTEX_M
/* model.c's own instances of the cortex-m patch-matrix loops (conv_pm.h's bt_conv_pm on a constant layer, as
 * kernel_variants.INSTANCES writes them): the constant output pixel stride takes the three-pixel asm
 * requantisation (bt_pm_rq6), the constant shape the gather and widening folded. Cases: a 1x1 of 8 values into
 * 16 channels, a 3x3/2 stem of 3 channels with padding (gathered patches), a 1x1 of 16 values into 13 channels
 * written 15 apart with shifts of 23..27 (the zero point added after the shift), then the first layer again
 * with a channel of multiplier 0 and a bias of -2^30 and with a bias of 2^30 on a live channel (vww's 1x1
 * layers have such biases); 35 output pixels each (triples and two left over). Then the doubled sums (fast 2,
 * bt_rq2m) on the first three layers, the 1x1 of 13 channels through bt_conv_s8_pm_rq2m_ssat too (non-constant
 * layer: the C requantisation), and the first two with biases at kernel_variants.doubled_ok's bound (+-),
 * multiplier 0, shifts -31 and -2, four channels of one unit weight (small sums: rounding ties). Then a 3x3 of
 * 64 channels with padding (576 values: three pixels a pass over BT_COL3, one triple at a time, edge pixels
 * widened tap by tap) into 6 channels. Last, three layers whose filter rows are not whole groups of 4 values
 * (their interior patches widened by bt_pm_widen_words) by bt_rq2, then doubled sums, bt_mbqm_fast with any
 * activation range, doubled sums; a 10x4/2 stem of one channel by bt_rq2 and doubled sums. Then the row-buffer
 * path's layers (conv_pm.h bt_conv_pmr, described at them). Last, 1x1 layers of 64, 51 and 100 values (bt_mm3x2's
 * straight code without a loop, im2col.h BT_MM3X2_FLAT; the triples' columns in all of col). Then the stem path's
 * and bt_pm_loop3's layers (described at them). */
#define CI_LAYER(name, H, W, CIN, OH, OW, COUT, OPS, K, S, PAD, IOFF, OOFF, LO)                               \
  static const bt_conv_params name = {.in = {H, W, CIN, CIN}, .out = {OH, OW, COUT, OPS}, .kh = K, .kw = K,    \
                                      .stride_h = S, .stride_w = S, .dil_h = 1, .dil_w = 1, .pad_top = PAD,  \
                                      .pad_left = PAD, .input_offset = IOFF, .output_offset = OOFF,          \
                                      .act_min = LO, .act_max = 127, .filter = g_w, .bias = g_bias,          \
                                      .multiplier = g_mult, .shift = g_shift};
CI_LAYER(ci_pw, 7, 5, 8, 7, 5, 16, 16, 1, 1, 0, 128, -128, -128)
CI_LAYER(ci_stem, 9, 13, 3, 5, 7, 16, 16, 3, 2, 1, 17, 5, -128)
CI_LAYER(ci_pw13, 5, 7, 16, 5, 7, 13, 15, 1, 1, 0, -3, 9, -128)
CI_LAYER(ci_k576, 5, 7, 64, 5, 7, 6, 6, 3, 1, 1, 7, -3, -128)
/* filter rows not whole groups of 4 values (conv_pm.h bt_pm_widen_words): 2x2 of 3 channels (runs of 6, K 12),
   3x3 of 5 channels with padding (runs of 15, K 45: a tail of 1), 3x3/2 of 2 channels (runs of 6, K 18: a tail
   of 2); 25, 56 and 20 output pixels (one, two and two left over after the triples) */
CI_LAYER(ci_s2x2, 6, 6, 3, 5, 5, 8, 8, 2, 1, 0, 128, -128, -128)
CI_LAYER(ci_s5, 7, 8, 5, 7, 8, 6, 6, 3, 1, 1, -7, 3, -128)
CI_LAYER(ci_s2, 9, 11, 2, 4, 5, 10, 12, 3, 2, 0, 21, -1, -128)
/* 3x3 layers of c_in % 4 == 0 on conv_pm.h's row-buffer path (bt_conv_pmr): c_in 4, 8, 16, 40 (30 groups a
   filter row: 16 straight, then 14) and 64 (ci_k576 above: 48 groups, 16 straight and a loop of 16), strides 1
   and 2, with and without padding (a padding row at the bottom, an input column no window reads), rows of 9, 5,
   7, 3, 4 and 8 output pixels (0, 2, 1, 0, 1, 2 left after the triples), odd and even output channel counts; a
   5x5 (kh over BT_PMR_KH: the columns' path); then two of them with doubled sums, one through two bands (in_y0,
   y0 > 0), one whose rows do not fit col (the columns' path) */
CI_LAYER(ci_r4, 6, 9, 4, 6, 9, 5, 7, 3, 1, 1, 128, -128, -128)
CI_LAYER(ci_r8, 9, 10, 8, 5, 5, 7, 7, 3, 2, 1, -5, 11, -128)
CI_LAYER(ci_r16, 7, 9, 16, 5, 7, 9, 9, 3, 1, 0, 3, -2, -128)
CI_LAYER(ci_r16s2, 9, 8, 16, 4, 3, 6, 8, 3, 2, 0, 128, -128, -128)
CI_LAYER(ci_r4s2, 7, 8, 4, 4, 4, 10, 10, 3, 2, 1, 100, 7, -128)
CI_LAYER(ci_r40, 5, 8, 40, 5, 8, 5, 5, 3, 1, 1, -20, 0, -128)
CI_LAYER(ci_r4k5, 6, 8, 4, 6, 8, 4, 4, 5, 1, 2, 17, -9, -128)
CI_LAYER(ci_rbig, 4, 24, 32, 4, 24, 4, 4, 3, 1, 1, 9, 1, -128)
/* 1x1 layers of 64 values (kws's pointwise layers: bt_mm3x2's straight code, no loop), 51 (48 straight, a tail
   of 3) and 100 (96 and one group), 35, 28 and 20 output pixels (two, one and two left after the triples), by
   bt_rq2 and doubled sums; ci_pw51's second run with shifts of 23..27 (the zero point added after the shift). The
   layers of c_in % 4 == 0 widen each triple's three pixels together (conv_pm.h bt_pm_widen3): 64 values two groups a
   pass, 100 an odd count of groups (the first pass entering at its second group) */
CI_LAYER(ci_pw64, 5, 7, 64, 5, 7, 10, 10, 1, 1, 0, 128, -128, -128)
CI_LAYER(ci_pw51, 4, 7, 51, 4, 7, 12, 13, 1, 1, 0, -9, 4, -128)
CI_LAYER(ci_pw100, 5, 4, 100, 5, 4, 7, 7, 1, 1, 0, 128, -128, -128)
/* the stem path (conv_stem.h) besides ci_stem, ci_s2x2 and ci_s2 above: a 3x3 of one channel, stride 1 with
   padding (S = 1 odd: rows B, a pair of triples and 5 pixels left a row), by doubled sums with shifts of 23..27
   (the zero point added after the shift); a 3x3/2 of 3 channels into 70 (two groups of channels: 42 and 28, 4
   pixels a row: one left) by bt_rq2, doubled sums, and doubled sums in two bands (in_y0, y0 > 0) */
/* 1x1 layers read in place of 12 and 4 values on bt_pm_loop3 (conv_pm.h: a channel pair's triples in one asm loop,
   two triples a pass): 30 and 48 output pixels (an even count of triples: no entry at the second), ci_pw12's outputs
   90 apart, by bt_rq2 with shifts of 23..27 (the zero point added after the shift) and doubled sums */
CI_LAYER(ci_pw12, 6, 5, 12, 6, 5, 6, 90, 1, 1, 0, -7, 3, -128)
CI_LAYER(ci_pw4, 8, 6, 4, 8, 6, 10, 10, 1, 1, 0, 128, -128, -128)
CI_LAYER(ci_pw2, 3, 2, 8, 3, 2, 5, 5, 1, 1, 0, 11, -7, -128)   /* test_conv_1x1's map 2 wide */
/* test_conv_1x1's strided 1x1 layers (ResNet's shortcuts): stride 2 into rows of 16 (5 triples, one left: bt_mv1x4),
   8 (two left: the last triple again, outputs 10 apart, 9 channels), 6 (two triples, the input's last column and
   row unread), 2 (one pixel a pass); stride 3 into rows of 4 */
CI_LAYER(ci_pws2a, 6, 32, 16, 3, 16, 32, 32, 1, 2, 0, 128, -128, -128)
CI_LAYER(ci_pws2b, 8, 16, 12, 4, 8, 9, 10, 1, 2, 0, -5, 3, -128)
CI_LAYER(ci_pws2c, 9, 13, 8, 5, 6, 7, 7, 1, 2, 0, 9, -1, -128)
CI_LAYER(ci_pws2d, 4, 4, 8, 2, 2, 6, 6, 1, 2, 0, 128, -128, -128)
CI_LAYER(ci_pws3, 7, 10, 20, 3, 4, 4, 4, 1, 3, 0, -17, 5, -128)
CI_LAYER(ci_st1, 8, 11, 1, 8, 11, 6, 6, 3, 1, 1, -9, 2, -128)
CI_LAYER(ci_sgrp, 7, 9, 3, 3, 4, 70, 70, 3, 2, 0, 128, -128, -128)
#undef CI_LAYER
/* a keyword-spotting stem: 10x4/2 of one channel with SAME padding (4 rows above, 1 column left): most patches
   cross a border, widened filter row by filter row (conv_pm.h bt_pm_rows: zero rows, rows through rb) */
static const bt_conv_params ci_kws = {.in = {13, 10, 1, 1}, .out = {7, 5, 8, 8}, .kh = 10, .kw = 4, .stride_h = 2,
                                      .stride_w = 2, .dil_h = 1, .dil_w = 1, .pad_top = 4, .pad_left = 1,
                                      .input_offset = 83, .output_offset = -128, .act_min = -128, .act_max = 127,
                                      .filter = g_w, .bias = g_bias, .multiplier = g_mult, .shift = g_shift};
static __attribute__((noinline)) void ci_r4_run(int8_t *out) { BT_CONV_PM(&ci_r4, g_in, 0, out, 0, 6, 1, 2); }
static __attribute__((noinline)) void ci_r8_run(int8_t *out) { BT_CONV_PM(&ci_r8, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_r16_run(int8_t *out) { BT_CONV_PM(&ci_r16, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_r16s2_run(int8_t *out) { BT_CONV_PM(&ci_r16s2, g_in, 0, out, 0, 4, 1, 2); }
static __attribute__((noinline)) void ci_r4s2_run(int8_t *out) { BT_CONV_PM(&ci_r4s2, g_in, 0, out, 0, 4, 1, 2); }
static __attribute__((noinline)) void ci_r40_run(int8_t *out) { BT_CONV_PM(&ci_r40, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_r4k5_run(int8_t *out) { BT_CONV_PM(&ci_r4k5, g_in, 0, out, 0, 6, 1, 2); }
static __attribute__((noinline)) void ci_r8_run2(int8_t *out) { BT_CONV_PM(&ci_r8, g_in, 0, out, 0, 5, 2, 2); }
static __attribute__((noinline)) void ci_r4_run2(int8_t *out) { BT_CONV_PM(&ci_r4, g_in, 0, out, 0, 6, 2, 2); }
/* output rows 0..2, then 2..5 from input row 2 (one call per function: at -O0 two inlined calls take two frames) */
static __attribute__((noinline)) void ci_r16_band0(int8_t *out) { BT_CONV_PM(&ci_r16, g_in, 0, out, 0, 2, 1, 2); }
static __attribute__((noinline)) void ci_r16_band1(int8_t *out) {
  BT_CONV_PM(&ci_r16, g_in + 2 * 9 * 16, 2, out + 2 * 7 * 9, 2, 5, 1, 2);
}
static __attribute__((noinline)) void ci_r16_bands(int8_t *out) { ci_r16_band0(out); ci_r16_band1(out); }
static __attribute__((noinline)) void ci_rbig_run(int8_t *out) { BT_CONV_PM(&ci_rbig, g_in, 0, out, 0, 4, 1, 2); }
static __attribute__((noinline)) void ci_pw64_run(int8_t *out) { BT_CONV_PM(&ci_pw64, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_pw64_run2(int8_t *out) { BT_CONV_PM(&ci_pw64, g_in, 0, out, 0, 5, 2, 2); }
static __attribute__((noinline)) void ci_pw51_run(int8_t *out) { BT_CONV_PM(&ci_pw51, g_in, 0, out, 0, 4, 1, 2); }
static __attribute__((noinline)) void ci_pw51_run2(int8_t *out) { BT_CONV_PM(&ci_pw51, g_in, 0, out, 0, 4, 2, 2); }
static __attribute__((noinline)) void ci_pw100_run(int8_t *out) { BT_CONV_PM(&ci_pw100, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_pw100_run2(int8_t *out) { BT_CONV_PM(&ci_pw100, g_in, 0, out, 0, 5, 2, 2); }
static __attribute__((noinline)) void ci_pw_run(int8_t *out) { BT_CONV_PM(&ci_pw, g_in, 0, out, 0, 7, 1, 2); }
static __attribute__((noinline)) void ci_stem_run(int8_t *out) { BT_CONV_PM(&ci_stem, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_pw13_run(int8_t *out) { BT_CONV_PM(&ci_pw13, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_k576_run(int8_t *out) { BT_CONV_PM(&ci_k576, g_in, 0, out, 0, 5, 1, 2); }
/* the doubled sums (fast 2, kernel_variants.CODEGEN's bt_conv_s8_pm_rq2m_ssat) on the same layers */
static __attribute__((noinline)) void ci_pw_run2(int8_t *out) { BT_CONV_PM(&ci_pw, g_in, 0, out, 0, 7, 2, 2); }
static __attribute__((noinline)) void ci_stem_run2(int8_t *out) { BT_CONV_PM(&ci_stem, g_in, 0, out, 0, 5, 2, 2); }
static __attribute__((noinline)) void ci_pw13_run2(int8_t *out) { BT_CONV_PM(&ci_pw13, g_in, 0, out, 0, 5, 2, 2); }
static __attribute__((noinline)) void ci_pw13_fn2(int8_t *out) { bt_conv_s8_pm_rq2m_ssat(&ci_pw13, g_in, 0, out, 0, 5); }
static __attribute__((noinline)) void ci_s2x2_run(int8_t *out) { BT_CONV_PM(&ci_s2x2, g_in, 0, out, 0, 5, 1, 2); }
static __attribute__((noinline)) void ci_s5_run(int8_t *out) { BT_CONV_PM(&ci_s5, g_in, 0, out, 0, 7, 1, 2); }
static __attribute__((noinline)) void ci_s2_run(int8_t *out) { BT_CONV_PM(&ci_s2, g_in, 0, out, 0, 4, 1, 2); }
static __attribute__((noinline)) void ci_s2x2_run2(int8_t *out) { BT_CONV_PM(&ci_s2x2, g_in, 0, out, 0, 5, 2, 2); }
static __attribute__((noinline)) void ci_s5_run0(int8_t *out) { BT_CONV_PM(&ci_s5, g_in, 0, out, 0, 7, 0, 0); }
static __attribute__((noinline)) void ci_s2_run2(int8_t *out) { BT_CONV_PM(&ci_s2, g_in, 0, out, 0, 4, 2, 2); }
static __attribute__((noinline)) void ci_kws_run(int8_t *out) { BT_CONV_PM(&ci_kws, g_in, 0, out, 0, 7, 1, 2); }
static __attribute__((noinline)) void ci_kws_run2(int8_t *out) { BT_CONV_PM(&ci_kws, g_in, 0, out, 0, 7, 2, 2); }
/* the stem path's cases and bt_pm_loop3's (they need optimisation: -O0 takes bt_conv_pm, whose five more
   instances overflowed the test image's flash by 81 KB; the dispatcher there) */
#ifdef __OPTIMIZE__
#define CI_STEM(p, in, in_y0, out, y0, y1, fast) BT_CONV_PM(p, in, in_y0, out, y0, y1, fast, 2)
#else
#define CI_STEM(p, in, in_y0, out, y0, y1, fast) bt_conv_s8(p, in, in_y0, out, y0, y1)
#endif
static __attribute__((noinline)) void ci_st1_run2(int8_t *out) { CI_STEM(&ci_st1, g_in, 0, out, 0, 8, 2); }
static __attribute__((noinline)) void ci_sgrp_run(int8_t *out) { CI_STEM(&ci_sgrp, g_in, 0, out, 0, 3, 1); }
static __attribute__((noinline)) void ci_sgrp_run2(int8_t *out) { CI_STEM(&ci_sgrp, g_in, 0, out, 0, 3, 2); }
static __attribute__((noinline)) void ci_sgrp_band0(int8_t *out) { CI_STEM(&ci_sgrp, g_in, 0, out, 0, 1, 2); }
static __attribute__((noinline)) void ci_sgrp_band1(int8_t *out) {   /* output rows 1..2 from input row 2 */
  CI_STEM(&ci_sgrp, g_in + 2 * 9 * 3, 2, out + 4 * 70, 1, 3, 2);
}
static __attribute__((noinline)) void ci_pw12_run(int8_t *out) { CI_STEM(&ci_pw12, g_in, 0, out, 0, 6, 1); }
static __attribute__((noinline)) void ci_pw12_run2(int8_t *out) { CI_STEM(&ci_pw12, g_in, 0, out, 0, 6, 2); }
static __attribute__((noinline)) void ci_pw4_run(int8_t *out) { CI_STEM(&ci_pw4, g_in, 0, out, 0, 8, 1); }
static __attribute__((noinline)) void ci_pw4_run2(int8_t *out) { CI_STEM(&ci_pw4, g_in, 0, out, 0, 8, 2); }
#undef CI_STEM
static __attribute__((noinline)) void ci_sgrp_bands(int8_t *out) { ci_sgrp_band0(out); ci_sgrp_band1(out); }

/* One band [y0, y1) of layer p by a model.c-only conv variant fn against the reference, on random weights, input,
 * biases and requantisation (case 1 of conv_1x1: a channel of multiplier 0 and shifts of -22 too). */
static void band_case(const char *name, int32_t t, const bt_conv_params *p, int32_t y0, int32_t y1,
                      void (*fn)(const bt_conv_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t)) {
  const int32_t taps = p->kh * p->kw * p->in.c;
  const int32_t out_bytes = (y1 - y0) * p->out.w * p->out.pixel_stride + 8;
  const int32_t iy = y0 * p->stride_h - p->pad_top, in_y0 = iy > 0 ? iy : 0;   /* the band's first input row */
  const int8_t *in = g_in + in_y0 * p->in.w * p->in.pixel_stride;
  fill(g_w, p->out.c * taps);
  fill(g_in, p->in.h * p->in.w * p->in.c + 16);
  for (int32_t i = 0; i < p->out.c; i++) g_bias[i] = ri(-20000, 20000);
  rand_quant(p->out.c, 14 + ilog2((uint32_t)taps) / 2);
  if (t == 1 && (fn == bt_conv_s8_1x1_rq2_ssat || fn == bt_conv_s8_1x1_rq2m_ssat)) { g_mult[4] = 0; g_shift[4] = 0; g_shift[5] = -22; g_shift[12] = -22; }
  fill(g_ref, out_bytes);
  copy(g_opt, g_ref, out_bytes);
  ref_bt_conv_s8(p, in, in_y0, g_ref, y0, y1);
  fn(p, in, in_y0, g_opt, y0, y1);
  check(name, t, g_ref, g_opt, out_bytes);
}

/* conv_1x1.h's lean shared 1x1s, bt_rq2 and doubled sums (kernel_variants.lean_1x1: c_in % 4 == 0 in [8, 640], every shift at least -22):
 * whole maps of 35, 20 and 30 pixels (two, two and none left after the triples), odd output channel counts (13, 7,
 * 5: the last pair again) written 15 and 90 apart, bands of 10 and 4 pixels (one left: bt_mv1x1) and of 2 and 6
 * pixels of a map 2 wide (two: one pixel a pass), a channel of multiplier 0 and shift 0 (vww's), shifts -22; then
 * strides 2 and 3 (one output row a segment, ci_pws2a..ci_pws3 above), whole maps and bands from y0 > 0. */
static void test_conv_1x1(void) {
  static const struct { const bt_conv_params *p; int32_t y0, y1; } cases[] = {
      {&ci_pw, 0, 7}, {&ci_pw13, 0, 5}, {&ci_pw64, 0, 5}, {&ci_pw100, 0, 5}, {&ci_pw12, 0, 6},
      {&ci_pw, 2, 4}, {&ci_pw100, 3, 4}, {&ci_pw2, 1, 2}, {&ci_pw2, 0, 3},
      {&ci_pws2a, 0, 3}, {&ci_pws2b, 0, 4}, {&ci_pws2c, 0, 5}, {&ci_pws2d, 0, 2}, {&ci_pws3, 0, 3},
      {&ci_pws2a, 1, 3}, {&ci_pws2b, 2, 3}, {&ci_pws2d, 1, 2}};
  for (int32_t t = 0; t < (int32_t)(sizeof cases / sizeof cases[0]); t++) {
    const bt_conv_params *p = cases[t].p;
    band_case("conv_1x1", t, p, cases[t].y0, cases[t].y1, bt_conv_s8_1x1_rq2_ssat);
    band_case("conv_1x1 rq2m", t, p, cases[t].y0, cases[t].y1, bt_conv_s8_1x1_rq2m_ssat);   /* doubled sums */
  }
  note_variant("bt_conv_s8_1x1_rq2_ssat");   /* model.c-only: no dispatcher names it */
  note_variant("bt_conv_s8_1x1_rq2m_ssat");
}

/* conv_kxk.h's shared KxK (kernel_variants.kxk_ok: c_in % 4 == 0, an even c_out, the patch within BT_COL_MAX, shifts
 * at least -22) on the row-buffer layers of its kind: 3x3/2 without padding (and a band from output row 2, input row
 * 4), 3x3/2 with padding, a 5x5 of padding 2, rows of 24 of 32 channels, 576 values into 6 channels. */
static void test_conv_kxk(void) {
  static const struct { const bt_conv_params *p; int32_t y0, y1; } cases[] = {
      {&ci_r16s2, 0, 4}, {&ci_r4s2, 0, 4}, {&ci_r4k5, 0, 6}, {&ci_rbig, 0, 4}, {&ci_k576, 0, 5}, {&ci_r16s2, 2, 4}};
  for (int32_t t = 0; t < (int32_t)(sizeof cases / sizeof cases[0]); t++) {
    const bt_conv_params *p = cases[t].p;
    band_case("conv_kxk", t, p, cases[t].y0, cases[t].y1, bt_conv_s8_kxk_rq2_ssat);
  }
  note_variant("bt_conv_s8_kxk_rq2_ssat");   /* model.c-only: no dispatcher names it */
}

static void test_conv_instances(void) {
  static const bt_conv_params *const layers[] = {&ci_pw, &ci_stem, &ci_pw13, &ci_pw, &ci_pw,
                                                 &ci_pw, &ci_stem, &ci_pw13, &ci_pw13, &ci_pw, &ci_stem, &ci_k576,
                                                 &ci_s2x2, &ci_s5, &ci_s2, &ci_s2x2, &ci_s5, &ci_s2, &ci_kws, &ci_kws,
                                                 &ci_r4, &ci_r8, &ci_r16, &ci_r16s2, &ci_r4s2, &ci_r40, &ci_r4k5,
                                                 &ci_r8, &ci_r4, &ci_r16, &ci_rbig, &ci_pw64, &ci_pw64,
                                                 &ci_pw51, &ci_pw51, &ci_pw51, &ci_pw100, &ci_pw100, &ci_st1,
                                                 &ci_sgrp, &ci_sgrp, &ci_sgrp, &ci_pw12, &ci_pw12, &ci_pw4, &ci_pw4};
  static void (*const runs[])(int8_t *) = {ci_pw_run, ci_stem_run, ci_pw13_run, ci_pw_run, ci_pw_run,
                                           ci_pw_run2, ci_stem_run2, ci_pw13_run2, ci_pw13_fn2, ci_pw_run2,
                                           ci_stem_run2, ci_k576_run, ci_s2x2_run, ci_s5_run, ci_s2_run,
                                           ci_s2x2_run2, ci_s5_run0, ci_s2_run2, ci_kws_run, ci_kws_run2,
                                           ci_r4_run, ci_r8_run, ci_r16_run, ci_r16s2_run, ci_r4s2_run, ci_r40_run,
                                           ci_r4k5_run, ci_r8_run2, ci_r4_run2, ci_r16_bands, ci_rbig_run,
                                           ci_pw64_run, ci_pw64_run2, ci_pw51_run, ci_pw51_run2, ci_pw51_run2,
                                           ci_pw100_run, ci_pw100_run2, ci_st1_run2, ci_sgrp_run, ci_sgrp_run2,
                                           ci_sgrp_bands, ci_pw12_run, ci_pw12_run2, ci_pw4_run, ci_pw4_run2};
  for (int32_t t = 0; t < 46; t++) {
    const bt_conv_params *p = layers[t];
    const int32_t taps = p->kh * p->kw * p->in.c, out_bytes = p->out.h * p->out.w * p->out.pixel_stride + 8;
    fill(g_w, p->out.c * taps);
    fill(g_in, p->in.h * p->in.w * p->in.c + 16);
    for (int32_t i = 0; i < p->out.c; i++) g_bias[i] = ri(-20000, 20000);
    rand_quant(p->out.c, 14 + ilog2((uint32_t)taps) / 2);
    if (t == 2 || t == 7 || t == 8 || t == 35 || t == 38 || t == 42)
      for (int32_t i = 0; i < p->out.c; i++) g_shift[i] = ri(-27, -23);
    if (t == 3) { g_mult[5] = 0; g_shift[5] = 0; g_bias[5] = -(1 << 30); }
    if (t == 4) g_bias[3] = 1 << 30;
    if (t == 9 || t == 10) {   /* doubled sums: biases at doubled_ok's bounds, a channel of multiplier 0 */
      const int32_t bmax = (1 << 30) - 1 - taps * 255 * 128;
      g_bias[3] = bmax; g_bias[4] = -bmax; g_mult[5] = 0; g_shift[5] = 0; g_bias[5] = bmax;
      g_mult[6] = (int32_t)0x7fffffff; g_shift[6] = -31; g_mult[7] = 1 << 30; g_shift[7] = -2;
      for (int32_t c = 8; c < 12; c++) {   /* small sums: rounding ties of either sign, outputs not saturated */
        for (int32_t i = 0; i < taps; i++) g_w[c * taps + i] = (int8_t)(i == c % taps ? 1 : 0);
        g_mult[c] = 1 << 30; g_shift[c] = -2 - (c & 3); g_bias[c] = ri(-300, 300);
      }
    }
    fill(g_ref, out_bytes);
    copy(g_opt, g_ref, out_bytes);
    ref_bt_conv_s8(p, g_in, 0, g_ref, 0, p->out.h);
    runs[t](g_opt);
    if (runs[t] == ci_pw13_fn2) note_variant("bt_conv_s8_pm_rq2m_ssat");   /* model.c-only: no dispatcher names it */
    check("conv_instances", t, g_ref, g_opt, out_bytes);
  }
  test_conv_1x1();
  test_conv_kxk();
}
#else
static void test_conv_instances(void) {}
#endif
