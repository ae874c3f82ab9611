/* LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT on bool bytes and SELECT_V2 on int8/int16 (see bt_kernels.h). */
#include "bt_kernels.h"
#include "bcast4.h"

void bt_logical_b(int32_t kind, const bt_bcast4 *q, const uint8_t *a, const uint8_t *b, uint8_t *out) {
  BT_BCAST4_BODY(uint8_t, uint8_t, uint8_t, kind == 0 ? (x != 0 && y != 0) : (x != 0 || y != 0))
}

void bt_logical_not_b(int32_t n, const uint8_t *in, uint8_t *out) {
  for (int32_t i = 0; i < n; i++) out[i] = (uint8_t)(in[i] == 0);
}

#define BT_SELECT_BODY                                                                                  \
  for (int32_t i0 = 0; i0 < p->dims[0]; i0++)                                                           \
    for (int32_t i1 = 0; i1 < p->dims[1]; i1++)                                                         \
      for (int32_t i2 = 0; i2 < p->dims[2]; i2++) {                                                     \
        const int32_t oc = i0 * p->c_stride[0] + i1 * p->c_stride[1] + i2 * p->c_stride[2];             \
        const int32_t ox = i0 * p->x_stride[0] + i1 * p->x_stride[1] + i2 * p->x_stride[2];             \
        const int32_t oy = i0 * p->y_stride[0] + i1 * p->y_stride[1] + i2 * p->y_stride[2];             \
        const int32_t oo = i0 * p->out_stride[0] + i1 * p->out_stride[1] + i2 * p->out_stride[2];       \
        for (int32_t i3 = 0; i3 < p->dims[3]; i3++)                                                     \
          out[oo + i3 * p->out_stride[3]] = c[oc + i3 * p->c_stride[3]] ? x[ox + i3 * p->x_stride[3]]   \
                                                                         : y[oy + i3 * p->y_stride[3]]; \
      }

void bt_select_s8(const bt_select_params *p, const uint8_t *c, const int8_t *x, const int8_t *y, int8_t *out) {
  BT_SELECT_BODY
}

void bt_select_s16(const bt_select_params *p, const uint8_t *c, const int16_t *x, const int16_t *y, int16_t *out) {
  BT_SELECT_BODY
}
