/* HARD_SWISH int8, TFLM reference_ops::HardSwish<int8_t> (int16 fixed point). */
#include "bt_kernels.h"
#include "requant.h"

void bt_hard_swish_s8(const bt_hard_swish_params *p, const int8_t *in, int8_t *out) {
  const int16_t out_mult = (int16_t)p->output_multiplier_fixedpoint_int16;
  const int16_t relu_mult = (int16_t)p->reluish_multiplier_fixedpoint_int16;
  const int32_t rexp = p->reluish_multiplier_exponent;
  for (int32_t i = 0; i < p->n; i++) {
    const int16_t v = (int16_t)((int32_t)in[i] - p->input_zero_point);
    const int16_t hires = (int16_t)(v * (1 << 7));
    const int16_t preshift = bt_srdhm16(hires, out_mult);
    int16_t reluish = hires;
    if (rexp > 0) reluish = bt_sat_lshift16(reluish, rexp - 1);
    reluish = bt_srdhm16(reluish, relu_mult);
    if (rexp > 0) reluish = bt_sat_lshift16(reluish, 1);
    if (rexp < 0) reluish = bt_rdbpot16(reluish, -rexp);
    reluish = (int16_t)(((int32_t)reluish + (1 << 15)) >> 1);
    const int16_t pre = bt_sdhm16(reluish, preshift);
    int16_t o = bt_rdbpot16(pre, -p->output_multiplier_exponent);
    o = (int16_t)(o + p->output_zero_point);
    out[i] = (int8_t)(o > 127 ? 127 : (o < -128 ? -128 : o));
  }
}
