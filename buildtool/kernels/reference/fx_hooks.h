/* fx_hooks.h -- the reference tile runtime's two hooks (fused.c: FX_SET_PATHS) for a kernel set with
   its own one-channel conv (conv1_prep / conv1_rows over state FX_CONV1) and depthwise (dw1) paths:
   included by that set's fused.c after ../reference/fused_ref.h (cortex-m and riscv share it). */
#ifndef FX_CONV1
#error "define FX_CONV1 (the set's one-channel conv state type) before including fx_hooks.h"
#endif

/* A whole box (reference: win_kind): one-channel convs and depthwises here, in one call per box;
   everything else is left to the reference. One function per kind, fx_k_box inline over them: a runtime
   function of one kind (fx_win_dw, fx_win_k ...) links only that kind's paths. */
__attribute__((noinline)) static int fx_k_box_conv(const fx_prm *q, const fx_buf *in, const box_dst *d, int32_t ra,
                                                   int32_t rb, int32_t x0) {
  FX_CONV1 st;
  if (q->c.out.c != 1 || !conv1_prep(&q->c, &st)) return 0;
  const box_src s = {in->rows ? 0 : fx_at(in, in->r0, x0), in->r0, in->wp * in->ps, in->rows,
                     in->rows ? x0 * in->ps : 0};
  conv1_rows(&q->c, &st, &s, d, ra, rb);
  return 1;
}
__attribute__((noinline)) static int fx_k_box_dw(const fx_prm *q, const fx_buf *in, const box_dst *d, int32_t ra,
                                                 int32_t rb, int32_t x0) {
  return dw1(&q->d, fx_at(in, in->r0, x0), in->r0, d, ra, rb);
}
static inline __attribute__((always_inline)) int fx_k_box(int kind, const fx_prm *q, const fx_buf *in,
                                                          const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                                                          int32_t oc, int32_t x0) {
  const box_dst d = {out, ca, oc};
  if (kind == FX_CONV) return fx_k_box_conv(q, in, &d, ra, rb, x0);
  if (kind == FX_DW && !in->rows) return fx_k_box_dw(q, in, &d, ra, rb, x0);
  return 0;
}

/* A set may keep its one-channel paths' geometry across a window's channels: FX_CONV1_CHAN(p, st, first)
   and, with FX_DW1_CHAN its state type, dw1_ch(dp, in, in_y0, d, y0, y1, state, first) (first 0: a
   later channel of the same tile, only the channel's values to work out). */
#ifndef FX_CONV1_CHAN
#define FX_CONV1_CHAN(p, st, first) conv1_prep(p, st)
#endif
#ifndef FX_CONV1_ROW1   /* a set may have its own path for one output row (a pulled conv's) */
#define conv1_row1(p, st, s, d, y) conv1_rows(p, st, s, d, y, (y) + 1)
#endif
#ifndef FX_DW1_CHAN
typedef int fx_dw1_none;
#define FX_DW1_CHAN fx_dw1_none
#define dw1_ch(dp, in, in_y0, d, y0, y1, w, first) ((void)(w), dw1(dp, in, in_y0, d, y0, y1))
#endif

/* A one-channel window's tile (fx_chw): both operators' geometry once, then per channel the set's
   one-channel conv and depthwise paths on the channel's filter, bias and requantisation (fx_win
   for a channel they decline). fallback 0 (a set's entry where code generation proved the paths take every
   channel of every tile, riscv/fused.c fx_chw_rv): no fx_win calls, so the link holds none of their code; a
   tile or channel the paths decline traps. */
FX_ALWAYS int chw1_b(const int fallback, const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra,
                     int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, const int8_t *fch, const fx_buf *out,
                     int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
  if (win->ps != 1 || win->rows) {
    if (!fallback) __builtin_trap();
    return 0;
  }
  fx_prm cq, dq;
  const int32_t cx0 = win_geom(FX_CONV, cprm, cin, win, wca, wcb, 0, 0, &cq);
  const int32_t dx0 = win_geom(FX_DW, dprm, win, out, ca, cb, 0, fch, &dq);
  bt_conv_params *const c = &cq.c, *const d = &dq.d.conv;
  const box_src s = {cin->rows ? 0 : fx_at(cin, cin->r0, cx0), cin->r0, cin->wp * cin->ps, cin->rows,
                     cin->rows ? cx0 * cin->ps : 0};
  const box_dst cd = {win, wca, 0};
  box_dst dd = {out, ca, 0};
  const int8_t *const din = fx_at(win, win->r0, dx0);
  const int32_t K = c->kh * c->kw * c->in.c, T = d->kh * d->kw;
  FX_CONV1 st;
  FX_DW1_CHAN dw;
  int conv_ok = 0, dw_ok = 0;   /* the set's path took channel 0 (geometry kept) */
  for (int32_t ch = 0; ch < channels; ch++) {
    conv_ok = FX_CONV1_CHAN(c, &st, !conv_ok);
#ifdef FX_CONV1_PAIR
    /* the set's path for two channels at once: channel ch + 1 into a copy of the window (win2, in the
       set's scratch), each input pixel read for both; then both channels' depthwise */
    fx_buf win2;
    if (conv_ok && ch + 1 < channels && FX_CONV1_PAIR(c, K, &st, &s, win, wca, wra, wrb, &win2)) {
      dd.oc = ch;
      dw_ok = dw1_ch(&dq.d, din, win->r0, &dd, ra, rb, &dw, !dw_ok);
      if (!dw_ok) fx_win(FX_DW, dprm, win, out, ra, rb, ca, cb, ch, fch);
      d->filter += T; d->multiplier++; d->shift++;
      if (d->bias) d->bias++;
      dd.oc = ch + 1;
      dw_ok = dw1_ch(&dq.d, fx_at(&win2, win->r0, dx0), win->r0, &dd, ra, rb, &dw, !dw_ok);
      if (!dw_ok) fx_win(FX_DW, dprm, &win2, out, ra, rb, ca, cb, ch + 1, fch);
      c->filter += 2 * K; c->multiplier += 2; c->shift += 2;
      if (c->bias) c->bias += 2;
      d->filter += T; d->multiplier++; d->shift++;
      if (d->bias) d->bias++;
      ch++;
      continue;
    }
#endif
    if (conv_ok) conv1_rows(c, &st, &s, &cd, wra, wrb);
    else if (fallback) fx_win_k(cprm, FX_CONV_FEW, cin, win, wra, wrb, wca, wcb, ch);   /* one output channel */
    else __builtin_trap();
    dd.oc = ch;
    dw_ok = dw1_ch(&dq.d, din, win->r0, &dd, ra, rb, &dw, !dw_ok);
    if (dw_ok) {
    } else if (fallback) fx_win(FX_DW, dprm, win, out, ra, rb, ca, cb, ch, fch);
    else __builtin_trap();
    c->filter += K; c->multiplier++; c->shift++;
    if (c->bias) c->bias++;
    d->filter += T; d->multiplier++; d->shift++;
    if (d->bias) d->bias++;
  }
  return 1;
}
__attribute__((noinline)) static int fx_k_chw1(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra,
                                              int32_t wrb, int32_t wca, int32_t wcb, const void *dprm,
                                              const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb,
                                              int32_t ca, int32_t cb, int32_t channels) {
  return chw1_b(1, cprm, cin, win, wra, wrb, wca, wcb, dprm, fch, out, ra, rb, ca, cb, channels);
}

/* fx_chw_k's hook (its arguments; 1 when it did the work): a set with FX_CHW_GROUPS (several channels at a time,
   through the layers' kernels ck, dk) first, then fx_k_chw1 (one channel at a time, the set's paths); each its own
   frame (the stack of one, not both). */
#ifdef FX_CHW_GROUPS
__attribute__((noinline))
#endif
static int fx_k_chw(const void *cprm, fx_conv_kernel ck, const fx_buf *cin, const fx_buf *win, int32_t wra,
                    int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk, const int8_t *fch,
                    const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
#ifdef FX_CHW_GROUPS
  if (FX_CHW_GROUPS(cprm, ck, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels)) return 1;
#else
  (void)ck, (void)dk;
#endif
  return fx_k_chw1(cprm, cin, win, wra, wrb, wca, wcb, dprm, fch, out, ra, rb, ca, cb, channels);
}

/* A one-channel conv pulling its streamed input (reference: pulled_kind): the per-call values once,
   then per output row the input rows it needs and that row. */
__attribute__((noinline)) static int fx_k_pulled(int kind, const void *prm, const fx_buf *win, const fx_buf *out,
                                                 int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t ch,
                                                 int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k,
                                                 int32_t n_in, int32_t img_w, int32_t img_c) {
  if (kind != FX_CONV) return 0;
  const box_dst d = {out, ca, 0};
  fx_prm q;
  FX_CONV1 st;
  const int32_t x0 = win_geom(FX_CONV, prm, win, out, ca, cb, ch, 0, &q);
  if (q.c.out.c != 1 || !conv1_prep(&q.c, &st)) return 0;
  /* an output row's input rows go to the window's first physical rows: the same addresses every row */
  const int32_t pitch = win->wp * win->ps, img_row = img_w * img_c;
  int8_t *const dst = win->base + (ta - win->c0) * win->ps;
  box_src src = {win->base + (x0 - win->c0) * win->ps, 0, pitch, 0, 0};
  for (int32_t y = ra; y < rb; y++) {
    const int32_t r0 = BT_MAX(y * s - pad, 0), r1 = BT_MIN(y * s - pad + k, n_in);
    if (r1 > r0 && tb > ta)
      bt_read_input_rows((uint32_t)(r0 * img_row + ta * img_c), (uint32_t)((tb - ta) * img_c), (uint32_t)(r1 - r0),
                         (uint32_t)img_row, dst, (uint32_t)pitch);
    src.y0 = r0;
    conv1_row1(&q.c, &st, &src, &d, y);
  }
  return 1;
}
