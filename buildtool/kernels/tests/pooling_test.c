/* pooling_test.c -- tests of pooling.c, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

static void test_pool(void) {
  for (int32_t t = 0; t < 40; t++) {
    spatial_case c; c.kind = (t & 1) ? K_MAX : K_AVG;
    bt_pool_params *p = &c.pool;
    int32_t fh = ri(1, 4), fw = ri(1, 4), sh = ri(1, 3), sw = ri(1, 3), cc = ri(1, 30);
    int same = (int)(rnd() & 1);
    int32_t h = ri(fh, 12), w = ri(fw, 12);
    if (t % 8 == 0) { fh = h; fw = w; sh = sw = 1; same = 0; }   /* global pooling */
    int32_t ips = cc + ((t % 3 == 0) ? ri(1, 4) : 0), ops = cc + ((t % 3 == 1) ? ri(1, 4) : 0);
    p->in = (bt_shape){h, w, cc, ips};
    p->out = (bt_shape){out_size(h, fh, sh, 1, same), out_size(w, fw, sw, 1, same), cc, ops};
    p->filter_h = fh; p->filter_w = fw; p->stride_h = sh; p->stride_w = sw;
    p->pad_top = pad_before(h, fh, sh, 1, same); p->pad_left = pad_before(w, fw, sw, 1, same);
    rand_act(&p->act_min, &p->act_max, ri(-128, 127));
    fill(g_in, h * w * ips + 16);
    spatial_check((t & 1) ? "max_pool" : "avg_pool", t, &c);
  }
}

/* Average pools at the int16-sum edge of the cortex-m set's SXTAB16 path: global windows of 255 and 256
 * taps (and one of 289, past it: the reference code) of all -128, all 127 or random values, channel
 * counts around its 8- and 4-channel groups. */
static void test_pool_wide(void) {
  static const int32_t hw[][2] = {{16, 16}, {15, 17}, {17, 17}, {5, 25}};
  for (int32_t t = 0; t < 12; t++) {
    spatial_case c; c.kind = K_AVG;
    bt_pool_params *p = &c.pool;
    const int32_t h = hw[t % 4][0], w = hw[t % 4][1], cc = 1 + (t * 5) % 14;
    p->in = (bt_shape){h, w, cc, cc};
    p->out = (bt_shape){1, 1, cc, cc};
    p->filter_h = h; p->filter_w = w; p->stride_h = p->stride_w = 1; p->pad_top = p->pad_left = 0;
    p->act_min = -128; p->act_max = 127;
    const int32_t nb = h * w * cc + 16;
    fill(g_in, nb);
    if (t % 3 != 2) for (int32_t i = 0; i < nb; i++) g_in[i] = (int8_t)(t % 3 == 0 ? -128 : 127);
    spatial_check("avg_pool_wide", t, &c);
  }
}
