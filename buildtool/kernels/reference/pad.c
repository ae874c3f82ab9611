/* PAD int8 and int16, 4-D, constant pad value (the output zero point). */
#include "bt_kernels.h"

/* One body for int8 and int16 elements (strides and sizes count elements). */
#define BT_PAD_BODY(T) \
  int32_t os[4]; \
  if (p->out_stride[0] | p->out_stride[1] | p->out_stride[2] | p->out_stride[3]) { \
    for (int k = 0; k < 4; k++) os[k] = p->out_stride[k]; \
  } else { \
    os[3] = 1; \
    for (int k = 2; k >= 0; k--) os[k] = os[k + 1] * p->out_dims[k + 1]; \
  } \
  const T v = (T)p->pad_value; \
  for (int32_t a = 0; a < p->out_dims[0]; a++) { \
    const int32_t ia = a - p->before[0]; \
    const int oka = ia >= 0 && ia < p->in_dims[0]; \
    for (int32_t b = 0; b < p->out_dims[1]; b++) { \
      const int32_t ib = b - p->before[1]; \
      const int okb = oka && ib >= 0 && ib < p->in_dims[1]; \
      for (int32_t c = 0; c < p->out_dims[2]; c++) { \
        const int32_t ic = c - p->before[2]; \
        const int okc = okb && ic >= 0 && ic < p->in_dims[2]; \
        T *o = out + a * os[0] + b * os[1] + c * os[2]; \
        const T *s = in + ((ia * p->in_dims[1] + ib) * p->in_dims[2] + ic) * p->in_dims[3]; \
        for (int32_t d = 0; d < p->out_dims[3]; d++) { \
          const int32_t id = d - p->before[3]; \
          o[d * os[3]] = (okc && id >= 0 && id < p->in_dims[3]) ? s[id] : v; \
        } \
      } \
    } \
  }

void bt_pad_s8(const bt_pad_params *p, const int8_t *in, int8_t *out) { BT_PAD_BODY(int8_t) }
void bt_pad_s16(const bt_pad_params *p, const int16_t *in, int16_t *out) { BT_PAD_BODY(int16_t) }
