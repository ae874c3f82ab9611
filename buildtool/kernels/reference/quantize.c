/* QUANTIZE (int8 -> int8 requantize, float -> int8) and DEQUANTIZE (int8 -> float), TFLM semantics. */
#include "bt_kernels.h"
#include "requant.h"

void bt_requantize_s8(const bt_requant_params *p, const int8_t *in, int8_t *out) {
  for (int32_t i = 0; i < p->n; i++) {
    const int32_t v = bt_mbqm((int32_t)in[i] - p->input_zp, p->multiplier, p->shift) + p->output_zp;
    out[i] = (int8_t)bt_clamp(v, -128, 127);
  }
}

/* round half away from zero (TfLiteRound / std::round) without libm; |x| clamped first */
static int32_t round_away(float x) {
  if (x > 1e9f) x = 1e9f;
  if (x < -1e9f) x = -1e9f;
  int32_t t = (int32_t)x;
  float f = x - (float)t;
  if (f >= 0.5f) t++;
  else if (f <= -0.5f) t--;
  return t;
}

void bt_quantize_f32_s8(int32_t n, float scale, int32_t zero_point, const float *in, int8_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = (int8_t)bt_clamp(round_away(in[i] / scale) + zero_point, -128, 127);
}

void bt_dequantize_s8_f32(int32_t n, float scale, int32_t zero_point, const int8_t *in, float *out) {
  for (int32_t i = n - 1; i >= 0; i--) out[i] = scale * (float)((int32_t)in[i] - zero_point);
}

void bt_requantize(const bt_requant_params *p, const void *in, int32_t in_bytes, void *out, int32_t out_bytes) {
  const int32_t lo = out_bytes == 4 ? INT32_MIN : out_bytes == 2 ? -32768 : -128;
  const int32_t hi = out_bytes == 4 ? INT32_MAX : out_bytes == 2 ? 32767 : 127;
  for (int32_t i = 0; i < p->n; i++) {
    const int32_t x = in_bytes == 4 ? ((const int32_t *)in)[i]
                    : in_bytes == 2 ? ((const int16_t *)in)[i] : ((const int8_t *)in)[i];
    const int32_t v = bt_clamp(bt_mbqm((int32_t)((uint32_t)x - (uint32_t)p->input_zp), p->multiplier, p->shift) +
                               p->output_zp, lo, hi);
    if (out_bytes == 4) ((int32_t *)out)[i] = v;
    else if (out_bytes == 2) ((int16_t *)out)[i] = (int16_t)v;
    else ((int8_t *)out)[i] = (int8_t)v;
  }
}

void bt_quantize_f32_s16(int32_t n, float scale, int32_t zero_point, const float *in, int16_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = (int16_t)bt_clamp(round_away(in[i] / scale) + zero_point, -32768, 32767);
}

void bt_dequantize_s16_f32(int32_t n, float scale, int32_t zero_point, const int16_t *in, float *out) {
  for (int32_t i = n - 1; i >= 0; i--) out[i] = scale * (float)((int32_t)in[i] - zero_point);
}
