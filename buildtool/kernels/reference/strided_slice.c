/* STRIDED_SLICE int8 and int16, resolved 4-D form (see bt_kernels.h). */
#include "bt_kernels.h"

/* One body for int8 and int16 elements. */
#define BT_SLICE_BODY(T) \
  const int32_t s2 = p->in_dims[3], s1 = s2 * p->in_dims[2], s0 = s1 * p->in_dims[1]; \
  for (int32_t a = 0; a < p->out_dims[0]; a++) \
    for (int32_t b = 0; b < p->out_dims[1]; b++) \
      for (int32_t c = 0; c < p->out_dims[2]; c++) { \
        const T *s = in + (p->begin[0] + a * p->stride[0]) * s0 + (p->begin[1] + b * p->stride[1]) * s1 + \
                          (p->begin[2] + c * p->stride[2]) * s2 + p->begin[3]; \
        for (int32_t d = 0; d < p->out_dims[3]; d++) *out++ = s[d * p->stride[3]]; \
      }

void bt_strided_slice_s8(const bt_slice_params *p, const int8_t *in, int8_t *out) { BT_SLICE_BODY(int8_t) }
void bt_strided_slice_s16(const bt_slice_params *p, const int16_t *in, int16_t *out) { BT_SLICE_BODY(int16_t) }
