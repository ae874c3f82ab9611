/* fused.c -- the fused-plan tile runtime for the riscv set: the reference runtime (included below)
 * with the one-channel calls of the channel-by-channel scheme on their own scalar paths (the set's
 * conv and depthwise kernels block four channels; with one output channel every call would pay
 * their set-up for their scalar remainder). Per call:
 *  - conv, one output channel (window, band or row bands, or pulled from the streamed input):
 *    the input offset folded into the start value
 *    (bias + offset * sum(filter), exact in int32); interior pixels sum their tap runs without
 *    bounds checks: a 1x1 (one dense tap row of up to 16 values) with its filter in registers,
 *    other dense tap rows of up to 16 values four (three, two) outputs per filter load (one as two), longer
 *    runs two pixels at a time; each run length an entry of its own, linked only where model.c's
 *    table bt_fx_rv_runs names it (the lengths its convs take); border pixels walk their valid taps;
 *  - depthwise on a one-channel input: the offset folded likewise, a 3x3 filter's taps in
 *    registers (two outputs per pass at stride 1);
 *  - requantisation by bt_rq2 when the channel allows it (else rv_requant.h, on the rolled loops:
 *    the unrolled and 3x3 paths take bt_rq2's channels only), its per-channel values computed once
 *    per call; a channelwise window's geometry once per tile
 *    (FX_CONV1_CHAN, FX_DW1_CHAN), a pulled conv's rows without conv1_rows (FX_CONV1_ROW1).
 * Same results as the reference runtime, byte for byte. */
#include "bt_fused.h"
#include "bt_variants.h"  /* bt_fx_rv_run_fn, bt_fx_rv_runs */
#include "requant.h"
#include "rv_requant.h"
#include "fx_box.h"

#define RV_KH 16       /* tap rows whose addresses an output row keeps */

/* A one-output-channel conv's per-call values: its filter runs (a tap row when dense, else a tap),
   the start value, the requantisation (bt_rq2's m, p2, e1 when fast, else q), the interior columns. */
typedef struct {
  const int8_t *f;
  int32_t acc0, run, dense, xi0, xi1, fast, m, p2, e1;
  rv_rq q;
} rv_conv1;

/* acc + sum_k f[k] * ip[k] over n values. */
static inline int32_t rv_dot(const int8_t *ip, const int8_t *f, int32_t n, int32_t acc) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) acc += f[k] * ip[k] + f[k + 1] * ip[k + 1] + f[k + 2] * ip[k + 2] + f[k + 3] * ip[k + 3];
  for (; k < n; k++) acc += f[k] * ip[k];
  return acc;
}

/* A channel's requantisation into (fast, m, p2, e1) for bt_rq2 when it allows it, else q; 0 when
   neither path applies (multiplier INT32_MIN). */
static inline int rv_chan_rq(const bt_conv_params *p, int32_t *fast, int32_t *m, int32_t *p2, int32_t *e1, rv_rq *q) {
  if (!rv_rq_ok(p->multiplier, 1)) return 0;
  *m = p->multiplier[0];
  *fast = bt_rq2_ok(p->multiplier, p->shift, 1);
  *p2 = *fast ? bt_rq2_p2(p->shift[0]) : 0;
  *e1 = *fast ? bt_rq2_e1(p->shift[0]) : 0;
  rv_rq_init(q, p->multiplier[0], p->shift[0]);
  return 1;
}

/* clamp(bt_rq2(a) + zp, lo, hi) as int8 */
static inline __attribute__((always_inline)) int8_t rv_out2(int32_t a, int32_t m, int32_t p2, int32_t e1, int32_t zp,
                                                           int32_t lo, int32_t hi) {
  const int32_t v = bt_rq2(a, m, p2, e1) + zp;
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* dst = rv_out2(a, ...), stored as the low byte of the clamped value (no sign extension first). */
#define RV_PUT2(dst, a, m, p2, e1, zp, lo, hi)                     \
  do {                                                             \
    int32_t v_ = bt_rq2((a), (m), (p2), (e1)) + (zp);              \
    v_ = v_ < (lo) ? (lo) : v_;                                    \
    v_ = v_ > (hi) ? (hi) : v_;                                    \
    __builtin_memcpy(&(dst), &v_, 1);   /* little-endian */        \
  } while (0)

/* The requantised, clamped output of channel values w: bt_rq2 when w->fast, else rv_rq_out. */
#define RV_ST_OUT(a, w, zp, lo, hi) \
  ((w)->fast ? rv_out2((a), (w)->m, (w)->p2, (w)->e1, (zp), (lo), (hi)) : rv_rq_out((a), &(w)->q, (zp), (lo), (hi)))

/* st = p's per-call values (p: one output channel); 0 when this path does not apply. first 0: a
   later channel of the same tile (fx_k_chw), st's geometry kept. */
static int conv1_prep_ch(const bt_conv_params *p, rv_conv1 *st, int first) {
  const int32_t K = p->kh * p->kw * p->in.c;
  if (first) {
    if (p->kh > RV_KH) return 0;
    st->dense = p->dil_w == 1 && p->in.pixel_stride == p->in.c;   /* a tap row is one run of bytes */
    st->run = st->dense ? p->kw * p->in.c : p->in.c;
    box_interior(p, &st->xi0, &st->xi1);
  }
  if (!rv_chan_rq(p, &st->fast, &st->m, &st->p2, &st->e1, &st->q)) return 0;
  st->f = p->filter;
  int32_t fsum = 0;
  for (int32_t i = 0; i < K; i++) fsum += p->filter[i];
  st->acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum;
  return 1;
}
#define conv1_prep(p, st) conv1_prep_ch(p, st, 1)
#define FX_CONV1_CHAN conv1_prep_ch

/* n interior outputs of a conv whose one tap row (a 1x1, kh 1) is a dense run of R values, requantised by
   bt_rq2: the R filter values in registers. */
static inline __attribute__((always_inline)) void rv_run1_out(const int8_t *ip, int32_t step, int32_t n,
                                                             const int8_t *fw, int8_t *o, int32_t ops,
                                                             const bt_conv_params *p, const rv_conv1 *st,
                                                             const int R) {
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t acc0 = st->acc0, m = st->m, p2 = st->p2, e1 = st->e1;
  int32_t w[16];
  _Pragma("GCC unroll 16") for (int t = 0; t < R; t++) w[t] = fw[t];
  for (const int8_t *const end = ip + n * step; ip != end; ip += step, o += ops) {
    int32_t a = acc0;
    _Pragma("GCC unroll 16") for (int t = 0; t < R; t++) {
      a += w[t] * ip[t];
      /* four taps at a time: gcc would load the whole run first and spill */
      if ((t & 3) == 3 && t != R - 1) __asm__ volatile("" : "+r"(a) : : "memory");
    }
    RV_PUT2(*o, a, m, p2, e1, zp, lo, hi);
  }
}

/* kh tap rows of R values requantised by bt_rq2, outputs two at a time sharing each filter load. */
static inline __attribute__((always_inline)) void rv_rows_pair(const int8_t *const *ipr, int32_t kh, int32_t step,
                                                              int32_t n, const int8_t *fw, int8_t *o, int32_t ops,
                                                              const bt_conv_params *p, const rv_conv1 *st,
                                                              const int R) {
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t acc0 = st->acc0, m = st->m, p2 = st->p2, e1 = st->e1;
  int32_t i = 0, off = 0;
  for (; i + 4 <= n; i += 4, o += 4 * ops, off += 4 * step) {   /* four outputs per filter load */
    int32_t a = acc0, b = acc0, c = acc0, e = acc0;
    const int8_t *f = fw;
    for (int32_t r = 0; r < kh; r++, f += R) {
      const int8_t *u = ipr[r] + off, *v = u + step, *x = v + step, *z = x + step;
      __asm__("" : "+r"(v), "+r"(x), "+r"(z));
      _Pragma("GCC unroll 16") for (int t = 0; t < R; t++) {
        const int32_t w = f[t];
        a += w * u[t];
        b += w * v[t];
        c += w * x[t];
        e += w * z[t];
        if ((t & 1) == 1 || t == R - 1) __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(e) : : "memory");
      }
    }
    RV_PUT2(o[0], a, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[ops], b, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[2 * ops], c, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[3 * ops], e, m, p2, e1, zp, lo, hi);
  }
  if (n - i == 3) {   /* three outputs per filter load */
    int32_t a = acc0, b = acc0, c = acc0;
    const int8_t *f = fw;
    for (int32_t r = 0; r < kh; r++, f += R) {
      const int8_t *u = ipr[r] + off, *v = u + step, *x = v + step;
      __asm__("" : "+r"(v), "+r"(x));
      _Pragma("GCC unroll 16") for (int t = 0; t < R; t++) {
        const int32_t w = f[t];
        a += w * u[t];
        b += w * v[t];
        c += w * x[t];
        if ((t & 1) == 1 || t == R - 1) __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c) : : "memory");
      }
    }
    RV_PUT2(o[0], a, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[ops], b, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[2 * ops], c, m, p2, e1, zp, lo, hi);
    return;
  }
  if (i < n) {   /* two outputs, or one (computed twice, stored twice after every read: 0.2 KB less than a pass of
                    its own) */
    const int32_t s2 = n - i == 2 ? step : 0, o2 = n - i == 2 ? ops : 0;
    int32_t a = acc0, b = acc0;
    const int8_t *f = fw;
    for (int32_t r = 0; r < kh; r++, f += R) {
      const int8_t *u = ipr[r] + off, *v = u + s2;
      __asm__("" : "+r"(v));   /* v its own pointer: gcc would keep step + t for every tap */
      _Pragma("GCC unroll 16") for (int t = 0; t < R; t++) {
        const int32_t c = f[t];
        a += c * u[t];
        b += c * v[t];
        /* four taps at a time: gcc would load a whole row's bytes first and spill them */
        if ((t & 3) == 3 || t == R - 1) __asm__ volatile("" : "+r"(a), "+r"(b) : : "memory");
      }
    }
    RV_PUT2(o[0], a, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[o2], b, m, p2, e1, zp, lo, hi);
  }
}

/* n outputs of a one-run conv (a run longer than 16 values, or one whose unrolled entry the model does
   not link: bt_fx_rv_runs), requantised by bt_rq2: two pixels at a time sharing each filter load. */
static void rv_run_long(const int8_t *ip, int32_t step, int32_t n, const int8_t *f, int32_t len, int8_t *o,
                        int32_t ops, const bt_conv_params *p, const rv_conv1 *st) {
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t acc0 = st->acc0, m = st->m, p2 = st->p2, e1 = st->e1;
  int32_t i = 0;
  for (; i + 2 <= n; i += 2, ip += 2 * step, o += 2 * ops) {
    const int8_t *u = ip, *v = ip + step;
    int32_t a = acc0, b = acc0, k = 0;
    for (; k + 4 <= len; k += 4) {
      const int32_t c0 = f[k], c1 = f[k + 1], c2 = f[k + 2], c3 = f[k + 3];
      a += c0 * u[k] + c1 * u[k + 1] + c2 * u[k + 2] + c3 * u[k + 3];
      b += c0 * v[k] + c1 * v[k + 1] + c2 * v[k + 2] + c3 * v[k + 3];
    }
    for (; k < len; k++) { a += f[k] * u[k]; b += f[k] * v[k]; }
    RV_PUT2(o[0], a, m, p2, e1, zp, lo, hi);
    RV_PUT2(o[ops], b, m, p2, e1, zp, lo, hi);
  }
  if (i < n) *o = rv_out2(rv_dot(ip, f, len, acc0), m, p2, e1, zp, lo, hi);
}

/* The unrolled tap runs of 1..16 values, one entry per run length (RV_RUN defined at each use). */
#define RV_RUNS \
  RV_RUN(1) RV_RUN(2) RV_RUN(3) RV_RUN(4) RV_RUN(5) RV_RUN(6) RV_RUN(7) RV_RUN(8) \
  RV_RUN(9) RV_RUN(10) RV_RUN(11) RV_RUN(12) RV_RUN(13) RV_RUN(14) RV_RUN(15) RV_RUN(16)

/* n interior outputs of a conv whose kh tap rows are dense runs of one length (its entry's), st its
   rv_conv1 requantising by bt_rq2 (conv1_row_k runs the other channels rolled: rare, kws's, vww's and
   ResNet-8's layers have none, and an unrolled entry for them 0.4 KB more). One entry per run length, linked only where the table bt_fx_rv_runs names it: model.c
   defines the table with the run lengths its one-channel convs take (codegen/fused_c.py rv_runs), the
   others rolled below; the weak table here (every length) serves a model.c without one. The entries'
   type and the table: bt_variants.h. */
#define RV_RUN(k)                                                                                         \
  void bt_fx_rv_run##k(const int8_t *const *ipr, int32_t step, int32_t n, int8_t *o, int32_t ops,        \
                       const bt_conv_params *p, const void *sv) {                                         \
    const rv_conv1 *st = (const rv_conv1 *)sv;                                                            \
    if (p->kh == 1) rv_run1_out(ipr[0], step, n, st->f, o, ops, p, st, k);                                \
    else rv_rows_pair(ipr, p->kh, step, n, st->f, o, ops, p, st, k);                                      \
  }
RV_RUNS
#undef RV_RUN
/* The same for convs of kh > 1 alone (rv_rows_pair: any kh, so a 1x1 through one gives the same bytes), without the
   1x1's pass: model.c's table names it for a run length no conv of kh 1 takes (kws's stem, 0.1 KB less). */
#define RV_RUN(k)                                                                                         \
  void bt_fx_rv_rows##k(const int8_t *const *ipr, int32_t step, int32_t n, int8_t *o, int32_t ops,       \
                        const bt_conv_params *p, const void *sv) {                                        \
    const rv_conv1 *st = (const rv_conv1 *)sv;                                                            \
    rv_rows_pair(ipr, p->kh, step, n, st->f, o, ops, p, st, k);                                           \
  }
RV_RUNS
#undef RV_RUN
/* A 1x1's dense run without an entry of its own (longer than 16 values), the table's [0]: rv_run_long, 0.7 KB, linked
   only where model.c's table names it (a conv of kh 1 whose run is longer may take the one-channel paths). */
void bt_fx_rv_run_long(const int8_t *const *ipr, int32_t step, int32_t n, int8_t *o, int32_t ops,
                       const bt_conv_params *p, const void *sv) {
  const rv_conv1 *st = (const rv_conv1 *)sv;
  rv_run_long(ipr[0], step, n, st->f, st->run, o, ops, p, st);
}
#define RV_RUN(k) [k] = bt_fx_rv_run##k,
__attribute__((weak)) bt_fx_rv_run_fn *const bt_fx_rv_runs[17] = {[0] = bt_fx_rv_run_long, RV_RUNS};
#undef RV_RUN

/* Output row y of a one-output-channel conv, pixels [xa, xb): border pixels (inside: 0) or interior
   pixels (inside: 1, every tap in the input; dense runs of up to 16 values unrolled where
   bt_fx_rv_runs has their length, a 1x1's other runs two pixels at a time where it has [0], the rest
   rolled; channels requantised by bt_rq2 only, the others rolled). */
static void conv1_row_k(const bt_conv_params *p, const rv_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
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
  if (st->dense && st->fast) {
    bt_fx_rv_run_fn *fn = run <= 16 ? bt_fx_rv_runs[run] : 0;
    if (!fn && p->kh == 1) fn = bt_fx_rv_runs[0];   /* a 1x1's other runs: bt_fx_rv_run_long */
    if (fn) {
      fn(ipr, step, n, o, ops, p, st);
      return;
    }
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

/* conv1_row_k for a segment that has pixels (conv1_rows' side segments are often empty). */
static inline __attribute__((always_inline)) void conv1_row(const bt_conv_params *p, const rv_conv1 *st,
                                                           const box_src *s, int8_t *orow, int32_t y, int32_t xa,
                                                           int32_t xb, int inside) {
  if (xa < xb) conv1_row_k(p, st, s, orow, y, xa, xb, inside);
}

#define FX_CONV1 rv_conv1
#include "../reference/fx_conv1_rows.h"

/* Output row y of a one-output-channel conv into d (a pulled conv's row, fx_k_pulled): conv1_rows for
   one row without its row-range bookkeeping, inlined into its caller. */
static inline __attribute__((always_inline)) void conv1_row1(const bt_conv_params *p, const rv_conv1 *st,
                                                            const box_src *s, const box_dst *d, int32_t y) {
  int8_t *const orow = box_orow(d, y);
  const int32_t iy = y * p->stride_h - p->pad_top, xi0 = st->xi0, xi1 = st->xi1;
  if (iy < 0 || iy + (p->kh - 1) * p->dil_h >= p->in.h) {
    conv1_row(p, st, s, orow, y, 0, p->out.w, 0);
    return;
  }
  conv1_row(p, st, s, orow, y, 0, xi0, 0);
  conv1_row(p, st, s, orow, y, xi0, xi1, 1);
  conv1_row(p, st, s, orow, y, xi1 > xi0 ? xi1 : xi0, p->out.w, 0);
}
#define FX_CONV1_ROW1

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

/* Interior outputs [xa, xb) of row y of a one-channel depthwise (ir: input row iy0's first byte): a 3x3 filter
   requantised by bt_rq2 with its taps in registers, else one rolled loop requantising by bt_rq2 or q (RV_ST_OUT:
   one copy of it for both, 0.3 KB). */
static void dw1_interior(const bt_conv_params *p, const rv_conv1 *w, const int8_t *ir, int8_t *orow, int32_t xa,
                         int32_t xb) {
  const int8_t *fk = p->filter;
  const int32_t ps = p->in.pixel_stride, row = p->in.w * ps, dy = p->dil_h * row, dx = p->dil_w * ps;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, ops = p->out.pixel_stride;
  const int32_t acc0 = w->acc0, m = w->m, p2 = w->p2, e1 = w->e1;
  const int8_t *ip = ir + (xa * p->stride_w - p->pad_left) * ps;
  const int32_t step = p->stride_w * ps;
  if (w->fast && p->kh == 3 && p->kw == 3) {
    const int32_t f0 = fk[0], f1 = fk[1], f2 = fk[2], f3 = fk[3], f4 = fk[4], f5 = fk[5];
    const int32_t f6 = fk[6], f7 = fk[7], f8 = fk[8];
    int8_t *o = orow + xa * ops;
    int32_t x = xa;
    if (step == 1 && dx == 1)   /* two outputs per pass: each row's four bytes loaded once */
      for (; x + 2 <= xb; x += 2, ip += 2, o += 2 * ops) {
        const int8_t *r0 = ip, *r1 = ip + dy, *r2 = ip + 2 * dy;
        int32_t a = acc0, b = acc0, u0, u1, u2, u3;
        u0 = r0[0]; u1 = r0[1]; u2 = r0[2]; u3 = r0[3];
        a += f0 * u0 + f1 * u1 + f2 * u2; b += f0 * u1 + f1 * u2 + f2 * u3;
        __asm__ volatile("" : "+r"(a), "+r"(b) : : "memory");
        u0 = r1[0]; u1 = r1[1]; u2 = r1[2]; u3 = r1[3];
        a += f3 * u0 + f4 * u1 + f5 * u2; b += f3 * u1 + f4 * u2 + f5 * u3;
        __asm__ volatile("" : "+r"(a), "+r"(b) : : "memory");
        u0 = r2[0]; u1 = r2[1]; u2 = r2[2]; u3 = r2[3];
        a += f6 * u0 + f7 * u1 + f8 * u2; b += f6 * u1 + f7 * u2 + f8 * u3;
        RV_PUT2(o[0], a, m, p2, e1, zp, lo, hi);
        RV_PUT2(o[ops], b, m, p2, e1, zp, lo, hi);
      }
    for (; x < xb; x++, ip += step, o += ops) {
      const int8_t *r0 = ip, *r1 = ip + dy, *r2 = ip + 2 * dy;
      const int32_t a = acc0 + f0 * r0[0] + f1 * r0[dx] + f2 * r0[2 * dx] + f3 * r1[0] + f4 * r1[dx] + f5 * r1[2 * dx]
                        + f6 * r2[0] + f7 * r2[dx] + f8 * r2[2 * dx];
      RV_PUT2(*o, a, m, p2, e1, zp, lo, hi);
    }
    return;
  }
  for (int32_t x = xa; x < xb; x++, ip += step) {
    int32_t a = acc0;
    const int8_t *f = fk;
    for (int32_t ky = 0; ky < p->kh; ky++)
      for (int32_t kx = 0; kx < p->kw; kx++) a += *f++ * ip[ky * dy + kx * dx];
    orow[x * ops] = RV_ST_OUT(a, w, zp, lo, hi);
  }
}

/* A depthwise on a one-channel input (in.c == out.c == 1, multiplier 1) over rows [y0, y1) into d
   (first 0: a later channel of the same tile, w's geometry (interior columns) kept); 0 when this
   path does not apply. */
static int dw1_ch(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
                  int32_t y1, rv_conv1 *w, int first) {
  const bt_conv_params *p = &dp->conv;
  if (first) {
    if (p->out.c != 1 || dp->depth_multiplier != 1) return 0;
    box_interior(p, &w->xi0, &w->xi1);
  }
  if (!rv_chan_rq(p, &w->fast, &w->m, &w->p2, &w->e1, &w->q)) return 0;
  int32_t fsum = 0, ya, yb;
  for (int32_t t = 0; t < p->kh * p->kw; t++) fsum += p->filter[t];
  w->acc0 = (p->bias ? p->bias[0] : 0) + p->input_offset * fsum;
  const int32_t ops = p->out.pixel_stride, xi0 = w->xi0, xi1 = w->xi1;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, in_row = p->in.w * p->in.pixel_stride;
  box_inside_rows(p, y0, y1, &ya, &yb);
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = box_orow(d, y);
    const int32_t iy0 = y * p->stride_h - p->pad_top, inside = y >= ya && y < yb;
    const int32_t a = inside ? xi0 : p->out.w, b = inside ? xi1 : p->out.w;
    for (int32_t x = 0; x < p->out.w; x++) {
      if (x == a && a < b) { dw1_interior(p, w, in + (iy0 - in_y0) * in_row, orow, a, b); x = b - 1; continue; }
      orow[x * ops] = rv_rq_out(dw1_border(p, in, in_y0, iy0, x * p->stride_w - p->pad_left), &w->q, zp, lo, hi);
    }
  }
  return 1;
}

static int dw1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
               int32_t y1) {
  rv_conv1 w;
  return dw1_ch(dp, in, in_y0, d, y0, y1, &w, 1);
}
#define FX_DW1_CHAN rv_conv1

#define FX_SET_PATHS
#define FX_BOX_ONE_CHANNEL 1   /* fx_k_box: fx_hooks.h's, one-channel boxes only */
#include "../reference/fused_ref.h"

#include "../reference/fx_hooks.h"

/* fx_chw where code generation proved that the one-channel paths take every channel of every tile (codegen/fused_c.py
   rv_chw_only: a one-channel window, the conv's kh <= RV_KH, depth multiplier 1, no multiplier INT32_MIN): fx_k_chw1
   without its fallbacks, so the plan links neither fx_chw_k's channel groups nor fx_win's box and row loops nor the
   dispatcher bt_conv_s8 and its variants (kws's least-RAM plan on riscv32: 5.6 KB). */
void fx_chw_rv(const void *cprm, const fx_buf *cin, const fx_buf *win, int32_t wra, int32_t wrb, int32_t wca,
               int32_t wcb, const void *dprm, const int8_t *fch, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca,
               int32_t cb, int32_t channels) {
  chw1_b(0, cprm, cin, win, wra, wrb, wca, wcb, dprm, fch, out, ra, rb, ca, cb, channels);
}

/* fx_rv_pw1's pixel: a 1x1 conv (no multiplier INT32_MIN: rv_rq_ok) of input pixel ip into output pixel o, four
   output channels a pass sharing each input load (the input offset added once per input), then the rest one by one;
   bt_conv_s8's bytes. */
static void pw1_px(const bt_conv_params *p, const int8_t *ip, int8_t *o) {
  const int32_t cin = p->in.c, cout = p->out.c, off = p->input_offset;
  const int8_t *f0 = p->filter;
  for (int32_t oc = 0; oc < cout; oc += 4, f0 += 4 * cin) {
    /* the last group's missing filters read its last one again (their sums not stored) */
    const int32_t n = cout - oc < 4 ? cout - oc : 4;
    const int8_t *f1 = f0 + (n > 1) * cin, *f2 = f0 + (n > 2) * 2 * cin, *f3 = f0 + (n > 3) * 3 * cin;
    const int8_t *q = ip, *const end = ip + (cin & ~1);
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, i = 0;
    for (; q != end; q += 2, i += 2) {
      const int32_t x0 = q[0] + off, x1 = q[1] + off;
      a0 += f0[i] * x0 + f0[i + 1] * x1; a1 += f1[i] * x0 + f1[i + 1] * x1;
      a2 += f2[i] * x0 + f2[i + 1] * x1; a3 += f3[i] * x0 + f3[i + 1] * x1;
    }
    if (cin & 1) {
      const int32_t x0 = q[0] + off;
      a0 += f0[i] * x0; a1 += f1[i] * x0; a2 += f2[i] * x0; a3 += f3[i] * x0;
    }
    const int32_t acc[4] = {a0, a1, a2, a3};
    for (int32_t k = 0; k < n; k++) {
      rv_rq rq;
      rv_rq_init(&rq, p->multiplier[oc + k], p->shift[oc + k]);
      o[oc + k] = rv_rq_out(acc[k] + (p->bias ? p->bias[oc + k] : 0), &rq, p->output_offset, p->act_min, p->act_max);
    }
  }
}

/* fx_win_conv_all (output rows [ra, rb) x cols [ca, cb) of conv prm from buffer in into out) for a 1x1 conv of an
   unpadded layer without multiplier INT32_MIN, pixel by pixel (pw1_px) on the layer's own parameters: no tile
   geometry, no row-band or box loops. model.c's call where every tile of such a layer is one column wide
   (codegen/fused_c.py rv_pw1), where bt_conv_s8_general takes the same path (its border loop: no interior of two
   columns) in 4.2 KB of code and bt_conv_s8_pointwise sets up every channel group a call (kws's least-RAM plan on
   riscv32: 125 one-pixel tiles a layer). */
void fx_rv_pw1(const void *prm, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb, int32_t ca, int32_t cb) {
  const bt_conv_params *p = prm;
  for (int32_t y = ra; y < rb; y++)
    for (int32_t x = ca; x < cb; x++) pw1_px(p, fx_at(in, y * p->stride_h, x * p->stride_w), fx_at(out, y, x));
}
