/* CONV_2D int8 per-channel, TFLM reference_integer_ops::ConvPerChannel arithmetic (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

const char *bt_kernel_set_name(void) { return "reference"; }

void bt_conv_s8(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                int8_t *out, int32_t y0, int32_t y1) {
  const int32_t ic_n = p->in.c, oc_n = p->out.c;
  const int32_t in_row = p->in.w * p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = out + (y - y0) * out_row;
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int8_t *o = orow + x * p->out.pixel_stride;
      for (int32_t oc = 0; oc < oc_n; oc++) {
        int32_t acc = 0;
        for (int32_t ky = 0; ky < p->kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if (iy < 0 || iy >= p->in.h) continue;
          const int8_t *irow = in + (iy - in_y0) * in_row;
          for (int32_t kx = 0; kx < p->kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            if (ix < 0 || ix >= p->in.w) continue;
            const int8_t *ip = irow + ix * p->in.pixel_stride;
            const int8_t *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx) * ic_n;
            for (int32_t ic = 0; ic < ic_n; ic++) acc += (int32_t)fp[ic] * ((int32_t)ip[ic] + p->input_offset);
          }
        }
        if (p->bias) acc += p->bias[oc];
        acc = bt_mbqm(acc, p->multiplier[oc], p->shift[oc]) + p->output_offset;
        o[oc] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
      }
    }
  }
}
