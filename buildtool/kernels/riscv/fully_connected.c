/* FULLY_CONNECTED int8 for RISC-V rv32imac (four outputs per input load, two inputs per step, pointer
 * stepping) and, with
 * -DBT_RVV, RVV 1.0 (16 outputs per vector: strided weight loads + vwmacc.vx by the scalar input;
 * vector requantisation of per-channel multipliers; per-tensor quantisation uses the scalar loop).
 * A non-zero filter_offset takes the plain scalar path. */
#include "bt_kernels.h"
#include "requant.h"
#ifdef BT_RVV
#include "rvv.h"
#endif

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  const int32_t n = p->n_in, n_out = p->n_out, off = p->input_offset, zp = p->output_offset;
  const int32_t lo = p->act_min, hi = p->act_max, pc = p->per_channel, foff = p->filter_offset;
  const int8_t *const wts = p->weights;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * n;
    int8_t *y = out + b * n_out;
    int32_t o = 0;
#ifdef BT_RVV
    if (pc && foff == 0) {
      for (; o < n_out;) {
        const int32_t vl = bt_rvv_setvl16(n_out - o);
        bt_rvv_acc_zero(vl);
        const int8_t *w = wts + o * n;
        for (int32_t i = 0; i < n; i++) bt_rvv_mac_vx_strided(w + i, n, x[i] + off);
        bt_rvv_requant_store(vl, bias ? bias + o : 0, mult + o, shift + o, zp, lo, hi, y + o);
        o += vl;
      }
    }
#endif
    if (foff == 0) {
      for (; o + 4 <= n_out; o += 4) {
        const int8_t *w0 = wts + o * n, *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const int8_t *xp = x, *const end = x + (n & ~1);
        for (; xp != end; xp += 2, w0 += 2, w1 += 2, w2 += 2, w3 += 2) {  /* pointer stepping, 2 inputs */
          const int32_t u = xp[0] + off, v = xp[1] + off;
          a0 += w0[0] * u + w0[1] * v; a1 += w1[0] * u + w1[1] * v;
          a2 += w2[0] * u + w2[1] * v; a3 += w3[0] * u + w3[1] * v;
        }
        if (n & 1) {
          const int32_t u = xp[0] + off;
          a0 += w0[0] * u; a1 += w1[0] * u; a2 += w2[0] * u; a3 += w3[0] * u;
        }
        int32_t acc[4] = {a0, a1, a2, a3};
        for (int k = 0; k < 4; k++) {
          const int32_t j = pc ? o + k : 0;
          const int32_t a = acc[k] + (bias ? bias[o + k] : 0);
          y[o + k] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[j], shift[j]) + zp, lo, hi);
        }
      }
    }
    for (; o < n_out; o++) {
      const int8_t *w = wts + o * n;
      int32_t a = 0;
      for (int32_t i = 0; i < n; i++) a += (w[i] + foff) * (x[i] + off);
      if (bias) a += bias[o];
      const int32_t j = pc ? o : 0;
      y[o] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[j], shift[j]) + zp, lo, hi);
    }
  }
}
