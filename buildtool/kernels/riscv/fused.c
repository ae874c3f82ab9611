/* fused.c -- the fused-plan tile runtime for the riscv set: the reference runtime (included below)
 * with the one-channel calls of the channel-by-channel scheme on their own scalar paths (the set's
 * conv and depthwise kernels block four channels; with one output channel every call would pay
 * their set-up for their scalar remainder). Per call:
 *  - conv, one output channel (window, band or row bands, or pulled from the streamed input):
 *    the input offset folded into the start value
 *    (bias + offset * sum(filter), exact in int32); interior pixels sum their tap runs without
 *    bounds checks, four MACs per loop step; border pixels walk their valid taps;
 *  - depthwise on a one-channel input: the offset folded likewise, a 3x3 filter's taps in
 *    registers;
 *  - requantisation by rv_requant.h, its per-channel values computed once per call.
 * Same results as the reference runtime, byte for byte. */
#include "bt_fused.h"
#include "requant.h"
#include "rv_requant.h"
#include "fx_box.h"

#define RV_KH 16       /* tap rows whose addresses an output row keeps */

/* A one-output-channel conv's per-call values: its filter runs (a tap row when dense, else a tap),
   the start value, the requantisation, the interior columns. */
typedef struct {
  const int8_t *f;
  int32_t acc0, run, dense, xi0, xi1;
  rv_rq q;
} rv_conv1;

/* acc + sum_k f[k] * ip[k] over n values. */
static inline int32_t rv_dot(const int8_t *ip, const int8_t *f, int32_t n, int32_t acc) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) acc += f[k] * ip[k] + f[k + 1] * ip[k + 1] + f[k + 2] * ip[k + 2] + f[k + 3] * ip[k + 3];
  for (; k < n; k++) acc += f[k] * ip[k];
  return acc;
}

/* st = p's per-call values (p: one output channel); 0 when this path does not apply. */
static int conv1_prep(const bt_conv_params *p, rv_conv1 *st) {
  const int32_t c = p->in.c, K = p->kh * p->kw * c;
  if (p->kh > RV_KH || !rv_rq_ok(p->multiplier, 1)) return 0;
  st->dense = p->dil_w == 1 && p->in.pixel_stride == c;   /* a tap row is one run of bytes */
  st->run = st->dense ? p->kw * c : c;
  st->f = p->filter;
  int32_t fsum = 0;
  for (int32_t i = 0; i < K; i++) fsum += p->filter[i];
  st->acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum;
  rv_rq_init(&st->q, p->multiplier[0], p->shift[0]);
  box_interior(p, &st->xi0, &st->xi1);
  return 1;
}

/* n interior outputs of a conv whose kh tap rows are dense runs of R values (row r of output i at
   ipr[r] + i*step): each run unrolled, one output after another. */
static inline __attribute__((always_inline)) void rv_rows_out(const int8_t *const *ipr, int32_t kh, int32_t step,
                                                             int32_t n, const int8_t *fw, int8_t *o, int32_t ops,
                                                             const bt_conv_params *p, const rv_conv1 *st, const int R) {
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t i = 0; i < n; i++, o += ops) {
    int32_t a = st->acc0;
    const int8_t *f = fw;
    for (int32_t r = 0; r < kh; r++, f += R) {
      const int8_t *ip = ipr[r] + i * step;
      for (int t = 0; t < R; t++) a += f[t] * ip[t];
    }
    *o = rv_rq_out(a, &st->q, zp, lo, hi);
  }
}

/* Output row y of a one-output-channel conv, pixels [xa, xb): border pixels (inside: 0) or interior
   pixels (inside: 1, every tap in the input; dense runs of up to 16 values unrolled). */
static void conv1_row(const bt_conv_params *p, const rv_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                      int32_t xa, int32_t xb, int inside) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, step = p->stride_w * ps;
  if (!inside) {
    for (int32_t x = xa; x < xb; x++)
      orow[x * ops] = rv_rq_out(conv1_border(p, s, iy0, x * p->stride_w - p->pad_left), &st->q, zp, lo, hi);
    return;
  }
  if (xa >= xb) return;
  const int8_t *ipr[RV_KH];
  const int32_t ix = (xa * p->stride_w - p->pad_left) * ps;
  for (int32_t ky = 0; ky < p->kh; ky++) ipr[ky] = box_row(s, iy0 + ky * p->dil_h) + ix;
  const int32_t run = st->run, kw = st->dense ? 1 : p->kw, dx = p->dil_w * ps, n = xb - xa;
  int8_t *o = orow + xa * ops;
  if (st->dense)
    switch (run) {
#define RV_RUN(k) case k: rv_rows_out(ipr, p->kh, step, n, st->f, o, ops, p, st, k); return;
      RV_RUN(1) RV_RUN(2) RV_RUN(3) RV_RUN(4) RV_RUN(5) RV_RUN(6) RV_RUN(7) RV_RUN(8)
      RV_RUN(9) RV_RUN(10) RV_RUN(11) RV_RUN(12) RV_RUN(13) RV_RUN(14) RV_RUN(15) RV_RUN(16)
#undef RV_RUN
      default: break;
    }
  for (int32_t i = 0; i < n; i++, o += ops) {
    const int32_t off = i * step;
    int32_t a = st->acc0;
    const int8_t *f = st->f;
    for (int32_t ky = 0; ky < p->kh; ky++)
      for (int32_t kx = 0; kx < kw; kx++, f += run) a = rv_dot(ipr[ky] + off + kx * dx, f, run, a);
    *o = rv_rq_out(a, &st->q, zp, lo, hi);
  }
}

#define FX_CONV1 rv_conv1
#include "../reference/fx_conv1_rows.h"

/* One depthwise output at a border pixel: the valid taps only. */
static int32_t dw1_border(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int32_t iy0, int32_t ix0) {
  const int8_t *fk = p->filter;
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

/* Interior outputs [xa, xb) of row y of a one-channel depthwise (ir: input row iy0's first byte). */
static void dw1_interior(const bt_conv_params *p, int32_t acc0, const rv_rq *q, const int8_t *ir, int8_t *orow,
                         int32_t xa, int32_t xb) {
  const int8_t *fk = p->filter;
  const int32_t ps = p->in.pixel_stride, row = p->in.w * ps, dy = p->dil_h * row, dx = p->dil_w * ps;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, ops = p->out.pixel_stride;
  const int8_t *ip = ir + (xa * p->stride_w - p->pad_left) * ps;
  const int32_t step = p->stride_w * ps;
  if (p->kh == 3 && p->kw == 3) {
    const int32_t f0 = fk[0], f1 = fk[1], f2 = fk[2], f3 = fk[3], f4 = fk[4], f5 = fk[5];
    const int32_t f6 = fk[6], f7 = fk[7], f8 = fk[8];
    for (int32_t x = xa; x < xb; x++, ip += step) {
      const int8_t *r0 = ip, *r1 = ip + dy, *r2 = ip + 2 * dy;
      const int32_t a = acc0 + f0 * r0[0] + f1 * r0[dx] + f2 * r0[2 * dx] + f3 * r1[0] + f4 * r1[dx] + f5 * r1[2 * dx]
                        + f6 * r2[0] + f7 * r2[dx] + f8 * r2[2 * dx];
      orow[x * ops] = rv_rq_out(a, q, zp, lo, hi);
    }
    return;
  }
  for (int32_t x = xa; x < xb; x++, ip += step) {
    int32_t a = acc0;
    const int8_t *f = fk;
    for (int32_t ky = 0; ky < p->kh; ky++)
      for (int32_t kx = 0; kx < p->kw; kx++) a += *f++ * ip[ky * dy + kx * dx];
    orow[x * ops] = rv_rq_out(a, q, zp, lo, hi);
  }
}

/* A depthwise on a one-channel input (in.c == out.c == 1, multiplier 1) over rows [y0, y1) into d;
   0 when this path does not apply. */
static int dw1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
               int32_t y1) {
  const bt_conv_params *p = &dp->conv;
  if (p->out.c != 1 || dp->depth_multiplier != 1 || !rv_rq_ok(p->multiplier, 1)) return 0;
  int32_t fsum = 0, xi0, xi1, ya, yb;
  for (int32_t t = 0; t < p->kh * p->kw; t++) fsum += p->filter[t];
  const int32_t acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum, ops = p->out.pixel_stride;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, in_row = p->in.w * p->in.pixel_stride;
  rv_rq q;
  rv_rq_init(&q, p->multiplier[0], p->shift[0]);
  box_interior(p, &xi0, &xi1);
  box_inside_rows(p, y0, y1, &ya, &yb);
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = box_orow(d, y);
    const int32_t iy0 = y * p->stride_h - p->pad_top, inside = y >= ya && y < yb;
    const int32_t a = inside ? xi0 : p->out.w, b = inside ? xi1 : p->out.w;
    for (int32_t x = 0; x < p->out.w; x++) {
      if (x == a && a < b) { dw1_interior(p, acc0, &q, in + (iy0 - in_y0) * in_row, orow, a, b); x = b - 1; continue; }
      orow[x * ops] = rv_rq_out(dw1_border(p, in, in_y0, iy0, x * p->stride_w - p->pad_left), &q, zp, lo, hi);
    }
  }
  return 1;
}

#define FX_SET_PATHS
#include "../reference/fused.c"

#include "../reference/fx_hooks.h"
