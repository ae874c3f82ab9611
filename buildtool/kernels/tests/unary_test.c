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

/* ------------------------------------------------------------------ SOFTMAX over wide rows */
/* Rows of 2 to 8192 logits, all equal, equal +-1 and random, int8 and int8 -> int16 output. At 512+
 * logits near the maximum TFLM's final rounding shift reaches 32, at 4096 its int32 sum overflows, at
 * 8192 its sum wraps to 0 (undefined in C; the shift by 32 gave x86 and Arm different bytes). Besides the usual comparison with the reference set (the same file here), each case
 * prints "softmax_wide q=K w=W pat=P bits=B fnv=H" (FNV-1a of the output, little-endian): tests/
 * test_kernels.py regenerates the inputs (softmax_logit) and checks H against the numpy executor. */
static const int32_t g_softmax_q[2][3] = {   /* refops.softmax.softmax_params(1.0, 0.1), (1.0, 0.02) */
    {1717986944, 23, -248}, {1374389504, 21, -992}};
static const int32_t g_softmax_widths[] = {2, 10, 511, 512, 513, 1000, 1001, 4096, 8192};

static uint32_t softmax_mix(uint32_t v) {   /* an integer hash (tests/test_kernels.py has its twin) */
  v ^= v >> 16; v *= 0x7feb352du; v ^= v >> 15; v *= 0x846ca68bu; v ^= v >> 16;
  return v;
}
static int8_t softmax_logit(int32_t pattern, int32_t i) {
  switch (pattern) {
    case 0: return 37;                                                      /* all equal */
    case 1: return (int8_t)(36 + (int32_t)(softmax_mix((uint32_t)i) % 3u));    /* equal +-1 */
    default: return (int8_t)(softmax_mix((uint32_t)i ^ 0x9e3779b9u) >> 24);   /* random */
  }
}

static void test_softmax_widths(void) {
  int32_t case_no = 0;
  for (int32_t k = 0; k < 2; k++)
    for (uint32_t wi = 0; wi < sizeof g_softmax_widths / sizeof g_softmax_widths[0]; wi++)
      for (int32_t pattern = 0; pattern < 3; pattern++)
        for (int32_t bits = 8; bits <= 16; bits += 8, case_no++) {
          const int32_t w = g_softmax_widths[wi], nbytes = w * bits / 8;
          bt_softmax_params p = {1, w, g_softmax_q[k][0], g_softmax_q[k][1], g_softmax_q[k][2]};
          for (int32_t i = 0; i < w; i++) g_in[i] = softmax_logit(pattern, i);
          fill(g_ref, nbytes + 8);
          copy(g_opt, g_ref, nbytes + 8);
          if (bits == 8) {
            ref_bt_softmax_s8(&p, g_in, g_ref);
            bt_softmax_s8(&p, g_in, g_opt);
          } else {
            ref_bt_softmax_s8_s16(&p, g_in, (int16_t *)(void *)g_ref);
            bt_softmax_s8_s16(&p, g_in, (int16_t *)(void *)g_opt);
          }
          check("softmax_wide", case_no, g_ref, g_opt, nbytes + 8);
          uint32_t h = 2166136261u;
          for (int32_t i = 0; i < w; i++) {
            const uint32_t v = bits == 8 ? (uint8_t)g_opt[i] : (uint16_t)((int16_t *)(void *)g_opt)[i];
            h = (h ^ (v & 0xFFu)) * 16777619u;
            if (bits == 16) h = (h ^ (v >> 8)) * 16777619u;
          }
          bt_puts("softmax_wide q="); put_i(k); bt_puts(" w="); put_i(w); bt_puts(" pat="); put_i(pattern);
          bt_puts(" bits="); put_i(bits); bt_puts(" fnv="); bt_putu(h); bt_puts("\n");
        }
}
