/* depthwise_test.c -- tests of depthwise.c, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* c: a 3x3 depthwise (stride s, padding 1, depth multiplier 1) of cin channels on an h x w map with pixel strides
   ips/ops; case t gets a bias of 2^29 or more on one channel (t % 5 == 4) and a shift of 24..30 bits on one
   (t % 3 == 2). */
static void dw3_edge_case(spatial_case *c, int32_t h, int32_t w, int32_t cin, int32_t s, int32_t ips, int32_t ops,
                          int32_t t) {
  gen_conv(&c->dw.conv, h, w, cin, cin, 3, 3, s, s, 1, 1, (int)(rnd() & 1), ips, ops, 1);
  c->dw.depth_multiplier = 1;
  if (t % 5 == 4 && c->dw.conv.bias)
    g_bias[ri(0, cin - 1)] = (rnd() & 1) ? (1 << 29) + ri(0, 9999) : -(1 << 29) - ri(0, 9999);
  if (t % 3 == 2) g_shift[ri(0, cin - 1)] = ri(-30, -24);
}

/* Case t of the whole int8 range (issue 29's Arm paths: per-channel planes, column pairs): a 3x3 depthwise of
 * depth multiplier 1 at stride (sh, sw) on an h x w map of cin channels, padding drawn, pixel strides above cin in
 * some cases, some biases of 2^29 or more or shifts of 24..30 bits; g_in filled. 0 when it has no output. */
static int dw_int8_range_case(spatial_case *c, int32_t t, int32_t h, int32_t w, int32_t cin, int32_t sh, int32_t sw) {
  c->kind = K_DW;
  int32_t ips = cin + ((t % 4 == 1) ? ri(1, 5) : 0), ops = cin + ((t % 4 == 2) ? ri(1, 5) : 0);
  gen_conv(&c->dw.conv, h, w, cin, cin, 3, 3, sh, sw, 1, 1, (int)(rnd() & 1), ips, ops, 1);
  c->dw.depth_multiplier = 1;
  c->dw.conv.act_min = -128; c->dw.conv.act_max = 127;
  if (t % 8 == 7 && c->dw.conv.bias) g_bias[ri(0, cin - 1)] = (1 << 29) + ri(0, 9999);
  if (t % 8 == 5) g_shift[ri(0, cin - 1)] = ri(-30, -24);
  if (c->dw.conv.out.h <= 0 || c->dw.conv.out.w <= 0) return 0;
  fill(g_in, h * w * ips + 16);
  return 1;
}

#ifdef BT_VARIANTS_CORTEX_M
/* The depth-multiplier-1 paths model.c calls by name (cortex-m bt_variants.h, kernel_variants.py's "depthwise_m1"
 * table): one layer each, called as model.c calls it (the whole map, in_y0 0), the path the set names for it checked
 * first. Without DSP instructions the Arm paths run what the set runs there, under their names. */
typedef void (*dw_path_fn)(const bt_depthwise_params *, const int8_t *, int32_t, int8_t *, int32_t, int32_t);
static const struct { const char *name; dw_path_fn fn; int32_t h, w, cin, k, s, act, rq2; } dw_path_cases[] = {
    /* act 2: the whole int8 range, 1: a lower bound above -128; rq2 0: one channel's shift 0 (bt_mbqm_fast) */
    {"bt_dw_kxk_rq2", bt_dw_kxk_rq2, 12, 12, 8, 5, 1, 2, 1},   {"bt_dw_kxk", bt_dw_kxk, 12, 12, 6, 7, 2, 2, 0},
    {"bt_dw_s2g", bt_dw_s2g, 16, 16, 8, 3, 2, 2, 1},           {"bt_dw_planes_8", bt_dw_planes_8, 4, 6, 8, 3, 1, 2, 1},
    {"bt_dw_planes_16", bt_dw_planes_16, 4, 10, 4, 3, 1, 2, 1}, {"bt_dw_planes_32", bt_dw_planes_32, 3, 20, 4, 3, 1, 2, 1},
    {"bt_dw_planes_56", bt_dw_planes_56, 2, 32, 4, 3, 1, 2, 1}, {"bt_dw_small_rq2", bt_dw_small_rq2, 5, 5, 8, 3, 1, 1, 1},
    {"bt_dw_small", bt_dw_small, 5, 5, 8, 3, 1, 2, 0},         {"bt_dw_rows_q4_8", bt_dw_rows_q4_8, 11, 6, 8, 3, 1, 2, 1},
    {"bt_dw_rows_q4_16", bt_dw_rows_q4_16, 12, 12, 8, 3, 1, 2, 1},
    {"bt_dw_rows_q4_32", bt_dw_rows_q4_32, 16, 16, 8, 3, 1, 2, 1},
    {"bt_dw_rows_q4_56", bt_dw_rows_q4_56, 9, 50, 4, 3, 1, 2, 1},
    {"bt_dw_rows_q4_32", bt_dw_rows_q4_32, 25, 5, 8, 3, 1, 2, 1},   /* kws's maps: transposed, rows of 25 */
    /* bt_dw_rows_q4e_RL (rows of whole quads alone: model.c calls it where every strip's are): its path's name */
    {"bt_dw_rows_q4_32", bt_dw_rows_q4e_32, 16, 16, 8, 3, 1, 2, 1},
    {"bt_dw_rows_q4_16", bt_dw_rows_q4e_16, 12, 12, 8, 3, 1, 2, 1},
    {"bt_dw_rows_rq2", bt_dw_rows_rq2, 16, 16, 8, 3, 1, 1, 1}, {"bt_dw_rows", bt_dw_rows, 16, 16, 5, 3, 2, 2, 0},
    {"bt_dw_box_rq2", bt_dw_box_rq2, 3, 3, 5, 3, 1, 2, 1},     {"bt_dw_box", bt_dw_box, 6, 6, 4, 1, 1, 1, 0},
};

static void test_depthwise_paths(void) {
  for (int32_t t = 0; t < (int32_t)(sizeof dw_path_cases / sizeof dw_path_cases[0]); t++) {
    bt_depthwise_params dp;
    const int32_t h = dw_path_cases[t].h, w = dw_path_cases[t].w, cin = dw_path_cases[t].cin, k = dw_path_cases[t].k;
    gen_conv(&dp.conv, h, w, cin, cin, k, k, dw_path_cases[t].s, dw_path_cases[t].s, 1, 1, 1, cin, cin, 1);
    dp.depth_multiplier = 1;
    dp.conv.act_min = dw_path_cases[t].act == 2 ? -128 : -100;
    dp.conv.act_max = 127;
    if (!dw_path_cases[t].rq2) g_shift[ri(0, cin - 1)] = 0;
    const int32_t oh = dp.conv.out.h, bytes = oh * dp.conv.out.w * cin + 8;
    const char *path = bt_depthwise_s8_path(&dp, 0, 0, oh);
    int same = 1;
    for (const char *a = path, *b = dw_path_cases[t].name; same && (*a || *b); a++, b++) same = *a == *b;
    if (!same) {
      failed++;
      bt_puts("FAIL depthwise_paths case "); put_i(t); bt_puts(" takes "); bt_puts(path); bt_puts("\n");
      continue;
    }
    fill(g_in, h * w * cin + 16);
    fill(g_ref, bytes);
    copy(g_opt, g_ref, bytes);
    ref_bt_depthwise_s8(&dp, g_in, 0, g_ref, 0, oh);
    note_variant(dw_path_cases[t].name);
    dw_path_cases[t].fn(&dp, g_in, 0, g_opt, 0, oh);
    check("depthwise_paths", t, g_ref, g_opt, bytes);
  }
}

/* dw_small's entries of a known row length and requantisation (bt_dw_small_sSW_RL, _f_RL, _m_RL: model.c calls one where
 * codegen/tile_kernels.py dw_small_entry found every call of a layer to take it), on calls of whole rows as a fused
 * block makes them (at most 64 outputs, or stride 2): kind 's' every channel on the sat path, 'f' bt_rq2 with a
 * channel of each group of four off it (a shift of 23..30 bits), 'm' a channel's shift 0 (bt_mbqm_fast). */
static const struct { const char *name; dw_path_fn fn; int32_t w, cin, s; char kind; } dw_small_cases[] = {
    {"bt_dw_small_s1_8", bt_dw_small_s1_8, 5, 8, 1, 's'},     {"bt_dw_small_s2_8", bt_dw_small_s2_8, 5, 8, 2, 's'},
    {"bt_dw_small_s1_16", bt_dw_small_s1_16, 12, 4, 1, 's'},  {"bt_dw_small_s2_32", bt_dw_small_s2_32, 24, 8, 2, 's'},
    {"bt_dw_small_s1_56", bt_dw_small_s1_56, 50, 4, 1, 's'},  {"bt_dw_small_f_8", bt_dw_small_f_8, 6, 12, 1, 'f'},
    {"bt_dw_small_f_16", bt_dw_small_f_16, 13, 8, 2, 'f'},    {"bt_dw_small_m_32", bt_dw_small_m_32, 20, 8, 1, 'm'},
    {"bt_dw_small_m_56", bt_dw_small_m_56, 50, 4, 2, 'm'},
};

static void test_depthwise_small_entries(void) {
  for (int32_t t = 0; t < (int32_t)(sizeof dw_small_cases / sizeof dw_small_cases[0]); t++) {
    bt_depthwise_params dp;
    const int32_t w = dw_small_cases[t].w, cin = dw_small_cases[t].cin, s = dw_small_cases[t].s;
    const char kind = dw_small_cases[t].kind;
    gen_conv(&dp.conv, 6, w, cin, cin, 3, 3, s, s, 1, 1, 1, cin, cin, 1);
    dp.depth_multiplier = 1;
    if (kind != 'm') { dp.conv.act_min = -128; dp.conv.act_max = 127; }
    for (int32_t c = 0; c < cin; c++) {
      if (kind == 's' && g_shift[c] < -22) g_shift[c] = -22;
      if (kind == 'f' && c % 4 == 1) g_shift[c] = ri(-30, -23);   /* each group off the sat path */
    }
    if (kind == 'm') g_shift[ri(0, cin - 1)] = 0;
    const int32_t oh = dp.conv.out.h, ow = dp.conv.out.w, y1 = 64 / ow < oh ? (64 / ow < 1 ? 1 : 64 / ow) : oh;
    const int32_t rows = s == 2 ? oh : y1, bytes = rows * ow * cin + 8;
    fill(g_in, 6 * w * cin + 16);
    fill(g_ref, bytes);
    copy(g_opt, g_ref, bytes);
    ref_bt_depthwise_s8(&dp, g_in, 0, g_ref, 0, rows);
    dw_small_cases[t].fn(&dp, g_in, 0, g_opt, 0, rows);
    check("depthwise_small_entries", t, g_ref, g_opt, bytes);
  }
}
#endif

static void test_depthwise(void) {
  for (int32_t t = 0; t < 60; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t k = ri(1, 3) * 2 - 1, kw = k;
    if (t % 6 == 1) kw = 1;
    int32_t dm = (t % 5 == 0) ? ri(2, 3) : 1;
    int32_t cin = (t % 4 == 0) ? 4 * ri(1, 12) : ri(1, 40), cout = cin * dm;
    int32_t s = ri(1, 2), d = (t % 7 == 3) ? 2 : 1;
    int same = (int)(rnd() & 1);
    int32_t h = ri(k + (k - 1) * (d - 1), 12), w = ri(kw + (kw - 1) * (d - 1), 12);
    int32_t ips = cin + ((t % 3 == 0) ? ri(1, 5) : 0), ops = cout + ((t % 3 == 1) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cout, k, kw, s, s, d, d, same, ips, ops, 1);
    c.dw.depth_multiplier = dm;
    if (t % 8 == 6) g_shift[ri(0, cout - 1)] = ri(-1, 1);   /* not bt_rq2: the generic requantisation */
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise", t, &c);
  }
  /* wide 3x3 rows (depth multiplier 1): an optimised set may split a row into strips of columns;
   * some channels shifted right by 24..30 bits (bt_rq2 without the output zero point in its constant) */
  for (int32_t t = 0; t < 12; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t cin = (t % 3 == 0) ? 4 * ri(1, 3) : ri(1, 9), s = 1 + (t & 1);
    int32_t h = ri(3, 6), w = ri(40, 130);
    int32_t ips = cin + ((t % 4 == 1) ? ri(1, 5) : 0), ops = cin + ((t % 4 == 2) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cin, 3, 3, s, s, 1, 1, (int)(rnd() & 1), ips, ops, 1);
    c.dw.depth_multiplier = 1;
    if (t % 3 == 2) g_shift[ri(0, cin - 1)] = ri(-30, -24);
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise_wide", t, &c);
  }
  /* narrow, tall maps (a whole-map call may run transposed, its columns as rows), stride 1 or 2 both ways,
   * views; some biases of 2^29 or more (an optimised set's doubled sums then give way to the generic
   * requantisation) */
  for (int32_t t = 0; t < 16; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t cin = (t % 3 == 0) ? 4 * ri(1, 4) : ri(1, 9), s = 1 + ((t >> 1) & 1);
    int32_t h = ri(12, 30), w = ri(2, 8);
    int32_t ips = cin + ((t % 4 == 1) ? ri(1, 5) : 0), ops = cin + ((t % 4 == 2) ? ri(1, 5) : 0);
    dw3_edge_case(&c, h, w, cin, s, ips, ops, t);
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise_tall", t, &c);
  }
  /* small maps (1x1 to 10x10) and stride-2 maps up to 60 wide, channels a multiple of four (an optimised set
   * may copy them into a zero-point padded buffer); some biases of 2^29 or more, shifts of 24..30 bits, or
   * the generic requantisation */
  for (int32_t t = 0; t < 24; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t cin = 4 * ri(1, 8), s = (t & 1) ? 2 : ri(1, 2);
    int32_t h = (t & 1) ? ri(3, 14) : ri(1, 10), w = (t & 1) ? ri(20, 60) : ri(1, 10);
    int32_t ips = cin + ((t % 4 == 1) ? ri(1, 5) : 0), ops = cin + ((t % 4 == 2) ? ri(1, 5) : 0);
    dw3_edge_case(&c, h, w, cin, s, ips, ops, t);
    if (t % 7 == 6) g_shift[ri(0, cin - 1)] = ri(-1, 1);
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise_small", t, &c);
  }
  /* small maps with the whole int8 range, stride 1 along a row and 1 or 2 down, 4-18 outputs wide: an optimised
   * set may widen them into per-channel planes run as rows of quads, six outputs, pairs and single outputs, the
   * image's first column in an even or odd cell (issue 29); some biases of 2^29 or more or shifts of 24..30 bits */
  for (int32_t t = 0; t < 24; t++) {
    spatial_case c;
    int32_t cin = 4 * ri(1, 6), sh = (t % 3 == 2) ? 2 : 1;
    int32_t h = ri(1, 10), w = ri(4, 18);
    if (!dw_int8_range_case(&c, t, h, w, cin, sh, 1)) continue;
    spatial_check("depthwise_small_planes", t, &c);
  }
  /* stride 2 both ways with the whole int8 range, 1-55 outputs wide (both parities of the input: the image's first
   * column in an even or odd cell), 1-20 rows: an optimised set may widen four channels into column pairs, bands of
   * rows sharing their boundary row (issue 29); some biases of 2^29 or more or shifts of 24..30 bits */
  for (int32_t t = 0; t < 24; t++) {
    spatial_case c;
    int32_t cin = 4 * ri(1, 6);
    int32_t h = ri(1, 40), w = (t & 3) == 3 ? ri(50, 110) : ri(1, 40);
    if (!dw_int8_range_case(&c, t, h, w, cin, 2, 2)) continue;
    spatial_check("depthwise_s2_pairs", t, &c);
  }
  /* 3x3 with unequal strides (2 down, 1 along a row, or the other way), rows of 4-40 outputs of any parity and
   * channels a multiple of four: an optimised set's stride-1 row loops with input rows two apart (issue 29) */
  for (int32_t t = 0; t < 12; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t cin = 4 * ri(1, 6), sh = (t & 1) ? 2 : 1, sw = 3 - sh;
    int32_t h = ri(5, 20), w = ri(4, 40);
    int32_t ips = cin + ((t % 4 == 1) ? ri(1, 5) : 0), ops = cin + ((t % 4 == 2) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cin, 3, 3, sh, sw, 1, 1, (int)(rnd() & 1), ips, ops, 1);
    c.dw.depth_multiplier = 1;
    if (t % 3 == 0) { c.dw.conv.act_min = -128; c.dw.conv.act_max = 127; }
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise_strides", t, &c);
  }
  /* 5x5 and 7x7 (depth multiplier 1, dilation 1): stride 1 or 2 along a row, 1 or 2 down, 'same' or 'valid', 1-40
   * channels (multiples of four and not), maps from the filter's size (or less, 'same') to 36 wide, views; an optimised
   * set may widen four channels' rows into planes run as quads, pairs and single outputs in strips and chunks of rows
   * (issue 29's held-out clause); the whole int8 range in half the cases, some biases of 2^29 or more, shifts of
   * 24..30 bits, or the generic requantisation */
  for (int32_t t = 0; t < 36; t++) {
    spatial_case c; c.kind = K_DW;
    int32_t k = (t & 1) ? 7 : 5, cin = (t % 3 == 0) ? 4 * ri(1, 8) : ri(1, 40);
    int32_t sw = 1 + ((t >> 1) & 1), sh = (t % 5 == 4) ? 3 - sw : sw, same = (t % 4 < 2) ? 1 : (int)(rnd() & 1);
    int32_t big = t % 6 == 5, h = big ? ri(16, 36) : ri(same ? 1 : k, 12), w = big ? ri(24, 36) : ri(same ? 1 : k, 12);
    if (big) cin = (t % 4 == 3) ? 4 * ri(1, 2) : ri(1, 8);   /* (the reference's cost in QEMU: the run's 60 s) */
    if (t == 5) w = 34;   /* 7x7 'same', not the whole int8 range: one strip of 34, its sums a row at a time */
    int32_t ips = cin + ((t % 4 == 1) ? ri(1, 5) : 0), ops = cin + ((t % 4 == 2) ? ri(1, 5) : 0);
    gen_conv(&c.dw.conv, h, w, cin, cin, k, k, sh, sw, 1, 1, same, ips, ops, 1);
    c.dw.depth_multiplier = 1;
    if (t % 2 == 0 || t % 7 == 3) { c.dw.conv.act_min = -128; c.dw.conv.act_max = 127; }
    if (t % 8 == 7 && c.dw.conv.bias) g_bias[ri(0, cin - 1)] = (rnd() & 1) ? (1 << 29) + ri(0, 9999) : -(1 << 29) - ri(0, 9999);
    if (t % 8 == 5) g_shift[ri(0, cin - 1)] = ri(-30, -24);
    if (t % 9 == 8) g_shift[ri(0, cin - 1)] = ri(-1, 1);   /* not bt_rq2: the generic requantisation */
    if (c.dw.conv.out.h <= 0 || c.dw.conv.out.w <= 0) continue;
    fill(g_in, h * w * ips + 16);
    spatial_check("depthwise_kxk", t, &c);
  }
  /* in-place: output written over its own input (from case 25 on, few channels and tall images: the
   * scratch plane holds several output rows, so an optimised set may go row by row) */
  for (int32_t t = 0; t < 40; t++) {
    bt_depthwise_params dp;
    int32_t k = ri(1, 3) * 2 + 1, cin = t < 25 ? ri(1, 33) : ri(1, 5), ps = cin + ((t & 1) ? ri(1, 3) : 0);
    int32_t h = t < 25 ? ri(k, 10) : ri(2 * ps, 24), w = ri(k, 10), s = ri(1, 2);
    gen_conv(&dp.conv, h, w, cin, cin, k, k, s, s, 1, 1, (int)(rnd() & 1), ps, ps, 1);
    dp.depth_multiplier = 1;
    const int32_t n = h * w * ps;
    fill(g_in, n + 16);
    copy(g_ref, g_in, n + 16);
    copy(g_opt, g_in, n + 16);
    ref_bt_depthwise_s8(&dp, g_in, 0, g_ref, 0, dp.conv.out.h);
    fill(g_band, h * w);
    bt_depthwise_s8_inplace(&dp, g_opt, g_band);
    check("depthwise_inplace", t, g_ref, g_opt, n + 16);
  }
  /* larger maps with the whole int8 range at stride 1 (vww's 48x48 and 24x24 layers): an optimised set may widen the
   * rows of several chunks of output rows (a chunk's last two input rows again as the next one's first), the image's
   * first column in an even or odd cell and 0-3 pixels after its groups of four (issue 29) */
  for (int32_t t = 0; t < 8; t++) {
    spatial_case c;
    int32_t cin = 4 * ri(1, 3);
    int32_t h = ri(16, 40), w = ri(9, 50);
    if (!dw_int8_range_case(&c, t, h, w, cin, 1, 1)) continue;
    spatial_check("depthwise_rows_q4", t, &c);
  }
#ifdef BT_VARIANTS_CORTEX_M
  test_depthwise_paths();
  test_depthwise_small_entries();
#endif
}
