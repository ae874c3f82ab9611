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
 * requantisation), a channel of multiplier 0 (shift 0 or -31), patches of 513..639 values (cortex-m:
 * two pixels a pass, not three) and patches just over the 640-value column limit (the direct path). */
static void test_conv_variants(void) {
  static const int32_t depths[] = {1, 3, 5, 17};
  for (int32_t t = 0; t < 64; t++) {
    spatial_case c; c.kind = K_CONV;
    int32_t cin = t < 32 ? depths[t % 4] : ri(1, 40), cout = (t % 5 == 0) ? 1 : ri(1, 24);
    int32_t kh = (t % 4 == 3) ? 1 : ri(1, 3) * 2 - 1, kw = (t % 8 == 5) ? ri(1, 4) : kh;
    if (t % 12 == 11) { kh = 10; kw = 4; }
    if (t % 16 == 15) { cin = ri(72, 80); kh = kw = 3; }
    if (t % 16 == 13) { cin = ri(57, 71); kh = kw = 3; }   /* 513..639 values: the 2-pixel path (BT_COL3) */
    const int32_t d = (t % 10 == 7) ? 2 : 1;
    int32_t h = ri(kh + (kh - 1) * (d - 1), 13), w = ri(kw + (kw - 1) * (d - 1), 13);
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
