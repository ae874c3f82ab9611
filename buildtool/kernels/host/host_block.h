/* host_block.h -- the host set's building blocks: loops over 8 lanes with a compile-time trip
 * count, so gcc -O2 (its cheap vectoriser cost model) turns each into SSE/NEON code with no run-time
 * alias checks or scalar epilogue and keeps a block's accumulators in vector registers across a
 * tap loop; a block is 16 channels (two 8-lane halves). Requantisation with its per-channel
 * parameters prepared once per block. */
#ifndef BT_HOST_BLOCK_H
#define BT_HOST_BLOCK_H
#include <stdint.h>
#include "requant.h"

#define BT_HB 16  /* channels per block */

/* Every product of an int8 weight and an int8 input (or input + offset, in [-255, 255]) fits in
 * int16 (|w * x| <= 32640), so the products are formed as int16 (one 16-bit multiply per lane) and
 * widened only to be accumulated. */
BT_INLINE void bt_h8_mac(int32_t *restrict acc, const int16_t *restrict w, int16_t x) {
  for (int j = 0; j < 8; j++) acc[j] += (int16_t)(w[j] * x);
}

/* acc[j] += w[j] * x for one block (w: a transposed weight row, int16). */
BT_INLINE void bt_hb_mac(int32_t *restrict acc, const int16_t *restrict w, int16_t x) {
  bt_h8_mac(acc, w, x);
  bt_h8_mac(acc + 8, w + 8, x);
}

BT_INLINE void bt_h8_mac_vv(int32_t *restrict acc, const int8_t *restrict w, const int8_t *restrict x, int16_t off) {
  for (int j = 0; j < 8; j++) acc[j] += (int16_t)(w[j] * (int16_t)(x[j] + off));
}

/* acc[j] += w[j] * (x[j] + off) for one block of contiguous channels (depthwise). */
BT_INLINE void bt_hb_mac_vv(int32_t *restrict acc, const int8_t *restrict w, const int8_t *restrict x, int16_t off) {
  bt_h8_mac_vv(acc, w, x, off);
  bt_h8_mac_vv(acc + 8, w + 8, x + 8, off);
}

/* sum_j w[j] * (x[j] + off) over one block (fully connected). */
BT_INLINE int32_t bt_hb_dot(const int8_t *restrict w, const int8_t *restrict x, int16_t off) {
  int32_t a = 0;
  for (int j = 0; j < BT_HB; j++) a += (int16_t)(w[j] * (int16_t)(x[j] + off));
  return a;
}

/* Requantisation of up to 16 channels with TFLM's two roundings folded into one: with P = (x << left) *
 * multiplier and r = max(-shift, 0), SaturatingRoundingDoublingHighMul gives h = floor((P + 2^30) / 2^31)
 * and RoundingDivideByPOT(h, r) = floor((h + 2^(r-1) - [h < 0]) / 2^r) (r >= 1); as floor(floor(X / A) + B)
 * / C) = floor((X + A*B) / (A*C)) for integers, the result is (P + k - [P < -2^30] * 2^31) >> (31 + r) with
 * k = 2^30 + 2^(30+r) (r = 0: k = 2^30, no correction): one 64-bit multiply, add and shift per output.
 * Equal to bt_mbqm for every input (kernel_test.c checks it); a multiplier of INT32_MIN, which TFLM's
 * QuantizeMultiplier never makes, takes bt_mbqm_fast itself. */
typedef struct {
  int32_t n, zp, lo, hi, general;
  int32_t mult[BT_HB], left[BT_HB], sh[BT_HB], shift[BT_HB];
  int64_t k[BT_HB], neg[BT_HB];
} bt_hb_rq;

static inline void bt_hb_rq_init(bt_hb_rq *q, int32_t n, const int32_t *mult, const int32_t *shift, int32_t zp,
                                 int32_t lo, int32_t hi) {
  q->n = n; q->zp = zp; q->lo = lo; q->hi = hi; q->general = 0;
  for (int32_t j = 0; j < n; j++) {
    const int32_t s = shift[j], r = s > 0 ? 0 : -s;
    q->mult[j] = mult[j]; q->shift[j] = s;
    q->left[j] = s > 0 ? s : 0; q->sh[j] = 31 + r;
    q->k[j] = ((int64_t)1 << 30) + (r ? (int64_t)1 << (30 + r) : 0);
    q->neg[j] = r ? (int64_t)1 << 31 : 0;
    q->general |= mult[j] == INT32_MIN;
  }
}

/* MBQM(x) + zp, clamped, for channel j of the block */
BT_INLINE int32_t bt_hb_rq_one(const bt_hb_rq *q, int32_t j, int32_t x) {
  const int64_t prod = (int64_t)(int32_t)((uint32_t)x << q->left[j]) * q->mult[j];
  const int32_t v = (int32_t)((prod + q->k[j] - (prod < -((int64_t)1 << 30) ? q->neg[j] : 0)) >> q->sh[j]) + q->zp;
  return v < q->lo ? q->lo : (v > q->hi ? q->hi : v);
}

/* o[j] = clamp(MBQM(acc[j]) + zp) for the block's n channels */
static inline void bt_hb_store(int8_t *o, const int32_t *acc, const bt_hb_rq *q) {
  if (q->general) {
    for (int32_t j = 0; j < q->n; j++)
      o[j] = (int8_t)bt_clamp(bt_mbqm_fast(acc[j], q->mult[j], q->shift[j]) + q->zp, q->lo, q->hi);
    return;
  }
  for (int32_t j = 0; j < q->n; j++) o[j] = (int8_t)bt_hb_rq_one(q, j, acc[j]);
}
#endif
