/* CUMSUM on int8 (TFLM reference_ops::CumSum, see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t cumsum_scaled(const bt_add_n_params *q, int32_t x) {
  return bt_mbqm((x + q->input_offset) * (1 << q->left_shift), q->input_multiplier, q->input_shift);
}

void bt_cumsum_s8(const bt_cumsum_params *p, const int8_t *in, int8_t *out) {
  const bt_add_n_params *q = &p->q;
  const int32_t start = cumsum_scaled(q, 0);
  for (int32_t b = 0; b < p->before; b++)
    for (int32_t a = 0; a < p->after; a++) {
      uint32_t acc = (uint32_t)start;
      for (int32_t d = 0; d < p->depth; d++) {
        const int32_t k = p->reverse ? p->depth - 1 - d : d;
        const int32_t at = (b * p->depth + k) * p->after + a;
        const uint32_t y = (uint32_t)cumsum_scaled(q, in[at]);
        int32_t v;
        if (p->exclusive) {
          v = (int32_t)acc;
          acc += y;
        } else {
          acc += y;
          v = (int32_t)acc;
        }
        out[at] = (int8_t)bt_clamp(bt_mbqm(v, q->output_multiplier, q->output_shift) + q->output_offset, -128, 127);
      }
    }
}
