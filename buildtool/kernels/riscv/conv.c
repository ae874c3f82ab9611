/* CONV_2D int8 for RISC-V rv32imac (optimised scalar) and, with -DBT_RVV, RVV 1.0.
 * Scalar: 1x1 convolutions four channels x two pixels at a time (pointwise below); otherwise per
 * output pixel and valid tap, four output channels at a time share each input load (x + offset
 * computed once, four multiply-adds), parameters hoisted out of the loops (int8 stores alias
 * everything, so the compiler would reload them), bt_mbqm_fast requantisation.
 * RVV: vectorised across up to 16 output channels: per (tap, input channel) one strided byte load
 * of the 16 filters' weights (vlse8), a sign extension and a widening multiply-accumulate by the
 * scalar input (vwmacc.vx); requantisation of the 16 accumulators in vector registers. */
#include "bt_kernels.h"
#include "requant.h"
#ifdef BT_RVV
#include "rvv.h"
#endif

#ifdef BT_RVV
const char *bt_kernel_set_name(void) { return "riscv-rvv"; }
#else
const char *bt_kernel_set_name(void) { return "riscv"; }
#endif

#ifndef BT_RVV
#define RQ(a, k) ((int8_t)bt_clamp(bt_mbqm_fast((a), mult[k], shift[k]) + zp, lo, hi))

/* 1x1 convolution without padding: four output channels x two pixels per step (each weight load
 * feeds two multiply-adds, each input load four); the input offset enters once per output as
 * input_offset * sum(w), sum(w) computed once per channel group. */
__attribute__((noinline)) static void pointwise(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  const int32_t cin = p->in.c, cout = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, ow = p->out.w, step = p->stride_w * ips;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  for (int32_t oc = 0; oc < cout;) {
    const int32_t n = cout - oc >= 4 ? 4 : 1;
    const int8_t *f0 = p->filter + oc * cin, *f1 = f0 + cin, *f2 = f1 + cin, *f3 = f2 + cin;
    int32_t base[4] = {0, 0, 0, 0};
    for (int32_t k = 0; k < n; k++) {
      int32_t sw = 0;
      for (int32_t i = 0; i < cin; i++) sw += f0[k * cin + i];
      base[k] = (bias ? bias[oc + k] : 0) + off * sw;
    }
    for (int32_t y = y0; y < y1; y++) {
      const int8_t *ip = in + (y * p->stride_h - in_y0) * in_row;
      int8_t *o = out + (y - y0) * out_row + oc;
      int32_t x = 0;
      if (n == 4) {
        for (; x + 2 <= ow; x += 2, ip += 2 * step, o += 2 * ops) {
          const int8_t *q0 = ip, *q1 = ip + step;
          int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3];
          int32_t b0 = base[0], b1 = base[1], b2 = base[2], b3 = base[3];
          for (int32_t i = 0; i < cin; i++) {
            const int32_t x0 = q0[i], x1 = q1[i], w0 = f0[i], w1 = f1[i], w2 = f2[i], w3 = f3[i];
            a0 += w0 * x0; a1 += w1 * x0; a2 += w2 * x0; a3 += w3 * x0;
            b0 += w0 * x1; b1 += w1 * x1; b2 += w2 * x1; b3 += w3 * x1;
          }
          o[0] = RQ(a0, oc); o[1] = RQ(a1, oc + 1); o[2] = RQ(a2, oc + 2); o[3] = RQ(a3, oc + 3);
          o[ops] = RQ(b0, oc); o[ops + 1] = RQ(b1, oc + 1); o[ops + 2] = RQ(b2, oc + 2); o[ops + 3] = RQ(b3, oc + 3);
        }
      }
      for (; x < ow; x++, ip += step, o += ops)
        for (int32_t k = 0; k < n; k++) {
          int32_t a = base[k];
          for (int32_t i = 0; i < cin; i++) a += f0[k * cin + i] * ip[i];
          o[k] = RQ(a, oc + k);
        }
    }
    oc += n;
  }
}
#undef RQ
#endif

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                int8_t *out, int32_t y0, int32_t y1) {
  const int32_t cin = p->in.c, cout = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t ips = p->in.pixel_stride, in_row = p->in.w * ips, in_h = p->in.h, in_w = p->in.w;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, out_w = p->out.w;
  const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w, pt = p->pad_top, pl = p->pad_left;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int8_t *const filter = p->filter;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t fstride = kh * kw * cin;
#ifndef BT_RVV
  if (kh == 1 && kw == 1 && pt == 0 && pl == 0) {
    pointwise(p, in, in_y0, out, y0, y1);
    return;
  }
#endif
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * sh - pt;
    int32_t ky0 = 0, ky1 = kh;
    while (ky0 < kh && iy0 + ky0 * dh < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * dh >= in_h) ky1--;
    for (int32_t x = 0; x < out_w; x++) {
      const int32_t ix0 = x * sw - pl;
      int32_t kx0 = 0, kx1 = kw;
      while (kx0 < kw && ix0 + kx0 * dw < 0) kx0++;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= in_w) kx1--;
      int8_t *o = out + (y - y0) * out_row + x * ops;
      const int8_t *ibase = in + (iy0 - in_y0) * in_row + ix0 * ips;
#ifdef BT_RVV
      for (int32_t oc = 0; oc < cout;) {
        const int32_t vl = bt_rvv_setvl16(cout - oc);
        bt_rvv_acc_zero(vl);
        for (int32_t ky = ky0; ky < ky1; ky++)
          for (int32_t kx = kx0; kx < kx1; kx++) {
            const int8_t *ip = ibase + ky * dh * in_row + kx * dw * ips;
            const int8_t *fp = filter + oc * fstride + (ky * kw + kx) * cin;
            for (int32_t ic = 0; ic < cin; ic++) bt_rvv_mac_vx_strided(fp + ic, fstride, ip[ic] + off);
          }
        bt_rvv_requant_store(vl, bias ? bias + oc : 0, mult + oc, shift + oc, zp, lo, hi, o + oc);
        oc += vl;
      }
#else
      int32_t oc = 0;
      for (; oc + 4 <= cout; oc += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const int8_t *f0 = filter + oc * fstride;
        for (int32_t ky = ky0; ky < ky1; ky++)
          for (int32_t kx = kx0; kx < kx1; kx++) {
            const int8_t *ip = ibase + ky * dh * in_row + kx * dw * ips;
            const int8_t *fp = f0 + (ky * kw + kx) * cin;
            for (int32_t ic = 0; ic < cin; ic++) {
              const int32_t xv = ip[ic] + off;
              a0 += fp[ic] * xv;
              a1 += fp[ic + fstride] * xv;
              a2 += fp[ic + 2 * fstride] * xv;
              a3 += fp[ic + 3 * fstride] * xv;
            }
          }
        if (bias) { a0 += bias[oc]; a1 += bias[oc + 1]; a2 += bias[oc + 2]; a3 += bias[oc + 3]; }
        o[oc] = (int8_t)bt_clamp(bt_mbqm_fast(a0, mult[oc], shift[oc]) + zp, lo, hi);
        o[oc + 1] = (int8_t)bt_clamp(bt_mbqm_fast(a1, mult[oc + 1], shift[oc + 1]) + zp, lo, hi);
        o[oc + 2] = (int8_t)bt_clamp(bt_mbqm_fast(a2, mult[oc + 2], shift[oc + 2]) + zp, lo, hi);
        o[oc + 3] = (int8_t)bt_clamp(bt_mbqm_fast(a3, mult[oc + 3], shift[oc + 3]) + zp, lo, hi);
      }
      for (; oc < cout; oc++) {
        int32_t a = 0;
        const int8_t *f0 = filter + oc * fstride;
        for (int32_t ky = ky0; ky < ky1; ky++)
          for (int32_t kx = kx0; kx < kx1; kx++) {
            const int8_t *ip = ibase + ky * dh * in_row + kx * dw * ips;
            const int8_t *fp = f0 + (ky * kw + kx) * cin;
            for (int32_t ic = 0; ic < cin; ic++) a += fp[ic] * (ip[ic] + off);
          }
        if (bias) a += bias[oc];
        o[oc] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[oc], shift[oc]) + zp, lo, hi);
      }
#endif
    }
  }
}
