/* REDUCE_MAX and REDUCE_MIN, int8 and int16, over the middle axis of [outer][reduce][inner] (see bt_kernels.h). */
#include "bt_kernels.h"

#define BT_REDUCE_BODY(T)                                                   \
  for (int32_t o = 0; o < p->outer; o++)                                    \
    for (int32_t i = 0; i < p->inner; i++) {                                \
      const T *s = in + o * p->outer_stride + i;                            \
      T v = s[0];                                                           \
      for (int32_t r = 1; r < p->reduce; r++) {                             \
        const T x = s[r * p->reduce_stride];                                \
        if (p->kind == 0 ? x > v : x < v) v = x;                            \
      }                                                                     \
      out[o * p->inner + i] = v;                                            \
    }

void bt_reduce_minmax_s8(const bt_reduce_params *p, const int8_t *in, int8_t *out) { BT_REDUCE_BODY(int8_t) }

void bt_reduce_minmax_s16(const bt_reduce_params *p, const int16_t *in, int16_t *out) { BT_REDUCE_BODY(int16_t) }
