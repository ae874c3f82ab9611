/* ADD and the comparisons on int32, TFLM add.cc / comparisons.cc int32 paths (see bt_kernels.h). */
#include "bt_kernels.h"
#include "bcast4.h"

static inline int32_t add_s32_clamped(int32_t x, int32_t y, int32_t lo, int32_t hi) {
  const int32_t s = (int32_t)((uint32_t)x + (uint32_t)y); /* two's complement wrap, as TFLM's build runs it */
  return s < lo ? lo : (s > hi ? hi : s);
}

static inline uint8_t compare_s32_one(int32_t kind, int32_t x, int32_t y) {
  switch (kind) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    default: return x >= y;
  }
}

void bt_add_s32(const bt_add_params *p, const int32_t *a, const int32_t *b, int32_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int32_t, int32_t, int32_t, add_s32_clamped(x, y, p->act_min, p->act_max))
}

void bt_compare_s32(const bt_compare_params *p, const int32_t *a, const int32_t *b, uint8_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int32_t, int32_t, uint8_t, compare_s32_one(p->kind, x, y))
}
