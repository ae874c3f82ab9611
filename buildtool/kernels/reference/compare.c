/* EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL on int8, TFLM comparisons.cc (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t compare_scaled(int32_t x, int32_t offset, int32_t left_shift, int32_t mult, int32_t shift) {
  return bt_mbqm((x + offset) * (1 << left_shift), mult, shift);
}

BT_INLINE uint8_t compare_one(int32_t kind, int32_t x, int32_t y) {
  switch (kind) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    default: return x >= y;
  }
}

void bt_compare_s8(const bt_compare_params *p, const int8_t *a, const int8_t *b, uint8_t *out) {
  const bt_bcast4 *q = &p->b;
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {
        const int8_t *pa = a + i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2];
        const int8_t *pb = b + i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2];
        uint8_t *po = out + i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++) {
          const int32_t x = compare_scaled(pa[i3 * q->a_stride[3]], p->input1_offset, p->left_shift,
                                           p->input1_multiplier, p->input1_shift);
          const int32_t y = compare_scaled(pb[i3 * q->b_stride[3]], p->input2_offset, p->left_shift,
                                           p->input2_multiplier, p->input2_shift);
          po[i3 * q->out_stride[3]] = compare_one(p->kind, x, y);
        }
      }
}
