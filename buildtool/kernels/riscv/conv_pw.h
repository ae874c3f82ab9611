/* The riscv set's 1x1 convolution loops (scalar rv32imac), static inline: bt_conv_s8_pointwise (conv.c)
 * instantiates them for any layer, and model.c for each of its pointwise layers with that layer's
 * parameters as constants (BT_CONV_PW, bt_variants.h), so gcc folds the channel counts, strides,
 * offsets and loop bounds into the code. */
#ifndef BT_CONV_PW_H
#define BT_CONV_PW_H
#include "bt_kernels.h"
#include "rv_requant.h"

/* acc[k] (pixel q0) and acc[4 + k] (pixel q1) += sum_i f_k[i] * q[i] for the four filters f_k = f0 + k * fstride,
 * i < n, two inputs per step: every pointer steps by itself, so each load is one lb with an immediate offset. */
static inline void mac_4x2(const int8_t *f0, int32_t fstride, const int8_t *q0, const int8_t *q1, int32_t n,
                           int32_t *acc) {
  const int8_t *f1 = f0 + fstride, *f2 = f1 + fstride, *f3 = f2 + fstride;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t b0 = acc[4], b1 = acc[5], b2 = acc[6], b3 = acc[7];
  const int8_t *const q0_end = q0 + (n & ~1);
  for (; q0 != q0_end; q0 += 2, q1 += 2, f0 += 2, f1 += 2, f2 += 2, f3 += 2) {
    int32_t x0 = q0[0], x1 = q1[0], w0 = f0[0], w1 = f1[0], w2 = f2[0], w3 = f3[0];
    a0 += w0 * x0; a1 += w1 * x0; a2 += w2 * x0; a3 += w3 * x0;
    b0 += w0 * x1; b1 += w1 * x1; b2 += w2 * x1; b3 += w3 * x1;
    x0 = q0[1]; x1 = q1[1]; w0 = f0[1]; w1 = f1[1]; w2 = f2[1]; w3 = f3[1];
    a0 += w0 * x0; a1 += w1 * x0; a2 += w2 * x0; a3 += w3 * x0;
    b0 += w0 * x1; b1 += w1 * x1; b2 += w2 * x1; b3 += w3 * x1;
  }
  if (n & 1) {
    const int32_t x0 = q0[0], x1 = q1[0], w0 = f0[0], w1 = f1[0], w2 = f2[0], w3 = f3[0];
    a0 += w0 * x0; a1 += w1 * x0; a2 += w2 * x0; a3 += w3 * x0;
    b0 += w0 * x1; b1 += w1 * x1; b2 += w2 * x1; b3 += w3 * x1;
  }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3; acc[4] = b0; acc[5] = b1; acc[6] = b2; acc[7] = b3;
}

/* base[k] = bias + input_offset * sum(w) and the requantisation of channels oc..oc+n-1 (n <= 4) */
static inline void group_setup(const bt_conv_params *p, int32_t oc, int32_t n, int32_t fstride, int32_t *base, rv_rq *q) {
  for (int32_t k = 0; k < n; k++) {
    const int8_t *f = p->filter + (oc + k) * fstride;
    int32_t sw = 0;
    for (int32_t i = 0; i < fstride; i++) sw += f[i];
    base[k] = (p->bias ? p->bias[oc + k] : 0) + p->input_offset * sw;
    rv_rq_init(&q[k], p->multiplier[oc + k], p->shift[oc + k]);
  }
}

/* out[k] = requantised acc[k], k < 4 */
static inline void store_4(int8_t *o, const int32_t *acc, const rv_rq *q, int32_t zp, int32_t lo, int32_t hi) {
  o[0] = rv_rq_out(acc[0], &q[0], zp, lo, hi); o[1] = rv_rq_out(acc[1], &q[1], zp, lo, hi);
  o[2] = rv_rq_out(acc[2], &q[2], zp, lo, hi); o[3] = rv_rq_out(acc[3], &q[3], zp, lo, hi);
}

/* 1x1 convolution without padding: four output channels x two pixels per step (each weight load
 * feeds two multiply-adds, each input load four); the input offset enters once per output as
 * input_offset * sum(w), sum(w) and the requantisation parameters computed once per channel group. */
static inline __attribute__((always_inline)) void bt_conv_pw(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  const int32_t cin = p->in.c, cout = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, ow = p->out.w, step = p->stride_w * ips;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t oc = 0; oc < cout;) {
    const int32_t n = cout - oc >= 4 ? 4 : 1;
    const int8_t *f0 = p->filter + oc * cin;
    int32_t base[4] = {0, 0, 0, 0}, acc[8];
    rv_rq q[4];
    group_setup(p, oc, n, cin, base, q);
    /* stride 1 and rows as wide as the output's: the band's pixels are evenly spaced in the input and
     * the output, so the rows are walked as one run (pairs straddle row ends) */
    const int flat = p->stride_h == 1 && p->stride_w == 1 && p->in.w == p->out.w;
    for (int32_t y = y0; y < y1; y += flat ? y1 - y0 : 1) {
      const int8_t *ip = in + (y * p->stride_h - in_y0) * in_row;
      int8_t *o = out + (y - y0) * out_row + oc;
      const int32_t npix = flat ? (y1 - y0) * ow : ow;
      int32_t x = 0;
      if (n == 4) {
        for (; x + 2 <= npix; x += 2, ip += 2 * step, o += 2 * ops) {
          acc[0] = acc[4] = base[0]; acc[1] = acc[5] = base[1]; acc[2] = acc[6] = base[2]; acc[3] = acc[7] = base[3];
          mac_4x2(f0, cin, ip, ip + step, cin, acc);
          store_4(o, acc, q, zp, lo, hi);
          store_4(o + ops, acc + 4, q, zp, lo, hi);
        }
      }
      for (; x < npix; x++, ip += step, o += ops)
        for (int32_t k = 0; k < n; k++) {
          int32_t a = base[k];
          for (int32_t i = 0; i < cin; i++) a += f0[k * cin + i] * ip[i];
          o[k] = rv_rq_out(a, &q[k], zp, lo, hi);
        }
    }
    oc += n;
  }
}
#endif
