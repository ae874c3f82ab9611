/* fused.c -- the fused-plan tile runtime for Cortex-M55 Helium (MVE): the reference runtime (included
 * below) with the one-channel calls of the channel-by-channel scheme on their own paths (fx_k_box,
 * fx_k_chw, fx_k_pulled through reference/fx_hooks.h). A tile computes an expansion conv one output
 * channel at a time into a one-channel window, then the depthwise on that window; the set's conv and
 * depthwise kernels work on groups of four channels and would run one lane of four there, paying
 * their whole set-up per call. Here, per call:
 *  - conv, one output channel (window, band or row bands, or pulled from the streamed input): the
 *    input offset folded into the start value (bias + offset * sum(filter), exact in int32). An
 *    interior pixel sums its tap rows (dense: kw * in.c bytes each, else one tap of in.c bytes) with
 *    VMLADAVA.S8: runs of up to 16 bytes are one zeroing-predicated load (VCTP.8 made once per call)
 *    against the filter row's vector loaded once per output row, longer runs 16 bytes a step with the
 *    last step predicated; four pixels' sums then requantised as one vector (mve.h: VQRDMULH and the
 *    rounding VRSHL) and stored by one VSTRB.32 (a scatter store when the output pixels are not
 *    adjacent). Border pixels walk their valid taps (reference/fx_box.h), requantised the same way;
 *  - depthwise on a one-channel input: four output pixels per vector, one int32 lane each: per tap
 *    one VLDRB.S32 of the four pixels' input bytes (contiguous at stride 1, else a gather load at
 *    offsets 0, s, 2s, 3s) and one VMLA.S32 by the tap as a scalar, from the start value (bias and
 *    folded offset); the last 1-3 pixels of a row predicated (VCTP.32); border pixels walk their
 *    valid taps.
 * Same results as the reference runtime, byte for byte (kernel_test.c). */
#include "bt_fused.h"
#include "requant.h"
#include "mve.h"
#include "fx_box.h"

#define M_KH 16     /* tap rows whose addresses and filter vectors an output row keeps */
#define M_TAPS 64   /* depthwise taps handled here (kh*kw) */

/* One channel's requantisation, clamp and output zero point, in every lane. */
typedef struct {
  mve_rq rq;
  int32_t zp, lo, hi;
} m_out;

static inline void m_out_init(m_out *q, const bt_conv_params *p) {
  q->rq = mve_rq_dup(p->multiplier[0], p->shift[0]);
  q->zp = p->output_offset;
  q->lo = p->act_min;
  q->hi = p->act_max;
}

/* n (1..4) outputs from the lanes of acc into o, o + ops, ..: requantised, clamped, stored (one
   VSTRB.32 when they are adjacent, else a scatter store; the last 1-3 predicated). */
MVE_INLINE void m_store(const m_out *q, int32x4_t acc, int8_t *o, int32_t ops, int32_t n) {
  const int32x4_t v = mve_requant(acc, q->rq, q->zp, q->lo, q->hi);
  if (ops == 1) {
    if (n == 4) vstrbq_s32(o, v);
    else vstrbq_p_s32(o, v, vctp32q((uint32_t)n));
    return;
  }
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)ops);
  vstrbq_scatter_offset_p_s32(o, offs, v, vctp32q((uint32_t)n));
}

/* A one-output-channel conv's per-call values: the filter, its runs (a tap row when dense, else a tap),
   the start value, the requantisation, the interior columns. */
typedef struct {
  m_out q;
  const int8_t *f;
  int32_t acc0, run, nrun, dense, xi0, xi1;
} m_conv1;

/* st = p's per-call values (p: one output channel); 0 when this path does not apply. first 0: a later
   channel of the same tile (fx_k_chw), st's geometry kept, only the channel's values worked out. */
static int conv1_prep_ch(const bt_conv_params *p, m_conv1 *st, int first) {
  const int32_t c = p->in.c, K = p->kh * p->kw * c;
  if (first) {
    if (p->kh > M_KH) return 0;
    st->dense = p->dil_w == 1 && p->in.pixel_stride == c;   /* a tap row is one run of bytes */
    st->run = st->dense ? p->kw * c : c;
    st->nrun = st->dense ? p->kh : p->kh * p->kw;
    box_interior(p, &st->xi0, &st->xi1);
  }
  st->f = p->filter;
  st->acc0 = (int32_t)((uint32_t)(p->bias ? p->bias[0] : 0) + (uint32_t)p->input_offset * (uint32_t)mve_sum(p->filter, K));
  m_out_init(&st->q, p);
  return 1;
}
#define conv1_prep(p, st) conv1_prep_ch(p, st, 1)
#define FX_CONV1_CHAN conv1_prep_ch

/* a + sum_{k<n} x[k] * w[k]: 16 bytes a step, the last step's loads zeroing-predicated. */
MVE_INLINE int32_t m_dot(int32_t a, const int8_t *x, const int8_t *w, int32_t n) {
  for (; n > 0; n -= 16, x += 16, w += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    a = vmladavaq_s8(a, vldrbq_z_s8(x, p), vldrbq_z_s8(w, p));
  }
  return a;
}

/* n interior outputs of a conv whose KH (1..3, a compile-time constant) tap rows are dense runs of at
   most 16 bytes (row r of output i at ipr[r] + i*step): per pixel and tap row one zeroing-predicated
   load (VCTP.8 made once) and one VMLADAVA.S8 against the row's filter vector held in a register;
   four pixels' sums requantised as one vector. */
MVE_INLINE void conv1_short(const int8_t *const *ipr, int32_t step, int32_t n, const int8_t *f, int32_t run,
                            int8_t *o, int32_t ops, const m_conv1 *st, int32_t acc0, const int KH) {
  const mve_pred16_t pr = vctp8q((uint32_t)run);
  const int8x16_t f0 = vldrbq_z_s8(f, pr);
  const int8x16_t f1 = KH > 1 ? vldrbq_z_s8(f + run, pr) : f0;
  const int8x16_t f2 = KH > 2 ? vldrbq_z_s8(f + 2 * run, pr) : f0;
  const int8_t *r0 = ipr[0], *r1 = ipr[KH > 1 ? 1 : 0], *r2 = ipr[KH > 2 ? 2 : 0];
#define M_PIX(a, k)                                                             \
  do {                                                                          \
    a = vmladavaq_s8(acc0, vldrbq_z_s8(r0 + (k) * step, pr), f0);               \
    if (KH > 1) a = vmladavaq_s8(a, vldrbq_z_s8(r1 + (k) * step, pr), f1);      \
    if (KH > 2) a = vmladavaq_s8(a, vldrbq_z_s8(r2 + (k) * step, pr), f2);      \
  } while (0)
  int32_t i = 0;
  for (; i + 4 <= n; i += 4, o += 4 * ops, r0 += 4 * step, r1 += 4 * step, r2 += 4 * step) {
    int32_t a0, a1, a2, a3;
    M_PIX(a0, 0); M_PIX(a1, 1); M_PIX(a2, 2); M_PIX(a3, 3);
    int32x4_t v = vdupq_n_s32(a0);
    v = vsetq_lane_s32(a1, v, 1);
    v = vsetq_lane_s32(a2, v, 2);
    v = vsetq_lane_s32(a3, v, 3);
    m_store(&st->q, v, o, ops, 4);
  }
  if (i < n) {
    int32x4_t v = vdupq_n_s32(0);
    int32_t a;
    M_PIX(a, 0); v = vsetq_lane_s32(a, v, 0);
    if (i + 1 < n) { M_PIX(a, 1); v = vsetq_lane_s32(a, v, 1); }
    if (i + 2 < n) { M_PIX(a, 2); v = vsetq_lane_s32(a, v, 2); }
    m_store(&st->q, v, o, ops, n - i);
  }
#undef M_PIX
}

/* n outputs of a dense conv (tap rows one run of st->run bytes each) from nky tap rows (row r of output i
   at ipr[r] + i*step, its filter run at f + r*run) with start value acc0: the rows inside the image of an
   interior pixel (all) or of a pixel at the top or bottom whose columns are inside (acc0 then holds the
   offset times those rows' sums only). */
static void conv1_span(const m_conv1 *st, const int8_t *const *ipr, int32_t nky, const int8_t *f, int32_t acc0,
                       int32_t step, int32_t n, int8_t *o, int32_t ops) {
  const int32_t run = st->run;
  if (run <= 16 && nky <= 3) {
    if (nky == 1) conv1_short(ipr, step, n, f, run, o, ops, st, acc0, 1);
    else if (nky == 2) conv1_short(ipr, step, n, f, run, o, ops, st, acc0, 2);
    else conv1_short(ipr, step, n, f, run, o, ops, st, acc0, 3);
    return;
  }
  if (run <= 8) {   /* many short tap rows (a stem's): four pixels in the lanes, per tap one VLDRB.S32 (a
                       gather at stride > 1) and one VMLA.S32 by the tap */
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)step);
    int32_t i = 0;
    for (; i + 4 <= n; i += 4, o += 4 * ops) {   /* whole groups: unpredicated loads */
      int32x4_t a = vdupq_n_s32(acc0);
      const int8_t *fp = f;
      for (int32_t ky = 0; ky < nky; ky++) {
        const int8_t *r = ipr[ky] + i * step;
        if (step == 1)
          for (int32_t t = 0; t < run; t++, fp++) a = vmlaq_n_s32(a, vldrbq_s32(r + t), *fp);
        else
          for (int32_t t = 0; t < run; t++, fp++) a = vmlaq_n_s32(a, vldrbq_gather_offset_s32(r + t, offs), *fp);
      }
      m_store(&st->q, a, o, ops, 4);
    }
    if (i < n) {
      const mve_pred16_t pr = vctp32q((uint32_t)(n - i));
      int32x4_t a = vdupq_n_s32(acc0);
      const int8_t *fp = f;
      for (int32_t ky = 0; ky < nky; ky++) {
        const int8_t *r = ipr[ky] + i * step;
        for (int32_t t = 0; t < run; t++, fp++) a = vmlaq_n_s32(a, vldrbq_gather_offset_z_s32(r + t, offs, pr), *fp);
      }
      m_store(&st->q, a, o, ops, n - i);
    }
    return;
  }
  for (int32_t i = 0; i < n; i += 4, o += 4 * ops) {
    const int32_t m = n - i < 4 ? n - i : 4;
    int32_t acc[4] = {0, 0, 0, 0};
    for (int32_t j = 0; j < m; j++) {
      int32_t a = acc0;
      for (int32_t ky = 0; ky < nky; ky++) a = m_dot(a, ipr[ky] + (i + j) * step, f + ky * run, run);
      acc[j] = a;
    }
    m_store(&st->q, mve_vec4(acc), o, ops, m);
  }
}

/* Interior outputs [xa, xb) of row y (every tap inside the input). */
static void conv1_inner(const bt_conv_params *p, const m_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                        int32_t xa, int32_t xb) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t ix = (xa * p->stride_w - p->pad_left) * ps, step = p->stride_w * ps, kh = p->kh;
  const int8_t *ipr[M_KH];
  for (int32_t ky = 0; ky < kh; ky++) ipr[ky] = box_row(s, iy0 + ky * p->dil_h) + ix;
  const int32_t run = st->run, n = xb - xa;
  int8_t *o = orow + xa * ops;
  if (st->dense) {
    conv1_span(st, ipr, kh, st->f, st->acc0, step, n, o, ops);
    return;
  }
  const int32_t kw = p->kw, dx = p->dil_w * ps;
  for (int32_t i = 0; i < n; i += 4, o += 4 * ops) {
    const int32_t m = n - i < 4 ? n - i : 4;
    int32_t acc[4] = {0, 0, 0, 0};
    for (int32_t j = 0; j < m; j++) {
      const int32_t off = (i + j) * step;
      int32_t a = st->acc0;
      const int8_t *f = st->f;
      for (int32_t ky = 0; ky < kh; ky++)
        for (int32_t kx = 0; kx < kw; kx++, f += run) a = m_dot(a, ipr[ky] + off + kx * dx, f, run);
      acc[j] = a;
    }
    m_store(&st->q, mve_vec4(acc), o, ops, m);
  }
}

/* One conv output (channel 0 of p) at a border pixel, not requantised: per valid tap row, its valid taps
   as one run (dense) by VMLADAVA.S8 with the filter's sum alongside (VADDVA.S8) for the input offset;
   taps one by one otherwise (reference/fx_box.h). */
static int32_t conv1_edge(const bt_conv_params *p, const m_conv1 *st, const box_src *s, int32_t iy0, int32_t ix0) {
  if (!st->dense) return conv1_border(p, s, iy0, ix0);
  const int32_t c = p->in.c;
  int32_t ky0, ky1, kx0, kx1, acc = p->bias ? p->bias[0] : 0, sw = 0;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &ky0, &ky1);
  box_taps(ix0, p->kw, 1, p->in.w, &kx0, &kx1);
  const int32_t n = (kx1 - kx0) * c;
  for (int32_t ky = ky0; ky < ky1; ky++) {
    const int8_t *ip = box_row(s, iy0 + ky * p->dil_h) + (ix0 + kx0) * c, *fp = st->f + (ky * p->kw + kx0) * c;
    for (int32_t k = n; k > 0; k -= 16, ip += 16, fp += 16) {
      const mve_pred16_t pr = vctp8q((uint32_t)k);
      const int8x16_t w = vldrbq_z_s8(fp, pr);
      acc = vmladavaq_s8(acc, vldrbq_z_s8(ip, pr), w);
      sw = vaddvaq_s8(sw, w);
    }
  }
  return (int32_t)((uint32_t)acc + (uint32_t)p->input_offset * (uint32_t)sw);
}

/* Border pixels [xa, xb) of output row y, four per vector (conv1_edge). */
static void conv1_edges(const bt_conv_params *p, const m_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                        int32_t xa, int32_t xb) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ops = p->out.pixel_stride;
  for (int32_t x = xa; x < xb; x += 4) {
    const int32_t m = xb - x < 4 ? xb - x : 4;
    int32_t acc[4] = {0, 0, 0, 0};
    for (int32_t j = 0; j < m; j++) acc[j] = conv1_edge(p, st, s, iy0, (x + j) * p->stride_w - p->pad_left);
    m_store(&st->q, mve_vec4(acc), orow + x * ops, ops, m);
  }
}

/* Output row y of a top or bottom row (some tap rows outside the image), pixels [xa, xb): its columns
   inside the image on the dense paths over the tap rows inside (the offset folded for those rows only),
   the others by conv1_edges. */
static void conv1_tb(const bt_conv_params *p, const m_conv1 *st, const box_src *s, int8_t *orow, int32_t y,
                     int32_t xa, int32_t xb) {
  const int32_t iy0 = y * p->stride_h - p->pad_top, ops = p->out.pixel_stride;
  const int32_t ca = xa > st->xi0 ? xa : st->xi0, cb = xb < st->xi1 ? xb : st->xi1;
  int32_t kya, kyb;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &kya, &kyb);
  if (!st->dense || ca >= cb || kya >= kyb) {
    conv1_edges(p, st, s, orow, y, xa, xb);
    return;
  }
  const int32_t ps = p->in.pixel_stride, run = st->run;
  const int8_t *ipr[M_KH];
  for (int32_t ky = kya; ky < kyb; ky++)
    ipr[ky - kya] = box_row(s, iy0 + ky * p->dil_h) + (ca * p->stride_w - p->pad_left) * ps;
  const int8_t *f = st->f + kya * run;
  const int32_t sum = mve_sum(f, (kyb - kya) * run);
  const int32_t acc0 = (int32_t)((uint32_t)(p->bias ? p->bias[0] : 0) + (uint32_t)p->input_offset * (uint32_t)sum);
  conv1_span(st, ipr, kyb - kya, f, acc0, p->stride_w * ps, cb - ca, orow + ca * ops, ops);
  if (xa < ca) conv1_edges(p, st, s, orow, y, xa, ca);
  if (cb < xb) conv1_edges(p, st, s, orow, y, cb, xb);
}

/* Output row y of a one-output-channel conv, pixels [xa, xb): border pixels (inside: 0) or interior
   pixels (inside: 1). */
static inline __attribute__((always_inline)) void conv1_row(const bt_conv_params *p, const m_conv1 *st,
                                                            const box_src *s, int8_t *orow, int32_t y, int32_t xa,
                                                            int32_t xb, int inside) {
  if (xa >= xb) return;
  if (inside) conv1_inner(p, st, s, orow, y, xa, xb);
  else if (xa < st->xi1 && xb > st->xi0) conv1_tb(p, st, s, orow, y, xa, xb);
  else conv1_edges(p, st, s, orow, y, xa, xb);
}

#define FX_CONV1 m_conv1

/* A 1x1 one-channel conv's rows (no padding, dense, in.c <= 16, outputs adjacent, no left shift): per
   output row one call of c1pw_run over its whole groups of four pixels (per pixel one zeroing-predicated
   VLDRB.8 (P0 set once from VCTP.8 of in.c) and one VMLADAVA.S8 against the filter held in q4, from the
   start value; per four pixels two two-lane VMOVs, the requantisation with the multiplier in q7 and one
   VSTRB.32), the last 1-3 pixels by conv1_short; instead of the three conv1_row calls per row of
   reference/fx_conv1_rows.h. */
typedef struct {
  int8x16_t f;                       /* 0: the filter, zero past in.c */
  int32x4_t mult, right, lo, hi, zp; /* 16 .. 80 */
  int32_t pred;                      /* 96: VCTP.8 of in.c */
} c1pw_job;

static __attribute__((noinline)) void c1pw_run(const int8_t *x, int32_t step, int32_t n4, int8_t *o, int32_t acc0,
                                               const c1pw_job *j) {
  register const int8_t *xr __asm__("r1") = x;
  register int32_t sr __asm__("r3") = step;
  register int8_t *orr __asm__("r5") = o;
  register int32_t nr __asm__("r9") = n4;
  register int32_t ar __asm__("r10") = acc0;
  register const c1pw_job *jr __asm__("r11") = j;
#define C1_PIX(ACC)                  \
  "mov " ACC ", r10\n"               \
  "vpst\n"                           \
  "vldrbt.8 q0, [r1]\n"              \
  "vmladava.s8 " ACC ", q0, q4\n"    \
  "add r1, r1, r3\n"
  __asm__ volatile(
      "vldrw.32 q4, [r11]\n"
      "vldrw.32 q7, [r11, #16]\n"
      "ldr r0, [r11, #96]\n"
      "vmsr p0, r0\n"
      "1:\n"
      C1_PIX("r0") C1_PIX("r2") C1_PIX("r4") C1_PIX("r8")
      "vmov q0[2], q0[0], r0, r4\n"
      "vmov q0[3], q0[1], r2, r8\n"
      "vqrdmulh.s32 q0, q0, q7\n"
      "vldrw.32 q1, [r11, #32]\n"
      "vand q2, q0, q1\n"
      "vshr.s32 q2, q2, #31\n"
      "vqadd.s32 q0, q0, q2\n"
      "vrshl.s32 q0, q0, q1\n"
      "vldrw.32 q1, [r11, #80]\n"
      "vadd.i32 q0, q0, q1\n"
      "vldrw.32 q1, [r11, #48]\n"
      "vmax.s32 q0, q0, q1\n"
      "vldrw.32 q1, [r11, #64]\n"
      "vmin.s32 q0, q0, q1\n"
      "vstrb.32 q0, [r5]\n"
      "adds r5, r5, #4\n"
      "subs r9, r9, #1\n"
      "bne 1b\n"
      : "+r"(xr), "+r"(orr), "+r"(nr)
      : "r"(sr), "r"(ar), "r"(jr)
      : "memory", "cc", "r0", "r2", "r4", "r8", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9",
        "d10", "d11", "d12", "d13", "d14", "d15");
#undef C1_PIX
}

static void conv1_rows(const bt_conv_params *p, const m_conv1 *st, const box_src *s, const box_dst *d, int32_t y0,
                       int32_t y1) {
  int32_t ya, yb;
  box_inside_rows(p, y0, y1, &ya, &yb);
  const int32_t ps = p->in.pixel_stride, ow = p->out.w;
  if (p->kh == 1 && p->kw == 1 && st->dense && st->run <= 16 && p->out.pixel_stride == 1 && ya == y0 && yb == y1 &&
      st->xi0 == 0 && st->xi1 == ow && vgetq_lane_s32(st->q.rq.left, 0) == 0 && ow >= 4) {
    c1pw_job j __attribute__((aligned(16)));
    const mve_pred16_t pr = vctp8q((uint32_t)st->run);
    j.f = vldrbq_z_s8(st->f, pr);
    j.mult = st->q.rq.mult; j.right = st->q.rq.right;
    j.lo = vdupq_n_s32(st->q.lo); j.hi = vdupq_n_s32(st->q.hi); j.zp = vdupq_n_s32(st->q.zp);
    j.pred = (int32_t)pr;
    const int32_t step = p->stride_w * ps, n4 = ow / 4, rest = ow - 4 * n4;
    for (int32_t y = y0; y < y1; y++) {
      const int8_t *x = box_row(s, y * p->stride_h - p->pad_top) - p->pad_left * ps;
      int8_t *o = box_orow(d, y);
      c1pw_run(x, step, n4, o, st->acc0, &j);
      if (rest) {
        const int8_t *ipr[1] = {x + 4 * n4 * step};
        conv1_short(ipr, step, rest, st->f, st->run, o + 4 * n4, 1, st, st->acc0, 1);
      }
    }
    return;
  }
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = box_orow(d, y);
    if (y < ya || y >= yb) { conv1_row(p, st, s, orow, y, 0, p->out.w, 0); continue; }
    conv1_row(p, st, s, orow, y, 0, st->xi0, 0);
    conv1_row(p, st, s, orow, y, st->xi0, st->xi1, 1);
    conv1_row(p, st, s, orow, y, st->xi1 > st->xi0 ? st->xi1 : st->xi0, p->out.w, 0);
  }
}

/* One depthwise output at a border pixel (taps fk, the offset not folded): the valid taps only. */
static int32_t dw1_border(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int32_t iy0, int32_t ix0) {
  const int32_t ps = p->in.pixel_stride, in_row = p->in.w * ps, off = p->input_offset;
  int32_t ky0, ky1, kx0, kx1, acc = p->bias ? p->bias[0] : 0;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &ky0, &ky1);
  box_taps(ix0, p->kw, p->dil_w, p->in.w, &kx0, &kx1);
  for (int32_t ky = ky0; ky < ky1; ky++) {
    const int8_t *ip = in + (iy0 + ky * p->dil_h - in_y0) * in_row + (ix0 + kx0 * p->dil_w) * ps;
    const int8_t *f = p->filter + ky * p->kw;
    for (int32_t kx = kx0; kx < kx1; kx++, ip += p->dil_w * ps) acc += f[kx] * (*ip + off);
  }
  return acc;
}

/* Interior outputs [xa, xb) of one row of a one-channel depthwise (ir: input row iy0's first byte), four
   pixels per vector: per tap a VLDRB.S32 of their input bytes (a gather at stride > 1) and a VMLA.S32
   by the tap; acc0: bias and folded offset. */
static void dw1_inner(const bt_conv_params *p, const int32_t *fk, int32_t acc0, const m_out *q, const int8_t *ir,
                      int8_t *orow, int32_t xa, int32_t xb) {
  const int32_t ps = p->in.pixel_stride, row = p->in.w * ps, dy = p->dil_h * row, dx = p->dil_w * ps;
  const int32_t ops = p->out.pixel_stride, step = p->stride_w * ps, kh = p->kh, kw = p->kw;
  const int8_t *ip = ir + (xa * p->stride_w - p->pad_left) * ps;
  int8_t *o = orow + xa * ops;
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)step);
  const int32_t n = xb - xa;
  if (kh == 3 && kw == 3 && step > 1) {   /* stride > 1: gather loads, the nine taps in registers */
    const int32_t f0 = fk[0], f1 = fk[1], f2 = fk[2], f3 = fk[3], f4 = fk[4], f5 = fk[5], f6 = fk[6];
    const int32_t f7 = fk[7], f8 = fk[8];
    for (int32_t i = 0; i < n; i += 4, ip += 4 * step, o += 4 * ops) {
      const int32_t m = n - i < 4 ? n - i : 4;
      const mve_pred16_t pr = vctp32q((uint32_t)m);
      const int8_t *r1 = ip + dy, *r2 = r1 + dy;
      int32x4_t a = vmlaq_n_s32(vdupq_n_s32(acc0), vldrbq_gather_offset_z_s32(ip, offs, pr), f0);
      int32x4_t b = vmulq_n_s32(vldrbq_gather_offset_z_s32(ip + dx, offs, pr), f1);
      a = vmlaq_n_s32(a, vldrbq_gather_offset_z_s32(ip + 2 * dx, offs, pr), f2);
      b = vmlaq_n_s32(b, vldrbq_gather_offset_z_s32(r1, offs, pr), f3);
      a = vmlaq_n_s32(a, vldrbq_gather_offset_z_s32(r1 + dx, offs, pr), f4);
      b = vmlaq_n_s32(b, vldrbq_gather_offset_z_s32(r1 + 2 * dx, offs, pr), f5);
      a = vmlaq_n_s32(a, vldrbq_gather_offset_z_s32(r2, offs, pr), f6);
      b = vmlaq_n_s32(b, vldrbq_gather_offset_z_s32(r2 + dx, offs, pr), f7);
      a = vmlaq_n_s32(a, vldrbq_gather_offset_z_s32(r2 + 2 * dx, offs, pr), f8);
      m_store(q, vaddq_s32(a, b), o, ops, m);
    }
    return;
  }
  if (kh == 3 && kw == 3 && step == 1) {
    const int32_t f0 = fk[0], f1 = fk[1], f2 = fk[2], f3 = fk[3], f4 = fk[4], f5 = fk[5], f6 = fk[6];
    const int32_t f7 = fk[7], f8 = fk[8];
    int32_t i = 0;
    for (; i + 4 <= n; i += 4, ip += 4, o += 4 * ops) {
      const int8_t *r1 = ip + dy, *r2 = r1 + dy;
      int32x4_t a = vmlaq_n_s32(vdupq_n_s32(acc0), vldrbq_s32(ip), f0);
      int32x4_t b = vmulq_n_s32(vldrbq_s32(ip + dx), f1);
      a = vmlaq_n_s32(a, vldrbq_s32(ip + 2 * dx), f2);
      b = vmlaq_n_s32(b, vldrbq_s32(r1), f3);
      a = vmlaq_n_s32(a, vldrbq_s32(r1 + dx), f4);
      b = vmlaq_n_s32(b, vldrbq_s32(r1 + 2 * dx), f5);
      a = vmlaq_n_s32(a, vldrbq_s32(r2), f6);
      b = vmlaq_n_s32(b, vldrbq_s32(r2 + dx), f7);
      a = vmlaq_n_s32(a, vldrbq_s32(r2 + 2 * dx), f8);
      m_store(q, vaddq_s32(a, b), o, ops, 4);
    }
    if (i < n) {
      const mve_pred16_t pr = vctp32q((uint32_t)(n - i));
      const int8_t *r1 = ip + dy, *r2 = r1 + dy;
      int32x4_t a = vdupq_n_s32(acc0);
      a = vmlaq_n_s32(a, vldrbq_z_s32(ip, pr), f0);
      a = vmlaq_n_s32(a, vldrbq_z_s32(ip + dx, pr), f1);
      a = vmlaq_n_s32(a, vldrbq_z_s32(ip + 2 * dx, pr), f2);
      a = vmlaq_n_s32(a, vldrbq_z_s32(r1, pr), f3);
      a = vmlaq_n_s32(a, vldrbq_z_s32(r1 + dx, pr), f4);
      a = vmlaq_n_s32(a, vldrbq_z_s32(r1 + 2 * dx, pr), f5);
      a = vmlaq_n_s32(a, vldrbq_z_s32(r2, pr), f6);
      a = vmlaq_n_s32(a, vldrbq_z_s32(r2 + dx, pr), f7);
      a = vmlaq_n_s32(a, vldrbq_z_s32(r2 + 2 * dx, pr), f8);
      m_store(q, a, o, ops, n - i);
    }
    return;
  }
  for (int32_t i = 0; i < n; i += 4, ip += 4 * step, o += 4 * ops) {
    const int32_t m = n - i < 4 ? n - i : 4;
    const mve_pred16_t pr = vctp32q((uint32_t)m);
    int32x4_t a = vdupq_n_s32(acc0);
    const int32_t *f = fk;
    for (int32_t ky = 0; ky < kh; ky++) {
      const int8_t *r = ip + ky * dy;
      for (int32_t kx = 0; kx < kw; kx++, r += dx, f++) {
        const int32x4_t x = step == 1 ? vldrbq_z_s32(r, pr) : vldrbq_gather_offset_z_s32(r, offs, pr);
        a = vmlaq_n_s32(a, x, *f);
      }
    }
    m_store(q, a, o, ops, m);
  }
}

/* A one-channel depthwise's geometry for a tile (the same for every channel of a channelwise window). */
typedef struct {
  int32_t xi0, xi1, ya, yb;
} m_dw1;

/* A depthwise on a one-channel input (in.c == out.c == 1, multiplier 1) over rows [y0, y1) into d (first
   0: a later channel of the same tile, w's geometry kept); 0 when this path does not apply. */
static int dw1_ch(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
                  int32_t y1, m_dw1 *w, int first) {
  const bt_conv_params *p = &dp->conv;
  const int32_t nt = p->kh * p->kw;
  if (first) {
    if (p->out.c != 1 || dp->depth_multiplier != 1 || nt > M_TAPS) return 0;
    box_interior(p, &w->xi0, &w->xi1);
    box_inside_rows(p, y0, y1, &w->ya, &w->yb);
  }
  int32_t fk[M_TAPS], fsum = 0;
  for (int32_t t = 0; t < nt; t++) { fk[t] = p->filter[t]; fsum += fk[t]; }
  const int32_t acc0 = (int32_t)((uint32_t)(p->bias ? p->bias[0] : 0) + (uint32_t)p->input_offset * (uint32_t)fsum);
  const int32_t ops = p->out.pixel_stride, in_row = p->in.w * p->in.pixel_stride;
  const int32_t xi0 = w->xi0, xi1 = w->xi1, ya = w->ya, yb = w->yb;
  m_out q;
  m_out_init(&q, p);
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = box_orow(d, y);
    const int32_t iy0 = y * p->stride_h - p->pad_top, inside = y >= ya && y < yb;
    const int32_t a = inside && xi1 > xi0 ? xi0 : p->out.w, b = inside && xi1 > xi0 ? xi1 : p->out.w;
    /* border pixels [0, a) and [b, out.w), four per vector */
    for (int32_t k = 0; k < 2; k++) {
      const int32_t s = k ? b : 0, e = k ? p->out.w : a;
      for (int32_t x = s; x < e; x += 4) {
        const int32_t m = e - x < 4 ? e - x : 4;
        int32_t acc[4] = {0, 0, 0, 0};
        for (int32_t j = 0; j < m; j++) acc[j] = dw1_border(p, in, in_y0, iy0, (x + j) * p->stride_w - p->pad_left);
        m_store(&q, mve_vec4(acc), orow + x * ops, ops, m);
      }
    }
    if (a < b) dw1_inner(p, fk, acc0, &q, in + (iy0 - in_y0) * in_row, orow, a, b);
  }
  return 1;
}

static int dw1(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, const box_dst *d, int32_t y0,
               int32_t y1) {
  m_dw1 w;
  return dw1_ch(dp, in, in_y0, d, y0, y1, &w, 1);
}
#define FX_DW1_CHAN m_dw1

#define FX_SET_PATHS
#include "../reference/fused_ref.h"

#define fx_k_box fx_k_box_one   /* fx_hooks.h's: the one-channel paths */
#include "../reference/fx_hooks.h"
#undef fx_k_box

/* One depthwise output pixel's channels [c, c + 4) (tail: fewer, pr their lanes) from its valid tap rows
   rp[ky] (each at the pixel's first tap column, channel c), taps [kxa, kxb): per tap the four input and
   filter bytes widened (VLDRB.S32), VMUL + VADD, the taps' sum alongside for the input offset. */
static inline __attribute__((always_inline)) void dwr_group(const bt_conv_params *p, const int8_t *const *rp,
                                                            int32_t kya, int32_t kyb, int32_t kxa, int32_t kxb,
                                                            int8_t *o, int32_t c, mve_pred16_t pr, const int tail) {
  const int32_t c_n = p->out.c, dx = p->dil_w * p->in.pixel_stride;
  int32x4_t acc = p->bias ? (tail ? vldrwq_z_s32(p->bias + c, pr) : vldrwq_s32(p->bias + c)) : vdupq_n_s32(0);
  int32x4_t sw = vdupq_n_s32(0);
  for (int32_t ky = kya; ky < kyb; ky++) {
    const int8_t *ip = rp[ky] + c, *fk = p->filter + (ky * p->kw + kxa) * c_n + c;
    for (int32_t kx = kxa; kx < kxb; kx++, ip += dx, fk += c_n) {
      const int32x4_t w = tail ? vldrbq_z_s32(fk, pr) : vldrbq_s32(fk);
      acc = vaddq_s32(acc, vmulq_s32(tail ? vldrbq_z_s32(ip, pr) : vldrbq_s32(ip), w));
      sw = vaddq_s32(sw, w);
    }
  }
  acc = vaddq_s32(acc, vmulq_n_s32(sw, p->input_offset));
  acc = mve_requant(acc, mve_rq_load(p->multiplier + c, p->shift + c, pr), p->output_offset, p->act_min, p->act_max);
  if (tail) vstrbq_p_s32(o + c, acc, pr);
  else vstrbq_s32(o + c, acc);
}

/* Output row y of a depthwise (multiplier 1) whose input rows are row bands at rows[iy] (from column x0),
   pixel by pixel with the channel groups inner: the reference runtime's fx_rows for rows that do not lie
   one after another (a ring of rows). */
static __attribute__((noinline)) void dw_rows(const bt_conv_params *p, int8_t *const *rows, int32_t x0, int8_t *out,
                                              int32_t y) {
  const int32_t c_n = p->out.c, ps = p->in.pixel_stride, ops = p->out.pixel_stride;
  const int32_t iy0 = y * p->stride_h - p->pad_top;
  int32_t kya, kyb;
  box_taps(iy0, p->kh, p->dil_h, p->in.h, &kya, &kyb);
  const int8_t *rp[M_KH];
  for (int32_t x = 0; x < p->out.w; x++) {
    const int32_t ix0 = x * p->stride_w - p->pad_left;
    int32_t kxa, kxb;
    box_taps(ix0, p->kw, p->dil_w, p->in.w, &kxa, &kxb);
    for (int32_t ky = kya; ky < kyb; ky++) rp[ky] = rows[iy0 + ky * p->dil_h] + (x0 + ix0 + kxa * p->dil_w) * ps;
    int8_t *o = out + x * ops;
    int32_t c = 0;
    for (; c + 4 <= c_n; c += 4) dwr_group(p, rp, kya, kyb, kxa, kxb, o, c, vctp32q(4), 0);
    if (c < c_n) dwr_group(p, rp, kya, kyb, kxa, kxb, o, c, vctp32q((uint32_t)(c_n - c)), 1);
  }
}

/* A whole box (reference: win_kind): a depthwise on row bands here (rows lying one after another go to
   bt_depthwise_s8 as in the reference, the others to dw_rows instead of fx_rows), the one-channel paths
   of fx_hooks.h, else the reference. */
static int fx_k_box(int kind, const fx_prm *q, const fx_buf *in, const fx_buf *out, int32_t ra, int32_t rb,
                    int32_t ca, int32_t oc, int32_t x0) {
  if (kind == FX_DW && in->rows && q->d.depth_multiplier == 1 && q->d.conv.kh <= M_KH && q->d.conv.out.c > 1) {
    const bt_conv_params *p = &q->d.conv;
    const int32_t pitch = in->wp * in->ps;
    for (int32_t y = ra; y < rb; y++) {
      int8_t *o = fx_at(out, y, ca) + oc;
      const int32_t iy = y * p->stride_h - p->pad_top;
      const int32_t r0 = BT_MAX(iy, 0), r1 = BT_MIN(iy + (p->kh - 1) * p->dil_h + 1, p->in.h);
      if (r1 > r0 && in->rows[r1 - 1] - in->rows[r0] == (r1 - 1 - r0) * pitch)
        bt_depthwise_s8(&q->d, in->rows[r0] + x0 * in->ps, r0, o, y, y + 1);
      else
        dw_rows(p, in->rows, x0, o, y);
    }
    return 1;
  }
  return fx_k_box_one(kind, q, in, out, ra, rb, ca, oc, x0);
}
