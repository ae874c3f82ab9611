/* MEAN int8 over the middle axis of [outer][reduce][inner], TFLM QuantizedMeanOrSum arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

void bt_mean_s8(const bt_mean_params *p, const int8_t *in, int8_t *out) {
  const int32_t num = p->reduce;
  for (int32_t o = 0; o < p->outer; o++)
    for (int32_t i = 0; i < p->inner; i++) {
      const int8_t *s = in + o * p->outer_stride + i;
      int32_t sum = 0;
      for (int32_t r = 0; r < num; r++) sum += s[r * p->reduce_stride];
      const int32_t v = bt_mbqm(sum - p->input_zp * num, p->multiplier, p->shift) + p->output_zp;
      out[o * p->inner + i] = (int8_t)bt_clamp(v, -128, 127);
    }
}
