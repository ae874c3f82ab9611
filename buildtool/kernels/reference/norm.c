/* L2_NORMALIZATION on int8 (TFLM reference_integer_ops::L2Normalization, see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

/* TFLite's GetInvSqrtQuantizedMultiplierExp(input, reverse_shift -1): Newton-Raphson in gemmlowp Q3.28. */
static void l2_inv_sqrt(int32_t input, int32_t *mult, int32_t *shift) {
  if (input <= 1) {
    *mult = INT32_MAX;
    *shift = 0;
    return;
  }
  int32_t sh = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++sh;
  }
  const int pairs = (bt_clz32((uint32_t)input) - 1) / 2 - 1;
  sh -= pairs;
  input = (int32_t)((uint32_t)input << (2 * pairs));
  const int32_t half_input = bt_srmbpot(input >> 1, -1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t x = 1 << 28;
  for (int i = 0; i < 5; i++) {
    const int32_t x3 = bt_srmbpot(bt_srdhm(bt_srdhm(x, x), x), 6);
    x = bt_srmbpot((int32_t)((uint32_t)bt_srdhm(half_three, x) - (uint32_t)bt_srdhm(half_input, x3)), 3);
  }
  x = bt_srdhm(x, 1518500250); /* sqrt(2) / 2 */
  if (sh < 0) {
    x = (int32_t)((uint32_t)x << -sh);
    sh = 0;
  }
  *mult = x;
  *shift = -sh;
}

void bt_l2_norm_s8(int32_t rows, int32_t depth, int32_t input_zp, const int8_t *in, int8_t *out) {
  for (int32_t r = 0; r < rows; r++) {
    const int8_t *x = in + r * depth;
    int8_t *y = out + r * depth;
    int32_t acc = 0;
    for (int32_t i = 0; i < depth; i++) acc += (x[i] - input_zp) * (x[i] - input_zp);
    int32_t mult, shift;
    l2_inv_sqrt(acc, &mult, &shift);
    for (int32_t i = 0; i < depth; i++) y[i] = (int8_t)bt_clamp(bt_mbqm(x[i] - input_zp, mult, shift + 7), -128, 127);
  }
}
