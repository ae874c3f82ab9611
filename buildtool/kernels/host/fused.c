/* fused.c -- the fused-plan tile runtime for the host set: the reference runtime (included below) with
 * the one-channel calls of the channel-by-channel scheme on their own paths (fx_k_box, fx_k_pulled
 * through reference/fx_hooks.h), written like host_block.h for gcc -O2's vectoriser. Per call:
 *  - conv, one output channel (window, band or row bands, or pulled from the streamed input): the
 *    input offset folded into the start value (bias + offset * sum(filter), exact in int32); an
 *    interior pixel sums its dense tap rows of up to 16 values with the run length a compile-time
 *    constant (unrolled, filter values hoisted), longer runs or taps as int8 x int8 dot products in
 *    16-value blocks (products formed as int16, a compile-time trip count: SSE2 on x86-64) and a
 *    scalar tail; border pixels walk their valid taps (reference/fx_box.h);
 *  - depthwise on a one-channel input: the offset folded likewise, the taps as int32 (a 3x3 filter's
 *    nine in registers), interior pixels without bounds checks;
 *  - requantisation by host_block.h's folded form, its per-channel values prepared once per call.
 * Same results as the reference runtime, byte for byte (kernel_test.c). */
#include "bt_fused.h"
#include "requant.h"
#include "host_block.h"
#include "fx_box.h"

#define H_KH 16       /* tap rows whose addresses an output row keeps */
#define H_TAPS 64     /* depthwise taps handled here (kh*kw) */

/* A one-output-channel conv's per-call values: its filter runs (a tap row when dense, else a tap),
   the start value, the requantisation, the interior columns. */
typedef struct {
  const int8_t *f;
  int32_t acc0, run, dense, xi0, xi1;
  bt_hb_rq q;
} h_conv1;

/* sum_k f[k] * ip[k] over n values: 16-value blocks (vectorised), then the tail. */
static inline int32_t h_dot(const int8_t *restrict ip, const int8_t *restrict f, int32_t n) {
  int32_t a = 0, k = 0;
  for (; k + BT_HB <= n; k += BT_HB) a += bt_hb_dot(f + k, ip + k, 0);
  for (; k < n; k++) a += f[k] * ip[k];
  return a;
}

/* clamp(MBQM(x) + zp) of a one-channel requantisation. */
static inline int8_t h_out(const bt_hb_rq *q, int32_t x) {
  if (q->general) return (int8_t)bt_clamp(bt_mbqm_fast(x, q->mult[0], q->shift[0]) + q->zp, q->lo, q->hi);
  return (int8_t)bt_hb_rq_one(q, 0, x);
}

/* st = p's per-call values (p: one output channel); 0 when this path does not apply. */
static int conv1_prep(const bt_conv_params *p, h_conv1 *st) {
  const int32_t c = p->in.c, K = p->kh * p->kw * c;
  if (p->kh > H_KH) return 0;
  st->dense = p->dil_w == 1 && p->in.pixel_stride == c;   /* a tap row is one run of bytes */
  st->run = st->dense ? p->kw * c : c;
  st->f = p->filter;
  int32_t fsum = 0;
  for (int32_t i = 0; i < K; i++) fsum += p->filter[i];
  st->acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum;
  bt_hb_rq_init(&st->q, 1, p->multiplier, p->shift, p->output_offset, p->act_min, p->act_max);
  box_interior(p, &st->xi0, &st->xi1);
  return 1;
}

/* n interior outputs of a conv whose kh tap rows are dense runs of R values (row r of output i at
   ipr[r] + i*step), R a compile-time constant (the run's loop unrolled, its filter values hoisted). */
static inline __attribute__((always_inline)) void h_rows_out(const int8_t *const *ipr, int32_t kh, int32_t step,
                                                            int32_t n, const int8_t *fw, int8_t *o, int32_t ops,
                                                            const h_conv1 *st, const int R) {
  for (int32_t i = 0; i < n; i++, o += ops) {
    int32_t a = st->acc0;
    const int8_t *f = fw;
    for (int32_t r = 0; r < kh; r++, f += R) {
      const int8_t *ip = ipr[r] + i * step;
      for (int t = 0; t < R; t++) a += (int16_t)(f[t] * ip[t]);
    }
    *o = h_out(&st->q, a);
  }
}

/* Output row y of a one-output-channel conv, pixels [xa, xb): border pixels (inside: 0) or interior
   pixels (inside: 1, every tap in the input; dense runs of up to 16 values unrolled). */
static void conv1_row(const bt_conv_params *p, const h_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                      int32_t xa, int32_t xb, int inside) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  if (!inside) {
    for (int32_t x = xa; x < xb; x++)
      orow[x * ops] = h_out(&st->q, conv1_border(p, s, iy0, x * p->stride_w - p->pad_left));
    return;
  }
  if (xa >= xb) return;
  const int8_t *ipr[H_KH];
  const int32_t ix = (xa * p->stride_w - p->pad_left) * ps, step = p->stride_w * ps;
  for (int32_t ky = 0; ky < p->kh; ky++) ipr[ky] = box_row(s, iy0 + ky * p->dil_h) + ix;
  const int32_t run = st->run, kw = st->dense ? 1 : p->kw, dx = p->dil_w * ps;
  int8_t *o = orow + xa * ops;
  if (st->dense)
    switch (run) {
#define H_RUN(k) case k: h_rows_out(ipr, p->kh, step, xb - xa, st->f, o, ops, st, k); return;
      H_RUN(1) H_RUN(2) H_RUN(3) H_RUN(4) H_RUN(5) H_RUN(6) H_RUN(7) H_RUN(8)
      H_RUN(9) H_RUN(10) H_RUN(11) H_RUN(12) H_RUN(13) H_RUN(14) H_RUN(15) H_RUN(16)
#undef H_RUN
      default: break;
    }
  for (int32_t i = 0; i < xb - xa; i++, o += ops) {
    const int32_t off = i * step;
    int32_t a = st->acc0;
    const int8_t *f = st->f;
    for (int32_t ky = 0; ky < p->kh; ky++)
      for (int32_t kx = 0; kx < kw; kx++, f += run) a += h_dot(ipr[ky] + off + kx * dx, f, run);
    *o = h_out(&st->q, a);
  }
}

#define FX_CONV1 h_conv1
#include "../reference/fx_conv1_rows.h"

/* One depthwise output at a border pixel (taps fk as int32, the offset not folded): the valid taps only. */
static int32_t dw1_border(const bt_conv_params *p, const int32_t *fk, const int8_t *in, int32_t in_y0, int32_t iy0,
                          int32_t ix0) {
  const int32_t ps = p->in.pixel_stride, in_row = p->in.w * ps, off = p->input_offset;
  int32_t ky0, ky1, kx0, kx1, acc = p->bias ? p->bias[0] : 0;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &ky0, &ky1);
  box_taps(ix0, p->kw, p->dil_w, p->in.w, &kx0, &kx1);
  for (int32_t ky = ky0; ky < ky1; ky++) {
    const int8_t *ip = in + (iy0 + ky * p->dil_h - in_y0) * in_row + (ix0 + kx0 * p->dil_w) * ps;
    for (int32_t kx = kx0; kx < kx1; kx++, ip += p->dil_w * ps) acc += fk[ky * p->kw + kx] * (*ip + off);
  }
  return acc;
}

/* Interior outputs [xa, xb) of one row of a one-channel depthwise (ir: input row iy0's first byte),
   acc0: bias and folded offset. */
static void dw1_interior(const bt_conv_params *p, const int32_t *fk, int32_t acc0, const bt_hb_rq *q,
                         const int8_t *ir, int8_t *orow, int32_t xa, int32_t xb) {
  const int32_t ps = p->in.pixel_stride, row = p->in.w * ps, dy = p->dil_h * row, dx = p->dil_w * ps;
  const int32_t ops = p->out.pixel_stride, step = p->stride_w * ps;
  const int8_t *ip = ir + (xa * p->stride_w - p->pad_left) * ps;
  if (p->kh == 3 && p->kw == 3) {
    const int32_t f0 = fk[0], f1 = fk[1], f2 = fk[2], f3 = fk[3], f4 = fk[4], f5 = fk[5], f6 = fk[6], f7 = fk[7];
    const int32_t f8 = fk[8];
    for (int32_t x = xa; x < xb; x++, ip += step) {
      const int8_t *r0 = ip, *r1 = ip + dy, *r2 = ip + 2 * dy;
      orow[x * ops] = h_out(q, acc0 + f0 * r0[0] + f1 * r0[dx] + f2 * r0[2 * dx] + f3 * r1[0] + f4 * r1[dx]
                                   + f5 * r1[2 * dx] + f6 * r2[0] + f7 * r2[dx] + f8 * r2[2 * dx]);
    }
    return;
  }
  for (int32_t x = xa; x < xb; x++, ip += step) {
    int32_t a = acc0;
    const int32_t *f = fk;
    for (int32_t ky = 0; ky < p->kh; ky++)
      for (int32_t kx = 0; kx < p->kw; kx++) a += *f++ * ip[ky * dy + kx * dx];
    orow[x * ops] = h_out(q, a);
  }
}

/* A depthwise on a one-channel input (in.c == out.c == 1, multiplier 1) over rows [y0, y1) into d;
   0 when this path does not apply. */
static int dw1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
               int32_t y1) {
  const bt_conv_params *p = &dp->conv;
  const int32_t nt = p->kh * p->kw;
  if (p->out.c != 1 || dp->depth_multiplier != 1 || nt > H_TAPS) return 0;
  int32_t fk[H_TAPS], fsum = 0, xi0, xi1, ya, yb;
  for (int32_t t = 0; t < nt; t++) { fk[t] = p->filter[t]; fsum += fk[t]; }
  const int32_t acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum, ops = p->out.pixel_stride;
  const int32_t in_row = p->in.w * p->in.pixel_stride;
  bt_hb_rq q;
  bt_hb_rq_init(&q, 1, p->multiplier, p->shift, p->output_offset, p->act_min, p->act_max);
  box_interior(p, &xi0, &xi1);
  box_inside_rows(p, y0, y1, &ya, &yb);
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = box_orow(d, y);
    const int32_t iy0 = y * p->stride_h - p->pad_top, inside = y >= ya && y < yb;
    const int32_t a = inside ? xi0 : p->out.w, b = inside ? xi1 : p->out.w;
    for (int32_t x = 0; x < p->out.w; x++) {
      if (x == a && a < b) {
        dw1_interior(p, fk, acc0, &q, in + (iy0 - in_y0) * in_row, orow, a, b);
        x = b - 1;
        continue;
      }
      orow[x * ops] = h_out(&q, dw1_border(p, fk, in, in_y0, iy0, x * p->stride_w - p->pad_left));
    }
  }
  return 1;
}

#define FX_SET_PATHS
#include "../reference/fused_ref.h"

#include "../reference/fx_hooks.h"
