/* LEAKY_RELU int8 and int16, TFLM reference_ops::QuantizeLeakyRelu (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

/* A negative multiplier (negative alpha) scales by its magnitude and negates, as TFLM's results do. */
BT_INLINE int32_t signed_mbqm(int32_t x, int32_t mult, int32_t shift) {
  if (mult >= 0) return bt_mbqm(x, mult, shift);
  return -bt_mbqm(x, mult == INT32_MIN ? INT32_MAX : -mult, shift);
}

BT_INLINE int32_t leaky_one(const bt_leaky_relu_params *p, int32_t v) {
  const int32_t x = v - p->input_offset;
  return p->output_offset + (x >= 0 ? signed_mbqm(x, p->output_multiplier_identity, p->output_shift_identity)
                                    : signed_mbqm(x, p->output_multiplier_alpha, p->output_shift_alpha));
}

void bt_leaky_relu_s8(const bt_leaky_relu_params *p, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->n; i++) out[i] = (int8_t)bt_clamp(leaky_one(p, in[i]), -128, 127);
}

void bt_leaky_relu_s16(const bt_leaky_relu_params *p, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < p->n; i++) out[i] = (int16_t)bt_clamp(leaky_one(p, in[i]), -32768, 32767);
}
