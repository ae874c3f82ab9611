/* DEPTHWISE_CONV_2D int8 for RISC-V rv32imac (optimised scalar) and, with -DBT_RVV, RVV 1.0
 * (depth multiplier 1; other multipliers use the reference code, included below under another
 * name). The in-place variant runs the same kernel row by row through a ring of rows in scratch
 * (dw_inplace_rows.h), or per channel on a one-channel view of the copied plane when scratch cannot
 * hold the rows that must wait (scalar set; RVV and filters of more than 64 taps keep the reference
 * in-place code). Scalar: 3x3 interior pixels channel by channel with the nine weights
 * in registers; elsewhere valid-tap ranges computed once per pixel (no per-tap bounds checks),
 * pointer stepping, hoisted parameters, bt_mbqm_fast. RVV: up to 16 contiguous channels
 * per vector: per tap two byte loads, two sign extensions, the input offset and one widening
 * multiply-accumulate; requantisation in vector registers. */
#include "bt_kernels.h"
#include "requant.h"
#ifdef BT_RVV
#include "rvv.h"
#endif

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#ifndef BT_RVV
#define bt_depthwise_s8_inplace bt_ref_depthwise_inplace_s8
#endif
#include "../reference/depthwise_ref.h"
#undef bt_depthwise_s8
#undef bt_depthwise_s8_inplace

#ifndef BT_RVV
/* 3x3 filter, output rows [y0, y1) restricted to pixels whose taps are all inside the image:
 * channel-outer order keeps the channel's nine weights and sum(w) in registers; the input offset
 * is applied once per output as input_offset * sum(w), so a tap is load + multiply-add. */
static void dw3x3_interior(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                           int32_t ya, int32_t yb, int32_t xa, int32_t xb) {
  const int32_t c_n = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ips, xstep = p->stride_w * ips;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  for (int32_t c = 0; c < c_n; c++) {
    const int8_t *f = p->filter + c;
    const int32_t w0 = f[0], w1 = f[c_n], w2 = f[2 * c_n], w3 = f[3 * c_n], w4 = f[4 * c_n], w5 = f[5 * c_n],
                  w6 = f[6 * c_n], w7 = f[7 * c_n], w8 = f[8 * c_n];
    const int32_t base = (p->bias ? p->bias[c] : 0) + off * (w0 + w1 + w2 + w3 + w4 + w5 + w6 + w7 + w8);
    const int32_t m = p->multiplier[c], s = p->shift[c];
    for (int32_t y = ya; y < yb; y++) {
      const int8_t *ip = in + (y * p->stride_h - p->pad_top - in_y0) * in_row + (xa * p->stride_w - p->pad_left) * ips + c;
      int8_t *o = out + (y - y0) * out_row + xa * ops + c;
      for (int32_t x = xa; x < xb; x++, ip += xstep, o += ops) {
        const int8_t *r1 = ip + dy, *r2 = ip + 2 * dy;
        const int32_t a = base + w0 * ip[0] + w1 * ip[dx] + w2 * ip[2 * dx] + w3 * r1[0] + w4 * r1[dx] +
                          w5 * r1[2 * dx] + w6 * r2[0] + w7 * r2[dx] + w8 * r2[2 * dx];
        *o = (int8_t)bt_clamp(bt_mbqm_fast(a, m, s) + zp, lo, hi);
      }
    }
  }
}
#endif

/* Generic path over rows [y0, y1); pixels inside [yi0, yi1) x [xi0, xi1) are skipped (done already). */
static void dw_rows(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                    int32_t y1, int32_t yi0, int32_t yi1, int32_t xi0, int32_t xi1) {
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
    const int32_t skip_from = (y >= yi0 && y < yi1) ? xi0 : p->out.w;   /* interior: already done */
    for (int32_t x = 0; x < p->out.w; x++) {
      if (x == skip_from) { x = xi1 - 1; continue; }
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

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  if (dp->depth_multiplier != 1) {
    bt_ref_depthwise_generic_s8(dp, in, in_y0, out, y0, y1);
    return;
  }
#ifndef BT_RVV
  {
    /* 3x3: interior block with the fast path, the border ring with the generic code below */
    const bt_conv_params *q = &dp->conv;
    if (q->kh == 3 && q->kw == 3) {
      int32_t xi0 = 0, xi1 = q->out.w, yi0 = y0, yi1 = y1;
      while (xi0 < xi1 && xi0 * q->stride_w - q->pad_left < 0) xi0++;
      while (xi1 > xi0 && (xi1 - 1) * q->stride_w - q->pad_left + 2 * q->dil_w >= q->in.w) xi1--;
      while (yi0 < yi1 && yi0 * q->stride_h - q->pad_top < 0) yi0++;
      while (yi1 > yi0 && (yi1 - 1) * q->stride_h - q->pad_top + 2 * q->dil_h >= q->in.h) yi1--;
      if (xi0 < xi1 && yi0 < yi1) {
        dw3x3_interior(q, in, in_y0, out, y0, yi0, yi1, xi0, xi1);
        dw_rows(dp, in, in_y0, out, y0, y1, yi0, yi1, xi0, xi1);
        return;
      }
    }
  }
#endif
  dw_rows(dp, in, in_y0, out, y0, y1, 0, 0, 0, 0);
}

#ifndef BT_RVV
#include "dw_inplace_rows.h"

#endif
