/* DEPTHWISE_CONV_2D int8 per-channel, TFLM reference_integer_ops::DepthwiseConvPerChannel arithmetic,
 * plus the in-place variant (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

void bt_depthwise_s8(const bt_depthwise_params *dp, const int8_t *in, int32_t in_y0,
                     int8_t *out, int32_t y0, int32_t y1) {
  const bt_conv_params *p = &dp->conv;
  const int32_t dm = dp->depth_multiplier, oc_n = p->out.c;
  const int32_t in_row = p->in.w * p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  for (int32_t y = y0; y < y1; y++) {
    int8_t *orow = out + (y - y0) * out_row;
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int8_t *o = orow + x * p->out.pixel_stride;
      for (int32_t oc = 0; oc < oc_n; oc++) {
        const int32_t ic = oc / dm;
        int32_t acc = 0;
        for (int32_t ky = 0; ky < p->kh; ky++) {
          const int32_t iy = iy0 + ky * p->dil_h;
          if (iy < 0 || iy >= p->in.h) continue;
          const int8_t *irow = in + (iy - in_y0) * in_row;
          for (int32_t kx = 0; kx < p->kw; kx++) {
            const int32_t ix = ix0 + kx * p->dil_w;
            if (ix < 0 || ix >= p->in.w) continue;
            acc += (int32_t)p->filter[(ky * p->kw + kx) * oc_n + oc] *
                   ((int32_t)irow[ix * p->in.pixel_stride + ic] + p->input_offset);
          }
        }
        if (p->bias) acc += p->bias[oc];
        acc = bt_mbqm(acc, p->multiplier[oc], p->shift[oc]) + p->output_offset;
        o[oc] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
      }
    }
  }
}

/* One output channel c computed from a dense input plane `plane` (in.h x in.w). */
static void dw_plane(const bt_conv_params *p, int32_t c, const int8_t *plane, int8_t *buf) {
  for (int32_t y = 0; y < p->out.h; y++) {
    const int32_t iy0 = y * p->stride_h - p->pad_top;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ix0 = x * p->stride_w - p->pad_left;
      int32_t acc = 0;
      for (int32_t ky = 0; ky < p->kh; ky++) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->in.h) continue;
        for (int32_t kx = 0; kx < p->kw; kx++) {
          const int32_t ix = ix0 + kx * p->dil_w;
          if (ix < 0 || ix >= p->in.w) continue;
          acc += (int32_t)p->filter[(ky * p->kw + kx) * p->out.c + c] *
                 ((int32_t)plane[iy * p->in.w + ix] + p->input_offset);
        }
      }
      if (p->bias) acc += p->bias[c];
      acc = bt_mbqm(acc, p->multiplier[c], p->shift[c]) + p->output_offset;
      buf[(y * p->out.w + x) * p->out.pixel_stride + c] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
    }
  }
}

void bt_depthwise_s8_inplace(const bt_depthwise_params *dp, int8_t *buf, int8_t *scratch) {
  const bt_conv_params *p = &dp->conv;
  const int32_t n = p->in.h * p->in.w, ps = p->in.pixel_stride;
  for (int32_t c = 0; c < p->out.c; c++) {
    for (int32_t i = 0; i < n; i++) scratch[i] = buf[i * ps + c];
    dw_plane(p, c, scratch, buf);
  }
}
