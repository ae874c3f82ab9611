/* NEG on float32, TFLM neg.cc (see bt_kernels.h and refops/float_ops.py). */
#include "bt_kernels.h"

void bt_neg_f32(int32_t n, const float *in, float *out) {
  for (int32_t i = 0; i < n; i++) out[i] = -in[i]; /* out may be in (exact alias) */
}
