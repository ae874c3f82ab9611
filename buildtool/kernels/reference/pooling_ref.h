/* AVERAGE_POOL_2D / MAX_POOL_2D int8 and int16, TFLM reference_integer_ops::AveragePool / MaxPool arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

/* wide: int16 elements (strides count elements either way) */
BT_INLINE void pool(const bt_pool_params *p, const void *in, int32_t in_y0, void *out,
                 int32_t y0, int32_t y1, int is_max, int wide) {
  const int32_t in_row = p->in.w * p->in.pixel_stride;
  const int32_t out_row = p->out.w * p->out.pixel_stride;
  for (int32_t y = y0; y < y1; y++) {
    const int32_t oy = y * p->stride_h - p->pad_top;
    const int32_t fy0 = BT_MAX(0, -oy), fy1 = BT_MIN(p->filter_h, p->in.h - oy);
    for (int32_t x = 0; x < p->out.w; x++) {
      const int32_t ox = x * p->stride_w - p->pad_left;
      const int32_t fx0 = BT_MAX(0, -ox), fx1 = BT_MIN(p->filter_w, p->in.w - ox);
      const int32_t o = (y - y0) * out_row + x * p->out.pixel_stride;
      for (int32_t c = 0; c < p->in.c; c++) {
        int32_t acc = is_max ? (wide ? -32768 : -128) : 0, n = 0;
        for (int32_t fy = fy0; fy < fy1; fy++) {
          const int32_t row = (oy + fy - in_y0) * in_row + c;
          for (int32_t fx = fx0; fx < fx1; fx++) {
            const int32_t k = row + (ox + fx) * p->in.pixel_stride;
            const int32_t v = wide ? ((const int16_t *)in)[k] : ((const int8_t *)in)[k];
            if (is_max) acc = BT_MAX(acc, v); else acc += v;
            n++;
          }
        }
        if (!is_max) {
          if (n == 0) { acc = 0; }   /* TFLM would divide by zero; cannot happen with valid padding */
          else acc = acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n;
        }
        if (wide) ((int16_t *)out)[o + c] = (int16_t)bt_clamp(acc, p->act_min, p->act_max);
        else ((int8_t *)out)[o + c] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
      }
    }
  }
}

void bt_avg_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  pool(p, in, in_y0, out, y0, y1, 0, 0);
}
void bt_max_pool_s8(const bt_pool_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0, int32_t y1) {
  pool(p, in, in_y0, out, y0, y1, 1, 0);
}
void bt_avg_pool_s16(const bt_pool_params *p, const int16_t *in, int32_t in_y0, int16_t *out, int32_t y0,
                     int32_t y1) {
  pool(p, in, in_y0, out, y0, y1, 0, 1);
}
void bt_max_pool_s16(const bt_pool_params *p, const int16_t *in, int32_t in_y0, int16_t *out, int32_t y0,
                     int32_t y1) {
  pool(p, in, in_y0, out, y0, y1, 1, 1);
}
