/* fused.c -- the fused-plan tile runtime (reference set): tile loops over the bt_ kernels.
 * Generated model.c files hold only the per-model tables and calls (buildtool/codegen/fused_c.py);
 * the API is kernels/include/bt_fused.h. A kernel set may replace this file like any other. */
#include "bt_fused.h"
#include "requant.h"

#define FX_ALWAYS static inline __attribute__((always_inline))

/* A set's own paths: a set's fused.c may define FX_SET_PATHS, include this file and define
   fx_k_box(kind, q, in, out, ra, rb, ca, oc, x0), a whole box of a sliding-window operator (q: its
   parameters at the tile's geometry, output channel oc of out from column ca, x0: the input's first
   column), fx_k_chw (fx_chw_k's arguments) and fx_k_pulled (fx_pulled's arguments), and with
   FX_PULLED_CHW fx_k_pulled_chw (fx_pulled_chw's): each returns 1 when it did the work. */
typedef union { bt_conv_params c; bt_depthwise_params d; bt_pool_params p; } fx_prm;  /* a kernel's parameters */
#ifdef FX_SET_PATHS
static int fx_k_box(int kind, const fx_prm *q, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                    int32_t ca, int32_t oc, int32_t x0);
static int fx_k_chw(const void *cprm, fx_conv_kernel ck, const fx_buf *cin, const fx_buf *win, int32_t wra,
                    int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk, const int8_t *fch,
                    const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels);
static int fx_k_pulled(int kind, const void *prm, const fx_buf *win, const fx_buf *out, int32_t ra, int32_t rb,
                       int32_t ca, int32_t cb, int32_t ch, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k,
                       int32_t n_in, int32_t img_w, int32_t img_c);
#ifdef FX_PULLED_CHW   /* and fx_k_pulled_chw (fx_pulled_chw's arguments) */
static int fx_k_pulled_chw(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb,
                           int32_t wca, int32_t wcb, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k,
                           int32_t n_in, int32_t img_w, int32_t img_c, const void *dprm, const int8_t *fch,
                           const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels);
#endif
#else
#define fx_k_box(kind, q, in, out, ra, rb, ca, oc, x0) 0
#define fx_k_chw(cprm, ck, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels) 0
#define fx_k_pulled(kind, prm, win, out, ra, rb, ca, cb, ch, ta, tb, s, pad, k, n_in, img_w, img_c) 0
#endif
#ifndef FX_PULLED_CHW
#define fx_k_pulled_chw(cprm, cin, win, wra, wrb, wca, wcb, ta, tb, s, pad, k, n_in, img_w, img_c, dprm, fch, out, \
                        ra, rb, ca, cb, channels) 0
#endif

/* Struct and window copies without libc (bt_copy.h; the boards link no memcpy). */
#include "bt_copy.h"
/* Four words as one value (a block copy: LDM / STM where the target has them). */
typedef struct { uint32_t w[4]; } __attribute__((may_alias)) fx_quad;

/* A struct copy (word aligned): four words at a time, then words, then any tail bytes. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void fx_get(void *dst, const void *src, int32_t n) {
  bt_word *d = dst;
  const bt_word *s = src;
  int32_t i = 0;
  for (; i + 4 <= n / 4; i += 4) *(fx_quad *)(d + i) = *(const fx_quad *)(s + i);
  for (; i < n / 4; i++) d[i] = s[i];
  for (int32_t i = n & ~3; i < n; i++) ((int8_t *)dst)[i] = ((const int8_t *)src)[i];
}

/* A cached window's ring moves n positions down (oldest out) along rows / columns. */
void fx_shift_rows(int8_t *w, int32_t ext, int32_t row_bytes, int32_t n) {
  bt_copy_bytes(w, w + n * row_bytes, (ext - n) * row_bytes);
}
void fx_shift_cols(int8_t *w, int32_t rows, int32_t ext, int32_t ch, int32_t n) {
  const int32_t row = ext * ch, off = n * ch, len = (ext - n) * ch;
  for (int32_t y = 0; y < rows; y++, w += row) bt_copy_bytes(w, w + off, len);
}

/* One output row y of a sliding-window operator whose input rows are at rows[iy] (row bands): rows_kind, inline over
   a conv or depthwise (fx_rows_cd) and a pool (fx_rows_pool), so that a plan whose windows on row bands are convs and
   depthwises (win_kind_o, kind a constant) links no pool code. */
FX_ALWAYS void rows_kind(int kind, const void *prm, int8_t *const *rows, int32_t x0, int8_t *out, int32_t y) {
  if (kind == FX_CONV || kind == FX_DW) {
    const bt_conv_params *p = kind == FX_DW ? &((const bt_depthwise_params *)prm)->conv : prm;
    const int32_t iy0 = y * p->stride_h - p->pad_top, c = p->in.c, ps = p->in.pixel_stride;
    int32_t ky0 = 0, ky1 = p->kh;  /* valid tap rows and, per pixel, columns: no per-tap checks */
    while (ky0 < ky1 && iy0 + ky0 * p->dil_h < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * p->dil_h >= p->in.h) ky1--;
    for (int32_t x = 0; x < p->out.w; x++) {
      int8_t *o = out + x * p->out.pixel_stride;
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0 = 0, kx1 = p->kw;
      while (kx0 < kx1 && ix0 + kx0 * p->dil_w < 0) kx0++;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dil_w >= p->in.w) kx1--;
      /* conv taps kx0..kx1 of one row are one run of bytes when pixels are dense and undilated */
      const int32_t run = kind == FX_CONV && p->dil_w == 1 && ps == c ? (kx1 - kx0) * c : 0;
      for (int32_t oc = 0; oc < p->out.c; oc++) {
        int32_t acc = 0;
        for (int32_t ky = ky0; ky < ky1; ky++) {
          const int8_t *irow = rows[iy0 + ky * p->dil_h] + (x0 + ix0) * ps;
          if (run) {
            const int8_t *ip = irow + kx0 * c, *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx0) * c;
            for (int32_t i = 0; i < run; i++) acc += (int32_t)fp[i] * ((int32_t)ip[i] + p->input_offset);
            continue;
          }
          for (int32_t kx = kx0; kx < kx1; kx++) {
            const int8_t *ip = irow + kx * p->dil_w * ps;
            if (kind == FX_DW) {
              acc += (int32_t)p->filter[(ky * p->kw + kx) * p->out.c + oc] * ((int32_t)ip[oc] + p->input_offset);
            } else {
              const int8_t *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx) * c;
              for (int32_t ic = 0; ic < c; ic++) acc += (int32_t)fp[ic] * ((int32_t)ip[ic] + p->input_offset);
            }
          }
        }
        if (p->bias) acc += p->bias[oc];
        acc = bt_mbqm(acc, p->multiplier[oc], p->shift[oc]) + p->output_offset;
        o[oc] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
      }
    }
    return;
  }
  const bt_pool_params *p = prm;
  const int32_t oy = y * p->stride_h - p->pad_top;
  const int32_t fy0 = BT_MAX(0, -oy), fy1 = BT_MIN(p->filter_h, p->in.h - oy);
  for (int32_t x = 0; x < p->out.w; x++) {
    const int32_t ox = x * p->stride_w - p->pad_left;
    const int32_t fx0 = BT_MAX(0, -ox), fx1 = BT_MIN(p->filter_w, p->in.w - ox);
    int8_t *o = out + x * p->out.pixel_stride;
    for (int32_t c = 0; c < p->in.c; c++) {
      int32_t acc = kind == FX_MAXP ? -128 : 0, n = 0;
      for (int32_t fy = fy0; fy < fy1; fy++) {
        const int8_t *row = rows[oy + fy] + x0 * p->in.pixel_stride + c;
        for (int32_t fx = fx0; fx < fx1; fx++) {
          const int32_t v = row[(ox + fx) * p->in.pixel_stride];
          if (kind == FX_MAXP) acc = BT_MAX(acc, v); else acc += v;
          n++;
        }
      }
      if (kind == FX_AVGP) acc = n == 0 ? 0 : acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
      o[c] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
    }
  }
}
__attribute__((noinline)) static void fx_rows_cd(int kind, const void *prm, int8_t *const *rows, int32_t x0,
                                                 int8_t *out, int32_t y) {
  rows_kind(kind == FX_DW ? FX_DW : FX_CONV, prm, rows, x0, out, y);
}
__attribute__((noinline)) static void fx_rows_pool(int kind, const void *prm, int8_t *const *rows, int32_t x0,
                                                   int8_t *out, int32_t y) {
  rows_kind(kind == FX_MAXP ? FX_MAXP : FX_AVGP, prm, rows, x0, out, y);
}
/* win_kind_o's row of one kind (a constant there) */
FX_ALWAYS void rows_of(int kind, const void *prm, int8_t *const *rows, int32_t x0, int8_t *out, int32_t y) {
  if (kind == FX_CONV || kind == FX_DW) fx_rows_cd(kind, prm, rows, x0, out, y);
  else fx_rows_pool(kind, prm, rows, x0, out, y);
}
void fx_rows(int kind, const void *prm, int8_t *const *rows, int32_t x0, int8_t *out, int32_t y) {
  rows_of(kind, prm, rows, x0, out, y);
}

/* q = prm at a tile's geometry: input in, output columns [ca, cb) of out; ch >= 0: only the n channels
   from ch that a channelwise window holds (n: its pixel stride; a conv's filters ch.. into the window;
   a depthwise on the window into channels ch.. of out, with the filter regrouped per n channels in
   fch). Returns the input's first column x0. */
FX_ALWAYS int32_t win_geom(int kind, const void *prm, const fx_buf *in, const fx_buf *out, int32_t ca, int32_t cb,
                           int32_t ch, const int8_t *fch, fx_prm *q) {
  bt_shape *is, *os;
  int32_t *pad_left, s, k;
  if (kind == FX_CONV || kind == FX_DW) {
    bt_conv_params *c = &q->c;
    if (kind == FX_DW) { fx_get(&q->d, prm, sizeof q->d); c = &q->d.conv; }
    else fx_get(&q->c, prm, sizeof q->c);
    is = &c->in; os = &c->out; pad_left = &c->pad_left;
    s = c->stride_w; k = (c->kw - 1) * c->dil_w + 1;
    if (ch >= 0) {  /* channels [ch, ch + n): n is the channelwise window's channel count */
      const int32_t n = kind == FX_CONV ? out->ps : in->ps;
      if (kind == FX_CONV) c->filter += ch * c->kh * c->kw * c->in.c;
      else { c->filter = fch + ch * c->kh * c->kw; is->c = n; }
      if (c->bias) c->bias += ch;
      c->multiplier += ch;
      c->shift += ch;
      os->c = n;
    }
  } else {
    fx_get(&q->p, prm, sizeof q->p);
    is = &q->p.in; os = &q->p.out; pad_left = &q->p.pad_left;
    s = q->p.stride_w; k = q->p.filter_w;
  }
  const int32_t w = is->w, nlo = ca * s - *pad_left, nhi = (cb - 1) * s - *pad_left + k;
  int32_t x0 = in->rows ? 0 : nlo < 0 ? 0 : nhi > w ? w - in->wp : in->c0;
  *pad_left += x0 - ca * s;
  if (k == 1 && *pad_left < 0 && cb - ca > 1) {
    /* a 1-wide filter reads from column -pad_left on: start there (one output column keeps the offset:
       a set's unpadded 1x1 path may cost more than its general path on one pixel, as riscv's does) */
    x0 -= *pad_left;
    *pad_left = 0;
  }
  is->w = in->wp; is->pixel_stride = in->ps;
  os->w = cb - ca; os->pixel_stride = out->ps;
  return x0;
}

/* FX_ROW_RUNS 1 (a set's fused.c, before including this file): a 1x1 conv on row bands is called once per
   run of rows (win_kind); 0: once per row (riscv32 and cortex-m55 measured a little slower on mcunet-vww1's
   least-RAM plan in the arena with the runs). */
#ifndef FX_ROW_RUNS
#define FX_ROW_RUNS 0
#endif
/* FX_COL_CALLS n > 0 (a set's fused.c, before including this file): a 1x1 stride-1 conv without padding over a
   box of h rows and w <= n columns, h > w, is called once per column (its pixels a row pitch apart as one row of
   h pixels: col_calls), on row bands too for each run of rows one row pitch apart; 0: only one-column boxes of
   windows. (A column's pixels are not one run of bytes: a patch-matrix conv gathers them, so wider boxes keep
   one call per row.) */
#ifndef FX_COL_CALLS
#define FX_COL_CALLS 0
#endif
static inline int col_calls(int32_t h, int32_t w) { return w <= FX_COL_CALLS && h > w; }

/* A 1x1 conv's geometry for one column of in and out as one row (its pixels a row pitch apart; in.w and out.w:
   the caller's pixel count). */
static inline void col_geom(bt_conv_params *c, const fx_buf *in, const fx_buf *out) {
  c->in.h = c->out.h = 1;
  c->in.pixel_stride = in->wp * in->ps;
  c->out.pixel_stride = out->wp * out->ps;
  c->pad_left = 0;
}

/* 1 when row-banded rows [a, b) each lie `pitch` bytes after the row before. */
static inline int rows_follow(int8_t *const *rows, int32_t a, int32_t b, int32_t pitch) {
  for (int32_t r = a; r < b; r++)
    if (rows[r] != rows[r - 1] + pitch) return 0;
  return 1;
}

/* win_kind_o's only: every call of the entry takes one path, which code generation proved (codegen/fused_c.py
   win_entry): FX_ONLY_BOX the input not row-banded and no column calls; FX_ONLY_ROWS the input row-banded and no
   column calls. 0: any. */
#define FX_ONLY_BOX 1
#define FX_ONLY_ROWS 2
/* Output rows [ra, rb) x cols [ca, cb) of a sliding-window operator, from buffer in into out
   (ch, fch: as win_geom); a conv's kernel calls go to conv (bt_conv_s8 or model.c's tile kernel), a depthwise's
   to dw (bt_depthwise_s8 or the variant code generation chose for the layer); box 0: not through the set's own
   paths (fx_k_box); only: FX_ONLY_BOX, FX_ONLY_ROWS or 0. */
FX_ALWAYS void win_kind_o(int kind, int box, int only, const void *prm, fx_conv_kernel conv, fx_dw_kernel dw,
                          const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                          int32_t ch, const int8_t *fch) {
  fx_prm q;
  const int32_t x0 = win_geom(kind, prm, in, out, ca, cb, ch, fch, &q);
  const bt_shape *is = kind == FX_CONV || kind == FX_DW ? &q.c.in : &q.p.in;
  const int32_t kh = kind == FX_CONV || kind == FX_DW ? q.c.kh : q.p.filter_h;
  const int32_t oc = ch >= 0 && kind == FX_DW ? ch : 0;
  if (box && fx_k_box(kind, &q, in, out, ra, rb, ca, oc, x0)) return;
  if (!only && FX_COL_CALLS && kind == FX_CONV && in->rows && rb - ra > 1 && !out->rows && q.c.kh == 1 && q.c.kw == 1 &&
      q.c.stride_h == 1 && q.c.stride_w == 1 && q.c.pad_top == 0 && q.c.pad_left == x0 - ca &&
      (cb - ca == 1 || (cb - ca != out->wp && col_calls(rb - ra, cb - ca)))) {
    /* the column calls below on row bands: per run of rows one row pitch apart, where col_calls says so (other
       rows one call each, as the row-band loop makes them) */
    bt_conv_params cq;
    fx_get(&cq, &q.c, sizeof cq);
    col_geom(&cq, in, out);
    for (int32_t y = ra, y1; y < rb; y = y1) {
      for (y1 = y + 1; y1 < rb && in->rows[y1] == in->rows[y1 - 1] + cq.in.pixel_stride; y1++) continue;
      if (cb - ca > 1 && !col_calls(y1 - y, cb - ca)) {
        for (; y < y1; y++) conv(&q.c, in->rows[y] + x0 * in->ps, y, fx_at(out, y, ca) + oc, y, y + 1);
        continue;
      }
      cq.in.w = cq.out.w = y1 - y;
      for (int32_t x = ca; x < cb; x++) conv(&cq, fx_at(in, y, x), 0, fx_at(out, y, x) + oc, 0, 1);
    }
    return;
  }
  if (only != FX_ONLY_BOX && (only == FX_ONLY_ROWS || in->rows)) {
    /* row bands: one kernel call per output row whose input rows lie one after another
       (the rows of one band; a 1x1 with FX_ROW_RUNS: per run of such rows whose output rows
       lie one after another too, the kernel's row pitch out.w * out.pixel_stride), else fx_rows */
    const int32_t pitch = in->wp * in->ps, opitch = (cb - ca) * out->ps;
    const int runs = FX_ROW_RUNS && kh == 1 && (out->rows || cb - ca == out->wp);   /* rows one after another */
    for (int32_t y = ra; y < rb; y++) {
      int8_t *o = fx_at(out, y, ca) + oc;
      if (kind == FX_CONV || kind == FX_DW) {
        const int32_t sh = q.c.stride_h, span = (kh - 1) * q.c.dil_h + 1, iy = y * sh - q.c.pad_top;
        const int32_t r0 = BT_MAX(iy, 0);
        int32_t r1 = BT_MIN(iy + span, is->h);
        if (r1 > r0 && in->rows[r1 - 1] - in->rows[r0] == (r1 - 1 - r0) * pitch) {
          int32_t y1 = y + 1;
          if (runs)
            for (; y1 < rb && fx_at(out, y1, ca) + oc == o + (y1 - y) * opitch; y1++) {
              const int32_t n1 = BT_MIN(y1 * sh - q.c.pad_top + span, is->h);
              if (n1 > r1 && !rows_follow(in->rows, r1, n1, pitch)) break;
              if (n1 > r1) r1 = n1;
            }
          const int8_t *row = in->rows[r0] + x0 * in->ps;
          if (kind == FX_CONV) conv(&q.c, row, r0, o, y, y1);
          else dw(&q.d, row, r0, o, y, y1);
          y = y1 - 1;
          continue;
        }
      }
      rows_of(kind, &q, in->rows, x0, o, y);
    }
    return;
  }
  if (!only && kind == FX_CONV &&
      (cb - ca == 1 || (FX_COL_CALLS && cb - ca != out->wp && col_calls(rb - ra, cb - ca))) && rb - ra > 1 &&
      !out->rows && q.c.kh == 1 && q.c.kw == 1 && q.c.stride_h == 1 && q.c.stride_w == 1 && q.c.pad_top == 0 &&
      q.c.pad_left == x0 - ca) {
    /* a 1x1 over one column of a wider window (a cached-columns tile; with FX_COL_CALLS, over each column of a
       box col_calls picks): its pixels, a row pitch apart, as one row of rb - ra pixels, in one call instead of
       one call per pixel (row-band inputs, whose rows lie anywhere, came in above) */
    col_geom(&q.c, in, out);
    q.c.in.w = q.c.out.w = rb - ra;
    const int32_t xe = FX_COL_CALLS ? cb : ca + 1;   /* without FX_COL_CALLS, one column */
    for (int32_t x = ca; x < xe; x++) conv(&q.c, fx_at(in, ra, x), 0, fx_at(out, ra, x) + oc, 0, 1);
    return;
  }
  const int8_t *ip = fx_at(in, in->r0, x0);
  const int whole = !out->rows && ca == out->c0 && cb - ca == out->wp;
  for (int32_t y = ra; y < rb; y = whole ? rb : y + 1) {
    int8_t *o = fx_at(out, y, ca) + oc;
    const int32_t y1 = whole ? rb : y + 1;
    switch (kind) {
      case FX_CONV: conv(&q.c, ip, in->r0, o, y, y1); break;
      case FX_DW: dw(&q.d, ip, in->r0, o, y, y1); break;
      case FX_MAXP: bt_max_pool_s8(&q.p, ip, in->r0, o, y, y1); break;
      default: bt_avg_pool_s8(&q.p, ip, in->r0, o, y, y1); break;
    }
  }
}
#define win_kind_b(kind, box, prm, conv, dw, in, out, ra, rb, ca, cb, ch, fch) \
  win_kind_o(kind, box, 0, prm, conv, dw, in, out, ra, rb, ca, cb, ch, fch)
#define win_kind_d(kind, prm, conv, dw, in, out, ra, rb, ca, cb, ch, fch) \
  win_kind_b(kind, 1, prm, conv, dw, in, out, ra, rb, ca, cb, ch, fch)
#define win_kind(kind, prm, conv, in, out, ra, rb, ca, cb, ch, fch) \
  win_kind_d(kind, prm, conv, bt_depthwise_s8, in, out, ra, rb, ca, cb, ch, fch)
/* fx_win (bt_fused.h: inline, a call with a constant kind names one of these), one function per kind: a plan links
   only the kinds its blocks call, and only a conv window links the set's conv dispatcher bt_conv_s8 (its variants). */
void fx_win_conv(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                 int32_t ch) {
  win_kind(FX_CONV, prm, bt_conv_s8, in, out, ra, rb, ca, cb, ch, 0);
}
/* fx_win_conv on all the channels of a conv of more than one output channel: the set's box paths (fx_k_box, every
   set's conv path one output channel's, fx_hooks.h) never take it, so its code is not linked (riscv's conv1_row_k,
   41 KB: codegen/fused_c.py windowed). */
void fx_win_conv_all(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                     int32_t cb) {
  win_kind_b(FX_CONV, 0, prm, bt_conv_s8, bt_depthwise_s8, in, out, ra, rb, ca, cb, -1, 0);
}
void fx_win_dw(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
               int32_t ch, const int8_t *fch) {
  win_kind(FX_DW, prm, 0, in, out, ra, rb, ca, cb, ch, fch);
}
void fx_win_maxp(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                 int32_t ch) {
  win_kind(FX_MAXP, prm, 0, in, out, ra, rb, ca, cb, ch, 0);
}
void fx_win_avgp(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                 int32_t ch) {
  win_kind(FX_AVGP, prm, 0, in, out, ra, rb, ca, cb, ch, 0);
}
/* fx_win_avgp, fx_win_maxp on all channels where code generation proved every call reads row bands (codegen/fused_c.py
   windowed): win_kind_o's row loop alone (FX_ONLY_ROWS: no set's box path takes a pool on row bands), so the plan
   links neither the box loop nor the set's pool dispatcher with its variants (kws's least-RAM plan: 1.5 KB). */
void fx_win_avgpr(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                  int32_t cb) {
  win_kind_o(FX_AVGP, 0, FX_ONLY_ROWS, prm, 0, 0, in, out, ra, rb, ca, cb, -1, 0);
}
void fx_win_maxpr(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                  int32_t cb) {
  win_kind_o(FX_MAXP, 0, FX_ONLY_ROWS, prm, 0, 0, in, out, ra, rb, ca, cb, -1, 0);
}
void fx_win_pool(int kind, const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
                 int32_t cb, int32_t ch) {
  if (kind == FX_MAXP) fx_win_maxp(prm, in, out, ra, rb, ca, cb, ch);
  else fx_win_avgp(prm, in, out, ra, rb, ca, cb, ch);
}
/* The conv kernel of a conv on a group of fewer than FX_CHW_K_MIN channels, where the layer's kernel may not
   serve: the set's dispatcher unless the set's fused.c names the variant its dispatcher picks for fewer than
   FX_CHW_K_MIN output channels (so a plan whose layers have their own kernels links no other variant). */
#ifndef FX_CONV_FEW
#define FX_CONV_FEW bt_conv_s8
#endif
/* fx_win_k: a conv's own copy (the linker drops it when unused), for model.c's tile kernels, which make more than
   one output channel a call (codegen/fused_c.py tile_kernel): never the set's one-channel paths (fx_k_box), so a
   plan links those only when its blocks can reach them (fx_chw_k, a conv window through fx_win). The bytes are the
   same either way (fx_conv_kernel's contract). */
void fx_win_k(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
              int32_t ca, int32_t cb, int32_t ch) {
  win_kind_b(FX_CONV, 0, prm, kernel, bt_depthwise_s8, in, out, ra, rb, ca, cb, ch, 0);
}
/* fx_win_kb, fx_win_kr: fx_win_k where every call takes one path (win_kind_o's FX_ONLY_BOX, FX_ONLY_ROWS; code
   generation proves it, codegen/fused_c.py win_entry), without the others' code (the row-band or box loop, the
   column calls). */
void fx_win_kb(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
               int32_t ca, int32_t cb, int32_t ch) {
  win_kind_o(FX_CONV, 0, FX_ONLY_BOX, prm, kernel, bt_depthwise_s8, in, out, ra, rb, ca, cb, ch, 0);
}
void fx_win_kr(const void *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
               int32_t ca, int32_t cb, int32_t ch) {
  win_kind_o(FX_CONV, 0, FX_ONLY_ROWS, prm, kernel, bt_depthwise_s8, in, out, ra, rb, ca, cb, ch, 0);
}
/* The same through the set's one-channel paths, for the runtime's channel groups (any number of channels). */
__attribute__((noinline)) static void win_k_groups(const void *prm, fx_conv_kernel kernel, const fx_buf *in,
                                                   const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                                                   int32_t ch) {
  win_kind(FX_CONV, prm, kernel, in, out, ra, rb, ca, cb, ch, 0);
}
/* fx_win_dk (bt_fused.h: inline over these by ch, a constant in model.c): a depthwise's own copies (the linker
   drops them when unused). On all its channels (ch < 0) through the set's own box paths only when they take more
   than one channel (FX_BOX_ONE_CHANNEL 0: a set's fused.c sets 1 when its fx_k_box is fx_hooks.h's, whose
   depthwise path takes one channel): a plan whose depthwise windows hold all channels links no one-channel paths.
   The bytes are the same either way (fx_dw_kernel's contract). */
#ifndef FX_BOX_ONE_CHANNEL
#define FX_BOX_ONE_CHANNEL 0
#endif
void fx_win_dk_ch(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                  int32_t ca, int32_t cb, int32_t ch, const int8_t *fch) {
  win_kind_d(FX_DW, prm, 0, kernel, in, out, ra, rb, ca, cb, ch, fch);
}
__attribute__((noinline)) static void win_dk_ch0(const void *prm, fx_dw_kernel kernel, const fx_buf *in,
                                                 const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                                                 int32_t ch, const int8_t *fch) {
  win_kind_b(FX_DW, 0, prm, 0, kernel, in, out, ra, rb, ca, cb, ch, fch);
}
void fx_win_dk_all(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                   int32_t ca, int32_t cb, const int8_t *fch) {
  win_kind_b(FX_DW, !FX_BOX_ONE_CHANNEL, prm, 0, kernel, in, out, ra, rb, ca, cb, -1, fch);
}
/* fx_win_dk_cols (bt_fused.h): win_kind_o's box loop a column a call, each call's output row pitch its pixel stride. */
void fx_win_dk_cols(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                    int32_t ca, int32_t cb) {
  for (int32_t x = ca; x < cb; x++) {
    fx_prm q;
    const int32_t x0 = win_geom(FX_DW, prm, in, out, x, x + 1, -1, 0, &q);
    q.d.conv.out.pixel_stride = out->wp * out->ps;
    kernel(&q.d, fx_at(in, in->r0, x0), in->r0, fx_at(out, ra, x), ra, rb);
  }
}
/* fx_win_dk_all where the plan calls fx_chw_kg too, which links win_dk_ch0 (codegen/fused_c.py entries): with no box
   paths either way (FX_BOX_ONE_CHANNEL), win_dk_ch0's code on ch -1, one copy of the two (kws's least-RAM plan: 0.8
   KB; a plan without fx_chw_kg keeps fx_win_dk_all, whose constant ch makes it 0.1 KB smaller than win_dk_ch0) */
void fx_win_dk_allg(const void *prm, fx_dw_kernel kernel, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                    int32_t ca, int32_t cb, const int8_t *fch) {
#if FX_BOX_ONE_CHANNEL
  win_dk_ch0(prm, kernel, in, out, ra, rb, ca, cb, -1, fch);
#else
  fx_win_dk_all(prm, kernel, in, out, ra, rb, ca, cb, fch);
#endif
}

/* fx_chw_kg's group path when the set has one (FX_CHW_PM, fx_k_chw's arguments and few: its groups of fewer than
   FX_CHW_K_MIN channels' kernel) */
#ifndef FX_CHW_PM
#define FX_CHW_PM(wk, cprm, ck, few, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels) 0
#endif
/* fx_chw_k (paths 1): a set's own path, else group by group through the set's one-channel paths; fx_chw_kg (paths 0,
   code generation found that no tile takes them): the set's group path through the layers' kernels (FX_CHW_PM), else
   group by group with no box paths (the groups hold more than one channel: those paths decline them), so a plan
   links none of them. few: the conv kernel of a group of fewer than FX_CHW_K_MIN channels; wk: the fx_win_k entry
   fx_chw_kg's conv calls take (fx_chw_kgb, fx_chw_kgr: fx_win_kb, fx_win_kr). */
FX_ALWAYS void chw_k_b(int paths, fx_win_fn wk, const void *cprm, fx_conv_kernel ck, fx_conv_kernel few,
                       const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca, int32_t wcb,
                       const void *dprm, fx_dw_kernel dk, const int8_t *fch, const fx_buf *out, int32_t ra,
                       int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
  if (paths ? fx_k_chw(cprm, ck, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels)
            : FX_CHW_PM(wk, cprm, ck, few, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels))
    return;
  for (int32_t ch = 0; ch < channels; ch += win->ps) {
    fx_conv_kernel k = win->ps >= FX_CHW_K_MIN ? ck : few;
    if (paths) {
      win_k_groups(cprm, k, cin, win, wra, wrb, wca, wcb, ch);
      fx_win_dk(dprm, dk, win, out, ra, rb, ca, cb, ch, fch);
    } else {
      wk(cprm, k, cin, win, wra, wrb, wca, wcb, ch);
      win_dk_ch0(dprm, dk, win, out, ra, rb, ca, cb, ch, fch);
    }
  }
}
void fx_chw_k(const void *cprm, fx_conv_kernel ck, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb,
              int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk, const int8_t *fch, const fx_buf *out,
              int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t channels) {
  chw_k_b(1, 0, cprm, ck, FX_CONV_FEW, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels);
}
void fx_chw_kg(const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin, const fx_buf *win,
               int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
               const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
               int32_t channels) {
  chw_k_b(0, fx_win_k, cprm, ck, few, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels);
}
/* fx_chw_kg on fx_win_kb's or fx_win_kr's path (bt_fused.h) */
void fx_chw_kgb(const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin, const fx_buf *win,
                int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
                const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                int32_t channels) {
  chw_k_b(0, fx_win_kb, cprm, ck, few, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels);
}
void fx_chw_kgr(const void *cprm, fx_conv_kernel ck, fx_conv_kernel few, const fx_buf *cin, const fx_buf *win,
                int32_t wra, int32_t wrb, int32_t wca, int32_t wcb, const void *dprm, fx_dw_kernel dk,
                const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb,
                int32_t channels) {
  chw_k_b(0, fx_win_kr, cprm, ck, few, cin, win, wra, wrb, wca, wcb, dprm, dk, fch, out, ra, rb, ca, cb, channels);
}
void fx_chw(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
            int32_t wcb, const void *dprm, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
            int32_t cb, int32_t channels) {
  fx_chw_k(cprm, bt_conv_s8, cin, win, wra, wrb, wca, wcb, dprm, bt_depthwise_s8, fch, out, ra, rb, ca, cb, channels);
}

/* An element-wise ADD/SUB/MUL/MAXIMUM/MINIMUM over rows [ra, rb) x cols [ca, cb), one row per call. */
#ifndef FX_ADD_DENSE_S8   /* the set's ADD without its table path (bt_fused.h FX_ADD_DENSE) */
#define FX_ADD_DENSE_S8 bt_add_s8
#endif
FX_ALWAYS void pw_kind(int kind, const void *prm, const fx_buf *a, const fx_buf *b, const fx_buf *o, int32_t ra,
                       int32_t rb, int32_t ca, int32_t cb, int32_t ch) {
  union { bt_add_params a; bt_mul_params m; bt_bcast4 x; } q;
  bt_bcast4 *s;
  if (kind == FX_ADD || kind == FX_ADD_DENSE || kind == FX_SUB) { fx_get(&q.a, prm, sizeof q.a); s = &q.a.b; }
  else if (kind == FX_MUL) { fx_get(&q.m, prm, sizeof q.m); s = &q.m.b; }
  else { fx_get(&q.x, prm, sizeof q.x); s = &q.x; }
  const int32_t dims[4] = {1, 1, cb - ca, ch};
  for (int i = 0; i < 4; i++) {
    s->dims[i] = dims[i];
    s->a_stride[i] = i == 3 ? 1 : i == 2 ? a->ps : 0;
    s->b_stride[i] = i == 3 ? 1 : i == 2 ? b->ps : 0;
    s->out_stride[i] = i == 3 ? 1 : i == 2 ? o->ps : 0;
  }
  for (int32_t y = ra; y < rb; y++) {
    if (kind == FX_ADD) bt_add_s8(&q.a, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_ADD_DENSE) FX_ADD_DENSE_S8(&q.a, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_SUB) bt_sub_s8(&q.a, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_MUL) bt_mul_s8(&q.m, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else if (kind == FX_MAX) bt_maximum_s8(&q.x, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
    else bt_minimum_s8(&q.x, fx_at(a, y, ca), fx_at(b, y, ca), fx_at(o, y, ca));
  }
}
/* fx_pw's kinds, one function each (bt_fused.h: fx_pw inline over them by kind, a constant in model.c) */
#define FX_PW_KIND(name, kind)                                                                                   \
  void name(const void *prm, const fx_buf *a, const fx_buf *b, const fx_buf *o, int32_t ra, int32_t rb, int32_t ca, \
            int32_t cb, int32_t ch) {                                                                            \
    pw_kind(kind, prm, a, b, o, ra, rb, ca, cb, ch);                                                             \
  }
FX_PW_KIND(fx_pw_add, FX_ADD)
FX_PW_KIND(fx_pw_add_dense, FX_ADD_DENSE)
#ifndef FX_ADD_HS_OWN   /* the set's own FX_ADD_HS (cortex-m/fused.c), else FX_ADD_DENSE's path */
FX_PW_KIND(fx_pw_add_hs, FX_ADD_DENSE)
#endif
FX_PW_KIND(fx_pw_sub, FX_SUB)
FX_PW_KIND(fx_pw_mul, FX_MUL)
FX_PW_KIND(fx_pw_max, FX_MAX)
FX_PW_KIND(fx_pw_min, FX_MIN)
#undef FX_PW_KIND

/* An element-wise RELU/RELU6/TANH/PRELU/LEAKY_RELU over rows [ra, rb) x cols [ca, cb): one call per row when the
   row's pixels are contiguous in both buffers, else one per pixel. PRELU's alpha stride comes with prm. */
void fx_unary(int kind, const void *prm, const int8_t *alpha, const fx_buf *a, const fx_buf *o, int32_t ra,
                     int32_t rb, int32_t ca, int32_t cb, int32_t ch) {
  union { bt_relu_params r; bt_tanh_params t; bt_prelu_params p; bt_leaky_relu_params l; int32_t b[2]; } q;
  const int32_t step = a->ps == ch && o->ps == ch ? cb - ca : 1, n = step * ch;
  if (kind == FX_RELU) { fx_get(&q.r, prm, sizeof q.r); q.r.n = n; }
  else if (kind == FX_TANH) { fx_get(&q.t, prm, sizeof q.t); q.t.n = n; }
  else if (kind == FX_LEAKY_RELU) { fx_get(&q.l, prm, sizeof q.l); q.l.n = n; }
  else if (kind == FX_RELU6) fx_get(q.b, prm, sizeof q.b);
  else {
    fx_get(&q.p, prm, sizeof q.p);
    const int32_t dims[4] = {1, 1, step, ch};
    for (int i = 0; i < 4; i++) {
      q.p.b.dims[i] = dims[i];
      q.p.b.a_stride[i] = q.p.b.out_stride[i] = i == 3 ? 1 : i == 2 ? ch : 0;
    }
  }
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x += step) {
      const int8_t *in = fx_at(a, y, x);
      int8_t *out = fx_at(o, y, x);
      if (kind == FX_RELU) bt_relu_s8(&q.r, in, out);
      else if (kind == FX_TANH) bt_tanh_s8(&q.t, in, out);
      else if (kind == FX_LEAKY_RELU) bt_leaky_relu_s8(&q.l, in, out);
      else if (kind == FX_RELU6) bt_relu6_s8(n, q.b[0], q.b[1], in, out);
      else bt_prelu_s8(&q.p, in, alpha, out);
    }
}

/* MEAN over H and W, one tile at a time: running sums per channel (int16 when the map has at most
   256 pixels, which cannot overflow; else int32, wrapping as int32 does), then TFLM's MEAN step. */
#define FX_MEAN(bits, ubits) \
void fx_accumulate##bits(int##bits##_t *acc, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca, \
                                int32_t cb, int32_t ch) { \
  for (int32_t y = ra; y < rb; y++) \
    for (int32_t x = ca; x < cb; x++) { \
      const int8_t *p = fx_at(t, y, x); \
      for (int32_t i = 0; i < ch; i++) acc[i] = (int##bits##_t)((ubits)acc[i] + (ubits)(int32_t)p[i]); \
    } \
} \
void fx_mean_done##bits(const int##bits##_t *acc, int8_t *out, int32_t ch, int32_t zp_times_n, \
                               int32_t mult, int32_t shift, int32_t out_zp) { \
  for (int32_t i = 0; i < ch; i++) { \
    const int32_t v = (int32_t)((uint32_t)(int32_t)acc[i] - (uint32_t)zp_times_n); \
    out[i] = (int8_t)bt_clamp(bt_mbqm(v, mult, shift) + out_zp, -128, 127); \
  } \
}
FX_MEAN(16, uint16_t)
FX_MEAN(32, uint32_t)

/* Iterative dense: a FULLY_CONNECTED over the flattened block output (w pixels wide, ch channels)
   adds each finished tile's partial dot products to its int32 sums (pixel (y, x) channel c is input
   element ((y*w + x)*ch + c); offsets per element, as bt_fully_connected_s8), then finishes once. */
void fx_dense_acc(int32_t *acc, const bt_fc_params *p, const fx_buf *t, int32_t ra, int32_t rb, int32_t ca,
                         int32_t cb, int32_t w, int32_t ch) {
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x++) {
      const int8_t *px = fx_at(t, y, x);
      for (int32_t o = 0; o < p->n_out; o++) {
        const int8_t *wt = p->weights + o * p->n_in + (y * w + x) * ch;
        uint32_t s = (uint32_t)acc[o];
        for (int32_t i = 0; i < ch; i++)
          s += (uint32_t)(((int32_t)wt[i] + p->filter_offset) * ((int32_t)px[i] + p->input_offset));
        acc[o] = (int32_t)s;
      }
    }
}
void fx_dense_done(const int32_t *acc, const bt_fc_params *p, int8_t *out) {
  for (int32_t o = 0; o < p->n_out; o++) {
    int32_t a = acc[o];
    if (p->bias) a = (int32_t)((uint32_t)a + (uint32_t)p->bias[o]);
    const int32_t k = p->per_channel ? o : 0;
    a = bt_mbqm(a, p->multiplier[k], p->shift[k]) + p->output_offset;
    out[o] = (int8_t)bt_clamp(a, p->act_min, p->act_max);
  }
}

/* A 1x1 stride-1 convolution whose output window starts at its input window's bytes, in raster
   order: up to FX_INPLACE_BYTES of a row's input pixels copied aside, then one kernel call writes
   their outputs (output pixels are no wider than input pixels, so they land on pixels already
   copied; the reference read them one at a time). */
#define FX_INPLACE_BYTES 256
void fx_conv_inplace(const bt_conv_params *prm, const fx_buf *in, const fx_buf *out, int32_t ra,
                            int32_t rb, int32_t ca, int32_t cb) {
  fx_conv_inplace_k(prm, bt_conv_s8, in, out, ra, rb, ca, cb);
}
void fx_conv_inplace_k(const bt_conv_params *prm, fx_conv_kernel kernel, const fx_buf *in, const fx_buf *out,
                       int32_t ra, int32_t rb, int32_t ca, int32_t cb) {
  bt_conv_params q;
  fx_get(&q, prm, sizeof q);
  const int32_t c = q.in.c, per = c <= FX_INPLACE_BYTES ? FX_INPLACE_BYTES / c : 1;
  int8_t px[c <= FX_INPLACE_BYTES ? FX_INPLACE_BYTES : c];
  q.in.h = q.out.h = 1;
  q.in.pixel_stride = c;
  q.out.pixel_stride = out->ps;
  q.pad_top = q.pad_left = 0;
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x += per) {
      const int32_t n = cb - x < per ? cb - x : per;
      for (int32_t i = 0; i < n; i++) bt_copy_bytes(px + i * c, fx_at(in, y, x + i), c);
      q.in.w = q.out.w = n;
      kernel(&q, px, 0, fx_at(out, y, x), 0, 1);
    }
}

/* Rows [r0, r1) x cols [c0, c1) of the streamed input (img_w pixels of img_c bytes per row) into dst,
   row stride bytes apart: one platform call. */
void fx_source(int32_t r0, int32_t r1, int32_t c0, int32_t c1, int8_t *dst, int32_t stride, int32_t img_w,
               int32_t img_c) {
  bt_read_input_rows((uint32_t)((r0 * img_w + c0) * img_c), (uint32_t)((c1 - c0) * img_c), (uint32_t)(r1 - r0),
                     (uint32_t)(img_w * img_c), dst, (uint32_t)stride);
}

/* A sliding-window operator on a streamed input it pulls itself: one output row at a time, after
   reading the input rows that row needs (image columns [ta, tb)) into the window. kind < 0: any
   kind through fx_win; else that kind's own copy of the window code. */
FX_ALWAYS void pulled_kind(int kind, int any, const void *prm, const fx_buf *win, const fx_buf *out, int32_t ra,
                           int32_t rb, int32_t ca, int32_t cb, int32_t ch, int32_t ta, int32_t tb, int32_t s,
                           int32_t pad, int32_t k, int32_t n_in, int32_t img_w, int32_t img_c) {
  for (int32_t y = ra; y < rb; y++) {
    const int32_t r0 = BT_MAX(y * s - pad, 0), r1 = BT_MIN(y * s - pad + k, n_in);
    fx_buf w;
    fx_get(&w, win, sizeof w);
    w.r0 = r0;
    if (r1 > r0 && tb > ta) fx_source(r0, r1, ta, tb, fx_at(&w, r0, ta), w.wp * w.ps, img_w, img_c);
    if (any && kind == FX_DW) fx_win_dw(prm, &w, out, y, y + 1, ca, cb, ch, 0);
    else if (any) fx_win_pool(kind, prm, &w, out, y, y + 1, ca, cb, ch);
    else win_kind(kind, prm, bt_conv_s8, &w, out, y, y + 1, ca, cb, ch, 0);
  }
}
__attribute__((noinline)) static void pulled(int kind, const void *prm, const fx_buf *win, const fx_buf *out,
                                             int32_t ra, int32_t rb, int32_t ca, int32_t cb, int32_t ch, int32_t ta,
                                             int32_t tb, int32_t s, int32_t pad, int32_t k, int32_t n_in,
                                             int32_t img_w, int32_t img_c) {
  if (kind == FX_CONV)  /* a network's first layer: its own copy */
    pulled_kind(FX_CONV, 0, prm, win, out, ra, rb, ca, cb, ch, ta, tb, s, pad, k, n_in, img_w, img_c);
  else pulled_kind(kind, 1, prm, win, out, ra, rb, ca, cb, ch, ta, tb, s, pad, k, n_in, img_w, img_c);
}
void fx_pulled(int kind, const void *prm, const fx_buf *win, const fx_buf *out, int32_t ra, int32_t rb,
               int32_t ca, int32_t cb, int32_t ch, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k,
               int32_t n_in, int32_t img_w, int32_t img_c) {  /* a set's own path, else the reference's */
  if (!fx_k_pulled(kind, prm, win, out, ra, rb, ca, cb, ch, ta, tb, s, pad, k, n_in, img_w, img_c))
    pulled(kind, prm, win, out, ra, rb, ca, cb, ch, ta, tb, s, pad, k, n_in, img_w, img_c);
}
void fx_pulled_chw(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
                   int32_t wcb, int32_t ta, int32_t tb, int32_t s, int32_t pad, int32_t k, int32_t n_in, int32_t img_w,
                   int32_t img_c, const void *dprm, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb,
                   int32_t ca, int32_t cb, int32_t channels) {  /* a set's own path, else group by group */
  if (fx_k_pulled_chw(cprm, cin, win, wra, wrb, wca, wcb, ta, tb, s, pad, k, n_in, img_w, img_c, dprm, fch, out, ra,
                      rb, ca, cb, channels))
    return;
  for (int32_t ch = 0; ch < channels; ch += win->ps) {
    fx_pulled(FX_CONV, cprm, cin, win, wra, wrb, wca, wcb, ch, ta, tb, s, pad, k, n_in, img_w, img_c);
    fx_win_dw(dprm, win, out, ra, rb, ca, cb, ch, fch);
  }
}
