/* LOGISTIC int8, TFLM reference_integer_ops::Logistic (gemmlowp logistic on Q4.27). */
#include "bt_kernels.h"
#include "requant.h"

static int32_t logistic_q4(int32_t a) {   /* gemmlowp::logistic(FixedPoint<int32,4>) -> Q0.31 raw */
  if (a == 0) return 1 << 30;
  const int32_t abs_a = a > 0 ? a : -a;
  const int32_t pos = bt_one_over_one_plus_x(bt_exp_on_negative_values(-abs_a, 4));
  return a > 0 ? pos : INT32_MAX - pos;
}

void bt_logistic_s8(const bt_logistic_params *p, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->n; i++) {
    const int32_t x = (int32_t)in[i] - p->input_zero_point;
    int8_t r;
    if (x <= -p->input_range_radius) {
      r = -128;
    } else if (x >= p->input_range_radius) {
      r = 127;
    } else {
      const int32_t q4 = bt_mbqm(x, p->input_multiplier, p->input_left_shift);
      const int32_t q0 = logistic_q4(q4);
      r = (int8_t)bt_clamp(bt_rdbpot(q0, 31 - 8) - 128, -128, 127);
    }
    out[i] = r;
  }
}

/* int16 LOGISTIC and TANH (16x8): linear interpolation in a 256-entry table of 65536 * sigmoid(i / 24),
   the input rescaled to 1/(3 * 4096) units; d's magnitude indexes the table with frac_bits of fraction. */
static int32_t lut16_input(const bt_lut16_params *p, int16_t x) {
  const int32_t sh = p->input_left_shift;
  return ((int32_t)x * p->input_multiplier + ((1 << sh) >> 1)) >> sh;
}

void bt_logistic_s16(const bt_lut16_params *p, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < p->n; i++) {
    out[i] = bt_sigmoid16(p->table, lut16_input(p, in[i]));
  }
}

void bt_tanh_s16(const bt_lut16_params *p, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < p->n; i++) {
    out[i] = bt_tanh16(p->table, lut16_input(p, in[i]));
  }
}
