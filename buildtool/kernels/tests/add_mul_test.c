/* add_mul_test.c -- tests of add.c and mul.c (one broadcast harness), against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* ------------------------------------------------------------------ add / mul */
static void rand_bcast(bt_bcast4 *q, int alias) {
  int32_t d[4] = {ri(1, 2), ri(1, 5), ri(1, 6), ri(1, 24)};
  uint32_t bmask = alias ? 0 : rnd() & 15, amask = (alias || (rnd() & 1)) ? 0 : rnd() & 15;
  int32_t extra = (rnd() & 1) ? ri(1, 4) : 0;
  for (int k = 0; k < 4; k++) q->dims[k] = d[k];
  /* out: NHWC with a pixel stride; a: same layout as out when aliased */
  q->out_stride[3] = 1; q->out_stride[2] = d[3] + extra; q->out_stride[1] = d[2] * q->out_stride[2];
  q->out_stride[0] = d[1] * q->out_stride[1];
  int32_t s = 1;
  for (int k = 3; k >= 0; k--) { q->b_stride[k] = (bmask >> k & 1) ? 0 : s; s *= (bmask >> k & 1) ? 1 : d[k]; }
  if (alias) { for (int k = 0; k < 4; k++) q->a_stride[k] = q->out_stride[k]; }
  else { s = 1; for (int k = 3; k >= 0; k--) { q->a_stride[k] = (amask >> k & 1) ? 0 : s; s *= (amask >> k & 1) ? 1 : d[k]; } }
}
static int32_t bcast_bytes(const bt_bcast4 *q) { return q->dims[0] * q->out_stride[0] + 8; }

static void test_add_mul(void) {
  for (int32_t t = 0; t < 120; t++) {
    const int alias = (t % 3 == 2), is_mul = (t & 1);
    bt_bcast4 q; rand_bcast(&q, alias);
    const int32_t n = bcast_bytes(&q);
    fill(g_in, n); fill(g_in2, n);
    fill(g_ref, n);
    if (alias) copy(g_ref, g_in, n);
    copy(g_opt, g_ref, n);
    const int8_t *a_opt = alias ? g_opt : g_in;
    if (is_mul) {
      bt_mul_params p;
      p.input1_offset = ri(-127, 128); p.input2_offset = ri(-127, 128); p.output_offset = ri(-128, 127);
      p.output_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.output_shift = ri(-12, -5);
      rand_act(&p.act_min, &p.act_max, p.output_offset);
      p.b = q;
      ref_bt_mul_s8(&p, g_in, g_in2, g_ref);
      bt_mul_s8(&p, a_opt, g_in2, g_opt);
      check(alias ? "mul_alias" : "mul", t, g_ref, g_opt, n);
    } else {
      bt_add_params p;
      p.input1_offset = ri(-127, 128); p.input2_offset = ri(-127, 128); p.output_offset = ri(-128, 127);
      p.left_shift = 20;
      p.input1_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.input1_shift = ri(-3, 0);
      p.input2_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.input2_shift = ri(-3, 0);
      p.output_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.output_shift = ri(-22, -17);
      /* as TFLite prepares ADD: the larger-scale input's multiplier is 0.5 (2^30, shift 0), in
       * either position or both; one case in four keeps both random */
      const int half = (t / 2) % 4;
      if (half == 0 || half == 2) { p.input1_multiplier = 1 << 30; p.input1_shift = 0; }
      if (half == 1 || half == 2) { p.input2_multiplier = 1 << 30; p.input2_shift = 0; }
      if (t % 7 == 0) p.output_shift = ri(-1, 0); /* an output requantisation bt_rq2 cannot take */
      rand_act(&p.act_min, &p.act_max, p.output_offset);
      p.b = q;
      if (t % 10 == 4) { /* SUB: the same parameters */
        ref_bt_sub_s8(&p, g_in, g_in2, g_ref);
        bt_sub_s8(&p, a_opt, g_in2, g_opt);
        check(alias ? "sub_alias" : "sub", t, g_ref, g_opt, n);
        continue;
      }
      ref_bt_add_s8(&p, g_in, g_in2, g_ref);
      bt_add_s8(&p, a_opt, g_in2, g_opt);
      check(alias ? "add_alias" : "add", t, g_ref, g_opt, n);
#ifdef BT_VARIANTS_CORTEX_M
      if (!alias && bt_add_s8_tab_taken(&p)) { /* model.c's call where kernel_variants.add_tab_ok holds */
        bt_add_s8_tab(&p, g_in, g_in2, g_opt);
        check("add_tab", t, g_ref, g_opt, n);
      }
#endif
    }
  }
}

/* Dense int8 ADD over every (a, b) byte pair (65536 elements), TFLite's parameters: one input with the
 * 0.5 multiplier (either position), the other's and the output's random, output shifts -1 .. -22 and
 * extreme offsets (the cortex-m set's table path, cortex-m/add.c, and its bounds checks). */
static void test_add_pairs(void) {
  static const int32_t offs[] = {-127, 128, 0, 17, -38, 4};
  for (int32_t t = 0; t < 8; t++) {
    const int32_t n = 65536;
    for (int32_t i = 0; i < n; i++) { g_in[i] = (int8_t)(i & 255); g_in2[i] = (int8_t)(i >> 8); }
    bt_add_params p;
    p.input1_offset = offs[t % 6]; p.input2_offset = offs[(t + 3) % 6]; p.output_offset = ri(-128, 127);
    if (t == 0) p.output_offset = -128;
    p.left_shift = 20;
    p.input1_multiplier = 1 << 30; p.input1_shift = 0;
    p.input2_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.input2_shift = ri(-3, 0);
    if (t & 1) { /* the 0.5 input second */
      p.input2_multiplier = 1 << 30; p.input2_shift = 0;
      p.input1_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)); p.input1_shift = ri(-3, 0);
    }
    if (t == 2) { p.input2_multiplier = 1 << 30; p.input2_shift = 0; } /* equal scales */
    p.output_multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
    p.output_shift = t == 3 ? -1 : t == 4 ? -22 : ri(-20, -17);
    if (t == 5) p.output_shift = -2;
    p.act_min = -128; p.act_max = 127;
    if (t >= 6) rand_act(&p.act_min, &p.act_max, p.output_offset);
    p.b.dims[0] = 1; p.b.dims[1] = 1; p.b.dims[2] = 256; p.b.dims[3] = 256;
    p.b.a_stride[3] = p.b.b_stride[3] = p.b.out_stride[3] = 1;
    p.b.a_stride[2] = p.b.b_stride[2] = p.b.out_stride[2] = 256;
    p.b.a_stride[1] = p.b.b_stride[1] = p.b.out_stride[1] = n;
    p.b.a_stride[0] = p.b.b_stride[0] = p.b.out_stride[0] = n;
    fill(g_ref, n + 8); copy(g_opt, g_ref, n + 8);
    ref_bt_add_s8(&p, g_in, g_in2, g_ref);
    bt_add_s8(&p, g_in, g_in2, g_opt);
    check("add_pairs", t, g_ref, g_opt, n + 8);
#ifdef BT_VARIANTS_CORTEX_M
    if (!bt_add_s8_tab_taken(&p)) { failed++; bt_puts("FAIL add_pairs_tab: add_tab declines case "); put_i(t); bt_puts("\n"); continue; }
    bt_add_s8_tab(&p, g_in, g_in2, g_opt);
    check("add_pairs_tab", t, g_ref, g_opt, n + 8);
#endif
  }
}
