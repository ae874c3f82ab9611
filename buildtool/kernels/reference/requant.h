/* requant.h -- TFLM / gemmlowp fixed-point helpers shared by every kernel set (static inline).
 * Bit-exact with tensorflow/lite/kernels/internal/common.h (double-rounding variant, TFLM's
 * default) and gemmlowp/fixedpoint/fixedpoint.h for the scalar int32/int16 cases. */
#ifndef BT_REQUANT_H
#define BT_REQUANT_H
#include <stdint.h>

#define BT_INLINE static inline __attribute__((always_inline))
#define BT_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BT_MAX(a, b) ((a) > (b) ? (a) : (b))

/* gemmlowp SaturatingRoundingDoublingHighMul (int32): round(a*b / 2^31), saturating -1*-1. */
BT_INLINE int32_t bt_srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));   /* C division truncates, as in gemmlowp */
}

/* gemmlowp RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from zero. 0 <= e <= 31. */
BT_INLINE int32_t bt_rdbpot(int32_t x, int e) {
  int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
  int32_t rem = x & mask;
  int32_t thr = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (rem > thr ? 1 : 0);
}

/* TFLM MultiplyByQuantizedMultiplier(x, multiplier, shift). */
BT_INLINE int32_t bt_mbqm(int32_t x, int32_t mult, int32_t shift) {
  int left = shift > 0 ? shift : 0;
  int right = shift > 0 ? 0 : -shift;
  return bt_rdbpot(bt_srdhm((int32_t)((uint32_t)x << left), mult), right);
}

/* Same result as bt_mbqm for every input, fewer instructions (for the optimised sets): gemmlowp's
 * nudge-then-truncate equals floor((a*b + 2^30) / 2^31) for every product (shown by cases on the
 * sign of a*b), so the 64-bit step is one multiply-accumulate and a shift; the saturating case
 * (a == b == INT32_MIN) keeps its explicit check. */
BT_INLINE int32_t bt_mbqm_fast(int32_t x, int32_t mult, int32_t shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int32_t a = (int32_t)((uint32_t)x << left);
  int32_t h;
  if (a == INT32_MIN && mult == INT32_MIN) h = INT32_MAX;
  else h = (int32_t)(((int64_t)a * mult + ((int64_t)1 << 30)) >> 31);
  const int32_t mask = (int32_t)(((int64_t)1 << right) - 1);
  const int32_t q = h >> right;
  return q + ((h & mask) > ((mask >> 1) + (q < 0 ? 1 : 0)) ? 1 : 0);
}

/* 1 when bt_rq2 equals bt_mbqm for every channel: multiplier 0 or in [2^30, 2^31) (what TFLite's
 * QuantizeMultiplier gives) and shift in [-31, -2] (a right shift of at least 2). */
static inline int bt_rq2_ok(const int32_t *mult, const int32_t *shift, int32_t n) {
  for (int32_t i = 0; i < n; i++)
    if ((mult[i] != 0 && mult[i] < (1 << 30)) || shift[i] > -2 || shift[i] < -31) return 0;
  return 1;
}

/* MultiplyByQuantizedMultiplier(a, m, -e) for bt_rq2_ok parameters, given p2 = 2^(e-2) and e1 = e-1:
 *   h = floor((a*m + 2^30) / 2^31) and RoundingDivideByPOT(h, e) = floor((h + 2^(e-1) - [h<0]) / 2^e)
 * fold into one 64-bit sum, floor((a*m + 2^30 + 2^(30+e) - [h<0]*2^31) / 2^(31+e)) (floor of a floor),
 * whose quotient is the high word shifted right by e-1. With m >= 2^30, h < 0 exactly when a < 0
 * (a = -1, m = 2^30 gives h = 0 either way: both forms yield 0); m = 0 gives 0 both ways. The
 * constant's words are lo = 2^30 | (a & 2^31), hi = 2^(e-2) + (a >> 31) (e >= 2: 2^30 - 2^31 borrows
 * one from the high word), so the whole step is AND, ORR, ADD, SMLAL, ASR on Arm (on RISC-V: MUL, MULH,
 * a 64-bit add). */
static inline int32_t bt_rq2(int32_t a, int32_t m, int32_t p2, int32_t e1) {
  const uint32_t lo = 0x40000000u | ((uint32_t)a & 0x80000000u);
  const uint32_t hi = (uint32_t)(p2 + (a >> 31));
  const uint64_t acc = (((uint64_t)hi << 32) | lo) + (uint64_t)((int64_t)a * m);
  return (int32_t)(acc >> 32) >> e1;
}

/* bt_rq2 for e2 = e - 2 (0..29, i.e. -shift - 2) with nothing to precompute: the high word H of the
 * sum without 2^(e-2), then (H + 2^(e-2)) >> (e-1) as ((H >> (e-2)) + 1) >> 1 (with H = q 2^(e-2) + r,
 * 0 <= r < 2^(e-2), both are floor((q + 1) / 2)). */
static inline int32_t bt_rq2s(int32_t a, int32_t m, int32_t e2) {
  const uint32_t lo = 0x40000000u | ((uint32_t)a & 0x80000000u);
  const uint64_t acc = (((uint64_t)(uint32_t)(a >> 31) << 32) | lo) + (uint64_t)((int64_t)a * m);
  return (((int32_t)(acc >> 32) >> e2) + 1) >> 1;
}

/* bt_rq2's per-channel values from a TFLite shift (-31..-2). */
static inline int32_t bt_rq2_p2(int32_t shift) { return 1 << (-shift - 2); }
static inline int32_t bt_rq2_e1(int32_t shift) { return -shift - 1; }
/* bt_rq2's rounding word p2 with an output zero point zp folded in, so that bt_rq2 returns the output plus zp:
 * (H + zp 2^e1) >> e1 == (H >> e1) + zp exactly while the sum stays in int32. The high word H is below
 * 2^30 + 2^29 + 1 in magnitude, so |zp| <= 128 and e1 <= 21 (bt_rq2_zp_ok) keep it there. */
static inline int bt_rq2_zp_ok(int32_t shift) { return bt_rq2_e1(shift) <= 21; }
static inline int32_t bt_rq2_p2_zp(int32_t p2, int32_t e1, int32_t zp) { return p2 + (int32_t)((uint32_t)zp << e1); }

/* TFLM MultiplyByQuantizedMultiplierSmallerThanOneExp(x, mult, left_shift) (left_shift <= 0). */
BT_INLINE int32_t bt_mbqm_lt1(int32_t x, int32_t mult, int32_t left_shift) {
  return bt_rdbpot(bt_srdhm(x, mult), -left_shift);
}

/* TFLM MultiplyByQuantizedMultiplierGreaterThanOne(x, mult, left_shift) (left_shift >= 0). */
BT_INLINE int32_t bt_mbqm_gt1(int32_t x, int32_t mult, int32_t left_shift) {
  return bt_srdhm((int32_t)((uint32_t)x << left_shift), mult);
}

/* TFLM MultiplyByQuantizedMultiplier(int64_t x, mult, shift) of the 16x8 kernels: the multiplier
 * rounded to 16 bits (0x7FFF when that overflows), then one rounding right shift by 15 - shift. */
BT_INLINE int32_t bt_mbqm64(int64_t x, int32_t mult, int32_t shift) {
  const int64_t reduced = mult < 0x7FFF0000 ? (mult + (1 << 15)) >> 16 : 0x7FFF;
  const int total = 15 - shift;
  return (int32_t)((x * reduced + ((int64_t)1 << (total - 1))) >> total);
}

BT_INLINE int32_t bt_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* ---- gemmlowp FixedPoint<int32, N> helpers (raw int32 values) ---- */

/* SaturatingRoundingMultiplyByPOT<e>(x) for a compile-time-like exponent e (int32 raw). */
BT_INLINE int32_t bt_srmbpot(int32_t x, int e) {
  if (e == 0) return x;
  if (e < 0) return bt_rdbpot(x, -e);
  int32_t thr = (int32_t)((1u << (31 - e)) - 1);
  if (x > thr) return INT32_MAX;
  if (x < -thr) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}

/* exp(x) for x in [-1/4, 0): Q0.31 in, Q0.31 out. */
BT_INLINE int32_t bt_exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668, one_third = 715827883;
  int32_t x = a + (1 << 28);
  int32_t x2 = bt_srdhm(x, x);
  int32_t x3 = bt_srdhm(x2, x);
  int32_t x4 = bt_srdhm(x2, x2);
  int32_t x4_over_4 = bt_srmbpot(x4, -2);
  int32_t poly = bt_srmbpot(bt_srdhm(x4_over_4 + x3, one_third) + x2, -1);
  return constant_term + bt_srdhm(constant_term, x + poly);
}

/* gemmlowp exp_on_negative_values for FixedPoint<int32, int_bits>: returns Q0.31. */
static inline int32_t bt_exp_on_negative_values(int32_t a, int int_bits) {
  const int frac_bits = 31 - int_bits;
  const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
  int32_t mask = one_quarter - 1;
  int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
  int32_t result = bt_exp_quarter(bt_srmbpot(a_mod_quarter_minus_one_quarter, int_bits));
  int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  static const int32_t mult[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int k = 0; k < 7; k++) {
    int exponent = k - 2;
    if (int_bits > exponent) {
      int sh = frac_bits + exponent;
      if (remainder & ((int32_t)1 << sh)) result = bt_srdhm(result, mult[k]);
    }
  }
  if (int_bits > 5) {
    int32_t clamp = -((int32_t)1 << (36 - int_bits));
    if (a < clamp) result = 0;
  }
  if (a == 0) result = INT32_MAX;
  return result;
}

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: Q0.31 in, Q0.31 out. */
static inline int32_t bt_one_over_one_plus_x(int32_t a) {
  /* RoundingHalfSum(a, One) with One = INT32_MAX */
  int64_t sum = (int64_t)a + INT32_MAX;
  int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t c48_17 = 1515870810, cn32_17 = -1010580540;
  int32_t x = c48_17 + bt_srdhm(half_den, cn32_17);           /* Q2.29 */
  for (int i = 0; i < 3; i++) {
    int32_t hdx = bt_srdhm(half_den, x);                        /* Q2 */
    int32_t one_minus = (1 << 29) - hdx;                        /* F2::One() = 1<<29 */
    x = x + bt_srmbpot(bt_srdhm(x, one_minus), 2);              /* Rescale<2> of a Q4 value */
  }
  return bt_srmbpot(x, 1);                                      /* Rescale<0>(ExactMulByPot<-1>(x)) */
}

/* Number of leading zeros of a uint32 (x != 0 not required: 32 for 0). */
BT_INLINE int bt_clz32(uint32_t x) { return x ? __builtin_clz(x) : 32; }

/* int16 helpers (HARD_SWISH) */
BT_INLINE int16_t bt_srdhm16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  int32_t ab = (int32_t)a * (int32_t)b;
  int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}
BT_INLINE int16_t bt_sdhm16(int16_t a, int16_t b) {   /* TFLite SaturatingDoublingHighMul (truncating) */
  if (a == b && a == INT16_MIN) return INT16_MAX;
  int32_t ab = (int32_t)a * (int32_t)b;
  return (int16_t)(ab / (1 << 15));
}
BT_INLINE int16_t bt_rdbpot16(int16_t x, int e) {
  int16_t mask = (int16_t)((1 << e) - 1);
  int16_t rem = (int16_t)(x & mask);
  int16_t thr = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> e) + (rem > thr ? 1 : 0));
}
BT_INLINE int16_t bt_sat_lshift16(int16_t v, int amount) {
  int64_t r = (int64_t)v * ((int64_t)1 << amount);
  return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}
/* int16 sigmoid and tanh (TFLM's 16x8 LOGISTIC, TANH and the LSTM gates): linear interpolation in a
   256-entry table of 65536 * sigmoid(i / 24) (refops/activation.py sigmoid_table16); d is the input in
   1/(3 * 4096) units. Results in Q0.15. */
BT_INLINE int32_t bt_lut16_interp(const uint16_t *t, int32_t d, int32_t frac_bits, int32_t saturated) {
  const uint32_t a = (uint32_t)(d < 0 ? -d : d), uh = a >> frac_bits;
  if (uh >= 255) return saturated;
  const uint32_t ut = a & ((1u << frac_bits) - 1);
  return (int32_t)(((uint32_t)t[uh] << frac_bits) + ut * (uint32_t)(t[uh + 1] - t[uh]));  /* table rises */
}

BT_INLINE int16_t bt_sigmoid16(const uint16_t *t, int32_t d) {
  const int32_t r = bt_lut16_interp(t, d, 9, 0x7FFF << 10);
  return (int16_t)((d >= 0 ? r + (1 << 9) : (1 << 25) - r + (1 << 9) - 1) >> 10);
}

BT_INLINE int16_t bt_tanh16(const uint16_t *t, int32_t d) {  /* 2 * sigmoid(2x) - 1: one bit less of fraction */
  const int32_t r = bt_lut16_interp(t, d, 8, 0xFFFF << 8);
  return (int16_t)((d >= 0 ? r - (1 << 23) + (1 << 7) : (1 << 23) - r + (1 << 7) - 1) >> 8);
}

#endif
