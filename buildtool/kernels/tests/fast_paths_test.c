/* fast_paths_test.c -- tests of the riscv and host sets' conv and depthwise fast paths (conv.c, depthwise.c), against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* ------------------------------------------------------------------ fast paths of the riscv and host sets
 * (rvhost block) channel counts 1, 3, 5, 17 around the 4-, 8- and 16-channel blocks, 1x1 stride 1 and 2,
 * 3x3 depthwise interiors and borders, the 3-channel stem, filters beyond the host stack buffer,
 * extreme input offsets; each case in random row bands like the others. */
static void test_fast_paths(void) {
  static const int32_t chans[] = {1, 3, 5, 17, 16, 33};
  static const int32_t offs[] = {-127, 128, 0};
  int32_t n = 0;
  for (uint32_t i = 0; i < sizeof chans / sizeof chans[0]; i++)
    for (int32_t v = 0; v < 4; v++, n++) {
      spatial_case c; c.kind = K_CONV;
      const int32_t cin = chans[(i + v) % 6], cout = chans[i], k = v < 2 ? 1 : 3, s = (v & 1) + 1;
      const int32_t ips = cin + (v == 3 ? 2 : 0), h = ri(3, 9), w = ri(3, 9);
      gen_conv(&c.dw.conv, h, w, cin, cout, k, k, s, s, 1, 1, v >= 2, ips, cout, 0);
      c.dw.conv.input_offset = offs[n % 3];
      c.dw.depth_multiplier = 1;
      fill(g_in, h * w * ips + 16);
      spatial_check("fast_conv", n, &c);
      c.kind = K_DW;
      gen_conv(&c.dw.conv, h + 2, w + 2, cout, cout, 3, 3, s, s, 1, 1, v != 1, cout + (v == 2), cout, 1);
      c.dw.conv.input_offset = offs[(n + 1) % 3];
      fill(g_in, (h + 2) * (w + 2) * (cout + 1) + 16);
      spatial_check("fast_depthwise", n, &c);
    }
  for (int32_t t = 0; t < 3; t++, n++) {   /* stem 3x3 s2 SAME, 3 input channels; 3x3 x 120 > 1024 taps */
    spatial_case c; c.kind = K_CONV; c.dw.depth_multiplier = 1;
    const int32_t cin = t == 2 ? 120 : 3, cout = t == 2 ? 5 : 16 + t;
    gen_conv(&c.dw.conv, 9, 10, cin, cout, 3, 3, 2, 2, 1, 1, 1, cin, cout, 0);
    fill(g_in, 9 * 10 * cin + 16);
    spatial_check("fast_conv_stem", t, &c);
  }
  for (uint32_t i = 0; i < sizeof chans / sizeof chans[0]; i++) {
    bt_fc_params p;
    p.n_in = chans[i] + (i & 1) * 16; p.n_out = chans[(i + 2) % 6]; p.batches = 1 + (i & 1);
    p.input_offset = offs[i % 3]; p.output_offset = ri(-128, 127); p.filter_offset = 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t j = 0; j < p.n_out; j++) g_bias[j] = ri(-30000, 30000);
    p.bias = g_bias; p.per_channel = (int32_t)(i & 1);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    p.multiplier = g_mult; p.shift = g_shift;
    fill(g_in, p.n_in * p.batches);
    const int32_t nout = p.n_out * p.batches + 8;
    fill(g_ref, nout); copy(g_opt, g_ref, nout);
    ref_bt_fully_connected_s8(&p, g_in, g_ref);
    bt_fully_connected_s8(&p, g_in, g_opt);
    check("fast_fc", (int32_t)i, g_ref, g_opt, nout);
  }
}
