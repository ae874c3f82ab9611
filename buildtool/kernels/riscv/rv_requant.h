/* rv_requant.h -- requantisation for the riscv set with its per-channel work done once per channel
 * (not once per output): TFLM's MultiplyByQuantizedMultiplier as bt_mbqm_fast computes it (64-bit
 * product = MUL + MULH on rv32, nudge, rounding right shift), the left/right split of the shift, the
 * rounding mask and threshold precomputed. Exact for every input when the multiplier is not
 * INT32_MIN (TFLM's QuantizeMultiplier never makes it); rv_rq_ok() tells callers to take the
 * generic path otherwise. kernel_test.c checks rv_rq_apply against bt_mbqm. */
#ifndef BT_RV_REQUANT_H
#define BT_RV_REQUANT_H
#include <stdint.h>
#include "requant.h"

typedef struct {
  int32_t mult, left, right, mask, half;
} rv_rq;

BT_INLINE void rv_rq_init(rv_rq *q, int32_t mult, int32_t shift) {
  q->mult = mult;
  q->left = shift > 0 ? shift : 0;
  q->right = shift > 0 ? 0 : -shift;
  q->mask = (int32_t)((1u << q->right) - 1u);   /* right <= 31 (TFLM's shifts are >= -31) */
  q->half = q->mask >> 1;
}

/* 1 when every multiplier of [0, n) can use rv_rq_apply. */
static inline int rv_rq_ok(const int32_t *mult, int32_t n) {
  for (int32_t i = 0; i < n; i++)
    if (mult[i] == INT32_MIN) return 0;
  return 1;
}

/* MultiplyByQuantizedMultiplier(x, mult, shift) (multiplier != INT32_MIN). */
BT_INLINE int32_t rv_mbqm(int32_t x, const rv_rq *q) {
  const int32_t a = (int32_t)((uint32_t)x << q->left);
  const int32_t h = (int32_t)(((int64_t)a * q->mult + ((int64_t)1 << 30)) >> 31);
  const int32_t r = h >> q->right;
  return r + ((h & q->mask) > q->half + (r < 0));
}

/* clamp(MBQM(x) + zp, lo, hi) as int8 */
BT_INLINE int8_t rv_rq_out(int32_t x, const rv_rq *q, int32_t zp, int32_t lo, int32_t hi) {
  const int32_t v = rv_mbqm(x, q) + zp;
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}
#endif
