/* QUANTIZE between integer types of different widths (TFLM reference_ops::Requantize):
   int8/int16 in -> int8/int16/int32 out. See bt_kernels.h. */
#include "bt_kernels.h"
#include "requant.h"

void bt_requantize_wide(const bt_requant_wide_params *p, const void *in, void *out) {
  const int32_t lo = p->out_bits == 32 ? INT32_MIN : p->out_bits == 16 ? -32768 : -128;
  const int32_t hi = p->out_bits == 32 ? INT32_MAX : p->out_bits == 16 ? 32767 : 127;
  for (int32_t i = 0; i < p->n; i++) {
    const int32_t x = p->in_bits == 16 ? ((const int16_t *)in)[i] : ((const int8_t *)in)[i];
    const int32_t v = bt_clamp(bt_mbqm(x - p->input_zp, p->multiplier, p->shift) + p->output_zp, lo, hi);
    if (p->out_bits == 32) ((int32_t *)out)[i] = v;
    else if (p->out_bits == 16) ((int16_t *)out)[i] = (int16_t)v;
    else ((int8_t *)out)[i] = (int8_t)v;
  }
}
