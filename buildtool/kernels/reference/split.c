/* SPLIT int8: inverse of concat (see bt_kernels.h). */
#include "bt_kernels.h"

void bt_split_s8(const bt_concat_params *p, const int8_t *in, int8_t *const *outputs) {
  int32_t row = 0;
  for (int32_t k = 0; k < p->n; k++) row += p->size[k];
  int32_t off = 0;
  for (int32_t k = 0; k < p->n; k++) {
    const int32_t sz = p->size[k];
    int8_t *d = outputs[k];
    for (int32_t o = 0; o < p->outer; o++) {
      const int8_t *s = in + o * row + off;
      for (int32_t i = 0; i < sz; i++) d[o * sz + i] = s[i];
    }
    off += sz;
  }
}
