/* 16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, TFLM reference_integer_ops arithmetic (see
 * bt_kernels.h). Their own file, so that kernel sets replacing conv.c, depthwise.c or fully_connected.c
 * keep the 16x8 kernels. */
#include "bt_kernels.h"
#include "requant.h"

void bt_conv_s16(const bt_conv_wide_params *w, const int16_t *in, int32_t in_y0,
                 int16_t *out, int32_t y0, int32_t y1) {
  const bt_conv_params *p = &w->conv;
  const int32_t ic_n = p->in.c, oc_n = p->out.c;
  const int32_t in_row = p->in.w * p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  for (int32_t y = y0; y < y1; y++) {
    int16_t *orow = out + (y - y0) * out_row;
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int16_t *o = orow + x * p->out.pixel_stride;
      for (int32_t oc = 0; oc < oc_n; oc++) {
        int64_t acc = 0;
        for (int32_t ky = 0; ky < p->kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if (iy < 0 || iy >= p->in.h) continue;
          const int16_t *irow = in + (iy - in_y0) * in_row;
          for (int32_t kx = 0; kx < p->kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            if (ix < 0 || ix >= p->in.w) continue;
            const int16_t *ip = irow + ix * p->in.pixel_stride;
            const int8_t *fp = p->filter + ((oc * p->kh + ky) * p->kw + kx) * ic_n;
            for (int32_t ic = 0; ic < ic_n; ic++) acc += (int32_t)fp[ic] * ((int32_t)ip[ic] + p->input_offset);
          }
        }
        int32_t r;
        if (p->bias) {
          r = bt_mbqm((int32_t)acc + p->bias[oc], p->multiplier[oc], p->shift[oc]);
        } else {
          r = bt_mbqm64(acc + (w->bias64 ? w->bias64[oc] : 0), p->multiplier[oc], p->shift[oc]);
        }
        o[oc] = (int16_t)bt_clamp(r + p->output_offset, p->act_min, p->act_max);
      }
    }
  }
}

void bt_depthwise_s16(const bt_depthwise_params *dp, const int64_t *bias64, const int16_t *in, int32_t in_y0,
                      int16_t *out, int32_t y0, int32_t y1) {
  const bt_conv_params *p = &dp->conv;
  const int32_t dm = dp->depth_multiplier, oc_n = p->out.c;
  const int32_t in_row = p->in.w * p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  for (int32_t y = y0; y < y1; y++) {
    int16_t *orow = out + (y - y0) * out_row;
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int16_t *o = orow + x * p->out.pixel_stride;
      for (int32_t oc = 0; oc < oc_n; oc++) {
        const int32_t ic = oc / dm;
        int64_t acc = 0;
        for (int32_t ky = 0; ky < p->kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if (iy < 0 || iy >= p->in.h) continue;
          const int16_t *irow = in + (iy - in_y0) * in_row;
          for (int32_t kx = 0; kx < p->kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            if (ix < 0 || ix >= p->in.w) continue;
            acc += (int32_t)p->filter[(ky * p->kw + kx) * oc_n + oc] *
                   ((int32_t)irow[ix * p->in.pixel_stride + ic] + p->input_offset);
          }
        }
        const int32_t r = bt_mbqm64(acc + (bias64 ? bias64[oc] : 0), p->multiplier[oc], p->shift[oc]);
        o[oc] = (int16_t)bt_clamp(r + p->output_offset, p->act_min, p->act_max);
      }
    }
  }
}

void bt_fully_connected_s16(const bt_fc_params *p, const int64_t *bias64, const int16_t *in, int16_t *out) {
  for (int32_t b = 0; b < p->batches; b++) {
    const int16_t *x = in + b * p->n_in;
    for (int32_t o = 0; o < p->n_out; o++) {
      const int8_t *w = p->weights + o * p->n_in;
      int64_t acc = 0;
      for (int32_t i = 0; i < p->n_in; i++)
        acc += ((int32_t)w[i] + p->filter_offset) * ((int32_t)x[i] + p->input_offset);
      const int32_t k = p->per_channel ? o : 0;
      int32_t r;
      if (p->bias) r = bt_mbqm((int32_t)acc + p->bias[o], p->multiplier[k], p->shift[k]);
      else r = bt_mbqm64(acc + (bias64 ? bias64[o] : 0), p->multiplier[k], p->shift[k]);
      out[b * p->n_out + o] = (int16_t)bt_clamp(r + p->output_offset, p->act_min, p->act_max);
    }
  }
}
