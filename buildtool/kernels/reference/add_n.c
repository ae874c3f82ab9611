/* ADD_N on int8 (TFLM reference_ops::AddN) and ZEROS_LIKE on int8 (see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t add_n_scaled(const bt_add_n_params *p, int32_t x) {
  return bt_mbqm((x + p->input_offset) * (1 << p->left_shift), p->input_multiplier, p->input_shift);
}

void bt_add_n_s8(const bt_add_n_params *p, const int8_t *const *in, int8_t *out) {
  const int32_t base = add_n_scaled(p, 0);
  for (int32_t i = 0; i < p->n; i++) {
    int32_t acc = base;
    for (int32_t j = 0; j < p->count; j++) acc += add_n_scaled(p, in[j][i]);
    out[i] = (int8_t)bt_clamp(bt_mbqm(acc, p->output_multiplier, p->output_shift) + p->output_offset, -128, 127);
  }
}

void bt_zeros_s8(int32_t n, int8_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = 0;
}
