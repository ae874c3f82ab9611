/* RELU, RELU6, TANH, PRELU, MAXIMUM, MINIMUM int8; RELU, RELU6, PRELU, MAXIMUM, MINIMUM also int16
 * (TFLM reference arithmetic; one body per operator for both element types). */
#include "bt_kernels.h"
#include "bcast4.h"
#include "requant.h"

#define BT_RELU_BODY(T) \
  for (int32_t i = 0; i < p->n; i++) { \
    const int32_t v = bt_mbqm((int32_t)in[i] - p->input_zp, p->multiplier, p->shift) + p->output_zp; \
    out[i] = (T)bt_clamp(v, p->act_min, p->act_max); \
  }

void bt_relu_s8(const bt_relu_params *p, const int8_t *in, int8_t *out) { BT_RELU_BODY(int8_t) }
void bt_relu_s16(const bt_relu_params *p, const int16_t *in, int16_t *out) { BT_RELU_BODY(int16_t) }

void bt_relu6_s8(int32_t n, int32_t lo, int32_t hi, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = (int8_t)bt_clamp(in[i], lo, hi);
}

void bt_relu6_s16(int32_t n, int32_t lo, int32_t hi, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = (int16_t)bt_clamp(in[i], lo, hi);
}

/* gemmlowp tanh(FixedPoint<int32, 4>) -> Q0.31 raw: 2 / (1 + exp(-2|a|)) - 1 by Newton-Raphson. */
static int32_t act_tanh_q4(int32_t a) {
  if (a == 0) return 0;
  const int32_t abs_a = a > 0 ? a : -a;
  const int32_t e = bt_exp_on_negative_values(-abs_a, 5);     /* ExactMulByPot<1>: read as Q5.26 */
  const int64_t sum = (int64_t)e + INT32_MAX;                 /* RoundingHalfSum(e, One) */
  const int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = 1515870810 + bt_srdhm(half_den, -1010580540);   /* 48/17 - 32/17 * d, Q2.29 */
  for (int i = 0; i < 3; i++) {
    const int32_t one_minus = (1 << 29) - bt_srdhm(half_den, x);
    x = x + bt_srmbpot(bt_srdhm(x, one_minus), 2);
  }
  const int32_t r = bt_srmbpot(x - (1 << 29), 2);             /* Rescale<0>(x - One): tanh(|a|) */
  return a > 0 ? r : -r;
}

void bt_tanh_s8(const bt_tanh_params *p, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->n; i++) {
    const int32_t x = (int32_t)in[i] - p->input_zero_point;
    int32_t r;
    if (x <= -p->input_range_radius) {
      r = -128;
    } else if (x >= p->input_range_radius) {
      r = 127;
    } else {
      const int32_t q4 = bt_mbqm(x, p->input_multiplier, p->input_left_shift);
      r = bt_clamp(bt_rdbpot(act_tanh_q4(q4), 31 - 7), -128, 127);
    }
    out[i] = (int8_t)r;
  }
}

BT_INLINE int32_t prelu_one(const bt_prelu_params *p, int32_t x, int8_t alpha, int32_t lo, int32_t hi) {
  const int32_t v = x + p->input_offset;
  int32_t r;
  if (v >= 0) r = bt_mbqm(v, p->output_multiplier_1, p->output_shift_1);
  else r = bt_mbqm(v * ((int32_t)alpha + p->alpha_offset), p->output_multiplier_2, p->output_shift_2);
  return bt_clamp(r + p->output_offset, lo, hi);
}


void bt_prelu_s8(const bt_prelu_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int8_t, int8_t, int8_t, prelu_one(p, x, y, -128, 127))
}

void bt_prelu_s16(const bt_prelu_params *p, const int16_t *a, const int8_t *b, int16_t *out) {
  const bt_bcast4 *q = &p->b;
  BT_BCAST4_BODY(int16_t, int8_t, int16_t, prelu_one(p, x, y, -32768, 32767))
}

void bt_maximum_s8(const bt_bcast4 *q, const int8_t *a, const int8_t *b, int8_t *out) {
  BT_BCAST4_BODY(int8_t, int8_t, int8_t, x > y ? x : y)
}

void bt_minimum_s8(const bt_bcast4 *q, const int8_t *a, const int8_t *b, int8_t *out) {
  BT_BCAST4_BODY(int8_t, int8_t, int8_t, x < y ? x : y)
}

void bt_maximum_s16(const bt_bcast4 *q, const int16_t *a, const int16_t *b, int16_t *out) {
  BT_BCAST4_BODY(int16_t, int16_t, int16_t, x > y ? x : y)
}

void bt_minimum_s16(const bt_bcast4 *q, const int16_t *a, const int16_t *b, int16_t *out) {
  BT_BCAST4_BODY(int16_t, int16_t, int16_t, x < y ? x : y)
}
