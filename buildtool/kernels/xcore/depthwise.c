/* DEPTHWISE_CONV_2D int8 for xcore.ai's vector unit (vpu.h), depth multiplier 1: 16 channels per
 * VLMACC (element-wise multiply-accumulate into the 16 accumulators). Per channel group the filter
 * taps are staged once into aligned 32-byte vectors; per output pixel and tap, VLDC loads the
 * tap's weights and VLMACC multiplies them with the input pixel's 16 channels (a vector of the input
 * zero point for padding taps); acc + input_offset * sum w (sum over all taps, one VLMACC pass
 * against ones) is requantised on the scalar unit (see conv.c). More than 25 taps, depth
 * multiplier > 1 and the in-place variant use the reference code, included below under another name. */
#include "bt_kernels.h"
#include "requant.h"
#include "vpu.h"

#define bt_depthwise_s8 bt_ref_depthwise_generic_s8
#include "../reference/depthwise_ref.h"
#undef bt_depthwise_s8

#define MAX_TAPS 25

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  const bt_conv_params *p = &dp->conv;
  const int32_t taps = p->kh * p->kw;
  if (dp->depth_multiplier != 1 || taps > MAX_TAPS) {
    bt_ref_depthwise_generic_s8(dp, in, in_y0, out, y0, y1);
    return;
  }
  const int32_t c_n = p->out.c, ips = p->in.pixel_stride, in_row = p->in.w * ips;
  const int32_t ops = p->out.pixel_stride, out_row = p->out.w * ops;
  const int32_t off = p->input_offset, zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  int8_t wv[MAX_TAPS][32] __attribute__((aligned(4)));
  int8_t ones[32] __attribute__((aligned(4))), zpv[32] __attribute__((aligned(4))), xb[32] __attribute__((aligned(4)));
  for (int i = 0; i < 32; i++) { ones[i] = 1; zpv[i] = (int8_t)(-off); }
  VSETC_S8();
  for (int32_t c0 = 0; c0 < c_n; c0 += 16) {
    const int32_t n = c_n - c0 < 16 ? c_n - c0 : 16;
    int32_t sumw[16], acc[16];
    VCLRDR();
    VLDC(ones);
    for (int32_t t = 0; t < taps; t++) {
      for (int32_t i = 0; i < 32; i++) wv[t][i] = i < n ? p->filter[t * c_n + c0 + i] : 0;
      VLMACC(wv[t]);
    }
    bt_vpu_read_acc(sumw);
    for (int32_t y = y0; y < y1; y++) {
      const int32_t iy0 = y * p->stride_h - p->pad_top;
      for (int32_t x = 0; x < p->out.w; x++) {
        const int32_t ix0 = x * p->stride_w - p->pad_left;
        VCLRDR();
        for (int32_t ky = 0; ky < p->kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          for (int32_t kx = 0; kx < p->kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            VLDC(wv[ky * p->kw + kx]);
            if (iy >= 0 && iy < p->in.h && ix >= 0 && ix < p->in.w) {
              const int8_t *ip = in + (iy - in_y0) * in_row + ix * ips + c0;
              for (int32_t i = 0; i < 32; i++) xb[i] = i < n ? ip[i] : 0;   /* 16 lanes used */
              VLMACC(xb);
            } else {
              VLMACC(zpv);
            }
          }
        }
        bt_vpu_read_acc(acc);
        int8_t *o = out + (y - y0) * out_row + x * ops + c0;
        for (int32_t k = 0; k < n; k++) {
          int32_t a = acc[k] + off * sumw[k];
          if (p->bias) a += p->bias[c0 + k];
          o[k] = (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[c0 + k], p->shift[c0 + k]) + zp, lo, hi);
        }
      }
    }
  }
}
