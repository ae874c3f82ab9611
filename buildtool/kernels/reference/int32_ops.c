/* ADD on int32, TFLM add.cc's int32 path (see bt_kernels.h); the int32 comparisons are in compare.c. */
#include "bt_kernels.h"
#include "bcast4.h"

static inline int32_t add_s32_clamped(int32_t x, int32_t y, int32_t lo, int32_t hi) {
  const int32_t s = (int32_t)((uint32_t)x + (uint32_t)y); /* two's complement wrap, as TFLM's build runs it */
  return s < lo ? lo : (s > hi ? hi : s);
}

void bt_add_s32(const bt_add_params *p, const int32_t *a, const int32_t *b, int32_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int32_t, int32_t, int32_t, add_s32_clamped(x, y, p->act_min, p->act_max))
}
