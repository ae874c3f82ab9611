/* ADD and SUB, int8 and int16, with 4-D broadcasting (TFLM ArithmeticParams arithmetic, see bt_kernels.h). */
#include "bt_kernels.h"
#include "requant.h"

BT_INLINE int32_t add_one(const bt_add_params *p, int32_t a, int32_t b, int32_t sign) {
  const int32_t sa = (a + p->input1_offset) * (1 << p->left_shift);
  const int32_t sb = (b + p->input2_offset) * (1 << p->left_shift);
  const int32_t ra = bt_mbqm_lt1(sa, p->input1_multiplier, p->input1_shift);
  const int32_t rb = bt_mbqm_lt1(sb, p->input2_multiplier, p->input2_shift);
  const int32_t r = bt_mbqm_lt1(sign > 0 ? ra + rb : ra - rb, p->output_multiplier, p->output_shift) +
                    p->output_offset;
  return bt_clamp(r, p->act_min, p->act_max);
}

/* One loop for both element types (wide: int16) and both signs (-1: SUB). */
BT_INLINE void add_sub(const bt_add_params *p, const void *a, const void *b, void *out, int wide, int32_t sign) {
  const bt_bcast4 *q = &p->b;
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {
        const int32_t oa = i0 * q->a_stride[0] + i1 * q->a_stride[1] + i2 * q->a_stride[2];
        const int32_t ob = i0 * q->b_stride[0] + i1 * q->b_stride[1] + i2 * q->b_stride[2];
        const int32_t oo = i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++) {
          const int32_t ka = oa + i3 * q->a_stride[3], kb = ob + i3 * q->b_stride[3];
          const int32_t ko = oo + i3 * q->out_stride[3];
          if (wide)
            ((int16_t *)out)[ko] = (int16_t)add_one(p, ((const int16_t *)a)[ka], ((const int16_t *)b)[kb], sign);
          else
            ((int8_t *)out)[ko] = (int8_t)add_one(p, ((const int8_t *)a)[ka], ((const int8_t *)b)[kb], sign);
        }
      }
}

#ifdef BT_ADD_S8_DENSE /* an optimised set's add.c: int8 from add_dense.h */
#include "add_dense.h"
#else
void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  add_sub(p, a, b, out, 0, 1);
}
void bt_sub_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  add_sub(p, a, b, out, 0, -1);
}
#endif
void bt_add_s16(const bt_add_params *p, const int16_t *a, const int16_t *b, int16_t *out) {
  add_sub(p, a, b, out, 1, 1);
}
void bt_sub_s16(const bt_add_params *p, const int16_t *a, const int16_t *b, int16_t *out) {
  add_sub(p, a, b, out, 1, -1);
}
