/* TRANSPOSE (and DEPTH_TO_SPACE / SPACE_TO_DEPTH as 5-D transposes) int8: a strided gather. */
#include "bt_kernels.h"

void bt_transpose_s8(const bt_transpose_params *p, const int8_t *in, int8_t *out) {
  const int32_t *d = p->out_dims, *s = p->in_stride;
  for (int32_t i0 = 0; i0 < d[0]; i0++)
    for (int32_t i1 = 0; i1 < d[1]; i1++)
      for (int32_t i2 = 0; i2 < d[2]; i2++)
        for (int32_t i3 = 0; i3 < d[3]; i3++)
          for (int32_t i4 = 0; i4 < d[4]; i4++) {
            const int8_t *src = in + i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4];
            for (int32_t i5 = 0; i5 < d[5]; i5++) *out++ = src[i5 * s[5]];
          }
}
