/* unary_test.c -- tests of quantize.c, logistic.c, hard_swish.c, softmax.c, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* ------------------------------------------------------------------ element-wise and the rest */
static void test_unary(void) {
  for (int32_t t = 0; t < 40; t++) {
    const int32_t n = ri(1, 700), alias = t & 1;
    fill(g_in, n + 8);
    fill(g_ref, n + 8);
    if (alias) copy(g_ref, g_in, n + 8);
    copy(g_opt, g_ref, n + 8);
    const int8_t *src_opt = alias ? g_opt : g_in;
    switch (t % 4) {
      case 0: {
        bt_logistic_params p = {n, ri(-128, 127), 0, 0, 0};
        p.input_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
        p.input_left_shift = ri(-2, 6);
        p.input_range_radius = ri(20, 300);
        ref_bt_logistic_s8(&p, g_in, g_ref); bt_logistic_s8(&p, src_opt, g_opt);
        check("logistic", t, g_ref, g_opt, n + 8);
      } break;
      case 1: {
        bt_hard_swish_params p = {n, ri(-128, 127), ri(-128, 127), ri(1, 32767), ri(-8, 8), ri(1, 32767), ri(-10, -1)};
        ref_bt_hard_swish_s8(&p, g_in, g_ref); bt_hard_swish_s8(&p, src_opt, g_opt);
        check("hard_swish", t, g_ref, g_opt, n + 8);
      } break;
      case 2: {
        bt_requant_params p = {n, ri(-128, 127), ri(-128, 127), (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)), ri(-6, 2)};
        ref_bt_requantize_s8(&p, g_in, g_ref); bt_requantize_s8(&p, src_opt, g_opt);
        check("requantize", t, g_ref, g_opt, n + 8);
      } break;
      case 3: {
        bt_softmax_params p;
        p.depth = ri(1, 40); p.rows = ri(1, 4);
        p.input_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
        p.input_left_shift = ri(18, 27);
        p.diff_min = -(int32_t)((((int64_t)31) << 26) >> p.input_left_shift);
        ref_bt_softmax_s8(&p, g_in, g_ref); bt_softmax_s8(&p, g_in, g_opt);
        check("softmax", t, g_ref, g_opt, p.rows * p.depth + 8);
      } break;
    }
  }
  /* float model I/O */
  for (int32_t t = 0; t < 6; t++) {
    static float f[300], f2[300];
    const int32_t n = ri(1, 300);
    const float scale = (float)ri(1, 1000) / 4096.0f;
    const int32_t zp = ri(-128, 127);
    fill(g_in, n);
    ref_bt_dequantize_s8_f32(n, scale, zp, g_in, f);
    bt_dequantize_s8_f32(n, scale, zp, g_in, f2);
    check("dequantize", t, (const int8_t *)f, (const int8_t *)f2, n * 4);
    for (int32_t i = 0; i < n; i++) f[i] = f[i] * 1.37f + (float)(i % 7) * scale * 0.5f;   /* exact .5 ties too */
    fill(g_ref, n + 8); copy(g_opt, g_ref, n + 8);
    ref_bt_quantize_f32_s8(n, scale, zp, f, g_ref);
    bt_quantize_f32_s8(n, scale, zp, f, g_opt);
    check("quantize_f32", t, g_ref, g_opt, n + 8);
    /* both also work in place (same start address) */
    for (int32_t i = 0; i < n; i++) f2[i] = f[i];
    bt_quantize_f32_s8(n, scale, zp, f2, (int8_t *)f2);
    check("quantize_f32_inplace", t, g_ref, (const int8_t *)f2, n);
    bt_dequantize_s8_f32(n, scale, zp, (const int8_t *)f2, f2);
    ref_bt_dequantize_s8_f32(n, scale, zp, g_ref, f);
    check("dequantize_inplace", t, (const int8_t *)f, (const int8_t *)f2, n * 4);
  }
}
