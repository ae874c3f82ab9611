/* CAST (int8 / int16 -> int32), TFLM cast.cc (see bt_kernels.h). */
#include "bt_kernels.h"

void bt_cast_s8_s32(int32_t n, const int8_t *in, int32_t *out) {
  for (int32_t i = n - 1; i >= 0; i--) out[i] = in[i]; /* backwards: out may start where in does */
}

void bt_cast_s16_s32(int32_t n, const int16_t *in, int32_t *out) {
  for (int32_t i = n - 1; i >= 0; i--) out[i] = in[i];
}
