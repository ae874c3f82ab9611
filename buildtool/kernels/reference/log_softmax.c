/* LOG_SOFTMAX on int8, TFLM reference_ops::LogSoftmaxQuantized (see bt_kernels.h and refops/log_softmax.py). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t lsm_sat(int64_t x) { return x > INT32_MAX ? INT32_MAX : (x < INT32_MIN ? INT32_MIN : (int32_t)x); }
BT_INLINE int32_t lsm_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
BT_INLINE int32_t lsm_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

BT_INLINE int32_t lsm_half_sum(int32_t a, int32_t b) { /* gemmlowp RoundingHalfSum */
  const int64_t s = (int64_t)a + b;
  return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

/* TFLite's log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>: raw Q5.26 of log(z), z raw Q12.19. */
static int32_t lsm_log_x(int32_t z) {
  const int accum = 6, input_bits = 12, output_bits = 5;
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250, quarter = 536870912;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
  const int32_t shifted_quarter = bt_srmbpot(quarter, -accum);
  const int hp1 = bt_clz32((uint32_t)z);
  const int32_t r_a = bt_srmbpot(bt_srdhm(bt_srmbpot(z, hp1 - 1), sqrt_half), 1);
  const int32_t za_adj = lsm_sat((int64_t)bt_srmbpot(input_bits - hp1, 31 - accum) + shifted_quarter);
  const int zb_head = bt_clz32((uint32_t)bt_srdhm(z, sqrt_half)) - 1;
  const int32_t r_b = bt_srmbpot(z, zb_head);
  const int32_t zb_adj = lsm_sat((int64_t)bt_srmbpot(input_bits - zb_head, 31 - accum) - shifted_quarter);
  const int32_t r = r_a < r_b ? r_a : r_b;
  const int32_t z_adj = za_adj > zb_adj ? za_adj : zb_adj;
  const int32_t p = lsm_half_sum(r, sqrt_sqrt_half);
  int32_t q = lsm_sub(r, sqrt_sqrt_half);
  q = lsm_add(q, q);
  const int32_t sq = bt_srdhm(q, q);
  const int32_t num = lsm_add(bt_srdhm(q, r), bt_srdhm(bt_srdhm(q, sq), alpha_n));
  const int32_t den = lsm_add(bt_srdhm(p, lsm_add(lsm_add(alpha_i, q), bt_srdhm(alpha_d, sq))), bt_srdhm(alpha_f, q));
  const int32_t recip = bt_one_over_one_plus_x(den);
  const int32_t num_scaled = bt_srmbpot(num, -accum);
  return bt_srmbpot(lsm_add(bt_srdhm(z_adj, log_2), bt_srdhm(num_scaled, recip)), accum - output_bits);
}

void bt_log_softmax_s8(const bt_log_softmax_params *p, const int8_t *in, int8_t *out) {
  for (int32_t r = 0; r < p->rows; r++, in += p->depth, out += p->depth) {
    int32_t max = -128;
    for (int32_t i = 0; i < p->depth; i++) max = in[i] > max ? in[i] : max;
    int32_t sum = 0;
    for (int32_t i = 0; i < p->depth; i++) {
      const int32_t d = in[i] - max;
      if (d >= p->diff_min) {
        const int32_t q5 = bt_mbqm(d, p->input_multiplier, p->input_left_shift);
        sum = lsm_add(sum, bt_rdbpot(bt_exp_on_negative_values(q5, 5), 12));
      }
    }
    const int32_t log_sum = lsm_log_x(sum);
    int32_t adj = bt_mbqm(lsm_add(log_sum, INT32_MIN), p->reverse_scaling_divisor, p->reverse_scaling_shift);
    if (p->diff_min - 1 > adj) adj = p->diff_min - 1;
    for (int32_t i = 0; i < p->depth; i++) {
      const int32_t d = in[i] - max;
      if (d > adj) {
        const int32_t q5 = bt_mbqm(d, p->input_multiplier, p->input_left_shift);
        out[i] = (int8_t)bt_clamp(bt_rdbpot(lsm_sub(q5, log_sum), 22) + 127, -128, 127);
      } else {
        out[i] = -128;
      }
    }
  }
}
