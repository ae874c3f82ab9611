/* mean_test.c -- tests of mean.c, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

static void test_mean(void) {
  for (int32_t t = 0; t < 20; t++) {
    bt_mean_params p;
    p.outer = ri(1, 2); p.reduce = ri(1, 60); p.inner = ri(1, 24);
    p.reduce_stride = p.inner + ((t & 1) ? ri(1, 3) : 0);
    p.outer_stride = p.reduce * p.reduce_stride;
    p.input_zp = ri(-128, 127); p.output_zp = ri(-128, 127);
    p.same_qparams = (t % 3 == 0);
    p.multiplier = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu));
    p.shift = -ilog2((uint32_t)p.reduce) + ri(-1, 1);
    fill(g_in, p.outer * p.outer_stride + 8);
    const int32_t n = p.outer * p.inner + 8;
    fill(g_ref, n); copy(g_opt, g_ref, n);
    ref_bt_mean_s8(&p, g_in, g_ref); bt_mean_s8(&p, g_in, g_opt);
    check("mean", t, g_ref, g_opt, n);
  }
}
