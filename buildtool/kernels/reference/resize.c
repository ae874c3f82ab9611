/* RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR int8 (TFLM reference_ops, raw codes in and out). */
#include "bt_kernels.h"

void bt_resize_nearest_s8(const bt_resize_nearest_params *p, const int8_t *in, int8_t *out) {
  const int32_t c = p->out.c;
  for (int32_t y = 0; y < p->out.h; y++) {
    const int8_t *row = in + p->src_y[y] * p->in.w * p->in.pixel_stride;
    int8_t *o = out + y * p->out.w * p->out.pixel_stride;
    for (int32_t x = 0; x < p->out.w; x++) {
      const int8_t *s = row + p->src_x[x] * p->in.pixel_stride;
      for (int32_t k = 0; k < c; k++) o[k] = s[k];
      o += p->out.pixel_stride;
    }
  }
}

/* ComputeInterpolationValuesInteger: scaled position and the two source indices (C division). */
static void resize_taps(int32_t v, int32_t scale10, int32_t half_pixel, int32_t in_size, int32_t *pos, int32_t *lo,
                        int32_t *hi) {
  *pos = half_pixel ? v * scale10 + scale10 / 2 - (1 << 9) : v * scale10;
  const int32_t l = *pos / (1 << 10), h = (*pos + (1 << 10) - 1) / (1 << 10);
  *lo = l > 0 ? l : 0;
  *hi = h < in_size - 1 ? h : in_size - 1;
}

void bt_resize_bilinear_s8(const bt_resize_bilinear_params *p, const int8_t *in, int8_t *out) {
  const int32_t c = p->out.c, row = p->in.w * p->in.pixel_stride, ps = p->in.pixel_stride;
  for (int32_t y = 0; y < p->out.h; y++) {
    int32_t py, y0, y1;
    resize_taps(y, p->scale10_h, p->half_pixel_centers, p->in.h, &py, &y0, &y1);
    const int64_t wy1 = py - (y0 << 10), wy0 = (1 << 10) - wy1;
    int8_t *o = out + y * p->out.w * p->out.pixel_stride;
    for (int32_t x = 0; x < p->out.w; x++) {
      int32_t px, x0, x1;
      resize_taps(x, p->scale10_w, p->half_pixel_centers, p->in.w, &px, &x0, &x1);
      const int64_t wx1 = px - (x0 << 10), wx0 = (1 << 10) - wx1;
      const int8_t *a = in + y0 * row + x0 * ps, *b = in + y1 * row + x0 * ps;
      const int8_t *cc = in + y0 * row + x1 * ps, *d = in + y1 * row + x1 * ps;
      for (int32_t k = 0; k < c; k++) {
        const int64_t acc = a[k] * wy0 * wx0 + b[k] * wy1 * wx0 + cc[k] * wy0 * wx1 + d[k] * wy1 * wx1;
        const int64_t r = acc + (acc > 0 ? (1 << 19) : -(1 << 19));
        o[k] = (int8_t)(r / (1 << 20));
      }
      o += p->out.pixel_stride;
    }
  }
}
