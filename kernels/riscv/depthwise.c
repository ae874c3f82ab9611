/* DEPTHWISE_CONV_2D int8 for RISC-V rv32imac (optimised scalar) and, with -DBT_RVV, RVV 1.0
 * (depth multiplier 1; other multipliers and the in-place variant use the reference code, included
 * below under another name). Scalar: valid-tap ranges computed once per pixel (no per-tap bounds
 * checks), pointer stepping, hoisted parameters, bt_mbqm_fast. RVV: up to 16 contiguous channels
 * per vector: per tap two byte loads, two sign extensions, the input offset and one widening
 * multiply-accumulate; requantisation in vector registers. */
#include "bt_kernels.h"
#include "requant.h"
#ifdef BT_RVV
#include "rvv.h"
#endif

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#include "../reference/depthwise.c"
#undef bt_depthwise_s8

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  if (dp->depth_multiplier != 1) {
    bt_ref_depthwise_generic_s8(dp, in, in_y0, out, y0, y1);
    return;
  }
  const bt_conv_params *p = &dp->conv;
  const int32_t c_n = p->out.c, kh = p->kh, kw = p->kw;
  const int32_t ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const filter = p->filter;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ips, fy = kw * c_n;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int32_t ky0 = 0, ky1 = kh;
    while (ky0 < kh && iy0 + ky0 * p->dil_h < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * p->dil_h >= p->in.h) ky1--;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0 = 0, kx1 = kw;
      while (kx0 < kw && ix0 + kx0 * p->dil_w < 0) kx0++;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dil_w >= p->in.w) kx1--;
      int8_t *o = out + (y - y0) * out_row + x * ops;
      const int8_t *ibase = in + (iy0 - in_y0) * in_row + ix0 * ips + ky0 * dy + kx0 * dx;
      const int8_t *fbase = filter + (ky0 * kw + kx0) * c_n;
#ifdef BT_RVV
      for (int32_t c = 0; c < c_n;) {
        const int32_t vl = bt_rvv_setvl16(c_n - c);
        bt_rvv_acc_zero(vl);
        const int8_t *irow = ibase + c, *frow = fbase + c;
        for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
          const int8_t *ip = irow, *fp = frow;
          for (int32_t kx = kx0; kx < kx1; kx++, ip += dx, fp += c_n) bt_rvv_mac_vv(ip, fp, off);
        }
        bt_rvv_requant_store(vl, bias ? bias + c : 0, mult + c, shift + c, zp, lo, hi, o + c);
        c += vl;
      }
#else
      for (int32_t c = 0; c < c_n; c++) {
        int32_t a = 0;
        const int8_t *irow = ibase + c, *frow = fbase + c;
        for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += fy) {
          const int8_t *ip = irow, *fp = frow;
          for (int32_t kx = kx0; kx < kx1; kx++, ip += dx, fp += c_n) a += *fp * (*ip + off);
        }
        if (bias) a += bias[c];
        o[c] = (int8_t)bt_clamp(bt_mbqm_fast(a, mult[c], shift[c]) + zp, lo, hi);
      }
#endif
    }
  }
}
