/* CONCATENATION int8: row-wise byte copies (see bt_kernels.h). */
#include "bt_kernels.h"

void bt_concat_s8(const bt_concat_params *p, const int8_t *const *inputs, int8_t *out) {
  int32_t row = 0;
  for (int32_t k = 0; k < p->n; k++) row += p->size[k];
  int32_t off = 0;
  for (int32_t k = 0; k < p->n; k++) {
    const int32_t sz = p->size[k];
    const int8_t *s = inputs[k];
    for (int32_t o = 0; o < p->outer; o++) {
      int8_t *d = out + o * row + off;
      for (int32_t i = 0; i < sz; i++) d[i] = s[o * sz + i];
    }
    off += sz;
  }
}
