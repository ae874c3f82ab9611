/* SQUARED_DIFFERENCE on int8 and int16, TFLM squared_difference.cc (see bt_kernels.h). */
#include "bt_kernels.h"
#include "bcast4.h"
#include "requant.h"

BT_INLINE int32_t sqdiff_one(const bt_squared_difference_params *p, int32_t x, int32_t y) {
  const int32_t a = bt_mbqm((x + p->input1_offset) * (1 << p->left_shift), p->input1_multiplier, p->input1_shift);
  const int32_t b = bt_mbqm((y + p->input2_offset) * (1 << p->left_shift), p->input2_multiplier, p->input2_shift);
  const int32_t d = a - b;
  return bt_mbqm(d * d, p->output_multiplier, p->output_shift) + p->output_offset;
}

#define SQDIFF_LOOP(T, LO, HI) \
  const bt_bcast4 *q = &p->b;  \
  BT_BCAST4_BODY(T, T, T, bt_clamp(sqdiff_one(p, x, y), LO, HI))

void bt_squared_difference_s8(const bt_squared_difference_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  SQDIFF_LOOP(int8_t, -128, 127)
}

void bt_squared_difference_s16(const bt_squared_difference_params *p, const int16_t *a, const int16_t *b,
                               int16_t *out) {
  SQDIFF_LOOP(int16_t, -32768, 32767)
}
#undef SQDIFF_LOOP
