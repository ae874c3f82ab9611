/* EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL on int8 and int32, TFLM comparisons.cc
   (see bt_kernels.h). */
#include "bt_kernels.h"
#include "bcast4.h"
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
  BT_BCAST4_BODY(int8_t, int8_t, uint8_t,
                 compare_one(p->kind,
                             compare_scaled(x, p->input1_offset, p->left_shift, p->input1_multiplier, p->input1_shift),
                             compare_scaled(y, p->input2_offset, p->left_shift, p->input2_multiplier, p->input2_shift)))
}

void bt_compare_s32(const bt_compare_params *p, const int32_t *a, const int32_t *b, uint8_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int32_t, int32_t, uint8_t, compare_one(p->kind, x, y)) /* TFLM compares int32 values as they are */
}
