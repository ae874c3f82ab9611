/* fused_test.c -- tests of fused.c (the tile runtime: reference/fused.c and each set's own), fx_box.h, fx_hooks.h, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* ------------------------------------------------------------------ fused-plan tile runtime
 * bt_fused.h (kernels/reference/fused.c unless the set replaces it): the tile calls a fused model.c
 * makes, on random tile boxes of random operators, against the reference kernel run whole. */
#define FX_MAXR 64
static int8_t *fx_rowp[FX_MAXR];
static const int8_t *g_image;  /* the streamed input bt_read_input_rows serves */

/* The test's platform input: served from memory (replaces the semihosting file of the boards). */
int bt_read_input_rows(uint32_t offset, uint32_t n, uint32_t rows, uint32_t in_stride, void *dst, uint32_t dst_stride) {
  for (uint32_t y = 0; y < rows; y++) copy((int8_t *)dst + y * dst_stride, g_image + offset + y * in_stride, (int32_t)n);
  return 0;
}

static int32_t fx_kernel_kind(spatial_kind k) { return k == K_CONV ? FX_CONV : k == K_DW ? FX_DW : k == K_MAX ? FX_MAXP : FX_AVGP; }

/* Geometry of a spatial case along one axis: stride, padding, effective kernel extent. */
static void fx_axes(const spatial_case *c, int32_t *sh, int32_t *sw, int32_t *pt, int32_t *pl, int32_t *eh, int32_t *ew) {
  if (c->kind <= K_DW) {
    const bt_conv_params *p = &c->dw.conv;
    *sh = p->stride_h; *sw = p->stride_w; *pt = p->pad_top; *pl = p->pad_left;
    *eh = (p->kh - 1) * p->dil_h + 1; *ew = (p->kw - 1) * p->dil_w + 1;
  } else {
    *sh = c->pool.stride_h; *sw = c->pool.stride_w; *pt = c->pool.pad_top; *pl = c->pool.pad_left;
    *eh = c->pool.filter_h; *ew = c->pool.filter_w;
  }
}

/* A random split of [0, n) into tiles: bounds[0..k], returns k. */
static int32_t fx_split(int32_t n, int32_t *bounds) {
  int32_t k = 0;
  bounds[0] = 0;
  while (bounds[k] < n) { bounds[k + 1] = bounds[k] + ri(1, n - bounds[k]); k++; }
  return k;
}

/* c's reference output (g_in's input) at g_ref, g_opt starting as the same bytes (what a tiled run leaves
   alone then matches); returns their size. */
static int32_t fx_ref_out(const spatial_case *c, bt_shape out) {
  const int32_t out_bytes = out.h * out.w * out.pixel_stride + 8;
  fill(g_ref, out_bytes);
  copy(g_opt, g_ref, out_bytes);
  run_spatial_ref(c, g_in, g_ref);
  return out_bytes;
}

/* One spatial case computed tile by tile through fx_win (mode 0: each tile's input window copied
   out of the image, dense; 1: a row-banded input, rows scattered; 2: pulled from the streamed
   input by fx_pulled; 3: whole input tensor), compared with the reference run whole. */
static void fused_spatial_check(const char *name, int32_t case_no, const spatial_case *c, int mode) {
  const bt_shape in = c->kind <= K_DW ? c->dw.conv.in : c->pool.in;
  const bt_shape out = c->kind <= K_DW ? c->dw.conv.out : c->pool.out;
  const void *prm = c->kind == K_CONV ? (const void *)&c->dw.conv : c->kind == K_DW ? (const void *)&c->dw
                                                                                    : (const void *)&c->pool;
  int32_t sh, sw, pt, pl, eh, ew;
  fx_axes(c, &sh, &sw, &pt, &pl, &eh, &ew);
  const int32_t out_bytes = fx_ref_out(c, out);
  const fx_buf o = {g_opt, 0, 0, out.w, out.pixel_stride, 0};
  const int32_t kind = fx_kernel_kind(c->kind), ps = in.pixel_stride;
  int32_t rb[FX_MAXR + 1], cb[FX_MAXR + 1];
  const int32_t nr = fx_split(out.h, rb), nc = fx_split(out.w, cb);
  if (mode == 1) {  /* row r of the image at g_band + (in.h - 1 - r) * row bytes */
    for (int32_t r = 0; r < in.h; r++) {
      fx_rowp[r] = g_band + (in.h - 1 - r) * in.w * ps;
      copy(fx_rowp[r], g_in + r * in.w * ps, in.w * ps);
    }
  }
  g_image = g_in;
  for (int32_t i = 0; i < nr; i++)
    for (int32_t j = 0; j < nc; j++) {
      const int32_t ra = rb[i], rb1 = rb[i + 1], ca = cb[j], cb1 = cb[j + 1];
      const int32_t c0 = BT_MAX(ca * sw - pl, 0), c1 = BT_MIN((cb1 - 1) * sw - pl + ew, in.w);
      if (mode == 1) {
        const fx_buf b = {0, 0, 0, in.w, ps, fx_rowp};
        fx_win(kind, prm, &b, &o, ra, rb1, ca, cb1, -1, 0);
      } else if (mode == 3) {
        const fx_buf b = {g_in, 0, 0, in.w, ps, 0};
        fx_win(kind, prm, &b, &o, ra, rb1, ca, cb1, -1, 0);
      } else if (mode == 2) {  /* a dense eh-row window of the tile's columns, refilled per output row */
        fill(g_band, eh * (c1 - c0) * ps + 16);
        const fx_buf w = {g_band, 0, c0, c1 - c0, ps, 0};
        fx_pulled(kind, prm, &w, &o, ra, rb1, ca, cb1, -1, c0, c1, sh, pt, eh, in.h, in.w, ps);
      } else {
        const int32_t r0 = BT_MAX(ra * sh - pt, 0), r1 = BT_MIN((rb1 - 1) * sh - pt + eh, in.h);
        const int32_t wb = (c1 - c0) * in.c;
        fill(g_band, (r1 - r0 + 1) * wb + 16);
        for (int32_t y = r0; y < r1; y++)
          for (int32_t x = c0; x < c1; x++) copy(g_band + (y - r0) * wb + (x - c0) * in.c, g_in + (y * in.w + x) * ps, in.c);
        const fx_buf w = {g_band, r0, c0, c1 - c0, in.c, 0};
        fx_win(kind, prm, &w, &o, ra, rb1, ca, cb1, -1, 0);
      }
    }
  check(name, case_no, g_ref, g_opt, out_bytes);
}

static void test_fused_spatial(void) {
  static const char *const names[4] = {"fx_win window", "fx_win row bands", "fx_pulled", "fx_win whole"};
  for (int32_t t = 0; t < 64; t++) {
    spatial_case c;
    const int mode = t % 4;
    c.kind = (spatial_kind)(t / 4 % 4);
    int32_t k = ri(1, 3) * 2 - 1, s = ri(1, 2);
    int32_t cin = ri(1, 12), h = ri(k, 14), w = ri(k, 14);
    if (mode == 2 && c.kind != K_DW) cin = ri(1, 4);  /* a streamed image: few channels */
    const int same = (int)(rnd() & 1);
    const int32_t ps = mode == 0 || mode == 2 ? cin : cin + ri(0, 3);
    if (c.kind <= K_DW) {
      gen_conv(&c.dw.conv, h, w, cin, c.kind == K_DW ? cin : ri(1, 16), k, k, s, s, 1, 1, same, ps, 0, c.kind == K_DW);
      c.dw.conv.out.pixel_stride = c.dw.conv.out.c + ri(0, 2);
      c.dw.depth_multiplier = 1;
    } else {
      bt_pool_params *p = &c.pool;
      p->in = (bt_shape){h, w, cin, ps};
      p->filter_h = p->filter_w = k; p->stride_h = p->stride_w = s;
      p->out = (bt_shape){out_size(h, k, s, 1, same), out_size(w, k, s, 1, same), cin, cin + ri(0, 2)};
      p->pad_top = pad_before(h, k, s, 1, same); p->pad_left = pad_before(w, k, s, 1, same);
      rand_act(&p->act_min, &p->act_max, 0);
    }
    fill(g_in, h * w * ps + 16);
    fused_spatial_check(names[mode], t, &c, mode);
  }
}

/* Column calls (a set's FX_COL_CALLS; reference: none) on row bands whose rows lie one after another: a 1x1
   stride-1 conv over boxes of one or two columns (the row band's rows in runs of 1-5 one row pitch apart, a
   gap row between runs), so cortex-m's win_kind calls the conv once per column for each run of rows taller
   than the box is wide and once per row elsewhere; the whole output (ch -1) or n channels at a time into an
   n-channel buffer, against the reference run whole. The rng is restored after (the later cases unchanged). */
static void fused_col_calls(void) {
  const uint32_t saved = rng;
  for (int32_t t = 0; t < 24; t++) {
    spatial_case c;
    c.kind = K_CONV;
    const int32_t h = ri(3, 14), w = ri(3, 14), cin = ri(1, 24), cout = ri(1, 12), ps = cin + ri(0, 3);
    const int32_t n = t % 2 ? cout : cout % 2 == 0 ? 2 : 1;   /* channels per call (all: ch -1) */
    gen_conv(&c.dw.conv, h, w, cin, cout, 1, 1, 1, 1, 1, 1, 0, ps, cout + ri(0, 2), 0);
    const bt_conv_params *p = &c.dw.conv;
    const bt_shape out = p->out;
    fill(g_in, h * w * ps + 16);
    const int32_t out_bytes = fx_ref_out(&c, out);
    for (int32_t r = 0, slot = 0; r < h; slot++) {   /* a run of rows, then an unused slot */
      const int32_t run = BT_MIN(ri(1, 5), h - r);
      for (int32_t i = 0; i < run; i++, r++, slot++) {
        fx_rowp[r] = g_band + slot * w * ps;
        copy(fx_rowp[r], g_in + r * w * ps, w * ps);
      }
    }
    int32_t rb[FX_MAXR + 1], cb[FX_MAXR + 1], nc = 0;
    const int32_t nr = fx_split(out.h, rb);
    for (cb[0] = 0; cb[nc] < out.w; nc++) cb[nc + 1] = cb[nc] + ri(1, BT_MIN(2, out.w - cb[nc]));
    const fx_buf b = {0, 0, 0, w, ps, fx_rowp}, o = {g_opt, 0, 0, out.w, out.pixel_stride, 0},
                 o1 = {g_in2, 0, 0, out.w, n, 0};
    for (int32_t ch = 0; ch < cout; ch += n) {
      for (int32_t i = 0; i < nr; i++)
        for (int32_t j = 0; j < nc; j++)
          fx_win(FX_CONV, p, &b, n == cout ? &o : &o1, rb[i], rb[i + 1], cb[j], cb[j + 1], n == cout ? -1 : ch, 0);
      if (n != cout)
        for (int32_t i = 0; i < out.h * out.w * n; i++) g_opt[(i / n) * out.pixel_stride + ch + i % n] = g_in2[i];
    }
    check("fx_win 1x1 column calls, row-band runs", t, g_ref, g_opt, out_bytes);
  }
  rng = saved;
}

/* The channel-by-channel scheme (fx_win / fx_pulled with ch >= 0), in groups of n = 1, 2 or 4
   channels (the window's pixel stride): a conv's output channels n at a time into an n-channel
   buffer (mode 0: from the whole input, 1: from row bands, 2: pulled from the streamed input), and a
   depthwise from an n-channel input into channels ch.. of its output with the filter regrouped per
   group (mode 3), over random tiles, against the reference run whole. */
static void test_fused_channelwise(void) {
  static int8_t fch[512];
  for (int32_t t = 0; t < 80; t++) {
    const int mode = t % 4;
    spatial_case c;
    c.kind = mode == 3 ? K_DW : K_CONV;
    const int32_t k = ri(1, 3) * 2 - 1, s = ri(1, 2), h = ri(k, 14), w = ri(k, 14);
    const int32_t cin = mode == 3 ? ri(1, 12) : ri(1, mode == 2 ? 4 : 24), cout = mode == 3 ? cin : ri(1, 12);
    const int32_t ps = mode == 1 ? cin + ri(0, 3) : cin;
    const int32_t pick = (t / 4) % 3 == 0 ? 1 : (t / 4) % 3 == 1 ? 2 : 4;
    const int32_t n = cout % pick == 0 ? pick : cout % 2 == 0 ? 2 : 1;   /* channels per call */
    gen_conv(&c.dw.conv, h, w, cin, cout, k, k, s, s, 1, 1, (int)(rnd() & 1), ps, cout + ri(0, 2), mode == 3);
    c.dw.depth_multiplier = 1;
    const bt_conv_params *p = &c.dw.conv;
    const bt_shape out = p->out;
    fill(g_in, h * w * ps + 16);
    const int32_t out_bytes = fx_ref_out(&c, out);
    int32_t rb[FX_MAXR + 1], cb[FX_MAXR + 1];
    const int32_t nr = fx_split(out.h, rb), nc = fx_split(out.w, cb), eh = k;
    if (mode == 1)
      for (int32_t r = 0; r < h; r++) {
        fx_rowp[r] = g_band + (h - 1 - r) * w * ps;
        copy(fx_rowp[r], g_in + r * w * ps, w * ps);
      }
    if (mode == 3)
      for (int32_t ch = 0; ch < cout; ch++)   /* [cout / n][k * k][n] */
        for (int32_t i = 0; i < k * k; i++) fch[((ch / n) * k * k + i) * n + ch % n] = p->filter[i * cout + ch];
    g_image = g_in;
    const fx_buf o = {g_opt, 0, 0, out.w, out.pixel_stride, 0}, o1 = {g_in2, 0, 0, out.w, n, 0};
    for (int32_t ch = 0; ch < cout; ch += n) {
      if (mode == 3)
        for (int32_t i = 0; i < h * w * n; i++) g_band[i] = g_in[(i / n) * ps + ch + i % n];
      for (int32_t i = 0; i < nr; i++)
        for (int32_t j = 0; j < nc; j++) {
          const int32_t ra = rb[i], rb1 = rb[i + 1], ca = cb[j], cb1 = cb[j + 1];
          const int32_t c0 = BT_MAX(ca * s - p->pad_left, 0), c1 = BT_MIN((cb1 - 1) * s - p->pad_left + k, w);
          if (mode == 3) {
            const fx_buf b = {g_band, 0, 0, w, n, 0};
            fx_win(FX_DW, &c.dw, &b, &o, ra, rb1, ca, cb1, ch, fch);
          } else if (mode == 2) {
            int8_t *win = g_band + 4096;
            fill(win, eh * (c1 - c0) * ps + 16);
            const fx_buf b = {win, 0, c0, c1 - c0, ps, 0};
            fx_pulled(FX_CONV, p, &b, &o1, ra, rb1, ca, cb1, ch, c0, c1, s, p->pad_top, eh, h, w, ps);
          } else {
            const fx_buf b = {mode == 0 ? g_in : 0, 0, 0, w, ps, mode == 1 ? fx_rowp : 0};
            fx_win(FX_CONV, p, &b, &o1, ra, rb1, ca, cb1, ch, 0);
          }
        }
      if (mode != 3)
        for (int32_t i = 0; i < out.h * out.w * n; i++) g_opt[(i / n) * out.pixel_stride + ch + i % n] = g_in2[i];
    }
    static const char *const names[4] = {"fx_win conv by channel", "fx_win conv by channel, row bands",
                                         "fx_pulled conv by channel", "fx_win depthwise by channel"};
    check(names[mode], t, g_ref, g_opt, out_bytes);
  }
  fused_col_calls();
}

#ifdef BT_VARIANTS_CORTEX_M
/* The kernels code generation passes fx_chw_k for such layers on cortex-m (kernel_variants.py's table): the doubled
   sums' conv variant where its conditions hold (the whole int8 range, bt_rq2 on every live channel, every |bias|
   within doubled_ok's bound), else the dispatcher; the depthwise's bt_rq2 variant where it holds. */
static fx_conv_kernel chw_ck(const bt_conv_params *p) {
  const int32_t K = p->kh * p->kw * p->in.c;
  int ok = p->act_min == -128 && p->act_max == 127 && K <= 640 && p->out.c >= 4;
  for (int32_t i = 0; ok && i < p->out.c; i++) {
    const int32_t m = p->multiplier[i], sh = p->shift[i];
    const int64_t b = p->bias ? p->bias[i] : 0;
    ok = (m == 0 ? sh >= -31 && sh <= 31 : m >= (1 << 30) && sh >= -31 && sh <= -2) &&
         (b < 0 ? -b : b) + (int64_t)K * 255 * 128 < (1 << 30);
  }
  return ok ? bt_conv_s8_pm_rq2m_ssat : bt_conv_s8;
}
static fx_dw_kernel chw_dk(const bt_depthwise_params *p) {
  int ok = p->depth_multiplier == 1;
  for (int32_t i = 0; ok && i < p->conv.out.c; i++)
    ok = (p->conv.multiplier[i] == 0 || p->conv.multiplier[i] >= (1 << 30)) && p->conv.shift[i] >= -31 &&
         p->conv.shift[i] <= -2;
  return ok ? bt_depthwise_s8_m1_rq2 : bt_depthwise_s8;
}
#else
#define chw_ck(p) bt_conv_s8
#define chw_dk(p) bt_depthwise_s8
#endif

/* fx_chw with more channels than one group holds (cortex-m's cm_chw_pm: the conv kernel makes g channels of the
   window at once, g from the box and its CM_GRP_BUF 1280 bytes, then the group's depthwise): a 1x1 conv or a 3x3
   one on 4-8 channels (not an RGB stem), C = k g + r > g0 channels (g0 the channels that fit, g = g0 & ~3,
   r in 1..g-1: a leftover group of r channels)
   for the window box of the whole output of an 8-12 x 8-12 map (g 8 to 20), one tile, then the same channels
   over random tiles; against the reference conv and depthwise run whole. Every fourth case (one tile and tiles
   in turn) through fx_chw_k with the kernels code generation would pass (chw_ck, chw_dk), its shifts made for
   bt_rq2, the tiled ones through fx_chw_kg. The rng is restored after. */
static void fused_chw_groups(void) {
  static int8_t cw[64 * 72], fch[9 * 64];
  static int32_t cbias[64], cmult[64], cshift[64];
  const uint32_t saved = rng;
  for (int32_t t = 0; t < 16; t++) {
    const int32_t kc = t % 3 == 2 ? 3 : 1, h = ri(8, 12), w = ri(8, 12), cin = kc == 3 ? ri(4, 8) : ri(1, 24);
    const int32_t s = ri(1, 2), same = (int)(rnd() & 1);
    const int32_t wh = BT_MIN((out_size(h, 3, s, 1, same) - 1) * s - pad_before(h, 3, s, 1, same) + 3, h);
    const int32_t ww = BT_MIN((out_size(w, 3, s, 1, same) - 1) * s - pad_before(w, 3, s, 1, same) + 3, w);
    const int32_t g0 = (1280 - 4) / (wh * ww + 9), g = g0 & ~3;   /* the box's g (g0 channels when all fit) */
    int32_t C = g * ri(1, 2) + ri(1, g - 1);
    if (C <= g0) C = g0 + 1;   /* more than one group: g, g0 + 1 <= g + 4 */
    spatial_case c1, c2;
    c1.kind = K_CONV;
    c2.kind = K_DW;
    bt_conv_params *const cp = &c1.dw.conv, *const dp = &c2.dw.conv;
    gen_conv(cp, h, w, cin, C, kc, kc, 1, 1, 1, 1, kc == 3, cin, C, 0);   /* H x W = h x w */
    copy(cw, g_w, C * cin * kc * kc);
    for (int32_t i = 0; i < C; i++) { cbias[i] = g_bias[i]; cmult[i] = g_mult[i]; cshift[i] = g_shift[i]; }
    const int via_k = t % 4 == 0 || t % 4 == 3;   /* fx_chw_k */
    if (via_k) for (int32_t i = 0; i < C; i++) cshift[i] = -ri(2, 12);
    cp->filter = cw; cp->bias = cp->bias ? cbias : 0; cp->multiplier = cmult; cp->shift = cshift;
    gen_conv(dp, h, w, C, C, 3, 3, s, s, 1, 1, same, C, C, 1);
    if (via_k) for (int32_t i = 0; i < C; i++) g_shift[i] = -ri(2, 12);
    c2.dw.depth_multiplier = 1;
    const bt_shape out = dp->out;
    fill(g_in, h * w * cin + 16);
    run_spatial_ref(&c1, g_in, g_in2);
    run_spatial_ref(&c2, g_in2, g_ref);
    for (int32_t ch = 0; ch < C; ch++)
      for (int32_t i = 0; i < 9; i++) fch[ch * 9 + i] = dp->filter[i * C + ch];
    fill(g_opt, out.h * out.w * C + 8);
    int32_t rb[FX_MAXR + 1] = {0, out.h}, cb[FX_MAXR + 1] = {0, out.w}, nr = 1, nc = 1;
    if (t % 2) { nr = fx_split(out.h, rb); nc = fx_split(out.w, cb); }
    const fx_buf ci = {g_in, 0, 0, w, cin, 0}, o = {g_opt, 0, 0, out.w, C, 0};
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) {
        const int32_t ra = rb[i], rb1 = rb[i + 1], ca = cb[j], cb1 = cb[j + 1];
        const int32_t wra = BT_MAX(ra * s - dp->pad_top, 0), wrb = BT_MIN((rb1 - 1) * s - dp->pad_top + 3, h);
        const int32_t wca = BT_MAX(ca * s - dp->pad_left, 0), wcb = BT_MIN((cb1 - 1) * s - dp->pad_left + 3, w);
        fill(g_band, (wrb - wra) * (wcb - wca) + 16);
        const fx_buf win = {g_band, wra, wca, wcb - wca, 1, 0};
        if (t % 4 == 3)   /* fx_chw_kg: the same bytes without the one-channel paths (any group, a leftover of one) */
          fx_chw_kg(cp, chw_ck(cp), bt_conv_s8, &ci, &win, wra, wrb, wca, wcb, &c2.dw, chw_dk(&c2.dw), fch, &o, ra, rb1, ca, cb1, C);
        else if (via_k)
          fx_chw_k(cp, chw_ck(cp), &ci, &win, wra, wrb, wca, wcb, &c2.dw, chw_dk(&c2.dw), fch, &o, ra, rb1, ca, cb1, C);
        else fx_chw(cp, &ci, &win, wra, wrb, wca, wcb, &c2.dw, fch, &o, ra, rb1, ca, cb1, C);
      }
    check(t % 4 == 3 ? "fx_chw_kg in channel groups" : via_k ? "fx_chw_k in channel groups"
          : t % 2 ? "fx_chw in channel groups, tiles"
                                                       : "fx_chw in channel groups, leftover group",
          t, g_ref, g_opt, out.h * out.w * C);
  }
  rng = saved;
}

/* fx_chw (the channel-by-channel scheme's tile: a 1x1 conv's output channels made one at a time into a
   one-channel window, each followed by the depthwise reading it; a set's fx_k_chw, cortex-m's taking
   two channels at once on runs of up to 16 values and on an RGB stem's 3x3 conv; the stem's input in row
   bands, or pulled from the streamed image by fx_pulled_chw), over random tiles and channel counts (odd ones
   leave one channel alone), against the reference conv and depthwise run whole. */
static void test_fused_chw(void) {
  static int8_t cw[24 * 12], fch[9 * 12];
  static int32_t cbias[12], cmult[12], cshift[12];
  for (int32_t t = 0; t < 48; t++) {
    const int stem = t % 4 == 2;   /* an RGB stem's 3x3 conv on 3 channels (cortex-m: two channels at once) */
    const int32_t h = ri(3, 14), w = ri(3, 14), cin = stem ? 3 : ri(1, 20), C = ri(1, 9), cs = ri(1, 2);
    const int32_t s = ri(1, 2), kc = stem ? 3 : 1;
    spatial_case c1, c2;
    c1.kind = K_CONV;
    c2.kind = K_DW;
    bt_conv_params *const cp = &c1.dw.conv, *const dp = &c2.dw.conv;
    gen_conv(cp, h, w, cin, C, kc, kc, cs, cs, 1, 1, stem ? (int)(rnd() & 1) : 0, cin, C, 0);
    copy(cw, g_w, C * cin * kc * kc);
    for (int32_t i = 0; i < C; i++) { cbias[i] = g_bias[i]; cmult[i] = g_mult[i]; cshift[i] = g_shift[i]; }
    if (t % 3 == 0 || stem) for (int32_t i = 0; i < C; i++) cshift[i] = -ri(2, 12);   /* bt_rq2 on every channel */
    cp->filter = cw; cp->bias = cp->bias ? cbias : 0; cp->multiplier = cmult; cp->shift = cshift;
    const int32_t H = cp->out.h, W = cp->out.w;
    /* SAME when the conv's output is under 3 rows or columns (a stem of stride 2 on a 4x3 image: 1x1): a VALID
       3x3 would have no output (out_size -1; the case compared bytes nothing wrote, found when another test's
       new cases moved the random draws); the draw is made either way, so the other cases stay as they were */
    const int dsame = (int)(rnd() & 1) | (H < 3 || W < 3);
    gen_conv(dp, H, W, C, C, 3, 3, s, s, 1, 1, dsame, C, C, 1);
    if (t % 3 == 0) for (int32_t i = 0; i < C; i++) g_shift[i] = -ri(2, 12);
    c2.dw.depth_multiplier = 1;
    const bt_shape out = dp->out;
    fill(g_in, h * w * cin + 16);
    run_spatial_ref(&c1, g_in, g_in2);
    run_spatial_ref(&c2, g_in2, g_ref);
    for (int32_t ch = 0; ch < C; ch++)   /* [C][9]: one channel per group */
      for (int32_t i = 0; i < 9; i++) fch[ch * 9 + i] = dp->filter[i * C + ch];
    fill(g_opt, out.h * out.w * C + 8);
    int32_t rb[FX_MAXR + 1], cb[FX_MAXR + 1];
    const int32_t nr = fx_split(out.h, rb), nc = fx_split(out.w, cb);
    const int banded = stem && (t & 4);   /* the input in row bands, rows in reverse order (g_in2 done with) */
    const int pulled = stem && !banded && t != 2;   /* fx_pulled_chw */
    g_image = g_in;
    if (banded)
      for (int32_t r = 0; r < h; r++) {
        fx_rowp[r] = g_in2 + (h - 1 - r) * w * cin;
        copy(fx_rowp[r], g_in + r * w * cin, w * cin);
      }
    const fx_buf ci = {banded ? 0 : g_in, 0, 0, w, cin, banded ? fx_rowp : 0}, o = {g_opt, 0, 0, out.w, C, 0};
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) {
        const int32_t ra = rb[i], rb1 = rb[i + 1], ca = cb[j], cb1 = cb[j + 1];
        const int32_t wra = BT_MAX(ra * s - dp->pad_top, 0), wrb = BT_MIN((rb1 - 1) * s - dp->pad_top + 3, H);
        const int32_t wca = BT_MAX(ca * s - dp->pad_left, 0), wcb = BT_MIN((cb1 - 1) * s - dp->pad_left + 3, W);
        fill(g_band, (wrb - wra) * (wcb - wca) + 16);
        const fx_buf win = {g_band, wra, wca, wcb - wca, 1, 0};
        if (pulled) {   /* the stem's input pulled from the streamed image (g_image), 3 rows at a time */
          const int32_t c0 = BT_MAX(wca * cs - cp->pad_left, 0), c1 = BT_MIN((wcb - 1) * cs - cp->pad_left + 3, w);
          int8_t *const pw = g_band + 4096;
          fill(pw, 3 * (c1 - c0) * cin + 16);
          const fx_buf pin = {pw, 0, c0, c1 - c0, cin, 0};
          fx_pulled_chw(cp, &pin, &win, wra, wrb, wca, wcb, c0, c1, cs, cp->pad_top, 3, h, w, cin, &c2.dw, fch, &o,
                        ra, rb1, ca, cb1, C);
        } else fx_chw(cp, &ci, &win, wra, wrb, wca, wcb, &c2.dw, fch, &o, ra, rb1, ca, cb1, C);
      }
    check(pulled ? "fx_pulled_chw conv + depthwise by channel" : "fx_chw conv + depthwise by channel", t, g_ref, g_opt,
          out.h * out.w * C);
  }
  fused_chw_groups();
}

/* fx_pw (MAXIMUM, MINIMUM), fx_unary (RELU6), the ring shifts, MEAN and iterative dense over tiles
   of strided buffers, against results computed here or by the reference kernels run whole. */
static void test_fused_elementwise(void) {
  for (int32_t t = 0; t < 16; t++) {
    const int32_t h = ri(1, 9), w = ri(1, 9), ch = ri(1, 12), pa = ch + ri(0, 3), pb = ch + ri(0, 3), po = ch + ri(0, 3);
    fill(g_in, h * w * pa + 8); fill(g_in2, h * w * pb + 8);
    fill(g_opt, h * w * po + 8); copy(g_ref, g_opt, h * w * po + 8);
    const fx_buf a = {g_in, 0, 0, w, pa, 0}, b = {g_in2, 0, 0, w, pb, 0}, o = {g_opt, 0, 0, w, po, 0};
    const int kind = t % 3 == 0 ? FX_MAX : t % 3 == 1 ? FX_MIN : FX_RELU6;
    const bt_bcast4 q = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
    const int32_t bounds[2] = {ri(-128, 0), ri(0, 127)};
    int32_t rbnd[FX_MAXR + 1], cbnd[FX_MAXR + 1];
    const int32_t nr = fx_split(h, rbnd), nc = fx_split(w, cbnd);
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) {
        if (kind == FX_RELU6) fx_unary(kind, bounds, 0, &a, &o, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
        else fx_pw(kind, &q, &a, &b, &o, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
      }
    for (int32_t p = 0; p < h * w; p++)
      for (int32_t i = 0; i < ch; i++) {
        const int32_t x = g_in[p * pa + i], y = g_in2[p * pb + i];
        g_ref[p * po + i] = (int8_t)(kind == FX_MAX ? BT_MAX(x, y) : kind == FX_MIN ? BT_MIN(x, y)
                                                                   : bt_clamp(x, bounds[0], bounds[1]));
      }
    check(kind == FX_RELU6 ? "fx_unary relu6" : "fx_pw max/min", t, g_ref, g_opt, h * w * po + 8);
  }
  for (int32_t t = 0; t < 16; t++) {  /* ring shifts: rows (whole rows) or columns (per row) */
    const int32_t rows = ri(1, 6), ext = ri(2, 8), ch = ri(1, 9), n = ri(1, ext - 1), by_cols = t & 1;
    const int32_t bytes = rows * ext * ch;
    fill(g_opt, bytes + 8); copy(g_ref, g_opt, bytes + 8);
    if (by_cols) {
      for (int32_t y = 0; y < rows; y++) copy(g_ref + y * ext * ch, g_opt + (y * ext + n) * ch, (ext - n) * ch);
      fx_shift_cols(g_opt, rows, ext, ch, n);
    } else {  /* ext rows of rows*ch bytes */
      copy(g_ref, g_opt + n * rows * ch, (ext - n) * rows * ch);
      fx_shift_rows(g_opt, ext, rows * ch, n);
    }
    check(by_cols ? "fx_shift_cols" : "fx_shift_rows", t, g_ref, g_opt, bytes + 8);
  }
  for (int32_t t = 0; t < 16; t++) {  /* MEAN: int16 and int32 sums over tiles */
    const int32_t h = ri(1, 16), w = ri(1, 16), ch = ri(1, 24), ps = ch + ri(0, 3);
    fill(g_in, h * w * ps + 8);
    const fx_buf a = {g_in, 0, 0, w, ps, 0};
    int16_t s16[32] = {0};
    int32_t s32[32] = {0}, direct[32] = {0};
    int32_t rbnd[FX_MAXR + 1], cbnd[FX_MAXR + 1];
    const int32_t nr = fx_split(h, rbnd), nc = fx_split(w, cbnd);
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) {
        fx_accumulate16(s16, &a, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
        fx_accumulate32(s32, &a, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], ch);
      }
    for (int32_t p = 0; p < h * w; p++)
      for (int32_t i = 0; i < ch; i++) direct[i] += g_in[p * ps + i];
    const int32_t zp = ri(-128, 127), mult = (int32_t)(0x40000000u + (rnd() & 0x3fffffffu)), shift = -ri(0, 8);
    const int32_t ozp = ri(-128, 127);
    fx_mean_done16(s16, g_opt, ch, zp * h * w, mult, shift, ozp);
    fx_mean_done32(s32, g_opt + 32, ch, zp * h * w, mult, shift, ozp);
    for (int32_t i = 0; i < ch; i++) {
      const int32_t v = bt_mbqm(direct[i] - zp * h * w, mult, shift) + ozp;
      g_ref[i] = g_ref[32 + i] = (int8_t)bt_clamp(v, -128, 127);
    }
    check("fx_mean16", t, g_ref, g_opt, ch);
    check("fx_mean32", t, g_ref + 32, g_opt + 32, ch);
  }
  for (int32_t t = 0; t < 16; t++) {  /* iterative dense: tiles of a strided map vs the FC run whole */
    const int32_t h = ri(1, 6), w = ri(1, 6), ch = ri(1, 12), ps = ch + ri(0, 3);
    bt_fc_params p;
    p.n_in = h * w * ch; p.n_out = ri(1, 24); p.batches = 1;
    p.input_offset = ri(-127, 128); p.output_offset = ri(-128, 127); p.filter_offset = 0;
    rand_act(&p.act_min, &p.act_max, p.output_offset);
    fill(g_w, p.n_in * p.n_out); p.weights = g_w;
    for (int32_t i = 0; i < p.n_out; i++) g_bias[i] = ri(-30000, 30000);
    p.bias = (rnd() % 4) ? g_bias : NULL;
    p.per_channel = (int32_t)(rnd() & 1);
    rand_quant(p.n_out, 14 + ilog2((uint32_t)p.n_in) / 2);
    p.multiplier = g_mult; p.shift = g_shift;
    fill(g_in, h * w * ps + 8);
    for (int32_t q = 0; q < h * w; q++) copy(g_in2 + q * ch, g_in + q * ps, ch);
    fill(g_ref, p.n_out + 8); copy(g_opt, g_ref, p.n_out + 8);
    ref_bt_fully_connected_s8(&p, g_in2, g_ref);
    int32_t acc[32] = {0};
    const fx_buf a = {g_in, 0, 0, w, ps, 0};
    int32_t rbnd[FX_MAXR + 1], cbnd[FX_MAXR + 1];
    const int32_t nr = fx_split(h, rbnd), nc = fx_split(w, cbnd);
    for (int32_t i = 0; i < nr; i++)
      for (int32_t j = 0; j < nc; j++) fx_dense_acc(acc, &p, &a, rbnd[i], rbnd[i + 1], cbnd[j], cbnd[j + 1], w, ch);
    fx_dense_done(acc, &p, g_opt);
    check("fx_dense", t, g_ref, g_opt, p.n_out + 8);
  }
  for (int32_t t = 0; t < 16; t++) {  /* 1x1 convolution in place (out channels <= in channels) */
    const int32_t h = ri(1, 8), w = ri(1, 8), cin = ri(1, 16), cout = ri(1, cin);
    bt_conv_params p;
    gen_conv(&p, h, w, cin, cout, 1, 1, 1, 1, 1, 1, 0, cin, cout, 0);
    fill(g_in, h * w * cin + 8);
    fill(g_ref, h * w * cout + 8);
    ref_bt_conv_s8(&p, g_in, 0, g_ref, 0, h);
    copy(g_opt, g_in, h * w * cin + 8);
    const fx_buf i0 = {g_opt, 0, 0, w, cin, 0}, o = {g_opt, 0, 0, w, cout, 0};
    fx_conv_inplace(&p, &i0, &o, 0, h, 0, w);
    check("fx_conv_inplace", t, g_ref, g_opt, h * w * cout);
  }
}
