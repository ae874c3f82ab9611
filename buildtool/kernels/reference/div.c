/* DIV on int8, TFLM reference_ops::DivElementwise / BroadcastDivSlowQuantized (see bt_kernels.h and
 * refops/div.py), with the exact result where TFLM's rounding shift passes 31. */
#include "bt_kernels.h"
#include "bcast4.h"
#include "requant.h"

/* refops.div.DIV_BY_ZERO_INV: one_over_one_plus_x_for_x_in_0_1(-1.0), its int32 sums wrapped (a zero divisor) */
#define BT_DIV_BY_ZERO_INV (-1515870788)

/* RoundingDivideByPOT for any e >= 0: for e >= 32 the exact quotient of an int32 lies in [-1/2, 1/2], which
 * rounds (ties away from zero) to 0, except INT32_MIN / 2^32 = -1/2 -> -1. */
BT_INLINE int32_t div_rdbpot(int32_t x, int e) {
  if (e <= 31) return bt_rdbpot(x, e);
  return (e == 32 && x == INT32_MIN) ? -1 : 0;
}

BT_INLINE int32_t div_one(const bt_div_params *p, int32_t x1, int32_t x2) {
  int32_t v1 = x1 + p->input1_offset, v2 = x2 + p->input2_offset;   /* both in [-255, 255] */
  if (v2 < 0) {
    v1 = -v1;
    v2 = -v2;
  }
  /* GetReciprocal(v2, 31): v2 == 0 shifts by 32 in TFLM (read as 0) */
  const int h = bt_clz32((uint32_t)v2);
  const int recip_shift = 31 - h;
  const int32_t inv = v2 == 0 ? BT_DIV_BY_ZERO_INV
                              : bt_one_over_one_plus_x((int32_t)(((uint32_t)v2 << h) - 0x80000000u));
  /* CountLeadingSignBits(v1): 31 for 0 and -1 */
  const int headroom = bt_clz32((uint32_t)(v1 ^ (v1 < 0 ? -1 : 0))) - 1;
  const int32_t q = bt_srdhm((int32_t)((uint32_t)v1 << headroom), inv);
  const int e = headroom + recip_shift - p->output_shift;   /* >= 0: the check keeps output_shift <= 22 */
  const int32_t r = div_rdbpot(bt_srdhm(q, p->output_multiplier), e) + p->output_offset;
  return bt_clamp(r, p->act_min, p->act_max);
}

void bt_div_s8(const bt_div_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int8_t, int8_t, int8_t, div_one(p, x, y))
}
