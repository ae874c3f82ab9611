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
