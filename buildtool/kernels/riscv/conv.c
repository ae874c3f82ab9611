/* CONV_2D int8 for RISC-V rv32imac (optimised scalar) and, with -DBT_RVV, RVV 1.0.
 * Scalar: 1x1 convolutions four channels x two pixels at a time (conv_pw.h); otherwise per
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
#include "rv_requant.h"
#include "bt_variants.h"   /* and conv_pw.h: the pointwise loops */

/* KxK interior: output rows [ya, yb), columns [xa, xb) (an even count), every tap inside the input;
 * four output channels x two pixels, one run per filter row when the input rows are dense. */
static void conv_interior(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                          int32_t ya, int32_t yb, int32_t xa, int32_t xb) {
  const int32_t cin = p->in.c, ips = p->in.pixel_stride, in_row = p->in.w * ips, kh = p->kh, kw = p->kw;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, fstride = kh * kw * cin;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max, step = p->stride_w * ips;
  const int dense = ips == cin && p->dil_w == 1;
  const int32_t run = dense ? kw * cin : cin, nrun = dense ? 1 : kw, rstep = dense ? 0 : p->dil_w * ips;
  for (int32_t oc = 0; oc < p->out.c; oc += 4) {
    int32_t base[4], acc[8];
    rv_rq q[4];
    group_setup(p, oc, 4, fstride, base, q);
    const int8_t *const f0 = p->filter + oc * fstride;
    for (int32_t y = ya; y < yb; y++) {
      const int8_t *ip = in + (y * p->stride_h - p->pad_top - in_y0) * in_row + (xa * p->stride_w - p->pad_left) * ips;
      int8_t *o = out + (y - y0) * out_row + xa * ops + oc;
      for (int32_t x = xa; x < xb; x += 2, ip += 2 * step, o += 2 * ops) {
        acc[0] = acc[4] = base[0]; acc[1] = acc[5] = base[1]; acc[2] = acc[6] = base[2]; acc[3] = acc[7] = base[3];
        const int8_t *r = ip, *f = f0;
        for (int32_t ky = 0; ky < kh; ky++, r += p->dil_h * in_row)
          for (int32_t k = 0; k < nrun; k++, f += run) mac_4x2(f, fstride, r + k * rstep, r + k * rstep + step, run, acc);
        store_4(o, acc, q, zp, lo, hi);
        store_4(o + ops, acc + 4, q, zp, lo, hi);
      }
    }
  }
}


/* acc[k] += sum_i fp[k*fstride + i] * (ip[i] + off), k < 4, i < n: pointer stepping, two inputs per step */
static inline void mac_4(const int8_t *f0, int32_t fstride, const int8_t *ip, int32_t n, int32_t off, int32_t *acc) {
  const int8_t *f1 = f0 + fstride, *f2 = f1 + fstride, *f3 = f2 + fstride, *const end = ip + (n & ~1);
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  for (; ip != end; ip += 2, f0 += 2, f1 += 2, f2 += 2, f3 += 2) {
    const int32_t x0 = ip[0] + off, x1 = ip[1] + off;
    a0 += f0[0] * x0 + f0[1] * x1; a1 += f1[0] * x0 + f1[1] * x1;
    a2 += f2[0] * x0 + f2[1] * x1; a3 += f3[0] * x0 + f3[1] * x1;
  }
  if (n & 1) {
    const int32_t x0 = ip[0] + off;
    a0 += f0[0] * x0; a1 += f1[0] * x0; a2 += f2[0] * x0; a3 += f3[0] * x0;
  }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}
#endif

#ifndef BT_RVV
void bt_conv_s8_pointwise(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                          int32_t y1) {
  bt_conv_pw(p, in, in_y0, out, y0, y1);
}

/* The variant bt_conv_s8 takes for p (buildtool/codegen/kernel_variants.py states the same rule). */
static int conv_is_pointwise(const bt_conv_params *p) {
  return p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0 && rv_rq_ok(p->multiplier, p->out.c);
}

const char *bt_conv_s8_variant(const bt_conv_params *p) {
  return conv_is_pointwise(p) ? "bt_conv_s8_pointwise" : "bt_conv_s8_general";
}

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  if (conv_is_pointwise(p)) bt_conv_s8_pointwise(p, in, in_y0, out, y0, y1);
  else bt_conv_s8_general(p, in, in_y0, out, y0, y1);
}

/* Every other convolution: an interior block by conv_interior, the border by the loops below. */
void bt_conv_s8_general(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                        int32_t y1) {
#else
void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                int8_t *out, int32_t y0, int32_t y1) {
#endif
  const int32_t cin = p->in.c, cout = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t ips = p->in.pixel_stride, in_row = p->in.w * ips, in_h = p->in.h, in_w = p->in.w;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops, out_w = p->out.w;
  const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w, pt = p->pad_top, pl = p->pad_left;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int8_t *const filter = p->filter;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t fstride = kh * kw * cin;
#ifndef BT_RVV
  /* interior block (an even number of columns) with conv_interior, the rest with the loops below */
  int32_t xa = 0, xb = out_w, ya = y0, yb = y1;
  while (xa < xb && xa * sw - pl < 0) xa++;
  while (xb > xa && (xb - 1) * sw - pl + (kw - 1) * dw >= in_w) xb--;
  while (ya < yb && ya * sh - pt < 0) ya++;
  while (yb > ya && (yb - 1) * sh - pt + (kh - 1) * dh >= in_h) yb--;
  xb = xa + ((xb - xa) & ~1);
  if (cout % 4 || xa == xb || ya == yb || !rv_rq_ok(mult, cout)) ya = yb = y0;
  if (ya < yb) conv_interior(p, in, in_y0, out, y0, ya, yb, xa, xb);
#else
  const int32_t xa = 0, xb = 0, ya = 0, yb = 0;
#endif
  for (int32_t y = y0; y < y1; y++) {
    const int32_t skip = y >= ya && y < yb ? xa : out_w;   /* columns [xa, xb) of rows [ya, yb): done */
    const int32_t iy0 = y * sh - pt;
    int32_t ky0 = 0, ky1 = kh;
    while (ky0 < kh && iy0 + ky0 * dh < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * dh >= in_h) ky1--;
    for (int32_t x = 0; x < out_w; x++) {
      if (x == skip) { x = xb - 1; continue; }
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
      /* dense rows (pixel stride = channels, no horizontal dilation): the valid taps of one filter
       * row are one contiguous run in the input and in the filter */
      const int dense = ips == cin && dw == 1;
      const int32_t run = dense ? (kx1 - kx0) * cin : cin, nrun = dense ? 1 : kx1 - kx0;
      for (; oc + 4 <= cout; oc += 4) {
        int32_t acc[4] = {0, 0, 0, 0};
        const int8_t *f0 = filter + oc * fstride;
        for (int32_t ky = ky0; ky < ky1; ky++)
          for (int32_t r = 0; r < nrun; r++) {
            const int32_t kx = kx0 + r;
            mac_4(f0 + (ky * kw + kx) * cin, fstride, ibase + ky * dh * in_row + kx * dw * ips, run, off, acc);
          }
        for (int32_t k = 0; k < 4; k++) {
          rv_rq q;
          rv_rq_init(&q, mult[oc + k], shift[oc + k]);
          const int32_t a = acc[k] + (bias ? bias[oc + k] : 0);
          o[oc + k] = mult[oc + k] == INT32_MIN ? (int8_t)bt_clamp(bt_mbqm_fast(a, mult[oc + k], shift[oc + k]) + zp, lo, hi)
                                                : rv_rq_out(a, &q, zp, lo, hi);
        }
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
