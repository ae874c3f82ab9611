/* FULLY_CONNECTED int8 for RISC-V rv32imac and, with -DBT_RVV, RVV 1.0 (16 outputs per vector:
 * strided weight loads + vwmacc.vx by the scalar input; vector requantisation of per-channel
 * multipliers; per-tensor quantisation uses the scalar loop).
 * Scalar, filter_offset 0: four weight rows per pass over the input, four inputs per step (each row
 * pointer steps once per four inputs), the last one to three rows two and one at a time the same
 * way; each output requantised by bt_rq2s (requant.h) when its multiplier and shift allow it
 * (TFLite's do), else bt_mbqm_fast. A non-zero filter_offset takes the plain scalar path.
 * Compiled without pre-allocation scheduling (GCC's default hoists the 4x4 step's loads and spills the
 * accumulators to the stack) and without induction-variable rewriting (the steps keep their own
 * pointers); the entry point keeps only p live (the generic path is a function of its own), so small
 * layers do not pay for spilling every parameter at entry. */
#pragma GCC optimize("no-schedule-insns", "no-ivopts")
#include "bt_kernels.h"
#include "requant.h"
#ifdef BT_RVV
#include "rvv.h"
#endif

/* clamp(MultiplyByQuantizedMultiplier(acc, m, s) + zp, lo, hi) as int8: bt_rq2s when m and s allow it
 * (bt_rq2_ok), else bt_mbqm_fast; v is in [lo, hi] exactly when v - lo <= hi - lo unsigned (one compare). */
BT_INLINE int8_t fc_out(int32_t acc, int32_t m, int32_t s, int32_t zp, int32_t lo, int32_t hi) {
  const int32_t e2 = -2 - s;
  int32_t v = (m >= (1 << 30) && (uint32_t)e2 < 30u) ? bt_rq2s(acc, m, e2) : bt_mbqm_fast(acc, m, s);
  v += zp;
  if ((uint32_t)(v - lo) > (uint32_t)(hi - lo)) v = v < lo ? lo : hi;
  return (int8_t)v;
}

/* Rows o..o+3 (weights w0, n per row) of one input vector x; pc: per-channel parameters. */
BT_INLINE void fc_rows4(const bt_fc_params *p, int pc, const int8_t *x, const int8_t *w0, int32_t n, int32_t off,
                        int8_t *y, int32_t o) {
  const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n, *const end4 = x + (n & ~3), *const end = x + n;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (; x != end4; x += 4, w0 += 4, w1 += 4, w2 += 4, w3 += 4) {
    const int32_t u0 = x[0] + off, u1 = x[1] + off, u2 = x[2] + off, u3 = x[3] + off;
    a0 += w0[0] * u0 + w0[1] * u1 + w0[2] * u2 + w0[3] * u3;
    a1 += w1[0] * u0 + w1[1] * u1 + w1[2] * u2 + w1[3] * u3;
    a2 += w2[0] * u0 + w2[1] * u1 + w2[2] * u2 + w2[3] * u3;
    a3 += w3[0] * u0 + w3[1] * u1 + w3[2] * u2 + w3[3] * u3;
  }
  for (; x != end; x++, w0++, w1++, w2++, w3++) {
    const int32_t u = x[0] + off;
    a0 += w0[0] * u; a1 += w1[0] * u; a2 += w2[0] * u; a3 += w3[0] * u;
  }
  if (p->bias) a0 += p->bias[o], a1 += p->bias[o + 1], a2 += p->bias[o + 2], a3 += p->bias[o + 3];
  const int32_t *m = p->multiplier + (pc ? o : 0), *s = p->shift + (pc ? o : 0);
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  y[o] = fc_out(a0, m[0], s[0], zp, lo, hi);
  y[o + 1] = fc_out(a1, m[pc], s[pc], zp, lo, hi);
  y[o + 2] = fc_out(a2, m[2 * pc], s[2 * pc], zp, lo, hi);
  y[o + 3] = fc_out(a3, m[3 * pc], s[3 * pc], zp, lo, hi);
}

/* Rows o, o+1. */
BT_INLINE void fc_rows2(const bt_fc_params *p, int pc, const int8_t *x, const int8_t *w0, int32_t n, int32_t off,
                        int8_t *y, int32_t o) {
  const int8_t *w1 = w0 + n, *const end4 = x + (n & ~3), *const end = x + n;
  int32_t a0 = 0, a1 = 0;
  for (; x != end4; x += 4, w0 += 4, w1 += 4) {
    const int32_t u0 = x[0] + off, u1 = x[1] + off, u2 = x[2] + off, u3 = x[3] + off;
    a0 += w0[0] * u0 + w0[1] * u1 + w0[2] * u2 + w0[3] * u3;
    a1 += w1[0] * u0 + w1[1] * u1 + w1[2] * u2 + w1[3] * u3;
  }
  for (; x != end; x++, w0++, w1++) {
    const int32_t u = x[0] + off;
    a0 += w0[0] * u; a1 += w1[0] * u;
  }
  if (p->bias) a0 += p->bias[o], a1 += p->bias[o + 1];
  const int32_t *m = p->multiplier + (pc ? o : 0), *s = p->shift + (pc ? o : 0);
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  y[o] = fc_out(a0, m[0], s[0], zp, lo, hi);
  y[o + 1] = fc_out(a1, m[pc], s[pc], zp, lo, hi);
}

/* Row o. */
BT_INLINE void fc_rows1(const bt_fc_params *p, int pc, const int8_t *x, const int8_t *w0, int32_t n, int32_t off,
                        int8_t *y, int32_t o) {
  const int8_t *const end4 = x + (n & ~3), *const end = x + n;
  int32_t a0 = p->bias ? p->bias[o] : 0;
  for (; x != end4; x += 4, w0 += 4)
    a0 += w0[0] * (x[0] + off) + w0[1] * (x[1] + off) + w0[2] * (x[2] + off) + w0[3] * (x[3] + off);
  for (; x != end; x++, w0++) a0 += w0[0] * (x[0] + off);
  const int32_t j = pc ? o : 0;
  y[o] = fc_out(a0, p->multiplier[j], p->shift[j], p->output_offset, p->act_min, p->act_max);
}

/* Every output of one input vector from output o on (filter_offset 0). */
BT_INLINE void fc_vector(const bt_fc_params *p, int pc, const int8_t *x, int8_t *y, int32_t o) {
  const int32_t n = p->n_in, n_out = p->n_out, off = p->input_offset;
  for (; o + 4 <= n_out; o += 4) fc_rows4(p, pc, x, p->weights + o * n, n, off, y, o);
  if (o + 2 <= n_out) fc_rows2(p, pc, x, p->weights + o * n, n, off, y, o), o += 2;
  if (o < n_out) fc_rows1(p, pc, x, p->weights + o * n, n, off, y, o);
}

/* Outputs o.. of one input vector with a non-zero filter_offset: the plain scalar loop. */
static __attribute__((noinline)) void fc_generic(const bt_fc_params *p, const int8_t *x, int8_t *y, int32_t o) {
  const int32_t n = p->n_in, off = p->input_offset, foff = p->filter_offset;
  for (; o < p->n_out; o++) {
    const int8_t *w = p->weights + o * n;
    const int32_t j = p->per_channel ? o : 0;
    int32_t a = 0;
    for (int32_t i = 0; i < n; i++) a += (w[i] + foff) * (x[i] + off);
    if (p->bias) a += p->bias[o];
    y[o] = (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[j], p->shift[j]) + p->output_offset, p->act_min, p->act_max);
  }
}

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * p->n_in;
    int8_t *y = out + b * p->n_out;
    int32_t o = 0;
#ifdef BT_RVV
    if (p->per_channel && p->filter_offset == 0) {
      const int32_t n = p->n_in, n_out = p->n_out, off = p->input_offset;
      for (; o < n_out;) {
        const int32_t vl = bt_rvv_setvl16(n_out - o);
        bt_rvv_acc_zero(vl);
        const int8_t *w = p->weights + o * n;
        for (int32_t i = 0; i < n; i++) bt_rvv_mac_vx_strided(w + i, n, x[i] + off);
        bt_rvv_requant_store(vl, p->bias ? p->bias + o : 0, p->multiplier + o, p->shift + o, p->output_offset,
                             p->act_min, p->act_max, y + o);
        o += vl;
      }
    }
#endif
    if (p->filter_offset != 0) fc_generic(p, x, y, o);
    else if (p->per_channel) fc_vector(p, 1, x, y, o);
    else fc_vector(p, 0, x, y, o);
  }
}
