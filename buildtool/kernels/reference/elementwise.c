/* ABS int8 and int16 (TFLM elementwise.cc AbsEvalQuantized) and the int8 table lookup of RSQRT
 * (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t abs_one(const bt_abs_params *p, int32_t x) {
  int32_t v = x - p->input_offset;
  v = v < 0 ? -v : v;
  if (p->needs_rescale) v = bt_mbqm(v, p->multiplier, p->shift);
  return v + p->output_offset;
}

void bt_abs_s8(const bt_abs_params *p, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->n; i++) out[i] = (int8_t)bt_clamp(abs_one(p, in[i]), -128, 127);
}

void bt_abs_s16(const bt_abs_params *p, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < p->n; i++) out[i] = (int16_t)bt_clamp(abs_one(p, in[i]), -32768, 32767);
}

void bt_lut_s8(int32_t n, const int8_t *table, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = table[in[i] + 128];
}
