/* SQUARED_DIFFERENCE on int8 and int16, TFLM squared_difference.cc (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t sqdiff_one(const bt_squared_difference_params *p, int32_t x, int32_t y) {
  const int32_t a = bt_mbqm((x + p->input1_offset) * (1 << p->left_shift), p->input1_multiplier, p->input1_shift);
  const int32_t b = bt_mbqm((y + p->input2_offset) * (1 << p->left_shift), p->input2_multiplier, p->input2_shift);
  const int32_t d = a - b;
  return bt_mbqm(d * d, p->output_multiplier, p->output_shift) + p->output_offset;
}

#define SQDIFF_LOOP(T, LO, HI)                                                                        \
  const bt_bcast4 *q = &p->b;                                                                         \
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)                                                         \
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)                                                       \
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {                                                   \
        const T *pa = a + i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2];            \
        const T *pb = b + i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2];            \
        T *po = out + i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];          \
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++)                                                   \
          po[i3 * q->out_stride[3]] =                                                                 \
              (T)bt_clamp(sqdiff_one(p, pa[i3 * q->a_stride[3]], pb[i3 * q->b_stride[3]]), LO, HI);   \
      }

void bt_squared_difference_s8(const bt_squared_difference_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  SQDIFF_LOOP(int8_t, -128, 127)
}

void bt_squared_difference_s16(const bt_squared_difference_params *p, const int16_t *a, const int16_t *b,
                               int16_t *out) {
  SQDIFF_LOOP(int16_t, -32768, 32767)
}
#undef SQDIFF_LOOP
