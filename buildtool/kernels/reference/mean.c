/* MEAN int8 and int16 over the middle axis of [outer][reduce][inner], TFLM QuantizedMeanOrSum arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

/* wide: int16 elements (strides count elements either way) */
BT_INLINE void mean(const bt_mean_params *p, const void *in, void *out, int wide) {
  const int32_t num = p->reduce;
  for (int32_t o = 0; o < p->outer; o++)
    for (int32_t i = 0; i < p->inner; i++) {
      const int32_t s = o * p->outer_stride + i;
      int32_t sum = 0;
      for (int32_t r = 0; r < num; r++) {
        const int32_t k = s + r * p->reduce_stride;
        sum += wide ? ((const int16_t *)in)[k] : ((const int8_t *)in)[k];
      }
      const int32_t v = bt_mbqm(sum - p->input_zp * num, p->multiplier, p->shift) + p->output_zp;
      if (wide) ((int16_t *)out)[o * p->inner + i] = (int16_t)bt_clamp(v, -32768, 32767);
      else ((int8_t *)out)[o * p->inner + i] = (int8_t)bt_clamp(v, -128, 127);
    }
}

void bt_mean_s8(const bt_mean_params *p, const int8_t *in, int8_t *out) { mean(p, in, out, 0); }
void bt_mean_s16(const bt_mean_params *p, const int16_t *in, int16_t *out) { mean(p, in, out, 1); }
