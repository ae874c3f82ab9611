/* ABS int8 and int16 (TFLM elementwise.cc AbsEvalQuantized), the int8 table lookup of RSQRT and int16 RSQRT
 * (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t abs_one(const bt_abs_params *p, int32_t x) {
  int32_t v = x - p->input_offset;
  v = v < 0 ? -v : v;
  if (p->needs_rescale) v = bt_mbqm(v, p->multiplier, p->shift);
  return v + p->output_offset;
}

void bt_abs_s8(const bt_abs_params *p, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->n; i++) out[i] = (int8_t)bt_clamp(abs_one(p, in[i]), -128, 127);
}

void bt_abs_s16(const bt_abs_params *p, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < p->n; i++) out[i] = (int16_t)bt_clamp(abs_one(p, in[i]), -32768, 32767);
}

void bt_lut_s8(int32_t n, const int8_t *table, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = table[in[i] + 128];
}

/* gemmlowp SaturatingRoundingMultiplyByPOT<e> (e > 0): x << e, saturated. */
BT_INLINE int32_t sat_shl(int32_t x, int e) {
  const int32_t lim = (int32_t)((1u << (31 - e)) - 1);
  return x > lim ? INT32_MAX : x < -lim ? INT32_MIN : (int32_t)((uint32_t)x << e);
}

/* TFLite's GetInvSqrtQuantizedMultiplierExp(v, reverse_shift -1) for 1 <= v < 2^29 (refops/unary.py inv_sqrt):
 * Newton-Raphson on 1/sqrt in Q3.28, five steps. */
static void inv_sqrt(int32_t v, int32_t *mult, int32_t *shift) {
  if (v <= 1) {
    *mult = INT32_MAX, *shift = 0;
    return;
  }
  int32_t s = 11;
  const int pairs = (bt_clz32((uint32_t)v) - 1) / 2 - 1;
  s -= pairs;
  v <<= 2 * pairs;
  const int32_t half_input = bt_rdbpot(v >> 1, 1), half_three = (1 << 28) + (1 << 27);
  int32_t x = 1 << 28;
  for (int k = 0; k < 5; k++) {
    const int32_t x3 = sat_shl(bt_srdhm(bt_srdhm(x, x), x), 6);
    x = sat_shl((int32_t)((uint32_t)bt_srdhm(half_three, x) - (uint32_t)bt_srdhm(half_input, x3)), 3);
  }
  x = bt_srdhm(x, 1518500250);  /* sqrt(2) / 2 */
  if (s < 0) x = (int32_t)((uint32_t)x << -s), s = 0;
  *mult = x, *shift = -s;
}

void bt_rsqrt_s16(const bt_rsqrt_params *p, const int16_t *in, int16_t *out) {
  for (int32_t i = 0; i < p->n; i++) {
    const int32_t v = (int32_t)in[i] - p->input_zero_point;
    if (v <= 0) {  /* 0: TFLM's maximum; below the zero point TFLM fails the invocation: the same maximum here */
      out[i] = 32767;
      continue;
    }
    int32_t m, s;
    inv_sqrt(v, &m, &s);
    const int32_t data = bt_mbqm(1, m, s + 20);
    out[i] = (int16_t)bt_clamp(bt_mbqm(data, p->multiplier, p->shift - 20) + p->output_zero_point, -32768, 32767);
  }
}
