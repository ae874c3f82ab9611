/* DEPTHWISE_CONV_2D int8 for Cortex-M DSP, depth multiplier 1: four channels per word. Per tap and
 * 4 channels: LDR input + 2 SXTB16 + 2 SADD16 (offset), LDR filter + 2 SXTB16, then SMLABB/SMLATT
 * into four per-channel accumulators. Depth multiplier > 1 and the in-place variant use the
 * reference code (included below under another name). */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"

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
  const int32_t in_row = p->in.w * p->in.pixel_stride, ips = p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  const int32_t off = p->input_offset, off2 = bt_dup16(off);
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t dy = p->dil_h * in_row, dx = p->dil_w * ips;   /* input step between taps */
  for (int32_t y = y0; y < y1; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    int32_t ky0 = 0, ky1 = kh;   /* valid tap rows */
    while (ky0 < kh && iy0 + ky0 * p->dil_h < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * p->dil_h >= p->in.h) ky1--;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t kx0 = 0, kx1 = kw;
      while (kx0 < kw && ix0 + kx0 * p->dil_w < 0) kx0++;
      while (kx1 > kx0 && ix0 + (kx1 - 1) * p->dil_w >= p->in.w) kx1--;
      int8_t *o = out + (y - y0) * out_row + x * p->out.pixel_stride;
      const int8_t *ibase = in + (iy0 - in_y0) * in_row + ix0 * ips;
      int32_t c = 0;
      for (; c + 4 <= c_n; c += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const int8_t *irow = ibase + ky0 * dy + kx0 * dx + c;
        const int8_t *frow = p->filter + (ky0 * kw + kx0) * c_n + c;
        for (int32_t ky = ky0; ky < ky1; ky++, irow += dy, frow += kw * c_n) {
          const int8_t *ip = irow, *fp = frow;
          for (int32_t kx = kx0; kx < kx1; kx++, ip += dx, fp += c_n) {
            const uint32_t xv = bt_ld4(ip), wv = bt_ld4(fp);
            const int32_t xa = bt_sadd16(bt_sxtb16(xv), off2), xb = bt_sadd16(bt_sxtb16_ror8((xv)), off2);
            const int32_t wa = bt_sxtb16(wv), wb = bt_sxtb16_ror8((wv));
            a0 = bt_smlabb(wa, xa, a0); a2 = bt_smlatt(wa, xa, a2);
            a1 = bt_smlabb(wb, xb, a1); a3 = bt_smlatt(wb, xb, a3);
          }
        }
        if (bias) { a0 += bias[c]; a1 += bias[c + 1]; a2 += bias[c + 2]; a3 += bias[c + 3]; }
        const uint32_t r0 = (uint8_t)bt_clamp(bt_mbqm_fast(a0, mult[c], shift[c]) + zp, lo, hi);
        const uint32_t r1 = (uint8_t)bt_clamp(bt_mbqm_fast(a1, mult[c + 1], shift[c + 1]) + zp, lo, hi);
        const uint32_t r2 = (uint8_t)bt_clamp(bt_mbqm_fast(a2, mult[c + 2], shift[c + 2]) + zp, lo, hi);
        const uint32_t r3 = (uint8_t)bt_clamp(bt_mbqm_fast(a3, mult[c + 3], shift[c + 3]) + zp, lo, hi);
        const uint32_t word = r0 | (r1 << 8) | (r2 << 16) | (r3 << 24);
        __builtin_memcpy(o + c, &word, 4);   /* one (unaligned) store: int8 stores would alias p */
      }
      for (; c < c_n; c++) {
        int32_t a = 0;
        for (int32_t ky = ky0; ky < ky1; ky++)
          for (int32_t kx = kx0; kx < kx1; kx++)
            a += p->filter[(ky * kw + kx) * c_n + c] *
                 (ibase[ky * p->dil_h * in_row + kx * p->dil_w * ips + c] + off);
        if (p->bias) a += p->bias[c];
        a = bt_mbqm_fast(a, p->multiplier[c], p->shift[c]) + p->output_offset;
        o[c] = (int8_t)bt_clamp(a, p->act_min, p->act_max);
      }
    }
  }
}
